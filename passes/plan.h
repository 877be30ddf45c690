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
/* Splits batch into n shares proportional to weight, each at least 1
 * (largest remainder); n <= batch. */
void plan_shares(int64_t batch, int n, const double *weight, int64_t *out);
/* Writes @replicas and @shares on op (and drops @device). */
void plan_write_replicas(Graph *g, Op *op, const Cluster *c, const int *devs,
			 const int64_t *shares, int n);
/* place<algo=dp> and place<algo=dp-prop>. */
int place_dp(PassCtx *ctx, const struct TaskGraph *t, bool prop);
/* place<algo=hybrid> (place_hybrid.c). */
int place_hybrid(PassCtx *ctx, const struct TaskGraph *t);
/* comm.c, for judging plans on a copy of the graph. */
int pass_comm(PassCtx *ctx);

#endif
