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
 * Idle slots are slots.c's per-device gap trees: O(log n) expected to
 * find the earliest fitting gap and to occupy it.
 *
 * Costs per node: data-ready times O(indeg) per device, slot search
 * O(log n) per device, commit O(log n).  tg_list_schedule is
 * O((V + E) D + V D log V) for V nodes, E edges, D devices. */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tg_mem_pinned(const TaskGraph *t, TgMem *mm)
{
	for (uint32_t v = 0; v < t->n; v++)
		if (t->pinned[v] >= 0)
			tg_mem_add(t, mm, t->pinned[v], v);
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
	s->slots = tg_slots_new(t->ndev);
}

void tg_sched_free(TgSched *s)
{
	tg_slots_free(s->slots);
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
	return tg_slots_find(s->slots, d, ready, dur);
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
		tg_slots_take(s->slots, d, start, w);
	s->dev[v] = d;
	s->start[v] = start;
	s->finish[v] = start + w;
	if (s->finish[v] > s->makespan)
		s->makespan = s->finish[v];
	if (t->pinned[v] < 0)
		tg_mem_add(t, &s->mem, d, v);
	s->nplaced++;
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
	double *key = xmalloc(sizeof(double) * ((size_t)n + 1));
	uint64_t *tie = xmalloc(sizeof(uint64_t) * ((size_t)n + 1));
	for (uint32_t v = 0; v < n; v++) {
		key[v] = -tg_rank_key(rank[v]);
		tie[v] = pos[v];
	}
	uint32_t *seq = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	TopoDag dag = {.n = n, .start = t->succ_start, .to_fn = tg_succ_node,
		       .arg = t, .key = key, .tie = tie};
	uint32_t m = topo_sort(&dag, seq, NULL);
	for (uint32_t k = 0; k < m; k++) {
		uint32_t v = seq[k];
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
	}
	free(seq);
	free(tie);
	free(key);
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
