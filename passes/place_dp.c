/* place_dp.c — data parallelism as a strategy (docs/plan.md): every op
 * that can be replicated runs on every device over a slice of the batch,
 * gradients are combined by AllReduce, every other op runs on the
 * fastest device.  Option sync: auto (default: comm's cost model picks
 * ring or hierarchical per gradient, as NCCL picks its algorithm), ring
 * or hier (Horovod's hierarchical AllReduce).  `dp` gives equal slices
 * (the standard data parallelism everyone compares against); `dp-prop`
 * gives slices proportional to each device's speed on this model (TAG's
 * DP-NCCL-P, HeteroG §2.2's "more replicas on faster devices").  With a
 * batch smaller than the device count the fastest `batch` devices take
 * one element each. */
#include "plan.h"
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct IxKey {
	double key;
	int pos, ix;
} IxKey;

static int ixkey_asc(const void *pa, const void *pb)
{
	const IxKey *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->pos - b->pos;
}

void plan_sort_ix(int *ix, int n, const double *key, bool desc)
{
	if (n < 2)
		return;
	IxKey *v = xmalloc(sizeof(IxKey) * (size_t)n);
	for (int i = 0; i < n; i++) {
		double k = desc ? -key[ix[i]] : key[ix[i]];
		v[i] = (IxKey){k == k ? k : INFINITY, i, ix[i]};   /* NaN last */
	}
	qsort(v, (size_t)n, sizeof(IxKey), ixkey_asc);
	for (int i = 0; i < n; i++)
		ix[i] = v[i].ix;
	free(v);
}

void plan_shares(int64_t batch, int n, const double *weight, int64_t *out)
{
	/* Largest remainder, every share at least 1 (n <= batch). */
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += weight[i];
	int64_t given = 0;
	double *rem = xmalloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; i++) {
		double x = sum > 0 ? (double)(batch - n) * weight[i] / sum : 0;
		out[i] = 1 + (int64_t)floor(x);
		rem[i] = x - floor(x);
		given += out[i];
	}
	while (given < batch) {
		int best = 0;
		for (int i = 1; i < n; i++)
			if (rem[i] > rem[best])
				best = i;
		out[best]++;
		rem[best] = -1;
		given++;
	}
	free(rem);
}

/* Seconds the whole graph takes on device d: its speed on this model. */
static double model_time(const TaskGraph *t, int d)
{
	double s = 0;
	for (uint32_t v = 0; v < t->n; v++)
		s += tg_cost(t, v, d);
	return s;
}

void plan_write_replicas(Graph *g, Op *op, const Cluster *c, const int *devs,
			 const int64_t *shares, int n)
{
	Value *l = val_list(g->arena, (uint32_t)n);
	Value *s = val_list(g->arena, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		l->list.items[i] = val_str(g->arena, c->devs[devs[i]].name);
		s->list.items[i] = val_int(g->arena, shares[i]);
	}
	op_unset(g, op, ann_key(ANN_DEVICE));
	op_set_ann(g, op, ANN_REPLICAS, l);
	op_set_ann(g, op, ANN_SHARES, s);
}

int place_dp_on(PassCtx *ctx, const TaskGraph *t, bool prop, const int *sub,
		int nsub)
{
	Graph *g = ctx->g;
	const Cluster *c = t->c;
	BatchInfo b;
	batch_analyze(g, &b);
	int nd = sub ? nsub : t->ndev;
	double *time = xmalloc(sizeof(double) * (size_t)t->ndev);
	int *order = xmalloc(sizeof(int) * (size_t)t->ndev);
	for (int d = 0; d < t->ndev; d++)
		time[d] = model_time(t, d);
	for (int i = 0; i < nd; i++)
		order[i] = sub ? sub[i] : i;
	plan_sort_ix(order, nd, time, false);    /* fastest first */
	int n = b.batch > 0 && b.batch < nd ? (int)b.batch : nd;
	int *devs = xmalloc(sizeof(int) * (size_t)n);
	double *w = xmalloc(sizeof(double) * (size_t)n);
	int64_t *shares = xmalloc(sizeof(int64_t) * (size_t)n);
	for (int i = 0; i < n; i++) {
		devs[i] = order[i];
		w[i] = prop && time[order[i]] > 0 ? 1 / time[order[i]] : 1;
	}
	/* Keep the cluster's device order in the replica list. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && devs[j] < devs[j - 1]; j--) {
			int x = devs[j];
			double y = w[j];
			devs[j] = devs[j - 1];
			w[j] = w[j - 1];
			devs[j - 1] = x;
			w[j - 1] = y;
		}
	if (b.batch > 0)
		plan_shares(b.batch, n, w, shares);
	int fastest = order[0];
	int rc = EXIT_OK;
	/* The gradients' AllReduce: comm runs @sync's algorithm, or picks
	 * the cheaper per gradient where the update carries none. */
	const char *sync = pass_opt(ctx, "sync");
	/* Memory: every device holds all parameters and optimizer state, and
	 * its share of the activations. */
	double params = 0, act = 0, temp = 0;
	for (uint32_t v = 0; v < t->n; v++) {
		act += t->mem_perm[v];
		temp = t->mem_temp[v] > temp ? t->mem_temp[v] : temp;
	}
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		const OpInfo *info = op_info(op->opcode);
		const char *role = op_ann_str(g, op, ANN_ROLE);
		if (op->dead)
			continue;
		if ((info && (info->flags & OPF_PARAM)) ||
		    (role && role_parse(role) == ROLE_PARAM))
			for (uint32_t k = 0; k < op->nout; k++)
				params += cost_out_bytes(g, op, k);
		params += cost_op_mem(ctx->cost, op);
	}
	act -= params;
	double *need = xmalloc(sizeof(double) * (size_t)n);
	bool over = false;
	for (int i = 0; i < n && b.batch > 0; i++) {
		need[i] = params + (act + temp) * (double)shares[i] / (double)b.batch;
		over |= need[i] > tg_mem_cap(t, devs[i]);
	}
	if (over && !ctx->best_effort) {
		fprintf(stderr, "pcc: error: place<algo=%s>: the model does not fit "
			"in the memory of cluster '%s' with data parallelism; per "
			"device:\n", prop ? "dp-prop" : "dp", c->name);
		cluster_mem_report(stderr, c, devs, n, need);
		fputs("pcc: note: --best-effort places it anyway\n", stderr);
		rc = EXIT_INFEASIBLE;
	}
	free(need);
	for (uint32_t i = 0; rc == EXIT_OK && i < g->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		const char *pin = op_ann_str(g, op, ANN_DEVICE);
		if (pin && t->op_node && t->pinned[t->op_node[i]] >= 0)
			continue;
		if (b.replicable[i] && n > 1 && b.batch > 0) {
			plan_write_replicas(g, op, c, devs, shares, n);
			const OpInfo *info = op_info(op->opcode);
			if (info && (info->flags & OPF_UPDATE) && strcmp(sync, "auto"))
				op_set_ann(g, op, ANN_SYNC, val_ident(g->arena, sync));
		} else {
			op_set_ann(g, op, ANN_DEVICE,
				   val_str(g->arena, c->devs[fastest].name));
		}
	}
	if (ctx->report && rc == EXIT_OK) {
		fprintf(ctx->report, "place<algo=%s>: %d replicas, shares",
			prop ? "dp-prop" : "dp", n);
		for (int i = 0; i < n; i++)
			fprintf(ctx->report, " %lld", (long long)shares[i]);
		fputc('\n', ctx->report);
		plan_report_unreplicable(ctx, &b);
	}
	free(time);
	free(order);
	free(devs);
	free(w);
	free(shares);
	batch_free(&b);
	return rc;
}

int place_dp(PassCtx *ctx, const TaskGraph *t, bool prop)
{
	return place_dp_on(ctx, t, prop, NULL, 0);
}
