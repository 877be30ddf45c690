/* kernels.c — the CPU reference kernels for element-wise ops, MatMul,
 * data movement, reductions and optimizer updates, in TensorFlow's
 * semantics (the neural-network kernels are in kernels_nn.c).
 *
 * Plain loops, one thread per device, no blocking: correctness first.
 * Dot products and reductions accumulate in double; element-wise ops,
 * AddN and the optimizer updates compute in float as TensorFlow's CPU
 * kernels do.  Each kernel checks the ranks, shapes and types it relies
 * on and stops the run with a message naming the op otherwise. */
#include "rt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

/* ---- shared checks ---------------------------------------------------- */

_Noreturn void k_fail(pcc_kernel k, const pcc_attrs *a, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	rt_fatal("op '%s' (%s): %s", a->op ? a->op : "?", pcc_kernel_name(k),
		 msg);
}

/* want_in / want_out < 0: at least -want. */
void k_arity(pcc_kernel k, const pcc_attrs *a, int nin, int want_in,
	     int nout, int want_out)
{
	if (want_in >= 0 ? nin != want_in : nin < -want_in)
		k_fail(k, a, "%d inputs, expected %s%d", nin,
		       want_in < 0 ? "at least " : "",
		       want_in < 0 ? -want_in : want_in);
	if (want_out >= 0 ? nout != want_out : nout < -want_out)
		k_fail(k, a, "%d outputs, expected %s%d", nout,
		       want_out < 0 ? "at least " : "",
		       want_out < 0 ? -want_out : want_out);
}

void k_f32(pcc_kernel k, const pcc_attrs *a, const pcc_buf *b)
{
	if (b->dt != PCC_F32)
		k_fail(k, a, "'%s' is %s; the kernel computes on f32", b->name,
		       rt_dtype_name(b->dt));
}

void k_same_shape(pcc_kernel k, const pcc_attrs *a, const pcc_buf *x,
		  const pcc_buf *y)
{
	bool same = x->rank == y->rank;
	for (int i = 0; same && i < x->rank; i++)
		same = x->dims[i] == y->dims[i];
	if (!same)
		k_fail(k, a, "'%s' and '%s' must have the same shape", x->name,
		       y->name);
}

static double elem(const pcc_buf *b, int64_t i)
{
	switch (b->dt) {
	case PCC_F32: return ((const float *)b->data)[i];
	case PCC_I32: return ((const int32_t *)b->data)[i];
	case PCC_I64: return (double)((const int64_t *)b->data)[i];
	case PCC_BOOL: return ((const uint8_t *)b->data)[i];
	}
	return 0;
}

double k_scalar(pcc_kernel k, const pcc_attrs *a, const pcc_buf *b)
{
	if (b->numel != 1)
		k_fail(k, a, "'%s' must be a scalar, not %lld elements", b->name,
		       (long long)b->numel);
	return elem(b, 0);
}

/* dst[i] = acc[i] rounded to float; frees acc. */
float *k_to_float(double *acc, float *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = (float)acc[i];
	free(acc);
	return dst;
}

/* ---- element-wise ------------------------------------------------------ */

void k_unary(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	     int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	const pcc_buf *x = in[0];
	pcc_buf *y = out[0];
	if (y->numel != x->numel)
		k_fail(k, a, "output size %lld differs from input size %lld",
		       (long long)y->numel, (long long)x->numel);
	if (k == PCC_K_ZerosLike || k == PCC_K_OnesLike) {
		if (y->dt != x->dt)
			k_fail(k, a, "output type differs from the input's");
		for (int64_t i = 0; i < y->numel; i++)
			switch (y->dt) {
			case PCC_F32: FP(y)[i] = k == PCC_K_OnesLike; break;
			case PCC_I32: ((int32_t *)y->data)[i] = k == PCC_K_OnesLike; break;
			case PCC_I64: ((int64_t *)y->data)[i] = k == PCC_K_OnesLike; break;
			case PCC_BOOL: ((uint8_t *)y->data)[i] = k == PCC_K_OnesLike; break;
			}
		return;
	}
	k_f32(k, a, x);
	k_f32(k, a, y);
	const float *p = FP(x);
	float *q = FP(y);
	float al = (float)(a->alpha ? a->alpha : 0.2);
	for (int64_t i = 0; i < x->numel; i++) {
		float v = p[i];
		switch (k) {
		case PCC_K_Abs: v = fabsf(v); break;
		case PCC_K_Erf: v = erff(v); break;
		case PCC_K_Exp: v = expf(v); break;
		case PCC_K_Floor: v = floorf(v); break;
		case PCC_K_LeakyRelu: v = v > 0 ? v : al * v; break;
		case PCC_K_Log: v = logf(v); break;
		case PCC_K_Neg: v = -v; break;
		case PCC_K_Reciprocal: v = 1.0f / v; break;
		case PCC_K_Relu: v = v > 0 ? v : 0; break;
		case PCC_K_Relu6: v = v > 0 ? (v < 6 ? v : 6) : 0; break;
		case PCC_K_Rsqrt: v = 1.0f / sqrtf(v); break;
		case PCC_K_Sigmoid: v = 1.0f / (1.0f + expf(-v)); break;
		case PCC_K_Sqrt: v = sqrtf(v); break;
		case PCC_K_Square: v = v * v; break;
		case PCC_K_Tanh: v = tanhf(v); break;
		default: k_fail(k, a, "not an element-wise unary kernel");
		}
		q[i] = v;
	}
}

/* Strides of x for each dimension of the broadcast output o (0 where x
 * is broadcast), NumPy's rules: dimensions aligned from the right. */
static void bcast_strides(pcc_kernel k, const pcc_attrs *a, const pcc_buf *x,
			  const pcc_buf *o, int64_t *st)
{
	int R = o->rank;
	if (x->rank > R)
		k_fail(k, a, "'%s' has a higher rank than the output", x->name);
	int64_t s = 1;
	for (int i = R - 1; i >= 0; i--) {
		int j = i - (R - x->rank);
		if (j < 0) {
			st[i] = 0;
			continue;
		}
		int64_t d = x->dims[j];
		if (d != 1 && d != o->dims[i])
			k_fail(k, a, "'%s' does not broadcast to the output shape",
			       x->name);
		st[i] = d == 1 ? 0 : s;
		s *= d;
	}
}

/* One step in row-major order over the broadcast output o: advances the
 * counters cnt and the n input offsets ix by their strides st. */
static void bcast_step(const pcc_buf *o, int64_t *cnt, int n,
		       int64_t (*st)[PCC_MAX_RANK], int64_t *ix)
{
	for (int d = o->rank - 1; d >= 0; d--) {
		for (int j = 0; j < n; j++)
			ix[j] += st[j][d];
		if (++cnt[d] < o->dims[d])
			return;
		for (int j = 0; j < n; j++)
			ix[j] -= st[j][d] * o->dims[d];
		cnt[d] = 0;
	}
}

/* Element i of an integer tensor (i32 or i64). */
static int64_t ival(const pcc_buf *b, int64_t i)
{
	return b->dt == PCC_I32 ? ((const int32_t *)b->data)[i]
			       : ((const int64_t *)b->data)[i];
}

/* Whether comparison k holds of two elements ordered so (NaN: none of
 * the three, so only NotEqual holds). */
static bool holds(pcc_kernel k, bool lt, bool eq, bool gt)
{
	switch (k) {
	case PCC_K_Equal: return eq;
	case PCC_K_NotEqual: return !eq;
	case PCC_K_Greater: return gt;
	case PCC_K_GreaterEqual: return gt || eq;
	case PCC_K_Less: return lt;
	default: return lt || eq;       /* LessEqual */
	}
}

/* Two integer tensors of one type, broadcasting: comparisons (ids
 * against a padding id) write bool, exactly; Add, AddV2, Sub, Mul,
 * Maximum and Minimum (RoBERTa's position ids: a count times a mask plus
 * the padding index) write that type, wrapping on overflow as
 * TensorFlow's kernels do. */
static void binary_ints(pcc_kernel k, const pcc_attrs *a, const pcc_buf *x,
			const pcc_buf *y, pcc_buf *o, bool cmp)
{
	if (x->dt != y->dt || (x->dt != PCC_I32 && x->dt != PCC_I64))
		k_fail(k, a, "'%s' is %s and '%s' %s; the kernel takes two "
		       "f32, two i32 or two i64", x->name, rt_dtype_name(x->dt),
		       y->name, rt_dtype_name(y->dt));
	if (!cmp && o->dt != x->dt)
		k_fail(k, a, "'%s' is %s; the operands are %s", o->name,
		       rt_dtype_name(o->dt), rt_dtype_name(x->dt));
	int64_t st[2][PCC_MAX_RANK], cnt[PCC_MAX_RANK] = {0}, ix[2] = {0, 0};
	bcast_strides(k, a, x, o, st[0]);
	bcast_strides(k, a, y, o, st[1]);
	for (int64_t i = 0; i < o->numel; i++) {
		int64_t u = ival(x, ix[0]), v = ival(y, ix[1]);
		uint64_t w = 0;   /* unsigned: wrapping, never undefined */
		if (cmp) {
			((uint8_t *)o->data)[i] = holds(k, u < v, u == v, u > v);
			bcast_step(o, cnt, 2, st, ix);
			continue;
		}
		switch (k) {
		case PCC_K_Add: case PCC_K_AddV2: w = (uint64_t)u + (uint64_t)v; break;
		case PCC_K_Sub: w = (uint64_t)u - (uint64_t)v; break;
		case PCC_K_Mul: w = (uint64_t)u * (uint64_t)v; break;
		case PCC_K_Maximum: w = (uint64_t)(u > v ? u : v); break;
		case PCC_K_Minimum: w = (uint64_t)(u < v ? u : v); break;
		default: k_fail(k, a, "integer operands ('%s' is %s): the kernel "
				"computes on f32", x->name, rt_dtype_name(x->dt));
		}
		if (o->dt == PCC_I32)
			((int32_t *)o->data)[i] = (int32_t)(uint32_t)w;
		else
			((int64_t *)o->data)[i] = (int64_t)w;
		bcast_step(o, cnt, 2, st, ix);
	}
}

void k_binary(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 2, nout, 1);
	const pcc_buf *x = in[0], *y = in[1];
	pcc_buf *o = out[0];
	bool cmp = k == PCC_K_Equal || k == PCC_K_NotEqual || k == PCC_K_Greater ||
		   k == PCC_K_GreaterEqual || k == PCC_K_Less || k == PCC_K_LessEqual;
	if ((!cmp || o->dt == PCC_BOOL) && (x->dt != PCC_F32 || y->dt != PCC_F32)) {
		binary_ints(k, a, x, y, o, cmp);
		return;
	}
	k_f32(k, a, x);
	k_f32(k, a, y);
	if (cmp && o->dt != PCC_BOOL)
		k_fail(k, a, "'%s' is %s; a comparison writes bool", o->name,
		       rt_dtype_name(o->dt));
	if (!cmp)
		k_f32(k, a, o);
	int64_t st[2][PCC_MAX_RANK], cnt[PCC_MAX_RANK] = {0}, ix[2] = {0, 0};
	bcast_strides(k, a, x, o, st[0]);
	bcast_strides(k, a, y, o, st[1]);
	const float *p = FP(x), *q = FP(y);
	float *r = cmp ? NULL : FP(o);
	uint8_t *rb = cmp ? (uint8_t *)o->data : NULL;
	for (int64_t i = 0; i < o->numel; i++) {
		float u = p[ix[0]], v = q[ix[1]], w;
		if (cmp) {
			rb[i] = holds(k, u < v, u == v, u > v);
			bcast_step(o, cnt, 2, st, ix);
			continue;
		}
		switch (k) {
		case PCC_K_Add: case PCC_K_AddV2: w = u + v; break;
		case PCC_K_Sub: w = u - v; break;
		case PCC_K_Mul: w = u * v; break;
		case PCC_K_RealDiv: w = u / v; break;
		case PCC_K_Maximum: w = u > v ? u : v; break;
		case PCC_K_Minimum: w = u < v ? u : v; break;
		case PCC_K_SquaredDifference: w = (u - v) * (u - v); break;
		case PCC_K_Pow: w = powf(u, v); break;
		default: k_fail(k, a, "not an element-wise binary kernel");
		}
		r[i] = w;
		bcast_step(o, cnt, 2, st, ix);
	}
}

void k_select(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 3, nout, 1);
	const pcc_buf *c = in[0], *x = in[1], *y = in[2];
	pcc_buf *o = out[0];
	if (c->dt != PCC_BOOL)
		k_fail(k, a, "'%s' is %s; the condition is bool", c->name,
		       rt_dtype_name(c->dt));
	k_f32(k, a, x);
	k_f32(k, a, y);
	k_f32(k, a, o);
	int64_t st[3][PCC_MAX_RANK], cnt[PCC_MAX_RANK] = {0}, ix[3] = {0, 0, 0};
	bcast_strides(k, a, c, o, st[0]);
	bcast_strides(k, a, x, o, st[1]);
	bcast_strides(k, a, y, o, st[2]);
	const uint8_t *pc = (const uint8_t *)c->data;
	const float *p = FP(x), *q = FP(y);
	float *r = FP(o);
	for (int64_t i = 0; i < o->numel; i++) {
		r[i] = pc[ix[0]] ? p[ix[1]] : q[ix[2]];
		bcast_step(o, cnt, 3, st, ix);
	}
}

void k_elemgrad(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 2, nout, 1);
	for (int i = 0; i < 2; i++) {
		k_f32(k, a, in[i]);
		k_same_shape(k, a, in[i], out[0]);
	}
	const float *p = FP(in[0]), *q = FP(in[1]);
	float *r = FP(out[0]);
	for (int64_t i = 0; i < out[0]->numel; i++) {
		float u = p[i], v = q[i];
		switch (k) {
		case PCC_K_ReluGrad: r[i] = v > 0 ? u : 0; break;
		case PCC_K_Relu6Grad: r[i] = v > 0 && v < 6 ? u : 0; break;
		case PCC_K_TanhGrad: r[i] = v * (1 - u * u); break;
		case PCC_K_SigmoidGrad: r[i] = v * u * (1 - u); break;
		default: k_fail(k, a, "not an element-wise gradient kernel");
		}
	}
}

void k_addn(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	    int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, -1, nout, 1);
	k_f32(k, a, out[0]);
	for (int i = 0; i < nin; i++) {
		k_f32(k, a, in[i]);
		k_same_shape(k, a, in[i], out[0]);
	}
	float *r = FP(out[0]);
	for (int64_t e = 0; e < out[0]->numel; e++) {
		float s = FP(in[0])[e];
		for (int i = 1; i < nin; i++)
			s += FP(in[i])[e];
		r[e] = s;
	}
}

/* ---- data movement ------------------------------------------------------ */

void k_copy(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	    int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	if (in[0]->dt != out[0]->dt || in[0]->numel != out[0]->numel)
		k_fail(k, a, "'%s' (%s, %lld elements) does not fit '%s' (%s, "
		       "%lld elements)", in[0]->name, rt_dtype_name(in[0]->dt),
		       (long long)in[0]->numel, out[0]->name,
		       rt_dtype_name(out[0]->dt), (long long)out[0]->numel);
	memcpy(out[0]->data, in[0]->data,
	       (size_t)in[0]->numel * rt_dtype_size(in[0]->dt));
}

void k_cast(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	    int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	const pcc_buf *x = in[0];
	pcc_buf *y = out[0];
	if (x->numel != y->numel)
		k_fail(k, a, "output size differs from the input's");
	for (int64_t i = 0; i < x->numel; i++) {
		double v = elem(x, i);
		switch (y->dt) {
		case PCC_F32: FP(y)[i] = (float)v; break;
		case PCC_I32: ((int32_t *)y->data)[i] = (int32_t)v; break;
		case PCC_I64: ((int64_t *)y->data)[i] = x->dt == PCC_I64
			? ((const int64_t *)x->data)[i] : (int64_t)v; break;
		case PCC_BOOL: ((uint8_t *)y->data)[i] = v != 0; break;
		}
	}
}

/* Sizes before axis, along it, after it. */
static void around(const pcc_buf *b, int axis, int64_t *outer, int64_t *inner)
{
	*outer = *inner = 1;
	for (int i = 0; i < axis; i++)
		*outer *= b->dims[i];
	for (int i = axis + 1; i < b->rank; i++)
		*inner *= b->dims[i];
}

/* The pieces p[0..n) concatenated along axis are whole: shapes agree. */
static void check_pieces(pcc_kernel k, const pcc_attrs *a, const pcc_buf *whole,
			 pcc_buf *const *p, int n, int axis)
{
	if (axis < 0 || axis >= whole->rank)
		k_fail(k, a, "axis %d is out of range for rank %d", axis,
		       whole->rank);
	int64_t sum = 0;
	for (int i = 0; i < n; i++) {
		bool ok = p[i]->rank == whole->rank && p[i]->dt == whole->dt;
		for (int d = 0; ok && d < whole->rank; d++)
			ok = d == axis || p[i]->dims[d] == whole->dims[d];
		if (!ok)
			k_fail(k, a, "'%s' does not fit '%s' along axis %d",
			       p[i]->name, whole->name, axis);
		sum += p[i]->dims[axis];
	}
	if (sum != whole->dims[axis])
		k_fail(k, a, "the parts add up to %lld along axis %d, not %lld",
		       (long long)sum, axis, (long long)whole->dims[axis]);
}

void k_concat(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, -1, nout, 1);
	pcc_buf *o = out[0];
	check_pieces(k, a, o, in, nin, a->axis);
	int64_t outer, inner;
	around(o, a->axis, &outer, &inner);
	size_t es = rt_dtype_size(o->dt);
	char *dst = o->data;
	for (int64_t r = 0; r < outer; r++)
		for (int i = 0; i < nin; i++) {
			size_t len = (size_t)(in[i]->dims[a->axis] * inner) * es;
			memcpy(dst, (const char *)in[i]->data + (size_t)r * len, len);
			dst += len;
		}
}

void k_split(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	     int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, -1);
	const pcc_buf *x = in[0];
	check_pieces(k, a, x, out, nout, a->axis);
	int64_t outer, inner;
	around(x, a->axis, &outer, &inner);
	size_t es = rt_dtype_size(x->dt);
	const char *src = x->data;
	for (int64_t r = 0; r < outer; r++)
		for (int i = 0; i < nout; i++) {
			size_t len = (size_t)(out[i]->dims[a->axis] * inner) * es;
			memcpy((char *)out[i]->data + (size_t)r * len, src, len);
			src += len;
		}
}

/* Pack and Unpack: the slices s[0..n) of whole along axis, which the
 * slices do not have (each is whole without that dimension).  Pack
 * copies them in, Unpack out. */
static void stack_copy(pcc_kernel k, const pcc_attrs *a, pcc_buf *whole,
		       pcc_buf *const *s, int n, bool in)
{
	int axis = a->axis;
	if (axis < 0 || axis >= whole->rank || whole->dims[axis] != n)
		k_fail(k, a, "axis %d of '%s' does not hold %d slices", axis,
		       whole->name, n);
	for (int i = 0; i < n; i++) {
		bool ok = s[i]->rank == whole->rank - 1 && s[i]->dt == whole->dt;
		for (int d = 0; ok && d < s[i]->rank; d++)
			ok = s[i]->dims[d] == whole->dims[d < axis ? d : d + 1];
		if (!ok)
			k_fail(k, a, "'%s' is not a slice of '%s' along axis %d",
			       s[i]->name, whole->name, axis);
	}
	int64_t outer, inner;
	around(whole, axis, &outer, &inner);
	size_t len = (size_t)inner * rt_dtype_size(whole->dt);
	char *w = whole->data;
	for (int64_t r = 0; r < outer; r++)
		for (int i = 0; i < n; i++, w += len) {
			char *p = (char *)s[i]->data + (size_t)r * len;
			if (in)
				memcpy(w, p, len);
			else
				memcpy(p, w, len);
		}
}

void k_pack(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	    int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, -1, nout, 1);
	stack_copy(k, a, out[0], in, nin, true);
}

void k_unpack(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, -1);
	stack_copy(k, a, (pcc_buf *)in[0], out, nout, false);
}

/* y[i] = x[base + Σ_d index_d(i)·st[d]], y's elements in order:
 * Transpose's permuted strides, BroadcastTo's (0 along broadcast
 * dimensions), Slice's (x's own, from the box's corner). */
static void strided_copy(const pcc_buf *x, pcc_buf *y, const int64_t *st,
			 int64_t base)
{
	size_t es = rt_dtype_size(x->dt);
	int64_t ix = base, cnt[PCC_MAX_RANK] = {0};
	for (int64_t i = 0; i < y->numel; i++) {
		memcpy((char *)y->data + (size_t)i * es,
		       (const char *)x->data + (size_t)ix * es, es);
		for (int d = y->rank - 1; d >= 0; d--) {
			ix += st[d];
			if (++cnt[d] < y->dims[d])
				break;
			ix -= st[d] * y->dims[d];
			cnt[d] = 0;
		}
	}
}

void k_transpose(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		 int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	const pcc_buf *x = in[0];
	pcc_buf *y = out[0];
	int R = x->rank;
	if (y->rank != R || y->dt != x->dt)
		k_fail(k, a, "output rank or type differs from the input's");
	int64_t xs[PCC_MAX_RANK], st[PCC_MAX_RANK], s = 1;
	for (int i = R - 1; i >= 0; i--) {
		xs[i] = s;
		s *= x->dims[i];
	}
	unsigned seen = 0;
	for (int i = 0; i < R; i++) {
		int p = a->perm[i];
		if (p < 0 || p >= R || (seen >> p & 1) || y->dims[i] != x->dims[p])
			k_fail(k, a, "perm is not a permutation giving the output shape");
		seen |= 1u << p;
		st[i] = xs[p];
	}
	strided_copy(x, y, st, 0);
}

/* out[i] = x[the element of x that broadcasts to out's index i]
 * (NumPy's rules), any element type. */
void k_broadcast(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		 int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	const pcc_buf *x = in[0];
	pcc_buf *y = out[0];
	if (x->dt != y->dt)
		k_fail(k, a, "output type differs from the input's");
	int64_t st[PCC_MAX_RANK];
	bcast_strides(k, a, x, y, st);
	strided_copy(x, y, st, 0);
}

/* One input, one output of its rank and type (Slice, Roll): the rank. */
static int one_to_one(pcc_kernel k, const pcc_attrs *a, int nin,
		      pcc_buf *const *in, int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	if (out[0]->rank != in[0]->rank || out[0]->dt != in[0]->dt)
		k_fail(k, a, "output rank or type differs from the input's");
	return in[0]->rank;
}

/* The box of the output's shape at a->begin, any element type. */
void k_slice(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	     int nout, pcc_buf *const *out)
{
	int R = one_to_one(k, a, nin, in, nout, out);
	const pcc_buf *x = in[0];
	pcc_buf *y = out[0];
	int64_t xs[PCC_MAX_RANK], s = 1, corner = 0;
	for (int i = R - 1; i >= 0; i--) {
		if (a->begin[i] < 0 || a->begin[i] + y->dims[i] > x->dims[i])
			k_fail(k, a, "the box [%lld, %lld) does not fit dimension %d "
			       "of size %lld", (long long)a->begin[i],
			       (long long)(a->begin[i] + y->dims[i]), i,
			       (long long)x->dims[i]);
		xs[i] = s;
		s *= x->dims[i];
		corner += a->begin[i] * xs[i];
	}
	strided_copy(x, y, xs, corner);
}

/* Roll: element i of every dimension d moves to (i + a->begin[d]) mod its
 * size (the net shifts, in [0, size): pcc resolves shift and axis at
 * emit time).  Any element type. */
void k_roll(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	    int nout, pcc_buf *const *out)
{
	int R = one_to_one(k, a, nin, in, nout, out);
	const pcc_buf *x = in[0];
	pcc_buf *y = out[0];
	int64_t ys[PCC_MAX_RANK], s = 1, cnt[PCC_MAX_RANK] = {0}, iy = 0;
	for (int i = R - 1; i >= 0; i--) {
		if (y->dims[i] != x->dims[i] || a->begin[i] < 0 ||
		    (a->begin[i] && a->begin[i] >= x->dims[i]))
			k_fail(k, a, "dimension %d: shift %lld for size %lld", i,
			       (long long)a->begin[i], (long long)x->dims[i]);
		ys[i] = s;
		s *= y->dims[i];
		iy += a->begin[i] * ys[i];    /* where element 0 goes */
	}
	size_t es = rt_dtype_size(x->dt);
	const char *src = x->data;
	char *dst = y->data;
	for (int64_t i = 0; i < x->numel; i++) {
		memcpy(dst + (size_t)iy * es, src + (size_t)i * es, es);
		/* the next element: the last dimension first, wrapping the
		 * destination index within each dimension */
		for (int d = R - 1; d >= 0; d--) {
			int64_t c = ++cnt[d], at = (c - 1 + a->begin[d]) % x->dims[d];
			iy += at + 1 == x->dims[d] ? -at * ys[d] : ys[d];
			if (c < x->dims[d])
				break;
			cnt[d] = 0;
		}
	}
}

/* Pad, PadV2: the output filled with 0 (PadV2: its scalar value input),
 * the input copied to the box at a->begin (the paddings before each
 * dimension; the output's shape gives those after).  f32. */
void k_pad(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	   int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, k == PCC_K_PadV2 ? 2 : 1, nout, 1);
	const pcc_buf *x = in[0];
	pcc_buf *y = out[0];
	k_f32(k, a, x);
	k_f32(k, a, y);
	float v = k == PCC_K_PadV2 ? (float)k_scalar(k, a, in[1]) : 0.0f;
	int R = x->rank;
	if (y->rank != R)
		k_fail(k, a, "output rank differs from the input's");
	int64_t ys[PCC_MAX_RANK], s = 1, corner = 0, cnt[PCC_MAX_RANK] = {0};
	for (int i = R - 1; i >= 0; i--) {
		if (a->begin[i] < 0 || a->begin[i] + x->dims[i] > y->dims[i])
			k_fail(k, a, "dimension %d: %lld + %lld does not fit %lld", i,
			       (long long)a->begin[i], (long long)x->dims[i],
			       (long long)y->dims[i]);
		ys[i] = s;
		s *= y->dims[i];
		corner += a->begin[i] * ys[i];
	}
	for (int64_t i = 0; i < y->numel; i++)
		FP(y)[i] = v;
	int64_t iy = corner;
	for (int64_t i = 0; i < x->numel; i++) {
		FP(y)[iy] = FP(x)[i];
		for (int d = R - 1; d >= 0; d--) {
			iy += ys[d];
			if (++cnt[d] < x->dims[d])
				break;
			iy -= ys[d] * x->dims[d];
			cnt[d] = 0;
		}
	}
}

/* Index i of an integer tensor (i32 or i64). */
static int64_t index_at(pcc_kernel k, const pcc_attrs *a, const pcc_buf *b,
			int64_t i)
{
	switch (b->dt) {
	case PCC_I32: return ((const int32_t *)b->data)[i];
	case PCC_I64: return ((const int64_t *)b->data)[i];
	default: k_fail(k, a, "'%s' must hold i32 or i64 indices", b->name);
	}
}

/* (params, indices), axis: out = params[:axis] + indices + params[axis+1:]
 * in shape; an index outside [0, params.dims[axis]) is an error (as on
 * TensorFlow's CPU).  Any element type. */
void k_gather(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 2, nout, 1);
	const pcc_buf *p = in[0], *ix = in[1];
	pcc_buf *y = out[0];
	int ax = a->axis;
	bool ok = ax >= 0 && ax < p->rank && y->dt == p->dt &&
		  y->rank == p->rank - 1 + ix->rank;
	for (int i = 0; ok && i < y->rank; i++)
		ok = y->dims[i] == (i < ax ? p->dims[i]
				    : i < ax + ix->rank ? ix->dims[i - ax]
				    : p->dims[i - ix->rank + 1]);
	if (!ok)
		k_fail(k, a, "the output is not params[:%d] + indices + "
		       "params[%d:] in shape and type", ax, ax + 1);
	int64_t outer, inner, N = p->dims[ax];
	around(p, ax, &outer, &inner);
	size_t es = rt_dtype_size(p->dt), len = (size_t)inner * es;
	char *dst = y->data;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < ix->numel; i++) {
			int64_t j = index_at(k, a, ix, i);
			if (j < 0 || j >= N)
				k_fail(k, a, "index %lld (element %lld) is not in [0, %lld)",
				       (long long)j, (long long)i, (long long)N);
			memcpy(dst, (const char *)p->data + (size_t)(o * N + j) * len, len);
			dst += len;
		}
}

/* ---- reductions -------------------------------------------------------- */

void k_reduce(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 1, nout, 1);
	const pcc_buf *x = in[0];
	pcc_buf *y = out[0];
	k_f32(k, a, x);
	k_f32(k, a, y);
	int R = x->rank;
	/* Output stride of each input dimension (0 for reduced ones). */
	int64_t os[PCC_MAX_RANK], cnt[PCC_MAX_RANK] = {0}, n = 1, cells = 1;
	for (int i = R - 1; i >= 0; i--) {
		bool red = a->axes >> i & 1;
		os[i] = red ? 0 : n;
		if (red)
			cells *= x->dims[i];
		else
			n *= x->dims[i];
	}
	if (n != y->numel)
		k_fail(k, a, "the output has %lld elements, the reduction %lld",
		       (long long)y->numel, (long long)n);
	double *acc = rt_alloc(sizeof(double) * (size_t)(n ? n : 1));
	bool *seen = rt_alloc((size_t)(n ? n : 1));
	const float *p = FP(x);
	int64_t o = 0;
	for (int64_t i = 0; i < x->numel; i++) {
		double v = p[i];
		if (!seen[o]) {
			acc[o] = v;
			seen[o] = true;
		} else if (k == PCC_K_Sum || k == PCC_K_Mean)
			acc[o] += v;
		else if (k == PCC_K_Prod)
			acc[o] *= v;
		else if (k == PCC_K_Max ? v > acc[o] : v < acc[o])
			acc[o] = v;
		for (int d = R - 1; d >= 0; d--) {
			o += os[d];
			if (++cnt[d] < x->dims[d])
				break;
			o -= os[d] * x->dims[d];
			cnt[d] = 0;
		}
	}
	for (int64_t i = 0; i < n; i++) {
		double v = seen[i] ? acc[i] : (k == PCC_K_Prod ? 1 : 0);
		if (k == PCC_K_Mean)
			v = cells ? v / (double)cells : NAN;
		FP(y)[i] = (float)v;
	}
	free(acc);
	free(seen);
}

/* (data, segment_ids): out[s, ...] = Σ data[i..., ...] over the ids
 * segment_ids[i...] = s; out is [num_segments] + data.dims[ids' rank:].
 * Negative ids are dropped and ids >= num_segments are an error, as on
 * TensorFlow's CPU; segments without ids are 0. */
void k_segsum(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 2, nout, 1);
	const pcc_buf *x = in[0], *ids = in[1];
	pcc_buf *y = out[0];
	k_f32(k, a, x);
	k_f32(k, a, y);
	int r = ids->rank;
	bool ok = r <= x->rank && y->rank == x->rank - r + 1;
	for (int i = 0; ok && i < r; i++)
		ok = ids->dims[i] == x->dims[i];
	for (int i = 1; ok && i < y->rank; i++)
		ok = y->dims[i] == x->dims[r + i - 1];
	if (!ok)
		k_fail(k, a, "segment_ids must be a prefix of data's shape and the "
		       "output [num_segments] + the rest of it");
	int64_t S = y->dims[0], inner = S ? y->numel / S : 0;
	double *acc = rt_alloc(sizeof(double) * (size_t)(y->numel + 1));
	for (int64_t i = 0; i < ids->numel; i++) {
		int64_t s = index_at(k, a, ids, i);
		if (s >= S)
			k_fail(k, a, "segment id %lld (element %lld) is not below %lld",
			       (long long)s, (long long)i, (long long)S);
		for (int64_t j = 0; s >= 0 && j < inner; j++)
			acc[s * inner + j] += FP(x)[i * inner + j];
	}
	k_to_float(acc, FP(y), y->numel);
}

/* ---- MatMul ------------------------------------------------------------ */

/* C[M,N] = op(A) op(B), op transposing when asked. */
static void matmul2(const float *A, const float *B, float *C, int64_t M,
		    int64_t N, int64_t K, bool ta, bool tb)
{
	/* Element (i, k) of op(a) and (k, j) of op(b). */
	int64_t ai = ta ? 1 : K, ak = ta ? M : 1;
	int64_t bk = tb ? 1 : N, bj = tb ? K : 1;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0;
			for (int64_t q = 0; q < K; q++)
				s += (double)A[i * ai + q * ak] * B[q * bk + j * bj];
			C[i * N + j] = (float)s;
		}
}

/* MatMul, and BatchMatMul(V2): matrices in the last two dimensions, the
 * leading ones broadcast (NumPy's rules); transpose_a/b stand for
 * adj_x/adj_y. */
void k_matmul(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 2, nout, 1);
	const pcc_buf *x = in[0], *w = in[1];
	pcc_buf *y = out[0];
	k_f32(k, a, x);
	k_f32(k, a, w);
	k_f32(k, a, y);
	int R = y->rank;
	if (k == PCC_K_MatMul ? x->rank != 2 || w->rank != 2 || R != 2
	    : x->rank < 2 || w->rank < 2 || R != (x->rank > w->rank ? x->rank
							       : w->rank))
		k_fail(k, a, k == PCC_K_MatMul ? "inputs and output must be matrices"
		       : "inputs must be batches of matrices of the output's rank");
	const int64_t *xd = x->dims + x->rank - 2, *wd = w->dims + w->rank - 2;
	int64_t M = xd[a->transpose_a ? 1 : 0], K = xd[a->transpose_a ? 0 : 1];
	int64_t K2 = wd[a->transpose_b ? 1 : 0], N = wd[a->transpose_b ? 0 : 1];
	if (K != K2 || y->dims[R - 2] != M || y->dims[R - 1] != N)
		k_fail(k, a, "[%lld,%lld] x [%lld,%lld] does not give [%lld,%lld]",
		       (long long)M, (long long)K, (long long)K2, (long long)N,
		       (long long)y->dims[R - 2], (long long)y->dims[R - 1]);
	/* Batch strides of x and w in units of whole matrices (0: broadcast). */
	int64_t sx[PCC_MAX_RANK], sw[PCC_MAX_RANK], nb = 1;
	for (int i = 0; i < R - 2; i++)
		nb *= y->dims[i];
	for (int t = 0; t < 2; t++) {
		const pcc_buf *b = t ? w : x;
		int64_t *st = t ? sw : sx, s = 1;
		for (int i = R - 3; i >= 0; i--) {
			int j = i - (R - b->rank);
			int64_t dd = j < 0 ? 1 : b->dims[j];
			if (dd != 1 && dd != y->dims[i])
				k_fail(k, a, "the batch dimensions of '%s' do not "
				       "broadcast to the output's", b->name);
			st[i] = dd == 1 ? 0 : s;
			s *= dd;
		}
	}
	for (int64_t bi = 0; bi < nb; bi++) {
		int64_t ox = 0, ow = 0, rem = bi;
		for (int i = R - 3; i >= 0; i--) {
			int64_t c = rem % y->dims[i];
			rem /= y->dims[i];
			ox += c * sx[i];
			ow += c * sw[i];
		}
		matmul2(FP(x) + ox * M * K, FP(w) + ow * K * N, FP(y) + bi * M * N, M,
			N, K, a->transpose_a, a->transpose_b);
	}
}

/* ---- random numbers ------------------------------------------------------ */

/* RandomUniform: element i of the whole output is the top 24 bits of
 * pcc_seed_hash(origin, seed·2^32 + seed2, i) times 2^-24, a float in
 * [0, 1).  It depends on the original op, its seeds and the element's
 * index only: every replica and every plan computes the same tensor.  A
 * replica that draws a slice (rng_whole > 0: [rng_begin, + its size)
 * along rng_dim of a tensor rng_whole long there, gir's @rng_slice)
 * numbers each element by its index in the whole tensor. */
void k_random(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
	      int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 0, nout, 1);
	pcc_buf *y = out[0];
	k_f32(k, a, y);
	const char *key = a->origin ? a->origin : a->op ? a->op : "";
	uint64_t seed = ((uint64_t)a->seed << 32) ^ (uint64_t)a->seed2;
	int64_t outer = 1, n = y->numel, inner = 1, begin = 0, whole = n;
	if (a->rng_whole > 0) {
		int d = a->rng_dim;
		if (d < 0 || d >= y->rank || a->rng_begin < 0 ||
		    a->rng_begin + y->dims[d] > a->rng_whole)
			k_fail(k, a, "a slice [%lld, +%lld) along dimension %d "
			       "of a whole %lld long there",
			       (long long)a->rng_begin,
			       (long long)(d >= 0 && d < y->rank ? y->dims[d] : 0),
			       d, (long long)a->rng_whole);
		for (int i = 0; i < d; i++)
			outer *= y->dims[i];
		for (int i = d + 1; i < y->rank; i++)
			inner *= y->dims[i];
		n = y->dims[d];
		begin = a->rng_begin;
		whole = a->rng_whole;
	}
	float *p = FP(y);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < n; j++) {
			uint64_t base = (uint64_t)((o * whole + begin + j) * inner);
			for (int64_t t = 0; t < inner; t++)
				*p++ = (float)(pcc_seed_hash(key, seed, base +
							     (uint64_t)t) >> 40) *
				       0x1.0p-24f;
		}
}

/* ---- optimizer updates ------------------------------------------------- */

/* The updated variable in[0] also goes to out[0] when the op has one. */
static void apply_out(pcc_kernel k, const pcc_attrs *a, const pcc_buf *var,
		      int nout, pcc_buf *const *out)
{
	if (nout > 1)
		k_fail(k, a, "an update has at most one output");
	if (nout == 1 && out[0] != var) {
		k_same_shape(k, a, var, out[0]);
		memcpy(out[0]->data, var->data, sizeof(float) * (size_t)var->numel);
	}
}

static void apply_check(pcc_kernel k, const pcc_attrs *a, pcc_buf *const *in,
			int nin, int grad)
{
	for (int i = 0; i < nin; i++)
		k_f32(k, a, in[i]);
	k_same_shape(k, a, in[0], in[grad]);
}

void k_apply_gd(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 3, nout, nout);
	apply_check(k, a, in, nin, 2);
	float lr = (float)k_scalar(k, a, in[1]);
	float *v = FP(in[0]);
	const float *g = FP(in[2]);
	for (int64_t i = 0; i < in[0]->numel; i++)
		v[i] -= lr * g[i];
	apply_out(k, a, in[0], nout, out);
}

void k_apply_momentum(pcc_kernel k, const pcc_attrs *a, int nin,
		      pcc_buf *const *in, int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 5, nout, nout);
	apply_check(k, a, in, nin, 3);
	k_same_shape(k, a, in[0], in[1]);
	float lr = (float)k_scalar(k, a, in[2]);
	float mom = (float)k_scalar(k, a, in[4]);
	float *v = FP(in[0]), *acc = FP(in[1]);
	const float *g = FP(in[3]);
	for (int64_t i = 0; i < in[0]->numel; i++) {
		acc[i] = acc[i] * mom + g[i];
		if (a->use_nesterov)
			v[i] -= g[i] * lr + acc[i] * mom * lr;
		else
			v[i] -= lr * acc[i];
	}
	apply_out(k, a, in[0], nout, out);
}

void k_apply_adam(pcc_kernel k, const pcc_attrs *a, int nin, pcc_buf *const *in,
		  int nout, pcc_buf *const *out)
{
	k_arity(k, a, nin, 10, nout, nout);
	apply_check(k, a, in, nin, 9);
	k_same_shape(k, a, in[0], in[1]);
	k_same_shape(k, a, in[0], in[2]);
	double b1p = k_scalar(k, a, in[3]), b2p = k_scalar(k, a, in[4]);
	float lr = (float)k_scalar(k, a, in[5]);
	float b1 = (float)k_scalar(k, a, in[6]), b2 = (float)k_scalar(k, a, in[7]);
	float eps = (float)k_scalar(k, a, in[8]);
	/* TensorFlow's ApplyAdamOp: lr_t = lr·sqrt(1 - β2^t) / (1 - β1^t). */
	float alpha = (float)(lr * sqrt(1 - b2p) / (1 - b1p));
	float *v = FP(in[0]), *m = FP(in[1]), *s = FP(in[2]);
	const float *g = FP(in[9]);
	for (int64_t i = 0; i < in[0]->numel; i++) {
		m[i] += (g[i] - m[i]) * (1 - b1);
		s[i] += (g[i] * g[i] - s[i]) * (1 - b2);
		v[i] -= m[i] * alpha / (sqrtf(s[i]) + eps);
	}
	apply_out(k, a, in[0], nout, out);
}
