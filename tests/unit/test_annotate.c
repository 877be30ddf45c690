/* test_annotate.c — the annotate pass (TAG §4.1.1; docs/passes.md) on
 * small hand-built graphs: @split, @split_dims, @role and @flops of each
 * op, worked out by hand from the op table's rules (docs/ops.md). */
#include <CUnit/CUnit.h>

#include "testutil.h"

#define ONE_GPU \
	"gir 1\n" \
	"cluster one {\n" \
	"  type GPU {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n" \
	"  machine m0 {type = GPU, count = 1, bandwidth = 10GB/s, latency = 1us}\n" \
	"}\n"

static Graph *annotated(const char *body)
{
	char buf[8192];
	snprintf(buf, sizeof buf, "%s%s", ONE_GPU, body);
	Graph *g = tu_parse(buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "annotate"), EXIT_OK);
	return g;
}

/* The gir text of annotation key of op name ("-" when absent). */
static const char *ann(const Graph *g, const char *name, const char *key)
{
	static char buf[256];
	Op *op = tu_op(g, name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	const Value *v = op_get(g, op, key);
	if (!v)
		return "-";
	StrBuf b = {0};
	val_format(&b, v);
	snprintf(buf, sizeof buf, "%.*s", (int)b.n, b.s);
	sb_free(&b);
	return buf;
}

#define EXPECT(g, name, key, want) CU_ASSERT_STRING_EQUAL(ann(g, name, key), want)

/* Split categories: a batch-split op's outputs concatenate; a weight
 * gradient (MatMul with transpose_a: x^T . dy sums over the batch) and a
 * Sum over the batch add up; Mean over the batch, updates, parameters,
 * constants and unknown op types cannot be split. */
static void test_split_categories(void)
{
	Graph *g = annotated(
		"graph g {\n"
		"  %x = Placeholder() : f32[8,4]\n"
		"  %w = VariableV2() : f32[4,4]\n"
		"  %h = MatMul(%x, %w) : f32[8,4]\n"
		"  %gw = MatMul(%x, %h) {transpose_a = true} : f32[4,4]\n"
		"  %ax0 = Const() {value = 0} : i32[]\n"
		"  %ax1 = Const() {value = 1} : i32[]\n"
		"  %s0 = Sum(%h, %ax0) : f32[4]\n"
		"  %m0 = Mean(%h, %ax0) : f32[4]\n"
		"  %s1 = Sum(%h, %ax1) : f32[8]\n"
		"  %q = Frobnicate(%h) : f32[8,4]\n"
		"  %u = ApplyGradientDescent(%w, %gw) : ()\n"
		"}\n");
	EXPECT(g, "x", "@split", "concat");
	EXPECT(g, "h", "@split", "concat");
	EXPECT(g, "gw", "@split", "sum");
	EXPECT(g, "s0", "@split", "sum");
	EXPECT(g, "m0", "@split", "none");
	EXPECT(g, "s1", "@split", "concat");
	EXPECT(g, "q", "@split", "none");
	EXPECT(g, "u", "@split", "none");
	EXPECT(g, "w", "@split", "none");
	EXPECT(g, "ax0", "@split", "none");
	graph_free(g);
}

/* Split dimensions: MatMul rows and columns; Conv2D batch and output
 * channels (NHWC: 3, NCHW: 1); a Placeholder along its @batch_dim; a
 * row-wise Sum along the rows; Softmax along all but its last
 * dimension; none for ops that do not concatenate. */
static void test_split_dims(void)
{
	Graph *g = annotated(
		"graph g {\n"
		"  %x = Placeholder() : f32[2,8,8,3]\n"
		"  %xc = Placeholder() : f32[2,3,8,8]\n"
		"  %t = Placeholder() {@batch_dim = 1} : f32[5,2]\n"
		"  %f = VariableV2() : f32[3,3,3,16]\n"
		"  %y = Conv2D(%x, %f) {strides = [1, 1, 1, 1], padding = \"SAME\"} : f32[2,8,8,16]\n"
		"  %yc = Conv2D(%xc, %f) {strides = [1, 1, 2, 2], padding = \"VALID\", data_format = \"NCHW\"} : f32[2,16,3,3]\n"
		"  %w = VariableV2() : f32[2,7]\n"
		"  %mm = MatMul(%t, %w) : f32[5,7]\n"
		"  %ax1 = Const() {value = 1} : i32[]\n"
		"  %s1 = Sum(%mm, %ax1) : f32[5]\n"
		"  %sm = Softmax(%mm) : f32[5,7]\n"
		"  %gw = MatMul(%t, %mm) {transpose_a = true} : f32[2,7]\n"
		"}\n");
	EXPECT(g, "x", "@split_dims", "[0]");
	EXPECT(g, "t", "@split_dims", "[1]");
	EXPECT(g, "y", "@split_dims", "[0, 3]");
	EXPECT(g, "yc", "@split_dims", "[0, 1]");
	EXPECT(g, "mm", "@split_dims", "[0, 1]");
	EXPECT(g, "s1", "@split_dims", "[0]");
	EXPECT(g, "sm", "@split_dims", "[0]");
	EXPECT(g, "gw", "@split_dims", "-");
	EXPECT(g, "w", "@split_dims", "-");
	EXPECT(g, "ax1", "@split_dims", "-");
	graph_free(g);
}

/* FLOPs of one execution: MatMul 2mnk; Conv2D 2 N Ho Wo Co Kh Kw Ci
 * (SAME, stride 1: Ho = Wo = 8; VALID, stride 2 on 8: (8-3)/2+1 = 3);
 * element-wise one per element; ApplyGradientDescent two per element
 * of the variable; none for constants, parameters and unknown types. */
static void test_flops(void)
{
	Graph *g = annotated(
		"graph g {\n"
		"  %x = Placeholder() : f32[2,8,8,3]\n"
		"  %xc = Placeholder() : f32[2,3,8,8]\n"
		"  %f = VariableV2() : f32[3,3,3,16]\n"
		"  %y = Conv2D(%x, %f) {strides = [1, 1, 1, 1], padding = \"SAME\"} : f32[2,8,8,16]\n"
		"  %yc = Conv2D(%xc, %f) {strides = [1, 1, 2, 2], padding = \"VALID\", data_format = \"NCHW\"} : f32[2,16,3,3]\n"
		"  %a = Placeholder() : f32[6,5]\n"
		"  %b = VariableV2() : f32[5,3]\n"
		"  %mm = MatMul(%a, %b) : f32[6,3]\n"
		"  %r = Relu(%mm) : f32[6,3]\n"
		"  %gb = MatMul(%a, %a) {transpose_a = true} : f32[5,5]\n"
		"  %b2 = VariableV2() : f32[5,5]\n"
		"  %u = ApplyGradientDescent(%b2, %gb) : ()\n"
		"  %q = Frobnicate(%r) : f32[6,3]\n"
		"}\n");
	EXPECT(g, "y", "@flops", "110592");      /* 2*2*8*8*16*3*3*3 */
	EXPECT(g, "yc", "@flops", "15552");      /* 2*2*3*3*16*3*3*3 */
	EXPECT(g, "mm", "@flops", "180");        /* 2*6*3*5 */
	EXPECT(g, "r", "@flops", "18");
	EXPECT(g, "gb", "@flops", "300");        /* 2*5*5*6 */
	EXPECT(g, "u", "@flops", "50");          /* 2*25 */
	EXPECT(g, "b", "@flops", "-");
	EXPECT(g, "q", "@flops", "-");
	graph_free(g);
}

/* Roles without a marked loss: gradient ops (ReluGrad) seed the
 * backward pass.  bwd: what depends on a seed and what an update depends
 * on (da, gw); fwd: the rest that computes, including an op after a seed
 * that no update needs (after) and one beside the graph (side), and
 * ops joined to the rest by control edges only (late, cw);
 * input/param/update from the op table; constants none. */
static void test_roles_no_loss(void)
{
	Graph *g = annotated(
		"graph g {\n"
		"  %x = Placeholder() : f32[8,4]\n"
		"  %dy = Placeholder() : f32[8,4]\n"
		"  %w = VariableV2() : f32[4,4]\n"
		"  %h = MatMul(%x, %w) : f32[8,4]\n"
		"  %a = Relu(%h) : f32[8,4]\n"
		"  %side = Sigmoid(%x) : f32[8,4]\n"
		"  %da = ReluGrad(%dy, %a) : f32[8,4]\n"
		"  %gw = MatMul(%x, %da) {transpose_a = true} : f32[4,4]\n"
		"  %after = Neg(%da) : f32[8,4]\n"
		"  %late = Neg(%da) : f32[8,4]\n"
		"  %u = ApplyGradientDescent(%w, %gw, ^%late) : ()\n"
		"  %c = Const() {value = 1} : f32[]\n"
		"  %w2 = VariableV2() : f32[8,4]\n"
		"  %cw = Relu(%x, ^%da) : f32[8,4]\n"
		"  %u2 = ApplyGradientDescent(%w2, %cw) : ()\n"
		"}\n");
	static const char *want[][2] = {
		{"x", "input"}, {"dy", "input"}, {"w", "param"}, {"h", "fwd"},
		{"a", "fwd"}, {"side", "fwd"}, {"da", "bwd"}, {"gw", "bwd"},
		{"after", "fwd"}, {"u", "update"}, {"c", "-"},
		/* control edges carry no gradient: an update waits for late
		 * only, cw waits for da only */
		{"late", "fwd"}, {"cw", "fwd"},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		EXPECT(g, want[i][0], "@role", want[i][1]);
	graph_free(g);
}

/* Roles with a loss (given as @role = loss on any op): only the loss
 * seeds the backward pass, so a gradient op before it is fwd. */
static void test_roles_with_loss(void)
{
	Graph *g = annotated(
		"graph g {\n"
		"  %x = Placeholder() : f32[8,4]\n"
		"  %w = VariableV2() : f32[4,4]\n"
		"  %h = MatMul(%x, %w) : f32[8,4]\n"
		"  %early = ReluGrad(%h, %h) : f32[8,4]\n"
		"  %l = Square(%early) {@role = loss} : f32[8,4]\n"
		"  %gw = MatMul(%x, %l) {transpose_a = true} : f32[4,4]\n"
		"  %u = ApplyGradientDescent(%w, %gw) : ()\n"
		"}\n");
	EXPECT(g, "h", "@role", "fwd");
	EXPECT(g, "early", "@role", "fwd");
	EXPECT(g, "l", "@role", "loss");
	EXPECT(g, "gw", "@role", "bwd");
	EXPECT(g, "u", "@role", "update");
	graph_free(g);
}

/* What the input pins stays: @role, @split, @split_dims, @flops. */
static void test_pinned_kept(void)
{
	Graph *g = annotated(
		"graph g {\n"
		"  %x = Placeholder() : f32[8,4]\n"
		"  %k = Relu(%x) {@role = bwd, @split = sum, @split_dims = [1], @flops = 7} : f32[8,4]\n"
		"  %m = Relu(%x) {@split = none} : f32[8,4]\n"
		"}\n");
	EXPECT(g, "k", "@role", "bwd");
	EXPECT(g, "k", "@split", "sum");
	EXPECT(g, "k", "@split_dims", "[1]");
	EXPECT(g, "k", "@flops", "7");
	/* @split = none: no split dimensions follow from the table */
	EXPECT(g, "m", "@split", "none");
	EXPECT(g, "m", "@split_dims", "-");
	EXPECT(g, "m", "@flops", "32");
	graph_free(g);
}

void suite_annotate(void)
{
	CU_pSuite s = CU_add_suite("annotate", NULL, NULL);
	CU_add_test(s, "@split categories", test_split_categories);
	CU_add_test(s, "@split_dims", test_split_dims);
	CU_add_test(s, "@flops", test_flops);
	CU_add_test(s, "@role without a loss", test_roles_no_loss);
	CU_add_test(s, "@role with a loss", test_roles_with_loss);
	CU_add_test(s, "pinned annotations kept", test_pinned_kept);
}
