/* fuse.c — operation fusion by optimal breakpoints over the CPD-TOPO order
 * (Celeritas §5.1, Algorithm 1 "Optimal Operation Fusion").
 *
 * Why.  Training graphs have thousands of ops whose compute times are
 * small next to the transfers between them (a communication-to-computation
 * ratio, CCR = sum of edge times / sum of node times, eq. 1, of 18 to 112
 * in Celeritas Table 2).  List schedulers do poorly there and are slow on
 * so many nodes.  Merging ops into groups that are placed together
 * removes most edges from the problem and most nodes from the graph.
 *
 * How.  On the op-level task graph (taskgraph.h; node weight = mean time
 * over the cluster's devices, edge time = latency + bytes / bandwidth
 * averaged over the device pairs):
 *   1. order the ops by CPD-TOPO (cpdtopo.c), which keeps critical paths
 *      together;
 *   2. cut that order into runs of consecutive ops by Optimal_BP, a
 *      dynamic programme (eq. 4-6): S(j) = min over i of S(i) + cost(i,j),
 *      where the run [i, j) has at most R ops (the exploration range) and
 *      at most M bytes of memory (sum of the ops' mem_perm + mem_temp), and
 *      cost(i, j) is the time of the edges leaving [i, j) for ops at j or
 *      later.  Since every edge points forward in a topological order,
 *      S(n) is exactly the total time of the edges between runs, and the
 *      programme minimises it.  A run never holds ops pinned to two
 *      different @device (place needs one device per group); a single op
 *      heavier than M is a run of its own;
 *   3. write @group = K on every op, K counted along the order.
 * A run of consecutive ops of a topological order cannot close a cycle
 * (Lemma 2: an edge into the run from a later op would contradict the
 * order), so the coarse graph is a DAG; the pass checks this by building
 * it (tg_from_graph with groups), and a failure is an internal error.
 *
 * cost(i, j) for all i in the window at once: when op p = j - 1 joins,
 * every candidate run [i, j) gains p's outgoing edge time and loses the
 * edges from [i, p) into p, i.e. C[i] += out(p) - sum of c(s, p) over
 * predecessors s at positions >= i.  Walking i from p down to j - R
 * accumulates that suffix sum in the same loop that evaluates S(i) + C[i],
 * so a step costs O(R + indegree) and the pass O(V * R + E) with ring
 * buffers of R entries (eq. 5 is the same recurrence, advanced in j).
 * The memory and pin limits only grow as i moves left, so the scan stops
 * at the first run that breaks them, and runs left of it are never
 * looked at again.  Among runs whose cost agrees to 1e-9 the longest wins:
 * fewer groups for the same cut.
 *
 * Ops that carry @group in the input get a new one: fuse always groups
 * from the op-level graph, so re-running it reproduces its own result
 * (fuse is idempotent) and repairs hand-written groups that form a cycle.
 * To keep ops together, pin them to one device instead.
 *
 * Options: range=R (default 200, the paper's choice), mem=M: M <= 1 is a
 * fraction of the smallest device memory (default 0.25, §5.1.3), a larger
 * M is bytes.  -v reports nodes and CCR before and after. */
#include "passes.h"
#include "taskgraph.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

uint32_t tg_breakpoints(const TaskGraph *t, const uint32_t *order,
			uint32_t range, double cap, uint32_t *group)
{
	uint32_t n = t->n;
	if (!n)
		return 0;
	uint32_t R = range < 1 ? 1 : range > n ? n : range;
	size_t n1 = (size_t)n + 1;
	/* Everything the scan reads is indexed by position in the order, so
	 * the window [j - R, j) is a contiguous, cache-resident slice. */
	uint32_t *pos = xmalloc(n1 * sizeof *pos);
	double *mem = xmalloc(n1 * sizeof *mem);
	int *pin = xmalloc(n1 * sizeof *pin);
	double *S = xmalloc(n1 * sizeof *S);     /* S[i]: best cut before i */
	uint32_t *P = xmalloc(n1 * sizeof *P);   /* P[j]: start of the run ending at j */
	double *C = xcalloc(n1, sizeof *C);      /* C[i] = cost(i, j) */
	double *D = xcalloc(n1, sizeof *D);      /* D[s] = c(s, p), s a predecessor */
	double *X = xmalloc(R * sizeof *X);      /* X[p - i] = S[i] + cost(i, j) */
	double scale = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t v = order[k];
		pos[v] = k;
		mem[k] = t->mem_perm[v] + t->mem_temp[v];
		pin[k] = t->pinned[v];
	}
	uint32_t lo = 0;                         /* leftmost start still allowed */
	S[0] = 0;
	for (uint32_t j = 1; j <= n; j++) {
		uint32_t p = j - 1, v = order[p];
		uint32_t base = j > R ? j - R : 0;
		base = lo > base ? lo : base;
		double out = 0;
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++)
			out += tg_edge_time(t, TG_MEAN, t->succ[e].bytes);
		scale = out > scale ? out : scale;
		for (uint32_t e = t->pred_start[v]; e < t->pred_start[v + 1]; e++)
			if (pos[t->pred[e].node] >= base)
				D[pos[t->pred[e].node]] +=
					tg_edge_time(t, TG_MEAN, t->pred[e].bytes);
		C[p] = out;
		X[0] = S[p] + out;
		double best = X[0], m = mem[p], acc = 0;
		int dev = pin[p];
		uint32_t cnt = 1;
		for (uint32_t i = p; i-- > base; cnt++) {
			m += mem[i];
			if (m > cap || (pin[i] >= 0 && dev >= 0 && pin[i] != dev))
				break;
			dev = pin[i] >= 0 ? pin[i] : dev;
			acc += D[i];
			C[i] += out - acc;
			X[cnt] = S[i] + C[i];
			best = X[cnt] < best ? X[cnt] : best;
		}
		lo = j - cnt;
		for (uint32_t e = t->pred_start[v]; e < t->pred_start[v + 1]; e++)
			D[pos[t->pred[e].node]] = 0;
		/* The longest run within the tolerance of the best. */
		double tol = 1e-9 * (fabs(best) + scale);
		uint32_t k = cnt - 1;
		while (X[k] > best + tol)
			k--;
		S[j] = X[k];
		P[j] = p - k;
	}
	/* Walk the breakpoints back from the end; number runs forward. */
	uint32_t nruns = 0;
	for (uint32_t j = n; j > 0; j = P[j])
		nruns++;
	uint32_t id = nruns;
	for (uint32_t j = n; j > 0; j = P[j]) {
		id--;
		for (uint32_t k = P[j]; k < j; k++)
			group[order[k]] = id;
	}
	free(X);
	free(D);
	free(C);
	free(P);
	free(S);
	free(pin);
	free(mem);
	free(pos);
	return nruns;
}

/* Celeritas eq. 1: total edge time over total node time (mean weights). */
static double ccr(const TaskGraph *t)
{
	double *w = xmalloc(sizeof(double) * ((size_t)t->n + 1));
	tg_weights(t, TG_MEAN, w);
	double sw = 0, se = 0;
	for (uint32_t v = 0; v < t->n; v++) {
		sw += w[v];
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++)
			se += tg_edge_time(t, TG_MEAN, t->succ[e].bytes);
	}
	free(w);
	return sw > 0 ? se / sw : se > 0 ? INFINITY : 0;
}

int pass_fuse(PassCtx *ctx)
{
	Graph *g = ctx->g;
	/* both checked against passes.def's ranges by pipeline_parse */
	long long range = pass_opt_int(ctx, "range");
	double mem = pass_opt_num(ctx, "mem");
	TaskGraph *t = tg_from_graph(g, ctx->cost, false, ctx->diag);
	if (!t)
		return EXIT_BADINPUT;
	double cap = mem;
	if (mem <= 1) {
		double least = INFINITY;
		for (int d = 0; d < t->ndev; d++)
			least = tg_mem_cap(t, d) < least ? tg_mem_cap(t, d) : least;
		cap = mem * least;
	}
	size_t n1 = (size_t)t->n + 1;
	uint32_t *order = xmalloc(n1 * sizeof *order);
	uint32_t *group = xmalloc(n1 * sizeof *group);
	tg_cpdtopo(t, NULL, order);
	uint32_t ngroups = tg_breakpoints(t, order, (uint32_t)range, cap, group);
	uint32_t replaced = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead || t->op_node[i] == UINT32_MAX)
			continue;
		replaced += op_ann(g, op, ANN_GROUP) != NULL;
		op_set_ann(g, op, ANN_GROUP,
			   val_int(g->arena, group[t->op_node[i]]));
	}
	int rc = EXIT_OK;
	TaskGraph *coarse = tg_from_graph(g, ctx->cost, true, ctx->diag);
	if (!coarse)
		rc = pass_internal_error(ctx, "the %u groups of %u ops do not form "
					 "a DAG", ngroups, t->n);
	else if (coarse->n != ngroups)
		rc = pass_internal_error(ctx, "%u groups written, %u read back",
					 ngroups, coarse->n);
	else if (ctx->report) {
		fprintf(ctx->report,
			"fuse<range=%.0f,mem=%s>: %u nodes -> %u groups, CCR %.4g -> "
			"%.4g (group memory cap %.4g GB)", (double)range, pass_opt(ctx, "mem"), t->n, ngroups,
			ccr(t), ccr(coarse), cap / 1e9);
		if (replaced)
			fprintf(ctx->report, "; replaced %u input @group", replaced);
		fputc('\n', ctx->report);
	}
	tg_free(coarse);
	free(group);
	free(order);
	tg_free(t);
	return rc;
}
