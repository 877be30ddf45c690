/* evaluate.c — the one plan evaluator (docs/passes.md, "Judging plans").
 *
 * Every pass that compares whole plans (place's hybrid, dp-best and
 * pipeline strategies, split) judges a candidate the same way: its
 * strategy annotations are written on a graph_clone of the pass's graph,
 * which is materialised by the comm pass, ordered as the order pass
 * orders it (1F1B for a pipelined plan; else the faster of its list
 * schedule and ready order) and simulated by ir/sim.c, so its time and
 * peak memory are the ones the pipeline's plan will have.  A pipeline
 * that materialises the plan (comm) but does not order it runs it in
 * ready order, and it is judged so; one that stops before comm (a
 * strategy to resume later) is judged as comm,order would run it.  comm and order run with the options the pipeline gives
 * them later on (PassCtx.later, set by the pass manager): a candidate of
 * "place,comm<sfb=true>,order" is judged with sufficient-factor
 * broadcasting, as it will run.  A pass run on its own (a unit test, a
 * pipeline without comm) gets their defaults.
 *
 * The batch analysis (batch.c) that comm needs is the same for every
 * copy of one graph, since placing writes only strategy annotations and
 * the analysis reads none of them.  The evaluator computes it once per
 * pass run, on the pass's own graph (the manager's EvalCache is bound to
 * it), and lends it to comm for each copy.  It is recomputed when the
 * graph changed since (Graph.gen, bumped by every op added, removed or
 * rewired and every attribute set: split's accepted splits), and not
 * used when the graph has dead ops (a clone renumbers ops, so ids would
 * not line up) or the judged graph was not cloned from it (nops
 * differs).  The manager frees the cache when the pass ends, so no
 * analysis outlives the pass that made it. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct EvalCache {
	const Graph *g;          /* the pass's graph (the only one cached) */
	uint64_t gen;            /* its Graph.gen when analysed */
	bool have;
	BatchInfo b;
	long judged, hits, misses;
};

EvalCache *eval_cache_new(const Graph *g)
{
	EvalCache *e = xcalloc(1, sizeof *e);
	e->g = g;
	return e;
}

void eval_cache_free(EvalCache *e)
{
	if (!e)
		return;
	if (e->have)
		batch_free(&e->b);
	free(e);
}

void eval_cache_stats(const EvalCache *e, long *judged, long *hits,
		      long *misses)
{
	*judged = e ? e->judged : 0;
	*hits = e ? e->hits : 0;
	*misses = e ? e->misses : 0;
}

/* The batch analysis for h, a graph_clone of ctx->g, when the cache can
 * lend one; NULL: comm computes its own. */
static const BatchInfo *cached_batch(const PassCtx *ctx, const Graph *h)
{
	EvalCache *e = ctx->eval;
	Graph *g = ctx->g;
	if (!e || e->g != g || h->nops > g->nops)
		return NULL;
	for (uint32_t i = 0; i < g->nops; i++)
		if (g->ops[i]->dead)
			return NULL;
	if (h->nops != g->nops)
		return NULL;
	if (e->have && e->gen == g->gen) {
		e->hits++;
		return &e->b;
	}
	if (e->have)
		batch_free(&e->b);
	batch_analyze(g, &e->b);
	e->gen = g->gen;
	e->have = true;
	e->misses++;
	return &e->b;
}

/* The options the pipeline gives pass name later on, or NULL (its
 * defaults). */
static const PipeStep *later_step(const PassCtx *ctx, const char *name)
{
	for (int i = 0; i < ctx->nlater; i++)
		if (strcmp(ctx->later[i].pass->name, name) == 0)
			return &ctx->later[i];
	return NULL;
}

/* ctx as pass name would see it on h, with the pipeline's options. */
static PassCtx as_pass(const PassCtx *ctx, Graph *h, const char *name)
{
	PassCtx c = *ctx;
	const PipeStep *st = later_step(ctx, name);
	c.g = h;
	c.report = NULL;
	c.pass = name;
	c.args = st ? st->args : NULL;
	c.nargs = st ? st->nargs : 0;
	c.later = NULL;
	c.nlater = 0;
	c.eval = NULL;           /* comm and order judge nothing */
	c.batch = NULL;
	return c;
}

double plan_evaluate(PassCtx *ctx, Graph *h, PlanEval *e)
{
	CostModel m = *ctx->cost;
	m.g = h;
	m.memo = NULL;
	m.nmemo = 0;
	Diag quiet, *d = e->diag ? e->diag : &quiet;
	diag_init(&quiet, stderr, ctx->pass, NULL, 0);
	quiet.quiet = true;
	int errors0 = d->nerrors;
	e->span = INFINITY;
	e->oom = true;
	e->peak_over = INFINITY;
	e->nops = h->nops;
	if (ctx->eval)
		ctx->eval->judged++;
	PassCtx c = as_pass(ctx, h, "comm");
	c.cost = &m;
	c.diag = d;
	c.batch = cached_batch(ctx, h);
	bool ok = pass_comm(&c) == EXIT_OK;
	e->nops = h->nops;
	/* Ordered and simulated as the order pass will: 1F1B for a
	 * pipelined plan, else the faster of its list schedule and ready
	 * order, whose peak memory is the plan's.  A pipeline that runs
	 * comm but not order runs the plan in ready order. */
	SimResult r;
	if (ok && (!later_step(ctx, "comm") || later_step(ctx, "order"))) {
		c = as_pass(ctx, h, "order");
		c.cost = &m;
		c.diag = d;
		cost_memo_init(&m);
		ok = order_simulate(&c, &m, &r) == EXIT_OK;
		cost_memo_free(&m);
	} else if (ok) {
		ok = sim_run(h, &m, &r, d) == EXIT_OK;
	}
	e->errors = d->nerrors - errors0;
	if (!ok)
		return e->span;
	e->span = r.makespan;
	e->oom = r.oom;
	e->peak_over = 0;
	const Cluster *cl = m.c;
	for (int dv = 0; dv < r.ndevs; dv++) {
		double cap = cl->types[cl->devs[dv].type].memory;
		e->peak_over = fmax(e->peak_over, r.peak_mem[dv] / cap);
		if (e->peaks)
			e->peaks[dv] = r.peak_mem[dv];
	}
	if (e->sim)
		*e->sim = r;
	else
		sim_free(&r);
	return e->span;
}

double plan_simulate(PassCtx *ctx, Graph *h, bool *oom, double *peak_over,
		     double *peaks)
{
	PlanEval e = {.peaks = peaks};
	plan_evaluate(ctx, h, &e);
	*oom = e.oom;
	*peak_over = e.peak_over;
	return e.span;
}
