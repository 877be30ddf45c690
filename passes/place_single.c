/* place_single.c — the single-device baseline: every node on the fastest
 * device (least total time) whose memory holds the whole model; without
 * one, the fastest device anyway under --best-effort, else infeasible. */
#include "taskgraph.h"

int placer_single(const TaskGraph *t, const PlaceOpts *o, int *dev)
{
	int best = -1, fallback = -1;
	double best_time = 0, fb_time = 0;
	TgMem mm;
	tg_mem_init(t, &mm);
	for (int d = 0; d < t->ndev; d++) {
		double time = 0;
		for (uint32_t v = 0; v < t->n; v++) {
			time += tg_cost(t, v, d);
			tg_mem_add(t, &mm, d, v);
		}
		if (fallback < 0 || time < fb_time) {
			fallback = d;
			fb_time = time;
		}
		if (tg_mem_used(&mm, d) <= tg_mem_cap(t, d) &&
		    (best < 0 || time < best_time)) {
			best = d;
			best_time = time;
		}
	}
	tg_mem_free(&mm);
	int rc = EXIT_OK;
	if (best < 0) {
		best = fallback;
		if (!o->best_effort)
			rc = EXIT_INFEASIBLE;
	}
	for (uint32_t v = 0; v < t->n; v++)
		dev[v] = t->pinned[v] >= 0 ? t->pinned[v] : best;
	return rc;
}
