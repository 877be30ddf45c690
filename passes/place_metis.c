/* place_metis.c — k-way graph partitioning with METIS (Karypis & Kumar,
 * "A fast and high quality multilevel scheme for partitioning irregular
 * graphs", SIAM J. Sci. Comput. 1998; METIS_PartGraphKway), the
 * partitioning that TAG groups ops with (§4.1.1 "Grouping ops", §5.1:
 * tensor size as edge weight, computation time as the balance) and the
 * baseline Celeritas compares against (§6.2.2).
 *
 * The task graph becomes an undirected graph: one vertex per node,
 * weighted by its computation (mean time over devices), one edge per data
 * edge, weighted by its tensor bytes (a control edge: weight 1).  METIS
 * cuts it into k = |devices| parts, minimising the bytes cut, with part p's
 * target share of the computation proportional to device p's speed
 * (1 / its time for the whole graph), so a faster device gets a larger
 * part.  The parts are then mapped to devices by size: the heaviest part
 * to the fastest device (ties: lower index) — the identity when METIS
 * meets its targets.  Integer weights: computation scaled to 10^8 in
 * total, bytes to 5·10^8, so idx_t sums cannot overflow.
 *
 * Memory.  If some device is then over its memory (TgMem), METIS runs
 * again with two constraints per vertex, computation and memory
 * (permanent + temporary bytes), the memory targets proportional to the
 * devices' memory, parts mapped to devices by index.  If a device is
 * still over, a repair pass keeps every node of the devices that fit
 * where it is and re-places the nodes of the others, largest permanent
 * memory first: on its own device if it still fits, else on the device
 * that fits holding most of its neighbours' bytes (ties: the most free
 * memory).  A node that fits nowhere goes to the device with the most
 * free memory; the placement is then infeasible unless --best-effort.
 *
 * Pinned nodes stay on their device (METIS has no fixed vertices in its
 * k-way routine; they are overridden after partitioning and counted in
 * the memory check).  The seed is --seed.  Cost: METIS is
 * O((V + E) log k) in practice; the rest O((V + E) + V D + V log V). */
#include "taskgraph.h"

#include <fcntl.h>
#include <math.h>
#include <metis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Mg {
	idx_t n, *xadj, *adj, *adjw;
	idx_t *vw;               /* [2 n]: computation, memory */
	real_t *tp;              /* [2 k] */
	idx_t *part;
} Mg;

static void mg_build(Mg *g, const TaskGraph *t)
{
	uint32_t n = t->n;
	g->n = (idx_t)n;
	g->xadj = xmalloc(sizeof(idx_t) * ((size_t)n + 1));
	size_t ne = t->succ_start[n];
	g->adj = xmalloc(sizeof(idx_t) * (2 * ne + 1));
	g->adjw = xmalloc(sizeof(idx_t) * (2 * ne + 1));
	g->vw = xmalloc(sizeof(idx_t) * (2 * (size_t)n + 1));
	g->part = xmalloc(sizeof(idx_t) * ((size_t)n + 1));
	double total = 0;
	for (size_t e = 0; e < ne; e++)
		total += t->succ[e].bytes;
	double scale = total > 0 ? 5e8 / total : 0;
	size_t k = 0;
	/* A DAG has no edge both ways, so succ and pred lists are disjoint
	 * and their union is already symmetric. */
	for (uint32_t v = 0; v < n; v++) {
		g->xadj[v] = (idx_t)k;
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++) {
			g->adj[k] = (idx_t)t->succ[e].node;
			g->adjw[k++] = 1 + (idx_t)(t->succ[e].bytes * scale);
		}
		for (uint32_t e = t->pred_start[v]; e < t->pred_start[v + 1]; e++) {
			g->adj[k] = (idx_t)t->pred[e].node;
			g->adjw[k++] = 1 + (idx_t)(t->pred[e].bytes * scale);
		}
	}
	g->xadj[n] = (idx_t)k;
	g->tp = xmalloc(sizeof(real_t) * (2 * (size_t)t->ndev + 1));
}

static void mg_free(Mg *g)
{
	free(g->xadj);
	free(g->adj);
	free(g->adjw);
	free(g->vw);
	free(g->part);
	free(g->tp);
}

/* Vertex weights for ncon constraints: computation (w) and memory. */
static void mg_weights(Mg *g, const TaskGraph *t, const double *w, int ncon)
{
	uint32_t n = t->n;
	double tw = 0, tm = 0;
	for (uint32_t v = 0; v < n; v++) {
		tw += w[v];
		tm += t->mem_perm[v] + t->mem_temp[v];
	}
	double sw = tw > 0 ? 1e8 / tw : 0, sm = tm > 0 ? 1e8 / tm : 0;
	for (uint32_t v = 0; v < n; v++) {
		idx_t *x = g->vw + (size_t)v * ncon;
		x[0] = tw > 0 ? (idx_t)llround(w[v] * sw) : 1;
		if (ncon > 1)
			x[1] = tm > 0 ? (idx_t)llround((t->mem_perm[v] +
							t->mem_temp[v]) * sm) : 1;
	}
}

/* Target shares: speed[d] / sum (and, for 2 constraints, memory). */
static void mg_targets(Mg *g, const TaskGraph *t, const double *speed,
		       int ncon)
{
	int k = t->ndev;
	double ss = 0, sm = 0;
	for (int d = 0; d < k; d++) {
		ss += speed[d];
		sm += tg_mem_cap(t, d);
	}
	real_t sum[2] = {0, 0};
	for (int d = 0; d < k; d++) {
		g->tp[d * ncon] = (real_t)(speed[d] / ss);
		sum[0] += g->tp[d * ncon];
		if (ncon > 1) {
			g->tp[d * ncon + 1] = (real_t)(tg_mem_cap(t, d) / sm);
			sum[1] += g->tp[d * ncon + 1];
		}
	}
	/* METIS wants each constraint's shares to add up to 1 in real_t. */
	for (int c = 0; c < ncon; c++)
		g->tp[(k - 1) * ncon + c] += 1 - sum[c];
}

/* libmetis printf()s to standard output when a recursive bisection
 * meets an empty part ("***Cannot bisect a graph with 0 vertices!",
 * e.g. a 10-node graph into 16 parts), which would corrupt a plan
 * written with -o -.  The partition it returns is still valid (some parts
 * empty), so the message is only noise: standard output points at
 * /dev/null for the call.  Returns the saved descriptor, or -1 when
 * nothing was redirected (then the call runs as is). */
static int stdout_mute(void)
{
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	if (saved < 0)
		return -1;
	int nul = open("/dev/null", O_WRONLY);
	if (nul < 0 || dup2(nul, STDOUT_FILENO) < 0) {
		if (nul >= 0)
			close(nul);
		close(saved);
		return -1;
	}
	close(nul);
	return saved;
}

static void stdout_unmute(int saved)
{
	if (saved < 0)
		return;
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
}

static bool mg_run(Mg *g, const TaskGraph *t, const PlaceOpts *o, int ncon)
{
	idx_t nc = ncon, np = t->ndev, cut = 0, opts[METIS_NOPTIONS];
	METIS_SetDefaultOptions(opts);
	opts[METIS_OPTION_SEED] = (idx_t)(o->seed & 0x7fffffff);
	opts[METIS_OPTION_NUMBERING] = 0;
	int saved = stdout_mute();
	int rc = METIS_PartGraphKway(&g->n, &nc, g->xadj, g->adj, g->vw, NULL,
				     g->adjw, &np, g->tp, NULL, opts, &cut,
				     g->part);
	stdout_unmute(saved);
	return rc == METIS_OK;
}

typedef struct Rank {
	double key;
	int i;
} Rank;

static int rank_cmp(const void *pa, const void *pb)
{
	const Rank *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->i - b->i;
}

/* dev[] from parts: heaviest part to the fastest device, or by index. */
static void map_parts(const Mg *g, const TaskGraph *t, const double *w,
		      const double *speed, bool by_size, int *dev)
{
	int k = t->ndev;
	int *to = xmalloc(sizeof(int) * ((size_t)k + 1));
	for (int p = 0; p < k; p++)
		to[p] = p;
	if (by_size) {
		Rank *parts = xcalloc((size_t)k + 1, sizeof(Rank));
		Rank *devs = xmalloc(sizeof(Rank) * ((size_t)k + 1));
		for (int p = 0; p < k; p++) {
			parts[p].i = p;
			devs[p] = (Rank){speed[p], p};
		}
		for (uint32_t v = 0; v < t->n; v++)
			parts[g->part[v]].key += w[v];
		qsort(parts, (size_t)k, sizeof(Rank), rank_cmp);
		qsort(devs, (size_t)k, sizeof(Rank), rank_cmp);
		for (int r = 0; r < k; r++)
			to[parts[r].i] = devs[r].i;
		free(parts);
		free(devs);
	}
	for (uint32_t v = 0; v < t->n; v++)
		dev[v] = t->pinned[v] >= 0 ? t->pinned[v] : to[g->part[v]];
	free(to);
}

static bool over(const TaskGraph *t, const int *dev, TgMem *mm)
{
	tg_mem_free(mm);
	tg_mem_init(t, mm);
	tg_mem_pinned(t, mm);
	for (uint32_t v = 0; v < t->n; v++)
		if (t->pinned[v] < 0)
			tg_mem_add(t, mm, dev[v], v);
	for (int d = 0; d < t->ndev; d++)
		if (tg_mem_used(mm, d) > tg_mem_cap(t, d))
			return true;
	return false;
}

/* The repair pass (see the file comment); rebuilds mm. */
static void repair(const TaskGraph *t, int *dev, TgMem *mm)
{
	uint32_t n = t->n;
	int k = t->ndev;
	bool *bad = xcalloc((size_t)k + 1, sizeof(bool));
	for (int d = 0; d < k; d++)
		bad[d] = tg_mem_used(mm, d) > tg_mem_cap(t, d);
	tg_mem_free(mm);
	tg_mem_init(t, mm);
	tg_mem_pinned(t, mm);
	Rank *todo = xmalloc(sizeof(Rank) * ((size_t)n + 1));
	uint32_t nt = 0;
	for (uint32_t v = 0; v < n; v++) {
		if (t->pinned[v] >= 0)
			continue;
		if (bad[dev[v]])
			todo[nt++] = (Rank){t->mem_perm[v], (int)v};
		else
			tg_mem_add(t, mm, dev[v], v);
	}
	qsort(todo, nt, sizeof(Rank), rank_cmp);
	bool *placed = xmalloc(sizeof(bool) * ((size_t)n + 1));
	for (uint32_t v = 0; v < n; v++)
		placed[v] = true;
	for (uint32_t i = 0; i < nt; i++)
		placed[todo[i].i] = false;
	double *near = xcalloc((size_t)k + 1, sizeof(double));
	for (uint32_t i = 0; i < nt; i++) {
		uint32_t v = (uint32_t)todo[i].i;
		int d = dev[v];
		if (!tg_mem_fits(t, mm, d, v)) {
			memset(near, 0, sizeof(double) * (size_t)k);
			for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++)
				if (placed[t->succ[e].node])
					near[dev[t->succ[e].node]] += t->succ[e].bytes;
			for (uint32_t e = t->pred_start[v]; e < t->pred_start[v + 1]; e++)
				if (placed[t->pred[e].node])
					near[dev[t->pred[e].node]] += t->pred[e].bytes;
			int best = -1;
			double broom = 0;
			for (int x = 0; x < k; x++) {
				if (!tg_mem_fits(t, mm, x, v))
					continue;
				double room = tg_mem_cap(t, x) - tg_mem_used(mm, x);
				if (best < 0 || near[x] > near[best] ||
				    (near[x] == near[best] && room > broom)) {
					best = x;
					broom = room;
				}
			}
			d = best >= 0 ? best : tg_mem_roomiest(t, mm);
		}
		dev[v] = d;
		placed[v] = true;
		tg_mem_add(t, mm, d, v);
	}
	free(near);
	free(placed);
	free(todo);
	free(bad);
}

/* place<algo=metis>: a PlacerFn (taskgraph.h). */
int placer_metis(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	uint32_t n = t->n;
	int k = t->ndev;
	TgMem mm;
	tg_mem_init(t, &mm);
	if (k < 2 || n < 2) {
		/* Nothing to partition: every node on the fastest device. */
		int best = 0;
		double bt = INFINITY;
		for (int d = 0; d < k; d++) {
			double s = 0;
			for (uint32_t v = 0; v < n; v++)
				s += tg_cost(t, v, d);
			if (s < bt) {
				bt = s;
				best = d;
			}
		}
		for (uint32_t v = 0; v < n; v++)
			dev[v] = t->pinned[v] >= 0 ? t->pinned[v] : best;
		over(t, dev, &mm);
		int rc = tg_mem_status(t, &mm, o);
		tg_mem_free(&mm);
		return rc;
	}
	double *w = xmalloc(sizeof(double) * ((size_t)n + 1));
	double *speed = xmalloc(sizeof(double) * ((size_t)k + 1));
	tg_weights(t, TG_MEAN, w);
	for (int d = 0; d < k; d++) {
		double s = 0;
		for (uint32_t v = 0; v < n; v++)
			s += tg_cost(t, v, d);
		speed[d] = s > 0 ? 1 / s : 1;
	}
	Mg g;
	mg_build(&g, t);
	int rc = EXIT_OK;
	mg_weights(&g, t, w, 1);
	mg_targets(&g, t, speed, 1);
	if (!mg_run(&g, t, o, 1)) {
		fputs("pcc: internal error: METIS_PartGraphKway failed\n", stderr);
		rc = EXIT_INTERNAL;
		goto out;
	}
	map_parts(&g, t, w, speed, true, dev);
	const char *how = "1 constraint";
	if (over(t, dev, &mm)) {
		mg_weights(&g, t, w, 2);
		mg_targets(&g, t, speed, 2);
		if (mg_run(&g, t, o, 2)) {
			map_parts(&g, t, w, speed, false, dev);
			how = "2 constraints";
		}
		if (over(t, dev, &mm)) {
			repair(t, dev, &mm);
			how = "repair";
		}
	}
	rc = tg_mem_status(t, &mm, o);
	if (o->report)
		fprintf(o->report, "place<algo=metis>: %d parts, %s\n", k, how);
out:
	mg_free(&g);
	free(speed);
	free(w);
	tg_mem_free(&mm);
	return rc;
}
