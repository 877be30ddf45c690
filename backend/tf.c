/* tf.c — lowering a gir graph, or a materialised plan (docs/plan.md), to
 * a TensorFlow GraphDef (the GdGraph of tf.h), which tfwrite.c prints.
 *
 * One pass over the ops in graph order, then two linear fix-ups:
 *   1. Transfer ops are not nodes: every use of a Transfer is rewired to
 *      the tensor it carries (chains followed once, memoised), so the edge
 *      crosses devices and TensorFlow inserts its Send/Recv.
 *   2. Every other op becomes one node.  Its inputs are matched to the
 *      OpDef's arguments (tfops.def); type attrs (T, dtype, Tidx, ...),
 *      number attrs (N, num_split) and list(type) attrs are derived from
 *      the types of the inputs and outputs; the gir attrs are converted to
 *      the kind the OpDef declares; missing attrs take TensorFlow's
 *      default, else pcc's assumption (the PCC column), else are an
 *      error.  gir's conveniences become valid TensorFlow: Apply* without
 *      learning rate or optimizer state get Const and variable nodes;
 *      SoftmaxCrossEntropyWithLogits with class-index labels becomes
 *      SparseSoftmaxCrossEntropyWithLogits; AllReduce becomes
 *      CollectiveReduce (NcclAllReduce within one machine on request).
 *      @device becomes the device string, machine i -> task i.
 *   3. @order, as the user chooses: per device, a control edge from each
 *      op to the next one in @order (only where the order strictly
 *      increases), and/or a _priority attr.  Kahn's algorithm then checks
 *      that data and control edges together are acyclic; an @order that
 *      contradicts a data edge is reported, never emitted.
 * Everything is iterative; the cost is linear in ops + edges, plus the
 * sort of each device's ops by @order. */
#include "tf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* ---- options ---------------------------------------------------------- */

static bool opt_num(const EmitCtx *ctx, const char *key, double *out)
{
	const char *s = backend_opt(ctx, key);
	char *e;
	errno = 0;
	double v = strtod(s, &e);
	if (!*s || *e || errno || !isfinite(v)) {
		fprintf(stderr, "pcc: error: --emit-opt=%s=%s: not a number\n", key, s);
		return false;
	}
	*out = v;
	return true;
}

static bool opt_choice(const EmitCtx *ctx, const char *key,
		       const char *const *choices, int *out)
{
	const char *s = backend_opt(ctx, key);
	for (int i = 0; choices[i]; i++)
		if (!strcmp(s, choices[i])) {
			*out = i;
			return true;
		}
	fprintf(stderr, "pcc: error: --emit-opt=%s=%s: expected one of", key, s);
	for (int i = 0; choices[i]; i++)
		fprintf(stderr, "%s%s", i ? ", " : " ", choices[i]);
	fputc('\n', stderr);
	return false;
}

bool tf_opts_read(const EmitCtx *ctx, bool json, TfOpts *o)
{
	static const char *const orders[] = {"none", "control", "priority", "both", NULL};
	static const char *const annots[] = {"drop", "keep", NULL};
	static const char *const ars[] = {"collective", "nccl", NULL};
	static const char *const wts[] = {"zeros", "generated", NULL};
	static const char *const bools[] = {"false", "true", NULL};
	static const char *const vars[] = {"keep", "auto", NULL};
	static const char *const cops[] = {"error", "keep", NULL};
	memset(o, 0, sizeof *o);
	int ord, an, ar, wt, os, in, co;
	double prod;
	if (!opt_choice(ctx, "order", orders, &ord) ||
	    !opt_choice(ctx, "annotations", annots, &an) ||
	    !opt_choice(ctx, "allreduce", ars, &ar) ||
	    !opt_choice(ctx, "weights", wts, &wt) ||
	    !opt_choice(ctx, "output_shapes", bools, &os) ||
	    !opt_choice(ctx, "init", bools, &in) ||
	    !opt_choice(ctx, "custom_ops", cops, &co) ||
	    !opt_num(ctx, "producer", &prod) || !opt_num(ctx, "lr", &o->lr) ||
	    !opt_num(ctx, "momentum", &o->momentum) ||
	    !opt_num(ctx, "beta1", &o->beta1) || !opt_num(ctx, "beta2", &o->beta2) ||
	    !opt_num(ctx, "epsilon", &o->epsilon))
		return false;
	if (prod < 0 || prod > 1e9 || prod != floor(prod)) {
		fprintf(stderr, "pcc: error: --emit-opt=producer: a GraphDef version is a non-negative integer\n");
		return false;
	}
	o->json = json;
	o->order = (unsigned)ord;   /* none 0, control 1, priority 2, both 3 */
	o->keep_annotations = an == 1;
	o->nccl = ar == 1;
	o->generate = wt == 1;
	o->output_shapes = os == 1;
	o->init = in == 1;
	o->custom_ops = co == 1;
	o->producer = (int)prod;
	o->job = backend_opt(ctx, "job");
	if (!*o->job || strpbrk(o->job, "/: ")) {
		fprintf(stderr, "pcc: error: --emit-opt=job=%s: not a job name\n", o->job);
		return false;
	}
	o->output = ctx->output ? ctx->output : "-";
	o->variables = TF_VARS_KEEP;
	if (json) {
		int v;
		if (!opt_choice(ctx, "variables", vars, &v))
			return false;
		o->variables = v == 1 ? TF_VARS_AUTO : TF_VARS_KEEP;
		o->weights_file = backend_opt(ctx, "weights_file");
	}
	return true;
}

/* ---- generated weights ------------------------------------------------- */

uint64_t tf_gen_seed(const char *name)
{
	return hash_bytes(name, strlen(name));
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static bool is_float_dt(int dt)
{
	return dt == TFDT_FLOAT || dt == TFDT_DOUBLE || dt == TFDT_HALF ||
	       dt == TFDT_BFLOAT16;
}

double tf_gen_value(uint64_t seed, int64_t k, int dtype)
{
	uint64_t u = splitmix64(seed ^ splitmix64((uint64_t)k));
	if (is_float_dt(dtype))
		return (double)(u >> 11) * 0x1.0p-53 - 0.5;
	if (dtype == TFDT_BOOL)
		return (double)(u & 1);
	return (double)(u % 5);
}

int64_t gd_numel(const GdShape *s)
{
	if (s->rank < 0)
		return -1;
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++) {
		if (s->dims[i] < 0)
			return -1;
		n *= s->dims[i];
	}
	return n;
}

double gd_tensor_value(const GdTensor *t, int64_t k)
{
	switch (t->src) {
	case GS_GENERATED:
		return tf_gen_value(t->seed, t->offset + k, t->dtype);
	case GS_VALUES: {
		uint32_t j = k < (int64_t)t->nv ? (uint32_t)k : t->nv - 1;
		return t->f ? t->f[j] : (double)t->i[j];
	}
	case GS_ZEROS:
		break;
	}
	return 0;
}

/* ---- the lowering context ---------------------------------------------- */

typedef struct Warned {
	const char *type, *key;
} Warned;

typedef struct Low {
	const Graph *g;
	const TfOpts *o;
	Diag *d;
	TfOpDefs defs;
	GdGraph *gd;
	Arena *a;                /* gd->a */
	uint32_t *node_of;       /* gir op id -> node, NONE for Transfers */
	Op **xsrc;               /* Transfer op id -> the op it carries from */
	uint32_t *xidx;          /*   and its output index */
	bool *updated;           /* op id: some op takes it as Ref/resource */
	const char **devs;       /* distinct device strings (interned) */
	uint32_t ndevs, capdevs;
	char **groups;           /* AllReduce device lists, group_key - 1 */
	uint32_t ngroups, capgroups;
	Warned *warned;
	uint32_t nwarned, capwarned;
	uint32_t (*pieces)[2];   /* lowerings: {piece, the node of its op} */
	uint32_t npieces, cappieces;
	const char **names;      /* every node name: a set, ncap a power of 2 */
	uint32_t nnames, ncap;
	struct VarInit *vars;    /* every variable node and how it starts */
	uint32_t nvars, capvars;
	struct PowUpd *pows;     /* Adam's beta powers, updated after the step */
	uint32_t npows, cappows;
	struct CCache *consts;   /* scalar Consts of the initialisers */
	uint32_t nconsts, capconsts;
	int opc_transfer, opc_allreduce, opc_sce, opc_variablev2, opc_variable;
} Low;

/* How a variable starts (the init target, docs/backends.md). */
enum { VI_PARAM, VI_ZEROS, VI_VALUE };
typedef struct VarInit {
	uint32_t node;
	const char *key;         /* the original name: @origin, else the name */
	const Type *t;
	int kind;                /* VI_* */
	double value;            /* VI_VALUE */
	bool resource;           /* VarHandleOp */
} VarInit;

/* power <- power * beta after the ApplyAdam apply has read it. */
typedef struct PowUpd {
	uint32_t var, beta, apply;
	int dtype;
	bool resource;
} PowUpd;

typedef struct CCache {
	const char *device;
	int dtype;
	uint64_t bits;
	uint32_t node;
} CCache;

/* A tensor: node index and output index, with its gir type. */
typedef struct Ten {
	uint32_t node, idx;
	const Type *t;
} Ten;

static GdNode *node_new(Low *L, const char *name, const char *op,
			const Op *src)
{
	GdGraph *gd = L->gd;
	if (gd->n == gd->cap) {
		gd->cap = gd->cap ? gd->cap * 2 : 64;
		gd->nodes = xrealloc(gd->nodes, sizeof(GdNode) * gd->cap);
	}
	GdNode *n = &gd->nodes[gd->n++];
	memset(n, 0, sizeof *n);
	n->name = name;
	n->op = op;
	n->src = src;
	n->order = -1;
	return n;
}

static void node_input(Low *L, uint32_t node, uint32_t src, uint32_t idx,
		       bool ctrl)
{
	GdNode *n = &L->gd->nodes[node];
	if (n->nin == n->capin) {
		uint32_t nc = n->capin ? n->capin * 2 : 4;
		n->in = arena_realloc(L->a, n->in, sizeof(GdIn) * n->capin,
				      sizeof(GdIn) * nc);
		n->capin = nc;
	}
	n->in[n->nin++] = (GdIn){src, idx, ctrl};
}

static GdVal *find_attr(GdNode *n, const char *key)
{
	for (uint32_t i = 0; i < n->nattr; i++)
		if (!strcmp(n->attrs[i].key, key))
			return &n->attrs[i].v;
	return NULL;
}

/* The attr key of node, added (empty) if it has none. */
static GdVal *node_attr(Low *L, uint32_t node, const char *key)
{
	GdNode *n = &L->gd->nodes[node];
	GdVal *v = find_attr(n, key);
	if (v)
		return v;
	if (n->nattr == n->capattr) {
		uint32_t nc = n->capattr ? n->capattr * 2 : 8;
		n->attrs = arena_realloc(L->a, n->attrs, sizeof(GdAttr) * n->capattr,
					 sizeof(GdAttr) * nc);
		n->capattr = nc;
	}
	GdAttr *at = &n->attrs[n->nattr++];
	at->key = arena_strdup(L->a, key);   /* OpDef names die with L->defs */
	memset(&at->v, 0, sizeof at->v);
	return &at->v;
}

__attribute__((format(printf, 3, 4)))
static void err(Low *L, const Op *op, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (op)
		diag_error(L->d, op->loc, "op '%s' (%s): %s", op->name, op->type, msg);
	else
		diag_error(L->d, (Loc){0}, "%s", msg);
}

/* One warning per (op type, attribute); key NULL: about the op type. */
static void warn_once(Low *L, const Op *op, const char *key, const char *why)
{
	const char *k = key ? key : "";
	for (uint32_t i = 0; i < L->nwarned; i++)
		if (!strcmp(L->warned[i].type, op->type) && !strcmp(L->warned[i].key, k))
			return;
	if (L->nwarned == L->capwarned) {
		L->capwarned = L->capwarned ? L->capwarned * 2 : 8;
		L->warned = xrealloc(L->warned, sizeof(Warned) * L->capwarned);
	}
	L->warned[L->nwarned++] = (Warned){op->type, k};
	if (!key) {
		diag_warning(L->d, op->loc, "op '%s': TensorFlow op type '%s' is not in "
			     "pcc's OpDef table (backend/tfops.def); written as it is, with "
			     "its attributes by their gir kinds (and every %s)", op->name,
			     op->type, op->type);
		return;
	}
	diag_warning(L->d, op->loc, "op '%s' (%s): attribute '%s' %s; dropped "
		     "(and on every %s)", op->name, op->type, key, why, op->type);
}

/* ---- values ------------------------------------------------------------ */

static GdVal v_int(int64_t i) { GdVal v = {.kind = TK_INT}; v.i = i; return v; }
static GdVal v_float(double f) { GdVal v = {.kind = TK_FLOAT}; v.f = f; return v; }
static GdVal v_bool(bool b) { GdVal v = {.kind = TK_BOOL}; v.b = b; return v; }
static GdVal v_type(int t) { GdVal v = {.kind = TK_TYPE}; v.type = t; return v; }

static GdVal v_str(const char *s)
{
	GdVal v = {.kind = TK_STRING};
	v.s.p = s;
	v.s.len = strlen(s);
	return v;
}

static GdVal v_list(Low *L, TfKind k, uint32_t n)
{
	GdVal v = {.kind = k, .list = true};
	v.l.items = arena_alloc(L->a, sizeof(GdVal) * (n + 1));
	v.l.n = n;
	return v;
}

static GdShape shape_of(Low *L, const Type *t)
{
	GdShape s = {t->rank, arena_alloc(L->a, sizeof(int64_t) * (size_t)(t->rank + 1))};
	for (int i = 0; i < t->rank; i++)
		s.dims[i] = t->dims[i];
	return s;
}

static GdVal v_shape(Low *L, const Type *t)
{
	GdVal v = {.kind = TK_SHAPE};
	v.shape = shape_of(L, t);
	return v;
}

static bool gd_val_eq(const GdVal *a, const GdVal *b)
{
	if (a->kind != b->kind || a->list != b->list)
		return false;
	if (a->list) {
		if (a->l.n != b->l.n)
			return false;
		for (uint32_t i = 0; i < a->l.n; i++)
			if (!gd_val_eq(&a->l.items[i], &b->l.items[i]))
				return false;
		return true;
	}
	switch (a->kind) {
	case TK_TYPE: return a->type == b->type;
	case TK_INT: return a->i == b->i;
	case TK_FLOAT: return a->f == b->f;
	case TK_BOOL: return a->b == b->b;
	case TK_STRING: return a->s.len == b->s.len && !memcmp(a->s.p, b->s.p, a->s.len);
	case TK_SHAPE:
		if (a->shape.rank != b->shape.rank)
			return false;
		for (int i = 0; i < a->shape.rank; i++)
			if (a->shape.dims[i] != b->shape.dims[i])
				return false;
		return true;
	default: return false;
	}
}

/* A gir value as an attr of kind k (scalar): false if it is not one. */
static bool conv_scalar(Low *L, const Value *v, TfKind k, GdVal *out)
{
	memset(out, 0, sizeof *out);
	out->kind = k;
	switch (k) {
	case TK_TYPE:
		if (v->kind == V_TYPE)
			out->type = tfdt_of(v->t.dt);
		else if (v->kind == V_IDENT || v->kind == V_STR)
			out->type = tfdt_parse(v->s, strlen(v->s));
		return out->type != 0;
	case TK_INT:
		if (v->kind == V_INT) {
			out->i = v->i;
			return true;
		}
		if (v->kind == V_FLOAT && v->f == floor(v->f) && fabs(v->f) < 9e15) {
			out->i = (int64_t)v->f;
			return true;
		}
		return false;
	case TK_FLOAT:
		return val_number(v, &out->f);
	case TK_BOOL:
		if (v->kind != V_BOOL)
			return false;
		out->b = v->b;
		return true;
	case TK_STRING:
		if (v->kind != V_STR && v->kind != V_IDENT)
			return false;
		*out = v_str(v->s);
		return true;
	case TK_FUNC:
		if (v->kind != V_STR && v->kind != V_IDENT)
			return false;
		out->func = v->s;
		return true;
	case TK_SHAPE:
		if (v->kind == V_TYPE) {
			out->shape = shape_of(L, &v->t);
			return true;
		}
		if (v->kind == V_IDENT && !strcmp(v->s, "unknown")) {
			out->shape.rank = -1;
			return true;
		}
		if (v->kind != V_LIST)
			return false;
		out->shape.rank = (int)v->list.n;
		out->shape.dims = arena_alloc(L->a, sizeof(int64_t) * (v->list.n + 1));
		for (uint32_t i = 0; i < v->list.n; i++) {
			const Value *x = v->list.items[i];
			if (x->kind != V_INT || x->i < -1)
				return false;
			out->shape.dims[i] = x->i;
		}
		return true;
	case TK_TENSOR:
		return false;
	}
	return false;
}

static bool conv(Low *L, const Value *v, TfKind k, bool list, GdVal *out)
{
	if (!list)
		return conv_scalar(L, v, k, out);
	if (v->kind != V_LIST) {
		/* a single value where TensorFlow wants a list of one */
		*out = v_list(L, k, 1);
		return conv_scalar(L, v, k, &out->l.items[0]);
	}
	*out = v_list(L, k, v->list.n);
	for (uint32_t i = 0; i < v->list.n; i++)
		if (!conv_scalar(L, v->list.items[i], k, &out->l.items[i]))
			return false;
	return true;
}

/* The natural kind of a gir value whose OpDef is unknown (attrs of ops
 * outside tfops.def, _-prefixed attrs, annotations).  -1: none (dicts,
 * mixed lists). */
static int natural_kind(const Value *v, bool *list)
{
	*list = false;
	switch (v->kind) {
	case V_INT: return TK_INT;
	case V_FLOAT:
	case V_QTY: return TK_FLOAT;
	case V_BOOL: return TK_BOOL;
	case V_STR: return TK_STRING;
	case V_IDENT: return tfdt_parse(v->s, strlen(v->s)) ? TK_TYPE : TK_STRING;
	case V_TYPE: return TK_SHAPE;
	case V_DICT: return -1;
	case V_LIST: break;
	}
	*list = true;
	if (v->list.n == 0)
		return TK_INT;
	int k = -1;
	for (uint32_t i = 0; i < v->list.n; i++) {
		bool sub;
		int ki = natural_kind(v->list.items[i], &sub);
		if (sub) {
			/* a list of lists of ints is a list of shapes */
			if (ki != TK_INT)
				return -1;
			ki = TK_SHAPE;
		}
		if (ki < 0)
			return -1;
		if (k < 0 || k == ki)
			k = ki;
		else if ((k == TK_INT && ki == TK_FLOAT) || (k == TK_FLOAT && ki == TK_INT))
			k = TK_FLOAT;
		else if ((k == TK_TYPE && ki == TK_STRING) || (k == TK_STRING && ki == TK_TYPE))
			k = TK_STRING;
		else
			return -1;
	}
	return k;
}

static bool conv_any(Low *L, const Value *v, GdVal *out)
{
	bool list;
	int k = natural_kind(v, &list);
	return k >= 0 && conv(L, v, (TfKind)k, list, out);
}

/* Parses a default or PCC value from tfops.def ('NHWC', [1, 1], DT_INT32,
 * false, 0.2, unknown) as kind k. */
static GdVal parse_default(Low *L, const TfAttrDef *d, const char *s)
{
	GdVal v = {.kind = d->kind};
	if (d->list) {
		v = v_list(L, d->kind, 0);
		const char *p = strchr(s, '[');
		if (!p)
			pcc_die("tfops.def: %s: list default '%s'", d->name, s);
		uint32_t cap = 1;
		for (const char *q = p; *q; q++)
			cap += *q == ',';
		v.l.items = arena_alloc(L->a, sizeof(GdVal) * (cap + 1));
		p++;
		while (*p && *p != ']') {
			while (*p == ' ' || *p == ',')
				p++;
			if (*p == ']')
				break;
			char *e;
			if (d->kind != TK_INT)
				pcc_die("tfops.def: %s: only list(int) defaults", d->name);
			v.l.items[v.l.n++] = v_int(strtoll(p, &e, 10));
			if (e == p)
				pcc_die("tfops.def: %s: bad list default '%s'", d->name, s);
			p = e;
		}
		return v;
	}
	switch (d->kind) {
	case TK_TYPE:
		v.type = tfdt_parse(s, strlen(s));
		break;
	case TK_INT:
		v.i = strtoll(s, NULL, 10);
		break;
	case TK_FLOAT:
		v.f = strtod(s, NULL);
		break;
	case TK_BOOL:
		v.b = !strcmp(s, "true");
		break;
	case TK_STRING: {
		size_t n = strlen(s);
		if (n < 2 || s[0] != '\'' || s[n - 1] != '\'')
			pcc_die("tfops.def: %s: string default %s", d->name, s);
		v.s.p = arena_strndup(L->a, s + 1, n - 2);
		v.s.len = n - 2;
		break;
	}
	case TK_SHAPE:
		if (strcmp(s, "unknown"))
			pcc_die("tfops.def: %s: shape default %s", d->name, s);
		v.shape.rank = -1;
		break;
	default:
		pcc_die("tfops.def: %s: default of kind %s", d->name, tk_name(d->kind, false));
	}
	return v;
}

/* ---- devices ------------------------------------------------------------ */

static const char *dev_intern(Low *L, const char *s)
{
	for (uint32_t i = 0; i < L->ndevs; i++)
		if (!strcmp(L->devs[i], s))
			return L->devs[i];
	if (L->ndevs == L->capdevs) {
		L->capdevs = L->capdevs ? L->capdevs * 2 : 8;
		L->devs = xrealloc(L->devs, sizeof(char *) * L->capdevs);
	}
	return L->devs[L->ndevs++] = arena_strdup(L->a, s);
}

/* machine i -> task i (shared/spec/cluster.md). */
static const char *tf_device(Low *L, const Op *op)
{
	const char *dev = op_ann_str(L->g, op, ANN_DEVICE);
	if (dev) {
		const Cluster *c = L->g->cluster;
		int k = c ? cluster_find_device(c, dev) : -1;
		if (k < 0) {
			err(L, op, "@device \"%s\" is not a device of the cluster", dev);
			return NULL;
		}
		char buf[256];
		snprintf(buf, sizeof buf, "/job:%s/replica:0/task:%d/device:GPU:%d",
			 L->o->job, c->devs[k].machine, c->devs[k].local);
		return dev_intern(L, buf);
	}
	const char *s = op_get_str(L->g, op, "_device");
	return s && *s ? dev_intern(L, s) : NULL;
}

static int machine_of(Low *L, const char *dev)
{
	const Cluster *c = L->g->cluster;
	int k = c ? cluster_find_device(c, dev) : -1;
	return k < 0 ? -1 : c->devs[k].machine;
}

/* ---- inputs ------------------------------------------------------------ */

/* The tensor that data input in of a gir op reads, Transfers skipped. */
static Ten resolve(Low *L, const Input *in)
{
	const Op *src = in->src;
	uint32_t idx = in->idx;
	if (src->opcode == L->opc_transfer && L->xsrc[src->id]) {
		idx = L->xidx[src->id];
		src = L->xsrc[src->id];
	}
	Ten t = {L->node_of[src->id], idx, idx < src->nout ? &src->out[idx] : NULL};
	return t;
}

/* Resolves every Transfer to the op and output it carries, following
 * chains of Transfers iteratively; each Transfer is resolved once. */
static bool resolve_transfers(Low *L)
{
	const Graph *g = L->g;
	uint32_t *chain = xmalloc(sizeof(uint32_t) * (g->nops + 1));
	bool ok = true;
	for (uint32_t i = 0; i < g->nops && ok; i++) {
		Op *op = g->ops[i];
		if (op->dead || op->opcode != L->opc_transfer || L->xsrc[i])
			continue;
		uint32_t n = 0;
		Op *cur = op;
		Op *src = NULL;
		uint32_t idx = 0;
		for (;;) {
			const Input *in = NULL;
			for (uint32_t j = 0; j < cur->nin; j++)
				if (!cur->in[j].ctrl) {
					in = &cur->in[j];
					break;
				}
			if (!in) {
				err(L, cur, "a Transfer needs one data input");
				ok = false;
				break;
			}
			chain[n++] = cur->id;
			if (in->src->opcode != L->opc_transfer) {
				src = in->src;
				idx = in->idx;
				break;
			}
			if (L->xsrc[in->src->id]) {
				src = L->xsrc[in->src->id];
				idx = L->xidx[in->src->id];
				break;
			}
			cur = in->src;
			if (n > g->nops) {
				err(L, op, "a cycle of Transfers");
				ok = false;
				break;
			}
		}
		for (uint32_t k = 0; k < n && src; k++) {
			L->xsrc[chain[k]] = src;
			L->xidx[chain[k]] = idx;
		}
	}
	free(chain);
	return ok;
}

/* ---- names -------------------------------------------------------------- */

/* NodeDef.name: [A-Za-z0-9.][A-Za-z0-9_./\-]* (TensorFlow's
 * kValidNodeNameRegex).  Every node name is kept in L->names, an
 * open-addressing set, so that a mangled or added name is unique. */
static bool tf_name_char(unsigned char c, bool first)
{
	return isalnum(c) || c == '.' || (!first && (c == '_' || c == '-' || c == '/'));
}

static bool tf_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (!tf_name_char(*p, p == (const unsigned char *)s))
			return false;
	return true;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return h;
}

static bool names_has(const Low *L, const char *s)
{
	if (!L->ncap)
		return false;
	for (uint64_t i = name_hash(s) & (L->ncap - 1);; i = (i + 1) & (L->ncap - 1)) {
		if (!L->names[i])
			return false;
		if (!strcmp(L->names[i], s))
			return true;
	}
}

static void names_add(Low *L, const char *s)
{
	if (2 * (L->nnames + 1) > L->ncap) {
		uint32_t oc = L->ncap, nc = oc ? oc * 2 : 256;
		const char **old = L->names;
		L->names = xcalloc(nc, sizeof(char *));
		L->ncap = nc;
		L->nnames = 0;
		for (uint32_t i = 0; i < oc; i++)
			if (old[i])
				names_add(L, old[i]);
		free(old);
	}
	uint64_t i = name_hash(s) & (L->ncap - 1);
	while (L->names[i]) {
		if (!strcmp(L->names[i], s))
			return;
		i = (i + 1) & (L->ncap - 1);
	}
	L->names[i] = s;
	L->nnames++;
}

/* base, or base_1, base_2, ... : the first one no node has; taken. */
static const char *unique_name(Low *L, const char *base)
{
	const char *s = base;
	for (int k = 1; names_has(L, s); k++)
		s = arena_printf(L->a, "%s_%d", base, k);
	names_add(L, s);
	return s;
}

/* A valid name for a gir op's node: the name itself when TensorFlow
 * accepts it (pass 1 reserves all of those), else every character outside
 * the rule replaced by '_', "pcc" put before a first character that may
 * not start a name, and _1, _2, ... appended until it is unique.  The
 * name "init" is pcc's initialiser target: an op of that name is renamed
 * too.  Deterministic: it depends only on the graph. */
static const char *mangle(Low *L, const char *name)
{
	size_t n = strlen(name);
	char *b = arena_alloc(L->a, n + 4);
	size_t k = 0;
	if (!tf_name_char((unsigned char)name[0], true)) {
		memcpy(b, "pcc", 3);
		k = 3;
	}
	for (size_t i = 0; i < n; i++) {
		bool first = k == 0;
		b[k++] = tf_name_char((unsigned char)name[i], first) ? name[i] : '_';
	}
	b[k] = 0;
	return unique_name(L, b);
}

/* The node name of op (mangled), or its gir name before nodes exist. */
static const char *node_name(const Low *L, const Op *op)
{
	uint32_t nd = L->node_of ? L->node_of[op->id] : NONE;
	return nd != NONE && nd < L->gd->n ? L->gd->nodes[nd].name : op->name;
}

/* NAME/arg, or NAME/arg_1, ... if the graph already has that name. */
static const char *added_name(Low *L, const Op *op, const char *arg)
{
	return unique_name(L, arena_printf(L->a, "%s/%s", node_name(L, op), arg));
}

/* ---- Const tensors -------------------------------------------------------- */

static GdTensor *tensor_new(Low *L, const Type *t)
{
	GdTensor *x = arena_alloc(L->a, sizeof *x);
	x->dtype = tfdt_of(t->dt);
	x->shape = shape_of(L, t);
	x->src = GS_ZEROS;
	return x;
}

/* Generated or zero content for a tensor without a value: seeded by the
 * op's @origin (its name in the input graph), offset by @shard rows. */
static void tensor_fill(Low *L, const Op *op, GdTensor *x)
{
	if (!L->o->generate)
		return;
	const char *origin = op_ann_str(L->g, op, ANN_ORIGIN);
	x->src = GS_GENERATED;
	x->seed = tf_gen_seed(origin ? origin : op->name);
	Value *sh = op_ann(L->g, op, ANN_SHARD);
	if (sh && sh->kind == V_LIST && sh->list.n == 2 &&
	    sh->list.items[0]->kind == V_INT && x->shape.rank > 0) {
		int64_t row = 1;
		for (int i = 1; i < x->shape.rank; i++)
			row *= x->shape.dims[i];
		x->offset = sh->list.items[0]->i * row;
	}
}

/* The tensor of a Const: its value attr (1 value or one per element,
 * flattened) or generated/zero content. */
static GdTensor *const_tensor(Low *L, const Op *op)
{
	if (op->nout != 1 || !type_known(&op->out[0])) {
		err(L, op, "a Const needs a known type");
		return NULL;
	}
	GdTensor *x = tensor_new(L, &op->out[0]);
	Value *v = op_attr(op, graph_intern((Graph *)L->g, "value"));
	if (!v) {
		tensor_fill(L, op, x);
		return x;
	}
	uint32_t n = v->kind == V_LIST ? v->list.n : 1;
	int64_t numel = gd_numel(&x->shape);
	if (n == 0 || (n != 1 && (int64_t)n != numel)) {
		err(L, op, "value has %u element%s but the type %d", n, n == 1 ? "" : "s",
		    (int)numel);
		return NULL;
	}
	bool isf = is_float_dt(x->dtype);
	x->src = GS_VALUES;
	x->nv = n;
	if (isf)
		x->f = arena_alloc(L->a, sizeof(double) * n);
	else
		x->i = arena_alloc(L->a, sizeof(int64_t) * n);
	for (uint32_t k = 0; k < n; k++) {
		const Value *e = v->kind == V_LIST ? v->list.items[k] : v;
		double f;
		if (e->kind == V_BOOL)
			f = e->b;
		else if (!val_number(e, &f)) {
			err(L, op, "value element %u is not a number", k);
			return NULL;
		}
		if (isf)
			x->f[k] = f;
		else if (e->kind == V_INT)
			x->i[k] = e->i;
		else if (f != floor(f)) {
			err(L, op, "value element %u is not an integer", k);
			return NULL;
		} else {
			x->i[k] = (int64_t)f;
		}
	}
	return x;
}

static GdVal v_tensor(GdTensor *x)
{
	GdVal v = {.kind = TK_TENSOR};
	v.tensor = x;
	return v;
}

/* A scalar Const node pcc adds (a learning rate...), on the device of op. */
static uint32_t add_const(Low *L, const Op *op, const char *arg, int dtype,
			  double value, const char *device)
{
	GdNode *n = node_new(L, added_name(L, op, arg), "Const", NULL);
	uint32_t id = (uint32_t)(n - L->gd->nodes);
	n->device = device;
	GdTensor *x = arena_alloc(L->a, sizeof *x);
	x->dtype = dtype;
	x->src = GS_VALUES;
	x->nv = 1;
	if (is_float_dt(dtype)) {
		x->f = arena_alloc(L->a, sizeof(double));
		x->f[0] = value;
	} else {
		x->i = arena_alloc(L->a, sizeof(int64_t));
		x->i[0] = (int64_t)value;
	}
	n->weight = x;
	*node_attr(L, id, "dtype") = v_type(dtype);
	*node_attr(L, id, "value") = v_tensor(x);
	return id;
}

/* The original name of op: @origin, else its name. */
static const char *op_key(const Low *L, const Op *op)
{
	const char *o = op_ann_str(L->g, op, ANN_ORIGIN);
	return o ? o : op->name;
}

static void var_init(Low *L, uint32_t node, const char *key, const Type *t,
		     int kind, double value, bool resource)
{
	if (L->nvars == L->capvars) {
		L->capvars = L->capvars ? L->capvars * 2 : 16;
		L->vars = xrealloc(L->vars, sizeof *L->vars * L->capvars);
	}
	L->vars[L->nvars++] = (VarInit){node, key, t, kind, value, resource};
}

/* A variable pcc adds (optimizer state: accum, m, v, Adam's powers) of
 * type t, keyed ORIGIN/arg so that every replica's copy has one key. */
static uint32_t add_variable(Low *L, const Op *op, const char *arg,
			     bool resource, const Type *t, const char *device)
{
	GdNode *n = node_new(L, added_name(L, op, arg),
			     resource ? "VarHandleOp" : "VariableV2", NULL);
	uint32_t id = (uint32_t)(n - L->gd->nodes);
	n->device = device;
	*node_attr(L, id, "dtype") = v_type(tfdt_of(t->dt));
	*node_attr(L, id, "shape") = v_shape(L, t);
	*node_attr(L, id, "container") = v_str("");
	*node_attr(L, id, "shared_name") = v_str("");
	if (resource)
		*node_attr(L, id, "allowed_devices") = v_list(L, TK_STRING, 0);
	const char *key = arena_printf(L->a, "%s/%s", op_key(L, op), arg);
	*node_attr(L, id, "_pcc_origin") = v_str(key);
	var_init(L, id, key, t, VI_ZEROS, 0, resource);
	return id;
}

/* ---- gir's optimizer shorthand ------------------------------------------- */

/* Apply*(var, grad): the OpDef's other arguments.  '=' a scalar Const of
 * an option, '@' a new variable shaped like var. */
static const struct Shorthand {
	const char *op;
	const char *args[10];
} shorthands[] = {
	{"ApplyAdam", {"var", "@m", "@v", "=beta1_power", "=beta2_power", "=lr",
		       "=beta1", "=beta2", "=epsilon", "grad"}},
	{"ApplyGradientDescent", {"var", "=alpha", "grad"}},
	{"ApplyMomentum", {"var", "@accum", "=lr", "grad", "=momentum"}},
	{"ResourceApplyAdam", {"var", "@m", "@v", "=beta1_power", "=beta2_power",
			       "=lr", "=beta1", "=beta2", "=epsilon", "grad"}},
	{"ResourceApplyGradientDescent", {"var", "=alpha", "grad"}},
	{"ResourceApplyMomentum", {"var", "@accum", "=lr", "grad", "=momentum"}},
};

/* The gir attr that gives the constant arg of a shorthand: its own name,
 * lr for GradientDescent's alpha, beta1 and beta2 for their powers (their
 * values at the first step). */
static const char *shorthand_attr(const char *arg)
{
	if (!strcmp(arg, "alpha"))
		return "lr";
	if (!strcmp(arg, "beta1_power"))
		return "beta1";
	if (!strcmp(arg, "beta2_power"))
		return "beta2";
	return arg;
}

/* The value of constant arg: the op's attr when gir gives it (the zoo's
 * ApplyAdam records lr, beta1, beta2, epsilon), else the option. */
static double shorthand_value(Low *L, const Op *op, const char *arg)
{
	const char *key = shorthand_attr(arg);
	const Value *v = op_get(L->g, op, key);
	double f;
	if (v && val_number(v, &f))
		return f;
	if (v)
		err(L, op, "attribute '%s' must be a number", key);
	const TfOpts *o = L->o;
	if (!strcmp(key, "beta1"))
		return o->beta1;
	if (!strcmp(key, "beta2"))
		return o->beta2;
	if (!strcmp(key, "epsilon"))
		return o->epsilon;
	if (!strcmp(key, "momentum"))
		return o->momentum;
	return o->lr;
}

/* NAME/arg/read = ReadVariableOp(resource). */
static uint32_t add_read(Low *L, const Op *op, const char *arg, uint32_t var,
			 int dtype, const char *device)
{
	GdNode *n = node_new(L, added_name(L, op, arena_printf(L->a, "%s/read", arg)),
			     "ReadVariableOp", NULL);
	uint32_t id = (uint32_t)(n - L->gd->nodes);
	n->device = device;
	node_input(L, id, var, 0, false);
	*node_attr(L, id, "dtype") = v_type(dtype);
	return id;
}

/* Expands ins[0..2) = (var, grad) into the full argument list. */
static int expand_shorthand(Low *L, const Op *op, const struct Shorthand *sh,
			    Ten *ins, int nargs, const char *device)
{
	Ten var = ins[0], grad = ins[1];
	if (!var.t) {
		err(L, op, "the variable has no type");
		return -1;
	}
	bool resource = !strncmp(op->type, "Resource", 8);
	for (int k = 0; k < nargs; k++) {
		const char *a = sh->args[k];
		if (!strcmp(a, "var")) {
			ins[k] = var;
		} else if (!strcmp(a, "grad")) {
			ins[k] = grad;
		} else if (a[0] == '=' && strstr(a, "_power")) {
			/* Adam's beta powers: variables starting at beta, times
			 * beta after each step (TensorFlow's AdamOptimizer) */
			Type *st = arena_alloc(L->a, sizeof *st);
			st->dt = var.t->dt;
			st->rank = 0;
			double beta = shorthand_value(L, op, a + 1);
			uint32_t v = add_variable(L, op, a + 1, resource, st, device);
			L->vars[L->nvars - 1].kind = VI_VALUE;
			L->vars[L->nvars - 1].value = beta;
			uint32_t b = add_const(L, op, arena_printf(L->a, "%s/beta", a + 1),
					       tfdt_of(st->dt), beta, device);
			if (L->npows == L->cappows) {
				L->cappows = L->cappows ? L->cappows * 2 : 8;
				L->pows = xrealloc(L->pows, sizeof *L->pows * L->cappows);
			}
			L->pows[L->npows++] = (PowUpd){v, b, L->node_of[op->id],
						       tfdt_of(st->dt), resource};
			ins[k] = (Ten){v, 0, st};
			if (resource) {
				uint32_t r = add_read(L, op, a + 1, v, tfdt_of(st->dt), device);
				ins[k] = (Ten){r, 0, st};
			}
		} else if (a[0] == '=') {
			ins[k] = (Ten){add_const(L, op, a + 1, tfdt_of(var.t->dt),
						 shorthand_value(L, op, a + 1), device),
				       0, var.t};
		} else {
			ins[k] = (Ten){add_variable(L, op, a + 1, resource, var.t, device),
				       0, var.t};
		}
	}
	return nargs;
}

/* ---- attrs ------------------------------------------------------------------ */

typedef struct Derived {
	GdVal *v;                /* per OpDef attr; kind set when derived */
	bool *set;
} Derived;

static bool derive_type(Low *L, const Op *op, const TfOpDef *od, Derived *dv,
			const char *attr, const Type *t, const char *what)
{
	if (!t)
		return true;
	int dt = tfdt_of(t->dt);
	for (int i = 0; i < od->nattrs; i++) {
		if (strcmp(od->attrs[i].name, attr))
			continue;
		if (dv->set[i] && dv->v[i].type != dt) {
			err(L, op, "%s is %s but %s is already %s", what, dtype_name(t->dt),
			    attr, tfdt_enum(dv->v[i].type));
			return false;
		}
		dv->v[i] = v_type(dt);
		dv->set[i] = true;
	}
	return true;
}

static void derive_int(const TfOpDef *od, Derived *dv, const char *attr,
		       int64_t n)
{
	for (int i = 0; i < od->nattrs; i++)
		if (!strcmp(od->attrs[i].name, attr)) {
			dv->v[i] = v_int(n);
			dv->set[i] = true;
		}
}

/* Matches n tensors to the OpDef's args (at most one variadic arg):
 * *start receives each arg's first tensor.  Returns the variadic length,
 * or -1 when the count cannot fit. */
static int match_args(const TfOpDef *od, const TfArgDef *args, int nargs,
		      int n, int *start)
{
	int var = -1;
	for (int k = 0; k < nargs; k++) {
		const TfAttrDef *t = args[k].type_attr ? tf_opdef_attr(od, args[k].type_attr) : NULL;
		if (args[k].num_attr || (t && t->list))
			var = k;
	}
	int fixed = var < 0 ? nargs : nargs - 1;
	int vlen = n - fixed;
	if (var < 0 ? n != nargs : vlen < 0)
		return -1;
	int p = 0;
	for (int k = 0; k < nargs; k++) {
		start[k] = p;
		p += k == var ? vlen : 1;
	}
	start[nargs] = p;
	return var < 0 ? 0 : vlen;
}

static bool derive_args(Low *L, const Op *op, const TfOpDef *od, Derived *dv,
			const TfArgDef *args, int nargs, const Type *const *types,
			int n, bool is_out)
{
	int start[17];
	if (nargs > 16 || match_args(od, args, nargs, n, start) < 0) {
		err(L, op, "TensorFlow's %s has %d %s argument%s; the op has %d %s",
		    od->name, nargs, is_out ? "output" : "input", nargs == 1 ? "" : "s",
		    n, is_out ? "outputs" : "data inputs");
		return false;
	}
	for (int k = 0; k < nargs; k++) {
		const TfArgDef *a = &args[k];
		int len = start[k + 1] - start[k];
		if (a->num_attr)
			derive_int(od, dv, a->num_attr, len);
		const TfAttrDef *ta = a->type_attr ? tf_opdef_attr(od, a->type_attr) : NULL;
		if (ta && ta->list) {
			int idx = (int)(ta - od->attrs);
			GdVal l = v_list(L, TK_TYPE, (uint32_t)len);
			for (int j = 0; j < len; j++) {
				const Type *t = types[start[k] + j];
				if (!t) {
					err(L, op, "%s %d has no type", is_out ? "output" : "input",
					    start[k] + j);
					return false;
				}
				l.l.items[j] = v_type(tfdt_of(t->dt));
			}
			dv->v[idx] = l;
			dv->set[idx] = true;
			continue;
		}
		for (int j = start[k]; j < start[k + 1]; j++) {
			const Type *t = types[j];
			char what[96];
			snprintf(what, sizeof what, "%s %d (%s)", is_out ? "output" : "input",
				 j, a->name);
			if (a->fixed) {
				if (a->fixed != TFDT_RESOURCE && t && tfdt_of(t->dt) != a->fixed) {
					err(L, op, "%s is %s; TensorFlow wants %s", what,
					    dtype_name(t->dt), tfdt_enum(a->fixed));
					return false;
				}
			} else if (!derive_type(L, op, od, dv, a->type_attr, t, what)) {
				return false;
			}
		}
	}
	return true;
}

/* Checks v against the OpDef attr's allowed values and minimum. */
static bool check_attr(Low *L, const Op *op, const TfAttrDef *d, const GdVal *v)
{
	uint32_t n = d->list ? v->l.n : 1;
	for (uint32_t k = 0; k < n; k++) {
		const GdVal *x = d->list ? &v->l.items[k] : v;
		if (d->kind == TK_TYPE && !tf_type_allowed(d, x->type)) {
			err(L, op, "%s = %s is not allowed by TensorFlow's OpDef",
			    d->name, tfdt_enum(x->type) ? tfdt_enum(x->type) : "?");
			return false;
		}
		if (d->kind == TK_STRING && d->strs) {
			bool ok = false;
			for (int j = 0; j < d->nstrs; j++)
				ok |= strlen(d->strs[j]) == x->s.len &&
				      !memcmp(d->strs[j], x->s.p, x->s.len);
			if (!ok) {
				err(L, op, "%s = '%.*s' is not one of TensorFlow's values",
				    d->name, (int)x->s.len, x->s.p);
				return false;
			}
		}
	}
	if (d->has_min && ((d->list && (int64_t)v->l.n < d->min) ||
			   (!d->list && d->kind == TK_INT && v->i < d->min))) {
		err(L, op, "%s must be at least %lld%s", d->name, (long long)d->min,
		    d->list ? " long" : "");
		return false;
	}
	return true;
}

static bool is_annotation(const char *key)
{
	return key[0] == '@';
}

/* The @annotations and _attrs of op, kept (as _pcc_KEY) or dropped. */
static void copy_extra_attrs(Low *L, const Op *op, uint32_t node,
			     const TfOpDef *od)
{
	for (uint32_t i = 0; i < op->nattr; i++) {
		const char *key = op->attrs[i].key;
		const Value *v = op->attrs[i].val;
		GdVal gv;
		if (is_annotation(key)) {
			if (!L->o->keep_annotations || !strcmp(key, "@device"))
				continue;
			if (conv_any(L, v, &gv))
				*node_attr(L, node, arena_printf(L->a, "_pcc_%s", key + 1)) = gv;
			continue;
		}
		if (key[0] == '_') {
			if (!strcmp(key, "_device") || !strcmp(key, "_output_shapes"))
				continue;
			if (conv_any(L, v, &gv))
				*node_attr(L, node, key) = gv;
			else
				warn_once(L, op, key, "has no TensorFlow encoding");
			continue;
		}
		if (od)
			continue;   /* the OpDef's own attrs are done */
		if (conv_any(L, v, &gv))
			*node_attr(L, node, key) = gv;
		else
			warn_once(L, op, key, "has no TensorFlow encoding");
	}
}

/* Fills the node's attrs from the OpDef: gir's value, else derived, else
 * TensorFlow's default, else pcc's assumption. */
static bool lower_attrs(Low *L, const Op *op, uint32_t node, const TfOpDef *od,
			Derived *dv, const char *const *skip)
{
	Graph *g = (Graph *)L->g;
	bool ok = true;
	for (int i = 0; i < od->nattrs; i++) {
		const TfAttrDef *d = &od->attrs[i];
		Value *v = op_attr(op, graph_intern(g, d->name));
		if (!v && d->alias)
			v = op_attr(op, graph_intern(g, d->alias));
		GdVal gv;
		if (d->kind == TK_TENSOR) {
			if (!dv->set[i]) {
				err(L, op, "attribute '%s' (a tensor) is missing", d->name);
				ok = false;
				continue;
			}
			*node_attr(L, node, d->name) = dv->v[i];
			continue;
		}
		if (v) {
			if (!conv(L, v, d->kind, d->list, &gv)) {
				err(L, op, "attribute '%s' must be %s (TensorFlow's OpDef)",
				    d->name, tk_name(d->kind, d->list));
				ok = false;
				continue;
			}
			if (dv->set[i] && !gd_val_eq(&gv, &dv->v[i]) && d->kind == TK_TYPE) {
				err(L, op, "attribute '%s' disagrees with the types of the "
				    "inputs and outputs", d->name);
				ok = false;
				continue;
			}
			if (dv->set[i] && d->kind == TK_INT && !gd_val_eq(&gv, &dv->v[i])) {
				err(L, op, "attribute '%s' = %lld but there are %lld",
				    d->name, (long long)gv.i, (long long)dv->v[i].i);
				ok = false;
				continue;
			}
		} else if (dv->set[i]) {
			gv = dv->v[i];
		} else if (d->dflt) {
			gv = parse_default(L, d, d->dflt);
		} else if (d->pcc) {
			gv = parse_default(L, d, d->pcc);
		} else {
			err(L, op, "attribute '%s' (%s) is missing; TensorFlow requires it",
			    d->name, tk_name(d->kind, d->list));
			ok = false;
			continue;
		}
		if (!check_attr(L, op, d, &gv)) {
			ok = false;
			continue;
		}
		*node_attr(L, node, d->name) = gv;
	}
	/* gir attrs that the OpDef does not declare */
	for (uint32_t i = 0; i < op->nattr; i++) {
		const char *key = op->attrs[i].key;
		if (is_annotation(key) || key[0] == '_' || tf_opdef_attr(od, key))
			continue;
		bool alias = false;
		for (int j = 0; j < od->nattrs; j++)
			alias |= od->attrs[j].alias && !strcmp(od->attrs[j].alias, key);
		for (int j = 0; skip && skip[j]; j++)
			alias |= !strcmp(skip[j], key);
		if (!alias)
			warn_once(L, op, key, "is not in TensorFlow's OpDef");
	}
	return ok;
}

/* ---- lowerings into core ops ---------------------------------------------- */

/* TensorFlow has no Prelu and no FusedDepthwiseConv2dNative (TF.js's
 * ops), the kernels of its _FusedMatMul implement a few fused_ops
 * combinations only, and its _FusedConv2D has no NodeDef that both 2.9
 * and 2.21 accept (2.21 requires TArgs, 2.9 rejects it; grappler fuses
 * the pieces again).  Such ops become chains of core ops ("pieces"), the
 * last keeping the op's name (docs/backends.md). */

enum { MAX_FUSED = 8 };

/* An entry of fused_ops: the TensorFlow op it stands for, the name of its
 * piece, and how many of the fused op's args it takes. */
static const struct FusedStep {
	const char *name, *op, *suffix;
	int nargs;
} fused_steps[] = {
	{"BiasAdd", "BiasAdd", "bias_add", 1},
	{"FusedBatchNorm", "FusedBatchNormV3", "batch_norm", 4},
	{"Add", "AddV2", "add", 1},
	{"Relu", "Relu", "relu", 0},
	{"Relu6", "Relu6", "relu6", 0},
	{"Elu", "Elu", "elu", 0},
	{"LeakyRelu", "LeakyRelu", "leaky_relu", 0},
	{"Sigmoid", "Sigmoid", "sigmoid", 0},
	{"Tanh", "Tanh", "tanh", 0},
	{"Prelu", "AddV2", "prelu", 1},
};

/* The fused ops pcc's op table knows, the contraction each starts with,
 * and, for TensorFlow's own, the combinations its 2.9 CPU kernels
 * implement (conv_ops_fused_impl.h, matmul_op_fused.cc): one of first,
 * optionally followed by one of kernel_activations. */
static const struct Fusion {
	const char *op, *contraction, *suffix;
	const char *first[2];   /* none: always lowered */
} fusions[] = {
	{"FusedDepthwiseConv2dNative", "DepthwiseConv2dNative", "depthwise", {NULL, NULL}},
	{"_FusedConv2D", "Conv2D", "conv", {NULL, NULL}},
	{"_FusedMatMul", "MatMul", "matmul", {"BiasAdd", NULL}},
};

static const char *const kernel_activations[] = {"Relu", "Relu6", "Elu", "LeakyRelu"};

static const struct FusedStep *fused_step(const char *name)
{
	for (size_t i = 0; i < sizeof fused_steps / sizeof *fused_steps; i++)
		if (!strcmp(fused_steps[i].name, name))
			return &fused_steps[i];
	return NULL;
}

static const struct Fusion *fusion_of(const char *type)
{
	for (size_t i = 0; i < sizeof fusions / sizeof *fusions; i++)
		if (!strcmp(fusions[i].op, type))
			return &fusions[i];
	return NULL;
}

/* fused_ops as names: their count, or -1 if it is not a list of at most
 * MAX_FUSED strings (a single string is a list of one). */
static int fused_names(const Graph *g, const Op *op, const char **names)
{
	const Value *v = op_get(g, op, "fused_ops");
	if (!v)
		return 0;
	if (v->kind == V_STR || v->kind == V_IDENT) {
		names[0] = v->s;
		return 1;
	}
	if (v->kind != V_LIST || v->list.n > MAX_FUSED)
		return -1;
	for (uint32_t i = 0; i < v->list.n; i++) {
		const Value *x = v->list.items[i];
		if (x->kind != V_STR && x->kind != V_IDENT)
			return -1;
		names[i] = x->s;
	}
	return (int)v->list.n;
}

static bool kernel_combination(const struct Fusion *f, const char **names, int n)
{
	if (n < 1 || n > 2)
		return false;
	bool ok = false;
	for (int i = 0; i < 2; i++)
		ok |= f->first[i] && !strcmp(f->first[i], names[0]);
	if (!ok || n == 1)
		return ok;
	for (size_t i = 0; i < sizeof kernel_activations / sizeof *kernel_activations; i++)
		if (!strcmp(kernel_activations[i], names[1]))
			return true;
	return false;
}

const char *tf_lowered(const Graph *g, const Op *op)
{
	if (!strcmp(op->type, "Prelu"))
		return "AddV2";
	const struct Fusion *f = fusion_of(op->type);
	if (!f)
		return NULL;
	const char *names[MAX_FUSED];
	int n = fused_names(g, op, names);
	if (n > 0 && kernel_combination(f, names, n))
		return NULL;
	const struct FusedStep *s = n > 0 ? fused_step(names[n - 1]) : NULL;
	return s ? s->op : f->contraction;
}


/* A piece of op's lowering, of TensorFlow type tfop with T = dt: the op's
 * own node self when last, else a new node NAME/suffix on its device. */
static uint32_t piece(Low *L, const Op *op, uint32_t self, bool last,
		      const char *suffix, const char *tfop, int dt)
{
	uint32_t id = self;
	if (last) {
		L->gd->nodes[self].op = tfop;
	} else {
		const char *dev = L->gd->nodes[self].device;
		GdNode *n = node_new(L, added_name(L, op, suffix), tfop, NULL);
		n->device = dev;
		id = (uint32_t)(n - L->gd->nodes);
		if (L->npieces == L->cappieces) {
			L->cappieces = L->cappieces ? L->cappieces * 2 : 16;
			L->pieces = xrealloc(L->pieces, sizeof *L->pieces * L->cappieces);
		}
		L->pieces[L->npieces][0] = id;
		L->pieces[L->npieces++][1] = self;
	}
	*node_attr(L, id, "T") = v_type(dt);
	return id;
}

/* Completes a piece: the attrs not set take TensorFlow's defaults; all are
 * checked against the OpDef. */
static bool piece_done(Low *L, const Op *op, uint32_t id)
{
	const TfOpDef *od = tf_opdef(&L->defs, L->gd->nodes[id].op);
	if (!od)
		pcc_die("tf.c: lowering '%s': no OpDef for %s", op->name, L->gd->nodes[id].op);
	for (int i = 0; i < od->nattrs; i++) {
		const TfAttrDef *d = &od->attrs[i];
		GdVal *v = find_attr(&L->gd->nodes[id], d->name);
		if (!v) {
			if (!d->dflt)
				pcc_die("tf.c: lowering '%s': %s needs %s", op->name, od->name, d->name);
			v = node_attr(L, id, d->name);
			*v = parse_default(L, d, d->dflt);
		}
		if (!check_attr(L, op, d, v))
			return false;
	}
	return true;
}

static Ten piece_out(uint32_t id, const Type *t)
{
	return (Ten){id, 0, t};
}

/* prelu(x) = max(x, 0) + alpha * min(x, 0), as
 *   PREFIXpos = Relu(x), PREFIXneg = Sub(x, PREFIXpos) (x or 0, exactly),
 *   PREFIXscaled = Mul(alpha, PREFIXneg), AddV2(PREFIXpos, PREFIXscaled)
 * the last being NAME (last) or NAME/sum. */
static bool lower_prelu(Low *L, const Op *op, uint32_t self, bool last,
			const char *prefix, const char *sum, Ten x, Ten alpha,
			int dt, uint32_t *out)
{
	char b[3][96];
	snprintf(b[0], sizeof b[0], "%spos", prefix);
	snprintf(b[1], sizeof b[1], "%sneg", prefix);
	snprintf(b[2], sizeof b[2], "%sscaled", prefix);
	uint32_t pos = piece(L, op, self, false, b[0], "Relu", dt);
	node_input(L, pos, x.node, x.idx, false);
	uint32_t neg = piece(L, op, self, false, b[1], "Sub", dt);
	node_input(L, neg, x.node, x.idx, false);
	node_input(L, neg, pos, 0, false);
	uint32_t sc = piece(L, op, self, false, b[2], "Mul", dt);
	node_input(L, sc, alpha.node, alpha.idx, false);
	node_input(L, sc, neg, 0, false);
	*out = piece(L, op, self, last, sum, "AddV2", dt);
	node_input(L, *out, pos, 0, false);
	node_input(L, *out, sc, 0, false);
	return piece_done(L, op, pos) && piece_done(L, op, neg) &&
	       piece_done(L, op, sc) && piece_done(L, op, *out);
}

static double op_number(const Graph *g, const Op *op, const char *key, double dflt)
{
	const Value *v = op_get(g, op, key);
	double f;
	return v && val_number(v, &f) ? f : dflt;
}

/* Checks fused_ops of a fused op with nd data inputs: known entries, as
 * many args as they take, num_args if given.  Their count, or -1. */
static int check_fused(Low *L, const Op *op, const struct Fusion *f,
		       uint32_t nd, const char **names)
{
	const Graph *g = L->g;
	int n = fused_names(g, op, names);
	if (n < 0) {
		err(L, op, "fused_ops must be a list of at most %d op names", MAX_FUSED);
		return -1;
	}
	uint32_t need = 0;
	for (int i = 0; i < n; i++) {
		const struct FusedStep *s = fused_step(names[i]);
		if (!s) {
			err(L, op, "fused op '%s' is not one pcc can write for TensorFlow "
			    "(BiasAdd, FusedBatchNorm, Add, Relu, Relu6, Elu, LeakyRelu, "
			    "Sigmoid, Tanh, Prelu)", names[i]);
			return -1;
		}
		need += (uint32_t)s->nargs;
	}
	if (nd != 2 + need) {
		err(L, op, "its fused_ops take %u argument%s after the %s's two inputs; "
		    "the op has %u", need, need == 1 ? "" : "s", f->contraction,
		    nd < 2 ? 0 : nd - 2);
		return -1;
	}
	int64_t na = op_get_int(g, op, "num_args", (int64_t)need);
	if (na != (int64_t)need) {
		err(L, op, "num_args = %lld but there are %u args", (long long)na, need);
		return -1;
	}
	return n;
}

/* FusedDepthwiseConv2dNative, _FusedConv2D, _FusedMatMul (input, filter,
 * args...): the contraction, then each entry of fused_ops. */
static bool lower_fused(Low *L, const Op *op, uint32_t self,
			const struct Fusion *f, const Ten *ins, uint32_t nd)
{
	const Graph *g = L->g;
	const char *names[MAX_FUSED];
	int n = check_fused(L, op, f, nd, names);
	if (n < 0)
		return false;
	int dt = tfdt_of(op->out[0].dt);
	const Type *t = &op->out[0];
	uint32_t c = piece(L, op, self, n == 0, f->suffix, f->contraction, dt);
	node_input(L, c, ins[0].node, ins[0].idx, false);
	node_input(L, c, ins[1].node, ins[1].idx, false);
	const TfOpDef *cod = tf_opdef(&L->defs, f->contraction);
	Derived dv = {arena_alloc(L->a, sizeof(GdVal) * (size_t)(cod->nattrs + 1)),
		      arena_alloc(L->a, sizeof(bool) * (size_t)(cod->nattrs + 1))};
	for (int i = 0; i < cod->nattrs; i++)
		if (!strcmp(cod->attrs[i].name, "T")) {
			dv.v[i] = v_type(dt);
			dv.set[i] = true;
		}
	static const char *const skip[] = {"fused_ops", "num_args", "epsilon",
					   "leakyrelu_alpha", NULL};
	if (!lower_attrs(L, op, c, cod, &dv, skip))
		return false;
	const char *fmt = op_get_str(g, op, "data_format");
	if (!fmt)
		fmt = "NHWC";
	Ten h = piece_out(c, t);
	uint32_t a = 2;
	for (int i = 0; i < n; i++) {
		const struct FusedStep *s = fused_step(names[i]);
		bool last = i == n - 1;
		int seen = 0;
		for (int j = 0; j < i; j++)
			seen += !strcmp(names[j], names[i]);
		char sfx[64];
		if (seen)
			snprintf(sfx, sizeof sfx, "%s_%d", s->suffix, seen);
		else
			snprintf(sfx, sizeof sfx, "%s", s->suffix);
		uint32_t id;
		if (!strcmp(s->name, "Prelu")) {
			char prefix[80];
			snprintf(prefix, sizeof prefix, "%s/", sfx);
			if (!lower_prelu(L, op, self, last, prefix, sfx, h, ins[a++], dt, &id))
				return false;
			h = piece_out(id, t);
			continue;
		}
		id = piece(L, op, self, last, sfx, s->op, dt);
		node_input(L, id, h.node, h.idx, false);
		for (int k = 0; k < s->nargs; k++, a++)
			node_input(L, id, ins[a].node, ins[a].idx, false);
		if (!strcmp(s->op, "BiasAdd")) {
			*node_attr(L, id, "data_format") = v_str(fmt);
		} else if (!strcmp(s->op, "FusedBatchNormV3")) {
			*node_attr(L, id, "U") = v_type(dt);
			*node_attr(L, id, "epsilon") = v_float(op_number(g, op, "epsilon", 0.0001));
			*node_attr(L, id, "data_format") = v_str(fmt);
			*node_attr(L, id, "is_training") = v_bool(false);
		} else if (!strcmp(s->op, "LeakyRelu")) {
			*node_attr(L, id, "alpha") = v_float(op_number(g, op, "leakyrelu_alpha", 0.2));
		}
		if (!piece_done(L, op, id))
			return false;
		h = piece_out(id, t);
	}
	if (n > 0 && !piece_done(L, op, c))
		return false;
	return true;
}

/* Prelu and the fused ops tf_lowered names: their pieces, the last being
 * node self, which also gets op's annotations and _attrs. */
static bool lower_into_core(Low *L, const Op *op, uint32_t self, const Ten *ins,
			    uint32_t nd)
{
	const struct Fusion *f = fusion_of(op->type);
	bool ok;
	if (f) {
		ok = lower_fused(L, op, self, f, ins, nd);
	} else {
		uint32_t out;
		if (nd != 2) {
			err(L, op, "a Prelu has 2 data inputs (x, alpha), not %u", nd);
			return false;
		}
		ok = lower_prelu(L, op, self, true, "", "", ins[0], ins[1],
				 tfdt_of(op->out[0].dt), &out);
	}
	if (ok)
		copy_extra_attrs(L, op, self, tf_opdef(&L->defs, L->gd->nodes[self].op));
	return ok;
}

/* An int32 vector Const node pcc adds (n values), on the device of op. */
static uint32_t add_ints(Low *L, const Op *op, const char *arg, const int64_t *v,
			 int n, const char *device)
{
	uint32_t id = add_const(L, op, arg, TFDT_INT32, 0, device);
	GdTensor *x = L->gd->nodes[id].weight;
	x->shape.rank = 1;
	x->shape.dims = arena_alloc(L->a, sizeof(int64_t));
	x->shape.dims[0] = n;
	x->nv = (uint32_t)n;
	x->i = arena_alloc(L->a, sizeof(int64_t) * (size_t)(n + 1));
	memcpy(x->i, v, sizeof(int64_t) * (size_t)n);
	return id;
}

/* A RandomUniform replica with @rng_slice = [dim, begin, whole] (a
 * dropout mask split over the batch, docs/gir.md): NAME/whole =
 * RandomUniform(NAME/whole_shape) with the op's seeds draws the whole
 * tensor, as every plan of the graph does, and NAME = Slice(NAME/whole,
 * NAME/begin, NAME/size) keeps the replica's part: TensorFlow's numbers
 * are the one-device plan's. */
static bool lower_rng_slice(Low *L, const Op *op, uint32_t self, const Value *rs)
{
	const Type *t = op->nout == 1 ? &op->out[0] : NULL;
	if (!t || !type_known(t) || t->rank > 16 || rs->kind != V_LIST ||
	    rs->list.n != 3 || rs->list.items[0]->kind != V_INT ||
	    rs->list.items[1]->kind != V_INT || rs->list.items[2]->kind != V_INT ||
	    rs->list.items[0]->i < 0 || rs->list.items[0]->i >= t->rank ||
	    rs->list.items[1]->i < 0 ||
	    rs->list.items[1]->i + t->dims[rs->list.items[0]->i] > rs->list.items[2]->i) {
		err(L, op, "@rng_slice must be [dim, begin, whole] with begin + the "
		    "output's size along dim <= whole");
		return false;
	}
	int d = (int)rs->list.items[0]->i;
	int64_t whole[16], begin[16], size[16];
	for (int i = 0; i < t->rank; i++) {
		whole[i] = size[i] = t->dims[i];
		begin[i] = 0;
	}
	whole[d] = rs->list.items[2]->i;
	begin[d] = rs->list.items[1]->i;
	const char *dev = L->gd->nodes[self].device;
	int dt = tfdt_of(t->dt);
	uint32_t ru = piece(L, op, self, false, "whole", "RandomUniform", TFDT_INT32);
	node_input(L, ru, add_ints(L, op, "whole_shape", whole, t->rank, dev), 0, false);
	*node_attr(L, ru, "dtype") = v_type(dt);
	*node_attr(L, ru, "seed") = v_int(op_get_int(L->g, op, "seed", 0));
	*node_attr(L, ru, "seed2") = v_int(op_get_int(L->g, op, "seed2", 0));
	if (!piece_done(L, op, ru))
		return false;
	uint32_t sl = piece(L, op, self, true, "", "Slice", dt);
	node_input(L, sl, ru, 0, false);
	node_input(L, sl, add_ints(L, op, "begin", begin, t->rank, dev), 0, false);
	node_input(L, sl, add_ints(L, op, "size", size, t->rank, dev), 0, false);
	*node_attr(L, sl, "Index") = v_type(TFDT_INT32);
	return piece_done(L, op, sl);
}

/* TensorFlow's CPU kernels of DepthwiseConv2dNativeBackpropInput and
 * DepthwiseConv2dNativeBackpropFilter ignore dilations: their gradients
 * come out as if the filter were not dilated (TensorFlow 2.21, against
 * tf.nn.depthwise_conv2d's own gradient), while the forward op dilates.
 * A depthwise convolution is the grouped convolution of C groups, whose
 * Conv2DBackprop* kernels do dilate; its filter [kh, kw, C, m] is the
 * grouped one [kh, kw, 1, C·m] in the same element order (output channel
 * c·m + j):
 *   NAME = Conv2DBackpropInput(sizes, NAME/filter = Reshape(f), dy)
 *   NAME = Reshape(NAME/grouped = Conv2DBackpropFilter(x, [kh, kw, 1, C·m],
 *          dy), [kh, kw, C, m])
 * True where op is such a backprop with a dilation other than 1. */
static bool dw_dilated(const Graph *g, const Op *op)
{
	if (strcmp(op->type, "DepthwiseConv2dNativeBackpropInput") &&
	    strcmp(op->type, "DepthwiseConv2dNativeBackpropFilter"))
		return false;
	const Value *d = op_get(g, op, "dilations");
	if (!d || d->kind != V_LIST)
		return false;
	for (uint32_t i = 0; i < d->list.n; i++)
		if (d->list.items[i]->kind == V_INT && d->list.items[i]->i != 1)
			return true;
	return false;
}

static bool lower_dw_dilated(Low *L, const Op *op, uint32_t self, const Ten *ins,
			     uint32_t nd)
{
	bool input = !strcmp(op->type, "DepthwiseConv2dNativeBackpropInput");
	const Type *f = input ? (nd == 3 ? ins[1].t : NULL)
			      : (op->nout ? &op->out[0] : NULL);
	if (nd != 3 || !f || !type_known(f) || f->rank != 4) {
		err(L, op, "a dilated %s needs 3 data inputs and a filter of known "
		    "shape [kh, kw, C, m]", op->type);
		return false;
	}
	const char *dev = L->gd->nodes[self].device;
	int dt = tfdt_of(f->dt);
	int64_t grouped[4] = {f->dims[0], f->dims[1], 1, f->dims[2] * f->dims[3]};
	int64_t dims[4] = {f->dims[0], f->dims[1], f->dims[2], f->dims[3]};
	static const char *const conv_attrs[] = {"strides", "padding", "explicit_paddings",
						 "data_format", "dilations"};
	uint32_t conv, shape;
	if (input) {
		uint32_t fr = piece(L, op, self, false, "filter", "Reshape", dt);
		node_input(L, fr, ins[1].node, ins[1].idx, false);
		node_input(L, fr, add_ints(L, op, "filter_shape", grouped, 4, dev), 0, false);
		*node_attr(L, fr, "Tshape") = v_type(TFDT_INT32);
		if (!piece_done(L, op, fr))
			return false;
		conv = piece(L, op, self, true, "", "Conv2DBackpropInput", dt);
		node_input(L, conv, ins[0].node, ins[0].idx, false);
		node_input(L, conv, fr, 0, false);
		node_input(L, conv, ins[2].node, ins[2].idx, false);
	} else {
		conv = piece(L, op, self, false, "grouped", "Conv2DBackpropFilter", dt);
		node_input(L, conv, ins[0].node, ins[0].idx, false);
		node_input(L, conv, add_ints(L, op, "grouped_sizes", grouped, 4, dev), 0,
			   false);
		node_input(L, conv, ins[2].node, ins[2].idx, false);
	}
	for (size_t i = 0; i < sizeof conv_attrs / sizeof *conv_attrs; i++) {
		const Value *v = op_get(L->g, op, conv_attrs[i]);
		GdVal gv;
		if (v && conv_any(L, v, &gv))
			*node_attr(L, conv, conv_attrs[i]) = gv;
	}
	if (!piece_done(L, op, conv))
		return false;
	if (input)
		return true;
	shape = piece(L, op, self, true, "", "Reshape", dt);
	node_input(L, shape, conv, 0, false);
	node_input(L, shape, add_ints(L, op, "shape", dims, 4, dev), 0, false);
	*node_attr(L, shape, "Tshape") = v_type(TFDT_INT32);
	return piece_done(L, op, shape);
}

/* ---- one op ------------------------------------------------------------ */

static const struct Shorthand *shorthand_of(const char *type)
{
	for (size_t i = 0; i < sizeof shorthands / sizeof *shorthands; i++)
		if (!strcmp(shorthands[i].op, type))
			return &shorthands[i];
	return NULL;
}

/* AllReduce {key, algo, devices} -> CollectiveReduce or NcclAllReduce. */
static const char *lower_allreduce(Low *L, const Op *op, Derived *dv,
				   const TfOpDef **odp)
{
	const Graph *g = L->g;
	Value *devs = op_get(g, op, "devices");
	int64_t keyv = 0;
	bool have_key = plan_coll_key(g, op, &keyv);
	const char *algo = op_get_str(g, op, "algo");
	if (!devs || devs->kind != V_LIST || devs->list.n == 0) {
		err(L, op, "an AllReduce needs devices = [...]");
		return NULL;
	}
	if (!have_key) {
		err(L, op, "an AllReduce needs an integer key = K (its instance key)");
		return NULL;
	}
	int64_t ikey = keyv;
	/* the group: its device list, joined */
	size_t len = 1;
	bool one_machine = true;
	int m0 = -2;
	for (uint32_t i = 0; i < devs->list.n; i++) {
		const Value *x = devs->list.items[i];
		if (x->kind != V_STR && x->kind != V_IDENT) {
			err(L, op, "devices must be device names");
			return NULL;
		}
		len += strlen(x->s) + 1;
		int m = machine_of(L, x->s);
		if (m0 == -2)
			m0 = m;
		one_machine &= m >= 0 && m == m0;
	}
	char *joined = xmalloc(len);
	char *p = joined;
	for (uint32_t i = 0; i < devs->list.n; i++)
		p += sprintf(p, "%s%s", i ? "," : "", devs->list.items[i]->s);
	uint32_t gk = 0;
	while (gk < L->ngroups && strcmp(L->groups[gk], joined))
		gk++;
	if (gk == L->ngroups) {
		if (L->ngroups == L->capgroups) {
			L->capgroups = L->capgroups ? L->capgroups * 2 : 8;
			L->groups = xrealloc(L->groups, sizeof(char *) * L->capgroups);
		}
		L->groups[L->ngroups++] = joined;
	} else {
		free(joined);
	}
	int n = (int)devs->list.n;
	const char *tfop;
	const TfOpDef *od;
	if (L->o->nccl && one_machine) {
		tfop = "NcclAllReduce";
		od = tf_opdef(&L->defs, tfop);
		derive_int(od, dv, "num_devices", n);
		for (int i = 0; i < od->nattrs; i++) {
			if (!strcmp(od->attrs[i].name, "reduction")) {
				dv->v[i] = v_str("sum");
				dv->set[i] = true;
			} else if (!strcmp(od->attrs[i].name, "shared_name")) {
				dv->v[i] = v_str(arena_printf(L->a, "pcc_allreduce_%lld",
							       (long long)ikey));
				dv->set[i] = true;
			}
		}
	} else {
		tfop = "CollectiveReduce";
		od = tf_opdef(&L->defs, tfop);
		derive_int(od, dv, "group_size", n);
		derive_int(od, dv, "group_key", gk + 1);
		derive_int(od, dv, "instance_key", ikey);
		for (int i = 0; i < od->nattrs; i++) {
			const char *a = od->attrs[i].name;
			GdVal v;
			if (!strcmp(a, "merge_op"))
				v = v_str("Add");
			else if (!strcmp(a, "final_op"))
				v = v_str("Id");
			else if (!strcmp(a, "subdiv_offsets")) {
				v = v_list(L, TK_INT, 1);
				v.l.items[0] = v_int(0);
			} else if (!strcmp(a, "communication_hint"))
				v = v_str(algo && !strcmp(algo, "ring") ? "ring" : "auto");
			else
				continue;
			dv->v[i] = v;
			dv->set[i] = true;
		}
	}
	*odp = od;
	return tfop;
}

/* The attrs of op (lowered to od as node) not yet in dv that come from
 * its first output's type or its value (Placeholder, VariableV2,
 * VarHandleOp, Const): dtype, shape, value (frozen: the variable's
 * weights); false after an error. */
static bool derive_value_attrs(Low *L, const Op *op, uint32_t node,
			       const TfOpDef *od, Derived *dv, bool frozen)
{
	for (int i = 0; i < od->nattrs; i++) {
		const TfAttrDef *d = &od->attrs[i];
		if (dv->set[i] || op->nout == 0)
			continue;
		if (!strcmp(d->name, "dtype") && d->kind == TK_TYPE && !d->list) {
			dv->v[i] = v_type(tfdt_of(op->out[0].dt));
			dv->set[i] = true;
		} else if (!strcmp(d->name, "shape") && d->kind == TK_SHAPE && !d->list &&
			   !op_get(L->g, op, "shape")) {
			dv->v[i] = v_shape(L, &op->out[0]);
			dv->set[i] = true;
		} else if (d->kind == TK_TENSOR && !strcmp(d->name, "value")) {
			GdTensor *x = frozen ? tensor_new(L, &op->out[0]) : const_tensor(L, op);
			if (!x)
				return false;
			if (frozen)
				tensor_fill(L, op, x);
			dv->v[i] = v_tensor(x);
			dv->set[i] = true;
			L->gd->nodes[node].weight = x;
		}
	}
	return true;
}

static bool lower_op(Low *L, const Op *op, uint32_t node)
{
	const Graph *g = L->g;
	GdNode *n = &L->gd->nodes[node];
	const char *device = n->device;
	/* data inputs, Transfers resolved */
	uint32_t nd = 0;
	for (uint32_t i = 0; i < op->nin; i++)
		nd += !op->in[i].ctrl;
	Ten *ins = arena_alloc(L->a, sizeof(Ten) * (nd + 12));
	uint32_t k = 0;
	for (uint32_t i = 0; i < op->nin; i++)
		if (!op->in[i].ctrl)
			ins[k++] = resolve(L, &op->in[i]);

	if (tf_lowered(g, op))
		return lower_into_core(L, op, node, ins, nd);
	const Value *rs = op_ann(g, op, ANN_RNG_SLICE);
	if (rs && !strcmp(op->type, "RandomUniform"))
		return lower_rng_slice(L, op, node, rs);
	if (dw_dilated(g, op)) {
		bool ok = lower_dw_dilated(L, op, node, ins, nd);
		if (ok)
			copy_extra_attrs(L, op, node, tf_opdef(&L->defs, L->gd->nodes[node].op));
		return ok;
	}
	const struct Fusion *fu = fusion_of(op->type);
	const char *fnames[MAX_FUSED];
	if (fu && check_fused(L, op, fu, nd, fnames) < 0)
		return false;
	const char *tfop = op->type;
	const TfOpDef *od = NULL;
	int nattrs_max = 24;
	Derived dv = {arena_alloc(L->a, sizeof(GdVal) * (size_t)nattrs_max),
		      arena_alloc(L->a, sizeof(bool) * (size_t)nattrs_max)};
	static const char *const allreduce_skip[] = {"key", "algo", "devices", NULL};
	const char *const *skip = NULL;
	bool frozen = false;

	if (op->opcode == L->opc_allreduce) {
		tfop = lower_allreduce(L, op, &dv, &od);
		if (!tfop)
			return false;
		skip = allreduce_skip;
	} else if (op->opcode == L->opc_sce && nd == 2 && ins[0].t && ins[1].t &&
		   ins[1].t->rank == ins[0].t->rank - 1) {
		/* gir's class-index labels: TensorFlow's sparse op */
		tfop = "SparseSoftmaxCrossEntropyWithLogits";
	} else if (L->o->json && L->o->variables == TF_VARS_AUTO &&
		   (op->opcode == L->opc_variablev2 || op->opcode == L->opc_variable) &&
		   !L->updated[op->id]) {
		tfop = "Const";   /* frozen for TF.js: its value is a weight */
		frozen = true;
	}
	if (!od)
		od = tf_opdef(&L->defs, tfop);
	n->op = tfop;

	if (!od && !L->o->custom_ops) {
		err(L, op, "TensorFlow has no op type '%s' (it is not in pcc's OpDef "
		    "table, backend/tfops.def); lower it to core ops before the "
		    "TensorFlow backend, or write it as it is with "
		    "--emit-opt=custom_ops=keep (it must then be registered)", op->type);
		return false;
	}
	if (!od) {
		/* outside the table: inputs and attrs as they are */
		warn_once(L, op, NULL, NULL);
		for (uint32_t i = 0; i < k; i++)
			node_input(L, node, ins[i].node, ins[i].idx, false);
		copy_extra_attrs(L, op, node, NULL);
		return true;
	}
	if (od->nattrs > nattrs_max)
		pcc_die("tfops.def: %s has more than %d attrs", od->name, nattrs_max);

	const struct Shorthand *sh = shorthand_of(tfop);
	if (sh && (int)nd == 2 && od->nin > 2) {
		if (expand_shorthand(L, op, sh, ins, od->nin, device) < 0)
			return false;
		nd = (uint32_t)od->nin;
		/* the attrs that gave its constants are not TensorFlow's */
		const char **used = arena_alloc(L->a, sizeof(char *) * 12);
		int nu = 0;
		for (int k = 0; k < 10 && sh->args[k]; k++)
			if (sh->args[k][0] == '=')
				used[nu++] = shorthand_attr(sh->args[k] + 1);
		skip = used;
	}
	for (uint32_t i = 0; i < nd; i++)
		node_input(L, node, ins[i].node, ins[i].idx, false);

	/* derive type and number attrs from the inputs and outputs */
	const Type **types = arena_alloc(L->a, sizeof(Type *) * (nd + op->nout + 1));
	for (uint32_t i = 0; i < nd; i++)
		types[i] = ins[i].t;
	if (!derive_args(L, op, od, &dv, od->in, od->nin, types, (int)nd, false))
		return false;
	if (op->nout > 0 && !frozen) {
		for (uint32_t i = 0; i < op->nout; i++)
			types[i] = &op->out[i];
		if (!derive_args(L, op, od, &dv, od->out, od->nout, types,
				 (int)op->nout, true))
			return false;
	}
	if (!derive_value_attrs(L, op, node, od, &dv, frozen))
		return false;
	static const char *const frozen_skip[] = {"shape", "container", "shared_name", NULL};
	if (!lower_attrs(L, op, node, od, &dv, frozen ? frozen_skip : skip))
		return false;
	copy_extra_attrs(L, op, node, od);
	return true;
}



static bool has_input_from(const GdNode *n, uint32_t src);

static bool is_var_node(const GdNode *n)
{
	return !strcmp(n->op, "VariableV2") || !strcmp(n->op, "VarHandleOp") ||
	       !strcmp(n->op, "Variable");
}

/* Every op that reads a variable runs before the update of it: a control
 * input from each reader to each update op whose input 0 is the variable
 * (TensorFlow reads a Ref or a resource when the reader runs, so without
 * it an update may overtake a reader of the same step).  The C runtime
 * orders them alike (docs/backends.md). */
static void readers_before_updates(Low *L)
{
	GdGraph *gd = L->gd;
	uint32_t n = gd->n;
	uint32_t *start = xcalloc(n + 2, sizeof *start);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < gd->nodes[i].nin; j++)
			if (!gd->nodes[i].in[j].ctrl && is_var_node(&gd->nodes[gd->nodes[i].in[j].node]))
				start[gd->nodes[i].in[j].node + 1]++;
	for (uint32_t i = 0; i < n; i++)
		start[i + 1] += start[i];
	uint32_t *rd = xmalloc(sizeof(uint32_t) * (start[n] + 1));
	uint32_t *fill = xmalloc(sizeof(uint32_t) * (n + 1));
	memcpy(fill, start, sizeof(uint32_t) * n);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < gd->nodes[i].nin; j++)
			if (!gd->nodes[i].in[j].ctrl && is_var_node(&gd->nodes[gd->nodes[i].in[j].node]))
				rd[fill[gd->nodes[i].in[j].node]++] = i;
	for (uint32_t u = 0; u < n; u++) {
		const GdNode *un = &gd->nodes[u];
		const OpInfo *info = un->src ? op_info(un->src->opcode) : NULL;
		if (!info || !(info->flags & OPF_UPDATE) || !un->nin || un->in[0].ctrl)
			continue;
		uint32_t v = un->in[0].node;
		if (!is_var_node(&gd->nodes[v]))
			continue;
		for (uint32_t k = start[v]; k < start[v + 1]; k++) {
			uint32_t r = rd[k];
			const GdNode *rn = &gd->nodes[r];
			const OpInfo *ri = rn->src ? op_info(rn->src->opcode) : NULL;
			if (r == u || (ri && (ri->flags & OPF_UPDATE)))
				continue;
			if (!has_input_from(&gd->nodes[u], r))
				node_input(L, u, r, 0, true);
		}
	}
	free(start);
	free(rd);
	free(fill);
}

/* ---- the init target and save/restore ----------------------------------- */

/* A node pcc adds: op on device, data inputs a, b (NONE: fewer), T = dt
 * when dt (TF number) is not 0. */
static uint32_t add_node(Low *L, const char *name, const char *op,
			 const char *device, uint32_t a, uint32_t b, int dt)
{
	GdNode *n = node_new(L, unique_name(L, name), op, NULL);
	uint32_t id = (uint32_t)(n - L->gd->nodes);
	n->device = device;
	if (a != NONE)
		node_input(L, id, a, 0, false);
	if (b != NONE)
		node_input(L, id, b, 0, false);
	if (dt)
		*node_attr(L, id, "T") = v_type(dt);
	return id;
}

/* A Const of dtype and shape filled with one value (bits: the uint64's or
 * int64's bits, else f). */
static uint32_t const_fill(Low *L, const char *name, const char *device,
			   int dtype, const GdShape *shape, double f, uint64_t bits)
{
	uint32_t id = add_node(L, name, "Const", device, NONE, NONE, 0);
	GdTensor *x = arena_alloc(L->a, sizeof *x);
	x->dtype = dtype;
	if (shape)
		x->shape = *shape;
	x->src = GS_VALUES;
	x->nv = 1;
	if (is_float_dt(dtype)) {
		x->f = arena_alloc(L->a, sizeof(double));
		x->f[0] = f;
	} else {
		x->i = arena_alloc(L->a, sizeof(int64_t));
		x->i[0] = dtype == TFDT_UINT64 || dtype == TFDT_INT64 ? (int64_t)bits
								      : (int64_t)f;
	}
	L->gd->nodes[id].weight = x;
	*node_attr(L, id, "dtype") = v_type(dtype);
	*node_attr(L, id, "value") = v_tensor(x);
	return id;
}

/* A scalar constant of the initialisers, one per device, dtype and value. */
static uint32_t cconst(Low *L, const char *device, int dtype, uint64_t bits)
{
	for (uint32_t i = 0; i < L->nconsts; i++)
		if (L->consts[i].device == device && L->consts[i].dtype == dtype &&
		    L->consts[i].bits == bits)
			return L->consts[i].node;
	double f = 0;
	if (dtype == TFDT_DOUBLE)
		memcpy(&f, &bits, sizeof f);
	uint32_t id = const_fill(L, "init/const", device, dtype, NULL, f, bits);
	if (L->nconsts == L->capconsts) {
		L->capconsts = L->capconsts ? L->capconsts * 2 : 16;
		L->consts = xrealloc(L->consts, sizeof *L->consts * L->capconsts);
	}
	L->consts[L->nconsts++] = (CCache){device, dtype, bits, id};
	return id;
}

static uint64_t dbits(double f)
{
	uint64_t b;
	memcpy(&b, &f, sizeof b);
	return b;
}

#define PHI 0x9E3779B97F4A7C15ull

/* z ^ (z >> k) in uint64 */
static uint32_t xorshift(Low *L, const char *pfx, const char *dev, uint32_t z, int k)
{
	uint32_t sh = add_node(L, arena_printf(L->a, "%s/shift%d", pfx, k),
			       "RightShift", dev, z,
			       cconst(L, dev, TFDT_UINT64, (uint64_t)k), TFDT_UINT64);
	return add_node(L, arena_printf(L->a, "%s/xor%d", pfx, k), "BitwiseXor",
			dev, z, sh, TFDT_UINT64);
}

/* The C runtime's PARAM values (backend/runtime/seed.c) computed in the
 * graph: element i of the tensor named key is
 *   scale * ((splitmix64(fnv1a64(key) ^ seed*PHI + (i+1)*PHI) >> 11)
 *            * 2^-52 - 1),
 * scale the Glorot bound sqrt(6 / (fan_in + fan_out)), computed in double
 * and rounded to the variable's type, seed the init/seed placeholder. */
static uint32_t gen_param(Low *L, const char *pfx, const VarInit *vi,
			  const char *dev, uint32_t seedphi)
{
	const Type *t = vi->t;
	int64_t numel = type_numel(t);
	double fin = 1, fout = 1;
	if (t->rank == 1)
		fin = fout = (double)t->dims[0];
	else if (t->rank >= 2) {
		double rf = 1;
		for (int i = 0; i < t->rank - 2; i++)
			rf *= (double)t->dims[i];
		fin = rf * (double)t->dims[t->rank - 2];
		fout = rf * (double)t->dims[t->rank - 1];
	}
	double scale = fin + fout > 0 ? sqrt(6.0 / (fin + fout)) : 1.0;
	uint32_t idx = add_node(L, arena_printf(L->a, "%s/index", pfx), "Range", dev,
				cconst(L, dev, TFDT_INT64, 0),
				cconst(L, dev, TFDT_INT64, (uint64_t)numel), 0);
	node_input(L, idx, cconst(L, dev, TFDT_INT64, 1), 0, false);
	*node_attr(L, idx, "Tidx") = v_type(TFDT_INT64);
	uint32_t u = add_node(L, arena_printf(L->a, "%s/bits", pfx), "Bitcast", dev,
			      idx, NONE, TFDT_INT64);
	*node_attr(L, u, "type") = v_type(TFDT_UINT64);
	uint32_t phi = cconst(L, dev, TFDT_UINT64, PHI);
	uint32_t h = add_node(L, arena_printf(L->a, "%s/name", pfx), "BitwiseXor", dev,
			      cconst(L, dev, TFDT_UINT64, name_hash(vi->key)), seedphi,
			      TFDT_UINT64);
	uint32_t c0 = add_node(L, arena_printf(L->a, "%s/base", pfx), "AddV2", dev, h,
			       phi, TFDT_UINT64);
	uint32_t z = add_node(L, arena_printf(L->a, "%s/step", pfx), "Mul", dev, u,
			      phi, TFDT_UINT64);
	z = add_node(L, arena_printf(L->a, "%s/z", pfx), "AddV2", dev, z, c0,
		     TFDT_UINT64);
	z = add_node(L, arena_printf(L->a, "%s/mul1", pfx), "Mul", dev,
		     xorshift(L, pfx, dev, z, 30),
		     cconst(L, dev, TFDT_UINT64, 0xbf58476d1ce4e5b9ull), TFDT_UINT64);
	z = add_node(L, arena_printf(L->a, "%s/mul2", pfx), "Mul", dev,
		     xorshift(L, pfx, dev, z, 27),
		     cconst(L, dev, TFDT_UINT64, 0x94d049bb133111ebull), TFDT_UINT64);
	z = xorshift(L, pfx, dev, z, 31);
	uint32_t top = add_node(L, arena_printf(L->a, "%s/top", pfx), "RightShift", dev,
				z, cconst(L, dev, TFDT_UINT64, 11), TFDT_UINT64);
	uint32_t d = add_node(L, arena_printf(L->a, "%s/double", pfx), "Cast", dev, top,
			      NONE, 0);
	*node_attr(L, d, "SrcT") = v_type(TFDT_UINT64);
	*node_attr(L, d, "DstT") = v_type(TFDT_DOUBLE);
	d = add_node(L, arena_printf(L->a, "%s/unit", pfx), "Mul", dev, d,
		     cconst(L, dev, TFDT_DOUBLE, dbits(0x1.0p-52)), TFDT_DOUBLE);
	d = add_node(L, arena_printf(L->a, "%s/uniform", pfx), "Sub", dev, d,
		     cconst(L, dev, TFDT_DOUBLE, dbits(1.0)), TFDT_DOUBLE);
	d = add_node(L, arena_printf(L->a, "%s/scaled", pfx), "Mul", dev, d,
		     cconst(L, dev, TFDT_DOUBLE, dbits(scale)), TFDT_DOUBLE);
	int dt = tfdt_of(t->dt);
	if (dt != TFDT_DOUBLE) {
		d = add_node(L, arena_printf(L->a, "%s/cast", pfx), "Cast", dev, d, NONE, 0);
		*node_attr(L, d, "SrcT") = v_type(TFDT_DOUBLE);
		*node_attr(L, d, "DstT") = v_type(dt);
	}
	GdShape sh = shape_of(L, t);
	GdShape one = {1, arena_alloc(L->a, sizeof(int64_t))};
	one.dims[0] = t->rank;
	uint32_t shape = const_fill(L, arena_printf(L->a, "%s/shape", pfx), dev,
				    TFDT_INT64, &one, 0, 0);
	GdTensor *x = L->gd->nodes[shape].weight;
	x->nv = (uint32_t)t->rank;
	x->i = arena_alloc(L->a, sizeof(int64_t) * ((size_t)t->rank + 1));
	for (int i = 0; i < t->rank; i++)
		x->i[i] = sh.dims[i];
	uint32_t r = add_node(L, pfx, "Reshape", dev, d, shape, dt);
	*node_attr(L, r, "Tshape") = v_type(TFDT_INT64);
	return r;
}

/* var <- value: Assign or AssignVariableOp, on the variable's device. */
static uint32_t add_assign(Low *L, const char *name, const VarInit *vi,
			   uint32_t value)
{
	const GdNode *v = &L->gd->nodes[vi->node];
	int dt = tfdt_of(vi->t->dt);
	uint32_t a;
	if (vi->resource) {
		a = add_node(L, name, "AssignVariableOp", v->device, vi->node, value, 0);
		*node_attr(L, a, "dtype") = v_type(dt);
	} else {
		a = add_node(L, name, "Assign", v->device, vi->node, value, dt);
		*node_attr(L, a, "use_locking") = v_bool(true);
		*node_attr(L, a, "validate_shape") = v_bool(true);
	}
	return a;
}

/* The CPU of dev's task (/job:J/replica:R/task:I/device:CPU:0), where the
 * initialisers compute: GPUs lack kernels for some of their uint64 ops.
 * dev itself when it is not of that form (an imported _device), NULL
 * for NULL. */
static const char *host_of(Low *L, const char *dev)
{
	const char *d = dev ? strstr(dev, "/device:") : NULL;
	if (!d || strncmp(dev, "/job:", 5))
		return dev;
	return dev_intern(L, arena_printf(L->a, "%.*s/device:CPU:0", (int)(d - dev), dev));
}

/* The initial value of vi's variable, made on its task's CPU (a copy
 * whose type differs from its primary's, a partition, gets its own). */
static uint32_t init_value(Low *L, const VarInit *vi, uint32_t seedphi)
{
	const GdNode *pn = &L->gd->nodes[vi->node];
	const char *pfx = arena_printf(L->a, "%s/Initializer", pn->name);
	int dt = tfdt_of(vi->t->dt);
	GdShape sh = shape_of(L, vi->t);
	if (vi->kind == VI_PARAM && is_float_dt(dt) && type_known(vi->t))
		return gen_param(L, pfx, vi, host_of(L, pn->device), seedphi);
	return const_fill(L, pfx, host_of(L, pn->device), dt, &sh,
			  vi->kind == VI_VALUE ? vi->value : 0, 0);
}

static int cmp_vinit(const void *a, const void *b)
{
	const VarInit *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : x->node < y->node ? -1 : x->node > y->node;
}

/* power <- power * beta, after the apply that read it. */
static void add_power_updates(Low *L)
{
	for (uint32_t i = 0; i < L->npows; i++) {
		const PowUpd *p = &L->pows[i];
		const GdNode *v = &L->gd->nodes[p->var];
		const char *dev = v->device;
		const char *name = arena_printf(L->a, "%s/update", v->name);
		uint32_t cur = p->var;
		if (p->resource) {
			cur = add_node(L, arena_printf(L->a, "%s/read", name), "ReadVariableOp",
				       dev, p->var, NONE, 0);
			*node_attr(L, cur, "dtype") = v_type(p->dtype);
			node_input(L, cur, p->apply, 0, true);
		}
		uint32_t m = add_node(L, arena_printf(L->a, "%s/mul", name), "Mul", dev,
				      cur, p->beta, p->dtype);
		node_input(L, m, p->apply, 0, true);
		VarInit vi = {p->var, NULL, NULL, 0, 0, p->resource};
		Type st = {0};
		for (uint32_t k = 0; k < L->nvars; k++)
			if (L->vars[k].node == p->var)
				st = *L->vars[k].t;
		vi.t = &st;
		add_assign(L, name, &vi, m);
	}
}

/* The init target: a NoOp "init" with a control input from the
 * initialiser of every variable.  Variables of one key (a variable and its
 * replicas) are all assigned the same tensor, made once on the device of
 * the first of them (graph order): seeded PARAM values, zeros for optimizer
 * state, beta for Adam's powers.  Then save/: SaveV2 and RestoreV2 of one
 * tensor per key, named by the key, as tf.compat.v1.train.Saver writes
 * them (save/Const the filename, save/control_dependency,
 * save/restore_all), on task 0's CPU. */
static void add_init(Low *L)
{
	if (!L->nvars) {
		node_new(L, "init", "NoOp", NULL);
		return;
	}
	VarInit *v = xmalloc(sizeof *v * L->nvars);
	memcpy(v, L->vars, sizeof *v * L->nvars);
	qsort(v, L->nvars, sizeof *v, cmp_vinit);
	uint32_t *assigns = xmalloc(sizeof(uint32_t) * (L->nvars + 1));
	uint32_t *prim = xmalloc(sizeof(uint32_t) * (L->nvars + 1));
	uint32_t nprim = 0;
	/* the seed: fed by tfrun --seed, 0 by default */
	const char *dev0 = host_of(L, L->gd->nodes[L->vars[0].node].device);
	uint32_t sd = cconst(L, dev0, TFDT_UINT64, 0);
	uint32_t seed = add_node(L, "init/seed", "PlaceholderWithDefault", dev0, sd,
				 NONE, 0);
	*node_attr(L, seed, "dtype") = v_type(TFDT_UINT64);
	GdShape scalar = {0, NULL};
	GdVal sv = {.kind = TK_SHAPE};
	sv.shape = scalar;
	*node_attr(L, seed, "shape") = sv;
	uint32_t seedphi = add_node(L, "init/seed_phi", "Mul", dev0, seed,
				    cconst(L, dev0, TFDT_UINT64, PHI), TFDT_UINT64);
	for (uint32_t i = 0, j; i < L->nvars; i = j) {
		for (j = i + 1; j < L->nvars && !strcmp(v[j].key, v[i].key); j++)
			;
		/* the group's first variable in graph order: its primary */
		uint32_t p = i;
		for (uint32_t k = i; k < j; k++)
			if (v[k].node < v[p].node)
				p = k;
		prim[nprim++] = p;
		uint32_t val = init_value(L, &v[p], seedphi);
		for (uint32_t k = i; k < j; k++)
			assigns[k] = add_assign(L, arena_printf(L->a, "%s/Assign",
								L->gd->nodes[v[k].node].name),
						&v[k], type_eq(v[k].t, v[p].t) ? val :
						init_value(L, &v[k], seedphi));
	}
	GdNode *in = node_new(L, "init", "NoOp", NULL);   /* reserved */
	uint32_t init = (uint32_t)(in - L->gd->nodes);
	for (uint32_t k = 0; k < L->nvars; k++)
		node_input(L, init, assigns[k], 0, true);

	/* save/ and restore */
	const char *cpu = dev_intern(L, arena_printf(L->a,
			"/job:%s/replica:0/task:0/device:CPU:0", L->o->job));
	GdShape vec = {1, arena_alloc(L->a, sizeof(int64_t))};
	vec.dims[0] = nprim;
	uint32_t fname = const_fill(L, "save/Const", cpu, TFDT_STRING, NULL, 0, 0);
	GdTensor *fx = L->gd->nodes[fname].weight;
	fx->s = arena_alloc(L->a, sizeof(char *));
	fx->s[0] = "model";
	uint32_t tn[2], ss[2];
	for (int r = 0; r < 2; r++) {
		const char *op = r ? "save/RestoreV2" : "save/SaveV2";
		tn[r] = const_fill(L, arena_printf(L->a, "%s/tensor_names", op), cpu,
				   TFDT_STRING, &vec, 0, 0);
		ss[r] = const_fill(L, arena_printf(L->a, "%s/shape_and_slices", op), cpu,
				   TFDT_STRING, &vec, 0, 0);
		GdTensor *a = L->gd->nodes[tn[r]].weight, *b = L->gd->nodes[ss[r]].weight;
		a->nv = b->nv = nprim;
		a->s = arena_alloc(L->a, sizeof(char *) * (nprim + 1));
		b->s = arena_alloc(L->a, sizeof(char *) * (nprim + 1));
		for (uint32_t k = 0; k < nprim; k++) {
			a->s[k] = v[prim[k]].key;
			b->s[k] = "";
		}
	}
	GdVal dts = v_list(L, TK_TYPE, nprim);
	for (uint32_t k = 0; k < nprim; k++) {
		dts.l.items[k].kind = TK_TYPE;
		dts.l.items[k].type = tfdt_of(v[prim[k]].t->dt);
	}
	uint32_t save = add_node(L, "save/SaveV2", "SaveV2", cpu, fname, tn[0], 0);
	node_input(L, save, ss[0], 0, false);
	uint32_t *reads = xmalloc(sizeof(uint32_t) * (nprim + 1));
	for (uint32_t k = 0; k < nprim; k++) {
		const VarInit *pv = &v[prim[k]];
		reads[k] = pv->node;
		if (pv->resource) {
			const GdNode *pn = &L->gd->nodes[pv->node];
			reads[k] = add_node(L, arena_printf(L->a, "save/read_%u", k),
					    "ReadVariableOp", pn->device, pv->node, NONE, 0);
			*node_attr(L, reads[k], "dtype") = v_type(tfdt_of(pv->t->dt));
		}
	}
	for (uint32_t k = 0; k < nprim; k++)
		node_input(L, save, reads[k], 0, false);
	*node_attr(L, save, "dtypes") = dts;
	uint32_t dep = add_node(L, "save/control_dependency", "Identity", cpu, fname,
				NONE, TFDT_STRING);
	node_input(L, dep, save, 0, true);
	uint32_t rest = add_node(L, "save/RestoreV2", "RestoreV2", cpu, fname, tn[1], 0);
	node_input(L, rest, ss[1], 0, false);
	*node_attr(L, rest, "dtypes") = dts;
	uint32_t all = add_node(L, "save/restore_all", "NoOp", cpu, NONE, NONE, 0);
	for (uint32_t k = 0, i = 0; i < L->nvars; k++) {
		uint32_t j = i + 1;
		while (j < L->nvars && !strcmp(v[j].key, v[i].key))
			j++;
		for (uint32_t m = i; m < j; m++) {
			if (!type_eq(v[m].t, v[prim[k]].t))
				continue;   /* a partition: not in the checkpoint */
			uint32_t a = add_assign(L, "save/Assign", &v[m], rest);
			L->gd->nodes[a].in[1].idx = k;
			node_input(L, all, a, 0, true);
		}
		i = j;
	}
	free(reads);
	free(v);
	free(assigns);
	free(prim);
}

/* ---- order and acyclicity ------------------------------------------------ */

typedef struct OrdKey {
	const char *dev;
	int64_t order;
	uint32_t node;
} OrdKey;

static int cmp_ord(const void *a, const void *b)
{
	const OrdKey *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static bool has_input_from(const GdNode *n, uint32_t src)
{
	for (uint32_t i = 0; i < n->nin; i++)
		if (n->in[i].node == src)
			return true;
	return false;
}

static bool has_ctrl_from(const GdNode *n, uint32_t src)
{
	for (uint32_t i = 0; i < n->nin; i++)
		if (n->in[i].node == src && n->in[i].ctrl)
			return true;
	return false;
}

/* The control inputs of a lowered op's node, on each of its pieces too:
 * no piece runs before what the op waits for. */
static void piece_controls(Low *L)
{
	for (uint32_t i = 0; i < L->npieces; i++) {
		uint32_t p = L->pieces[i][0], self = L->pieces[i][1];
		for (uint32_t j = 0; j < L->gd->nodes[self].nin; j++) {
			GdIn in = L->gd->nodes[self].in[j];
			if (in.ctrl && !has_ctrl_from(&L->gd->nodes[p], in.node))
				node_input(L, p, in.node, 0, true);
		}
	}
}

static void add_order(Low *L)
{
	GdGraph *gd = L->gd;
	OrdKey *keys = xmalloc(sizeof(OrdKey) * (gd->n + 1));
	uint32_t m = 0;
	for (uint32_t i = 0; i < gd->n; i++) {
		GdNode *n = &gd->nodes[i];
		if (n->order < 0)
			continue;
		if (L->o->order & TF_ORDER_PRIORITY)
			*node_attr(L, i, "_priority") = v_int(n->order);
		/* sources (variables, Consts, Placeholders: no data input)
		 * take no part: initialising or restoring a variable must not
		 * wait for a step, and a source waits for nothing anyway */
		bool source = true;
		for (uint32_t j = 0; j < n->nin && source; j++)
			source = n->in[j].ctrl;
		if (n->device && !source)
			keys[m++] = (OrdKey){n->device, n->order, i};
	}
	if (L->o->order & TF_ORDER_CONTROL) {
		qsort(keys, m, sizeof *keys, cmp_ord);
		for (uint32_t i = 1; i < m; i++) {
			if (keys[i].dev != keys[i - 1].dev ||
			    keys[i].order <= keys[i - 1].order)
				continue;
			if (!has_input_from(&gd->nodes[keys[i].node], keys[i - 1].node))
				node_input(L, keys[i].node, keys[i - 1].node, 0, true);
		}
	}
	free(keys);
}

/* Kahn's algorithm over data and control inputs. */
static bool check_acyclic(Low *L)
{
	GdGraph *gd = L->gd;
	uint32_t n = gd->n;
	uint32_t *start = xcalloc(n + 2, sizeof *start);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < gd->nodes[i].nin; j++)
			start[gd->nodes[i].in[j].node + 1]++;
	for (uint32_t i = 0; i < n; i++)
		start[i + 1] += start[i];
	uint32_t *users = xmalloc(sizeof(uint32_t) * (start[n] + 1));
	uint32_t *fill = xmalloc(sizeof(uint32_t) * (n + 1));
	memcpy(fill, start, sizeof(uint32_t) * n);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < gd->nodes[i].nin; j++)
			users[fill[gd->nodes[i].in[j].node]++] = i;
	uint32_t *indeg = xmalloc(sizeof(uint32_t) * (n + 1));
	uint32_t *queue = xmalloc(sizeof(uint32_t) * (n + 1));
	TopoDag dag = {.n = n, .start = start, .to = users};
	bool ok = topo_sort(&dag, queue, indeg) == n;
	if (!ok) {
		/* a data edge that goes against @order is the cause */
		const GdNode *bu = NULL, *bv = NULL;
		for (uint32_t i = 0; i < n && !bu; i++) {
			const GdNode *v = &gd->nodes[i];
			if (!indeg[i] || v->order < 0)
				continue;
			for (uint32_t j = 0; j < v->nin; j++) {
				const GdNode *u = &gd->nodes[v->in[j].node];
				if (!v->in[j].ctrl && u->order >= v->order) {
					bu = u;
					bv = v;
					break;
				}
			}
		}
		if (bu)
			err(L, bv->src, "@order %lld is not after the @order %lld of its "
			    "input '%s': the control edges of --emit-opt=order=control "
			    "would make a cycle (use order=priority or order=none)",
			    (long long)bv->order, (long long)bu->order, bu->name);
		else
			for (uint32_t i = 0; i < n; i++)
				if (indeg[i]) {
					err(L, gd->nodes[i].src, "the GraphDef has a cycle through "
					    "node '%s'", gd->nodes[i].name);
					break;
				}
	}
	free(start);
	free(users);
	free(fill);
	free(indeg);
	free(queue);
	return ok;
}

/* ---- the whole graph ---------------------------------------------------- */

static int cmp_attr(const void *a, const void *b)
{
	return strcmp(((const GdAttr *)a)->key, ((const GdAttr *)b)->key);
}

void gd_free(GdGraph *gd)
{
	if (!gd)
		return;
	free(gd->nodes);
	arena_free(gd->a);
	free(gd);
}

static void output_shapes(Low *L, const Op *op, uint32_t node)
{
	for (uint32_t k = 0; k < op->nout; k++)
		if (op->out[k].rank < 0)
			return;
	GdVal l = v_list(L, TK_SHAPE, op->nout);
	for (uint32_t k = 0; k < op->nout; k++) {
		l.l.items[k].kind = TK_SHAPE;
		l.l.items[k].shape = shape_of(L, &op->out[k]);
	}
	*node_attr(L, node, "_output_shapes") = l;
}

/* The variables that an op updates (input 0 of an update op) into
 * L->updated; returns which ops are optimizer state (the other Ref or
 * resource inputs of update ops: they start at 0). */
static bool *mark_updates(Low *L)
{
	const Graph *g = L->g;
	bool *slot = xcalloc(g->nops + 1, sizeof(bool));
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		const OpInfo *info = op_info(op->opcode);
		if (op->dead || !info || !(info->flags & OPF_UPDATE))
			continue;
		const TfOpDef *od = tf_opdef(&L->defs, op->type);
		for (uint32_t j = 0, k = 0; j < op->nin; j++) {
			if (op->in[j].ctrl)
				continue;
			const Op *s = op->in[j].src;
			if (s->opcode == L->opc_transfer && L->xsrc[s->id])
				s = L->xsrc[s->id];
			if (k == 0)
				L->updated[s->id] = true;
			else if (od && (int)k < od->nin &&
				 (od->in[k].ref || od->in[k].fixed == TFDT_RESOURCE))
				slot[s->id] = true;
			k++;
		}
	}
	return slot;
}

/* One node per op (Transfers excepted), in graph order; the names
 * TensorFlow accepts first, so that mangled ones avoid them. */
static void add_nodes(Low *L)
{
	const Graph *g = L->g;
	names_add(L, "init");   /* pcc's own: an op of that name is renamed */
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		L->node_of[i] = NONE;
		if (!op->dead && op->opcode != L->opc_transfer && tf_name_ok(op->name) &&
		    strcmp(op->name, "init"))
			names_add(L, op->name);
	}
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || op->opcode == L->opc_transfer)
			continue;
		bool keep = tf_name_ok(op->name) && strcmp(op->name, "init");
		GdNode *n = node_new(L, keep ? op->name : mangle(L, op->name),
				     op->type, op);
		L->node_of[i] = (uint32_t)(n - L->gd->nodes);
		if (!keep)
			*node_attr(L, L->node_of[i], "_pcc_name") = v_str(op->name);
		n->device = tf_device(L, op);
		Value *ord = op_ann(g, op, ANN_ORDER);
		if (ord && ord->kind == V_INT)
			n->order = ord->i;
	}
}

/* Each op's node: its lowering, a variable's initial value, control
 * inputs after data inputs (Transfers resolved), _output_shapes. */
static void lower_ops(Low *L, const bool *slot)
{
	const Graph *g = L->g;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || op->opcode == L->opc_transfer)
			continue;
		uint32_t node = L->node_of[i];
		if (!lower_op(L, op, node))
			continue;
		const char *nop = L->gd->nodes[node].op;
		bool res = !strcmp(nop, "VarHandleOp");
		if (res || !strcmp(nop, "VariableV2") || !strcmp(nop, "Variable")) {
			if (op->nout == 1)
				var_init(L, node, op_key(L, op), &op->out[0],
					 slot[op->id] ? VI_ZEROS : VI_PARAM, 0, res);
		}
		for (uint32_t j = 0; j < op->nin; j++) {
			if (!op->in[j].ctrl)
				continue;
			Ten t = resolve(L, &op->in[j]);
			if (!has_ctrl_from(&L->gd->nodes[node], t.node))
				node_input(L, node, t.node, 0, true);
		}
		bool known = op_lookup(L->gd->nodes[node].op) != OPC_UNKNOWN;
		if (op->nout && (L->o->output_shapes || !known))
			output_shapes(L, op, node);
	}
}

static void low_free(Low *L)
{
	tf_opdefs_free(&L->defs);
	free(L->node_of);
	free(L->xsrc);
	free(L->xidx);
	free(L->updated);
	free(L->devs);
	for (uint32_t i = 0; i < L->ngroups; i++)
		free(L->groups[i]);
	free(L->groups);
	free(L->warned);
	free(L->pieces);
	free(L->names);
	free(L->vars);
	free(L->pows);
	free(L->consts);
}

GdGraph *tf_lower(const Graph *g, const TfOpts *o, Diag *d)
{
	Low L = {0};
	L.g = g;
	L.o = o;
	L.d = d;
	tf_opdefs_init(&L.defs);
	L.gd = xcalloc(1, sizeof(GdGraph));
	L.gd->a = L.a = arena_new();
	L.gd->producer = o->producer;
	L.opc_transfer = op_lookup("Transfer");
	L.opc_allreduce = op_lookup("AllReduce");
	L.opc_sce = op_lookup("SoftmaxCrossEntropyWithLogits");
	L.opc_variablev2 = op_lookup("VariableV2");
	L.opc_variable = op_lookup("Variable");
	uint32_t nops = g->nops;
	L.node_of = xmalloc(sizeof(uint32_t) * (nops + 1));
	L.xsrc = xcalloc(nops + 1, sizeof(Op *));
	L.xidx = xcalloc(nops + 1, sizeof(uint32_t));
	L.updated = xcalloc(nops + 1, sizeof(bool));
	int before = d->nerrors;
	bool ok = resolve_transfers(&L);
	bool *slot = ok ? mark_updates(&L) : NULL;
	if (ok)
		add_nodes(&L);
	if (d->nerrors != before)
		ok = false;
	if (ok)
		lower_ops(&L, slot);
	if (d->nerrors != before)
		ok = false;
	if (ok) {
		readers_before_updates(&L);
		add_power_updates(&L);
		if (o->init)
			add_init(&L);
		if (o->order)
			add_order(&L);
		piece_controls(&L);
		ok = check_acyclic(&L);
	}
	if (ok)
		for (uint32_t i = 0; i < L.gd->n; i++)
			if (L.gd->nodes[i].nattr > 1)   /* LogicalAnd has none */
				qsort(L.gd->nodes[i].attrs, L.gd->nodes[i].nattr,
				      sizeof(GdAttr), cmp_attr);
	low_free(&L);
	free(slot);
	if (!ok) {
		gd_free(L.gd);
		return NULL;
	}
	return L.gd;
}
