/* test_split.c — the split pass (FastT §5.2, FD-DPS §4.1; docs/passes.md)
 * on hand-placed plans whose best split, or the absence of one, follows
 * from the cost model by hand.  Only the pass's entry point (a pipeline)
 * and the IR it leaves are used, so the tests hold however the pass
 * chooses internally.
 *
 * The cost model made exact: devices with efficiency 1 and no overhead or
 * mem_bw, so an op takes FLOPs / peak; links with no latency, so a
 * transfer takes bytes / bandwidth.  The op: y = MatMul(x, w), x
 * f32[8192,1024], w f32[1024,1024] on m0/gpu0: 2*8192*1024*1024 FLOPs =
 * 1.7179869184 ms at 10 TFLOPS.  Split in two along rows (dimension 0),
 * the remote half needs its 4096 rows of x (16 MiB) and all of w (4 MiB)
 * over the link one after the other, computes 0.8589934592 ms and sends
 * its 16 MiB back for the ConcatV2; along columns it would need all of x
 * (32 MiB) and half of w (2 MiB), which is always slower. */
#include <CUnit/CUnit.h>
#include <math.h>

#include "testutil.h"

#define MIB 1048576.0

/* A cluster of types A (10 TFLOPS) and B (30 TFLOPS), exact as above:
 * machine m0 has na A's joined at bw; with b, machine b has one B, on a
 * network of bw. */
static const char *cluster(char *buf, size_t n, int na, bool b, const char *bw)
{
	int k = snprintf(buf, n,
			 "gir 1\n"
			 "cluster c {\n"
			 "  type A {flops = 10TFLOPS, memory = 16GiB, overhead = 0s, efficiency = 1.0}\n"
			 "  type B {flops = 30TFLOPS, memory = 16GiB, overhead = 0s, efficiency = 1.0}\n"
			 "  machine m0 {type = A, count = %d, bandwidth = %s, latency = 0s}\n",
			 na, bw);
	if (b)
		k += snprintf(buf + k, n - (size_t)k,
			      "  machine b {type = B, count = 1, bandwidth = 0B/s, latency = 0s}\n"
			      "  network {bandwidth = %s, latency = 0s}\n", bw);
	snprintf(buf + k, n - (size_t)k, "}\n");
	return buf;
}

/* y = MatMul(x, w) on m0/gpu0 with rows rows, consumed by z = Relu(y)
 * (one FLOP per element), the output; na A's, a B with b. */
static Graph *matmul_plan(int na, bool b, const char *bw, int rows)
{
	char cl[1024], buf[4096];
	snprintf(buf, sizeof buf,
		 "%s"
		 "graph g {\n"
		 "  %%x = Placeholder() {@device = \"m0/gpu0\"} : f32[%d,1024]\n"
		 "  %%w = VariableV2() {@device = \"m0/gpu0\"} : f32[1024,1024]\n"
		 "  %%y = MatMul(%%x, %%w) {@device = \"m0/gpu0\"} : f32[%d,1024]\n"
		 "  %%z = Relu(%%y) {@device = \"m0/gpu0\", @output = true} : f32[%d,1024]\n"
		 "}\n", cluster(cl, sizeof cl, na, b, bw), rows, rows, rows);
	Graph *g = tu_parse(buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	return g;
}

/* The simulated iteration time of g's plan once comm materialises it (on
 * g itself: call last). */
static double simulated(Graph *g)
{
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "comm"), EXIT_OK);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, stderr, "test.gir", NULL, 0);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(sim_run(g, &m, &r, &d), EXIT_OK);
	double t = r.makespan;
	sim_free(&r);
	return t;
}

static int64_t ival(const Value *v)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL_FATAL(v->kind, V_INT);
	return v->i;
}

/* The ops of type t whose @origin is origin, in op order (at most max). */
static int parts_of(const Graph *g, const char *origin, const char *t,
		    Op **out, int max)
{
	int n = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		const char *o = op_ann_str(g, op, ANN_ORIGIN);
		if (!op->dead && o && strcmp(o, origin) == 0 &&
		    strcmp(op->type, t) == 0 && n < max)
			out[n++] = op;
	}
	return n;
}

/* y was split along rows into k parts: part j on device dev[j] with
 * rows[j] rows, @part = [j, k]; each reads its rows of x through one
 * SplitV of x on m0/gpu0 (sizes rows[], axis 0) and the whole w; a
 * ConcatV2 on m0/gpu0 along axis 0 puts y back together for z. */
static void expect_row_split(const Graph *g, int k, const char *const *dev,
			     const int64_t *rows)
{
	CU_ASSERT_PTR_NULL(tu_op(g, "y"));
	Op *p[8], *sp[8], *cat[8];
	CU_ASSERT_EQUAL_FATAL(parts_of(g, "y", "MatMul", p, 8), k);
	CU_ASSERT_EQUAL_FATAL(parts_of(g, "y", "SplitV", sp, 8), 1);
	CU_ASSERT_EQUAL_FATAL(parts_of(g, "y", "ConcatV2", cat, 8), 1);
	Op *x = tu_op(g, "x"), *w = tu_op(g, "w"), *z = tu_op(g, "z");
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	int64_t total = 0;
	for (int j = 0; j < k; j++)
		total += rows[j];

	/* the SplitV: x into rows[] along 0, where x is */
	CU_ASSERT_PTR_EQUAL(sp[0]->in[0].src, x);
	CU_ASSERT_EQUAL(ival(op_get(g, sp[0]->in[2].src, "value")), 0);
	const Value *sz = op_get(g, sp[0]->in[1].src, "value");
	CU_ASSERT_EQUAL_FATAL(sz->kind, V_LIST);
	CU_ASSERT_EQUAL_FATAL(sz->list.n, (uint32_t)k);
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, sp[0], ANN_DEVICE), "m0/gpu0");
	CU_ASSERT_EQUAL(sp[0]->nout, (uint32_t)k);

	for (int q = 0; q < k; q++) {
		/* which part runs on dev[q] */
		Op *part = NULL;
		for (int j = 0; j < k; j++)
			if (strcmp(op_ann_str(g, p[j], ANN_DEVICE), dev[q]) == 0)
				part = p[j];
		CU_ASSERT_PTR_NOT_NULL_FATAL(part);
		const Value *pr = op_ann(g, part, ANN_PART);
		CU_ASSERT_EQUAL_FATAL(pr->kind, V_LIST);
		int64_t j = ival(pr->list.items[0]);
		CU_ASSERT_EQUAL(ival(pr->list.items[1]), k);
		CU_ASSERT_EQUAL(part->out[0].rank, 2);
		CU_ASSERT_EQUAL(part->out[0].dims[0], rows[q]);
		CU_ASSERT_EQUAL(part->out[0].dims[1], 1024);
		/* its rows of x: output j of the SplitV, rows[q] long */
		CU_ASSERT_PTR_EQUAL(part->in[0].src, sp[0]);
		CU_ASSERT_EQUAL(part->in[0].idx, (uint32_t)j);
		CU_ASSERT_EQUAL(ival(sz->list.items[j]), rows[q]);
		CU_ASSERT_EQUAL(sp[0]->out[j].dims[0], rows[q]);
		CU_ASSERT_EQUAL(sp[0]->out[j].dims[1], 1024);
		CU_ASSERT_PTR_EQUAL(part->in[1].src, w);
		/* the ConcatV2 takes part j as its input j */
		CU_ASSERT_PTR_EQUAL(cat[0]->in[j].src, part);
	}
	CU_ASSERT_EQUAL(cat[0]->nin, (uint32_t)k + 1);
	CU_ASSERT_EQUAL(ival(op_get(g, cat[0]->in[k].src, "value")), 0);
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, cat[0], ANN_DEVICE), "m0/gpu0");
	CU_ASSERT_EQUAL(cat[0]->out[0].dims[0], total);
	CU_ASSERT_EQUAL(cat[0]->out[0].dims[1], 1024);
	CU_ASSERT_PTR_EQUAL(z->in[0].src, cat[0]);
}

static void expect_unsplit(const Graph *g)
{
	Op *y = tu_op(g, "y");
	CU_ASSERT_PTR_NOT_NULL_FATAL(y);
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, y, ANN_DEVICE), "m0/gpu0");
	CU_ASSERT_EQUAL(tu_count(g, "SplitV"), 0);
	CU_ASSERT_EQUAL(tu_count(g, "ConcatV2"), 0);
	CU_ASSERT_EQUAL(tu_count(g, "MatMul"), 1);
	CU_ASSERT_PTR_EQUAL(tu_op(g, "z")->in[0].src, y);
}

/* Relu z: 8192*1024 FLOPs at 10 TFLOPS. */
#define RELU_S (8192.0 * 1024 / 1e13)
#define FULL_S (2.0 * 8192 * 1024 * 1024 / 1e13)
#define HALF_S (FULL_S / 2)

/* The break-even link: the split path takes HALF_S plus 16+4+16 MiB over
 * the link, against FULL_S: 36 MiB / 0.8589934592 ms = 43.9 GB/s.  At
 * 50 GB/s the split wins: 0.75497472 + 0.8589934592 = 1.6139681792 ms
 * (+ z). */
static void test_worth_it(void)
{
	Graph *g = matmul_plan(2, false, "50GB/s", 8192);
	CU_ASSERT_EQUAL_FATAL(tu_run_search(g, "annotate,split"), EXIT_OK);
	expect_row_split(g, 2, (const char *[]){"m0/gpu0", "m0/gpu1"},
			 (const int64_t[]){4096, 4096});
	double want = 36 * MIB / 50e9 + HALF_S + RELU_S;
	CU_ASSERT_DOUBLE_EQUAL(simulated(g), want, 1e-9 * want);
	graph_free(g);

	/* 100 GB/s: 36 MiB take 0.37748736 ms: 1.2364808192 ms */
	g = matmul_plan(2, false, "100GB/s", 8192);
	CU_ASSERT_EQUAL_FATAL(tu_run_search(g, "annotate,split"), EXIT_OK);
	expect_row_split(g, 2, (const char *[]){"m0/gpu0", "m0/gpu1"},
			 (const int64_t[]){4096, 4096});
	want = 36 * MIB / 100e9 + HALF_S + RELU_S;
	CU_ASSERT_DOUBLE_EQUAL(simulated(g), want, 1e-9 * want);
	graph_free(g);
}

/* At 40 GB/s the split path takes 0.9437184 + 0.8589934592 = 1.80 ms,
 * more than the unsplit 1.72 ms: nothing is split. */
static void test_not_worth_it(void)
{
	static const char *bws[] = {"40GB/s", "1GB/s"};
	for (int i = 0; i < 2; i++) {
		Graph *g = matmul_plan(2, false, bws[i], 8192);
		CU_ASSERT_EQUAL_FATAL(tu_run_search(g, "annotate,split"), EXIT_OK);
		expect_unsplit(g);
		double want = FULL_S + RELU_S;
		CU_ASSERT_DOUBLE_EQUAL(simulated(g), want, 1e-9 * want);
		graph_free(g);
	}
}

/* One device: nothing to split over. */
static void test_one_device(void)
{
	Graph *g = matmul_plan(1, false, "100GB/s", 8192);
	CU_ASSERT_EQUAL_FATAL(tu_run_search(g, "annotate,split"), EXIT_OK);
	expect_unsplit(g);
	graph_free(g);
}

/* Four A's on per-pair links of 100 GB/s: each remote part takes its
 * 8192/k rows of x and all of w in and its result out, on a link of its
 * own.  k = 4: (8 + 4 + 8) MiB / 100 GB/s + FULL_S / 4 = 0.639212 ms,
 * better than k = 3 (0.838 ms) and k = 2 (1.236 ms).  max_parts=2 allows
 * two; max_parts=3 three, sized by largest remainder (each at least 1,
 * 8189 / 3 = 2729.67 more, the first two remainders get a row): 2731,
 * 2731, 2730. */
static void test_max_parts(void)
{
	const char *dev4[] = {"m0/gpu0", "m0/gpu1", "m0/gpu2", "m0/gpu3"};
	Graph *g = matmul_plan(4, false, "100GB/s", 8192);
	CU_ASSERT_EQUAL_FATAL(tu_run_search(g, "annotate,split"), EXIT_OK);
	expect_row_split(g, 4, dev4, (const int64_t[]){2048, 2048, 2048, 2048});
	double want = 20 * MIB / 100e9 + FULL_S / 4 + RELU_S;
	CU_ASSERT_DOUBLE_EQUAL(simulated(g), want, 1e-9 * want);
	graph_free(g);

	g = matmul_plan(4, false, "100GB/s", 8192);
	CU_ASSERT_EQUAL_FATAL(tu_run_search(g, "annotate,split<max_parts=3>"), EXIT_OK);
	expect_row_split(g, 3, dev4, (const int64_t[]){2731, 2731, 2730});
	graph_free(g);

	g = matmul_plan(4, false, "100GB/s", 8192);
	CU_ASSERT_EQUAL_FATAL(tu_run_search(g, "annotate,split<max_parts=2>"), EXIT_OK);
	expect_row_split(g, 2, dev4, (const int64_t[]){4096, 4096});
	graph_free(g);
}

/* Slices follow the devices' speeds.  y (8195 rows) on an A (10 TFLOPS)
 * beside a B (30 TFLOPS) at 100 GB/s: shares 1:3 by largest remainder
 * (each at least 1, then 8193 split 2048.25 : 6144.75, the larger
 * remainder gets the last row): 2049 rows on the A, 6146 on the B.  The
 * B's path: 6146 rows of x (24.0 MiB) and w (4 MiB) in, 2*6146*2^20 FLOPs
 * at 30 TFLOPS, 24.0 MiB out: 0.9750 ms against 1.7186 ms unsplit. */
static void test_hetero_shares(void)
{
	Graph *g = matmul_plan(1, true, "100GB/s", 8195);
	CU_ASSERT_EQUAL_FATAL(tu_run_search(g, "annotate,split"), EXIT_OK);
	expect_row_split(g, 2, (const char *[]){"m0/gpu0", "b/gpu0"},
			 (const int64_t[]){2049, 6146});
	double rowb = 1024 * 4.0;
	double want = (2 * 6146 * rowb + 4 * MIB) / 100e9 +
		      2.0 * 6146 * 1024 * 1024 / 3e13 + 8195.0 * 1024 / 1e13;
	CU_ASSERT_DOUBLE_EQUAL(simulated(g), want, 1e-9 * want);
	graph_free(g);
}

/* mode=first stops at the first critical op no split improves (FastT);
 * mode=budget goes on.  The critical path x -> y -> gy: gy (a weight
 * gradient, 5 ms, @split = sum: no dimension to split) comes first and
 * cannot be split; y (1.72 ms) can, as in test_worth_it at 100 GB/s. */
static void test_first_vs_budget(void)
{
	static const char *modes[] = {"first", "budget"};
	for (int m = 0; m < 2; m++) {
		char cl[1024], buf[4096], pipe[64];
		snprintf(buf, sizeof buf,
			 "%s"
			 "graph g {\n"
			 "  %%x = Placeholder() {@device = \"m0/gpu0\"} : f32[8192,1024]\n"
			 "  %%w = VariableV2() {@device = \"m0/gpu0\"} : f32[1024,1024]\n"
			 "  %%y = MatMul(%%x, %%w) {@device = \"m0/gpu0\"} : f32[8192,1024]\n"
			 "  %%gy = MatMul(%%x, %%y) {transpose_a = true, @cost = 5ms, @device = \"m0/gpu0\", @output = true} : f32[1024,1024]\n"
			 "}\n", cluster(cl, sizeof cl, 2, false, "100GB/s"));
		Graph *g = tu_parse(buf);
		CU_ASSERT_PTR_NOT_NULL_FATAL(g);
		snprintf(pipe, sizeof pipe, "annotate,split<mode=%s>", modes[m]);
		CU_ASSERT_EQUAL_FATAL(tu_run_search(g, pipe), EXIT_OK);
		CU_ASSERT_PTR_NOT_NULL(tu_op(g, "gy"));
		CU_ASSERT_EQUAL(tu_op(g, "y") == NULL, m == 1);
		CU_ASSERT_EQUAL(tu_count(g, "MatMul"), m == 0 ? 2 : 3);
		double want = 5e-3 + (m == 0 ? FULL_S : 36 * MIB / 100e9 + HALF_S);
		CU_ASSERT_DOUBLE_EQUAL(simulated(g), want, 1e-9 * want);
		graph_free(g);
	}
}

void suite_split(void)
{
	CU_pSuite s = CU_add_suite("split", NULL, NULL);
	CU_add_test(s, "a split that pays: pieces, shapes, time", test_worth_it);
	CU_add_test(s, "a split that does not pay", test_not_worth_it);
	CU_add_test(s, "one device", test_one_device);
	CU_add_test(s, "max_parts", test_max_parts);
	CU_add_test(s, "shares follow device speeds", test_hetero_shares);
	CU_add_test(s, "mode=first against mode=budget", test_first_vs_budget);
}
