/* cost.c — the cost model: per-op times, transfer and collective times,
 * per-op memory, and the profile reader (docs/cost-model.md).
 *
 * An op's time on a device type comes, in order, from its @cost
 * annotation, from a measured profile (times at one or more batch sizes,
 * fitted linearly in the batch size as TAG §4.1.2 does), or from an
 * analytic roofline: max(FLOPs / (peak * efficiency), bytes / mem_bw)
 * (HeteroG §5 and FastT §4 profile; we fall back to the roofline when no
 * measurement exists).  Transfers cost latency + bytes / bandwidth
 * (FastT §4, Celeritas §4: t = k*d + b).  Collective formulas are derived
 * in docs/cost-model.md. */
#include "ir.h"
#include "yamlload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- the calibrated analytic model -------------------------------------- */

/* Every constant here is explained, with its source or fit, in
 * docs/cost-model.md ("The analytic model" and "Calibration"). */

/* Fraction of peak FLOP/s an op class reaches when its shape says
 * nothing more (no known contraction) and the cluster gives no
 * efficiency. */
static const double default_eff[OC_COUNT] = {
	[OC_MATMUL] = 0.70,
	[OC_CONV] = 0.60,
	[OC_ELEMWISE] = 0.50,
	[OC_REDUCE] = 0.50,
	[OC_DATA] = 0.50,
	[OC_OTHER] = 0.50,
};

/* Kernel classes: what the op's kernel does, by op kind and shape. */
typedef enum Kernel {
	K_GEMM,          /* matmul, batched matmul, 1x1 convolution */
	K_WINOGRAD,      /* 3x3 convolution, stride 1, no dilation */
	K_FFT,           /* a large window (5x5 and up): FFT, or direct
			  * kernels that reuse each input many times */
	K_CONV,          /* any other dense convolution (implicit GEMM) */
	K_DEPTHWISE,     /* depthwise convolution */
	K_OTHER,         /* no contraction: by the op class (default_eff) */
	K_COUNT
} Kernel;

/* Fraction of peak FLOP/s of each kernel class at a large, square
 * problem, in direct-convolution FLOPs per second: Winograd and FFT
 * do fewer multiplications than the FLOP count says, so they exceed 1.
 * A device type's kernel_efficiency scales them all, its
 * gemm_efficiency (when given) instead for matrix products. */
static const double kernel_eff[K_COUNT] = {
	[K_GEMM] = 0.60,
	[K_WINOGRAD] = 1.80,
	[K_FFT] = 1.30,
	[K_CONV] = 0.50,
	[K_DEPTHWISE] = 0.15,
	[K_OTHER] = 0,           /* unused: default_eff by op class */
};

/* A contraction whose smallest GEMM dimension d is small cannot fill the
 * GPU's tiles: efficiency x d / (d + GEMM_HALF_DIM). */
#define GEMM_HALF_DIM 24.0

/* Fixed time of every op that runs on a device: kernel launch plus the
 * framework's executor, for a type that gives no 'overhead'. */
#define OP_OVERHEAD_S 30e-6

/* Achievable fraction of the data-sheet memory bandwidth, for a type that
 * gives no 'mem_efficiency'. */
#define MEM_EFF 0.75

/* Batch normalisation while training (FusedBatchNormV3 and its gradient,
 * is_training) on a type with 'batch_norm: cudnn': cuDNN's kernels pass
 * over the input more than once (the statistics, then the normalisation;
 * the gradient's two reductions, then dx), BN_*_PASSES passes of the
 * input's size in all where the op's own inputs and outputs count 2 and 3
 * (fitted on 44 kernels measured on an H100: docs/cost-model.md, "Batch
 * normalisation"). */
#define BN_FWD_PASSES 3.0
#define BN_BWD_PASSES 7.5

/* A channel of at most this many elements fits on one multiprocessor and
 * is read once (cuDNN's 'singleread' kernels, PyTorch's layer norm, which
 * torch2gir writes as a FusedBatchNormV3 with a channel per row). */
#define BN_ONE_PASS_ELEMS 8192.0

/* The bytes a training batch normalisation moves on t (its input's
 * passes) and, in *channels, how many channels share the work: each
 * channel's reduction runs at one multiprocessor's share of the
 * bandwidth, so fewer channels than t's 'sms' leave the rest idle.  Any
 * other op, or any other type: bytes as given, *channels 0 (no limit). */
static double bn_bytes(const Graph *g, const Op *op, const DevType *t,
		       double bytes, double *channels)
{
	*channels = 0;
	bool grad = op->opcode == O_FusedBatchNormGradV3;
	if (!t->bn_cudnn || (!grad && op->opcode != O_FusedBatchNormV3) ||
	    !op_get_bool(g, op, "is_training", true))
		return bytes;
	uint32_t xi = grad ? 1 : 0;
	if (xi >= op->nin || !op->in[xi].src || op->in[xi].ctrl ||
	    op->in[xi].idx >= op->in[xi].src->nout)
		return bytes;
	const Type *x = &op->in[xi].src->out[op->in[xi].idx];
	int64_t xb = type_bytes(x);
	if (xb <= 0 || x->rank < 2)
		return bytes;
	const char *fmt = op_get_str(g, op, "data_format");
	int axis = fmt && fmt[0] == 'N' && fmt[1] == 'C' ? 1 : x->rank - 1;
	double c = (double)x->dims[axis];
	if (!(c > 0) || (double)type_numel(x) / c <= BN_ONE_PASS_ELEMS)
		return bytes;
	*channels = c;
	return bytes + (grad ? BN_BWD_PASSES - 3 : BN_FWD_PASSES - 2) *
		       (double)xb;
}

static Kernel kernel_of(const Graph *g, const Op *op, Contraction *c)
{
	if (!op_contraction(g, op, c))
		return K_OTHER;
	switch (c->kind) {
	case CT_GEMM:
		return K_GEMM;
	case CT_DWCONV:
		return K_DEPTHWISE;
	case CT_CONV:
		if (c->kh == 1 && c->kw == 1)
			return K_GEMM;
		if (c->kh == 3 && c->kw == 3 && c->stride == 1 &&
		    c->dilation == 1)
			return K_WINOGRAD;
		if (c->kh * c->kw >= 25)
			return K_FFT;
		return K_CONV;
	case CT_NONE:
		break;
	}
	return K_OTHER;
}

/* The compute efficiency of op on t: the cluster's per-class figure when
 * it gives one, else the kernel class's, scaled by the GEMM shape.
 * *peak: the FLOP/s it is a fraction of, t's flops, but the CUDA cores'
 * (cuda_core_flops) on a tensor-core type for an op that is no dense
 * contraction (a depthwise convolution, an element-wise op): those never
 * reach the tensor cores. */
static double op_eff(const Graph *g, const Op *op, const DevType *t,
		     double *peak)
{
	*peak = t->flops;
	OpClass cls = op_class(g, op);
	Contraction c;
	Kernel k = kernel_of(g, op, &c);
	if (t->tensor_cores && t->cuda_flops > 0 &&
	    (k == K_DEPTHWISE || k == K_OTHER))
		*peak = t->cuda_flops;
	if (t->eff_given && t->eff[cls] > 0)
		return t->eff[cls];
	if (k == K_OTHER)
		return default_eff[cls];
	double d = c.m < c.n ? c.m : c.n;
	d = c.k < d ? c.k : d;
	double scale = t->kern_eff_given ? t->kern_eff : 1;
	if (c.kind == CT_GEMM && t->gemm_eff_given)
		scale = t->gemm_eff;
	/* cuDNN's tensor-core kernels are implicit GEMMs: a type whose peak
	 * is a tensor-core figure gets no Winograd saving (the saving is of
	 * CUDA-core multiplications), and its large windows are GEMMs too */
	if (t->tensor_cores && (k == K_WINOGRAD || k == K_FFT))
		k = K_GEMM;
	return scale * kernel_eff[k] * d / (d + GEMM_HALF_DIM);
}

double cost_overhead(const DevType *t)
{
	return t->overhead_given ? t->overhead : OP_OVERHEAD_S;
}

double cost_mem_eff(const DevType *t)
{
	return t->mem_eff_given ? t->mem_eff : MEM_EFF;
}

double cost_copy(const DevType *t, double bytes)
{
	double bw = t->mem_bw * cost_mem_eff(t);
	return cost_overhead(t) + (bw > 0 && bytes > 0 ? 2 * bytes / bw : 0);
}

/* ---- profile ------------------------------------------------------------ */

/* One (op, device type) measurement, reduced to time = a + b * batch. */
typedef struct ProfEntry {
	const char *op, *type;   /* type: prof_type's name for it */
	const char *given;       /* the type as the profile spells it */
	double a, b;
	double maxbatch;         /* largest profiled batch; 0: batch-free time */
	double ymin;             /* smallest measured time: the fit's floor */
	uint32_t next;           /* next entry in the hash chain, or NONE */
	Loc loc;                 /* of the device type key */
} ProfEntry;

#define NONE UINT32_MAX
#define MAX_BATCHES 64           /* batch sizes of one measurement */

struct Profile {
	ProfEntry *e;
	uint32_t n, cap;
	uint32_t *heads;         /* hash of (op, type) -> first entry */
	uint32_t nheads;         /* power of two */
};

static uint32_t hash_entry(const char *op, const char *type)
{
	return (uint32_t)(hash_bytes(op, strlen(op)) * 31 +
			  hash_bytes(type, strlen(type)));
}

static Loc mark_loc(const char *file, yaml_mark_t m)
{
	return (Loc){file, (uint32_t)m.line + 1, (uint32_t)m.column + 1};
}

static Loc node_loc(const char *file, const yaml_node_t *n)
{
	return mark_loc(file, n->start_mark);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		       ? (const char *)n->data.scalar.value : NULL;
}

/* "1.2 ms", "1.2ms", "0.0012" (seconds).  False on anything else. */
static bool parse_time(const char *s, double *out)
{
	char *end;
	double x = strtod(s, &end);
	if (end == s || !isfinite(x) || x < 0)
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end) {
		Unit u;
		double scale;
		if (!unit_parse(end, strlen(end), &u, &scale) ||
		    u != UNIT_SECONDS)
			return false;
		x *= scale;
	}
	*out = x;
	return true;
}

static bool parse_batch(const char *s, double *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end || v <= 0)
		return false;
	*out = (double)v;
	return true;
}

/* Least-squares line through n points (n >= 1, distinct x). */
static void fit_line(const double *x, const double *y, int n, double *a,
		     double *b)
{
	if (n == 1) {
		*a = 0;
		*b = y[0] / x[0];
		return;
	}
	double mx = 0, my = 0;
	for (int i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	double sxy = 0, sxx = 0;
	for (int i = 0; i < n; i++) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
	}
	*b = sxy / sxx;
	*a = my - *b * mx;
}

/* A profile's device type, and the cluster's it is looked up under: the
 * named type's own name for another spelling of it ("Tesla
 * V100-SXM2-16GB" is "V100", as in a cluster: docs/cluster.md), so that
 * a profile and a cluster that spell one GPU differently still meet. */
static const char *prof_type(const char *type)
{
	const DevType *n = devtype_spelled(type);
	return n ? n->name : type;
}

static void prof_add(Arena *a, Profile *p, const char *op, const char *type,
		     double ca, double cb, double maxbatch, double ymin, Loc loc)
{
	if (p->n == p->cap) {
		uint32_t ncap = p->cap ? p->cap * 2 : 16;
		p->e = arena_realloc(a, p->e, sizeof(ProfEntry) * p->cap,
				     sizeof(ProfEntry) * ncap);
		p->cap = ncap;
	}
	p->e[p->n++] = (ProfEntry){op, prof_type(type), type, ca, cb, maxbatch,
				   ymin, NONE, loc};
}

/* The entry of op on device type type: a profile's name for it
 * (prof_type) or a cluster type's gpu. */
static const ProfEntry *prof_find(const Profile *p, const char *op,
				  const char *type)
{
	if (!p || !p->nheads)
		return NULL;
	for (uint32_t i = p->heads[hash_entry(op, type) & (p->nheads - 1)];
	     i != NONE; i = p->e[i].next)
		if (strcmp(p->e[i].op, op) == 0 && strcmp(p->e[i].type, type) == 0)
			return &p->e[i];
	return NULL;
}

/* Hashes the entries by (op, device type), reporting each pair given
 * twice at its second place. */
static void prof_index(Arena *a, Profile *p, Diag *d)
{
	uint32_t nh = 16;
	while (nh < 2 * p->n)
		nh *= 2;
	p->nheads = nh;
	p->heads = arena_alloc(a, sizeof(uint32_t) * nh);
	memset(p->heads, 0xff, sizeof(uint32_t) * nh);
	for (uint32_t i = 0; i < p->n; i++) {
		ProfEntry *e = &p->e[i];
		const ProfEntry *o = prof_find(p, e->op, e->type);
		if (o && strcmp(o->given, e->given)) {
			diag_error(d, e->loc, "op '%s': device type '%s' given "
				   "twice ('%s' and '%s' are one GPU)", e->op,
				   e->type, o->given, e->given);
			continue;
		}
		if (o) {
			diag_error(d, e->loc, "op '%s': device type '%s' given "
				   "twice", e->op, e->given);
			continue;
		}
		uint32_t h = hash_entry(e->op, e->type) & (nh - 1);
		e->next = p->heads[h];
		p->heads[h] = i;
	}
}

typedef struct PCtx {
	Arena *a;
	const char *file;
	Diag *d;
	yaml_document_t *doc;
	Profile *p;
	double *bs;              /* batch_sizes, or NULL */
	int nbs;
} PCtx;

static yaml_node_t *node(PCtx *c, int i)
{
	return yaml_document_get_node(c->doc, i);
}

/* One device type's times for one op: a scalar, {batch: time} or a list
 * aligned with batch_sizes. */
static void read_times(PCtx *c, const char *op, const char *type,
		       Loc loc, yaml_node_t *v)
{
	double x[MAX_BATCHES], y[MAX_BATCHES];
	int n = 0;
	if (v->type == YAML_SCALAR_NODE) {
		double t;
		if (!parse_time(scalar(v), &t)) {
			diag_error(c->d, node_loc(c->file, v),
				   "bad time '%s' (want e.g. 1.2ms)", scalar(v));
			return;
		}
		prof_add(c->a, c->p, op, type, t, 0, 0, t, loc);
		return;
	}
	if (v->type == YAML_SEQUENCE_NODE) {
		int len = (int)(v->data.sequence.items.top -
				v->data.sequence.items.start);
		if (len == 0) {
			diag_error(c->d, node_loc(c->file, v),
				   "no times for device type '%s'", type);
			return;
		}
		if (!c->bs || len != c->nbs) {
			diag_error(c->d, node_loc(c->file, v),
				   "a list of times needs batch_sizes with as "
				   "many entries (%d given)", len);
			return;
		}
		for (int i = 0; i < len; i++) {
			yaml_node_t *t = node(c, v->data.sequence.items.start[i]);
			if (!scalar(t) || !parse_time(scalar(t), &y[n])) {
				diag_error(c->d, node_loc(c->file, t),
					   "bad time (want e.g. 1.2ms)");
				return;
			}
			x[n++] = c->bs[i];
		}
	} else {
		for (yaml_node_pair_t *pr = v->data.mapping.pairs.start;
		     pr < v->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = node(c, pr->key), *t = node(c, pr->value);
			double bx;
			if (!scalar(k) || !parse_batch(scalar(k), &bx)) {
				diag_error(c->d, node_loc(c->file, k),
					   "batch size must be a positive integer");
				return;
			}
			for (int i = 0; i < n; i++)
				if (x[i] == bx) {
					diag_error(c->d, node_loc(c->file, k),
						   "batch size %s given twice",
						   scalar(k));
					return;
				}
			if (n == MAX_BATCHES) {
				diag_error(c->d, node_loc(c->file, k),
					   "more than %d batch sizes", MAX_BATCHES);
				return;
			}
			if (!scalar(t) || !parse_time(scalar(t), &y[n])) {
				diag_error(c->d, node_loc(c->file, t),
					   "bad time (want e.g. 1.2ms)");
				return;
			}
			x[n++] = bx;
		}
		if (n == 0) {
			diag_error(c->d, node_loc(c->file, v),
				   "no times for device type '%s'", type);
			return;
		}
	}
	double ca, cb, mx = 0, ymin = INFINITY;
	fit_line(x, y, n, &ca, &cb);
	for (int i = 0; i < n; i++) {
		mx = x[i] > mx ? x[i] : mx;
		ymin = y[i] < ymin ? y[i] : ymin;
	}
	/* The line may cross zero inside the batches a graph can have
	 * (>= 1): those batches cost the smallest measured time instead
	 * (cost_op), and the user is told which batches. */
	if (cb > 0 && ca + cb <= 0)
		diag_warning(c->d, loc, "the fit of op '%s' on '%s' (%.4g s + "
			     "%.4g s x batch) is not positive for batch sizes up "
			     "to %.0f; those cost the smallest measured time, "
			     "%.4g s", op, type, ca, cb, floor(-ca / cb), ymin);
	else if (cb < 0 && ca > 0)
		diag_warning(c->d, loc, "the fit of op '%s' on '%s' (%.4g s - "
			     "%.4g s x batch) is not positive for batch sizes from "
			     "%.0f; those cost the smallest measured time, %.4g s",
			     op, type, ca, -cb, ceil(ca / -cb), ymin);
	prof_add(c->a, c->p, op, type, ca, cb, mx, ymin, loc);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void profile_check(const Profile *p, const Graph *g, Diag *d)
{
	const Cluster *c = g->cluster;
	if (!p || !c || !p->n)
		return;
	/* the names a plan's replicas are profiled under (@origin) */
	const char **orig = xmalloc(sizeof(char *) * ((size_t)g->nops + 1));
	size_t no = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const char *o = g->ops[i]->dead ? NULL
			: op_ann_str(g, g->ops[i], ANN_ORIGIN);
		if (o)
			orig[no++] = o;
	}
	qsort(orig, no, sizeof *orig, str_cmp);
	bool type_used = false, op_used = false;
	for (uint32_t i = 0; i < p->n && !(type_used && op_used); i++) {
		const ProfEntry *e = &p->e[i];
		for (int k = 0; k < c->ntypes && !type_used; k++)
			type_used = strcmp(c->types[k].gpu, e->type) == 0;
		uint32_t idx;
		op_used = op_used || graph_lookup(g, e->op, &idx) ||
			  bsearch(&e->op, orig, no, sizeof *orig, str_cmp);
	}
	free(orig);
	char have[256];
	size_t at = 0;
	have[0] = 0;
	for (int q = 0; q < c->ntypes && q < 6 && at < sizeof have; q++)
		at += (size_t)snprintf(have + at, sizeof have - at, "%s%s",
				       q ? ", " : "", c->types[q].name);
	if (!type_used)
		diag_warning(d, p->e[0].loc, "no device type of the profile is "
			     "in cluster '%s' (the first: '%s'; the cluster's: "
			     "%s%s): none of its times is used", c->name,
			     p->e[0].given, have, c->ntypes > 6 ? ", ..." : "");
	else if (!op_used)
		diag_warning(d, p->e[0].loc, "no op of the profile is in graph "
			     "'%s' (the first: '%s'): none of its times is used",
			     g->name ? g->name : "", p->e[0].op);
}

static void read_ops(PCtx *c, yaml_node_t *ops)
{
	if (ops->type != YAML_MAPPING_NODE) {
		diag_error(c->d, node_loc(c->file, ops),
			   "'ops' must map op names to times per device type");
		return;
	}
	for (yaml_node_pair_t *pr = ops->data.mapping.pairs.start;
	     pr < ops->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(c, pr->key), *v = node(c, pr->value);
		if (!scalar(k)) {
			diag_error(c->d, node_loc(c->file, k),
				   "op name must be a string");
			continue;
		}
		if (v->type != YAML_MAPPING_NODE) {
			diag_error(c->d, node_loc(c->file, v),
				   "op '%s': want a mapping of device type to "
				   "times", scalar(k));
			continue;
		}
		const char *op = arena_strdup(c->a, scalar(k));
		for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
		     q < v->data.mapping.pairs.top; q++) {
			yaml_node_t *tk = node(c, q->key), *tv = node(c, q->value);
			if (!scalar(tk)) {
				diag_error(c->d, node_loc(c->file, tk),
					   "device type name must be a string");
				continue;
			}
			read_times(c, op, arena_strdup(c->a, scalar(tk)),
				   node_loc(c->file, tk), tv);
		}
	}
}

Profile *profile_parse(Arena *a, const char *path, const char *text,
		       size_t len, Diag *d)
{
	const char *file = path ? arena_strdup(a, path) : "<profile>";
	yaml_parser_t parser;
	yaml_document_t doc;
	int errs0 = d->nerrors;
	if (!yaml_parser_initialize(&parser))
		pcc_die("cannot initialise libyaml");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_load_checked(&parser, &doc, true, file, text, len, d)) {
		yaml_parser_delete(&parser);
		return NULL;
	}
	Profile *p = arena_alloc(a, sizeof *p);
	PCtx c = {a, file, d, &doc, p, NULL, 0};
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE) {
		diag_error(d, node_loc(file, root),
			   "a profile is a mapping with 'ops' (and optionally "
			   "'batch_sizes')");
		root = NULL;
	}
	/* batch_sizes first: 'ops' may refer to it wherever it appears. */
	for (int pass = 0; root && pass < 2; pass++)
		for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
		     pr < root->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = node(&c, pr->key), *v = node(&c, pr->value);
			const char *key = scalar(k);
			if (key && strcmp(key, "batch_sizes") == 0) {
				if (pass == 1)
					continue;
				if (v->type != YAML_SEQUENCE_NODE) {
					diag_error(d, node_loc(file, v),
						   "batch_sizes must be a list of "
						   "positive integers");
					continue;
				}
				int n = (int)(v->data.sequence.items.top -
					      v->data.sequence.items.start);
				if (n > MAX_BATCHES) {
					diag_error(d, node_loc(file, v),
						   "more than %d batch sizes",
						   MAX_BATCHES);
					continue;
				}
				c.bs = arena_alloc(a, sizeof(double) * (size_t)(n + 1));
				c.nbs = 0;
				for (int i = 0; i < n; i++) {
					yaml_node_t *b = node(&c, v->data.sequence.items.start[i]);
					double bx;
					if (!scalar(b) || !parse_batch(scalar(b), &bx)) {
						diag_error(d, node_loc(file, b),
							   "batch size must be a "
							   "positive integer");
						continue;
					}
					for (int j = 0; j < c.nbs; j++)
						if (c.bs[j] == bx)
							diag_error(d, node_loc(file, b),
								   "batch size %s given "
								   "twice", scalar(b));
					c.bs[c.nbs++] = bx;
				}
			} else if (key && strcmp(key, "ops") == 0) {
				if (pass == 1)
					read_ops(&c, v);
			} else if (pass == 0) {
				diag_error(d, node_loc(file, k),
					   "unknown profile key '%s' (want ops or "
					   "batch_sizes)", key ? key : "?");
			}
		}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (d->nerrors == errs0)
		prof_index(a, p, d);
	if (d->nerrors > errs0)
		return NULL;
	return p;
}

/* ---- per-op time -------------------------------------------------------- */

/* The graph's batch size (graph attr 'batch'), or 0 when absent. */
static double graph_batch(const Graph *g)
{
	double b;
	if (val_number(graph_attr(g, "batch"), &b) && b > 0)
		return b;
	return 0;
}

/* The model's cluster, else the graph's. */
static const Cluster *cl(const CostModel *m)
{
	return m->c ? m->c : m->g->cluster;
}

static double cost_op_uncached(const CostModel *m, const Op *op, int devtype,
			       bool *launch, double *fixed);

void cost_memo_init(CostModel *m)
{
	size_t n = (size_t)m->g->nops * (size_t)cl(m)->ntypes;
	m->memo = xmalloc(sizeof(double) * (n + 1));
	for (size_t i = 0; i < n; i++)
		m->memo[i] = NAN;
	m->nmemo = m->g->nops;
}

void cost_memo_free(CostModel *m)
{
	free(m->memo);
	m->memo = NULL;
	m->nmemo = 0;
}

double cost_op(const CostModel *m, const Op *op, int devtype)
{
	if (!m->memo || op->id >= m->nmemo)
		return cost_op_uncached(m, op, devtype, NULL, NULL);
	double *x = &m->memo[(size_t)op->id * (size_t)cl(m)->ntypes + (size_t)devtype];
	if (isnan(*x))
		*x = cost_op_uncached(m, op, devtype, NULL, NULL);
	return *x;
}

/* ---- source kernels ('kernels: source') --------------------------------- */

/* Whether a and b are pieces of one source kernel: the same @kernel and
 * the same device (both unplaced, or the same @device). */
static bool same_kernel(const Graph *g, const Op *a, const Op *b)
{
	Value *ka = op_ann(g, a, ANN_KERNEL), *kb = op_ann(g, b, ANN_KERNEL);
	if (!ka || !kb || ka->kind != V_INT || kb->kind != V_INT || ka->i != kb->i)
		return false;
	const char *da = op_ann_str(g, a, ANN_DEVICE), *db = op_ann_str(g, b, ANN_DEVICE);
	return da == db || (da && db && strcmp(da, db) == 0);
}

/* Op as a piece of a kernel its source engine ran whole (@kernel, set by
 * torch2gir for the ops one PyTorch operator became; docs/cost-model.md,
 * "Source kernels"): a tensor passed between two pieces stays inside the
 * kernel, so *bytes (op_bytes_moved) loses the inputs a piece reads from
 * another and the outputs only pieces read; and the kernel is launched
 * once, so a piece that reads another pays no overhead (*head false). */
static void kernel_share(Graph *g, const Op *op, double *bytes, bool *head)
{
	*head = true;
	if (!op_ann(g, op, ANN_KERNEL) || op->id >= g->nops || g->ops[op->id] != op)
		return;
	for (uint32_t i = 0; i < op->nin; i++) {
		const Input *in = &op->in[i];
		if (in->ctrl || !in->src || in->idx >= in->src->nout ||
		    !same_kernel(g, in->src, op))
			continue;
		int64_t n = type_bytes(&in->src->out[in->idx]);
		*bytes -= n > 0 ? (double)n : 0;
		*head = false;
	}
	const Uses *u = graph_uses(g);
	for (uint32_t k = 0; k < op->nout; k++) {
		bool inside = false, outside = false;
		for (uint32_t j = u->start[op->id]; j < u->start[op->id + 1]; j++) {
			const Use *x = &u->use[j];
			const Input *in = &x->op->in[x->slot];
			if (in->ctrl || in->idx != k || x->op->dead)
				continue;
			if (same_kernel(g, op, x->op))
				inside = true;
			else
				outside = true;
		}
		int64_t n = type_bytes(&op->out[k]);
		if (inside && !outside && n > 0)
			*bytes -= (double)n;
	}
	if (*bytes < 0)
		*bytes = 0;
}

bool cost_op_launches(const CostModel *m, const Op *op, int devtype)
{
	bool launch = false;
	return cost_op_uncached(m, op, devtype, &launch, NULL) > 0 && launch;
}

double cost_op_parts(const CostModel *m, const Op *op, int devtype, double *fixed)
{
	return cost_op_uncached(m, op, devtype, NULL, fixed);
}

/* cost_op; *launch (when not NULL) becomes false for a piece of a source
 * kernel that another piece launches; *fixed (when not NULL) becomes the
 * part of the time that does not shrink with the op's share of the work:
 * the analytic model's overhead when the op launches, else 0 (a @cost or
 * a profile gives one figure). */
static double cost_op_uncached(const CostModel *m, const Op *op, int devtype,
			       bool *launch, double *fixed)
{
	if (launch)
		*launch = true;
	if (fixed)
		*fixed = 0;
	const Graph *g = m->g;
	const DevType *t = &cl(m)->types[devtype];
	Value *v = op_ann(g, op, ANN_COST);
	double x;
	if (v && v->kind == V_DICT) {
		for (uint32_t i = 0; i < v->dict.n; i++)
			if (strcmp(v->dict.items[i].key, t->name) == 0 &&
			    val_number(v->dict.items[i].val, &x))
				return x;
	} else if (v && val_number(v, &x)) {
		return x;
	}
	/* A replica or partition is profiled under its origin's name; a
	 * replica processes its shard of the batch (docs/plan.md). */
	const char *gpu = t->gpu ? t->gpu : t->name;   /* a type built by hand */
	const ProfEntry *e = prof_find(m->prof, op->name, gpu);
	const char *origin = op_ann_str(g, op, ANN_ORIGIN);
	if (!e && origin)
		e = prof_find(m->prof, origin, gpu);
	if (e) {
		if (e->maxbatch == 0)
			return e->a;
		double b = graph_batch(g);
		Value *sh = op_ann(g, op, ANN_SHARD);
		if (sh && sh->kind == V_LIST && sh->list.n == 2 &&
		    sh->list.items[1]->kind == V_INT)
			b = (double)sh->list.items[1]->i;
		double r = e->a + e->b * (b > 0 ? b : e->maxbatch);
		return r > 0 ? r : e->ymin; /* warned about by read_times */
	}
	/* Transfer and AllReduce take the links' time, not the device's. */
	if (op_flags(op) & OPF_COMM)
		return 0;
	/* Inputs, constants and variables are read in place: no work.
	 * Reshape, ExpandDims and Squeeze hand their input's buffer on with
	 * a new shape (TensorFlow forwards it; no kernel runs): no work
	 * either. */
	if ((op_flags(op) & (OPF_SOURCE | OPF_PARAM)) || op->opcode == O_Reshape ||
	    op->opcode == O_ExpandDims || op->opcode == O_Squeeze)
		return 0;
	/* Computed from constants alone: folded before the first step
	 * (graph_folded; a cache of the graph, so the cast). */
	if (op->id < g->nops && g->ops[op->id] == op &&
	    graph_folded((Graph *)g)[op->id])
		return 0;
	double flops = op_flops(g, op);
	if (flops < 0)
		flops = 0;
	double peak, eff = op_eff(g, op, t, &peak);
	double tc = peak > 0 ? flops / (peak * eff) : 0;
	double tm = 0, bytes = op_bytes_moved(g, op);
	bool head = true;
	if (t->source_kernels)
		kernel_share((Graph *)g, op, &bytes, &head);
	double channels;
	bytes = bn_bytes(g, op, t, bytes, &channels);
	double share = t->sms > 0 && channels > 0 && channels < t->sms
			       ? channels / t->sms : 1;
	if (t->mem_bw > 0)
		tm = bytes > 0 ? bytes / (t->mem_bw * cost_mem_eff(t) * share)
			       : 0;
	if (launch)
		*launch = head;
	if (fixed)
		*fixed = head ? cost_overhead(t) : 0;
	return (head ? cost_overhead(t) : 0) + (tc > tm ? tc : tm);
}

/* ---- communication ------------------------------------------------------ */

double cost_transfer(const CostModel *m, int a, int b, double bytes)
{
	if (a == b)
		return 0;
	double bw, lat;
	cluster_link(cl(m), a, b, &bw, &lat);
	return cost_link_time(bw, lat, bytes);
}

double cost_link_time(double bw, double lat, double bytes)
{
	return lat + (bytes > 0 ? bytes / bw : 0);
}

/* Ring over devs[0..n) in the given order: slowest bandwidth and largest
 * latency among the n links devs[i] -> devs[i+1 mod n] (a collective's
 * figures: cluster_coll_link). */
static void ring_links(const CostModel *m, const int *devs, int n,
		       double *bw, double *lat)
{
	*bw = INFINITY;
	*lat = 0;
	for (int i = 0; i < n; i++) {
		double b, l;
		cluster_coll_link(cl(m), devs[i], devs[(i + 1) % n], &b, &l);
		*bw = b < *bw ? b : *bw;
		*lat = l > *lat ? l : *lat;
	}
}

/* One ring phase (reduce-scatter or all-gather): n-1 steps of bytes/n. */
static double ring_phase(const CostModel *m, const int *devs, int n,
			 double bytes)
{
	if (n <= 1)
		return 0;
	double bw, lat;
	ring_links(m, devs, n, &bw, &lat);
	return (n - 1) * (lat + bytes / n / bw);
}

double cost_allreduce_ring(const CostModel *m, const int *devs, int n,
			   double bytes)
{
	return 2 * ring_phase(m, devs, n, bytes);
}

double cost_allreduce_hier(const CostModel *m, const int *devs, int n,
			   double bytes)
{
	if (n <= 1)
		return 0;
	/* Group devices by machine, machines in order of first appearance. */
	int *order = xmalloc(sizeof(int) * (size_t)n);
	int *leaders = xmalloc(sizeof(int) * (size_t)n);
	char *done = xcalloc((size_t)n, 1);
	int k = 0;
	double intra = 0;
	for (int i = 0; i < n; i++) {
		if (done[i])
			continue;
		int mach = cl(m)->devs[devs[i]].machine, cnt = 0;
		for (int j = i; j < n; j++)
			if (!done[j] && cl(m)->devs[devs[j]].machine == mach) {
				order[cnt++] = devs[j];
				done[j] = 1;
			}
		leaders[k++] = devs[i];
		double t = ring_phase(m, order, cnt, bytes);
		intra = t > intra ? t : intra;
	}
	double inter = 2 * ring_phase(m, leaders, k, bytes);
	free(order);
	free(leaders);
	free(done);
	return 2 * intra + inter;
}

double cost_ps(const CostModel *m, const int *workers, int n, int ps,
	       double bytes)
{
	/* Pushes from other machines share the PS machine's NIC and run one
	 * after another; pushes inside the PS machine use their own links and
	 * run in parallel.  Pulls mirror pushes. */
	double phase[2] = {0, 0};
	for (int dir = 0; dir < 2; dir++) {
		double remote_lat = 0, remote_sum = 0, local_max = 0;
		bool any_remote = false;
		for (int i = 0; i < n; i++) {
			int w = workers[i];
			if (w == ps)
				continue;
			int a = dir == 0 ? w : ps, b = dir == 0 ? ps : w;
			double bw, lat;
			cluster_link(cl(m), a, b, &bw, &lat);
			bool shared = cluster_route(cl(m), w, ps).kind == ROUTE_NET;
			if (shared) {
				any_remote = true;
				remote_lat = lat > remote_lat ? lat : remote_lat;
				remote_sum += bytes / bw;
			} else {
				double t = lat + bytes / bw;
				local_max = t > local_max ? t : local_max;
			}
		}
		double r = any_remote ? remote_lat + remote_sum : 0;
		phase[dir] = r > local_max ? r : local_max;
	}
	return phase[0] + phase[1];
}

/* ---- memory ------------------------------------------------------------- */

double cost_out_bytes(const Graph *g, const Op *op, uint32_t k)
{
	if (k >= op->nout)
		return 0;
	int64_t b = type_bytes(&op->out[k]);
	return b > 0 ? (double)b : 0;
}

/* Optimizer state an update op keeps per byte of its variable: the slot
 * inputs (TensorFlow OpDef order) that hold the state when the graph
 * spells them out. */
static const struct {
	const char *type;
	int slots[2];            /* input indices of state slots, 0 = none */
} optimizers[] = {
	{"ApplyGradientDescent", {0, 0}},
	{"ResourceApplyGradientDescent", {0, 0}},
	{"ApplyMomentum", {1, 0}},
	{"ResourceApplyMomentum", {1, 0}},
	{"ApplyKerasMomentum", {1, 0}},
	{"ResourceApplyKerasMomentum", {1, 0}},
	{"ApplyAdagrad", {1, 0}},
	{"ResourceApplyAdagrad", {1, 0}},
	{"ApplyAdam", {1, 2}},
	{"ResourceApplyAdam", {1, 2}},
	{"ApplyAdaMax", {1, 2}},
	{"ResourceApplyAdaMax", {1, 2}},
	{"ApplyRMSProp", {1, 2}},
	{"ResourceApplyRMSProp", {1, 2}},
	{"ApplyAdadelta", {1, 2}},
	{"ResourceApplyAdadelta", {1, 2}},
	{"ApplyFtrl", {1, 2}},
	{"ResourceApplyFtrl", {1, 2}},
};

static bool is_param(const Graph *g, const Op *op)
{
	return op_has_role(g, op, ROLE_PARAM);
}

double cost_op_mem(const CostModel *m, const Op *op)
{
	const Graph *g = m->g;
	Value *v = op_ann(g, op, ANN_MEM);
	double x;
	if (v && val_number(v, &x))
		return x;
	if (op->nin == 0 || !op_has_role(g, op, ROLE_UPDATE))
		return 0;
	const Input *var = &op->in[0];
	double vb = cost_out_bytes(g, var->src, var->idx);
	for (size_t i = 0; i < sizeof optimizers / sizeof optimizers[0]; i++) {
		if (strcmp(op->type, optimizers[i].type) != 0)
			continue;
		double state = 0;
		for (int s = 0; s < 2; s++) {
			uint32_t slot = (uint32_t)optimizers[i].slots[s];
			if (!slot)
				continue;
			/* An explicit slot variable is a parameter of its own,
			 * already counted by its output. */
			if (slot < op->nin && !op->in[slot].ctrl &&
			    is_param(g, op->in[slot].src))
				continue;
			state += vb;
		}
		return state;
	}
	return 0;
}

/* ---- CSV ---------------------------------------------------------------- */

void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void cost_print_csv(FILE *f, const CostModel *m)
{
	const Graph *g = m->g;
	fputs("op,type,device_type,time_s,out_bytes,mem_bytes\n", f);
	const Cluster *c = cl(m);
	if (!c)
		return;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		double out = 0;
		for (uint32_t k = 0; k < op->nout; k++)
			out += cost_out_bytes(g, op, k);
		double mem = cost_op_mem(m, op);
		for (int t = 0; t < c->ntypes; t++) {
			csv_str(f, op->name);
			fputc(',', f);
			csv_str(f, op->type);
			fputc(',', f);
			csv_str(f, c->types[t].name);
			fprintf(f, ",%.9g,%.0f,%.0f\n", cost_op(m, op, t), out,
				mem);
		}
	}
}
