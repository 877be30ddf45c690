/* opsint.h — what the op table's files share (ir/ops.c: the table,
 * FLOPs; ir/fold.c: constant inputs; ir/infer.c: shape inference;
 * ir/dims.c: split categories, dimensions and parts).  Private to them. */
#ifndef PCC_OPSINT_H
#define PCC_OPSINT_H

#include "ir.h"

#include <string.h>

#define MAXR 32      /* largest rank pcc infers */
#define MAXV 1024    /* longest shape-valued constant read */
#define VMAX 64      /* largest tensor a constant input folds to */
#define UNK DIM_UNKNOWN
#define DIM_MAX PCC_DIM_MAX /* larger sizes are not inferred */

/* The kinds of function ops.def's SHAPE, FLOPS and SDIMS columns name. */
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
	SH_SEGMENTSUM, SH_RANDOM, SH_ROLL, SH_COUNT
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

/* Per opcode: its shape, FLOP and split-dimension kinds, FLOP constant. */
typedef struct OpFns {
	unsigned char shape, flops, fk, sdims;
} OpFns;

extern const OpFns op_fns[O_COUNT];

/* The data inputs of an op (control inputs skipped). */
typedef struct Ins {
	const Op *op;
	uint32_t n;
	bool ctrl;
	bool *huge;              /* set when a constant input is out of range */
} Ins;

static inline Ins ins_of(const Op *op)
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

static inline const Input *in_at(const Ins *s, uint32_t k)
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
static inline const Type *in_type(const Ins *s, uint32_t k)
{
	const Input *in = in_at(s, k);
	if (!in || !in->src || in->idx >= in->src->nout)
		return NULL;
	return &in->src->out[in->idx];
}

static inline const Type *out_type(const Op *op, uint32_t k)
{
	return k < op->nout ? &op->out[k] : NULL;
}

static inline bool is_nchw(const Graph *g, const Op *op)
{
	const char *s = op_get_str(g, op, "data_format");
	return s && strncmp(s, "NCHW", 4) == 0;
}

/* Normalises axis a of a rank-r tensor (-r <= a < r); false if out of range. */
static inline bool norm_axis(int64_t *a, int r)
{
	if (*a < -r || *a >= r)
		return false;
	if (*a < 0)
		*a += r;
	return true;
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

/* ops.c */
int val_ints(const Value *v, int64_t *out, int max);
int attr_ints(const Graph *g, const Op *op, const char *key, int64_t *out,
	      int max);

/* fold.c: the value of data input k when it is constant (a Const, a
 * Shape of a known type, or a small computation on those, folded). */
int const_ints(const Graph *g, const Ins *s, uint32_t k, int64_t *out,
	       int max);
int const_nums(const Graph *g, const Ins *s, uint32_t k, double *out,
	       int max);
bool const_int(const Graph *g, const Ins *s, uint32_t k, int64_t *v);
/* 0: *ss filled; 1: needs a size that is unknown; -1: invalid (msg). */
int ss_spec(const Graph *g, const Op *op, const Type *x,
	    const int64_t *b, const int64_t *e, const int64_t *st, int n,
	    SSlice *ss, char *msg, size_t mn);

static inline bool keep_dims(const Graph *g, const Op *op)
{
	return op_get_bool(g, op, "keep_dims", op_get_bool(g, op, "keepdims", false));
}

#endif
