/* ops.c — the op table (ops.def): lookup, output counts, FLOPs, bytes
 * moved, roles.  Shape inference is in infer.c, the folding of constant
 * inputs in fold.c, split categories, dimensions and parts (ops.def's
 * dimension map, dims.def) in dims.c.  docs/ops.md states every rule. */
#include "opsint.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

static const OpInfo table[O_COUNT] = {
#define OP(n, mi, ma, no, c, s, f, sh, fl, fk, sd, br, pt, doc) \
	{#n, mi, ma, no, OC_##c, SPLIT_##s, f, BR_##br, PT_##pt, doc},
#include "ops.def"
#undef OP
};

const OpFns op_fns[O_COUNT] = {
#define OP(n, mi, ma, no, c, s, f, sh, fl, fk, sd, br, pt, doc) \
	{SH_##sh, FL_##fl, fk, SD_##sd},
#include "ops.def"
#undef OP
};

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

/* Integers of a V_INT or a V_LIST of V_INT; -1 if v is not one. */
int val_ints(const Value *v, int64_t *out, int max)
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

int attr_ints(const Graph *g, const Op *op, const char *key, int64_t *out,
	      int max)
{
	return val_ints(op_get(g, op, key), out, max);
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
	const OpFns *fn = &op_fns[op->opcode];
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
	const OpFns *fn = &op_fns[op->opcode];
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
