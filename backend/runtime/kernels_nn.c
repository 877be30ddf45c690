/* kernels_nn.c — the CPU reference kernels for convolutions (regular and
 * depthwise), pooling, batch normalisation, biases, softmax and the
 * cross-entropy losses, in TensorFlow's semantics: images NHWC or NCHW
 * (pcc_attrs.nchw), filters always [kh, kw, in, out] (grouped: [kh, kw,
 * in / groups, out]; depthwise: [kh, kw, in, multiplier]), padding VALID,
 * SAME (pad_before = total / 2, the extra cell after, as TensorFlow) or
 * EXPLICIT, strides and dilations.
 * Sums accumulate in double. */
#include "rt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- window geometry ---------------------------------------------------- */

typedef struct Geo {
	int nchw;
	int64_t N, H, W, C;          /* the image side (input / its gradient) */
	int64_t OH, OW, OC;          /* the output side */
	int64_t kh, kw, sh, sw, dh, dw;
	int64_t pt, pl;              /* padding before, top and left */
	int64_t mult;                /* depthwise: channel multiplier; 0: regular */
	int64_t cg;                  /* regular: input channels per group (C: one) */
} Geo;

static void dims4(pcc_kernel k, const pcc_attrs *a, const pcc_buf *b,
		  int64_t *n, int64_t *h, int64_t *w, int64_t *c)
{
	if (b->rank != 4)
		k_fail(k, a, "'%s' must have rank 4, not %d", b->name, b->rank);
	*n = b->dims[0];
	*h = b->dims[a->nchw ? 2 : 1];
	*w = b->dims[a->nchw ? 3 : 2];
	*c = b->dims[a->nchw ? 1 : 3];
}

/* Padding before and the output size of one spatial dimension. */
static void pad1(pcc_kernel k, const pcc_attrs *a, int64_t in, int64_t kk,
		 int64_t s, int64_t d, int64_t before, int64_t after,
		 int64_t out, int64_t *pb)
{
	int64_t eff = (kk - 1) * d + 1, want;
	switch (a->padding) {
	case PCC_PAD_SAME: {
		want = (in + s - 1) / s;
		int64_t total = (want - 1) * s + eff - in;
		*pb = total > 0 ? total / 2 : 0;
		break;
	}
	case PCC_PAD_EXPLICIT:
		want = (in + before + after - eff) / s + 1;
		*pb = before;
		break;
	default:
		want = (in - eff) / s + 1;
		*pb = 0;
	}
	if (want != out || out < 1)
		k_fail(k, a, "a window of %lld (stride %lld, dilation %lld) over "
		       "%lld gives %lld, not %lld", (long long)kk, (long long)s,
		       (long long)d, (long long)in, (long long)want, (long long)out);
}

/* img: the image-side buffer, res: the output-side one. */
static Geo geo(pcc_kernel k, const pcc_attrs *a, const pcc_buf *img,
	       const pcc_buf *res, int64_t kh, int64_t kw)
{
	Geo g = {.nchw = a->nchw, .kh = kh, .kw = kw};
	int64_t n;
	dims4(k, a, img, &g.N, &g.H, &g.W, &g.C);
	dims4(k, a, res, &n, &g.OH, &g.OW, &g.OC);
	if (n != g.N)
		k_fail(k, a, "batch sizes differ: %lld vs %lld", (long long)g.N,
		       (long long)n);
	g.sh = a->strides[0] ? a->strides[0] : 1;
	g.sw = a->strides[1] ? a->strides[1] : 1;
	g.dh = a->dilations[0] ? a->dilations[0] : 1;
	g.dw = a->dilations[1] ? a->dilations[1] : 1;
	pad1(k, a, g.H, kh, g.sh, g.dh, a->pads[0], a->pads[1], g.OH, &g.pt);
	pad1(k, a, g.W, kw, g.sw, g.dw, a->pads[2], a->pads[3], g.OW, &g.pl);
	return g;
}

static inline int64_t img_at(const Geo *g, int64_t n, int64_t h, int64_t w,
			     int64_t c)
{
	return g->nchw ? ((n * g->C + c) * g->H + h) * g->W + w
		       : ((n * g->H + h) * g->W + w) * g->C + c;
}

static inline int64_t res_at(const Geo *g, int64_t n, int64_t h, int64_t w,
			     int64_t c)
{
	return g->nchw ? ((n * g->OC + c) * g->OH + h) * g->OW + w
		       : ((n * g->OH + h) * g->OW + w) * g->OC + c;
}

/* Filter [kh, kw, in, out]: in = image-side channels C, out = OC, or as
 * TensorFlow's grouped convolution in = C / groups, out = OC, a multiple
 * of the groups (output channel oc reads group oc / (OC / groups)); a
 * depthwise filter [kh, kw, in, multiplier] with OC = C * multiplier. */
static void check_filter(pcc_kernel k, const pcc_attrs *a, const pcc_buf *f,
			 const Geo *g)
{
	if (g->mult) {
		if (f->rank != 4 || f->dims[2] != g->C || g->C * f->dims[3] != g->OC)
			k_fail(k, a, "filter '%s' must be [kh, kw, %lld, m] with %lld "
			       "* m = %lld output channels", f->name, (long long)g->C,
			       (long long)g->C, (long long)g->OC);
	} else if (f->rank != 4 || f->dims[2] < 1 || f->dims[2] > g->C ||
		   g->C % f->dims[2] || f->dims[3] != g->OC ||
		   g->OC % (g->C / f->dims[2]))
		k_fail(k, a, "filter '%s' must be [kh, kw, %lld / groups, %lld] with "
		       "groups dividing both", f->name, (long long)g->C, (long long)g->OC);
}

/* ---- convolutions --------------------------------------------------------- */

enum { CONV_FWD, CONV_BI, CONV_BF };

/* The one loop nest of the six convolution kernels: for every output
 * cell and every tap of its window inside the image,
 *   FWD: out[cell] += x[tap] · f,   BI: dx[tap] += dy[cell] · f,
 *   BF: df[f] += dy[cell] · x[tap]
 * into acc (double), indexed as the kernel's output.  A regular
 * convolution's taps are the input channels of its output channel's group
 * (every one where groups = 1), [c0, c0 + cg); a depthwise one's output
 * channel oc = c · mult + m reads input channel c only, and its filter
 * [kh, kw, C, mult] flattens to [kh, kw, OC]. */
static void conv_pass(const Geo *g, int mode, const float *X, const float *F,
		      const float *DY, double *acc)
{
	for (int64_t n = 0; n < g->N; n++)
	for (int64_t oh = 0; oh < g->OH; oh++)
	for (int64_t ow = 0; ow < g->OW; ow++)
	for (int64_t oc = 0; oc < g->OC; oc++) {
		int64_t cell = res_at(g, n, oh, ow, oc);
		int64_t c0 = g->mult ? oc / g->mult
				     : oc / (g->OC / (g->C / g->cg)) * g->cg;
		int64_t c1 = g->mult ? c0 + 1 : c0 + g->cg;
		double gy = DY ? DY[cell] : 0;
		for (int64_t fh = 0; fh < g->kh; fh++) {
			int64_t ih = oh * g->sh - g->pt + fh * g->dh;
			if (ih < 0 || ih >= g->H)
				continue;
			for (int64_t fw = 0; fw < g->kw; fw++) {
				int64_t iw = ow * g->sw - g->pl + fw * g->dw;
				if (iw < 0 || iw >= g->W)
					continue;
				for (int64_t c = c0; c < c1; c++) {
					int64_t t = img_at(g, n, ih, iw, c);
					int64_t fi = g->mult
						? (fh * g->kw + fw) * g->OC + oc
						: ((fh * g->kw + fw) * g->cg + c - c0) * g->OC + oc;
					switch (mode) {
					case CONV_FWD: acc[cell] += (double)X[t] * F[fi]; break;
					case CONV_BI: acc[t] += gy * F[fi]; break;
					default: acc[fi] += gy * X[t]; break;
					}
				}
			}
		}
	}
}

/* (input, filter) -> output; (filter, out_backprop) -> the input's
 * gradient; (input, out_backprop) -> the filter's gradient.  The output's
 * shape gives what the static sizes input said. */
static void conv(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		 int nout, pcc_buf *const *out, int mode, bool depthwise)
{
	k_arity(k, a, nin, 2, nout, 1);
	k_f32(k, a, in[0]);
	k_f32(k, a, in[1]);
	k_f32(k, a, out[0]);
	const pcc_buf *f = mode == CONV_BF ? out[0] : mode == CONV_BI ? in[0] : in[1];
	const pcc_buf *img = mode == CONV_BI ? out[0] : in[0];
	const pcc_buf *res = mode == CONV_FWD ? out[0] : in[1];
	if (f->rank != 4)
		k_fail(k, a, "the filter must have rank 4");
	Geo g = geo(k, a, img, res, f->dims[0], f->dims[1]);
	g.mult = depthwise ? f->dims[3] : 0;
	g.cg = f->dims[2];
	if (depthwise && g.mult < 1)
		k_fail(k, a, "the channel multiplier must be positive");
	check_filter(k, a, f, &g);
	double *acc = rt_alloc(sizeof(double) * (size_t)(out[0]->numel + 1));
	conv_pass(&g, mode, mode == CONV_BI ? NULL : FP(in[0]),
		  mode == CONV_BF ? NULL : FP(f), mode == CONV_FWD ? NULL : FP(in[1]),
		  acc);
	k_to_float(acc, FP(out[0]), out[0]->numel);
}

void k_conv2d(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	conv(k, a, nin, in, nout, out, CONV_FWD, false);
}

void k_conv2d_bi(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		 int nout, pcc_buf *const *out)
{
	conv(k, a, nin, in, nout, out, CONV_BI, false);
}

void k_conv2d_bf(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		 int nout, pcc_buf *const *out)
{
	conv(k, a, nin, in, nout, out, CONV_BF, false);
}

void k_dwconv(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	conv(k, a, nin, in, nout, out, CONV_FWD, true);
}

void k_dwconv_bi(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		 int nout, pcc_buf *const *out)
{
	conv(k, a, nin, in, nout, out, CONV_BI, true);
}

void k_dwconv_bf(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		 int nout, pcc_buf *const *out)
{
	conv(k, a, nin, in, nout, out, CONV_BF, true);
}

/* ---- pooling ---------------------------------------------------------- */

static Geo pool_geo(pcc_kernel k, const pcc_attrs *a, const pcc_buf *img,
		    const pcc_buf *res)
{
	if (a->dilations[0] > 1 || a->dilations[1] > 1)
		k_fail(k, a, "pooling has no dilations");
	Geo g = geo(k, a, img, res, a->ksize[0] ? a->ksize[0] : 1,
		    a->ksize[1] ? a->ksize[1] : 1);
	if (g.C != g.OC)
		k_fail(k, a, "pooling keeps the channels: %lld vs %lld",
		       (long long)g.C, (long long)g.OC);
	return g;
}

/* The window of output cell (oh, ow), clipped to the image. */
static void window(const Geo *g, int64_t oh, int64_t ow, int64_t *h0,
		   int64_t *h1, int64_t *w0, int64_t *w1)
{
	*h0 = oh * g->sh - g->pt;
	*w0 = ow * g->sw - g->pl;
	*h1 = *h0 + g->kh < g->H ? *h0 + g->kh : g->H;
	*w1 = *w0 + g->kw < g->W ? *w0 + g->kw : g->W;
	*h0 = *h0 > 0 ? *h0 : 0;
	*w0 = *w0 > 0 ? *w0 : 0;
}

/* Index of the first maximum of the window (row-major scan; padded cells
 * never win, as in TensorFlow). */
static int64_t argmax(const Geo *g, const float *X, int64_t n, int64_t oh,
		      int64_t ow, int64_t c)
{
	int64_t h0, h1, w0, w1, best = -1;
	window(g, oh, ow, &h0, &h1, &w0, &w1);
	for (int64_t h = h0; h < h1; h++)
		for (int64_t w = w0; w < w1; w++) {
			int64_t i = img_at(g, n, h, w, c);
			if (best < 0 || X[i] > X[best])
				best = i;
		}
	return best;
}

enum { POOL_MAX, POOL_MAX_GRAD, POOL_AVG, POOL_AVG_GRAD };

/* The loop nest of the pooling kernels, into acc (indexed as the
 * kernel's output): MAX and AVG write each output cell, MAX_GRAD sends
 * each cell's gradient to its window's first maximum in X, AVG_GRAD
 * spreads it evenly over the window's cells (padded ones not counted). */
static void pool_pass(const Geo *g, int mode, const float *X, const float *DY,
		      double *acc)
{
	for (int64_t n = 0; n < g->N; n++)
	for (int64_t oh = 0; oh < g->OH; oh++)
	for (int64_t ow = 0; ow < g->OW; ow++)
	for (int64_t c = 0; c < g->C; c++) {
		int64_t cell = res_at(g, n, oh, ow, c), h0, h1, w0, w1;
		window(g, oh, ow, &h0, &h1, &w0, &w1);
		int64_t cnt = (h1 - h0) * (w1 - w0), i;
		double s = 0;
		switch (mode) {
		case POOL_MAX:
			i = argmax(g, X, n, oh, ow, c);
			acc[cell] = i < 0 ? -INFINITY : X[i];
			break;
		case POOL_MAX_GRAD:
			i = argmax(g, X, n, oh, ow, c);
			if (i >= 0)
				acc[i] += DY[cell];
			break;
		case POOL_AVG:
			for (int64_t h = h0; h < h1; h++)
				for (int64_t w = w0; w < w1; w++)
					s += X[img_at(g, n, h, w, c)];
			acc[cell] = cnt > 0 ? s / (double)cnt : 0;
			break;
		default:
			for (int64_t h = h0; cnt > 0 && h < h1; h++)
				for (int64_t w = w0; w < w1; w++)
					acc[img_at(g, n, h, w, c)] += DY[cell] / (double)cnt;
		}
	}
}

/* MaxPool (x), MaxPoolGrad (orig_input, orig_output, grad), AvgPool (x),
 * AvgPoolGrad (grad; orig_input_shape is static). */
static void pool(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		 int nout, pcc_buf *const *out, int mode)
{
	k_arity(k, a, nin, mode == POOL_MAX_GRAD ? 3 : 1, nout, 1);
	for (int i = 0; i < nin; i++)
		k_f32(k, a, in[i]);
	k_f32(k, a, out[0]);
	bool grad = mode == POOL_MAX_GRAD || mode == POOL_AVG_GRAD;
	const pcc_buf *dy = grad ? in[nin - 1] : NULL;
	if (mode == POOL_MAX_GRAD) {
		k_same_shape(k, a, in[0], out[0]);
		k_same_shape(k, a, in[1], in[2]);
	}
	Geo g = pool_geo(k, a, grad ? out[0] : in[0], grad ? dy : out[0]);
	double *acc = rt_alloc(sizeof(double) * (size_t)(out[0]->numel + 1));
	pool_pass(&g, mode, mode == POOL_AVG_GRAD ? NULL : FP(in[0]),
		  dy ? FP(dy) : NULL, acc);
	k_to_float(acc, FP(out[0]), out[0]->numel);
}

void k_maxpool(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	       int nout, pcc_buf *const *out)
{
	pool(k, a, nin, in, nout, out, POOL_MAX);
}

void k_maxpool_grad(pcc_kernel k, const pcc_attrs *a, int nin,
		    pcc_buf *const *in, int nout, pcc_buf *const *out)
{
	pool(k, a, nin, in, nout, out, POOL_MAX_GRAD);
}

void k_avgpool(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	       int nout, pcc_buf *const *out)
{
	pool(k, a, nin, in, nout, out, POOL_AVG);
}

void k_avgpool_grad(pcc_kernel k, const pcc_attrs *a, int nin,
		    pcc_buf *const *in, int nout, pcc_buf *const *out)
{
	pool(k, a, nin, in, nout, out, POOL_AVG_GRAD);
}

/* ---- batch normalisation ----------------------------------------------- */

/* TensorFlow's FusedBatchNormV3 and FusedBatchNormGradV3 on the CPU, per
 * channel c over the n = N·H·W elements x_i of that channel:
 *   is_training: mean = Σx_i / n, var = Σ(x_i - mean)² / n (biased);
 *   y = (x - mean) / sqrt(var + ε) · scale + offset;
 *   batch_mean = (1 - f)·mean_in + f·mean, batch_variance = (1 - f)·
 *   variance_in + f·var·n/(n - 1) (Bessel's correction; n - 1 is taken as
 *   1 when n is 1), f = exponential_avg_factor (f = 1: no blend, the
 *   inputs mean and variance may then be empty);
 *   reserve_space_1 = mean, reserve_space_2 = var (the biased variance,
 *   as TF's CPU kernel; cuDNN keeps the inverse std there instead),
 *   reserve_space_3 is left as it is (empty in pcc's shapes).
 *   Otherwise the given mean and variance normalise; batch_mean,
 *   batch_variance and reserve_space_1/2 are copies of them.
 * The gradient reads the mean and variance from reserve_space_1/2:
 *   x̂ = (x - mean)·r, r = 1 / sqrt(var + ε); offset_backprop = Σdy,
 *   scale_backprop = Σdy·x̂; x_backprop = scale·r·(dy - Σdy/n - x̂·Σdy·x̂/n)
 *   when training, scale·r·dy otherwise (the statistics are constants).
 *   reserve_space_4/5 are left as they are. */

typedef struct Bn {
	int64_t C, inner, n;         /* channel of element i: i / inner % C */
} Bn;

static Bn bn_shape(pcc_kernel k, const pcc_attrs *a, const pcc_buf *x)
{
	int64_t N, H, W, C;
	k_f32(k, a, x);
	dims4(k, a, x, &N, &H, &W, &C);
	return (Bn){C, a->nchw ? H * W : 1, N * H * W};
}

static void bn_vec(pcc_kernel k, const pcc_attrs *a, const pcc_buf *v,
		   const Bn *b, bool may_be_empty)
{
	k_f32(k, a, v);
	if (may_be_empty && v->numel == 0)
		return;
	if (v->rank != 1 || v->dims[0] != b->C)
		k_fail(k, a, "'%s' must be [%lld]", v->name, (long long)b->C);
}

/* Per channel: Σx (or Σdy) into s1 unless it is NULL and, given the
 * mean, Σ(x - mean)² (or Σdy·(x - mean)) into s2. */
static void bn_sums(const Bn *b, const float *X, const float *DY,
		    const double *mean, int64_t numel, double *s1, double *s2)
{
	for (int64_t i = 0; i < numel; i++) {
		int64_t c = i / b->inner % b->C;
		if (s1)
			s1[c] += DY ? DY[i] : X[i];
		if (mean) {
			double d = X[i] - mean[c];
			s2[c] += DY ? DY[i] * d : d * d;
		}
	}
}

void k_fbn(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	   int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 5, nout, 6);
	const pcc_buf *x = in[0];
	Bn b = bn_shape(k, a, x);
	bool train = !a->inference, blend = train && a->avg_factor != 1;
	for (int i = 1; i < 5; i++)
		bn_vec(k, a, in[i], &b, i >= 3 && train && !blend);
	for (int i = 1; i < 5; i++)
		bn_vec(k, a, out[i], &b, false);
	k_same_shape(k, a, x, out[0]);
	double *mean = rt_alloc(sizeof(double) * (size_t)(2 * b.C + 1));
	double *var = mean + b.C;
	const float *X = FP(x);
	if (train) {
		bn_sums(&b, X, NULL, NULL, x->numel, mean, NULL);
		for (int64_t c = 0; c < b.C; c++)
			mean[c] /= (double)b.n;
		bn_sums(&b, X, NULL, mean, x->numel, NULL, var);
		for (int64_t c = 0; c < b.C; c++)
			var[c] /= (double)b.n;
	} else
		for (int64_t c = 0; c < b.C; c++) {
			mean[c] = FP(in[3])[c];
			var[c] = FP(in[4])[c];
		}
	const float *S = FP(in[1]), *O = FP(in[2]);
	float *Y = FP(out[0]);
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t c = i / b.inner % b.C;
		Y[i] = (float)((X[i] - mean[c]) / sqrt(var[c] + a->epsilon) * S[c] + O[c]);
	}
	double f = a->avg_factor;
	double corr = (double)b.n / (double)(b.n > 1 ? b.n - 1 : 1);
	for (int64_t c = 0; c < b.C; c++) {
		double bm = mean[c], bv = train ? var[c] * corr : var[c];
		if (blend) {
			bm = (1 - f) * FP(in[3])[c] + f * bm;
			bv = (1 - f) * FP(in[4])[c] + f * bv;
		}
		FP(out[1])[c] = (float)bm;
		FP(out[2])[c] = (float)bv;
		FP(out[3])[c] = (float)mean[c];
		FP(out[4])[c] = (float)var[c];
	}
	free(mean);
}

void k_fbn_grad(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 6, nout, 5);
	const pcc_buf *dy = in[0], *x = in[1];
	Bn b = bn_shape(k, a, x);
	k_f32(k, a, dy);
	k_same_shape(k, a, x, dy);
	k_same_shape(k, a, x, out[0]);
	for (int i = 2; i < 5; i++)
		bn_vec(k, a, in[i], &b, false);
	for (int i = 1; i < 3; i++)
		bn_vec(k, a, out[i], &b, false);
	double *mean = rt_alloc(sizeof(double) * (size_t)(4 * b.C + 1));
	double *r = mean + b.C, *sdy = r + b.C, *sdyx = sdy + b.C;
	for (int64_t c = 0; c < b.C; c++) {
		mean[c] = FP(in[3])[c];
		r[c] = 1 / sqrt(FP(in[4])[c] + a->epsilon);
	}
	const float *X = FP(x), *DY = FP(dy), *S = FP(in[2]);
	/* sdyx = Σdy·(x - mean), then ·r: Σdy·x̂. */
	bn_sums(&b, X, DY, mean, x->numel, sdy, sdyx);
	for (int64_t c = 0; c < b.C; c++) {
		sdyx[c] *= r[c];
		FP(out[1])[c] = (float)sdyx[c];
		FP(out[2])[c] = (float)sdy[c];
	}
	float *DX = FP(out[0]);
	double n = (double)b.n;
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t c = i / b.inner % b.C;
		double g = DY[i];
		if (!a->inference)
			g -= sdy[c] / n + (X[i] - mean[c]) * r[c] * sdyx[c] / n;
		DX[i] = (float)(S[c] * r[c] * g);
	}
	free(mean);
}

/* ---- biases ------------------------------------------------------------ */

/* Channel dimension: the last (NHWC), or 1 (NCHW). */
static int chan_dim(pcc_kernel k, const pcc_attrs *a, const pcc_buf *b)
{
	if (b->rank < (a->nchw ? 3 : 1))
		k_fail(k, a, "'%s' has rank %d, too low for its data_format",
		       b->name, b->rank);
	return a->nchw ? 1 : b->rank - 1;
}

void k_biasadd(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	       int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 2, nout, 1);
	const pcc_buf *x = in[0], *b = in[1];
	k_f32(k, a, x);
	k_f32(k, a, b);
	k_same_shape(k, a, x, out[0]);
	int cd = chan_dim(k, a, x);
	int64_t C = x->dims[cd], inner = 1;
	if (b->rank != 1 || b->dims[0] != C)
		k_fail(k, a, "the bias must be [%lld]", (long long)C);
	for (int i = cd + 1; i < x->rank; i++)
		inner *= x->dims[i];
	const float *X = FP(x), *B = FP(b);
	float *Y = FP(out[0]);
	for (int64_t i = 0; i < x->numel; i++)
		Y[i] = X[i] + B[i / inner % C];
}

void k_biasadd_grad(pcc_kernel k, const pcc_attrs *a, int nin,
		    pcc_buf *const *in, int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	const pcc_buf *dy = in[0];
	k_f32(k, a, dy);
	k_f32(k, a, out[0]);
	int cd = chan_dim(k, a, dy);
	int64_t C = dy->dims[cd], inner = 1;
	if (out[0]->rank != 1 || out[0]->dims[0] != C)
		k_fail(k, a, "the output must be [%lld]", (long long)C);
	for (int i = cd + 1; i < dy->rank; i++)
		inner *= dy->dims[i];
	double *acc = rt_alloc(sizeof(double) * (size_t)(C ? C : 1));
	const float *DY = FP(dy);
	for (int64_t i = 0; i < dy->numel; i++)
		acc[i / inner % C] += DY[i];
	k_to_float(acc, FP(out[0]), C);
}

/* ---- softmax and cross-entropy ----------------------------------------- */

/* Row r of x: its maximum and log(sum(exp(x - max))). */
static void row_lse(const float *x, int64_t n, double *max, double *lse)
{
	double m = x[0], s = 0;
	for (int64_t j = 1; j < n; j++)
		m = x[j] > m ? x[j] : m;
	for (int64_t j = 0; j < n; j++)
		s += exp((double)x[j] - m);
	*max = m;
	*lse = log(s);
}

void k_softmax(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	       int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	const pcc_buf *x = in[0];
	k_f32(k, a, x);
	k_same_shape(k, a, x, out[0]);
	if (x->rank < 1 || x->dims[x->rank - 1] < 1)
		k_fail(k, a, "softmax needs a non-empty last dimension");
	int64_t C = x->dims[x->rank - 1], rows = x->numel / C;
	for (int64_t r = 0; r < rows; r++) {
		const float *p = FP(x) + r * C;
		float *q = FP(out[0]) + r * C;
		double m, lse;
		row_lse(p, C, &m, &lse);
		for (int64_t j = 0; j < C; j++) {
			double l = (double)p[j] - m - lse;
			q[j] = (float)(k == PCC_K_LogSoftmax ? l : exp(l));
		}
	}
}

/* (features [B, C], labels [B, C] probabilities, or [B] class indices):
 * loss [B] = -Σ labels · log softmax(features), backprop [B, C] =
 * softmax(features) - labels (TensorFlow's SoftmaxCrossEntropyWithLogits
 * and SparseSoftmaxCrossEntropyWithLogits; a class index out of range is
 * an error, as on TensorFlow's CPU). */
void k_sce(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	   int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 2, nout, 2);
	const pcc_buf *x = in[0], *lab = in[1];
	pcc_buf *loss = out[0], *bp = out[1];
	k_f32(k, a, x);
	k_f32(k, a, loss);
	k_f32(k, a, bp);
	k_same_shape(k, a, x, bp);
	if (x->rank != 2 || loss->rank != 1 || loss->dims[0] != x->dims[0])
		k_fail(k, a, "features must be [batch, classes] and the loss [batch]");
	int64_t B = x->dims[0], C = x->dims[1];
	bool sparse = lab->rank == 1;
	if (sparse ? lab->dims[0] != B || lab->dt == PCC_F32
		   : (k == PCC_K_SparseSoftmaxCrossEntropyWithLogits ||
		      lab->dt != PCC_F32))
		k_fail(k, a, "labels must be class indices [%lld]%s", (long long)B,
		       k == PCC_K_SparseSoftmaxCrossEntropyWithLogits ? ""
		       : " or probabilities [batch, classes] (f32)");
	if (!sparse)
		k_same_shape(k, a, x, lab);
	for (int64_t r = 0; r < B; r++) {
		const float *p = FP(x) + r * C;
		float *g = FP(bp) + r * C;
		double m, lse, l = 0;
		row_lse(p, C, &m, &lse);
		int64_t cls = -1;
		if (sparse) {
			cls = lab->dt == PCC_I32 ? ((const int32_t *)lab->data)[r]
						 : ((const int64_t *)lab->data)[r];
			if (cls < 0 || cls >= C)
				k_fail(k, a, "label %lld of row %lld is not in [0, %lld)",
				       (long long)cls, (long long)r, (long long)C);
		}
		for (int64_t j = 0; j < C; j++) {
			double logp = (double)p[j] - m - lse;
			double y = sparse ? (j == cls) : FP(lab)[r * C + j];
			if (y != 0)
				l -= y * logp;
			g[j] = (float)(exp(logp) - y);
		}
		FP(loss)[r] = (float)l;
	}
}
