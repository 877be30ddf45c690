/* infer.c — shape inference for the op table's ops (TensorFlow's shape
 * functions; ops.def's SHAPE column).  docs/ops.md states every rule.
 *
 * Shapes may hold DIM_UNKNOWN ('?'): a dimension computed from an unknown
 * one is unknown; consistency checks skip unknown dimensions.  A declared
 * output type that agrees with the inferred one wherever both are known is
 * returned as declared, so verification is a compatibility check.
 * Shape-valued inputs (Reshape's shape, ConcatV2's axis, ...) are read
 * through fold.c's const_ints. */
#include "opsint.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

static const struct {
	const char *name;
	DType dt;
} tf_dtypes[] = {
	{"DT_HALF", DT_F16}, {"half", DT_F16}, {"float16", DT_F16},
	{"DT_BFLOAT16", DT_BF16}, {"bfloat16", DT_BF16},
	{"DT_FLOAT", DT_F32}, {"float", DT_F32}, {"float32", DT_F32},
	{"DT_DOUBLE", DT_F64}, {"double", DT_F64}, {"float64", DT_F64},
	{"DT_INT8", DT_I8}, {"int8", DT_I8}, {"DT_INT16", DT_I16},
	{"int16", DT_I16}, {"DT_INT32", DT_I32}, {"int32", DT_I32},
	{"DT_INT64", DT_I64}, {"int64", DT_I64}, {"DT_UINT8", DT_U8},
	{"uint8", DT_U8}, {"DT_BOOL", DT_BOOL},
};

/* A dtype attribute: a type value (f32[]), or a name: f32, DT_FLOAT, float. */
static bool attr_dtype(const Graph *g, const Op *op, const char *key,
		       DType *dt)
{
	const Value *v = op_get(g, op, key);
	if (!v)
		return false;
	if (v->kind == V_TYPE) {
		*dt = v->t.dt;
		return true;
	}
	if (v->kind != V_IDENT && v->kind != V_STR)
		return false;
	if (dtype_parse(v->s, strlen(v->s), dt))
		return true;
	for (size_t i = 0; i < sizeof tf_dtypes / sizeof tf_dtypes[0]; i++)
		if (strcmp(v->s, tf_dtypes[i].name) == 0) {
			*dt = tf_dtypes[i].dt;
			return true;
		}
	return false;
}

/* ---- shape inference ----------------------------------------------- */

/* *r = a * b for known sizes; true if that is too large. */
static bool mul_big(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_mul_overflow(a, b, r) || *r > DIM_MAX;
}

typedef struct Ctx {
	const Graph *g;
	const Op *op;
	Ins in;
	Type *out;
	uint32_t nout;
	Arena *a;
	char *msg;
	size_t n;
	bool free_out[8];        /* outputs whose declared type wins */
} Ctx;

__attribute__((format(printf, 2, 3)))
static int fail(Ctx *c, const char *fmt, ...)
{
	if (c->msg && c->n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->msg, c->n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static char *shape_str(const Type *t, char *buf, size_t n)
{
	char tmp[256];
	type_str(t, tmp, sizeof tmp);
	const char *p = strchr(tmp, '[');
	if (!p)
		p = tmp;
	size_t len = strlen(p);
	if (len >= n)
		len = n - 1;
	memcpy(buf, p, len);
	buf[len] = 0;
	return buf;
}

static void set_out(Ctx *c, uint32_t k, DType dt, int r, const int64_t *d)
{
	if (k < c->nout)
		c->out[k] = type_make(c->a, dt, r, d);
}

/* Merges two dims that must agree: *d receives the known one. */
static int merge_dim(Ctx *c, int64_t x, int64_t y, int64_t *d,
		     const char *what)
{
	if (x >= 0 && y >= 0 && x != y)
		return fail(c, "%s differ: %lld vs %lld", what, (long long)x,
			    (long long)y);
	*d = x >= 0 ? x : y;
	return 0;
}

static int need_rank(Ctx *c, const Type *t, int r, const char *what)
{
	if (t->rank != r)
		return fail(c, "%s must have rank %d, not %d", what, r, t->rank);
	return 0;
}

static int same_dtype(Ctx *c, const Type *x, const Type *y)
{
	if (x->dt != y->dt)
		return fail(c, "input types differ: %s vs %s", dtype_name(x->dt),
			    dtype_name(y->dt));
	return 0;
}

/* Shapes that must be equal (no broadcasting); merged into d. */
static int merge_shape(Ctx *c, const Type *x, const Type *y, int64_t *d)
{
	char a[128], b[128];
	if (x->rank != y->rank)
		goto bad;
	for (int i = 0; i < x->rank; i++) {
		if (x->dims[i] >= 0 && y->dims[i] >= 0 && x->dims[i] != y->dims[i])
			goto bad;
		d[i] = x->dims[i] >= 0 ? x->dims[i] : y->dims[i];
	}
	return 0;
bad:
	return fail(c, "input shapes differ: %s vs %s",
		    shape_str(x, a, sizeof a), shape_str(y, b, sizeof b));
}

/* NumPy broadcasting of x and y into d; returns the rank or -1. */
static int broadcast(Ctx *c, const Type *x, const Type *y, int64_t *d)
{
	int r = x->rank > y->rank ? x->rank : y->rank;
	for (int i = 0; i < r; i++) {
		int ix = x->rank - r + i, iy = y->rank - r + i;
		int64_t a = ix >= 0 ? x->dims[ix] : 1;
		int64_t b = iy >= 0 ? y->dims[iy] : 1;
		if (a == 1)
			d[i] = b;
		else if (b == 1)
			d[i] = a;
		else if (a < 0 || b < 0)
			d[i] = a < 0 ? b : a;
		else if (a != b) {
			char s1[128], s2[128];
			return fail(c, "shapes cannot be broadcast: %s vs %s",
				    shape_str(x, s1, sizeof s1),
				    shape_str(y, s2, sizeof s2));
		} else
			d[i] = a;
	}
	return r;
}

/* Spatial attributes of a convolution or pooling op. */
typedef struct Win {
	int nchw;
	int hd, wd, cd;          /* dimension indices of H, W, C */
	int64_t k[2], s[2], dil[2];
	int pad;                 /* 0 VALID, 1 SAME, 2 EXPLICIT */
	int64_t pb[2], pa[2];    /* explicit padding before/after */
} Win;

/* Reads a [N,H,W,C]-ordered (or NCHW) 4-list, or an [h,w] 2-list. */
static int win_pair(Ctx *c, const Win *w, const char *key, int64_t out[2])
{
	int64_t v[4];
	int n = attr_ints(c->g, c->op, key, v, 4);
	out[0] = out[1] = 1;
	if (n < 0 && !op_get(c->g, c->op, key))
		return 0;
	if (n == 4) {
		out[0] = v[w->hd];
		out[1] = v[w->wd];
	} else if (n == 2) {
		out[0] = v[0];
		out[1] = v[1];
	} else
		return fail(c, "attribute '%s' must be a list of 4 (or 2) integers",
			    key);
	if (out[0] <= 0 || out[1] <= 0)
		return fail(c, "attribute '%s' must be positive", key);
	return 0;
}

static int win_read(Ctx *c, Win *w, bool pool)
{
	memset(w, 0, sizeof *w);
	w->nchw = is_nchw(c->g, c->op);
	w->hd = w->nchw ? 2 : 1;
	w->wd = w->nchw ? 3 : 2;
	w->cd = w->nchw ? 1 : 3;
	if (win_pair(c, w, "strides", w->s) < 0 ||
	    win_pair(c, w, "dilations", w->dil) < 0)
		return -1;
	if (pool && win_pair(c, w, "ksize", w->k) < 0)
		return -1;
	const char *p = op_get_str(c->g, c->op, "padding");
	if (!p || strcmp(p, "VALID") == 0)
		w->pad = 0;
	else if (strcmp(p, "SAME") == 0)
		w->pad = 1;
	else if (strcmp(p, "EXPLICIT") == 0) {
		int64_t v[8];
		if (attr_ints(c->g, c->op, "explicit_paddings", v, 8) != 8)
			return fail(c, "padding EXPLICIT needs 8 explicit_paddings");
		w->pad = 2;
		w->pb[0] = v[2 * w->hd];
		w->pa[0] = v[2 * w->hd + 1];
		w->pb[1] = v[2 * w->wd];
		w->pa[1] = v[2 * w->wd + 1];
	} else
		return fail(c, "unknown padding '%s' (SAME, VALID or EXPLICIT)", p);
	return 0;
}

/* Output size of spatial dimension i for input size in, window k. */
static int win_out(Ctx *c, const Win *w, int i, int64_t in, int64_t k,
		   int64_t *out)
{
	if (in < 0 || k < 0) {
		*out = UNK;
		return 0;
	}
	int64_t s = w->s[i];
	int64_t eff;
	if (__builtin_mul_overflow(k - 1, w->dil[i], &eff) || eff >= DIM_MAX)
		return fail(c, "the dilated window overflows");
	eff++;
	if (w->pad == 1) {
		*out = (in + s - 1) / s;
		return 0;
	}
	int64_t padded = in + (w->pad == 2 ? w->pb[i] + w->pa[i] : 0);
	if (padded < eff)
		return fail(c, "window (%lld) is larger than the %sinput (%lld)",
			    (long long)eff, w->pad == 2 ? "padded " : "",
			    (long long)padded);
	*out = (padded - eff) / s + 1;
	return 0;
}

/* Forward output [N,Ho,Wo,C] (layout order) of input x with window kh,kw. */
static int win_apply(Ctx *c, const Win *w, const int64_t *x, int64_t kh,
		     int64_t kw, int64_t cout, int64_t *d)
{
	d[0] = x[0];
	d[w->cd] = cout;
	if (win_out(c, w, 0, x[w->hd], kh, &d[w->hd]) < 0 ||
	    win_out(c, w, 1, x[w->wd], kw, &d[w->wd]) < 0)
		return -1;
	return 0;
}

static int check_dims(Ctx *c, const int64_t *want, const Type *t,
		      const char *what)
{
	for (int i = 0; i < t->rank; i++)
		if (want[i] >= 0 && t->dims[i] >= 0 && want[i] != t->dims[i]) {
			char a[128];
			return fail(c, "%s has shape %s but dimension %d should be %lld",
				    what, shape_str(t, a, sizeof a), i,
				    (long long)want[i]);
		}
	return 0;
}

/* Sizes given by a constant input: 4 in layout order, or 2 spatial ones
 * completed with batch n and channels ch. */
static int sizes4(Ctx *c, const Win *w, uint32_t k, int64_t n, int64_t ch,
		  int64_t *d)
{
	int64_t v[4];
	int m = const_ints(c->g, &c->in, k, v, 4);
	if (m == 4) {
		memcpy(d, v, sizeof v);
		return 0;
	}
	if (m == 2) {
		d[0] = n;
		d[w->cd] = ch;
		d[w->hd] = v[0];
		d[w->wd] = v[1];
		return 0;
	}
	return m < 0 ? 1 : fail(c, "the sizes input must have 4 (or 2) entries");
}

static int sh_conv(Ctx *c, int fn)
{
	const Ins *s = &c->in;
	Win w;
	int64_t d[4], f[4], fwd[4];
	if (win_read(c, &w, false) < 0)
		return -1;
	bool dw = fn == SH_DWCONV || fn == SH_DWCONV_BI || fn == SH_DWCONV_BF;
	if (fn == SH_CONV2D || fn == SH_DWCONV) {
		const Type *x = in_type(s, 0), *ft = in_type(s, 1);
		if (!x || !ft)
			return 1;
		if (need_rank(c, x, 4, "the input") < 0 ||
		    need_rank(c, ft, 4, "the filter") < 0 || same_dtype(c, x, ft) < 0)
			return -1;
		int64_t ci = x->dims[w.cd], fi = ft->dims[2], co;
		if (dw) {
			if (merge_dim(c, ci, fi, &ci, "input channels and filter channels") < 0)
				return -1;
			co = UNK;
			if (ci >= 0 && ft->dims[3] >= 0 && mul_big(ci, ft->dims[3], &co))
				return fail(c, "the output channels overflow");
		} else {
			if (ci >= 0 && fi >= 0 && (fi == 0 || ci % fi))
				return fail(c, "the input has %lld channels but the filter expects %lld",
					    (long long)ci, (long long)fi);
			co = ft->dims[3];
		}
		if (win_apply(c, &w, x->dims, ft->dims[0], ft->dims[1], co, d) < 0)
			return -1;
		set_out(c, 0, x->dt, 4, d);
		return 0;
	}
	const Type *dy = in_type(s, 2);
	if (!dy)
		return 1;
	if (need_rank(c, dy, 4, "out_backprop") < 0)
		return -1;
	if (fn == SH_CONV2D_BI || fn == SH_DWCONV_BI) {
		const Type *ft = in_type(s, 1);
		if (!ft)
			return 1;
		if (need_rank(c, ft, 4, "the filter") < 0)
			return -1;
		int64_t ci = dw ? ft->dims[2] : UNK;
		int r = sizes4(c, &w, 0, dy->dims[0], ci, d);
		if (r)
			return r;
		memcpy(f, ft->dims, sizeof f);
	} else {
		const Type *x = in_type(s, 0);
		if (!x)
			return 1;
		if (need_rank(c, x, 4, "the input") < 0)
			return -1;
		int64_t v[4];
		int m = const_ints(c->g, s, 1, v, 4);
		if (m < 0)
			return 1;
		if (m != 4)
			return fail(c, "filter_sizes must have 4 entries");
		memcpy(f, v, sizeof f);
		memcpy(d, x->dims, sizeof d);
	}
	/* d: the input's shape, f: the filter's.  Check the forward op. */
	int64_t ci = d[w.cd];
	int64_t co = dw ? UNK : f[3];
	if (dw && ci >= 0 && f[3] >= 0 && mul_big(ci, f[3], &co))
		return fail(c, "the output channels overflow");
	if (dw) {
		if (ci >= 0 && f[2] >= 0 && ci != f[2])
			return fail(c, "input channels and filter channels differ: %lld vs %lld",
				    (long long)ci, (long long)f[2]);
	} else if (ci >= 0 && f[2] >= 0 && (f[2] == 0 || ci % f[2]))
		return fail(c, "the input has %lld channels but the filter expects %lld",
			    (long long)ci, (long long)f[2]);
	if (win_apply(c, &w, d, f[0], f[1], co, fwd) < 0 ||
	    check_dims(c, fwd, dy, "out_backprop") < 0)
		return -1;
	if (fn == SH_CONV2D_BI || fn == SH_DWCONV_BI)
		set_out(c, 0, dy->dt, 4, d);
	else
		set_out(c, 0, dy->dt, 4, f);
	return 0;
}

static int sh_pool(Ctx *c, int fn)
{
	Win w;
	int64_t d[4];
	if (win_read(c, &w, true) < 0)
		return -1;
	if (fn == SH_POOL) {
		const Type *x = in_type(&c->in, 0);
		if (!x)
			return 1;
		if (need_rank(c, x, 4, "the input") < 0 ||
		    win_apply(c, &w, x->dims, w.k[0], w.k[1], x->dims[w.cd], d) < 0)
			return -1;
		set_out(c, 0, x->dt, 4, d);
		return 0;
	}
	const Type *dy = in_type(&c->in, fn == SH_MAXPOOLGRAD ? 2 : 1);
	if (!dy)
		return 1;
	if (need_rank(c, dy, 4, "grad") < 0)
		return -1;
	if (fn == SH_MAXPOOLGRAD) {
		const Type *x = in_type(&c->in, 0), *y = in_type(&c->in, 1);
		if (!x || !y)
			return 1;
		if (need_rank(c, x, 4, "orig_input") < 0 ||
		    merge_shape(c, y, dy, d) < 0)
			return -1;
		memcpy(d, x->dims, sizeof d);
	} else {
		int r = sizes4(c, &w, 0, dy->dims[0], dy->dims[w.cd], d);
		if (r)
			return r;
	}
	int64_t fwd[4];
	if (win_apply(c, &w, d, w.k[0], w.k[1], d[w.cd], fwd) < 0 ||
	    check_dims(c, fwd, dy, "grad") < 0)
		return -1;
	set_out(c, 0, dy->dt, 4, d);
	return 0;
}

static int sh_matmul(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0), *y = in_type(&c->in, 1);
	if (!x || !y)
		return 1;
	bool ta = op_get_bool(c->g, c->op, "transpose_a", false);
	bool tb = op_get_bool(c->g, c->op, "transpose_b", false);
	if (need_rank(c, x, 2, "a") < 0 || need_rank(c, y, 2, "b") < 0 ||
	    same_dtype(c, x, y) < 0)
		return -1;
	int64_t k1 = x->dims[ta ? 0 : 1], k2 = y->dims[tb ? 1 : 0], k;
	if (merge_dim(c, k1, k2, &k, "inner dimensions") < 0)
		return -1;
	int64_t d[2] = {x->dims[ta ? 1 : 0], y->dims[tb ? 0 : 1]};
	set_out(c, 0, x->dt, 2, d);
	return 0;
}

static int sh_batchmatmul(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0), *y = in_type(&c->in, 1);
	if (!x || !y)
		return 1;
	bool ax = op_get_bool(c->g, c->op, "adj_x", false);
	bool ay = op_get_bool(c->g, c->op, "adj_y", false);
	if (x->rank < 2 || y->rank < 2)
		return fail(c, "inputs must have rank 2 or more");
	if (x->rank > MAXR || y->rank > MAXR)
		return 1;
	if (same_dtype(c, x, y) < 0)
		return -1;
	int rx = x->rank, ry = y->rank;
	int64_t k1 = x->dims[ax ? rx - 2 : rx - 1];
	int64_t k2 = y->dims[ay ? ry - 1 : ry - 2], k;
	if (merge_dim(c, k1, k2, &k, "inner dimensions") < 0)
		return -1;
	Type bx = {x->dt, rx - 2, x->dims}, by = {y->dt, ry - 2, y->dims};
	int64_t d[MAXR + 2];
	int r = broadcast(c, &bx, &by, d);
	if (r < 0)
		return -1;
	d[r] = x->dims[ax ? rx - 1 : rx - 2];
	d[r + 1] = y->dims[ay ? ry - 2 : ry - 1];
	set_out(c, 0, x->dt, r + 2, d);
	return 0;
}

/* Reduction axes from data input k into mask; false if not constant. */
static int reduce_axes(Ctx *c, uint32_t k, int r, bool *mask)
{
	int64_t v[MAXR];
	int n = const_ints(c->g, &c->in, k, v, MAXR);
	if (n < 0)
		return 1;
	memset(mask, 0, sizeof(bool) * (size_t)(r > 0 ? r : 1));
	for (int i = 0; i < n; i++) {
		if (!norm_axis(&v[i], r))
			return fail(c, "reduction axis %lld is out of range for rank %d",
				    (long long)v[i], r);
		mask[v[i]] = true;
	}
	return 0;
}

static int sh_reduce(Ctx *c, int fn)
{
	bool argmax = fn == SH_ARGMAX;
	const Type *x = in_type(&c->in, 0);
	if (!x)
		return 1;
	if (x->rank > MAXR)
		return 1;
	bool mask[MAXR];
	int rr = reduce_axes(c, 1, x->rank, mask);
	if (rr)
		return rr;
	bool keep = !argmax && keep_dims(c->g, c->op);
	int64_t d[MAXR];
	int r = 0;
	for (int i = 0; i < x->rank; i++)
		if (!mask[i])
			d[r++] = x->dims[i];
		else if (keep)
			d[r++] = 1;
	DType dt = x->dt;
	if (argmax && !attr_dtype(c->g, c->op, "output_type", &dt))
		dt = DT_I64;
	set_out(c, 0, dt, r, d);
	return 0;
}

static int sh_reshape(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x)
		return 1;
	int64_t v[MAXR];
	int n = const_ints(c->g, &c->in, 1, v, MAXR);
	if (n < 0)
		return 1;
	int neg = -1;
	int64_t p = 1;
	for (int i = 0; i < n; i++) {
		if (v[i] == -1) {
			if (neg >= 0)
				return fail(c, "the shape has more than one -1");
			neg = i;
		} else if (v[i] < 0)
			return fail(c, "the shape has a negative size %lld",
				    (long long)v[i]);
		else if (__builtin_mul_overflow(p, v[i], &p))
			return fail(c, "the shape's size overflows");
	}
	int64_t numel = type_numel(x);
	if (neg >= 0) {
		if (numel < 0 || p == 0)
			v[neg] = UNK;
		else if (numel % p)
			return fail(c, "cannot reshape %lld elements into a shape with a multiple of %lld",
				    (long long)numel, (long long)p);
		else
			v[neg] = numel / p;
	} else if (numel >= 0 && numel != p)
		return fail(c, "cannot reshape %lld elements into %lld",
			    (long long)numel, (long long)p);
	set_out(c, 0, x->dt, n, v);
	return 0;
}

static int sh_transpose(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x)
		return 1;
	int64_t v[MAXR], d[MAXR];
	int n = const_ints(c->g, &c->in, 1, v, MAXR);
	if (n < 0)
		return 1;
	if (n != x->rank)
		return fail(c, "perm has %d entries for rank %d", n, x->rank);
	bool seen[MAXR] = {false};
	for (int i = 0; i < n; i++) {
		if (v[i] < 0 || v[i] >= n || seen[v[i]])
			return fail(c, "perm is not a permutation of 0..%d", n - 1);
		seen[v[i]] = true;
		d[i] = x->dims[v[i]];
	}
	set_out(c, 0, x->dt, n, d);
	return 0;
}

static int sh_expanddims(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	int64_t a;
	if (!x || x->rank >= MAXR)
		return 1;
	if (!const_int(c->g, &c->in, 1, &a))
		return 1;
	if (!norm_axis(&a, x->rank + 1))
		return fail(c, "dim %lld is out of range for rank %d",
			    (long long)a, x->rank);
	int64_t d[MAXR];
	for (int i = 0, j = 0; i <= x->rank; i++)
		d[i] = i == a ? 1 : x->dims[j++];
	set_out(c, 0, x->dt, x->rank + 1, d);
	return 0;
}

static int sh_squeeze(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x || x->rank > MAXR)
		return 1;
	int64_t v[MAXR], d[MAXR];
	int n = attr_ints(c->g, c->op, "squeeze_dims", v, MAXR);
	if (n < 0)
		n = attr_ints(c->g, c->op, "axis", v, MAXR);
	bool mask[MAXR] = {false};
	for (int i = 0; i < n; i++) {
		if (!norm_axis(&v[i], x->rank))
			return fail(c, "squeeze dimension %lld is out of range for rank %d",
				    (long long)v[i], x->rank);
		if (x->dims[v[i]] >= 0 && x->dims[v[i]] != 1)
			return fail(c, "dimension %lld has size %lld, not 1",
				    (long long)v[i], (long long)x->dims[v[i]]);
		mask[v[i]] = true;
	}
	if (n <= 0)
		for (int i = 0; i < x->rank; i++) {
			if (x->dims[i] < 0)
				return 1;
			mask[i] = x->dims[i] == 1;
		}
	int r = 0;
	for (int i = 0; i < x->rank; i++)
		if (!mask[i])
			d[r++] = x->dims[i];
	set_out(c, 0, x->dt, r, d);
	return 0;
}

static int sh_broadcastto(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x)
		return 1;
	int64_t v[MAXR];
	int n = const_ints(c->g, &c->in, 1, v, MAXR);
	if (n < 0)
		return 1;
	if (x->rank > n)
		return fail(c, "cannot broadcast rank %d to rank %d", x->rank, n);
	for (int i = 0; i < x->rank; i++) {
		int64_t a = x->dims[i], b = v[n - x->rank + i];
		if (a >= 0 && a != 1 && b >= 0 && a != b)
			return fail(c, "cannot broadcast dimension %d of size %lld to %lld",
				    i, (long long)a, (long long)b);
	}
	set_out(c, 0, x->dt, n, v);
	return 0;
}

static int sh_gather(Ctx *c, int fn)
{
	const Type *p = in_type(&c->in, 0), *ix = in_type(&c->in, 1);
	int64_t a;
	if (!p || !ix || !const_int(c->g, &c->in, 2, &a))
		return 1;
	if (op_get_int(c->g, c->op, "batch_dims", 0) != 0)
		return 1;
	if (p->rank + ix->rank > MAXR + 1)
		return 1;
	if (!norm_axis(&a, p->rank))
		return fail(c, "axis %lld is out of range for rank %d",
			    (long long)a, p->rank);
	int64_t d[2 * MAXR];
	int r = 0;
	for (int i = 0; i < a; i++)
		d[r++] = p->dims[i];
	for (int i = 0; i < ix->rank; i++)
		d[r++] = ix->dims[i];
	for (int i = (int)a + 1; i < p->rank; i++)
		d[r++] = p->dims[i];
	set_out(c, 0, p->dt, r, d);
	return 0;
}

static int sh_concat(Ctx *c, int fn)
{
	uint32_t n = c->in.n - 1;
	int64_t a;
	if (!const_int(c->g, &c->in, n, &a))
		return 1;
	const Type *x0 = in_type(&c->in, 0);
	if (!x0 || x0->rank > MAXR)
		return 1;
	int r = x0->rank;
	if (!norm_axis(&a, r))
		return fail(c, "axis %lld is out of range for rank %d",
			    (long long)a, r);
	int64_t d[MAXR];
	memcpy(d, x0->dims, sizeof(int64_t) * (size_t)r);
	for (uint32_t k = 1; k < n; k++) {
		const Type *x = in_type(&c->in, k);
		if (!x)
			return 1;
		if (x->rank != r)
			return fail(c, "input %u has rank %d, input 0 rank %d", k,
				    x->rank, r);
		if (same_dtype(c, x0, x) < 0)
			return -1;
		for (int i = 0; i < r; i++) {
			if (i == a) {
				d[i] = d[i] >= 0 && x->dims[i] >= 0 ? d[i] + x->dims[i]
								    : UNK;
				if (d[i] > DIM_MAX)
					return fail(c, "the concatenated size overflows");
				continue;
			}
			char what[64];
			snprintf(what, sizeof what, "sizes of dimension %d", i);
			if (merge_dim(c, d[i], x->dims[i], &d[i], what) < 0)
				return -1;
		}
	}
	set_out(c, 0, x0->dt, r, d);
	return 0;
}

static int sh_split(Ctx *c, int fn)
{
	bool v = fn == SH_SPLITV;
	const Type *x = in_type(&c->in, v ? 0 : 1);
	int64_t a;
	if (!x || x->rank > MAXR || !const_int(c->g, &c->in, v ? 2 : 0, &a))
		return 1;
	if (!norm_axis(&a, x->rank))
		return fail(c, "split dimension %lld is out of range for rank %d",
			    (long long)a, x->rank);
	int64_t num = op_get_int(c->g, c->op, "num_split", -1);
	if (num >= 0 && num != c->nout)
		return fail(c, "num_split is %lld but the op has %u outputs",
			    (long long)num, c->nout);
	if (c->nout == 0)
		return fail(c, "num_split must be positive");
	int64_t d[MAXR], total = x->dims[a];
	memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
	if (!v) {
		if (total >= 0 && total % c->nout)
			return fail(c, "dimension %lld of size %lld does not split into %u parts",
				    (long long)a, (long long)total, c->nout);
		d[a] = total >= 0 ? total / c->nout : UNK;
		for (uint32_t k = 0; k < c->nout; k++)
			set_out(c, k, x->dt, x->rank, d);
		return 0;
	}
	int64_t *sz = arena_alloc(c->a, sizeof(int64_t) * MAXV);
	int n = const_ints(c->g, &c->in, 1, sz, MAXV);
	if (n < 0)
		return 1;
	if ((uint32_t)n != c->nout)
		return fail(c, "size_splits has %d entries but the op has %u outputs",
			    n, c->nout);
	int neg = -1;
	int64_t sum = 0;
	for (int i = 0; i < n; i++) {
		if (sz[i] == -1 && neg < 0)
			neg = i;
		else if (sz[i] < 0)
			return fail(c, "size_splits has a bad size %lld",
				    (long long)sz[i]);
		else
			sum += sz[i];
	}
	if (neg >= 0)
		sz[neg] = total < 0 ? UNK : total - sum;
	if (total >= 0 && (neg >= 0 ? sum > total : sum != total))
		return fail(c, "size_splits add up to %lld, not %lld",
			    (long long)sum, (long long)total);
	for (int k = 0; k < n; k++) {
		d[a] = sz[k];
		set_out(c, (uint32_t)k, x->dt, x->rank, d);
	}
	return 0;
}

static int sh_pack(Ctx *c, int fn)
{
	const Type *x0 = in_type(&c->in, 0);
	if (!x0 || x0->rank >= MAXR)
		return 1;
	int64_t d[MAXR], e[MAXR];
	if (x0->rank > 0)
		memcpy(d, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
	for (uint32_t k = 1; k < c->in.n; k++) {
		const Type *x = in_type(&c->in, k);
		if (!x)
			return 1;
		Type cur = {x0->dt, x0->rank, d};
		if (same_dtype(c, x0, x) < 0 || merge_shape(c, &cur, x, d) < 0)
			return -1;
	}
	int64_t a = op_get_int(c->g, c->op, "axis", 0);
	if (!norm_axis(&a, x0->rank + 1))
		return fail(c, "axis %lld is out of range", (long long)a);
	for (int i = 0, j = 0; i <= x0->rank; i++)
		e[i] = i == a ? (int64_t)c->in.n : d[j++];
	set_out(c, 0, x0->dt, x0->rank + 1, e);
	return 0;
}

static int sh_fbn(Ctx *c, int fn)
{
	bool grad = fn == SH_FBNGRAD;
	const Type *x = in_type(&c->in, grad ? 1 : 0);
	const Type *sc = in_type(&c->in, grad ? 2 : 1);
	if (!x || !sc)
		return 1;
	if (need_rank(c, x, 4, "x") < 0 || need_rank(c, sc, 1, "scale") < 0)
		return -1;
	int64_t ch, d[4];
	int cd = is_nchw(c->g, c->op) ? 1 : 3;
	if (merge_dim(c, x->dims[cd], sc->dims[0], &ch, "channels of x and scale") < 0)
		return -1;
	DType dt = x->dt;
	memcpy(d, x->dims, sizeof d);
	if (grad) {
		const Type *dy = in_type(&c->in, 0);
		if (!dy)
			return 1;
		if (merge_shape(c, dy, x, d) < 0)
			return -1;
		dt = dy->dt;
	}
	set_out(c, 0, dt, 4, d);
	int64_t zero = 0;
	uint32_t nout = grad ? 5 : 6;
	for (uint32_t k = 1; k < nout; k++) {
		bool reserve = grad ? k >= 3 : k == 5;
		set_out(c, k, sc->dt, 1, reserve ? &zero : &ch);
		if (reserve)
			c->free_out[k] = true;
	}
	return 0;
}

static int sh_sce(Ctx *c, int fn)
{
	bool sparse = c->op->opcode == O_SparseSoftmaxCrossEntropyWithLogits;
	const Type *f = in_type(&c->in, 0), *l = in_type(&c->in, 1);
	if (!f || !l)
		return 1;
	if (need_rank(c, f, 2, "features") < 0)
		return -1;
	int64_t b = UNK;
	if (l->rank == 1 || sparse) {
		if (need_rank(c, l, 1, "labels") < 0)
			return -1;
	} else {
		int64_t d[2];
		if (need_rank(c, l, 2, "labels") < 0 || merge_shape(c, f, l, d) < 0)
			return -1;
	}
	if (merge_dim(c, f->dims[0], l->dims[0], &b, "batch sizes of features and labels") < 0)
		return -1;
	int64_t d[2] = {b, f->dims[1]};
	set_out(c, 0, f->dt, 1, d);
	set_out(c, 1, f->dt, 2, d);
	return 0;
}

static int sh_apply(Ctx *c, int fn)
{
	const Type *v = in_type(&c->in, 0);
	uint32_t n = c->in.n, gi = n - 1;
	if (c->op->opcode == O_ApplyMomentum)
		gi = n == 5 ? 3 : n == 2 ? 1 : 0;
	const Type *gr = gi ? in_type(&c->in, gi) : NULL;
	if (v && gr && v->rank > 0) {
		char a[128], b[128];
		if (gr->rank != v->rank)
			goto bad;
		for (int i = 0; i < v->rank; i++)
			if (v->dims[i] >= 0 && gr->dims[i] >= 0 &&
			    v->dims[i] != gr->dims[i])
				goto bad;
		goto ok;
	bad:
		return fail(c, "the gradient's shape %s differs from the variable's %s",
			    shape_str(gr, a, sizeof a), shape_str(v, b, sizeof b));
	}
ok:
	if (c->nout == 0)
		return 0;
	if (!v)
		return 1;
	set_out(c, 0, v->dt, v->rank, v->dims);
	return 0;
}

/* Placeholder, VariableV2: the `shape` attribute (a type or a list of
 * sizes, -1 unknown) and `dtype`. */
static int sh_declared(Ctx *c, int fn)
{
	const Value *s = op_get(c->g, c->op, "shape");
	DType dt;
	bool have_dt = attr_dtype(c->g, c->op, "dtype", &dt);
	if (s && s->kind == V_TYPE) {
		set_out(c, 0, have_dt ? dt : s->t.dt, s->t.rank, s->t.dims);
		return 0;
	}
	int64_t v[MAXR];
	int n = val_ints(s, v, MAXR);
	if (n < 0 || !have_dt)
		return 1;
	for (int i = 0; i < n; i++)
		if (v[i] < 0)
			v[i] = UNK;
	set_out(c, 0, dt, n, v);
	return 0;
}

static int sh_const(Ctx *c, int fn)
{
	DType dt;
	if (!attr_dtype(c->g, c->op, "dtype", &dt))
		return 1;
	const Value *s = op_get(c->g, c->op, "shape");
	int64_t v[MAXR];
	int n = val_ints(s, v, MAXR);
	if (s && n >= 0) {
		set_out(c, 0, dt, n, v);
		return 0;
	}
	const Value *val = op_get(c->g, c->op, "value");
	if (!val)
		return 1;
	int64_t len = val->kind == V_LIST ? (int64_t)val->list.n : 0;
	set_out(c, 0, dt, val->kind == V_LIST ? 1 : 0, &len);
	/* The list is flattened: a declared type of as many elements wins. */
	const Type *decl = c->op->types_given ? out_type(c->op, 0) : NULL;
	if (decl && c->nout > 0 && decl->dt == dt &&
	    type_numel(decl) == type_numel(&c->out[0]))
		c->free_out[0] = true;
	return 0;
}

static int sh_pad_slice_tile(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x || x->rank > MAXR)
		return 1;
	int r = x->rank;
	int64_t v[2 * MAXR], sz[MAXR], d[MAXR];
	int n = const_ints(c->g, &c->in, 1, v, 2 * MAXR);
	if (n < 0)
		return 1;
	if (fn == SH_PAD) {
		if (n != 2 * r)
			return fail(c, "paddings must have %d entries ([%d,2]), not %d",
				    2 * r, r, n);
		for (int i = 0; i < r; i++) {
			if (v[2 * i] < 0 || v[2 * i + 1] < 0)
				return fail(c, "paddings must not be negative");
			d[i] = x->dims[i] < 0 ? UNK : x->dims[i] + v[2 * i] + v[2 * i + 1];
		}
	} else if (fn == SH_TILE) {
		if (n != r)
			return fail(c, "multiples has %d entries for rank %d", n, r);
		for (int i = 0; i < r; i++) {
			if (v[i] < 0)
				return fail(c, "multiples must not be negative");
			d[i] = UNK;
			if (x->dims[i] >= 0 && mul_big(x->dims[i], v[i], &d[i]))
				return fail(c, "the tiled size overflows");
		}
	} else {
		int m = const_ints(c->g, &c->in, 2, sz, MAXR);
		if (m < 0)
			return 1;
		if (n != r || m != r)
			return fail(c, "begin and size must have %d entries", r);
		for (int i = 0; i < r; i++) {
			if (v[i] < 0 || sz[i] < -1)
				return fail(c, "bad slice begin %lld size %lld in dimension %d",
					    (long long)v[i], (long long)sz[i], i);
			d[i] = sz[i] == -1 ? (x->dims[i] < 0 ? UNK : x->dims[i] - v[i])
					   : sz[i];
			if (x->dims[i] >= 0 && (d[i] < 0 || v[i] + d[i] > x->dims[i]))
				return fail(c, "slice [%lld, +%lld) is outside dimension %d of size %lld",
					    (long long)v[i], (long long)sz[i], i,
					    (long long)x->dims[i]);
		}
	}
	set_out(c, 0, x->dt, r, d);
	return 0;
}

static int sh_select(Ctx *c, int fn)
{
	const Type *cd = in_type(&c->in, 0), *t = in_type(&c->in, 1),
		   *e = in_type(&c->in, 2);
	int64_t d[MAXR], d2[MAXR];
	if (!cd || !t || !e || cd->rank > MAXR || t->rank > MAXR || e->rank > MAXR)
		return 1;
	if (same_dtype(c, t, e) < 0)
		return -1;
	if (cd->dt != DT_BOOL)
		return fail(c, "condition must be bool, not %s", dtype_name(cd->dt));
	if (c->op->opcode == O_SelectV2) {
		int r = broadcast(c, t, e, d);
		if (r < 0)
			return -1;
		Type te = {t->dt, r, d};
		int r2 = broadcast(c, cd, &te, d2);
		if (r2 < 0)
			return -1;
		set_out(c, 0, t->dt, r2, d2);
		return 0;
	}
	if (merge_shape(c, t, e, d) < 0)
		return -1;
	if (cd->rank == 1 && t->rank > 1) {
		int64_t b;
		if (merge_dim(c, cd->dims[0], d[0], &b, "condition and dimension 0") < 0)
			return -1;
	} else if (cd->rank != 0) {
		Type te = {t->dt, t->rank, d};
		if (merge_shape(c, cd, &te, d2) < 0)
			return -1;
	}
	set_out(c, 0, t->dt, t->rank, d);
	return 0;
}

static int sh_range(Ctx *c, int fn)
{
	double v[3][VMAX];
	for (uint32_t k = 0; k < 3; k++)
		if (const_nums(c->g, &c->in, k, v[k], VMAX) != 1)
			return 1;
	double start = v[0][0], limit = v[1][0], delta = v[2][0];
	if (delta == 0)
		return fail(c, "delta must not be 0");
	double len = ceil((limit - start) / delta);
	if (isnan(len))
		return fail(c, "start, limit and delta must be finite");
	if (len < 0)
		len = 0;
	if (len > (double)DIM_MAX)
		return fail(c, "the range is too long");
	const Type *x = in_type(&c->in, 0);
	DType dt;
	if (!attr_dtype(c->g, c->op, "Tidx", &dt))
		dt = x ? x->dt : DT_I32;
	int64_t n = (int64_t)len;
	set_out(c, 0, dt, 1, &n);
	return 0;
}

static int sh_stridedslice(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x || x->rank > MAXR)
		return 1;
	int64_t b[MAXR], e[MAXR], st[MAXR], d[MAXR];
	int n = const_ints(c->g, &c->in, 1, b, MAXR);
	if (n < 0 || const_ints(c->g, &c->in, 2, e, MAXR) != n ||
	    const_ints(c->g, &c->in, 3, st, MAXR) != n)
		return 1;
	SSlice ss;
	int r = ss_spec(c->g, c->op, x, b, e, st, n, &ss, c->msg, c->n);
	if (r)
		return r;
	for (int i = 0; i < ss.nfinal; i++)
		d[i] = ss.final[i] < 0 ? 1 : ss.size[ss.final[i]];
	set_out(c, 0, x->dt, ss.nfinal, d);
	return 0;
}

static int sh_unpack(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x || x->rank > MAXR)
		return 1;
	if (x->rank < 1)
		return fail(c, "the input must have rank 1 or more");
	int64_t a = op_get_int(c->g, c->op, "axis", 0), d[MAXR];
	if (!norm_axis(&a, x->rank))
		return fail(c, "axis %lld is out of range for rank %d", (long long)a,
			    x->rank);
	if (x->dims[a] >= 0 && x->dims[a] != (int64_t)c->nout)
		return fail(c, "dimension %lld has size %lld but the op has %u outputs",
			    (long long)a, (long long)x->dims[a], c->nout);
	for (int i = 0, j = 0; i < x->rank; i++)
		if (i != a)
			d[j++] = x->dims[i];
	for (uint32_t k = 0; k < c->nout; k++)
		set_out(c, k, x->dt, x->rank - 1, d);
	return 0;
}

static int sh_gathernd(Ctx *c, int fn)
{
	const Type *p = in_type(&c->in, 0), *ix = in_type(&c->in, 1);
	if (!p || !ix || p->rank > MAXR || ix->rank > MAXR)
		return 1;
	if (ix->rank < 1)
		return fail(c, "indices must have rank 1 or more");
	int64_t k = ix->dims[ix->rank - 1], d[2 * MAXR];
	if (k < 0)
		return 1;
	if (k > p->rank)
		return fail(c, "indices index %lld dimensions of a rank-%d params",
			    (long long)k, p->rank);
	int r = 0;
	for (int i = 0; i < ix->rank - 1; i++)
		d[r++] = ix->dims[i];
	for (int i = (int)k; i < p->rank; i++)
		d[r++] = p->dims[i];
	if (r > MAXR)
		return 1;
	set_out(c, 0, p->dt, r, d);
	return 0;
}

static int sh_depthtospace(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x)
		return 1;
	if (need_rank(c, x, 4, "the input") < 0)
		return -1;
	int64_t bs = op_get_int(c->g, c->op, "block_size", -1), d[4];
	if (bs < 2 || bs > 4096)
		return fail(c, "block_size must be at least 2");
	bool nchw = is_nchw(c->g, c->op);
	int hd = nchw ? 2 : 1, wd = nchw ? 3 : 2, cd = nchw ? 1 : 3;
	memcpy(d, x->dims, sizeof d);
	int64_t b2 = bs * bs;
	if (c->op->opcode == O_DepthToSpace) {
		if (x->dims[cd] >= 0 && x->dims[cd] % b2)
			return fail(c, "depth %lld is not a multiple of block_size^2 = %lld",
				    (long long)x->dims[cd], (long long)b2);
		d[cd] = x->dims[cd] < 0 ? UNK : x->dims[cd] / b2;
		d[hd] = x->dims[hd] < 0 ? UNK : x->dims[hd] * bs;
		d[wd] = x->dims[wd] < 0 ? UNK : x->dims[wd] * bs;
	} else {
		for (int i = 0; i < 2; i++) {
			int di = i ? wd : hd;
			if (x->dims[di] >= 0 && x->dims[di] % bs)
				return fail(c, "dimension %d (%lld) is not a multiple of block_size %lld",
					    di, (long long)x->dims[di], (long long)bs);
			d[di] = x->dims[di] < 0 ? UNK : x->dims[di] / bs;
		}
		d[cd] = x->dims[cd] < 0 ? UNK : x->dims[cd] * b2;
	}
	for (int i = 0; i < 4; i++)
		if (d[i] > DIM_MAX)
			return fail(c, "the output is too large");
	set_out(c, 0, x->dt, 4, d);
	return 0;
}

/* SpaceToBatchND (input, block_shape, paddings) and BatchToSpaceND
 * (input, block_shape, crops). */
static int sh_spacebatch(Ctx *c, int fn)
{
	bool to_batch = fn == SH_SPACETOBATCH;
	const Type *x = in_type(&c->in, 0);
	int64_t bl[MAXR], pc[2 * MAXR], d[MAXR];
	if (!x || x->rank > MAXR)
		return 1;
	int m = const_ints(c->g, &c->in, 1, bl, MAXR);
	if (m < 0 || const_ints(c->g, &c->in, 2, pc, 2 * MAXR) != 2 * m)
		return m < 0 ? 1 : fail(c, "%s must have [%d,2] entries",
					to_batch ? "paddings" : "crops", m);
	if (m < 1 || x->rank < m + 1)
		return fail(c, "block_shape has %d entries for an input of rank %d",
			    m, x->rank);
	memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
	int64_t prod = 1;
	for (int i = 0; i < m; i++) {
		if (bl[i] < 1 || pc[2 * i] < 0 || pc[2 * i + 1] < 0)
			return fail(c, "block_shape must be positive, %s not negative",
				    to_batch ? "paddings" : "crops");
		if (mul_big(prod, bl[i], &prod))
			return fail(c, "the block is too large");
		int64_t s = x->dims[1 + i];
		if (s < 0) {
			d[1 + i] = UNK;
			continue;
		}
		if (to_batch) {
			int64_t t = s + pc[2 * i] + pc[2 * i + 1];
			if (t % bl[i])
				return fail(c, "padded dimension %d (%lld) is not a multiple of %lld",
					    1 + i, (long long)t, (long long)bl[i]);
			d[1 + i] = t / bl[i];
		} else {
			int64_t t;
			if (mul_big(s, bl[i], &t))
				return fail(c, "the output is too large");
			t -= pc[2 * i] + pc[2 * i + 1];
			if (t < 0)
				return fail(c, "crops are larger than dimension %d", 1 + i);
			d[1 + i] = t;
		}
	}
	if (x->dims[0] >= 0) {
		if (to_batch) {
			if (mul_big(x->dims[0], prod, &d[0]))
				return fail(c, "the batch is too large");
		} else {
			if (x->dims[0] % prod)
				return fail(c, "batch %lld is not a multiple of the block size %lld",
					    (long long)x->dims[0], (long long)prod);
			d[0] = x->dims[0] / prod;
		}
	}
	set_out(c, 0, x->dt, x->rank, d);
	return 0;
}

static int sh_resize(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	int64_t v[2], d[4];
	if (!x)
		return 1;
	if (need_rank(c, x, 4, "images") < 0)
		return -1;
	int n = const_ints(c->g, &c->in, 1, v, 2);
	if (n < 0)
		return 1;
	if (n != 2 || v[0] < 1 || v[1] < 1)
		return fail(c, "size must be 2 positive sizes");
	d[0] = x->dims[0];
	d[1] = v[0];
	d[2] = v[1];
	d[3] = x->dims[3];
	set_out(c, 0, c->op->opcode == O_ResizeBilinear ? DT_F32 : x->dt, 4, d);
	return 0;
}

static int sh_sparsetodense(Ctx *c, int fn)
{
	const Type *vals = in_type(&c->in, 2);
	int64_t d[MAXR];
	if (!vals)
		return 1;
	int n = const_ints(c->g, &c->in, 1, d, MAXR);
	if (n < 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (d[i] < 0)
			return fail(c, "output_shape must not be negative");
	set_out(c, 0, vals->dt, n, d);
	return 0;
}

static int sh_topk(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	int64_t k, d[MAXR];
	if (!x || x->rank > MAXR || !const_int(c->g, &c->in, 1, &k))
		return 1;
	if (x->rank < 1)
		return fail(c, "the input must have rank 1 or more");
	int64_t last = x->dims[x->rank - 1];
	if (k < 0 || (last >= 0 && k > last))
		return fail(c, "k = %lld is out of range for a last dimension of %lld",
			    (long long)k, (long long)last);
	memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
	d[x->rank - 1] = k;
	set_out(c, 0, x->dt, x->rank, d);
	set_out(c, 1, DT_I32, x->rank, d);
	return 0;
}

static int sh_segmentsum(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0), *ids = in_type(&c->in, 1);
	int64_t n, d[MAXR];
	if (!x || !ids || x->rank > MAXR || !const_int(c->g, &c->in, 2, &n))
		return 1;
	if (ids->rank > x->rank)
		return fail(c, "segment_ids (rank %d) must be a prefix of data (rank %d)",
			    ids->rank, x->rank);
	for (int i = 0; i < ids->rank; i++)
		if (ids->dims[i] >= 0 && x->dims[i] >= 0 && ids->dims[i] != x->dims[i])
			return fail(c, "segment_ids dimension %d (%lld) differs from data's (%lld)",
				    i, (long long)ids->dims[i], (long long)x->dims[i]);
	if (n < 0)
		return fail(c, "num_segments must not be negative");
	int r = 0;
	d[r++] = n;
	for (int i = ids->rank; i < x->rank; i++)
		d[r++] = x->dims[i];
	set_out(c, 0, x->dt, r, d);
	return 0;
}

static int sh_none(Ctx *c, int fn)
{
	return 1;
}

static int sh_noop(Ctx *c, int fn)
{
	return 0;
}

/* Unary element-wise, softmax: the input's type. */
static int sh_unary(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x)
		return 1;
	if (fn == SH_SOFTMAX && x->rank < 1)
		return fail(c, "logits must have rank 1 or more");
	set_out(c, 0, x->dt, x->rank, x->dims);
	return 0;
}

/* Roll(input, shift, axis): the input's type; shift and axis (when
 * constant) as many integers, every axis in range. */
static int sh_roll(Ctx *c, int fn)
{
	(void)fn;
	const Type *x = in_type(&c->in, 0);
	if (!x)
		return 1;
	int64_t sh[MAXR], ax[MAXR];
	int n = const_ints(c->g, &c->in, 1, sh, MAXR);
	int m = const_ints(c->g, &c->in, 2, ax, MAXR);
	if (n >= 0 && m >= 0) {
		if (n != m)
			return fail(c, "shift has %d entries but axis %d", n, m);
		for (int i = 0; i < m; i++)
			if (!norm_axis(&ax[i], x->rank))
				return fail(c, "axis %lld is out of range for rank %d",
					    (long long)ax[i], x->rank);
	}
	set_out(c, 0, x->dt, x->rank, x->dims);
	return 0;
}

/* Binary element-wise with broadcasting; comparisons and logical ops
 * give bool. */
static int sh_binary(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0), *y = in_type(&c->in, 1);
	int64_t d[MAXR];
	if (!x || !y || x->rank > MAXR || y->rank > MAXR)
		return 1;
	if (same_dtype(c, x, y) < 0)
		return -1;
	if (fn == SH_LOGICAL && x->dt != DT_BOOL)
		return fail(c, "inputs must be bool, not %s", dtype_name(x->dt));
	int r = broadcast(c, x, y, d);
	if (r < 0)
		return -1;
	set_out(c, 0, fn == SH_BINARY ? x->dt : DT_BOOL, r, d);
	return 0;
}

/* AddN, the element-wise gradients: inputs of one shape. */
static int sh_nary(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	int64_t d[MAXR];
	if (!x || x->rank > MAXR)
		return 1;
	if (x->rank > 0)
		memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
	for (uint32_t k = 1; k < c->in.n; k++) {
		const Type *y = in_type(&c->in, k);
		if (!y)
			return 1;
		Type cur = {x->dt, x->rank, d};
		if (same_dtype(c, x, y) < 0 || merge_shape(c, &cur, y, d) < 0)
			return -1;
	}
	set_out(c, 0, x->dt, x->rank, d);
	return 0;
}

static int sh_biasadd(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0), *y = in_type(&c->in, 1);
	if (!x || !y)
		return 1;
	if (x->rank < 2)
		return fail(c, "value must have rank 2 or more");
	if (need_rank(c, y, 1, "bias") < 0 || same_dtype(c, x, y) < 0)
		return -1;
	int cd = is_nchw(c->g, c->op) ? 1 : x->rank - 1;
	int64_t ch;
	if (merge_dim(c, x->dims[cd], y->dims[0], &ch, "channels of value and bias") < 0)
		return -1;
	set_out(c, 0, x->dt, x->rank, x->dims);
	return 0;
}

static int sh_biasaddgrad(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	if (!x)
		return 1;
	if (x->rank < 2)
		return fail(c, "out_backprop must have rank 2 or more");
	set_out(c, 0, x->dt, 1, &x->dims[is_nchw(c->g, c->op) ? 1 : x->rank - 1]);
	return 0;
}

static int sh_identityn(Ctx *c, int fn)
{
	for (uint32_t k = 0; k < c->nout; k++) {
		const Type *y = in_type(&c->in, k);
		if (!y)
			return 1;
		set_out(c, k, y->dt, y->rank, y->dims);
	}
	return 0;
}

/* Shape (a vector of the rank), Size and Rank (scalars): out_type, i32. */
static int sh_shape(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	DType dt = DT_I32;
	if (!x)
		return 1;
	if (fn != SH_RANK && !attr_dtype(c->g, c->op, "out_type", &dt))
		dt = DT_I32;
	int64_t r = x->rank;
	set_out(c, 0, dt, fn == SH_SHAPE, &r);
	return 0;
}

static int sh_cast(Ctx *c, int fn)
{
	const Type *x = in_type(&c->in, 0);
	DType dt;
	if (!x || !attr_dtype(c->g, c->op, "DstT", &dt))
		return 1;
	set_out(c, 0, dt, x->rank, x->dims);
	return 0;
}

/* RandomUniform(shape) and Fill(dims, value): the shape a constant. */
static int sh_random_fill(Ctx *c, int fn)
{
	const Type *y = in_type(&c->in, 1);
	int64_t d[MAXR];
	DType dt = DT_F32;
	int n = const_ints(c->g, &c->in, 0, d, MAXR);
	if (n < 0 || (fn == SH_FILL && !y))
		return 1;
	if (fn == SH_FILL) {
		if (y->rank != 0)
			return fail(c, "value must be a scalar");
		dt = y->dt;
	} else {
		if (op_get(c->g, c->op, "dtype") &&
		    !attr_dtype(c->g, c->op, "dtype", &dt))
			return 1;
		if (dt != DT_F32 && dt != DT_F16 && dt != DT_BF16 && dt != DT_F64)
			return fail(c, "dtype must be a floating-point type");
	}
	for (int i = 0; i < n; i++)
		if (d[i] < 0)
			return fail(c, fn == SH_FILL ? "dims must not be negative"
						    : "shape must not be negative");
	set_out(c, 0, dt, n, d);
	return 0;
}

/* The shape function of every SH_ kind (ops.def's SHAPE column). */
static int (*const shape_fns[SH_COUNT])(Ctx *c, int fn) = {
	[SH_NONE] = sh_none, [SH_NOOP] = sh_noop,
	[SH_UNARY] = sh_unary, [SH_SOFTMAX] = sh_unary,
	[SH_BINARY] = sh_binary, [SH_COMPARE] = sh_binary,
	[SH_LOGICAL] = sh_binary, [SH_ELEMGRAD] = sh_nary, [SH_NARY] = sh_nary,
	[SH_PLACEHOLDER] = sh_declared, [SH_VARIABLE] = sh_declared,
	[SH_CONST] = sh_const, [SH_MATMUL] = sh_matmul,
	[SH_BATCHMATMUL] = sh_batchmatmul,
	[SH_CONV2D] = sh_conv, [SH_CONV2D_BI] = sh_conv, [SH_CONV2D_BF] = sh_conv,
	[SH_DWCONV] = sh_conv, [SH_DWCONV_BI] = sh_conv, [SH_DWCONV_BF] = sh_conv,
	[SH_BIASADD] = sh_biasadd, [SH_BIASADDGRAD] = sh_biasaddgrad,
	[SH_POOL] = sh_pool, [SH_MAXPOOLGRAD] = sh_pool, [SH_AVGPOOLGRAD] = sh_pool,
	[SH_FBN] = sh_fbn, [SH_FBNGRAD] = sh_fbn,
	[SH_REDUCE] = sh_reduce, [SH_ARGMAX] = sh_reduce,
	[SH_RESHAPE] = sh_reshape, [SH_TRANSPOSE] = sh_transpose,
	[SH_EXPANDDIMS] = sh_expanddims, [SH_SQUEEZE] = sh_squeeze,
	[SH_BROADCASTTO] = sh_broadcastto, [SH_GATHER] = sh_gather,
	[SH_CONCAT] = sh_concat, [SH_SPLIT] = sh_split, [SH_SPLITV] = sh_split,
	[SH_PACK] = sh_pack, [SH_SCE] = sh_sce, [SH_APPLY] = sh_apply,
	[SH_IDENTITYN] = sh_identityn, [SH_SHAPE] = sh_shape,
	[SH_RANK] = sh_shape, [SH_SIZE] = sh_shape, [SH_CAST] = sh_cast,
	[SH_PAD] = sh_pad_slice_tile, [SH_SLICE] = sh_pad_slice_tile,
	[SH_TILE] = sh_pad_slice_tile, [SH_SELECT] = sh_select,
	[SH_RANGE] = sh_range, [SH_STRIDEDSLICE] = sh_stridedslice,
	[SH_UNPACK] = sh_unpack, [SH_GATHERND] = sh_gathernd,
	[SH_DEPTHTOSPACE] = sh_depthtospace,
	[SH_SPACETOBATCH] = sh_spacebatch, [SH_BATCHTOSPACE] = sh_spacebatch,
	[SH_RESIZE] = sh_resize, [SH_SPARSETODENSE] = sh_sparsetodense,
	[SH_TOPK] = sh_topk, [SH_SEGMENTSUM] = sh_segmentsum,
	[SH_ROLL] = sh_roll, [SH_RANDOM] = sh_random_fill, [SH_FILL] = sh_random_fill,
};

static int infer(Ctx *c, int fn)
{
	return shape_fns[fn] ? shape_fns[fn](c, fn) : 1;
}

static bool compatible(const Type *decl, const Type *t)
{
	if (decl->dt != t->dt || decl->rank != t->rank)
		return false;
	for (int i = 0; i < t->rank; i++)
		if (decl->dims[i] >= 0 && t->dims[i] >= 0 &&
		    decl->dims[i] != t->dims[i])
			return false;
	return true;
}

int op_infer(const Graph *g, const Op *op, Type *out, uint32_t nout,
	     Arena *a, char *msg, size_t n)
{
	const OpInfo *info = op_info(op->opcode);
	if (!info)
		return 1;
	int want = op_num_outputs(g, op);
	if (want >= 0 && (uint32_t)want != nout)
		return 1;
	Ctx c = {g, op, ins_of(op), out, nout, a, msg, n, {false}};
	bool huge = false;
	c.in.huge = &huge;
	if ((int)c.in.n < info->min_in ||
	    (info->max_in >= 0 && (int)c.in.n > info->max_in))
		return 1;
	for (uint32_t k = 0; k < nout; k++)
		out[k] = (Type){DT_F32, 0, NULL};
	for (uint32_t k = 0; k < c.in.n; k++) {
		const Type *t = in_type(&c.in, k);
		for (int i = 0; t && i < t->rank; i++)
			if (t->dims[i] > DIM_MAX)
				return 1;
	}
	int r = infer(&c, op_fns[op->opcode].shape);
	if (r > 0 && huge)
		return fail(&c, "a constant input holds an integer beyond +-2^40, "
			    "more than any size, index or axis pcc handles");
	if (r != 0 || !op->types_given)
		return r;
	for (uint32_t k = 0; k < nout && k < op->nout; k++) {
		const Type *decl = &op->out[k];
		if ((k < 8 && c.free_out[k]) || compatible(decl, &out[k]))
			out[k] = type_make(a, decl->dt, decl->rank, decl->dims);
	}
	return 0;
}

