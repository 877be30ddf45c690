/* order.c — the execution order of a materialised plan (HeteroG §4.2,
 * FastT §5.1; docs/plan.md).
 *
 * Every op gets a priority, its upward rank: the longest path from it to
 * the end of the iteration, counting its own time on its device, the
 * time of Transfer ops and collectives on their links, and the transfer
 * time of cross-device edges without a Transfer (links are devices, as
 * HeteroG puts it).  A list schedule then runs the iteration: whenever a
 * device is free it starts its ready op of highest rank; links and
 * collective streams serve in the order work becomes ready
 * (sim_run_prio).  The order ops were dispatched in is a linear extension
 * of the graph, consistent with time on every device, link and stream;
 * it becomes @order, so enforcing it (by the simulator, or by control
 * edges in a backend) replays the schedule and cannot deadlock, and every
 * device issues its collectives in one global order.  If the plain
 * ready-order (FIFO) schedule is faster, its order is kept instead.
 * @start and @finish record the simulated times.  O((V + E) log V). */
#include "passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int order(PassCtx *ctx, const CostModel *m);

/* Seconds op i takes on its resource. */
static double op_time(Graph *g, const CostModel *m, const Op *op, int dev)
{
	const Cluster *c = m->c ? m->c : g->cluster;
	if (op->opcode == O_Transfer && op->nin && !op->in[0].ctrl) {
		const char *s = op_ann_str(g, op->in[0].src, ANN_DEVICE);
		int src = s ? cluster_find_device(c, s) : -1;
		return src < 0 ? 0 : cost_transfer(m, src, dev,
						   cost_out_bytes(g, op, 0));
	}
	if (op->opcode == O_AllReduce) {
		Value *l = op_attr(op, graph_intern(g, "devices"));
		if (!l || l->kind != V_LIST)
			return 0;
		int *devs = xmalloc(sizeof(int) * (l->list.n + 1));
		int n = 0;
		for (uint32_t i = 0; i < l->list.n; i++) {
			const Value *v = l->list.items[i];
			int d = v->kind == V_STR || v->kind == V_IDENT
				? cluster_find_device(c, v->s) : -1;
			if (d >= 0)
				devs[n++] = d;
		}
		const char *algo = op_get_str(g, op, "algo");
		double b = cost_out_bytes(g, op, 0);
		double t = algo && strcmp(algo, "hier") == 0
			   ? cost_allreduce_hier(m, devs, n, b)
			   : cost_allreduce_ring(m, devs, n, b);
		free(devs);
		return t;
	}
	return cost_op(m, op, c->devs[dev].type);
}

int pass_order(PassCtx *ctx)
{
	Graph *g = ctx->g;
	/* Every op's time is needed three times (ranks, two schedules). */
	CostModel memo = *ctx->cost;
	memo.g = g;
	cost_memo_init(&memo);
	int rc = order(ctx, &memo);
	cost_memo_free(&memo);
	return rc;
}

static int order(PassCtx *ctx, const CostModel *m)
{
	Graph *g = ctx->g;
	const Cluster *c = m->c ? m->c : g->cluster;
	const uint32_t *topo = graph_topo(g);
	if (!topo)
		return pass_internal_error(ctx, "the graph has a cycle");
	uint32_t n = g->nops, live = 0;
	for (uint32_t i = 0; i < n; i++)
		live += !g->ops[i]->dead;
	int *dev = xmalloc(sizeof(int) * ((size_t)n + 1));
	for (uint32_t i = 0; i < n; i++) {
		const Op *op = g->ops[i];
		const char *d = op->dead ? NULL : op_ann_str(g, op, ANN_DEVICE);
		dev[i] = d ? cluster_find_device(c, d) : -1;
		if (!op->dead && dev[i] < 0) {
			diag_error(ctx->diag, op->loc,
				   "order: op '%s' is not placed (run place and "
				   "comm first)", op->name);
			free(dev);
			return EXIT_BADINPUT;
		}
	}
	/* Upward ranks, in reverse topological order. */
	double *rank = xcalloc((size_t)n + 1, sizeof(double));
	const Uses *us = graph_uses(g);
	for (uint32_t j = live; j-- > 0;) {
		uint32_t i = topo[j];
		const Op *op = g->ops[i];
		double best = 0;
		for (uint32_t k = us->start[i]; k < us->start[i + 1]; k++) {
			const Use *u = &us->use[k];
			uint32_t s = u->op->id;
			double e = 0;
			const Input *in = &u->op->in[u->slot];
			if (!in->ctrl && dev[s] != dev[i] && u->op->opcode != O_Transfer)
				e = cost_transfer(m, dev[i], dev[s],
						  cost_out_bytes(g, op, in->idx));
			if (e + rank[s] > best)
				best = e + rank[s];
		}
		rank[i] = op_time(g, m, op, dev[i]) + best;
	}
	SimResult lst, fifo;
	int rc = sim_run_prio(g, m, rank, &lst, ctx->diag);
	if (rc) {
		free(rank);
		free(dev);
		return rc;
	}
	rc = sim_run(g, m, &fifo, ctx->diag);
	if (rc) {
		sim_free(&lst);
		free(rank);
		free(dev);
		return rc;
	}
	bool use_fifo = fifo.makespan < lst.makespan;
	SimResult *r = use_fifo ? &fifo : &lst;
	for (uint32_t i = 0; i < n; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		op_set_ann(g, op, ANN_ORDER, val_int(g->arena, r->seq[i]));
		op_set_ann(g, op, ANN_START, val_qty(g->arena, r->start[i], UNIT_SECONDS));
		op_set_ann(g, op, ANN_FINISH, val_qty(g->arena, r->finish[i], UNIT_SECONDS));
	}
	if (ctx->report)
		fprintf(ctx->report,
			"order: simulated iteration %.6g s with the list schedule, "
			"%.6g s in ready order; kept %s\n", lst.makespan,
			fifo.makespan, use_fifo ? "ready order" : "the list schedule");
	sim_free(&lst);
	sim_free(&fifo);
	free(rank);
	free(dev);
	return EXIT_OK;
}
