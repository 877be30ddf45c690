/* split.c — operation splitting on the critical path (FastT §5.2,
 * OS-DPOS; FD-DPS §4.1, tensor-dimension splitting).
 *
 * Runs after place, on the strategy: an op that runs on one device and
 * lies on the critical path of the simulated plan may be partitioned
 * along one of its output dimensions — the batch, and the channel or
 * output-feature dimension of convolutions, matrix products and their
 * gradients — into k parts (2 <= k <= the device count) on k devices.
 * Each part computes a slice of the output from slices of the inputs that
 * slice (rows of a for MatMul rows, columns of b for its columns, the
 * filter's output channels for Conv2D channels, ...) and whole copies of
 * the others; a ConcatV2 on the op's device puts the output back
 * together.  Slice sizes follow the devices' speeds on the op.
 *
 * Candidates come from the critical path of the materialised plan (comm
 * and the full simulator on a copy of the graph): its single-device ops,
 * longest first.  For each, every allowed dimension, every part count and
 * two device choices (the fastest devices for the op; its device plus
 * the least busy ones) are tried, each materialised and simulated in
 * full; the best is kept only if the iteration gets faster.  mode=first
 * (FastT) stops at the first op no split improves; mode=budget goes on
 * down the path until --search-work is spent (SPLIT_UNITS per op of each
 * plan simulated; no clock decides, so the result is deterministic;
 * --search-budget seconds only caps it, with a warning).  Parts record @origin and
 * @part = [i, k]. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 8

/* How op's inputs slice when its output is split along p (ops.def's
 * PART column, op_part_inputs): in_dim[i] (a dimension of input i, or -1
 * for the whole input); *shape is the input holding the output's shape
 * (rewritten per part), or -1. */
static bool rule(const Graph *g, const Op *op, int p, int *in_dim, int *shape)
{
	*shape = -1;
	for (uint32_t i = 0; i < op->nin; i++)
		in_dim[i] = -1;
	if (op->nout != 1)
		return false;
	for (uint32_t i = 0; i < op->nin; i++)
		if (op->in[i].ctrl && i + 1 < op->nin && !op->in[i + 1].ctrl)
			return false;        /* control inputs last, please */
	return op_part_inputs(g, op, p, in_dim, shape);
}

/* The dimensions op may be split along: annotate's @split_dims, and the
 * filter's channel dimensions of a filter gradient (op_part_dims). */
static int split_dims(const Graph *g, const Op *op, int *dims)
{
	return op_part_dims(g, op, dims, MAXD);
}

typedef struct Split {
	int p, k;
	int dev[MAXD];
	int64_t size[MAXD];
} Split;

static int devid(const Graph *g, const Op *op)
{
	const char *d = op_ann_str(g, op, ANN_DEVICE);
	return d ? cluster_find_device(g->cluster, d) : -1;
}

/* A Const of integers on device d. */
static Op *ints_const(Graph *g, const char *base, const int64_t *v, int n,
		      bool scalar, DType dt, const char *dev, const char *origin)
{
	Op *c = graph_add_op(g, graph_fresh_name(g, base), "Const", 0, 1);
	int64_t dims[1] = {n};
	c->out[0] = type_make(g->arena, dt, scalar ? 0 : 1, dims);
	c->types_given = true;
	Value *val = scalar ? val_int(g->arena, v[0]) : val_list(g->arena, (uint32_t)n);
	for (int i = 0; !scalar && i < n; i++)
		val->list.items[i] = val_int(g->arena, v[i]);
	op_set(g, c, "value", val);
	op_set_ann(g, c, ANN_DEVICE, val_str(g->arena, dev));
	op_set_ann(g, c, ANN_ORIGIN, val_str(g->arena, origin));
	return c;
}

/* Partitions op as s says (docs at the top). */
static void apply_split(Graph *g, Op *op, const Split *s)
{
	const Cluster *c = g->cluster;
	int in_dim[64], shape;
	if (op->nin > 64 || !rule(g, op, s->p, in_dim, &shape))
		pcc_die("split: no rule for '%s' along %d", op->name, s->p);
	const char *home = op_ann_str(g, op, ANN_DEVICE);
	const char *origin = op_ann_str(g, op, ANN_ORIGIN);
	origin = origin ? origin : op->name;
	const Type *o = &op->out[0];
	int64_t full = o->dims[s->p];
	/* Inputs: a Split (SplitV) of each sliced one, where it is made. */
	Op *pieces[64] = {0};
	for (uint32_t i = 0; i < op->nin; i++) {
		if (in_dim[i] < 0 || op->in[i].ctrl || (int)i == shape)
			continue;
		Op *src = op->in[i].src;
		const Type *t = &src->out[op->in[i].idx];
		int64_t sizes[MAXD], ax = in_dim[i];
		for (int j = 0; j < s->k; j++)
			sizes[j] = t->dims[in_dim[i]] / full * s->size[j];
		const char *where = op_ann_str(g, src, ANN_DEVICE);
		where = where ? where : home;
		const char *base = arena_printf(g->arena, "%s/split%u", op->name, i);
		Op *dim = ints_const(g, arena_printf(g->arena, "%s/dim", base), &ax, 1,
				     true, DT_I32, where, origin);
		Op *sz = ints_const(g, arena_printf(g->arena, "%s/sizes", base), sizes,
				    s->k, false, DT_I64, where, origin);
		Op *sp = graph_add_op(g, graph_fresh_name(g, base), "SplitV", 3,
				      (uint32_t)s->k);
		sp->types_given = true;
		sp->in[0] = op->in[i];
		sp->in[1] = (Input){sz, 0, false};
		sp->in[2] = (Input){dim, 0, false};
		op_set(g, sp, "num_split", val_int(g->arena, s->k));
		op_set_ann(g, sp, ANN_DEVICE, val_str(g->arena, where));
		op_set_ann(g, sp, ANN_ORIGIN, val_str(g->arena, origin));
		for (int j = 0; j < s->k; j++) {
			sp->out[j] = type_make(g->arena, t->dt, t->rank, t->dims);
			sp->out[j].dims[in_dim[i]] = sizes[j];
		}
		pieces[i] = sp;
	}
	/* The parts. */
	int64_t axis = s->p;
	Op *cat = graph_add_op(g, graph_fresh_name(g, arena_printf(g->arena, "%s/concat",
								    op->name)),
			       "ConcatV2", (uint32_t)s->k + 1, 1);
	cat->types_given = true;
	cat->out[0] = *o;
	for (int j = 0; j < s->k; j++) {
		const char *dv = c->devs[s->dev[j]].name;
		Op *x = graph_add_op(g, graph_fresh_name(g, arena_printf(g->arena, "%s/part%d",
									  op->name, j)),
				     op->type, op->nin, 1);
		x->types_given = true;
		x->loc = op->loc;
		for (uint32_t a = 0; a < op->nattr; a++)
			op_set(g, x, op->attrs[a].key, op->attrs[a].val);
		x->out[0] = type_make(g->arena, o->dt, o->rank, o->dims);
		x->out[0].dims[s->p] = s->size[j];
		for (uint32_t i = 0; i < op->nin; i++) {
			if (pieces[i])
				x->in[i] = (Input){pieces[i], (uint32_t)j, false};
			else if ((int)i == shape)
				x->in[i] = (Input){ints_const(g, arena_printf(g->arena,
									    "%s/shape", x->name),
							      x->out[0].dims, o->rank, false,
							      DT_I32, dv, origin),
						   0, false};
			else
				x->in[i] = op->in[i];
		}
		op_unset(g, x, ann_key(ANN_OUTPUT));
		op_set_ann(g, x, ANN_DEVICE, val_str(g->arena, dv));
		op_set_ann(g, x, ANN_ORIGIN, val_str(g->arena, origin));
		Value *pr = val_list(g->arena, 2);
		pr->list.items[0] = val_int(g->arena, j);
		pr->list.items[1] = val_int(g->arena, s->k);
		op_set_ann(g, x, ANN_PART, pr);
		double f = (double)s->size[j] / (double)full, v;
		Value *fl = op_ann(g, op, ANN_FLOPS);
		if (fl && val_number(fl, &v))
			op_set_ann(g, x, ANN_FLOPS, val_float(g->arena, v * f));
		op_scale_ann(g, x, ANN_COST, f);  /* per device type too */
		cat->in[j] = (Input){x, 0, false};
	}
	cat->in[s->k] = (Input){ints_const(g, arena_printf(g->arena, "%s/axis", cat->name),
					   &axis, 1, true, DT_I32, home, origin),
				0, false};
	for (uint32_t a = 0; a < op->nattr; a++)
		if (op->attrs[a].key[0] == '@' &&
		    (op->attrs[a].key == g->ann[ANN_OUTPUT] ||
		     op->attrs[a].key == g->ann[ANN_ROLE]))
			op_set(g, cat, op->attrs[a].key, op->attrs[a].val);
	op_set_ann(g, cat, ANN_DEVICE, val_str(g->arena, home));
	op_set_ann(g, cat, ANN_ORIGIN, val_str(g->arena, origin));
	graph_replace_uses(g, op, 0, cat, 0);
	graph_remove_op(g, op);
	graph_compact(g);
}

/* ---- judging ---------------------------------------------------------- */

typedef struct Judge {
	PassCtx *ctx;
	double best;
	SimResult last;          /* of the current plan, for candidates */
	Graph *lastg;            /* its materialised copy */
	int evals;
	double work;             /* work units spent (SPLIT_UNITS per op) */
	double t0;               /* when the search began (the cap) */
	bool cut;                /* the wall-clock cap stopped it */
	int errors;              /* comm's and order's on the current plan */
} Judge;

/* Work units per op of a materialised plan judged: cloning, comm and
 * the order pass's two schedules (plan_evaluate) cost about 9 us per
 * op, a few hundred steps of the hybrid's strategy simulator (about
 * 0.03 us each; measured at 100k ops on 16 devices), so one
 * --search-work budget means about the same time in both searches (a
 * conservative 100). */
#define SPLIT_UNITS 100

/* May the search go on?  Its work budget, then the wall-clock cap. */
static bool more(Judge *j)
{
	if (j->work >= j->ctx->search_work || j->cut)
		return false;
	if (search_cut(j->ctx, j->t0))
		j->cut = true;
	return !j->cut;
}

/* Materialises g (or g with split s of op name applied) on a copy and
 * simulates it; returns the iteration time (INFINITY on failure or
 * overflow).  keep: retain the copy and result in j->last*.  The current
 * plan's (no split) errors are the user's and are reported; a
 * candidate's are not. */
static double judge(Judge *j, const char *name, const Split *s, bool keep)
{
	PassCtx *ctx = j->ctx;
	Graph *h = graph_clone(ctx->g);
	j->evals++;
	if (s)
		apply_split(h, graph_lookup(h, name, NULL), s);
	SimResult r;
	PlanEval e = {.sim = &r, .diag = s ? NULL : ctx->diag};
	plan_evaluate(ctx, h, &e);
	j->errors += e.errors;
	j->work += SPLIT_UNITS * (double)e.nops;
	double span = e.oom ? INFINITY : e.span;
	if (isfinite(e.span)) {
		if (keep) {
			j->last = r;
			j->lastg = h;
			return span;
		}
		sim_free(&r);
	}
	graph_free(h);
	return span;
}

/* Can --search-work pay for the current plan's judge and one try?  Each
 * costs SPLIT_UNITS per op of the materialised plan, about one per
 * replica of each op; if not, the search would judge the plan and stop,
 * so it does not start (a 100k-op graph on 16 devices). */
static bool affordable(const PassCtx *ctx)
{
	const Graph *g = ctx->g;
	double ops = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		const Value *r = op_ann(g, op, ANN_REPLICAS);
		ops += r && r->kind == V_LIST && r->list.n ? r->list.n : 1;
	}
	return 2 * SPLIT_UNITS * ops <= ctx->search_work;
}

typedef struct CandOp {
	const char *name;
	double time;
} CandOp;

static int candop_cmp(const void *pa, const void *pb)
{
	const CandOp *a = pa, *b = pb;
	if (a->time != b->time)
		return a->time > b->time ? -1 : 1;
	return strcmp(a->name, b->name);
}

static const SimResult *sort_r;

static int by_dev_start(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (sort_r->dev[a] != sort_r->dev[b])
		return sort_r->dev[a] < sort_r->dev[b] ? -1 : 1;
	if (sort_r->start[a] != sort_r->start[b])
		return sort_r->start[a] < sort_r->start[b] ? -1 : 1;
	/* Ties (ops of no duration) in dispatch order, a linear extension
	 * of the graph: so every step of the walk below goes to an op
	 * dispatched earlier, and it ends. */
	if (sort_r->seq[a] != sort_r->seq[b])
		return sort_r->seq[a] < sort_r->seq[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Single-device ops of g on the critical path of the materialised plan
 * h (simulated in r): walking back from the op that finishes last, each
 * step takes the input or the previous op on the same device that
 * finished exactly when this one started. */
static CandOp *critical_ops(Judge *j, int *n)
{
	Graph *h = j->lastg, *g = j->ctx->g;
	const SimResult *r = &j->last;
	uint32_t cur = UINT32_MAX;
	for (uint32_t i = 0; i < h->nops; i++)
		if (!h->ops[i]->dead && (cur == UINT32_MAX || r->finish[i] > r->finish[cur]))
			cur = i;
	/* The previous op on each device, by start time. */
	uint32_t *ids = xmalloc(sizeof(uint32_t) * ((size_t)h->nops + 1));
	uint32_t *prev = xmalloc(sizeof(uint32_t) * ((size_t)h->nops + 1));
	uint32_t nl = 0;
	for (uint32_t i = 0; i < h->nops; i++) {
		prev[i] = UINT32_MAX;
		if (!h->ops[i]->dead && h->ops[i]->opcode != O_Transfer &&
		    h->ops[i]->opcode != O_AllReduce)
			ids[nl++] = i;
	}
	sort_r = r;
	qsort(ids, nl, sizeof(uint32_t), by_dev_start);
	for (uint32_t k = 1; k < nl; k++)
		if (r->dev[ids[k]] == r->dev[ids[k - 1]])
			prev[ids[k]] = ids[k - 1];
	CandOp *out = NULL;
	int m = 0;
	bool *visited = xcalloc((size_t)h->nops + 1, sizeof(bool));
	while (cur != UINT32_MAX && !visited[cur]) {
		visited[cur] = true;
		const Op *op = h->ops[cur];
		const char *org = op_ann_str(h, op, ANN_ORIGIN);
		Op *o = graph_lookup(g, org ? org : op->name, NULL);
		if (o && !o->dead && op_ann(g, o, ANN_DEVICE) && o->nout == 1) {
			bool seen = false;
			for (int q = 0; q < m; q++)
				seen |= out[q].name == o->name;
			if (!seen) {
				out = xrealloc(out, sizeof(CandOp) * (size_t)(m + 1));
				out[m++] = (CandOp){o->name, r->finish[cur] - r->start[cur]};
			}
		}
		uint32_t next = UINT32_MAX;
		double st = r->start[cur];
		for (uint32_t k = 0; k < op->nin && next == UINT32_MAX; k++) {
			uint32_t u = op->in[k].src->id;
			if (fabs(r->finish[u] - st) <= 1e-12 + 1e-9 * st)
				next = u;
		}
		if (next == UINT32_MAX && prev[cur] != UINT32_MAX &&
		    fabs(r->finish[prev[cur]] - st) <= 1e-12 + 1e-9 * st)
			next = prev[cur];
		cur = st > 0 ? next : UINT32_MAX;
	}
	free(ids);
	free(prev);
	free(visited);
	if (m > 1)
		qsort(out, (size_t)m, sizeof(CandOp), candop_cmp);
	*n = m;
	return out;
}

/* Devices for k parts: the k fastest for op (variant 0), or its own
 * device and the k-1 least busy others (variant 1). */
static void pick_devices(const Judge *j, const Op *op, int k, int variant,
			 int *dev)
{
	const Cluster *c = j->ctx->g->cluster;
	int nd = c->ndevs, home = devid(j->ctx->g, op);
	double key[64];
	int order[64];
	for (int d = 0; d < nd && d < 64; d++) {
		order[d] = d;
		key[d] = variant == 0 ? cost_op(j->ctx->cost, op, c->devs[d].type)
				      : d == home ? -1 : j->last.busy[d];
	}
	for (int a = 1; a < nd && a < 64; a++)
		for (int b = a; b > 0 && key[order[b]] < key[order[b - 1]]; b--) {
			int x = order[b];
			order[b] = order[b - 1];
			order[b - 1] = x;
		}
	for (int i = 0; i < k; i++)
		dev[i] = order[i];
}

int pass_split(PassCtx *ctx)
{
	Graph *g = ctx->g;
	const Cluster *c = g->cluster;
	bool first = strcmp(pass_opt(ctx, "mode"), "first") == 0;
	/* passes.def's range for max_parts is [2,MAXD] */
	int maxk = (int)pass_opt_int(ctx, "max_parts");
	maxk = maxk < 2 ? 2 : maxk > MAXD ? MAXD : maxk;
	if (pass_refuse_plan(ctx, "split runs on a placed training graph, "
			     "before comm"))
		return EXIT_BADINPUT;
	if (c->ndevs < 2)
		return EXIT_OK;
	Judge j;
	memset(&j, 0, sizeof j);
	j.ctx = ctx;
	j.t0 = pcc_now();
	if (!affordable(ctx)) {
		if (ctx->report)
			fputs("split: --search-work cannot pay for two judged plans "
			      "of this size; nothing tried\n", ctx->report);
		return EXIT_OK;
	}
	j.best = judge(&j, NULL, NULL, true);
	pass_progress(ctx, "splitting critical ops", "simulated", j.evals, 0, j.best);
	double start = j.best;
	int nsplit = 0;
	if (!isfinite(j.best)) {
		if (j.lastg) {
			sim_free(&j.last);
			graph_free(j.lastg);
		}
		if (j.errors)    /* not a plan (unplaced ops, bad @shares) */
			return EXIT_BADINPUT;
		if (ctx->report)
			fputs("split: the plan does not simulate within memory; "
			      "nothing split\n", ctx->report);
		return EXIT_OK;
	}
	bool progress = true;
	while (progress && more(&j)) {
		progress = false;
		int ncand;
		CandOp *cands = critical_ops(&j, &ncand);
		pass_progress(ctx, "splitting critical ops", "simulated", j.evals, 0,
			      j.best);
		for (int ci = 0; ci < ncand && !progress && more(&j); ci++) {
			Op *op = graph_lookup(g, cands[ci].name, NULL);
			int dims[MAXD], in_dim[64], shape;
			int nd = op && op->nin <= 64 ? split_dims(g, op, dims) : 0;
			Split best = {0}, s;
			double bt = j.best;
			for (int di = 0; di < nd; di++) {
				if (!rule(g, op, dims[di], in_dim, &shape))
					continue;
				int64_t full = op->out[0].dims[dims[di]];
				for (int k = 2; k <= maxk && k <= c->ndevs && k <= full &&
						more(&j); k++)
					for (int var = 0; var < 2; var++) {
						s.p = dims[di];
						s.k = k;
						pick_devices(&j, op, k, var, s.dev);
						double w[MAXD];
						for (int q = 0; q < k; q++)
							w[q] = 1 / fmax(1e-12, cost_op(ctx->cost, op,
								       c->devs[s.dev[q]].type));
						plan_shares(full, k, w, s.size);
						double x = judge(&j, op->name, &s, false);
						pass_progress(ctx, "splitting critical ops",
							      "simulated", j.evals, 0,
							      fmin(j.best, bt));
						if (x < bt * (1 - 1e-6)) {
							bt = x;
							best = s;
						}
					}
			}
			if (best.k) {
				if (ctx->report)
					pass_progress_clear(ctx);
				if (ctx->report)
					fprintf(ctx->report,
						"split: %s along dimension %d into %d parts: "
						"%.6g s -> %.6g s (simulated)\n", op->name,
						best.p, best.k, j.best, bt);
				apply_split(g, op, &best);
				nsplit++;
				progress = true;
				sim_free(&j.last);
				graph_free(j.lastg);
				j.lastg = NULL;
				j.best = judge(&j, NULL, NULL, true);
			} else if (first) {
				break;   /* FastT: stop at the first op that does not improve */
			}
		}
		free(cands);
	}
	if (j.lastg) {
		sim_free(&j.last);
		graph_free(j.lastg);
	}
	if (j.cut)
		search_cut_warn(ctx, j.work, ctx->search_work);
	if (ctx->report)
		fprintf(ctx->report, "split: %d ops split, %d plans simulated "
			"(%.3g work units), %.6g s -> %.6g s (simulated)\n", nsplit,
			j.evals, j.work, start, j.best);
	return EXIT_OK;
}
