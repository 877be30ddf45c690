/* test_tfbackend.c — the TensorFlow backends (backend/tf*.c):
 *  - the OpDef table (backend/tfops.def): sorted, one row per op of the op
 *    table, every row parses;
 *  - known answers: attrs derived and typed by the OpDef, gir's
 *    shorthands lowered, Transfers as edges, AllReduce as CollectiveReduce
 *    or NcclAllReduce, devices, @order as control edges or _priority, the
 *    cycle check, annotations kept or dropped, errors; TF.js's Prelu and
 *    fused kernels lowered to core ops node by node;
 *  - every emitted GraphDef (the example models, the test graphs and
 *    plans) satisfies the OpDefs, checked on the emitted text read back
 *    with frontend/pbtxt.c: attr names, kinds, allowed values, input
 *    counts and the dtype of every edge;
 *  - the round trip: every pbtxt and TF.js model.json reads back through
 *    frontend/tfgraph.c into a graph equivalent to the input (equiv(),
 *    defined in docs/backends.md), and the two read back identically.
 * Runs with cwd = tests/. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/tf.h"
#include "frontend/tfimport.h"

/* ---- helpers ------------------------------------------------------------ */

static Graph *parse(const char *src)
{
	Diag d;
	diag_init(&d, stderr, "t.gir", src, strlen(src));
	Graph *g = gir_parse("t.gir", src, strlen(src), &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(graph_infer_types(g, &d) + graph_verify(g, &d), 0);
	return g;
}

static Graph *load(const char *path, char **src)
{
	Diag d;
	Graph *g = gir_read_file(path, &d, src);
	CU_ASSERT_PTR_NOT_NULL(g);
	if (!g)
		return NULL;
	if (!g->cluster)
		g->cluster = cluster_default(g->arena);
	CU_ASSERT_EQUAL(graph_infer_types(g, &d) + graph_verify(g, &d), 0);
	return g;
}

/* Lowers g with backend be's options (defaults, then opts "k=v"...,
 * NULL-terminated).  Diagnostics go to *msgs (caller frees). */
static GdGraph *lower(const Graph *g, const char *be, char **msgs, ...)
{
	const char *given[18];
	int n = 0;
	/* the tests before the init target and the refusal of unknown ops
	 * (test_init_and_names checks those) */
	bool custom = false;
	va_list ap;
	va_start(ap, msgs);
	for (const char *s; (s = va_arg(ap, const char *)) && n < 16;) {
		given[n++] = s;
		custom |= !strncmp(s, "custom_ops=", 11) || !strncmp(s, "init=", 5);
	}
	va_end(ap);
	if (!strcmp(be, "tf") && !custom) {
		given[n++] = "init=false";
		given[n++] = "custom_ops=keep";
	}
	Arena *a = arena_new();
	char err[256];
	int nopts;
	const char **opts = backend_resolve_opts(backend_find(be), given, n, a,
						 &nopts, err, sizeof err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(opts);
	EmitCtx ctx = {g, NULL, NULL, opts, nopts, "-", NULL};
	TfOpts o;
	CU_ASSERT_FATAL(tf_opts_read(&ctx, !strcmp(be, "tf-json"), &o));
	size_t len;
	FILE *f = open_memstream(msgs, &len);
	Diag d;
	diag_init(&d, f, g->src_file, NULL, 0);
	GdGraph *gd = tf_lower(g, &o, &d);
	fclose(f);
	arena_free(a);
	return gd;
}

static char *pbtxt_of(const GdGraph *gd)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	gd_write_pbtxt(f, gd);
	fclose(f);
	return buf;
}

static const GdNode *node(const GdGraph *gd, const char *name)
{
	for (uint32_t i = 0; i < gd->n; i++)
		if (!strcmp(gd->nodes[i].name, name))
			return &gd->nodes[i];
	CU_FAIL("no such node");
	fprintf(stderr, "\nno node '%s'\n", name);
	return NULL;
}

static const GdVal *attr(const GdNode *n, const char *key)
{
	for (uint32_t i = 0; n && i < n->nattr; i++)
		if (!strcmp(n->attrs[i].key, key))
			return &n->attrs[i].v;
	return NULL;
}

static bool is_type(const GdNode *n, const char *key, int dt)
{
	const GdVal *v = attr(n, key);
	return v && v->kind == TK_TYPE && !v->list && v->type == dt;
}

static bool is_int(const GdNode *n, const char *key, int64_t i)
{
	const GdVal *v = attr(n, key);
	return v && v->kind == TK_INT && !v->list && v->i == i;
}

static bool is_str(const GdNode *n, const char *key, const char *s)
{
	const GdVal *v = attr(n, key);
	return v && v->kind == TK_STRING && !v->list && v->s.len == strlen(s) &&
	       !memcmp(v->s.p, s, v->s.len);
}

static bool is_bool(const GdNode *n, const char *key, bool b)
{
	const GdVal *v = attr(n, key);
	return v && v->kind == TK_BOOL && v->b == b;
}

static bool is_ints(const GdNode *n, const char *key, int cnt, ...)
{
	const GdVal *v = attr(n, key);
	if (!v || !v->list || v->kind != TK_INT || v->l.n != (uint32_t)cnt)
		return false;
	va_list ap;
	va_start(ap, cnt);
	bool ok = true;
	for (int i = 0; i < cnt; i++)
		ok &= v->l.items[i].i == va_arg(ap, int);
	va_end(ap);
	return ok;
}

/* Input k of node n as TensorFlow writes it ("x", "x:1", "^x"). */
static bool input_is(const GdGraph *gd, const GdNode *n, uint32_t k,
		     const char *want)
{
	if (!n || k >= n->nin)
		return false;
	char buf[256];
	const GdIn *in = &n->in[k];
	const char *s = gd->nodes[in->node].name;
	if (in->ctrl)
		snprintf(buf, sizeof buf, "^%s", s);
	else if (in->idx)
		snprintf(buf, sizeof buf, "%s:%u", s, in->idx);
	else
		snprintf(buf, sizeof buf, "%s", s);
	if (strcmp(buf, want))
		fprintf(stderr, "\n%s input %u is %s, expected %s\n", n->name, k, buf, want);
	return !strcmp(buf, want);
}

static uint32_t nctrl(const GdNode *n)
{
	uint32_t c = 0;
	for (uint32_t i = 0; n && i < n->nin; i++)
		c += n->in[i].ctrl;
	return c;
}

/* ---- the table ------------------------------------------------------------ */

static void test_table(void)
{
	int n = tf_opdef_count();
	for (int i = 1; i < n; i++)
		CU_ASSERT(strcmp(tf_opdef_name(i - 1), tf_opdef_name(i)) < 0);
	TfOpDefs defs;
	tf_opdefs_init(&defs);
	for (int i = 0; i < n; i++) {
		const TfOpDef *od = tf_opdef(&defs, tf_opdef_name(i));
		CU_ASSERT_PTR_NOT_NULL_FATAL(od);
		/* every arg's attrs exist and have the right kind */
		for (int k = 0; k < od->nin + od->nout; k++) {
			const TfArgDef *a = k < od->nin ? &od->in[k] : &od->out[k - od->nin];
			CU_ASSERT(a->fixed || a->type_attr);
			if (a->num_attr)
				CU_ASSERT(tf_opdef_attr(od, a->num_attr)->kind == TK_INT);
		}
	}
	/* every op of ir/ops.def has an OpDef but pcc's own, which become
	 * edges and collectives, TF.js's Prelu and FusedDepthwiseConv2dNative,
	 * which TensorFlow lacks, and _FusedConv2D, whose OpDef changed
	 * incompatibly after TensorFlow 2.9: the emitter always lowers them
	 * to core ops (test_lowering) */
	for (int i = 0; i < op_table_size(); i++) {
		const char *name = op_info(i)->name;
		bool own = !strcmp(name, "Transfer") || !strcmp(name, "AllReduce") ||
			   !strcmp(name, "Prelu") || !strcmp(name, "FusedDepthwiseConv2dNative") ||
			   !strcmp(name, "_FusedConv2D");
		CU_ASSERT_EQUAL(tf_opdef(&defs, name) == NULL, own);
		if ((tf_opdef(&defs, name) == NULL) != own)
			fprintf(stderr, "\nop table / tfops.def mismatch: %s\n", name);
	}
	/* facts restated from TensorFlow's OpDefs */
	const TfOpDef *c = tf_opdef(&defs, "ConcatV2");
	CU_ASSERT(c->nin == 2 && !strcmp(c->in[0].num_attr, "N") &&
		  !strcmp(c->in[1].name, "axis") && !strcmp(c->in[1].type_attr, "Tidx"));
	CU_ASSERT(tf_opdef_attr(c, "N")->has_min && tf_opdef_attr(c, "N")->min == 2);
	CU_ASSERT_STRING_EQUAL(tf_opdef_attr(c, "Tidx")->dflt, "DT_INT32");
	const TfOpDef *s = tf_opdef(&defs, "Split");
	CU_ASSERT(s->in[0].fixed == TFDT_INT32 && !strcmp(s->in[0].name, "split_dim"));
	CU_ASSERT(!strcmp(s->out[0].num_attr, "num_split"));
	const TfOpDef *v = tf_opdef(&defs, "VariableV2");
	CU_ASSERT(v->nin == 0 && v->out[0].ref);
	const TfAttrDef *pad = tf_opdef_attr(tf_opdef(&defs, "Conv2D"), "padding");
	CU_ASSERT(pad->kind == TK_STRING && pad->nstrs == 3 && !pad->dflt &&
		  !strcmp(pad->pcc, "'VALID'"));
	const TfAttrDef *t = tf_opdef_attr(tf_opdef(&defs, "MatMul"), "T");
	CU_ASSERT(tf_type_allowed(t, TFDT_FLOAT) && !tf_type_allowed(t, TFDT_BOOL));
	CU_ASSERT_STRING_EQUAL(tf_opdef_attr(tf_opdef(&defs, "Sum"), "keep_dims")->alias,
			       "keepdims");
	CU_ASSERT_PTR_NULL(tf_opdef(&defs, "NoSuchOp"));
	/* fixed types, number attrs, TensorFlow 2.9's attrs only */
	const TfOpDef *tk = tf_opdef(&defs, "TopKV2");
	CU_ASSERT(tk->nin == 2 && tk->in[1].fixed == TFDT_INT32 && tk->nout == 2 &&
		  tk->out[1].fixed == TFDT_INT32 && tk->nattrs == 2 &&
		  !strcmp(tf_opdef_attr(tk, "sorted")->dflt, "true"));
	CU_ASSERT_PTR_NULL(tf_opdef_attr(tk, "index_type"));
	const TfOpDef *up = tf_opdef(&defs, "Unpack");
	CU_ASSERT(!strcmp(up->out[0].num_attr, "num") && tf_opdef_attr(up, "num")->has_min &&
		  tf_opdef_attr(up, "num")->min == 0 && !tf_opdef_attr(up, "num")->dflt &&
		  !strcmp(tf_opdef_attr(up, "axis")->dflt, "0"));
	const TfOpDef *rb = tf_opdef(&defs, "ResizeBilinear");
	CU_ASSERT(rb->out[0].fixed == TFDT_FLOAT && rb->in[1].fixed == TFDT_INT32 &&
		  !strcmp(tf_opdef_attr(rb, "half_pixel_centers")->dflt, "false"));
	const TfOpDef *ss = tf_opdef(&defs, "StridedSlice");
	CU_ASSERT(ss->nin == 4 && ss->nattrs == 7 &&
		  !strcmp(tf_opdef_attr(ss, "shrink_axis_mask")->dflt, "0"));
	const TfOpDef *sel = tf_opdef(&defs, "Select");
	CU_ASSERT(sel->in[0].fixed == TFDT_BOOL && !strcmp(sel->in[1].type_attr, "T"));
	const TfAttrDef *mode = tf_opdef_attr(tf_opdef(&defs, "MirrorPad"), "mode");
	CU_ASSERT(mode->nstrs == 2 && !mode->dflt && !mode->pcc);
	const TfAttrDef *lt = tf_opdef_attr(tf_opdef(&defs, "Less"), "T");
	CU_ASSERT(tf_type_allowed(lt, TFDT_HALF) && !tf_type_allowed(lt, TFDT_BOOL));
	const TfOpDef *fm = tf_opdef(&defs, "_FusedMatMul");
	CU_ASSERT(fm->nin == 3 && !strcmp(fm->in[2].num_attr, "num_args") &&
		  !strcmp(tf_opdef_attr(fm, "leakyrelu_alpha")->dflt, "0.2") &&
		  tf_opdef_attr(fm, "fused_ops")->kind == TK_STRING &&
		  tf_opdef_attr(fm, "fused_ops")->list);
	CU_ASSERT_PTR_NULL(tf_opdef(&defs, "_FusedConv2D"));
	CU_ASSERT_PTR_NULL(tf_opdef(&defs, "Prelu"));
	tf_opdefs_free(&defs);

	CU_ASSERT_EQUAL(tfdt_parse("f32", 3), TFDT_FLOAT);
	CU_ASSERT_EQUAL(tfdt_parse("half", 4), TFDT_HALF);
	CU_ASSERT_EQUAL(tfdt_parse("DT_INT64", 8), TFDT_INT64);
	CU_ASSERT_EQUAL(tfdt_parse("SAME", 4), 0);
}

/* protobuf's SimpleFtoa: %.6g when it reads back as the same float. */
static void test_float_format(void)
{
	char b[64];
	tf_fmt_float(b, sizeof b, 0.01);
	CU_ASSERT_STRING_EQUAL(b, "0.01");
	tf_fmt_float(b, sizeof b, 1.0);
	CU_ASSERT_STRING_EQUAL(b, "1");
	tf_fmt_float(b, sizeof b, 1e-07);
	CU_ASSERT_STRING_EQUAL(b, "1e-07");
	tf_fmt_float(b, sizeof b, 1.0 / 3);
	CU_ASSERT_STRING_EQUAL(b, "0.333333343");
	tf_fmt_float(b, sizeof b, -0.5);
	CU_ASSERT_STRING_EQUAL(b, "-0.5");
	tf_fmt_double(b, sizeof b, 0.1);
	CU_ASSERT_STRING_EQUAL(b, "0.1");
	tf_fmt_double(b, sizeof b, 1.0 / 3);
	CU_ASSERT_STRING_EQUAL(b, "0.33333333333333331");
	/* generated values: deterministic, in range, differ by name */
	uint64_t s = tf_gen_seed("w1");
	CU_ASSERT_EQUAL(tf_gen_value(s, 7, TFDT_FLOAT), tf_gen_value(tf_gen_seed("w1"), 7, TFDT_FLOAT));
	CU_ASSERT(tf_gen_value(s, 7, TFDT_FLOAT) != tf_gen_value(tf_gen_seed("w2"), 7, TFDT_FLOAT));
	for (int k = 0; k < 1000; k++) {
		double x = tf_gen_value(s, k, TFDT_FLOAT);
		CU_ASSERT(x >= -0.5 && x < 0.5);
		double i = tf_gen_value(s, k, TFDT_INT32);
		CU_ASSERT(i >= 0 && i <= 4 && i == floor(i));
	}
}

/* ---- known answers ---------------------------------------------------------- */

static void test_attrs(void)
{
	Graph *g = parse(
		"gir 1\n"
		"graph t {\n"
		"  %a = Placeholder() : f32[2,3]\n"
		"  %b = Placeholder() : f32[2,3]\n"
		"  %ax = Const() {value = 1} : i64[]\n"
		"  %c = ConcatV2(%a, %b, %a, %ax) : f32[2,9]\n"
		"  %d = Const() {value = 0} : i32[]\n"
		"  %s0, %s1 = Split(%d, %c) : (f32[1,9], f32[1,9])\n"
		"  %shp = Const() {value = [9]} : i64[1]\n"
		"  %r = Reshape(%s1, %shp) : f32[9]\n"
		"  %i = Cast(%r) {DstT = i32} : i32[9]\n"
		"  %img = Placeholder() : f32[1,4,4,2]\n"
		"  %f = Const() : f32[3,3,2,5]\n"
		"  %cv = Conv2D(%img, %f) {strides = [1, 1, 1, 1], padding = SAME} : f32[1,4,4,5]\n"
		"  %mp = MaxPool(%cv) {ksize = [1, 2, 2, 1], strides = [1, 2, 2, 1]} : f32[1,2,2,5]\n"
		"  %k = Const() {value = [1, 2]} : i32[2]\n"
		"  %m = Mean(%mp, %k) {keepdims = true} : f32[1,1,1,5]\n"
		"  %sq = Squeeze(%m) {axis = [1, 2]} : f32[1,5]\n"
		"  %n = AddN(%sq, %sq, %sq) : f32[1,5]\n"
		"  %o = MyOp(%n) {alpha = 0.5, mode = fast, T = f32, ks = [1, 2]} : f32[1,5]\n"
		"}\n");
	char *msgs;
	GdGraph *gd = lower(g, "tf", &msgs, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	/* one warning: MyOp is not a TensorFlow op pcc knows */
	CU_ASSERT(strstr(msgs, "t.gir:20:3: warning: op 'o': TensorFlow op type 'MyOp' "
			       "is not in pcc's OpDef table") != NULL);
	CU_ASSERT(strchr(msgs, '\n') == msgs + strlen(msgs) - 1);
	const GdNode *c = node(gd, "c");
	CU_ASSERT(is_int(c, "N", 3) && is_type(c, "T", TFDT_FLOAT) &&
		  is_type(c, "Tidx", TFDT_INT64));
	CU_ASSERT(input_is(gd, c, 3, "ax"));
	const GdNode *s = node(gd, "s0");
	CU_ASSERT(is_int(s, "num_split", 2) && is_type(s, "T", TFDT_FLOAT));
	CU_ASSERT(input_is(gd, s, 0, "d") && input_is(gd, s, 1, "c"));
	CU_ASSERT(input_is(gd, node(gd, "r"), 0, "s0:1"));
	CU_ASSERT(is_type(node(gd, "r"), "Tshape", TFDT_INT64));
	const GdNode *i = node(gd, "i");
	CU_ASSERT(is_type(i, "SrcT", TFDT_FLOAT) && is_type(i, "DstT", TFDT_INT32) &&
		  is_bool(i, "Truncate", false));
	/* Conv2D: gir's attrs, TensorFlow's defaults for the rest */
	const GdNode *cv = node(gd, "cv");
	CU_ASSERT(is_str(cv, "padding", "SAME") && is_ints(cv, "strides", 4, 1, 1, 1, 1) &&
		  is_ints(cv, "dilations", 4, 1, 1, 1, 1) && is_str(cv, "data_format", "NHWC") &&
		  is_bool(cv, "use_cudnn_on_gpu", true) && is_ints(cv, "explicit_paddings", 0));
	/* MaxPool without padding: pcc's VALID (ir/ops.c), TF requires it */
	CU_ASSERT(is_str(node(gd, "mp"), "padding", "VALID"));
	CU_ASSERT(is_type(node(gd, "mp"), "T", TFDT_FLOAT));
	/* aliases */
	CU_ASSERT(is_bool(node(gd, "m"), "keep_dims", true));
	CU_ASSERT_PTR_NULL(attr(node(gd, "m"), "keepdims"));
	CU_ASSERT(is_ints(node(gd, "sq"), "squeeze_dims", 2, 1, 2));
	CU_ASSERT(is_int(node(gd, "n"), "N", 3));
	/* Consts: dtype and tensor */
	const GdNode *ax = node(gd, "ax");
	CU_ASSERT(is_type(ax, "dtype", TFDT_INT64));
	const GdVal *tv = attr(ax, "value");
	CU_ASSERT(tv && tv->kind == TK_TENSOR && tv->tensor->shape.rank == 0 &&
		  tv->tensor->src == GS_VALUES && tv->tensor->i[0] == 1);
	CU_ASSERT(attr(node(gd, "f"), "value")->tensor->src == GS_ZEROS);
	/* an op outside the table: attrs by their natural kind */
	const GdNode *o = node(gd, "o");
	CU_ASSERT(attr(o, "alpha")->kind == TK_FLOAT && is_str(o, "mode", "fast") &&
		  is_type(o, "T", TFDT_FLOAT) && is_ints(o, "ks", 2, 1, 2));
	CU_ASSERT(attr(o, "_output_shapes") && attr(o, "_output_shapes")->list);
	char *text = pbtxt_of(gd);
	CU_ASSERT(strstr(text, "node {\n  name: \"ax\"\n  op: \"Const\"\n  attr {\n"
			       "    key: \"dtype\"\n    value {\n      type: DT_INT64\n    }\n"
			       "  }\n  attr {\n    key: \"value\"\n    value {\n      tensor {\n"
			       "        dtype: DT_INT64\n        tensor_shape {\n        }\n"
			       "        int64_val: 1\n      }\n    }\n  }\n}\n") != NULL);
	CU_ASSERT(strstr(text, "versions {\n  producer: 1087\n}\n") != NULL);
	free(text);
	free(msgs);
	gd_free(gd);
	graph_free(g);
}

static void test_shorthands(void)
{
	Graph *g = parse(
		"gir 1\n"
		"graph t {batch = 4} {\n"
		"  %x = Placeholder() {@batch_dim = 0} : f32[4,3]\n"
		"  %l = Placeholder() {@batch_dim = 0} : i64[4]\n"
		"  %w = VariableV2() : f32[3,2]\n"
		"  %v = VariableV2() : f32[3,2]\n"
		"  %u = VariableV2() : f32[3,2]\n"
		"  %y = MatMul(%x, %w) : f32[4,2]\n"
		"  %loss, %dy = SoftmaxCrossEntropyWithLogits(%y, %l) : (f32[4], f32[4,2])\n"
		"  %g = MatMul(%x, %dy) {transpose_a = true} : f32[3,2]\n"
		"  %sgd = ApplyGradientDescent(%w, %g) : ()\n"
		"  %mom = ApplyMomentum(%v, %g) {use_nesterov = true} : ()\n"
		"  %adam = ApplyAdam(%u, %g) {lr = 0.002, beta1 = 0.8} : ()\n"
		"  %w2 = VariableV2() : f32[3,2]\n"
		"  %sgd2 = ApplyGradientDescent(%w2, %g) {lr = 0.1} : ()\n"
		"}\n");
	char *msgs;
	GdGraph *gd = lower(g, "tf", &msgs, "lr=0.05", "momentum=0.8", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	CU_ASSERT_STRING_EQUAL(msgs, "");   /* lr and beta1 are not dropped */
	const GdNode *l = node(gd, "loss");
	CU_ASSERT_STRING_EQUAL(l->op, "SparseSoftmaxCrossEntropyWithLogits");
	CU_ASSERT(is_type(l, "Tlabels", TFDT_INT64) && is_type(l, "T", TFDT_FLOAT));
	const GdNode *s = node(gd, "sgd");
	CU_ASSERT(s->nin - nctrl(s) == 3 && input_is(gd, s, 0, "w") && input_is(gd, s, 1, "sgd/alpha") &&
		  input_is(gd, s, 2, "g") && is_type(s, "T", TFDT_FLOAT) &&
		  is_bool(s, "use_locking", false));
	const GdNode *alpha = node(gd, "sgd/alpha");
	CU_ASSERT_STRING_EQUAL(alpha->op, "Const");
	const GdTensor *t = attr(alpha, "value")->tensor;
	CU_ASSERT(t->dtype == TFDT_FLOAT && t->shape.rank == 0 && t->nv == 1 &&
		  t->f[0] == 0.05);
	const GdNode *m = node(gd, "mom");
	CU_ASSERT(m->nin == 5 && input_is(gd, m, 1, "mom/accum") && input_is(gd, m, 2, "mom/lr") &&
		  input_is(gd, m, 3, "g") && input_is(gd, m, 4, "mom/momentum") &&
		  is_bool(m, "use_nesterov", true));
	CU_ASSERT_STRING_EQUAL(node(gd, "mom/accum")->op, "VariableV2");
	CU_ASSERT(attr(node(gd, "mom/momentum"), "value")->tensor->f[0] == 0.8);
	const GdNode *a = node(gd, "adam");
	static const char *const args[] = {"u", "adam/m", "adam/v", "adam/beta1_power",
					   "adam/beta2_power", "adam/lr", "adam/beta1",
					   "adam/beta2", "adam/epsilon", "g"};
	CU_ASSERT_EQUAL_FATAL(a->nin, 10);
	for (int k = 0; k < 10; k++)
		CU_ASSERT(input_is(gd, a, (uint32_t)k, args[k]));
	/* the op's own constants (the zoo records them), else the options */
	CU_ASSERT(attr(node(gd, "adam/lr"), "value")->tensor->f[0] == 0.002);
	CU_ASSERT(attr(node(gd, "adam/beta1"), "value")->tensor->f[0] == 0.8);
	/* the powers are variables (starting at beta, in init), times beta
	 * after the apply has read them, as TensorFlow's AdamOptimizer */
	CU_ASSERT_STRING_EQUAL(node(gd, "adam/beta1_power")->op, "VariableV2");
	CU_ASSERT(attr(node(gd, "adam/beta1_power/beta"), "value")->tensor->f[0] == 0.8);
	const GdNode *pu = node(gd, "adam/beta1_power/update");
	CU_ASSERT_STRING_EQUAL(pu->op, "Assign");
	CU_ASSERT(input_is(gd, pu, 0, "adam/beta1_power") &&
		  input_is(gd, pu, 1, "adam/beta1_power/update/mul"));
	const GdNode *pm = node(gd, "adam/beta1_power/update/mul");
	CU_ASSERT(pm->nin == 3 && pm->in[2].ctrl && !strcmp(gd->nodes[pm->in[2].node].name, "adam"));
	CU_ASSERT_PTR_NULL(attr(node(gd, "adam"), "lr"));
	CU_ASSERT(attr(node(gd, "sgd2/alpha"), "value")->tensor->f[0] == 0.1);
	CU_ASSERT(attr(node(gd, "adam/beta2"), "value")->tensor->f[0] == 0.999);
	CU_ASSERT(attr(node(gd, "adam/epsilon"), "value")->tensor->f[0] == 1e-07);
	const GdNode *mv = node(gd, "adam/m");
	CU_ASSERT(is_type(mv, "dtype", TFDT_FLOAT) && attr(mv, "shape")->shape.rank == 2);
	free(msgs);
	gd_free(gd);
	graph_free(g);
}

static const char *two_machines =
	"gir 1\n"
	"cluster \"c\" {\n"
	"  type \"GPU\" {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n"
	"  machine \"m0\" {type = \"GPU\", count = 2, bandwidth = 25GB/s, latency = 2us}\n"
	"  machine \"m1\" {type = \"GPU\", count = 2, bandwidth = 25GB/s, latency = 2us}\n"
	"  network {bandwidth = 12.5GB/s, latency = 10us}\n"
	"}\n";

static void test_plan(void)
{
	char *src;
	Graph *g = load("tf/train-plan.gir", &src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	char *msgs;
	GdGraph *gd = lower(g, "tf", &msgs, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	CU_ASSERT_STRING_EQUAL(msgs, "");
	/* Transfers are edges */
	for (uint32_t i = 0; i < gd->n; i++)
		CU_ASSERT(strstr(gd->nodes[i].name, "/to/") == NULL);
	CU_ASSERT(input_is(gd, node(gd, "y/rep1"), 1, "w2"));
	CU_ASSERT(input_is(gd, node(gd, "gw2/sum"), 0, "gw2/rep0"));
	/* machine i -> task i */
	CU_ASSERT_STRING_EQUAL(node(gd, "y/rep1")->device,
			       "/job:worker/replica:0/task:1/device:GPU:0");
	CU_ASSERT_STRING_EQUAL(node(gd, "w2")->device,
			       "/job:worker/replica:0/task:0/device:GPU:1");
	/* shorthand state lives with its update */
	CU_ASSERT_STRING_EQUAL(node(gd, "u2/m")->device, node(gd, "w2")->device);
	/* the ring AllReduce across machines */
	for (int r = 0; r < 2; r++) {
		const GdNode *ar = node(gd, r ? "gw1/ar1" : "gw1/ar0");
		CU_ASSERT_STRING_EQUAL(ar->op, "CollectiveReduce");
		CU_ASSERT(is_int(ar, "group_size", 2) && is_int(ar, "group_key", 1) &&
			  is_int(ar, "instance_key", 1) && is_str(ar, "merge_op", "Add") &&
			  is_str(ar, "final_op", "Id") && is_ints(ar, "subdiv_offsets", 1, 0) &&
			  is_str(ar, "communication_hint", "ring") &&
			  is_type(ar, "T", TFDT_FLOAT) && is_ints(ar, "wait_for", 0));
		CU_ASSERT(attr(ar, "_output_shapes") != NULL);
	}
	/* annotations kept as _pcc_* */
	const GdNode *x = node(gd, "x/rep1");
	CU_ASSERT(is_str(x, "_pcc_origin", "x") && is_ints(x, "_pcc_shard", 2, 4, 4) &&
		  is_int(x, "_pcc_order", 1) && is_int(x, "_pcc_batch_dim", 0));
	CU_ASSERT_PTR_NULL(attr(x, "_pcc_device"));
	free(msgs);
	gd_free(gd);

	/* nccl: only a group within one machine becomes NcclAllReduce */
	gd = lower(g, "tf", &msgs, "allreduce=nccl", "annotations=drop", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	CU_ASSERT_STRING_EQUAL(node(gd, "gw1/ar0")->op, "CollectiveReduce");
	CU_ASSERT_PTR_NULL(attr(node(gd, "x/rep1"), "_pcc_origin"));
	free(msgs);
	gd_free(gd);
	graph_free(g);
	free(src);

	char text[4096];
	snprintf(text, sizeof text, "%s"
		"graph t {\n"
		"  %%a = Placeholder() {@device = \"m1/gpu0\"} : f32[4]\n"
		"  %%b = Placeholder() {@device = \"m1/gpu1\"} : f32[4]\n"
		"  %%a/ar0 = AllReduce(%%a) {key = 7, algo = ring, devices = [\"m1/gpu0\", \"m1/gpu1\"], @device = \"m1/gpu0\"} : f32[4]\n"
		"  %%b/ar1 = AllReduce(%%b) {key = 7, algo = ring, devices = [\"m1/gpu0\", \"m1/gpu1\"], @device = \"m1/gpu1\"} : f32[4]\n"
		"  %%c = Placeholder() {@device = \"m0/gpu0\"} : f32[4]\n"
		"  %%c/ar0 = AllReduce(%%c) {key = 8, algo = hier, devices = [\"m0/gpu0\", \"m1/gpu0\"], @device = \"m0/gpu0\"} : f32[4]\n"
		"  %%a/to = Transfer(%%a) {@device = \"m0/gpu0\"} : f32[4]\n"
		"  %%c/ar1 = AllReduce(%%a/to) {key = 8, algo = hier, devices = [\"m0/gpu0\", \"m1/gpu0\"], @device = \"m1/gpu0\"} : f32[4]\n"
		"}\n", two_machines);
	g = parse(text);
	gd = lower(g, "tf", &msgs, "allreduce=nccl", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	for (int r = 0; r < 2; r++) {
		const GdNode *ar = node(gd, r ? "b/ar1" : "a/ar0");
		CU_ASSERT_STRING_EQUAL(ar->op, "NcclAllReduce");
		CU_ASSERT(is_int(ar, "num_devices", 2) && is_str(ar, "reduction", "sum") &&
			  is_str(ar, "shared_name", "pcc_allreduce_7") && is_type(ar, "T", TFDT_FLOAT));
	}
	const GdNode *h = node(gd, "c/ar0");
	CU_ASSERT(!strcmp(h->op, "CollectiveReduce") && is_int(h, "group_key", 2) &&
		  is_int(h, "instance_key", 8) && is_str(h, "communication_hint", "auto"));
	CU_ASSERT(input_is(gd, node(gd, "c/ar1"), 0, "a"));
	free(msgs);
	gd_free(gd);
	graph_free(g);
}

/* @order on three ops of one device and one of another. */
static const char *ordered =
	"graph t {\n"
	"  %%a = Placeholder() {@device = \"m0/gpu0\", @order = 0} : f32[4]\n"
	"  %%b = Placeholder() {@device = \"m0/gpu0\", @order = 1} : f32[4]\n"
	"  %%c = Relu(%%a) {@device = \"m0/gpu0\", @order = %d} : f32[4]\n"
	"  %%d = Relu(%%b) {@device = \"m0/gpu0\", @order = %d} : f32[4]\n"
	"  %%e = Relu(%%b) {@device = \"m1/gpu0\", @order = 3} : f32[4]\n"
	"  %%f = Relu(%%e) {@device = \"m1/gpu0\"} : f32[4]\n"
	"}\n";

static Graph *ordered_graph(int oc, int od)
{
	char fmt[2048], text[4096];
	snprintf(fmt, sizeof fmt, "%s%s", "%s", ordered);
	snprintf(text, sizeof text, fmt, two_machines, oc, od);
	return parse(text);
}

static void test_order(void)
{
	Graph *g = ordered_graph(2, 3);
	char *msgs;
	GdGraph *gd = lower(g, "tf", &msgs, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	/* m0/gpu0 in @order: a b c d; the sources a and b take no part (a
	 * variable or Placeholder never waits for a step's op) */
	CU_ASSERT(nctrl(node(gd, "a")) == 0 && nctrl(node(gd, "b")) == 0);
	CU_ASSERT(node(gd, "c")->nin == 1 && input_is(gd, node(gd, "c"), 0, "a"));
	CU_ASSERT(node(gd, "d")->nin == 2 && input_is(gd, node(gd, "d"), 1, "^c"));
	/* e is alone on m1/gpu0 with an @order; f has none */
	CU_ASSERT(nctrl(node(gd, "e")) == 0 && nctrl(node(gd, "f")) == 0);
	CU_ASSERT_PTR_NULL(attr(node(gd, "c"), "_priority"));
	free(msgs);
	gd_free(gd);

	gd = lower(g, "tf", &msgs, "order=priority", NULL);
	CU_ASSERT(nctrl(node(gd, "b")) == 0 && nctrl(node(gd, "d")) == 0);
	CU_ASSERT(is_int(node(gd, "d"), "_priority", 3) && is_int(node(gd, "e"), "_priority", 3));
	CU_ASSERT_PTR_NULL(attr(node(gd, "f"), "_priority"));
	free(msgs);
	gd_free(gd);

	gd = lower(g, "tf", &msgs, "order=both", NULL);
	CU_ASSERT(nctrl(node(gd, "d")) == 1 && is_int(node(gd, "d"), "_priority", 3));
	free(msgs);
	gd_free(gd);

	gd = lower(g, "tf", &msgs, "order=none", NULL);
	CU_ASSERT(nctrl(node(gd, "d")) == 0 && !attr(node(gd, "d"), "_priority"));
	free(msgs);
	gd_free(gd);
	graph_free(g);

	/* equal positions: no edge between them */
	g = ordered_graph(2, 2);
	gd = lower(g, "tf", &msgs, NULL);
	CU_ASSERT(nctrl(node(gd, "c")) == 0 && nctrl(node(gd, "d")) == 0);
	free(msgs);
	gd_free(gd);
	graph_free(g);

	/* an @order against a data edge: c reads b but comes before it (the
	 * verifier refuses such a plan at input, so it is made here) */
	char text[4096];
	snprintf(text, sizeof text, "%s"
		"graph t {\n"
		"  %%a = Placeholder() {@device = \"m0/gpu0\", @order = 0} : f32[4]\n"
		"  %%b = Relu(%%a) {@device = \"m0/gpu0\", @order = 2} : f32[4]\n"
		"  %%c = Relu(%%b) {@device = \"m0/gpu0\", @order = 3} : f32[4]\n"
		"}\n", two_machines);
	g = parse(text);
	uint32_t ci;
	op_set_ann(g, graph_lookup(g, "c", &ci), ANN_ORDER, val_int(g->arena, 1));
	gd = lower(g, "tf", &msgs, NULL);
	CU_ASSERT_PTR_NULL(gd);
	CU_ASSERT(strstr(msgs, "op 'c' (Relu): @order 1 is not after the @order 2 of "
			       "its input 'b'") != NULL);
	free(msgs);
	gd = lower(g, "tf", &msgs, "order=priority", NULL);
	CU_ASSERT_PTR_NOT_NULL(gd);
	free(msgs);
	gd_free(gd);
	graph_free(g);
}

static void test_errors(void)
{
	static const struct {
		const char *gir, *msg;
	} cases[] = {
		{"  %a = Placeholder() : bool[2,2]\n  %m = MatMul(%a, %a) : bool[2,2]\n",
		 "op 'm' (MatMul): T = DT_BOOL is not allowed by TensorFlow's OpDef"},
		/* (transpose_a = 3 is refused by the verifier already) */
		{"  %a = Placeholder() : f32[1,4,4,1]\n  %w = Placeholder() : f32[1,1,1,1]\n"
		 "  %c = Conv2D(%a, %w) {strides = [1, 1, 1, 1], padding = VALID, use_cudnn_on_gpu = 3} : f32[1,4,4,1]\n",
		 "op 'c' (Conv2D): attribute 'use_cudnn_on_gpu' must be bool (TensorFlow's OpDef)"},
		{"  %a = Placeholder() : f32[1,4,4,1]\n"
		 "  %p = AvgPool(%a) {ksize = [1, 1, 1, 1], strides = [1, 1, 1, 1], padding = VALID, data_format = NWHC} : f32[1,4,4,1]\n",
		 "op 'p' (AvgPool): data_format = 'NWHC' is not one of TensorFlow's values"},
		{"  %a = Placeholder() : f32[2]\n  %o = MyOp(%a) : f32[2]\n",
		 "t.gir:4:3: error: op 'o' (MyOp): TensorFlow has no op type 'MyOp'"},
		{"  %v = VariableV2() : f32[2]\n  %a = Placeholder() : f32[2]\n"
		 "  %m = ApplyMomentum(%v, %a, %a) : ()\n",
		 "op 'm' (ApplyMomentum): TensorFlow's ApplyMomentum has 5 input arguments; the op has 3 data inputs"},
		{"  %a = Placeholder() : f32[2]\n  %r = Relu(%a) {keep = 1} : f32[2]\n",
		 "op 'r' (Relu): attribute 'keep' is not in TensorFlow's OpDef; dropped"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[1024];
		snprintf(text, sizeof text, "gir 1\ngraph t {\n%s}\n", cases[i].gir);
		Graph *g = parse(text);
		char *msgs;
		GdGraph *gd = lower(g, "tf", &msgs, "custom_ops=error", NULL);
		bool warning = strstr(cases[i].msg, "dropped") != NULL;
		CU_ASSERT_EQUAL(gd != NULL, warning);
		if (!strstr(msgs, cases[i].msg))
			fprintf(stderr, "\nexpected '%s' in:\n%s\n", cases[i].msg, msgs);
		CU_ASSERT(strstr(msgs, cases[i].msg) != NULL);
		free(msgs);
		gd_free(gd);
		graph_free(g);
	}
}

/* ---- OpDef check of emitted text --------------------------------------------- */

typedef struct PbNode {
	const PbField *f;
	const char *name, *op;
} PbNode;

static const PbField *child(const PbField *m, const char *name)
{
	for (const PbField *f = m ? m->child : NULL; f; f = f->next)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

static const PbField *pb_attr(const PbField *nodef, const char *key)
{
	for (const PbField *f = nodef->child; f; f = f->next)
		if (!strcmp(f->name, "attr")) {
			const PbField *k = child(f, "key");
			if (k && !strcmp(k->text, key))
				return child(f, "value");
		}
	return NULL;
}

static const char *const kind_field[] = {
	[TK_TYPE] = "type", [TK_INT] = "i", [TK_FLOAT] = "f", [TK_BOOL] = "b",
	[TK_STRING] = "s", [TK_SHAPE] = "shape", [TK_TENSOR] = "tensor",
	[TK_FUNC] = "func",
};

/* Problems found by check_opdefs and equiv (the first 20 printed). */
static int problems;

__attribute__((format(printf, 2, 3)))
static void problem(const char *where, const char *fmt, ...)
{
	if (problems++ < 20) {
		va_list ap;
		va_start(ap, fmt);
		fprintf(stderr, "\n%s: ", where);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
}

/* Number of tensors of arg a (1, N, or the length of a type list). */
static int arg_len(const TfOpDef *od, const TfArgDef *a, const PbField *nodef)
{
	if (a->num_attr) {
		const PbField *v = pb_attr(nodef, a->num_attr);
		return v && child(v, "i") ? atoi(child(v, "i")->text) : -1;
	}
	const TfAttrDef *t = a->type_attr ? tf_opdef_attr(od, a->type_attr) : NULL;
	if (t && t->list) {
		const PbField *v = pb_attr(nodef, a->type_attr);
		int n = 0;
		for (const PbField *x = v && child(v, "list") ? child(v, "list")->child : NULL;
		     x; x = x->next)
			n++;
		return n;
	}
	return 1;
}

/* The dtype of tensor k of args[] (a flat index), or 0 (resource, ...). */
static int arg_dtype(const TfOpDef *od, const TfArgDef *args, int nargs,
		     const PbField *nodef, int k)
{
	for (int i = 0; i < nargs; i++) {
		int len = arg_len(od, &args[i], nodef);
		if (k < len) {
			if (args[i].fixed)
				return args[i].fixed == TFDT_RESOURCE ? 0 : args[i].fixed;
			const PbField *v = pb_attr(nodef, args[i].type_attr);
			if (!v)
				return 0;
			if (child(v, "list")) {
				int j = 0;
				for (const PbField *x = child(v, "list")->child; x; x = x->next)
					if (j++ == k)
						return tfdt_parse(x->text, strlen(x->text));
				return 0;
			}
			const PbField *t = child(v, "type");
			return t ? tfdt_parse(t->text, strlen(t->text)) : 0;
		}
		k -= len;
	}
	return -1;
}

static int nargs_total(const TfOpDef *od, const TfArgDef *args, int nargs,
		       const PbField *nodef)
{
	int n = 0;
	for (int i = 0; i < nargs; i++)
		n += arg_len(od, &args[i], nodef);
	return n;
}

/* Checks every node of a GraphDef in text format against tfops.def. */
static void check_opdefs(const char *file, const char *text)
{
	Arena *a = arena_new();
	Diag d;
	diag_init(&d, stderr, file, text, strlen(text));
	PbField *root;
	CU_ASSERT_FATAL(pb_parse(a, file, text, strlen(text), &d, &root));
	uint32_t n = 0;
	for (PbField *f = root; f; f = f->next)
		n += !strcmp(f->name, "node");
	PbNode *nodes = xcalloc(n + 1, sizeof *nodes);
	uint32_t cap = 16;
	while (cap < 2 * n + 2)
		cap *= 2;
	uint32_t *ht = xcalloc(cap, sizeof *ht);
	n = 0;
	for (PbField *f = root; f; f = f->next) {
		if (strcmp(f->name, "node"))
			continue;
		nodes[n] = (PbNode){f, child(f, "name")->text, child(f, "op")->text};
		uint32_t h = (uint32_t)hash_bytes(nodes[n].name, strlen(nodes[n].name)) & (cap - 1);
		while (ht[h])
			h = (h + 1) & (cap - 1);
		ht[h] = ++n;
	}
	TfOpDefs defs;
	tf_opdefs_init(&defs);
	for (uint32_t i = 0; i < n; i++) {
		const PbNode *p = &nodes[i];
		const TfOpDef *od = tf_opdef(&defs, p->op);
		if (!od)
			continue;   /* written as it is (a custom op) */
		/* attrs: declared, of the declared kind, allowed values */
		for (const PbField *f = p->f->child; f; f = f->next) {
			if (strcmp(f->name, "attr"))
				continue;
			const char *key = child(f, "key")->text;
			const PbField *v = child(f, "value");
			if (key[0] == '_')
				continue;
			const TfAttrDef *ad = tf_opdef_attr(od, key);
			if (!ad) {
				problem(file, "node %s (%s): attr %s not in the OpDef", p->name, p->op, key);
				continue;
			}
			const PbField *val = v->child;
			if (!val || strcmp(val->name, ad->list ? "list" : kind_field[ad->kind])) {
				problem(file, "node %s: attr %s is %s, not %s", p->name, key,
					val ? val->name : "empty", tk_name(ad->kind, ad->list));
				continue;
			}
			int cnt = 0;
			for (const PbField *x = ad->list ? val->child : val; x;
			     x = ad->list ? x->next : NULL) {
				cnt++;
				if (strcmp(x->name, kind_field[ad->kind]))
					problem(file, "node %s: attr %s has a %s", p->name, key, x->name);
				if (ad->kind == TK_TYPE &&
				    !tf_type_allowed(ad, tfdt_parse(x->text, strlen(x->text))))
					problem(file, "node %s: %s = %s not allowed", p->name, key, x->text);
				if (ad->kind == TK_STRING && ad->strs) {
					bool ok = false;
					for (int j = 0; j < ad->nstrs; j++)
						ok |= !strcmp(ad->strs[j], x->text);
					if (!ok)
						problem(file, "node %s: %s = %s not allowed", p->name, key, x->text);
				}
				if (ad->kind == TK_INT && ad->has_min && !ad->list &&
				    atoll(x->text) < ad->min)
					problem(file, "node %s: %s below its minimum", p->name, key);
			}
			if (ad->list && ad->has_min && cnt < ad->min)
				problem(file, "node %s: %s shorter than %lld", p->name, key,
					(long long)ad->min);
		}
		/* every attr present (defaults included, as TensorFlow writes) */
		for (int k = 0; k < od->nattrs; k++)
			if (!pb_attr(p->f, od->attrs[k].name))
				problem(file, "node %s (%s): attr %s missing", p->name, p->op,
					od->attrs[k].name);
		/* inputs: count, control inputs last, the dtype of each edge */
		int want = nargs_total(od, od->in, od->nin, p->f);
		int got = 0;
		bool ctrl = false;
		for (const PbField *f = p->f->child; f; f = f->next) {
			if (strcmp(f->name, "input"))
				continue;
			const char *s = f->text;
			if (s[0] == '^') {
				ctrl = true;
				s++;
			} else if (ctrl) {
				problem(file, "node %s: data input after a control input", p->name);
			}
			char nm[512];
			snprintf(nm, sizeof nm, "%s", s);
			int idx = 0;
			char *colon = strrchr(nm, ':');
			if (colon && s[0] != '^') {
				idx = atoi(colon + 1);
				*colon = 0;
			}
			uint32_t h = (uint32_t)hash_bytes(nm, strlen(nm)) & (cap - 1), j = 0;
			for (; ht[h]; h = (h + 1) & (cap - 1))
				if (!strcmp(nodes[ht[h] - 1].name, nm)) {
					j = ht[h];
					break;
				}
			if (!j) {
				problem(file, "node %s: input %s names no node", p->name, f->text);
				continue;
			}
			if (f->text[0] == '^')
				continue;
			const PbNode *q = &nodes[j - 1];
			const TfOpDef *qd = tf_opdef(&defs, q->op);
			int dt_out = qd ? arg_dtype(qd, qd->out, qd->nout, q->f, idx) : 0;
			int dt_in = arg_dtype(od, od->in, od->nin, p->f, got);
			if (qd && dt_out < 0)
				problem(file, "node %s: input %s: %s has no output %d", p->name,
					f->text, q->name, idx);
			else if (dt_out > 0 && dt_in > 0 && dt_out != dt_in)
				problem(file, "node %s: input %d (%s) is %s, the OpDef wants %s",
					p->name, got, f->text, tfdt_enum(dt_out), tfdt_enum(dt_in));
			got++;
		}
		if (got != want)
			problem(file, "node %s (%s): %d data inputs, the OpDef wants %d",
				p->name, p->op, got, want);
	}
	tf_opdefs_free(&defs);
	free(ht);
	free(nodes);
	arena_free(a);
}

/* ---- round trip ------------------------------------------------------------------ */

static const Op *lookup(const Graph *g, const char *name)
{
	uint32_t idx;
	Op *op = graph_lookup(g, name, &idx);
	return op && !strcmp(op->name, name) ? op : NULL;
}

static bool is_transfer(const Op *op)
{
	return !strcmp(op->type, "Transfer");
}

/* A data or control input of a gir op, Transfers skipped. */
static const Op *through(const Op *src, uint32_t *idx)
{
	while (is_transfer(src)) {
		const Input *in = NULL;
		for (uint32_t j = 0; j < src->nin && !in; j++)
			if (!src->in[j].ctrl)
				in = &src->in[j];
		*idx = in->idx;
		src = in->src;
	}
	return src;
}

/* Attribute values that mean the same TensorFlow value: numbers equal as
 * float32 (the kind of TF's float attrs and f32 tensors) or as integers,
 * strings and identifiers by text (dtype names by dtype), a shape as a
 * type or a list of sizes, a scalar or a one-element list, and a list of
 * one repeated value (TF's TensorProto) against the full list. */
static bool same_value(const Value *a, const Value *b)
{
	double x, y;
	if (val_number(a, &x) && val_number(b, &y))
		return x == y || (float)x == (float)y;
	if (a->kind == V_BOOL || b->kind == V_BOOL)
		return a->kind == b->kind && a->b == b->b;
	bool as = a->kind == V_STR || a->kind == V_IDENT;
	bool bs = b->kind == V_STR || b->kind == V_IDENT;
	if (as && bs) {
		int da = tfdt_parse(a->s, strlen(a->s)), db = tfdt_parse(b->s, strlen(b->s));
		return da && db ? da == db : !strcmp(a->s, b->s);
	}
	if (a->kind == V_TYPE && b->kind == V_TYPE)
		return type_eq(&a->t, &b->t);
	if (a->kind == V_TYPE && b->kind == V_LIST) {
		if ((uint32_t)a->t.rank != b->list.n)
			return false;
		for (int i = 0; i < a->t.rank; i++)
			if (b->list.items[i]->kind != V_INT || b->list.items[i]->i != a->t.dims[i])
				return false;
		return true;
	}
	if (a->kind == V_LIST && b->kind == V_TYPE)
		return same_value(b, a);
	if (a->kind == V_LIST && b->kind == V_LIST) {
		if (a->list.n == b->list.n) {
			for (uint32_t i = 0; i < a->list.n; i++)
				if (!same_value(a->list.items[i], b->list.items[i]))
					return false;
			return true;
		}
		const Value *one = a->list.n == 1 ? a : b->list.n == 1 ? b : NULL;
		const Value *all = one == a ? b : a;
		if (!one)
			return false;
		for (uint32_t i = 0; i < all->list.n; i++)
			if (!same_value(one->list.items[0], all->list.items[i]))
				return false;
		return true;
	}
	if (a->kind == V_LIST || b->kind == V_LIST) {
		const Value *l = a->kind == V_LIST ? a : b, *one = l == a ? b : a;
		for (uint32_t i = 0; i < l->list.n; i++)
			if (!same_value(l->list.items[i], one))
				return false;
		return l->list.n > 0;
	}
	return false;
}

static const char *canonical_attr(const char *type, const char *key)
{
	if (!strcmp(key, "keepdims"))
		return "keep_dims";
	if (!strcmp(type, "Squeeze") && !strcmp(key, "axis"))
		return "squeeze_dims";
	return key;
}

static bool updated(const Graph *g, const Op *var)
{
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		const OpInfo *info = op_info(op->opcode);
		if (op->dead || !info || !(info->flags & OPF_UPDATE))
			continue;
		for (uint32_t j = 0; j < op->nin; j++)
			if (!op->in[j].ctrl) {
				uint32_t idx = 0;
				if (through(op->in[j].src, &idx) == var)
					return true;
				break;
			}
	}
	return false;
}

/* Where TensorFlow's OpDef puts an update's gradient (grad or delta). */
static uint32_t grad_pos(const char *type)
{
	TfOpDefs defs;
	tf_opdefs_init(&defs);
	const TfOpDef *od = tf_opdef(&defs, type);
	uint32_t k = 1;
	for (int i = 0; od && i < od->nin; i++)
		if (!strcmp(od->in[i].name, "grad") || !strcmp(od->in[i].name, "delta"))
			k = (uint32_t)i;
	tf_opdefs_free(&defs);
	return k;
}


/* A node of R that the lowering of x added: NAME/... and not an op of G. */
static bool piece_of(const Graph *G, const Op *x, const Op *r)
{
	size_t n = strlen(x->name);
	return !strncmp(r->name, x->name, n) && r->name[n] == '/' && !lookup(G, r->name);
}

/* The op of G whose lowering added R's node name, or NULL. */
static const Op *lowered_owner(const Graph *G, const char *name)
{
	char buf[512];
	for (const char *p = strchr(name, '/'); p; p = strchr(p + 1, '/')) {
		snprintf(buf, sizeof buf, "%.*s", (int)(p - name), name);
		const Op *o = lookup(G, buf);
		if (o && tf_lowered(G, o) && !lookup(G, name))
			return o;
	}
	return NULL;
}

/* A lowered op x (y in R, with its pieces): together they read exactly
 * x's data inputs, and each piece waits for what y waits for. */
static void lowered_inputs(const char *what, const Graph *G, const Graph *R,
			   const Op *x, const Op *y, const Op *const *din,
			   const uint32_t *didx, uint32_t nd)
{
	bool used[16] = {false};
	for (uint32_t i = 0; i < R->nops; i++) {
		const Op *r = R->ops[i];
		if (r != y && !piece_of(G, x, r))
			continue;
		for (uint32_t j = 0; j < r->nin; j++) {
			const Op *s = r->in[j].src;
			if (r->in[j].ctrl) {
				bool also = false;
				for (uint32_t k = 0; k < y->nin; k++)
					also |= y->in[k].ctrl && y->in[k].src == s;
				if (!also)
					problem(what, "%s: control input ^%s is not %s's", r->name,
						s->name, y->name);
				continue;
			}
			if (s == y || piece_of(G, x, s))
				continue;
			bool found = false;
			for (uint32_t k = 0; k < nd; k++)
				if (!strcmp(s->name, din[k]->name) && r->in[j].idx == didx[k])
					found = used[k] = true;
			if (!found)
				problem(what, "%s reads %s:%u, which is not an input of %s", r->name,
					s->name, r->in[j].idx, x->name);
		}
	}
	for (uint32_t k = 0; k < nd; k++)
		if (!used[k])
			problem(what, "lowered %s does not read its input %s:%u", x->name,
				din[k]->name, didx[k]);
}

/* gir's shorthand update x took its constant attr key (lr, beta1, ...)
 * into the Const NAME/ARG it added: that Const has its value. */
static void shorthand_attr(const char *what, const Graph *R, const Op *x,
			   const char *key, const Value *v)
{
	char name[512];
	bool gd = strstr(x->type, "GradientDescent") != NULL;
	snprintf(name, sizeof name, "%s/%s", x->name, gd && !strcmp(key, "lr") ? "alpha" : key);
	const Op *c = lookup(R, name);
	Value *rv = c ? op_get(R, c, "value") : NULL;
	if (!c || strcmp(c->type, "Const"))
		problem(what, "%s: attr %s has no Const %s", x->name, key, name);
	else if (!rv || !same_value(v, rv))
		problem(what, "%s: Const %s is not attr %s", x->name, name, key);
}

/* docs/backends.md "Round trip": R (read back) is equivalent to G. */
static void equiv(const char *what, const Graph *G, const Graph *R, bool json)
{
	for (uint32_t i = 0; i < G->nops; i++) {
		const Op *x = G->ops[i];
		if (x->dead)
			continue;
		const Op *y = lookup(R, x->name);
		if (is_transfer(x)) {
			if (y)
				problem(what, "Transfer %s is a node", x->name);
			continue;
		}
		if (!y) {
			problem(what, "op %s is missing", x->name);
			continue;
		}
		/* op type */
		const char *want = x->type;
		uint32_t nd = 0;
		const Op *din[16];
		uint32_t didx[16];
		for (uint32_t j = 0; j < x->nin; j++)
			if (!x->in[j].ctrl && nd < 16) {
				didx[nd] = x->in[j].idx;
				din[nd] = through(x->in[j].src, &didx[nd]);
				nd++;
			}
		if (!strcmp(want, "AllReduce"))
			want = "CollectiveReduce";
		else if (!strcmp(want, "SoftmaxCrossEntropyWithLogits") &&
			 din[1]->out[didx[1]].rank == din[0]->out[didx[0]].rank - 1)
			want = "SparseSoftmaxCrossEntropyWithLogits";
		else if (json && (!strcmp(want, "VariableV2") || !strcmp(want, "Variable")) &&
			 !updated(G, x))
			want = "Const";
		const char *low = tf_lowered(G, x);
		if (low)
			want = low;
		if (strcmp(y->type, want))
			problem(what, "%s is %s, expected %s", x->name, y->type, want);
		/* types of the outputs */
		if (y->nout < x->nout)
			problem(what, "%s has %u outputs, expected %u", x->name, y->nout, x->nout);
		for (uint32_t k = 0; k < x->nout && k < y->nout; k++)
			if (!type_eq(&x->out[k], &y->out[k])) {
				char a[128], b[128];
				problem(what, "%s:%u is %s, expected %s", x->name, k,
				       type_str(&y->out[k], a, sizeof a), type_str(&x->out[k], b, sizeof b));
			}
		/* data inputs in order; shorthand updates gain their OpDef args */
		uint32_t rd = 0;
		const Input *rin[16];
		for (uint32_t j = 0; j < y->nin; j++)
			if (!y->in[j].ctrl && rd < 16)
				rin[rd++] = &y->in[j];
		bool sh = nd == 2 && rd > 2 && (op_info(x->opcode)->flags & OPF_UPDATE);
		uint32_t gpos = sh ? grad_pos(x->type) : 1;
		if (low)
			lowered_inputs(what, G, R, x, y, din, didx, nd);
		for (uint32_t j = 0; j < nd && j < rd && !low; j++) {
			const Input *r = sh && j == 1 ? rin[gpos] : rin[j];
			if (strcmp(r->src->name, din[j]->name) || r->idx != didx[j])
				problem(what, "%s input %u is %s:%u, expected %s:%u", x->name, j,
				       r->src->name, r->idx, din[j]->name, didx[j]);
		}
		if (rd != nd && !sh && !low)
			problem(what, "%s has %u data inputs, expected %u", x->name, rd, nd);
		for (uint32_t j = 1; sh && j < rd; j++)
			if (j != gpos && (strncmp(rin[j]->src->name, x->name, strlen(x->name)) ||
					  rin[j]->src->name[strlen(x->name)] != '/'))
				problem(what, "%s: added input %s is not %s/...", x->name,
				       rin[j]->src->name, x->name);
		/* control inputs: G's kept; the others follow @order on one device */
		for (uint32_t j = 0; j < x->nin; j++) {
			if (!x->in[j].ctrl)
				continue;
			uint32_t idx = 0;
			const Op *s = through(x->in[j].src, &idx);
			bool found = false;
			for (uint32_t k = 0; k < y->nin; k++)
				found |= y->in[k].ctrl && !strcmp(y->in[k].src->name, s->name);
			if (!found)
				problem(what, "%s lost control input ^%s", x->name, s->name);
		}
		for (uint32_t k = 0; k < y->nin; k++) {
			if (!y->in[k].ctrl)
				continue;
			const Op *s = y->in[k].src;
			bool given = false;
			for (uint32_t j = 0; j < x->nin; j++) {
				uint32_t idx = 0;
				given |= x->in[j].ctrl && through(x->in[j].src, &idx) == lookup(G, s->name);
			}
			const char *d1 = op_get_str(R, s, "_device"), *d2 = op_get_str(R, y, "_device");
			/* an update waits for the readers of its variable */
			bool reader = (op_info(x->opcode)->flags & OPF_UPDATE) != 0;
			if (!given && !reader && (!d1 || !d2 || strcmp(d1, d2) ||
				       op_get_int(R, s, "_pcc_order", -1) >=
					       op_get_int(R, y, "_pcc_order", -1)))
				problem(what, "%s: control input ^%s is not an @order edge", x->name,
				       s->name);
		}
		/* attrs */
		for (uint32_t k = 0; k < x->nattr; k++) {
			const char *key = x->attrs[k].key;
			const Value *v = x->attrs[k].val;
			if (!strcmp(x->type, "AllReduce") &&
			    (!strcmp(key, "key") || !strcmp(key, "algo") || !strcmp(key, "devices")))
				continue;
			if (!strcmp(key, "_device") || !strcmp(key, "_output_shapes") ||
			    !strcmp(key, "@device") || v->kind == V_DICT)
				continue;
			/* a lowered op's attrs went to its pieces (test_lowering) */
			if (low && key[0] != '@' && key[0] != '_')
				continue;
			if (sh && (!strcmp(key, "lr") || !strcmp(key, "momentum") ||
				   !strcmp(key, "beta1") || !strcmp(key, "beta2") ||
				   !strcmp(key, "epsilon"))) {
				shorthand_attr(what, R, x, key, v);
				continue;
			}
			char pk[128];
			if (key[0] == '@')
				snprintf(pk, sizeof pk, "_pcc_%s", key + 1);
			else
				snprintf(pk, sizeof pk, "%s", canonical_attr(x->type, key));
			Value *rv = op_get(R, y, pk);
			if (!rv) {
				/* the importer keeps values of <= 64 elements only */
				if (!strcmp(key, "value") && type_numel(&x->out[0]) > TF_MAX_CONST_VALUES)
					continue;
				problem(what, "%s lost attr %s", x->name, key);
			} else if (!same_value(v, rv)) {
				problem(what, "%s: attr %s differs", x->name, key);
			}
		}
		/* device */
		const char *dev = op_ann_str(G, x, ANN_DEVICE);
		if (dev) {
			int k = cluster_find_device(G->cluster, dev);
			char want_dev[128];
			snprintf(want_dev, sizeof want_dev, "/job:worker/replica:0/task:%d/device:GPU:%d",
				 G->cluster->devs[k].machine, G->cluster->devs[k].local);
			const char *got = op_get_str(R, y, "_device");
			if (!got || strcmp(got, want_dev))
				problem(what, "%s: device %s, expected %s", x->name, got ? got : "none",
				       want_dev);
		}
	}
	/* R has nothing else but what shorthand updates and lowerings add */
	for (uint32_t i = 0; i < R->nops; i++) {
		const Op *y = R->ops[i];
		if (lookup(G, y->name) || lowered_owner(G, y->name))
			continue;
		/* the update op owning it: NAME/m, NAME/beta1_power/update/mul */
		char owner[512];
		snprintf(owner, sizeof owner, "%s", y->name);
		const Op *o = NULL;
		for (char *slash; !o && (slash = strrchr(owner, '/'));) {
			*slash = 0;
			o = lookup(G, owner);
		}
		static const char *const added[] = {"Const", "VariableV2", "VarHandleOp",
						    "Assign", "AssignVariableOp", "Mul",
						    "ReadVariableOp"};
		bool known = false;
		for (size_t k = 0; k < sizeof added / sizeof *added; k++)
			known |= !strcmp(y->type, added[k]);
		if (!o || !(op_info(o->opcode) && (op_info(o->opcode)->flags & OPF_UPDATE)) ||
		    !known)
			problem(what, "unexpected node %s (%s)", y->name, y->type);
	}
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* Emits file as pbtxt and as model.json (+ weights), checks the OpDefs,
 * reads both back and compares them with the input and with each other. */
static void roundtrip(const char *file)
{
	char *src;
	Graph *G = load(file, &src);
	if (!G)
		return;
	char dir[] = "/tmp/pcc-tfbackend-XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	char pb[256], js[256], wb[256];
	snprintf(pb, sizeof pb, "%s/t.pbtxt", dir);
	snprintf(js, sizeof js, "%s/t.json", dir);
	snprintf(wb, sizeof wb, "%s/t.weights.bin", dir);
	int before = problems;
	Graph *R[2] = {NULL, NULL};
	/* Constants and variables of at most 16 MB: both encodings with the
	 * same generated weights, so that the two read back alike.  Larger
	 * (the example models; BERT-large's are 1.6 GB): the pbtxt only, its
	 * Consts without content. */
	double bytes = 0;
	for (uint32_t i = 0; i < G->nops; i++) {
		const OpInfo *info = op_info(G->ops[i]->opcode);
		if (info && (info->flags & (OPF_PARAM | OPF_SOURCE)) && G->ops[i]->nout)
			bytes += (double)type_bytes(&G->ops[i]->out[0]);
	}
	bool small = bytes <= 16e6;
	for (int json = 0; json < 1 + small; json++) {
		char *msgs;
		GdGraph *gd = lower(G, json ? "tf-json" : "tf", &msgs,
				    small ? "weights=generated" : "weights=zeros",
				    json ? "variables=keep" : NULL, NULL);
		CU_ASSERT_PTR_NOT_NULL(gd);
		free(msgs);
		if (!gd)
			continue;
		if (json) {
			FILE *f = fopen(js, "w");
			gd_write_json(f, gd, "t.weights.bin");
			fclose(f);
			f = fopen(wb, "wb");
			CU_ASSERT(gd_write_weights(f, gd));
			fclose(f);
		} else {
			char *text = pbtxt_of(gd);
			check_opdefs(file, text);
			write_text(pb, text);
			free(text);
		}
		gd_free(gd);
		Diag d;
		char *rs;
		TfImportOptions o = {.batch = 1};
		R[json] = read_any_graph(json ? js : pb, &o, &d, &rs);
		free(rs);
		CU_ASSERT_PTR_NOT_NULL(R[json]);
		if (R[json])
			equiv(json ? "json" : "pbtxt", G, R[json], false);
	}
	if (R[0] && R[1]) {
		/* the two encodings read back alike (values equal as float32:
		 * the importer reads "0.01" from text, 0.01f from the weights) */
		equiv("pbtxt vs json", R[0], R[1], false);
		for (uint32_t i = 0; i < R[0]->nops; i++) {
			const Op *x = R[0]->ops[i], *y = lookup(R[1], x->name);
			const char *a = op_get_str(R[0], x, "_device");
			const char *b = y ? op_get_str(R[1], y, "_device") : NULL;
			if ((a || b) && (!a || !b || strcmp(a, b)))
				problem("pbtxt vs json", "%s: devices differ", x->name);
		}
	}
	if (problems != before)
		fprintf(stderr, "\n^ in %s\n", file);
	CU_ASSERT_EQUAL(problems, before);
	graph_free(R[0]);
	graph_free(R[1]);
	unlink(pb);
	unlink(js);
	unlink(wb);
	rmdir(dir);
	graph_free(G);
	free(src);
}

/* TF.js's Prelu and FusedDepthwiseConv2dNative, and fused kernels whose
 * fused_ops TensorFlow's kernels do not implement, become core ops. */
static void test_lowering(void)
{
	char text[4096];
	snprintf(text, sizeof text, "%s"
		"graph t {\n"
		"  %%x = Placeholder() {@device = \"m0/gpu0\"} : f32[2,3]\n"
		"  %%a = Const() {value = 0.5} : f32[]\n"
		"  %%c0 = Relu(%%x) : f32[2,3]\n"
		"  %%p = Prelu(%%x, %%a, ^%%c0) {@device = \"m0/gpu0\", @origin = \"p0\"} : f32[2,3]\n"
		"  %%img = Placeholder() : f32[1,4,4,2]\n"
		"  %%dwf = Const() : f32[3,3,2,1]\n"
		"  %%b = Const() : f32[2]\n"
		"  %%dw = FusedDepthwiseConv2dNative(%%img, %%dwf, %%b) {T = f32, strides = [1, 1, 1, 1], padding = SAME, fused_ops = [\"BiasAdd\", \"LeakyRelu\"], leakyrelu_alpha = 0.3, num_args = 1} : f32[1,4,4,2]\n"
		"  %%f = Const() : f32[1,1,2,2]\n"
		"  %%c = _FusedConv2D(%%img, %%f, %%b) {fused_ops = [\"BiasAdd\", \"Relu\"]} : f32[1,4,4,2]\n"
		"  %%bn = _FusedConv2D(%%img, %%f, %%b, %%b, %%b, %%b) {fused_ops = [\"FusedBatchNorm\", \"Tanh\"], epsilon = 0.001} : f32[1,4,4,2]\n"
		"  %%w = Const() : f32[3,3]\n"
		"  %%bb = Const() : f32[3]\n"
		"  %%mm = _FusedMatMul(%%x, %%w, %%bb) {fused_ops = [\"BiasAdd\", \"Relu\", \"Relu\", \"Relu6\"], transpose_b = true} : f32[2,3]\n"
		"  %%e = _FusedMatMul(%%x, %%w) {fused_ops = []} : f32[2,3]\n"
		"}\n", two_machines);
	Graph *g = parse(text);
	CU_ASSERT_STRING_EQUAL(tf_lowered(g, lookup(g, "p")), "AddV2");
	CU_ASSERT_STRING_EQUAL(tf_lowered(g, lookup(g, "dw")), "LeakyRelu");
	CU_ASSERT_STRING_EQUAL(tf_lowered(g, lookup(g, "c")), "Relu");
	CU_ASSERT_STRING_EQUAL(tf_lowered(g, lookup(g, "bn")), "Tanh");
	CU_ASSERT_STRING_EQUAL(tf_lowered(g, lookup(g, "mm")), "Relu6");
	CU_ASSERT_STRING_EQUAL(tf_lowered(g, lookup(g, "e")), "MatMul");
	CU_ASSERT_PTR_NULL(tf_lowered(g, lookup(g, "c0")));
	char *msgs;
	GdGraph *gd = lower(g, "tf", &msgs, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	CU_ASSERT_STRING_EQUAL(msgs, "");
	/* Prelu: Relu(x) + alpha * (x - Relu(x)), the last keeping the name,
	 * the annotations and the control inputs, which every piece gets */
	const char *dev = "/job:worker/replica:0/task:0/device:GPU:0";
	const GdNode *p = node(gd, "p"), *pos = node(gd, "p/pos"), *neg = node(gd, "p/neg"),
		     *sc = node(gd, "p/scaled");
	CU_ASSERT(!strcmp(p->op, "AddV2") && input_is(gd, p, 0, "p/pos") &&
		  input_is(gd, p, 1, "p/scaled") && input_is(gd, p, 2, "^c0") &&
		  is_type(p, "T", TFDT_FLOAT) && is_str(p, "_pcc_origin", "p0"));
	CU_ASSERT(!strcmp(pos->op, "Relu") && input_is(gd, pos, 0, "x") &&
		  input_is(gd, pos, 1, "^c0") && pos->nattr == 1);
	CU_ASSERT(!strcmp(neg->op, "Sub") && input_is(gd, neg, 0, "x") &&
		  input_is(gd, neg, 1, "p/pos") && input_is(gd, neg, 2, "^c0"));
	CU_ASSERT(!strcmp(sc->op, "Mul") && input_is(gd, sc, 0, "a") &&
		  input_is(gd, sc, 1, "p/neg") && is_type(sc, "T", TFDT_FLOAT));
	CU_ASSERT(!strcmp(p->device, dev) && !strcmp(sc->device, dev) &&
		  !attr(sc, "_pcc_origin"));
	/* FusedDepthwiseConv2dNative: the convolution's attrs, then BiasAdd
	 * and LeakyRelu with the op's leakyrelu_alpha */
	const GdNode *dc = node(gd, "dw/depthwise"), *db = node(gd, "dw/bias_add"),
		     *dw = node(gd, "dw");
	CU_ASSERT(!strcmp(dc->op, "DepthwiseConv2dNative") && dc->nin == 2 &&
		  input_is(gd, dc, 0, "img") && input_is(gd, dc, 1, "dwf") &&
		  is_str(dc, "padding", "SAME") && is_ints(dc, "strides", 4, 1, 1, 1, 1) &&
		  is_ints(dc, "dilations", 4, 1, 1, 1, 1) && is_str(dc, "data_format", "NHWC") &&
		  is_type(dc, "T", TFDT_FLOAT) && dc->nattr == 6 && !attr(dc, "fused_ops"));
	CU_ASSERT(!strcmp(db->op, "BiasAdd") && input_is(gd, db, 0, "dw/depthwise") &&
		  input_is(gd, db, 1, "b") && is_str(db, "data_format", "NHWC"));
	CU_ASSERT(!strcmp(dw->op, "LeakyRelu") && input_is(gd, dw, 0, "dw/bias_add") &&
		  attr(dw, "alpha") && fabs(attr(dw, "alpha")->f - 0.3) < 1e-12);
	/* _FusedConv2D, even with a combination TensorFlow's kernels
	 * implement: Conv2D (pcc's default padding and strides), BiasAdd, Relu */
	const GdNode *c = node(gd, "c"), *cc = node(gd, "c/conv"), *cb = node(gd, "c/bias_add");
	CU_ASSERT(!strcmp(cc->op, "Conv2D") && cc->nin == 2 && input_is(gd, cc, 0, "img") &&
		  is_str(cc, "padding", "VALID") && is_ints(cc, "strides", 4, 1, 1, 1, 1) &&
		  is_bool(cc, "use_cudnn_on_gpu", true) && !attr(cc, "fused_ops"));
	CU_ASSERT(!strcmp(cb->op, "BiasAdd") && input_is(gd, cb, 0, "c/conv") &&
		  input_is(gd, cb, 1, "b"));
	CU_ASSERT(!strcmp(c->op, "Relu") && c->nin == 1 && input_is(gd, c, 0, "c/bias_add"));
	/* FusedBatchNorm: FusedBatchNormV3 for inference, output 0 used */
	const GdNode *bn = node(gd, "bn/batch_norm");
	CU_ASSERT(!strcmp(bn->op, "FusedBatchNormV3") && bn->nin == 5 &&
		  input_is(gd, bn, 0, "bn/conv") && input_is(gd, bn, 4, "b") &&
		  is_bool(bn, "is_training", false) && is_type(bn, "U", TFDT_FLOAT) &&
		  fabs(attr(bn, "epsilon")->f - 0.001) < 1e-12 &&
		  attr(bn, "exponential_avg_factor")->f == 1);
	CU_ASSERT(!strcmp(node(gd, "bn")->op, "Tanh") && input_is(gd, node(gd, "bn"), 0, "bn/batch_norm"));
	CU_ASSERT(!strcmp(node(gd, "bn/conv")->op, "Conv2D"));
	/* a repeated entry gets its own piece; MatMul keeps transpose_b */
	CU_ASSERT(is_bool(node(gd, "mm/matmul"), "transpose_b", true));
	CU_ASSERT(input_is(gd, node(gd, "mm/relu"), 0, "mm/bias_add"));
	CU_ASSERT(input_is(gd, node(gd, "mm/relu_1"), 0, "mm/relu"));
	CU_ASSERT(!strcmp(node(gd, "mm")->op, "Relu6") && input_is(gd, node(gd, "mm"), 0, "mm/relu_1"));
	/* no fused ops: the contraction alone, under the op's name */
	CU_ASSERT(!strcmp(node(gd, "e")->op, "MatMul") && node(gd, "e")->nin == 2);
	char *pb = pbtxt_of(gd);
	check_opdefs("lowering", pb);
	free(pb);
	free(msgs);
	gd_free(gd);

	graph_free(g);

	/* the pieces wait for what the op waits for: its @order edge too */
	snprintf(text, sizeof text, "%s"
		"graph t {\n"
		"  %%x = Placeholder() {@device = \"m0/gpu0\", @order = 0} : f32[2,3]\n"
		"  %%a = Const() {value = 0.5} : f32[]\n"
		"  %%y = Relu(%%x) {@device = \"m0/gpu0\", @order = 1} : f32[2,3]\n"
		"  %%p = Prelu(%%x, %%a) {@device = \"m0/gpu0\", @order = 2} : f32[2,3]\n"
		"  %%z = Relu(%%p) {@device = \"m0/gpu0\", @order = 3} : f32[2,3]\n"
		"}\n", two_machines);
	g = parse(text);
	gd = lower(g, "tf", &msgs, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	CU_ASSERT(input_is(gd, node(gd, "p"), 2, "^y") && input_is(gd, node(gd, "p/pos"), 1, "^y") &&
		  input_is(gd, node(gd, "p/scaled"), 2, "^y") && nctrl(node(gd, "p/neg")) == 1);
	CU_ASSERT(input_is(gd, node(gd, "z"), 0, "p") && nctrl(node(gd, "z")) == 0);
	free(msgs);
	gd_free(gd);
	graph_free(g);

	static const struct {
		const char *gir, *msg;
	} bad[] = {
		{"  %m = _FusedMatMul(%x, %w, %x) {fused_ops = [\"BiasAdd\", \"Gelu\"]} : f32[2,2]\n",
		 "op 'm' (_FusedMatMul): fused op 'Gelu' is not one pcc can write for TensorFlow"},
		{"  %m = _FusedMatMul(%x, %w) {fused_ops = [\"BiasAdd\"]} : f32[2,2]\n",
		 "op 'm' (_FusedMatMul): its fused_ops take 1 argument after the MatMul's two inputs; the op has 0"},
		{"  %m = _FusedMatMul(%x, %w, %b) {fused_ops = [\"BiasAdd\", \"Sigmoid\"], num_args = 2} : f32[2,2]\n",
		 "op 'm' (_FusedMatMul): num_args = 2 but there are 1 args"},
		{"  %m = _FusedMatMul(%x, %w, %b) {fused_ops = 3} : f32[2,2]\n",
		 "op 'm' (_FusedMatMul): fused_ops must be a list of at most 8 op names"},
		{"  %i = Placeholder() : bool[2,2]\n  %m = Prelu(%i, %i) : bool[2,2]\n",
		 "op 'm' (Prelu): T = DT_BOOL is not allowed by TensorFlow's OpDef"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(text, sizeof text, "gir 1\ngraph t {\n"
			 "  %%x = Placeholder() : f32[2,2]\n  %%w = Const() : f32[2,2]\n"
			 "  %%b = Const() : f32[2]\n%s}\n", bad[i].gir);
		g = parse(text);
		gd = lower(g, "tf", &msgs, NULL);
		CU_ASSERT_PTR_NULL(gd);
		if (!strstr(msgs, bad[i].msg))
			fprintf(stderr, "\nexpected '%s' in:\n%s\n", bad[i].msg, msgs);
		CU_ASSERT(strstr(msgs, bad[i].msg) != NULL);
		free(msgs);
		gd_free(gd);
		graph_free(g);
	}
}

static const char *const files[] = {
	"../examples/mlp.gir", "../examples/hand-placed.gir",
	"../examples/models/vgg19.gir", "../examples/models/resnet50.gir",
	"../examples/models/mobilenet_v2.gir", "../examples/models/inception_v3.gir",
	"../examples/models/transformer.gir", "../examples/models/resnet101.gir",
	"../examples/models/bert_large.gir", "tf/train-plan.gir", "tfjs/mlp.gir",
	"tfjs/mlp-plan.gir", "tfjs/cnn.gir", "tfjs/cnn-plan.gir", "tfjs/lowering.gir",
	"tf/ops.gir",
};

static void test_roundtrip(void)
{
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		roundtrip(files[i]);
}

/* tf-json freezes variables that nothing updates into Consts whose
 * generated values follow @origin and @shard. */
static void test_json_weights(void)
{
	char *src;
	Graph *g = load("tfjs/cnn-plan.gir", &src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	char *msgs;
	GdGraph *gd = lower(g, "tf-json", &msgs, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	const GdNode *w = node(gd, "w");
	CU_ASSERT_STRING_EQUAL(w->op, "Const");
	CU_ASSERT(w->weight && w->weight->src == GS_GENERATED &&
		  w->weight->seed == tf_gen_seed("w"));
	const GdNode *f0 = node(gd, "filt/rep0"), *f1 = node(gd, "filt/rep1");
	CU_ASSERT(f0->weight->seed == tf_gen_seed("filt") && f1->weight->seed == f0->weight->seed);
	for (int k = 0; k < 216; k += 17)
		CU_ASSERT_EQUAL(gd_tensor_value(f0->weight, k), gd_tensor_value(f1->weight, k));
	CU_ASSERT_EQUAL(gd_tensor_value(node(gd, "shape/rep0")->weight, 0), 3);
	free(msgs);
	gd_free(gd);
	graph_free(g);
	free(src);

	/* a Const with @shard starts at its rows of the original */
	g = parse("gir 1\ngraph t {\n"
		  "  %c = Const() : f32[4,3]\n"
		  "  %c/rep1 = Const() {@origin = \"c\", @shard = [2, 2]} : f32[2,3]\n"
		  "}\n");
	gd = lower(g, "tf-json", &msgs, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gd);
	for (int k = 0; k < 6; k++)
		CU_ASSERT_EQUAL(gd_tensor_value(node(gd, "c/rep1")->weight, k),
				gd_tensor_value(node(gd, "c")->weight, k + 6));
	free(msgs);
	gd_free(gd);
	gd = lower(g, "tf-json", &msgs, "weights=zeros", NULL);
	CU_ASSERT(node(gd, "c")->weight->src == GS_ZEROS);
	free(msgs);
	gd_free(gd);
	graph_free(g);
}

void suite_tfbackend(void)
{
	CU_pSuite s = CU_add_suite("tfbackend", NULL, NULL);
	CU_add_test(s, "OpDef table", test_table);
	CU_add_test(s, "float spelling and generated weights", test_float_format);
	CU_add_test(s, "attrs derived and typed by the OpDef", test_attrs);
	CU_add_test(s, "gir's shorthands become valid TensorFlow", test_shorthands);
	CU_add_test(s, "plans: Transfers, devices, AllReduce", test_plan);
	CU_add_test(s, "@order: control edges, _priority, cycles", test_order);
	CU_add_test(s, "errors and warnings", test_errors);
	CU_add_test(s, "Prelu and fused kernels lowered to core ops", test_lowering);
	CU_add_test(s, "OpDef check and round trip of every test graph", test_roundtrip);
	CU_add_test(s, "tf-json weights", test_json_weights);
}
