/* test_cost.c — the cost model: @cost, profiles, the analytic roofline,
 * transfers, collectives, optimizer memory, the CSV table.  Every expected
 * value is worked out by hand in the comments. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "testutil.h"

#define NEAR(x, y) CU_ASSERT_DOUBLE_EQUAL((x), (y), 1e-12)

static Cluster *mk_cluster(Arena *a, int nmach, int per, double bw, double lat,
			   double net_bw, double net_lat)
{
	Cluster *c = cluster_new(a, "t");
	DevType t = {.name = "GPU", .flops = 10e12, .memory = 16e9,
		     .mem_bw = 900e9};
	CU_ASSERT_EQUAL_FATAL(cluster_add_type(c, a, &t), 0);
	DevType slow = {.name = "SLOW", .flops = 10e12, .memory = 16e9,
			.mem_bw = 100e9, .eff_given = true};
	for (int i = 0; i < OC_COUNT; i++)
		slow.eff[i] = 0.5;
	CU_ASSERT_EQUAL_FATAL(cluster_add_type(c, a, &slow), 1);
	for (int i = 0; i < nmach; i++) {
		char name[16];
		snprintf(name, sizeof name, "m%d", i);
		Machine m = {.name = name, .type = 0, .count = per, .bw = bw,
			     .lat = lat};
		CU_ASSERT_EQUAL_FATAL(cluster_add_machine(c, a, &m), i);
	}
	c->net_bw = net_bw;
	c->net_lat = net_lat;
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	CU_ASSERT_EQUAL_FATAL(cluster_finalize(c, a, &d), 0);
	return c;
}

static Op *mk_op(Graph *g, const char *name, const char *type, int64_t bytes,
		 int nin, Op **in)
{
	Op *op = graph_add_op(g, name, type, (uint32_t)nin, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	op->out[0] = type_make(g->arena, DT_U8, 1, (int64_t[]){bytes});
	op->types_given = true;
	for (int i = 0; i < nin; i++)
		op->in[i] = (Input){in[i], 0, false};
	return op;
}

static int dev(const Cluster *c, const char *name)
{
	int d = cluster_find_device(c, name);
	CU_ASSERT_FATAL(d >= 0);
	return d;
}

static void test_cost_annotation(void)
{
	Graph *g = graph_new("t");
	g->cluster = mk_cluster(g->arena, 1, 1, 1e9, 0, 1e9, 0);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Op *a = mk_op(g, "a", "Work", 0, 0, NULL);
	op_set_ann(g, a, ANN_COST, val_qty(g->arena, 2.5e-3, UNIT_SECONDS));
	NEAR(cost_op(&m, a, 0), 2.5e-3);
	NEAR(cost_op(&m, a, 1), 2.5e-3);
	/* A bare number is seconds. */
	op_set_ann(g, a, ANN_COST, val_float(g->arena, 0.25));
	NEAR(cost_op(&m, a, 1), 0.25);
	/* Per device type: GPU has an entry, SLOW falls through to the
	 * profile (4 ms). */
	Value *dict = val_dict(g->arena, 1);
	dict->dict.items[0].key = graph_intern(g, "GPU");
	dict->dict.items[0].val = val_qty(g->arena, 1e-3, UNIT_SECONDS);
	op_set_ann(g, a, ANN_COST, dict);
	const char *y = "ops:\n  a: {SLOW: 4 ms, GPU: 9 ms}\n";
	Diag d;
	diag_init(&d, stderr, "p.yaml", y, strlen(y));
	m.prof = profile_parse(g->arena, "p.yaml", y, strlen(y), &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.prof);
	NEAR(cost_op(&m, a, 0), 1e-3);
	NEAR(cost_op(&m, a, 1), 4e-3);
	graph_free(g);
}

static void test_cost_profile_fit(void)
{
	Graph *g = graph_new("t");
	g->cluster = mk_cluster(g->arena, 1, 1, 1e9, 0, 1e9, 0);
	const char *y =
		"# measured\n"
		"batch_sizes: [16, 32]\n"
		"ops:\n"
		"  conv1/Conv2D:\n"
		"    GPU: {16: 1 ms, 32: 1.8 ms}\n"
		"    SLOW: 3 ms\n"
		"  one: {GPU: {16: 2ms}, SLOW: [1ms, 3ms]}\n"
		"  other: {V100: 1 ms}\n";
	Diag d;
	diag_init(&d, stderr, "p.yaml", y, strlen(y));
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	m.prof = profile_parse(g->arena, "p.yaml", y, strlen(y), &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.prof);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	Op *c = mk_op(g, "conv1/Conv2D", "Work", 0, 0, NULL);
	Op *o = mk_op(g, "one", "Work", 0, 0, NULL);
	/* No graph batch: the largest profiled batch (32). */
	NEAR(cost_op(&m, c, 0), 1.8e-3);
	NEAR(cost_op(&m, o, 0), 2e-3);
	NEAR(cost_op(&m, o, 1), 3e-3);
	/* batch 64: b = (1.8 - 1) ms / 16 = 0.05 ms, a = 1 - 16 * 0.05 =
	 * 0.2 ms; 0.2 + 64 * 0.05 = 3.4 ms.  One point: 2 ms / 16 * 64 =
	 * 8 ms.  List [1, 3] at [16, 32]: b = 0.125 ms, a = -1 ms; at 64:
	 * -1 + 8 = 7 ms.  A scalar time holds at any batch. */
	graph_set_attr(g, "batch", val_int(g->arena, 64));
	NEAR(cost_op(&m, c, 0), 3.4e-3);
	NEAR(cost_op(&m, c, 1), 3e-3);
	NEAR(cost_op(&m, o, 0), 8e-3);
	NEAR(cost_op(&m, o, 1), 7e-3);
	graph_free(g);
}

/* A fit that crosses zero: 1 ms at batch 64 and 10 ms at batch 128 give
 * b = 9/64 ms, a = 1 - 9 = -8 ms, not positive for batch <= 56.  At batch
 * 32 the line says -3.5 ms; the op costs the smallest measured time,
 * 1 ms, and the reader warned where.  A falling fit (4 ms at 1, 2 ms at 3:
 * b = -1 ms, a = 5 ms) is not positive from batch 5. */
static void test_cost_profile_negative_fit(void)
{
	Graph *g = graph_new("t");
	g->cluster = mk_cluster(g->arena, 1, 1, 1e9, 0, 1e9, 0);
	const char *y = "ops:\n"
			"  a: {GPU: {64: 1 ms, 128: 10 ms}}\n"
			"  f: {GPU: {1: 4 ms, 3: 2 ms}}\n";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	Diag d;
	diag_init(&d, f, "p.yaml", y, strlen(y));
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	m.prof = profile_parse(g->arena, "p.yaml", y, strlen(y), &d);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.prof);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "p.yaml:2:7: warning: the fit of op 'a' "
				      "on 'GPU'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "for batch sizes up to 56; those cost "
				      "the smallest measured time, 0.001 s"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "p.yaml:3:7: warning: the fit of op 'f'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "for batch sizes from 5;"));
	free(buf);
	Op *a = mk_op(g, "a", "Work", 0, 0, NULL);
	Op *fo = mk_op(g, "f", "Work", 0, 0, NULL);
	graph_set_attr(g, "batch", val_int(g->arena, 32));
	NEAR(cost_op(&m, a, 0), 1e-3);
	graph_set_attr(g, "batch", val_int(g->arena, 96));   /* -8 + 13.5 */
	NEAR(cost_op(&m, a, 0), 5.5e-3);
	graph_set_attr(g, "batch", val_int(g->arena, 2));    /* 5 - 2 */
	NEAR(cost_op(&m, fo, 0), 3e-3);
	graph_set_attr(g, "batch", val_int(g->arena, 8));    /* 5 - 8 < 0 */
	NEAR(cost_op(&m, fo, 0), 2e-3);
	graph_free(g);
}

static char *capture_profile_error(const char *y)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	Diag d;
	diag_init(&d, f, "p.yaml", y, strlen(y));
	Arena *a = arena_new();
	Profile *p = profile_parse(a, "p.yaml", y, strlen(y), &d);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT(d.nerrors > 0);
	fclose(f);
	arena_free(a);
	return buf;
}

static void test_cost_profile_errors(void)
{
	char *e = capture_profile_error("ops:\n  a:\n    GPU: 3 parsecs\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "p.yaml:3:10: error: bad time"));
	free(e);
	e = capture_profile_error("ops:\n  a: {GPU: {0: 1ms}}\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "p.yaml:2:13: error: batch size"));
	free(e);
	e = capture_profile_error("ops:\n  a: {GPU: [1ms, 2ms]}\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "p.yaml:2:12: error: a list of times"));
	free(e);
	e = capture_profile_error("ops: [\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "p.yaml:2:1: error: YAML syntax"));
	free(e);
	e = capture_profile_error("opz: {}\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "p.yaml:1:1: error: unknown profile key 'opz'"));
	free(e);
	/* an (op, device type) pair twice, even across repeated op keys */
	e = capture_profile_error("ops:\n  a: {GPU: 1ms}\n  a: {SLOW: 1ms, GPU: 2ms}\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "p.yaml:3:18: error: op 'a': device "
					 "type 'GPU' given twice"));
	free(e);
	/* no times at all; too many batch sizes */
	e = capture_profile_error("batch_sizes: []\nops:\n  a: {GPU: []}\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "p.yaml:3:12: error: no times for "
					 "device type 'GPU'"));
	free(e);
	char y[1024] = "batch_sizes: [";
	for (int i = 1; i <= 65; i++)
		snprintf(y + strlen(y), sizeof y - strlen(y), "%s%d", i > 1 ? ", " : "", i);
	strcat(y, "]\nops: {}\n");
	e = capture_profile_error(y);
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "p.yaml:1:14: error: more than 64 "
					 "batch sizes"));
	free(e);
}

static void test_cost_analytic(void)
{
	Graph *g = graph_new("t");
	g->cluster = mk_cluster(g->arena, 1, 1, 1e9, 0, 1e9, 0);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Op *x = graph_add_op(g, "x", "Placeholder", 0, 1);
	x->out[0] = type_make(g->arena, DT_F32, 2, (int64_t[]){64, 784});
	Op *w = graph_add_op(g, "w", "Placeholder", 0, 1);
	w->out[0] = type_make(g->arena, DT_F32, 2, (int64_t[]){784, 256});
	Op *mm = graph_add_op(g, "mm", "MatMul", 2, 1);
	mm->out[0] = type_make(g->arena, DT_F32, 2, (int64_t[]){64, 256});
	mm->in[0] = (Input){x, 0, false};
	mm->in[1] = (Input){w, 0, false};
	x->types_given = w->types_given = mm->types_given = true;
	/* Sources and parameters do no work. */
	NEAR(cost_op(&m, x, 0), 0);
	Op *v = graph_add_op(g, "v", "VariableV2", 0, 1);
	v->out[0] = type_make(g->arena, DT_F32, 2, (int64_t[]){784, 256});
	NEAR(cost_op(&m, v, 0), 0);
	/* FLOPs 2*64*784*256 = 25690112; bytes moved 4*(50176 + 200704 +
	 * 16384) = 1069056.  GPU (no efficiency given: the kernel classes):
	 * a GEMM, m = 64, k = 784, n = 256; its smallest dimension 64 gives
	 * efficiency 0.6 * 64 / (64 + 24) = 0.43636..., so compute
	 * 25690112 / (10e12 * 0.6 * 64/88) = 5.88731733e-6 > memory
	 * 1069056 / (900e9 * 0.75) = 1.58378e-6; plus the 30 us overhead.
	 * SLOW (efficiency 0.5 given, 100 GB/s): compute 25690112 / 5e12 =
	 * 5.1380224e-6 < memory 1069056 / (100e9 * 0.75) = 1.425408e-5. */
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, mm), 25690112.0, 0.5);
	CU_ASSERT_DOUBLE_EQUAL(op_bytes_moved(g, mm), 1069056.0, 0.5);
	NEAR(cost_op(&m, mm, 0), 30e-6 + 25690112.0 / (10e12 * 0.6 * 64 / 88));
	NEAR(cost_op(&m, mm, 1), 30e-6 + 1069056.0 / 75e9);
	/* kernel_efficiency scales a matrix product unless the type gives
	 * gemm_efficiency, which then replaces it for matrix products alone
	 * (x 2: compute 2.94e-6 s, still above memory). */
	DevType *gpu = &g->cluster->types[0];
	gpu->kern_eff_given = true;
	gpu->kern_eff = 0.5;
	NEAR(cost_op(&m, mm, 0), 30e-6 + 25690112.0 / (10e12 * 0.3 * 64 / 88));
	gpu->gemm_eff_given = true;
	gpu->gemm_eff = 2.0;
	NEAR(cost_op(&m, mm, 0), 30e-6 + 25690112.0 / (10e12 * 1.2 * 64 / 88));
	gpu->kern_eff_given = gpu->gemm_eff_given = false;
	/* A type's own overhead and mem_efficiency replace the defaults. */
	DevType *slow = &g->cluster->types[1];
	slow->overhead_given = slow->mem_eff_given = true;
	slow->overhead = 5e-6;
	slow->mem_eff = 0.5;
	NEAR(cost_op(&m, mm, 1), 5e-6 + 1069056.0 / 50e9);
	/* A measured profile overrides the model op by op: mm on GPU takes
	 * its measured time (which contains the launch: no overhead is
	 * added); SLOW, which the profile does not name, keeps the model. */
	const char *y = "ops:\n  mm: {GPU: 1 ms}\n";
	Diag d;
	diag_init(&d, stderr, "p.yaml", y, strlen(y));
	m.prof = profile_parse(g->arena, "p.yaml", y, strlen(y), &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.prof);
	NEAR(cost_op(&m, mm, 0), 1e-3);
	NEAR(cost_op(&m, mm, 1), 5e-6 + 1069056.0 / 50e9);
	graph_free(g);
}

/* cost_copy, which the hybrid's strategy simulator charges for a
 * gradient bucket's ConcatV2 and SplitV, is what cost_op gives those ops
 * (comm's emit_bucket): 4 MB of gradients read and written, on GPU
 * (900 GB/s at 0.75) 30 us + 8e6 / 675e9 = 41.85185 us; on SLOW (100 GB/s
 * at 0.75) 30 us + 8e6 / 75e9 = 136.6667 us. */
static void test_cost_copy(void)
{
	Graph *g = graph_new("t");
	g->cluster = mk_cluster(g->arena, 1, 1, 1e9, 0, 1e9, 0);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Op *a = graph_add_op(g, "a", "Identity", 0, 1);
	a->out[0] = type_make(g->arena, DT_F32, 1, (int64_t[]){400000});
	Op *b = graph_add_op(g, "b", "Identity", 0, 1);
	b->out[0] = type_make(g->arena, DT_F32, 1, (int64_t[]){600000});
	Op *cat = graph_add_op(g, "cat", "ConcatV2", 2, 1);
	cat->in[0] = (Input){a, 0, false};
	cat->in[1] = (Input){b, 0, false};
	cat->out[0] = type_make(g->arena, DT_F32, 1, (int64_t[]){1000000});
	Op *sp = graph_add_op(g, "sp", "SplitV", 1, 2);
	sp->in[0] = (Input){cat, 0, false};
	sp->out[0] = a->out[0];
	sp->out[1] = b->out[0];
	a->types_given = b->types_given = cat->types_given = sp->types_given = true;
	for (int ty = 0; ty < 2; ty++) {
		double x = cost_copy(&g->cluster->types[ty], 4e6);
		NEAR(x, 30e-6 + 8e6 / (ty ? 75e9 : 675e9));
		NEAR(cost_op(&m, cat, ty), x);
		NEAR(cost_op(&m, sp, ty), x);
	}
	graph_free(g);
}

/* Ops computed from constants alone cost nothing (folded before the
 * first step); one input that varies, a random op, or an output over
 * 10 MiB keeps the cost. */
static void test_cost_folded(void)
{
	Graph *g = tu_parse(
		"gir 1\n"
		"cluster c {\n"
		"  type GPU {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n"
		"  machine m0 {type = GPU, count = 1, bandwidth = 10GB/s, latency = 1us}\n"
		"}\n"
		"graph g {\n"
		"  %x = Placeholder() : f32[64,49]\n"
		"  %k = Const() {value = 1.0} : f32[64,49]\n"
		"  %p = Const() {value = [1, 0]} : i32[2]\n"
		"  %t = Transpose(%k, %p) : f32[49,64]\n"
		"  %s = Sub(%k, %k) : f32[64,49]\n"
		"  %z = Const() {value = 0.0} : f32[]\n"
		"  %ne = NotEqual(%s, %z) : bool[64,49]\n"
		"  %sel = SelectV2(%ne, %k, %s) : f32[64,49]\n"
		"  %y = AddV2(%x, %sel) {@output = true} : f32[64,49]\n"
		"  %sh = Const() {value = [64, 49]} : i32[2]\n"
		"  %r = RandomUniform(%sh) {dtype = \"f32\"} : f32[64,49]\n"
		"  %rs = Mul(%r, %k) {@output = true} : f32[64,49]\n"
		"  %big = Const() {value = [4096, 1024]} : i32[2]\n"
		"  %one = Const() {value = 1.0} : f32[]\n"
		"  %bc = BroadcastTo(%one, %big) : f32[4096,1024]\n"
		"  %bt = Transpose(%bc, %p) {@output = true} : f32[1024,4096]\n"
		"}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	const char *free_ops[] = {"t", "s", "ne", "sel"};
	for (int i = 0; i < 4; i++)
		NEAR(cost_op(&m, tu_op(g, free_ops[i]), 0), 0);
	/* y reads a Placeholder; r is random and rs reads it; bc is 16 MiB
	 * (> 10), bt reads it: each pays at least the 30 us launch */
	const char *paid[] = {"y", "r", "rs", "bc", "bt"};
	for (int i = 0; i < 5; i++)
		CU_ASSERT_TRUE(cost_op(&m, tu_op(g, paid[i]), 0) >= 30e-6);
	graph_free(g);
}

/* 'kernels: source': the ops one source operator became (@kernel) cost
 * as one kernel.  x is 4e6 bytes (f32[1000,1000]); no FLOPs, so each op
 * costs its memory traffic at 1 TB/s (mem_efficiency 1) plus 10 us.
 * Type A runs every op as its own kernel: a reads x and c (4 bytes) and
 * writes a: 8.000004 us; b reads a, writes b: 8 us; y reads x and b,
 * writes y: 12 us; each + 10 us.  Type S ('kernels: source'): a is the
 * kernel's head (it reads nothing of the kernel's) and only b reads a:
 * x and c, 4.000004 us + 10 us; b reads a inside, and z outside reads b:
 * b's write, 4 us, no launch; y reads b inside, x and writes y: 8 us, no
 * launch.  One kernel: 26.000004 us against 58.000004 us.  With y on
 * another device, b's tensor leaves the kernel: y is a head again (x, b,
 * y: 12 us + 10 us) and b still writes its output (4 us). */
static void test_cost_source_kernels(void)
{
	Graph *g = tu_parse(
		"gir 1\n"
		"cluster c {\n"
		"  type A {flops = 10TFLOPS, memory = 16GiB, mem_bw = 1TB/s, overhead = 10us, mem_efficiency = 1}\n"
		"  type S {flops = 10TFLOPS, memory = 16GiB, mem_bw = 1TB/s, overhead = 10us, mem_efficiency = 1, kernels = \"source\"}\n"
		"  machine m0 {type = A, count = 1, bandwidth = 10GB/s, latency = 1us}\n"
		"  machine m1 {type = S, count = 2, bandwidth = 10GB/s, latency = 1us}\n"
		"  network {bandwidth = 1GB/s}\n"
		"}\n"
		"graph g {\n"
		"  %x = Placeholder() : f32[1000,1000]\n"
		"  %c = Const() {value = 0.5} : f32[]\n"
		"  %a = Mul(%x, %c) {@flops = 0, @kernel = 7} : f32[1000,1000]\n"
		"  %b = Exp(%a) {@flops = 0, @kernel = 7} : f32[1000,1000]\n"
		"  %y = Mul(%x, %b) {@flops = 0, @kernel = 7} : f32[1000,1000]\n"
		"  %z = Neg(%b) {@flops = 0, @output = true} : f32[1000,1000]\n"
		"  %o = Neg(%y) {@flops = 0, @output = true} : f32[1000,1000]\n"
		"}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_TRUE_FATAL(g->cluster->types[1].source_kernels);
	CU_ASSERT_FALSE(g->cluster->types[0].source_kernels);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Op *a = tu_op(g, "a"), *b = tu_op(g, "b"), *y = tu_op(g, "y");
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, a, 0), 18.000004e-6, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, b, 0), 18e-6, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, y, 0), 22e-6, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, a, 1), 14.000004e-6, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, b, 1), 4e-6, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, y, 1), 8e-6, 1e-15);
	/* placed apart: y on m1/gpu1, the rest of the kernel on m1/gpu0 */
	op_set_ann(g, a, ANN_DEVICE, val_str(g->arena, "m1/gpu0"));
	op_set_ann(g, b, ANN_DEVICE, val_str(g->arena, "m1/gpu0"));
	op_set_ann(g, y, ANN_DEVICE, val_str(g->arena, "m1/gpu1"));
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, a, 1), 14.000004e-6, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, b, 1), 4e-6, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, y, 1), 22e-6, 1e-15);
	graph_free(g);
}

/* 'batch_norm: cudnn': a training batch norm makes BN_FWD_PASSES (3) and
 * its gradient BN_BWD_PASSES (7.5) passes of its input, where its own
 * inputs and outputs count 2 and 3; with C channels, fewer than the type's
 * 'sms', it streams at C/sms of the bandwidth.  The default ('fused'),
 * inference (is_training false) and channels of 8192 elements or fewer
 * (read once) cost the op's own bytes at the whole bandwidth. */
static void test_cost_batch_norm(void)
{
	Graph *g = tu_parse(
		"gir 1\n"
		"cluster c {\n"
		"  type F {flops = 10TFLOPS, memory = 16GiB, mem_bw = 1TB/s, overhead = 10us, mem_efficiency = 1, sms = 100}\n"
		"  type C {flops = 10TFLOPS, memory = 16GiB, mem_bw = 1TB/s, overhead = 10us, mem_efficiency = 1, sms = 100, batch_norm = \"cudnn\"}\n"
		"  machine m0 {type = F, count = 1, bandwidth = 10GB/s, latency = 1us}\n"
		"  machine m1 {type = C, count = 1, bandwidth = 10GB/s, latency = 1us}\n"
		"  network {bandwidth = 1GB/s}\n"
		"}\n"
		"graph g {\n"
		"  %x = Placeholder() : f32[16,50,100,100]\n"
		"  %xh = Placeholder() : f32[16,100,100,50]\n"
		"  %xr = Placeholder() : f32[1,200,64,64]\n"
		"  %sc = Placeholder() : f32[50]\n"
		"  %sr = Placeholder() : f32[200]\n"
		"  %e = Const() {value = []} : f32[0]\n"
		"  %bn = FusedBatchNormV3(%x, %sc, %sc, %e, %e) {data_format = \"NCHW\", is_training = true, @flops = 0} : (f32[16,50,100,100], f32[50], f32[50], f32[50], f32[50], f32[0])\n"
		"  %bh = FusedBatchNormV3(%xh, %sc, %sc, %e, %e) {data_format = \"NHWC\", @flops = 0} : (f32[16,100,100,50], f32[50], f32[50], f32[50], f32[50], f32[0])\n"
		"  %bi = FusedBatchNormV3(%x, %sc, %sc, %sc, %sc) {data_format = \"NCHW\", is_training = false, @flops = 0} : (f32[16,50,100,100], f32[50], f32[50], f32[50], f32[50], f32[0])\n"
		"  %br = FusedBatchNormV3(%xr, %sr, %sr, %e, %e) {data_format = \"NCHW\", is_training = true, @flops = 0} : (f32[1,200,64,64], f32[200], f32[200], f32[200], f32[200], f32[0])\n"
		"  %gd = FusedBatchNormGradV3(%x, %x, %sc, %bn:3, %bn:4, %bn:5) {data_format = \"NCHW\", is_training = true, @flops = 0} : (f32[16,50,100,100], f32[50], f32[50], f32[0], f32[0])\n"
		"}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_TRUE_FATAL(g->cluster->types[1].bn_cudnn);
	CU_ASSERT_FALSE(g->cluster->types[0].bn_cudnn);
	CU_ASSERT_EQUAL(g->cluster->types[1].sms, 100);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Op *bn = tu_op(g, "bn"), *bh = tu_op(g, "bh"), *bi = tu_op(g, "bi");
	Op *br = tu_op(g, "br"), *gd = tu_op(g, "gd");
	double xb = 16.0 * 50 * 100 * 100 * 4;     /* 32 MB */
	/* fused: the op's own bytes, 1 TB/s */
	NEAR(cost_op(&m, bn, 0), 10e-6 + op_bytes_moved(g, bn) / 1e12);
	NEAR(cost_op(&m, gd, 0), 10e-6 + op_bytes_moved(g, gd) / 1e12);
	/* cudnn, 50 channels of 160,000 elements on 100 SMs: half the
	 * bandwidth; one more pass forward, 4.5 more backward */
	NEAR(cost_op(&m, bn, 1), 10e-6 + (op_bytes_moved(g, bn) + xb) / 0.5e12);
	NEAR(cost_op(&m, bh, 1), 10e-6 + (op_bytes_moved(g, bh) + xb) / 0.5e12);
	NEAR(cost_op(&m, gd, 1),
	     10e-6 + (op_bytes_moved(g, gd) + 4.5 * xb) / 0.5e12);
	/* by hand: three passes of 32 MB and 1,200 bytes of per-channel
	 * vectors (two inputs, four outputs of 50 floats) at 0.5 TB/s */
	CU_ASSERT_DOUBLE_EQUAL(cost_op(&m, bn, 1), 10e-6 + 192.0024e-6, 1e-12);
	/* inference, and 200 channels of 4,096 elements: as fused */
	NEAR(cost_op(&m, bi, 1), 10e-6 + op_bytes_moved(g, bi) / 1e12);
	NEAR(cost_op(&m, br, 1), 10e-6 + op_bytes_moved(g, br) / 1e12);
	graph_free(g);
}

/* On a tensor-core type ('flops' a tensor-core peak) a depthwise
 * convolution and an element-wise op run on the CUDA cores: they cost at
 * 'cuda_core_flops' when the type gives it (the named H100-TF32 and
 * A100-TF32 do), at 'flops' when it does not; a dense convolution stays
 * on the tensor cores.  Memory at 1000 TB/s and no overhead leave the
 * compute term alone. */
static void test_cost_cuda_cores(void)
{
	Graph *g = tu_parse(
		"gir 1\n"
		"cluster c {\n"
		"  type P {flops = 10TFLOPS, memory = 16GiB, mem_bw = 1000TB/s, overhead = 0s}\n"
		"  type T {flops = 80TFLOPS, memory = 16GiB, mem_bw = 1000TB/s, overhead = 0s, cuda_core_flops = 10TFLOPS, tensor_cores = true}\n"
		"  type U {flops = 80TFLOPS, memory = 16GiB, mem_bw = 1000TB/s, overhead = 0s, tensor_cores = true}\n"
		"  machine m0 {type = P, count = 1, bandwidth = 10GB/s, latency = 1us}\n"
		"  machine m1 {type = T, count = 1, bandwidth = 10GB/s, latency = 1us}\n"
		"  machine m2 {type = U, count = 1, bandwidth = 10GB/s, latency = 1us}\n"
		"  network {bandwidth = 1GB/s}\n"
		"}\n"
		"graph g {\n"
		"  %x = Placeholder() : f32[8,14,14,256]\n"
		"  %w = Placeholder() : f32[3,3,256,1]\n"
		"  %k = Placeholder() : f32[1,1,256,256]\n"
		"  %d = DepthwiseConv2dNative(%x, %w) {strides = [1, 1, 1, 1], padding = \"SAME\", data_format = \"NHWC\"} : f32[8,14,14,256]\n"
		"  %c = Conv2D(%x, %k) {strides = [1, 1, 1, 1], padding = \"SAME\", data_format = \"NHWC\"} : f32[8,14,14,256]\n"
		"  %e = Exp(%x) {@flops = 1000000000} : f32[8,14,14,256]\n"
		"}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_DOUBLE_EQUAL(g->cluster->types[1].cuda_flops, 10e12, 1);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Op *d = tu_op(g, "d"), *c = tu_op(g, "c"), *e = tu_op(g, "e");
	CU_ASSERT_TRUE(cost_op(&m, d, 0) > 0);
	NEAR(cost_op(&m, d, 1), cost_op(&m, d, 0));
	NEAR(cost_op(&m, d, 2), cost_op(&m, d, 0) / 8);
	/* element-wise: 1 GFLOP at 0.5 of 10 TFLOP/s, by hand */
	NEAR(cost_op(&m, e, 0), 200e-6);
	NEAR(cost_op(&m, e, 1), 200e-6);
	NEAR(cost_op(&m, e, 2), 25e-6);
	/* the 1x1 convolution: a GEMM on the tensor cores either way */
	NEAR(cost_op(&m, c, 1), cost_op(&m, c, 0) / 8);
	NEAR(cost_op(&m, c, 2), cost_op(&m, c, 0) / 8);
	/* the named types: the CUDA cores of their FP32 twins */
	CU_ASSERT_DOUBLE_EQUAL(devtype_named("H100-TF32")->cuda_flops,
			       devtype_named("H100")->flops, 1);
	CU_ASSERT_DOUBLE_EQUAL(devtype_named("A100-TF32")->cuda_flops,
			       devtype_named("A100")->flops, 1);
	graph_free(g);
}

/* A convolution of batch 8 on 14x14x256 inputs with a KHxKW window,
 * 256 output channels, stride S, NHWC. */
static Op *mk_conv(Graph *g, const char *name, int kh, int kw, int s)
{
	char n[64];
	snprintf(n, sizeof n, "%s_x", name);
	Op *x = graph_add_op(g, n, "Placeholder", 0, 1);
	x->out[0] = type_make(g->arena, DT_F32, 4, (int64_t[]){8, 14, 14, 256});
	snprintf(n, sizeof n, "%s_w", name);
	Op *w = graph_add_op(g, n, "Placeholder", 0, 1);
	w->out[0] = type_make(g->arena, DT_F32, 4,
			      (int64_t[]){kh, kw, 256, 256});
	Op *c = graph_add_op(g, name, "Conv2D", 2, 1);
	int64_t o = 14 / s;
	c->out[0] = type_make(g->arena, DT_F32, 4, (int64_t[]){8, o, o, 256});
	c->in[0] = (Input){x, 0, false};
	c->in[1] = (Input){w, 0, false};
	Value *st = val_list(g->arena, 4);
	int64_t sv[4] = {1, s, s, 1};
	for (int i = 0; i < 4; i++)
		st->list.items[i] = val_int(g->arena, sv[i]);
	op_set(g, c, "strides", st);
	op_set(g, c, "padding", val_str(g->arena, "SAME"));
	x->types_given = w->types_given = c->types_given = true;
	return c;
}

static void test_cost_kernel_classes(void)
{
	Graph *g = graph_new("t");
	g->cluster = mk_cluster(g->arena, 1, 1, 1e9, 0, 1e9, 0);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	/* Every convolution here is an implicit GEMM with m = 8*14*14 =
	 * 1568 output positions (392 at stride 2), n = 256 output channels
	 * and k = KH*KW*256; FLOPs 2mnk.  On GPU (10 TFLOP/s) the smallest
	 * dimension is n = 256 in every case (m >= 392, k >= 256), so the
	 * shape factor is 256 / (256 + 24) = 0.9142857.  Compute exceeds
	 * memory traffic in each case (checked: 900 GB/s x 0.75). */
	double f = 256.0 / 280.0, peak = 10e12, ovh = 30e-6;
	/* 3x3, stride 1: Winograd, 1.8 of peak. */
	Op *c3 = mk_conv(g, "c3", 3, 3, 1);
	double fl3 = 2.0 * 1568 * 256 * 2304;
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, c3), fl3, 0.5);
	NEAR(cost_op(&m, c3, 0), ovh + fl3 / (peak * 1.8 * f));
	/* 1x1: a GEMM, 0.6 of peak. */
	Op *c1 = mk_conv(g, "c1", 1, 1, 1);
	double fl1 = 2.0 * 1568 * 256 * 256;
	NEAR(cost_op(&m, c1, 0), ovh + fl1 / (peak * 0.6 * f));
	/* 3x3, stride 2: no Winograd, 0.5 of peak; m = 8*7*7 = 392. */
	Op *c3s = mk_conv(g, "c3s", 3, 3, 2);
	double fl3s = 2.0 * 392 * 256 * 2304;
	NEAR(cost_op(&m, c3s, 0), ovh + fl3s / (peak * 0.5 * f));
	/* 5x5: a large window, 1.3 of peak. */
	Op *c5 = mk_conv(g, "c5", 5, 5, 1);
	double fl5 = 2.0 * 1568 * 256 * 6400;
	NEAR(cost_op(&m, c5, 0), ovh + fl5 / (peak * 1.3 * f));
	/* kernel_efficiency scales the classes. */
	DevType *t = &g->cluster->types[0];
	t->kern_eff_given = true;
	t->kern_eff = 0.5;
	NEAR(cost_op(&m, c3, 0), ovh + fl3 / (peak * 0.9 * f));
	/* A tensor-core type runs every convolution as an implicit GEMM:
	 * the 3x3 and the 5x5 at the GEMM's 0.6 (x 0.5 here), the 3x3
	 * stride 2 stays 0.5, the 1x1 stays a GEMM. */
	t->tensor_cores = true;
	NEAR(cost_op(&m, c3, 0), ovh + fl3 / (peak * 0.3 * f));
	NEAR(cost_op(&m, c5, 0), ovh + fl5 / (peak * 0.3 * f));
	NEAR(cost_op(&m, c3s, 0), ovh + fl3s / (peak * 0.25 * f));
	NEAR(cost_op(&m, c1, 0), ovh + fl1 / (peak * 0.3 * f));
	/* The named H100s carry what was measured on them (docs/cost-model.md,
	 * "Calibration"): a 10 us overhead and their fitted factors.  FP32:
	 * Winograd 1.8 x 0.64, a 1x1 convolution (cuDNN) the GEMM class's
	 * 0.6 x kernel_efficiency 0.64, not x gemm_efficiency, which is for
	 * matrix products; TF32: every convolution a GEMM, 0.6 x 0.48.
	 * Compute still exceeds memory (about 5.6 MB at 3.35 TB/s x 0.90 is
	 * 1.9 us). */
	*t = *devtype_named("H100");
	NEAR(cost_op(&m, c3, 0), 10e-6 + fl3 / (67e12 * 1.8 * 0.64 * f));
	NEAR(cost_op(&m, c1, 0), 10e-6 + fl1 / (67e12 * 0.6 * 0.64 * f));
	*t = *devtype_named("H100-TF32");
	NEAR(cost_op(&m, c3, 0), 10e-6 + fl3 / (494.7e12 * 0.6 * 0.48 * f));
	graph_free(g);
}

static void test_cost_transfer(void)
{
	Arena *a = arena_new();
	Graph *g = graph_new("t");
	Cluster *c = mk_cluster(a, 2, 2, 10e9, 1e-6, 1e9, 1e-5);
	CostModel m = {g, c, NULL, NULL, 0};
	int d00 = dev(c, "m0/gpu0"), d01 = dev(c, "m0/gpu1"),
	    d10 = dev(c, "m1/gpu0");
	NEAR(cost_transfer(&m, d00, d00, 1e9), 0);
	NEAR(cost_transfer(&m, d00, d01, 1e6), 1e-6 + 1e-4);
	NEAR(cost_transfer(&m, d01, d10, 1e6), 1e-5 + 1e-3);
	graph_free(g);
	arena_free(a);

	/* A link override between m0/gpu1 and m1/gpu0 (either direction):
	 * 5 GB/s, latency inherited from the network (10 us): 1e6 bytes take
	 * 1e-5 + 2e-4.  The PS formula then counts that worker as local: a
	 * push from m1/gpu0 to a PS on m0/gpu1 is 2.1e-4 and m1/gpu1's
	 * 1e-5 + 1e-3 over the shared network; both ways: 2 * 1.01e-3. */
	const char *yaml =
		"device_types: {GPU: {flops: 10 TFLOPS, memory: 16 GB}}\n"
		"machines:\n"
		"  - {name: m0, type: GPU, count: 2, link: {bandwidth: 10 GB/s}}\n"
		"  - {name: m1, type: GPU, count: 2, link: {bandwidth: 10 GB/s}}\n"
		"network: {bandwidth: 1 GB/s, latency: 10 us}\n"
		"links:\n"
		"  - {between: [m1/gpu0, m0/gpu1], bandwidth: 5 GB/s}\n";
	a = arena_new();
	g = graph_new("t");
	Diag d;
	diag_init(&d, stderr, "c.yaml", yaml, strlen(yaml));
	Cluster *o = cluster_parse_yaml(a, "c.yaml", yaml, strlen(yaml), &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CostModel mo = {g, o, NULL, NULL, 0};
	int p01 = dev(o, "m0/gpu1"), p10 = dev(o, "m1/gpu0"), p11 = dev(o, "m1/gpu1");
	CU_ASSERT_EQUAL(cluster_find_link(o, p01, p10), 0);
	CU_ASSERT_EQUAL(cluster_find_link(o, p10, p01), 0);
	CU_ASSERT_EQUAL(cluster_find_link(o, p01, p11), -1);
	NEAR(cost_transfer(&mo, p01, p10, 1e6), 1e-5 + 2e-4);
	NEAR(cost_transfer(&mo, p10, p01, 1e6), 1e-5 + 2e-4);
	NEAR(cost_transfer(&mo, p01, p11, 1e6), 1e-5 + 1e-3);
	int ws[3] = {p01, p10, p11};
	NEAR(cost_ps(&mo, ws, 3, p01, 1e6), 2 * 1.01e-3);
	graph_free(g);
	arena_free(a);
}

static void test_cost_collectives(void)
{
	Arena *a = arena_new();
	Graph *g = graph_new("t");
	/* One machine of 4, 1 GB/s, 1 us: ring of 4e6 bytes =
	 * 2*3*(1e-6 + 1e6/1e9) = 6.006e-3. */
	Cluster *c1 = mk_cluster(a, 1, 4, 1e9, 1e-6, 1e9, 0);
	CostModel m1 = {g, c1, NULL, NULL, 0};
	int ring[4] = {0, 1, 2, 3};
	NEAR(cost_allreduce_ring(&m1, ring, 4, 4e6), 6.006e-3);
	NEAR(cost_allreduce_ring(&m1, ring, 1, 4e6), 0);
	/* One machine: hierarchical == ring. */
	NEAR(cost_allreduce_hier(&m1, ring, 4, 4e6), 6.006e-3);

	/* Two machines of 2; intra 10 GB/s, network 1 GB/s, no latency.
	 * Ring over all 4: slowest link 1 GB/s: 2*3*(1e6/1e9) = 6e-3.
	 * Hierarchical: intra reduce-scatter 1*(2e6/10e9) = 2e-4, inter ring
	 * of 2 machines 2*1*(2e6/1e9) = 4e-3, intra all-gather 2e-4: 4.4e-3. */
	Cluster *c2 = mk_cluster(a, 2, 2, 10e9, 0, 1e9, 0);
	CostModel m2 = {g, c2, NULL, NULL, 0};
	int all[4] = {dev(c2, "m0/gpu0"), dev(c2, "m0/gpu1"),
		      dev(c2, "m1/gpu0"), dev(c2, "m1/gpu1")};
	NEAR(cost_allreduce_ring(&m2, all, 4, 4e6), 6e-3);
	NEAR(cost_allreduce_hier(&m2, all, 4, 4e6), 4.4e-3);

	/* PS on m0/gpu0; network latency 10 us.  Push: m0/gpu1 over its own
	 * link 1e6/10e9 = 1e-4; m1's two workers share m0's NIC: 1e-5 +
	 * 2 * 1e6/1e9 = 2.01e-3; push = 2.01e-3, pull the same: 4.02e-3.
	 * The PS's own replica moves nothing. */
	Cluster *c3 = mk_cluster(a, 2, 2, 10e9, 0, 1e9, 1e-5);
	CostModel m3 = {g, c3, NULL, NULL, 0};
	int w[4] = {dev(c3, "m0/gpu0"), dev(c3, "m0/gpu1"),
		    dev(c3, "m1/gpu0"), dev(c3, "m1/gpu1")};
	NEAR(cost_ps(&m3, w, 4, w[0], 1e6), 4.02e-3);
	/* Only local workers: the slowest single round trip, 2e-4. */
	NEAR(cost_ps(&m3, w, 2, w[0], 1e6), 2e-4);
	NEAR(cost_ps(&m3, w, 1, w[0], 1e6), 0);

	/* The network's collective figures (2 GB/s, 50 us) for a collective's
	 * steps across machines; transfers keep the network's (1 GB/s, 10 us).
	 * Ring over all 4: the cross-machine steps are the slowest (2 GB/s <
	 * 10 GB/s) and the largest latency: 2*3*(50e-6 + 1e6/2e9) = 3.3e-3.
	 * Hierarchical: 2e-4 + 2*1*(50e-6 + 2e6/2e9) + 2e-4 = 2.5e-3.  A ring
	 * inside m0 does not cross the network: 2*1*(2e6/10e9) = 4e-4. */
	Cluster *c4 = mk_cluster(a, 2, 2, 10e9, 0, 1e9, 1e-5);
	c4->coll_bw = 2e9;
	c4->coll_lat = 50e-6;
	CostModel m4 = {g, c4, NULL, NULL, 0};
	int v[4] = {dev(c4, "m0/gpu0"), dev(c4, "m0/gpu1"),
		    dev(c4, "m1/gpu0"), dev(c4, "m1/gpu1")};
	NEAR(cost_allreduce_ring(&m4, v, 4, 4e6), 3.3e-3);
	NEAR(cost_allreduce_hier(&m4, v, 4, 4e6), 2.5e-3);
	NEAR(cost_allreduce_ring(&m4, v, 2, 4e6), 4e-4);
	NEAR(cost_transfer(&m4, v[0], v[2], 1e6), 1e-5 + 1e-3);
	double bw, lat;
	cluster_coll_link(c4, v[1], v[2], &bw, &lat);
	NEAR(bw, 2e9);
	NEAR(lat, 50e-6);
	cluster_coll_link(c4, v[0], v[1], &bw, &lat);
	NEAR(bw, 10e9);
	NEAR(lat, 0);
	graph_free(g);
	arena_free(a);
}

static void test_cost_mem(void)
{
	Graph *g = graph_new("t");
	g->cluster = mk_cluster(g->arena, 1, 1, 1e9, 0, 1e9, 0);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Op *p = mk_op(g, "p", "Work", 1000000, 0, NULL);
	op_set_ann(g, p, ANN_ROLE, val_ident(g->arena, "param"));
	Op *gr = mk_op(g, "gr", "Work", 1000000, 0, NULL);
	Op *pg[2] = {p, gr};
	Op *adam = graph_add_op(g, "adam", "ApplyAdam", 2, 0);
	Op *mom = graph_add_op(g, "mom", "ApplyMomentum", 2, 0);
	Op *gd = graph_add_op(g, "gd", "ApplyGradientDescent", 2, 0);
	Op *ups[3] = {adam, mom, gd};
	for (int i = 0; i < 3; i++) {
		ups[i]->in[0] = (Input){pg[0], 0, false};
		ups[i]->in[1] = (Input){pg[1], 0, false};
		op_set_ann(g, ups[i], ANN_ROLE, val_ident(g->arena, "update"));
	}
	NEAR(cost_op_mem(&m, p), 0);
	NEAR(cost_op_mem(&m, gr), 0);
	NEAR(cost_op_mem(&m, adam), 2e6);
	NEAR(cost_op_mem(&m, mom), 1e6);
	NEAR(cost_op_mem(&m, gd), 0);
	/* Adam with its m and v spelled out as parameters: nothing extra. */
	Op *mv = mk_op(g, "m", "Work", 1000000, 0, NULL);
	Op *vv = mk_op(g, "v", "Work", 1000000, 0, NULL);
	op_set_ann(g, mv, ANN_ROLE, val_ident(g->arena, "param"));
	op_set_ann(g, vv, ANN_ROLE, val_ident(g->arena, "param"));
	Op *adam2 = graph_add_op(g, "adam2", "ApplyAdam", 4, 0);
	adam2->in[0] = (Input){p, 0, false};
	adam2->in[1] = (Input){mv, 0, false};
	adam2->in[2] = (Input){vv, 0, false};
	adam2->in[3] = (Input){gr, 0, false};
	op_set_ann(g, adam2, ANN_ROLE, val_ident(g->arena, "update"));
	NEAR(cost_op_mem(&m, adam2), 0);
	/* @mem wins. */
	op_set_ann(g, gr, ANN_MEM, val_qty(g->arena, 5e5, UNIT_BYTES));
	NEAR(cost_op_mem(&m, gr), 5e5);
	NEAR(cost_out_bytes(g, gr, 0), 1e6);
	NEAR(cost_out_bytes(g, gr, 1), 0);
	graph_free(g);
}

static void test_cost_csv(void)
{
	Graph *g = graph_new("t");
	g->cluster = mk_cluster(g->arena, 1, 1, 1e9, 0, 1e9, 0);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Op *a = mk_op(g, "a,b", "Work", 1000, 0, NULL);
	op_set_ann(g, a, ANN_COST, val_qty(g->arena, 1.5e-3, UNIT_SECONDS));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cost_print_csv(f, &m);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf,
			       "op,type,device_type,time_s,out_bytes,mem_bytes\n"
			       "\"a,b\",Work,GPU,0.0015,1000,0\n"
			       "\"a,b\",Work,SLOW,0.0015,1000,0\n");
	free(buf);
	graph_free(g);
}

void suite_cost(void)
{
	CU_pSuite s = CU_add_suite("cost", NULL, NULL);
	CU_add_test(s, "@cost annotation", test_cost_annotation);
	CU_add_test(s, "profile linear fit", test_cost_profile_fit);
	CU_add_test(s, "a fit below zero: warned, clamped", test_cost_profile_negative_fit);
	CU_add_test(s, "profile errors", test_cost_profile_errors);
	CU_add_test(s, "analytic roofline", test_cost_analytic);
	CU_add_test(s, "a bucket's copies", test_cost_copy);
	CU_add_test(s, "kernel classes by shape", test_cost_kernel_classes);
	CU_add_test(s, "ops of constants alone are folded", test_cost_folded);
	CU_add_test(s, "kernels: source costs a source kernel once", test_cost_source_kernels);
	CU_add_test(s, "batch_norm: cudnn passes and channel parallelism", test_cost_batch_norm);
	CU_add_test(s, "tensor-core types: depthwise and element-wise on the CUDA cores", test_cost_cuda_cores);
	CU_add_test(s, "transfer", test_cost_transfer);
	CU_add_test(s, "collectives", test_cost_collectives);
	CU_add_test(s, "memory", test_cost_mem);
	CU_add_test(s, "csv", test_cost_csv);
}
