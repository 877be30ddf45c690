/* ops.c — the op table (ops.def): lookup, output counts, shape inference
 * (TensorFlow's shape functions), FLOPs, bytes moved, TAG split categories
 * (§4.1.1) and the dimensions along which an op may be partitioned
 * (FastT §5.2, FD-DPS §4.1).  docs/ops.md states every rule used here.
 *
 * Shapes may hold DIM_UNKNOWN ('?'): a dimension computed from an unknown
 * one is unknown; consistency checks skip unknown dimensions.  A declared
 * output type that agrees with the inferred one wherever both are known is
 * returned as declared, so verification is a compatibility check.
 * Shape-valued inputs (Reshape's shape, ConcatV2's axis, ...) are read from
 * a Const producer's `value`, from a Shape op of a fully known type, or
 * from a small computation on such values (Shape -> StridedSlice -> Pack,
 * as TensorFlow's graphs compute dynamic shapes): op_value folds it, with
 * a bounded depth and work budget (no recursion that grows with the
 * graph). */
#include "ir.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum ShapeFn {
	SH_NONE, SH_UNARY, SH_BINARY, SH_NARY, SH_ELEMGRAD, SH_PLACEHOLDER,
	SH_VARIABLE, SH_CONST, SH_NOOP, SH_MATMUL, SH_BATCHMATMUL, SH_CONV2D,
	SH_CONV2D_BI, SH_CONV2D_BF, SH_DWCONV, SH_DWCONV_BI, SH_DWCONV_BF,
	SH_BIASADD, SH_BIASADDGRAD, SH_POOL, SH_MAXPOOLGRAD, SH_AVGPOOLGRAD,
	SH_FBN, SH_FBNGRAD, SH_REDUCE, SH_ARGMAX, SH_RESHAPE, SH_TRANSPOSE,
	SH_EXPANDDIMS, SH_SQUEEZE, SH_BROADCASTTO, SH_GATHER, SH_CONCAT,
	SH_SPLIT, SH_SPLITV, SH_PACK, SH_SOFTMAX, SH_SCE, SH_APPLY,
	SH_IDENTITYN, SH_SHAPE, SH_CAST, SH_PAD, SH_SLICE, SH_TILE, SH_FILL,
	SH_COMPARE, SH_LOGICAL, SH_SELECT, SH_RANK, SH_SIZE, SH_RANGE,
	SH_STRIDEDSLICE, SH_UNPACK, SH_GATHERND, SH_DEPTHTOSPACE,
	SH_SPACETOBATCH, SH_BATCHTOSPACE, SH_RESIZE, SH_SPARSETODENSE, SH_TOPK,
	SH_SEGMENTSUM, SH_RANDOM, SH_COUNT
};

enum FlopFn {
	FL_ZERO, FL_ELEM, FL_ELEM_IN, FL_ADDN, FL_REDUCE, FL_MATMUL,
	FL_BATCHMATMUL, FL_CONV2D, FL_CONV2D_BI, FL_CONV2D_BF, FL_DWCONV,
	FL_DWCONV_BI, FL_DWCONV_BF, FL_POOL, FL_POOLGRAD, FL_FBN, FL_FBNGRAD,
	FL_APPLY, FL_FCONV2D, FL_FDWCONV, FL_FMATMUL,
};

enum SdimFn {
#define SPLIT_DIMS(n, d) SD_##n,
#include "dims.def"
};

static const OpInfo table[O_COUNT] = {
#define OP(n, mi, ma, no, c, s, f, sh, fl, fk, sd, br, pt, doc) \
	{#n, mi, ma, no, OC_##c, SPLIT_##s, f, BR_##br, PT_##pt, doc},
#include "ops.def"
#undef OP
};

static const struct Fns {
	unsigned char shape, flops, fk, sdims;
} fns[O_COUNT] = {
#define OP(n, mi, ma, no, c, s, f, sh, fl, fk, sd, br, pt, doc) \
	{SH_##sh, FL_##fl, fk, SD_##sd},
#include "ops.def"
#undef OP
};

#define MAXR 32      /* largest rank pcc infers */
#define MAXV 1024    /* longest shape-valued constant read */
#define UNK DIM_UNKNOWN
#define DIM_MAX PCC_DIM_MAX /* larger sizes are not inferred */

/* ---- the table ------------------------------------------------------- */

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, ((const OpInfo *)elem)->name);
}

int op_lookup(const char *type)
{
	if (!type)
		return OPC_UNKNOWN;
	const OpInfo *p = bsearch(type, table, O_COUNT, sizeof table[0],
				  cmp_name);
	return p ? (int)(p - table) : OPC_UNKNOWN;
}

const OpInfo *op_info(int opcode)
{
	return opcode >= 0 && opcode < O_COUNT ? &table[opcode] : NULL;
}

int op_table_size(void)
{
	return O_COUNT;
}

static const char *const splitcat_names[] = {"none", "concat", "sum"};

const char *splitcat_name(SplitCat s)
{
	return (unsigned)s < 3 ? splitcat_names[s] : "?";
}

bool splitcat_parse(const char *s, SplitCat *out)
{
	for (int i = 0; i < 3; i++)
		if (s && strcmp(s, splitcat_names[i]) == 0) {
			*out = (SplitCat)i;
			return true;
		}
	return false;
}

static const char *const batch_rule_names[BR_COUNT] = {
#define BATCH_RULE(n, str, d) str,
#include "dims.def"
};

const char *batch_rule_str(BatchRule r)
{
	return (unsigned)r < BR_COUNT ? batch_rule_names[r] : NULL;
}

OpClass op_class(const Graph *g, const Op *op)
{
	const OpInfo *info = op_info(op->opcode);
	return info ? info->cls : OC_OTHER;
}

/* ---- inputs and attributes ------------------------------------------- */

/* The data inputs of an op (control inputs skipped). */
typedef struct Ins {
	const Op *op;
	uint32_t n;
	bool ctrl;
	bool *huge;              /* set when a constant input is out of range */
} Ins;

static Ins ins_of(const Op *op)
{
	Ins s = {op, 0, false, NULL};
	for (uint32_t i = 0; i < op->nin; i++) {
		if (op->in[i].ctrl)
			s.ctrl = true;
		else
			s.n++;
	}
	return s;
}

static const Input *in_at(const Ins *s, uint32_t k)
{
	if (k >= s->n)
		return NULL;
	if (!s->ctrl)
		return &s->op->in[k];
	for (uint32_t i = 0; i < s->op->nin; i++)
		if (!s->op->in[i].ctrl && k-- == 0)
			return &s->op->in[i];
	return NULL;
}

/* Type of data input k, or NULL when its producer is untyped. */
static const Type *in_type(const Ins *s, uint32_t k)
{
	const Input *in = in_at(s, k);
	if (!in || !in->src || in->idx >= in->src->nout)
		return NULL;
	return &in->src->out[in->idx];
}

static const Type *out_type(const Op *op, uint32_t k)
{
	return k < op->nout ? &op->out[k] : NULL;
}

/* Integers of a V_INT or a V_LIST of V_INT; -1 if v is not one. */
static int val_ints(const Value *v, int64_t *out, int max)
{
	if (!v)
		return -1;
	if (v->kind == V_INT) {
		if (v->i > DIM_MAX || v->i < -DIM_MAX)
			return -1;
		out[0] = v->i;
		return 1;
	}
	if (v->kind != V_LIST || v->list.n > (uint32_t)max)
		return -1;
	for (uint32_t i = 0; i < v->list.n; i++) {
		if (!v->list.items[i] || v->list.items[i]->kind != V_INT ||
		    v->list.items[i]->i > DIM_MAX || v->list.items[i]->i < -DIM_MAX)
			return -1;
		out[i] = v->list.items[i]->i;
	}
	return (int)v->list.n;
}

static int attr_ints(const Graph *g, const Op *op, const char *key,
		     int64_t *out, int max)
{
	return val_ints(op_get(g, op, key), out, max);
}

/* ---- constant values ------------------------------------------------ */

#define VMAX 64          /* largest tensor op_value folds */
#define VDEPTH 24        /* deepest chain of producers it follows */
#define VBUDGET 512      /* most ops it visits for one question */

static int op_value(const Graph *g, const Op *p, uint32_t k, double *out,
		    int *budget, int depth);
static bool norm_axis(int64_t *a, int r);

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

/* StridedSlice (TensorFlow's ValidateStridedSliceOp): the sparse spec
 * (begin, end, strides of n entries and the five masks) expanded over the
 * input's dims.  final[] lists the output dims: a dense dim, or -1 for a
 * new axis; shrunk dims are absent. */
typedef struct SSlice {
	int64_t begin[MAXR], stride[MAXR], size[MAXR];
	bool shrink[MAXR];
	int final[MAXR], nfinal;
	int pos[MAXR];           /* dense dim -> its position in final, or -1 */
} SSlice;

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
static int ss_spec(const Graph *g, const Op *op, const Type *x,
		   const int64_t *b, const int64_t *e, const int64_t *st,
		   int n, SSlice *ss, char *msg, size_t mn)
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

/* TF1 Select (a vector condition along dimension 0) and SelectV2 (broadcast). */
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
	double a[VMAX], b[VMAX];
	int64_t idx[MAXR + 1];
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
	case O_LogicalAnd: case O_LogicalOr: {
		const Type *y = in_type(&s, 1);
		if (!x || !y || x->rank > MAXR || y->rank > MAXR ||
		    in_value(g, &s, 0, a, budget, depth) != type_numel(x) ||
		    in_value(g, &s, 1, b, budget, depth) != type_numel(y))
			return -1;
		for (int64_t i = 0; i < n && ok; i++) {
			unflatten(t, i, idx);
			int64_t fx = bcast_index(x, idx, t->rank);
			int64_t fy = bcast_index(y, idx, t->rank);
			if (fx < 0 || fy < 0)
				return -1;
			out[i] = to_dtype(t->dt, binop(p->opcode, x->dt, a[fx], b[fy], &ok));
		}
		return ok ? (int)n : -1;
	}
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
static int const_ints(const Graph *g, const Ins *s, uint32_t k, int64_t *out,
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
static int const_nums(const Graph *g, const Ins *s, uint32_t k, double *out,
		      int max)
{
	const Input *in = in_at(s, k);
	if (!in || !in->src || max < VMAX)
		return -1;
	int budget = VBUDGET;
	return op_value(g, in->src, in->idx, out, &budget, 0);
}

/* A scalar constant input (an axis). */
static bool const_int(const Graph *g, const Ins *s, uint32_t k, int64_t *v)
{
	int64_t buf[1];
	if (const_ints(g, s, k, buf, 1) != 1)
		return false;
	*v = buf[0];
	return true;
}

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

static bool is_nchw(const Graph *g, const Op *op)
{
	const char *s = op_get_str(g, op, "data_format");
	return s && strncmp(s, "NCHW", 4) == 0;
}

/* Normalises axis a of a rank-r tensor (-r <= a < r); false if out of range. */
static bool norm_axis(int64_t *a, int r)
{
	if (*a < -r || *a >= r)
		return false;
	if (*a < 0)
		*a += r;
	return true;
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

static bool keep_dims(const Graph *g, const Op *op)
{
	return op_get_bool(g, op, "keep_dims", op_get_bool(g, op, "keepdims", false));
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
	[SH_RANDOM] = sh_random_fill, [SH_FILL] = sh_random_fill,
};

static int infer(Ctx *c, int fn)
{
	return shape_fns[fn] ? shape_fns[fn](c, fn) : 1;
}

int op_num_outputs(const Graph *g, const Op *op)
{
	const OpInfo *info = op_info(op->opcode);
	if (!info)
		return -1;
	if (info->nout >= 0)
		return info->nout;
	switch (op->opcode) {
	case O_Split:
		return (int)op_get_int(g, op, "num_split", -1);
	case O_SplitV: {
		int64_t n = op_get_int(g, op, "num_split", -1);
		if (n >= 0)
			return (int)n;
		Ins s = ins_of(op);
		int64_t *v = xmalloc(sizeof(int64_t) * MAXV);
		int m = const_ints(g, &s, 1, v, MAXV);
		free(v);
		return m;
	}
	case O_IdentityN:
		return (int)ins_of(op).n;
	case O_Unpack: {
		int64_t n = op_get_int(g, op, "num", -1);
		if (n >= 0)
			return n > 1 << 20 ? -1 : (int)n;
		Ins s = ins_of(op);
		const Type *x = in_type(&s, 0);
		int64_t a = op_get_int(g, op, "axis", 0);
		if (!x || !norm_axis(&a, x->rank) || x->dims[a] < 0 ||
		    x->dims[a] > 1 << 20)
			return -1;
		return (int)x->dims[a];
	}
	default: /* Apply*: gir's `: ()` or TF's updated variable */
		return op->nout <= 1 ? (int)op->nout : 1;
	}
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
	int r = infer(&c, fns[op->opcode].shape);
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

/* ---- FLOPs and bytes ---------------------------------------------------- */

static double numel_of(const Type *t)
{
	if (!t)
		return -1;
	int64_t n = type_numel(t);
	return n < 0 ? -1 : (double)n;
}

static double dim_of(const Type *t, int i)
{
	if (!t || i < 0 || i >= t->rank || t->dims[i] < 0)
		return -1;
	return (double)t->dims[i];
}

/* Product of x's that must all be known (>= 0); -1 otherwise. */
static double prod(int n, ...)
{
	va_list ap;
	double p = 1;
	bool ok = true;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		double x = va_arg(ap, double);
		if (x < 0)
			ok = false;
		p *= x;
	}
	va_end(ap);
	return ok ? p : -1;
}

/* Filter [kh,kw,ci,co] of a backprop-filter op: its output, else the
 * filter_sizes constant. */
static bool bf_filter(const Graph *g, const Op *op, const Ins *s, double f[4])
{
	const Type *t = out_type(op, 0);
	if (t && t->rank == 4 && type_known(t)) {
		for (int i = 0; i < 4; i++)
			f[i] = (double)t->dims[i];
		return true;
	}
	int64_t v[4];
	if (const_ints(g, s, 1, v, 4) != 4)
		return false;
	for (int i = 0; i < 4; i++)
		f[i] = v[i] < 0 ? -1 : (double)v[i];
	return true;
}

static void pool_window(const Graph *g, const Op *op, double k[2])
{
	int64_t v[4];
	int n = attr_ints(g, op, "ksize", v, 4);
	bool nchw = is_nchw(g, op);
	if (n == 4) {
		k[0] = (double)v[nchw ? 2 : 1];
		k[1] = (double)v[nchw ? 3 : 2];
	} else if (n == 2) {
		k[0] = (double)v[0];
		k[1] = (double)v[1];
	} else
		k[0] = k[1] = 1;
}

/* FLOPs per output element of the ops a fused kernel applies after its
 * contraction (`fused_ops`): FusedBatchNorm a multiply and an add, every
 * other (BiasAdd, Relu, Relu6, Add, LeakyRelu, ...) one. */
static double fused_extra(const Graph *g, const Op *op)
{
	const Value *v = op_get(g, op, "fused_ops");
	double f = 0;
	if (!v || v->kind != V_LIST)
		return 0;
	for (uint32_t k = 0; k < v->list.n; k++) {
		const Value *x = v->list.items[k];
		if (x->kind != V_STR && x->kind != V_IDENT)
			continue;
		f += !strncmp(x->s, "FusedBatchNorm", 14) ? 2 : 1;
	}
	return f;
}

double op_flops(const Graph *g, const Op *op)
{
	double ann = op_ann_num(g, op, ANN_FLOPS, -1);
	if (ann >= 0)
		return ann;
	const OpInfo *info = op_info(op->opcode);
	if (!info)
		return -1;
	const struct Fns *fn = &fns[op->opcode];
	Ins s = ins_of(op);
	const Type *x = in_type(&s, 0), *w = in_type(&s, 1), *o = out_type(op, 0);
	double fk = fn->fk, f[4], k[2];
	switch (fn->flops) {
	case FL_ZERO:
		return 0;
	case FL_ELEM:
		return prod(2, numel_of(o), fk);
	case FL_ELEM_IN:
	case FL_REDUCE:
	case FL_APPLY:
	case FL_FBNGRAD:
		return prod(2, numel_of(x), fk);
	case FL_FBN:
		if (!op_get_bool(g, op, "is_training", true))
			fk /= 2;
		return prod(2, numel_of(x), fk);
	case FL_ADDN:
		return prod(2, numel_of(o), (double)(s.n - 1));
	case FL_MATMUL: {
		bool ta = op_get_bool(g, op, "transpose_a", false);
		bool tb = op_get_bool(g, op, "transpose_b", false);
		if (!x || !w || x->rank != 2 || w->rank != 2)
			return -1;
		return prod(4, 2.0, dim_of(x, ta ? 1 : 0), dim_of(x, ta ? 0 : 1),
			    dim_of(w, tb ? 0 : 1));
	}
	case FL_BATCHMATMUL: {
		bool ax = op_get_bool(g, op, "adj_x", false);
		if (!x || x->rank < 2)
			return -1;
		return prod(3, 2.0, numel_of(o), dim_of(x, ax ? x->rank - 2 : x->rank - 1));
	}
	case FL_CONV2D:
		if (!w || w->rank != 4)
			return -1;
		return prod(5, 2.0, numel_of(o), dim_of(w, 0), dim_of(w, 1), dim_of(w, 2));
	case FL_CONV2D_BI:
		if (!w || w->rank != 4)
			return -1;
		return prod(5, 2.0, numel_of(in_type(&s, 2)), dim_of(w, 0),
			    dim_of(w, 1), dim_of(w, 2));
	case FL_CONV2D_BF:
		if (!bf_filter(g, op, &s, f))
			return -1;
		return prod(5, 2.0, numel_of(in_type(&s, 2)), f[0], f[1], f[2]);
	case FL_DWCONV:
		if (!w || w->rank != 4)
			return -1;
		return prod(4, 2.0, numel_of(o), dim_of(w, 0), dim_of(w, 1));
	case FL_DWCONV_BI:
		if (!w || w->rank != 4)
			return -1;
		return prod(4, 2.0, numel_of(in_type(&s, 2)), dim_of(w, 0), dim_of(w, 1));
	case FL_DWCONV_BF:
		if (!bf_filter(g, op, &s, f))
			return -1;
		return prod(4, 2.0, numel_of(in_type(&s, 2)), f[0], f[1]);
	case FL_POOL:
		pool_window(g, op, k);
		return prod(3, numel_of(o), k[0], k[1]);
	case FL_FCONV2D:
	case FL_FDWCONV: {
		if (!w || w->rank != 4)
			return -1;
		double base = fn->flops == FL_FCONV2D
				      ? prod(5, 2.0, numel_of(o), dim_of(w, 0), dim_of(w, 1), dim_of(w, 2))
				      : prod(4, 2.0, numel_of(o), dim_of(w, 0), dim_of(w, 1));
		return base < 0 ? -1 : base + fused_extra(g, op) * numel_of(o);
	}
	case FL_FMATMUL: {
		bool ta = op_get_bool(g, op, "transpose_a", false);
		bool tb = op_get_bool(g, op, "transpose_b", false);
		if (!x || !w || x->rank != 2 || w->rank != 2)
			return -1;
		double base = prod(4, 2.0, dim_of(x, ta ? 1 : 0), dim_of(x, ta ? 0 : 1),
				   dim_of(w, tb ? 0 : 1));
		return base < 0 || numel_of(o) < 0 ? -1
						   : base + fused_extra(g, op) * numel_of(o);
	}
	case FL_POOLGRAD:
		pool_window(g, op, k);
		return prod(3, numel_of(in_type(&s, s.n - 1)), k[0], k[1]);
	}
	return -1;
}

/* The contraction an op's kernel performs, for the cost model's kernel
 * classes (docs/cost-model.md): GEMM dimensions and, for convolutions,
 * the window and stride.  By the op table's FLOP kind, so an op added to
 * ops.def with a matmul or convolution FLOP kind is classified with no
 * further code. */
bool op_contraction(const Graph *g, const Op *op, Contraction *c)
{
	memset(c, 0, sizeof *c);
	const OpInfo *info = op_info(op->opcode);
	if (!info)
		return false;
	const struct Fns *fn = &fns[op->opcode];
	Ins s = ins_of(op);
	const Type *x = in_type(&s, 0), *w = in_type(&s, 1), *o = out_type(op, 0);
	double f[4], fl;
	switch (fn->flops) {
	case FL_MATMUL:
	case FL_FMATMUL: {
		bool ta = op_get_bool(g, op, "transpose_a", false);
		bool tb = op_get_bool(g, op, "transpose_b", false);
		if (!x || !w || x->rank != 2 || w->rank != 2)
			return false;
		c->kind = CT_GEMM;
		c->m = dim_of(x, ta ? 1 : 0);
		c->k = dim_of(x, ta ? 0 : 1);
		c->n = dim_of(w, tb ? 0 : 1);
		break;
	}
	case FL_BATCHMATMUL: {
		bool ax = op_get_bool(g, op, "adj_x", false);
		if (!x || x->rank < 2 || !o || o->rank < 2)
			return false;
		c->kind = CT_GEMM;
		c->n = dim_of(o, o->rank - 1);
		c->k = dim_of(x, ax ? x->rank - 2 : x->rank - 1);
		c->m = c->n > 0 && numel_of(o) >= 0 ? numel_of(o) / c->n : -1;
		break;
	}
	case FL_CONV2D:
	case FL_CONV2D_BI:
	case FL_FCONV2D:
	case FL_DWCONV:
	case FL_DWCONV_BI:
	case FL_FDWCONV:
		if (!w || w->rank != 4)
			return false;
		for (int i = 0; i < 4; i++)
			f[i] = dim_of(w, i);
		goto conv;
	case FL_CONV2D_BF:
	case FL_DWCONV_BF:
		if (!bf_filter(g, op, &s, f))
			return false;
	conv: {
		bool dw = fn->flops == FL_DWCONV || fn->flops == FL_DWCONV_BI ||
			  fn->flops == FL_DWCONV_BF || fn->flops == FL_FDWCONV;
		c->kind = dw ? CT_DWCONV : CT_CONV;
		c->kh = f[0];
		c->kw = f[1];
		/* The implicit GEMM: k = the window times input channels,
		 * n = output channels, m = output positions (batch x H x W),
		 * from the FLOP count 2mnk (depthwise: 2 m C kh kw). */
		c->k = dw ? f[0] * f[1] : f[0] * f[1] * f[2];
		c->n = dw ? f[2] * f[3] : f[3];
		int64_t v[4];
		int nv = attr_ints(g, op, "strides", v, 4);
		c->stride = 1;
		for (int i = 0; i < nv; i++)
			c->stride = (double)v[i] > c->stride ? (double)v[i] : c->stride;
		nv = attr_ints(g, op, "dilations", v, 4);
		c->dilation = 1;
		for (int i = 0; i < nv; i++)
			c->dilation = (double)v[i] > c->dilation ? (double)v[i]
								 : c->dilation;
		/* Depthwise FLOPs are 2 m C kh kw with m the output positions. */
		fl = op_flops(g, op);
		c->m = fl > 0 && c->k > 0 && c->n > 0 ? fl / (2 * c->k * c->n) : -1;
		break;
	}
	default:
		return false;
	}
	return c->m > 0 && c->n > 0 && c->k > 0;
}

double op_bytes_moved(const Graph *g, const Op *op)
{
	double b = 0;
	for (uint32_t i = 0; i < op->nin; i++) {
		const Input *in = &op->in[i];
		if (in->ctrl || !in->src || in->idx >= in->src->nout)
			continue;
		int64_t n = type_bytes(&in->src->out[in->idx]);
		if (n > 0)
			b += (double)n;
	}
	for (uint32_t k = 0; k < op->nout; k++) {
		int64_t n = type_bytes(&op->out[k]);
		if (n > 0)
			b += (double)n;
	}
	return b;
}

/* ---- split categories and dimensions ------------------------------------ */

/* Reduction mask of a Sum/Mean/... (data input 1); false if not constant. */
static bool reduced(const Graph *g, const Op *op, const Ins *s, int r,
		    bool *mask)
{
	int64_t v[MAXR];
	int n = const_ints(g, s, 1, v, MAXR);
	if (n < 0 || r > MAXR)
		return false;
	memset(mask, 0, sizeof(bool) * MAXR);
	for (int i = 0; i < n; i++) {
		if (!norm_axis(&v[i], r))
			return false;
		mask[v[i]] = true;
	}
	return true;
}

/* StridedSlice: output dims that take their input dim whole (stride 1,
 * the full range), in the same position (no new or shrunk axis before). */
static int op_split_dims_ss(const Graph *g, const Op *op, int *dims, int max)
{
	Ins s = ins_of(op);
	const Type *x = in_type(&s, 0);
	int64_t b[MAXR], e[MAXR], st[MAXR];
	if (!x || x->rank > MAXR)
		return 0;
	int n = const_ints(g, &s, 1, b, MAXR);
	if (n < 0 || const_ints(g, &s, 2, e, MAXR) != n ||
	    const_ints(g, &s, 3, st, MAXR) != n)
		return 0;
	SSlice ss;
	if (ss_spec(g, op, x, b, e, st, n, &ss, NULL, 0) != 0)
		return 0;
	int m = 0;
	for (int i = 0; i < ss.nfinal; i++) {
		int j = ss.final[i];
		if (j != i)
			break; /* a new or shrunk axis before: positions move */
		if (ss.begin[j] == 0 && ss.stride[j] == 1 && x->dims[j] >= 0 &&
		    ss.size[j] == x->dims[j] && m < max)
			dims[m++] = i;
	}
	return m;
}

SplitCat op_split_cat(const Graph *g, const Op *op)
{
	SplitCat sc;
	const char *given = op_ann_str(g, op, ANN_SPLIT);
	if (given && splitcat_parse(given, &sc))
		return sc;
	const OpInfo *info = op_info(op->opcode);
	if (!info)
		return SPLIT_NONE;
	Ins s = ins_of(op);
	const Type *x = in_type(&s, 0);
	bool mask[MAXR];
	int64_t a, v[MAXR];
	switch (op->opcode) {
	case O_MatMul:
		return op_get_bool(g, op, "transpose_a", false) ? SPLIT_SUM
								 : SPLIT_CONCAT;
	case O_Sum: case O_Mean: case O_Max: case O_Min: case O_Prod:
		if (!x || !reduced(g, op, &s, x->rank, mask))
			return SPLIT_NONE;
		if (x->rank == 0 || !mask[0])
			return SPLIT_CONCAT;
		return op->opcode == O_Sum ? SPLIT_SUM : SPLIT_NONE;
	case O_ArgMax:
		if (!x || !const_int(g, &s, 1, &a) || !norm_axis(&a, x->rank))
			return SPLIT_NONE;
		return a == 0 ? SPLIT_NONE : SPLIT_CONCAT;
	case O_ConcatV2:
	case O_Split:
	case O_SplitV: {
		uint32_t ai = op->opcode == O_ConcatV2 ? s.n - 1
			      : op->opcode == O_Split ? 0 : 2;
		if (op->opcode == O_Split)
			x = in_type(&s, 1);
		if (!x || !const_int(g, &s, ai, &a) || !norm_axis(&a, x->rank))
			return SPLIT_NONE;
		return a == 0 ? SPLIT_NONE : SPLIT_CONCAT;
	}
	case O_Transpose:
		if (const_ints(g, &s, 1, v, MAXR) < 1)
			return SPLIT_NONE;
		return v[0] == 0 ? SPLIT_CONCAT : SPLIT_NONE;
	case O_Unpack:
		a = op_get_int(g, op, "axis", 0);
		if (!x || !norm_axis(&a, x->rank))
			return SPLIT_NONE;
		return a == 0 ? SPLIT_NONE : SPLIT_CONCAT;
	case O__FusedMatMul:
		return op_get_bool(g, op, "transpose_a", false) ? SPLIT_NONE
								 : SPLIT_CONCAT;
	case O_StridedSlice: {
		int d[MAXR];
		int n = op_split_dims_ss(g, op, d, MAXR);
		for (int i = 0; i < n; i++)
			if (d[i] == 0)
				return SPLIT_CONCAT;
		return SPLIT_NONE;
	}
	}
	return info->split;
}

SplitCat op_split_output(const Graph *g, const Op *op, uint32_t k)
{
	SplitCat sc = op_split_cat(g, op);
	if (k == 0 || op_ann(g, op, ANN_SPLIT))
		return sc;
	if (op->opcode == O_FusedBatchNormGradV3)
		return k <= 2 ? SPLIT_SUM : SPLIT_NONE;
	if (op->opcode == O_FusedBatchNormV3)
		return SPLIT_NONE;
	return sc;
}

static int put(int *dims, int n, int max, int d)
{
	if (n < max)
		dims[n++] = d;
	return n;
}

int op_split_dims(const Graph *g, const Op *op, int *dims, int max)
{
	const Value *ann = op_ann(g, op, ANN_SPLIT_DIMS);
	if (ann) {
		int64_t v[MAXR];
		int n = val_ints(ann, v, MAXR), m = 0;
		for (int i = 0; i < n; i++)
			if (v[i] >= 0)
				m = put(dims, m, max, (int)v[i]);
		return m;
	}
	const OpInfo *info = op_info(op->opcode);
	const Type *o = out_type(op, 0);
	if (!info || !o || op_split_cat(g, op) != SPLIT_CONCAT)
		return 0;
	Ins s = ins_of(op);
	const Type *x = in_type(&s, 0);
	int r = o->rank, n = 0, skip = -1;
	int64_t a, v[2 * MAXR], sz[MAXR];
	bool mask[MAXR];
	switch (fns[op->opcode].sdims) {
	case SD_NONE:
		return 0;
	case SD_ALL:
	case SD_GATHER:
	case SD_MATMUL:
		break;
	case SD_BATCH:
		return r >= 1 ? put(dims, 0, max, 0) : 0;
	case SD_BATCH_CHAN:
		if (r < 1)
			return 0;
		n = put(dims, 0, max, 0);
		if (r == 4)
			n = put(dims, n, max, is_nchw(g, op) ? 1 : 3);
		return n;
	case SD_PLACEHOLDER: {
		int64_t b = op_get_int(g, op, g->ann[ANN_BATCH_DIM], 0);
		return b >= 0 && b < r ? put(dims, 0, max, (int)b) : 0;
	}
	case SD_ALL_BUT_LAST:
		r--;
		break;
	case SD_RESHAPE:
		if (x && x->rank >= 1 && r >= 1 && x->dims[0] >= 0 &&
		    x->dims[0] == o->dims[0])
			return put(dims, 0, max, 0);
		return 0;
	case SD_EXPANDDIMS:
		if (!const_int(g, &s, 1, &a) || !norm_axis(&a, r))
			return 0;
		skip = (int)a;
		break;
	case SD_CONCAT:
	case SD_SPLIT: {
		uint32_t ai = op->opcode == O_ConcatV2 ? s.n - 1
			      : op->opcode == O_Split ? 0 : 2;
		if (!const_int(g, &s, ai, &a) || !norm_axis(&a, r))
			return 0;
		skip = (int)a;
		break;
	}
	case SD_REDUCE:
		if (op->opcode == O_ArgMax || !keep_dims(g, op))
			break; /* every output dimension is a kept one */
		if (!x || x->rank != r || !reduced(g, op, &s, r, mask))
			return 0;
		for (int i = 0; i < r; i++)
			if (!mask[i])
				n = put(dims, n, max, i);
		return n;
	case SD_PAD:
	case SD_TILE:
		if (!x || x->rank != r ||
		    const_ints(g, &s, 1, v, 2 * MAXR) !=
			    (fns[op->opcode].sdims == SD_PAD ? 2 * r : r))
			return 0;
		for (int i = 0; i < r; i++)
			if (fns[op->opcode].sdims == SD_PAD ? v[2 * i] == 0 && v[2 * i + 1] == 0
							   : v[i] == 1)
				n = put(dims, n, max, i);
		return n;
	case SD_STRIDEDSLICE:
		return op_split_dims_ss(g, op, dims, max);
	case SD_SLICE:
		if (!x || x->rank != r || r > MAXR ||
		    const_ints(g, &s, 1, v, MAXR) != r ||
		    const_ints(g, &s, 2, sz, MAXR) != r)
			return 0;
		for (int i = 0; i < r; i++)
			if (v[i] == 0 && (sz[i] == -1 || (x->dims[i] >= 0 &&
							  sz[i] == x->dims[i])))
				n = put(dims, n, max, i);
		return n;
	}
	for (int i = 0; i < r; i++)
		if (i != skip)
			n = put(dims, n, max, i);
	return n;
}

int op_part_dims(const Graph *g, const Op *op, int *dims, int max)
{
	int n = op_split_dims(g, op, dims, max);
	const OpInfo *info = op_info(op->opcode);
	if (info && info->part == PT_CONV_BF && n == 0 && op->nout == 1 &&
	    op->out[0].rank == 4) {
		n = put(dims, n, max, 2);
		n = put(dims, n, max, 3);
	}
	return n;
}

static const Type *src_type(const Op *op, uint32_t i)
{
	const Input *in = &op->in[i];
	return in->src && in->idx < in->src->nout ? &in->src->out[in->idx] : NULL;
}

/* Element-wise with broadcasting: full-size inputs slice along the
 * aligned dimension, broadcast ones stay whole (TF1 Select's vector
 * condition runs along dimension 0). */
static bool part_elemwise(const Op *op, int p, int *in_dim)
{
	const Type *o = &op->out[0];
	int R = o->rank;
	for (uint32_t i = 0; i < op->nin; i++) {
		const Type *t = src_type(op, i);
		if (op->in[i].ctrl || !t)
			continue;
		int q = p - (R - t->rank);
		if (op->opcode == O_Select && i == 0 && t->rank == 1 && R > 1)
			q = p == 0 ? 0 : -1;
		if (q >= 0 && t->dims[q] == o->dims[p] && o->dims[p] > 1)
			in_dim[i] = q;
	}
	return true;
}

/* Matrix products: rows of a, columns of b, or (batched) a leading
 * dimension of the operands that have it at full size. */
static bool part_matmul(const Graph *g, const Op *op, int p, int *in_dim)
{
	const Type *o = &op->out[0], *x = src_type(op, 0), *y = src_type(op, 1);
	int R = o->rank;
	if (!x || !y)
		return false;
	if (op->opcode == O_MatMul) {
		if (p == 0)
			in_dim[0] = op_get_bool(g, op, "transpose_a", false) ? 1 : 0;
		else
			in_dim[1] = op_get_bool(g, op, "transpose_b", false) ? 0 : 1;
		return true;
	}
	bool ax = op_get_bool(g, op, "adj_x", false);
	bool ay = op_get_bool(g, op, "adj_y", false);
	if (p == R - 2) {
		in_dim[0] = x->rank - (ax ? 1 : 2);
	} else if (p == R - 1) {
		in_dim[1] = y->rank - (ay ? 2 : 1);
	} else {
		int qx = p - (R - x->rank), qy = p - (R - y->rank);
		if (qx >= 0 && x->dims[qx] == o->dims[p])
			in_dim[0] = qx;
		if (qy >= 0 && y->dims[qy] == o->dims[p])
			in_dim[1] = qy;
	}
	return true;
}

/* Convolutions, pooling and their gradients: the batch (p == 0) or the
 * channel (ch) of the NHWC/NCHW output. */
static bool part_conv(const Op *op, PartRule pt, int p, int ch, int *in_dim,
		      int *shape)
{
	bool batch = p == 0, chan = p == ch;
	switch (pt) {
	case PT_CONV:
	case PT_DWCONV:
		if (batch)
			in_dim[0] = 0;
		else if (chan && pt == PT_CONV)
			in_dim[1] = 3;
		else
			return false;
		return true;
	case PT_CONV_BI:
		*shape = 0;
		if (batch)
			in_dim[2] = 0;
		else if (chan)
			in_dim[1] = 2;
		else
			return false;
		return true;
	case PT_CONV_BF:
		*shape = 1;
		if (p == 3)
			in_dim[2] = ch;
		else if (p == 2)
			in_dim[0] = ch;
		else
			return false;
		return true;
	case PT_POOL:
	case PT_MAXPOOLGRAD:
	case PT_AVGPOOLGRAD:
		if (!batch && !chan)
			return false;
		if (pt == PT_AVGPOOLGRAD) {
			*shape = 0;
			in_dim[1] = p;
		} else {
			for (uint32_t i = 0; i < (pt == PT_POOL ? 1u : 3u); i++)
				in_dim[i] = p;
		}
		return true;
	default:
		return false;
	}
}

bool op_part_inputs(const Graph *g, const Op *op, int p, int *in_dim,
		    int *shape)
{
	const OpInfo *info = op_info(op->opcode);
	const Type *o = op->nout ? &op->out[0] : NULL;
	*shape = -1;
	for (uint32_t i = 0; i < op->nin; i++)
		in_dim[i] = -1;
	if (!info || !o || p < 0 || p >= o->rank || !type_known(o))
		return false;
	int R = o->rank;
	int ch = is_nchw(g, op) ? 1 : R - 1;
	switch (info->part) {
	case PT_NONE:
		return false;
	case PT_ELEMWISE:
		return part_elemwise(op, p, in_dim);
	case PT_MATMUL:
	case PT_BATCHMATMUL:
		return part_matmul(g, op, p, in_dim);
	case PT_SOFTMAX:
		if (p == R - 1)
			return false;
		in_dim[0] = p;
		return true;
	case PT_BIASADD:
		in_dim[0] = p;
		if (p == ch)
			in_dim[1] = 0;
		return true;
	default:
		return part_conv(op, info->part, p, ch, in_dim, shape);
	}
}

int op_input_ints(const Graph *g, const Op *op, uint32_t k, int64_t *out,
		  int max)
{
	Ins s = ins_of(op);
	return const_ints(g, &s, k, out, max);
}

unsigned op_flags(const Op *op)
{
	const OpInfo *i = op_info(op->opcode);
	return i ? i->flags : 0;
}

static unsigned role_flag(Role r)
{
	switch (r) {
	case ROLE_PARAM: return OPF_PARAM;
	case ROLE_UPDATE: return OPF_UPDATE;
	case ROLE_LOSS: return OPF_LOSS;
	case ROLE_INPUT: return OPF_INPUT;
	case ROLE_BWD: return OPF_GRAD;
	default: return 0;
	}
}

Role op_role(const Graph *g, const Op *op)
{
	const char *s = op_ann_str(g, op, ANN_ROLE);
	if (s)
		return role_parse(s);
	unsigned f = op_flags(op);
	for (int r = 1; r < ROLE_COUNT; r++)
		if (role_flag((Role)r) & f)
			return (Role)r;
	return ROLE_NONE;
}

bool op_has_role(const Graph *g, const Op *op, Role r)
{
	const char *s = op_ann_str(g, op, ANN_ROLE);
	return (s && role_parse(s) == r) || (role_flag(r) & op_flags(op));
}
