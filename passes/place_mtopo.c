/* place_mtopo.c — Baechi's m-TOPO (Jeon et al., "Baechi: Fast Device
 * Placement of Machine Learning Graphs", SoCC 2020; the paper is
 * not in shared/papers, this follows its m-TOPO algorithm): a
 * memory-capped topological fill.
 *
 * The nodes are taken in a topological order (t->topo: Kahn's, ties by
 * id) and the devices in index order.  Each node goes to the current
 * device while it fits there; the first node that does not fit moves the
 * fill to the next device for good (m-TOPO never goes back).  "Fits"
 * means both:
 *  - the device's memory holds it (TgMem: permanent bytes add up,
 *    temporary bytes count by their largest), and
 *  - the device stays within its share of the model, Baechi's uniform cap
 *    required / |devices| + max_op, where required is the sum over nodes
 *    of permanent + temporary bytes and max_op the largest such sum, so
 *    the model spreads over all devices instead of filling the first ones
 *    to the brim (Baechi's TopoUniform; its max_op slack lets the last
 *    device take what rounding leaves).
 * Pinned nodes stay on their device and are reserved before the fill.
 * A node that fits on no remaining device goes to the device with the
 * most free memory; the placement is then infeasible unless
 * --best-effort.  O(V + E + D). */
#include "taskgraph.h"

/* place<algo=mtopo>: a PlacerFn (taskgraph.h). */
int placer_mtopo(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	TgMem mm;
	tg_mem_init(t, &mm);
	tg_mem_pinned(t, &mm);
	double required = 0, max_op = 0;
	for (uint32_t v = 0; v < t->n; v++) {
		double m = t->mem_perm[v] + t->mem_temp[v];
		required += m;
		max_op = m > max_op ? m : max_op;
	}
	double share = t->ndev ? required / t->ndev + max_op : 0;
	int cur = 0;
	for (uint32_t j = 0; j < t->n; j++) {
		uint32_t v = t->topo[j];
		if (t->pinned[v] >= 0) {
			dev[v] = t->pinned[v];
			continue;
		}
		for (; cur < t->ndev; cur++) {
			double temp = t->mem_temp[v] > mm.temp[cur] ? t->mem_temp[v]
								    : mm.temp[cur];
			if (tg_mem_fits(t, &mm, cur, v) &&
			    mm.perm[cur] + t->mem_perm[v] + temp <= share)
				break;
		}
		int d = cur < t->ndev ? cur : tg_mem_roomiest(t, &mm);
		dev[v] = d;
		tg_mem_add(t, &mm, d, v);
	}
	int rc = tg_mem_status(t, &mm, o);
	tg_mem_free(&mm);
	return rc;
}
