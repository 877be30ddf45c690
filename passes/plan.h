/* plan.h — what place, comm and order share about a plan (docs/plan.md):
 * where the batch lives in every tensor, how a replicated op's outputs
 * relate to the original's, and the per-op strategy the place pass
 * writes. */
#ifndef PCC_PLAN_H
#define PCC_PLAN_H

#include "passes.h"

/* ---- batch.c: where the batch lives -------------------------------------- */
/* What replica r of an op holds of output k when the op is replicated
 * over a batch partition (TAG §4.1.1's categories, per output). */
typedef enum OutKind {
	OK_FULL,         /* the whole value, identical in every replica;
			  * with odim >= 0 the whole batch, gathered at an
			  * op that cannot be split over it: consumers take
			  * slices along odim again (re-split) */
	OK_SPLIT,        /* its slice of the batch, along odim */
	OK_PARTIAL,      /* a partial sum: the op contracted the batch */
	OK_LOCAL,        /* a value of its own (batch-norm statistics, the
			  * Shape of a slice): read by its own replica */
} OutKind;

/* A shape in which a split tensor's batch slices are contiguous, when its
 * own shape is not: [seq, batch, hidden] reshaped to [seq·batch, hidden]
 * keeps the view [seq, batch, hidden] with dim 1 (PyTorch's
 * sequence-first attention).  Replicas need no view; converting slices
 * to a whole value and back reshapes to the view around the concat or
 * split. */
typedef struct View {
	int rank, dim;
	int64_t *dims;
} View;

typedef struct BatchInfo {
	int64_t batch;           /* the graph's batch size; 0: none known */
	uint32_t *outbase;       /* [nops + 1]: first output slot of each op */
	uint32_t *inbase;        /* [nops + 1]: first input slot of each op */
	uint8_t *okind;          /* per output slot: OutKind */
	int8_t *odim;            /* per output slot: the dimension of its own
				  * shape that holds the batch (OK_SPLIT:
				  * replica r has size_r/batch of it; OK_FULL:
				  * the whole batch, re-split by consumers) */
	const View **view;       /* per output slot: its view, or NULL */
	int8_t *idim;            /* per input slot (inbase[op] + position in
				  * op->in): the dimension a replica slices
				  * this input along, or -1 when it needs the
				  * whole value */
	bool *replicable;        /* per op: may be replicated over a batch
				  * partition (Mean over the batch may not) */
	const View **iview;      /* per input slot: the view it is sliced in */
	Arena *arena;            /* views */
	int8_t *shape_in;        /* per op: data input holding the shape of
				  * output 0 (Reshape's shape, Slice's size,
				  * Conv2DBackpropInput's input_sizes), or -1 */
	const char **why;        /* per op: why it cannot be replicated (a
				  * batch-carrying op that is not), or NULL */
	uint32_t nops;
} BatchInfo;

/* Computes BatchInfo for a typed graph, forward in topological order.
 * Ops whose batch behaviour the op table does not describe are
 * replicable only as their @split annotation says (concat: along
 * dimension 0; sum: partial sums). */
void batch_analyze(Graph *g, BatchInfo *b);
void batch_free(BatchInfo *b);
/* -v: how many ops cannot be replicated, by type; where the batch is
 * gathered, and why, and where data parallelism ends for what follows. */
void plan_report_unreplicable(const PassCtx *ctx, const BatchInfo *b);
/* The batch rule of an opcode (docs/plan.md): "elementwise", "matmul",
 * ..., "none" for ops explicitly without one (their batch-carrying
 * inputs are gathered, the op runs once, its outputs re-split), or NULL
 * for an op the analysis does not know (a unit test requires none). */
const char *batch_rule_name(int opcode);
/* Kind and batch dimension of output k of op u. */
static inline OutKind batch_okind(const BatchInfo *b, const Op *u, uint32_t k)
{
	return (OutKind)b->okind[b->outbase[u->id] + k];
}
static inline int batch_odim(const BatchInfo *b, const Op *u, uint32_t k)
{
	return b->odim[b->outbase[u->id] + k];
}
static inline const View *batch_view(const BatchInfo *b, const Op *u, uint32_t k)
{
	return b->view[b->outbase[u->id] + k];
}

/* ---- place_dp.c: data-parallel strategies ------------------------------ */
struct TaskGraph;
/* Sorts ix[0..n) by key[ix[i]], descending when desc, else ascending,
 * NaN last; stable (equal keys keep their order in ix).  O(n log n). */
void plan_sort_ix(int *ix, int n, const double *key, bool desc);
/* Splits batch into n shares proportional to weight, each at least 1
 * (largest remainder); n <= batch. */
void plan_shares(int64_t batch, int n, const double *weight, int64_t *out);
/* Writes @replicas and @shares on op (and drops @device). */
void plan_write_replicas(Graph *g, Op *op, const Cluster *c, const int *devs,
			 const int64_t *shares, int n);
/* place<algo=dp> and place<algo=dp-prop>. */
int place_dp(PassCtx *ctx, const struct TaskGraph *t, bool prop);
/* place<algo=pipeline> (place_pipeline.c, a STRATEGY): stages, devices
 * and micro-batches from ctx's options `stages` and `micro`, written on
 * ctx->g as @stage, @replicas + @micro or @device.  Builds its own op-level
 * task graph (t may be the fused one and is not used).  The quiet form,
 * for a caller that judges it as one candidate among others (-O2's
 * hybrid), says nothing when no pipeline fits: EXIT_INFEASIBLE only. */
int place_pipeline_quiet(PassCtx *ctx, const struct TaskGraph *t);
/* Copies every op's strategy annotations (@device, @replicas, @shares,
 * @dup, @sync, @ps, @micro, @stage) from a clone of to (same op ids). */
void plan_copy_strategy(const Graph *from, Graph *to);
/* The same over the devices sub[0..nsub) only (NULL: every device). */
int place_dp_on(PassCtx *ctx, const struct TaskGraph *t, bool prop,
		const int *sub, int nsub);

/* ---- strategies.def: placers that write whole strategies ------------- */
/* Writes a plan's strategy annotations on ctx->g; EXIT_OK, or
 * EXIT_INFEASIBLE (reported) when it does not fit and !best_effort. */
typedef int (*StrategyFn)(PassCtx *ctx, const struct TaskGraph *t);
#define STRATEGY(name, fn, judged, desc) int fn(PassCtx *ctx, const struct TaskGraph *t);
#include "strategies.def"
#undef STRATEGY
typedef struct StrategyInfo {
	const char *name;
	StrategyFn fn;
	int judged;              /* bits: 1 judged at -O1, 2 at -O2 */
	const char *desc;
} StrategyInfo;
/* The table of strategies.def (place.c); *n receives its length. */
const StrategyInfo *strategy_table(int *n);
StrategyFn strategy_find(const char *name);

/* ---- evaluate.c: the one plan evaluator -------------------------------- */
/* What plan_evaluate found.  peaks and sim are inputs: where to write
 * each device's peak memory ([ndevs]) and the simulation (the caller
 * sim_free's it when span is finite), or NULL. */
typedef struct PlanEval {
	double span;             /* simulated iteration time; INFINITY when
				  * the plan cannot be materialised */
	bool oom;
	double peak_over;        /* the largest peak memory / capacity over
				  * the devices (INFINITY on failure) */
	uint32_t nops;           /* ops of the materialised plan */
	double *peaks;
	SimResult *sim;
	Diag *diag;              /* in: where comm's and order's errors go;
				  * NULL: nowhere (a candidate's failure
				  * is no user error) */
	int errors;              /* out: how many they reported */
} PlanEval;
/* Judges the strategy annotated on h, a graph_clone of ctx->g: comm
 * materialises it and order's schedule (order_simulate) runs it, each
 * with the options the pipeline gives it after ctx's pass
 * (PassCtx.later; defaults when none; ready order when the pipeline
 * runs comm but not order).  h is left materialised.  Returns
 * e->span.  docs/passes.md, "Judging plans". */
double plan_evaluate(PassCtx *ctx, Graph *h, PlanEval *e);
/* The same for callers that need only the figures. */
double plan_simulate(PassCtx *ctx, Graph *h, bool *oom, double *peak_over,
		     double *peaks);

/* dp-best's device subsets (place_best.c): every set of machines (at
 * most 4 machines; else the fastest-first prefixes and each machine),
 * every set of device types (at most 3; else each type); devs in
 * cluster order, no set twice.  plan_devsets_free releases them. */
typedef struct DevSet {
	int *devs;
	int n;
	const char *label;       /* "m0+m2", in a */
} DevSet;
DevSet *plan_devsets(const struct TaskGraph *t, Arena *a, int *n);
void plan_devsets_free(DevSet *v, int n);
/* PyTorch DDP's default bucket_cap_mb, 25 MiB. */
#define DDP_BUCKET (25.0 * 1024 * 1024)
/* Writes @bucket = bytes on every replicated update; how many. */
uint32_t plan_set_buckets(Graph *g, double bytes);
/* Better of two judged plans: one that fits beats one that does not;
 * then the faster; among plans that do not fit, the smaller overflow. */
bool plan_better(double span, bool oom, double over, double bspan,
		 double bover);
/* comm.c, for judging plans on a copy of the graph. */
int pass_comm(PassCtx *ctx);

#endif
