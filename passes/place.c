/* place.c — the place pass: decides where each op (or fused group) runs.
 *
 * The algorithms are in placers.def, one file each; they work on the
 * task graph (taskgraph.h), whose nodes are the fused groups when the
 * graph carries @group (fuse ran) and single ops otherwise, so all ops of
 * a group land together.  Pinned @device annotations are kept by every
 * algorithm.  When no placement fits in device memory the pass fails with
 * exit status 3 and a per-device memory report, unless --best-effort.
 * docs/passes.md describes each algorithm and the paper it follows. */
#include "passes.h"
#include "plan.h"
#include "taskgraph.h"

#include <stdlib.h>
#include <string.h>

#define PLACER(name, fn, desc) int fn(const TaskGraph *t, const PlaceOpts *o, int *dev);
#include "placers.def"
#undef PLACER

static const struct {
	const char *name;
	PlacerFn fn;
	const char *desc;
} placers[] = {
#define PLACER(name, fn, desc) {name, fn, desc},
#include "placers.def"
#undef PLACER
};
enum { NPLACERS = sizeof placers / sizeof placers[0] };

PlacerFn placer_find(const char *name)
{
	for (int i = 0; i < NPLACERS; i++)
		if (strcmp(placers[i].name, name) == 0)
			return placers[i].fn;
	return NULL;
}

static bool any_group(const Graph *g)
{
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead && op_ann(g, g->ops[i], ANN_GROUP))
			return true;
	return false;
}

int pass_place(PassCtx *ctx)
{
	Graph *g = ctx->g;
	const char *algo = pass_opt(ctx, "algo");
	bool dp = strcmp(algo, "dp") == 0, dpp = strcmp(algo, "dp-prop") == 0;
	bool hy = strcmp(algo, "hybrid") == 0;
	PlacerFn fn = placer_find(algo);
	if (!fn && !dp && !dpp && !hy) {
		fprintf(stderr, "pcc: error: place: unknown algorithm '%s'; one of: "
			"hybrid dp dp-prop", algo);
		for (int i = 0; i < NPLACERS; i++)
			fprintf(stderr, " %s", placers[i].name);
		fputc('\n', stderr);
		return EXIT_USAGE;
	}
	TaskGraph *t = tg_from_graph(g, ctx->cost, any_group(g), ctx->diag);
	if (!t)
		return EXIT_BADINPUT;
	if (dp || dpp || hy) {
		int rc = hy ? place_hybrid(ctx, t) : place_dp(ctx, t, dpp);
		tg_free(t);
		return rc;
	}
	int *dev = xcalloc((size_t)t->n + 1, sizeof(int));
	PlaceOpts po = {ctx->best_effort, ctx->seed, ctx->report, ctx->scratch};
	int rc = fn(t, &po, dev);
	if (rc == EXIT_INFEASIBLE) {
		fprintf(stderr,
			"pcc: error: place<algo=%s>: the model does not fit in the "
			"memory of cluster '%s'; per device:\n", algo, t->c->name);
		tg_mem_report(t, dev, stderr);
		fputs("pcc: note: --best-effort places it anyway\n", stderr);
	} else if (rc == EXIT_OK) {
		tg_apply(t, g, dev);
		if (ctx->report)
			fprintf(ctx->report, "place<algo=%s>: %u nodes on %d devices\n",
				algo, t->n, t->ndev);
	}
	free(dev);
	tg_free(t);
	return rc;
}
