/* test_ops.c — the op table: lookup, shape inference, FLOPs, bytes, split
 * categories and dimensions.  Every expected value is worked by hand in
 * the comment beside it. */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <string.h>

#include "ir/ir.h"

static Type ty(Graph *g, DType dt, int rank, ...)
{
	int64_t d[8];
	va_list ap;
	va_start(ap, rank);
	for (int i = 0; i < rank; i++)
		d[i] = (int64_t)va_arg(ap, int);
	va_end(ap);
	return type_make(g->arena, dt, rank, d);
}

#define T(g, dt, ...) ty(g, dt, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
			 __VA_ARGS__)

static Op *ph(Graph *g, const char *name, Type t)
{
	Op *op = graph_add_op(g, name, "Placeholder", 0, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	op->out[0] = t;
	op->types_given = true;
	return op;
}

/* A Const holding a list of n integers (cst1: a scalar). */
static Op *cst(Graph *g, const char *name, int n, ...)
{
	Op *op = graph_add_op(g, name, "Const", 0, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	Value *l = val_list(g->arena, (uint32_t)n);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		l->list.items[i] = val_int(g->arena, (int64_t)va_arg(ap, int));
	va_end(ap);
	op_set(g, op, "value", l);
	op->out[0] = type_make(g->arena, DT_I32, 1, (int64_t[]){n});
	op->types_given = true;
	return op;
}

static Op *cst1(Graph *g, const char *name, int64_t v)
{
	Op *op = graph_add_op(g, name, "Const", 0, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	op_set(g, op, "value", val_int(g->arena, v));
	op->out[0] = type_make(g->arena, DT_I32, 0, NULL);
	op->types_given = true;
	return op;
}

/* An untyped op of type `type` with nout outputs and the given inputs. */
static Op *mk(Graph *g, const char *name, const char *type, uint32_t nout,
	      int nin, ...)
{
	Op *op = graph_add_op(g, name, type, (uint32_t)nin, nout);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	va_list ap;
	va_start(ap, nin);
	for (int i = 0; i < nin; i++)
		op->in[i] = (Input){va_arg(ap, Op *), 0, false};
	va_end(ap);
	return op;
}

static Value *ints(Graph *g, int n, ...)
{
	Value *l = val_list(g->arena, (uint32_t)n);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		l->list.items[i] = val_int(g->arena, (int64_t)va_arg(ap, int));
	va_end(ap);
	return l;
}

static char msg[256];

/* Infers op's outputs; on success stores them in the op (as the
 * inference pass would) so that consumers and FLOPs can use them. */
static int infer(Graph *g, Op *op)
{
	int n = op_num_outputs(g, op);
	if (n < 0)
		n = (int)op->nout;
	Type *out = arena_alloc(g->arena, sizeof(Type) * (size_t)(n ? n : 1));
	msg[0] = 0;
	int r = op_infer(g, op, out, (uint32_t)n, g->arena, msg, sizeof msg);
	if (r == 0) {
		op->out = out;
		op->nout = (uint32_t)n;
	}
	return r;
}

static bool shape_is(const Op *op, uint32_t k, const char *want)
{
	char buf[128];
	if (k >= op->nout)
		return false;
	type_str(&op->out[k], buf, sizeof buf);
	if (strcmp(buf, want) != 0)
		fprintf(stderr, "\n  output %u: got %s, want %s\n", k, buf, want);
	return strcmp(buf, want) == 0;
}

static void test_table(void)
{
	int n = op_table_size();
	CU_ASSERT(n >= 80);
	for (int i = 0; i < n; i++) {
		const OpInfo *info = op_info(i);
		CU_ASSERT_PTR_NOT_NULL_FATAL(info);
		CU_ASSERT_EQUAL(op_lookup(info->name), i);
		if (i > 0)
			CU_ASSERT(strcmp(op_info(i - 1)->name, info->name) < 0);
		CU_ASSERT(info->doc && info->doc[0]);
		CU_ASSERT(info->max_in < 0 || info->max_in >= info->min_in);
	}
	CU_ASSERT_EQUAL(op_lookup("MyCustomOp"), OPC_UNKNOWN);
	CU_ASSERT_EQUAL(op_lookup("matmul"), OPC_UNKNOWN);
	CU_ASSERT_EQUAL(op_lookup(""), OPC_UNKNOWN);
	CU_ASSERT_PTR_NULL(op_info(OPC_UNKNOWN));
	CU_ASSERT_PTR_NULL(op_info(n));
	CU_ASSERT_EQUAL(op_info(op_lookup("FusedBatchNormV3"))->nout, 6);
	CU_ASSERT_EQUAL(op_info(op_lookup("FusedBatchNormGradV3"))->nout, 5);
	CU_ASSERT_EQUAL(op_info(op_lookup("ConcatV2"))->max_in, -1);
	CU_ASSERT(op_info(op_lookup("Identity"))->flags & OPF_NOOP);
	CU_ASSERT(op_info(op_lookup("Placeholder"))->flags & OPF_INPUT);
	CU_ASSERT(op_info(op_lookup("VariableV2"))->flags & OPF_PARAM);
	CU_ASSERT(op_info(op_lookup("ApplyAdam"))->flags & OPF_UPDATE);
	CU_ASSERT(op_info(op_lookup("SoftmaxCrossEntropyWithLogits"))->flags & OPF_LOSS);
	CU_ASSERT(op_info(op_lookup("Conv2DBackpropFilter"))->flags & OPF_GRAD);
	CU_ASSERT_EQUAL(op_info(op_lookup("Conv2D"))->cls, OC_CONV);
	CU_ASSERT_EQUAL(op_info(op_lookup("MatMul"))->cls, OC_MATMUL);
	SplitCat sc;
	for (int s = 0; s < 3; s++) {
		CU_ASSERT(splitcat_parse(splitcat_name((SplitCat)s), &sc));
		CU_ASSERT_EQUAL(sc, s);
	}
	CU_ASSERT_STRING_EQUAL(splitcat_name(SPLIT_SUM), "sum");
	CU_ASSERT_FALSE(splitcat_parse("add", &sc));
}

static void test_conv2d(void)
{
	Graph *g = graph_new("t");
	/* NHWC: SAME, stride 2: ceil(224/2) = 112. */
	Op *x = ph(g, "x", T(g, DT_F32, 32, 224, 224, 3));
	Op *w = ph(g, "w", T(g, DT_F32, 7, 7, 3, 64));
	Op *c = mk(g, "c", "Conv2D", 1, 2, x, w);
	op_set(g, c, "strides", ints(g, 4, 1, 2, 2, 1));
	op_set(g, c, "padding", val_ident(g->arena, "SAME"));
	CU_ASSERT_EQUAL(infer(g, c), 0);
	CU_ASSERT(shape_is(c, 0, "f32[32,112,112,64]"));
	/* 2*32*112*112*64*7*7*3 */
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, c), 7552892928.0, 0.5);
	CU_ASSERT_EQUAL(op_class(g, c), OC_CONV);
	CU_ASSERT_EQUAL(op_split_cat(g, c), SPLIT_CONCAT);
	int dims[8];
	CU_ASSERT_EQUAL(op_split_dims(g, c, dims, 8), 2);
	CU_ASSERT_EQUAL(dims[0], 0);
	CU_ASSERT_EQUAL(dims[1], 3);

	/* The same in NCHW. */
	Op *xn = ph(g, "xn", T(g, DT_F32, 32, 3, 224, 224));
	Op *cn = mk(g, "cn", "Conv2D", 1, 2, xn, w);
	op_set(g, cn, "strides", ints(g, 4, 1, 1, 2, 2));
	op_set(g, cn, "padding", val_ident(g->arena, "SAME"));
	op_set(g, cn, "data_format", val_str(g->arena, "NCHW"));
	CU_ASSERT_EQUAL(infer(g, cn), 0);
	CU_ASSERT(shape_is(cn, 0, "f32[32,64,112,112]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, cn), 7552892928.0, 0.5);
	CU_ASSERT_EQUAL(op_split_dims(g, cn, dims, 8), 2);
	CU_ASSERT_EQUAL(dims[1], 1);

	/* VALID, stride 2: (224 - 7) / 2 + 1 = 109. */
	Op *cv = mk(g, "cv", "Conv2D", 1, 2, x, w);
	op_set(g, cv, "strides", ints(g, 4, 1, 2, 2, 1));
	op_set(g, cv, "padding", val_ident(g->arena, "VALID"));
	CU_ASSERT_EQUAL(infer(g, cv), 0);
	CU_ASSERT(shape_is(cv, 0, "f32[32,109,109,64]"));

	/* VALID, dilation 2, 3x3 on 10x10: effective 5, 10 - 5 + 1 = 6. */
	Op *x2 = ph(g, "x2", T(g, DT_F32, 1, 10, 10, 2));
	Op *w2 = ph(g, "w2", T(g, DT_F32, 3, 3, 2, 5));
	Op *cd = mk(g, "cd", "Conv2D", 1, 2, x2, w2);
	op_set(g, cd, "dilations", ints(g, 4, 1, 2, 2, 1));
	op_set(g, cd, "padding", val_ident(g->arena, "VALID"));
	CU_ASSERT_EQUAL(infer(g, cd), 0);
	CU_ASSERT(shape_is(cd, 0, "f32[1,6,6,5]"));

	/* EXPLICIT: 10 + 1 + 2 - 3 + 1 = 11 rows, 10 + 0 + 0 - 3 + 1 = 8 cols. */
	Op *ce = mk(g, "ce", "Conv2D", 1, 2, x2, w2);
	op_set(g, ce, "padding", val_ident(g->arena, "EXPLICIT"));
	op_set(g, ce, "explicit_paddings", ints(g, 8, 0, 0, 1, 2, 0, 0, 0, 0));
	CU_ASSERT_EQUAL(infer(g, ce), 0);
	CU_ASSERT(shape_is(ce, 0, "f32[1,11,8,5]"));

	/* Channels: the filter wants 3, the input has 2. */
	Op *bad = mk(g, "bad", "Conv2D", 1, 2, x2, w);
	CU_ASSERT_EQUAL(infer(g, bad), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "2 channels"));

	/* Backprops: filter_sizes / input_sizes from Consts. */
	Op *fs = cst(g, "fs", 4, 7, 7, 3, 64);
	Op *bf = mk(g, "bf", "Conv2DBackpropFilter", 1, 3, x, fs, c);
	op_set(g, bf, "strides", ints(g, 4, 1, 2, 2, 1));
	op_set(g, bf, "padding", val_ident(g->arena, "SAME"));
	CU_ASSERT_EQUAL(infer(g, bf), 0);
	CU_ASSERT(shape_is(bf, 0, "f32[7,7,3,64]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, bf), 7552892928.0, 0.5);
	CU_ASSERT_EQUAL(op_split_cat(g, bf), SPLIT_SUM);
	CU_ASSERT_EQUAL(op_split_dims(g, bf, dims, 8), 0);

	Op *is = cst(g, "is", 4, 32, 224, 224, 3);
	Op *bi = mk(g, "bi", "Conv2DBackpropInput", 1, 3, is, w, c);
	op_set(g, bi, "strides", ints(g, 4, 1, 2, 2, 1));
	op_set(g, bi, "padding", val_ident(g->arena, "SAME"));
	CU_ASSERT_EQUAL(infer(g, bi), 0);
	CU_ASSERT(shape_is(bi, 0, "f32[32,224,224,3]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, bi), 7552892928.0, 0.5);
	/* out_backprop inconsistent with the forward shape: stride 1 gives 224. */
	Op *bi2 = mk(g, "bi2", "Conv2DBackpropInput", 1, 3, is, w, c);
	op_set(g, bi2, "padding", val_ident(g->arena, "SAME"));
	CU_ASSERT_EQUAL(infer(g, bi2), -1);
	/* A non-constant input_sizes cannot be inferred. */
	Op *bi3 = mk(g, "bi3", "Conv2DBackpropInput", 1, 3, x, w, c);
	CU_ASSERT_EQUAL(infer(g, bi3), 1);

	/* Depthwise: [1,10,10,2] * [3,3,2,4] SAME -> [1,10,10,8],
	 * FLOPs 2*800*3*3 = 14400. */
	Op *w4 = ph(g, "w4", T(g, DT_F32, 3, 3, 2, 4));
	Op *dw = mk(g, "dw", "DepthwiseConv2dNative", 1, 2, x2, w4);
	op_set(g, dw, "padding", val_ident(g->arena, "SAME"));
	CU_ASSERT_EQUAL(infer(g, dw), 0);
	CU_ASSERT(shape_is(dw, 0, "f32[1,10,10,8]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, dw), 14400.0, 0.5);
	graph_free(g);
}

static void test_pool_bias_bn(void)
{
	Graph *g = graph_new("t");
	Op *x = ph(g, "x", T(g, DT_F32, 32, 112, 112, 64));
	/* MaxPool 3x3 stride 2 SAME: ceil(112/2) = 56;
	 * FLOPs 32*56*56*64*9 = 57802752. */
	Op *p = mk(g, "p", "MaxPool", 1, 1, x);
	op_set(g, p, "ksize", ints(g, 4, 1, 3, 3, 1));
	op_set(g, p, "strides", ints(g, 4, 1, 2, 2, 1));
	op_set(g, p, "padding", val_ident(g->arena, "SAME"));
	CU_ASSERT_EQUAL(infer(g, p), 0);
	CU_ASSERT(shape_is(p, 0, "f32[32,56,56,64]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, p), 57802752.0, 0.5);
	Op *pg = mk(g, "pg", "MaxPoolGrad", 1, 3, x, p, p);
	op_set(g, pg, "ksize", ints(g, 4, 1, 3, 3, 1));
	op_set(g, pg, "strides", ints(g, 4, 1, 2, 2, 1));
	op_set(g, pg, "padding", val_ident(g->arena, "SAME"));
	CU_ASSERT_EQUAL(infer(g, pg), 0);
	CU_ASSERT(shape_is(pg, 0, "f32[32,112,112,64]"));

	Op *b = ph(g, "b", T(g, DT_F32, 64));
	Op *ba = mk(g, "ba", "BiasAdd", 1, 2, x, b);
	CU_ASSERT_EQUAL(infer(g, ba), 0);
	CU_ASSERT(shape_is(ba, 0, "f32[32,112,112,64]"));
	Op *bg = mk(g, "bg", "BiasAddGrad", 1, 1, ba);
	CU_ASSERT_EQUAL(infer(g, bg), 0);
	CU_ASSERT(shape_is(bg, 0, "f32[64]"));
	CU_ASSERT_EQUAL(op_split_cat(g, bg), SPLIT_SUM);
	/* NCHW bias on dim 1: 112 != 64. */
	Op *bn = mk(g, "bn", "BiasAdd", 1, 2, x, b);
	op_set(g, bn, "data_format", val_ident(g->arena, "NCHW"));
	CU_ASSERT_EQUAL(infer(g, bn), -1);

	Op *fbn = mk(g, "fbn", "FusedBatchNormV3", 6, 5, x, b, b, b, b);
	CU_ASSERT_EQUAL(op_num_outputs(g, fbn), 6);
	CU_ASSERT_EQUAL(infer(g, fbn), 0);
	CU_ASSERT_EQUAL(fbn->nout, 6);
	CU_ASSERT(shape_is(fbn, 0, "f32[32,112,112,64]"));
	CU_ASSERT(shape_is(fbn, 1, "f32[64]"));
	CU_ASSERT(shape_is(fbn, 4, "f32[64]"));
	Op *fg = mk(g, "fg", "FusedBatchNormGradV3", 5, 6, x, x, b, b, b, b);
	CU_ASSERT_EQUAL(op_num_outputs(g, fg), 5);
	CU_ASSERT_EQUAL(infer(g, fg), 0);
	CU_ASSERT(shape_is(fg, 0, "f32[32,112,112,64]"));
	CU_ASSERT(shape_is(fg, 2, "f32[64]"));
	CU_ASSERT_EQUAL(op_split_output(g, fg, 0), SPLIT_CONCAT);
	CU_ASSERT_EQUAL(op_split_output(g, fg, 1), SPLIT_SUM);
	CU_ASSERT_EQUAL(op_split_output(g, fg, 3), SPLIT_NONE);
	/* 8 FLOPs per element of x: 8*32*112*112*64 = 205520896. */
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, fbn), 205520896.0, 0.5);
	graph_free(g);
}

static void test_matmul(void)
{
	Graph *g = graph_new("t");
	Op *x = ph(g, "x", T(g, DT_F32, 64, 784));
	Op *w = ph(g, "w", T(g, DT_F32, 784, 256));
	Op *h = mk(g, "h", "MatMul", 1, 2, x, w);
	CU_ASSERT_EQUAL(infer(g, h), 0);
	CU_ASSERT(shape_is(h, 0, "f32[64,256]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, h), 25690112.0, 0.5); /* 2*64*784*256 */
	/* (50176 + 200704 + 16384) * 4 bytes */
	CU_ASSERT_DOUBLE_EQUAL(op_bytes_moved(g, h), 1069056.0, 0.5);
	CU_ASSERT_EQUAL(op_split_cat(g, h), SPLIT_CONCAT);
	int dims[4];
	CU_ASSERT_EQUAL(op_split_dims(g, h, dims, 4), 2);

	/* Weight gradient: a^T [256,64] * dy [64,10] = [256,10],
	 * FLOPs 2*256*10*64 = 327680; the batch is contracted: sum. */
	Op *a = ph(g, "a", T(g, DT_F32, 64, 256));
	Op *dy = ph(g, "dy", T(g, DT_F32, 64, 10));
	Op *gw = mk(g, "gw", "MatMul", 1, 2, a, dy);
	op_set(g, gw, "transpose_a", val_bool(g->arena, true));
	CU_ASSERT_EQUAL(infer(g, gw), 0);
	CU_ASSERT(shape_is(gw, 0, "f32[256,10]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, gw), 327680.0, 0.5);
	CU_ASSERT_EQUAL(op_split_cat(g, gw), SPLIT_SUM);
	CU_ASSERT_EQUAL(op_split_dims(g, gw, dims, 4), 0);

	/* dy [64,10] * w2^T, w2 [256,10] -> [64,256]. */
	Op *w2 = ph(g, "w2", T(g, DT_F32, 256, 10));
	Op *da = mk(g, "da", "MatMul", 1, 2, dy, w2);
	op_set(g, da, "transpose_b", val_bool(g->arena, true));
	CU_ASSERT_EQUAL(infer(g, da), 0);
	CU_ASSERT(shape_is(da, 0, "f32[64,256]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, da), 327680.0, 0.5);

	/* Inconsistent: 784 vs 256. */
	Op *bad = mk(g, "bad", "MatMul", 1, 2, x, w2);
	CU_ASSERT_EQUAL(infer(g, bad), -1);
	CU_ASSERT_STRING_EQUAL(msg, "inner dimensions differ: 784 vs 256");

	/* Unknown batch propagates; a compatible declared type is kept. */
	Op *xu = ph(g, "xu", T(g, DT_F32, DIM_UNKNOWN, 784));
	Op *hu = mk(g, "hu", "MatMul", 1, 2, xu, w);
	CU_ASSERT_EQUAL(infer(g, hu), 0);
	CU_ASSERT(shape_is(hu, 0, "f32[?,256]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, hu), -1.0, 0);
	Op *hd = mk(g, "hd", "MatMul", 1, 2, xu, w);
	hd->out[0] = T(g, DT_F32, 64, 256);
	hd->types_given = true;
	Type out[1];
	CU_ASSERT_EQUAL(op_infer(g, hd, out, 1, g->arena, msg, sizeof msg), 0);
	CU_ASSERT(type_eq(&out[0], &hd->out[0]));
	hd->out[0] = T(g, DT_F32, 64, 255);
	CU_ASSERT_EQUAL(op_infer(g, hd, out, 1, g->arena, msg, sizeof msg), 0);
	CU_ASSERT_FALSE(type_eq(&out[0], &hd->out[0]));

	/* BatchMatMulV2: [2,1,3,4] x [5,4,6] -> [2,5,3,6];
	 * FLOPs 2*(2*5*3*6)*4 = 1440. */
	Op *bx = ph(g, "bx", T(g, DT_F32, 2, 1, 3, 4));
	Op *by = ph(g, "by", T(g, DT_F32, 5, 4, 6));
	Op *bm = mk(g, "bm", "BatchMatMulV2", 1, 2, bx, by);
	CU_ASSERT_EQUAL(infer(g, bm), 0);
	CU_ASSERT(shape_is(bm, 0, "f32[2,5,3,6]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, bm), 1440.0, 0.5);
	Op *byt = ph(g, "byt", T(g, DT_F32, 5, 6, 4));
	Op *bm2 = mk(g, "bm2", "BatchMatMulV2", 1, 2, bx, byt);
	op_set(g, bm2, "adj_y", val_bool(g->arena, true));
	CU_ASSERT_EQUAL(infer(g, bm2), 0);
	CU_ASSERT(shape_is(bm2, 0, "f32[2,5,3,6]"));
	Op *bz = ph(g, "bz", T(g, DT_F32, 3, 4, 6));
	Op *bm3 = mk(g, "bm3", "BatchMatMulV2", 1, 2, bx, bz);
	CU_ASSERT_EQUAL(infer(g, bm3), 0); /* batch [2,1] vs [3]: [2,3] */
	CU_ASSERT(shape_is(bm3, 0, "f32[2,3,3,6]"));
	Op *bq = ph(g, "bq", T(g, DT_F32, 3, 3, 4, 6));
	Op *bm4 = mk(g, "bm4", "BatchMatMulV2", 1, 2, bx, bq);
	CU_ASSERT_EQUAL(infer(g, bm4), -1); /* batch 2 vs 3 */
	graph_free(g);
}

/* RandomUniform: the shape Const gives the output, dtype its type (f32
 * by default); no batch input, so split category none and no split
 * dimensions; a non-float dtype and a negative size are errors. */
static void test_random_uniform(void)
{
	Graph *g = graph_new("t");
	Op *shape = cst(g, "shape", 2, 96, 4096);
	Op *r = mk(g, "r", "RandomUniform", 1, 1, shape);
	op_set(g, r, "seed", val_int(g->arena, 1));
	op_set(g, r, "seed2", val_int(g->arena, 3));
	CU_ASSERT_EQUAL(infer(g, r), 0);
	CU_ASSERT(shape_is(r, 0, "f32[96,4096]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, r), 96.0 * 4096, 0);
	CU_ASSERT_EQUAL(op_split_cat(g, r), SPLIT_NONE);
	int dims[4];
	CU_ASSERT_EQUAL(op_split_dims(g, r, dims, 4), 0);
	Op *r64 = mk(g, "r64", "RandomUniform", 1, 1, shape);
	op_set(g, r64, "dtype", val_str(g->arena, "f64"));
	CU_ASSERT_EQUAL(infer(g, r64), 0);
	CU_ASSERT(shape_is(r64, 0, "f64[96,4096]"));
	Op *ri = mk(g, "ri", "RandomUniform", 1, 1, shape);
	op_set(g, ri, "dtype", val_str(g->arena, "i32"));
	CU_ASSERT_EQUAL(infer(g, ri), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "floating-point"));
	Op *neg = cst(g, "neg", 2, 4, -1);
	Op *rn = mk(g, "rn", "RandomUniform", 1, 1, neg);
	CU_ASSERT_EQUAL(infer(g, rn), -1);
	Op *rx = mk(g, "rx", "RandomUniform", 1, 1, r);   /* shape not a Const */
	CU_ASSERT_EQUAL(infer(g, rx), 1);
	graph_free(g);
}

static void test_data_movement(void)
{
	Graph *g = graph_new("t");
	Op *a = ph(g, "a", T(g, DT_F32, 64, 10));
	Op *b = ph(g, "b", T(g, DT_F32, 64, 20));
	Op *ax = cst1(g, "ax", 1);
	Op *cat = mk(g, "cat", "ConcatV2", 1, 3, a, b, ax);
	CU_ASSERT_EQUAL(infer(g, cat), 0);
	CU_ASSERT(shape_is(cat, 0, "f32[64,30]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, cat), 0.0, 0);
	CU_ASSERT_EQUAL(op_split_cat(g, cat), SPLIT_CONCAT);
	int dims[4];
	CU_ASSERT_EQUAL(op_split_dims(g, cat, dims, 4), 1);
	CU_ASSERT_EQUAL(dims[0], 0);
	Op *axm = cst1(g, "axm", -1);
	Op *cat2 = mk(g, "cat2", "ConcatV2", 1, 3, a, b, axm);
	CU_ASSERT_EQUAL(infer(g, cat2), 0);
	CU_ASSERT(shape_is(cat2, 0, "f32[64,30]"));
	Op *cat3 = mk(g, "cat3", "ConcatV2", 1, 3, a, b, a); /* axis not a Const */
	CU_ASSERT_EQUAL(infer(g, cat3), 1);
	Op *ax0 = cst1(g, "ax0", 0);
	Op *cat4 = mk(g, "cat4", "ConcatV2", 1, 3, a, b, ax0); /* 10 vs 20 */
	CU_ASSERT_EQUAL(infer(g, cat4), -1);

	/* Split [8,12] into 4 along 1: 4 x [8,3]. */
	Op *x = ph(g, "x", T(g, DT_F32, 8, 12));
	Op *sp = mk(g, "sp", "Split", 4, 2, ax, x);
	op_set(g, sp, "num_split", val_int(g->arena, 4));
	CU_ASSERT_EQUAL(op_num_outputs(g, sp), 4);
	CU_ASSERT_EQUAL(infer(g, sp), 0);
	CU_ASSERT(shape_is(sp, 0, "f32[8,3]"));
	CU_ASSERT(shape_is(sp, 3, "f32[8,3]"));
	Op *sp5 = mk(g, "sp5", "Split", 5, 2, ax, x);
	op_set(g, sp5, "num_split", val_int(g->arena, 5));
	CU_ASSERT_EQUAL(infer(g, sp5), -1); /* 12 % 5 */
	/* SplitV [8,12] by [-1, 2] along 1: [8,10], [8,2]. */
	Op *sz = cst(g, "sz", 2, -1, 2);
	Op *sv = mk(g, "sv", "SplitV", 2, 3, x, sz, ax);
	CU_ASSERT_EQUAL(op_num_outputs(g, sv), 2);
	CU_ASSERT_EQUAL(infer(g, sv), 0);
	CU_ASSERT(shape_is(sv, 0, "f32[8,10]"));
	CU_ASSERT(shape_is(sv, 1, "f32[8,2]"));

	/* Reshape [64,28,28,1] to [-1,784]: 64*784 = 50176 elements. */
	Op *img = ph(g, "img", T(g, DT_F32, 64, 28, 28, 1));
	Op *shp = cst(g, "shp", 2, -1, 784);
	Op *rs = mk(g, "rs", "Reshape", 1, 2, img, shp);
	CU_ASSERT_EQUAL(infer(g, rs), 0);
	CU_ASSERT(shape_is(rs, 0, "f32[64,784]"));
	CU_ASSERT_EQUAL(op_split_dims(g, rs, dims, 4), 1);
	Op *shb = cst(g, "shb", 2, -1, 785);
	Op *rb = mk(g, "rb", "Reshape", 1, 2, img, shb);
	CU_ASSERT_EQUAL(infer(g, rb), -1);
	Op *shc = cst(g, "shc", 2, -1, -1);
	Op *rc = mk(g, "rc", "Reshape", 1, 2, img, shc);
	CU_ASSERT_EQUAL(infer(g, rc), -1);
	/* The shape from a Shape op of a known type. */
	Op *sh = mk(g, "sh", "Shape", 1, 1, img);
	CU_ASSERT_EQUAL(infer(g, sh), 0);
	CU_ASSERT(shape_is(sh, 0, "i32[4]"));
	Op *rd = mk(g, "rd", "Reshape", 1, 2, rs, sh);
	CU_ASSERT_EQUAL(infer(g, rd), 0);
	CU_ASSERT(shape_is(rd, 0, "f32[64,28,28,1]"));

	/* Transpose by [1,0]: [64,10] -> [10,64]; moves the batch: none. */
	Op *perm = cst(g, "perm", 2, 1, 0);
	Op *tr = mk(g, "tr", "Transpose", 1, 2, a, perm);
	CU_ASSERT_EQUAL(infer(g, tr), 0);
	CU_ASSERT(shape_is(tr, 0, "f32[10,64]"));
	CU_ASSERT_EQUAL(op_split_cat(g, tr), SPLIT_NONE);

	/* ExpandDims at -1, Squeeze it back; Pad; Slice; Tile; GatherV2. */
	Op *ed = mk(g, "ed", "ExpandDims", 1, 2, a, axm);
	CU_ASSERT_EQUAL(infer(g, ed), 0);
	CU_ASSERT(shape_is(ed, 0, "f32[64,10,1]"));
	Op *sq = mk(g, "sq", "Squeeze", 1, 1, ed);
	CU_ASSERT_EQUAL(infer(g, sq), 0);
	CU_ASSERT(shape_is(sq, 0, "f32[64,10]"));
	Op *pads = cst(g, "pads", 4, 0, 0, 1, 2);
	Op *pd = mk(g, "pd", "Pad", 1, 2, a, pads);
	CU_ASSERT_EQUAL(infer(g, pd), 0);
	CU_ASSERT(shape_is(pd, 0, "f32[64,13]"));
	CU_ASSERT_EQUAL(op_split_dims(g, pd, dims, 4), 1);
	Op *beg = cst(g, "beg", 2, 0, 2);
	Op *siz = cst(g, "siz", 2, -1, 5);
	Op *sl = mk(g, "sl", "Slice", 1, 3, a, beg, siz);
	CU_ASSERT_EQUAL(infer(g, sl), 0);
	CU_ASSERT(shape_is(sl, 0, "f32[64,5]"));
	Op *mul = cst(g, "mul", 2, 1, 3);
	Op *ti = mk(g, "ti", "Tile", 1, 2, a, mul);
	CU_ASSERT_EQUAL(infer(g, ti), 0);
	CU_ASSERT(shape_is(ti, 0, "f32[64,30]"));
	Op *emb = ph(g, "emb", T(g, DT_F32, 1000, 16));
	Op *ids = ph(g, "ids", T(g, DT_I64, 64, 5));
	Op *ga = mk(g, "ga", "GatherV2", 1, 3, emb, ids, ax0);
	CU_ASSERT_EQUAL(infer(g, ga), 0);
	CU_ASSERT(shape_is(ga, 0, "f32[64,5,16]"));
	graph_free(g);
}

static void test_reduce_and_loss(void)
{
	Graph *g = graph_new("t");
	Op *x = ph(g, "x", T(g, DT_F32, 8, 16, 4));
	Op *one = cst(g, "one", 1, 1);
	Op *s = mk(g, "s", "Sum", 1, 2, x, one);
	op_set(g, s, "keep_dims", val_bool(g->arena, true));
	CU_ASSERT_EQUAL(infer(g, s), 0);
	CU_ASSERT(shape_is(s, 0, "f32[8,1,4]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, s), 512.0, 0); /* 8*16*4 */
	CU_ASSERT_EQUAL(op_split_cat(g, s), SPLIT_CONCAT);
	int dims[4];
	CU_ASSERT_EQUAL(op_split_dims(g, s, dims, 4), 2); /* 0 and 2 */
	CU_ASSERT_EQUAL(dims[1], 2);
	Op *s2 = mk(g, "s2", "Sum", 1, 2, x, one);
	CU_ASSERT_EQUAL(infer(g, s2), 0);
	CU_ASSERT(shape_is(s2, 0, "f32[8,4]"));
	Op *zero = cst1(g, "zero", 0);
	Op *s3 = mk(g, "s3", "Sum", 1, 2, x, zero);
	CU_ASSERT_EQUAL(infer(g, s3), 0);
	CU_ASSERT(shape_is(s3, 0, "f32[16,4]"));
	CU_ASSERT_EQUAL(op_split_cat(g, s3), SPLIT_SUM);
	Op *m = mk(g, "m", "Mean", 1, 2, x, zero);
	CU_ASSERT_EQUAL(infer(g, m), 0);
	CU_ASSERT_EQUAL(op_split_cat(g, m), SPLIT_NONE);
	Op *three = cst1(g, "three", 3);
	Op *s4 = mk(g, "s4", "Sum", 1, 2, x, three);
	CU_ASSERT_EQUAL(infer(g, s4), -1);

	/* gir's SoftmaxCrossEntropyWithLogits(%y, %labels[64]). */
	Op *y = ph(g, "y", T(g, DT_F32, 64, 10));
	Op *lab = ph(g, "lab", T(g, DT_I64, 64));
	Op *ce = mk(g, "ce", "SoftmaxCrossEntropyWithLogits", 2, 2, y, lab);
	CU_ASSERT_EQUAL(infer(g, ce), 0);
	CU_ASSERT(shape_is(ce, 0, "f32[64]"));
	CU_ASSERT(shape_is(ce, 1, "f32[64,10]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, ce), 8.0 * 640, 0);
	Op *lab2 = ph(g, "lab2", T(g, DT_I64, 32));
	Op *ce2 = mk(g, "ce2", "SparseSoftmaxCrossEntropyWithLogits", 2, 2, y, lab2);
	CU_ASSERT_EQUAL(infer(g, ce2), -1);

	/* Element-wise with broadcasting: [64,10] + [10] -> [64,10]. */
	Op *bias = ph(g, "bias", T(g, DT_F32, 10));
	Op *ad = mk(g, "ad", "AddV2", 1, 2, y, bias);
	CU_ASSERT_EQUAL(infer(g, ad), 0);
	CU_ASSERT(shape_is(ad, 0, "f32[64,10]"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, ad), 640.0, 0);
	CU_ASSERT_EQUAL(op_split_dims(g, ad, dims, 4), 2);
	Op *ad2 = mk(g, "ad2", "Mul", 1, 2, y, lab2);
	CU_ASSERT_EQUAL(infer(g, ad2), -1); /* i64 vs f32 */
	Op *sm = mk(g, "sm", "Softmax", 1, 1, y);
	CU_ASSERT_EQUAL(infer(g, sm), 0);
	CU_ASSERT_EQUAL(op_split_dims(g, sm, dims, 4), 1); /* not the classes */
	CU_ASSERT_EQUAL(dims[0], 0);
	graph_free(g);
}

static void test_apply_and_unknown(void)
{
	Graph *g = graph_new("t");
	Op *w = graph_add_op(g, "w", "VariableV2", 0, 1);
	w->out[0] = T(g, DT_F32, 784, 256);
	w->types_given = true;
	Op *gw = ph(g, "gw", T(g, DT_F32, 784, 256));
	/* gir's shorthand: ApplyGradientDescent(%w, %gw) : () */
	Op *u = mk(g, "u", "ApplyGradientDescent", 0, 2, w, gw);
	u->types_given = true;
	CU_ASSERT_EQUAL(op_num_outputs(g, u), 0);
	CU_ASSERT_EQUAL(op_split_cat(g, u), SPLIT_NONE);
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, u), 2.0 * 784 * 256, 0);
	Type out[1];
	CU_ASSERT_EQUAL(op_infer(g, u, out, 0, g->arena, msg, sizeof msg), 0);
	/* TF's form with one output, the variable. */
	Op *lr = cst1(g, "lr", 1);
	Op *u2 = mk(g, "u2", "ApplyGradientDescent", 1, 3, w, lr, gw);
	CU_ASSERT_EQUAL(op_num_outputs(g, u2), 1);
	CU_ASSERT_EQUAL(infer(g, u2), 0);
	CU_ASSERT(shape_is(u2, 0, "f32[784,256]"));
	Op *gb = ph(g, "gb", T(g, DT_F32, 784, 10));
	Op *u3 = mk(g, "u3", "ApplyGradientDescent", 0, 2, w, gb);
	CU_ASSERT_EQUAL(op_infer(g, u3, out, 0, g->arena, msg, sizeof msg), -1);
	CU_ASSERT_EQUAL(op_split_cat(g, w), SPLIT_NONE);

	/* Unknown op types are opaque. */
	Op *c = mk(g, "c", "MyFancyOp", 1, 1, gw);
	CU_ASSERT_EQUAL(c->opcode, OPC_UNKNOWN);
	CU_ASSERT_EQUAL(op_num_outputs(g, c), -1);
	CU_ASSERT_EQUAL(op_infer(g, c, out, 1, g->arena, msg, sizeof msg), 1);
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, c), -1.0, 0);
	CU_ASSERT_EQUAL(op_class(g, c), OC_OTHER);
	CU_ASSERT_EQUAL(op_split_cat(g, c), SPLIT_NONE);
	int dims[4];
	CU_ASSERT_EQUAL(op_split_dims(g, c, dims, 4), 0);
	/* ... until the user teaches pcc: @flops, @split, @split_dims. */
	op_set_ann(g, c, ANN_FLOPS, val_int(g->arena, 1234));
	op_set_ann(g, c, ANN_SPLIT, val_ident(g->arena, "concat"));
	op_set_ann(g, c, ANN_SPLIT_DIMS, ints(g, 1, 1));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, c), 1234.0, 0);
	CU_ASSERT_EQUAL(op_split_cat(g, c), SPLIT_CONCAT);
	CU_ASSERT_EQUAL(op_split_dims(g, c, dims, 4), 1);
	CU_ASSERT_EQUAL(dims[0], 1);
	/* @flops and @split override the table for known ops too. */
	Op *r = mk(g, "r", "Relu", 1, 1, gw);
	CU_ASSERT_EQUAL(infer(g, r), 0);
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, r), 784.0 * 256, 0);
	op_set_ann(g, r, ANN_FLOPS, val_float(g->arena, 5.5));
	op_set_ann(g, r, ANN_SPLIT, val_ident(g->arena, "none"));
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, r), 5.5, 0);
	CU_ASSERT_EQUAL(op_split_cat(g, r), SPLIT_NONE);
	CU_ASSERT_EQUAL(op_split_dims(g, r, dims, 4), 0);

	/* Placeholder from attributes; Identity is a zero-FLOP no-op. */
	Op *p = graph_add_op(g, "p", "Placeholder", 0, 1);
	op_set(g, p, "shape", ints(g, 2, -1, 3));
	op_set(g, p, "dtype", val_ident(g->arena, "DT_FLOAT"));
	CU_ASSERT_EQUAL(infer(g, p), 0);
	CU_ASSERT(shape_is(p, 0, "f32[?,3]"));
	Op *q = graph_add_op(g, "q", "Placeholder", 0, 1);
	CU_ASSERT_EQUAL(infer(g, q), 1);
	Op *id = mk(g, "id", "Identity", 1, 1, gw);
	CU_ASSERT_EQUAL(infer(g, id), 0);
	CU_ASSERT_DOUBLE_EQUAL(op_flops(g, id), 0.0, 0);
	graph_free(g);
}

void suite_ops(void)
{
	CU_pSuite s = CU_add_suite("ops", NULL, NULL);
	CU_add_test(s, "table, lookup, split category names", test_table);
	CU_add_test(s, "Conv2D NHWC/NCHW/VALID/EXPLICIT, backprops, depthwise",
		    test_conv2d);
	CU_add_test(s, "pooling, BiasAdd, FusedBatchNorm", test_pool_bias_bn);
	CU_add_test(s, "MatMul, BatchMatMulV2, unknown dims", test_matmul);
	CU_add_test(s, "Concat, Split, Reshape, Transpose, ...", test_data_movement);
	CU_add_test(s, "RandomUniform", test_random_uniform);
	CU_add_test(s, "reductions, losses, broadcasting", test_reduce_and_loss);
	CU_add_test(s, "Apply*, unknown ops, annotations", test_apply_and_unknown);
}
