/* fold.c — the values of constant inputs (ops.c's op table): a Const's
 * `value`, a Shape op of a fully known type, or a small computation on
 * such values (Shape -> StridedSlice -> Pack, as TensorFlow's graphs
 * compute dynamic shapes), which op_value folds with a bounded depth and
 * work budget (no recursion that grows with the graph).  Shape inference
 * reads Reshape's shape, ConcatV2's axis, ... through const_ints. */
#include "opsint.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

/* ---- constant values ------------------------------------------------ */

#define VDEPTH 24        /* deepest chain of producers it follows */
#define VBUDGET 512      /* most ops it visits for one question */

static int op_value(const Graph *g, const Op *p, uint32_t k, double *out,
		    int *budget, int depth);

/* Numbers of a V_INT/V_FLOAT/V_BOOL or a list of them; -1 if not. */
static int val_nums(const Value *v, double *out, int max)
{
	if (!v)
		return -1;
	if (v->kind == V_INT || v->kind == V_FLOAT || v->kind == V_BOOL) {
		out[0] = v->kind == V_INT ? (double)v->i
			 : v->kind == V_FLOAT ? v->f : (double)v->b;
		return 1;
	}
	if (v->kind != V_LIST || v->list.n > (uint32_t)max)
		return -1;
	for (uint32_t i = 0; i < v->list.n; i++) {
		const Value *x = v->list.items[i];
		if (!x || (x->kind != V_INT && x->kind != V_FLOAT && x->kind != V_BOOL))
			return -1;
		out[i] = x->kind == V_INT ? (double)x->i
			 : x->kind == V_FLOAT ? x->f : (double)x->b;
	}
	return (int)v->list.n;
}

/* Value of data input j of op (its producer's output), or -1. */
static int in_value(const Graph *g, const Ins *s, uint32_t j, double *out,
		    int *budget, int depth)
{
	const Input *in = in_at(s, j);
	if (!in || !in->src)
		return -1;
	return op_value(g, in->src, in->idx, out, budget, depth + 1);
}

/* A folded number as an integer: false if not finite or beyond 2^53. */
static bool dbl_i64(double v, int64_t *out)
{
	if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0))
		return false;
	*out = (int64_t)v;
	return true;
}

/* Row-major strides of t (t known, rank <= MAXR). */
static void strides_of(const Type *t, int64_t *st)
{
	int64_t m = 1;
	for (int i = t->rank - 1; i >= 0; i--) {
		st[i] = m;
		m *= t->dims[i];
	}
}

/* Flat index into x (broadcast NumPy-style into out's shape) of output
 * multi-index idx (out rank r); -1 if it falls outside x (declared types
 * that the verifier has not checked yet may disagree). */
static int64_t bcast_index(const Type *x, const int64_t *idx, int r)
{
	int64_t st[MAXR], f = 0;
	if (x->rank > r)
		return -1;
	strides_of(x, st);
	for (int i = 0; i < x->rank; i++) {
		int oi = r - x->rank + i;
		int64_t v = x->dims[i] == 1 ? 0 : idx[oi];
		if (v >= x->dims[i])
			return -1;
		f += v * st[i];
	}
	return f;
}

static void unflatten(const Type *t, int64_t f, int64_t *idx)
{
	for (int i = t->rank - 1; i >= 0; i--) {
		int64_t d = t->dims[i] > 0 ? t->dims[i] : 1;
		idx[i] = f % d;
		f /= d;
	}
}

static bool dt_int(DType dt)
{
	return dt == DT_I8 || dt == DT_I16 || dt == DT_I32 || dt == DT_I64 ||
	       dt == DT_U8;
}

static double to_dtype(DType dt, double v)
{
	if (dt == DT_BOOL)
		return v != 0;
	if (dt_int(dt))
		return v < 0 ? ceil(v) : floor(v); /* TensorFlow's Cast truncates */
	return v;
}

static double binop(int opc, DType dt, double a, double b, bool *ok)
{
	switch (opc) {
	case O_Add: case O_AddV2: return a + b;
	case O_Sub: return a - b;
	case O_Mul: return a * b;
	case O_RealDiv:
		if (b == 0) { *ok = false; return 0; }
		return dt_int(dt) ? trunc(a / b) : a / b;
	case O_FloorDiv:
		if (b == 0) { *ok = false; return 0; }
		return floor(a / b);
	case O_FloorMod:
		if (b == 0) { *ok = false; return 0; }
		return a - floor(a / b) * b;
	case O_Maximum: return a > b ? a : b;
	case O_Minimum: return a < b ? a : b;
	case O_Pow: return pow(a, b);
	case O_Equal: return a == b;
	case O_NotEqual: return a != b;
	case O_Less: return a < b;
	case O_LessEqual: return a <= b;
	case O_Greater: return a > b;
	case O_GreaterEqual: return a >= b;
	case O_LogicalAnd: return a != 0 && b != 0;
	case O_LogicalOr: return a != 0 || b != 0;
	}
	*ok = false;
	return 0;
}

static double unop(int opc, double a, bool *ok)
{
	switch (opc) {
	case O_Neg: return -a;
	case O_Abs: return fabs(a);
	case O_Floor: return floor(a);
	case O_Ceil: return ceil(a);
	case O_Round: return nearbyint(a);
	case O_Sign: return (a > 0) - (a < 0);
	case O_Square: return a * a;
	case O_Sqrt: return sqrt(a);
	case O_Reciprocal:
		if (a == 0) { *ok = false; return 0; }
		return 1 / a;
	case O_LogicalNot: return a == 0;
	}
	*ok = false;
	return 0;
}


__attribute__((format(printf, 3, 4)))
static int ss_fail(char *msg, size_t mn, const char *fmt, ...)
{
	if (msg && mn) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, mn, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* 0: *ss filled; 1: needs a size that is unknown; -1: invalid (msg). */
int ss_spec(const Graph *g, const Op *op, const Type *x,
	    const int64_t *b, const int64_t *e, const int64_t *st, int n,
	    SSlice *ss, char *msg, size_t mn)
{
	uint64_t bm = (uint64_t)op_get_int(g, op, "begin_mask", 0);
	uint64_t em = (uint64_t)op_get_int(g, op, "end_mask", 0);
	uint64_t elm = (uint64_t)op_get_int(g, op, "ellipsis_mask", 0);
	uint64_t nam = (uint64_t)op_get_int(g, op, "new_axis_mask", 0);
	uint64_t sam = (uint64_t)op_get_int(g, op, "shrink_axis_mask", 0);
	int r = x->rank;
	if (n < 0 || n > MAXR || r > MAXR)
		return 1;
	if (elm & (elm - 1))
		return ss_fail(msg, mn, "more than one ellipsis in ellipsis_mask");
	int nsparse = n;
	if (!elm) { /* an implicit ellipsis after the given entries */
		elm = (uint64_t)1 << n;
		nsparse = n + 1;
	}
	int after = 0; /* new axes after the ellipsis */
	bool seen = false;
	for (int i = 0; i < nsparse; i++) {
		if (elm & ((uint64_t)1 << i))
			seen = true;
		else if (seen && (nam & ((uint64_t)1 << i)))
			after++;
	}
	ss->nfinal = 0;
	for (int j = 0; j < MAXR; j++)
		ss->pos[j] = -1;
	int full = 0;
	for (int i = 0; i < nsparse; i++) {
		uint64_t bit = (uint64_t)1 << i;
		if (elm & bit) {
			int next = r - (nsparse - i) + 1 + after;
			if (next > r)
				next = r;
			for (; full < next; full++) {
				int64_t d = x->dims[full];
				ss->begin[full] = 0;
				ss->stride[full] = 1;
				ss->size[full] = d;
				ss->shrink[full] = false;
				if (ss->nfinal >= MAXR)
					return 1;
				ss->pos[full] = ss->nfinal;
				ss->final[ss->nfinal++] = full;
			}
			continue;
		}
		if (nam & bit) {
			if (ss->nfinal >= MAXR)
				return 1;
			ss->final[ss->nfinal++] = -1;
			continue;
		}
		if (full >= r)
			return ss_fail(msg, mn, "slice index %d is out of range for rank %d",
				       i, r);
		int64_t d = x->dims[full], s = st[i];
		if (s == 0)
			return ss_fail(msg, mn, "stride %d is zero", i);
		if (sam & bit) {
			int64_t v = b[i];
			if (d < 0)
				return 1;
			if (v < 0)
				v += d;
			if (v < 0 || v >= d)
				return ss_fail(msg, mn, "index %lld is out of range for dimension %d of size %lld",
					       (long long)b[i], full, (long long)d);
			ss->begin[full] = v;
			ss->stride[full] = 1;
			ss->size[full] = 1;
			ss->shrink[full] = true;
			full++;
			continue;
		}
		ss->shrink[full] = false;
		ss->stride[full] = s;
		bool whole = (bm & bit) && (em & bit) && s == 1;
		if (d < 0) {
			if (!whole)
				return 1;
			ss->begin[full] = 0;
			ss->size[full] = UNK;
		} else {
			int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? d : d - 1;
			int64_t bv = b[i], ev = e[i];
			if (bm & bit)
				bv = s > 0 ? 0 : d - 1;
			else {
				if (bv < 0)
					bv += d;
				bv = bv < lo ? lo : bv > hi ? hi : bv;
			}
			if (em & bit)
				ev = s > 0 ? d : -1;
			else {
				if (ev < 0)
					ev += d;
				ev = ev < lo ? lo : ev > hi ? hi : ev;
			}
			int64_t len = ev - bv, size = 0;
			if (len != 0 && (len < 0) == (s < 0))
				size = len / s + (len % s != 0);
			ss->begin[full] = bv;
			ss->size[full] = size;
		}
		if (ss->nfinal >= MAXR)
			return 1;
		ss->pos[full] = ss->nfinal;
		ss->final[ss->nfinal++] = full;
		full++;
	}
	return 0;
}

/* Input index (per dense dim) of output multi-index idx. */
static void ss_index(const SSlice *ss, int rank, const int64_t *idx,
		     int64_t *sel)
{
	for (int j = 0; j < rank; j++)
		sel[j] = ss->begin[j] + (ss->pos[j] >= 0 ? idx[ss->pos[j]] : 0) *
						ss->stride[j];
}

/* One fold: output k of p (type t, n elements), its data inputs s. */
typedef struct Fold {
	const Graph *g;
	const Op *p;
	uint32_t k;
	const Type *t, *x;       /* output k; data input 0 (or NULL) */
	int64_t n;
	Ins s;
	int *budget, depth;
} Fold;

/* Value of data input j of f's op, or -1. */
static int fold_in(const Fold *f, uint32_t j, double *out)
{
	return in_value(f->g, &f->s, j, out, f->budget, f->depth);
}

/* Binary element-wise ops, broadcasting NumPy-style. */
static int fold_binary(const Fold *fo, double *out)
{
	const Type *t = fo->t, *x = fo->x;
	double a[VMAX], b[VMAX];
	int64_t idx[MAXR + 1];
	bool ok = true;
	const Type *y = in_type(&fo->s, 1);
	if (!x || !y || x->rank > MAXR || y->rank > MAXR ||
	    fold_in(fo, 0, a) != type_numel(x) ||
	    fold_in(fo, 1, b) != type_numel(y))
		return -1;
	for (int64_t i = 0; i < fo->n && ok; i++) {
		unflatten(t, i, idx);
		int64_t fx = bcast_index(x, idx, t->rank);
		int64_t fy = bcast_index(y, idx, t->rank);
		if (fx < 0 || fy < 0)
			return -1;
		out[i] = to_dtype(t->dt, binop(fo->p->opcode, x->dt, a[fx], b[fy], &ok));
	}
	return ok ? (int)fo->n : -1;
}

/* TF1 Select (a vector condition along dimension 0), SelectV2. */
static int fold_select(const Fold *fo, double *out)
{
	const Op *p = fo->p;
	const Type *t = fo->t, *x = fo->x;
	int64_t n = fo->n;
	double a[VMAX], b[VMAX];
	int64_t idx[MAXR + 1];
	double c[VMAX];
	const Type *ct = x, *tt = in_type(&fo->s, 1), *et = in_type(&fo->s, 2);
	if (!ct || !tt || !et ||
	    fold_in(fo, 0, c) != type_numel(ct) ||
	    fold_in(fo, 1, a) != type_numel(tt) ||
	    fold_in(fo, 2, b) != type_numel(et))
		return -1;
	bool vec = p->opcode == O_Select && ct->rank == 1 && t->rank > 1;
	for (int64_t i = 0; i < n; i++) {
		unflatten(t, i, idx);
		int64_t fc = vec ? (idx[0] < ct->dims[0] ? idx[0] : -1)
				 : bcast_index(ct, idx, t->rank);
		int64_t ft = bcast_index(tt, idx, t->rank);
		int64_t fe = bcast_index(et, idx, t->rank);
		if (fc < 0 || ft < 0 || fe < 0)
			return -1;
		out[i] = c[fc] != 0 ? a[ft] : b[fe];
	}
	return (int)n;
}

/* Pack(values...) along a new axis, ConcatV2(values..., axis). */
static int fold_pack_concat(const Fold *fo, double *out)
{
	const Graph *g = fo->g;
	const Op *p = fo->p;
	const Type *t = fo->t;
	int64_t n = fo->n;
	double a[VMAX];
	int64_t idx[MAXR + 1];
	bool pack = p->opcode == O_Pack;
	uint32_t nin = pack ? fo->s.n : fo->s.n - 1;
	int64_t ax;
	if (pack) {
		ax = op_get_int(g, p, "axis", 0);
	} else {
		if (fold_in(fo, nin, a) != 1 || !dbl_i64(a[0], &ax))
			return -1;
	}
	if (!norm_axis(&ax, t->rank))
		return -1;
	int64_t off = 0; /* position along the axis */
	for (uint32_t j = 0; j < nin; j++) {
		const Type *xj = in_type(&fo->s, j);
		if (!xj || xj->rank != t->rank - (pack ? 1 : 0))
			return -1;
		int64_t nj = type_numel(xj);
		if (nj < 0 || fold_in(fo, j, a) != nj)
			return -1;
		int64_t ost[MAXR];
		strides_of(t, ost);
		for (int64_t f = 0; f < nj; f++) {
			int64_t o = 0;
			unflatten(xj, f, idx);
			for (int i = 0, q = 0; i < t->rank; i++) {
				int64_t v;
				if (pack)
					v = i == ax ? (int64_t)j : idx[q++];
				else
					v = idx[q++] + (i == ax ? off : 0);
				o += v * ost[i];
			}
			if (o < 0 || o >= n)
				return -1;
			out[o] = a[f];
		}
		off += pack ? 1 : (xj->rank > ax ? xj->dims[ax] : 0);
	}
	return (int)n;
}

/* SparseToDense(indices [N] or [N,r] or a scalar, output_shape,
 * values [N] or a scalar, default_value). */
static int fold_sparse_to_dense(const Fold *fo, double *out)
{
	const Type *t = fo->t, *x = fo->x;
	int64_t n = fo->n;
	double a[VMAX], b[VMAX];
	/* (indices [N] or [N,r] or a scalar, output_shape, values [N] or
	 * a scalar, default_value) */
	const Type *it = x, *vt = in_type(&fo->s, 2);
	double dv[1];
	int64_t ost[MAXR];
	if (!it || !vt || it->rank > 2 || fold_in(fo, 3, dv) != 1)
		return -1;
	int ni = fold_in(fo, 0, a);
	int nv = fold_in(fo, 2, b);
	int rr = it->rank == 2 ? (int)it->dims[1] : 1;
	if (ni < 0 || nv < 0 || (ni && rr != t->rank) || (rr && ni % rr))
		return -1;
	int cnt = rr ? ni / rr : 0;
	if (nv != 1 && nv != cnt)
		return -1;
	strides_of(t, ost);
	for (int64_t i = 0; i < n; i++)
		out[i] = dv[0];
	for (int e = 0; e < cnt; e++) {
		int64_t f = 0;
		for (int q = 0; q < rr; q++) {
			int64_t v;
			if (!dbl_i64(a[e * rr + q], &v) || v < 0 || v >= t->dims[q])
				return -1;
			f += v * ost[q];
		}
		out[f] = b[nv == 1 ? 0 : e];
	}
	return (int)n;
}

/* Prod, Sum, Max, Min over constant axes (keep_dims from the output rank). */
static int fold_reduce(const Fold *fo, double *out)
{
	const Op *p = fo->p;
	const Type *t = fo->t, *x = fo->x;
	int64_t n = fo->n;
	double a[VMAX], b[VMAX];
	int64_t idx[MAXR + 1];
	int m;
	if (!x || x->rank > MAXR || type_numel(x) < 0 ||
	    fold_in(fo, 0, a) != type_numel(x))
		return -1;
	m = fold_in(fo, 1, b);
	if (m < 0)
		return -1;
	bool mask[MAXR] = {false};
	for (int i = 0; i < m; i++) {
		int64_t ax;
		if (!dbl_i64(b[i], &ax) || !norm_axis(&ax, x->rank))
			return -1;
		mask[ax] = true;
	}
	for (int64_t i = 0; i < n; i++)
		out[i] = p->opcode == O_Prod ? 1 : p->opcode == O_Sum ? 0
			 : p->opcode == O_Max ? -HUGE_VAL : HUGE_VAL;
	int64_t ost[MAXR];
	strides_of(t, ost);
	bool keep = t->rank == x->rank;
	for (int64_t f = 0; f < type_numel(x); f++) {
		unflatten(x, f, idx);
		int64_t o = 0;
		for (int i = 0, q = 0; i < x->rank; i++) {
			if (mask[i] && !keep)
				continue;
			o += (mask[i] ? 0 : idx[i]) * ost[q++];
		}
		if (o < 0 || o >= n)
			return -1;
		double v = a[f];
		switch (p->opcode) {
		case O_Prod: out[o] *= v; break;
		case O_Sum: out[o] += v; break;
		case O_Max: if (v > out[o]) out[o] = v; break;
		default: if (v < out[o]) out[o] = v; break;
		}
	}
	return (int)n;
}

/* Unpack: output k is slice k along axis. */
static int fold_unpack(const Fold *fo, double *out)
{
	const Graph *g = fo->g;
	const Op *p = fo->p;
	const Type *x = fo->x;
	int64_t n = fo->n;
	uint32_t k = fo->k;
	double a[VMAX];
	int64_t idx[MAXR + 1];
	if (!x || x->rank > MAXR || type_numel(x) < 0 ||
	    fold_in(fo, 0, a) != type_numel(x))
		return -1;
	int64_t ax = op_get_int(g, p, "axis", 0);
	if (!norm_axis(&ax, x->rank))
		return -1;
	for (int64_t f = 0, o = 0; f < type_numel(x); f++) {
		unflatten(x, f, idx);
		if (idx[ax] == (int64_t)k && o < n)
			out[o++] = a[f];
	}
	return (int)n;
}

/* GatherV2(params, indices, axis). */
static int fold_gather(const Fold *fo, double *out)
{
	const Type *t = fo->t, *x = fo->x;
	int64_t n = fo->n;
	double a[VMAX], b[VMAX];
	int64_t idx[MAXR + 1];
	const Type *it = in_type(&fo->s, 1);
	if (!x || !it || x->rank > MAXR || it->rank > MAXR ||
	    type_numel(x) < 0 || type_numel(it) < 0 ||
	    fold_in(fo, 0, a) != type_numel(x) ||
	    fold_in(fo, 1, b) != type_numel(it))
		return -1;
	double av[1];
	if (fold_in(fo, 2, av) != 1)
		return -1;
	int64_t ax, xst[MAXR];
	if (!dbl_i64(av[0], &ax) || !norm_axis(&ax, x->rank) ||
	    t->rank != x->rank - 1 + it->rank)
		return -1;
	strides_of(x, xst);
	for (int64_t i = 0; i < n; i++) {
		unflatten(t, i, idx);
		int64_t ii = 0, ist[MAXR];
		strides_of(it, ist);
		for (int q = 0; q < it->rank; q++)
			ii += idx[ax + q] * ist[q];
		if (ii < 0 || ii >= type_numel(it))
			return -1;
		int64_t sel;
		if (!dbl_i64(b[ii], &sel) || sel < 0 || sel >= x->dims[ax])
			return -1;
		int64_t f = 0;
		for (int q = 0; q < x->rank; q++) {
			int64_t v = q < ax ? idx[q] : q == ax ? sel
				   : idx[q - 1 + it->rank];
			f += v * xst[q];
		}
		if (f < 0 || f >= type_numel(x))
			return -1;
		out[i] = a[f];
	}
	return (int)n;
}

/* Slice(x, begin, size) and StridedSlice(x, begin, end, strides). */
static int fold_slice(const Fold *fo, double *out)
{
	const Graph *g = fo->g;
	const Op *p = fo->p;
	const Type *t = fo->t, *x = fo->x;
	int64_t n = fo->n;
	double a[VMAX];
	int64_t idx[MAXR + 1];
	int m;
	if (!x || x->rank > MAXR || type_numel(x) < 0 || type_numel(x) > VMAX ||
	    fold_in(fo, 0, a) != type_numel(x))
		return -1;
	int64_t bg[MAXR], en[MAXR], st[MAXR], xst[MAXR], sel[MAXR];
	int nb = 0;
	double v[MAXR];
	m = fold_in(fo, 1, v);
	if (m < 0 || m > MAXR)
		return -1;
	for (int i = 0; i < m; i++)
		if (!dbl_i64(v[i], &bg[i]))
			return -1;
	nb = m;
	if (fold_in(fo, 2, v) != nb)
		return -1;
	for (int i = 0; i < nb; i++)
		if (!dbl_i64(v[i], &en[i]))
			return -1;
	strides_of(x, xst);
	if (p->opcode == O_Slice) {
		if (nb != x->rank || t->rank != x->rank)
			return -1;
		for (int64_t i = 0; i < n; i++) {
			unflatten(t, i, idx);
			int64_t f = 0;
			for (int q = 0; q < x->rank; q++)
				f += (bg[q] + idx[q]) * xst[q];
			if (f < 0 || f >= type_numel(x))
				return -1;
			out[i] = a[f];
		}
		return (int)n;
	}
	if (fold_in(fo, 3, v) != nb)
		return -1;
	for (int i = 0; i < nb; i++)
		if (!dbl_i64(v[i], &st[i]))
			return -1;
	SSlice ss;
	if (ss_spec(g, p, x, bg, en, st, nb, &ss, NULL, 0) != 0 ||
	    ss.nfinal != t->rank)
		return -1;
	for (int64_t i = 0; i < n; i++) {
		int64_t f = 0;
		unflatten(t, i, idx);
		ss_index(&ss, x->rank, idx, sel);
		for (int q = 0; q < x->rank; q++)
			f += sel[q] * xst[q];
		if (f < 0 || f >= type_numel(x))
			return -1;
		out[i] = a[f];
	}
	return (int)n;
}

/* The value of output k of p when it is a constant computable from
 * Consts and known shapes (a flat row-major list of at most VMAX
 * numbers); -1 otherwise.  Depth and work are bounded. */
static int op_value(const Graph *g, const Op *p, uint32_t k, double *out,
		    int *budget, int depth)
{
	if (depth > VDEPTH || --*budget < 0 || k >= p->nout)
		return -1;
	const Type *t = &p->out[k];
	if (t->rank > MAXR)
		return -1;
	int64_t n = type_numel(t);
	if (n < 0 || n > VMAX)
		return -1;
	Ins s = ins_of(p);
	const Type *x = in_type(&s, 0);
	Fold f = {g, p, k, t, x, n, s, budget, depth};
	double a[VMAX];
	bool ok = true;
	int m;
	switch (p->opcode) {
	case O_Const: {
		m = val_nums(op_get(g, p, "value"), out, VMAX);
		if (m < 1 || m > n)
			return n == 0 ? 0 : -1;
		for (int64_t i = m; i < n; i++) /* TensorFlow: the last repeats */
			out[i] = out[m - 1];
		return (int)n;
	}
	case O_Shape:
		if (!x || !type_known(x) || x->rank != n)
			return -1;
		for (int i = 0; i < x->rank; i++)
			out[i] = (double)x->dims[i];
		return (int)n;
	case O_Size:
		if (!x || type_numel(x) < 0)
			return -1;
		out[0] = (double)type_numel(x);
		return 1;
	case O_Rank:
		if (!x)
			return -1;
		out[0] = x->rank;
		return 1;
	case O_Identity: case O_Snapshot: case O_StopGradient:
	case O_PreventGradient: case O_Reshape: case O_ExpandDims:
	case O_Squeeze:
		m = in_value(g, &s, 0, out, budget, depth);
		return m == n ? m : -1;
	case O_Cast:
		m = in_value(g, &s, 0, out, budget, depth);
		if (m != n)
			return -1;
		for (int i = 0; i < m; i++)
			out[i] = to_dtype(t->dt, out[i]);
		return m;
	case O_Neg: case O_Abs: case O_Floor: case O_Ceil: case O_Round:
	case O_Sign: case O_Square: case O_Sqrt: case O_Reciprocal:
	case O_LogicalNot:
		m = in_value(g, &s, 0, out, budget, depth);
		if (m != n)
			return -1;
		for (int i = 0; i < m && ok; i++)
			out[i] = to_dtype(t->dt, unop(p->opcode, out[i], &ok));
		return ok ? m : -1;
	case O_Add: case O_AddV2: case O_Sub: case O_Mul: case O_RealDiv:
	case O_FloorDiv: case O_FloorMod: case O_Maximum: case O_Minimum:
	case O_Pow: case O_Equal: case O_NotEqual: case O_Less:
	case O_LessEqual: case O_Greater: case O_GreaterEqual:
		return fold_binary(&f, out);
	case O_Select: case O_SelectV2:
		return fold_select(&f, out);
	case O_Pack: case O_ConcatV2:
		return fold_pack_concat(&f, out);
	case O_SparseToDense:
		return fold_sparse_to_dense(&f, out);
	case O_Fill:
		if (in_value(g, &s, 1, a, budget, depth) != 1)
			return -1;
		for (int64_t i = 0; i < n; i++)
			out[i] = a[0];
		return (int)n;
	case O_Range: {
		if (in_value(g, &s, 0, a, budget, depth) != 1 ||
		    in_value(g, &s, 1, a + 1, budget, depth) != 1 ||
		    in_value(g, &s, 2, a + 2, budget, depth) != 1)
			return -1;
		for (int64_t i = 0; i < n; i++)
			out[i] = to_dtype(t->dt, a[0] + (double)i * a[2]);
		return (int)n;
	}
	case O_Prod: case O_Sum: case O_Max: case O_Min:
		return fold_reduce(&f, out);
	case O_Unpack:
		return fold_unpack(&f, out);
	case O_GatherV2:
		return fold_gather(&f, out);
	case O_Slice: case O_StridedSlice:
		return fold_slice(&f, out);
	}
	return -1;
}

/* The value of data input k when it is constant: a Const's `value`, a
 * Shape op's of a fully known type, or op_value's fold.  Returns the
 * count, or -1. */
int const_ints(const Graph *g, const Ins *s, uint32_t k, int64_t *out,
	       int max)
{
	const Input *in = in_at(s, k);
	if (!in || !in->src)
		return -1;
	const Op *p = in->src;
	if (p->opcode == O_Const && in->idx == 0) {
		const Value *cv = op_get(g, p, "value");
		int r = val_ints(cv, out, max);
		if (r >= 0)
			return r;
		/* integers beyond +-DIM_MAX: no size, index or axis */
		bool huge = cv && cv->kind == V_INT;
		for (uint32_t i = 0; cv && cv->kind == V_LIST && i < cv->list.n; i++)
			huge |= cv->list.items[i] && cv->list.items[i]->kind == V_INT &&
				(cv->list.items[i]->i > DIM_MAX ||
				 cv->list.items[i]->i < -DIM_MAX);
		if (huge && s->huge)
			*s->huge = true;
	}
	if (p->opcode == O_Shape && in->idx == 0) {
		Ins ps = ins_of(p);
		const Type *t = in_type(&ps, 0);
		if (!t || t->rank > max || !type_known(t))
			return -1;
		for (int i = 0; i < t->rank; i++)
			out[i] = t->dims[i];
		return t->rank;
	}
	double v[VMAX];
	int budget = VBUDGET;
	int n = op_value(g, p, in->idx, v, &budget, 0);
	if (n < 0 || n > max)
		return -1;
	for (int i = 0; i < n; i++) {
		if (v[i] != floor(v[i]))
			return -1;
		if (v[i] > (double)DIM_MAX || v[i] < -(double)DIM_MAX) {
			if (s->huge)
				*s->huge = true;
			return -1;
		}
		out[i] = (int64_t)v[i];
	}
	return n;
}

/* Numbers (floats allowed) of data input k when constant; count or -1. */
int const_nums(const Graph *g, const Ins *s, uint32_t k, double *out,
	       int max)
{
	const Input *in = in_at(s, k);
	if (!in || !in->src || max < VMAX)
		return -1;
	int budget = VBUDGET;
	return op_value(g, in->src, in->idx, out, &budget, 0);
}

/* A scalar constant input (an axis). */
bool const_int(const Graph *g, const Ins *s, uint32_t k, int64_t *v)
{
	int64_t buf[1];
	if (const_ints(g, s, k, buf, 1) != 1)
		return false;
	*v = buf[0];
	return true;
}

