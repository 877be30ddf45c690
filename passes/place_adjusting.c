/* place_adjusting.c — Adjusting Placement (celeritas.txt §5.2,
 * Algorithm 2).
 *
 * Nodes are visited in CPD-TOPO order (cpdtopo.c).  The default is to put
 * node v on d_k, the device of the node placed just before it, as
 * Order-Place would; v moves only when another device lets it finish
 * sooner by more than the time it would take to send its results back:
 *   - for every device d with room for v (Ava_m, Baechi's accounting in
 *     taskgraph.h; a full device gets EST = inf), pre_t(d) is the latest
 *     arrival of v's inputs on d (eq. 7: a predecessor's finish time, plus
 *     the transfer when it ran elsewhere), and EST(d) is the start of the
 *     first idle slot of d after pre_t(d) long enough for v (insertion,
 *     slots.c), so d_ava is not just the device's last finish;
 *   - d_1 is the device where v finishes first; back_cost is the longest
 *     transfer of one of v's outputs from d_1 back to d_k (eq. 8);
 *   - if EST(d_k) - EST(d_1) > back_cost (eq. 9), v goes to d_1; else to
 *     d_k if it has room; else (d_k full) to d_1, the earliest device with
 *     room; if no device has room, to the one with the most free memory
 *     (best effort), and the placement is infeasible unless --best-effort.
 * Pinned nodes go to their device.  The first node's d_k is device 0,
 * where Order-Place starts.
 *
 * Heterogeneous devices.  The paper's testbed is four equal V100s, where
 * a node takes the same time w on every device and comparing start times
 * is comparing finish times.  Its argument for eq. 9 (§5.2 proof: the
 * successors can start at EST(d_1) + w + back_cost < EST(d_k) + w) needs
 * the finish times, so on devices of different speeds pcc compares
 * EFT = EST + w(d) on both sides of eq. 9 and picks d_1 by EFT; on a
 * homogeneous cluster this is exactly the paper's rule.
 *
 * Never worse than Order-Place.  The §5.2 proof compares one step with
 * placing that node on d_k in the same partial schedule; it does not carry
 * over to whole schedules, because after a move the next node's d_k is
 * the new device.  Example (tests/unit/test_fuse.c, homogeneous, 2
 * devices): A (10 s) -> J, B (1 s) -> J, J (1 s) -> K (1 s), 5 s per
 * transfer A->J and B->J, 6 s for J->K; CPD-TOPO order A, B, J, K.
 * Order-Place runs all four on device 0: 13 s.  Algorithm 2 moves B to
 * device 1 (EST 10 vs 0, back_cost 5), then keeps J on device 1 (EST 15
 * vs 10: the difference 5 is below J's back_cost 6), and K follows: 17 s.
 * So placer_adjusting also computes Order-Place's placement, evaluates
 * both with the same insertion list schedule (tg_eval_order, the model
 * Algorithm 2 itself uses), and returns Order-Place's when it fits memory
 * where Algorithm 2's does not, or, both fitting or both not, finishes
 * strictly sooner.  That keeps
 * the paper's claim (never worse than Order-Place) for whole schedules,
 * at the cost of one more O(V + E log) pass.
 *
 * O(V * D * (indegree + log V)) plus the CPD-TOPO order. */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Eq. 8: the longest transfer of one of v's outputs from d1 to dk. */
static double back_cost(const TaskGraph *t, uint32_t v, int d1, int dk)
{
	double b = 0;
	for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++)
		if (t->succ[e].bytes > 0) {
			double c = tg_comm(t, d1, dk, t->succ[e].bytes);
			b = c > b ? c : b;
		}
	return b;
}

bool tg_adjust_place(const TaskGraph *t, const uint32_t *order, int *dev)
{
	int nd = t->ndev;
	double *fin = xmalloc(sizeof(double) * ((size_t)t->n + 1));
	double *est = xmalloc(sizeof(double) * (size_t)(nd + 1));
	double *eft = xmalloc(sizeof(double) * (size_t)(nd + 1));
	TgSlots *slots = tg_slots_new(nd);
	TgMem mm;
	tg_mem_init(t, &mm);
	bool fits = true;
	int dk = 0;
	for (uint32_t k = 0; k < t->n; k++) {
		uint32_t v = order[k];
		int d = t->pinned[v], d1 = -1;
		for (int x = 0; d < 0 && x < nd; x++) {
			if (!tg_mem_fits(t, &mm, x, v)) {
				est[x] = eft[x] = INFINITY;
				continue;
			}
			double w = tg_cost(t, v, x);
			est[x] = tg_slots_find(slots, x, tg_ready(t, v, x, dev, fin), w);
			eft[x] = est[x] + w;
			if (d1 < 0 || eft[x] < eft[d1])
				d1 = x;
		}
		if (d >= 0) {
			fits &= tg_mem_fits(t, &mm, d, v);
		} else if (d1 < 0) {
			d = tg_mem_roomiest(t, &mm);
			fits = false;
		} else if (!tg_mem_fits(t, &mm, dk, v) ||
			   eft[dk] - eft[d1] > back_cost(t, v, d1, dk)) {
			d = d1;
		} else {
			d = dk;
		}
		double w = tg_cost(t, v, d);
		double s = t->pinned[v] < 0 && d1 >= 0
			   ? est[d]
			   : tg_slots_find(slots, d, tg_ready(t, v, d, dev, fin), w);
		tg_slots_take(slots, d, s, w);
		fin[v] = s + w;
		tg_mem_add(t, &mm, d, v);
		dev[v] = d;
		dk = d;
	}
	tg_mem_free(&mm);
	tg_slots_free(slots);
	free(eft);
	free(est);
	free(fin);
	return fits;
}

int placer_adjusting(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	size_t n1 = (size_t)t->n + 1;
	uint32_t *order = xmalloc(n1 * sizeof *order);
	int *alt = xmalloc(n1 * sizeof *alt);
	tg_cpdtopo(t, NULL, order);
	bool fa = tg_adjust_place(t, order, dev);
	bool fo = tg_order_place(t, order, alt);
	double ma = tg_eval_order(t, order, dev, NULL);
	double mo = tg_eval_order(t, order, alt, NULL);
	bool keep_order = fo != fa ? fo : mo < ma;
	if (keep_order)
		memcpy(dev, alt, (size_t)t->n * sizeof *alt);
	if (o->report)
		fprintf(o->report,
			"adjusting: list-schedule makespan %.6g s%s, order-place "
			"%.6g s%s: kept %s\n", ma, fa ? "" : " (does not fit)", mo,
			fo ? "" : " (does not fit)",
			keep_order ? "order-place" : "adjusting");
	free(alt);
	free(order);
	return (keep_order ? fo : fa) || o->best_effort ? EXIT_OK : EXIT_INFEASIBLE;
}
