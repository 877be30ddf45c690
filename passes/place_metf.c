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
 * inserts into idle slots) and ready(u, d) the largest arrival time of
 * u's inputs on d.  Ties: the node of larger
 * static bottom level (mean costs and transfers, tg_levels), then earlier
 * in t->topo, then the device where u finishes first, then the lower
 * device index.
 *
 * Communication as Baechi's placer models it (placer_utils.py,
 * ReadyOpManager and device.py): every device has one send channel and
 * one receive channel; a transfer from a to b starts when its data is
 * produced and both a's send and b's receive channels are free, and
 * holds both for tg_comm seconds (so transfers contend); a node's output
 * moved to a device once is cached there for its other consumers.
 * Candidates' ready times are estimated with the channels as they are
 * when the node becomes ready; the transfers are committed, and the
 * start recomputed, when the node is scheduled.
 *
 * Colocation.  Baechi places under TensorFlow's colocation constraints,
 * which keep a variable with the ops that read and update it.  Here a
 * free source — a node with no predecessors and no cost on any device
 * (a parameter, its optimizer state, a constant, an input) — does not
 * compete for a device at time 0, where ETF would scatter the model's
 * parameters over idle devices, far from their readers: it goes to the
 * device of its first consumer to be scheduled, at no transfer cost.
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
	bool *free_src;          /* [n]: a free source (colocated) */
	double *avail;           /* [ndev] */
	Heap *wait, *now;      /* [ndev] */
	uint32_t *homeless, nhome;
	double *send, *recv;     /* [ndev]: when each channel is free */
	/* Outputs already moved: (node * ndev + device) -> arrival, bytes;
	 * open addressing, key 0 = empty (keys are stored + 1). */
	struct Moved { uint64_t key; double at, bytes; } *moved;
	size_t mcap, mn;
} Metf;

static struct Moved *moved_find(Metf *e, uint64_t key, bool add)
{
	if (add && 2 * (e->mn + 1) > e->mcap) {
		struct Moved *old = e->moved;
		size_t oc = e->mcap;
		e->mcap = oc ? 2 * oc : 1024;
		e->moved = xcalloc(e->mcap, sizeof(struct Moved));
		e->mn = 0;
		for (size_t i = 0; i < oc; i++)
			if (old[i].key)
				*moved_find(e, old[i].key - 1, true) = old[i];
		free(old);
	}
	if (!e->mcap)
		return NULL;
	size_t h = (size_t)hash_bytes(&key, sizeof key) & (e->mcap - 1);
	for (; e->moved[h].key; h = (h + 1) & (e->mcap - 1))
		if (e->moved[h].key == key + 1)
			return &e->moved[h];
	if (!add)
		return NULL;
	e->mn++;
	e->moved[h].key = key + 1;
	return &e->moved[h];
}

/* When u's inputs are all on d: each from its own device through the
 * channels (or from the cache).  commit: take the channels and record
 * the arrivals. */
static double metf_ready(Metf *e, uint32_t u, int d, bool commit)
{
	const TaskGraph *t = e->t;
	double r = 0;
	for (uint32_t k = t->pred_start[u]; k < t->pred_start[u + 1]; k++) {
		uint32_t p = t->pred[k].node;
		int a = e->s.dev[p];
		if (a < 0)
			continue;
		double bytes = t->pred[k].bytes, at = e->s.finish[p];
		if (a != d && bytes > 0) {
			uint64_t key = (uint64_t)p * (uint64_t)t->ndev + (uint64_t)d;
			struct Moved *m = moved_find(e, key, false);
			if (m && m->bytes >= bytes) {
				at = m->at;
			} else {
				double st = fmax(at, fmax(e->send[a], e->recv[d]));
				at = st + tg_comm(t, a, d, bytes);
				if (commit) {
					e->send[a] = e->recv[d] = at;
					m = moved_find(e, key, true);
					m->at = at;
					m->bytes = bytes;
				}
			}
		}
		r = at > r ? at : r;
	}
	return r;
}

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
		double r = metf_ready(e, u, d, false);
		if (r <= e->avail[d])
			heap_push(&e->now[d], e->prio[u], 0, u);
		else
			heap_push(&e->wait[d], r, e->prio[u], u);
		e->cands[u]++;
	}
	if (!e->cands[u])
		e->homeless[e->nhome++] = u;
}

/* Schedules u on d: its transfers take the channels, and it starts once
 * they arrive and d is free. */
static void schedule(Metf *e, uint32_t u, int d)
{
	const TaskGraph *t = e->t;
	for (uint32_t k = t->pred_start[u]; k < t->pred_start[u + 1]; k++) {
		uint32_t p = t->pred[k].node;
		if (e->free_src[p] && e->s.dev[p] < 0)
			tg_sched_put(&e->s, p, d, 0);
	}
	double r = metf_ready(e, u, d, true);
	tg_sched_put(&e->s, u, d, r > e->avail[d] ? r : e->avail[d]);
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
	e.send = xcalloc(d1, sizeof(double));
	e.recv = xcalloc(d1, sizeof(double));
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

	e.free_src = xcalloc(n1, sizeof(bool));
	for (uint32_t v = 0; v < n; v++) {
		bool f = t->pinned[v] < 0 && t->pred_start[v + 1] == t->pred_start[v] &&
			 t->succ_start[v + 1] > t->succ_start[v];
		for (int d = 0; f && d < t->ndev; d++)
			f = tg_cost(t, v, d) == 0;
		e.free_src[v] = f;
	}
	for (uint32_t v = 0; v < n; v++) {
		e.left[v] = 0;
		for (uint32_t k = t->pred_start[v]; k < t->pred_start[v + 1]; k++)
			e.left[v] += !e.free_src[t->pred[k].node];
		if (!e.left[v] && !e.free_src[v])
			make_ready(&e, v);
	}
	while (e.s.nplaced < n) {
		if (e.nhome) {
			uint32_t u = e.homeless[--e.nhome];
			if (e.s.dev[u] >= 0)
				continue;
			schedule(&e, u, tg_mem_roomiest(t, &e.s.mem));
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
		/* A free source has a consumer, which places it. */
		if (bd < 0 && !e.nhome)
			pcc_die("m-ETF: %u nodes left with no candidate",
				n - e.s.nplaced);
		if (bd >= 0)
			schedule(&e, bu, bd);
	}
	int rc = tg_mem_status(t, &e.s.mem, o);
	if (o->report)
		fprintf(o->report, "place<algo=metf>: estimated makespan %.6g s "
			"(transfers contend for send and receive channels)\n",
			e.s.makespan);
	for (int d = 0; d < t->ndev; d++) {
		heap_free(&e.wait[d]);
		heap_free(&e.now[d]);
	}
	free(e.wait);
	free(e.now);
	free(e.avail);
	free(e.send);
	free(e.recv);
	free(e.moved);
	free(e.homeless);
	free(e.left);
	free(e.free_src);
	free(e.cands);
	free(e.prio);
	tg_sched_free(&e.s);
	return rc;
}
