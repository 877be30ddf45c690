/* test_hybrid.c — the hybrid placer's guarantees, as properties over
 * random training graphs on random heterogeneous clusters: its plan,
 * materialised and simulated, is never slower than data parallelism
 * (equal or proportional shares) or than the model-parallel placement it
 * starts from; and a model no device can hold is refused (exit 3) with a
 * report, unless --best-effort. */
#include <CUnit/CUnit.h>
#include <stdlib.h>

#include "testutil.h"

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* A random cluster (1-3 machines of 1-3 GPUs of random speed) and a
 * random MLP-like training graph (2-5 layers of random widths, batch 16,
 * SGD): text in buf. */
static void random_problem(unsigned seed, char *buf, size_t n, double mem)
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
	w[0] = 64 + 64 * (int)(rnd(&s) % 8);
	for (int l = 1; l <= L; l++)
		w[l] = l == L ? 10 : 32 + 32 * (int)(rnd(&s) % 16);
	p += snprintf(p, (size_t)(end - p),
		      "graph r {batch = 16} {\n"
		      "  %%x = Placeholder() {@batch_dim = 0} : f32[16,%d]\n"
		      "  %%labels = Placeholder() {@batch_dim = 0} : i64[16]\n", w[0]);
	for (int l = 1; l <= L; l++)
		p += snprintf(p, (size_t)(end - p),
			      "  %%w%d = VariableV2() : f32[%d,%d]\n"
			      "  %%h%d = MatMul(%%a%d, %%w%d) : f32[16,%d]\n"
			      "  %%a%d = Relu(%%h%d) : f32[16,%d]\n",
			      l, w[l - 1], w[l], l, l - 1, l, w[l], l, l, w[l]);
	p += snprintf(p, (size_t)(end - p),
		      "  %%a0 = Identity(%%x) : f32[16,%d]\n"
		      "  %%loss, %%dy = SparseSoftmaxCrossEntropyWithLogits(%%h%d, %%labels) : (f32[16], f32[16,10])\n"
		      "  %%dh%d = Identity(%%dy) : f32[16,10]\n", w[0], L, L);
	for (int l = L; l >= 1; l--) {
		p += snprintf(p, (size_t)(end - p),
			      "  %%g%d = MatMul(%%a%d, %%dh%d) {transpose_a = true} : f32[%d,%d]\n"
			      "  %%u%d = ApplyGradientDescent(%%w%d, %%g%d) : ()\n",
			      l, l - 1, l, w[l - 1], w[l], l, l, l);
		if (l > 1)
			p += snprintf(p, (size_t)(end - p),
				      "  %%da%d = MatMul(%%dh%d, %%w%d) {transpose_b = true} : f32[16,%d]\n"
				      "  %%dh%d = ReluGrad(%%da%d, %%a%d) : f32[16,%d]\n",
				      l - 1, l, l, w[l - 1], l - 1, l - 1, l - 1, w[l - 1]);
	}
	snprintf(p, (size_t)(end - p), "}\n");
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
}
