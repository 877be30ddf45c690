/* place_dcp.c — FD-DPS's dynamic-critical-path scheduling (FD-DPS §4.2
 * Definitions 8–12 and Formula (10), §4.3 Sort_Node, Find_Slot and the
 * update step), on the list-scheduling core of listsched.c.
 *
 * Quantities, over the partly scheduled graph.  A scheduled node costs its
 * time on its device and starts at its scheduled start; an unscheduled
 * node costs w̄, its mean time over devices; an edge out of a scheduled
 * node into an unscheduled one costs c̄, its mean transfer time, as do
 * edges between unscheduled nodes (tg_edge_time, TG_MEAN).
 *   EST(v)  Formula (6): the longest path into v.  For a schedulable node
 *           (every parent scheduled) EST(v) = max over parents p of
 *           finish(p) + c̄(p, v).
 *   DCPL    Formula (10): max over nodes of EST + cost.
 *   LST(v)  Formula (7): DCPL minus the longest path from v to a sink.
 * Every node after an unscheduled node is unscheduled, so that path is
 * bl(v), the static bottom level over w̄ and c̄ (tg_levels), and
 * LST(v) = DCPL − bl(v) for every unscheduled v.
 *
 * Maintaining them incrementally.  Let head(u) = max over scheduled
 * parents p of finish(p) + c̄(p, u) (0 for a source).  A longest path
 * either ends in the scheduled part (it is then at most the largest finish
 * F) or enters the unscheduled part at a node u with a scheduled parent or
 * none, and continues along bl(u); so
 *   DCPL = max(F, max over unscheduled u with a scheduled parent or none
 *                 of head(u) + bl(u)).
 * head(u) only grows, when a parent is scheduled; one max-heap of
 * head(u) + bl(u) pushed on every growth, popped lazily past scheduled
 * nodes, gives DCPL in O(log V) amortised.  EST and LST of every node that
 * a decision reads are then exact at each step; EST of a node not yet
 * schedulable is never read and never materialised.
 *
 * Sort_Node (Algorithm 1): critical nodes (EST = LST) first, otherwise
 * the largest Score = 1 / (LST − EST + eps) (Formula (9)).  Since
 * LST − EST = DCPL − (EST + bl) and DCPL is common to all candidates,
 * both rules take the schedulable node of largest EST + bl: a critical
 * node has the largest possible value, DCPL.  Once a node is schedulable
 * its EST is final, so the schedulable nodes sit in a heap keyed by
 * EST + bl (ties: earlier in t->topo).
 *
 * Find_Slot (Formula (11), rules (1)–(4)).  On device k, o_i's EST' is its
 * data-ready time there (a parent on k costs no transfer: §4.3's
 * EST' = EST − w), and its latest finish is LST + ET = DCPL − bl + w̄
 * (the path after it is unchanged).  Device k satisfies (11) when the
 * earliest idle slot at or after EST' that is long enough ends by that
 * latest finish, and k has memory for o_i.  Among those (the subset S):
 *  (1) a device that holds a parent of o_i (the one with the earliest
 *      finish if several);
 *  (2) else, if o_i has children: o_c, the child of highest priority
 *      (largest EST + bl, EST estimated from o_i's EST as if o_i ran with
 *      w̄), and among the devices of S with memory for both, the one
 *      minimising ET(o_c) + ET(o_i) (Formula (12));
 *  (3) else the device of S where o_i starts earliest;
 *  (4) when S is empty, the device of minimum finish time.  The paper
 *      takes the device running the lowest-priority node, displacing it;
 *      here scheduled nodes keep their start times (so (11) uses the
 *      start of the next scheduled node o_m, which is at most its LST),
 *      and the non-displacing equivalent is the earliest finish.
 * A pinned node goes to its device.  A node that fits nowhere goes to the
 * device with the most free memory; the placement is then infeasible
 * unless --best-effort.
 *
 * Cost per decision: O(D (indeg + log V) + outdeg log V); in total
 * O((V + E) D + (V D + E) log V).  The paper recomputes EST and LST over
 * the whole graph after each decision, O(V (V + E)). */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>

typedef struct Dcp {
	const TaskGraph *t;
	TgSched *s;
	double *w, *bl, *head;   /* [n] */
	double *st, *fin;        /* [ndev] per decision */
	bool *ok, *fits;         /* [ndev] */
} Dcp;

/* Memory for u and c together on d. */
static bool fits_pair(const TaskGraph *t, const TgMem *mm, int d, uint32_t u,
		      uint32_t c)
{
	double temp = mm->temp[d];
	temp = t->mem_temp[u] > temp ? t->mem_temp[u] : temp;
	temp = t->mem_temp[c] > temp ? t->mem_temp[c] : temp;
	double perm = mm->perm[d] + t->mem_perm[u];
	if (t->pinned[c] < 0)
		perm += t->mem_perm[c];
	return perm + temp <= tg_mem_cap(t, d);
}

/* Find_Slot: the device for u; *rule the rule that chose it. */
static int find_slot(Dcp *p, uint32_t u, double lf, double tol, int *rule)
{
	const TaskGraph *t = p->t;
	TgSched *s = p->s;
	int nd = t->ndev, nS = 0;
	for (int k = 0; k < nd; k++) {
		p->fits[k] = tg_mem_fits(t, &s->mem, k, u);
		p->fin[k] = tg_sched_eft(s, u, k, &p->st[k]);
		p->ok[k] = p->fits[k] && p->fin[k] <= lf + tol;
		nS += p->ok[k];
	}
	int best = -1;
	if (nS) {
		/* (1) a parent's device */
		for (uint32_t e = t->pred_start[u]; e < t->pred_start[u + 1]; e++) {
			int k = s->dev[t->pred[e].node];
			if (k >= 0 && p->ok[k] &&
			    (best < 0 || p->fin[k] < p->fin[best] ||
			     (p->fin[k] == p->fin[best] && k < best)))
				best = k;
		}
		if (best >= 0) {
			*rule = 1;
			return best;
		}
		/* (2) with the child of highest priority */
		uint32_t c = UINT32_MAX;
		double cbest = -INFINITY;
		for (uint32_t e = t->succ_start[u]; e < t->succ_start[u + 1]; e++) {
			uint32_t x = t->succ[e].node;
			double est = p->head[u] + p->w[u] +
				     tg_edge_time(t, TG_MEAN, t->succ[e].bytes);
			est = p->head[x] > est ? p->head[x] : est;
			double key = tg_rank_key(est + p->bl[x]);
			if (key > cbest) {
				cbest = key;
				c = x;
			}
		}
		if (c != UINT32_MAX) {
			double bsum = INFINITY;
			for (int k = 0; k < nd; k++) {
				if (!p->ok[k] || (t->pinned[c] >= 0 && t->pinned[c] != k) ||
				    !fits_pair(t, &s->mem, k, u, c))
					continue;
				double sum = tg_cost(t, c, k) + tg_cost(t, u, k);
				if (best < 0 || sum < bsum ||
				    (sum == bsum && p->fin[k] < p->fin[best])) {
					best = k;
					bsum = sum;
				}
			}
			if (best >= 0) {
				*rule = 2;
				return best;
			}
		}
		/* (3) the earliest start in S */
		for (int k = 0; k < nd; k++)
			if (p->ok[k] && (best < 0 || p->st[k] < p->st[best] ||
					 (p->st[k] == p->st[best] &&
					  p->fin[k] < p->fin[best])))
				best = k;
		*rule = 3;
		return best;
	}
	/* (4) the earliest finish among the devices with memory */
	for (int k = 0; k < nd; k++)
		if (p->fits[k] && (best < 0 || p->fin[k] < p->fin[best]))
			best = k;
	*rule = 4;
	return best >= 0 ? best : tg_mem_roomiest(t, &s->mem);
}

int tg_dcp(TgSched *s, const PlaceOpts *o, TgDcpStep *steps)
{
	const TaskGraph *t = s->t;
	uint32_t n = t->n;
	size_t n1 = (size_t)n + 1, d1 = (size_t)t->ndev + 1;
	Dcp p = {.t = t, .s = s};
	p.w = xmalloc(sizeof(double) * n1);
	p.bl = tg_rank_u(t, TG_MEAN);
	p.head = xcalloc(n1, sizeof(double));
	p.st = xmalloc(sizeof(double) * d1);
	p.fin = xmalloc(sizeof(double) * d1);
	p.ok = xmalloc(sizeof(bool) * d1);
	p.fits = xmalloc(sizeof(bool) * d1);
	tg_weights(t, TG_MEAN, p.w);
	uint32_t *pos = tg_topo_pos(t);
	uint32_t *left = xmalloc(sizeof(uint32_t) * n1);
	Heap ready = {0}, path = {0};
	for (uint32_t v = 0; v < n; v++) {
		left[v] = t->pred_start[v + 1] - t->pred_start[v];
		if (!left[v]) {
			heap_push(&ready, -tg_rank_key(p.bl[v]), pos[v], v);
			heap_push(&path, -p.bl[v], pos[v], v);
		}
	}
	double maxfin = 0;
	uint32_t step = 0;
	HeapItem it;
	while (heap_pop(&ready, &it)) {
		uint32_t u = it.id;
		while (path.n && s->dev[path.a[0].id] >= 0)
			heap_pop(&path, NULL);
		double dcpl = path.n && -path.a[0].key > maxfin ? -path.a[0].key
							       : maxfin;
		double est = p.head[u], lst = dcpl - p.bl[u];
		double tol = 1e-9 * (dcpl > 1 ? dcpl : 1);
		int rule = 0, d = t->pinned[u];
		if (d < 0)
			d = find_slot(&p, u, lst + p.w[u], tol, &rule);
		double st;
		tg_sched_eft(s, u, d, &st);
		tg_sched_put(s, u, d, st);
		if (steps)
			steps[step] = (TgDcpStep){u, est, lst, dcpl,
						  lst - est <= tol, d, rule};
		step++;
		double f = s->finish[u];
		maxfin = f > maxfin ? f : maxfin;
		for (uint32_t e = t->succ_start[u]; e < t->succ_start[u + 1]; e++) {
			uint32_t x = t->succ[e].node;
			double h = f + tg_edge_time(t, TG_MEAN, t->succ[e].bytes);
			if (h > p.head[x])
				p.head[x] = h;
			heap_push(&path, -(p.head[x] + p.bl[x]), pos[x], x);
			if (--left[x] == 0)
				heap_push(&ready, -tg_rank_key(p.head[x] + p.bl[x]),
					     pos[x], x);
		}
	}
	heap_free(&ready);
	heap_free(&path);
	free(left);
	free(pos);
	free(p.w);
	free(p.bl);
	free(p.head);
	free(p.st);
	free(p.fin);
	free(p.ok);
	free(p.fits);
	return tg_mem_status(t, &s->mem, o);
}

static int run_dcp(TgSched *s, const PlaceOpts *o)
{
	return tg_dcp(s, o, NULL);
}

/* place<algo=dcp>: a PlacerFn (taskgraph.h). */
int placer_dcp(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	return tg_sched_placer(t, o, dev, "dcp", run_dcp);
}
