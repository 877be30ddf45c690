/* parse.c — builds a Graph from gir text: the actions behind gir.y, the
 * resolution of input references (at once when the producer came before,
 * else once every op is known: ops may come in any order), and the
 * interpretation of the 'cluster { }' block through the cluster builder of
 * ir.h.  %names are slices of the source text, statement buffers are
 * reused from op to op and everything else goes to arenas, so a 1M-op
 * file costs a few bump allocations per op and no error path can leak. */
#include "frontend/frontend.h"
#include "gir.tab.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int girp_parse(GirParser *st);
int gir_lex_init_extra(GirParser *extra, void **scanner);
int gir_lex_destroy(void *scanner);

#define GROW(p, n, cap, init)                                              \
	do {                                                               \
		if ((n) == (cap)) {                                        \
			(cap) = (cap) ? 2 * (cap) : (init);                \
			(p) = xrealloc((p), sizeof *(p) * (size_t)(cap));  \
		}                                                          \
	} while (0)

Loc gp_loc(GirParser *st, const GIRP_LTYPE *l)
{
	return (Loc){st->file, (uint32_t)l->first_line,
		     (uint32_t)l->first_column};
}

bool gp_errok(GirParser *st)
{
	return !(st->d->max_errors && st->d->nerrors >= st->d->max_errors);
}

void gp_version(GirParser *st, int64_t v, Loc loc)
{
	if (v != GIR_VERSION)
		diag_error(st->d, loc, "unsupported gir version %lld "
			   "(this pcc reads version %d)", (long long)v,
			   GIR_VERSION);
}

/* ---- statements ------------------------------------------------------ */

void gp_res_begin(GirParser *st, GirName name, Loc loc)
{
	graph_prefetch_name(st->g, graph_name_hash(name.s, name.n));
	st->nres = 0;
	st->nouts = 0;
	st->nrefs = 0;                      /* drop a failed statement's refs */
	gp_res_add(st, name, loc);
}

void gp_res_add(GirParser *st, GirName name, Loc loc)
{
	GROW(st->res, st->nres, st->capres, 4);
	st->res[st->nres++] = (GirRes){name, loc};
}

/* Connects ref to its producer src (whose output base the name stands
 * for) and checks the output index. */
static void connect(GirParser *st, GirRef *ref, Op *src, uint32_t base)
{
	Loc loc = {st->file, ref->line, ref->col};
	uint32_t idx = ref->idx;
	if (ref->ctrl) {
		idx = 0;
	} else if (base && ref->has_idx && idx != 0) {
		diag_error(st->d, loc, "'%%%.*s' names output %u of '%%%s' and "
			   "takes no output index", (int)ref->name.n,
			   ref->name.s, base, src->name);
		idx = 0;
	}
	if (!ref->ctrl)
		idx += base;
	if (!ref->ctrl && !ref->bad_idx && src->types_given &&
	    idx >= src->nout) {
		diag_error(st->d, loc, "output index %u out of range: '%%%s' "
			   "has %u output%s", idx, src->name, src->nout,
			   src->nout == 1 ? "" : "s");
		idx = 0;
	}
	ref->in = (Input){src, idx, ref->ctrl};
}

static uint32_t recent_hash(GirName name)
{
	return graph_name_hash(name.s, name.n);
}

static void recent_put(GirParser *st, uint32_t h, Op *op, uint32_t idx)
{
	st->recent[h & (GP_RECENT - 1)] = (struct GirRecent){op, idx, h};
}

/* The op and output a %name stands for, or NULL if not (yet) defined. */
static Op *lookup(GirParser *st, GirName name, uint32_t *idx)
{
	uint32_t h = recent_hash(name);
	const struct GirRecent *r = &st->recent[h & (GP_RECENT - 1)];
	if (r->op && r->hash == h) {
		const char *t = r->idx ? r->op->out_names[r->idx] : r->op->name;
		if (strncmp(t, name.s, name.n) == 0 && t[name.n] == 0) {
			*idx = r->idx;
			return r->op;
		}
	}
	Op *op = graph_lookup_n(st->g, name.s, name.n, idx);
	if (op)
		recent_put(st, h, op, *idx);
	return op;
}

void gp_input(GirParser *st, GirName name, Loc loc, bool ctrl,
	      bool has_idx, int64_t idx, Loc idxloc)
{
	bool bad = false;
	if (has_idx && (idx < 0 || idx > INT32_MAX)) {
		diag_error(st->d, idxloc, "output index %lld is out of range",
			   (long long)idx);
		bad = true;
		idx = 0;
	}
	GROW(st->refs, st->nrefs, st->caprefs, 8);
	GirRef *ref = &st->refs[st->nrefs++];
	*ref = (GirRef){.name = name, .line = loc.line, .col = loc.col,
			.idx = (uint32_t)idx, .ctrl = ctrl, .has_idx = has_idx,
			.bad_idx = bad};
	uint32_t base = 0;
	Op *src = lookup(st, name, &base);
	if (src)
		connect(st, ref, src, base);
}

void gp_dims_begin(GirParser *st)
{
	st->ndims = 0;
}

void gp_dim(GirParser *st, int64_t v, Loc loc)
{
	if (v < 0 && v != DIM_UNKNOWN) {
		diag_error(st->d, loc, "dimension %lld is negative (write '?' "
			   "for an unknown dimension)", (long long)v);
		v = DIM_UNKNOWN;
	}
	GROW(st->dims, st->ndims, st->capdims, 8);
	st->dims[st->ndims++] = v;
}

Type gp_type(GirParser *st, const char *dtype, Loc loc)
{
	DType dt = DT_F32;
	if (!dtype_parse(dtype, strlen(dtype), &dt))
		diag_error(st->d, loc, "unknown element type '%s' (expected "
			   "f16, bf16, f32, f64, i8, i16, i32, i64, u8 or bool)",
			   dtype);
	return type_make(st->g->arena, dt, (int)st->ndims, st->dims);
}

void gp_out(GirParser *st, Type t)
{
	GROW(st->outs, st->nouts, st->capouts, 4);
	st->outs[st->nouts++] = t;
}

struct KeyIndex {
	const char *k;
	uint32_t i;
};

static int cmp_key_index(const void *a, const void *b)
{
	const struct KeyIndex *x = a, *y = b;
	int c = strcmp(x->k, y->k);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Reports a repeated key in an attribute list (at its second use). */
static void check_dups(GirParser *st, const AttrList *al)
{
	if (al->n < 2)
		return;
	if (al->n <= 32) {
		for (uint32_t i = 1; i < al->n; i++)
			for (uint32_t j = 0; j < i; j++)
				if (strcmp(al->items[i].key, al->items[j].key) == 0) {
					diag_error(st->d, al->items[i].kloc,
						   "duplicate key '%s'",
						   al->items[i].key);
					break;
				}
		return;
	}
	/* large lists: sort (key, index) pairs */
	struct KeyIndex *v = xmalloc(sizeof *v * al->n);
	for (uint32_t i = 0; i < al->n; i++)
		v[i] = (struct KeyIndex){al->items[i].key, i};
	qsort(v, al->n, sizeof *v, cmp_key_index);
	for (uint32_t i = 1; i < al->n; i++)
		if (strcmp(v[i].k, v[i - 1].k) == 0)
			diag_error(st->d, al->items[v[i].i].kloc,
				   "duplicate key '%s'", v[i].k);
	free(v);
}

/* Attributes of an op or the graph, keys interned. */
static Attr *attrs_of(GirParser *st, const AttrList *al)
{
	check_dups(st, al);
	Attr *a = arena_alloc(st->g->arena, sizeof *a * (al->n ? al->n : 1));
	for (uint32_t i = 0; i < al->n; i++)
		a[i] = (Attr){graph_intern(st->g, al->items[i].key),
			      al->items[i].val};
	return a;
}

void gp_op(GirParser *st, const char *type, AttrList *al, bool types_given)
{
	Graph *g = st->g;
	const GirRes *res = st->res;
	uint32_t nres = st->nres, nout = 0;
	if (types_given) {
		nout = st->nouts;
		if (nres != 1 && nres != nout) {
			diag_error(st->d, res[0].loc, "%u result names for %u "
				   "output types (name one result or all of "
				   "them)", nres, nout);
			if (nres > nout)
				nout = nres;
		}
	} else if (nres > 1) {
		diag_error(st->d, res[1].loc, "types required when naming "
			   "several results");
		nout = nres;
	}
	uint32_t nin = st->nrefs;
	st->nrefs = 0;
	Op *op = graph_add_op_n(g, res[0].name.s, res[0].name.n, type, nin,
				nout);
	if (!op) {
		uint32_t idx;
		Op *first = graph_lookup_n(g, res[0].name.s, res[0].name.n, &idx);
		diag_error(st->d, res[0].loc, "duplicate op name '%%%.*s'",
			   (int)res[0].name.n, res[0].name.s);
		if (first && first->loc.line)
			diag_note(st->d, first->loc, "'%%%s' was first defined "
				  "here", first->name);
		return;
	}
	for (uint32_t j = 0; j < nin; j++) {
		GirRef *ref = &st->refs[j];
		if (ref->in.src) {
			op->in[j] = ref->in;
			continue;
		}
		GROW(st->fwd, st->nfwd, st->capfwd, 64);
		ref->op = op;
		ref->slot = j;
		st->fwd[st->nfwd++] = *ref;
	}
	op->loc = res[0].loc;
	recent_put(st, recent_hash(res[0].name), op, 0);
	op->types_given = types_given;
	for (uint32_t k = 0; k < st->nouts && k < nout; k++)
		op->out[k] = st->outs[k];
	for (uint32_t k = 1; k < nres && k < nout; k++) {
		const GirName *nm = &res[k].name;
		uint32_t idx;
		Op *first = graph_lookup_n(g, nm->s, nm->n, &idx);
		if (first) {
			diag_error(st->d, res[k].loc, "duplicate op name "
				   "'%%%.*s'", (int)nm->n, nm->s);
			if (first->loc.line)
				diag_note(st->d, first->loc, "'%%%.*s' was first "
					  "defined here", (int)nm->n, nm->s);
			break;              /* outputs are named in order */
		}
		char *name = arena_strndup(st->tmp, nm->s, nm->n);
		if (!graph_name_output(g, op, k, name))
			pcc_die("cannot name output %u of '%s'", k, op->name);
		recent_put(st, recent_hash(*nm), op, k);
	}
	if (al && al->n) {
		op->attrs = attrs_of(st, al);
		op->nattr = op->capattr = al->n;
	}
	/* The statement's scratch is garbage now, unless the lookahead
	 * token (already read) or a token kept for recovery points into it;
	 * %names point into the source. */
	int la = st->last.kind;
	if (arena_bytes(st->tmp) > (1u << 20) && !st->stashed && !st->replay &&
	    (la == VALNAME || la == '}' || la == END))
		arena_reset(st->tmp);
}

/* ---- attribute values ------------------------------------------------ */

AttrList *gp_alist(GirParser *st)
{
	return arena_alloc(st->tmp, sizeof(AttrList));
}

void gp_alist_add(GirParser *st, AttrList *al, const char *key, Loc kloc,
		  Value *v, Loc vloc)
{
	if (al->n == al->cap) {
		uint32_t cap = al->cap ? 2 * al->cap : 4;
		al->items = arena_realloc(st->tmp, al->items,
					  sizeof(AItem) * al->cap,
					  sizeof(AItem) * cap);
		al->cap = cap;
	}
	al->items[al->n++] = (AItem){key, v, kloc, vloc};
}

ValList *gp_vlist(GirParser *st)
{
	return arena_alloc(st->tmp, sizeof(ValList));
}

void gp_vlist_add(GirParser *st, ValList *vl, Value *v)
{
	if (vl->n == vl->cap) {
		uint32_t cap = vl->cap ? 2 * vl->cap : 4;
		vl->items = arena_realloc(st->tmp, vl->items,
					  sizeof(Value *) * vl->cap,
					  sizeof(Value *) * cap);
		vl->cap = cap;
	}
	vl->items[vl->n++] = v;
}

Value *gp_list_value(GirParser *st, ValList *vl)
{
	Value *v = val_list(st->g->arena, vl->n);
	memcpy(v->list.items, vl->items, sizeof(Value *) * vl->n);
	return v;
}

Value *gp_dict_value(GirParser *st, AttrList *al)
{
	Value *v = val_dict(st->g->arena, al->n);
	Attr *a = attrs_of(st, al);
	memcpy(v->dict.items, a, sizeof(Attr) * al->n);
	return v;
}

/* ---- the graph ------------------------------------------------------- */

void gp_graph_name(GirParser *st, const char *name)
{
	st->g->name = graph_intern(st->g, name);
}

void gp_graph_attrs(GirParser *st, AttrList *al)
{
	check_dups(st, al);
	for (uint32_t i = 0; i < al->n; i++) {
		const AItem *it = &al->items[i];
		if (strcmp(it->key, "batch") == 0 &&
		    (it->val->kind != V_INT || it->val->i <= 0 ||
		     it->val->i > PCC_DIM_MAX))
			diag_error(st->d, it->vloc, "graph attribute 'batch' must "
				   "be a positive integer up to 2^40");
		graph_set_attr(st->g, it->key, it->val);
	}
}

/* Connects the forward references once every op is known. */
static void resolve(GirParser *st)
{
	for (size_t r = 0; r < st->nfwd; r++) {
		GirRef *ref = &st->fwd[r];
		uint32_t base = 0;
		Op *src = graph_lookup_n(st->g, ref->name.s, ref->name.n, &base);
		if (!src) {
			diag_error(st->d, (Loc){st->file, ref->line, ref->col},
				   "undefined value '%%%.*s'", (int)ref->name.n,
				   ref->name.s);
			if (!gp_errok(st))
				return;
			continue;
		}
		connect(st, ref, src, base);
		ref->op->in[ref->slot] = ref->in;
	}
}

/* ---- the cluster block ----------------------------------------------- */

static const char *unit_what(Unit u)
{
	switch (u) {
	case UNIT_BYTES: return "a size such as 32GiB";
	case UNIT_SECONDS: return "a time such as 2us";
	case UNIT_BYTE_RATE: return "a bandwidth such as 12.5GB/s";
	case UNIT_FLOP_RATE: return "a speed such as 15.7TFLOPS";
	default: return "a number";
	}
}

/* A quantity of unit kind u, or a bare number in base units. */
static bool qty(GirParser *st, const AItem *it, Unit u, double *out)
{
	const Value *v = it->val;
	if (v->kind == V_INT || v->kind == V_FLOAT ||
	    (v->kind == V_QTY && v->unit == u)) {
		val_number(v, out);
		return true;
	}
	if (v->kind == V_QTY)
		diag_error(st->d, it->vloc, "%s must be %s, not a quantity in "
			   "%s", it->key, unit_what(u), unit_name(v->unit));
	else
		diag_error(st->d, it->vloc, "%s must be %s", it->key,
			   unit_what(u));
	return false;
}

static bool plain_number(GirParser *st, const Value *v, Loc loc,
			 const char *what, double *out)
{
	if (v->kind == V_INT || v->kind == V_FLOAT) {
		val_number(v, out);
		return true;
	}
	diag_error(st->d, loc, "%s must be a number", what);
	return false;
}

static void unknown_key(GirParser *st, const AItem *it, const char *entry,
			const char *keys)
{
	diag_error(st->d, it->kloc, "unknown key '%s' in %s (expected %s)",
		   it->key, entry, keys);
}

void gp_cluster_begin(GirParser *st, const char *name, Loc loc)
{
	st->c = cluster_new(st->g->arena, name);
	st->c->loc = loc;
	st->cerr0 = st->d->nerrors;
}

static void efficiency(GirParser *st, const AItem *it, DevType *t)
{
	const Value *v = it->val;
	t->eff_given = true;
	if (v->kind != V_DICT) {
		double e = 1;
		plain_number(st, v, it->vloc, "efficiency", &e);
		for (int k = 0; k < OC_COUNT; k++)
			t->eff[k] = e;
		return;
	}
	double dflt = 1;
	for (uint32_t i = 0; i < v->dict.n; i++)
		if (strcmp(v->dict.items[i].key, "default") == 0)
			plain_number(st, v->dict.items[i].val, it->vloc,
				     "efficiency", &dflt);
	for (int k = 0; k < OC_COUNT; k++)
		t->eff[k] = dflt;
	for (uint32_t i = 0; i < v->dict.n; i++) {
		const Attr *a = &v->dict.items[i];
		OpClass oc;
		if (strcmp(a->key, "default") == 0)
			continue;
		if (!opclass_parse(a->key, &oc)) {
			diag_error(st->d, it->vloc, "unknown op class '%s' in "
				   "efficiency (expected matmul, conv, "
				   "elementwise, reduce, data, other or default)",
				   a->key);
			continue;
		}
		plain_number(st, a->val, it->vloc, "efficiency", &t->eff[oc]);
	}
}

/* A key of two spellings (collectives = "overlap" | "blocking", sends =
 * "async" | "idle"): whether the value is the second. */
static bool choice(GirParser *st, const AItem *it, const char *no,
		   const char *yes)
{
	const Value *v = it->val;
	if ((v->kind == V_STR || v->kind == V_IDENT) &&
	    (strcmp(v->s, yes) == 0 || strcmp(v->s, no) == 0))
		return strcmp(v->s, yes) == 0;
	diag_error(st->d, it->vloc, "%s must be \"%s\" or \"%s\"", it->key,
		   no, yes);
	return false;
}

void gp_ctype(GirParser *st, const char *name, Loc loc, AttrList *al)
{
	check_dups(st, al);
	DevType t = {.name = name, .loc = loc};
	bool flops = false, memory = false;
	for (uint32_t i = 0; i < al->n; i++) {
		const AItem *it = &al->items[i];
		if (strcmp(it->key, "flops") == 0)
			flops = qty(st, it, UNIT_FLOP_RATE, &t.flops) || true;
		else if (strcmp(it->key, "memory") == 0)
			memory = qty(st, it, UNIT_BYTES, &t.memory) || true;
		else if (strcmp(it->key, "mem_bw") == 0)
			qty(st, it, UNIT_BYTE_RATE, &t.mem_bw);
		else if (strcmp(it->key, "efficiency") == 0)
			efficiency(st, it, &t);
		else if (strcmp(it->key, "overhead") == 0)
			t.overhead_given = qty(st, it, UNIT_SECONDS, &t.overhead) || true;
		else if (strcmp(it->key, "mem_efficiency") == 0)
			t.mem_eff_given = plain_number(st, it->val, it->vloc,
						       "mem_efficiency",
						       &t.mem_eff) || true;
		else if (strcmp(it->key, "kernel_efficiency") == 0)
			t.kern_eff_given = plain_number(st, it->val, it->vloc,
							"kernel_efficiency",
							&t.kern_eff) || true;
		else if (strcmp(it->key, "gemm_efficiency") == 0)
			t.gemm_eff_given = plain_number(st, it->val, it->vloc,
							"gemm_efficiency",
							&t.gemm_eff) || true;
		else if (strcmp(it->key, "collectives") == 0)
			t.coll_blocking = choice(st, it, "overlap", "blocking");
		else if (strcmp(it->key, "sends") == 0)
			t.sends_idle = choice(st, it, "async", "idle");
		else if (strcmp(it->key, "kernels") == 0)
			t.source_kernels = choice(st, it, "ops", "source");
		else if (strcmp(it->key, "launch") == 0)
			qty(st, it, UNIT_SECONDS, &t.launch);
		else if (strcmp(it->key, "sms") == 0)
			plain_number(st, it->val, it->vloc, "sms", &t.sms);
		else if (strcmp(it->key, "batch_norm") == 0)
			t.bn_cudnn = choice(st, it, "fused", "cudnn");
		else if (strcmp(it->key, "cuda_core_flops") == 0)
			qty(st, it, UNIT_FLOP_RATE, &t.cuda_flops);
		else if (strcmp(it->key, "tensor_cores") == 0) {
			if (it->val->kind == V_BOOL)
				t.tensor_cores = it->val->b;
			else
				diag_error(st->d, it->vloc, "tensor_cores must be "
					   "true or false");
		} else
			unknown_key(st, it, "device type",
				    "flops, memory, mem_bw, efficiency, overhead, "
				    "mem_efficiency, kernel_efficiency, "
				    "gemm_efficiency, collectives, sends, "
				    "kernels, launch, sms, batch_norm, "
				    "cuda_core_flops or tensor_cores");
	}
	if (!flops)
		diag_error(st->d, loc, "device type '%s' needs flops", name);
	if (!memory)
		diag_error(st->d, loc, "device type '%s' needs memory", name);
	if (cluster_add_type(st->c, st->g->arena, &t) < 0)
		diag_error(st->d, loc, "duplicate device type '%s'", name);
}

void gp_cmachine(GirParser *st, const char *name, Loc loc, AttrList *al)
{
	check_dups(st, al);
	Machine m = {.name = name, .type = -1, .count = 1, .loc = loc};
	const AItem *type = NULL;
	for (uint32_t i = 0; i < al->n; i++) {
		const AItem *it = &al->items[i];
		if (strcmp(it->key, "type") == 0) {
			if (it->val->kind == V_STR || it->val->kind == V_IDENT)
				type = it;
			else
				diag_error(st->d, it->vloc, "type must be the "
					   "name of a device type");
		} else if (strcmp(it->key, "count") == 0) {
			if (it->val->kind != V_INT)
				diag_error(st->d, it->vloc, "count must be an "
					   "integer");
			else
				m.count = it->val->i < 0 || it->val->i > INT_MAX
						  ? -1 : (int)it->val->i;
		} else if (strcmp(it->key, "bandwidth") == 0) {
			qty(st, it, UNIT_BYTE_RATE, &m.bw);
		} else if (strcmp(it->key, "latency") == 0) {
			qty(st, it, UNIT_SECONDS, &m.lat);
		} else {
			unknown_key(st, it, "machine",
				    "type, count, bandwidth or latency");
		}
	}
	if (!type)
		diag_error(st->d, loc, "machine '%s' needs a type", name);
	int k = cluster_add_machine(st->c, st->g->arena, &m);
	if (k < 0) {
		diag_error(st->d, loc, "duplicate machine '%s'", name);
		return;
	}
	if (type) {
		if (st->nmtypes == st->capmtypes) {
			uint32_t cap = st->capmtypes ? 2 * st->capmtypes : 8;
			st->mtypes = arena_realloc(st->tmp, st->mtypes,
						   sizeof(GirMType) * st->capmtypes,
						   sizeof(GirMType) * cap);
			st->capmtypes = cap;
		}
		st->mtypes[st->nmtypes++] = (GirMType){k, type->val->s,
						       type->vloc};
	}
}

void gp_cnetwork(GirParser *st, Loc loc, AttrList *al)
{
	check_dups(st, al);
	if (st->net_given)
		diag_error(st->d, loc, "duplicate network entry");
	st->net_given = true;
	bool bw = false;
	double clat = -1;
	const AItem *cl = NULL;
	for (uint32_t i = 0; i < al->n; i++) {
		const AItem *it = &al->items[i];
		if (strcmp(it->key, "bandwidth") == 0)
			bw = qty(st, it, UNIT_BYTE_RATE, &st->c->net_bw) || true;
		else if (strcmp(it->key, "latency") == 0)
			qty(st, it, UNIT_SECONDS, &st->c->net_lat);
		else if (strcmp(it->key, "collective_bandwidth") == 0)
			qty(st, it, UNIT_BYTE_RATE, &st->c->coll_bw);
		else if (strcmp(it->key, "collective_latency") == 0)
			qty(st, (cl = it), UNIT_SECONDS, &clat);
		else if (strcmp(it->key, "dispatch_latency") == 0)
			qty(st, it, UNIT_SECONDS, &st->c->dispatch);
		else
			unknown_key(st, it, "network", "bandwidth, latency, "
				    "collective_bandwidth, collective_latency or "
				    "dispatch_latency");
	}
	if (!bw)
		diag_error(st->d, loc, "network needs a bandwidth");
	if (cl && st->c->coll_bw == 0)
		diag_error(st->d, cl->kloc, "collective_latency needs "
			   "collective_bandwidth");
	if (st->c->coll_bw != 0)
		st->c->coll_lat = cl ? clat : st->c->net_lat;
}

void gp_clink(GirParser *st, const char *a, const char *b, Loc loc,
	      AttrList *al)
{
	check_dups(st, al);
	double bw = 0, lat = -1;
	bool have_bw = false;
	for (uint32_t i = 0; i < al->n; i++) {
		const AItem *it = &al->items[i];
		if (strcmp(it->key, "bandwidth") == 0)
			have_bw = qty(st, it, UNIT_BYTE_RATE, &bw) || true;
		else if (strcmp(it->key, "latency") == 0) {
			if (qty(st, it, UNIT_SECONDS, &lat) && lat < 0)
				diag_error(st->d, it->vloc, "latency must not "
					   "be negative");
		} else
			unknown_key(st, it, "link", "bandwidth or latency");
	}
	if (!have_bw)
		diag_error(st->d, loc, "link needs a bandwidth");
	cluster_add_link(st->c, st->g->arena, a, b, bw, lat, loc);
}

void gp_cluster_end(GirParser *st)
{
	Cluster *c = st->c;
	st->g->cluster = c;
	if (st->syntax_errors)
		return;                     /* entries are missing: no cascade */
	for (uint32_t i = 0; i < st->nmtypes; i++) {
		const GirMType *mt = &st->mtypes[i];
		int t = cluster_find_type(c, mt->name);
		if (t < 0)
			diag_error(st->d, mt->loc, "unknown device type '%s'",
				   mt->name);
		c->machines[mt->machine].type = t;
	}
	if (st->d->nerrors == st->cerr0)
		cluster_finalize(c, st->g->arena, st->d);
}

/* ---- entry points ---------------------------------------------------- */

Graph *gir_parse(const char *file, const char *src, size_t len, Diag *d)
{
	int err0 = d->nerrors;
	Graph *g = graph_new("main");
	GirParser st = {0};
	st.g = g;
	st.d = d;
	st.tmp = arena_new();
	st.names = arena_new();
	st.recent = xcalloc(GP_RECENT, sizeof *st.recent);
	st.file = graph_intern(g, file ? file : "<input>");
	g->src_file = st.file;
	st.src = src;
	st.len = len;
	st.line = st.col = 1;
	st.end_line = st.end_col = 1;
	st.at_bol = true;
	if (len > INT_MAX) {
		diag_error(d, (Loc){0}, "input too large (%zu bytes)", len);
	} else {
		if (gir_lex_init_extra(&st, &st.scanner))
			pcc_die("cannot create the gir lexer");
		girp_parse(&st);
		gir_lex_destroy(st.scanner);
		if (!st.syntax_errors && !st.aborted)
			resolve(&st);
	}
	if (st.ncomments) {
		g->comments = arena_alloc(g->arena,
					  sizeof(char *) * st.ncomments);
		for (uint32_t i = 0; i < st.ncomments; i++)
			g->comments[i] = arena_strdup(g->arena, st.comments[i]);
		g->ncomments = st.ncomments;
	}
	free(st.res);
	free(st.outs);
	free(st.dims);
	free(st.refs);
	free(st.fwd);
	free(st.recent);
	arena_free(st.tmp);
	arena_free(st.names);
	if (d->nerrors > err0 || st.syntax_errors) {
		graph_free(g);
		return NULL;
	}
	return g;
}

Graph *gir_read_file(const char *path, Diag *d, char **srcp)
{
	size_t len = 0;
	const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	char *src = read_file(path, &len);
	*srcp = src;
	if (!src) {
		int e = errno;
		diag_init(d, stderr, name, NULL, 0);
		diag_error(d, (Loc){0}, "cannot read '%s': %s", path,
			   read_error(e));
		return NULL;
	}
	diag_init(d, stderr, name, src, len);
	return gir_parse(name, src, len, d);
}
