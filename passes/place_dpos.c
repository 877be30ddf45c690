/* place_dpos.c — FastT's DPOS (Device Placement and Operation Sequencing,
 * FastT §5.1, Algorithm 1) and HEFT (Topcuoglu, Hariri, Wu, IEEE TPDS
 * 2002), both on the list-scheduling core of listsched.c.
 *
 * HEFT: rank_u(v) = w̄(v) + max over successors s of (c̄(v,s) + rank_u(s)),
 * w̄ the mean cost over devices and c̄ the mean transfer time (tg_levels
 * over TG_MEAN); nodes in decreasing rank_u, each on the device of
 * minimum earliest finish time with insertion.
 *
 * DPOS differs in three ways (Algorithm 1, lines 3–5 and 9–10):
 *  - rank_u uses the maximal cost over devices and the maximal transfer
 *    time over device pairs (TG_MAX), not the means;
 *  - the critical path SET_CP is the source of largest rank_u followed,
 *    each time, by the successor of largest rank_u (tg_critical_path);
 *  - a node on the critical path goes to a critical-path device: for every
 *    device, as many of the remaining critical-path nodes as fit in its
 *    free memory are taken in path order, and the device whose average
 *    cost over them is smallest is chosen for those nodes; when a chosen
 *    device's memory is full when one of its nodes comes up (other nodes
 *    went there meanwhile), the choice is made again from that node on
 *    ("we find another critical-path device and assign as many
 *    critical-path operations to it as possible").
 * Every other node goes to the device of minimum EFT among those with
 * memory for it (lines 12–19), at its earliest idle slot: device
 * contention and slot search with insertion come from listsched.c (the
 * public FastT code's avail[j] skips the slot search; it is not copied).
 * A critical-path node also takes its device's earliest idle slot.
 *
 * The per-device "as many as fit" count is a binary search over prefix
 * sums of the path's permanent memory and a sparse table of its
 * temporary memory maxima (TgMem's accounting), the average a difference
 * of prefix sums of costs per device type: O(D log m) per choice for a
 * path of m nodes, O(m log m) to build.  Total
 * O((V + E) D + V D log V + m log m + choices · D log m).
 *
 * Pinned nodes stay on their device and are left out of SET_CP's device
 * choice.  A node that fits nowhere goes to the device with the most free
 * memory, and the placement is infeasible unless --best-effort. */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>

typedef struct Dpos {
	const TaskGraph *t;
	uint32_t *cp, m;         /* unpinned critical-path nodes, path order */
	uint32_t *cpos;          /* [n]: index in cp, or UINT32_MAX */
	int *cpdev;              /* [m]: chosen device, -1 while unchosen */
	double *perm;            /* [m + 1]: prefix sums of mem_perm */
	double *cost;            /* [ntype * (m + 1)]: prefix sums of cost */
	double *tmax;            /* [levels * m]: sparse table of mem_temp */
	int levels;
} Dpos;

static double temp_max(const Dpos *p, uint32_t i, uint32_t j)  /* [i, j) */
{
	int l = 0;
	while (((uint64_t)2 << l) <= j - i)
		l++;
	double a = p->tmax[(size_t)l * p->m + i];
	double b = p->tmax[(size_t)l * p->m + j - (1u << l)];
	return a > b ? a : b;
}

static void dpos_build(Dpos *p, const TaskGraph *t, const double *rank)
{
	uint32_t n = t->n;
	p->t = t;
	uint32_t *path = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	uint32_t len = tg_critical_path(t, rank, path);
	p->cp = xmalloc(sizeof(uint32_t) * ((size_t)len + 1));
	p->cpos = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	for (uint32_t v = 0; v < n; v++)
		p->cpos[v] = UINT32_MAX;
	p->m = 0;
	for (uint32_t i = 0; i < len; i++)
		if (t->pinned[path[i]] < 0) {
			p->cpos[path[i]] = p->m;
			p->cp[p->m++] = path[i];
		}
	free(path);
	uint32_t m = p->m;
	p->cpdev = xmalloc(sizeof(int) * ((size_t)m + 1));
	p->perm = xmalloc(sizeof(double) * ((size_t)m + 1));
	p->cost = xmalloc(sizeof(double) * (size_t)t->ntype * ((size_t)m + 1));
	p->perm[0] = 0;
	for (int ty = 0; ty < t->ntype; ty++)
		p->cost[(size_t)ty * (m + 1)] = 0;
	for (uint32_t i = 0; i < m; i++) {
		uint32_t v = p->cp[i];
		p->cpdev[i] = -1;
		p->perm[i + 1] = p->perm[i] + t->mem_perm[v];
		for (int ty = 0; ty < t->ntype; ty++) {
			double *c = p->cost + (size_t)ty * (m + 1);
			c[i + 1] = c[i] + t->cost[(size_t)v * t->ntype + ty];
		}
	}
	p->levels = 1;
	while (((uint64_t)m >> p->levels) > 0)
		p->levels++;
	p->tmax = xmalloc(sizeof(double) * (size_t)p->levels * ((size_t)m + 1));
	for (uint32_t i = 0; i < m; i++)
		p->tmax[i] = t->mem_temp[p->cp[i]];
	for (int l = 1; l < p->levels; l++)
		for (uint32_t i = 0; i + (1u << l) <= m; i++) {
			double a = p->tmax[(size_t)(l - 1) * m + i];
			double b = p->tmax[(size_t)(l - 1) * m + i + (1u << (l - 1))];
			p->tmax[(size_t)l * m + i] = a > b ? a : b;
		}
}

static void dpos_free(Dpos *p)
{
	free(p->cp);
	free(p->cpos);
	free(p->cpdev);
	free(p->perm);
	free(p->cost);
	free(p->tmax);
}

/* How many critical-path nodes from k on fit in d's free memory. */
static uint32_t fit_count(const Dpos *p, const TgMem *mm, int d, uint32_t k)
{
	const TaskGraph *t = p->t;
	double cap = tg_mem_cap(t, d);
	uint32_t lo = 0, hi = p->m - k;          /* lo fits; find the largest */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		double tm = temp_max(p, k, k + mid);
		double temp = tm > mm->temp[d] ? tm : mm->temp[d];
		if (mm->perm[d] + p->perm[k + mid] - p->perm[k] + temp <= cap)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Chooses the critical-path device for nodes k, k+1, ...: the smallest
 * average cost over as many as fit.  Returns it, or -1 if none fits cp[k]. */
static int choose_cp_device(Dpos *p, const TgMem *mm, uint32_t k)
{
	const TaskGraph *t = p->t;
	int best = -1;
	uint32_t best_cnt = 0;
	double best_avg = INFINITY;
	for (int d = 0; d < t->ndev; d++) {
		uint32_t cnt = fit_count(p, mm, d, k);
		if (!cnt)
			continue;
		const double *c = p->cost + (size_t)t->c->devs[d].type * (p->m + 1);
		double avg = (c[k + cnt] - c[k]) / cnt;
		if (avg < best_avg) {
			best = d;
			best_avg = avg;
			best_cnt = cnt;
		}
	}
	for (uint32_t i = k; best >= 0 && i < k + best_cnt; i++)
		p->cpdev[i] = best;
	return best;
}

static int dpos_pick(TgSched *s, uint32_t v, void *arg)
{
	Dpos *p = arg;
	uint32_t k = p->cpos[v];
	if (k == UINT32_MAX)
		return -1;
	int d = p->cpdev[k];
	if (d >= 0 && tg_mem_fits(p->t, &s->mem, d, v))
		return d;
	return choose_cp_device(p, &s->mem, k);
}

int tg_dpos(TgSched *s, const PlaceOpts *o, uint32_t *order)
{
	double *rank = tg_rank_u(s->t, TG_MAX);
	Dpos p = {0};
	dpos_build(&p, s->t, rank);
	int rc = tg_list_schedule(s, rank, dpos_pick, &p, o, order);
	dpos_free(&p);
	free(rank);
	return rc;
}

int tg_heft(TgSched *s, const PlaceOpts *o, uint32_t *order)
{
	double *rank = tg_rank_u(s->t, TG_MEAN);
	int rc = tg_list_schedule(s, rank, NULL, NULL, o, order);
	free(rank);
	return rc;
}

static int run_dpos(TgSched *s, const PlaceOpts *o)
{
	return tg_dpos(s, o, NULL);
}

static int run_heft(TgSched *s, const PlaceOpts *o)
{
	return tg_heft(s, o, NULL);
}

/* place<algo=dpos>: a PlacerFn (taskgraph.h). */
int placer_dpos(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	return tg_sched_placer(t, o, dev, "dpos", run_dpos);
}

/* place<algo=heft>: a PlacerFn (taskgraph.h). */
int placer_heft(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	return tg_sched_placer(t, o, dev, "heft", run_heft);
}
