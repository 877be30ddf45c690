/* test_hybrid.c — the hybrid placer's guarantees, as properties over
 * random training graphs on random heterogeneous clusters: its plan,
 * materialised and simulated, is never slower than data parallelism
 * (equal or proportional shares) or than the model-parallel placement it
 * starts from; and a model no device can hold is refused (exit 3) with a
 * report, unless --best-effort. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* A random cluster (1-3 machines of 1-3 GPUs of random speed) and a
 * random MLP-like training graph (2-5 layers of random widths, SGD) of
 * batch B, widths scaled by ws: text in buf. */
static void random_problem_b(unsigned seed, char *buf, size_t n, double mem,
			     int B, int ws)
{
	unsigned s = seed;
	char *p = buf, *end = buf + n;
	int nm = 1 + (int)(rnd(&s) % 3);
	p += snprintf(p, (size_t)(end - p), "gir 1\ncluster c {\n");
	for (int m = 0; m < nm; m++)
		p += snprintf(p, (size_t)(end - p),
			      "  type T%d {flops = %dTFLOPS, memory = %.0fB, mem_bw = %dGB/s}\n",
			      m, 4 + (int)(rnd(&s) % 12), mem, 200 + (int)(rnd(&s) % 700));
	for (int m = 0; m < nm; m++)
		p += snprintf(p, (size_t)(end - p),
			      "  machine m%d {type = T%d, count = %d, bandwidth = %dGB/s, latency = 2us}\n",
			      m, m, 1 + (int)(rnd(&s) % 3), 5 + (int)(rnd(&s) % 40));
	p += snprintf(p, (size_t)(end - p),
		      "  network {bandwidth = %dGB/s, latency = 10us}\n}\n",
		      1 + (int)(rnd(&s) % 12));
	int L = 2 + (int)(rnd(&s) % 4), w[8];
	w[0] = ws * (64 + 64 * (int)(rnd(&s) % 8));
	for (int l = 1; l <= L; l++)
		w[l] = l == L ? 10 : ws * (32 + 32 * (int)(rnd(&s) % 16));
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

/* Batch 16, the widths above. */
static void random_problem(unsigned seed, char *buf, size_t n, double mem)
{
	random_problem_b(seed, buf, n, mem, 16, 1);
}

/* The simulated iteration of pipeline p on problem text. */
static double plan(const char *text, const char *p, int *rc)
{
	Graph *g = tu_parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	*rc = tu_run(g, p);
	double span = -1;
	if (*rc == 0) {
		CostModel m = {g, g->cluster, NULL, NULL, 0};
		Diag d;
		diag_init(&d, stderr, "t", NULL, 0);
		SimResult r;
		CU_ASSERT_EQUAL_FATAL(sim_run(g, &m, &r, &d), 0);
		span = r.makespan;
		sim_free(&r);
	}
	graph_free(g);
	return span;
}

static void test_never_slower(void)
{
	static char buf[16384];
	int rc;
	for (unsigned seed = 1; seed <= 25; seed++) {
		random_problem(seed, buf, sizeof buf, 16e9);
		double hy = plan(buf, "simplify,annotate,fuse,place<algo=hybrid>,comm", &rc);
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		const char *base[] = {
			"simplify,annotate,fuse,place<algo=dp>,comm",
			"simplify,annotate,fuse,place<algo=dp-prop>,comm",
			"simplify,annotate,fuse,place<algo=adjusting>,comm",
		};
		for (int b = 0; b < 3; b++) {
			double x = plan(buf, base[b], &rc);
			CU_ASSERT_EQUAL_FATAL(rc, 0);
			CU_ASSERT_TRUE(hy <= x * (1 + 1e-9));
			if (hy > x * (1 + 1e-9))
				fprintf(stderr, "seed %u: hybrid %g > %s %g\n", seed, hy,
					base[b], x);
		}
	}
}

/* The hybrid's report (-v) on pipeline p over problem text: its
 * strategy simulator's estimate error against the full simulation of
 * its plan, in percent (NAN when it printed none). */
static double estimate_error(const char *text, const char *p)
{
	Graph *g = tu_parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	CU_ASSERT_EQUAL(tu_run_out(g, p, 1e9, 4e7, f, true), 0);
	fclose(f);
	double e = NAN;
	const char *q = strstr(out, "estimate error ");
	if (q)
		e = strtod(q + strlen("estimate error "), NULL);
	free(out);
	graph_free(g);
	return e;
}

/* On 25 random problems of batch 512 (wide layers, so that replicating
 * pays on most of them), the strategy simulator's estimate of the plan
 * it picks is within 10 % of the full simulation of that plan, and
 * within 5 % on average (issue 13's target).  Its per-op overheads, its
 * AllReduces overlapping the backward pass and the updates that wait for
 * them are what bring it there: without them, 8 % on average and up to
 * 22 %. */
static void test_estimate(void)
{
	static char buf[16384];
	double sum = 0, worst = 0;
	int n = 0;
	for (unsigned seed = 1; seed <= 25; seed++) {
		random_problem_b(seed, buf, sizeof buf, 16e9, 512, 8);
		double e = estimate_error(buf, "simplify,annotate,fuse,place<algo=hybrid>,comm");
		CU_ASSERT_FALSE(isnan(e));
		if (isnan(e))
			continue;
		CU_ASSERT_TRUE(fabs(e) <= 10);
		if (fabs(e) > 10)
			fprintf(stderr, "seed %u: estimate error %+.1f%%\n", seed, e);
		sum += fabs(e);
		worst = fmax(worst, fabs(e));
		n++;
	}
	CU_ASSERT_EQUAL(n, 25);
	CU_ASSERT_TRUE(sum / n <= 5);
	CU_ASSERT_TRUE(worst > 0);   /* the problems are not all trivial */
}

static void test_infeasible(void)
{
	/* 1 MB per device: no device holds even one layer's weights. */
	static char buf[16384];
	random_problem(7, buf, sizeof buf, 1e6);
	int rc;
	fflush(stderr);
	FILE *saved = stderr;
	char *out = NULL;
	size_t len = 0;
	stderr = open_memstream(&out, &len);
	plan(buf, "simplify,annotate,fuse,place<algo=hybrid>", &rc);
	fclose(stderr);
	stderr = saved;
	CU_ASSERT_EQUAL(rc, EXIT_INFEASIBLE);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "no plan fits in the memory"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "per device"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "(over)"));
	free(out);
}

void suite_hybrid(void)
{
	CU_pSuite s = CU_add_suite("hybrid", NULL, NULL);
	CU_add_test(s, "never slower than dp, dp-prop, adjusting", test_never_slower);
	CU_add_test(s, "a model that fits nowhere", test_infeasible);
	CU_add_test(s, "the strategy simulator tracks the simulator", test_estimate);
}
