/* place_pipeline.c — pipeline parallelism on heterogeneous devices
 * (place<algo=pipeline>; docs/passes.md, docs/plan.md).
 *
 * Anchors: GPipe (Huang et al. 2019: stages of consecutive layers,
 * micro-batches, gradients accumulated over them), PipeDream-flush /
 * 1F1B (Narayanan et al. 2021 §3.1: one forward, one backward, so stage
 * s stashes at most S - s micro-batches of activations), and the
 * heterogeneous planners Metis (Um et al., ATC'24 §5: stage sizes from
 * device speed and memory), Sailor and HAPT (a dynamic program over the
 * layer order choosing stage boundaries and devices together).
 *
 * Stages.  The forward ops, in the CPD-TOPO order of the op graph
 * (Celeritas Algorithm 1), get positions 0, 1, ...; every other op
 * inherits one: a parameter the first position that reads it, an update
 * its parameter's, a backward op the latest of the parameters and
 * forward values it reads and the least position of its consumers (an
 * input gradient needs its layer's weights, a weight gradient its
 * activations and goes to its update), and what is left the least
 * position of its consumers.  A stage is a contiguous
 * range of positions on one device, or data-parallel on the devices of
 * one machine, or of consecutive machines of one device type (Metis's
 * and Sailor's data-parallel stages), so every layer's forward,
 * backward, weights and optimizer state share a stage and only
 * activations and their gradients cross stages.
 *
 * Search.  The positions are cut into at most 48 segments of about equal
 * work; a dynamic program over (stages left k, first segment p, device i
 * in a fixed device list L, block b: L[i] alone, the rest of its
 * machine, or that and the machines of its type after it in L)
 * minimises the fill-and-drain time Σ stage
 * times + Σ 2 × boundary transfers of one micro-batch, with every stage
 * and transfer under a cap C and every stage within its device's memory:
 * weights, their accumulated and partial gradients and the optimizer
 * state, plus activations × min(k, m) / m (1F1B's stash), plus its
 * largest temporary / m.  Stages take devices in L's
 * order (machines by aggregate speed, then their devices), skipping any,
 * so each device holds at most one stage and stage sizes follow device
 * speed.  A stage's time per micro-batch is its work / m, but for each
 * op's launch overhead, paid whole by every micro-batch; its updates run
 * once per iteration.  The estimate of a plan is fill-and-drain + (m - 1)
 * × its bottleneck (the slowest stage or transfer) + the slowest stage's
 * updates; it is minimised over the
 * caps C (a geometric grid), the stage count and m ∈ {1, 2, 4, ..., 32}.
 * A data-parallel stage's gradients, summed over its micro-batches on
 * each device, are all-reduced over its devices (a ring within a
 * machine; over machines the cheaper of a ring and the hierarchical
 * AllReduce) as the last micro-batch's backward makes them; what that
 * backward does not hide, or the drain of the stages before it, is
 * added (the DP's tail).
 * The work is counted, not timed: O(|m| · |C| · S · (P²·L + P·L²)).
 * The best few plans by estimate (of single-device stages, of data-
 * parallel ones within machines and of ones over machines, separately:
 * the estimate compares kinds worst) are materialised (comm, then
 * order's 1F1B schedule) on copies of the graph and the full simulator
 * picks the one that runs fastest in memory.
 *
 * Not modelled: data-parallel stages over part of a machine or over
 * machines of different types, interleaved stages, recomputation; a
 * stage over machines receives each micro-batch on its first device,
 * which slices it for the others, a transfer the estimate leaves out
 * (counting it made the plans chosen slower, not faster). */
#include "plan.h"
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NFINAL[0] plans whose stages have one device each, NFINAL[1] with a
 * data-parallel stage within a machine and NFINAL[2] with one over
 * several machines are judged by the simulator (the estimate ranks plans
 * of one kind better than it compares the kinds). */
enum { MAXSEG = 48, MAXS = 16, NCAP = 16, NKIND = 3, MAXOPS = 1000000 };
/* The DP's device list: whole machines, fastest first, up to MAXL
 * devices (the first MAXL of a larger first machine).  Its work grows
 * with the square of the list (every stage's next stage), so 256 GPUs
 * took minutes and 4096 ran out of memory; MAXL is four times the
 * largest cluster of the zoo. */
enum { MAXL = 64 };
static const int NFINAL[NKIND] = {3, 2, 2};

typedef struct PPlan {
	int S, m;
	int dev[MAXS];           /* first device of each stage */
	int nd[MAXS];            /* its devices: L[li], L[li + 1], ... */
	int li[MAXS];
	int cut[MAXS + 1];       /* stage s: segments [cut[s], cut[s+1]) */
	double est;
} PPlan;

typedef struct PModel {
	const TaskGraph *t;
	int nseg, nl, ntype;
	int *L;                  /* [nl]: device list */
	int nall;                /* the cluster's devices (nl <= MAXL) */
	double *lk_bw, *lk_lat;  /* [nl * nl]: the link L[i] -> L[j] */
	double *cost;            /* [(nseg + 1) * ntype]: prefix sums of the
				  * work that scales with the micro-batch */
	double *ovh;             /* the same of each op's fixed overhead
				  * (cost_overhead): paid per micro-batch */
	double *once;            /* the same of the updates: once per
				  * iteration, after the last micro-batch */
	double *bwd;             /* the same of the backward ops' work that
				  * scales (part of cost) */
	double *gbytes, *gcnt;   /* [nseg + 1]: bytes and number of the
				  * gradients the updates read, prefix sums */
	double *wmem, *amem;     /* [nseg + 1]: prefix sums */
	double *ar_lat, *ar_slope; /* [nl]: a ring over the rest[i] devices
				  * from L[i]: seconds at 0 bytes, per byte */
	double *xr_lat, *xr_slope, *xh_lat, *xh_slope; /* [nl]: the same over
				  * the span[i] devices, ring and
				  * hierarchical (comm takes the cheaper) */
	int *rest;               /* [nl]: devices from L[i] to the end of its
				  * machine in L */
	int *span;               /* [nl]: devices from L[i] to the end of the
				  * run of machines of its type that follow
				  * each other in L (>= rest[i]) */
	double *tmem;            /* [nseg]: largest temporary */
	double *xp;              /* [nseg + 1]: parameter bytes sent once to a
				  * stage starting at segment q (and their
				  * gradients back) */
	double *xf, *xb;         /* [nseg + 1]: bytes crossing the cut before
				  * segment p, forward and backward */
	int *seg;                /* [t->n]: segment of each node */
	bool ignore_mem;         /* --best-effort when nothing fits */
	long work;
} PModel;

static double prefix(const PModel *pm, const double *a, int p, int q, int ty)
{
	return a[(size_t)q * (size_t)pm->ntype + (size_t)ty] -
	       a[(size_t)p * (size_t)pm->ntype + (size_t)ty];
}

/* Seconds of segments [p, q) on device d (each of b data-parallel
 * replicas), per micro-batch of m: the work scales with the rows, each
 * op's launch overhead does not. */
static double stage_time(const PModel *pm, int p, int q, int d, int m, int b)
{
	int ty = pm->t->c->devs[d].type;
	return prefix(pm, pm->cost, p, q, ty) / m / b + prefix(pm, pm->ovh, p, q, ty);
}

/* Seconds of the updates of segments [p, q) on device d, once per
 * iteration. */
static double stage_once(const PModel *pm, int p, int q, int d)
{
	return prefix(pm, pm->once, p, q, pm->t->c->devs[d].type);
}

/* One micro-batch's backward on stage [p, q) on device d (of b). */
static double stage_bwd(const PModel *pm, int p, int q, int d, int m, int b)
{
	return prefix(pm, pm->bwd, p, q, pm->t->c->devs[d].type) / m / b;
}

/* Seconds of the AllReduces over the b devices L[i ..] (1, rest[i] or
 * span[i], as the DP asks: ring_fits) of the gradients of segments
 * [p, q): one per gradient (comm's), so each pays the latency; a ring
 * within a machine, the cheaper of a ring and the hierarchical
 * AllReduce over machines. */
static double stage_ar(const PModel *pm, int p, int q, int i, int b)
{
	double cnt = pm->gcnt[q] - pm->gcnt[p], bytes = pm->gbytes[q] - pm->gbytes[p];
	if (b < 2 || cnt <= 0)
		return 0;
	if (b == pm->rest[i])
		return cnt * pm->ar_lat[i] + bytes * pm->ar_slope[i];
	return fmin(cnt * pm->xr_lat[i] + bytes * pm->xr_slope[i],
		    cnt * pm->xh_lat[i] + bytes * pm->xh_slope[i]);
}

/* ar_lat and ar_slope: the ring's time (cost_allreduce_ring, affine in
 * the bytes on uniform links; else its chord up to all the gradients)
 * from two evaluations, not two per DP step. */
static void ring_fits(PModel *pm)
{
	int nl = pm->nl;
	double G = pm->gbytes[pm->nseg] > 0 ? pm->gbytes[pm->nseg] : 1;
	pm->ar_lat = xcalloc((size_t)nl + 1, sizeof(double));
	pm->ar_slope = xcalloc((size_t)nl + 1, sizeof(double));
	pm->xr_lat = xcalloc((size_t)nl + 1, sizeof(double));
	pm->xr_slope = xcalloc((size_t)nl + 1, sizeof(double));
	pm->xh_lat = xcalloc((size_t)nl + 1, sizeof(double));
	pm->xh_slope = xcalloc((size_t)nl + 1, sizeof(double));
	const CostModel *m = pm->t->m;
	for (int i = 0; i < nl; i++) {
		const int *L = &pm->L[i];
		if (pm->rest[i] >= 2) {
			double a = cost_allreduce_ring(m, L, pm->rest[i], 0);
			pm->ar_lat[i] = a;
			pm->ar_slope[i] = (cost_allreduce_ring(m, L, pm->rest[i], G) - a) / G;
		}
		if (pm->span[i] > pm->rest[i]) {
			int b = pm->span[i];
			double r = cost_allreduce_ring(m, L, b, 0);
			double h = cost_allreduce_hier(m, L, b, 0);
			pm->xr_lat[i] = r;
			pm->xr_slope[i] = (cost_allreduce_ring(m, L, b, G) - r) / G;
			pm->xh_lat[i] = h;
			pm->xh_slope[i] = (cost_allreduce_hier(m, L, b, G) - h) / G;
		}
	}
}

/* Seconds to send bytes from L[i] to L[j] (cost_transfer, from the
 * links cached by device_list). */
static double link_time(const PModel *pm, int i, int j, double bytes)
{
	if (pm->L[i] == pm->L[j])
		return 0;
	size_t x = (size_t)i * (size_t)pm->nl + (size_t)j;
	return pm->lk_lat[x] + (bytes > 0 ? bytes / pm->lk_bw[x] : 0);
}

/* One micro-batch's transfer across the cut before segment q, from L[i]
 * to L[j]: the larger direction (forward and backward use opposite
 * links). */
static double cut_time(const PModel *pm, int q, int i, int j, int m)
{
	double b = fmax(pm->xf[q], pm->xb[q]) / m;
	return link_time(pm, i, j, b);
}

/* Forward ops that depend on no input and no parameter (a dropout
 * mask's RandomUniform, GreaterEqual, Cast and scaling; constants)
 * come first in CPD-TOPO order, having nothing to wait for; each goes
 * to its first forward consumer's position (pos: the forward ops' so
 * far; consumers first, so a chain follows it), so a mask is made in
 * the stage that applies it instead of being sent there each
 * micro-batch, which made every cut before the last layers look (and
 * be) expensive. */
static void data_free_follow(const TaskGraph *t, const Role *role,
			     uint32_t *pos)
{
	uint32_t n = t->n, none = UINT32_MAX;
	bool *dep = xcalloc((size_t)n + 1, sizeof(bool));
	for (uint32_t j = 0; j < n; j++) {
		uint32_t v = t->topo[j];
		dep[v] = role[v] == ROLE_INPUT || role[v] == ROLE_PARAM;
		for (uint32_t e = t->pred_start[v]; e < t->pred_start[v + 1] && !dep[v]; e++)
			dep[v] = dep[t->pred[e].node];
	}
	for (uint32_t j = n; j-- > 0;) {
		uint32_t v = t->topo[j], c = none;
		if (dep[v] || pos[v] == none)
			continue;
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++)
			if (pos[t->succ[e].node] < c)   /* forward ones only, so far */
				c = pos[t->succ[e].node];
		if (c != none && c > pos[v])
			pos[v] = c;
	}
	free(dep);
}

/* Positions of nodes along the forward order (see the file comment);
 * role[v] (caller's, [t->n]): each node's role. */
static void positions(Graph *g, const TaskGraph *t, uint32_t *pos,
		      uint32_t *nfwd, Role *role)
{
	uint32_t n = t->n, none = UINT32_MAX;
	for (uint32_t v = 0; v < n; v++) {
		role[v] = ROLE_NONE;
		pos[v] = none;
	}
	for (uint32_t i = 0; i < t->nops; i++)
		if (t->op_node[i] != UINT32_MAX)
			role[t->op_node[i]] = op_role(g, g->ops[i]);
	uint32_t *order = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	tg_cpdtopo(t, NULL, order);
	uint32_t k = 0;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t v = order[j];
		Role r = role[v];
		bool fwd = r == ROLE_FWD || r == ROLE_INPUT || r == ROLE_LOSS ||
			   (r == ROLE_NONE && t->pred_start[v + 1] > t->pred_start[v]);
		if (fwd)
			pos[v] = k++;
	}
	*nfwd = k ? k : 1;
	data_free_follow(t, role, pos);
	/* Parameters: the first forward position reading them. */
	for (uint32_t v = 0; v < n; v++) {
		if (role[v] != ROLE_PARAM)
			continue;
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++) {
			uint32_t w = t->succ[e].node;
			if (role[w] != ROLE_PARAM && role[w] != ROLE_BWD &&
			    role[w] != ROLE_UPDATE && pos[w] < pos[v])
				pos[v] = pos[w];
		}
	}
	/* Updates: their parameter's. */
	for (uint32_t v = 0; v < n; v++) {
		if (role[v] != ROLE_UPDATE)
			continue;
		for (uint32_t e = t->pred_start[v]; e < t->pred_start[v + 1]; e++) {
			uint32_t u = t->pred[e].node;
			if (role[u] == ROLE_PARAM && pos[u] != none &&
			    (pos[v] == none || pos[u] > pos[v]))
				pos[v] = pos[u];
		}
	}
	/* Backward ops, consumers first: the latest of the parameters and
	 * forward values (not the loss's gradient) they read (a layer's
	 * input gradient needs its
	 * weights, a weight gradient its activations) and the least
	 * position of their consumers (a weight gradient goes to its
	 * update; a gradient to where it is used).  A tied weight's gradient
	 * contribution is then computed where the activations are and sent
	 * once, not each micro-batch's activations to the weight. */
	for (uint32_t j = n; j-- > 0;) {
		uint32_t v = t->topo[j];
		if (role[v] != ROLE_BWD)
			continue;
		uint32_t c = none;
		int64_t best = -1;
		for (uint32_t e = t->pred_start[v]; e < t->pred_start[v + 1]; e++) {
			uint32_t u = t->pred[e].node;
			if (role[u] != ROLE_BWD && role[u] != ROLE_UPDATE &&
			    role[u] != ROLE_LOSS && pos[u] != none &&
			    (int64_t)pos[u] > best)
				best = pos[u];
		}
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++)
			if (pos[t->succ[e].node] < c)
				c = pos[t->succ[e].node];
		if (c != none && (int64_t)c > best)
			best = c;
		if (best >= 0)
			pos[v] = (uint32_t)best;
	}
	/* The rest, in reverse topological order: the least position of
	 * their consumers. */
	for (uint32_t j = n; j-- > 0;) {
		uint32_t v = t->topo[j];
		if (pos[v] != none)
			continue;
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++) {
			uint32_t w = t->succ[e].node;
			if (pos[w] < pos[v])
				pos[v] = pos[w];
		}
	}
	for (uint32_t v = 0; v < n; v++)
		if (pos[v] == none)
			pos[v] = 0;
	/* Weights and optimizer state are kept once; activations by micro-
	 * batch: remember which is which in the top bit. */
	for (uint32_t v = 0; v < n; v++)
		if (role[v] == ROLE_PARAM || role[v] == ROLE_UPDATE)
			pos[v] |= role[v] == ROLE_PARAM ? 0xc0000000u : 0x80000000u;
	free(order);
}

/* Cuts the nf positions, of work w[] (total total), into at most MAXSEG
 * runs of about equal work: pseg[p] = the run of position p.  Returns
 * the number of runs. */
static int segment_positions(const double *w, uint32_t nf, double total,
			     uint32_t *pseg)
{
	int ns = 0;
	double acc = 0;
	for (uint32_t p = 0; p < nf; p++) {
		pseg[p] = (uint32_t)ns;
		acc += w[p];
		if (acc >= total * (ns + 1) / MAXSEG && ns < MAXSEG - 1 && p + 1 < nf)
			ns++;
	}
	return ns + 1;
}

/* Per-segment cost by device type, weights, activations, parameters and
 * largest temporary of the nodes at positions pos (segments pseg), then
 * the prefix sums. */
static void segment_sums(const TaskGraph *t, PModel *pm, const uint32_t *pos,
			 const uint32_t *pseg, const Role *role)
{
	uint32_t n = t->n;
	int nt = pm->ntype, S = pm->nseg;
	double *tc = xcalloc((size_t)nt + 1, sizeof(double));
	for (uint32_t v = 0; v < n; v++) {
		int s = (int)pseg[pos[v] & 0x3fffffffu];
		pm->seg[v] = s;
		for (int ty = 0; ty < nt; ty++) {
			/* Cost on a device of type ty: any device of it. */
			int d = 0;
			while (d < t->ndev && t->c->devs[d].type != ty)
				d++;
			tc[ty] = d < t->ndev ? tg_cost(t, v, d) : 0;
			size_t ix = (size_t)(s + 1) * (size_t)nt + (size_t)ty;
			bool update = (pos[v] & 0xc0000000u) == 0x80000000u;
			double o = tc[ty] > 0 ? fmin(tc[ty], cost_overhead(&t->c->types[ty])) : 0;
			if (update) {
				pm->once[ix] += tc[ty];
			} else {
				pm->ovh[ix] += o;
				pm->cost[ix] += tc[ty] - o;
				if (role[v] == ROLE_BWD)
					pm->bwd[ix] += tc[ty] - o;
			}
		}
		/* A parameter (on its update's node, taskgraph.c), its
		 * gradient's running sum and the partial sum being added
		 * (comm's AddN chain), which stand for the gradients the
		 * task graph holds. */
		double rest = t->mem_perm[v] - t->mem_param[v] - t->mem_grad[v];
		pm->wmem[s + 1] += 3 * t->mem_param[v];
		if (pos[v] & 0xc0000000u)
			pm->wmem[s + 1] += (pos[v] & 0x40000000u ? 3 : 1) * rest;
		else
			pm->amem[s + 1] += rest;
		pm->tmem[s] = fmax(pm->tmem[s], t->mem_temp[v]);
	}
	for (int s = 0; s < S; s++) {
		for (int ty = 0; ty < nt; ty++) {
			size_t a = (size_t)(s + 1) * (size_t)nt + (size_t)ty,
			       z = (size_t)s * (size_t)nt + (size_t)ty;
			pm->cost[a] += pm->cost[z];
			pm->ovh[a] += pm->ovh[z];
			pm->once[a] += pm->once[z];
			pm->bwd[a] += pm->bwd[z];
		}
		pm->wmem[s + 1] += pm->wmem[s];
		pm->amem[s + 1] += pm->amem[s];
	}
	free(tc);
}

/* The gradients the updates read (what a data-parallel stage all-
 * reduces), by the segment of the update, op by op (a fused group may
 * hold a gradient and its update), as prefix sums. */
static void grad_sums(Graph *g, const TaskGraph *t, PModel *pm)
{
	for (uint32_t i = 0; i < g->nops && i < t->nops; i++) {
		const Op *op = g->ops[i];
		uint32_t v = t->op_node[i];
		if (op->dead || v == UINT32_MAX || op_role(g, op) != ROLE_UPDATE)
			continue;
		int s = pm->seg[v];
		for (uint32_t k = 0; k < op->nin; k++) {
			const Op *u = op->in[k].src;
			if (op->in[k].ctrl || op_role(g, u) != ROLE_BWD)
				continue;
			pm->gbytes[s + 1] += cost_out_bytes(g, u, op->in[k].idx);
			pm->gcnt[s + 1] += 1;
		}
	}
	for (int s = 0; s < pm->nseg; s++) {
		pm->gbytes[s + 1] += pm->gbytes[s];
		pm->gcnt[s + 1] += pm->gcnt[s];
	}
}

/* Bytes across each cut (difference arrays); parameters read in a
 * later stage (tied weights) go there once per iteration, not per
 * micro-batch, and their gradients come back. */
static void cut_bytes(const TaskGraph *t, PModel *pm, const uint32_t *pos)
{
	uint32_t n = t->n;
	int S = pm->nseg;
	pm->xp = xcalloc((size_t)S + 2, sizeof(double));
	for (uint32_t u = 0; u < n; u++) {
		if (pos[u] & 0x80000000u) {
			for (uint32_t e = t->succ_start[u]; e < t->succ_start[u + 1]; e++) {
				int a = pm->seg[u], b = pm->seg[t->succ[e].node];
				if (b > a)
					pm->xp[b] += 2 * t->succ[e].bytes;
			}
			continue;
		}
		for (uint32_t e = t->succ_start[u]; e < t->succ_start[u + 1]; e++) {
			int a = pm->seg[u], b = pm->seg[t->succ[e].node];
			double by = t->succ[e].bytes;
			if (a < b) {
				pm->xf[a + 1] += by;
				pm->xf[b + 1] -= by;
			} else if (b < a) {
				pm->xb[b + 1] += by;
				pm->xb[a + 1] -= by;
			}
		}
	}
	for (int s = 1; s <= S; s++) {
		pm->xf[s] += pm->xf[s - 1];
		pm->xb[s] += pm->xb[s - 1];
	}
}

/* Device list: machines by aggregate speed (fastest first), then
 * their devices in cluster order; rest[i]: devices from L[i] to the end
 * of its machine. */
static void device_list(const TaskGraph *t, PModel *pm)
{
	const Cluster *c = t->c;
	uint32_t n = t->n;
	pm->nl = t->ndev;
	pm->L = xmalloc(sizeof(int) * ((size_t)t->ndev + 1));
	double *speed = xcalloc((size_t)t->ndev + 1, sizeof(double));
	double *mspeed = xcalloc((size_t)t->ndev + 1, sizeof(double));
	for (int d = 0; d < t->ndev; d++) {
		double x = 0;
		for (uint32_t v = 0; v < n; v++)
			x += tg_cost(t, v, d);
		speed[d] = x > 0 ? 1 / x : 1;
	}
	for (int d = 0; d < t->ndev; d++)
		for (int e = 0; e < t->ndev; e++)
			if (c->devs[e].machine == c->devs[d].machine)
				mspeed[d] += speed[e];
	for (int d = 0; d < t->ndev; d++)
		pm->L[d] = d;
	for (int i = 1; i < t->ndev; i++)        /* stable insertion sort */
		for (int j = i; j > 0 && mspeed[pm->L[j - 1]] < mspeed[pm->L[j]]; j--) {
			int x = pm->L[j];
			pm->L[j] = pm->L[j - 1];
			pm->L[j - 1] = x;
		}
	/* whole machines up to MAXL devices */
	int nl = 0;
	for (int i = 0; i < t->ndev;) {
		int j = i + 1;
		int mi = c->devs[pm->L[i]].machine;
		while (j < t->ndev && c->devs[pm->L[j]].machine == mi)
			j++;
		if (j > MAXL) {
			nl = i ? i : MAXL;
			break;
		}
		nl = i = j;
	}
	pm->nall = t->ndev;
	pm->nl = nl;
	pm->rest = xmalloc(sizeof(int) * ((size_t)nl + 1));
	pm->span = xmalloc(sizeof(int) * ((size_t)nl + 1));
	for (int i = nl; i-- > 0;) {
		pm->rest[i] = i + 1 < nl && c->devs[pm->L[i + 1]].machine ==
			      c->devs[pm->L[i]].machine ? pm->rest[i + 1] + 1 : 1;
		int nx = i + pm->rest[i];      /* the next machine's first */
		pm->span[i] = pm->rest[i] +
			(nx < nl && c->devs[pm->L[nx]].type ==
			 c->devs[pm->L[i]].type ? pm->span[nx] : 0);
	}
	pm->lk_bw = xmalloc(sizeof(double) * ((size_t)nl * (size_t)nl + 1));
	pm->lk_lat = xmalloc(sizeof(double) * ((size_t)nl * (size_t)nl + 1));
	for (int i = 0; i < nl; i++)
		for (int j = 0; j < nl; j++) {
			size_t x = (size_t)i * (size_t)nl + (size_t)j;
			pm->lk_bw[x] = INFINITY;
			pm->lk_lat[x] = 0;
			if (pm->L[i] != pm->L[j])
				cluster_link(c, pm->L[i], pm->L[j], &pm->lk_bw[x],
					     &pm->lk_lat[x]);
		}
	free(speed);
	free(mspeed);
}

static void model_build(Graph *g, const TaskGraph *t, PModel *pm)
{
	uint32_t n = t->n, nf;
	int nt = t->ntype;
	pm->t = t;
	pm->ntype = nt;
	uint32_t *pos = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	Role *role = xmalloc(sizeof(Role) * ((size_t)n + 1));
	positions(g, t, pos, &nf, role);
	/* Work per position at the mean device, then MAXSEG runs of about
	 * equal work. */
	double *w = xcalloc((size_t)nf + 1, sizeof(double));
	double total = 0;
	for (uint32_t v = 0; v < n; v++) {
		double x = 0;
		for (int d = 0; d < t->ndev; d++)
			x += tg_cost(t, v, d);
		w[pos[v] & 0x3fffffffu] += x / t->ndev;
		total += x / t->ndev;
	}
	uint32_t *pseg = xmalloc(sizeof(uint32_t) * ((size_t)nf + 1));
	pm->nseg = segment_positions(w, nf, total, pseg);
	int S = pm->nseg;
	pm->seg = xmalloc(sizeof(int) * ((size_t)n + 1));
	pm->cost = xcalloc((size_t)(S + 1) * (size_t)nt, sizeof(double));
	pm->ovh = xcalloc((size_t)(S + 1) * (size_t)nt, sizeof(double));
	pm->once = xcalloc((size_t)(S + 1) * (size_t)nt, sizeof(double));
	pm->wmem = xcalloc((size_t)S + 1, sizeof(double));
	pm->amem = xcalloc((size_t)S + 1, sizeof(double));
	pm->tmem = xcalloc((size_t)S + 1, sizeof(double));
	pm->xf = xcalloc((size_t)S + 2, sizeof(double));
	pm->xb = xcalloc((size_t)S + 2, sizeof(double));
	pm->bwd = xcalloc((size_t)(S + 1) * (size_t)nt, sizeof(double));
	pm->gbytes = xcalloc((size_t)S + 1, sizeof(double));
	pm->gcnt = xcalloc((size_t)S + 1, sizeof(double));
	segment_sums(t, pm, pos, pseg, role);
	grad_sums(g, t, pm);
	cut_bytes(t, pm, pos);
	device_list(t, pm);
	ring_fits(pm);
	free(pseg);
	free(w);
	free(pos);
	free(role);
}

static void model_free(PModel *pm)
{
	free(pm->L);
	free(pm->lk_bw);
	free(pm->lk_lat);
	free(pm->cost);
	free(pm->ovh);
	free(pm->once);
	free(pm->bwd);
	free(pm->gbytes);
	free(pm->ar_lat);
	free(pm->ar_slope);
	free(pm->xr_lat);
	free(pm->xr_slope);
	free(pm->xh_lat);
	free(pm->xh_slope);
	free(pm->span);
	free(pm->gcnt);
	free(pm->wmem);
	free(pm->amem);
	free(pm->rest);
	free(pm->tmem);
	free(pm->xp);
	free(pm->xf);
	free(pm->xb);
	free(pm->seg);
}

/* The DP's tables (see dp_run). */
typedef struct DPTab {
	int P, nl;
	double *f;               /* f[k][p][i] */
	int *nq, *nb, *nj;       /* its stage's end cut, devices, next L index */
	double *tail;            /* the part of f[k][p][i] after its first
				  * stage's last backward: gradient sync
				  * that no stage's drain hides */
	/* sm[q][i][e]: the best continuation after a stage starting on L[i]
	 * that ends at cut q, by a stage starting on L[j], j >= e; sj: j. */
	double *sm;
	int *sj;
} DPTab;

static size_t dp_ix(const DPTab *d, int k, int p, int i)
{
	return ((size_t)k * (size_t)(d->P + 1) + (size_t)p) * (size_t)d->nl + (size_t)i;
}

static size_t dp_gx(const DPTab *d, int q, int i, int e)
{
	return ((size_t)q * (size_t)d->nl + (size_t)i) * (size_t)(d->nl + 1) + (size_t)e;
}

/* sm and sj from f[k - 1], for stage counts k > 1. */
static void dp_continuations(PModel *pm, DPTab *d, int k, int m, double C)
{
	int P = d->P, nl = d->nl;
	for (int q = 1; q < P; q++)
		for (int i = 0; i < nl; i++) {
			d->sm[dp_gx(d, q, i, nl)] = INFINITY;
			d->sj[dp_gx(d, q, i, nl)] = -1;
			for (int j = nl; j-- > 0;) {
				double x = d->f[dp_ix(d, k - 1, q, j)], best = d->sm[dp_gx(d, q, i, j + 1)];
				int bj = d->sj[dp_gx(d, q, i, j + 1)];
				if (isfinite(x)) {
					double ct = cut_time(pm, q, i, j, m);
					double once = pm->xp[q] > 0 ? link_time(pm, i, j, pm->xp[q]) : 0;
					if (ct <= C && x + 2 * ct + once < best) {
						best = x + 2 * ct + once;
						bj = j;
					}
				}
				d->sm[dp_gx(d, q, i, j)] = best;
				d->sj[dp_gx(d, q, i, j)] = bj;
			}
			pm->work += nl;
		}
}

/* f[k][p][i]: the best first stage [p, q) on L[i] alone, on its b =
 * rest[i] devices (the rest of its machine) or on its span[i] (the
 * machines of its type that follow), then the continuation sm. */
static void dp_first_stage(PModel *pm, DPTab *d, int k, int p, int i, int m,
			   int64_t mb, double C, int multi)
{
	int P = d->P, nl = d->nl;
	int dv = pm->L[i];
	double cap = tg_mem_cap(pm->t, dv);
	double best = INFINITY, btail = 0;
	int bq = -1, bb = 1, bj = -1;
	for (int o = 0; o < 3; o++) {
		int b = o == 0 ? 1 : o == 1 ? pm->rest[i] : pm->span[i];
		if ((o && (b == 1 || multi < o)) || b > mb ||
		    (o == 2 && b == pm->rest[i]))
			continue;
		bool block = pm->t->c->types[pm->t->c->devs[dv].type].coll_blocking;
		double tm = 0, expo = -INFINITY, rmax = -INFINITY;
		for (int q = p + 1; q <= P; q++) {
			pm->work++;
			tm = fmax(tm, pm->tmem[q - 1]);
			/* After the last micro-batch's backward (time 0), a
			 * data-parallel stage all-reduces its gradients one
			 * after another as that backward makes them, last
			 * segment first (segment s's at -bwd[p, s)), and each
			 * update waits for its own: the stage ends at the
			 * longest chain "gradient s made, AllReduces of s down
			 * to r, updates of r down to p" (r <= s), or after all
			 * its updates.  Both maxima grow with s = q - 1 alone:
			 * rmax = max over r <= s of upd[p, r] - ar[p, r).  The
			 * tail is what the AllReduces add to the updates (all
			 * of them when the device's collectives block its
			 * compute). */
			double ar = stage_ar(pm, p, q, i, b), upd = stage_once(pm, p, q, dv);
			rmax = fmax(rmax, upd - stage_ar(pm, p, q - 1, i, b));
			expo = fmax(expo, ar - stage_bwd(pm, p, q - 1, dv, m, b) + rmax);
			double tail = block ? ar : fmax(0, expo - upd);
			double st = stage_time(pm, p, q, dv, m, b);
			if (st > C)
				break;
			int inflight = k < m ? k : m;
			double mem = pm->wmem[q] - pm->wmem[p] +
				     ((pm->amem[q] - pm->amem[p]) *
				      inflight + tm) / m / b;
			if (mem > cap && !pm->ignore_mem)
				break;
			/* The stage's own exposed sync, or a later stage's
			 * less the drain after it (this stage's backward
			 * and the cut's transfer): whichever ends last. */
			double rest;
			int j = -1;
			if (k == 1) {
				if (q < P)
					continue;
				rest = 0;
			} else {
				if (q == P || i + b > nl)
					continue;
				rest = d->sm[dp_gx(d, q, i, i + b)];
				j = d->sj[dp_gx(d, q, i, i + b)];
				if (j < 0)
					continue;
				double tr = d->tail[dp_ix(d, k - 1, q, j)];
				rest -= tr;
				tail = fmax(tail, tr - stage_bwd(pm, p, q, dv, m, b) -
						  cut_time(pm, q, i, j, m));
			}
			if (st + tail + rest < best) {
				best = st + tail + rest;
				btail = tail;
				bq = q;
				bb = b;
				bj = j;
			}
		}
	}
	d->f[dp_ix(d, k, p, i)] = best;
	d->nq[dp_ix(d, k, p, i)] = bq;
	d->nb[dp_ix(d, k, p, i)] = bb;
	d->nj[dp_ix(d, k, p, i)] = bj;
	d->tail[dp_ix(d, k, p, i)] = btail;
}

/* The best plan of k stages from the tables into *pl (est = INFINITY
 * when none). */
static void dp_reconstruct(const PModel *pm, const DPTab *d, int k, int m,
			   PPlan *pl)
{
	int P = d->P, nl = d->nl;
	pl->est = INFINITY;
	int bi = -1;
	double best = INFINITY;
	for (int i = 0; i < nl; i++)
		if (d->f[dp_ix(d, k, 0, i)] < best) {
			best = d->f[dp_ix(d, k, 0, i)];
			bi = i;
		}
	if (bi < 0)
		return;
	pl->S = k;
	pl->m = m;
	int p = 0, i = bi;
	double bottleneck = 0, updates = 0;
	for (int s = 0; s < k; s++) {
		int q = d->nq[dp_ix(d, k - s, p, i)], b = d->nb[dp_ix(d, k - s, p, i)];
		int j = d->nj[dp_ix(d, k - s, p, i)];
		pl->dev[s] = pm->L[i];
		pl->li[s] = i;
		pl->nd[s] = b;
		pl->cut[s] = p;
		bottleneck = fmax(bottleneck, stage_time(pm, p, q, pm->L[i], m, b));
		updates = fmax(updates, stage_once(pm, p, q, pm->L[i]));
		if (j >= 0)
			bottleneck = fmax(bottleneck, cut_time(pm, q, i, j, m));
		p = q;
		i = j;
	}
	pl->cut[k] = P;
	pl->est = best + (m - 1) * bottleneck + updates;
}

/* The DP for m micro-batches under cap C: f[k][p][i] = least fill-and-
 * drain time of segments [p, nseg) in k stages, the first on L[i] alone
 * or data-parallel on L[i ..] to the end of its machine (a machine has
 * one device type: time / b, activations / b each; the b replicas'
 * gradients all-reduced once per iteration; only when multi >= 1), or
 * on the run of machines of its type from L[i] (multi == 2), plus the
 * sync no drain hides (tail).
 * Reconstructs, for every k,
 * the best plan into out[k] (est = INFINITY when none). */
static void dp_run(PModel *pm, int m, int64_t batch, double C, int maxS,
		   int multi, PPlan *out)
{
	int P = pm->nseg, nl = pm->nl;
	size_t sz = (size_t)(maxS + 1) * (size_t)(P + 1) * (size_t)nl;
	size_t gsz = (size_t)(P + 1) * (size_t)nl * (size_t)(nl + 1);
	DPTab d = {
		.P = P, .nl = nl,
		.f = xmalloc(sizeof(double) * sz),
		.nq = xmalloc(sizeof(int) * sz), .nb = xmalloc(sizeof(int) * sz),
		.nj = xmalloc(sizeof(int) * sz),
		.tail = xcalloc(sz, sizeof(double)),
		.sm = xmalloc(sizeof(double) * gsz), .sj = xmalloc(sizeof(int) * gsz),
	};
	for (size_t x = 0; x < sz; x++)
		d.f[x] = INFINITY;
	int64_t mb = batch / m;                 /* rows of the least micro-batch */
	for (int k = 1; k <= maxS; k++) {
		if (k > 1)
			dp_continuations(pm, &d, k, m, C);
		for (int p = 0; p < P; p++)
			for (int i = 0; i < nl; i++)
				dp_first_stage(pm, &d, k, p, i, m, mb, C, multi);
	}
	for (int k = 1; k <= maxS; k++)
		dp_reconstruct(pm, &d, k, m, &out[k]);
	free(d.f);
	free(d.nq);
	free(d.nb);
	free(d.nj);
	free(d.tail);
	free(d.sm);
	free(d.sj);
}

/* Writes plan pl on g: @stage, and @replicas (the stage's device m
 * times, @micro = m) on ops that carry the batch, else @device. */
static void write_pipeline(Graph *g, const TaskGraph *t, const PModel *pm,
			   const PPlan *pl)
{
	BatchInfo b;
	batch_analyze(g, &b);
	int m = pl->m, maxd = 1;
	for (int s = 0; s < pl->S; s++)
		maxd = pl->nd[s] > maxd ? pl->nd[s] : maxd;
	if (b.batch < (int64_t)m * maxd)
		m = 1;
	/* Micro-batch j has msz[j] rows in every stage; a data-parallel
	 * stage splits it evenly over its devices. */
	int64_t *msz = xmalloc(sizeof(int64_t) * (size_t)(m + 1));
	int64_t *shares = xmalloc(sizeof(int64_t) * (size_t)(m * maxd + 1));
	double *ones = xmalloc(sizeof(double) * (size_t)(m + maxd + 1));
	int *devs = xmalloc(sizeof(int) * (size_t)(m * maxd + 1));
	for (int j = 0; j < m + maxd; j++)
		ones[j] = 1;
	if (m > 1)
		plan_shares(b.batch, m, ones, msz);
	else
		msz[0] = b.batch;
	for (uint32_t i = 0; i < g->nops && i < t->nops; i++) {
		Op *op = g->ops[i];
		uint32_t v = t->op_node[i];
		if (op->dead || v == UINT32_MAX)
			continue;
		if (t->pinned[v] >= 0)
			continue;
		int s = 0;
		while (s + 1 < pl->S && pl->cut[s + 1] <= pm->seg[v])
			s++;
		Value *sv = val_list(g->arena, 2);
		sv->list.items[0] = val_int(g->arena, s);
		sv->list.items[1] = val_int(g->arena, pl->S);
		op_set_ann(g, op, ANN_STAGE, sv);
		op_unset(g, op, ann_key(ANN_SYNC));
		op_unset(g, op, ann_key(ANN_DUP));
		op_unset(g, op, ann_key(ANN_MICRO));
		bool batched = false;
		for (uint32_t k = 0; k < op->nout; k++)
			batched |= batch_okind(&b, op, k) != OK_FULL;
		for (uint32_t k = 0; k < op->nin; k++)
			batched |= b.idim[b.inbase[i] + k] >= 0;
		int nd = m > 1 || b.batch >= pl->nd[s] ? pl->nd[s] : 1;
		if ((m > 1 || nd > 1) && b.batch > 0 && b.replicable[i] && batched &&
		    !op_has_role(g, op, ROLE_UPDATE) && !op_has_role(g, op, ROLE_PARAM)) {
			for (int j = 0; j < m; j++) {
				if (nd > 1)
					plan_shares(msz[j], nd, ones, shares + j * nd);
				else
					shares[j] = msz[j];
				for (int x = 0; x < nd; x++)
					devs[j * nd + x] = pm->L[pl->li[s] + x];
			}
			plan_write_replicas(g, op, t->c, devs, shares, m * nd);
			if (m > 1)
				op_set_ann(g, op, ANN_MICRO, val_int(g->arena, m));
		} else if (nd > 1 && b.batch > 0 && b.replicable[i] &&
			   op_has_role(g, op, ROLE_UPDATE)) {
			/* A data-parallel stage's updates run on each of its
			 * devices (its parameters follow them, comm): each
			 * device's gradient, summed over its micro-batches, is
			 * all-reduced over the stage's devices. */
			plan_shares(b.batch, nd, ones, shares);
			for (int x = 0; x < nd; x++)
				devs[x] = pm->L[pl->li[s] + x];
			plan_write_replicas(g, op, t->c, devs, shares, nd);
		} else {
			op_unset(g, op, ann_key(ANN_REPLICAS));
			op_unset(g, op, ann_key(ANN_SHARES));
			op_set_ann(g, op, ANN_DEVICE,
				   val_str(g->arena, t->c->devs[pl->dev[s]].name));
		}
	}
	free(msz);
	free(shares);
	free(ones);
	free(devs);
	batch_free(&b);
}

/* Materialises pl on a copy of the graph (comm, order's 1F1B) and
 * simulates it; *oom as the simulator finds. */
static double judge(PassCtx *ctx, const TaskGraph *t, const PModel *pm,
		    const PPlan *pl, bool *oom)
{
	Graph *h = graph_clone(ctx->g);
	write_pipeline(h, t, pm, pl);
	double over, span = plan_simulate(ctx, h, oom, &over, NULL);
	graph_free(h);
	return span;
}

static int plan_cmp(const void *pa, const void *pb)
{
	const PPlan *a = pa, *b = pb;
	if (a->est != b->est)
		return a->est < b->est ? -1 : 1;
	if (a->S != b->S)
		return a->S - b->S;
	if (a->m != b->m)
		return a->m - b->m;
	size_t n = sizeof(int) * (size_t)a->S;
	int c = memcmp(a->cut, b->cut, n);
	if (c)
		return c;
	c = memcmp(a->li, b->li, n);
	return c ? c : memcmp(a->nd, b->nd, n);
}

/* Option key: 0 for auto, else an integer in [1, max]; -1 (reported)
 * for anything else. */
static int opt_int(PassCtx *ctx, const char *key, long max)
{
	const char *s = pass_opt(ctx, key);
	if (!s || strcmp(s, "auto") == 0)
		return 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (*s && !*end && v >= 1 && v <= max)
		return (int)v;
	fprintf(stderr, "pcc: error: place<algo=pipeline>: %s=%s: expected auto "
		"or an integer from 1 to %ld\n", key, s, max);
	return -1;
}

/* The micro-batch counts to try into mlist (at most 8); returns how
 * many.  m: at most the batch, and the materialised plan (about ops × m)
 * within MAXOPS (a million), so judging it stays cheap at any graph
 * size. */
static int micro_batch_counts(const Graph *g, int want_m, int64_t batch,
			      int *mlist)
{
	static const int ms[] = {1, 2, 4, 8, 16, 32};
	int nm = 0;
	double live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	if (want_m)
		mlist[nm++] = want_m;
	else
		for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
			if (ms[i] == 1 || (ms[i] <= batch && live * ms[i] <= MAXOPS))
				mlist[nm++] = ms[i];
	return nm;
}

/* Runs the DP for every micro-batch count in mlist, cap and kind of
 * stage, collecting every finite plan (of want_s stages, when set) into
 * all; returns how many. */
static int search_plans(PassCtx *ctx, PModel *pm, const int *mlist, int nm,
			int64_t batch, int maxS, int want_s, PPlan *all)
{
	const TaskGraph *t = pm->t;
	/* Caps: a geometric grid from the even split of the work over all
	 * devices to the whole model on the slowest, and no cap. */
	double lo = INFINITY, hi = 0;
	for (int d = 0; d < t->ndev; d++) {
		double x = stage_time(pm, 0, pm->nseg, d, 1, 1);
		lo = fmin(lo, x / t->ndev);
		hi = fmax(hi, x);
	}
	lo = fmax(lo, 1e-12);
	hi = fmax(hi, lo);
	PPlan *row = xcalloc((size_t)(maxS + 1), sizeof(PPlan));
	int nall = 0, nmulti = 2;
	for (int i = 0; i < pm->nl; i++)
		if (pm->span[i] > pm->rest[i])
			nmulti = 3;      /* stages over machines are possible */
	/* Nothing fits: with --best-effort, the plans memory would rule out. */
	for (int pass = 0; pass < 2 && !nall; pass++) {
		pm->ignore_mem = pass == 1;
		if (pm->ignore_mem && !ctx->best_effort)
			break;
		for (int a = 0; a < nm; a++)
			for (int ci = 0; ci <= NCAP; ci++) {
				double C = ci == NCAP ? INFINITY
					 : lo * pow(hi / lo, (double)ci / (NCAP - 1)) / mlist[a];
				for (int multi = 0; multi < nmulti; multi++) {
					dp_run(pm, mlist[a], batch, C, maxS, multi, row);
					for (int k = 1; k <= maxS; k++)
						if (isfinite(row[k].est) &&
						    (!want_s || k == want_s))
							all[nall++] = row[k];
				}
			}
	}
	free(row);
	return nall;
}

/* The best few distinct plans of each kind among all[0 .. nall) (sorted
 * by estimate), judged by the full simulator: the index of the fastest
 * (one that fits in memory first), or -1; *boom: whether it runs out of
 * memory. */
static int judge_finalists(PassCtx *ctx, const TaskGraph *t, const PModel *pm,
			   const PPlan *all, int nall, bool *boom_out)
{
	int chosen = -1, judged[NKIND] = {0};
	double bspan = INFINITY;
	bool boom = true;
	static const char *const label[NKIND] = {"", " (data-parallel stages)",
		" (data-parallel stages over machines)"};
	for (int i = 0, left = NFINAL[0] + NFINAL[1] + NFINAL[2];
	     i < nall && left > 0; i++) {
		int kind = 0;
		for (int st = 0; st < all[i].S; st++) {
			int x = all[i].nd[st] > pm->rest[all[i].li[st]] ? 2
			      : all[i].nd[st] > 1;
			kind = x > kind ? x : kind;
		}
		if (judged[kind] >= NFINAL[kind])
			continue;
		bool dup = false;
		for (int j = 0; j < i && !dup; j++)
			dup = all[j].S == all[i].S && all[j].m == all[i].m &&
			      memcmp(all[j].dev, all[i].dev, sizeof(int) * (size_t)all[i].S) == 0 &&
			      memcmp(all[j].cut, all[i].cut, sizeof(int) * (size_t)all[i].S) == 0 &&
			      memcmp(all[j].nd, all[i].nd, sizeof(int) * (size_t)all[i].S) == 0;
		if (dup)
			continue;
		judged[kind]++;
		left--;
		bool oom;
		double x = judge(ctx, t, pm, &all[i], &oom);
		if (ctx->report)
			fprintf(ctx->report, "  pipeline S=%d m=%d%s: estimated %.6g s, "
				"%.6g s%s (simulated)\n", all[i].S, all[i].m,
				label[kind], all[i].est, x,
				oom ? ", out of memory" : "");
		if (isfinite(x) && ((boom && !oom) || (boom == oom && x < bspan))) {
			chosen = i;
			bspan = x;
			boom = oom;
		}
	}
	*boom_out = boom;
	return chosen;
}

/* The chosen plan's line in the pass report. */
static void report_plan(PassCtx *ctx, const TaskGraph *t, const PModel *pm,
			const PPlan *pl)
{
	fprintf(ctx->report, "place<algo=pipeline>: %d stages, %d "
		"micro-batches, %ld work units; stages:", pl->S, pl->m,
		pm->work);
	for (int s = 0; s < pl->S; s++)
		fprintf(ctx->report, " %s%s[%d,%d)", t->c->devs[pl->dev[s]].name,
			pl->nd[s] > 1 ? arena_printf(ctx->scratch, "+%d",
						     pl->nd[s] - 1) : "",
			pl->cut[s], pl->cut[s + 1]);
	fprintf(ctx->report, " of %d segments; estimated %.6g s\n",
		pm->nseg, pl->est);
	if (pm->nl < pm->nall)
		fprintf(ctx->report, "place<algo=pipeline>: searched the first %d "
			"of %d devices (whole machines, fastest first; at most "
			"%d)\n", pm->nl, pm->nall, (int)MAXL);
}

static int pipeline_place(PassCtx *ctx, bool quiet)
{
	Graph *g = ctx->g;
	TaskGraph *t = tg_from_graph(g, ctx->cost, false, ctx->diag);
	if (!t)
		return EXIT_BADINPUT;
	int want_s = opt_int(ctx, "stages", MAXS), want_m = opt_int(ctx, "micro", 4096);
	if (want_s < 0 || want_m < 0) {
		tg_free(t);
		return EXIT_USAGE;
	}
	PModel pm = {0};
	model_build(g, t, &pm);
	int64_t batch = 0;
	Value *bv = graph_attr(g, "batch");
	if (bv && bv->kind == V_INT)
		batch = bv->i;
	if (batch <= 0) {
		if (!quiet)
			fprintf(stderr, "pcc: error: place<algo=pipeline>: the graph "
				"gives no batch size (graph attribute `batch`): "
				"nothing to cut into micro-batches\n");
		model_free(&pm);
		tg_free(t);
		return EXIT_INFEASIBLE;
	}
	if (want_m > 1 && batch < want_m) {
		fprintf(stderr, "pcc: error: place<algo=pipeline>: micro=%d, but "
			"the graph's batch is %lld: each micro-batch needs a "
			"sample of it\n", want_m, (long long)batch);
		model_free(&pm);
		tg_free(t);
		return EXIT_USAGE;
	}
	int maxS = pm.nl < MAXS ? pm.nl : MAXS;
	maxS = maxS < pm.nseg ? maxS : pm.nseg;
	if (want_s > maxS) {
		fprintf(stderr, "pcc: error: place<algo=pipeline>: %d stages, but "
			"only %d devices and %d segments of work\n", want_s,
			pm.nl, pm.nseg);
		model_free(&pm);
		tg_free(t);
		return EXIT_USAGE;
	}
	int mlist[8];
	int nm = micro_batch_counts(g, want_m, batch, mlist);
	PPlan *all = xcalloc((size_t)(NKIND * nm * (NCAP + 1) * (maxS + 1) + 1),
			     sizeof(PPlan));
	int nall = search_plans(ctx, &pm, mlist, nm, batch, maxS, want_s, all);
	qsort(all, (size_t)nall, sizeof *all, plan_cmp);
	bool boom;
	int chosen = judge_finalists(ctx, t, &pm, all, nall, &boom);
	int rc = EXIT_OK;
	if (chosen < 0 || (boom && !ctx->best_effort)) {
		if (!quiet) {
			fprintf(stderr, "pcc: error: place<algo=pipeline>: no "
				"pipeline fits in the memory of cluster '%s'\n",
				t->c->name);
			fputs("pcc: note: --best-effort places it anyway\n", stderr);
		}
		rc = EXIT_INFEASIBLE;
	}
	if (chosen >= 0 && rc == EXIT_OK) {
		write_pipeline(g, t, &pm, &all[chosen]);
		if (ctx->report)
			report_plan(ctx, t, &pm, &all[chosen]);
	}
	free(all);
	model_free(&pm);
	tg_free(t);
	return rc;
}

int place_pipeline(PassCtx *ctx, const TaskGraph *t)
{
	(void)t;
	return pipeline_place(ctx, false);
}

int place_pipeline_quiet(PassCtx *ctx, const TaskGraph *t)
{
	(void)t;
	return pipeline_place(ctx, true);
}

/* A copy of strategy value v (strings, integers, booleans, lists of them)
 * in arena a. */
static Value *strategy_value(Arena *a, const Value *v)
{
	switch (v->kind) {
	case V_STR: return val_str(a, v->s);
	case V_IDENT: return val_ident(a, v->s);
	case V_INT: return val_int(a, v->i);
	case V_BOOL: return val_bool(a, v->b);
	case V_LIST: {
		Value *l = val_list(a, v->list.n);
		for (uint32_t i = 0; i < v->list.n; i++)
			l->list.items[i] = strategy_value(a, v->list.items[i]);
		return l;
	}
	default: return NULL;
	}
}

void plan_copy_strategy(const Graph *from, Graph *to)
{
	static const AnnKey keys[] = {ANN_DEVICE, ANN_REPLICAS, ANN_SHARES,
				      ANN_DUP, ANN_SYNC, ANN_PS, ANN_MICRO,
				      ANN_STAGE};
	for (uint32_t i = 0; i < from->nops && i < to->nops; i++) {
		const Op *a = from->ops[i];
		Op *b = to->ops[i];
		if (a->dead || b->dead)
			continue;
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			const Value *v = op_ann(from, a, keys[k]);
			Value *c = v ? strategy_value(to->arena, v) : NULL;
			if (c)
				op_set_ann(to, b, keys[k], c);
			else
				op_unset(to, b, ann_key(keys[k]));
		}
	}
}
