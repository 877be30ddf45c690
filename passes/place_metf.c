/* place_metf.c — Baechi's m-ETF (Jeon et al., "Baechi: Fast Device
 * Placement of Machine Learning Graphs", SoCC 2020): Earliest Time First
 * list scheduling (Hwang, Chow, Anger, Lee, SIAM J. Comput. 1989) with a
 * memory limit per device.
 *
 * ETF.  At every step, among all pairs (ready node u, device d), schedule
 * the one that can start earliest, where a node is ready once all its
 * predecessors are scheduled and it can start on d at
 *   EST(u, d) = max(avail(d), ready(u, d)),
 * avail(d) the finish of the last node on d (ETF appends; it never
 * inserts into idle slots) and ready(u, d) the largest finish + transfer
 * time over u's predecessors (tg_sched_ready).  Ties: the node of larger
 * static bottom level (mean costs and transfers, tg_levels), then earlier
 * in t->topo, then the device where u finishes first, then the lower
 * device index.
 *
 * m-ETF.  A device is a candidate for u only while its memory holds u
 * (TgMem: permanent bytes add up, temporary bytes count by their
 * largest).  Memory on a device only grows, so a device that cannot hold
 * u never will: u is dropped from that device's candidates for good.  A
 * node no device can hold goes to the device with the most free memory;
 * the placement is then infeasible unless --best-effort.  Pinned nodes
 * are candidates on their device only, reserved from the start.
 *
 * Finding the earliest pair without scanning every ready node: each
 * device keeps its candidates in two heaps, `wait` keyed by ready(u, d)
 * and `now` keyed by priority for those with ready(u, d) <= avail(d).
 * The device's best pair is the top of `now` (start avail(d)) or, if
 * empty, the top of `wait` (start ready(u, d)); the step takes the best
 * over devices.  Each ready node enters up to D heaps once, so the whole
 * schedule is O((V + E) D + V D log V). */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>

typedef struct Metf {
	const TaskGraph *t;
	TgSched s;
	uint32_t *prio;          /* [n]: rank by (bottom level desc, topo) */
	uint32_t *cands;         /* [n]: devices still holding u as candidate */
	uint32_t *left;          /* [n]: unscheduled predecessors */
	double *avail;           /* [ndev] */
	Heap *wait, *now;      /* [ndev] */
	uint32_t *homeless, nhome;
} Metf;

typedef struct PrioKey {
	double bl;
	uint32_t pos, v;
} PrioKey;

static int key_cmp(const void *pa, const void *pb)
{
	const PrioKey *a = pa, *b = pb;
	if (a->bl != b->bl)
		return a->bl > b->bl ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* u became ready: a candidate on every device that can hold it. */
static void make_ready(Metf *e, uint32_t u)
{
	const TaskGraph *t = e->t;
	int lo = 0, hi = t->ndev;
	if (t->pinned[u] >= 0) {
		lo = t->pinned[u];
		hi = lo + 1;
	}
	e->cands[u] = 0;
	for (int d = lo; d < hi; d++) {
		if (t->pinned[u] < 0 && !tg_mem_fits(t, &e->s.mem, d, u))
			continue;
		double r = tg_sched_ready(&e->s, u, d);
		if (r <= e->avail[d])
			heap_push(&e->now[d], e->prio[u], 0, u);
		else
			heap_push(&e->wait[d], r, e->prio[u], u);
		e->cands[u]++;
	}
	if (!e->cands[u])
		e->homeless[e->nhome++] = u;
}

static void schedule(Metf *e, uint32_t u, int d, double start)
{
	const TaskGraph *t = e->t;
	tg_sched_put(&e->s, u, d, start);
	e->avail[d] = e->s.finish[u];
	for (uint32_t k = t->succ_start[u]; k < t->succ_start[u + 1]; k++) {
		uint32_t x = t->succ[k].node;
		if (--e->left[x] == 0)
			make_ready(e, x);
	}
}

/* Device d's earliest candidate: *u and *est; false if none. */
static bool device_best(Metf *e, int d, uint32_t *u, double *est)
{
	const TaskGraph *t = e->t;
	Heap *w = &e->wait[d], *nw = &e->now[d];
	for (;;) {
		while (w->n && w->a[0].key <= e->avail[d]) {
			HeapItem it;
			heap_pop(w, &it);
			heap_push(nw, e->prio[it.id], 0, it.id);
		}
		Heap *h = nw->n ? nw : w;
		if (!h->n)
			return false;
		uint32_t x = h->a[0].id;
		if (e->s.dev[x] >= 0) {
			heap_pop(h, NULL);
			continue;
		}
		if (t->pinned[x] < 0 && !tg_mem_fits(t, &e->s.mem, d, x)) {
			heap_pop(h, NULL);
			if (--e->cands[x] == 0)
				e->homeless[e->nhome++] = x;
			continue;
		}
		*u = x;
		*est = h == nw ? e->avail[d] : h->a[0].key;
		return true;
	}
}

/* place<algo=metf>: a PlacerFn (taskgraph.h). */
int placer_metf(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	uint32_t n = t->n;
	size_t n1 = (size_t)n + 1, d1 = (size_t)t->ndev + 1;
	Metf e = {.t = t};
	tg_sched_init(&e.s, t, dev);
	e.prio = xmalloc(sizeof(uint32_t) * n1);
	e.cands = xcalloc(n1, sizeof(uint32_t));
	e.left = xmalloc(sizeof(uint32_t) * n1);
	e.homeless = xmalloc(sizeof(uint32_t) * n1);
	e.avail = xcalloc(d1, sizeof(double));
	e.wait = xcalloc(d1, sizeof(Heap));
	e.now = xcalloc(d1, sizeof(Heap));
	/* Priority: bottom level, larger first; then topological position. */
	double *bl = tg_rank_u(t, TG_MEAN);
	uint32_t *pos = tg_topo_pos(t);
	PrioKey *keys = xmalloc(sizeof(PrioKey) * n1);
	for (uint32_t v = 0; v < n; v++)
		keys[v] = (PrioKey){tg_rank_key(bl[v]), pos[v], v};
	qsort(keys, n, sizeof(PrioKey), key_cmp);
	for (uint32_t i = 0; i < n; i++)
		e.prio[keys[i].v] = i;
	free(keys);
	free(pos);
	free(bl);

	for (uint32_t v = 0; v < n; v++) {
		e.left[v] = t->pred_start[v + 1] - t->pred_start[v];
		if (!e.left[v])
			make_ready(&e, v);
	}
	while (e.s.nplaced < n) {
		if (e.nhome) {
			uint32_t u = e.homeless[--e.nhome];
			if (e.s.dev[u] >= 0)
				continue;
			int d = tg_mem_roomiest(t, &e.s.mem);
			double r = tg_sched_ready(&e.s, u, d);
			schedule(&e, u, d, r > e.avail[d] ? r : e.avail[d]);
			continue;
		}
		int bd = -1;
		uint32_t bu = 0;
		double best = 0, bfin = 0;
		for (int d = 0; d < t->ndev; d++) {
			uint32_t u;
			double est;
			if (!device_best(&e, d, &u, &est))
				continue;
			double fin = est + tg_cost(t, u, d);
			if (bd < 0 || est < best ||
			    (est == best && (e.prio[u] < e.prio[bu] ||
					     (u == bu && fin < bfin)))) {
				bd = d;
				bu = u;
				best = est;
				bfin = fin;
			}
		}
		if (bd < 0 && !e.nhome)
			pcc_die("m-ETF: %u nodes left with no candidate",
				n - e.s.nplaced);
		if (bd >= 0)
			schedule(&e, bu, bd, best);
	}
	int rc = tg_mem_status(t, &e.s.mem, o);
	if (o->report)
		fprintf(o->report, "place<algo=metf>: estimated makespan %.6g s\n",
			e.s.makespan);
	for (int d = 0; d < t->ndev; d++) {
		heap_free(&e.wait[d]);
		heap_free(&e.now[d]);
	}
	free(e.wait);
	free(e.now);
	free(e.avail);
	free(e.homeless);
	free(e.left);
	free(e.cands);
	free(e.prio);
	tg_sched_free(&e.s);
	return rc;
}
