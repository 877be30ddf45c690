/* slots.c — idle intervals of devices for insertion-based list scheduling.
 *
 * A list scheduler with the insertion policy (HEFT, Topcuoglu et al. 2002;
 * Celeritas Algorithm 2, comp_EST: "checks the load on d_k to see if there
 * is a time slot to insert v_i after pre_t(v_i)") may start a node in any
 * idle gap of its device that is long enough, not only after the device's
 * last node.  Scanning a device's gaps one by one costs O(k) per node and
 * O(n^2) over a large graph, so each device keeps its gaps in a treap
 * ordered by start time, where every tree node also knows the longest gap
 * of its subtree.  A query for (ready, dur) is then two descents:
 *   1. the gap that contains `ready` (the last gap starting at or before
 *      it): if it stays idle for dur after ready, the answer is ready;
 *   2. otherwise the first gap starting after ready that is at least dur
 *      long: walk down to where ready would be inserted, then back up; the
 *      nodes right of that path, visited bottom-up, come in increasing
 *      start order, and the subtree maxima tell in O(1) whether a subtree
 *      holds a long enough gap, so one more descent finds the leftmost.
 * Taking [start, start + dur) shrinks the gap that holds it or splits it
 * in two; gaps never merge, and a gap filled exactly stays as an empty
 * interval, which fits nothing.  Work of zero duration (sources,
 * parameters) occupies no slot: it starts as soon as it is ready.  Each
 * device starts with the one gap [0, inf), so a query always succeeds,
 * unless work of infinite duration (times that overflowed) has made a
 * device busy for ever: then the answer is inf.
 *
 * Everything is iterative (parent links, no recursion); treap priorities
 * come from a fixed xorshift sequence, so schedules are reproducible.
 * Expected O(log k) per operation for k gaps. */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>

typedef struct Gap {
	double s, e;             /* idle on [s, e) */
	double mx;               /* longest e - s in the subtree */
	uint32_t l, r, p;        /* children and parent; 0 = none */
	uint32_t pri;            /* max-heap priority */
} Gap;

struct TgSlots {
	Gap *g;                  /* g[0] is the null node */
	uint32_t n, cap;
	uint32_t *root;          /* [ndev] */
	int ndev;
	uint32_t rng;
};

static uint32_t xorshift(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static uint32_t gap_new(TgSlots *s, double a, double b)
{
	if (s->n == s->cap) {
		s->cap *= 2;
		s->g = xrealloc(s->g, sizeof *s->g * s->cap);
	}
	uint32_t x = s->n++;
	s->g[x] = (Gap){a, b, b - a, 0, 0, 0, xorshift(&s->rng)};
	return x;
}

TgSlots *tg_slots_new(int ndev)
{
	TgSlots *s = xcalloc(1, sizeof *s);
	s->ndev = ndev;
	s->cap = (uint32_t)(ndev > 0 ? ndev : 0) + 16;
	s->g = xmalloc(sizeof *s->g * s->cap);
	s->g[0] = (Gap){0, 0, -INFINITY, 0, 0, 0, 0};
	s->n = 1;
	s->rng = 2463534242u;
	s->root = xmalloc(sizeof *s->root * (size_t)(ndev > 0 ? ndev : 1));
	for (int d = 0; d < ndev; d++)
		s->root[d] = gap_new(s, 0, INFINITY);
	return s;
}

void tg_slots_free(TgSlots *s)
{
	if (!s)
		return;
	free(s->g);
	free(s->root);
	free(s);
}

static void pull(Gap *g, uint32_t x)
{
	double m = g[x].e - g[x].s;
	if (g[g[x].l].mx > m)
		m = g[g[x].l].mx;
	if (g[g[x].r].mx > m)
		m = g[g[x].r].mx;
	g[x].mx = m;
}

/* The last gap of device d starting at or before t, or 0. */
static uint32_t gap_at(const TgSlots *s, int d, double t)
{
	const Gap *g = s->g;
	uint32_t x = s->root[d], c = 0;
	while (x) {
		if (g[x].s <= t) {
			c = x;
			x = g[x].r;
		} else {
			x = g[x].l;
		}
	}
	return c;
}

/* The leftmost gap of subtree x at least dur long (g[x].mx >= dur). */
static uint32_t leftmost_fit(const Gap *g, uint32_t x, double dur)
{
	for (;;) {
		if (g[g[x].l].mx >= dur)
			x = g[x].l;
		else if (g[x].e - g[x].s >= dur)
			return x;
		else
			x = g[x].r;
	}
}

double tg_slots_find(const TgSlots *s, int d, double ready, double dur)
{
	const Gap *g = s->g;
	if (!(ready > 0))
		ready = 0;
	if (!(dur > 0) || ready == INFINITY)
		return ready;
	uint32_t c = gap_at(s, d, ready);
	if (c && g[c].e - ready >= dur)
		return ready;
	uint32_t x = s->root[d], last = 0;
	while (x) {
		last = x;
		x = g[x].s > ready ? g[x].l : g[x].r;
	}
	for (uint32_t y = last, from = 0; y; from = y, y = g[y].p) {
		if (from && from != g[y].l)
			continue;        /* came up from the right: y <= ready */
		if (g[y].s <= ready)
			continue;
		if (g[y].e - g[y].s >= dur)
			return g[y].s;
		if (g[g[y].r].mx >= dur)
			return g[leftmost_fit(g, g[y].r, dur)].s;
	}
	return INFINITY;         /* only after work of infinite duration */
}

static void rotate_up(TgSlots *s, int d, uint32_t x)
{
	Gap *g = s->g;
	uint32_t p = g[x].p, gp = g[p].p;
	if (g[p].l == x) {
		g[p].l = g[x].r;
		if (g[x].r)
			g[g[x].r].p = p;
		g[x].r = p;
	} else {
		g[p].r = g[x].l;
		if (g[x].l)
			g[g[x].l].p = p;
		g[x].l = p;
	}
	g[p].p = x;
	g[x].p = gp;
	if (!gp)
		s->root[d] = x;
	else if (g[gp].l == p)
		g[gp].l = x;
	else
		g[gp].r = x;
	pull(g, p);
	pull(g, x);
}

static void pull_to_root(Gap *g, uint32_t x)
{
	for (; x; x = g[x].p)
		pull(g, x);
}

void tg_slots_take(TgSlots *s, int d, double start, double dur)
{
	if (!(dur > 0) || start == INFINITY)
		return;
	uint32_t c = gap_at(s, d, start);
	if (!c || start + dur > s->g[c].e * (1 + 1e-12) + 1e-300)
		pcc_die("tg_slots_take: [%g, %g) is not idle on device %d", start,
			start + dur, d);
	Gap *g = s->g;
	double end = g[c].e;
	if (start == g[c].s && start + dur < INFINITY) {
		g[c].s = start + dur < end ? start + dur : end;
		pull_to_root(g, c);
		return;
	}
	g[c].e = start;
	if (start + dur >= end || start + dur == INFINITY) {
		pull_to_root(g, c);
		return;
	}
	uint32_t x = gap_new(s, start + dur, end);
	g = s->g;
	/* x is c's successor: c's right child, or the leftmost below it. */
	if (!g[c].r) {
		g[c].r = x;
		g[x].p = c;
	} else {
		uint32_t y = g[c].r;
		while (g[y].l)
			y = g[y].l;
		g[y].l = x;
		g[x].p = y;
	}
	/* Rotations pull the nodes they move below x; x's ancestors after
	 * them include every other node whose subtree changed (c too). */
	while (g[x].p && g[x].pri > g[g[x].p].pri)
		rotate_up(s, d, x);
	pull_to_root(g, x);
}

double tg_ready(const TaskGraph *t, uint32_t v, int d, const int *dev,
		const double *finish)
{
	double r = 0;
	for (uint32_t k = t->pred_start[v]; k < t->pred_start[v + 1]; k++) {
		const TgEdge *e = &t->pred[k];
		double x = finish[e->node];
		if (e->bytes > 0)
			x += tg_comm(t, dev[e->node], d, e->bytes);
		r = x > r ? x : r;
	}
	return r;
}

double tg_eval_order(const TaskGraph *t, const uint32_t *order,
			const int *dev, double *finish)
{
	double *fin = finish ? finish
			     : xmalloc(sizeof(double) * ((size_t)t->n + 1));
	TgSlots *s = tg_slots_new(t->ndev);
	double makespan = 0;
	for (uint32_t k = 0; k < t->n; k++) {
		uint32_t v = order[k];
		int d = dev[v];
		double w = tg_cost(t, v, d);
		double st = tg_slots_find(s, d, tg_ready(t, v, d, dev, fin), w);
		tg_slots_take(s, d, st, w);
		fin[v] = st + w;
		makespan = fin[v] > makespan ? fin[v] : makespan;
	}
	tg_slots_free(s);
	if (!finish)
		free(fin);
	return makespan;
}
