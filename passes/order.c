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
 * @start and @finish record the simulated times.  O((V + E) log V).
 *
 * A pipelined plan (ops with @stage and @microbatch, docs/plan.md) is
 * ordered 1F1B instead, PipeDream-flush's schedule (Narayanan et al.,
 * "Memory-efficient pipeline-parallel DNN training", 2021 §3.1): stage s
 * of S runs min(S-1-s, m) warm-up forwards, then alternates one forward
 * and one backward micro-batch, then drains the backwards; the gradient
 * sums and updates follow the last backward.  Each (stage, phase,
 * micro-batch) unit gets its start time in that schedule with unit times
 * (forward 1, backward 2) as its key, every other op the latest key of its
 * inputs; @order sorts by key, then upward rank (within a unit, what the
 * next stage waits for goes first), then topological position: a linear
 * extension that replays 1F1B on every stage device. */
#include "passes.h"
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int order(PassCtx *ctx, const CostModel *m, SimResult *kept);
static int order_pipeline(PassCtx *ctx, const CostModel *m);

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
		int n = plan_coll_devices(c, l, devs, (int)l->list.n);
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

/* Upward ranks (per op id, malloc'd), in reverse topological order: an
 * op's time on its resource plus the longest path after it, counting the
 * transfer time of cross-device edges without a Transfer op. */
static double *upward_ranks(Graph *g, const CostModel *m, const int *dev,
			    const uint32_t *topo, uint32_t live)
{
	uint32_t n = g->nops;
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
	return rank;
}

/* The devices of g's ops (per op id, malloc'd), or NULL after reporting
 * an unplaced op. */
static int *op_devices(PassCtx *ctx, const Cluster *c)
{
	Graph *g = ctx->g;
	int *dev = xmalloc(sizeof(int) * ((size_t)g->nops + 1));
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		const char *d = op->dead ? NULL : op_ann_str(g, op, ANN_DEVICE);
		dev[i] = d ? cluster_find_device(c, d) : -1;
		if (!op->dead && dev[i] < 0) {
			diag_error(ctx->diag, op->loc,
				   "op '%s' is not placed (run place and "
				   "comm first)", op->name);
			free(dev);
			return NULL;
		}
	}
	return dev;
}

int pass_order(PassCtx *ctx)
{
	Graph *g = ctx->g;
	/* Every op's time is needed three times (ranks, two schedules). */
	CostModel memo = *ctx->cost;
	memo.g = g;
	cost_memo_init(&memo);
	int rc = order_pipeline(ctx, &memo);
	if (rc < 0)
		rc = order(ctx, &memo, NULL);
	cost_memo_free(&memo);
	return rc;
}

/* The list schedule and ready order of a materialised plan; the faster
 * is kept: written as @order, @start, @finish unless kept is given, in
 * which case it is returned there instead (plan_evaluate's judge). */
static int order(PassCtx *ctx, const CostModel *m, SimResult *kept)
{
	Graph *g = ctx->g;
	const Cluster *c = m->c ? m->c : g->cluster;
	const uint32_t *topo = graph_topo(g);
	if (!topo)
		return pass_internal_error(ctx, "the graph has a cycle");
	uint32_t n = g->nops, live = 0;
	for (uint32_t i = 0; i < n; i++)
		live += !g->ops[i]->dead;
	int *dev = op_devices(ctx, c);
	if (!dev)
		return EXIT_BADINPUT;
	double *rank = upward_ranks(g, m, dev, topo, live);
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
	for (uint32_t i = 0; !kept && i < n; i++) {
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
	if (kept) {
		*kept = *r;
		sim_free(use_fifo ? &lst : &fifo);
	} else {
		sim_free(&lst);
		sim_free(&fifo);
	}
	free(rank);
	free(dev);
	return EXIT_OK;
}

int order_simulate(PassCtx *ctx, const CostModel *m, SimResult *r)
{
	int S, M;
	int rc = order_1f1b(ctx, m, &S, &M);
	if (rc > 0)
		return rc;
	if (rc == 0)
		return sim_run(ctx->g, m, r, ctx->diag);
	return order(ctx, m, r);
}

/* ---- 1F1B ----------------------------------------------------------------- */

void pipeline_1f1b(int S, int m, double tf, double tb, double *fstart,
		   double *bstart)
{
	/* Stage s's sequence of units: +j+1 forward j, -(j+1) backward j. */
	int *seq = xmalloc(sizeof(int) * (size_t)(2 * m * S + 1));
	int *pos = xcalloc((size_t)S + 1, sizeof(int));
	double *ffin = xmalloc(sizeof(double) * (size_t)(S * m + 1));
	double *bfin = xmalloc(sizeof(double) * (size_t)(S * m + 1));
	double *free_at = xcalloc((size_t)S + 1, sizeof(double));
	for (int i = 0; i < S * m; i++)
		ffin[i] = bfin[i] = -1;
	for (int st = 0; st < S; st++) {
		int *q = seq + 2 * m * st, n = 0;
		int w = S - 1 - st < m ? S - 1 - st : m;
		for (int j = 0; j < w; j++)
			q[n++] = j + 1;
		for (int i = 0; i < m - w; i++) {
			q[n++] = w + i + 1;
			q[n++] = -(i + 1);
		}
		for (int j = m - w; j < m; j++)
			q[n++] = -(j + 1);
	}
	/* Each round starts every unit whose inputs are done; 1F1B never
	 * deadlocks, so every round starts at least one. */
	for (int done = 0; done < 2 * m * S;) {
		for (int st = 0; st < S; st++) {
			if (pos[st] == 2 * m)
				continue;
			int u = seq[2 * m * st + pos[st]];
			int j = (u > 0 ? u : -u) - 1;
			double ready;
			if (u > 0)
				ready = st ? ffin[(st - 1) * m + j] : 0;
			else
				ready = st + 1 < S ? bfin[(st + 1) * m + j]
						   : ffin[st * m + j];
			if (ready < 0)
				continue;
			double t0 = ready > free_at[st] ? ready : free_at[st];
			if (u > 0) {
				fstart[st * m + j] = t0;
				ffin[st * m + j] = free_at[st] = t0 + tf;
			} else {
				bstart[st * m + j] = t0;
				bfin[st * m + j] = free_at[st] = t0 + tb;
			}
			pos[st]++;
			done++;
		}
	}
	free(seq);
	free(pos);
	free(ffin);
	free(bfin);
	free(free_at);
}

/* The largest pipeline order orders: stages, and stages × micro-batches
 * (pipeline_1f1b is O(S² m)). */
enum { MAXSTAGES = 64, MAXPIPE = 1 << 20 };

typedef struct PipeKey {
	double key, rank;
	uint32_t pos, id;
} PipeKey;

static int pipekey_cmp(const void *pa, const void *pb)
{
	const PipeKey *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Reads [a, b] of annotation k; false when absent. */
static bool pair_ann(const Graph *g, const Op *op, AnnKey k, int64_t *a,
		     int64_t *b)
{
	const Value *v = op_ann(g, op, k);
	if (!v || v->kind != V_LIST || v->list.n != 2)
		return false;
	*a = v->list.items[0]->i;
	*b = v->list.items[1]->i;
	return true;
}

int order_1f1b(PassCtx *ctx, const CostModel *m, int *stages, int *micro)
{
	Graph *g = ctx->g;
	int S = 0, M = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		int64_t j, mm, s, ss;
		const Op *op = g->ops[i];
		if (!op->dead && pair_ann(g, op, ANN_MICROBATCH, &j, &mm) &&
		    pair_ann(g, op, ANN_STAGE, &s, &ss) && j < mm && s < ss) {
			if (mm > MAXPIPE || ss > MAXSTAGES) {
				diag_error(ctx->diag, op->loc, "'%s' is in "
					   "stage %lld of %lld, micro-batch %lld of "
					   "%lld: 1F1B orders at most %d stages of at "
					   "most %d micro-batches", op->name,
					   (long long)s, (long long)ss, (long long)j,
					   (long long)mm, MAXSTAGES, MAXPIPE / MAXSTAGES);
				return EXIT_BADINPUT;
			}
			S = ss > S ? (int)ss : S;
			M = mm > M ? (int)mm : M;
		}
	}
	if (S < 1 || M < 1)
		return -1;
	if ((int64_t)S * M > MAXPIPE) {
		diag_error(ctx->diag, (Loc){g->src_file, 0, 0}, "a pipeline "
			   "of %d stages and %d micro-batches: 1F1B orders at most "
			   "%d (stage, micro-batch) pairs", S, M, MAXPIPE);
		return EXIT_BADINPUT;
	}
	const uint32_t *topo = graph_topo(g);
	if (!topo)
		return pass_internal_error(ctx, "the graph has a cycle");
	int *dev = op_devices(ctx, m->c ? m->c : g->cluster);
	if (!dev)
		return EXIT_BADINPUT;
	double *fs = xmalloc(sizeof(double) * ((size_t)S * (size_t)M + 1));
	double *bs = xmalloc(sizeof(double) * ((size_t)S * (size_t)M + 1));
	pipeline_1f1b(S, M, 1, 2, fs, bs);
	uint32_t live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	double *key = xcalloc((size_t)g->nops + 1, sizeof(double));
	double *rank = upward_ranks(g, m, dev, topo, live);
	PipeKey *k = xmalloc(sizeof(PipeKey) * ((size_t)live + 1));
	for (uint32_t t = 0; t < live; t++) {
		const Op *op = g->ops[topo[t]];
		double x = -1;
		int64_t j, mm, s, ss;
		if (pair_ann(g, op, ANN_MICROBATCH, &j, &mm) &&
		    pair_ann(g, op, ANN_STAGE, &s, &ss) && j < mm && s < ss &&
		    ss <= S && mm <= M) {
			/* Stage s of ss and micro-batch j of mm, scaled to the
			 * largest pipeline (plans have one). */
			size_t u = (size_t)s * (size_t)M + (size_t)j;
			x = op_role(g, op) == ROLE_BWD ? bs[u] : fs[u];
		}
		for (uint32_t i = 0; i < op->nin; i++)
			if (key[op->in[i].src->id] > x)
				x = key[op->in[i].src->id];
		key[op->id] = x;
		k[t] = (PipeKey){x, tg_rank_key(rank[op->id]), t, op->id};
	}
	qsort(k, live, sizeof *k, pipekey_cmp);
	for (uint32_t t = 0; t < live; t++)
		op_set_ann(g, g->ops[k[t].id], ANN_ORDER, val_int(g->arena, t));
	free(key);
	free(rank);
	free(dev);
	free(k);
	free(fs);
	free(bs);
	*stages = S;
	*micro = M;
	return EXIT_OK;
}

/* The 1F1B order of a pipelined plan, and its simulated times; -1 when
 * the plan is not one. */
static int order_pipeline(PassCtx *ctx, const CostModel *m)
{
	Graph *g = ctx->g;
	int S, M;
	int rc = order_1f1b(ctx, m, &S, &M);
	if (rc)
		return rc;

	SimResult r;
	rc = sim_run(g, m, &r, ctx->diag);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		op_set_ann(g, op, ANN_START, val_qty(g->arena, r.start[i], UNIT_SECONDS));
		op_set_ann(g, op, ANN_FINISH, val_qty(g->arena, r.finish[i], UNIT_SECONDS));
	}
	if (ctx->report)
		fprintf(ctx->report, "order: 1F1B over %d stages, %d micro-batches: "
			"simulated iteration %.6g s\n", S, M, r.makespan);
	sim_free(&r);
	return EXIT_OK;
}
