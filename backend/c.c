/* c.c — --emit=c: the launch code of a plan, one C file that runs one
 * training step against the runtime API of backend/runtime/pcc_rt.h
 * (docs/backends.md, section c; the plan format is docs/plan.md).
 *
 * Input: a materialised plan, every op on one device (@device).  The
 * emitter first checks everything, then writes; an op the runtime has no
 * kernel for, an unplaced op or an order that would deadlock is an error
 * naming the op, never broken C.
 *
 *  1. Classify each op: a source (Placeholder, Variable*, Const; Shape is
 *     folded into a constant), a kernel launch (pcc_kernels.def), an
 *     update (Apply*: inputs normalised to TensorFlow's full form, gir's
 *     short forms completed with hidden state and constant buffers), a
 *     Transfer, an AllReduce member, or a NoOp.
 *  2. Buffers: one per op output on the op's device.  Inputs that the
 *     kernel table marks static (shape-valued Consts) are resolved here
 *     into pcc_attrs and never read at run time.
 *  3. Channels: a Transfer is a channel from its input's buffer into its
 *     own; a data edge between devices without one gets an implicit
 *     channel into a buffer of its own on the consumer's device.  A
 *     channel is sent by the thread that makes its source ready, right
 *     after that (relays of a received value included), and received —
 *     waited for — right before the first op on the destination device
 *     that reads it.  Sends never block, so they add no ordering.
 *  4. Order: one topological order of the plan with each collective's
 *     members merged into one node and a parameter's readers placed
 *     before its update (the update writes in place); each device runs
 *     its ops in that order, or by @order when all of them carry one.
 *     The device sequences together with the data, control and
 *     parameter edges must form an acyclic graph (checked with Kahn's
 *     algorithm): blocking waits and collectives can then never deadlock.
 *  5. Results: every parameter updated in the plan, by original name
 *     (@origin, else its own), all its copies together; every @output op
 *     of the input graph, its replicas concatenated along the batch
 *     (@shard) or summed (split category sum).  Sorted by name, so runs of
 *     different plans of one graph compare line by line.
 *  6. Write: the tables of the program (devices, buffers with their seed
 *     descriptions, channels, collectives, results), one function per
 *     device issuing that device's work, and main() calling pcc_main.
 *
 * Everything is arrays indexed by op id, buffer or channel; no recursion. */
#include "backend.h"
#include "runtime/pcc_rt.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum Kind { K_SOURCE, K_SHAPE, K_KERNEL, K_UPDATE, K_TRANSFER, K_COLL, K_NOOP };

static const struct {
	const char *name;
	unsigned stat;
} kinfo[PCC_K_COUNT] = {
#define PCC_KERNEL(name, fn, stat, doc) {#name, stat},
#include "runtime/pcc_kernels.def"
#undef PCC_KERNEL
};

typedef struct Buf {
	const char *name;
	int dev;                  /* program device */
	DType dt;
	int rank;
	int64_t dims[PCC_MAX_RANK];
	pcc_init init;
	const char *seed;         /* original name */
	int batch_dim;
	int64_t begin, full, classes;
	double *vals;             /* CONST */
	int64_t nvals;
	int chan_in;              /* the channel that fills it, or -1 */
	bool at_start;            /* ready before the step (a source) */
	int outs;                 /* first channel sent from it, or -1 */
} Buf;

typedef struct Chan {
	int src, dst;             /* buffers */
	int issuer;               /* the device whose thread sends it */
	int next;                 /* next channel from src, or -1 */
	int event;                /* recorded after the send, or -1 */
	bool implicit;
} Chan;

typedef struct Coll {
	int64_t key;
	const char *algo;
	int n;
	int *devs;                /* program devices, in `devices` order */
	uint32_t *members;        /* op ids, in `devices` order */
} Coll;

typedef struct OpI {
	enum Kind kind;
	int dev;
	int kern;                 /* K_KERNEL, K_UPDATE */
	int obuf;                 /* buffer of output 0 */
	int *ins;                 /* buffers read, in launch order */
	int nins;
	int chan;                 /* K_TRANSFER */
	int coll;                 /* K_COLL */
	uint32_t unit;            /* scheduling node: itself, or its collective's first member */
	int event;                /* recorded after it, or -1 */
	bool slot;                /* a parameter that is optimizer state (zeros) */
	pcc_attrs at;
} OpI;

typedef struct Result {
	const char *name;
	bool param;
	pcc_result_kind kind;
	int axis;
	int n;
	int *bufs;
	int64_t *begins;
} Result;

typedef struct E {
	Graph *g;
	Arena *a;
	Diag d;
	OpI *oi;
	int ndev;
	int *dev_of_cdev;         /* cluster device -> program device, or -1 */
	int *cdev;                /* program device -> cluster device */
	Buf *buf;
	int nbuf, capbuf;
	Chan *chan;
	int nchan, capchan;
	Coll *coll;
	int ncoll;
	int nevent;
	Result *res;
	int nres;
	uint32_t **seq;           /* per device: op ids in issue order */
	int *nseq;
	double lr, adam_lr, momentum;
	uint64_t seed;
} E;

__attribute__((format(printf, 3, 4)))
static bool err(E *e, const Op *op, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (op)
		diag_error(&e->d, op->loc, "--emit=c: op %%%s (%s): %s", op->name,
			   op->type, msg);
	else
		diag_error(&e->d, (Loc){0}, "--emit=c: %s", msg);
	return false;
}

/* Source order, then op id. */
static int cmp_op_loc(const Op *a, const Op *b)
{
	if (a->loc.line != b->loc.line)
		return a->loc.line < b->loc.line ? -1 : 1;
	if (a->loc.col != b->loc.col)
		return a->loc.col < b->loc.col ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_by_type(const void *pa, const void *pb)
{
	const Op *a = *(const Op *const *)pa, *b = *(const Op *const *)pb;
	int c = strcmp(a->type, b->type);
	return c ? c : cmp_op_loc(a, b);
}

typedef struct NoKernel {
	const Op *first;          /* the type's first op in the source */
	size_t count;             /* ops of the type */
} NoKernel;

static int cmp_nokernel(const void *pa, const void *pb)
{
	return cmp_op_loc(((const NoKernel *)pa)->first,
			  ((const NoKernel *)pb)->first);
}

/* The ops without a kernel, reported once per op type at its first op in
 * the source, with how many ops have that type: a replicated zoo model
 * would otherwise bury the message under one copy per replica.  Sorts
 * nok[0..n) in place; O(n log n). */
static void report_no_kernel(E *e, const Op **nok, size_t n)
{
	if (!n)
		return;
	qsort(nok, n, sizeof *nok, cmp_by_type);
	NoKernel *t = arena_alloc(e->a, sizeof *t * n);
	size_t nt = 0;
	for (size_t i = 0; i < n; i++) {
		if (nt && strcmp(nok[i]->type, t[nt - 1].first->type) == 0)
			t[nt - 1].count++;
		else
			t[nt++] = (NoKernel){nok[i], 1};
	}
	qsort(t, nt, sizeof *t, cmp_nokernel);
	for (size_t i = 0; i < nt; i++)
		err(e, t[i].first, "the C runtime has no kernel for op type '%s' "
		    "(%zu op%s of this type; its kernels: backend/runtime/"
		    "pcc_kernels.def)", t[i].first->type, t[i].count,
		    t[i].count == 1 ? "" : "s");
}

static const char *origin(const E *e, const Op *op)
{
	const char *s = op_ann_str(e->g, op, ANN_ORIGIN);
	return s ? s : op->name;
}

static bool is_param(const Op *op)
{
	const OpInfo *i = op_info(op->opcode);
	return i && (i->flags & OPF_PARAM);
}

static bool is_type(const Op *op, const char *t)
{
	return strcmp(op->type, t) == 0;
}

/* Data input k (control inputs skipped), or NULL. */
static const Input *data_in(const Op *op, uint32_t k)
{
	for (uint32_t i = 0; i < op->nin; i++)
		if (!op->in[i].ctrl && k-- == 0)
			return &op->in[i];
	return NULL;
}

static uint32_t ndata(const Op *op)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < op->nin; i++)
		n += !op->in[i].ctrl;
	return n;
}

/* Is data input k of op resolved at emit time? */
static bool is_static(const E *e, const Op *op, uint32_t k)
{
	const OpI *o = &e->oi[op->id];
	if (o->kind == K_SHAPE)
		return true;
	if (o->kind != K_KERNEL)
		return false;
	unsigned m = kinfo[o->kern].stat;
	return (k < 31 && (m >> k & 1)) || ((m & PCC_IN_LAST) && k + 1 == ndata(op));
}

/* ---- buffers and channels ----------------------------------------------- */

static int new_buf(E *e, const char *name, int dev, DType dt, int rank,
		   const int64_t *dims)
{
	if (e->nbuf == e->capbuf) {
		int cap = e->capbuf ? 2 * e->capbuf : 64;
		e->buf = arena_realloc(e->a, e->buf, sizeof(Buf) * (size_t)e->capbuf,
				       sizeof(Buf) * (size_t)cap);
		e->capbuf = cap;
	}
	Buf *b = &e->buf[e->nbuf];
	memset(b, 0, sizeof *b);
	b->name = name;
	b->dev = dev;
	b->dt = dt;
	b->rank = rank;
	if (rank)
		memcpy(b->dims, dims, sizeof(int64_t) * (size_t)rank);
	b->batch_dim = -1;
	b->chan_in = -1;
	b->outs = -1;
	return e->nbuf++;
}

/* A hidden scalar f32 constant on dev (a short-form update's hyperparameter). */
static int scalar_buf(E *e, const char *name, int dev, double v)
{
	int b = new_buf(e, name, dev, DT_F32, 0, NULL);
	e->buf[b].init = PCC_INIT_CONST;
	e->buf[b].seed = name;
	e->buf[b].vals = arena_alloc(e->a, sizeof(double));
	e->buf[b].vals[0] = v;
	e->buf[b].nvals = 1;
	e->buf[b].at_start = true;
	return b;
}

/* The thread that makes buffer b ready. */
static int issuer(const E *e, int b)
{
	return e->buf[b].chan_in >= 0 ? e->chan[e->buf[b].chan_in].issuer
				       : e->buf[b].dev;
}

static int new_chan(E *e, int src, int dst, bool implicit)
{
	if (e->nchan == e->capchan) {
		int cap = e->capchan ? 2 * e->capchan : 32;
		e->chan = arena_realloc(e->a, e->chan,
					sizeof(Chan) * (size_t)e->capchan,
					sizeof(Chan) * (size_t)cap);
		e->capchan = cap;
	}
	int c = e->nchan++;
	e->chan[c] = (Chan){src, dst, issuer(e, src), -1, -1, implicit};
	/* Append to src's list, keeping creation order. */
	int *p = &e->buf[src].outs;
	while (*p >= 0)
		p = &e->chan[*p].next;
	*p = c;
	e->buf[dst].chan_in = c;
	return c;
}

/* The buffer through which an op on device dev reads buffer b: b itself,
 * or an implicit channel's copy on dev. */
static int local_copy(E *e, int b, int dev)
{
	if (e->buf[b].dev == dev)
		return b;
	for (int c = e->buf[b].outs; c >= 0; c = e->chan[c].next)
		if (e->chan[c].implicit && e->buf[e->chan[c].dst].dev == dev)
			return e->chan[c].dst;
	const Buf *s = &e->buf[b];
	int d = new_buf(e, arena_printf(e->a, "%s/to/%s", s->name,
					 e->g->cluster->devs[e->cdev[dev]].name),
			dev, s->dt, s->rank, s->dims);
	new_chan(e, b, d, true);
	return d;
}

/* ---- 1. classify --------------------------------------------------------- */

static bool parse_opts(E *e, const EmitCtx *ctx)
{
	/* Numbers are checked by backend_resolve_opts (typed defaults). */
	e->lr = backend_opt_num(ctx, "lr");
	e->adam_lr = backend_opt_num(ctx, "adam_lr");
	e->momentum = backend_opt_num(ctx, "momentum");
	const char *s = backend_opt(ctx, "seed");
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-')
		return err(e, NULL, "--emit-opt=seed=%s is not a non-negative integer",
			   s);
	e->seed = v;
	return true;
}

static bool check_types(E *e, const Op *op)
{
	for (uint32_t k = 0; k < op->nout; k++) {
		const Type *t = &op->out[k];
		char buf[128];
		if (!type_known(t))
			return err(e, op, "output %u has an unknown shape %s; the C "
				   "runtime needs every shape", k,
				   type_str(t, buf, sizeof buf));
		if (t->dt != DT_F32 && t->dt != DT_I32 && t->dt != DT_I64 &&
		    t->dt != DT_BOOL)
			return err(e, op, "output %u is %s; the C runtime computes on "
				   "f32 and holds i32/i64 indices and bool masks", k,
				   dtype_name(t->dt));
		if (t->rank > PCC_MAX_RANK)
			return err(e, op, "output %u has rank %d; the C runtime "
				   "handles at most %d", k, t->rank, PCC_MAX_RANK);
	}
	return true;
}

static int kernel_of(const Op *op)
{
	for (int k = 0; k < PCC_K_COUNT; k++)
		if (strcmp(kinfo[k].name, op->type) == 0)
			return k;
	return -1;
}

static bool classify(E *e)
{
	Graph *g = e->g;
	const Cluster *c = g->cluster;
	e->oi = arena_alloc(e->a, sizeof(OpI) * ((size_t)g->nops + 1));
	e->dev_of_cdev = arena_alloc(e->a, sizeof(int) * ((size_t)c->ndevs + 1));
	e->cdev = arena_alloc(e->a, sizeof(int) * ((size_t)c->ndevs + 1));
	int *cd = arena_alloc(e->a, sizeof(int) * ((size_t)g->nops + 1));
	bool ok = true;
	for (int i = 0; i < c->ndevs; i++)
		e->dev_of_cdev[i] = -1;
	/* Opcode -> kernel, once per op type seen (op ids index the rest). */
	int nopc = op_table_size();
	int *kern = arena_alloc(e->a, sizeof(int) * (size_t)(nopc + 1));
	for (int i = 0; i < nopc; i++)
		kern[i] = -2;
	/* ops without a kernel, for report_no_kernel */
	const Op **nok = arena_alloc(e->a, sizeof *nok * ((size_t)g->nops + 1));
	size_t nnok = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		OpI *o = &e->oi[i];
		o->event = o->chan = o->coll = o->obuf = -1;
		o->unit = i;
		if (op->dead)
			continue;
		if (op_ann(g, op, ANN_REPLICAS)) {
			ok = err(e, op, "has @replicas: a strategy, not a plan; run the "
				 "comm pass first (docs/plan.md)");
			continue;
		}
		const char *dev = op_ann_str(g, op, ANN_DEVICE);
		cd[i] = dev ? cluster_find_device(c, dev) : -1;
		if (cd[i] < 0) {
			ok = dev ? err(e, op, "device '%s' is not in cluster '%s'", dev,
				       c->name)
				 : err(e, op, "has no @device: --emit=c needs a placed "
				       "plan (run place, e.g. -passes=simplify,annotate,"
				       "place)");
			continue;
		}
		if (!check_types(e, op)) {
			ok = false;
			continue;
		}
		const OpInfo *info = op_info(op->opcode);
		unsigned fl = info ? info->flags : 0;
		if (fl & OPF_PARAM || is_type(op, "Placeholder") || is_type(op, "Const"))
			o->kind = K_SOURCE;
		else if (is_type(op, "Shape"))
			o->kind = K_SHAPE;
		else if (is_type(op, "Transfer"))
			o->kind = K_TRANSFER;
		else if (is_type(op, "AllReduce"))
			o->kind = K_COLL;
		else if (is_type(op, "NoOp"))
			o->kind = K_NOOP;
		else {
			int k = op->opcode >= 0 ? kern[op->opcode] : -1;
			if (k == -2)
				k = kern[op->opcode] = kernel_of(op);
			if (k < 0) {
				nok[nnok++] = op;
				ok = false;
				continue;
			}
			o->kern = k;
			o->kind = fl & OPF_UPDATE ? K_UPDATE : K_KERNEL;
		}
	}
	report_no_kernel(e, nok, nnok);
	if (!ok)
		return false;
	/* Program devices: the cluster's devices that hold ops, in its order. */
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead)
			e->dev_of_cdev[cd[i]] = 0;
	for (int i = 0; i < c->ndevs; i++)
		if (e->dev_of_cdev[i] == 0) {
			e->cdev[e->ndev] = i;
			e->dev_of_cdev[i] = e->ndev++;
		}
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead)
			e->oi[i].dev = e->dev_of_cdev[cd[i]];
	return e->ndev > 0 || err(e, NULL, "the graph has no ops");
}

/* ---- 2. static inputs and attributes --------------------------------------- */

/* The integers of data input k when it is constant: a Const's value (a
 * number or a list), or a Shape of a known type, reached through
 * Transfers and Identity-like ops.  Returns the count or -1. */
static int static_ints(const E *e, const Op *op, uint32_t k, int64_t *out,
		       int max)
{
	const Input *in = data_in(op, k);
	const Op *p = in ? in->src : NULL;
	for (int hops = 0; p && hops < 64; hops++) {
		const OpInfo *info = op_info(p->opcode);
		if (is_type(p, "Transfer") || (info && (info->flags & OPF_NOOP) &&
					       p->nin >= 1 && !p->in[0].ctrl))
			p = p->in[0].src;
		else
			break;
	}
	if (!p)
		return -1;
	if (is_type(p, "Shape")) {
		const Input *x = data_in(p, 0);
		if (!x || x->idx >= x->src->nout)
			return -1;
		const Type *t = &x->src->out[x->idx];
		if (!type_known(t) || t->rank > max)
			return -1;
		for (int i = 0; i < t->rank; i++)
			out[i] = t->dims[i];
		return t->rank;
	}
	if (!is_type(p, "Const"))
		return -1;
	const Value *v = op_get(e->g, p, "value");
	if (v && v->kind == V_INT) {
		out[0] = v->i;
		return max >= 1 ? 1 : -1;
	}
	if (!v || v->kind != V_LIST || v->list.n > (uint32_t)max)
		return -1;
	for (uint32_t i = 0; i < v->list.n; i++) {
		if (v->list.items[i]->kind != V_INT)
			return -1;
		out[i] = v->list.items[i]->i;
	}
	return (int)v->list.n;
}

static bool static_axis(E *e, const Op *op, uint32_t k, int rank, int *axis)
{
	int64_t v;
	if (static_ints(e, op, k, &v, 1) != 1)
		return err(e, op, "input %u (the axis) must be a Const integer", k);
	if (v < -rank || v >= rank)
		return err(e, op, "axis %lld is out of range for rank %d",
			   (long long)v, rank);
	*axis = (int)(v < 0 ? v + rank : v);
	return true;
}

/* A 4-list in layout order or an [h, w] pair into out[h, w]. */
static bool hw_attr(E *e, const Op *op, const char *key, bool nchw,
		    int64_t *out)
{
	const Value *v = op_get(e->g, op, key);
	out[0] = out[1] = 1;
	if (!v)
		return true;
	int64_t x[4];
	uint32_t n = v->kind == V_LIST ? v->list.n : 0;
	for (uint32_t i = 0; i < n && i < 4; i++)
		x[i] = v->list.items[i]->kind == V_INT ? v->list.items[i]->i : 0;
	if (n == 4) {
		if (x[0] != 1 || x[nchw ? 1 : 3] != 1)
			return err(e, op, "'%s' must be 1 along the batch and channels",
				   key);
		out[0] = x[nchw ? 2 : 1];
		out[1] = x[nchw ? 3 : 2];
	} else if (n == 2) {
		out[0] = x[0];
		out[1] = x[1];
	} else
		return err(e, op, "'%s' must be a list of 4 (or 2) integers", key);
	if (out[0] < 1 || out[1] < 1)
		return err(e, op, "'%s' must be positive", key);
	return true;
}

static bool window_attrs(E *e, const Op *op, pcc_attrs *at, bool pool)
{
	const char *df = op_get_str(e->g, op, "data_format");
	at->nchw = df && strncmp(df, "NCHW", 4) == 0;
	if (df && !at->nchw && strncmp(df, "NHWC", 4) != 0)
		return err(e, op, "data_format '%s' (NHWC or NCHW)", df);
	if (!hw_attr(e, op, "strides", at->nchw, at->strides) ||
	    !hw_attr(e, op, "dilations", at->nchw, at->dilations) ||
	    (pool && !hw_attr(e, op, "ksize", at->nchw, at->ksize)))
		return false;
	const char *p = op_get_str(e->g, op, "padding");
	if (!p || strcmp(p, "VALID") == 0)
		at->padding = PCC_PAD_VALID;
	else if (strcmp(p, "SAME") == 0)
		at->padding = PCC_PAD_SAME;
	else if (strcmp(p, "EXPLICIT") == 0) {
		const Value *v = op_get(e->g, op, "explicit_paddings");
		if (!v || v->kind != V_LIST || v->list.n != 8)
			return err(e, op, "padding EXPLICIT needs 8 explicit_paddings");
		int hd = at->nchw ? 2 : 1, wd = at->nchw ? 3 : 2;
		int idx[4] = {2 * hd, 2 * hd + 1, 2 * wd, 2 * wd + 1};
		for (int i = 0; i < 4; i++) {
			const Value *x = v->list.items[idx[i]];
			if (x->kind != V_INT || x->i < 0)
				return err(e, op, "explicit_paddings must be non-negative "
					   "integers");
			at->pads[i] = x->i;
		}
		at->padding = PCC_PAD_EXPLICIT;
	} else
		return err(e, op, "padding '%s' (SAME, VALID or EXPLICIT)", p);
	return true;
}

/* FusedBatchNormV3 and its gradient: TensorFlow's defaults epsilon 1e-4,
 * exponential_avg_factor 1, is_training true, NHWC. */
static bool bn_attrs(E *e, const Op *op, pcc_attrs *at)
{
	const char *df = op_get_str(e->g, op, "data_format");
	at->nchw = df && strncmp(df, "NCHW", 4) == 0;
	if (df && !at->nchw && strncmp(df, "NHWC", 4) != 0)
		return err(e, op, "data_format '%s' (NHWC or NCHW)", df);
	static const char *const keys[] = {"epsilon", "exponential_avg_factor"};
	double *dst[] = {&at->epsilon, &at->avg_factor};
	const double dflt[] = {1e-4, 1};
	for (int i = 0; i < 2; i++) {
		const Value *v = op_get(e->g, op, keys[i]);
		*dst[i] = dflt[i];
		if (v && !val_number(v, dst[i]))
			return err(e, op, "%s must be a number", keys[i]);
	}
	if (at->epsilon < 0)
		return err(e, op, "epsilon must not be negative");
	at->inference = !op_get_bool(e->g, op, "is_training", true);
	return true;
}

/* Slice: begin into attrs; size (-1: to the end) must give the output. */
static bool slice_attrs(E *e, const Op *op, pcc_attrs *at)
{
	const Input *x = data_in(op, 0);
	const Type *t = x ? &x->src->out[x->idx] : NULL;
	int64_t size[PCC_MAX_RANK];
	int r = t ? t->rank : -1;
	if (!t || static_ints(e, op, 1, at->begin, PCC_MAX_RANK) != r ||
	    static_ints(e, op, 2, size, PCC_MAX_RANK) != r)
		return err(e, op, "begin and size must be Consts of %d integers", r);
	for (int i = 0; i < r; i++) {
		int64_t want = size[i] == -1 ? t->dims[i] - at->begin[i] : size[i];
		if (at->begin[i] < 0 || want < 0 || at->begin[i] + want > t->dims[i] ||
		    want != op->out[0].dims[i])
			return err(e, op, "begin %lld, size %lld of dimension %d (%lld) "
				   "do not give the output's %lld",
				   (long long)at->begin[i], (long long)size[i], i,
				   (long long)t->dims[i], (long long)op->out[0].dims[i]);
	}
	return true;
}

/* Pad, PadV2: the paddings before each dimension into begin; with those
 * after they must give the output. */
static bool pad_attrs(E *e, const Op *op, pcc_attrs *at)
{
	const Input *x = data_in(op, 0);
	const Type *t = x ? &x->src->out[x->idx] : NULL;
	int64_t p[2 * PCC_MAX_RANK];
	int r = t ? t->rank : -1;
	if (!t || r > PCC_MAX_RANK ||
	    static_ints(e, op, 1, p, 2 * PCC_MAX_RANK) != 2 * r)
		return err(e, op, "paddings must be a Const of %d integers", 2 * r);
	for (int i = 0; i < r; i++) {
		if (p[2 * i] < 0 || p[2 * i + 1] < 0 ||
		    t->dims[i] + p[2 * i] + p[2 * i + 1] != op->out[0].dims[i])
			return err(e, op, "paddings %lld, %lld of dimension %d (%lld) "
				   "do not give the output's %lld", (long long)p[2 * i],
				   (long long)p[2 * i + 1], i, (long long)t->dims[i],
				   (long long)op->out[0].dims[i]);
		at->begin[i] = p[2 * i];
	}
	return true;
}

/* A RandomUniform replica's @rng_slice = [dim, begin, whole] (docs/gir.md). */
static bool rng_slice(E *e, const Op *op, pcc_attrs *at)
{
	const Value *v = op_ann(e->g, op, ANN_RNG_SLICE);
	if (!v)
		return true;
	const Type *t = op->nout ? &op->out[0] : NULL;
	int64_t x[3];
	bool ok = v->kind == V_LIST && v->list.n == 3 && t && type_known(t);
	for (int i = 0; ok && i < 3; i++) {
		ok = v->list.items[i]->kind == V_INT;
		x[i] = ok ? v->list.items[i]->i : 0;
	}
	if (!ok || x[0] < 0 || x[0] >= t->rank || x[1] < 0 ||
	    x[1] + t->dims[x[0]] > x[2])
		return err(e, op, "@rng_slice must be [dim, begin, whole] with "
			   "begin + the output's size along dim <= whole");
	at->rng_dim = (int)x[0];
	at->rng_begin = x[1];
	at->rng_whole = x[2];
	return true;
}

static bool kernel_attrs(E *e, const Op *op, OpI *o)
{
	pcc_attrs *at = &o->at;
	int rank0 = op->nout ? op->out[0].rank : 0;
	switch (o->kern) {
	case PCC_K_MatMul:
		at->transpose_a = op_get_bool(e->g, op, "transpose_a", false);
		at->transpose_b = op_get_bool(e->g, op, "transpose_b", false);
		return true;
	case PCC_K_BatchMatMul: case PCC_K_BatchMatMulV2:
		at->transpose_a = op_get_bool(e->g, op, "adj_x", false);
		at->transpose_b = op_get_bool(e->g, op, "adj_y", false);
		return true;
	case PCC_K_RandomUniform:
		at->origin = origin(e, op);
		at->seed = op_get_int(e->g, op, "seed", 0);
		at->seed2 = op_get_int(e->g, op, "seed2", 0);
		return rng_slice(e, op, at);
	case PCC_K_Conv2D: case PCC_K_Conv2DBackpropInput:
	case PCC_K_Conv2DBackpropFilter: case PCC_K_DepthwiseConv2dNative:
	case PCC_K_DepthwiseConv2dNativeBackpropInput:
	case PCC_K_DepthwiseConv2dNativeBackpropFilter:
		return window_attrs(e, op, at, false);
	case PCC_K_FusedBatchNormV3: case PCC_K_FusedBatchNormGradV3:
		return bn_attrs(e, op, at);
	case PCC_K_MaxPool: case PCC_K_MaxPoolGrad: case PCC_K_AvgPool:
	case PCC_K_AvgPoolGrad:
		return window_attrs(e, op, at, true);
	case PCC_K_BiasAdd: case PCC_K_BiasAddGrad: {
		const char *df = op_get_str(e->g, op, "data_format");
		at->nchw = df && strncmp(df, "NCHW", 4) == 0;
		return true;
	}
	case PCC_K_ConcatV2:
		return static_axis(e, op, ndata(op) - 1, rank0, &at->axis);
	case PCC_K_Slice:
		return slice_attrs(e, op, at);
	case PCC_K_Pad: case PCC_K_PadV2:
		return pad_attrs(e, op, at);
	case PCC_K_Roll: {
		/* the net shift per dimension, into begin */
		if (rank0 > PCC_MAX_RANK || !op_roll_shifts(e->g, op, at->begin, PCC_MAX_RANK))
			return err(e, op, "shift and axis must be Consts of as many "
				   "integers, every axis in range");
		return true;
	}
	case PCC_K_GatherV2: {
		const Input *x = data_in(op, 0);
		if (op_get_int(e->g, op, "batch_dims", 0) != 0)
			return err(e, op, "batch_dims %lld: the C runtime gathers with "
				   "batch_dims 0 only", (long long)op_get_int(e->g, op,
									 "batch_dims", 0));
		return static_axis(e, op, 2, x ? x->src->out[x->idx].rank : 0,
				   &at->axis);
	}
	case PCC_K_UnsortedSegmentSum: {
		int64_t v;
		if (static_ints(e, op, 2, &v, 1) != 1 || rank0 < 1 ||
		    v != op->out[0].dims[0])
			return err(e, op, "num_segments must be a Const integer giving "
				   "the output's first dimension");
		return true;
	}
	case PCC_K_Split: {
		const Input *x = data_in(op, 1);
		return static_axis(e, op, 0, x ? x->src->out[x->idx].rank : 0,
				   &at->axis);
	}
	case PCC_K_SplitV: {
		const Input *x = data_in(op, 0);
		return static_axis(e, op, 2, x ? x->src->out[x->idx].rank : 0,
				   &at->axis);
	}
	case PCC_K_Pack: case PCC_K_Unpack: {
		/* the stacked tensor's rank: Pack's output, Unpack's input */
		const Input *x = data_in(op, 0);
		int r = o->kern == PCC_K_Pack ? rank0 : x ? x->src->out[x->idx].rank : 0;
		int64_t v = op_get_int(e->g, op, "axis", 0);
		if (v < -r || v >= r)
			return err(e, op, "axis %lld is out of range for rank %d",
				   (long long)v, r);
		at->axis = (int)(v < 0 ? v + r : v);
		return true;
	}
	case PCC_K_Transpose: {
		int64_t v[PCC_MAX_RANK];
		if (static_ints(e, op, 1, v, PCC_MAX_RANK) != rank0)
			return err(e, op, "perm must be a Const of %d integers", rank0);
		for (int i = 0; i < rank0; i++)
			at->perm[i] = (int)v[i];
		return true;
	}
	case PCC_K_Sum: case PCC_K_Mean: case PCC_K_Max: case PCC_K_Min:
	case PCC_K_Prod: {
		const Input *x = data_in(op, 0);
		int r = x ? x->src->out[x->idx].rank : 0;
		int64_t v[PCC_MAX_RANK];
		int n = static_ints(e, op, 1, v, PCC_MAX_RANK);
		if (n < 0)
			return err(e, op, "reduction_indices must be a Const");
		for (int i = 0; i < n; i++) {
			if (v[i] < -r || v[i] >= r)
				return err(e, op, "axis %lld is out of range for rank %d",
					   (long long)v[i], r);
			at->axes |= 1u << (v[i] < 0 ? v[i] + r : v[i]);
		}
		return true;
	}
	case PCC_K_LeakyRelu: {
		const Value *v = op_get(e->g, op, "alpha");
		double x = 0.2;
		if (v && !val_number(v, &x))
			return err(e, op, "alpha must be a number");
		at->alpha = x;
		return true;
	}
	default:
		return true;
	}
}

/* ---- 3. wiring: inputs, updates, channels, collectives ---------------------- */

static int in_buf(const E *e, const Input *in)
{
	return e->oi[in->src->id].obuf + (int)in->idx;
}

/* Gir's short forms of the updates, completed: the inputs of TensorFlow's
 * full form in order, hidden buffers for the missing ones. */
static bool wire_update(E *e, const Op *op, OpI *o)
{
	uint32_t n = ndata(op);
	int want = o->kern == PCC_K_ApplyAdam || o->kern == PCC_K_ResourceApplyAdam
		   ? 10
		   : o->kern == PCC_K_ApplyMomentum ||
		     o->kern == PCC_K_ResourceApplyMomentum ? 5 : 3;
	if (n != (uint32_t)want && n != 2)
		return err(e, op, "has %u inputs: the C backend takes TensorFlow's "
			   "%d or gir's 2 (var, grad)", n, want);
	const Op *var = data_in(op, 0)->src;
	if (!is_param(var) || e->oi[var->id].dev != o->dev)
		return err(e, op, "updates %%%s, which is not a parameter on its "
			   "device", var->name);
	if (op_get_bool(e->g, op, "use_nesterov", false) && want == 10)
		return err(e, op, "use_nesterov is not supported for Adam");
	o->at.use_nesterov = op_get_bool(e->g, op, "use_nesterov", false);
	o->nins = want;
	o->ins = arena_alloc(e->a, sizeof(int) * (size_t)want);
	if (n == (uint32_t)want) {
		/* Full form: optimizer state must be parameters (zeros), the
		 * hyperparameters must not be. */
		for (uint32_t k = 0; k < n; k++) {
			const Input *in = data_in(op, k);
			const Op *p = in->src;
			bool state = k != 0 && ((want == 10 && k <= 2) ||
						(want == 5 && k == 1));
			bool grad = k == (want == 5 ? 3u : n - 1);
			if (state) {
				if (!is_param(p) || e->oi[p->id].dev != o->dev)
					return err(e, op, "input %u (optimizer state) must "
						   "be a variable on its device", k);
				e->oi[p->id].slot = true;
			} else if (k != 0 && !grad && is_param(p))
				return err(e, op, "input %u (a hyperparameter) is the "
					   "variable %%%s; the C backend needs a Const "
					   "there", k, p->name);
			o->ins[k] = local_copy(e, in_buf(e, in), o->dev);
		}
		return true;
	}
	const char *nm = op->name;
	int v = in_buf(e, data_in(op, 0));
	int gr = local_copy(e, in_buf(e, data_in(op, 1)), o->dev);
	const Buf *vb = &e->buf[v];
	o->ins[0] = v;
	o->ins[want - 1] = gr;
	if (want == 3) {
		o->ins[1] = scalar_buf(e, arena_printf(e->a, "%s/lr", nm), o->dev, e->lr);
	} else if (want == 5) {
		o->ins[1] = new_buf(e, arena_printf(e->a, "%s/accum", nm), o->dev,
				    vb->dt, vb->rank, vb->dims);
		e->buf[o->ins[1]].at_start = true;
		o->ins[2] = scalar_buf(e, arena_printf(e->a, "%s/lr", nm), o->dev, e->lr);
		o->ins[3] = gr;
		o->ins[4] = scalar_buf(e, arena_printf(e->a, "%s/momentum", nm),
				       o->dev, e->momentum);
	} else {
		/* Keras' Adam defaults; the powers are those of step 1. */
		static const struct { const char *n; double v; } hp[] = {
			{"beta1_power", 0.9}, {"beta2_power", 0.999}, {"lr", 0},
			{"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-7},
		};
		for (int k = 1; k <= 2; k++) {
			o->ins[k] = new_buf(e, arena_printf(e->a, "%s/%s", nm,
							    k == 1 ? "m" : "v"),
					    o->dev, vb->dt, vb->rank, vb->dims);
			e->buf[o->ins[k]].at_start = true;
		}
		for (int k = 0; k < 6; k++)
			o->ins[3 + k] = scalar_buf(e, arena_printf(e->a, "%s/%s", nm,
								   hp[k].n),
						   o->dev, k == 2 ? e->adam_lr : hp[k].v);
	}
	return true;
}

/* Groups the AllReduce members by key; checks each collective is one
 * member per device of its `devices` list, all with the same list. */
static bool collectives(E *e)
{
	Graph *g = e->g;
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		n += !g->ops[i]->dead && e->oi[i].kind == K_COLL;
	if (!n)
		return true;
	bool ok = true;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		int64_t k;
		if (!op->dead && e->oi[i].kind == K_COLL && !plan_coll_key(g, op, &k))
			ok = err(e, op, "has no integer 'key'");
	}
	if (!ok)
		return false;
	/* the collectives: plan_view's grouping by key (ir/planview.c) */
	PlanView pv;
	plan_view(g, &pv, NULL);
	uint32_t m = pv.ncoll ? pv.coll[pv.ncoll - 1].first + pv.coll[pv.ncoll - 1].n
			      : 0;
	e->coll = arena_alloc(e->a, sizeof(Coll) * (m + 1));
	for (uint32_t ci = 0; ci < pv.ncoll; ci++) {
		const PlanColl *pc = &pv.coll[ci];
		uint32_t j = pc->first, end = pc->first + pc->n;
		const uint32_t *ids = pv.members;
		const Op *first = g->ops[ids[j]];
		const Value *dl = pc->devices;
		Coll *c = &e->coll[e->ncoll];
		c->key = pc->key;
		c->algo = pc->algo;
		c->n = (int)(end - j);
		c->devs = arena_alloc(e->a, sizeof(int) * (size_t)c->n);
		c->members = arena_alloc(e->a, sizeof(uint32_t) * (size_t)c->n);
		bool bad = !dl || dl->kind != V_LIST || dl->list.n != (uint32_t)c->n;
		for (int q = 0; !bad && q < c->n; q++) {
			int cdv = plan_device(g->cluster, dl->list.items[q]);
			c->devs[q] = cdv >= 0 ? e->dev_of_cdev[cdv] : -1;
			bad = c->devs[q] < 0;
			for (int p = 0; !bad && p < q; p++)
				bad = c->devs[p] == c->devs[q];
			c->members[q] = UINT32_MAX;
		}
		for (uint32_t q = j; !bad && q < end; q++) {
			const Op *op = g->ops[ids[q]];
			const Value *ol = op_get(g, op, "devices");
			bool same = ol && ol->kind == V_LIST && ol->list.n == dl->list.n;
			for (uint32_t p = 0; same && p < ol->list.n; p++) {
				const Value *x = ol->list.items[p], *y = dl->list.items[p];
				same = (x->kind == V_STR || x->kind == V_IDENT) &&
				       (y->kind == V_STR || y->kind == V_IDENT) &&
				       strcmp(x->s, y->s) == 0;
			}
			int r = 0;
			while (r < c->n && c->devs[r] != e->oi[op->id].dev)
				r++;
			bad = !same || r == c->n || c->members[r] != UINT32_MAX;
			if (!bad) {
				c->members[r] = op->id;
				e->oi[op->id].coll = e->ncoll;
				e->oi[op->id].unit = first->id;
			}
		}
		if (bad) {
			ok = err(e, first, "AllReduce key %lld: its members must be one "
				 "per device of one 'devices' list", (long long)c->key);
			continue;
		}
		for (int q = 0; q < c->n; q++)
			e->oi[c->members[q]].unit = c->members[0];
		e->ncoll++;
	}
	plan_view_free(&pv);
	return ok;
}

static bool wire(E *e)
{
	Graph *g = e->g;
	const uint32_t *topo = graph_topo(g);
	if (!topo)
		return err(e, NULL, "the graph has a cycle");
	uint32_t live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	/* Output buffers first: every op's, in op order. */
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		OpI *o = &e->oi[i];
		o->obuf = e->nbuf;
		for (uint32_t k = 0; k < op->nout; k++) {
			const char *nm = k ? arena_printf(e->a, "%s:%u", op->name, k)
					   : op->name;
			int b = new_buf(e, nm, o->dev, op->out[k].dt, op->out[k].rank,
					op->out[k].dims);
			e->buf[b].at_start = o->kind == K_SOURCE || o->kind == K_SHAPE;
		}
	}
	bool ok = collectives(e);
	/* Inputs in topological order, so that a relayed value's channel
	 * exists before the channels that forward it. */
	for (uint32_t t = 0; t < live; t++) {
		const Op *op = g->ops[topo[t]];
		OpI *o = &e->oi[op->id];
		switch (o->kind) {
		case K_SOURCE: case K_SHAPE: case K_NOOP:
			break;
		case K_TRANSFER: {
			const Input *in = data_in(op, 0);
			if (!in || in->idx >= in->src->nout)
				ok = err(e, op, "needs one data input");
			else
				o->chan = new_chan(e, in_buf(e, in), o->obuf, false);
			break;
		}
		case K_COLL: {
			const Input *in = data_in(op, 0);
			o->nins = 1;
			o->ins = arena_alloc(e->a, sizeof(int));
			o->ins[0] = local_copy(e, in_buf(e, in), o->dev);
			if (e->buf[o->ins[0]].dt != DT_F32)
				ok = err(e, op, "sums f32 tensors only");
			break;
		}
		case K_UPDATE:
			ok = wire_update(e, op, o) && ok;
			break;
		case K_KERNEL: {
			if (!kernel_attrs(e, op, o)) {
				ok = false;
				break;
			}
			uint32_t n = ndata(op);
			o->ins = arena_alloc(e->a, sizeof(int) * ((size_t)n + 1));
			for (uint32_t k = 0; k < n; k++)
				if (!is_static(e, op, k))
					o->ins[o->nins++] = local_copy(e, in_buf(e, data_in(op, k)),
								       o->dev);
			break;
		}
		}
	}
	return ok;
}

/* ---- initial values ------------------------------------------------------ */

static bool is_sce(const Op *op)
{
	return is_type(op, "SoftmaxCrossEntropyWithLogits") ||
	       is_type(op, "SparseSoftmaxCrossEntropyWithLogits");
}

/* Classes of the integer placeholder p: the smallest of the logits' width
 * of the cross-entropy ops that read it as labels, the size along axis of
 * the params of the GatherV2s that read it as indices, and num_segments
 * of the UnsortedSegmentSums that read it as segment_ids, through data
 * movement. */
static int64_t label_classes(E *e, const Op *p, uint32_t *mark, uint32_t *stack)
{
	static const char *const moves[] = {
		"Transfer", "Split", "SplitV", "ConcatV2", "Identity", "Snapshot",
		"StopGradient", "Reshape", "ExpandDims", "Squeeze",
	};
	const Uses *u = graph_uses(e->g);
	int64_t classes = -1;
	uint32_t sp = 0;
	stack[sp++] = p->id;
	mark[p->id] = p->id + 1;
	while (sp) {
		uint32_t x = stack[--sp];
		for (uint32_t k = u->start[x]; k < u->start[x + 1]; k++) {
			const Op *c = u->use[k].op;
			const Input *in = &c->in[u->use[k].slot];
			if (in->ctrl || mark[c->id] == p->id + 1)
				continue;
			int64_t n = -1;
			if (is_sce(c) && data_in(c, 1) == in) {
				const Input *f = data_in(c, 0);
				const Type *t = f ? &f->src->out[f->idx] : NULL;
				n = t && t->rank == 2 ? t->dims[1] : -1;
			} else if (is_type(c, "GatherV2") && data_in(c, 1) == in) {
				const Input *f = data_in(c, 0);
				const Type *t = f ? &f->src->out[f->idx] : NULL;
				int64_t ax;
				if (t && static_ints(e, c, 2, &ax, 1) == 1 && ax >= -t->rank &&
				    ax < t->rank)
					n = t->dims[ax < 0 ? ax + t->rank : ax];
			} else if (is_type(c, "UnsortedSegmentSum") && data_in(c, 1) == in)
				n = c->nout && c->out[0].rank ? c->out[0].dims[0] : -1;
			else
				n = -2;
			if (n != -2) {
				if (n > 0 && (classes < 0 || n < classes))
					classes = n;
				continue;
			}
			for (size_t m = 0; m < sizeof moves / sizeof moves[0]; m++)
				if (is_type(c, moves[m])) {
					mark[c->id] = p->id + 1;
					stack[sp++] = c->id;
					break;
				}
		}
	}
	return classes > 0 ? classes : 2;
}

static bool seeds(E *e)
{
	Graph *g = e->g;
	uint32_t *mark = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)g->nops + 1));
	uint32_t *stack = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)g->nops + 1));
	const Value *bv = graph_attr(g, "batch");
	int64_t batch = bv && bv->kind == V_INT ? bv->i : 0;
	bool ok = true;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		const OpI *o = &e->oi[i];
		if (op->dead || (o->kind != K_SOURCE && o->kind != K_SHAPE))
			continue;
		Buf *b = &e->buf[o->obuf];
		b->seed = origin(e, op);
		if (op_ann(g, op, ANN_PART)) {
			ok = err(e, op, "is a partition (@part) of %%%s: its initial "
				 "values cannot be derived", b->seed);
			continue;
		}
		if (o->kind == K_SHAPE) {
			const Input *x = data_in(op, 0);
			const Type *t = x ? &x->src->out[x->idx] : NULL;
			if (!t || !type_known(t))
				return err(e, op, "its input's shape is unknown");
			b->init = PCC_INIT_CONST;
			b->nvals = t->rank;
			b->vals = arena_alloc(e->a, sizeof(double) * ((size_t)t->rank + 1));
			for (int d = 0; d < t->rank; d++)
				b->vals[d] = (double)t->dims[d];
			if (b->rank != 1 || b->dims[0] != t->rank)
				ok = err(e, op, "its output must be [%d]", t->rank);
			continue;
		}
		if (is_param(op)) {
			b->init = o->slot ? PCC_INIT_ZEROS : PCC_INIT_PARAM;
			continue;
		}
		if (is_type(op, "Const")) {
			const Value *v = op_get(g, op, "value");
			b->init = v ? PCC_INIT_CONST : PCC_INIT_INPUT;
			if (!v)
				continue;
			uint32_t n = v->kind == V_LIST ? v->list.n : 1;
			b->nvals = n;
			b->vals = arena_alloc(e->a, sizeof(double) * n);
			for (uint32_t k = 0; k < n; k++) {
				const Value *x = v->kind == V_LIST ? v->list.items[k] : v;
				if (x->kind == V_BOOL)
					b->vals[k] = x->b;
				else if (!val_number(x, &b->vals[k]))
					return err(e, op, "its value must be numbers");
			}
			int64_t numel = 1;
			for (int d = 0; d < b->rank; d++)
				numel *= b->dims[d];
			if (n != 1 && n != numel)
				ok = err(e, op, "has %u values for %lld elements", n,
					 (long long)numel);
			continue;
		}
		/* A Placeholder: the whole input, or rows of it (@shard). */
		b->init = b->dt == DT_F32 ? PCC_INIT_INPUT : PCC_INIT_LABELS;
		if (b->init == PCC_INIT_LABELS)
			b->classes = label_classes(e, op, mark, stack);
		const Value *sh = op_ann(g, op, ANN_SHARD);
		if (!sh)
			continue;
		int64_t bd = op_get_int(g, op, "@batch_dim", 0);
		if (bd < 0 || bd >= b->rank)
			return err(e, op, "@batch_dim %lld is out of range",
				   (long long)bd);
		b->batch_dim = (int)bd;
		b->begin = sh->list.items[0]->i;
		b->full = batch;
		if (sh->list.items[1]->i != b->dims[bd])
			ok = err(e, op, "@shard size %lld differs from its batch "
				 "dimension %lld", (long long)sh->list.items[1]->i,
				 (long long)b->dims[bd]);
		bool outer = false;
		for (int d = 0; d < bd; d++)
			outer |= b->dims[d] != 1;
		if (outer && batch < b->begin + b->dims[bd])
			ok = err(e, op, "the graph's batch attribute must give the "
				 "whole batch (%lld)", (long long)batch);
	}
	return ok;
}

/* ---- 4. order ------------------------------------------------------------ */

typedef struct Dag {
	uint32_t n;
	uint32_t *start, *to;     /* CSR */
	uint32_t (*edge)[2];
	uint32_t nedge, capedge;
} Dag;

static void dag_add(E *e, Dag *d, uint32_t u, uint32_t v)
{
	if (u == v)
		return;
	if (d->nedge == d->capedge) {
		uint32_t cap = d->capedge ? 2 * d->capedge : 256;
		d->edge = arena_realloc(e->a, d->edge, sizeof *d->edge * d->capedge,
					sizeof *d->edge * cap);
		d->capedge = cap;
	}
	d->edge[d->nedge][0] = u;
	d->edge[d->nedge++][1] = v;
}

/* The plan's dependencies between scheduling units: data (static inputs
 * excepted), control, and parameter reads before the update. */
static bool dag_deps(E *e, Dag *d)
{
	Graph *g = e->g;
	const Uses *u = graph_uses(g);
	bool ok = true;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		uint32_t k = 0;
		for (uint32_t j = 0; j < op->nin; j++) {
			const Input *in = &op->in[j];
			bool stat = !in->ctrl && is_static(e, op, k);
			k += !in->ctrl;
			if (stat)
				continue;
			uint32_t a = e->oi[in->src->id].unit, b = e->oi[i].unit;
			if (a == b && in->src != op)
				ok = err(e, op, "reads %%%s, a member of its own collective",
					 in->src->name);
			dag_add(e, d, a, b);
		}
		if (e->oi[i].kind != K_UPDATE)
			continue;
		const Op *var = data_in(op, 0)->src;
		for (uint32_t q = u->start[var->id]; q < u->start[var->id + 1]; q++) {
			const Op *c = u->use[q].op;
			if (c == op || e->oi[c->id].kind == K_UPDATE ||
			    c->in[u->use[q].slot].ctrl)
				continue;
			dag_add(e, d, e->oi[c->id].unit, e->oi[i].unit);
		}
	}
	return ok;
}

static void dag_build(E *e, Dag *d)
{
	d->start = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)d->n + 2));
	d->to = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)d->nedge + 1));
	const uint32_t *uv = d->nedge ? d->edge[0] : NULL;
	topo_csr(d->n, d->nedge, uv, uv ? uv + 1 : NULL, 2, d->start, d->to);
}

static bool live_unit(const void *arg, uint32_t i)
{
	const E *e = arg;
	return !e->g->ops[i]->dead && e->oi[i].unit == i;
}

/* Kahn's algorithm over the live units (FIFO from the lowest id): the
 * order into out; returns how many were ordered. */
static uint32_t dag_sort(E *e, const Dag *d, uint32_t *out, uint32_t *indeg)
{
	TopoDag t = {.n = d->n, .start = d->start, .to = d->to,
		     .keep = live_unit, .arg = e};
	return topo_sort(&t, out, indeg);
}

static uint32_t pred_of(const void *arg, uint32_t v)
{
	return ((const uint32_t *)arg)[v];
}

/* Reports a cycle among the units Kahn's algorithm could not order: from
 * one of them, step to a predecessor that is also left until a unit
 * repeats. */
static bool stuck(E *e, const Dag *d, const uint32_t *indeg, const char *why)
{
	Graph *g = e->g;
	uint32_t n = d->n, start = UINT32_MAX;
	uint32_t *pred = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)n + 1));
	uint32_t *path = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)n + 1));
	for (uint32_t i = 0; i < n; i++)
		pred[i] = UINT32_MAX;
	for (uint32_t i = 0; i < d->nedge; i++) {
		uint32_t u = d->edge[i][0], v = d->edge[i][1];
		if (indeg[u] && indeg[v])
			pred[v] = u;
	}
	for (uint32_t i = 0; i < n && start == UINT32_MAX; i++)
		if (!g->ops[i]->dead && e->oi[i].unit == i && indeg[i])
			start = i;
	uint32_t len = topo_cycle(n, start, pred_of, pred, path);
	char list[600] = "";
	size_t pos = 0;
	/* path[0 .. len) runs backwards along the cycle */
	for (uint32_t k = len, shown = 0; k-- > 0 && shown < 8; shown++) {
		const Op *op = g->ops[path[k]];
		pos += (size_t)snprintf(list + pos, pos < sizeof list ? sizeof list - pos : 0,
					"%s%%%s on %s", shown ? " -> " : "",
					op->name,
					g->cluster->devs[e->cdev[e->oi[op->id].dev]].name);
	}
	if (len > 8 && pos < sizeof list)
		snprintf(list + pos, sizeof list - pos, " -> ...");
	return err(e, NULL, "%s: %s", why, list);
}

typedef struct SeqKey {
	int64_t order;
	uint32_t pos, op;
} SeqKey;

static int cmp_seq(const void *x, const void *y)
{
	const SeqKey *a = x, *b = y;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static bool scheduled(enum Kind k)
{
	return k == K_KERNEL || k == K_UPDATE || k == K_NOOP || k == K_COLL;
}

/* Appends the units of topo[0..n) to the device sequences (a
 * collective: each member on its device). */
static void fill_seqs(E *e, const uint32_t *topo, uint32_t n)
{
	for (int dv = 0; dv < e->ndev; dv++)
		e->nseq[dv] = 0;
	for (uint32_t t = 0; t < n; t++) {
		const OpI *o = &e->oi[topo[t]];
		if (!scheduled(o->kind))
			continue;
		if (o->kind == K_COLL) {
			const Coll *c = &e->coll[o->coll];
			for (int q = 0; q < c->n; q++)
				e->seq[c->devs[q]][e->nseq[c->devs[q]]++] = c->members[q];
		} else
			e->seq[o->dev][e->nseq[o->dev]++] = topo[t];
	}
}

/* Devices whose every op has @order run in that order (ties: the plan's
 * topological order); the others in one topological order of the plan
 * together with those sequences, so collectives meet in one order. */
static bool schedule(E *e)
{
	Graph *g = e->g;
	Dag d = {.n = g->nops};
	if (!dag_deps(e, &d))
		return false;
	dag_build(e, &d);
	uint32_t *topo = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)g->nops + 1));
	uint32_t *indeg = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)g->nops + 1));
	uint32_t units = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		units += !g->ops[i]->dead && e->oi[i].unit == i;
	uint32_t n = dag_sort(e, &d, topo, indeg);
	if (n < units)
		return stuck(e, &d, indeg, "the plan has a cycle (counting every "
			     "collective as one step, and every read of a "
			     "parameter before its update); a cycle");
	e->seq = arena_alloc(e->a, sizeof(uint32_t *) * (size_t)e->ndev);
	e->nseq = arena_alloc(e->a, sizeof(int) * (size_t)e->ndev);
	for (int dv = 0; dv < e->ndev; dv++)
		e->seq[dv] = arena_alloc(e->a, sizeof(uint32_t) * ((size_t)g->nops + 1));
	fill_seqs(e, topo, n);
	bool ordered = false;
	for (int dv = 0; dv < e->ndev; dv++) {
		int m = e->nseq[dv];
		SeqKey *k = arena_alloc(e->a, sizeof(SeqKey) * ((size_t)m + 1));
		bool all = m > 0;
		for (int q = 0; all && q < m; q++) {
			const Value *v = op_ann(g, g->ops[e->seq[dv][q]], ANN_ORDER);
			all = v && v->kind == V_INT;
			if (all)
				k[q] = (SeqKey){v->i, (uint32_t)q, e->seq[dv][q]};
		}
		if (!all)
			continue;
		qsort(k, (size_t)m, sizeof *k, cmp_seq);
		for (int q = 1; q < m; q++)
			dag_add(e, &d, e->oi[k[q - 1].op].unit, e->oi[k[q].op].unit);
		ordered = true;
	}
	if (!ordered)
		return true;
	dag_build(e, &d);
	n = dag_sort(e, &d, topo, indeg);
	if (n < units)
		return stuck(e, &d, indeg, "the plan's @order deadlocks: the order of "
			     "ops on a device contradicts the data flow, the order "
			     "of a collective on another device, or a parameter "
			     "read before its update; a cycle");
	fill_seqs(e, topo, n);
	return true;
}

/* Events for control edges between devices. */
static void events(E *e)
{
	Graph *g = e->g;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || !scheduled(e->oi[i].kind))
			continue;
		for (uint32_t j = 0; j < op->nin; j++) {
			if (!op->in[j].ctrl)
				continue;
			OpI *p = &e->oi[op->in[j].src->id];
			if (p->kind == K_TRANSFER) {
				Chan *c = &e->chan[p->chan];
				if (e->buf[c->dst].dev != e->oi[i].dev && c->event < 0)
					c->event = e->nevent++;
			} else if (scheduled(p->kind) && p->dev != e->oi[i].dev &&
				   p->event < 0)
				p->event = e->nevent++;
		}
	}
}

/* ---- 5. results ---------------------------------------------------------- */

typedef struct Piece {
	const char *name;
	uint32_t op;
	int64_t begin;
} Piece;

static int cmp_piece(const void *x, const void *y)
{
	const Piece *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	return (a->op > b->op) - (a->op < b->op);
}

static Result *add_result(E *e, const char *name, bool param, int n)
{
	Result *r = &e->res[e->nres++];
	r->name = name;
	r->param = param;
	r->kind = PCC_RES_COPIES;
	r->n = 0;
	r->bufs = arena_alloc(e->a, sizeof(int) * (size_t)n);
	r->begins = arena_alloc(e->a, sizeof(int64_t) * (size_t)n);
	return r;
}

static int cmp_result(const void *x, const void *y)
{
	return strcmp(((const Result *)x)->name, ((const Result *)y)->name);
}

/* One graph output (pieces p[0..n), output k). */
static bool output_result(E *e, const Piece *p, uint32_t n, uint32_t k)
{
	Graph *g = e->g;
	const Op *op0 = g->ops[p[0].op];
	Result *r = add_result(e, k ? arena_printf(e->a, "%s:%u", p[0].name, k)
				    : p[0].name, false, (int)n);
	r->n = (int)n;
	for (uint32_t i = 0; i < n; i++)
		r->bufs[i] = e->oi[p[i].op].obuf + (int)k;
	if (n == 1)
		return true;
	bool dup = true, shard = true;
	for (uint32_t i = 0; i < n; i++) {
		const Op *op = g->ops[p[i].op];
		dup &= op_get_bool(g, op, "@dup", false);
		shard &= op_ann(g, op, ANN_SHARD) != NULL;
	}
	if (dup)
		return true;
	if (!shard)
		return err(e, op0, "%u ops of the plan derive from output %%%s and "
			   "not all are replicas with @shard", n, p[0].name);
	if (op_split_output(g, op0, k) == SPLIT_SUM) {
		r->kind = PCC_RES_SUM;
		return true;
	}
	r->kind = PCC_RES_CONCAT;
	const Type *t0 = &op0->out[k];
	for (int ax = 0; ax < t0->rank; ax++) {
		bool fits = true;
		for (uint32_t i = 0; fits && i < n; i++) {
			const Op *op = g->ops[p[i].op];
			const Type *t = &op->out[k];
			const Value *sh = op_ann(g, op, ANN_SHARD);
			fits = t->rank == t0->rank && t->dims[ax] == sh->list.items[1]->i;
			for (int d = 0; fits && d < t->rank; d++)
				fits = d == ax || t->dims[d] == t0->dims[d];
			r->begins[i] = sh->list.items[0]->i;
		}
		if (fits) {
			r->axis = ax;
			return true;
		}
	}
	return err(e, op0, "the replicas of output %%%s have no dimension that "
		   "is their @shard", p[0].name);
}

static bool results(E *e)
{
	Graph *g = e->g;
	uint32_t np = 0, no = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		np += e->oi[i].kind == K_UPDATE;
		const Value *v = op_ann(g, op, ANN_OUTPUT);
		no += v && v->kind == V_BOOL && v->b;
	}
	Piece *pp = arena_alloc(e->a, sizeof(Piece) * ((size_t)np + 1));
	Piece *po = arena_alloc(e->a, sizeof(Piece) * ((size_t)no + 1));
	np = no = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		if (e->oi[i].kind == K_UPDATE) {
			const Op *var = data_in(op, 0)->src;
			pp[np++] = (Piece){origin(e, var), var->id, 0};
		}
		const Value *v = op_ann(g, op, ANN_OUTPUT);
		if (v && v->kind == V_BOOL && v->b && !is_param(op)) {
			const Value *sh = op_ann(g, op, ANN_SHARD);
			po[no++] = (Piece){origin(e, op), i, sh ? sh->list.items[0]->i : 0};
		}
	}
	qsort(pp, np, sizeof *pp, cmp_piece);
	qsort(po, no, sizeof *po, cmp_piece);
	uint32_t nres = np;
	for (uint32_t i = 0; i < no; i++)
		nres += g->ops[po[i].op]->nout;
	e->res = arena_alloc(e->a, sizeof(Result) * ((size_t)nres + 1));
	for (uint32_t i = 0; i < np;) {
		uint32_t j = i;
		while (j < np && strcmp(pp[j].name, pp[i].name) == 0)
			j++;
		Result *r = add_result(e, pp[i].name, true, (int)(j - i));
		for (uint32_t q = i; q < j; q++)
			if (q == i || pp[q].op != pp[q - 1].op)
				r->bufs[r->n++] = e->oi[pp[q].op].obuf;
		i = j;
	}
	bool ok = true;
	int nparams = e->nres;
	for (uint32_t i = 0; i < no;) {
		uint32_t j = i;
		while (j < no && strcmp(po[j].name, po[i].name) == 0)
			j++;
		bool clash = false;
		for (int q = 0; q < nparams; q++)
			clash |= strcmp(e->res[q].name, po[i].name) == 0;
		for (uint32_t k = 0; !clash && k < g->ops[po[i].op]->nout; k++)
			ok = output_result(e, po + i, j - i, k) && ok;
		i = j;
	}
	qsort(e->res, (size_t)e->nres, sizeof(Result), cmp_result);
	return ok;
}

/* ---- 6. writing ------------------------------------------------------------ */

static void cstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 32 || c >= 127)
			fprintf(f, "\\%03o", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A comment-safe copy of s (no "*" followed by "/"). */
static void ctext(FILE *f, const char *s)
{
	for (; *s; s++)
		if (!(s[0] == '*' && s[1] == '/') && (unsigned char)*s >= 32)
			fputc(*s, f);
}

static const char *pcc_dt(DType dt)
{
	return dt == DT_F32 ? "PCC_F32" : dt == DT_I32 ? "PCC_I32"
	       : dt == DT_BOOL ? "PCC_BOOL" : "PCC_I64";
}

static const char *init_name(pcc_init k)
{
	static const char *const n[] = {
		"PCC_INIT_NONE", "PCC_INIT_INPUT", "PCC_INIT_PARAM",
		"PCC_INIT_ZEROS", "PCC_INIT_LABELS", "PCC_INIT_CONST",
	};
	return n[k];
}

/* ", .key = {v0, ..., v7}" unless every value is 0 (a per-dimension
 * array of pcc_attrs). */
static void write_dims_attr(FILE *f, const char *key, const int64_t *v)
{
	bool any = false;
	for (int i = 0; i < PCC_MAX_RANK; i++)
		any |= v[i] != 0;
	if (!any)
		return;
	fprintf(f, ", .%s = {", key);
	for (int i = 0; i < PCC_MAX_RANK; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
	fputc('}', f);
}

static void write_attrs(FILE *f, const E *e, const Op *op, const pcc_attrs *a)
{
	(void)e;
	fputs("\t{.op = ", f);
	cstr(f, op->name);
	if (a->transpose_a)
		fputs(", .transpose_a = 1", f);
	if (a->transpose_b)
		fputs(", .transpose_b = 1", f);
	if (a->nchw)
		fputs(", .nchw = 1", f);
	if (a->padding)
		fprintf(f, ", .padding = %s", a->padding == PCC_PAD_SAME
			? "PCC_PAD_SAME" : "PCC_PAD_EXPLICIT");
	if (a->padding == PCC_PAD_EXPLICIT)
		fprintf(f, ", .pads = {%lld, %lld, %lld, %lld}", (long long)a->pads[0],
			(long long)a->pads[1], (long long)a->pads[2],
			(long long)a->pads[3]);
	if (a->strides[0] > 1 || a->strides[1] > 1)
		fprintf(f, ", .strides = {%lld, %lld}", (long long)a->strides[0],
			(long long)a->strides[1]);
	if (a->ksize[0] > 1 || a->ksize[1] > 1)
		fprintf(f, ", .ksize = {%lld, %lld}", (long long)a->ksize[0],
			(long long)a->ksize[1]);
	if (a->dilations[0] > 1 || a->dilations[1] > 1)
		fprintf(f, ", .dilations = {%lld, %lld}", (long long)a->dilations[0],
			(long long)a->dilations[1]);
	if (a->axis)
		fprintf(f, ", .axis = %d", a->axis);
	int64_t perm[PCC_MAX_RANK];
	for (int i = 0; i < PCC_MAX_RANK; i++)
		perm[i] = a->perm[i];
	write_dims_attr(f, "perm", perm);
	if (a->axes)
		fprintf(f, ", .axes = 0x%xu", a->axes);
	if (a->alpha != 0)
		fprintf(f, ", .alpha = %.17g", a->alpha);
	if (a->use_nesterov)
		fputs(", .use_nesterov = 1", f);
	write_dims_attr(f, "begin", a->begin);
	if (a->epsilon != 0)
		fprintf(f, ", .epsilon = %.17g", a->epsilon);
	if (a->avg_factor != 0)
		fprintf(f, ", .avg_factor = %.17g", a->avg_factor);
	if (a->inference)
		fputs(", .inference = 1", f);
	if (a->origin) {
		fputs(", .origin = ", f);
		cstr(f, a->origin);
		fprintf(f, ", .seed = %lld, .seed2 = %lld", (long long)a->seed,
			(long long)a->seed2);
	}
	if (a->rng_whole > 0)
		fprintf(f, ", .rng_dim = %d, .rng_begin = %lld, .rng_whole = %lld",
			a->rng_dim, (long long)a->rng_begin, (long long)a->rng_whole);
	fputs("},\n", f);
}

static void write_bufs(FILE *f, const E *e)
{
	bool nonfinite = false;
	for (int i = 0; i < e->nbuf; i++)
		for (int64_t k = 0; e->buf[i].init == PCC_INIT_CONST &&
				    k < e->buf[i].nvals && !nonfinite; k++)
			nonfinite = !isfinite(e->buf[i].vals[k]);
	if (nonfinite)          /* INFINITY and NAN (gir's inf, nan) */
		fputs("#include <math.h>\n\n", f);
	for (int i = 0; i < e->nbuf; i++) {
		const Buf *b = &e->buf[i];
		if (b->init != PCC_INIT_CONST)
			continue;
		fprintf(f, "static const double cv%d[] = {", i);
		for (int64_t k = 0; k < b->nvals; k++) {
			double v = b->vals[k];
			if (isfinite(v))
				fprintf(f, "%s%.17g", k ? ", " : "", v);
			else
				fprintf(f, "%s%s", k ? ", " : "",
					isnan(v) ? "NAN" : v < 0 ? "-INFINITY" : "INFINITY");
		}
		fputs("};\n", f);
	}
	fputs("\nstatic const pcc_buf_info bufs[] = {\n", f);
	for (int i = 0; i < e->nbuf; i++) {
		const Buf *b = &e->buf[i];
		fprintf(f, "\t/* %d */ {", i);
		cstr(f, b->name);
		fprintf(f, ", %d, %s, %d, {", b->dev, pcc_dt(b->dt), b->rank);
		for (int d = 0; d < b->rank; d++)
			fprintf(f, "%s%lld", d ? ", " : "", (long long)b->dims[d]);
		fprintf(f, "%s}, {%s, ", b->rank ? "" : "0", init_name(b->init));
		if (b->seed)
			cstr(f, b->seed);
		else
			fputs("NULL", f);
		fprintf(f, ", %d, %lld, %lld, %lld, ", b->batch_dim,
			(long long)b->begin, (long long)b->full,
			(long long)b->classes);
		if (b->init == PCC_INIT_CONST)
			fprintf(f, "cv%d, %lld}},\n", i, (long long)b->nvals);
		else
			fputs("NULL, 0}},\n", f);
	}
	fputs("};\n", f);
}

/* The sends of buffer b and, after each, of the value it delivered
 * (relays), on the thread that makes b ready; stack: scratch. */
static void write_sends(FILE *f, const E *e, int b, int *stack)
{
	int sp = 0;
	stack[sp++] = b;
	while (sp) {
		int x = stack[--sp];
		for (int c = e->buf[x].outs; c >= 0; c = e->chan[c].next) {
			const Chan *ch = &e->chan[c];
			fprintf(f, "\tpcc_send(d, C(%d), B(%d));\t/* ", c, x);
			ctext(f, e->buf[ch->dst].name);
			fputs(" */\n", f);
			if (ch->event >= 0)
				fprintf(f, "\tpcc_event_record(d, EV(%d));\n", ch->event);
			stack[sp++] = ch->dst;
		}
	}
}

static void write_op_comment(FILE *f, const E *e, const Op *op)
{
	fputs("\t/* %", f);
	ctext(f, op->name);
	fputs(" = ", f);
	ctext(f, op->type);
	fputc('(', f);
	for (uint32_t j = 0; j < op->nin; j++) {
		fprintf(f, "%s%s%%", j ? ", " : "", op->in[j].ctrl ? "^" : "");
		ctext(f, op->in[j].src->name);
		if (op->in[j].idx)
			fprintf(f, ":%u", op->in[j].idx);
	}
	fputs(") */\n", f);
	(void)e;
}

static void write_device(FILE *f, const E *e, int dv, bool *recvd, int *stack,
			 const int *attr_of)
{
	Graph *g = e->g;
	fprintf(f, "\n/* Device %d: ", dv);
	ctext(f, g->cluster->devs[e->cdev[dv]].name);
	fprintf(f, ", %d op%s. */\nstatic void dev%d(pcc_dev *d, const pcc_handles *h)\n{\n",
		e->nseq[dv], e->nseq[dv] == 1 ? "" : "s", dv);
	for (int b = 0; b < e->nbuf; b++)
		if (e->buf[b].at_start && e->buf[b].outs >= 0 && issuer(e, b) == dv)
			write_sends(f, e, b, stack);
	for (int q = 0; q < e->nseq[dv]; q++) {
		uint32_t id = e->seq[dv][q];
		const Op *op = g->ops[id];
		const OpI *o = &e->oi[id];
		write_op_comment(f, e, op);
		for (int k = 0; k < o->nins; k++) {
			int c = e->buf[o->ins[k]].chan_in;
			if (c >= 0 && !recvd[c]) {
				fprintf(f, "\tpcc_recv(d, C(%d));\n", c);
				recvd[c] = true;
			}
		}
		for (uint32_t j = 0; j < op->nin; j++) {
			if (!op->in[j].ctrl)
				continue;
			const OpI *p = &e->oi[op->in[j].src->id];
			if (p->kind == K_TRANSFER) {
				const Chan *c = &e->chan[p->chan];
				if (e->buf[c->dst].dev == dv && !recvd[p->chan]) {
					fprintf(f, "\tpcc_recv(d, C(%d));\n", p->chan);
					recvd[p->chan] = true;
				} else if (e->buf[c->dst].dev != dv)
					fprintf(f, "\tpcc_event_wait(d, EV(%d));\n", c->event);
			} else if (scheduled(p->kind) && p->dev != dv)
				fprintf(f, "\tpcc_event_wait(d, EV(%d));\n", p->event);
		}
		switch (o->kind) {
		case K_KERNEL: case K_UPDATE:
			fprintf(f, "\tpcc_launch(d, PCC_K_%s, &attrs[%d], %d, ",
				kinfo[o->kern].name, attr_of[id], o->nins);
			if (o->nins) {
				fputs("(pcc_buf *const[]){", f);
				for (int k = 0; k < o->nins; k++)
					fprintf(f, "%sB(%d)", k ? ", " : "", o->ins[k]);
				fputs("}", f);
			} else
				fputs("NULL", f);
			fprintf(f, ", %u, ", op->nout);
			if (op->nout) {
				fputs("(pcc_buf *const[]){", f);
				for (uint32_t k = 0; k < op->nout; k++)
					fprintf(f, "%sB(%d)", k ? ", " : "", o->obuf + (int)k);
				fputs("}", f);
			} else
				fputs("NULL", f);
			fputs(");\n", f);
			break;
		case K_COLL:
			fprintf(f, "\tpcc_allreduce(d, R(%d), B(%d), B(%d));\n", o->coll,
				o->ins[0], o->obuf);
			break;
		default:
			break;
		}
		for (uint32_t k = 0; k < op->nout; k++)
			write_sends(f, e, o->obuf + (int)k, stack);
		if (o->event >= 0)
			fprintf(f, "\tpcc_event_record(d, EV(%d));\n", o->event);
	}
	fputs("\t(void)d;\n\t(void)h;\n}\n", f);
}

static void write_program(FILE *f, const E *e)
{
	Graph *g = e->g;
	fputs("/* Generated by pcc " PCC_VERSION " --emit=c: one training step of "
	      "graph '", f);
	ctext(f, g->name ? g->name : "");
	fputs("'\n * from ", f);
	ctext(f, g->src_file ? g->src_file : "-");
	fputs(" on cluster '", f);
	ctext(f, g->cluster->name);
	fprintf(f, "' (%d devices), against the runtime API of pcc_rt.h.\n"
		" *   cc plan.c $(pcc --runtime-flags) -o plan && ./plan\n"
		" * prints NAME SUM L2 for every updated parameter and graph output "
		"(--help). */\n#include <pcc_rt.h>\n\n", e->ndev);
	fputs("#define B(i) (h->buf[i])\n#define C(i) (h->chan[i])\n"
	      "#define R(i) (h->coll[i])\n#define EV(i) (h->event[i])\n\n", f);
	/* Attributes of every launch. */
	int *attr_of = arena_alloc(e->a, sizeof(int) * ((size_t)g->nops + 1));
	int nattr = 0;
	fputs("static const pcc_attrs attrs[] = {\n", f);
	for (uint32_t i = 0; i < g->nops; i++) {
		const OpI *o = &e->oi[i];
		if (g->ops[i]->dead || (o->kind != K_KERNEL && o->kind != K_UPDATE))
			continue;
		attr_of[i] = nattr++;
		write_attrs(f, e, g->ops[i], &o->at);
	}
	if (!nattr)
		fputs("\t{.op = \"\"},\n", f);
	fputs("};\n", f);
	bool *recvd = arena_alloc(e->a, (size_t)e->nchan + 1);
	int *stack = arena_alloc(e->a, sizeof(int) * ((size_t)e->nbuf + 1));
	for (int dv = 0; dv < e->ndev; dv++)
		write_device(f, e, dv, recvd, stack, attr_of);

	fputs("\nstatic const char *const dev_names[] = {", f);
	for (int dv = 0; dv < e->ndev; dv++) {
		fputs(dv ? ", " : "", f);
		cstr(f, g->cluster->devs[e->cdev[dv]].name);
	}
	fputs("};\nstatic pcc_dev_fn *const run[] = {", f);
	for (int dv = 0; dv < e->ndev; dv++)
		fprintf(f, "%sdev%d", dv ? ", " : "", dv);
	fputs("};\n\n", f);
	write_bufs(f, e);
	if (e->nchan) {
		fputs("\nstatic const pcc_chan_info chans[] = {\n", f);
		for (int c = 0; c < e->nchan; c++)
			fprintf(f, "\t{%d, %d},\n", e->chan[c].issuer, e->chan[c].dst);
		fputs("};\n", f);
	}
	if (e->ncoll) {
		fputc('\n', f);
		for (int c = 0; c < e->ncoll; c++) {
			fprintf(f, "static const int coll%d[] = {", c);
			for (int q = 0; q < e->coll[c].n; q++)
				fprintf(f, "%s%d", q ? ", " : "", e->coll[c].devs[q]);
			fputs("};\n", f);
		}
		fputs("static const pcc_coll_info colls[] = {\n", f);
		for (int c = 0; c < e->ncoll; c++) {
			fprintf(f, "\t{%lld, ", (long long)e->coll[c].key);
			cstr(f, e->coll[c].algo);
			fprintf(f, ", %d, coll%d},\n", e->coll[c].n, c);
		}
		fputs("};\n", f);
	}
	if (e->nres) {
		fputc('\n', f);
		for (int r = 0; r < e->nres; r++) {
			const Result *x = &e->res[r];
			fprintf(f, "static const int res%d[] = {", r);
			for (int q = 0; q < x->n; q++)
				fprintf(f, "%s%d", q ? ", " : "", x->bufs[q]);
			fputs("};\n", f);
			if (x->kind == PCC_RES_CONCAT) {
				fprintf(f, "static const int64_t res%d_begin[] = {", r);
				for (int q = 0; q < x->n; q++)
					fprintf(f, "%s%lld", q ? ", " : "",
						(long long)x->begins[q]);
				fputs("};\n", f);
			}
		}
		fputs("static const pcc_result_info results[] = {\n", f);
		static const char *const kinds[] = {
			"PCC_RES_COPIES", "PCC_RES_CONCAT", "PCC_RES_SUM",
		};
		for (int r = 0; r < e->nres; r++) {
			const Result *x = &e->res[r];
			fputs("\t{", f);
			cstr(f, x->name);
			fprintf(f, ", %d, %s, %d, %d, res%d, ", x->param, kinds[x->kind],
				x->axis, x->n, r);
			if (x->kind == PCC_RES_CONCAT)
				fprintf(f, "res%d_begin},\n", r);
			else
				fputs("NULL},\n", f);
		}
		fputs("};\n", f);
	}
	fputs("\nstatic const pcc_program program = {\n"
	      "\t.api_version = PCC_RT_API_VERSION,\n\t.graph = ", f);
	cstr(f, g->name ? g->name : "");
	fputs(",\n\t.source = ", f);
	cstr(f, g->src_file ? g->src_file : "-");
	fprintf(f, ",\n\t.seed = %lluu,\n\t.ndevs = %d,\n\t.dev_names = dev_names,\n"
		"\t.run = run,\n\t.nbufs = %d,\n\t.bufs = bufs,\n",
		(unsigned long long)e->seed, e->ndev, e->nbuf);
	if (e->nchan)
		fprintf(f, "\t.nchans = %d,\n\t.chans = chans,\n", e->nchan);
	if (e->ncoll)
		fprintf(f, "\t.ncolls = %d,\n\t.colls = colls,\n", e->ncoll);
	fprintf(f, "\t.nevents = %d,\n", e->nevent);
	if (e->nres)
		fprintf(f, "\t.nresults = %d,\n\t.results = results,\n", e->nres);
	fputs("};\n\nint main(int argc, char **argv)\n{\n"
	      "\treturn pcc_main(&program, argc, argv);\n}\n", f);
}

bool emit_c_backend(FILE *f, const EmitCtx *ctx)
{
	/* The analyses (uses, topological order) are cached on the graph;
	 * the emitter changes nothing else. */
	E e = {.g = (Graph *)ctx->g, .a = arena_new()};
	diag_init(&e.d, stderr, ctx->g->src_file, NULL, 0);
	bool ok = (ctx->g->cluster || err(&e, NULL, "the plan has no cluster")) &&
		  parse_opts(&e, ctx) && classify(&e) && wire(&e) && seeds(&e) &&
		  schedule(&e) && results(&e);
	if (ok) {
		events(&e);
		write_program(f, &e);
	}
	arena_free(e.a);
	return ok;
}

/* ---- --runtime-flags ------------------------------------------------------ */

static bool readable(const char *dir, const char *file, char *out, size_t n)
{
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path)
		return false;
	return access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < n;
}

bool c_runtime_flags(FILE *f, const char *exe, const char *extra, char *msg,
		     size_t n)
{
	char dir[PATH_MAX];
	if (!realpath(exe, dir)) {
		snprintf(msg, n, "cannot resolve the executable's path '%s': %s", exe,
			 strerror(errno));
		return false;
	}
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	/* The build directory, the source tree's root (./pcc), an installation. */
	static const struct { const char *inc, *lib; } where[] = {
		{"../backend/runtime", "libpcc_rt.a"},
		{"backend/runtime", "build/libpcc_rt.a"},
		{"../include/pcc", "../lib/libpcc_rt.a"},
	};
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		char hdr[PATH_MAX], lib[PATH_MAX], rel[PATH_MAX];
		snprintf(rel, sizeof rel, "%s/pcc_rt.h", where[i].inc);
		if (!readable(dir, rel, hdr, sizeof hdr) ||
		    !readable(dir, where[i].lib, lib, sizeof lib))
			continue;
		*strrchr(hdr, '/') = 0;
		fprintf(f, "-I%s %s -lpthread -lm%s%s\n", hdr, lib,
			extra && *extra ? " " : "", extra ? extra : "");
		return true;
	}
	snprintf(msg, n, "cannot find the C runtime (pcc_rt.h and libpcc_rt.a) "
		 "beside %s: build it with make, or install with make install", dir);
	return false;
}
