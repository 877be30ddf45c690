/* test_evaluate.c — the one plan evaluator (passes/evaluate.c): a
 * candidate is judged with the options the pipeline gives comm later on
 * (its figure is exactly what materialising with those options and
 * simulating gives, and differs from comm's defaults where the option
 * changes the plan), and the cached batch analysis gives the same figures
 * as a fresh one, recomputed when the graph changes. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

#include "passes/plan.h"
#include "testutil.h"

/* Two machines of two GPUs on a slow network, and a 3-layer MLP with
 * 2048-wide weights at batch 8: its gradients are large next to their
 * sufficient factors (batch x width), so sfb and buckets change the
 * simulated time of data parallelism. */
static const char *problem =
	"gir 1\n"
	"cluster c {\n"
	"  type G {flops = 10TFLOPS, memory = 16GiB, mem_bw = 500GB/s}\n"
	"  machine m0 {type = G, count = 2, bandwidth = 20GB/s, latency = 2us}\n"
	"  machine m1 {type = G, count = 2, bandwidth = 20GB/s, latency = 2us}\n"
	"  network {bandwidth = 1GB/s, latency = 50us}\n"
	"}\n"
	"graph r {batch = 8} {\n"
	"  %x = Placeholder() {@batch_dim = 0} : f32[8,2048]\n"
	"  %labels = Placeholder() {@batch_dim = 0} : i64[8]\n"
	"  %w1 = VariableV2() : f32[2048,2048]\n"
	"  %w2 = VariableV2() : f32[2048,2048]\n"
	"  %w3 = VariableV2() : f32[2048,10]\n"
	"  %h1 = MatMul(%x, %w1) : f32[8,2048]\n"
	"  %a1 = Relu(%h1) : f32[8,2048]\n"
	"  %h2 = MatMul(%a1, %w2) : f32[8,2048]\n"
	"  %a2 = Relu(%h2) : f32[8,2048]\n"
	"  %h3 = MatMul(%a2, %w3) : f32[8,10]\n"
	"  %loss, %dy = SparseSoftmaxCrossEntropyWithLogits(%h3, %labels) : (f32[8], f32[8,10])\n"
	"  %g3 = MatMul(%a2, %dy) {transpose_a = true} : f32[2048,10]\n"
	"  %u3 = ApplyGradientDescent(%w3, %g3) : ()\n"
	"  %da2 = MatMul(%dy, %w3) {transpose_b = true} : f32[8,2048]\n"
	"  %dh2 = ReluGrad(%da2, %a2) : f32[8,2048]\n"
	"  %g2 = MatMul(%a1, %dh2) {transpose_a = true} : f32[2048,2048]\n"
	"  %u2 = ApplyGradientDescent(%w2, %g2) : ()\n"
	"  %da1 = MatMul(%dh2, %w2) {transpose_b = true} : f32[8,2048]\n"
	"  %dh1 = ReluGrad(%da1, %a1) : f32[8,2048]\n"
	"  %g1 = MatMul(%x, %dh1) {transpose_a = true} : f32[2048,2048]\n"
	"  %u1 = ApplyGradientDescent(%w1, %g1) : ()\n"
	"}\n";

/* The problem with data parallelism over every device annotated. */
static Graph *placed(void)
{
	Graph *g = tu_parse(problem);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "simplify,annotate,place<algo=dp>"), 0);
	return g;
}

/* What pipeline `later` would really give: a copy of g materialised by
 * it and ordered by the order pass, then simulated (replaying @order). */
static double reference(const Graph *g, const char *later)
{
	Graph *h = graph_clone(g);
	char p[128];
	snprintf(p, sizeof p, "%s,order", later);
	CU_ASSERT_EQUAL_FATAL(tu_run(h, p), 0);
	CostModel m = {h, h->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(sim_run(h, &m, &r, &d), 0);
	double x = r.makespan;
	sim_free(&r);
	graph_free(h);
	return x;
}

/* plan_evaluate's figure for g's plan, as a place pass followed by
 * pipeline `later` (NULL: run alone) judges it; cache: the pass's cache,
 * or NULL. */
static double judged(Graph *g, const char *later, EvalCache *cache)
{
	Pipeline p = {0};
	char err[256];
	if (later)
		CU_ASSERT_TRUE_FATAL(pipeline_parse(later, &p, err, sizeof err));
	CostModel cost = {g, g->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	Arena *a = arena_new();
	PassCtx ctx = {.g = g, .diag = &d, .cost = &cost, .scratch = a,
		       .pass = "place", .later = p.steps, .nlater = p.n,
		       .eval = cache, .search_work = 1e6, .search_budget = 10};
	Graph *h = graph_clone(g);
	PlanEval e = {0};
	double x = plan_evaluate(&ctx, h, &e);
	CU_ASSERT_EQUAL(x, e.span);
	CU_ASSERT_FALSE(e.oom);
	CU_ASSERT_TRUE(e.nops > g->nops);    /* left materialised */
	graph_free(h);
	arena_free(a);
	if (later)
		pipeline_free(&p);
	return x;
}

static void test_pipeline_options(void)
{
	Graph *g = placed();
	double dflt = reference(g, "comm");
	double sfb = reference(g, "comm<sfb=true>");
	double bucket = reference(g, "comm<bucket=64MB>");
	/* The options matter here, or the test could not fail. */
	CU_ASSERT_TRUE(fabs(sfb - dflt) > 1e-9 * dflt);
	CU_ASSERT_TRUE(fabs(bucket - dflt) > 1e-9 * dflt);
	/* Alone, and in a pipeline without options: comm's defaults. */
	CU_ASSERT_DOUBLE_EQUAL(judged(g, NULL, NULL), dflt, 1e-12 * dflt);
	CU_ASSERT_DOUBLE_EQUAL(judged(g, "split,comm,order", NULL), dflt,
			       1e-12 * dflt);
	/* With the pipeline's own options, whatever passes come between. */
	CU_ASSERT_DOUBLE_EQUAL(judged(g, "split,comm<sfb=true>,order", NULL),
			       sfb, 1e-12 * sfb);
	CU_ASSERT_DOUBLE_EQUAL(judged(g, "comm<bucket=64MB>,order", NULL),
			       bucket, 1e-12 * bucket);
	graph_free(g);
}

static void test_cache(void)
{
	Graph *g = placed();
	double fresh = judged(g, "comm<sfb=true>", NULL);
	EvalCache *c = eval_cache_new(g);
	long n, hits, misses;
	CU_ASSERT_EQUAL(judged(g, "comm<sfb=true>", c), fresh);
	CU_ASSERT_EQUAL(judged(g, "comm<sfb=true>", c), fresh);
	eval_cache_stats(c, &n, &hits, &misses);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(hits, 1);
	CU_ASSERT_EQUAL(misses, 1);
	/* A change to the graph (an attribute set) invalidates it. */
	op_set(g, tu_op(g, "h1"), "transpose_a", val_bool(g->arena, false));
	CU_ASSERT_EQUAL(judged(g, "comm<sfb=true>", c), fresh);
	eval_cache_stats(c, &n, &hits, &misses);
	CU_ASSERT_EQUAL(hits, 1);
	CU_ASSERT_EQUAL(misses, 2);
	eval_cache_free(c);
	/* A cache bound to another graph is not used. */
	Graph *other = placed();
	c = eval_cache_new(other);
	CU_ASSERT_EQUAL(judged(g, "comm<sfb=true>", c), fresh);
	eval_cache_stats(c, &n, &hits, &misses);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(hits + misses, 0);
	eval_cache_free(c);
	graph_free(other);
	graph_free(g);
}

/* AllReduces in g whose algo is algo. */
static int ar_algo(const Graph *g, const char *algo)
{
	int n = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		const char *a = op->dead || strcmp(op->type, "AllReduce") ? NULL
			: op_get_str(g, op, "algo");
		n += a && strcmp(a, algo) == 0;
	}
	return n;
}

/* place<algo=dp,sync=...>: ring and hier are written on every update and
 * comm runs them; auto writes none and comm takes the cheaper per
 * gradient.  By hand (docs/cost-model.md, "Collectives"), g2's 16 MiB
 * over 2 machines x 2 GPUs: ring 6 (50 us + 4 MiB / 1 GB/s) = 25.5 ms;
 * hier 2 (2 us + 8 MiB / 20 GB/s) + 2 (50 us + 8 MiB / 1 GB/s) = 17.7 ms;
 * g3's 80 KiB: ring 423 us, hier 190 us.  So auto is hier throughout,
 * and hier simulates faster than ring. */
static void test_dp_sync(void)
{
	static const char *sync[] = {"ring", "hier", "auto"};
	double span[3];
	for (int k = 0; k < 3; k++) {
		Graph *g = tu_parse(problem);
		CU_ASSERT_PTR_NOT_NULL_FATAL(g);
		char p[128];
		snprintf(p, sizeof p, "simplify,annotate,place<algo=dp,sync=%s>",
			 sync[k]);
		CU_ASSERT_EQUAL_FATAL(tu_run(g, p), 0);
		const char *s = op_ann_str(g, tu_op(g, "u2"), ANN_SYNC);
		if (k < 2) {
			CU_ASSERT_STRING_EQUAL(s ? s : "", sync[k]);
		} else {
			CU_ASSERT_PTR_NULL(s);
		}
		span[k] = reference(g, "comm");
		graph_free(g);
		g = tu_parse(problem);
		CU_ASSERT_EQUAL_FATAL(tu_run(g, p), 0);
		CU_ASSERT_EQUAL_FATAL(tu_run(g, "comm"), 0);
		/* Three gradients, one member per device. */
		CU_ASSERT_EQUAL(tu_count(g, "AllReduce"), 12);
		CU_ASSERT_EQUAL(ar_algo(g, k == 0 ? "ring" : "hier"), 12);
		graph_free(g);
	}
	CU_ASSERT_TRUE(span[1] < span[0]);
	CU_ASSERT_DOUBLE_EQUAL(span[2], span[1], 1e-12 * span[1]);
	/* auto is the default. */
	Graph *g = tu_parse(problem);
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "simplify,annotate,place<algo=dp>"), 0);
	CU_ASSERT_PTR_NULL(op_ann_str(g, tu_op(g, "u2"), ANN_SYNC));
	graph_free(g);
}

void suite_evaluate(void)
{
	CU_pSuite s = CU_add_suite("evaluate", NULL, NULL);
	CU_add_test(s, "judged with the pipeline's comm options",
		    test_pipeline_options);
	CU_add_test(s, "cached batch analysis", test_cache);
	CU_add_test(s, "dp's sync: ring, hier, comm's choice", test_dp_sync);
}
