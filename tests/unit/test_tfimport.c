/* test_tfimport.c — the TensorFlow GraphDef importers (frontend/tfgraph.c,
 * pbtxt.c, tfjson.c): shapes with the batch bound, inputs, attribute
 * conversion, Const values, TF.js weights, fused ops' geometry and FLOPs
 * worked out by hand, the control-flow refusal and syntax errors.  Runs
 * with cwd = tests/. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "capture.h"


static Graph *pbtxt(Cap *c, const char *src, int64_t batch)
{
	TfImportOptions o = {.batch = batch};
	cap_open(c, "t.pbtxt", src);
	return tf_parse_pbtxt("t.pbtxt", src, strlen(src), &o, &c->d);
}

static Graph *json(Cap *c, const char *src)
{
	TfImportOptions o = {.batch = 1};
	cap_open(c, "t.json", src);
	return tf_parse_json("t.json", src, strlen(src), &o, &c->d);
}

static Op *get(Graph *g, const char *name)
{
	uint32_t idx;
	Op *op = graph_lookup(g, name, &idx);
	CU_ASSERT_PTR_NOT_NULL(op);
	return op;
}

static bool has_type(const Op *op, uint32_t k, const char *want)
{
	char buf[128];
	if (!op || k >= op->nout)
		return false;
	type_str(&op->out[k], buf, sizeof buf);
	if (strcmp(buf, want) != 0)
		fprintf(stderr, "\n%%%s:%u is %s, expected %s\n", op->name, k, buf, want);
	return strcmp(buf, want) == 0;
}

/* The hand-written MLP (tests/tf/mlp.pbtxt) with batch 32. */
static void test_mlp(void)
{
	Diag d;
	char *src = NULL;
	TfImportOptions o = {.batch = 32};
	Graph *g = read_any_graph("tf/mlp.pbtxt", &o, &d, &src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(g->nops, 9);
	CU_ASSERT_STRING_EQUAL(g->name, "mlp");
	CU_ASSERT(has_type(get(g, "x"), 0, "f32[32,784]"));
	CU_ASSERT(get(g, "x")->types_given);
	CU_ASSERT_EQUAL(op_get_int(g, get(g, "x"), "@batch_dim", -1), 0);
	CU_ASSERT(has_type(get(g, "w1"), 0, "f32[784,256]"));
	CU_ASSERT(has_type(get(g, "b1"), 0, "f32[256]"));
	/* 256 values: too many to keep; only the type matters */
	CU_ASSERT_PTR_NULL(op_get(g, get(g, "b1"), "value"));
	CU_ASSERT(has_type(get(g, "dense/MatMul"), 0, "f32[32,256]"));
	CU_ASSERT(has_type(get(g, "dense/BiasAdd"), 0, "f32[32,256]"));
	CU_ASSERT(has_type(get(g, "dense/Relu"), 0, "f32[32,256]"));
	CU_ASSERT(has_type(get(g, "logits"), 0, "f32[32,10]"));
	CU_ASSERT(has_type(get(g, "probs"), 0, "f32[32,10]"));
	Value *b = graph_attr(g, "batch");
	CU_ASSERT(b && b->kind == V_INT && b->i == 32);
	/* attrs: dtype as a gir identifier, bool, string, _device, _class */
	Op *mm = get(g, "dense/MatMul");
	Value *t = op_get(g, mm, "T");
	CU_ASSERT(t && t->kind == V_IDENT && strcmp(t->s, "f32") == 0);
	CU_ASSERT_EQUAL(op_get_bool(g, mm, "transpose_a", true), false);
	CU_ASSERT_STRING_EQUAL(op_get_str(g, mm, "_device"),
			       "/job:worker/replica:0/task:0/device:GPU:0");
	Value *cls = op_get(g, get(g, "dense/Relu"), "_class");
	CU_ASSERT(cls && cls->kind == V_LIST && cls->list.n == 1 &&
		  cls->list.items[0]->kind == V_STR &&
		  strcmp(cls->list.items[0]->s, "loc:@dense/MatMul") == 0);
	Value *shape = op_get(g, get(g, "x"), "shape");
	CU_ASSERT(shape && shape->kind == V_LIST && shape->list.n == 2 &&
		  shape->list.items[0]->i == -1 && shape->list.items[1]->i == 784);
	/* "dense/Relu:0" and "^w1" */
	Op *lg = get(g, "logits");
	CU_ASSERT_EQUAL_FATAL(lg->nin, 3);
	CU_ASSERT_PTR_EQUAL(lg->in[0].src, get(g, "dense/Relu"));
	CU_ASSERT_EQUAL(lg->in[0].idx, 0);
	CU_ASSERT(!lg->in[0].ctrl);
	CU_ASSERT_PTR_EQUAL(lg->in[2].src, get(g, "w1"));
	CU_ASSERT(lg->in[2].ctrl);
	CU_ASSERT_EQUAL(graph_verify(g, &d), 0);
	graph_free(g);
	free(src);
}

/* "x:1" of an op typed from _output_shapes; Const values. */
static void test_inputs_and_consts(void)
{
	Cap c;
	Graph *g = pbtxt(&c,
		"node { name: \"a\" op: \"Placeholder\"\n"
		"  attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
		"  attr { key: \"shape\" value { shape { dim { size: -1 } dim { size: 5 } } } } }\n"
		"node { name: \"two\" op: \"MySplit\" input: \"a\"\n"
		"  attr { key: \"T\" value { type: DT_FLOAT } }\n"
		"  attr { key: \"_output_shapes\" value { list {\n"
		"    shape { dim { size: -1 } dim { size: 2 } }\n"
		"    shape { dim { size: -1 } dim { size: 3 } } } } } }\n"
		"node { name: \"r\" op: \"Relu\" input: \"two:1\" }\n"
		"node { name: \"k\" op: \"Const\" attr { key: \"value\" value { tensor {\n"
		"  dtype: DT_INT32 tensor_shape { dim { size: 3 } } int_val: 1 int_val: 2 } } } }\n"
		"node { name: \"raw\" op: \"Const\" attr { key: \"value\" value { tensor {\n"
		"  dtype: DT_INT32 tensor_shape { dim { size: 2 } }\n"
		"  tensor_content: \"\\007\\000\\000\\000\\376\\377\\377\\377\" } } } }\n"
		"node { name: \"half\" op: \"Const\" attr { key: \"value\" value { tensor {\n"
		"  dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }\n",
		4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	Op *two = get(g, "two");
	CU_ASSERT_EQUAL(two->nout, 2);
	CU_ASSERT(two->types_given);
	CU_ASSERT(has_type(two, 1, "f32[4,3]"));
	CU_ASSERT_PTR_NULL(op_get(g, two, "_output_shapes"));
	Op *r = get(g, "r");
	CU_ASSERT_EQUAL(r->in[0].idx, 1);
	CU_ASSERT(has_type(r, 0, "f32[4,3]"));
	/* int_val: 1, 2 for 3 elements: the last value repeats */
	Value *k = op_get(g, get(g, "k"), "value");
	CU_ASSERT_FATAL(k && k->kind == V_LIST && k->list.n == 3);
	CU_ASSERT(k->list.items[0]->i == 1 && k->list.items[1]->i == 2 &&
		  k->list.items[2]->i == 2);
	CU_ASSERT(has_type(get(g, "k"), 0, "i32[3]"));
	Value *raw = op_get(g, get(g, "raw"), "value");
	CU_ASSERT_FATAL(raw && raw->kind == V_LIST && raw->list.n == 2);
	CU_ASSERT(raw->list.items[0]->i == 7 && raw->list.items[1]->i == -2);
	Value *h = op_get(g, get(g, "half"), "value");
	CU_ASSERT(h && h->kind == V_FLOAT && h->f == 0.5);
	CU_ASSERT(has_type(get(g, "half"), 0, "f32[]"));
	graph_free(g);
	cap_close(&c);
}

/* Base64 strings, int64 as strings, binary bytes dropped; TF.js weights. */
static void test_json(void)
{
	Cap c;
	Graph *g = json(&c,
		"{\"node\": [{\"name\": \"p\", \"op\": \"Placeholder\", \"attr\": {\n"
		"  \"dtype\": {\"type\": \"DT_INT32\"},\n"
		"  \"shape\": {\"shape\": {\"dim\": [{\"size\": \"-1\"}]}},\n"
		"  \"padding\": {\"s\": \"U0FNRQ==\"}, \"bin\": {\"s\": \"AAE=\"},\n"
		"  \"big\": {\"i\": \"12345678901\"},\n"
		"  \"l\": {\"list\": {\"i\": [\"3\", \"-1\"]}}, \"e\": {\"list\": {}}}}]}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	Op *p = get(g, "p");
	CU_ASSERT_STRING_EQUAL(op_get_str(g, p, "padding"), "SAME");
	CU_ASSERT_PTR_NULL(op_get(g, p, "bin"));
	CU_ASSERT_EQUAL(op_get_int(g, p, "big", 0), 12345678901LL);
	Value *l = op_get(g, p, "l");
	CU_ASSERT(l && l->kind == V_LIST && l->list.n == 2 && l->list.items[0]->i == 3 &&
		  l->list.items[1]->i == -1);
	Value *e = op_get(g, p, "e");
	CU_ASSERT(e && e->kind == V_LIST && e->list.n == 0);
	CU_ASSERT(has_type(p, 0, "i32[1]"));
	CU_ASSERT(strstr(cap_text(&c), "1 binary string attribute dropped") != NULL);
	graph_free(g);
	cap_close(&c);

	/* tests/tf/tiny: weights read from the shard beside model.json */
	Diag d;
	char *src = NULL;
	TfImportOptions o = {.batch = 5};
	g = read_any_graph("tf/tiny/model.json", &o, &d, &src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_STRING_EQUAL(g->name, "tiny");
	Value *s = op_get(g, get(g, "flatten/shape"), "value");
	CU_ASSERT(s && s->kind == V_LIST && s->list.n == 2 && s->list.items[0]->i == -1 &&
		  s->list.items[1]->i == 12);
	CU_ASSERT(has_type(get(g, "flatten/Reshape"), 0, "f32[5,12]"));
	CU_ASSERT(has_type(get(g, "dense/MatMul"), 0, "f32[5,2]"));
	/* uint8-quantized: byte 3 is 3 * 0.01 - 1 */
	Value *kv = op_get(g, get(g, "dense/kernel"), "value");
	CU_ASSERT(kv && kv->kind == V_LIST && kv->list.n == 24 &&
		  kv->list.items[3]->f > -0.9701 && kv->list.items[3]->f < -0.9699);
	/* float16 0x3e00 */
	Value *sc = op_get(g, get(g, "scale"), "value");
	CU_ASSERT(sc && sc->kind == V_FLOAT && sc->f == 1.5);
	Op *out = get(g, "out");
	CU_ASSERT_EQUAL(op_get_int(g, out, "big", 0), 12345678901LL);
	Value *fo = op_get(g, out, "fused_ops");
	CU_ASSERT(fo && fo->kind == V_LIST && fo->list.n == 2 &&
		  strcmp(fo->list.items[1]->s, "Relu") == 0);
	CU_ASSERT(out->in[2].ctrl);
	CU_ASSERT_EQUAL(graph_verify(g, &d), 0);
	graph_free(g);
	free(src);
}

/* A TF.js model.json whose weight shard is absent: its Consts keep no
 * value (TF.js never stores Const data in the graph, so an empty tensor
 * is not TensorFlow's "zeros"); an op that needs none
 * of their values still types. */
static void test_json_no_shards(void)
{
	char dir[] = "/tmp/pcc-tfjs-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof path, "%s/model.json", dir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"format\": \"graph-model\", \"modelTopology\": {\"node\": [\n"
	      " {\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"},\n"
	      "  \"shape\": {\"shape\": {\"dim\": [{\"size\": \"-1\"}, {\"size\": \"2\"}]}}}},\n"
	      " {\"name\": \"s\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"},\n"
	      "  \"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {}}}}},\n"
	      " {\"name\": \"y\", \"op\": \"Mul\", \"input\": [\"x\", \"s\"],\n"
	      "  \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}}}]},\n"
	      " \"weightsManifest\": [{\"paths\": [\"absent.bin\"], \"weights\": [\n"
	      "  {\"name\": \"s\", \"shape\": [], \"dtype\": \"float32\"}]}]}\n", f);
	fclose(f);
	Diag d;
	char *src = NULL;
	TfImportOptions o = {.batch = 3};
	Graph *g = read_any_graph(path, &o, &d, &src);
	CU_ASSERT_PTR_NOT_NULL(g);
	if (g) {
		CU_ASSERT_PTR_NULL(op_get(g, get(g, "s"), "value"));
		CU_ASSERT(has_type(get(g, "y"), 0, "f32[3,2]"));
		graph_free(g);
	}
	free(src);
	remove(path);
	remove(dir);
}

static const char conv_src[] =
	"node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
	"  attr { key: \"shape\" value { shape { dim { size: -1 } dim { size: 32 } dim { size: 32 } dim { size: 3 } } } } }\n"
	"node { name: \"f\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_FLOAT\n"
	"  tensor_shape { dim { size: 3 } dim { size: 3 } dim { size: 3 } dim { size: 16 } } } } } }\n"
	"node { name: \"b\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_FLOAT\n"
	"  tensor_shape { dim { size: 16 } } } } } }\n"
	"node { name: \"conv\" op: \"_FusedConv2D\" input: \"x\" input: \"f\" input: \"b\"\n"
	"  attr { key: \"T\" value { type: DT_FLOAT } }\n"
	"  attr { key: \"num_args\" value { i: 1 } }\n"
	"  attr { key: \"strides\" value { list { i: 1 i: 2 i: 2 i: 1 } } }\n"
	"  attr { key: \"padding\" value { s: \"SAME\" } }\n"
	"  attr { key: \"fused_ops\" value { list { s: \"BiasAdd\" s: \"Relu\" } } } }\n"
	"node { name: \"dwf\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_FLOAT\n"
	"  tensor_shape { dim { size: 3 } dim { size: 3 } dim { size: 16 } dim { size: 2 } } } } } }\n"
	"node { name: \"dw\" op: \"FusedDepthwiseConv2dNative\" input: \"conv\" input: \"dwf\"\n"
	"  attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } }\n"
	"  attr { key: \"padding\" value { s: \"VALID\" } }\n"
	"  attr { key: \"fused_ops\" value { list { s: \"BiasAdd\" } } } }\n"
	"node { name: \"a\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_FLOAT\n"
	"  tensor_shape { dim { size: 7 } dim { size: 5 } } } } } }\n"
	"node { name: \"w\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_FLOAT\n"
	"  tensor_shape { dim { size: 7 } dim { size: 3 } } } } } }\n"
	"node { name: \"mm\" op: \"_FusedMatMul\" input: \"a\" input: \"w\"\n"
	"  attr { key: \"transpose_a\" value { b: true } }\n"
	"  attr { key: \"fused_ops\" value { list { s: \"BiasAdd\" } } } }\n";

/* Fused ops: shapes and FLOPs worked out by hand. */
static void test_fused(void)
{
	Cap c;
	Graph *g = pbtxt(&c, conv_src, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	/* SAME, stride 2: 32 -> 16; 16 output channels */
	Op *conv = get(g, "conv");
	CU_ASSERT(has_type(conv, 0, "f32[2,16,16,16]"));
	CU_ASSERT(!conv->types_given); /* inferred through the op table */
	CU_ASSERT_EQUAL(op_class(g, conv), OC_CONV);
	/* 2*2*16*16*16 * 3*3*3 = 442368, plus BiasAdd and Relu: 2 * 8192 */
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, conv), 458752, 0.5);
	/* VALID 3x3: 16 -> 14; 16 channels * multiplier 2 = 32 */
	Op *dw = get(g, "dw");
	CU_ASSERT(has_type(dw, 0, "f32[2,14,14,32]"));
	/* 2 * 12544 outputs * 9 taps = 225792, plus BiasAdd 12544 */
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, dw), 238336, 0.5);
	/* transpose_a: [7,5]^T x [7,3] = [5,3]; 2*5*3*7 + 15 */
	Op *mm = get(g, "mm");
	CU_ASSERT(has_type(mm, 0, "f32[5,3]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, mm), 225, 0.5);
	/* a fused MatMul over aᵀ contracts the batch with a bias: not split */
	CU_ASSERT_EQUAL(op_split_cat(g, mm), SPLIT_NONE);
	CU_ASSERT_EQUAL(op_split_cat(g, conv), SPLIT_CONCAT);
	graph_free(g);
	cap_close(&c);
}

static void test_control_flow(void)
{
	Cap c;
	Graph *g = pbtxt(&c,
		"node { name: \"i\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
		"node { name: \"w/Enter\" op: \"Enter\" input: \"i\" }\n"
		"node { name: \"w/Merge\" op: \"Merge\" input: \"w/Enter\" input: \"w/NextIteration\" }\n"
		"node { name: \"w/NextIteration\" op: \"NextIteration\" input: \"w/Merge\" }\n",
		1);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c),
			 "t.pbtxt:4:1: error: graph uses TensorFlow 1 control flow "
			 "(while loop: node 'w/NextIteration' is NextIteration); "
			 "pcc cannot plan dynamic control flow") != NULL);
	cap_close(&c);
}

static void test_errors(void)
{
	Cap c;
	/* syntax error: line 3, column 7 */
	Graph *g = pbtxt(&c, "node {\n  name: \"a\"\n  op: @\n}\n", 1);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c), "t.pbtxt:3:7: error: unexpected character '@'") != NULL);
	cap_close(&c);

	g = pbtxt(&c, "node {\n  name: \"a\"\n", 1);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c), "t.pbtxt:3:1: error: unexpected end of input") != NULL);
	cap_close(&c);

	/* nesting deeper than the cap: an error, not a deep stack */
	char *deep = malloc(200 * 4 + 16);
	size_t n = 0;
	for (int i = 0; i < 200; i++)
		n += (size_t)sprintf(deep + n, "a {");
	deep[n] = 0;
	g = pbtxt(&c, deep, 1);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c), "nested more than 100 deep") != NULL);
	cap_close(&c);
	free(deep);

	/* an unknown op without shapes that is consumed */
	g = pbtxt(&c,
		"node { name: \"u\" op: \"Frobnicate\" }\n"
		"node { name: \"r\" op: \"Relu\" input: \"u\" }\n", 1);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c), "t.pbtxt:1:1: error: cannot infer the shape of node 'u' (Frobnicate)") != NULL);
	cap_close(&c);

	g = pbtxt(&c, "node { name: \"r\" op: \"Relu\" input: \"nope:0\" }\n", 1);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c), "node 'r': input 'nope:0' names no node") != NULL);
	cap_close(&c);

	g = pbtxt(&c, "node { name: \"a\" op: \"NoOp\" }\nnode { name: \"a\" op: \"NoOp\" }\n", 1);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c), "t.pbtxt:2:1: error: duplicate node name 'a'") != NULL);
	cap_close(&c);

	/* JSON syntax error with its line and column */
	g = json(&c, "{\"node\": [\n  {\"name\": \"a\",, \"op\": \"NoOp\"}\n]}\n");
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c), "t.json:2:16: error: JSON:") != NULL);
	cap_close(&c);

	g = json(&c, "{\"format\": \"graph-model\"}");
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(strstr(cap_text(&c), "no 'node' list") != NULL);
	cap_close(&c);
}

void suite_tfimport(void)
{
	CU_pSuite s = CU_add_suite("tfimport", NULL, NULL);
	CU_add_test(s, "pbtxt MLP with batch 32", test_mlp);
	CU_add_test(s, "x:k inputs, _output_shapes, Const values", test_inputs_and_consts);
	CU_add_test(s, "JSON attrs and TF.js weights", test_json);
	CU_add_test(s, "TF.js without weight shards: no invented values",
		    test_json_no_shards);
	CU_add_test(s, "fused conv/depthwise/matmul shapes and FLOPs", test_fused);
	CU_add_test(s, "TF1 control flow refused", test_control_flow);
	CU_add_test(s, "syntax and graph errors", test_errors);
}
