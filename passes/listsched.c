/* listsched.c — the list-scheduling core that HEFT, FastT's DPOS and
 * FD-DPS's DCP share (taskgraph.h, "listsched.c" section).
 *
 * A list scheduler takes nodes one at a time and gives each a device and a
 * start time.  A device runs one node at a time (device contention); a
 * node may start once every input has arrived: its data-ready time on
 * device d is the largest finish + transfer time over its predecessors
 * (tg_comm; 0 on the same device).  Links are not contended, as in HEFT
 * and FastT's model.
 *
 * Insertion (Topcuoglu, Hariri, Wu, IEEE TPDS 2002, §4.1; FastT §5.1,
 * "avail[j] is the start time of such a timeslot"): a node need not go
 * after the last node on its device; it takes the earliest idle slot that
 * starts at or after its data-ready time and is long enough.  The public
 * FastT code computes avail[j] as the device's last finish time and never
 * searches the slots; here the slot search is the only path.
 *
 * Idle slots.  Each device's free time is a set of disjoint gaps [a, b),
 * the last one [a, inf), kept in a treap keyed by a with the longest gap
 * of every subtree.  The earliest start for (ready r, length w) is r when
 * the gap containing r has b - r >= w, else the a of the first gap after
 * r with b - a >= w: one descent to r and one walk up and down the
 * subtree maxima, O(log n) expected.  Occupying [s, s + w) shrinks or
 * splits one gap.  Treap priorities are a hash of the pool index (no
 * random state); every walk is iterative.
 *
 * Costs per node: data-ready times O(indeg) per device, slot search
 * O(log n) per device, commit O(log n).  tg_list_schedule is
 * O((V + E) D + V D log V) for V nodes, E edges, D devices. */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- idle slots --------------------------------------------------------- */

struct TgSlots {
	uint32_t *l, *r, *p;     /* children and parent; 0 = none */
	double *a, *b, *mx;      /* gap [a, b) and longest gap in the subtree */
	uint32_t n, cap;         /* pool; index 0 is the nil node */
	uint32_t freel;          /* free list through l[] */
	uint32_t *root;          /* [ndev] */
};

static uint64_t prio(uint32_t x)
{
	uint64_t z = (uint64_t)x + 0x9e3779b97f4a7c15ULL;   /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void slots_grow(TgSlots *q)
{
	uint32_t cap = q->cap ? 2 * q->cap : 64;
	q->l = xrealloc(q->l, sizeof(uint32_t) * cap);
	q->r = xrealloc(q->r, sizeof(uint32_t) * cap);
	q->p = xrealloc(q->p, sizeof(uint32_t) * cap);
	q->a = xrealloc(q->a, sizeof(double) * cap);
	q->b = xrealloc(q->b, sizeof(double) * cap);
	q->mx = xrealloc(q->mx, sizeof(double) * cap);
	q->cap = cap;
}

static void pull(TgSlots *q, uint32_t x)
{
	double m = q->b[x] - q->a[x];
	if (q->mx[q->l[x]] > m)
		m = q->mx[q->l[x]];
	if (q->mx[q->r[x]] > m)
		m = q->mx[q->r[x]];
	q->mx[x] = m;
}

static void pull_up(TgSlots *q, uint32_t x)
{
	for (; x; x = q->p[x])
		pull(q, x);
}

/* Replaces child `old` of parent p (or the root of device d) by x. */
static void relink(TgSlots *q, int d, uint32_t p, uint32_t old, uint32_t x)
{
	if (!p)
		q->root[d] = x;
	else if (q->l[p] == old)
		q->l[p] = x;
	else
		q->r[p] = x;
	if (x)
		q->p[x] = p;
}

/* Rotates x above its parent. */
static void rotate_up(TgSlots *q, int d, uint32_t x)
{
	uint32_t y = q->p[x], g = q->p[y];
	if (q->l[y] == x) {
		q->l[y] = q->r[x];
		if (q->r[x])
			q->p[q->r[x]] = y;
		q->r[x] = y;
	} else {
		q->r[y] = q->l[x];
		if (q->l[x])
			q->p[q->l[x]] = y;
		q->l[x] = y;
	}
	q->p[y] = x;
	relink(q, d, g, y, x);
	pull(q, y);
	pull(q, x);
}

static void slot_insert(TgSlots *q, int d, double a, double b)
{
	uint32_t x = q->freel;
	if (x) {
		q->freel = q->l[x];
	} else {
		if (q->n == q->cap)
			slots_grow(q);
		x = q->n++;
	}
	q->l[x] = q->r[x] = 0;
	q->a[x] = a;
	q->b[x] = b;
	q->mx[x] = b - a;
	uint32_t y = q->root[d], p = 0;
	while (y) {
		p = y;
		y = a < q->a[y] ? q->l[y] : q->r[y];
	}
	q->p[x] = p;
	if (!p)
		q->root[d] = x;
	else if (a < q->a[p])
		q->l[p] = x;
	else
		q->r[p] = x;
	while (q->p[x] && prio(x) > prio(q->p[x]))
		rotate_up(q, d, x);
	pull_up(q, x);
}

static void slot_erase(TgSlots *q, int d, uint32_t x)
{
	while (q->l[x] || q->r[x]) {
		uint32_t c = !q->l[x] ? q->r[x] : !q->r[x] ? q->l[x]
			   : prio(q->l[x]) > prio(q->r[x]) ? q->l[x] : q->r[x];
		rotate_up(q, d, c);
	}
	uint32_t p = q->p[x];
	relink(q, d, p, x, 0);
	pull_up(q, p);
	q->l[x] = q->freel;
	q->freel = x;
}

/* The gap with the largest a <= t, or 0. */
static uint32_t slot_floor(const TgSlots *q, int d, double t)
{
	uint32_t x = q->root[d], best = 0;
	while (x) {
		if (q->a[x] <= t) {
			best = x;
			x = q->r[x];
		} else {
			x = q->l[x];
		}
	}
	return best;
}

/* The leftmost gap of subtree x at least w long (mx[x] >= w). */
static uint32_t slot_descend(const TgSlots *q, uint32_t x, double w)
{
	for (;;) {
		if (q->l[x] && q->mx[q->l[x]] >= w)
			x = q->l[x];
		else if (q->b[x] - q->a[x] >= w)
			return x;
		else
			x = q->r[x];
	}
}

static double slot_find(const TgSlots *q, int d, double ready, double w)
{
	uint32_t x = slot_floor(q, d, ready);
	if (!x)
		return q->a[slot_descend(q, q->root[d], w)];
	if (q->b[x] - ready >= w)
		return ready;
	/* In-order successors of x: its right subtree, then each ancestor
	 * reached from the left with that ancestor's right subtree. */
	if (q->r[x] && q->mx[q->r[x]] >= w)
		return q->a[slot_descend(q, q->r[x], w)];
	for (; q->p[x]; x = q->p[x]) {
		uint32_t y = q->p[x];
		if (q->l[y] != x)
			continue;
		if (q->b[y] - q->a[y] >= w)
			return q->a[y];
		if (q->r[y] && q->mx[q->r[y]] >= w)
			return q->a[slot_descend(q, q->r[y], w)];
	}
	pcc_die("listsched: no idle slot (the last gap is unbounded)");
}

static void slot_take(TgSlots *q, int d, double s, double w)
{
	uint32_t x = slot_floor(q, d, s);
	double e = s + w;
	/* the slot search's own start may overshoot b by rounding */
	if (!x || e > q->b[x] + 1e-9 * (1 + fabs(e)))
		pcc_die("listsched: [%g, %g) on device %d is not idle", s, e, d);
	double a = q->a[x], b = q->b[x];
	if (s > a) {
		q->b[x] = s;
		pull_up(q, x);
		if (b > e)
			slot_insert(q, d, e, b);
	} else if (b > e) {
		q->a[x] = e;        /* still between its neighbours */
		pull_up(q, x);
	} else {
		slot_erase(q, d, x);
	}
}

/* ---- the schedule ------------------------------------------------------- */

void tg_mem_pinned(const TaskGraph *t, TgMem *mm)
{
	for (uint32_t v = 0; v < t->n; v++)
		if (t->pinned[v] >= 0)
			tg_mem_add(t, mm, t->pinned[v], v);
}

int tg_mem_roomiest(const TaskGraph *t, const TgMem *mm)
{
	int best = 0;
	double room = -INFINITY;
	for (int d = 0; d < t->ndev; d++) {
		double r = tg_mem_cap(t, d) - tg_mem_used(mm, d);
		if (r > room) {
			room = r;
			best = d;
		}
	}
	return best;
}

int tg_mem_status(const TaskGraph *t, const TgMem *mm, const PlaceOpts *o)
{
	if (o && o->best_effort)
		return EXIT_OK;
	for (int d = 0; d < t->ndev; d++)
		if (tg_mem_used(mm, d) > tg_mem_cap(t, d))
			return EXIT_INFEASIBLE;
	return EXIT_OK;
}

void tg_sched_init(TgSched *s, const TaskGraph *t, int *dev)
{
	size_t n1 = (size_t)t->n + 1;
	memset(s, 0, sizeof *s);
	s->t = t;
	s->dev = dev;
	for (uint32_t v = 0; v < t->n; v++)
		dev[v] = -1;
	s->start = xcalloc(n1, sizeof(double));
	s->finish = xcalloc(n1, sizeof(double));
	tg_mem_init(t, &s->mem);
	tg_mem_pinned(t, &s->mem);
	TgSlots *q = s->slots = xcalloc(1, sizeof *q);
	q->root = xcalloc((size_t)t->ndev + 1, sizeof(uint32_t));
	slots_grow(q);
	q->n = 1;                       /* nil */
	q->l[0] = q->r[0] = q->p[0] = 0;
	q->a[0] = q->b[0] = 0;
	q->mx[0] = -INFINITY;
	for (int d = 0; d < t->ndev; d++)
		slot_insert(q, d, 0, INFINITY);
}

void tg_sched_free(TgSched *s)
{
	TgSlots *q = s->slots;
	if (q) {
		free(q->l);
		free(q->r);
		free(q->p);
		free(q->a);
		free(q->b);
		free(q->mx);
		free(q->root);
		free(q);
	}
	free(s->start);
	free(s->finish);
	tg_mem_free(&s->mem);
	s->slots = NULL;
	s->start = s->finish = NULL;
}

double tg_sched_ready(const TgSched *s, uint32_t v, int d)
{
	const TaskGraph *t = s->t;
	double r = 0;
	for (uint32_t k = t->pred_start[v]; k < t->pred_start[v + 1]; k++) {
		uint32_t u = t->pred[k].node;
		if (s->dev[u] < 0)
			continue;
		double x = s->finish[u] + tg_comm(t, s->dev[u], d, t->pred[k].bytes);
		r = x > r ? x : r;
	}
	return r;
}

double tg_sched_slot(const TgSched *s, int d, double ready, double dur)
{
	if (dur <= 0)
		return ready;
	return slot_find(s->slots, d, ready, dur);
}

double tg_sched_eft(const TgSched *s, uint32_t v, int d, double *est)
{
	double w = tg_cost(s->t, v, d);
	double st = tg_sched_slot(s, d, tg_sched_ready(s, v, d), w);
	if (est)
		*est = st;
	return st + w;
}

int tg_sched_best(const TgSched *s, uint32_t v, double *est, bool *fits)
{
	const TaskGraph *t = s->t;
	int best = -1;
	double bf = INFINITY, bs = 0;
	for (int d = 0; d < t->ndev; d++) {
		if (!tg_mem_fits(t, &s->mem, d, v))
			continue;
		double st, f = tg_sched_eft(s, v, d, &st);
		if (best < 0 || f < bf) {
			best = d;
			bf = f;
			bs = st;
		}
	}
	*fits = best >= 0;
	if (best < 0) {
		best = tg_mem_roomiest(t, &s->mem);
		tg_sched_eft(s, v, best, &bs);
	}
	if (est)
		*est = bs;
	return best;
}

void tg_sched_put(TgSched *s, uint32_t v, int d, double start)
{
	const TaskGraph *t = s->t;
	double w = tg_cost(t, v, d);
	if (w > 0)
		slot_take(s->slots, d, start, w);
	s->dev[v] = d;
	s->start[v] = start;
	s->finish[v] = start + w;
	if (s->finish[v] > s->makespan)
		s->makespan = s->finish[v];
	if (t->pinned[v] < 0)
		tg_mem_add(t, &s->mem, d, v);
	s->nplaced++;
}

/* ---- a binary min-heap of (key, tie, id) -------------------------------- */

static bool heap_less(const TgHeapItem *x, const TgHeapItem *y)
{
	if (x->key != y->key)
		return x->key < y->key;
	return x->tie < y->tie;
}

void tg_heap_push(TgHeap *h, double key, uint32_t tie, uint32_t id)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->a = xrealloc(h->a, sizeof *h->a * h->cap);
	}
	TgHeapItem it = {key, tie, id};
	uint32_t i = h->n++;
	while (i) {
		uint32_t p = (i - 1) / 2;
		if (!heap_less(&it, &h->a[p]))
			break;
		h->a[i] = h->a[p];
		i = p;
	}
	h->a[i] = it;
}

bool tg_heap_pop(TgHeap *h, TgHeapItem *out)
{
	if (!h->n)
		return false;
	if (out)
		*out = h->a[0];
	TgHeapItem last = h->a[--h->n];
	uint32_t i = 0, n = h->n;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && heap_less(&h->a[c + 1], &h->a[c]))
			c++;
		if (!heap_less(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (n)
		h->a[i] = last;
	return true;
}

void tg_heap_free(TgHeap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}

/* ---- the list scheduler ------------------------------------------------- */

double tg_rank_key(double r)
{
	if (r == 0 || !isfinite(r))
		return r;
	int e;
	double m = frexp(r, &e);
	return ldexp(nearbyint(ldexp(m, 40)), e - 40);
}

double *tg_rank_u(const TaskGraph *t, TgWeight how)
{
	double *w = xmalloc(sizeof(double) * ((size_t)t->n + 1));
	double *rank = xmalloc(sizeof(double) * ((size_t)t->n + 1));
	tg_weights(t, how, w);
	tg_levels(t, w, how, NULL, rank);
	free(w);
	return rank;
}

uint32_t *tg_topo_pos(const TaskGraph *t)
{
	uint32_t *pos = xmalloc(sizeof(uint32_t) * ((size_t)t->n + 1));
	for (uint32_t j = 0; j < t->n; j++)
		pos[t->topo[j]] = j;
	return pos;
}

int tg_list_schedule(TgSched *s, const double *rank, TgPickFn pick, void *arg,
		     const PlaceOpts *o, uint32_t *order)
{
	const TaskGraph *t = s->t;
	uint32_t n = t->n;
	uint32_t *pos = tg_topo_pos(t);
	uint32_t *left = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	TgHeap ready = {0};
	for (uint32_t v = 0; v < n; v++) {
		left[v] = t->pred_start[v + 1] - t->pred_start[v];
		if (!left[v])
			tg_heap_push(&ready, -tg_rank_key(rank[v]), pos[v], v);
	}
	uint32_t k = 0;
	TgHeapItem it;
	while (tg_heap_pop(&ready, &it)) {
		uint32_t v = it.id;
		int d = t->pinned[v];
		double st;
		if (d < 0 && pick)
			d = pick(s, v, arg);
		if (d >= 0) {
			tg_sched_eft(s, v, d, &st);
		} else {
			bool fits;
			d = tg_sched_best(s, v, &st, &fits);
		}
		tg_sched_put(s, v, d, st);
		if (order)
			order[k] = v;
		k++;
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++) {
			uint32_t w = t->succ[e].node;
			if (--left[w] == 0)
				tg_heap_push(&ready, -tg_rank_key(rank[w]), pos[w], w);
		}
	}
	tg_heap_free(&ready);
	free(left);
	free(pos);
	return tg_mem_status(t, &s->mem, o);
}

int tg_sched_placer(const TaskGraph *t, const PlaceOpts *o, int *dev,
		    const char *algo, int (*run)(TgSched *s, const PlaceOpts *o))
{
	TgSched s;
	tg_sched_init(&s, t, dev);
	int rc = run(&s, o);
	if (o->report)
		fprintf(o->report, "place<algo=%s>: estimated makespan %.6g s\n",
			algo, s.makespan);
	tg_sched_free(&s);
	return rc;
}

uint32_t tg_critical_path(const TaskGraph *t, const double *rank, uint32_t *cp)
{
	uint32_t m = 0, v = UINT32_MAX;
	for (uint32_t j = 0; j < t->n; j++) {
		uint32_t u = t->topo[j];
		if (t->pred_start[u] == t->pred_start[u + 1] &&
		    (v == UINT32_MAX || tg_rank_key(rank[u]) > tg_rank_key(rank[v])))
			v = u;
	}
	while (v != UINT32_MAX) {
		cp[m++] = v;
		uint32_t next = UINT32_MAX;
		for (uint32_t k = t->succ_start[v]; k < t->succ_start[v + 1]; k++) {
			uint32_t w = t->succ[k].node;
			double rw = tg_rank_key(rank[w]);
			double rn = next == UINT32_MAX ? 0 : tg_rank_key(rank[next]);
			if (next == UINT32_MAX || rw > rn || (rw == rn && w < next))
				next = w;
		}
		v = next;
	}
	return m;
}
