/* dims.c — how ops partition: TAG split categories (§4.1.1; ops.def's
 * SPLIT), the output dimensions along which an op may be partitioned
 * (FastT §5.2, FD-DPS §4.1; SDIMS) and the input slices a part reads
 * (PART).  dims.def lists the kinds; passes/batch.c implements the BATCH
 * column; tests/unit/test_dims.c checks the map against infer.c's shapes. */
#include "opsint.h"

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
	switch (op_fns[op->opcode].sdims) {
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
			    (op_fns[op->opcode].sdims == SD_PAD ? 2 * r : r))
			return 0;
		for (int i = 0; i < r; i++)
			if (op_fns[op->opcode].sdims == SD_PAD ? v[2 * i] == 0 && v[2 * i + 1] == 0
							   : v[i] == 1)
				n = put(dims, n, max, i);
		return n;
	case SD_STRIDEDSLICE:
		return op_split_dims_ss(g, op, dims, max);
	case SD_ROLL: {
		int64_t sh[MAXR];
		if (!x || x->rank != r || !op_roll_shifts(g, op, sh, MAXR))
			return 0;
		for (int i = 0; i < r; i++)
			if (sh[i] == 0)
				n = put(dims, n, max, i);
		return n;
	}
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

/* ---- ops that pass their input through ---------------------------------- */

bool op_roll_shifts(const Graph *g, const Op *op, int64_t *shift, int max)
{
	Ins s = ins_of(op);
	const Type *x = in_type(&s, 0);
	int64_t sh[MAXR], ax[MAXR];
	if (op->opcode != O_Roll || !x || !type_known(x) || x->rank > max ||
	    x->rank > MAXR)
		return false;
	int n = const_ints(g, &s, 1, sh, MAXR);
	if (n < 0 || const_ints(g, &s, 2, ax, MAXR) != n)
		return false;
	int r = x->rank;
	for (int i = 0; i < r; i++)
		shift[i] = 0;
	for (int i = 0; i < n; i++) {
		if (!norm_axis(&ax[i], r))
			return false;
		int64_t d = x->dims[ax[i]];
		/* shifts add up per axis (TensorFlow's Roll); mod the size,
		 * into [0, d) */
		shift[ax[i]] = d ? ((shift[ax[i]] + sh[i] % d) % d + d) % d : 0;
	}
	return true;
}

/* Do the n integers of data input k equal want(i) for every i < r? */
static bool ints_are(const Graph *g, const Ins *s, uint32_t k, int n,
		     int64_t (*want)(int))
{
	int64_t v[2 * MAXR];
	if (n > 2 * MAXR || const_ints(g, s, k, v, 2 * MAXR) != n)
		return false;
	for (int i = 0; i < n; i++)
		if (v[i] != want(i))
			return false;
	return true;
}

static int64_t zero(int i) { (void)i; return 0; }
static int64_t one(int i) { (void)i; return 1; }
static int64_t self(int i) { return i; }

bool op_is_identity(const Graph *g, const Op *op)
{
	Ins s = ins_of(op);
	const Type *x = in_type(&s, 0), *o = out_type(op, 0);
	if (op->nout != 1 || !x || !o || !type_known(x) || !type_eq(x, o))
		return false;
	int r = x->rank;
	switch (op->opcode) {
	case O_Pad: case O_PadV2: case O_MirrorPad:
		return ints_are(g, &s, 1, 2 * r, zero);
	case O_Tile:
		return ints_are(g, &s, 1, r, one);
	case O_Transpose:
		return ints_are(g, &s, 1, r, self);
	case O_Slice:
		/* the same type, so the sizes are the input's (or -1) */
		return ints_are(g, &s, 1, r, zero);
	case O_StridedSlice: {
		int64_t b[MAXR], e[MAXR], st[MAXR];
		int n = const_ints(g, &s, 1, b, MAXR);
		SSlice ss;
		if (n < 0 || r > MAXR || const_ints(g, &s, 2, e, MAXR) != n ||
		    const_ints(g, &s, 3, st, MAXR) != n ||
		    ss_spec(g, op, x, b, e, st, n, &ss, NULL, 0) != 0 ||
		    ss.nfinal != r)
			return false;
		for (int i = 0; i < r; i++)
			if (ss.final[i] != i || ss.begin[i] != 0 || ss.stride[i] != 1 ||
			    ss.size[i] != x->dims[i])
				return false;
		return true;
	}
	case O_Cast: case O_Reshape: case O_BroadcastTo: case O_Squeeze:
		return true;             /* same type: nothing moves */
	case O_ConcatV2:
		return s.n == 2;         /* one value and the axis */
	case O_AddN:
		return s.n == 1;
	case O_Roll: {
		int64_t sh[MAXR];
		if (!op_roll_shifts(g, op, sh, MAXR))
			return false;
		for (int i = 0; i < r; i++)
			if (sh[i])
				return false;
		return true;
	}
	default:
		return false;
	}
}
