/* test_rt_grad.c — the C runtime's gradient kernels against central
 * finite differences of its forward kernels: for L = Σ w·f(x) with fixed
 * random weights w (the upstream gradient), (L(x+ε) - L(x-ε)) / 2ε must
 * match the backprop kernel given w, element by element.  Covers MatMul's
 * four transpose cases, Conv2D's backprops (SAME, VALID, strides,
 * dilations, EXPLICIT, NHWC and NCHW), DepthwiseConv2dNative's backprops,
 * FusedBatchNormGradV3 (training and inference), MaxPoolGrad, AvgPoolGrad,
 * BiasAddGrad, ReluGrad, TanhGrad, SigmoidGrad and both cross-entropies;
 * then the whole backward pass of tests/ctests/mlp.gir, cnn.gir and
 * bncnn.gir (the graphs the end-to-end tests train), written with the
 * same kernels. */
#include "rt_helpers.h"

#include <string.h>

#define FD_EPS 1e-3             /* one kernel */
#define FD_EPS_GRAPH 3e-4       /* a whole graph: fewer ReLU kinks within ±ε */
#define FD_TOL 2e-3             /* |fd - analytic| / max(1, |analytic|) */

/* U(lo, hi) from the seed stream of name. */
static void fill(pcc_buf *b, const char *name, double lo, double hi)
{
	int64_t n = pcc_buf_numel(b);
	float *v = malloc(sizeof(float) * (size_t)n);
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)(lo + (hi - lo) * (pcc_seed_uniform(name, 1, (uint64_t)i) + 1) / 2);
	pcc_buf_write(b, v);
	free(v);
}

/* Distinct values 0.1 apart (a permutation), so no maximum changes
 * within ±ε. */
static void fill_distinct(pcc_buf *b)
{
	int64_t n = pcc_buf_numel(b);
	float *v = malloc(sizeof(float) * (size_t)n);
	for (int64_t i = 0; i < n; i++)
		v[i] = 0.1f * (float)((i * 7919) % n) - 0.05f * (float)n;
	pcc_buf_write(b, v);
	free(v);
}

/* A loss of the current inputs; *sig identifies the piecewise-linear
 * region (ReLU masks, pooling maxima) when the loss has kinks. */
typedef double LossFn(void *ctx, uint64_t *sig);

/* Checks the analytic gradient g of x against central differences.
 * Elements whose ±ε probes leave the region of x are skipped; at most
 * one in ten may be. */
static void fd_check(pcc_buf *x, const float *g, LossFn *loss, void *ctx,
		     double eps)
{
	int64_t n = pcc_buf_numel(x), skipped = 0, bad = 0;
	float *v = get(x);
	uint64_t s0, sp, sm;
	loss(ctx, &s0);
	for (int64_t i = 0; i < n; i++) {
		float keep = v[i];
		v[i] = keep + (float)eps;
		pcc_buf_write(x, v);
		double lp = loss(ctx, &sp);
		v[i] = keep - (float)eps;
		pcc_buf_write(x, v);
		double lm = loss(ctx, &sm);
		v[i] = keep;
		pcc_buf_write(x, v);
		if (sp != s0 || sm != s0) {
			skipped++;
			continue;
		}
		double fd = (lp - lm) / (2 * eps);
		double scale = fabs(g[i]) > 1 ? fabs(g[i]) : 1;
		if (fabs(fd - g[i]) > FD_TOL * scale && bad++ < 3)
			fprintf(stderr, "\n  element %lld: finite difference %.6g, "
				"gradient %.6g", (long long)i, fd, g[i]);
	}
	CU_ASSERT_EQUAL(bad, 0);
	if (skipped * 10 > n)
		fprintf(stderr, "\n  %lld of %lld elements change region within "
			"±ε", (long long)skipped, (long long)n);
	CU_ASSERT(skipped * 10 <= n);
	free(v);
}

/* ---- one kernel: L = Σ_j Σ_i w_j[i] out_j[i] ------------------------------ */

typedef struct Fwd {
	pcc_rt *rt;
	pcc_kernel k;
	const pcc_attrs *a;
	int nin, nout;
	pcc_buf *in[6], *out[6];
	float *w[6];                /* NULL: that output does not count */
} Fwd;

static double fwd_loss(void *ctx, uint64_t *sig)
{
	Fwd *f = ctx;
	run(f->rt, f->k, f->a, f->nin, f->in, f->nout, f->out);
	double l = 0;
	for (int j = 0; j < f->nout; j++) {
		if (!f->w[j])
			continue;
		float *v = get(f->out[j]);
		for (int64_t i = 0; i < pcc_buf_numel(f->out[j]); i++)
			l += (double)f->w[j][i] * v[i];
		free(v);
	}
	*sig = 0;
	return l;
}

/* Random weights for output j, also written to buffer dy if given. */
static float *weights(Fwd *f, int j, pcc_buf *dy)
{
	int64_t n = pcc_buf_numel(f->out[j]);
	pcc_buf *tmp = ten(f->rt, 1, DIMS(n), NULL);
	fill(tmp, "weights", -1, 1);
	f->w[j] = get(tmp);
	if (dy)
		pcc_buf_write(dy, f->w[j]);
	return f->w[j];
}

static void fd_input(Fwd *f, int i, pcc_buf *grad)
{
	float *g = get(grad);
	fd_check(f->in[i], g, fwd_loss, f, FD_EPS);
	free(g);
}

/* TF's MatMul gradients for each transpose case. */
static void test_matmul_grad(void)
{
	for (int c = 0; c < 4; c++) {
		int ta = c & 1, tb = c >> 1;
		pcc_rt *rt = rt1();
		pcc_attrs a = {.transpose_a = ta, .transpose_b = tb};
		pcc_buf *A = ten(rt, 2, ta ? DIMS(4, 3) : DIMS(3, 4), NULL);
		pcc_buf *B = ten(rt, 2, tb ? DIMS(2, 4) : DIMS(4, 2), NULL);
		fill(A, "A", -1, 1);
		fill(B, "B", -1, 1);
		Fwd f = {rt, PCC_K_MatMul, &a, 2, 1, {A, B}, {ten(rt, 2, DIMS(3, 2), NULL)}, {0}};
		pcc_buf *dy = ten(rt, 2, DIMS(3, 2), NULL);
		weights(&f, 0, dy);
		pcc_buf *dA = ten(rt, 2, ta ? DIMS(4, 3) : DIMS(3, 4), NULL);
		pcc_buf *dB = ten(rt, 2, tb ? DIMS(2, 4) : DIMS(4, 2), NULL);
		/* dA = dY B^T, or B dY^T; dB = A^T dY, or dY^T A. */
		if (!ta)
			run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_b = !tb}, 2,
			    BUFS(dy, B), 1, BUFS(dA));
		else
			run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = tb, .transpose_b = 1},
			    2, BUFS(B, dy), 1, BUFS(dA));
		if (!tb)
			run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = !ta}, 2,
			    BUFS(A, dy), 1, BUFS(dB));
		else
			run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = 1, .transpose_b = ta},
			    2, BUFS(dy, A), 1, BUFS(dB));
		fd_input(&f, 0, dA);
		fd_input(&f, 1, dB);
		free(f.w[0]);
		pcc_rt_free(rt);
	}
}

/* Conv2D, or DepthwiseConv2dNative (dw), and its two backprops. */
static void conv_case(const int64_t *xd, const int64_t *fd, const int64_t *yd,
		      pcc_attrs a, bool dw)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 4, xd, NULL), *k = ten(rt, 4, fd, NULL);
	fill(x, "x", -1, 1);
	fill(k, "k", -1, 1);
	Fwd f = {rt, dw ? PCC_K_DepthwiseConv2dNative : PCC_K_Conv2D, &a, 2, 1,
		 {x, k}, {ten(rt, 4, yd, NULL)}, {0}};
	pcc_buf *dy = ten(rt, 4, yd, NULL);
	weights(&f, 0, dy);
	pcc_buf *dx = ten(rt, 4, xd, NULL), *dk = ten(rt, 4, fd, NULL);
	run(rt, dw ? PCC_K_DepthwiseConv2dNativeBackpropInput
		   : PCC_K_Conv2DBackpropInput, &a, 2, BUFS(k, dy), 1, BUFS(dx));
	run(rt, dw ? PCC_K_DepthwiseConv2dNativeBackpropFilter
		   : PCC_K_Conv2DBackpropFilter, &a, 2, BUFS(x, dy), 1, BUFS(dk));
	fd_input(&f, 0, dx);
	fd_input(&f, 1, dk);
	free(f.w[0]);
	pcc_rt_free(rt);
}

static void test_conv_grad(void)
{
	/* NHWC, SAME, stride 1 */
	conv_case(DIMS(2, 5, 5, 3), DIMS(3, 3, 3, 2), DIMS(2, 5, 5, 2),
		  (pcc_attrs){.padding = PCC_PAD_SAME}, false);
	/* NHWC, VALID, strides 2: (6-2)/2+1 = 3, (7-3)/2+1 = 3 */
	conv_case(DIMS(1, 6, 7, 2), DIMS(2, 3, 2, 3), DIMS(1, 3, 3, 3),
		  (pcc_attrs){.strides = {2, 2}}, false);
	/* NCHW, SAME, strides 2: ceil(5/2) = 3, ceil(6/2) = 3 */
	conv_case(DIMS(1, 3, 5, 6), DIMS(3, 2, 3, 2), DIMS(1, 2, 3, 3),
		  (pcc_attrs){.nchw = 1, .padding = PCC_PAD_SAME, .strides = {2, 2}},
		  false);
	/* EXPLICIT pads (1, 2, 0, 1), dilation 2 (window 3):
	 * 5+3-3+1 = 6, 5+1-3+1 = 4 */
	conv_case(DIMS(1, 5, 5, 1), DIMS(2, 2, 1, 2), DIMS(1, 6, 4, 2),
		  (pcc_attrs){.padding = PCC_PAD_EXPLICIT, .pads = {1, 2, 0, 1},
			      .dilations = {2, 2}}, false);
	/* SAME with dilation 2 and stride 2, NCHW */
	conv_case(DIMS(2, 2, 6, 5), DIMS(3, 3, 2, 2), DIMS(2, 2, 3, 3),
		  (pcc_attrs){.nchw = 1, .padding = PCC_PAD_SAME, .strides = {2, 2},
			      .dilations = {2, 2}}, false);
}

/* Depthwise: filter [kh, kw, C, multiplier], OC = C · multiplier. */
static void test_dwconv_grad(void)
{
	/* NHWC, SAME, stride 1, multiplier 2 */
	conv_case(DIMS(2, 5, 5, 3), DIMS(3, 3, 3, 2), DIMS(2, 5, 5, 6),
		  (pcc_attrs){.padding = PCC_PAD_SAME}, true);
	/* NCHW, VALID, strides 2, multiplier 1: (6-2)/2+1 = 3, (7-3)/2+1 = 3 */
	conv_case(DIMS(1, 2, 6, 7), DIMS(2, 3, 2, 1), DIMS(1, 2, 3, 3),
		  (pcc_attrs){.nchw = 1, .strides = {2, 2}}, true);
	/* NCHW, EXPLICIT pads (0, 1, 0, 1), stride 2 (MobileNetV2's downsampling
	 * layers): (5+1-3)/2+1 = 2, (6+1-3)/2+1 = 3; multiplier 3 */
	conv_case(DIMS(1, 2, 5, 6), DIMS(3, 3, 2, 3), DIMS(1, 6, 2, 3),
		  (pcc_attrs){.nchw = 1, .padding = PCC_PAD_EXPLICIT,
			      .pads = {0, 1, 0, 1}, .strides = {2, 2}}, true);
	/* NHWC, SAME, dilation 2 */
	conv_case(DIMS(1, 6, 5, 2), DIMS(2, 2, 2, 2), DIMS(1, 6, 5, 4),
		  (pcc_attrs){.padding = PCC_PAD_SAME, .dilations = {2, 2}}, true);
}

/* FusedBatchNormV3 against FusedBatchNormGradV3: L = Σ w·y, by x, scale
 * and offset; training (statistics of the batch: every x moves the mean
 * and variance) and inference (the given statistics), NHWC and NCHW. */
static void test_batchnorm_grad(void)
{
	for (int c = 0; c < 4; c++) {
		int nchw = c & 1, inference = c >> 1;
		pcc_rt *rt = rt1();
		pcc_attrs a = {.nchw = nchw, .epsilon = 1e-3, .avg_factor = 0.1,
			       .inference = inference};
		const int64_t *xd = nchw ? DIMS(2, 3, 3, 2) : DIMS(2, 3, 2, 3);
		pcc_buf *x = ten(rt, 4, xd, NULL), *v[4];
		fill(x, "x", -2, 2);
		for (int i = 0; i < 4; i++)
			v[i] = ten(rt, 1, DIMS(3), NULL);
		fill(v[0], "scale", 0.5, 2);
		fill(v[1], "offset", -1, 1);
		fill(v[2], "mean", -0.5, 0.5);
		fill(v[3], "variance", 0.5, 2);
		Fwd f = {rt, PCC_K_FusedBatchNormV3, &a, 5, 6,
			 {x, v[0], v[1], v[2], v[3]}, {ten(rt, 4, xd, NULL)}, {0}};
		for (int i = 1; i < 5; i++)
			f.out[i] = ten(rt, 1, DIMS(3), NULL);
		f.out[5] = ten(rt, 1, DIMS(0), NULL);
		pcc_buf *dy = ten(rt, 4, xd, NULL);
		weights(&f, 0, dy);
		run(rt, f.k, &a, 5, f.in, 6, f.out);
		pcc_buf *g[5] = {ten(rt, 4, xd, NULL), ten(rt, 1, DIMS(3), NULL),
				 ten(rt, 1, DIMS(3), NULL), f.out[5], f.out[5]};
		run(rt, PCC_K_FusedBatchNormGradV3, &a, 6,
		    BUFS(dy, x, v[0], f.out[3], f.out[4], f.out[5]), 5, g);
		fd_input(&f, 0, g[0]);
		fd_input(&f, 1, g[1]);
		fd_input(&f, 2, g[2]);
		free(f.w[0]);
		pcc_rt_free(rt);
	}
}

static void pool_case(pcc_kernel k, const int64_t *xd, const int64_t *yd,
		      pcc_attrs a)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 4, xd, NULL);
	fill_distinct(x);
	Fwd f = {rt, k, &a, 1, 1, {x}, {ten(rt, 4, yd, NULL)}, {0}};
	pcc_buf *dy = ten(rt, 4, yd, NULL), *dx = ten(rt, 4, xd, NULL);
	weights(&f, 0, dy);
	run(rt, k, &a, 1, BUFS(x), 1, f.out);
	if (k == PCC_K_MaxPool)
		run(rt, PCC_K_MaxPoolGrad, &a, 3, BUFS(x, f.out[0], dy), 1, BUFS(dx));
	else
		run(rt, PCC_K_AvgPoolGrad, &a, 1, BUFS(dy), 1, BUFS(dx));
	fd_input(&f, 0, dx);
	free(f.w[0]);
	pcc_rt_free(rt);
}

static void test_pool_grad(void)
{
	pool_case(PCC_K_MaxPool, DIMS(1, 4, 4, 3), DIMS(1, 2, 2, 3),
		  (pcc_attrs){.ksize = {2, 2}, .strides = {2, 2}});
	/* overlapping 3x3 windows, stride 2, SAME: ceil(5/2) = 3 */
	pool_case(PCC_K_MaxPool, DIMS(1, 5, 5, 2), DIMS(1, 3, 3, 2),
		  (pcc_attrs){.ksize = {3, 3}, .strides = {2, 2}, .padding = PCC_PAD_SAME});
	pool_case(PCC_K_MaxPool, DIMS(2, 2, 5, 5), DIMS(2, 2, 3, 3),
		  (pcc_attrs){.nchw = 1, .ksize = {3, 3}, .strides = {2, 2},
			      .padding = PCC_PAD_SAME});
	pool_case(PCC_K_AvgPool, DIMS(1, 5, 5, 2), DIMS(1, 3, 3, 2),
		  (pcc_attrs){.ksize = {3, 3}, .strides = {2, 2}, .padding = PCC_PAD_SAME});
	pool_case(PCC_K_AvgPool, DIMS(1, 2, 6, 4), DIMS(1, 2, 3, 2),
		  (pcc_attrs){.nchw = 1, .ksize = {2, 2}, .strides = {2, 2}});
}

static void test_bias_grad(void)
{
	for (int nchw = 0; nchw < 2; nchw++) {
		pcc_rt *rt = rt1();
		pcc_attrs a = {.nchw = nchw};
		const int64_t *xd = nchw ? DIMS(2, 3, 2, 2) : DIMS(2, 2, 2, 3);
		pcc_buf *x = ten(rt, 4, xd, NULL), *b = ten(rt, 1, DIMS(3), NULL);
		fill(x, "x", -1, 1);
		fill(b, "b", -1, 1);
		Fwd f = {rt, PCC_K_BiasAdd, &a, 2, 1, {x, b}, {ten(rt, 4, xd, NULL)}, {0}};
		pcc_buf *dy = ten(rt, 4, xd, NULL), *db = ten(rt, 1, DIMS(3), NULL);
		weights(&f, 0, dy);
		run(rt, PCC_K_BiasAddGrad, &a, 1, BUFS(dy), 1, BUFS(db));
		fd_input(&f, 1, db);
		fd_input(&f, 0, dy);
		free(f.w[0]);
		pcc_rt_free(rt);
	}
}

/* Relu (inputs kept 0.1 away from its kink), Tanh, Sigmoid. */
static void test_activation_grad(void)
{
	static const struct { pcc_kernel fwd, grad; bool on_y; } k[] = {
		{PCC_K_Relu, PCC_K_ReluGrad, false},
		{PCC_K_Tanh, PCC_K_TanhGrad, true},
		{PCC_K_Sigmoid, PCC_K_SigmoidGrad, true},
	};
	for (size_t c = 0; c < sizeof k / sizeof k[0]; c++) {
		pcc_rt *rt = rt1();
		pcc_buf *x = ten(rt, 2, DIMS(4, 5), NULL);
		fill(x, "x", -2, 2);
		float *v = get(x);
		for (int i = 0; i < 20; i++)
			v[i] += v[i] < 0 ? -0.1f : 0.1f;
		pcc_buf_write(x, v);
		free(v);
		Fwd f = {rt, k[c].fwd, NULL, 1, 1, {x}, {ten(rt, 2, DIMS(4, 5), NULL)}, {0}};
		pcc_buf *dy = ten(rt, 2, DIMS(4, 5), NULL), *dx = ten(rt, 2, DIMS(4, 5), NULL);
		weights(&f, 0, dy);
		run(rt, k[c].fwd, NULL, 1, BUFS(x), 1, f.out);
		/* TanhGrad and SigmoidGrad take (y, dy); ReluGrad (dy, x). */
		if (k[c].on_y)
			run(rt, k[c].grad, NULL, 2, BUFS(f.out[0], dy), 1, BUFS(dx));
		else
			run(rt, k[c].grad, NULL, 2, BUFS(dy, x), 1, BUFS(dx));
		fd_input(&f, 0, dx);
		free(f.w[0]);
		pcc_rt_free(rt);
	}
}

/* L = Σ loss: its gradient is the kernels' backprop output. */
static void test_xent_grad(void)
{
	for (int dense = 0; dense < 2; dense++) {
		pcc_rt *rt = rt1();
		pcc_buf *x = ten(rt, 2, DIMS(4, 5), NULL);
		fill(x, "logits", -3, 3);
		pcc_buf *lab;
		if (dense) {
			/* rows of probabilities */
			lab = ten(rt, 2, DIMS(4, 5), NULL);
			fill(lab, "p", 0, 1);
			float *p = get(lab);
			for (int r = 0; r < 4; r++) {
				float s = 0;
				for (int j = 0; j < 5; j++)
					s += p[r * 5 + j];
				for (int j = 0; j < 5; j++)
					p[r * 5 + j] /= s;
			}
			pcc_buf_write(lab, p);
			free(p);
		} else
			lab = iten(rt, PCC_I64, 1, DIMS(4), (const int64_t[]){0, 4, 2, 2});
		pcc_kernel k = dense ? PCC_K_SoftmaxCrossEntropyWithLogits
				     : PCC_K_SparseSoftmaxCrossEntropyWithLogits;
		Fwd f = {rt, k, NULL, 2, 2, {x, lab},
			 {ten(rt, 1, DIMS(4), NULL), ten(rt, 2, DIMS(4, 5), NULL)}, {0}};
		float ones[4] = {1, 1, 1, 1};
		f.w[0] = ones;
		run(rt, k, NULL, 2, f.in, 2, f.out);
		fd_input(&f, 0, f.out[1]);
		pcc_rt_free(rt);
	}
}

/* ---- whole training graphs ---------------------------------------------- */

static pcc_buf *seeded(pcc_rt *rt, const char *name, pcc_init kind, int rank,
		       const int64_t *dims, pcc_dtype dt, int64_t classes)
{
	pcc_buf *b = pcc_buf_new(rt, 0, name, dt, rank, dims);
	pcc_buf_init(b, &(pcc_seed){kind, name, -1, 0, 0, classes, NULL, 0}, 0);
	return b;
}

static uint64_t mask_hash(uint64_t h, const pcc_buf *b)
{
	float *v = get(b);
	for (int64_t i = 0; i < pcc_buf_numel(b); i++)
		h = (h ^ (uint64_t)(v[i] > 0)) * 0x100000001b3ull;
	free(v);
	return h;
}

/* Σ of b's elements (the batch's losses). */
static double total(const pcc_buf *b)
{
	float *l = get(b);
	double s = 0;
	for (int64_t i = 0; i < pcc_buf_numel(b); i++)
		s += l[i];
	free(l);
	return s;
}

/* tests/ctests/mlp.gir's forward and backward pass. */
typedef struct Mlp {
	pcc_rt *rt;
	pcc_buf *x, *labels, *w1, *b1, *w2, *b2;
	pcc_buf *h0, *h, *a, *y0, *y, *loss, *dy, *gb2, *gw2, *da, *dh, *gb1, *gw1;
} Mlp;

static double mlp_loss(void *ctx, uint64_t *sig)
{
	Mlp *m = ctx;
	pcc_rt *rt = m->rt;
	run(rt, PCC_K_MatMul, NULL, 2, BUFS(m->x, m->w1), 1, BUFS(m->h0));
	run(rt, PCC_K_BiasAdd, NULL, 2, BUFS(m->h0, m->b1), 1, BUFS(m->h));
	run(rt, PCC_K_Relu, NULL, 1, BUFS(m->h), 1, BUFS(m->a));
	run(rt, PCC_K_MatMul, NULL, 2, BUFS(m->a, m->w2), 1, BUFS(m->y0));
	run(rt, PCC_K_BiasAdd, NULL, 2, BUFS(m->y0, m->b2), 1, BUFS(m->y));
	run(rt, PCC_K_SparseSoftmaxCrossEntropyWithLogits, NULL, 2,
	    BUFS(m->y, m->labels), 2, BUFS(m->loss, m->dy));
	*sig = mask_hash(0, m->h);
	return total(m->loss);
}

static void test_mlp_backward(void)
{
	pcc_rt *rt = rt1();
	Mlp m = {.rt = rt};
	m.x = seeded(rt, "x", PCC_INIT_INPUT, 2, DIMS(12, 6), PCC_F32, 0);
	m.labels = seeded(rt, "labels", PCC_INIT_LABELS, 1, DIMS(12), PCC_I64, 3);
	m.w1 = seeded(rt, "w1", PCC_INIT_PARAM, 2, DIMS(6, 5), PCC_F32, 0);
	m.b1 = seeded(rt, "b1", PCC_INIT_PARAM, 1, DIMS(5), PCC_F32, 0);
	m.w2 = seeded(rt, "w2", PCC_INIT_PARAM, 2, DIMS(5, 3), PCC_F32, 0);
	m.b2 = seeded(rt, "b2", PCC_INIT_PARAM, 1, DIMS(3), PCC_F32, 0);
	m.h0 = ten(rt, 2, DIMS(12, 5), NULL);
	m.h = ten(rt, 2, DIMS(12, 5), NULL);
	m.a = ten(rt, 2, DIMS(12, 5), NULL);
	m.y0 = ten(rt, 2, DIMS(12, 3), NULL);
	m.y = ten(rt, 2, DIMS(12, 3), NULL);
	m.loss = ten(rt, 1, DIMS(12), NULL);
	m.dy = ten(rt, 2, DIMS(12, 3), NULL);
	m.gb2 = ten(rt, 1, DIMS(3), NULL);
	m.gw2 = ten(rt, 2, DIMS(5, 3), NULL);
	m.da = ten(rt, 2, DIMS(12, 5), NULL);
	m.dh = ten(rt, 2, DIMS(12, 5), NULL);
	m.gb1 = ten(rt, 1, DIMS(5), NULL);
	m.gw1 = ten(rt, 2, DIMS(6, 5), NULL);
	uint64_t sig;
	mlp_loss(&m, &sig);
	/* The backward ops of mlp.gir, in its order. */
	run(rt, PCC_K_BiasAddGrad, NULL, 1, BUFS(m.dy), 1, BUFS(m.gb2));
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = 1}, 2, BUFS(m.a, m.dy), 1,
	    BUFS(m.gw2));
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_b = 1}, 2, BUFS(m.dy, m.w2), 1,
	    BUFS(m.da));
	run(rt, PCC_K_ReluGrad, NULL, 2, BUFS(m.da, m.a), 1, BUFS(m.dh));
	run(rt, PCC_K_BiasAddGrad, NULL, 1, BUFS(m.dh), 1, BUFS(m.gb1));
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = 1}, 2, BUFS(m.x, m.dh), 1,
	    BUFS(m.gw1));
	pcc_buf *const p[] = {m.w1, m.b1, m.w2, m.b2};
	pcc_buf *const g[] = {m.gw1, m.gb1, m.gw2, m.gb2};
	for (int i = 0; i < 4; i++) {
		float *gv = get(g[i]);
		fd_check(p[i], gv, mlp_loss, &m, FD_EPS_GRAPH);
		free(gv);
	}
	pcc_rt_free(rt);
}

/* tests/ctests/cnn.gir's forward and backward pass. */
typedef struct Cnn {
	pcc_rt *rt;
	pcc_buf *x, *labels, *k1, *c1b, *k2, *wf, *bf;
	pcc_buf *c1, *z1, *r1, *p1, *c2, *r2, *flat, *y0, *y, *loss, *dy, *ones, *route;
} Cnn;

static const pcc_attrs same = {.padding = PCC_PAD_SAME};
static const pcc_attrs pool = {.ksize = {2, 2}, .strides = {2, 2}};

static double cnn_loss(void *ctx, uint64_t *sig)
{
	Cnn *c = ctx;
	pcc_rt *rt = c->rt;
	run(rt, PCC_K_Conv2D, &same, 2, BUFS(c->x, c->k1), 1, BUFS(c->c1));
	run(rt, PCC_K_BiasAdd, NULL, 2, BUFS(c->c1, c->c1b), 1, BUFS(c->z1));
	run(rt, PCC_K_Relu, NULL, 1, BUFS(c->z1), 1, BUFS(c->r1));
	run(rt, PCC_K_MaxPool, &pool, 1, BUFS(c->r1), 1, BUFS(c->p1));
	run(rt, PCC_K_Conv2D, NULL, 2, BUFS(c->p1, c->k2), 1, BUFS(c->c2));
	run(rt, PCC_K_Relu, NULL, 1, BUFS(c->c2), 1, BUFS(c->r2));
	run(rt, PCC_K_Reshape, NULL, 1, BUFS(c->r2), 1, BUFS(c->flat));
	run(rt, PCC_K_MatMul, NULL, 2, BUFS(c->flat, c->wf), 1, BUFS(c->y0));
	run(rt, PCC_K_BiasAdd, NULL, 2, BUFS(c->y0, c->bf), 1, BUFS(c->y));
	run(rt, PCC_K_SparseSoftmaxCrossEntropyWithLogits, NULL, 2,
	    BUFS(c->y, c->labels), 2, BUFS(c->loss, c->dy));
	/* Region: the ReLU masks and where each window's maximum is. */
	run(rt, PCC_K_MaxPoolGrad, &pool, 3, BUFS(c->r1, c->p1, c->ones), 1,
	    BUFS(c->route));
	*sig = mask_hash(mask_hash(mask_hash(0, c->z1), c->c2), c->route);
	return total(c->loss);
}

static void test_cnn_backward(void)
{
	pcc_rt *rt = rt1();
	Cnn c = {.rt = rt};
	c.x = seeded(rt, "x", PCC_INIT_INPUT, 4, DIMS(6, 8, 8, 2), PCC_F32, 0);
	c.labels = seeded(rt, "labels", PCC_INIT_LABELS, 1, DIMS(6), PCC_I32, 3);
	c.k1 = seeded(rt, "k1", PCC_INIT_PARAM, 4, DIMS(3, 3, 2, 4), PCC_F32, 0);
	c.c1b = seeded(rt, "c1b", PCC_INIT_PARAM, 1, DIMS(4), PCC_F32, 0);
	c.k2 = seeded(rt, "k2", PCC_INIT_PARAM, 4, DIMS(3, 3, 4, 4), PCC_F32, 0);
	c.wf = seeded(rt, "wf", PCC_INIT_PARAM, 2, DIMS(16, 3), PCC_F32, 0);
	c.bf = seeded(rt, "bf", PCC_INIT_PARAM, 1, DIMS(3), PCC_F32, 0);
	c.c1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	c.z1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	c.r1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	c.p1 = ten(rt, 4, DIMS(6, 4, 4, 4), NULL);
	c.c2 = ten(rt, 4, DIMS(6, 2, 2, 4), NULL);
	c.r2 = ten(rt, 4, DIMS(6, 2, 2, 4), NULL);
	c.flat = ten(rt, 2, DIMS(6, 16), NULL);
	c.y0 = ten(rt, 2, DIMS(6, 3), NULL);
	c.y = ten(rt, 2, DIMS(6, 3), NULL);
	c.loss = ten(rt, 1, DIMS(6), NULL);
	c.dy = ten(rt, 2, DIMS(6, 3), NULL);
	c.ones = ten(rt, 4, DIMS(6, 4, 4, 4), NULL);
	pcc_buf_init(c.ones, &(pcc_seed){PCC_INIT_CONST, "1", -1, 0, 0, 0,
					 (const double[]){1}, 1}, 0);
	c.route = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	uint64_t sig;
	cnn_loss(&c, &sig);
	/* The backward ops of cnn.gir. */
	pcc_buf *gbf = ten(rt, 1, DIMS(3), NULL), *gwf = ten(rt, 2, DIMS(16, 3), NULL);
	pcc_buf *dflat = ten(rt, 2, DIMS(6, 16), NULL), *dr2 = ten(rt, 4, DIMS(6, 2, 2, 4), NULL);
	pcc_buf *dc2 = ten(rt, 4, DIMS(6, 2, 2, 4), NULL), *gk2 = ten(rt, 4, DIMS(3, 3, 4, 4), NULL);
	pcc_buf *dp1 = ten(rt, 4, DIMS(6, 4, 4, 4), NULL), *dr1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	pcc_buf *dz1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL), *gc1b = ten(rt, 1, DIMS(4), NULL);
	pcc_buf *gk1 = ten(rt, 4, DIMS(3, 3, 2, 4), NULL);
	run(rt, PCC_K_BiasAddGrad, NULL, 1, BUFS(c.dy), 1, BUFS(gbf));
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = 1}, 2, BUFS(c.flat, c.dy),
	    1, BUFS(gwf));
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_b = 1}, 2, BUFS(c.dy, c.wf),
	    1, BUFS(dflat));
	run(rt, PCC_K_Reshape, NULL, 1, BUFS(dflat), 1, BUFS(dr2));
	run(rt, PCC_K_ReluGrad, NULL, 2, BUFS(dr2, c.r2), 1, BUFS(dc2));
	run(rt, PCC_K_Conv2DBackpropFilter, NULL, 2, BUFS(c.p1, dc2), 1, BUFS(gk2));
	run(rt, PCC_K_Conv2DBackpropInput, NULL, 2, BUFS(c.k2, dc2), 1, BUFS(dp1));
	run(rt, PCC_K_MaxPoolGrad, &pool, 3, BUFS(c.r1, c.p1, dp1), 1, BUFS(dr1));
	run(rt, PCC_K_ReluGrad, NULL, 2, BUFS(dr1, c.r1), 1, BUFS(dz1));
	run(rt, PCC_K_BiasAddGrad, NULL, 1, BUFS(dz1), 1, BUFS(gc1b));
	run(rt, PCC_K_Conv2DBackpropFilter, &same, 2, BUFS(c.x, dz1), 1, BUFS(gk1));
	pcc_buf *const p[] = {c.k1, c.c1b, c.k2, c.wf, c.bf};
	pcc_buf *const g[] = {gk1, gc1b, gk2, gwf, gbf};
	for (int i = 0; i < 5; i++) {
		float *gv = get(g[i]);
		fd_check(p[i], gv, cnn_loss, &c, FD_EPS_GRAPH);
		free(gv);
	}
	pcc_rt_free(rt);
}

/* tests/ctests/bncnn.gir's forward and backward pass: batch norms in
 * training mode, where every image moves every other's normalisation. */
typedef struct BnCnn {
	pcc_rt *rt;
	pcc_buf *x, *labels, *k1, *g1, *o1, *dw, *g2, *o2, *wf, *bf, *m1, *v1,
		*m2, *v2;
	pcc_buf *c1, *bn1[6], *r1, *d1, *bn2[6], *r2, *pool, *y0, *y, *loss, *dy;
} BnCnn;

static const pcc_attrs bn1a = {.epsilon = 1e-3, .avg_factor = 0.1};
static const pcc_attrs bn2a = {.epsilon = 1e-3, .avg_factor = 1};
static const pcc_attrs dwa = {.padding = PCC_PAD_SAME, .strides = {2, 2}};

static double bncnn_loss(void *ctx, uint64_t *sig)
{
	BnCnn *c = ctx;
	pcc_rt *rt = c->rt;
	run(rt, PCC_K_Conv2D, &same, 2, BUFS(c->x, c->k1), 1, BUFS(c->c1));
	run(rt, PCC_K_FusedBatchNormV3, &bn1a, 5, BUFS(c->c1, c->g1, c->o1, c->m1,
						      c->v1), 6, c->bn1);
	run(rt, PCC_K_Relu, NULL, 1, c->bn1, 1, BUFS(c->r1));
	run(rt, PCC_K_DepthwiseConv2dNative, &dwa, 2, BUFS(c->r1, c->dw), 1,
	    BUFS(c->d1));
	run(rt, PCC_K_FusedBatchNormV3, &bn2a, 5, BUFS(c->d1, c->g2, c->o2, c->m2,
						      c->v2), 6, c->bn2);
	run(rt, PCC_K_Relu, NULL, 1, c->bn2, 1, BUFS(c->r2));
	run(rt, PCC_K_Mean, &(pcc_attrs){.axes = 6}, 1, BUFS(c->r2), 1,
	    BUFS(c->pool));
	run(rt, PCC_K_MatMul, NULL, 2, BUFS(c->pool, c->wf), 1, BUFS(c->y0));
	run(rt, PCC_K_BiasAdd, NULL, 2, BUFS(c->y0, c->bf), 1, BUFS(c->y));
	run(rt, PCC_K_SparseSoftmaxCrossEntropyWithLogits, NULL, 2,
	    BUFS(c->y, c->labels), 2, BUFS(c->loss, c->dy));
	*sig = mask_hash(mask_hash(0, c->bn1[0]), c->bn2[0]);
	return total(c->loss);
}

static pcc_buf **bn_outs(pcc_rt *rt, pcc_buf **o, const int64_t *xd, int64_t C)
{
	o[0] = ten(rt, 4, xd, NULL);
	for (int i = 1; i < 5; i++)
		o[i] = ten(rt, 1, DIMS(C), NULL);
	o[5] = ten(rt, 1, DIMS(0), NULL);
	return o;
}

static void test_bncnn_backward(void)
{
	pcc_rt *rt = rt1();
	BnCnn c = {.rt = rt};
	c.x = seeded(rt, "x", PCC_INIT_INPUT, 4, DIMS(6, 8, 8, 2), PCC_F32, 0);
	c.labels = seeded(rt, "labels", PCC_INIT_LABELS, 1, DIMS(6), PCC_I32, 3);
	c.k1 = seeded(rt, "k1", PCC_INIT_PARAM, 4, DIMS(3, 3, 2, 4), PCC_F32, 0);
	c.g1 = seeded(rt, "g1", PCC_INIT_PARAM, 1, DIMS(4), PCC_F32, 0);
	/* Offsets of 2 keep most ReLU inputs away from the kink: normalised
	 * values crowd around 0, where ±ε would change the masks too often. */
	c.o1 = ten(rt, 1, DIMS(4), VALS(2, 2, 2, 2));
	c.dw = seeded(rt, "dw", PCC_INIT_PARAM, 4, DIMS(3, 3, 4, 2), PCC_F32, 0);
	c.g2 = seeded(rt, "g2", PCC_INIT_PARAM, 1, DIMS(8), PCC_F32, 0);
	c.o2 = ten(rt, 1, DIMS(8), VALS(2, 2, 2, 2, 2, 2, 2, 2));
	c.wf = seeded(rt, "wf", PCC_INIT_PARAM, 2, DIMS(8, 3), PCC_F32, 0);
	c.bf = seeded(rt, "bf", PCC_INIT_PARAM, 1, DIMS(3), PCC_F32, 0);
	c.m1 = ten(rt, 1, DIMS(4), VALS(0.5f, -0.25f, 0, 1));
	c.v1 = ten(rt, 1, DIMS(4), VALS(1, 2, 0.5f, 1.5f));
	c.m2 = ten(rt, 1, DIMS(8), NULL);
	c.v2 = ten(rt, 1, DIMS(8), VALS(1, 1, 1, 1, 1, 1, 1, 1));
	c.c1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	bn_outs(rt, c.bn1, DIMS(6, 8, 8, 4), 4);
	c.r1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	c.d1 = ten(rt, 4, DIMS(6, 4, 4, 8), NULL);
	bn_outs(rt, c.bn2, DIMS(6, 4, 4, 8), 8);
	c.r2 = ten(rt, 4, DIMS(6, 4, 4, 8), NULL);
	c.pool = ten(rt, 2, DIMS(6, 8), NULL);
	c.y0 = ten(rt, 2, DIMS(6, 3), NULL);
	c.y = ten(rt, 2, DIMS(6, 3), NULL);
	c.loss = ten(rt, 1, DIMS(6), NULL);
	c.dy = ten(rt, 2, DIMS(6, 3), NULL);
	uint64_t sig;
	bncnn_loss(&c, &sig);
	/* The backward ops of bncnn.gir. */
	pcc_buf *gbf = ten(rt, 1, DIMS(3), NULL), *gwf = ten(rt, 2, DIMS(8, 3), NULL);
	pcc_buf *dpool = ten(rt, 2, DIMS(6, 8), NULL);
	pcc_buf *dpool4 = ten(rt, 4, DIMS(6, 1, 1, 8), NULL);
	pcc_buf *dsum = ten(rt, 4, DIMS(6, 4, 4, 8), NULL);
	pcc_buf *dr2 = ten(rt, 4, DIMS(6, 4, 4, 8), NULL);
	pcc_buf *dbn2 = ten(rt, 4, DIMS(6, 4, 4, 8), NULL);
	pcc_buf *gbn2[5] = {ten(rt, 4, DIMS(6, 4, 4, 8), NULL), ten(rt, 1, DIMS(8), NULL),
			    ten(rt, 1, DIMS(8), NULL), c.bn2[5], c.bn2[5]};
	pcc_buf *gdw = ten(rt, 4, DIMS(3, 3, 4, 2), NULL);
	pcc_buf *dr1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	pcc_buf *dbn1 = ten(rt, 4, DIMS(6, 8, 8, 4), NULL);
	pcc_buf *gbn1[5] = {ten(rt, 4, DIMS(6, 8, 8, 4), NULL), ten(rt, 1, DIMS(4), NULL),
			    ten(rt, 1, DIMS(4), NULL), c.bn1[5], c.bn1[5]};
	pcc_buf *gk1 = ten(rt, 4, DIMS(3, 3, 2, 4), NULL);
	pcc_buf *inv16 = ten(rt, 0, NULL, VALS(0.0625f));
	run(rt, PCC_K_BiasAddGrad, NULL, 1, BUFS(c.dy), 1, BUFS(gbf));
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = 1}, 2, BUFS(c.pool, c.dy),
	    1, BUFS(gwf));
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_b = 1}, 2, BUFS(c.dy, c.wf),
	    1, BUFS(dpool));
	run(rt, PCC_K_Reshape, NULL, 1, BUFS(dpool), 1, BUFS(dpool4));
	run(rt, PCC_K_BroadcastTo, NULL, 1, BUFS(dpool4), 1, BUFS(dsum));
	run(rt, PCC_K_Mul, NULL, 2, BUFS(dsum, inv16), 1, BUFS(dr2));
	run(rt, PCC_K_ReluGrad, NULL, 2, BUFS(dr2, c.r2), 1, BUFS(dbn2));
	run(rt, PCC_K_FusedBatchNormGradV3, &bn2a, 6, BUFS(dbn2, c.d1, c.g2,
		c.bn2[3], c.bn2[4], c.bn2[5]), 5, gbn2);
	run(rt, PCC_K_DepthwiseConv2dNativeBackpropFilter, &dwa, 2,
	    BUFS(c.r1, gbn2[0]), 1, BUFS(gdw));
	run(rt, PCC_K_DepthwiseConv2dNativeBackpropInput, &dwa, 2,
	    BUFS(c.dw, gbn2[0]), 1, BUFS(dr1));
	run(rt, PCC_K_ReluGrad, NULL, 2, BUFS(dr1, c.r1), 1, BUFS(dbn1));
	run(rt, PCC_K_FusedBatchNormGradV3, &bn1a, 6, BUFS(dbn1, c.c1, c.g1,
		c.bn1[3], c.bn1[4], c.bn1[5]), 5, gbn1);
	run(rt, PCC_K_Conv2DBackpropFilter, &same, 2, BUFS(c.x, gbn1[0]), 1,
	    BUFS(gk1));
	pcc_buf *const p[] = {c.k1, c.g1, c.o1, c.dw, c.g2, c.o2, c.wf, c.bf};
	pcc_buf *const g[] = {gk1, gbn1[1], gbn1[2], gdw, gbn2[1], gbn2[2], gwf, gbf};
	for (int i = 0; i < 8; i++) {
		float *gv = get(g[i]);
		fd_check(p[i], gv, bncnn_loss, &c, FD_EPS_GRAPH);
		free(gv);
	}
	pcc_rt_free(rt);
}

void suite_rt_grad(void)
{
	CU_pSuite s = CU_add_suite("rt_grad", NULL, NULL);
	CU_add_test(s, "MatMul gradients, four transpose cases", test_matmul_grad);
	CU_add_test(s, "Conv2D backprops against finite differences", test_conv_grad);
	CU_add_test(s, "DepthwiseConv2dNative backprops against finite differences", test_dwconv_grad);
	CU_add_test(s, "FusedBatchNormGradV3 against finite differences", test_batchnorm_grad);
	CU_add_test(s, "MaxPoolGrad, AvgPoolGrad against finite differences", test_pool_grad);
	CU_add_test(s, "BiasAddGrad against finite differences", test_bias_grad);
	CU_add_test(s, "ReluGrad, TanhGrad, SigmoidGrad", test_activation_grad);
	CU_add_test(s, "cross-entropy backprops", test_xent_grad);
	CU_add_test(s, "mlp.gir's backward pass", test_mlp_backward);
	CU_add_test(s, "cnn.gir's backward pass", test_cnn_backward);
	CU_add_test(s, "bncnn.gir's backward pass", test_bncnn_backward);
}
