/* comm.c — materialise a plan: replicas, partitions' glue and every
 * transfer and collective (TAG §4.3.1, HeteroG §3.4; docs/plan.md).
 *
 * Input: each op carries @device, or @replicas (with @shares, @dup) from
 * place; replicated updates carry @sync (ring, hier, ps, sfb) and @ps.
 * Output: every op runs on exactly one device.  Ops are visited once, in
 * topological order.  A replicated op becomes one op per replica
 * (X/rep{r}, @origin, @replica, @shard), with output shapes scaled to its
 * shard; an unreplicated op stays itself.  Each input of each new op is
 * then *resolved*: the consumer wants either the whole value of a tensor
 * on its device, or its own slice of the batch, and the producer offers
 * one of four layouts (plan.h): one copy on one device, identical copies
 * on several (OK_FULL, OK_LOCAL), batch slices (OK_SPLIT), or partial sums
 * (OK_PARTIAL).  The conversions are TAG's:
 *
 *   whole on d   <- one copy elsewhere        Transfer (Consts are copied)
 *                <- slices                    Transfers, ConcatV2 on d
 *                <- partial sums              Transfers, AddN on d (a PS);
 *                   or, when the consumer is replicated over the same
 *                   devices, one AllReduce (ring or hierarchical,
 *                   whichever the cost model finds faster, HeteroG §3.4)
 *   slice r on d <- slices of the same shares Transfer of slice r (or none)
 *                <- anything else             the whole value on one device,
 *                   SplitV (Split for equal shares) there, Transfer of
 *                   slice r: TAG's "Split where a replicated op consumes
 *                   an unreplicated tensor", "both where counts differ"
 *
 * Every conversion is cached, so a tensor moves to a device once however
 * many consumers it has there.  Shape inputs of replicas (Reshape's
 * shape, Conv2DBackpropInput's input_sizes) become Consts of the replica's
 * own shape.  A parameter server is a replicated update moved to @ps:
 * gradient slices then reach it as Transfers + AddN and replicas read the
 * parameter through Transfers.  Sufficient-factor broadcasting is a
 * duplicated (@dup) gradient op: its factors are gathered on every
 * replica, which computes the whole gradient; no AllReduce follows.
 * O(V + E) conversions with O(1) hashing each. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ref {
	Op *op;
	uint32_t idx;
} Ref;

/* Where an op of the input graph runs. */
typedef struct Place {
	int n;                   /* replicas; 1 for one device */
	int *dev;                /* [n] */
	int64_t *begin, *size;   /* [n] batch shards, or NULL (not split) */
	int part;                /* id of the shard list, or -1 */
	bool dup;                /* replicas compute whole values */
	int micro;               /* pipelined: micro-batches (replica r
				  * computes micro-batch r / (n / micro)) */
	Op **rep;                /* [n] the op of each replica */
	const char *sync;        /* a replicated update's @sync, or NULL */
} Place;

/* Cache keys. */
enum { T_XFER, T_CONST, T_GATHER, T_SUM, T_SPLIT, T_AR, T_MGATHER, T_ACC,
       T_RESHARD, T_VIEW };

typedef struct Slot {
	uint32_t a, b, c, d, tag;
	bool used;
	Ref r;
	Op **members;            /* T_AR: one per producer replica */
} Slot;

typedef struct Cache {
	Slot *s;
	uint32_t cap, n;
} Cache;

typedef struct Comm {
	PassCtx *ctx;
	Graph *g;
	const Cluster *c;
	BatchInfo b;
	Place *pl;               /* per op of the input graph */
	uint32_t norig;
	struct { int n; int64_t *size; } *parts;
	int nparts;
	Cache cache;
	int64_t next_key;
	/* Every collective made, for bucketing (comm<bucket>, @bucket). */
	struct ArRec {
		Op *u;
		uint32_t k;
		Op **mem;        /* [n] members, on pl[u].dev[0 .. n) */
		int n;
		double cap;      /* bucket bytes; 0: alone */
	} *ars;
	uint32_t nars, capars;
	double bucket;           /* comm<bucket=SIZE> */
	Ref *back;               /* bucketize: per op id, what replaces a
				  * bucketed AllReduce (op NULL: none) */
	uint32_t nback;
	unsigned nbucket;
	unsigned nxfer, nsplit, nconcat, nsum, nar, nrep, nlegal, nsfb;
	int errors;
} Comm;

/* ---- cache ---------------------------------------------------------------- */

static uint32_t slot_hash(uint32_t a, uint32_t b, uint32_t c, uint32_t d,
			  uint32_t tag)
{
	uint32_t k[5] = {a, b, c, d, tag};
	return (uint32_t)hash_bytes(k, sizeof k);
}

static Slot *cache_get(Cache *ch, uint32_t a, uint32_t b, uint32_t c,
		       uint32_t d, uint32_t tag, bool *fresh)
{
	if (2 * (ch->n + 1) > ch->cap) {
		Cache old = *ch;
		ch->cap = ch->cap ? 2 * ch->cap : 1024;
		ch->s = xcalloc(ch->cap, sizeof(Slot));
		ch->n = 0;
		for (uint32_t i = 0; i < old.cap; i++)
			if (old.s[i].used) {
				const Slot *o = &old.s[i];
				uint32_t h = slot_hash(o->a, o->b, o->c, o->d, o->tag) &
					     (ch->cap - 1);
				while (ch->s[h].used)
					h = (h + 1) & (ch->cap - 1);
				ch->s[h] = *o;
				ch->n++;
			}
		free(old.s);
	}
	uint32_t h = slot_hash(a, b, c, d, tag) & (ch->cap - 1);
	for (; ch->s[h].used; h = (h + 1) & (ch->cap - 1)) {
		Slot *s = &ch->s[h];
		if (s->a == a && s->b == b && s->c == c && s->d == d && s->tag == tag) {
			*fresh = false;
			return s;
		}
	}
	Slot *s = &ch->s[h];
	*s = (Slot){a, b, c, d, tag, true, {NULL, 0}, NULL};
	ch->n++;
	*fresh = true;
	return s;
}

/* ---- new ops ---------------------------------------------------------------- */

static const char *dev_name(const Comm *m, int d)
{
	return m->c->devs[d].name;
}

static const char *origin_of(Comm *m, const Op *op)
{
	const char *o = op_ann_str(m->g, op, ANN_ORIGIN);
	return o ? o : op->name;
}

static Op *new_op(Comm *m, const char *base, const char *type, uint32_t nin,
		  uint32_t nout, int d, const char *origin)
{
	Graph *g = m->g;
	Op *op = graph_add_op(g, graph_fresh_name(g, base), type, nin, nout);
	op->types_given = true;
	op_set_ann(g, op, ANN_DEVICE, val_str(g->arena, dev_name(m, d)));
	op_set_ann(g, op, ANN_ORIGIN, val_str(g->arena, origin));
	return op;
}

static Type *type_of(Ref r)
{
	return &r.op->out[r.idx];
}

/* An integer Const on device d. */
static Op *int_const(Comm *m, const char *base, const int64_t *v, int n,
		     bool scalar, DType dt, int d, const char *origin)
{
	Graph *g = m->g;
	Op *op = new_op(m, base, "Const", 0, 1, d, origin);
	int64_t dims[1] = {n};
	op->out[0] = type_make(g->arena, dt, scalar ? 0 : 1, dims);
	Value *val;
	if (scalar) {
		val = val_int(g->arena, v[0]);
	} else {
		val = val_list(g->arena, (uint32_t)n);
		for (int i = 0; i < n; i++)
			val->list.items[i] = val_int(g->arena, v[i]);
	}
	op_set(g, op, "value", val);
	return op;
}

/* Reshape(x, shape) on device d. */
static Ref reshape_to(Comm *m, Ref x, const int64_t *dims, int rank, int d,
		      const char *origin)
{
	Graph *g = m->g;
	const Type *t = &x.op->out[x.idx];
	if (t->rank == rank &&
	    memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank) == 0)
		return x;
	Op *shape = int_const(m, arena_printf(g->arena, "%s/shape", x.op->name),
			      dims, rank, false, DT_I32, d, origin);
	Op *r = new_op(m, arena_printf(g->arena, "%s/reshape", x.op->name),
		       "Reshape", 2, 1, d, origin);
	r->in[0] = (Input){x.op, x.idx, false};
	r->in[1] = (Input){shape, 0, false};
	r->out[0] = type_make(g->arena, t->dt, rank, dims);
	return (Ref){r, 0};
}

/* dims with dimension d scaled from the batch to size elements. */
static int64_t *shard_dims(Comm *m, const int64_t *dims, int rank, int d,
			   int64_t size)
{
	int64_t *v = arena_alloc(m->ctx->scratch, sizeof(int64_t) * (size_t)(rank + 1));
	memcpy(v, dims, sizeof(int64_t) * (size_t)rank);
	v[d] = dims[d] / m->b.batch * size;
	return v;
}

static Ref transfer(Comm *m, Ref src, int d)
{
	if (op_ann_str(m->g, src.op, ANN_DEVICE) &&
	    strcmp(op_ann_str(m->g, src.op, ANN_DEVICE), dev_name(m, d)) == 0)
		return src;
	bool fresh;
	Slot *s = cache_get(&m->cache, src.op->id, src.idx, (uint32_t)d, 0,
			    T_XFER, &fresh);
	if (!fresh)
		return s->r;
	const char *base = src.idx
		? arena_printf(m->g->arena, "%s.%u/to/%s", src.op->name, src.idx,
			       dev_name(m, d))
		: arena_printf(m->g->arena, "%s/to/%s", src.op->name, dev_name(m, d));
	Op *t = new_op(m, base, "Transfer", 1, 1, d, origin_of(m, src.op));
	t->in[0] = (Input){src.op, src.idx, false};
	t->out[0] = *type_of(src);
	m->nxfer++;
	s = cache_get(&m->cache, src.op->id, src.idx, (uint32_t)d, 0, T_XFER, &fresh);
	s->r = (Ref){t, 0};
	return s->r;
}

/* A copy of Const op k on device d: constants are never transferred. */
static Ref const_on(Comm *m, Op *k, int d)
{
	const char *kd = op_ann_str(m->g, k, ANN_DEVICE);
	if (kd && strcmp(kd, dev_name(m, d)) == 0)
		return (Ref){k, 0};
	bool fresh;
	Slot *s = cache_get(&m->cache, k->id, 0, (uint32_t)d, 0, T_CONST, &fresh);
	if (!fresh)
		return s->r;
	Op *c = new_op(m, arena_printf(m->g->arena, "%s/on/%s", k->name,
				       dev_name(m, d)),
		       "Const", 0, 1, d, origin_of(m, k));
	c->out[0] = k->out[0];
	for (uint32_t i = 0; i < k->nattr; i++)
		if (k->attrs[i].key[0] != '@')
			op_set(m->g, c, k->attrs[i].key, k->attrs[i].val);
	s = cache_get(&m->cache, k->id, 0, (uint32_t)d, 0, T_CONST, &fresh);
	s->r = (Ref){c, 0};
	return s->r;
}

/* ---- resolving inputs --------------------------------------------------------- */

static OutKind kind_of(const Comm *m, const Op *u, uint32_t k)
{
	const Place *p = &m->pl[u->id];
	if (p->n == 1 || p->dup || !p->begin)
		return OK_FULL;
	return batch_okind(&m->b, u, k);
}

/* The replica of u nearest to device d (same device, then the fastest
 * link). */
static int nearest(const Comm *m, const Place *p, int d)
{
	int best = 0;
	double bt = INFINITY;
	for (int r = 0; r < p->n; r++) {
		if (p->dev[r] == d)
			return r;
		double t = cost_transfer(m->ctx->cost, p->dev[r], d, 1e6);
		if (t < bt) {
			bt = t;
			best = r;
		}
	}
	return best;
}

static Ref whole(Comm *m, Op *u, uint32_t k, int d);

/* Transfers every replica's output k of u to d; pieces[r]. */
static void gather(Comm *m, Op *u, uint32_t k, int d, Input *pieces)
{
	const Place *p = &m->pl[u->id];
	for (int r = 0; r < p->n; r++) {
		Ref x = transfer(m, (Ref){p->rep[r], k}, d);
		pieces[r] = (Input){x.op, x.idx, false};
	}
}

/* Gradient accumulation over micro-batches of a pipelined place: on its
 * i-th device (of kk = n / micro), a chain of two-input AddNs of its
 * replicas i, i + kk, ... in micro-batch order, so each partial sum is
 * added (and freed) as soon as it is ready rather than all m being held.
 * Its running sum, which whole() sends to the consumer and allreduce()
 * reduces over the stage's devices; made once per (u, k, i). */
static Input micro_acc(Comm *m, Op *u, uint32_t k, int i)
{
	const Place *p = &m->pl[u->id];
	int kk = p->n / p->micro;
	Input acc = {p->rep[i], k, false};
	if (kk == p->n)
		return acc;
	bool fresh;
	Slot *s = cache_get(&m->cache, u->id, k, (uint32_t)i, 0, T_ACC, &fresh);
	if (!fresh)
		return (Input){s->r.op, s->r.idx, false};
	Graph *g = m->g;
	for (int r = i + kk; r < p->n; r += kk) {
		Op *op = new_op(m, arena_printf(g->arena, "%s/sum", u->name), "AddN",
				2, 1, p->dev[i], origin_of(m, u));
		op->in[0] = acc;
		op->in[1] = (Input){p->rep[r], k, false};
		op->out[0] = u->out[k];
		acc = (Input){op, 0, false};
	}
	s = cache_get(&m->cache, u->id, k, (uint32_t)i, 0, T_ACC, &fresh);
	s->r = (Ref){acc.src, acc.idx};
	return acc;
}

/* The whole value of output k of u (an op of the input graph) on d. */
static Ref whole(Comm *m, Op *u, uint32_t k, int d)
{
	const Place *p = &m->pl[u->id];
	OutKind kind = kind_of(m, u, k);
	if (kind == OK_FULL || kind == OK_LOCAL) {
		Ref src = {p->rep[nearest(m, p, d)], k};
		if (src.op->opcode == O_Const)
			return const_on(m, src.op, d);
		return transfer(m, src, d);
	}
	bool fresh;
	uint32_t tag = kind == OK_SPLIT ? T_GATHER : T_SUM;
	Slot *s = cache_get(&m->cache, u->id, k, (uint32_t)d, 0, tag, &fresh);
	if (!fresh)
		return s->r;
	Graph *g = m->g;
	const char *org = origin_of(m, u);
	Op *op = NULL;
	if (kind == OK_SPLIT) {
		/* ConcatV2(pieces..., axis) along the batch dimension, in the
		 * view's shape when the slices are contiguous only there. */
		const View *v = batch_view(&m->b, u, k);
		int64_t ax = v ? v->dim : batch_odim(&m->b, u, k);
		Op *axis = int_const(m, arena_printf(g->arena, "%s/concat/axis", u->name),
				     &ax, 1, true, DT_I32, d, org);
		op = new_op(m, arena_printf(g->arena, "%s/concat", u->name),
			    "ConcatV2", (uint32_t)p->n + 1, 1, d, org);
		gather(m, u, k, d, op->in);
		op->in[p->n] = (Input){axis, 0, false};
		m->nconcat++;
		if (v) {
			for (int r = 0; r < p->n; r++) {
				Ref x = reshape_to(m, (Ref){op->in[r].src, op->in[r].idx},
						   shard_dims(m, v->dims, v->rank, v->dim,
							      p->size[r]),
						   v->rank, d, org);
				op->in[r] = (Input){x.op, x.idx, false};
			}
			op->out[0] = type_make(g->arena, u->out[k].dt, v->rank, v->dims);
			Ref w = reshape_to(m, (Ref){op, 0}, u->out[k].dims,
					   u->out[k].rank, d, org);
			s = cache_get(&m->cache, u->id, k, (uint32_t)d, 0, tag, &fresh);
			s->r = w;
			return w;
		}
	} else if (p->micro && p->n > 2) {
		/* Gradient accumulation over micro-batches (micro_acc) on
		 * each of the stage's kk devices; the kk running sums meet
		 * on d. */
		int kk = p->n / p->micro;
		Input *local = arena_alloc(m->ctx->scratch, sizeof(Input) * (size_t)kk);
		for (int i = 0; i < kk; i++) {
			Input acc = micro_acc(m, u, k, i);
			Ref x = transfer(m, (Ref){acc.src, acc.idx}, d);
			local[i] = (Input){x.op, x.idx, false};
		}
		if (kk > 1) {
			op = new_op(m, arena_printf(g->arena, "%s/sum", u->name), "AddN",
				    (uint32_t)kk, 1, d, org);
			memcpy(op->in, local, sizeof(Input) * (size_t)kk);
		} else {
			op = local[0].src;
		}
		m->nsum++;
	} else {
		op = new_op(m, arena_printf(g->arena, "%s/sum", u->name), "AddN",
			    (uint32_t)p->n, 1, d, org);
		gather(m, u, k, d, op->in);
		m->nsum++;
	}
	op->out[0] = u->out[k];
	s = cache_get(&m->cache, u->id, k, (uint32_t)d, 0, tag, &fresh);
	s->r = (Ref){op, 0};
	return s->r;
}

/* The devices u's partial sums are reduced over: its replicas', or, when
 * pipelined, its stage's (the first n / micro: one micro-batch's). */
static int ar_members(const Place *p)
{
	return p->micro ? p->n / p->micro : p->n;
}

/* The AllReduce of u's partial sums: member r on u's replica device r
 * (pipelined: of the running sum on the stage's device r, micro_acc).
 * cons is the consumer that asks for it: its @bucket (else comm's
 * option) decides the bucket it may join. */
static Op **allreduce(Comm *m, Op *u, uint32_t k, const char *sync,
		      const Op *cons)
{
	bool fresh;
	Slot *s = cache_get(&m->cache, u->id, k, 0, 0, T_AR, &fresh);
	if (!fresh)
		return s->members;
	const Place *p = &m->pl[u->id];
	Graph *g = m->g;
	double bytes = cost_out_bytes(g, u, k);
	int n = ar_members(p);
	const char *algo = sync && strcmp(sync, "hier") == 0 ? "hier" : "ring";
	if (!sync || (strcmp(sync, "ring") && strcmp(sync, "hier")))
		algo = cost_allreduce_hier(m->ctx->cost, p->dev, n, bytes) <
				       cost_allreduce_ring(m->ctx->cost, p->dev, n, bytes)
			       ? "hier" : "ring";
	Value *devs = val_list(g->arena, (uint32_t)n);
	for (int r = 0; r < n; r++)
		devs->list.items[r] = val_str(g->arena, dev_name(m, p->dev[r]));
	int64_t key = m->next_key++;
	Op **mem = arena_alloc(m->ctx->scratch, sizeof(Op *) * (size_t)n);
	for (int r = 0; r < n; r++) {
		Op *a = new_op(m, arena_printf(g->arena, "%s/ar%d", u->name, r),
			       "AllReduce", 1, 1, p->dev[r], origin_of(m, u));
		a->in[0] = p->micro ? micro_acc(m, u, k, r) : (Input){p->rep[r], k, false};
		a->out[0] = u->out[k];
		op_set(g, a, "key", val_int(g->arena, key));
		op_set(g, a, "algo", val_ident(g->arena, algo));
		op_set(g, a, "devices", devs);
		mem[r] = a;
	}
	m->nar++;
	s = cache_get(&m->cache, u->id, k, 0, 0, T_AR, &fresh);
	s->members = mem;
	if (m->nars == m->capars) {
		m->capars = m->capars ? 2 * m->capars : 64;
		m->ars = xrealloc(m->ars, sizeof(*m->ars) * m->capars);
	}
	double cap = m->bucket;
	Value *bv = op_ann(g, cons, ANN_BUCKET);
	if (bv)
		val_number(bv, &cap);
	m->ars[m->nars++] = (struct ArRec){u, k, mem, n, cap};
	return mem;
}

/* Do two places use the same set of devices? */
static bool same_devices(const Place *a, const Place *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++) {
		bool found = false;
		for (int j = 0; j < b->n && !found; j++)
			found = a->dev[i] == b->dev[j];
		if (!found)
			return false;
	}
	return true;
}

/* Are the devices u's partial sums are reduced over (ar_members) p's
 * devices?  A data-parallel pipeline stage's update, replicated on the
 * stage's devices, reads its gradient's micro-batches so. */
static bool reduces_onto(const Place *up, const Place *p)
{
	Place a = *up;
	a.n = ar_members(up);
	return same_devices(&a, p);
}

/* Slice [begin, begin+size) along dim of Const k as a Const on device d:
 * constants are never moved, their slices are constants too. */
static Ref const_slice(Comm *m, Op *k, int dim, int64_t begin, int64_t size,
		       int d)
{
	Graph *g = m->g;
	const Type *t = &k->out[0];
	bool fresh;
	Slot *s = cache_get(&m->cache, k->id, (uint32_t)dim, (uint32_t)d,
			    (uint32_t)begin, T_CONST + 16 * (uint32_t)size, &fresh);
	if (!fresh)
		return s->r;
	Op *c = new_op(m, arena_printf(g->arena, "%s/slice", k->name), "Const",
		       0, 1, d, origin_of(m, k));
	c->out[0] = type_make(g->arena, t->dt, t->rank, t->dims);
	c->out[0].dims[dim] = size;
	for (uint32_t i = 0; i < k->nattr; i++)
		if (k->attrs[i].key[0] != '@' &&
		    strcmp(k->attrs[i].key, "value") != 0)
			op_set(g, c, k->attrs[i].key, k->attrs[i].val);
	const Value *v = op_get(g, k, "value");
	if (v && v->kind == V_LIST && (int64_t)v->list.n == type_numel(t)) {
		/* Row-major: outer blocks, then `size` of dims[dim] rows of
		 * `inner` elements each. */
		int64_t inner = 1, outer = 1;
		for (int i = dim + 1; i < t->rank; i++)
			inner *= t->dims[i];
		for (int i = 0; i < dim; i++)
			outer *= t->dims[i];
		Value *nv = val_list(g->arena, (uint32_t)(outer * size * inner));
		uint32_t n = 0;
		for (int64_t o = 0; o < outer; o++)
			for (int64_t j = 0; j < size * inner; j++)
				nv->list.items[n++] = v->list.items[
					(o * t->dims[dim] + begin) * inner + j];
		op_set(g, c, "value", nv);
	} else if (v && v->kind != V_LIST) {
		op_set(g, c, "value", (Value *)v);   /* a splat */
	}
	s = cache_get(&m->cache, k->id, (uint32_t)dim, (uint32_t)d,
		      (uint32_t)begin, T_CONST + 16 * (uint32_t)size, &fresh);
	s->r = (Ref){c, 0};
	return s->r;
}

/* Rows [begin, begin + size) of x, a value of output k of u holding
 * `rows` rows of the batch along dim (in view v), by a Slice on d. */
static Ref slice_rows(Comm *m, Op *u, uint32_t k, Ref x, int dim,
		      const View *v, int64_t rows, int64_t begin, int64_t size,
		      int d)
{
	const Type *t0 = type_of(x);
	const int64_t *dims = v ? shard_dims(m, v->dims, v->rank, v->dim, rows)
				: t0->dims;
	int rank = v ? v->rank : t0->rank, vd = v ? v->dim : dim;
	if (v) {
		/* x in its view, once for all the slices taken of it */
		bool vfresh;
		Slot *vs = cache_get(&m->cache, x.op->id, x.idx, (uint32_t)d, 0,
				     T_VIEW, &vfresh);
		if (vfresh) {
			Ref y = reshape_to(m, x, dims, v->rank, d, origin_of(m, u));
			vs = cache_get(&m->cache, x.op->id, x.idx, (uint32_t)d, 0,
				       T_VIEW, &vfresh);
			vs->r = y;
		}
		x = vs->r;
	}
	int64_t scale = dims[vd] / rows;
	int64_t *b = arena_alloc(m->ctx->scratch, sizeof(int64_t) * (size_t)rank);
	int64_t *z = arena_alloc(m->ctx->scratch, sizeof(int64_t) * (size_t)rank);
	for (int i = 0; i < rank; i++) {
		b[i] = i == vd ? begin * scale : 0;
		z[i] = i == vd ? size * scale : dims[i];
	}
	bool fresh;
	Slot *s = cache_get(&m->cache, x.op->id, x.idx, (uint32_t)d,
			    (uint32_t)b[vd], T_SPLIT + 16 * (uint32_t)z[vd], &fresh);
	if (fresh) {
		Graph *g = m->g;
		const char *org = origin_of(m, u);
		Op *bc = int_const(m, arena_printf(g->arena, "%s/slice/begin", u->name),
				   b, rank, false, DT_I64, d, org);
		Op *zc = int_const(m, arena_printf(g->arena, "%s/slice/size", u->name),
				   z, rank, false, DT_I64, d, org);
		Op *sl = new_op(m, arena_printf(g->arena, "%s/slice", u->name),
				"Slice", 3, 1, d, org);
		sl->in[0] = (Input){x.op, x.idx, false};
		sl->in[1] = (Input){bc, 0, false};
		sl->in[2] = (Input){zc, 0, false};
		sl->out[0] = type_make(g->arena, t0->dt, rank, z);
		Ref y = {sl, 0};
		if (v)
			y = reshape_to(m, y, shard_dims(m, u->out[k].dims,
							u->out[k].rank, dim, size),
				       u->out[k].rank, d, org);
		m->nsplit++;
		s = cache_get(&m->cache, x.op->id, x.idx, (uint32_t)d,
			      (uint32_t)b[vd], T_SPLIT + 16 * (uint32_t)z[vd], &fresh);
		s->r = y;
	}
	return s->r;
}

/* The batch rows of micro-batch j of a pipelined place p: its replicas
 * j·kk .. j·kk + kk - 1 (kk = n / micro). */
static void micro_range(const Place *p, int j, int64_t *begin, int64_t *size)
{
	int kk = p->n / p->micro;
	*begin = p->begin[j * kk];
	*size = 0;
	for (int i = 0; i < kk; i++)
		*size += p->size[j * kk + i];
}

/* Micro-batch j of output k of u (pipelined, OK_SPLIT along dim), whole
 * on device d: its one replica's output, or its replicas' ConcatV2 (in
 * u's view when its batch slices are contiguous only there, as whole()
 * does for the batch). */
static Ref micro_whole(Comm *m, Op *u, uint32_t k, const Place *p, int j,
		       int d, int dim)
{
	int kk = p->n / p->micro;
	if (kk == 1)
		return transfer(m, (Ref){p->rep[j], k}, d);
	bool fresh;
	Slot *s = cache_get(&m->cache, u->id, k, (uint32_t)d, (uint32_t)j,
			    T_MGATHER, &fresh);
	if (!fresh)
		return s->r;
	Graph *g = m->g;
	const char *org = origin_of(m, u);
	const View *v = batch_view(&m->b, u, k);
	const Type *t = &u->out[k];
	int64_t ax = v ? v->dim : dim, b0, sz;
	micro_range(p, j, &b0, &sz);
	Op *axis = int_const(m, arena_printf(g->arena, "%s/concat/axis", u->name),
			     &ax, 1, true, DT_I32, d, org);
	Op *op = new_op(m, arena_printf(g->arena, "%s/concat", u->name),
			"ConcatV2", (uint32_t)kk + 1, 1, d, org);
	for (int i = 0; i < kk; i++) {
		Ref x = transfer(m, (Ref){p->rep[j * kk + i], k}, d);
		if (v)
			x = reshape_to(m, x, shard_dims(m, v->dims, v->rank, v->dim,
							p->size[j * kk + i]),
				       v->rank, d, org);
		op->in[i] = (Input){x.op, x.idx, false};
	}
	op->in[kk] = (Input){axis, 0, false};
	Ref r = {op, 0};
	if (v) {
		op->out[0] = type_make(g->arena, t->dt, v->rank,
				       shard_dims(m, v->dims, v->rank, v->dim, sz));
		r = reshape_to(m, r, shard_dims(m, t->dims, t->rank, dim, sz),
			       t->rank, d, org);
	} else {
		op->out[0] = type_make(g->arena, t->dt, t->rank,
				       shard_dims(m, t->dims, t->rank, dim, sz));
	}
	m->nconcat++;
	s = cache_get(&m->cache, u->id, k, (uint32_t)d, (uint32_t)j, T_MGATHER,
		      &fresh);
	s->r = r;
	return s->r;
}

/* The first replica of p on device d, or -1. */
static int find_rep(const Place *p, int d)
{
	for (int r = 0; r < p->n; r++)
		if (p->dev[r] == d)
			return r;
	return -1;
}

/* Rows [begin, begin + size) of output k of u (split along dim over its
 * replicas, or whole on its one device) on device d, from the replicas
 * that hold them: each overlapping part sliced where it is (or taken
 * whole when it is a whole shard), sent to d, and concatenated there in
 * row order.  Only the rows d lacks cross a link; a consumer replica on
 * a producer's device keeps its rows there. */
static Ref reshard(Comm *m, Op *u, uint32_t k, int dim, int64_t begin,
		   int64_t size, int d)
{
	const Place *p = &m->pl[u->id];
	bool fresh;
	Slot *s = cache_get(&m->cache, u->id, k, (uint32_t)d, (uint32_t)begin,
			    T_RESHARD + 16 * (uint32_t)size, &fresh);
	if (!fresh)
		return s->r;
	Graph *g = m->g;
	const char *org = origin_of(m, u);
	int64_t B = m->b.batch, end = begin + size;
	int np = p->begin ? p->n : 1, n = 0;
	Input *in = arena_alloc(m->ctx->scratch, sizeof(Input) * (size_t)(np + 1));
	for (int i = 0; i < np; i++) {
		int64_t pb = p->begin ? p->begin[i] : 0, pz = p->begin ? p->size[i] : B;
		int64_t o0 = pb > begin ? pb : begin, o1 = pb + pz < end ? pb + pz : end;
		if (o0 >= o1)
			continue;
		Ref x = {p->rep[i], k};
		if (o0 != pb || o1 != pb + pz)
			x = slice_rows(m, u, k, x, dim, NULL, pz, o0 - pb, o1 - o0, p->dev[i]);
		x = transfer(m, x, d);
		in[n++] = (Input){x.op, x.idx, false};
	}
	if (!n)                  /* the shares cover the batch: not reached */
		return slice_rows(m, u, k, whole(m, u, k, d), dim, NULL, B, begin,
				  size, d);
	Ref r = {in[0].src, in[0].idx};
	if (n > 1) {
		int64_t ax = dim;
		Op *axis = int_const(m, arena_printf(g->arena, "%s/reshard/axis", u->name),
				     &ax, 1, true, DT_I32, d, org);
		Op *op = new_op(m, arena_printf(g->arena, "%s/reshard", u->name),
				"ConcatV2", (uint32_t)n + 1, 1, d, org);
		memcpy(op->in, in, sizeof(Input) * (size_t)n);
		op->in[n] = (Input){axis, 0, false};
		const Type *t = &u->out[k];
		op->out[0] = type_make(g->arena, t->dt, t->rank, t->dims);
		op->out[0].dims[dim] = t->dims[dim] / B * size;
		m->nconcat++;
		r = (Ref){op, 0};
	}
	s = cache_get(&m->cache, u->id, k, (uint32_t)d, (uint32_t)begin,
		      T_RESHARD + 16 * (uint32_t)size, &fresh);
	s->r = r;
	return r;
}

/* Whether views a and b (either NULL: none) are the same. */
static bool same_view(const View *a, const View *b)
{
	if (!a || !b)
		return a == b;
	return a->rank == b->rank && a->dim == b->dim &&
	       memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* Slice r (of the consumer's shard list) of output k of u, along dim
 * (in view v), on the consumer's replica device. */
static Ref slice(Comm *m, Op *u, uint32_t k, int dim, const View *v,
		 const Place *cons, int r)
{
	const Place *p = &m->pl[u->id];
	int d = cons->dev[r];
	if (kind_of(m, u, k) == OK_SPLIT && batch_odim(&m->b, u, k) == dim &&
	    p->part == cons->part)
		return transfer(m, (Ref){p->rep[r], k}, d);
	if (u->opcode == O_Const && !v && type_known(&u->out[0])) {
		int64_t scale = u->out[0].dims[dim] / m->b.batch;
		return const_slice(m, p->rep[0], dim, cons->begin[r] * scale,
				   cons->size[r] * scale, d);
	}
	if ((kind_of(m, u, k) == OK_FULL || kind_of(m, u, k) == OK_LOCAL) &&
	    p->n > 1 && p->dev[nearest(m, p, d)] == d) {
		/* Every replica holds the whole value: slice it in place. */
		return slice_rows(m, u, k, whole(m, u, k, d), dim, v, m->b.batch,
				  cons->begin[r], cons->size[r], d);
	}
	if (p->micro && cons->micro == p->micro && p->begin &&
	    same_view(v, batch_view(&m->b, u, k)) &&
	    kind_of(m, u, k) == OK_SPLIT && batch_odim(&m->b, u, k) == dim) {
		/* Pipelines: micro-batch j whole on the first device of the
		 * consumer's micro-batch j, sliced there (once over a slow
		 * link, then within the stage's machine). */
		int kc = cons->n / cons->micro, j = r / kc;
		int64_t pb, ps, cb, cs;
		micro_range(p, j, &pb, &ps);
		micro_range(cons, j, &cb, &cs);
		if (pb == cb && ps == cs) {
			int d0 = cons->dev[j * kc];
			Ref x = micro_whole(m, u, k, p, j, d0, dim);
			if (cons->size[r] != ps)
				x = slice_rows(m, u, k, x, dim, v, ps,
					       cons->begin[r] - cb, cons->size[r], d0);
			return transfer(m, x, d);
		}
	}
	/* A split producer: each consumer replica gathers just its rows (a
	 * producer on one device that is one of the consumer's, but not
	 * its first, likewise); otherwise the whole value goes once to
	 * the consumer's first device, which splits it and sends the
	 * slices (once over a slow link, then within its machine). */
	if (kind_of(m, u, k) == OK_SPLIT && batch_odim(&m->b, u, k) == dim &&
	    !v && !p->micro && !cons->micro && type_known(&u->out[k]) &&
	    (p->begin || (p->n == 1 && p->dev[0] != cons->dev[0] &&
			  find_rep(cons, p->dev[0]) >= 0)))
		return reshard(m, u, k, dim, cons->begin[r], cons->size[r], d);
	int src;
	if (kind_of(m, u, k) == OK_FULL || kind_of(m, u, k) == OK_LOCAL)
		src = p->dev[nearest(m, p, cons->dev[0])];
	else
		src = cons->dev[0];
	bool fresh;
	uint32_t dkey = (uint32_t)dim + (v ? 256u : 0u);
	Slot *s = cache_get(&m->cache, u->id, k, (uint32_t)cons->part, dkey,
			    T_SPLIT, &fresh);
	if (fresh) {
		Graph *g = m->g;
		const char *org = origin_of(m, u);
		Ref full = whole(m, u, k, src);
		const Type *t0 = type_of(full);
		Type tv;
		if (v) {
			/* Split in the view; reshape the pieces back below. */
			full = reshape_to(m, full, v->dims, v->rank, src, org);
			tv = type_make(g->arena, t0->dt, v->rank, v->dims);
		}
		const Type *t = v ? &tv : t0;
		int vd = v ? v->dim : dim;
		int64_t scale = t->dims[vd] / m->b.batch, ax = vd;
		int64_t *sizes = arena_alloc(m->ctx->scratch,
					     sizeof(int64_t) * (size_t)cons->n);
		bool equal = true;
		for (int i = 0; i < cons->n; i++) {
			sizes[i] = cons->size[i] * scale;
			equal &= cons->size[i] == cons->size[0];
		}
		Op *axis = int_const(m, arena_printf(g->arena, "%s/split/dim", u->name),
				     &ax, 1, true, DT_I32, src, org);
		Op *sp;
		const char *base = arena_printf(g->arena, "%s/split", u->name);
		if (equal) {
			sp = new_op(m, base, "Split", 2, (uint32_t)cons->n, src, org);
			sp->in[0] = (Input){axis, 0, false};
			sp->in[1] = (Input){full.op, full.idx, false};
		} else {
			Op *sz = int_const(m, arena_printf(g->arena, "%s/split/sizes",
							   u->name),
					   sizes, cons->n, false, DT_I64, src, org);
			sp = new_op(m, base, "SplitV", 3, (uint32_t)cons->n, src, org);
			sp->in[0] = (Input){full.op, full.idx, false};
			sp->in[1] = (Input){sz, 0, false};
			sp->in[2] = (Input){axis, 0, false};
		}
		op_set(g, sp, "num_split", val_int(g->arena, cons->n));
		for (int i = 0; i < cons->n; i++) {
			sp->out[i] = type_make(g->arena, t->dt, t->rank, t->dims);
			sp->out[i].dims[vd] = sizes[i];
		}
		m->nsplit++;
		s = cache_get(&m->cache, u->id, k, (uint32_t)cons->part, dkey,
			      T_SPLIT, &fresh);
		s->r = (Ref){sp, 0};
	}
	Ref piece = {s->r.op, (uint32_t)r};
	if (v) {
		const Type *t0 = &u->out[k];
		piece = reshape_to(m, piece, shard_dims(m, t0->dims, t0->rank, dim,
							cons->size[r]),
				   t0->rank, piece.op->id < m->norig ? d :
				   cluster_find_device(m->c, op_ann_str(m->g, piece.op,
									ANN_DEVICE)),
				   origin_of(m, u));
	}
	return transfer(m, piece, d);
}

/* ---- strategies ---------------------------------------------------------- */

static int part_id(Comm *m, int n, const int64_t *size)
{
	for (int i = 0; i < m->nparts; i++)
		if (m->parts[i].n == n &&
		    memcmp(m->parts[i].size, size, sizeof(int64_t) * (size_t)n) == 0)
			return i;
	m->parts = xrealloc(m->parts, sizeof *m->parts * (size_t)(m->nparts + 1));
	m->parts[m->nparts].n = n;
	m->parts[m->nparts].size = arena_alloc(m->ctx->scratch,
					       sizeof(int64_t) * (size_t)n);
	memcpy(m->parts[m->nparts].size, size, sizeof(int64_t) * (size_t)n);
	return m->nparts++;
}

static int find_dev(Comm *m, const Op *op, const Value *v)
{
	int d = plan_device(m->c, v);
	if (d < 0) {
		diag_error(m->ctx->diag, op->loc, "op '%s' has no valid device",
			   op->name);
		m->errors++;
	}
	return d < 0 ? 0 : d;
}

/* Reads op's strategy annotations into its Place. */
static void read_place(Comm *m, Op *op)
{
	Graph *g = m->g;
	Arena *a = m->ctx->scratch;
	Place *p = &m->pl[op->id];
	Value *reps = op_ann(g, op, ANN_REPLICAS);
	const char *sync = op_ann_str(g, op, ANN_SYNC);
	Value *ps = op_ann(g, op, ANN_PS);
	p->part = -1;
	if (reps && reps->kind == V_LIST && sync && strcmp(sync, "ps") == 0 && ps)
		reps = NULL;            /* the update runs on the server */
	if (reps && reps->kind == V_LIST && reps->list.n > 1 &&
	    !m->b.replicable[op->id]) {
		m->nlegal++;
		p->n = 1;
		p->dev = arena_alloc(a, sizeof(int));
		p->dev[0] = find_dev(m, op, reps->list.items[0]);
	} else if (reps && reps->kind == V_LIST && reps->list.n >= 1) {
		int n = (int)reps->list.n;
		p->n = n;
		p->dev = arena_alloc(a, sizeof(int) * (size_t)n);
		for (int r = 0; r < n; r++)
			p->dev[r] = find_dev(m, op, reps->list.items[r]);
		p->dup = op_ann(g, op, ANN_DUP) && op_ann(g, op, ANN_DUP)->kind == V_BOOL &&
			 op_ann(g, op, ANN_DUP)->b;
		p->sync = sync;
		Value *mv = op_ann(g, op, ANN_MICRO);
		p->micro = mv && mv->kind == V_INT && mv->i > 1 && n % mv->i == 0
			   ? (int)mv->i : 0;
		int64_t B = m->b.batch;
		if (B > 0 && n > 1 && !p->dup) {
			p->begin = arena_alloc(a, sizeof(int64_t) * (size_t)n);
			p->size = arena_alloc(a, sizeof(int64_t) * (size_t)n);
			Value *sh = op_ann(g, op, ANN_SHARES);
			int64_t sum = 0;
			for (int r = 0; r < n; r++) {
				if (sh && sh->kind == V_LIST && sh->list.n == (uint32_t)n)
					p->size[r] = sh->list.items[r]->i;
				else
					p->size[r] = B / n + (r < B % n);
				p->begin[r] = sum;
				sum += p->size[r];
			}
			if (sum != B || p->size[n - 1] <= 0) {
				diag_error(m->ctx->diag, op->loc,
					   "the @shares of '%s' must be %d "
					   "positive integers summing to the batch "
					   "(%lld)", op->name, n, (long long)B);
				m->errors++;
			}
			p->part = part_id(m, n, p->size);
		}
	} else {
		p->n = 1;
		p->dev = arena_alloc(a, sizeof(int));
		Value *dv = op_ann(g, op, ANN_DEVICE);
		if (!dv && ps && sync && strcmp(sync, "ps") == 0)
			dv = ps;
		if (!dv && reps && reps->kind == V_LIST && reps->list.n)
			dv = reps->list.items[0];
		if (!dv) {
			diag_error(m->ctx->diag, op->loc,
				   "op '%s' is not placed (run place first)",
				   op->name);
			m->errors++;
			p->dev[0] = 0;
		} else {
			p->dev[0] = find_dev(m, op, dv);
		}
	}
	p->rep = arena_alloc(a, sizeof(Op *) * (size_t)p->n);
}

/* A parameter lives where its update runs: with each replica of a
 * replicated update (AllReduce, SFB), or on the parameter server.  So do
 * the variables holding an optimizer's state (Adam's m and v, momentum's
 * accumulator), which the update reads and writes in place. */
static void params_follow_updates(Comm *m, const uint32_t *topo, uint32_t live)
{
	Graph *g = m->g;
	for (uint32_t j = 0; j < live; j++) {
		Op *u = g->ops[topo[j]];
		if (!op_has_role(g, u, ROLE_UPDATE))
			continue;
		Place *pu = &m->pl[u->id];
		for (uint32_t i = 0; i < u->nin; i++) {
			Op *v = u->in[i].src;
			if (u->in[i].ctrl || !op_has_role(g, v, ROLE_PARAM))
				continue;
			Place *pv = &m->pl[v->id];
			pv->n = pu->n;
			pv->dev = pu->dev;
			pv->begin = pv->size = NULL;
			pv->part = -1;
			pv->dup = false;
			pv->micro = 0;
			pv->rep = arena_alloc(m->ctx->scratch,
					      sizeof(Op *) * (size_t)pu->n);
		}
	}
}

/* Sufficient-factor broadcasting (TAG §4.2.3): a replicated weight
 * gradient G = MatMul(x, dy, transpose_a) whose replicas hold partial
 * sums, read by an update replicated on the same devices, would take an
 * AllReduce of G (K×N).  Gathering the factors x [B, K] and dy [B, N] on
 * every replica instead lets each compute the whole G (G becomes a
 * duplicate): per device (n-1)/n·B·(K+N) elements arrive rather than the
 * ring's 2(n-1)/n·K·N.  Done where that is fewer bytes (comm<sfb>), or
 * where the update asks for it (@sync = sfb). */
static void sfb(Comm *m, const uint32_t *topo, uint32_t live, bool autom)
{
	Graph *g = m->g;
	for (uint32_t j = 0; j < live; j++) {
		Op *u = g->ops[topo[j]];
		Place *pu = &m->pl[u->id];
		if (!op_has_role(g, u, ROLE_UPDATE) || pu->n < 2)
			continue;
		const char *sync = op_ann_str(g, u, ANN_SYNC);
		bool forced = sync && strcmp(sync, "sfb") == 0;
		if (!forced && (!autom || (sync && strcmp(sync, "ring") &&
					   strcmp(sync, "hier"))))
			continue;
		for (uint32_t i = 0; i < u->nin; i++) {
			Op *gr = u->in[i].src;
			Place *pg = &m->pl[gr->id];
			if (u->in[i].ctrl || gr->opcode != O_MatMul || pg->dup ||
			    !pg->begin || !same_devices(pg, pu) ||
			    batch_okind(&m->b, gr, 0) != OK_PARTIAL ||
			    !op_get_bool(g, gr, "transpose_a", false) ||
			    op_get_bool(g, gr, "transpose_b", false))
				continue;
			const Type *x = &gr->in[0].src->out[gr->in[0].idx];
			const Type *dy = &gr->in[1].src->out[gr->in[1].idx];
			double factors = (double)type_numel(x) + (double)type_numel(dy);
			double grad = (double)type_numel(&gr->out[0]);
			if (forced || factors < 2 * grad) {
				pg->dup = true;
				pg->begin = pg->size = NULL;
				pg->part = -1;
				m->nsfb++;
			}
		}
	}
}

static void drop_strategy(Graph *g, Op *op)
{
	op_unset(g, op, ann_key(ANN_REPLICAS));
	op_unset(g, op, ann_key(ANN_SHARES));
	op_unset(g, op, ann_key(ANN_DUP));
	op_unset(g, op, ann_key(ANN_SYNC));
	op_unset(g, op, ann_key(ANN_PS));
	op_unset(g, op, ann_key(ANN_MICRO));
	op_unset(g, op, ann_key(ANN_BUCKET));
}

/* Does replica work shrink with the shard (any input or output sliced)? */
static bool sliced(const Comm *m, const Op *op)
{
	const Place *p = &m->pl[op->id];
	if (!p->begin)
		return false;
	for (uint32_t i = 0; i < op->nin; i++)
		if (m->b.idim[m->b.inbase[op->id] + i] >= 0)
			return true;
	for (uint32_t k = 0; k < op->nout; k++)
		if (batch_okind(&m->b, op, k) == OK_SPLIT)
			return true;
	return false;
}

/* Counts the inputs op's replicas will have: data inputs, and one
 * control input per replica of each control source. */
static uint32_t count_inputs(const Comm *m, const Op *op)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < op->nin; i++)
		n += op->in[i].ctrl ? (uint32_t)m->pl[op->in[i].src->id].n : 1;
	return n;
}

/* Fills the inputs of replica r of op (placed by p) into dst. */
static void wire(Comm *m, Op *op, const Place *p, int r, Input *dst)
{
	Graph *g = m->g;
	int d = p->dev[r];
	uint32_t n = 0;
	int si = m->b.shape_in[op->id];
	uint32_t data = 0;
	for (uint32_t i = 0; i < op->nin; i++) {
		const Input *in = &op->in[i];
		Op *u = in->src;
		const Place *up = &m->pl[u->id];
		if (in->ctrl) {
			for (int q = 0; q < up->n; q++)
				dst[n++] = (Input){up->rep[q], 0, true};
			continue;
		}
		int dim = p->dup ? -1 : m->b.idim[m->b.inbase[op->id] + i];
		Ref x;
		if ((int)data++ == si && sliced(m, op)) {
			/* The replica's own shape, as the shape input wants it. */
			const Type *ot = &p->rep[r]->out[0];
			int64_t v[16];
			for (int j = 0; j < ot->rank && j < 16; j++)
				v[j] = ot->dims[j];
			DType dt = type_known(&u->out[in->idx]) ? u->out[in->idx].dt : DT_I32;
			x = (Ref){int_const(m, arena_printf(g->arena, "%s/shape",
							    p->rep[r]->name),
					    v, ot->rank, false, dt, d,
					    origin_of(m, u)), 0};
		} else if (dim >= 0 && p->begin) {
			x = slice(m, u, in->idx, dim,
				  m->b.iview[m->b.inbase[op->id] + i], p, r);
		} else if (p->n > 1 && kind_of(m, u, in->idx) == OK_PARTIAL &&
			   (same_devices(up, p) || reduces_onto(up, p))) {
			Op **mem = allreduce(m, u, in->idx, p->sync, op);
			int q = 0;
			while (up->dev[q] != d)
				q++;
			x = (Ref){mem[q], 0};
		} else if (kind_of(m, u, in->idx) == OK_LOCAL && up->n == p->n &&
			   up->part == p->part && up->dev[r] == d) {
			x = (Ref){up->rep[r], in->idx};
		} else {
			x = whole(m, u, in->idx, d);
		}
		dst[n++] = (Input){x.op, x.idx, false};
	}
}

/* Places op: itself on one device, or one new op per replica. */
static void materialise(Comm *m, Op *op)
{
	Graph *g = m->g;
	Place *p = &m->pl[op->id];
	uint32_t nin = count_inputs(m, op);
	if (p->n == 1) {
		p->rep[0] = op;
		Input *in = nin ? arena_alloc(g->arena, sizeof(Input) * nin) : NULL;
		wire(m, op, p, 0, in);
		op->in = in;
		op->nin = nin;
		drop_strategy(g, op);
		op_set_ann(g, op, ANN_DEVICE, val_str(g->arena, dev_name(m, p->dev[0])));
		return;
	}
	bool sl = sliced(m, op);
	for (int r = 0; r < p->n; r++) {
		Op *x = new_op(m, arena_printf(g->arena, "%s/rep%d", op->name, r),
			       op->type, nin, op->nout, p->dev[r], origin_of(m, op));
		for (uint32_t i = 0; i < op->nattr; i++)
			if (!op_attr(x, op->attrs[i].key))
				op_set(g, x, op->attrs[i].key, op->attrs[i].val);
		drop_strategy(g, x);
		x->loc = op->loc;
		for (uint32_t k = 0; k < op->nout; k++) {
			const Type *t = &op->out[k];
			x->out[k] = type_make(g->arena, t->dt, t->rank, t->dims);
			if (p->begin && batch_okind(&m->b, op, k) == OK_SPLIT) {
				int d = batch_odim(&m->b, op, k);
				x->out[k].dims[d] = t->dims[d] / m->b.batch * p->size[r];
			}
		}
		Value *pr = val_list(g->arena, 2);
		pr->list.items[0] = val_int(g->arena, r);
		pr->list.items[1] = val_int(g->arena, p->n);
		op_set_ann(g, x, ANN_REPLICA, pr);
		if (p->micro) {
			Value *mb = val_list(g->arena, 2);
			mb->list.items[0] = val_int(g->arena, r / (p->n / p->micro));
			mb->list.items[1] = val_int(g->arena, p->micro);
			op_set_ann(g, x, ANN_MICROBATCH, mb);
		}
		if (sl) {
			Value *sh = val_list(g->arena, 2);
			sh->list.items[0] = val_int(g->arena, p->begin[r]);
			sh->list.items[1] = val_int(g->arena, p->size[r]);
			op_set_ann(g, x, ANN_SHARD, sh);
			if (op->opcode == O_RandomUniform &&
			    batch_okind(&m->b, op, 0) == OK_SPLIT) {
				/* its slice of the whole mask (docs/gir.md) */
				int d = batch_odim(&m->b, op, 0);
				int64_t k = op->out[0].dims[d] / m->b.batch;
				Value *rs = val_list(g->arena, 3);
				rs->list.items[0] = val_int(g->arena, d);
				rs->list.items[1] = val_int(g->arena, k * p->begin[r]);
				rs->list.items[2] = val_int(g->arena, op->out[0].dims[d]);
				op_set_ann(g, x, ANN_RNG_SLICE, rs);
			}
			double f = (double)p->size[r] / (double)m->b.batch;
			op_scale_ann(g, x, ANN_COST, f);
			op_scale_ann(g, x, ANN_FLOPS, f);
		}
		p->rep[r] = x;
	}
	for (int r = 0; r < p->n; r++)
		wire(m, op, p, r, p->rep[r]->in);
	m->nrep += (unsigned)p->n;
}


/* ---- gradient buckets ------------------------------------------------------ */

/* Is every use of every member of collective a an update (a sink), so
 * that joining it with later collectives cannot make a cycle? */
static bool bucketable(Comm *m, const struct ArRec *a)
{
	int n = a->n;
	const Uses *us = graph_uses(m->g);
	const Type *t = &a->u->out[a->k];
	if (a->cap <= 0 || n < 2 || !type_known(t))
		return false;
	for (int r = 0; r < n; r++) {
		uint32_t i = a->mem[r]->id;
		for (uint32_t q = us->start[i]; q < us->start[i + 1]; q++)
			if (!op_has_role(m->g, us->use[q].op, ROLE_UPDATE))
				return false;
	}
	return true;
}

/* One bucket: collectives a[0..k) over the same devices become, on each
 * device, Reshape to 1-D, ConcatV2, one AllReduce, SplitV, Reshape back
 * (PyTorch DDP's flat bucket).  The bucket's AllReduce starts when its
 * last gradient is ready and overlaps the rest of the backward pass. */
static void emit_bucket(Comm *m, const struct ArRec *const *a, uint32_t k)
{
	Graph *g = m->g;
	const Place *p = &m->pl[a[0]->u->id];
	const char *org = origin_of(m, a[0]->u);
	DType dt = a[0]->u->out[a[0]->k].dt;
	int64_t total = 0;
	int64_t *sizes = arena_alloc(m->ctx->scratch, sizeof(int64_t) * k);
	for (uint32_t j = 0; j < k; j++) {
		sizes[j] = type_numel(&a[j]->u->out[a[j]->k]);
		total += sizes[j];
	}
	double bytes = (double)total * dtype_size(dt);
	const char *sync = op_get_str(g, a[0]->mem[0], "algo");
	const char *algo = cost_allreduce_hier(m->ctx->cost, p->dev, a[0]->n, bytes) <
			   cost_allreduce_ring(m->ctx->cost, p->dev, a[0]->n, bytes)
			   ? "hier" : "ring";
	(void)sync;
	int64_t key = m->next_key++;
	const char *base = arena_printf(g->arena, "bucket%lld", (long long)key);
	Value *devs = op_get(g, a[0]->mem[0], "devices");
	for (int r = 0; r < a[0]->n; r++) {
		int d = p->dev[r];
		int64_t zero = 0;
		Op *axis = int_const(m, arena_printf(g->arena, "%s/axis", base), &zero,
				     1, true, DT_I32, d, org);
		Op *cat = new_op(m, arena_printf(g->arena, "%s/concat", base),
				 "ConcatV2", k + 1, 1, d, org);
		for (uint32_t j = 0; j < k; j++) {
			const Input *x = &a[j]->mem[r]->in[0];
			Ref f = reshape_to(m, (Ref){x->src, x->idx}, &sizes[j], 1, d, org);
			cat->in[j] = (Input){f.op, f.idx, false};
		}
		cat->in[k] = (Input){axis, 0, false};
		cat->out[0] = type_make(g->arena, dt, 1, &total);
		Op *ar = new_op(m, arena_printf(g->arena, "%s/ar%d", base, r),
				"AllReduce", 1, 1, d, org);
		ar->in[0] = (Input){cat, 0, false};
		ar->out[0] = cat->out[0];
		op_set(g, ar, "key", val_int(g->arena, key));
		op_set(g, ar, "algo", val_ident(g->arena, algo));
		op_set(g, ar, "devices", devs);
		Op *sz = int_const(m, arena_printf(g->arena, "%s/sizes", base), sizes,
				   (int)k, false, DT_I64, d, org);
		Op *sp = new_op(m, arena_printf(g->arena, "%s/split", base), "SplitV",
				3, k, d, org);
		sp->in[0] = (Input){ar, 0, false};
		sp->in[1] = (Input){sz, 0, false};
		sp->in[2] = (Input){axis, 0, false};
		op_set(g, sp, "num_split", val_int(g->arena, k));
		for (uint32_t j = 0; j < k; j++) {
			Op *old = a[j]->mem[r];
			sp->out[j] = type_make(g->arena, dt, 1, &sizes[j]);
			Ref back = reshape_to(m, (Ref){sp, j}, old->out[0].dims,
					      old->out[0].rank, d, org);
			/* Its uses move to back once every bucket is made:
			 * one scan of the graph, not one per member. */
			if (old->id < m->nback)
				m->back[old->id] = back;
		}
	}
	m->nar -= k - 1;
	m->nbucket++;
}

typedef struct ArKey {
	uint32_t pos, k, i;
} ArKey;

static int arkey_cmp(const void *pa, const void *pb)
{
	const ArKey *a = pa, *b = pb;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* Gradient bucketing (PyTorch DDP, Horovod tensor fusion): collectives
 * whose consumers asked for it (@bucket, comm<bucket>) are taken in the
 * order their gradients are produced (topological order of the
 * producers: the last layer's first, "reverse order" of the
 * parameters) and packed into buckets of the same devices and element
 * type; a bucket closes once it holds at least its cap. */
static void bucketize(Comm *m, const uint32_t *topo, uint32_t live)
{
	uint32_t *pos = xcalloc((size_t)m->norig + 1, sizeof(uint32_t));
	for (uint32_t j = 0; j < live; j++)
		pos[topo[j]] = j;
	ArKey *key = xmalloc(sizeof(ArKey) * ((size_t)m->nars + 1));
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->nars; i++)
		if (bucketable(m, &m->ars[i]))
			key[n++] = (ArKey){pos[m->ars[i].u->id], m->ars[i].k, i};
	if (n > 1)
		qsort(key, n, sizeof(ArKey), arkey_cmp);
	const struct ArRec **v = xmalloc(sizeof(*v) * ((size_t)n + 1));
	for (uint32_t i = 0; i < n; i++)
		v[i] = &m->ars[key[i].i];
	free(key);
	bool *done = xcalloc((size_t)n + 1, sizeof(bool));
	const struct ArRec **b = xmalloc(sizeof(*b) * ((size_t)n + 1));
	m->nback = m->g->nops;
	m->back = xcalloc((size_t)m->nback + 1, sizeof(Ref));
	for (uint32_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		/* Open a bucket at v[i]; fill it with the next collectives of
		 * the same devices and type, in order, up to its cap. */
		const Place *p0 = &m->pl[v[i]->u->id];
		DType dt = v[i]->u->out[v[i]->k].dt;
		double bytes = 0;
		uint32_t k = 0;
		for (uint32_t j = i; j < n && bytes < v[i]->cap; j++) {
			const Place *pj = &m->pl[v[j]->u->id];
			if (done[j] || v[j]->n != v[i]->n || v[j]->u->out[v[j]->k].dt != dt ||
			    memcmp(pj->dev, p0->dev, sizeof(int) * (size_t)v[i]->n))
				continue;
			done[j] = true;
			b[k++] = v[j];
			bytes += cost_out_bytes(m->g, v[j]->u, v[j]->k);
		}
		if (k > 1)
			emit_bucket(m, b, k);
	}
	/* As graph_replace_uses would, for every bucketed AllReduce at once:
	 * data uses of its output 0 and control uses move to its back. */
	Graph *g = m->g;
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		for (uint32_t j = 0; !op->dead && j < op->nin; j++) {
			Input *in = &op->in[j];
			uint32_t s = in->src->id;
			if (s >= m->nback || !m->back[s].op || m->back[s].op == op ||
			    (!in->ctrl && in->idx != 0))
				continue;
			in->src = m->back[s].op;
			if (!in->ctrl)
				in->idx = m->back[s].idx;
		}
	}
	for (uint32_t i = 0; i < m->nback; i++)
		if (m->back[i].op)
			graph_remove_op(g, g->ops[i]);
	graph_invalidate(g);
	free(m->back);
	m->back = NULL;
	free(done);
	free(b);
	free(v);
	free(pos);
}

/* comm<bucket=SIZE>: bytes, with an optional unit (25MiB); false if bad. */
static bool parse_bytes(const char *s, double *out)
{
	char *end;
	double x = strtod(s, &end);
	Unit u = UNIT_BYTES;
	double scale = 1;
	if (end == s || x < 0 ||
	    (*end && (!unit_parse(end, strlen(end), &u, &scale) || u != UNIT_BYTES)))
		return false;
	*out = x * scale;
	return true;
}

int pass_comm(PassCtx *ctx)
{
	Graph *g = ctx->g;
	Comm m = {0};
	m.ctx = ctx;
	m.g = g;
	m.c = g->cluster;
	m.next_key = 1;
	m.norig = g->nops;
	if (!parse_bytes(pass_opt(ctx, "bucket"), &m.bucket)) {
		fprintf(stderr, "pcc: error: comm: bucket=%s is not a size in bytes "
			"(e.g. 25MiB)\n", pass_opt(ctx, "bucket"));
		return EXIT_USAGE;
	}
	/* Over comm's own output, comm would move the Transfers' values
	 * again: a Transfer of a Transfer on one device, which the verifier
	 * then rejects (and -passes=comm wrote it, exit 0).  split's
	 * partitions are comm's input. */
	if (pass_refuse_plan(ctx, "comm runs on a placed training graph, e.g. "
			     "the dump after place or split"))
		return EXIT_BADINPUT;
	const uint32_t *t = graph_topo(g);
	if (!t)
		return pass_internal_error(ctx, "the graph has a cycle");
	uint32_t live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	uint32_t *topo = xmalloc(sizeof(uint32_t) * ((size_t)live + 1));
	memcpy(topo, t, sizeof(uint32_t) * live);
	/* A judge's copy borrows the evaluator's analysis (same op ids). */
	if (ctx->batch && ctx->batch->nops != g->nops) {
		free(topo);
		return pass_internal_error(ctx, "the cached batch analysis is of "
					   "%u ops, the graph has %u", ctx->batch->nops,
					   g->nops);
	}
	if (ctx->batch)
		m.b = *ctx->batch;
	else
		batch_analyze(g, &m.b);
	m.pl = xcalloc((size_t)m.norig + 1, sizeof(Place));
	for (uint32_t j = 0; j < live; j++)
		read_place(&m, g->ops[topo[j]]);
	params_follow_updates(&m, topo, live);
	sfb(&m, topo, live, pass_opt_bool(ctx, "sfb"));
	if (!m.errors)
		for (uint32_t j = 0; j < live; j++)
			materialise(&m, g->ops[topo[j]]);
	if (!m.errors)
		bucketize(&m, topo, live);
	/* Replicated originals are replaced; Consts whose every use now
	 * reads a copy go too. */
	if (!m.errors) {
		for (uint32_t j = 0; j < live; j++) {
			Op *op = g->ops[topo[j]];
			if (m.pl[op->id].n > 1)
				graph_remove_op(g, op);
		}
		/* Removing invalidates the consumer lists: collect first. */
		const Uses *us = graph_uses(g);
		uint32_t nunused = 0;
		for (uint32_t j = 0; j < live; j++) {
			Op *op = g->ops[topo[j]];
			if (!op->dead && op->opcode == O_Const &&
			    us->start[op->id] == us->start[op->id + 1])
				topo[nunused++] = op->id;
		}
		for (uint32_t j = 0; j < nunused; j++)
			graph_remove_op(g, g->ops[topo[j]]);
	}
	if (ctx->report && !m.errors)
		fprintf(ctx->report,
			"comm: %u replicas, %u transfers, %u splits, %u concats, "
			"%u sums, %u allreduces (%u buckets), %u gradients by "
			"sufficient factors%s\n",
			m.nrep, m.nxfer, m.nsplit, m.nconcat, m.nsum, m.nar, m.nbucket,
			m.nsfb,
			m.nlegal ? arena_printf(ctx->scratch,
				   "; %u ops that cannot be replicated kept on "
				   "one device", m.nlegal) : "");
	free(m.cache.s);
	free(m.ars);
	free(m.parts);
	free(m.pl);
	free(topo);
	if (!ctx->batch)
		batch_free(&m.b);
	return m.errors ? EXIT_BADINPUT : EXIT_OK;
}
