/* place_orderplace.c — Order-Place, Celeritas's sequential baseline
 * (celeritas.txt §5.2 and §6.2.2): "for the coarse graphs created by
 * operation fusion, we place nodes in CPD-TOPO order on one device until
 * reaching its memory limit, then move on to the next device" (the same
 * idea as the Standard Evaluation's sequential placement, §4.2.1).
 *
 * Devices are taken in cluster order.  Memory is Baechi's accounting
 * (taskgraph.h: permanent bytes add up, temporary bytes count by their
 * largest).  A pinned node goes to its device and does not move the
 * cursor.  A node that fits on no device from the cursor on goes to the
 * first device (in cluster order) where it still fits, and if none has
 * room, to the device with the most free memory (best effort): the
 * placement is then infeasible unless --best-effort.  O(V + D) after the
 * O(V + E log d) CPD-TOPO order. */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>

bool tg_order_place(const TaskGraph *t, const uint32_t *order, int *dev)
{
	TgMem mm;
	tg_mem_init(t, &mm);
	bool fits = true;
	int cur = 0;
	for (uint32_t k = 0; k < t->n; k++) {
		uint32_t v = order[k];
		int d = t->pinned[v];
		if (d < 0) {
			while (cur < t->ndev && !tg_mem_fits(t, &mm, cur, v))
				cur++;
			d = cur;
			for (int x = 0; d == t->ndev && x < cur; x++)
				if (tg_mem_fits(t, &mm, x, v))
					d = x;
			if (d == t->ndev)
				d = tg_mem_roomiest(t, &mm);
		}
		if (!tg_mem_fits(t, &mm, d, v))
			fits = false;
		tg_mem_add(t, &mm, d, v);
		dev[v] = d;
	}
	tg_mem_free(&mm);
	return fits;
}

int placer_order_place(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	uint32_t *order = xmalloc(sizeof(uint32_t) * ((size_t)t->n + 1));
	tg_cpdtopo(t, NULL, order);
	bool fits = tg_order_place(t, order, dev);
	if (o->report)
		fprintf(o->report, "order-place: list-schedule makespan %.6g s%s\n",
			tg_eval_order(t, order, dev, NULL),
			fits ? "" : " (does not fit in memory)");
	free(order);
	return fits || o->best_effort ? EXIT_OK : EXIT_INFEASIBLE;
}
