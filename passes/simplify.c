/* simplify.c — graph simplification (TAG §4.1.1, "Simplifying the graph").
 *
 * 1. No-op removal.  Ops the op table flags OPF_NOOP (Identity, IdentityN,
 *    NoOp, StopGradient, Snapshot, ...) are bypassed, and so are ops that
 *    hand their input on unchanged (op_is_identity: a Pad of zeros, a
 *    full Slice, an identity Transpose, a Cast to the same type, ...;
 *    PyTorch traces are full of them, and TensorFlow's Grappler removes
 *    them too): a data use of output k reads the no-op's data input k
 *    instead; a control use waits for all of the no-op's inputs
 *    instead.  A data use also inherits the no-op's
 *    control inputs, so no ordering constraint is lost.  Visiting ops in
 *    topological order makes chains of no-ops collapse in one sweep.
 *    A no-op that is itself a sink (below) is kept, and so is one whose
 *    bypass would add more edges than it removes (TensorFlow's
 *    DependencyOptimizer rule): a NoOp joining n control inputs for m
 *    control consumers stands for n + m edges, its bypass for n * m, which
 *    on a large graph is a quadratic blow-up.
 * 2. Dead-op removal.  Sinks are update ops (@role = update or an Apply*
 *    op), loss ops (@role = loss or a loss op), and declared outputs
 *    (@output = true).  In a graph with none of these (an inference
 *    graph), every op without consumers is a sink, except a NoOp-like op
 *    without outputs.  Ops from which no sink is reachable along data or
 *    control edges are removed.
 * O(V + E) plus the control edges step 1 adds; no recursion. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

static bool is_noop(const Graph *g, const Op *op)
{
	const OpInfo *info = op_info(op->opcode);
	return info && ((info->flags & OPF_NOOP) || op_is_identity(g, op));
}

static bool is_explicit_sink(const Graph *g, const Op *op)
{
	const OpInfo *info = op_info(op->opcode);
	const char *role = op_ann_str(g, op, ANN_ROLE);
	if (role && (strcmp(role, "update") == 0 || strcmp(role, "loss") == 0))
		return true;
	if (op_get_bool(g, op, g->ann[ANN_OUTPUT], false))
		return true;
	return info && (info->flags & (OPF_UPDATE | OPF_LOSS)) && !role;
}

/* The new input list of one op, being built.  seen[id] == stamp marks a
 * producer already in it (as data or control), so duplicates are dropped
 * in O(1). */
typedef struct Ins {
	Input *v;
	uint32_t n, cap;
	uint32_t *seen, stamp;
} Ins;

static void ins_push(Ins *b, Input in)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 8;
		b->v = xrealloc(b->v, sizeof(Input) * b->cap);
	}
	b->v[b->n++] = in;
	b->seen[in.src->id] = b->stamp;
}

/* Appends a control input on src, unless src is an input already. */
static void add_ctrl(Ins *b, Op *src)
{
	if (b->seen[src->id] != b->stamp)
		ins_push(b, (Input){src, 0, true});
}

/* Puts an op's data inputs first (in order), so that data input k of an
 * op that step 1 bypasses is in[k]. */
static void data_first(Op *op, Input *tmp)
{
	if (!op->nin)
		return;
	uint32_t m = 0;
	for (uint32_t j = 0; j < op->nin; j++)
		if (!op->in[j].ctrl)
			tmp[m++] = op->in[j];
	for (uint32_t j = 0; j < op->nin; j++)
		if (op->in[j].ctrl)
			tmp[m++] = op->in[j];
	memcpy(op->in, tmp, sizeof(Input) * op->nin);
}

/* Rewrites op's inputs around the bypassed (gone) no-ops that feed it. */
static void bypass_inputs(Graph *g, Op *op, const bool *gone, Ins *b,
			  uint32_t stamp)
{
	b->n = 0;
	b->stamp = stamp;
	/* data inputs keep their positions (a data input may repeat:
	 * AddN(%a, %a)) */
	for (uint32_t j = 0; j < op->nin; j++) {
		Input in = op->in[j];
		if (in.ctrl)
			continue;
		if (gone[in.src->id])
			in = in.src->in[in.idx];
		ins_push(b, in);
	}
	/* then control inputs, each producer once, none that is a data
	 * input already */
	for (uint32_t j = 0; j < op->nin; j++) {
		Input in = op->in[j];
		if (!gone[in.src->id]) {
			if (in.ctrl)
				add_ctrl(b, in.src);
			continue;
		}
		/* inherit the bypassed op's control inputs; a control use
		 * waits for all its inputs */
		Op *r = in.src;
		for (uint32_t q = 0; q < r->nin; q++)
			if (r->in[q].ctrl || in.ctrl)
				add_ctrl(b, r->in[q].src);
	}
	op->in = arena_alloc(g->arena, sizeof(Input) * (b->n ? b->n : 1));
	memcpy(op->in, b->v, sizeof(Input) * b->n);
	op->nin = b->n;
}

/* Removes the ops no sink depends on; returns how many. */
static uint32_t remove_dead(Graph *g, const bool *sink, uint32_t n)
{
	bool *keep = xcalloc(n + 1, sizeof *keep);
	uint32_t *stack = xmalloc(sizeof *stack * (n + 1)), sp = 0;
	for (uint32_t i = 0; i < n; i++)
		if (sink[i] && !g->ops[i]->dead) {
			keep[i] = true;
			stack[sp++] = i;
		}
	while (sp) {
		Op *op = g->ops[stack[--sp]];
		for (uint32_t j = 0; j < op->nin; j++) {
			uint32_t s = op->in[j].src->id;
			if (!keep[s]) {
				keep[s] = true;
				stack[sp++] = s;
			}
		}
	}
	uint32_t removed_dead = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!g->ops[i]->dead && !keep[i]) {
			graph_remove_op(g, g->ops[i]);
			removed_dead++;
		}
	free(stack);
	free(keep);
	return removed_dead;
}

int pass_simplify(PassCtx *ctx)
{
	Graph *g = ctx->g;
	const uint32_t *topo = graph_topo(g);
	if (!topo)
		return pass_internal_error(ctx, "graph has a cycle");
	uint32_t n = g->nops, live = 0;
	for (uint32_t i = 0; i < n; i++)
		live += !g->ops[i]->dead;
	uint32_t *order = xmalloc(sizeof *order * (live + 1));
	memcpy(order, topo, sizeof *order * live);

	/* Which ops are sinks; whether any explicit sink exists. */
	const Uses *u = graph_uses(g);
	bool *sink = xcalloc(n + 1, sizeof *sink);
	bool any_explicit = false;
	for (uint32_t i = 0; i < n; i++)
		if (!g->ops[i]->dead && is_explicit_sink(g, g->ops[i]))
			sink[i] = any_explicit = true;
	if (!any_explicit)
		for (uint32_t i = 0; i < n; i++) {
			Op *op = g->ops[i];
			if (!op->dead && u->start[i] == u->start[i + 1] &&
			    !(is_noop(g, op) && op->nout == 0))
				sink[i] = true;
		}

	/* 1. bypass no-ops */
	bool *gone = xcalloc(n + 1, sizeof *gone);
	Ins b = {.seen = xcalloc(n + 1, sizeof(uint32_t))};
	uint32_t removed_noops = 0;
	for (uint32_t t = 0; t < live; t++) {
		Op *op = g->ops[order[t]];
		bool changed = false;
		for (uint32_t j = 0; j < op->nin; j++)
			changed |= gone[op->in[j].src->id];
		if (changed)
			bypass_inputs(g, op, gone, &b, t + 1);
		if (is_noop(g, op) && !sink[op->id]) {
			/* a no-op whose outputs are not all forwarded stays */
			uint32_t ndata = 0;
			for (uint32_t j = 0; j < op->nin; j++)
				ndata += !op->in[j].ctrl;
			/* edges its bypass adds: a data use inherits the
			 * control inputs, a control use all inputs */
			uint64_t nuse = u->start[op->id + 1] - u->start[op->id];
			uint64_t added = 0;
			for (uint32_t k = u->start[op->id]; k < u->start[op->id + 1]; k++)
				added += u->use[k].op->in[u->use[k].slot].ctrl
						 ? op->nin : op->nin - ndata;
			if (op->nout <= ndata && added <= op->nin + nuse) {
				gone[op->id] = true;
				removed_noops++;
				Input *tmp = arena_alloc(ctx->scratch,
							 sizeof(Input) * op->nin);
				data_first(op, tmp);
			}
		}
	}
	free(b.v);
	free(b.seen);
	for (uint32_t i = 0; i < n; i++)
		if (gone[i])
			graph_remove_op(g, g->ops[i]);
	graph_invalidate(g);

	/* 2. keep what a sink depends on */
	uint32_t removed_dead = remove_dead(g, sink, n);
	graph_compact(g);
	if (ctx->report)
		fprintf(ctx->report,
			"simplify: removed %u no-op%s and %u dead op%s: %u -> %u ops\n",
			removed_noops, removed_noops == 1 ? "" : "s", removed_dead,
			removed_dead == 1 ? "" : "s", live, g->nops);
	free(gone);
	free(sink);
	free(order);
	return EXIT_OK;
}
