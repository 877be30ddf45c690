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

static const StrategyInfo strategies[] = {
#define STRATEGY(name, fn, judged, desc) {name, fn, judged, desc},
#include "strategies.def"
#undef STRATEGY
};
enum { NSTRATEGIES = sizeof strategies / sizeof strategies[0] };

const StrategyInfo *strategy_table(int *n)
{
	*n = NSTRATEGIES;
	return strategies;
}

StrategyFn strategy_find(const char *name)
{
	for (int i = 0; i < NSTRATEGIES; i++)
		if (strcmp(strategies[i].name, name) == 0)
			return strategies[i].fn;
	return NULL;
}

const char *placer_name(int i)
{
	return i >= 0 && i < NPLACERS ? placers[i].name : NULL;
}

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

typedef struct Coloc {
	const char *group;       /* interned @colocate value */
	uint32_t id;
	int rank;                /* 0: pinned, 1: a parameter, 2: other */
} Coloc;

static int coloc_cmp(const void *pa, const void *pb)
{
	const Coloc *a = pa, *b = pb;
	int c = strcmp(a->group, b->group);
	if (c)
		return c;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* TensorFlow's colocation groups (@colocate): every member takes the
 * strategy of the group's anchor — a member pinned by the input, else a
 * parameter, else the first. */
static void colocate(Graph *g, const bool *pinned)
{
	Coloc *c = NULL;
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		const char *grp = op->dead ? NULL : op_ann_str(g, op, ANN_COLOCATE);
		if (!grp)
			continue;
		const OpInfo *info = op_info(op->opcode);
		c = xrealloc(c, sizeof *c * (n + 1));
		c[n++] = (Coloc){grp, i, pinned[i] ? 0 : info && (info->flags & OPF_PARAM)
							 ? 1 : 2};
	}
	if (n > 1)
		qsort(c, n, sizeof *c, coloc_cmp);
	static const AnnKey keys[] = {ANN_DEVICE, ANN_REPLICAS, ANN_SHARES};
	for (uint32_t j = 0, a = 0; j < n; j++) {
		if (strcmp(c[j].group, c[a].group))
			a = j;
		if (a == j)
			continue;
		Op *x = g->ops[c[j].id], *anchor = g->ops[c[a].id];
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			Value *v = op_ann(g, anchor, keys[k]);
			if (v)
				op_set_ann(g, x, keys[k], v);
			else
				op_unset(g, x, ann_key(keys[k]));
		}
	}
	free(c);
}

/* The algorithms of place<algo=>: strategies.def's, then placers.def's. */
static const char algo_names[] = ""
#define STRATEGY(name, fn, judged, desc) name " "
#include "strategies.def"
#undef STRATEGY
#define PLACER(name, fn, desc) name " "
#include "placers.def"
#undef PLACER
	;

bool place_algo_known(const char *name)
{
	size_t len = strlen(name);
	for (const char *p = algo_names; *p;) {
		size_t m = strcspn(p, " ");
		if (m == len && strncmp(p, name, len) == 0)
			return true;
		p += m + (p[m] != 0);
	}
	return false;
}

const char *place_algo_names(void)
{
	return algo_names;
}

int pass_place(PassCtx *ctx)
{
	Graph *g = ctx->g;
	const char *algo = pass_opt(ctx, "algo");
	StrategyFn sf = strategy_find(algo);
	PlacerFn fn = placer_find(algo);
	if (!fn && !sf)
		return pass_internal_error(ctx, "unknown algorithm '%s' passed "
					   "pipeline_parse", algo);
	if (pass_refuse_plan(ctx, "place plans a training graph: give the "
			     "graph the plan was made from"))
		return EXIT_BADINPUT;
	TaskGraph *t = tg_from_graph(g, ctx->cost, any_group(g), ctx->diag);
	if (!t)
		return EXIT_BADINPUT;
	bool *pinned = xcalloc((size_t)g->nops + 1, sizeof(bool));
	for (uint32_t i = 0; i < g->nops; i++)
		pinned[i] = !g->ops[i]->dead && op_ann(g, g->ops[i], ANN_DEVICE);
	if (sf) {
		int rc = sf(ctx, t);
		if (rc == EXIT_OK)
			colocate(g, pinned);
		free(pinned);
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
		colocate(g, pinned);
		if (ctx->report)
			fprintf(ctx->report, "place<algo=%s>: %u nodes on %d devices\n",
				algo, t->n, t->ndev);
	}
	free(dev);
	free(pinned);
	tg_free(t);
	return rc;
}
