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

/* Runs pipeline p over g with --verify-each; returns the exit status. */
static inline int tu_run(Graph *g, const char *p)
{
	Pipeline pipe;
	char err[256];
	if (!pipeline_parse(p, &pipe, err, sizeof err)) {
		fprintf(stderr, "%s\n", err);
		return EXIT_USAGE;
	}
	CostModel cost = {g, g->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, stderr, "test.gir", NULL, 0);
	RunOptions o = {0};
	o.verify_each = true;
	o.search_budget = 1;
	o.seed = 1;
	o.dump_base = "test";
	int rc = pipeline_run(&pipe, g, &cost, &d, &o);
	pipeline_free(&pipe);
	return rc;
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
