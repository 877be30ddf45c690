/* rebatch.c — the same training graph at another batch size.
 *
 * A profiler measures every op at several batch sizes and fits a line
 * through the times (TAG §4.1.2, HeteroG §5: "different representative
 * batch sizes"); tools/tfprofile gets those graphs from this pass.  It
 * rewrites a graph of batch B into the graph of batch N, using the batch
 * analysis that data parallelism uses (batch.c): a replica of batch share
 * N is exactly this graph.
 *
 *   - every output that carries the batch (OK_SPLIT, dimension odim of
 *     size k·B) gets size k·N there: Placeholders with @batch_dim and all
 *     that follows from them;
 *   - a shape input of such an op (Reshape's shape, Slice's size,
 *     Conv2DBackpropInput's input_sizes) that is a Const becomes a new
 *     Const NAME/shape of the op's new output shape (the old one stays
 *     for its other consumers, simplify removes it otherwise);
 *   - a constant operand that a replica would slice along the batch (a
 *     batch-sized Const of an element-wise op) is resized when its value
 *     is one number repeated or absent, and is an error otherwise;
 *   - the graph attribute `batch` becomes N.
 * Then the graph is verified (types against the shape functions), so an
 * op the analysis does not understand is an error naming the op rather
 * than a wrong graph.  Options: batch=N (required, >= 1).  O(V + E). */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t *scaled(Graph *g, const Type *t, int dim, int64_t from, int64_t to)
{
	int64_t *d = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(t->rank + 1));
	memcpy(d, t->dims, sizeof(int64_t) * (size_t)t->rank);
	d[dim] = t->dims[dim] / from * to;
	return d;
}

/* A new Const like the rank-1 integer Const feeding op->in[slot], with
 * entry dim scaled from `from` to `to` batch (a shape input). */
static void scaled_shape_input(Graph *g, Op *op, uint32_t slot, int dim,
			       int64_t from, int64_t to)
{
	Input *in = &op->in[slot];
	const Value *old = op_get(g, in->src, "value");
	Op *c = graph_add_op(g, graph_fresh_name(g, arena_printf(g->arena, "%s/shape",
								 op->name)),
			     "Const", 0, 1);
	c->out[0] = in->src->out[in->idx];
	c->types_given = true;
	c->loc = op->loc;
	Value *v = val_list(g->arena, old->list.n);
	for (uint32_t j = 0; j < old->list.n; j++)
		v->list.items[j] = (int)j == dim
			? val_int(g->arena, old->list.items[j]->i / from * to)
			: old->list.items[j];
	op_set(g, c, "value", v);
	*in = (Input){c, 0, false};
}

/* A rank-1 integer Const whose value has rank entries, entry dim = size. */
static bool is_shape_const(const Graph *g, const Input *in, int rank, int dim,
			   int64_t size)
{
	const Value *v = op_get(g, in->src, "value");
	if (in->src->opcode != O_Const || !v || v->kind != V_LIST ||
	    v->list.n != (uint32_t)rank)
		return false;
	for (uint32_t j = 0; j < v->list.n; j++)
		if (v->list.items[j]->kind != V_INT)
			return false;
	return v->list.items[dim]->i == size;
}

/* Resizes output idx of u, which a replica would slice along dim although
 * the batch analysis does not see the batch there (a batch-sized constant
 * operand, a dropout mask RandomUniform(shape) -> ... -> Mul): backwards
 * through the producers of the same size along dim, to Consts holding one
 * repeated value (resized) and shape Consts (rewritten).  False, after an
 * error naming the op, when a producer holds explicit values. */
static bool resize_back(PassCtx *ctx, Op *u0, uint32_t idx0, int dim0,
			int64_t from, int64_t to, uint8_t *seen)
{
	Graph *g = ctx->g;
	typedef struct { Op *op; uint32_t idx; int dim; } Item;
	uint32_t cap = 16, n = 0;
	Item *st = xmalloc(sizeof *st * cap);
	st[n++] = (Item){u0, idx0, dim0};
	bool ok = true;
	while (n && ok) {
		Item it = st[--n];
		Op *u = it.op;
		Type *t = &u->out[it.idx];
		if (u->id < g->nops && seen[u->id])
			continue;
		if (u->id < g->nops)
			seen[u->id] = 1;
		if (!type_known(t) || it.dim >= t->rank || t->dims[it.dim] % from) {
			continue;
		}
		int64_t old = t->dims[it.dim];
		Value *v = op_get(g, u, "value");
		if (u->opcode == O_Const && v && v->kind == V_LIST) {
			diag_error(ctx->diag, u->loc,
				   "'%s' holds a batch-sized value (dimension %d) that cannot be resized",
				   u->name, it.dim);
			ok = false;
			break;
		}
		if (u->opcode != O_Const && !u->nin) {
			diag_error(ctx->diag, u->loc,
				   "'%s' (%s) makes a batch-sized value that cannot be resized",
				   u->name, u->type);
			ok = false;
			break;
		}
		t->dims = scaled(g, t, it.dim, from, to);
		for (uint32_t s = 0; s < u->nin; s++) {
			Input *in = &u->in[s];
			if (in->ctrl)
				continue;
			const Type *it2 = &in->src->out[in->idx];
			if (type_known(it2) && it2->rank == t->rank && it2->dims[it.dim] == old) {
				if (n == cap) {
					cap *= 2;
					st = xrealloc(st, sizeof *st * cap);
				}
				st[n++] = (Item){in->src, in->idx, it.dim};
			} else if (is_shape_const(g, in, t->rank, it.dim, old)) {
				scaled_shape_input(g, u, s, it.dim, from, to);
			}
		}
	}
	free(st);
	return ok;
}

/* A Const of op's new output-0 shape, replacing its data input si. */
static void new_shape_input(Graph *g, Op *op, uint32_t slot)
{
	Input *in = &op->in[slot];
	const Type *ot = &op->out[0];
	DType dt = type_known(&in->src->out[in->idx]) ? in->src->out[in->idx].dt : DT_I32;
	Op *c = graph_add_op(g, graph_fresh_name(g, arena_printf(g->arena, "%s/shape",
								 op->name)),
			     "Const", 0, 1);
	int64_t n = ot->rank;
	c->out[0] = type_make(g->arena, dt, 1, &n);
	c->types_given = true;
	c->loc = op->loc;
	Value *v = val_list(g->arena, (uint32_t)ot->rank);
	for (int j = 0; j < ot->rank; j++)
		v->list.items[j] = val_int(g->arena, ot->dims[j]);
	op_set(g, c, "value", v);
	*in = (Input){c, 0, false};
}

int pass_rebatch(PassCtx *ctx)
{
	Graph *g = ctx->g;
	double want = pass_opt_num(ctx, "batch");
	if (!(want >= 1) || want != floor(want) || want > 1e15) {
		diag_error(ctx->diag, (Loc){0}, "batch=%g is not a positive integer", want);
		return EXIT_USAGE;        /* a pass option's value (docs/pcc.1) */
	}
	BatchInfo b;
	batch_analyze(g, &b);
	int64_t from = b.batch, to = (int64_t)want;
	int rc = EXIT_OK;
	if (from <= 0) {
		diag_error(ctx->diag, (Loc){0},
			   "graph '%s' has no batch (a `batch` attribute or a Placeholder's @batch_dim)",
			   g->name ? g->name : "");
		batch_free(&b);
		return EXIT_BADINPUT;
	}
	uint32_t nops = g->nops;  /* new Consts are appended: not visited */
	uint8_t *seen = xcalloc(nops + 1, 1);
	/* Constant operands sliced along the batch, before outputs change. */
	for (uint32_t i = 0; i < nops && rc == EXIT_OK; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		for (uint32_t s = 0; s < op->nin; s++) {
			const Input *in = &op->in[s];
			int dim = b.idim[b.inbase[op->id] + s];
			Op *u = in->src;
			if (in->ctrl || dim < 0 || batch_okind(&b, u, in->idx) == OK_SPLIT)
				continue;
			if (!resize_back(ctx, u, in->idx, dim, from, to, seen)) {
				rc = EXIT_BADINPUT;
				break;
			}
		}
	}
	for (uint32_t i = 0; i < nops && rc == EXIT_OK; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		bool changed = false;
		for (uint32_t k = 0; k < op->nout; k++) {
			int dim = batch_odim(&b, op, k);
			Type *t = &op->out[k];
			if (batch_okind(&b, op, k) != OK_SPLIT || dim < 0 || !type_known(t) ||
			    dim >= t->rank)
				continue;
			t->dims = scaled(g, t, dim, from, to);
			changed = true;
		}
		int si = b.shape_in[op->id];
		if (!changed || si < 0)
			continue;
		/* si counts data inputs */
		for (uint32_t s = 0, data = 0; s < op->nin; s++) {
			if (op->in[s].ctrl)
				continue;
			if ((int)data++ == si) {
				if (op->in[s].src->opcode == O_Const)
					new_shape_input(g, op, s);
				break;
			}
		}
	}
	batch_free(&b);
	free(seen);
	if (rc != EXIT_OK)
		return rc;
	graph_set_attr(g, "batch", val_int(g->arena, to));
	graph_invalidate(g);
	if (graph_verify(g, ctx->diag)) {
		diag_error(ctx->diag, (Loc){0},
			   "the graph at batch %lld does not verify (above): an op's shape does not follow the batch as the batch analysis assumes",
			   (long long)to);
		return EXIT_BADINPUT;
	}
	if (ctx->report)
		fprintf(ctx->report, "rebatch: batch %lld -> %lld\n", (long long)from,
			(long long)to);
	return EXIT_OK;
}
