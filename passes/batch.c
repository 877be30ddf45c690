/* batch.c — where the batch lives in every tensor (plan.h).
 *
 * Data parallelism splits the batch: replica r of an op processes the
 * slice [begin_r, begin_r + size_r) of the batch (HeteroG §2.2, TAG §4.3.1).
 * Whether that is possible, and what the replica's outputs then are,
 * depends on the op: element-wise ops, convolutions and MatMul rows keep
 * the batch (their outputs are slices: TAG's "splittable with
 * concatenation"); weight gradients contract it (partial sums: "splittable
 * with summation"); a Mean over the batch cannot be computed from slices
 * at all.  This analysis follows the batch forward from the Placeholders
 * (@batch_dim) through the op table's ops, in one topological sweep:
 * for every output its kind and batch dimension, for every input the
 * dimension a replica slices it along (a batch-carrying input, or a
 * batch-sized constant operand of an element-wise op) or -1 for "whole"
 * (weights), and whether the op may be replicated.
 *
 * A batch dimension of size D = k·batch (a [batch·seq, hidden] reshape)
 * splits into k·size_r rows per replica; a dimension not a multiple of the
 * batch never carries it.  Batch normalisation in a replica uses the
 * replica's own statistics, as every data-parallel framework does
 * (docs/plan.md). */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#define MAXR 16

typedef struct Ctx {
	Graph *g;
	BatchInfo *b;
	const Op *op;
	uint32_t ob, ib;         /* slots of op */
	bool update;             /* an optimizer update: never re-splits */
	const int8_t *src;       /* per op: the dimension a RandomUniform
				  * draws its batch slice along, or -1
				  * (split_sources); NULL: none */
} Ctx;

/* Where the batch is in an input: the dimension of its shape, and its
 * view (NULL: contiguous in its own shape). */
typedef struct BIn {
	int dim;
	const View *v;
} BIn;

static const Type *out_t(const Ctx *c, uint32_t k)
{
	return k < c->op->nout && type_known(&c->op->out[k]) ? &c->op->out[k]
							      : NULL;
}

static const Type *in_t(const Ctx *c, uint32_t i)
{
	const Input *in = &c->op->in[i];
	if (in->ctrl || in->idx >= in->src->nout ||
	    !type_known(&in->src->out[in->idx]))
		return NULL;
	return &in->src->out[in->idx];
}

static BIn bin(const Ctx *c, uint32_t i)
{
	const Input *in = &c->op->in[i];
	if (i >= c->op->nin || in->ctrl)
		return (BIn){-1, NULL};
	uint32_t s = c->b->outbase[in->src->id] + in->idx;
	/* Slices, or the whole batch gathered at an op that could not be
	 * split: consumers re-split it (comm's Split of a whole value). */
	if (c->b->okind[s] != OK_SPLIT &&
	    (c->b->okind[s] != OK_FULL || c->b->odim[s] < 0 || c->update))
		return (BIn){-1, NULL};
	return (BIn){c->b->odim[s], c->b->view[s]};
}

static bool in_local(const Ctx *c, uint32_t i)
{
	const Input *in = &c->op->in[i];
	return !in->ctrl &&
	       c->b->okind[c->b->outbase[in->src->id] + in->idx] == OK_LOCAL;
}

/* Position in op->in of data input j, or UINT32_MAX. */
static uint32_t data_pos(const Op *op, uint32_t j)
{
	for (uint32_t i = 0; i < op->nin; i++)
		if (!op->in[i].ctrl && j-- == 0)
			return i;
	return UINT32_MAX;
}

static int ints(const Ctx *c, uint32_t j, int64_t *v, int max)
{
	return op_input_ints(c->g, c->op, j, v, max);
}

/* Does dimension d of t carry a batch of size B (a multiple of it)? */
static bool batch_sized(const Type *t, int d, int64_t B)
{
	return t && d >= 0 && d < t->rank && B > 0 && t->dims[d] >= B &&
	       t->dims[d] % B == 0;
}

static bool same_dims(const int64_t *a, int ra, const int64_t *b, int rb)
{
	/* a scalar's dims may be NULL: memcmp must not see it */
	return ra == rb && (ra == 0 || memcmp(a, b, sizeof(int64_t) * (size_t)ra) == 0);
}

static bool same_view(const View *a, const View *b)
{
	if (!a || !b)
		return a == b;
	return a->dim == b->dim && same_dims(a->dims, a->rank, b->dims, b->rank);
}

static View *mkview(Ctx *c, int rank, const int64_t *dims, int dim)
{
	View *v = arena_alloc(c->b->arena, sizeof *v);
	v->rank = rank;
	v->dim = dim;
	v->dims = arena_alloc(c->b->arena, sizeof(int64_t) * (size_t)(rank + 1));
	memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
	return v;
}

/* The view dimensions after the batch whose sizes multiply to n (the
 * columns of a matrix, the reduced last axis): their first index, or -1. */
static int view_tail(const View *v, int64_t n)
{
	int64_t p = 1;
	for (int i = v->rank - 1; i > v->dim; i--) {
		p *= v->dims[i];
		if (p == n)
			return i;
		if (p > n)
			break;
	}
	return -1;
}

/* v with the dimensions from index i on replaced by one of size n (or
 * dropped when n < 0). */
static const View *view_replace(Ctx *c, const View *v, int i, int64_t n)
{
	View *w = mkview(c, i + (n >= 0), v->dims, v->dim);
	if (n >= 0)
		w->dims[i] = n;
	return w;
}

/* v with its trailing dimensions of product n replaced by m (dropped when
 * m < 0); NULL when v has no such tail.  NULL stays NULL. */
static const View *view_last(Ctx *c, const View *v, int64_t n, int64_t m,
			     bool *ok)
{
	if (!v)
		return NULL;
	int i = view_tail(v, n);
	*ok &= i >= 0;
	return i >= 0 ? view_replace(c, v, i, m) : NULL;
}

static void set_out(Ctx *c, uint32_t k, OutKind kind, int dim, const View *v)
{
	c->b->okind[c->ob + k] = (uint8_t)kind;
	c->b->odim[c->ob + k] = (int8_t)(kind == OK_SPLIT ? dim : -1);
	c->b->view[c->ob + k] = kind == OK_SPLIT ? v : NULL;
}

/* Outputs split along dim (in view v) where they have output 0's size
 * there; an output without that dimension is local to its replica. */
static bool all_split(Ctx *c, int dim, const View *v)
{
	const Type *o0 = out_t(c, 0);
	if (c->op->nout && !batch_sized(o0, dim, c->b->batch))
		return false;
	for (uint32_t k = 0; k < c->op->nout; k++) {
		const Type *o = out_t(c, k);
		bool split = v ? o && same_dims(o->dims, o->rank, o0->dims, o0->rank)
			       : batch_sized(o, dim, c->b->batch) &&
				 o->dims[dim] == o0->dims[dim];
		set_out(c, k, split ? OK_SPLIT : OK_LOCAL, dim, v);
	}
	return true;
}

static void slice_in(Ctx *c, uint32_t i, int dim, const View *v)
{
	c->b->idim[c->ib + i] = (int8_t)dim;
	c->b->iview[c->ib + i] = v;
}

/* Data input j must carry the batch at dim, in view v; slice it there. */
static bool need(Ctx *c, uint32_t j, int dim, const View *v)
{
	uint32_t i = data_pos(c->op, j);
	BIn x = i == UINT32_MAX ? (BIn){-1, NULL} : bin(c, i);
	if (x.dim != dim || !same_view(x.v, v))
		return false;
	slice_in(c, i, dim, v);
	return true;
}

/* Only plain batches (no view) allowed for input j at dim 0. */
static bool batch0(Ctx *c, uint32_t j)
{
	return need(c, j, 0, NULL) && all_split(c, 0, NULL);
}

/* FusedBatchNormV3 (grad: FusedBatchNormGradV3) whose x carries the batch
 * in its channel dimension, as Keras's layer norm lays it out ([1,
 * batch·tokens, features, 1], NCHW: a channel per token): statistics are
 * per channel, so every [C] operand (scale, offset, the statistics and
 * reserve spaces; not the empty ones) slices along its dimension 0 and
 * every output follows: y (x_backprop) at the channel, the [C] outputs at
 * 0, the empty reserve space local.  False: not this layout (the caller
 * tries the batch in dimension 0). */
static bool fbn_channel(Ctx *c, bool grad)
{
	const Op *op = c->op;
	uint32_t xi = data_pos(op, grad ? 1 : 0);
	const Type *x = xi == UINT32_MAX ? NULL : in_t(c, xi);
	const char *df = op_get_str(c->g, op, "data_format");
	int ch = df && strncmp(df, "NCHW", 4) == 0 ? 1 : 3;
	if (!x || x->rank != 4 || bin(c, xi).dim != ch || bin(c, xi).v ||
	    !batch_sized(x, ch, c->b->batch))
		return false;
	int64_t C = x->dims[ch];
	uint32_t first = grad ? 2 : 1, nin = 0;
	while (data_pos(op, nin) != UINT32_MAX)
		nin++;
	for (uint32_t j = first; j < nin; j++) {
		uint32_t i = data_pos(op, j);
		const Type *t = in_t(c, i);
		/* [C] operands whole (a Const) or sliced at 0 (statistics of
		 * this layout), never a replica's own [C] values */
		if (!t || t->rank != 1 || (t->dims[0] != C && t->dims[0] != 0) ||
		    (t->dims[0] == C && (in_local(c, i) ||
					 (bin(c, i).dim >= 0 && bin(c, i).dim != 0))))
			return false;
	}
	if (grad && !need(c, 0, ch, NULL))
		return false;
	slice_in(c, xi, ch, NULL);
	for (uint32_t j = first; j < nin; j++) {
		uint32_t i = data_pos(op, j);
		if (in_t(c, i)->dims[0] == C)
			slice_in(c, i, 0, NULL);
	}
	set_out(c, 0, OK_SPLIT, ch, NULL);
	for (uint32_t k = 1; k < op->nout; k++) {
		const Type *o = out_t(c, k);
		set_out(c, k, o && o->rank == 1 && o->dims[0] == C ? OK_SPLIT : OK_LOCAL,
			0, NULL);
	}
	return true;
}

/* Element-wise with broadcasting (trailing dimensions aligned): every
 * batch-carrying input must land on one output dimension p; other inputs
 * full-size along p (a batch-sized constant) are sliced too, size-1 ones
 * broadcast.  Viewed inputs must have the output's shape. */
static bool elementwise(Ctx *c)
{
	const Type *o = out_t(c, 0);
	if (!o)
		return false;
	int R = o->rank, p = -1;
	const View *V = NULL;
	bool first = true;
	for (uint32_t i = 0; i < c->op->nin; i++) {
		BIn x = bin(c, i);
		const Type *t = in_t(c, i);
		if (x.dim < 0 || !t)
			continue;
		int q = R - t->rank + x.dim;
		if (q < 0 || (p >= 0 && q != p) || o->dims[q] != t->dims[x.dim] ||
		    (!first && !same_view(V, x.v)) ||
		    (x.v && !same_dims(t->dims, t->rank, o->dims, R)))
			return false;
		p = q;
		V = x.v;
		first = false;
	}
	if (p < 0 || !batch_sized(o, p, c->b->batch))
		return false;
	for (uint32_t i = 0; i < c->op->nin; i++) {
		const Type *t = in_t(c, i);
		if (!t)
			continue;
		int q = p - (R - t->rank);
		if (q < 0 || t->dims[q] != o->dims[p] || o->dims[p] <= 1)
			continue;
		if (V && bin(c, i).dim < 0 && !same_dims(t->dims, t->rank, o->dims, R))
			return false;
		slice_in(c, i, q, V);
	}
	return all_split(c, p, V);
}

/* MatMul / BatchMatMul: the batch may be in a's rows (output rows), in
 * b's columns (output columns), or contracted on both sides (a weight
 * gradient: partial sums); batched matmul also in a leading dimension. */
static bool matmul(Ctx *c, bool batched, bool rows_only)
{
	uint32_t ia = data_pos(c->op, 0), ib = data_pos(c->op, 1);
	const Type *a = in_t(c, ia), *bt = in_t(c, ib), *o = out_t(c, 0);
	if (!a || !bt || !o || a->rank < 2 || bt->rank < 2)
		return false;
	bool ta = op_get_bool(c->g, c->op, batched ? "adj_x" : "transpose_a", false);
	bool tb = op_get_bool(c->g, c->op, batched ? "adj_y" : "transpose_b", false);
	int ra = a->rank, rb = bt->rank;
	BIn xa = bin(c, ia), xb = bin(c, ib);
	int rows = ra - (ta ? 1 : 2), acon = ra - (ta ? 2 : 1);
	int cols = rb - (tb ? 2 : 1), bcon = rb - (tb ? 1 : 2);
	if (xa.dim >= 0 && xa.dim < ra - 2) {
		/* A leading (batched) dimension: element-wise on those. */
		if (xa.v || xb.v || (xb.dim >= 0 && xb.dim != rb - ra + xa.dim))
			return false;
		slice_in(c, ia, xa.dim, NULL);
		if (xb.dim >= 0)
			slice_in(c, ib, xb.dim, NULL);
		return all_split(c, o->rank - ra + xa.dim, NULL);
	}
	if (xa.dim == rows && xb.dim < 0) {
		bool ok = !xa.v || (!ta && ra == 2);
		/* Rows of a view whose trailing dimensions make K. */
		const View *v = ok ? view_last(c, xa.v, a->dims[ra - 1],
					       o->dims[o->rank - 1], &ok) : NULL;
		if (!ok)
			return false;
		slice_in(c, ia, xa.dim, xa.v);
		return all_split(c, o->rank - 2, v);
	}
	if (rows_only)          /* a fused bias add is per column, once */
		return false;
	if (xb.dim == cols && xa.dim < 0 && !xb.v) {
		slice_in(c, ib, xb.dim, NULL);
		return all_split(c, o->rank - 1, NULL);
	}
	if (xa.dim == acon && xb.dim == bcon) {
		/* Contracted rows must pair up: the same views but the last
		 * dimension (both plain, or both rows of one view). */
		if (!xa.v != !xb.v)
			return false;
		if (xa.v) {
			bool ok = ra == 2 && rb == 2;
			const View *ra_ = ok ? view_last(c, xa.v, a->dims[1], 1, &ok) : NULL;
			const View *rb_ = ok ? view_last(c, xb.v, bt->dims[1], 1, &ok) : NULL;
			if (!ok || !same_view(ra_, rb_))
				return false;
		}
		slice_in(c, ia, xa.dim, xa.v);
		slice_in(c, ib, xb.dim, xb.v);
		set_out(c, 0, OK_PARTIAL, -1, NULL);
		return true;
	}
	return false;
}

static bool reduce(Ctx *c)
{
	uint32_t x = data_pos(c->op, 0);
	BIn b = bin(c, x);
	const Type *t = in_t(c, x);
	int64_t ax[MAXR];
	int n = ints(c, 1, ax, MAXR);
	if (!t || n < 0)
		return false;
	bool keep = op_get_bool(c->g, c->op, "keep_dims", false), hit = false;
	int before = 0;
	bool last_only = n == 1 && (ax[0] == t->rank - 1 || ax[0] == -1);
	for (int i = 0; i < n; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + t->rank : ax[i];
		hit |= a == b.dim;
		before += a < b.dim;
	}
	slice_in(c, x, b.dim, b.v);
	if (hit) {
		if (c->op->opcode != O_Sum)
			return false;
		set_out(c, 0, OK_PARTIAL, -1, NULL);
		return true;
	}
	/* With a view: over the last dimension only, which the view's
	 * trailing dimensions make up. */
	bool ok = !b.v || last_only;
	const View *v = ok ? view_last(c, b.v, t->dims[t->rank - 1],
				       keep ? 1 : -1, &ok) : NULL;
	if (!ok)
		return false;
	return all_split(c, keep ? b.dim : b.dim - before, v);
}

/* Reshape: in the input's view (its own shape when plain) the batch is at
 * dimension d with the dimensions before it multiplying to A.  An output
 * dimension j with the same prefix product A and a size that is a
 * multiple of the batch holds it contiguously (slices of the input are
 * slices of the output); otherwise the output dimension j that the
 * batch falls inside holds it, and the output keeps the input's view. */
static bool reshape(Ctx *c)
{
	uint32_t x = data_pos(c->op, 0);
	BIn b = bin(c, x);
	const Type *t = in_t(c, x), *o = out_t(c, 0);
	int64_t sh[MAXR];
	if (!t || !o || ints(c, 1, sh, MAXR) < 0)
		return false;
	/* A batch-carrying dimension of size k·batch is (batch, k), the
	 * batch outer (every rule that makes one keeps slices contiguous):
	 * refine it so the view's batch dimension is exactly the batch. */
	const View *v0 = b.v ? b.v : mkview(c, t->rank, t->dims, b.dim);
	int64_t B = c->b->batch, k = v0->dims[v0->dim] / B;
	View *vin = mkview(c, v0->rank + (k > 1), v0->dims, v0->dim);
	if (k > 1) {
		vin->dims[vin->dim] = B;
		vin->dims[vin->dim + 1] = k;
		memcpy(vin->dims + vin->dim + 2, v0->dims + v0->dim + 1,
		       sizeof(int64_t) * (size_t)(v0->rank - v0->dim - 1));
	}
	int64_t A = 1, P = 1;
	for (int i = 0; i < vin->dim; i++)
		A *= vin->dims[i];
	int64_t AB = A * vin->dims[vin->dim];
	if (A <= 0 || AB <= 0)
		return false;    /* an empty tensor: nothing to split */
	slice_in(c, x, b.dim, b.v);
	c->b->shape_in[c->op->id] = 1;
	for (int j = 0; j < o->rank && P <= A; j++) {
		if (P == A && batch_sized(o, j, B))
			return all_split(c, j, NULL);
		P *= o->dims[j];
	}
	P = 1;
	for (int j = 0; j < o->rank; j++) {
		int64_t next = P * o->dims[j];
		if (P > 0 && P <= A && A % P == 0 && next >= AB && next % AB == 0)
			return all_split(c, j, vin);
		P = next;
		if (P > A)
			break;
	}
	return false;
}

static bool plain(Ctx *c)
{
	for (uint32_t i = 0; i < c->op->nin; i++)
		if (bin(c, i).v)
			return false;
	return true;
}

static bool transpose(Ctx *c)
{
	uint32_t x = data_pos(c->op, 0);
	int d = bin(c, x).dim;
	int64_t perm[MAXR];
	int n = ints(c, 1, perm, MAXR);
	for (int j = 0; j < n; j++)
		if (perm[j] == d) {
			slice_in(c, x, d, NULL);
			return all_split(c, j, NULL);
		}
	return false;
}

/* ArgMax(x, dimension) drops an axis other than the batch's;
 * ExpandDims(x, dim) inserts one. */
static bool axis_op(Ctx *c, bool insert)
{
	uint32_t x = data_pos(c->op, 0);
	int d = bin(c, x).dim;
	const Type *t = in_t(c, x);
	int64_t a;
	if (!t || ints(c, 1, &a, 1) != 1)
		return false;
	if (a < 0)
		a += t->rank + insert;
	if (!insert && a == d)
		return false;
	slice_in(c, x, d, NULL);
	return all_split(c, insert ? d + (a <= d) : d - (a < d), NULL);
}

static bool squeeze(Ctx *c)
{
	uint32_t x = data_pos(c->op, 0);
	const Type *t = in_t(c, x);
	int d = bin(c, x).dim, before = 0;
	if (!t || t->dims[d] == 1)
		return false;
	for (int i = 0; i < d; i++)
		before += t->dims[i] == 1;
	const Value *sd = op_get(c->g, c->op, "squeeze_dims");
	if (sd && sd->kind == V_LIST && sd->list.n) {
		before = 0;
		for (uint32_t i = 0; i < sd->list.n; i++) {
			int64_t a = sd->list.items[i]->i;
			before += (a < 0 ? a + t->rank : a) < d;
		}
	}
	slice_in(c, x, d, NULL);
	return all_split(c, d - before, NULL);
}

static bool concat(Ctx *c)
{
	uint32_t nd = 0;
	for (uint32_t i = 0; i < c->op->nin; i++)
		nd += !c->op->in[i].ctrl;
	int64_t a;
	const Type *o = out_t(c, 0);
	if (nd < 2 || !o || ints(c, nd - 1, &a, 1) != 1)
		return false;
	if (a < 0)
		a += o->rank;
	int p = -1;
	for (uint32_t j = 0; j + 1 < nd; j++) {
		int d = bin(c, data_pos(c->op, j)).dim;
		if (d >= 0 && ((p >= 0 && d != p) || d == a))
			return false;
		if (d >= 0)
			p = d;
	}
	if (p < 0 || !batch_sized(o, p, c->b->batch))
		return false;
	for (uint32_t j = 0; j + 1 < nd; j++) {
		const Type *t = in_t(c, data_pos(c->op, j));
		if (t && t->rank == o->rank && t->dims[p] == o->dims[p])
			slice_in(c, data_pos(c->op, j), p, NULL);
	}
	return all_split(c, p, NULL);
}

static bool pack(Ctx *c)
{
	int64_t a = op_get_int(c->g, c->op, "axis", 0);
	const Type *o = out_t(c, 0);
	if (!o)
		return false;
	if (a < 0)
		a += o->rank;
	int p = -1;
	for (uint32_t i = 0; i < c->op->nin; i++) {
		int d = bin(c, i).dim;
		if (d < 0 && !c->op->in[i].ctrl)
			return false;
		if (d >= 0) {
			if (p >= 0 && d != p)
				return false;
			p = d;
			slice_in(c, i, d, NULL);
		}
	}
	return p >= 0 && all_split(c, p + (a <= p), NULL);
}

/* Slice(x, begin, size), Pad(x, paddings), Tile(x, multiples), Roll(x,
 * shift, axis): the batch dimension must be taken whole, unpadded,
 * untiled, unrolled. */
static bool slice_like(Ctx *c)
{
	uint32_t x = data_pos(c->op, 0);
	int d = bin(c, x).dim;
	const Type *t = in_t(c, x);
	int64_t v[2 * MAXR], w[MAXR];
	if (!t || d < 0 || d >= t->rank)   /* the batch only in another input */
		return false;
	switch (c->op->opcode) {
	case O_Slice:
		if (ints(c, 1, v, MAXR) != t->rank || ints(c, 2, w, MAXR) != t->rank ||
		    v[d] != 0 || (w[d] != -1 && w[d] != t->dims[d]))
			return false;
		c->b->shape_in[c->op->id] = 2;
		break;
	case O_Pad:
	case O_PadV2:      /* constant_values: a scalar, whole in every replica */
	case O_MirrorPad:
		if (ints(c, 1, v, 2 * MAXR) != 2 * t->rank || v[2 * d] || v[2 * d + 1])
			return false;
		break;
	case O_Tile:
		if (ints(c, 1, v, MAXR) != t->rank || v[d] != 1)
			return false;
		break;
	case O_Roll:      /* shift and axis: whole in every replica */
		if (t->rank > MAXR || !op_roll_shifts(c->g, c->op, v, MAXR) || v[d])
			return false;
		break;
	default:
		return false;
	}
	slice_in(c, x, d, NULL);
	return all_split(c, d, NULL);
}

/* GatherV2(params, indices, axis): batch-carrying indices (an embedding
 * lookup) put the batch at axis + its dimension; batch-carrying params
 * gathered along another axis (qkv[0] of an attention's packed
 * projections) keep it, shifted by the indices' rank when the axis is
 * before it. */
static bool gather(Ctx *c)
{
	uint32_t pi = data_pos(c->op, 0), ii = data_pos(c->op, 1);
	int64_t a;
	int d = bin(c, ii).dim, dp = bin(c, pi).dim;
	const Type *p = in_t(c, pi), *it = in_t(c, ii);
	if (!p || (dp >= 0) == (d >= 0) || ints(c, 2, &a, 1) != 1)
		return false;
	if (a < 0)
		a += p->rank;
	if (dp >= 0) {
		if (a == dp || !it)
			return false;
		slice_in(c, pi, dp, NULL);
		return all_split(c, a > dp ? dp : dp - 1 + it->rank, NULL);
	}
	slice_in(c, ii, d, NULL);
	return all_split(c, (int)a + d, NULL);
}

/* StridedSlice(x, begin, end, strides) taking the batch dimension whole
 * with stride 1; shrunk dimensions before it move it left.  Ellipsis and
 * new-axis masks are not followed. */
static bool strided_slice(Ctx *c)
{
	uint32_t x = data_pos(c->op, 0);
	int d = bin(c, x).dim;
	const Type *t = in_t(c, x);
	int64_t b[MAXR], e[MAXR], st[MAXR];
	if (!t)
		return false;
	int nb = ints(c, 1, b, MAXR), ne = ints(c, 2, e, MAXR),
	    ns = ints(c, 3, st, MAXR);
	int64_t bm = op_get_int(c->g, c->op, "begin_mask", 0),
		em = op_get_int(c->g, c->op, "end_mask", 0),
		sm = op_get_int(c->g, c->op, "shrink_axis_mask", 0);
	if (nb < 0 || nb != ne || nb != ns ||
	    op_get_int(c->g, c->op, "ellipsis_mask", 0) ||
	    op_get_int(c->g, c->op, "new_axis_mask", 0))
		return false;
	int before = 0;
	for (int i = 0; i < d && i < nb; i++)
		before += (int)(sm >> i & 1);
	if (d < nb && ((sm >> d & 1) || st[d] != 1 ||
		       (!(bm >> d & 1) && b[d] != 0) ||
		       (!(em >> d & 1) && e[d] < t->dims[d])))
		return false;
	slice_in(c, x, d, NULL);
	return all_split(c, d - before, NULL);
}

/* Unpack(x) along axis: every output keeps the batch unless it is the
 * axis unpacked. */
static bool unpack(Ctx *c)
{
	uint32_t x = data_pos(c->op, 0);
	int d = bin(c, x).dim;
	const Type *t = in_t(c, x);
	int64_t a = op_get_int(c->g, c->op, "axis", 0);
	if (!t)
		return false;
	if (a < 0)
		a += t->rank;
	if (a == d)
		return false;
	slice_in(c, x, d, NULL);
	return all_split(c, d - (a < d), NULL);
}

/* UnsortedSegmentSum(data, segment_ids, num_segments) with data and ids
 * split along their leading dimension (an embedding's gradient): each
 * replica sums its own rows, a partial sum. */
static bool segment_sum(Ctx *c)
{
	if (!need(c, 0, 0, NULL) || !need(c, 1, 0, NULL))
		return false;
	set_out(c, 0, OK_PARTIAL, -1, NULL);
	return true;
}

/* TopKV2(x, k) along the last dimension: any other keeps the batch. */
static bool topk(Ctx *c)
{
	uint32_t x = data_pos(c->op, 0);
	int d = bin(c, x).dim;
	const Type *t = in_t(c, x);
	if (!t || d == t->rank - 1)
		return false;
	slice_in(c, x, d, NULL);
	return all_split(c, d, NULL);
}

/* Split(split_dim, value) / SplitV(value, size_splits, split_dim). */
static bool split(Ctx *c)
{
	bool v = c->op->opcode == O_SplitV;
	uint32_t x = data_pos(c->op, v ? 0 : 1);
	int d = bin(c, x).dim;
	const Type *t = in_t(c, x);
	int64_t a;
	if (!t || ints(c, v ? 2 : 0, &a, 1) != 1)
		return false;
	if (a < 0)
		a += t->rank;
	if (a == d)
		return false;
	slice_in(c, x, d, NULL);
	return all_split(c, d, NULL);
}

/* The channel dimension of BiasAdd's value / BiasAddGrad's input. */
static int channel_dim(const Ctx *c, int rank)
{
	const char *f = op_get_str(c->g, c->op, "data_format");
	return f && strcmp(f, "NCHW") == 0 ? 1 : rank - 1;
}

/* Softmax cross-entropy: logits [N, C] and labels ([N] sparse, [N, C]
 * dense) split along N in matching views; loss [N] and backprop [N, C]
 * follow. */
static bool xent(Ctx *c)
{
	uint32_t il = data_pos(c->op, 0), iy = data_pos(c->op, 1);
	BIn l = bin(c, il), y = bin(c, iy);
	const Type *lt = in_t(c, il);
	if (l.dim != 0 || y.dim != 0 || !lt || lt->rank != 2)
		return false;
	bool sparse = c->op->opcode == O_SparseSoftmaxCrossEntropyWithLogits;
	bool ok = true;
	const View *loss = view_last(c, l.v, lt->dims[1], -1, &ok);
	if (!ok || !same_view(y.v, sparse ? loss : l.v))
		return false;
	slice_in(c, il, 0, l.v);
	slice_in(c, iy, 0, y.v);
	if (!batch_sized(out_t(c, 0), 0, c->b->batch))
		return false;
	set_out(c, 0, OK_SPLIT, 0, loss);
	if (c->op->nout > 1)
		set_out(c, 1, OK_SPLIT, 0, l.v);
	return true;
}

/* May an op the table does not know be split along output dimension d?
 * Its @split_dims, when it has them, must list d (aten.roll over the
 * spatial dimensions splits over the batch, not over what it rolls). */
static bool may_split(const Ctx *c, int d)
{
	const Value *sd = op_ann(c->g, c->op, ANN_SPLIT_DIMS);
	if (!sd || sd->kind != V_LIST)
		return true;
	for (uint32_t i = 0; i < sd->list.n; i++)
		if (sd->list.items[i]->kind == V_INT && sd->list.items[i]->i == d)
			return true;
	return false;
}

/* Ops the op table does not know: @split, one category or one per
 * output, says what replicas compute: concat outputs are slices (of
 * dimension 0, or of the shape of the batch-carrying inputs), sum
 * outputs partial sums; none forbids replication. */
static bool opaque(Ctx *c)
{
	const Op *op = c->op;
	const Value *sv = op_ann(c->g, op, ANN_SPLIT);
	const Type *ref = NULL;
	BIn rb = {-1, NULL};
	for (uint32_t i = 0; i < op->nin; i++) {
		BIn x = bin(c, i);
		if (x.dim < 0)
			continue;
		if (rb.dim >= 0 && (x.dim != rb.dim || !same_view(x.v, rb.v)))
			return false;
		rb = x;
		ref = in_t(c, i);
		slice_in(c, i, x.dim, x.v);
	}
	for (uint32_t k = 0; k < op->nout; k++) {
		SplitCat sc = SPLIT_NONE;
		const Value *e = sv && sv->kind == V_LIST
				 ? (k < sv->list.n ? sv->list.items[k] : NULL) : sv;
		if (!e || !(e->kind == V_IDENT || e->kind == V_STR) ||
		    !splitcat_parse(e->s, &sc) || sc == SPLIT_NONE)
			return false;
		const Type *o = out_t(c, k);
		if (sc == SPLIT_SUM)
			set_out(c, k, OK_PARTIAL, -1, NULL);
		else if (!may_split(c, rb.dim))
			return false;
		else if (o && ref && same_dims(o->dims, o->rank, ref->dims, ref->rank))
			set_out(c, k, OK_SPLIT, rb.dim, rb.v);
		else if (!rb.v && batch_sized(o, rb.dim, c->b->batch))
			set_out(c, k, OK_SPLIT, rb.dim, NULL);
		else
			set_out(c, k, OK_LOCAL, -1, NULL);
	}
	return true;
}

/* ---- the rule of every op ------------------------------------------------ */

/* Which replica rule an op of the table follows: ops.def's BATCH column
 * (dims.def lists the rules; docs/plan.md and docs/passes.md describe
 * them).  BR_NONE: the op needs its whole input; its batch-carrying
 * inputs are gathered and its outputs re-split. */
const char *batch_rule_name(int opcode)
{
	const OpInfo *info = op_info(opcode);
	return info ? batch_rule_str(info->batch) : NULL;
}

/* Replica rules for an op with at least one batch-carrying input. */
static bool batched(Ctx *c)
{
	const Op *op = c->op;
	const OpInfo *info = op_info(op->opcode);
	if (!info)
		return opaque(c);
	BatchRule r = info->batch;
	switch (r) {
	case BR_MATMUL:
		return matmul(c, false, false);
	case BR_BATCHMATMUL:
		return matmul(c, true, false);
	case BR_FUSEDMATMUL:
		return matmul(c, false, true);
	case BR_BATCH0:
		return batch0(c, 0);
	case BR_BACKPROP_INPUT:
		c->b->shape_in[op->id] = 0;
		return batch0(c, 2);
	case BR_AVGPOOLGRAD:
		c->b->shape_in[op->id] = 0;
		return batch0(c, 1);
	case BR_MAXPOOLGRAD:
		return need(c, 0, 0, NULL) && need(c, 1, 0, NULL) && batch0(c, 2);
	case BR_BACKPROP_FILTER:
		if (!need(c, 0, 0, NULL) || !need(c, 2, 0, NULL))
			return false;
		set_out(c, 0, OK_PARTIAL, -1, NULL);
		return true;
	case BR_BIASADDGRAD: {
		uint32_t x = data_pos(op, 0);
		const Type *t = in_t(c, x);
		BIn b = bin(c, x);
		if (!t || b.dim == channel_dim(c, t->rank))
			return false;
		slice_in(c, x, b.dim, b.v);
		set_out(c, 0, OK_PARTIAL, -1, NULL);
		return true;
	}
	case BR_BIASADD: {
		const Type *t = in_t(c, data_pos(op, 0));
		if (!t || bin(c, data_pos(op, 0)).dim == channel_dim(c, t->rank))
			return false;
		return elementwise(c);
	}
	case BR_FBN:
		if (fbn_channel(c, false))
			return true;
		if (!batch0(c, 0))
			return false;
		for (uint32_t k = 1; k < op->nout; k++)
			set_out(c, k, OK_LOCAL, -1, NULL);
		return true;
	case BR_FBNGRAD:
		if (fbn_channel(c, true))
			return true;
		if (!need(c, 1, 0, NULL) || !batch0(c, 0))
			return false;
		for (uint32_t k = 1; k < op->nout; k++)
			set_out(c, k, k <= 2 ? OK_PARTIAL : OK_LOCAL, -1, NULL);
		return true;
	case BR_XENT:
		return xent(c);
	case BR_SOFTMAX: {
		uint32_t x = data_pos(op, 0);
		const Type *t = in_t(c, x);
		BIn b = bin(c, x);
		if (!t || b.dim == t->rank - 1 ||
		    (b.v && view_tail(b.v, t->dims[t->rank - 1]) < 0))
			return false;
		slice_in(c, x, b.dim, b.v);
		return all_split(c, b.dim, b.v);
	}
	case BR_REDUCE:
		return reduce(c);
	case BR_RESHAPE:
		return reshape(c);
	case BR_SHAPE:
		set_out(c, 0, OK_LOCAL, -1, NULL);
		return true;
	case BR_RANK:
		set_out(c, 0, OK_FULL, -1, NULL);
		return true;
	case BR_ELEMWISE:
		return elementwise(c);
	case BR_BROADCASTTO:
		if (!plain(c))
			return false;
		c->b->shape_in[op->id] = 1;
		return elementwise(c);
	case BR_NONE: case BR_SOURCE: case BR_COUNT:
		return false;
	default:
		break;
	}
	if (!plain(c))
		return false;
	switch (r) {
	case BR_ARGMAX: return axis_op(c, false);
	case BR_TRANSPOSE: return transpose(c);
	case BR_EXPANDDIMS: return axis_op(c, true);
	case BR_SQUEEZE: return squeeze(c);
	case BR_CONCAT: return concat(c);
	case BR_PACK: return pack(c);
	case BR_UNPACK: return unpack(c);
	case BR_SPLIT: return split(c);
	case BR_SLICE: return slice_like(c);
	case BR_STRIDEDSLICE: return strided_slice(c);
	case BR_GATHER: return gather(c);
	case BR_TOPK: return topk(c);
	case BR_SEGMENTSUM: return segment_sum(c);
	default: return false;
	}
}

/* The graph's batch: its `batch` attribute, else the batch dimension of
 * the first Placeholder that declares one. */
static int64_t graph_batch(Graph *g)
{
	double b;
	if (val_number(graph_attr(g, "batch"), &b) && b >= 1)
		return (int64_t)b;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		Value *v = op_ann(g, op, ANN_BATCH_DIM);
		if (op->dead || op->opcode != O_Placeholder || !v ||
		    v->kind != V_INT || op->nout < 1 || v->i < 0 ||
		    v->i >= op->out[0].rank || !type_known(&op->out[0]))
			continue;
		return op->out[0].dims[v->i];
	}
	return 0;
}

/* Why op cannot be replicated over the batch that reaches it, for -v. */
static const char *why_not(Ctx *c)
{
	const Op *op = c->op;
	const char *rule = batch_rule_name(op->opcode);
	if (!op_info(op->opcode))
		return "not in the op table, and no @split annotation says how "
		       "its replicas recombine";
	if (!rule || strcmp(rule, "none") == 0)
		return "it has no batch rule: it needs its whole input";
	for (uint32_t i = 0; i < op->nin; i++) {
		BIn x = bin(c, i);
		const Type *t = in_t(c, i);
		char buf[128];
		if (x.dim >= 0 && t)
			return arena_printf(c->b->arena,
				"its %s rule cannot take the batch in dimension %d "
				"of input %u (%s)%s", rule, x.dim, i,
				type_str(t, buf, sizeof buf), x.v ? ", a view" : "");
	}
	return rule;
}

/* op runs once, on the whole batch: the batch-carrying inputs are
 * gathered.  An output shaped like such an input, or of its rank with
 * the same batch-sized dimension there, holds the whole batch at that
 * dimension: consumers split it again.  Others (a loss, a shape) are
 * plain whole values. */
static void run_whole(Ctx *c)
{
	const Op *op = c->op;
	BatchInfo *b = c->b;
	BIn rb = {-1, NULL};
	const Type *ref = NULL;
	for (uint32_t i = 0; i < op->nin && rb.dim < 0; i++) {
		rb = bin(c, i);
		ref = in_t(c, i);
	}
	b->why[op->id] = why_not(c);
	b->replicable[op->id] = false;
	b->shape_in[op->id] = -1;
	for (uint32_t i = 0; i < op->nin; i++)
		slice_in(c, i, -1, NULL);
	for (uint32_t k = 0; k < op->nout; k++) {
		const Type *o = out_t(c, k);
		set_out(c, k, OK_FULL, -1, NULL);
		if (!o || !ref || c->update || rb.dim < 0)
			continue;
		bool same = same_dims(o->dims, o->rank, ref->dims, ref->rank);
		if (same || (!rb.v && o->rank == ref->rank &&
			     o->dims[rb.dim] == ref->dims[rb.dim] &&
			     batch_sized(o, rb.dim, b->batch))) {
			b->odim[c->ob + k] = (int8_t)rb.dim;
			b->view[c->ob + k] = same ? rb.v : NULL;
		}
	}
}

static void analyze(Ctx *c)
{
	const Op *op = c->op;
	BatchInfo *b = c->b;
	bool any = false, local = false;
	const OpInfo *info = op_info(op->opcode);
	c->update = (info && (info->flags & OPF_UPDATE)) ||
		    op_has_role(c->g, op, ROLE_UPDATE);
	for (uint32_t i = 0; i < op->nin; i++) {
		any |= bin(c, i).dim >= 0;
		local |= in_local(c, i);
	}
	if (!any) {
		b->replicable[op->id] = op->opcode != O_Transfer &&
					op->opcode != O_AllReduce;
		for (uint32_t k = 0; k < op->nout; k++)
			set_out(c, k, local ? OK_LOCAL : OK_FULL, -1, NULL);
		if (op->opcode == O_Placeholder && op->nout == 1) {
			Value *v = op_ann(c->g, op, ANN_BATCH_DIM);
			int d = v && v->kind == V_INT ? (int)v->i : -1;
			if (!v && out_t(c, 0) && out_t(c, 0)->rank > 0 &&
			    out_t(c, 0)->dims[0] == b->batch)
				d = 0;
			if (batch_sized(out_t(c, 0), d, b->batch))
				set_out(c, 0, OK_SPLIT, d, NULL);
		}
		if (c->src && c->src[op->id] >= 0) {
			/* a dropout mask: each replica draws its slice */
			set_out(c, 0, OK_SPLIT, c->src[op->id], NULL);
			b->shape_in[op->id] = 0;
		}
		return;
	}
	if (batched(c)) {
		b->replicable[op->id] = true;
		return;
	}
	/* Not replicable: it runs on one device, on the whole batch. */
	run_whole(c);
}

static void sweep(Graph *g, BatchInfo *b, const uint32_t *topo, uint32_t live,
		  const int8_t *src)
{
	for (uint32_t j = 0; topo && j < live; j++) {
		Ctx c = {g, b, g->ops[topo[j]], b->outbase[topo[j]],
			 b->inbase[topo[j]], false, src};
		analyze(&c);
	}
}

/* Dropout masks (RandomUniform -> GreaterEqual -> Cast -> Mul(x, .)):
 * a RandomUniform has no batch input, so the forward sweep makes it
 * whole, and every replica would draw the whole mask to slice it.  Going
 * backwards, an output that is whole and batch-sized is wanted along
 * dimension d when every consumer slices it there (a replicated op's
 * input, plain, not a view) or is an element-wise op without a batch
 * input, of the same shape, whose own output is wanted along d.  A
 * RandomUniform wanted along a batch-sized d becomes a source of the
 * batch (its replicas draw their slices, numbered as in the whole
 * tensor: docs/gir.md, @rng_slice).  Returns the dimension per op (-1
 * elsewhere), or NULL when there is none.  O(V + E). */
static int8_t *split_sources(Graph *g, BatchInfo *b, const uint32_t *topo,
			     uint32_t live)
{
	bool any = false;
	for (uint32_t j = 0; j < live && !any; j++)
		any = g->ops[topo[j]]->opcode == O_RandomUniform;
	if (!any || !topo || b->batch <= 0)
		return NULL;
	const Uses *us = graph_uses(g);
	uint32_t no = b->outbase[b->nops];
	int8_t *want = xmalloc((size_t)no + 1);
	memset(want, -1, (size_t)no + 1);
	int8_t *src = NULL;
	for (uint32_t j = live; j-- > 0;) {
		const Op *op = g->ops[topo[j]];
		for (uint32_t k = 0; k < op->nout; k++) {
			uint32_t s = b->outbase[op->id] + k;
			const Type *t = type_known(&op->out[k]) ? &op->out[k] : NULL;
			if (b->okind[s] != OK_FULL || b->odim[s] >= 0 || !t)
				continue;
			int d = -2;
			for (uint32_t q = us->start[op->id];
			     q < us->start[op->id + 1] && d != -1; q++) {
				const Op *v = us->use[q].op;
				uint32_t i = us->use[q].slot;
				if (v->in[i].ctrl || v->in[i].idx != k)
					continue;
				uint32_t vi = b->inbase[v->id] + i;
				int wd = -1;
				if (b->replicable[v->id] && b->idim[vi] >= 0 &&
				    !b->iview[vi])
					wd = b->idim[vi];
				else if (op_info(v->opcode) &&
					 op_info(v->opcode)->batch == BR_ELEMWISE &&
					 v->nout == 1 &&
					 type_known(&v->out[0]) &&
					 same_dims(v->out[0].dims, v->out[0].rank,
						   t->dims, t->rank))
					wd = want[b->outbase[v->id]];
				d = d == -2 || d == wd ? wd : -1;
			}
			if (d >= 0 && batch_sized(t, d, b->batch))
				want[s] = (int8_t)d;
		}
		if (op->opcode == O_RandomUniform && op->nout == 1 &&
		    want[b->outbase[op->id]] >= 0) {
			if (!src) {
				src = xmalloc((size_t)b->nops + 1);
				memset(src, -1, (size_t)b->nops + 1);
			}
			src[op->id] = want[b->outbase[op->id]];
		}
	}
	free(want);
	return src;
}

void batch_analyze(Graph *g, BatchInfo *b)
{
	uint32_t n = g->nops;
	memset(b, 0, sizeof *b);
	b->nops = n;
	b->batch = graph_batch(g);
	b->arena = arena_new();
	b->outbase = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	b->inbase = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	uint32_t no = 0, ni = 0;
	for (uint32_t i = 0; i < n; i++) {
		b->outbase[i] = no;
		b->inbase[i] = ni;
		no += g->ops[i]->nout;
		ni += g->ops[i]->nin;
	}
	b->outbase[n] = no;
	b->inbase[n] = ni;
	b->okind = xcalloc((size_t)no + 1, 1);
	b->odim = xmalloc((size_t)no + 1);
	memset(b->odim, -1, (size_t)no + 1);
	b->view = xcalloc((size_t)no + 1, sizeof(View *));
	b->idim = xmalloc((size_t)ni + 1);
	memset(b->idim, -1, (size_t)ni + 1);
	b->iview = xcalloc((size_t)ni + 1, sizeof(View *));
	b->replicable = xcalloc((size_t)n + 1, sizeof(bool));
	b->shape_in = xmalloc((size_t)n + 1);
	memset(b->shape_in, -1, (size_t)n + 1);
	b->why = xcalloc((size_t)n + 1, sizeof(const char *));
	const uint32_t *topo = graph_topo(g);
	uint32_t live = 0;
	for (uint32_t i = 0; i < n; i++)
		live += !g->ops[i]->dead;
	sweep(g, b, topo, live, NULL);
	int8_t *src = split_sources(g, b, topo, live);
	if (src) {
		memset(b->okind, 0, (size_t)no + 1);
		memset(b->odim, -1, (size_t)no + 1);
		memset(b->view, 0, sizeof(View *) * ((size_t)no + 1));
		memset(b->idim, -1, (size_t)ni + 1);
		memset(b->iview, 0, sizeof(View *) * ((size_t)ni + 1));
		memset(b->replicable, 0, sizeof(bool) * ((size_t)n + 1));
		memset(b->shape_in, -1, (size_t)n + 1);
		memset(b->why, 0, sizeof(const char *) * ((size_t)n + 1));
		sweep(g, b, topo, live, src);
		free(src);
	}
}

void batch_free(BatchInfo *b)
{
	free(b->outbase);
	free(b->inbase);
	free(b->okind);
	free(b->odim);
	free(b->view);
	free(b->idim);
	free(b->iview);
	free(b->replicable);
	free(b->shape_in);
	free(b->why);
	if (b->arena)
		arena_free(b->arena);
	memset(b, 0, sizeof *b);
}

typedef struct TypeCount {
	const char *type;
	uint32_t n;
} TypeCount;

static int tc_cmp(const void *pa, const void *pb)
{
	const TypeCount *a = pa, *b = pb;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return strcmp(a->type, b->type);
}

void plan_report_unreplicable(const PassCtx *ctx, const BatchInfo *b)
{
	const Graph *g = ctx->g;
	TypeCount *tc = NULL;
	uint32_t ntc = 0, total = 0;
	for (uint32_t i = 0; i < g->nops && i < b->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || b->replicable[i])
			continue;
		total++;
		uint32_t j = 0;
		while (j < ntc && tc[j].type != op->type)
			j++;
		if (j == ntc) {
			tc = xrealloc(tc, sizeof *tc * (ntc + 1));
			tc[ntc++] = (TypeCount){op->type, 0};
		}
		tc[j].n++;
	}
	if (total) {
		qsort(tc, ntc, sizeof *tc, tc_cmp);
		fprintf(ctx->report, "  %u ops cannot be split over the batch "
			"(they stay on one device):", total);
		for (uint32_t j = 0; j < ntc && j < 8; j++)
			fprintf(ctx->report, " %s x%u", tc[j].type, tc[j].n);
		fputs(ntc > 8 ? " ...\n" : "\n", ctx->report);
	}
	free(tc);
	/* Where the batch is gathered, and why: the first few in graph order. */
	uint32_t shown = 0, more = 0;
	for (uint32_t i = 0; i < g->nops && i < b->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || b->replicable[i] || !b->why[i])
			continue;
		if (shown == 6) {
			more++;
			continue;
		}
		bool resplit = false;
		for (uint32_t k = 0; k < op->nout; k++)
			resplit |= b->odim[b->outbase[i] + k] >= 0;
		fprintf(ctx->report, "  batch gathered for %s (%s): %s; %s\n",
			op->name, op->type, b->why[i],
			resplit ? "its output is split again"
				: op->nout ? "what it feeds runs on the whole value"
					   : "it has no output");
		shown++;
	}
	if (more)
		fprintf(ctx->report, "  ... and %u more ops where the batch is "
			"gathered\n", more);
}
