/* test_tfops.c — the ops that imported TensorFlow graphs need beyond a
 * training step's (StridedSlice and its masks, Unpack, Range, Select,
 * comparisons, GatherNd, DepthToSpace, SpaceToBatchND, resizes, TopKV2,
 * SparseToDense), the folding of shape computations (Shape ->
 * StridedSlice -> Pack -> Reshape) with its depth bound, the split rules
 * of the new ops, device pins, colocation groups and --input-shape.
 * Every expected value is worked out by hand beside it.  Runs with
 * cwd = tests/. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "capture.h"


/* Parses gir ops (wrapped in a graph), infers types; NULL on a parse
 * error.  *errs receives the inference + verification error count. */
static Graph *gir(Cap *c, const char *ops, int *errs)
{
	char *src = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&src, &n);
	fprintf(f, "gir 1\ngraph t {\n%s}\n", ops);
	fclose(f);
	cap_open(c, "t.gir", src);
	Graph *g = gir_parse("t.gir", src, n, &c->d);
	if (g) {
		*errs = graph_infer_types(g, &c->d);
		if (!*errs)
			*errs = graph_verify(g, &c->d);
	}
	else
		fputs(cap_text(c), stderr);
	free(src);
	c->d.src = NULL;
	return g;
}

static Op *get(Graph *g, const char *name)
{
	uint32_t idx;
	Op *op = graph_lookup(g, name, &idx);
	CU_ASSERT_PTR_NOT_NULL(op);
	return op;
}

static bool has_type(Graph *g, const char *name, uint32_t k, const char *want)
{
	char buf[128];
	const Op *op = get(g, name);
	if (!op || k >= op->nout) {
		fprintf(stderr, "\n%%%s:%u is untyped, expected %s\n", name, k, want);
		return false;
	}
	type_str(&op->out[k], buf, sizeof buf);
	if (strcmp(buf, want) != 0)
		fprintf(stderr, "\n%%%s:%u is %s, expected %s\n", name, k, buf, want);
	return strcmp(buf, want) == 0;
}

#define X(s) "  %x = Placeholder() : " s "\n"

static void test_strided_slice(void)
{
	Cap c;
	int errs;
	Graph *g = gir(&c,
		X("f32[4,6,8]")
		"  %b = Const() {value = [1, 0, 2]} : i32[3]\n"
		"  %e = Const() {value = [3, 0, 8]} : i32[3]\n"
		"  %s = Const() {value = [1, 1, 2]} : i32[3]\n"
		/* x[1:3, :, 2:8:2]: begin_mask/end_mask bit 1 -> [2,6,3] */
		"  %a = StridedSlice(%x, %b, %e, %s) {begin_mask = 2, end_mask = 2}\n"
		/* shrink dim 0 (index 1): [6,3] */
		"  %sh = StridedSlice(%x, %b, %e, %s) {begin_mask = 2, end_mask = 2, shrink_axis_mask = 1}\n"
		/* new axis at sparse index 1 (begin/end entries 1 ignored):
		 * x[1:3, newaxis, 2:8:2] over dims 0, 1 -> [2,1,6?]: entry 2
		 * slices dim 1 (size 6) from 2 to 6 by 2 -> 2; dim 2 whole -> 8 */
		"  %na = StridedSlice(%x, %b, %e, %s) {new_axis_mask = 2}\n"
		/* x[..., 1:3] -> [4,6,2] */
		"  %eb = Const() {value = [0, 1]} : i32[2]\n"
		"  %ee = Const() {value = [0, 3]} : i32[2]\n"
		"  %es = Const() {value = [1, 1]} : i32[2]\n"
		"  %el = StridedSlice(%x, %eb, %ee, %es) {ellipsis_mask = 1}\n"
		/* x[::-1] (begin and end masked, stride -1): [4,6,8];
		 * x[3:0:-1]: 3, 2, 1 -> [3,6,8]; x[-1] shrunk -> [6,8] */
		"  %rb = Const() {value = [3]} : i32[1]\n"
		"  %re = Const() {value = [0]} : i32[1]\n"
		"  %rs = Const() {value = [-1]} : i32[1]\n"
		"  %rev = StridedSlice(%x, %rb, %re, %rs) {begin_mask = 1, end_mask = 1}\n"
		"  %r3 = StridedSlice(%x, %rb, %re, %rs)\n"
		"  %m1 = Const() {value = [-1]} : i32[1]\n"
		"  %one = Const() {value = [1]} : i32[1]\n"
		"  %last = StridedSlice(%x, %m1, %re, %one) {shrink_axis_mask = 1}\n"
		/* x[:, 1:3]: dim 0 whole: concat along 0 */
		"  %cb = Const() {value = [0, 1]} : i32[2]\n"
		"  %ce = Const() {value = [0, 3]} : i32[2]\n"
		"  %cs = StridedSlice(%x, %cb, %ce, %es) {begin_mask = 1, end_mask = 1}\n",
		&errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(errs, 0);
	CU_ASSERT(has_type(g, "a", 0, "f32[2,6,3]"));
	CU_ASSERT(has_type(g, "sh", 0, "f32[6,3]"));
	CU_ASSERT(has_type(g, "na", 0, "f32[2,1,2,8]"));
	CU_ASSERT(has_type(g, "el", 0, "f32[4,6,2]"));
	CU_ASSERT(has_type(g, "rev", 0, "f32[4,6,8]"));
	CU_ASSERT(has_type(g, "r3", 0, "f32[3,6,8]"));
	CU_ASSERT(has_type(g, "last", 0, "f32[6,8]"));
	int dims[8];
	CU_ASSERT_EQUAL(op_split_cat(g, get(g, "cs")), SPLIT_CONCAT);
	CU_ASSERT_EQUAL(op_split_dims(g, get(g, "cs"), dims, 8), 2);
	CU_ASSERT(dims[0] == 0 && dims[1] == 2);
	CU_ASSERT_EQUAL(op_split_cat(g, get(g, "a")), SPLIT_NONE);
	graph_free(g);
	cap_close(&c);

	/* a shrunk index outside the dimension is an error naming the op */
	g = gir(&c, X("f32[4]")
		"  %b = Const() {value = [4]} : i32[1]\n"
		"  %e = Const() {value = [5]} : i32[1]\n"
		"  %s = Const() {value = [1]} : i32[1]\n"
		"  %y = StridedSlice(%x, %b, %e, %s) {shrink_axis_mask = 1}\n", &errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT(errs > 0);
	CU_ASSERT(strstr(cap_text(&c), "StridedSlice %y: index 4 is out of range for "
				       "dimension 0 of size 4") != NULL);
	graph_free(g);
	cap_close(&c);
}

/* TensorFlow's dynamic shapes: the values are folded. */
static void test_folding(void)
{
	Cap c;
	int errs;
	Graph *g = gir(&c,
		X("f32[2,3,4]")
		"  %s = Shape(%x)\n"
		"  %b = Const() {value = [0]} : i32[1]\n"
		"  %e = Const() {value = [1]} : i32[1]\n"
		"  %n = StridedSlice(%s, %b, %e, %e) {shrink_axis_mask = 1}\n"
		"  %m = Const() {value = -1} : i32[]\n"
		"  %p = Pack(%n, %m)\n"
		/* Reshape(x, [2, -1]) -> [2,12] */
		"  %r = Reshape(%x, %p)\n"
		/* Range(0, Size(x) = 24, 5) -> 0, 5, 10, 15, 20: [5] */
		"  %z = Const() {value = 0} : i32[]\n"
		"  %five = Const() {value = 5} : i32[]\n"
		"  %sz = Size(%x)\n"
		"  %rg = Range(%z, %sz, %five)\n"
		/* Unpack(Shape) -> 2, 3, 4; Fill([3, 4], 1.5) */
		"  %u = Unpack(%s) {num = 3}\n"
		"  %dims = Pack(%u:1, %u:2)\n"
		"  %v = Const() {value = 1.5} : f32[]\n"
		"  %fl = Fill(%dims, %v)\n"
		/* H*2, W*2 of an image through Mul and Cast */
		"  %im = Placeholder() : f32[1,8,6,3]\n"
		"  %is = Shape(%im)\n"
		"  %hb = Const() {value = [1]} : i32[1]\n"
		"  %he = Const() {value = [3]} : i32[1]\n"
		"  %hw = StridedSlice(%is, %hb, %he, %e)\n"
		"  %hf = Cast(%hw) {DstT = f32}\n"
		"  %two = Const() {value = 2.0} : f32[]\n"
		"  %hm = Mul(%hf, %two)\n"
		"  %hi = Cast(%hm) {DstT = i32}\n"
		"  %up = ResizeBilinear(%im, %hi)\n"
		"  %nn = ResizeNearestNeighbor(%im, %hw)\n"
		/* FloorMod and Sub in paddings: (8 - 8 mod 3) ... */
		"  %bs = Const() {value = [3, 3]} : i32[2]\n"
		"  %md = FloorMod(%hw, %bs)\n"
		"  %pad = Sub(%bs, %md)\n"
		"  %zz = Const() {value = [0, 0]} : i32[2]\n"
		"  %pp = Pack(%zz, %pad) {axis = 1}\n"
		/* paddings [[0,1],[0,3]]: 8+1 = 9, 6+3 = 9 -> blocks of 3: [9,3,3,3] */
		"  %stb = SpaceToBatchND(%im, %bs, %pp)\n"
		/* and back, cropping what was padded */
		"  %bts = BatchToSpaceND(%stb, %bs, %pp)\n"
		/* SparseToDense with no indices: the default everywhere */
		"  %si = Const() : i64[0,1]\n"
		"  %so = Const() {value = [3]} : i64[1]\n"
		"  %sv = Const() : i64[0]\n"
		"  %sd = Const() {value = 0} : i64[]\n"
		"  %std = SparseToDense(%si, %so, %sv, %sd)\n"
		"  %one3 = Const() {value = [1, 2, 12]} : i64[3]\n"
		"  %shp = AddV2(%one3, %std)\n"
		"  %r2 = Reshape(%x, %shp)\n",
		&errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(errs, 0);
	CU_ASSERT(has_type(g, "n", 0, "i32[]"));
	CU_ASSERT(has_type(g, "r", 0, "f32[2,12]"));
	CU_ASSERT(has_type(g, "rg", 0, "i32[5]"));
	CU_ASSERT(has_type(g, "u", 2, "i32[]"));
	CU_ASSERT(has_type(g, "fl", 0, "f32[3,4]"));
	CU_ASSERT(has_type(g, "up", 0, "f32[1,16,12,3]"));
	CU_ASSERT(has_type(g, "nn", 0, "f32[1,8,6,3]"));
	CU_ASSERT(has_type(g, "stb", 0, "f32[9,3,3,3]"));
	CU_ASSERT(has_type(g, "bts", 0, "f32[1,8,6,3]"));
	CU_ASSERT(has_type(g, "r2", 0, "f32[1,2,12]"));
	/* ResizeBilinear: 8 FLOPs per output element */
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, get(g, "up")), 8.0 * 16 * 12 * 3, 0.5);
	graph_free(g);
	cap_close(&c);
}

/* A chain longer than the fold's depth bound leaves the op untyped, with
 * no error and no deep recursion. */
static void test_fold_depth(void)
{
	char *ops = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&ops, &n);
	fputs(X("f32[2,3]") "  %s0 = Shape(%x)\n", f);
	for (int i = 1; i <= 1000; i++)
		fprintf(f, "  %%s%d = Identity(%%s%d)\n", i, i - 1);
	fputs("  %near = Reshape(%x, %s20)\n  %far = Reshape(%x, %s1000)\n", f);
	fclose(f);
	Cap c;
	int errs;
	Graph *g = gir(&c, ops, &errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(errs, 0);
	CU_ASSERT(has_type(g, "near", 0, "f32[2,3]"));
	CU_ASSERT_EQUAL(get(g, "far")->nout, 0);
	graph_free(g);
	cap_close(&c);
	free(ops);

	/* declared types the verifier has not checked yet are not trusted
	 * for indexing: the fold gives up, the verifier reports the Add */
	g = gir(&c, X("f32[2,4]")
		"  %a = Const() {value = [1, 2]} : i32[2]\n"
		"  %b = Add(%a, %a) : i32[8]\n"
		"  %r = Reshape(%x, %b)\n", &errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT(errs > 0);
	CU_ASSERT(strstr(cap_text(&c), "Add %b: output 0 is declared i32[8] but its "
				       "inputs give i32[2]") != NULL);
	graph_free(g);
	cap_close(&c);
}

static void test_more_ops(void)
{
	Cap c;
	int errs;
	Graph *g = gir(&c,
		X("f32[2,3]")
		"  %y = Placeholder() : f32[3]\n"
		"  %gt = Greater(%x, %y)\n"
		"  %lo = LogicalAnd(%gt, %gt)\n"
		"  %c = Placeholder() : bool[2]\n"
		"  %sel = Select(%c, %x, %x)\n"
		"  %sv2 = SelectV2(%gt, %y, %x)\n"
		"  %pr = Prelu(%x, %y)\n"
		"  %fd = FloorDiv(%x, %y)\n"
		"  %u = Unpack(%x) {num = 2}\n"
		"  %p = Placeholder() : f32[4,5,6]\n"
		"  %ix = Placeholder() : i32[2,3,2]\n"
		"  %gn = GatherNd(%p, %ix)\n"
		"  %im = Placeholder() : f32[1,4,4,8]\n"
		"  %d2s = DepthToSpace(%im) {block_size = 2}\n"
		"  %s2d = SpaceToDepth(%d2s) {block_size = 2}\n"
		"  %k = Const() {value = 2} : i32[]\n"
		"  %tk = TopKV2(%x, %k)\n"
		"  %rk = Rank(%p)\n"
		"  %pv = Const() {value = [1, 1, 0, 2]} : i32[2,2]\n"
		"  %cv = Const() {value = 0.0} : f32[]\n"
		"  %pd = PadV2(%x, %pv, %cv)\n"
		"  %mp = MirrorPad(%x, %pv) {mode = \"REFLECT\"}\n",
		&errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(errs, 0);
	CU_ASSERT(has_type(g, "gt", 0, "bool[2,3]"));
	CU_ASSERT(has_type(g, "lo", 0, "bool[2,3]"));
	CU_ASSERT(has_type(g, "sel", 0, "f32[2,3]"));
	CU_ASSERT(has_type(g, "sv2", 0, "f32[2,3]"));
	CU_ASSERT(has_type(g, "pr", 0, "f32[2,3]"));
	CU_ASSERT(has_type(g, "fd", 0, "f32[2,3]"));
	CU_ASSERT(has_type(g, "u", 1, "f32[3]"));
	CU_ASSERT(has_type(g, "gn", 0, "f32[2,3,6]"));
	CU_ASSERT(has_type(g, "d2s", 0, "f32[1,8,8,2]"));
	CU_ASSERT(has_type(g, "s2d", 0, "f32[1,4,4,8]"));
	CU_ASSERT(has_type(g, "tk", 0, "f32[2,2]"));
	CU_ASSERT(has_type(g, "tk", 1, "i32[2,2]"));
	CU_ASSERT(has_type(g, "rk", 0, "i32[]"));
	CU_ASSERT(has_type(g, "pd", 0, "f32[4,5]"));
	CU_ASSERT(has_type(g, "mp", 0, "f32[4,5]"));
	/* Prelu: compare and multiply */
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, get(g, "pr")), 12, 0.5);
	/* Unpack along 0 splits the batch into outputs: not batch-splittable */
	CU_ASSERT_EQUAL(op_split_cat(g, get(g, "u")), SPLIT_NONE);
	graph_free(g);
	cap_close(&c);

	g = gir(&c, X("f32[3,4]") "  %a = Unpack(%x) {num = 2}\n", &errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT(errs > 0);
	CU_ASSERT(strstr(cap_text(&c), "dimension 0 has size 3 but the op has 2 outputs") != NULL);
	graph_free(g);
	cap_close(&c);

	g = gir(&c, X("f32[3,4]") "  %y = Placeholder() : f32[3,4]\n"
		"  %s = Select(%x, %y, %y)\n", &errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT(errs > 0);
	CU_ASSERT(strstr(cap_text(&c), "condition must be bool") != NULL);
	graph_free(g);
	cap_close(&c);
}

static Cluster *cluster2x2(Arena *a, Diag *d)
{
	static const char y[] =
		"name: two\n"
		"device_types:\n"
		"  V100: {flops: 15.7 TFLOPS, memory: 16 GiB, mem_bw: 900 GB/s}\n"
		"machines:\n"
		"  - {name: m0, type: V100, count: 2, link: {bandwidth: 25 GB/s, latency: 2 us}}\n"
		"  - {name: m1, type: V100, count: 2, link: {bandwidth: 25 GB/s, latency: 2 us}}\n"
		"network: {bandwidth: 100 Gbps, latency: 10 us}\n";
	return cluster_parse_yaml(a, "two.yaml", y, strlen(y), d);
}

static const char devs_src[] =
	"node { name: \"w\" op: \"VariableV2\" device: \"/job:worker/replica:0/task:1/device:GPU:1\"\n"
	"  attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
	"  attr { key: \"shape\" value { shape { dim { size: 4 } } } } }\n"
	"node { name: \"r\" op: \"Identity\" input: \"w\" device: \"/device:CPU:0\"\n"
	"  attr { key: \"_class\" value { list { s: \"loc:@w\" } } } }\n"
	"node { name: \"q\" op: \"Relu\" input: \"r\" device: \"/gpu:0\"\n"
	"  attr { key: \"_class\" value { list { s: \"loc:@r\" } } } }\n"
	"node { name: \"x\" op: \"Placeholder\"\n"
	"  attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
	"  attr { key: \"shape\" value { shape { dim { size: -1 } dim { size: -1 } } } } }\n"
	"node { name: \"lone\" op: \"Relu\" input: \"x\" }\n";

static void test_devices(void)
{
	Cap c;
	cap_open(&c, "t.pbtxt", devs_src);
	TfImportOptions o = {.batch = 2};
	Graph *g = tf_parse_pbtxt("t.pbtxt", devs_src, strlen(devs_src), &o, &c.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	g->cluster = cluster2x2(g->arena, &c.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g->cluster);
	CU_ASSERT_EQUAL(tf_pin_devices(g, &c.d), 0);
	/* task 1, GPU 1 -> m1/gpu1; /gpu:0 (task 0) -> m0/gpu0; CPU: none */
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, get(g, "w"), ANN_DEVICE), "m1/gpu1");
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, get(g, "q"), ANN_DEVICE), "m0/gpu0");
	CU_ASSERT_PTR_NULL(op_ann(g, get(g, "r"), ANN_DEVICE));
	CU_ASSERT(strstr(cap_text(&c), "1 node names a device that is not a GPU "
				       "(e.g. 'r' on '/device:CPU:0')") != NULL);
	/* q -> r -> w: one group named after w; lone is in none */
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, get(g, "w"), ANN_COLOCATE), "w");
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, get(g, "r"), ANN_COLOCATE), "w");
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, get(g, "q"), ANN_COLOCATE), "w");
	CU_ASSERT_PTR_NULL(op_ann(g, get(g, "lone"), ANN_COLOCATE));
	/* two unknown dims: both bound to the batch, with a warning */
	CU_ASSERT(has_type(g, "x", 0, "f32[2,2]"));
	CU_ASSERT(strstr(cap_text(&c), "unknown dimension 1 also bound") != NULL);
	CU_ASSERT_EQUAL(graph_verify(g, &c.d), 0);
	graph_free(g);
	cap_close(&c);

	/* a GPU the cluster lacks is an error */
	static const char bad[] =
		"node { name: \"v\" op: \"Const\" device: \"/job:worker/task:5/device:GPU:0\"\n"
		"  attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }\n";
	cap_open(&c, "t.pbtxt", bad);
	g = tf_parse_pbtxt("t.pbtxt", bad, strlen(bad), &o, &c.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	g->cluster = cluster2x2(g->arena, &c.d);
	CU_ASSERT_EQUAL(tf_pin_devices(g, &c.d), 1);
	CU_ASSERT(strstr(cap_text(&c), "node 'v': device '/job:worker/task:5/device:GPU:0' "
				       "(task 5, GPU 0) is not in cluster 'two'") != NULL);
	graph_free(g);
	cap_close(&c);

	/* --input-shape: the second unknown dim given, the first the batch */
	const char *const shapes[] = {"x=-1,7", "nosuch=1"};
	TfImportOptions o2 = {.batch = 3, .shapes = shapes, .nshapes = 2};
	cap_open(&c, "t.pbtxt", devs_src);
	g = tf_parse_pbtxt("t.pbtxt", devs_src, strlen(devs_src), &o2, &c.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT(has_type(g, "x", 0, "f32[3,7]"));
	CU_ASSERT(strstr(cap_text(&c), "also bound") == NULL);
	CU_ASSERT(strstr(cap_text(&c), "--input-shape 'nosuch=1': no Placeholder") != NULL);
	graph_free(g);
	cap_close(&c);
	CU_ASSERT(tf_shape_spec_ok("input=1,256,256,3"));
	CU_ASSERT(tf_shape_spec_ok("a/b:0=-1"));
	CU_ASSERT(!tf_shape_spec_ok("x=1,,2"));
	CU_ASSERT(!tf_shape_spec_ok("x=1,"));
	CU_ASSERT(!tf_shape_spec_ok("x=-2"));
	CU_ASSERT(!tf_shape_spec_ok("=1"));
	CU_ASSERT(!tf_shape_spec_ok("x"));
}

void suite_tfops(void)
{
	CU_pSuite s = CU_add_suite("tfops", NULL, NULL);
	CU_add_test(s, "StridedSlice masks, shapes, split dims", test_strided_slice);
	CU_add_test(s, "shape computations folded", test_folding);
	CU_add_test(s, "folding depth bound", test_fold_depth);
	CU_add_test(s, "comparisons, Select, Unpack, GatherNd, ...", test_more_ops);
	CU_add_test(s, "device pins, colocation, --input-shape", test_devices);
}
