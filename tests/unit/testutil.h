/* testutil.h — parse gir text and run a pipeline from a CUnit test. */
#ifndef PCC_TESTUTIL_H
#define PCC_TESTUTIL_H

#include <stdio.h>
#include <string.h>

#include "frontend/frontend.h"
#include "passes/passes.h"

/* Parses src (gir), infers types and verifies; NULL on error (printed). */
static inline Graph *tu_parse(const char *src)
{
	Diag d;
	diag_init(&d, stderr, "test.gir", src, strlen(src));
	Graph *g = gir_parse("test.gir", src, strlen(src), &d);
	if (g && (graph_infer_types(g, &d) || graph_verify(g, &d))) {
		graph_free(g);
		return NULL;
	}
	return g;
}

/* Runs pipeline p over g with --verify-each, --search-budget budget
 * (seconds) and --search-work work, diagnostics (and with verbose, -v's
 * pass reports) on out; returns the exit status. */
static inline int tu_run_out(Graph *g, const char *p, double budget,
			     double work, FILE *out, bool verbose)
{
	Pipeline pipe;
	char err[256];
	if (!pipeline_parse(p, &pipe, err, sizeof err)) {
		fprintf(stderr, "%s\n", err);
		return EXIT_USAGE;
	}
	CostModel cost = {g, g->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, out, "test.gir", NULL, 0);
	RunOptions o = {0};
	o.verify_each = true;
	o.verbose = verbose;
	o.progress = PROGRESS_NEVER;
	o.search_budget = budget;
	o.search_work = work;
	o.seed = 1;
	o.dump_base = "test";
	int rc = pipeline_run(&pipe, g, &cost, &d, &o);
	pipeline_free(&pipe);
	return rc;
}

/* The same with diagnostics on stderr. */
static inline int tu_run_with(Graph *g, const char *p, double budget,
			      double work)
{
	return tu_run_out(g, p, budget, work, stderr, false);
}

/* Runs pipeline p over g with --verify-each; returns the exit status.
 * No --search-work: a pass that stops on it (split) searches nothing. */
static inline int tu_run(Graph *g, const char *p)
{
	return tu_run_with(g, p, 1, 0);
}

/* The same with -O2's --search-work (4e7 units) and a wall-clock cap
 * that never triggers, so a searching pass's result does not depend on
 * the machine's speed or load. */
static inline int tu_run_search(Graph *g, const char *p)
{
	return tu_run_with(g, p, 1e9, 4e7);
}

/* The op named name, or NULL. */
static inline Op *tu_op(const Graph *g, const char *name)
{
	uint32_t idx;
	return graph_lookup(g, name, &idx);
}

/* Number of live ops of type t. */
static inline int tu_count(const Graph *g, const char *t)
{
	int n = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		n += !g->ops[i]->dead && strcmp(g->ops[i]->type, t) == 0;
	return n;
}

#endif
