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

static inline unsigned tu_rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* A random cluster (1-3 machines of 1-3 GPUs of random speed) and a
 * random MLP-like training graph (2-5 layers of random widths, SGD) of
 * batch B, widths scaled by ws: text in buf. */
static inline void tu_random_problem(unsigned seed, char *buf, size_t n,
				     double mem, int B, int ws)
{
	unsigned s = seed;
	char *p = buf, *end = buf + n;
	int nm = 1 + (int)(tu_rnd(&s) % 3);
	p += snprintf(p, (size_t)(end - p), "gir 1\ncluster c {\n");
	for (int m = 0; m < nm; m++)
		p += snprintf(p, (size_t)(end - p),
			      "  type T%d {flops = %dTFLOPS, memory = %.0fB, mem_bw = %dGB/s}\n",
			      m, 4 + (int)(tu_rnd(&s) % 12), mem, 200 + (int)(tu_rnd(&s) % 700));
	for (int m = 0; m < nm; m++)
		p += snprintf(p, (size_t)(end - p),
			      "  machine m%d {type = T%d, count = %d, bandwidth = %dGB/s, latency = 2us}\n",
			      m, m, 1 + (int)(tu_rnd(&s) % 3), 5 + (int)(tu_rnd(&s) % 40));
	p += snprintf(p, (size_t)(end - p),
		      "  network {bandwidth = %dGB/s, latency = 10us}\n}\n",
		      1 + (int)(tu_rnd(&s) % 12));
	int L = 2 + (int)(tu_rnd(&s) % 4), w[8];
	w[0] = ws * (64 + 64 * (int)(tu_rnd(&s) % 8));
	for (int l = 1; l <= L; l++)
		w[l] = l == L ? 10 : ws * (32 + 32 * (int)(tu_rnd(&s) % 16));
	p += snprintf(p, (size_t)(end - p),
		      "graph r {batch = %d} {\n"
		      "  %%x = Placeholder() {@batch_dim = 0} : f32[%d,%d]\n"
		      "  %%labels = Placeholder() {@batch_dim = 0} : i64[%d]\n", B, B, w[0], B);
	for (int l = 1; l <= L; l++)
		p += snprintf(p, (size_t)(end - p),
			      "  %%w%d = VariableV2() : f32[%d,%d]\n"
			      "  %%h%d = MatMul(%%a%d, %%w%d) : f32[%d,%d]\n"
			      "  %%a%d = Relu(%%h%d) : f32[%d,%d]\n",
			      l, w[l - 1], w[l], l, l - 1, l, B, w[l], l, l, B, w[l]);
	p += snprintf(p, (size_t)(end - p),
		      "  %%a0 = Identity(%%x) : f32[%d,%d]\n"
		      "  %%loss, %%dy = SparseSoftmaxCrossEntropyWithLogits(%%h%d, %%labels) : (f32[%d], f32[%d,10])\n"
		      "  %%dh%d = Identity(%%dy) : f32[%d,10]\n", B, w[0], L, B, B, L, B);
	for (int l = L; l >= 1; l--) {
		p += snprintf(p, (size_t)(end - p),
			      "  %%g%d = MatMul(%%a%d, %%dh%d) {transpose_a = true} : f32[%d,%d]\n"
			      "  %%u%d = ApplyGradientDescent(%%w%d, %%g%d) : ()\n",
			      l, l - 1, l, w[l - 1], w[l], l, l, l);
		if (l > 1)
			p += snprintf(p, (size_t)(end - p),
				      "  %%da%d = MatMul(%%dh%d, %%w%d) {transpose_b = true} : f32[%d,%d]\n"
				      "  %%dh%d = ReluGrad(%%da%d, %%a%d) : f32[%d,%d]\n",
				      l - 1, l, l, B, w[l - 1], l - 1, l - 1, l - 1, B, w[l - 1]);
	}
	snprintf(p, (size_t)(end - p), "}\n");
}

/* The passes' report (-v) of pipeline p (-O2's search work) on the
 * problem text; the caller frees it.  (Not inlined: GCC 12's
 * -Wdangling-pointer then mistakes the memstream's buffer for a local.) */
__attribute__((unused, noinline)) static char *tu_report(const char *text, const char *p)
{
	Graph *g = tu_parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	CU_ASSERT_EQUAL(tu_run_out(g, p, 1e9, 4e7, f, true), 0);
	fclose(f);
	graph_free(g);
	return out;
}

#endif
