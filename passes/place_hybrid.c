/* place_hybrid.c — hybrid data/model parallelism per fused group, judged
 * by simulation (HeteroG §2.2, §3–§4, §5; TAG §4.2).
 *
 * Strategy space (HeteroG's M + 4 per group, with TAG's partial
 * replication): run the group on one of the M devices (model
 * parallelism), or replicate it over a replica set — all devices with
 * equal batch shares, all devices with shares proportional to their speed
 * on this model, the devices of one machine, the devices of one type,
 * the machine and type subsets dp-best tries (place_best.c), by speed —
 * with its gradients combined by AllReduce where producer and consumer
 * share the set, or gathered on the consumer's device (a parameter
 * server) where they do not.  Groups with an op that cannot be split over
 * the batch (batch.c) only get the M single-device choices.
 *
 * The judge during search is a strategy simulator over the task graph of
 * groups, in the spirit of HeteroG §5 and TAG §4.3.2: each group replica
 * is a task of time cost × share on its device (each op's fixed overhead
 * whole); each edge moves its bytes by kind (batch slices, partial sums,
 * whole tensors) between the producer's and the consumer's replicas over
 * the link resources of the cluster (intra-machine pairs, NICs out and
 * in), FIFO per resource, each tensor sent as its producer's op makes it
 * (as far into the group's work as that op ends) and a consumer replica
 * starting as early as its first op reading the edge allows (a
 * parameter read away from its update's device moves there once, at the
 * start, however many groups there read it); partial
 * sums between identical replica sets
 * take AllReduces (per tensor, or per DDP bucket, packed and unpacked by
 * a ConcatV2 and a SplitV as comm makes them; ring or hierarchical,
 * the cheaper for the size), each starting when its gradient is computed
 * (overlapping the backward pass) and holding back only the updates that
 * read it; parameters and optimizer state are kept whole by every replica
 * of the group that updates them, activations by share; a plan that
 * overflows a device's memory is penalised.  One evaluation is
 * O(groups · replicas + edges · replicas² + gradients).
 *
 * Search: start from the better of a model-parallel placement (Celeritas's
 * Adjusting Placement when present, else FastT's DPOS, else one device)
 * and data parallelism (equal or proportional); then greedy improvement,
 * group by group in decreasing cost, every candidate strategy, kept when
 * the simulated iteration gets shorter, until a sweep changes nothing
 * (bounded by `evals`).  With search=local (-O2), a local search follows
 * for --search-work work units (one unit: a group replica or an edge
 * stepped by one evaluation): random changes of one group or of a run
 * of consecutive groups, kept when better.  The pseudo-random sequence
 * is seeded (--seed) and no clock decides anything, so the plan is the
 * same run to run; --search-budget seconds is only a cap that warns.
 *
 * Finally the candidates (the search's result, data parallelism, the
 * model-parallel start; at -O2 every placer of placers.def and the
 * pipeline placer) are
 * materialised with the comm pass on a copy of the graph and simulated
 * with the full simulator; the fastest that fits in memory is written.
 * So the result is never slower than those baselines by the simulator's
 * own measure.  Graphs too large for that (options `portfolio`) skip it. */
#include "plan.h"
#include "taskgraph.h"
#include "../ir/simroute.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Above place<portfolio>, up to this many times it, the final judge
 * still simulates the cheap candidates (place_hybrid). */
#define CHEAP_JUDGE 10
/* Beyond that, a plan whose estimated peak is above this share of a
 * device's memory is simulated in full before it is written. */
#define NEAR_MEM 0.9

PlacerFn placer_find(const char *name);

typedef struct RepSet {
	int n;
	int *dev;
	double *frac;            /* share / batch */
	int64_t *shares;
	int *links;              /* ring links (resources), nlinks */
	int nlinks;
	/* AllReduce time = lat + bytes · per_byte, by ring [0] and
	 * hierarchically [1] (comm takes the faster for each tensor). */
	double ar_per_byte[2], ar_lat[2];
	const char *label;
} RepSet;

typedef struct PEdge {
	uint32_t u;              /* producer node */
	double split, partial, full;
	double ksplit, kfull;    /* of split and full: bytes a backward op
				  * of the consumer reads (saved activations:
				  * a received copy is kept until then) */
	uint32_t nsplit, npartial, nfull;  /* tensors: each moves (and each
					    * AllReduce runs) on its own */
	double at0, at1;         /* the first and last partial sum are ready
				  * this far into u's work (0..1) */
	double dat0, dat1;       /* the first and last other tensor are
				  * ready this far into u's work */
	double need;             /* v's work before its first op that reads
				  * any of them (0..1): a replica may start
				  * that much before they arrive */
} PEdge;

typedef struct PParam {
	uint32_t param;          /* the parameter's op */
	uint32_t owner;          /* node whose placement keeps it */
	double bytes;
	double need;             /* the reader's work before it first reads
				  * it (0..1) */
	bool shared;             /* other nodes read it too */
} PParam;

/* A hash table whose entries are valid for one evaluation only (stamp):
 * a new stamp empties it at no cost. */
typedef struct Stamped {
	uint64_t key;
	long stamp;
	double x, y;
} Stamped;

typedef struct StampTab {
	Stamped *s;
	uint32_t cap, n;         /* n: entries of the current stamp */
} StampTab;

typedef struct PlanSim {
	const TaskGraph *t;
	const Cluster *c;
	const CostModel *m;
	uint32_t n;
	int ndev, maxrep;
	int64_t batch;
	bool *splittable;
	double *params, *act, *temp;
	/* Per node and device type: the time of ops every replica runs
	 * whole (updates, weight ops: dup) and of ops that cannot be split,
	 * which comm keeps on the first replica's device (one).  The rest
	 * scales with the replica's share of the batch, but for each op's
	 * fixed overhead (launch and executor, cost_overhead), which every
	 * replica of a split op pays whole (ovh). */
	double *dup, *one, *ovh;
	/* Per node: partial sums its own ops produce and consume (a weight
	 * gradient and its update in one group): AllReduces when it is
	 * replicated. */
	double *self_partial;
	uint32_t *self_n, *done;
	/* Those partial sums one by one (CSR by node, grad_start[n + 1]), in
	 * the order the node computes them: at, the share of the node's
	 * work done when it is ready. */
	uint32_t *grad_start;
	struct Grad { double at, tail, bytes; } *grad;
	/* Per node: the share of its work that reads partial sums of other
	 * nodes (updates of gradients computed elsewhere): it waits for
	 * their AllReduces, the rest of the node does not. */
	double *ptail;
	uint32_t *in_start;      /* [n + 1] CSR of incoming edges */
	PEdge *in;
	uint32_t *pin_start;     /* [n + 1] parameters each node reads */
	PParam *pin;
	/* Each read of a parameter by another node, by parameter: the
	 * copy a reader's device receives (comm's Transfer, one per
	 * parameter and device) lives there through the iteration. */
	struct PRead {
		uint32_t param, owner, v;
		double bytes;
		bool saved;      /* read by a backward op: kept from the
				  * start until then, not only until the
				  * forward reads it */
		double need;     /* how far into v's work it is first read */
		bool shared;     /* another node reads it too */
	} *pread;
	uint32_t npread;
	uint64_t *dstamp, stamp; /* [ndev]: the parameter last counted there */
	int *dpos;               /* [ndev]: pos_mark's index, else -1 */
	RepSet *sets;
	int nsets;
	/* links */
	int nres, r_pair, r_out, r_in;
	RouteTab rt;             /* the cluster's routes (ir/simroute.h) */
	/* Up to ROUTE_CACHE devices: every pair's link resources, looked up
	 * once (a transfer of every evaluation asks for its route). */
	int *route_res;          /* [ndev * ndev * 2] */
	int8_t *route_n;         /* [ndev * ndev] */
	double *route_bw, *route_lat;  /* [ndev * ndev]: cluster_link's */
	int *single;             /* [ndev]: d, the replica list of "on d" */
	uint32_t *out_start;     /* [n + 1] CSR of outgoing edge indices */
	uint32_t *out, *edge_v;  /* edge index per slot; consumer per edge */
	/* evaluation scratch */
	double *dev_free, *rdy, *mem_perm, *mem_temp;
	/* The devices the evaluation evals uses (tstamp[d] == evals): only
	 * their dev_free and memory are valid (touch), so an evaluation
	 * costs what its plan uses, not the cluster's size (4096 devices
	 * and more). */
	long *tstamp;
	int *touched, ntouched;
	double *gstart;          /* [n]: when the node's last replica started */
	double *rstart;          /* [n * maxrep]: when each replica started */
	double *arwait;          /* [n]: when the AllReduces of partial sums
				  * it reads from other nodes end */
	/* When each link resource is free, in this evaluation, by resource
	 * (x): only those it has used (a machine of n devices has n^2 pair
	 * resources, 16M at 4096 devices: too many to clear or scan per
	 * evaluation, and to hold as an array). */
	StampTab res;
	/* The parameters copied to a device, in this evaluation, by
	 * (parameter, device): copied (x = 1) and its arrival (y).  Comm
	 * makes one copy per parameter and device, whichever nodes there
	 * read it. */
	StampTab pcopy;
	Stamped **pslot;         /* [the most parameters of one owner a
				  * node reads]: param_copies' scratch */
	uint32_t *pending;       /* [n * maxrep]: inputs each replica waits for */
	uint32_t *arcount;
	Heap h;
	double span;
	long evals;
	bool bucket;             /* gradients in DDP's buckets (-O2's
				  * "hybrid+buckets" candidate) */
	Graph *pipe;             /* -O2: the pipeline placer's plan, on a
				  * copy of the graph, or NULL */
	const PassCtx *ctx;      /* for pass_progress */
} PlanSim;

/* ---- links ------------------------------------------------------------- */

enum { ROUTE_CACHE = 256 };  /* devices: 64k pairs, 768 kB */

/* Link resources of a transfer a -> b: the event simulator's route
 * (cluster_route, via route_hops), numbered override links, pairs, NICs
 * out, NICs in. */
static void ps_route(const PlanSim *ps, int a, int b, int *res, int *n)
{
	if (ps->route_n) {
		size_t ab = (size_t)a * (size_t)ps->ndev + (size_t)b;
		*n = ps->route_n[ab];
		res[0] = ps->route_res[2 * ab];
		res[1] = ps->route_res[2 * ab + 1];
		return;
	}
	Hop hop[2];
	*n = route_hops(ps->c, &ps->rt, a, b, hop);
	for (int i = 0; i < *n; i++) {
		int x = (int)hop[i].idx;
		res[i] = hop[i].kind == HOP_LINK ? x
		       : hop[i].kind == HOP_PAIR ? ps->r_pair + x
		       : hop[i].kind == HOP_OUT ? ps->r_out + x : ps->r_in + x;
	}
}

static void ps_links(PlanSim *ps)
{
	const Cluster *c = ps->c;
	route_tab_init(&ps->rt, c);
	ps->r_pair = 2 * c->nlinks;
	ps->r_out = ps->r_pair + (int)ps->rt.npairs;
	ps->r_in = ps->r_out + c->nmachines;
	ps->nres = ps->r_in + c->nmachines;
	if (c->ndevs > ROUTE_CACHE)
		return;
	size_t nd = (size_t)c->ndevs;
	int *res = xmalloc(sizeof(int) * (2 * nd * nd + 1));
	int8_t *n = xmalloc(nd * nd + 1);
	double *bw = xmalloc(sizeof(double) * (nd * nd + 1));
	double *lat = xmalloc(sizeof(double) * (nd * nd + 1));
	for (size_t ab = 0; ab < nd * nd; ab++) {
		int a = (int)(ab / nd), b = (int)(ab % nd), r[2] = {0, 0}, k;
		ps_route(ps, a, b, r, &k);   /* route_n not set yet: looks up */
		n[ab] = (int8_t)k;
		res[2 * ab] = r[0];
		res[2 * ab + 1] = r[1];
		cluster_link(c, a, b, &bw[ab], &lat[ab]);
	}
	ps->route_res = res;
	ps->route_n = n;
	ps->route_bw = bw;
	ps->route_lat = lat;
}

static void stamp_grow(StampTab *t, long stamp);

/* The entry of key under stamp (inserted as zeros when it has none). */
static Stamped *stamp_get(StampTab *t, uint64_t key, long stamp)
{
	if (2 * (t->n + 1) > t->cap)
		stamp_grow(t, stamp);
	uint32_t mask = t->cap - 1;
	uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
	for (;; h = (h + 1) & mask) {
		Stamped *e = &t->s[h];
		if (e->stamp != stamp) {
			*e = (Stamped){key, stamp, 0, 0};
			t->n++;
			return e;
		}
		if (e->key == key)
			return e;
	}
}

/* Doubles the table, keeping the entries of stamp. */
static void stamp_grow(StampTab *t, long stamp)
{
	Stamped *old = t->s;
	uint32_t oldcap = t->cap;
	t->cap = oldcap ? 2 * oldcap : 64;
	t->s = xmalloc(sizeof *t->s * t->cap);
	for (uint32_t i = 0; i < t->cap; i++)
		t->s[i] = (Stamped){0, -1, 0, 0};
	t->n = 0;
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].stamp == stamp)
			*stamp_get(t, old[i].key, stamp) = old[i];
	free(old);
}

static double res_free_at(PlanSim *ps, int id)
{
	return stamp_get(&ps->res, (uint64_t)id, ps->evals)->x;
}

static void res_set_free(PlanSim *ps, int id, double t)
{
	stamp_get(&ps->res, (uint64_t)id, ps->evals)->x = t;
}

/* The time count tensors of bytes in all take from a to b on free
 * links. */
static double xfer_time(const PlanSim *ps, int a, int b, double bytes,
			uint32_t count)
{
	double bw, lat;
	if (ps->route_bw) {
		size_t ab = (size_t)a * (size_t)ps->ndev + (size_t)b;
		bw = ps->route_bw[ab];
		lat = ps->route_lat[ab];
	} else {
		cluster_link(ps->c, a, b, &bw, &lat);
	}
	/* cost_transfer's time, and each further tensor's latency */
	double t = a == b ? 0 : cost_link_time(bw, lat, bytes);
	return t + (count > 1 ? (count - 1) * lat : 0);
}

/* Moves bytes in count tensors from a to b, ready at t (one after
 * another on the route, each paying the latency): the arrival time. */
static double xfer(PlanSim *ps, int a, int b, double bytes, uint32_t count,
		   double t)
{
	if (a == b || bytes <= 0)
		return t;
	int res[2], n;
	ps_route(ps, a, b, res, &n);
	double st = t;
	for (int i = 0; i < n; i++)
		st = fmax(st, res_free_at(ps, res[i]));
	double fin = st + xfer_time(ps, a, b, bytes, count);
	for (int i = 0; i < n; i++)
		res_set_free(ps, res[i], fin);
	return fin;
}

/* As xfer, for count tensors made one by one from t0 to t1 and each sent
 * when made: the links start at t0, and the last tensor follows its own
 * making. */
static double xfer_stream(PlanSim *ps, int a, int b, double bytes,
			  uint32_t count, double t0, double t1)
{
	if (a == b || bytes <= 0)
		return t1;
	double fin = xfer(ps, a, b, bytes, count, t0);
	double one = count > 1 ? bytes / count : bytes;
	double last = t1 + xfer_time(ps, a, b, one, 1);
	if (last > fin) {
		int res[2], n;
		ps_route(ps, a, b, res, &n);
		for (int i = 0; i < n; i++)
			res_set_free(ps, res[i], last);
	}
	return fmax(fin, last);
}

/* ---- replica sets -------------------------------------------------------- */

/* A set of more devices than the batch has samples keeps its batch
 * fastest (by w; the earlier on ties), in cluster order: no replica can
 * have an empty share, and dp over the same devices keeps as many
 * (place_dp).  Returns their count; devs[0..n) and w become the kept. */
static int keep_fastest(int batch, int *devs, double *w, int n)
{
	if (batch < 2 || n <= batch)
		return n;
	int *ix = xmalloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		ix[i] = i;
	plan_sort_ix(ix, n, w, true);
	bool *keep = xcalloc((size_t)n, sizeof(bool));
	for (int i = 0; i < batch; i++)
		keep[ix[i]] = true;
	int k = 0;
	for (int i = 0; i < n; i++)
		if (keep[i]) {
			devs[k] = devs[i];
			w[k++] = w[i];
		}
	free(keep);
	free(ix);
	return k;
}

/* Adds the set devs[0..n) with shares by w, unless it is a duplicate. */
static void put_set(PlanSim *ps, const int *devs, int n, const double *w,
		    const char *label)
{
	if (n < 2 || ps->batch < n)
		return;
	RepSet s = {.n = n, .dev = xmalloc(sizeof(int) * (size_t)n),
		    .frac = xmalloc(sizeof(double) * (size_t)n),
		    .shares = xmalloc(sizeof(int64_t) * (size_t)n), .label = label};
	memcpy(s.dev, devs, sizeof(int) * (size_t)n);
	plan_shares(ps->batch, n, w, s.shares);
	for (int i = 0; i < n; i++)
		s.frac[i] = (double)s.shares[i] / (double)ps->batch;
	/* The same devices and shares already? */
	for (int k = 0; k < ps->nsets; k++)
		if (ps->sets[k].n == n &&
		    !memcmp(ps->sets[k].dev, devs, sizeof(int) * (size_t)n) &&
		    !memcmp(ps->sets[k].shares, s.shares, sizeof(int64_t) * (size_t)n)) {
			free(s.dev);
			free(s.frac);
			free(s.shares);
			return;
		}
	s.links = xmalloc(sizeof(int) * (size_t)(2 * n + 1));
	for (int i = 0; i < n; i++) {
		int res[2], nr;
		ps_route(ps, devs[i], devs[(i + 1) % n], res, &nr);
		for (int q = 0; q < nr; q++) {
			bool dup = false;
			for (int z = 0; z < s.nlinks; z++)
				dup |= s.links[z] == res[q];
			if (!dup)
				s.links[s.nlinks++] = res[q];
		}
	}
	/* AllReduce time is affine in the bytes, per algorithm: measure it
	 * at two sizes. */
	for (int a = 0; a < 2; a++) {
		double r1 = a ? cost_allreduce_hier(ps->m, devs, n, 1e6)
			      : cost_allreduce_ring(ps->m, devs, n, 1e6);
		double r2 = a ? cost_allreduce_hier(ps->m, devs, n, 2e6)
			      : cost_allreduce_ring(ps->m, devs, n, 2e6);
		s.ar_per_byte[a] = (r2 - r1) / 1e6;
		s.ar_lat[a] = r1 - 1e6 * s.ar_per_byte[a];
	}
	ps->sets = xrealloc(ps->sets, sizeof(RepSet) * (size_t)(ps->nsets + 1));
	ps->sets[ps->nsets++] = s;
}

/* Adds devs[0..n) as a replica set (its batch fastest; keep_fastest). */
static void add_set(PlanSim *ps, const int *devs0, int n, const double *w0,
		    const char *label)
{
	if (n < 2 || ps->batch < 2)
		return;
	int *devs = xmalloc(sizeof(int) * (size_t)n);
	double *w = xmalloc(sizeof(double) * (size_t)n);
	memcpy(devs, devs0, sizeof(int) * (size_t)n);
	memcpy(w, w0, sizeof(double) * (size_t)n);
	int b = ps->batch > INT_MAX ? INT_MAX : (int)ps->batch;
	n = keep_fastest(b, devs, w, n);
	put_set(ps, devs, n, w, label);
	free(devs);
	free(w);
}

static void build_sets(PlanSim *ps)
{
	const Cluster *c = ps->c;
	int nd = c->ndevs;
	int *devs = xmalloc(sizeof(int) * (size_t)nd);
	double *w = xmalloc(sizeof(double) * (size_t)nd), *ones = xmalloc(sizeof(double) * (size_t)nd);
	double *speed = xmalloc(sizeof(double) * (size_t)nd);
	for (int d = 0; d < nd; d++) {
		double s = 0;
		for (uint32_t v = 0; v < ps->n; v++)
			s += tg_cost(ps->t, v, d);
		speed[d] = s > 0 ? 1 / s : 1;
		devs[d] = d;
		ones[d] = 1;
	}
	add_set(ps, devs, nd, ones, "all, equal");
	add_set(ps, devs, nd, speed, "all, by speed");
	for (int mi = 0; mi < c->nmachines; mi++) {
		int n = 0;
		for (int d = 0; d < nd; d++)
			if (c->devs[d].machine == mi)
				devs[n++] = d;
		add_set(ps, devs, n, ones, "one machine");
	}
	for (int ty = 0; ty < c->ntypes; ty++) {
		int n = 0;
		for (int d = 0; d < nd; d++)
			if (c->devs[d].type == ty) {
				w[n] = speed[d];
				devs[n++] = d;
			}
		if (n < nd)
			add_set(ps, devs, n, w, "one device type");
	}
	/* dp-best's machine and type subsets, by speed (the subsets a
	 * user would try; more replicas on faster devices). */
	Arena *a = arena_new();
	int nsub;
	DevSet *sub = plan_devsets(ps->t, a, &nsub);
	for (int k = 0; k < nsub; k++) {
		for (int i = 0; i < sub[k].n; i++)
			w[i] = speed[sub[k].devs[i]];
		add_set(ps, sub[k].devs, sub[k].n, w, "machine or type subset");
	}
	plan_devsets_free(sub, nsub);
	arena_free(a);
	free(devs);
	free(w);
	free(ones);
	free(speed);
	ps->maxrep = 1;
	for (int k = 0; k < ps->nsets; k++)
		ps->maxrep = ps->sets[k].n > ps->maxrep ? ps->sets[k].n : ps->maxrep;
}

/* ---- the model --------------------------------------------------------- */

typedef struct EKey {
	uint32_t u, v;
	double split, partial, full;
	double at;               /* how far into u's work it is ready */
	double need;             /* how far into v's work it is first read */
	bool saved;              /* read by a backward op of v */
} EKey;

typedef struct NodeOut {
	uint32_t w, k;           /* consumer node, output index */
	bool saved;              /* read by a backward op there */
	double need;             /* how far into w's work it is first read */
} NodeOut;

/* By consumer node and output, a saved read first. */
static int use_cmp(const void *pa, const void *pb)
{
	const NodeOut *a = pa, *b = pb;
	if (a->w != b->w)
		return a->w < b->w ? -1 : 1;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	return (int)b->saved - (int)a->saved;
}

static uint32_t nz(double x)
{
	return x > 0 || x < 0;
}

static int ekey_cmp(const void *pa, const void *pb)
{
	const EKey *a = pa, *b = pb;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->u < b->u ? -1 : a->u > b->u;
}

/* ps->in (CSR by consumer node) from the data edges e: one edge per
 * (u, v), summing its tensors. */
static void ps_merge_edges(PlanSim *ps, EKey *e, size_t ne)
{
	uint32_t n = ps->t->n;
	if (ne > 1)
		qsort(e, ne, sizeof(EKey), ekey_cmp);
	ps->in_start = xcalloc((size_t)n + 2, sizeof(uint32_t));
	ps->in = xmalloc(sizeof(PEdge) * (ne + 1));
	uint32_t m = 0;
	for (size_t j = 0; j < ne; j++) {
		if (m && ps->in[m - 1].u == e[j].u && j && e[j - 1].v == e[j].v) {
			PEdge *x = &ps->in[m - 1];
			if (e[j].partial > 0) {
				x->at0 = x->npartial ? fmin(x->at0, e[j].at) : e[j].at;
				x->at1 = x->npartial ? fmax(x->at1, e[j].at) : e[j].at;
			} else {
				bool first = x->split <= 0 && x->full <= 0;
				x->dat0 = first ? e[j].at : fmin(x->dat0, e[j].at);
				x->dat1 = first ? e[j].at : fmax(x->dat1, e[j].at);
				x->need = fmin(x->need, e[j].need);
			}
			ps->in[m - 1].split += e[j].split;
			ps->in[m - 1].partial += e[j].partial;
			ps->in[m - 1].full += e[j].full;
			ps->in[m - 1].ksplit += e[j].saved ? e[j].split : 0;
			ps->in[m - 1].kfull += e[j].saved ? e[j].full : 0;
			ps->in[m - 1].nsplit += nz(e[j].split);
			ps->in[m - 1].npartial += nz(e[j].partial);
			ps->in[m - 1].nfull += nz(e[j].full);
			continue;
		}
		ps->in[m++] = (PEdge){e[j].u, e[j].split, e[j].partial, e[j].full,
				      e[j].saved ? e[j].split : 0, e[j].saved ? e[j].full : 0,
				      nz(e[j].split), nz(e[j].partial), nz(e[j].full),
				      e[j].at, e[j].at,
				      e[j].partial > 0 ? 0 : e[j].at,
				      e[j].partial > 0 ? 0 : e[j].at,
				      e[j].partial > 0 ? 1 : e[j].need};
		ps->in_start[e[j].v + 1]++;
	}
	for (uint32_t v = 0; v < n; v++)
		ps->in_start[v + 1] += ps->in_start[v];
}

/* Parameter reads by reader, then owner, then parameter. */
static int pread_by_reader(const void *pa, const void *pb)
{
	const struct PRead *a = pa, *b = pb;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	return a->param < b->param ? -1 : a->param > b->param;
}

/* ps->pin (CSR by reader node) from the parameter reads ps->pread: one
 * entry per (parameter, reader). */
static void ps_param_csr(PlanSim *ps)
{
	uint32_t n = ps->t->n, np = ps->npread;
	/* ps->pread is by parameter: read by more than one node? */
	for (uint32_t j = 0; j + 1 < np; j++)
		if (ps->pread[j].param == ps->pread[j + 1].param)
			ps->pread[j].shared = ps->pread[j + 1].shared = true;
	struct PRead *r = xmalloc(sizeof(*r) * ((size_t)np + 1));
	if (np)
		memcpy(r, ps->pread, sizeof(*r) * np);
	if (np > 1)
		qsort(r, np, sizeof(*r), pread_by_reader);
	ps->pin_start = xcalloc((size_t)n + 2, sizeof(uint32_t));
	ps->pin = xmalloc(sizeof(PParam) * ((size_t)np + 1));
	for (uint32_t j = 0; j < np; j++) {
		ps->pin[j] = (PParam){r[j].param, r[j].owner, r[j].bytes, r[j].need,
				      r[j].shared};
		ps->pin_start[r[j].v + 1]++;
	}
	for (uint32_t v = 0; v < n; v++)
		ps->pin_start[v + 1] += ps->pin_start[v];
	free(r);
}

/* Parameter reads by parameter, saved reads first, then by reader. */
static int pread_cmp(const void *pa, const void *pb)
{
	const struct PRead *a = pa, *b = pb;
	if (a->param != b->param)
		return a->param < b->param ? -1 : 1;
	if (a->saved != b->saved)
		return a->saved ? -1 : 1;
	return a->v < b->v ? -1 : a->v > b->v;
}

/* A partial sum a node both computes and reads, before grads_csr. */
typedef struct GradKey {
	uint32_t v;
	struct Grad g;
} GradKey;

static int grad_cmp(const void *pa, const void *pb)
{
	const GradKey *a = pa, *b = pb;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->g.at < b->g.at ? -1 : a->g.at > b->g.at;
}

/* ps->grad (CSR by node, in the order computed) from gr[0..ngr). */
static void grads_csr(PlanSim *ps, GradKey *gr, size_t ngr)
{
	uint32_t n = ps->t->n;
	if (ngr > 1)
		qsort(gr, ngr, sizeof(GradKey), grad_cmp);
	ps->grad_start = xcalloc((size_t)n + 2, sizeof(uint32_t));
	ps->grad = xmalloc(sizeof(struct Grad) * (ngr + 1));
	for (size_t j = 0; j < ngr; j++) {
		ps->grad[j] = gr[j].g;
		ps->grad_start[gr[j].v + 1]++;
	}
	for (uint32_t v = 0; v < n; v++)
		ps->grad_start[v + 1] += ps->grad_start[v];
}

/* The cost (first device type) of the ops of node w that read output k
 * of op i. */
static double consumers_cost(const PlanSim *ps, const Uses *us, uint32_t i,
			     uint32_t k, uint32_t w)
{
	double c = 0;
	for (uint32_t q = us->start[i]; q < us->start[i + 1]; q++) {
		const Use *u = &us->use[q];
		const Input *in = &u->op->in[u->slot];
		if (ps->t->op_node[u->op->id] == w && !in->ctrl && in->idx == k)
			c += cost_op(ps->m, u->op, 0);
	}
	return c;
}

/* Room for n + 1 elements of size sz in *p (capacity *cap, doubling
 * from first). */
static void *grow(void *p, size_t *cap, size_t n, size_t sz, size_t first)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : first;
	return xrealloc(p, sz * *cap);
}

/* What ps_model gathers over the ops before it builds the tables. */
typedef struct ModelBuild {
	const Uses *us;
	uint32_t *owner;         /* per op: the node keeping it (tg_param_owners) */
	double *pos, *ntot;      /* how far into its node's work an op ends */
	double *beg;             /* ... and starts */
	GradKey *gr;             /* each partial sum a node computes and reads */
	EKey *e;                 /* data edges */
	size_t ngr, capgr, ne, cape, cappr;
	NodeOut *use;
	size_t capuse;
} ModelBuild;

/* Op i's (of node v) costs by kind and memory into the node's. */
static void ps_op_costs(PlanSim *ps, Graph *g, const BatchInfo *b,
			const ModelBuild *mb, uint32_t i, uint32_t v)
{
	const Op *op = g->ops[i];
	const TaskGraph *t = ps->t;
	int nt = t->ntype;
	bool sliced = false;
	for (uint32_t k = 0; k < op->nin; k++)
		sliced |= b->idim[b->inbase[i] + k] >= 0;
	for (uint32_t k = 0; k < op->nout; k++)
		sliced |= batch_okind(b, op, k) == OK_SPLIT;
	if (b->replicable[i] && sliced)
		ps->splittable[v] = t->pinned[v] < 0 && ps->batch > 0;
	for (int ty = 0; ty < nt; ty++) {
		size_t ix = (size_t)v * (size_t)nt + (size_t)ty;
		double x = cost_op(ps->m, op, ty);
		if (!b->replicable[i] || !sliced)
			(b->replicable[i] ? ps->dup : ps->one)[ix] += x;
		else if (x > 0)
			ps->ovh[ix] += fmin(x, cost_overhead(&ps->c->types[ty]));
	}
	double st = cost_op_mem(ps->m, op);
	ps->params[v] += st;
	ps->act[v] -= st;
	if (op_has_role(g, op, ROLE_PARAM)) {
		double pb = 0;
		for (uint32_t k = 0; k < op->nout; k++)
			pb += cost_out_bytes(g, op, k);
		ps->params[mb->owner[i]] += pb;
		/* mem_perm holds it on the owner's node (taskgraph.c). */
		ps->act[op_role(g, op) == ROLE_PARAM ? mb->owner[i] : v] -= pb;
	}
}

/* Op i's (of node v) outputs as read by other nodes: each (output,
 * consumer node) once, control edges carrying no bytes (index nout), a
 * saved read first.  Returns how many, in mb->use. */
static uint32_t ps_op_uses(PlanSim *ps, Graph *g, const BatchInfo *b,
			   ModelBuild *mb, uint32_t i, uint32_t src, bool param)
{
	const Op *op = g->ops[i];
	const Uses *us = mb->us;
	uint32_t nu = 0;
	for (uint32_t k = us->start[i]; k < us->start[i + 1]; k++) {
		const Use *u = &us->use[k];
		uint32_t w = ps->t->op_node[u->op->id];
		const Input *in = &u->op->in[u->slot];
		if (w == src && (param || in->ctrl ||
				 batch_okind(b, op, in->idx) != OK_PARTIAL))
			continue;
		mb->use = grow(mb->use, &mb->capuse, nu, sizeof(*mb->use), 64);
		mb->use[nu].w = w;
		mb->use[nu].saved = !in->ctrl && op_role(g, u->op) == ROLE_BWD;
		mb->use[nu].need = mb->ntot[w] > 0
				   ? mb->beg[u->op->id] / mb->ntot[w] : 0;
		mb->use[nu++].k = in->ctrl ? op->nout : in->idx;
	}
	if (nu > 1)
		qsort(mb->use, nu, sizeof(*mb->use), use_cmp);
	return nu;
}

/* Op i's (of node v) reads by other nodes as edges: a partial sum its
 * own node reads (a gradient and its update: an AllReduce when
 * replicated), a parameter read, or a data edge by kind. */
static void ps_op_edges(PlanSim *ps, Graph *g, const BatchInfo *b,
			ModelBuild *mb, uint32_t i, uint32_t v)
{
	const Op *op = g->ops[i];
	bool param = op_has_role(g, op, ROLE_PARAM);
	uint32_t src = param ? mb->owner[i] : v;
	uint32_t nu = ps_op_uses(ps, g, b, mb, i, src, param);
	double tot = mb->ntot[v] > 0 ? mb->ntot[v] : 1,
	       at = mb->ntot[v] > 0 ? mb->pos[i] / tot : 1;
	for (uint32_t q = 0; q < nu; q++) {
		const NodeOut *x = &mb->use[q];
		if (q && x->w == x[-1].w && x->k == x[-1].k)
			continue;
		double need = x->need;   /* its first read there */
		for (uint32_t q2 = q + 1; q2 < nu && mb->use[q2].w == x->w &&
					   mb->use[q2].k == x->k; q2++)
			need = fmin(need, mb->use[q2].need);
		uint32_t w = x->w, kk = x->k;
		bool ctrl = kk == op->nout;
		double bytes = ctrl ? 0 : cost_out_bytes(g, op, kk);
		if (w == src) {
			ps->self_partial[v] += bytes;
			ps->self_n[v]++;
			mb->gr = grow(mb->gr, &mb->capgr, mb->ngr, sizeof(GradKey), 256);
			/* What waits for it: its consumers here (the update),
			 * after the AllReduce. */
			double tail = consumers_cost(ps, mb->us, i, kk, v);
			mb->gr[mb->ngr++] = (GradKey){v, {at, tail / tot, bytes}};
		} else if (param) {
			ps->pread = grow(ps->pread, &mb->cappr, ps->npread,
					 sizeof(*ps->pread), 256);
			ps->pread[ps->npread++] =
				(struct PRead){i, src, w, bytes, x->saved, need, false};
		} else {
			OutKind kind = ctrl ? OK_FULL : batch_okind(b, op, kk);
			if (kind == OK_PARTIAL)
				ps->ptail[w] += consumers_cost(ps, mb->us, i, kk, w);
			mb->e = grow(mb->e, &mb->cape, mb->ne, sizeof(EKey), 1024);
			mb->e[mb->ne++] = (EKey){v, w, kind == OK_SPLIT ? bytes : 0,
						 kind == OK_PARTIAL ? bytes : 0,
						 kind == OK_SPLIT || kind == OK_PARTIAL ? 0 : bytes,
						 at, need, x->saved && kind != OK_PARTIAL};
		}
	}
}

/* Node-level facts from the graph: splittability, memory, edges by kind,
 * parameter reads (a parameter is kept by the node of its update). */
static void ps_model(PlanSim *ps, Graph *g, const BatchInfo *b)
{
	const TaskGraph *t = ps->t;
	uint32_t n = t->n;
	ps->splittable = xmalloc(sizeof(bool) * ((size_t)n + 1));
	ps->params = xcalloc((size_t)n + 1, sizeof(double));
	ps->act = xcalloc((size_t)n + 1, sizeof(double));
	ps->temp = xcalloc((size_t)n + 1, sizeof(double));
	int nt = t->ntype;
	ps->dup = xcalloc(((size_t)n + 1) * (size_t)nt, sizeof(double));
	ps->self_partial = xcalloc((size_t)n + 1, sizeof(double));
	ps->self_n = xcalloc((size_t)n + 1, sizeof(uint32_t));
	ps->done = xcalloc((size_t)n + 1, sizeof(uint32_t));
	ps->one = xcalloc(((size_t)n + 1) * (size_t)nt, sizeof(double));
	ps->ovh = xcalloc(((size_t)n + 1) * (size_t)nt, sizeof(double));
	ps->ptail = xcalloc((size_t)n + 1, sizeof(double));
	for (uint32_t v = 0; v < n; v++) {
		ps->splittable[v] = false;
		ps->act[v] = t->mem_perm[v];
		ps->temp[v] = t->mem_temp[v];
	}
	ModelBuild mb = {.us = graph_uses(g), .owner = tg_param_owners(g, t)};
	/* How far into its node's work each op finishes (topological
	 * order, costs on the first type). */
	mb.pos = xcalloc((size_t)g->nops + 1, sizeof(double));
	mb.beg = xcalloc((size_t)g->nops + 1, sizeof(double));
	mb.ntot = xcalloc((size_t)n + 1, sizeof(double));
	const uint32_t *topo = graph_topo(g);
	for (uint32_t j = 0; topo && j < g->nops; j++) {
		uint32_t i = topo[j];
		if (i >= g->nops || g->ops[i]->dead || t->op_node[i] >= n)
			continue;
		mb.beg[i] = mb.ntot[t->op_node[i]];
		mb.ntot[t->op_node[i]] += cost_op(ps->m, g->ops[i], 0);
		mb.pos[i] = mb.ntot[t->op_node[i]];
	}
	for (uint32_t i = 0; i < g->nops; i++) {
		if (g->ops[i]->dead)
			continue;
		ps_op_costs(ps, g, b, &mb, i, t->op_node[i]);
		/* constants are copied, never moved */
		if (g->ops[i]->opcode != O_Const)
			ps_op_edges(ps, g, b, &mb, i, t->op_node[i]);
	}
	free(mb.use);
	if (ps->npread > 1)
		qsort(ps->pread, ps->npread, sizeof(*ps->pread), pread_cmp);
	grads_csr(ps, mb.gr, mb.ngr);
	free(mb.gr);
	for (uint32_t v = 0; v < n; v++)
		ps->ptail[v] = mb.ntot[v] > 0 ? fmin(ps->ptail[v] / mb.ntot[v], 1) : 0;
	free(mb.pos);
	free(mb.beg);
	free(mb.ntot);
	/* One edge per (u, v), summing its tensors. */
	ps_merge_edges(ps, mb.e, mb.ne);
	ps_param_csr(ps);
	for (uint32_t v = 0; v < n; v++)
		ps->act[v] = ps->act[v] > 0 ? ps->act[v] : 0;
	free(mb.e);
	free(mb.owner);
}

/* Replicas of strategy s: devices and fractions of the batch. */
static int reps(const PlanSim *ps, int s, const int **dev, const double **frac)
{
	static const double one = 1;
	if (s < ps->ndev) {
		*dev = &ps->single[s];
		*frac = &one;
		return 1;
	}
	const RepSet *r = &ps->sets[s - ps->ndev];
	*dev = r->dev;
	*frac = r->frac;
	return r->n;
}

/* Index of device d among n replicas, or -1. */
static int find(const int *dev, int n, int d)
{
	for (int i = 0; i < n; i++)
		if (dev[i] == d)
			return i;
	return -1;
}

/* How many AllReduces carry bytes in count tensors: one per tensor, or
 * with gradient buckets (comm<bucket>) one per DDP_BUCKET bytes. */
static double ar_count(const PlanSim *ps, double bytes, uint32_t count)
{
	if (!ps->bucket || count <= 1)
		return count;
	return fmin(count, fmax(1, ceil(bytes / DDP_BUCKET)));
}

/* Seconds of count AllReduces over set rs carrying bytes in all (of
 * equal size), each by the faster algorithm. */
static double ar_time(const RepSet *rs, double count, double bytes)
{
	if (count <= 0)
		return 0;
	double each = bytes / count;
	return count * fmin(rs->ar_lat[0] + rs->ar_per_byte[0] * each,
			    rs->ar_lat[1] + rs->ar_per_byte[1] * each);
}

/* Events of the strategy simulator: replica r of node v finishes (FIN)
 * or has all its inputs (RDY); ordered by time, kind, node, replica. */
enum { PE_FIN, PE_RDY };

static void pev_push(PlanSim *ps, double t, uint32_t v, int r, uint32_t kind)
{
	uint32_t id = v * (uint32_t)ps->maxrep + (uint32_t)r;
	heap_push(&ps->h, t, (uint64_t)kind << 32 | id, id);
}

/* Does replica r of the consumer (on device dv) wait for producer replica
 * i of edge e?  Slices between one set, and whole tensors with a local
 * copy, come from the replica on the same device only; whole tensors
 * without one come from the producer's first replica; anything else
 * (slices across sets, partial sums) from every replica. */
static bool depends(const PEdge *e, bool same, int i, int r, int j)
{
	if (e->partial > 0 || (e->split > 0 && !same))
		return true;
	if (e->split > 0 && i == r)
		return true;
	if (e->full > 0 || !e->split)
		return i == (j >= 0 ? j : 0);
	return false;
}

/* The time replica r of node v runs under strategy st (ps_run). */
static double rep_work(const PlanSim *ps, const int *st, uint32_t v, int r)
{
	const TaskGraph *tg = ps->t;
	const int *dv;
	const double *fv;
	reps(ps, st[v], &dv, &fv);
	int d = dv[r];
	size_t ix = (size_t)v * (size_t)tg->ntype + (size_t)tg->c->devs[d].type;
	double all = tg_cost(tg, v, d);
	double fixed = ps->dup[ix] + ps->one[ix] + ps->ovh[ix];
	return fmax(all - fixed, 0) * fv[r] + ps->dup[ix] + ps->ovh[ix] +
	       (r == 0 ? ps->one[ix] : 0);
}

/* Producer replicas du[0..nu) indexed by device (ps->dpos[d]: d's index
 * in du, else -1) while a consumer's replicas look theirs up: O(1)
 * where find() made the strategy simulator cubic in the replicas
 * (ResNet-50 on 64 replicas: most of a minute).  pos_clear undoes it. */
static void pos_mark(PlanSim *ps, const int *du, int nu)
{
	for (int i = nu; i-- > 0;)
		ps->dpos[du[i]] = i;     /* the first of a repeated device */
}

static void pos_clear(PlanSim *ps, const int *du, int nu)
{
	for (int i = 0; i < nu; i++)
		ps->dpos[du[i]] = -1;
}

/* Replica i of u (on device du, fraction fu) finished at t: send what
 * each consumer replica needs from it (the simulator sends at the
 * producer's finish, links serve in that order), and start consumer
 * replicas whose inputs are all there. */
static void ps_send(PlanSim *ps, const int *st, uint32_t u, int i, double t)
{
	int mr = ps->maxrep, nd = ps->ndev;
	const int *du;
	const double *fu;
	int nu = reps(ps, st[u], &du, &fu);
	for (uint32_t q = ps->out_start[u]; q < ps->out_start[u + 1]; q++) {
		uint32_t k = ps->out[q];
		const PEdge *e = &ps->in[k];
		uint32_t v = ps->edge_v[k];
		const int *dv;
		const double *fv;
		int nv = reps(ps, st[v], &dv, &fv);
		double *ready = ps->rdy + (size_t)v * (size_t)mr;
		uint32_t *pend = ps->pending + (size_t)v * (size_t)mr;
		bool same = st[u] == st[v];
		/* Partial sums between one set: an AllReduce once every
		 * replica is done. */
		if (e->partial > 0 && same && nu > 1 && ++ps->arcount[k] == (uint32_t)nu) {
			/* They are ready one by one as u runs (between its
			 * last replica's start and its end: at0 .. at1 of
			 * it), so the AllReduces overlap u: the links work
			 * through them from the first, and the last follows
			 * its own gradient. */
			const RepSet *rs = &ps->sets[st[v] - nd];
			double t0 = ps->gstart[u], dur = t - t0;
			double s0 = t0 + e->at0 * dur;
			for (int l = 0; l < rs->nlinks; l++)
				s0 = fmax(s0, res_free_at(ps, rs->links[l]));
			double c = ar_count(ps, e->partial, e->npartial);
			double ar = fmax(s0 + ar_time(rs, c, e->partial),
					 fmax(s0, t0 + e->at1 * dur) +
					 ar_time(rs, 1, e->partial / c));
			for (int l = 0; l < rs->nlinks; l++)
				res_set_free(ps, rs->links[l], ar);
			ps->arwait[v] = fmax(ps->arwait[v], ar);
		}
		/* Between one set, all but a partial sum go replica to
		 * replica (depends: i == r only). */
		bool own = same && !(e->partial > 0);
		int r0 = own ? i : 0, r1 = own ? (i < nv ? i + 1 : i) : nv;
		if (!own)
			pos_mark(ps, du, nu);
		/* The tensors other than partial sums are ready one by one
		 * as u runs (dat0 .. dat1 of it). */
		double s = ps->rstart[(size_t)u * (size_t)mr + (size_t)i];
		double td0 = s + e->dat0 * (t - s), td = s + e->dat1 * (t - s);
		for (int r = r0; r < r1; r++) {
			int j = own ? r : ps->dpos[dv[r]];
			if (!depends(e, same, i, r, j))
				continue;
			double a = td;
			if (e->split > 0 && !same)
				a = fmax(a, xfer_stream(ps, du[i], dv[r],
							e->split * fu[i] * fv[r],
							e->nsplit, td0, td));
			if (e->partial > 0 && !(same && nu > 1))
				a = fmax(a, xfer(ps, du[i], dv[r], e->partial,
						 e->npartial, t));
			if (e->full > 0 && j < 0)
				a = fmax(a, xfer_stream(ps, du[i], dv[r], e->full,
							e->nfull, td0, td));
			/* v's replica may start its work before the first op
			 * that reads them. */
			if (!(e->partial > 0))
				a -= e->need * rep_work(ps, st, v, r);
			ready[r] = fmax(ready[r], a);
			if (--pend[r] == 0)
				pev_push(ps, ready[r], v, r, PE_RDY);
		}
		if (!own)
			pos_clear(ps, du, nu);
	}
}

/* The bytes replica r of node v receives from other nodes under
 * strategy st, as comm moves them: a whole value from a device that has
 * none of it, its rows of a split one unless its one producer is here,
 * a partial sum from each producer replica elsewhere (the AllReduce of
 * one on the same devices sums in place).  *keep: what a backward op of
 * v reads (a saved activation, kept until then); *pass: the rest, held
 * while v runs. */
static void received(const PlanSim *ps, const int *st, uint32_t v, int r,
		     double *keep, double *pass)
{
	const int *dv, *du;
	const double *fv, *fu;
	int nv = reps(ps, st[v], &dv, &fv), d = dv[r];
	*keep = *pass = 0;
	for (uint32_t k = ps->in_start[v]; k < ps->in_start[v + 1]; k++) {
		const PEdge *e = &ps->in[k];
		if (st[e->u] == st[v])
			continue;
		int nu = reps(ps, st[e->u], &du, &fu);
		bool here = find(du, nu, d) >= 0;
		if (!here) {
			*keep += e->kfull;
			*pass += e->full - e->kfull;
		}
		if (!(here && nu == 1)) {
			*keep += e->ksplit * fv[r];
			*pass += (e->split - e->ksplit) * fv[r];
		}
		if (nv == 1)
			*pass += e->partial * (nu - here);
	}
}

/* The parameters ps->pin[k..k1) of one owner, read on device b: those
 * not there yet move from device a at the start, one after another (one
 * copy per parameter and device: another reader there reuses it).
 * Returns when a reader replica of the given work may start: the latest
 * of (arrival - need x work) over them. */
static double param_copies(PlanSim *ps, uint32_t k, uint32_t k1, int a, int b,
			   double work)
{
	StampTab *t = &ps->pcopy;
	while (2 * (t->n + (k1 - k) + 1) > t->cap)  /* no growing below */
		stamp_grow(t, ps->evals);
	Stamped **c = ps->pslot;
	double bytes = 0;
	uint32_t count = 0;
	for (uint32_t q = k; q < k1; q++) {
		c[q - k] = NULL;             /* read here only: moves now */
		if (ps->pin[q].shared) {
			uint64_t key = (uint64_t)ps->pin[q].param *
				       (uint64_t)ps->ndev + (uint64_t)b;
			c[q - k] = stamp_get(t, key, ps->evals);
			if (c[q - k]->x)     /* already there */
				continue;
		}
		bytes += ps->pin[q].bytes;
		count++;
	}
	double arr = count ? xfer(ps, a, b, bytes, count, 0) : 0, late = -INFINITY;
	for (uint32_t q = k; q < k1; q++) {
		double y = arr;
		if (c[q - k] && c[q - k]->x)
			y = c[q - k]->y;
		else if (c[q - k]) {
			c[q - k]->x = 1;     /* there, at y */
			c[q - k]->y = arr;
		}
		late = fmax(late, y - ps->pin[q].need * work);
	}
	return late;
}

/* Device d takes part in this evaluation: free at 0, holding nothing. */
static void touch(PlanSim *ps, int d)
{
	if (ps->tstamp[d] == ps->evals)
		return;
	ps->tstamp[d] = ps->evals;
	ps->dev_free[d] = ps->mem_perm[d] = ps->mem_temp[d] = 0;
	ps->touched[ps->ntouched++] = d;
}

/* Device d's memory in the last evaluation (0 if it used none). */
static double ps_mem(const PlanSim *ps, int d)
{
	return ps->tstamp[d] == ps->evals ? ps->mem_perm[d] + ps->mem_temp[d] : 0;
}

/* Node v's replicas at the start of an evaluation: how many producer
 * replicas each waits for (depends()), the parameters they read from
 * other devices (moved once, at time 0), the ready ones queued, and
 * their memory. */
static void ps_seed(PlanSim *ps, const int *st, uint32_t v)
{
	const int *dv;
	const double *fv;
	int nv = reps(ps, st[v], &dv, &fv);
	double *ready = ps->rdy + (size_t)v * (size_t)ps->maxrep;
	uint32_t *pend = ps->pending + (size_t)v * (size_t)ps->maxrep;
	for (int r = 0; r < nv; r++) {
		ready[r] = 0;
		pend[r] = 0;
	}
	for (uint32_t k = ps->in_start[v]; k < ps->in_start[v + 1]; k++) {
		const PEdge *e = &ps->in[k];
		const int *du;
		const double *fu;
		int nu = reps(ps, st[e->u], &du, &fu);
		bool same = st[e->u] == st[v];
		if (same && !(e->partial > 0)) {  /* replica r's own only */
			for (int r = 0; r < nv; r++)
				pend[r] += r < nu;
			continue;
		}
		pos_mark(ps, du, nu);
		for (int r = 0; r < nv; r++) {
			int j = ps->dpos[dv[r]];
			for (int i = 0; i < nu; i++)
				pend[r] += depends(e, same, i, r, j);
		}
		pos_clear(ps, du, nu);
	}
	ps->done[v] = 0;
	ps->gstart[v] = 0;
	ps->arwait[v] = 0;
	/* Parameters read away from their owner's devices, by owner: moved
	 * at the start; the reader may start before its first op that
	 * reads one. */
	uint32_t end = ps->pin_start[v + 1];
	for (uint32_t k = ps->pin_start[v], k1; k < end; k = k1) {
		uint32_t owner = ps->pin[k].owner;
		for (k1 = k + 1; k1 < end && ps->pin[k1].owner == owner; k1++)
			;
		const int *du;
		const double *fu;
		int nu = reps(ps, st[owner], &du, &fu);
		for (int r = 0; r < nv; r++) {
			if (find(du, nu, dv[r]) >= 0)
				continue;
			double w = rep_work(ps, st, v, r);
			ready[r] = fmax(ready[r],
					param_copies(ps, k, k1, du[0], dv[r], w));
		}
	}
	for (int r = 0; r < nv; r++)
		if (!pend[r])
			pev_push(ps, ready[r], v, r, PE_RDY);
	for (int r = 0; r < nv; r++) {
		double keep, pass;
		touch(ps, dv[r]);
		received(ps, st, v, r, &keep, &pass);
		ps->mem_perm[dv[r]] += ps->params[v] + ps->act[v] * fv[r] + keep;
		ps->mem_temp[dv[r]] = fmax(ps->mem_temp[dv[r]], ps->temp[v] * fv[r] + pass);
	}
}

/* Parameters read away from their owner's devices: one copy per
 * parameter and device, kept until a backward op there reads it (a
 * saved read comes first), else until the forward has. */
static void ps_param_copies(PlanSim *ps, const int *st)
{
	/* (reader devices: seeded, so touched) */
	for (uint32_t k = 0; k < ps->npread; k++) {
		const struct PRead *x = &ps->pread[k];
		if (!k || x->param != ps->pread[k - 1].param)
			ps->stamp++;
		const int *du, *dv;
		const double *fu, *fv;
		int nu = reps(ps, st[x->owner], &du, &fu), nv = reps(ps, st[x->v], &dv, &fv);
		pos_mark(ps, du, nu);
		for (int r = 0; r < nv; r++) {
			int d = dv[r];
			if (ps->dstamp[d] == ps->stamp || ps->dpos[d] >= 0)
				continue;
			ps->dstamp[d] = ps->stamp;
			if (x->saved)
				ps->mem_perm[d] += x->bytes;
			else
				ps->mem_temp[d] = fmax(ps->mem_temp[d], x->bytes);
		}
		pos_clear(ps, du, nu);
	}
}

/* Replica r of node v is ready at time t on its device: it runs there
 * when the device is free (devices serve in the order work becomes
 * ready); the part that reads other nodes' AllReduced sums runs once
 * they are there. */
static void ps_run(PlanSim *ps, const int *st, uint32_t v, int r, double t)
{
	const int *dv;
	const double *fv;
	reps(ps, st[v], &dv, &fv);
	int d = dv[r];
	double s0 = fmax(t, ps->dev_free[d]);
	ps->gstart[v] = fmax(ps->gstart[v], s0);
	ps->rstart[(size_t)v * (size_t)ps->maxrep + (size_t)r] = s0;
	double work = rep_work(ps, st, v, r);
	double fin = fmax(s0 + work, ps->arwait[v] + ps->ptail[v] * work);
	ps->dev_free[d] = fin;
	pev_push(ps, fin, v, r, PE_FIN);
}

/* The time of a bucket's ConcatV2 (or SplitV) of bytes on the slowest
 * device of rs (comm's emit_bucket; the cost model's cost_copy). */
static double bucket_copy(const PlanSim *ps, const RepSet *rs, double bytes)
{
	double x = 0;
	for (int i = 0; i < rs->n; i++)
		x = fmax(x, cost_copy(&ps->c->types[ps->c->devs[rs->dev[i]].type],
				      bytes));
	return x;
}

/* Node v's own AllReduces once its last replica has finished at t: each
 * gradient's starts once every replica has computed it (as far into the
 * node's work as it is, between the last replica's start and end), in
 * that order over the set's links; with buckets, one per DDP_BUCKET
 * bytes, when its last gradient is there and has been packed (a bucket
 * of two or more: ConcatV2 before, SplitV after, as comm makes them).
 * Returns when the updates that wait for them end. */
static double ps_self_allreduce(PlanSim *ps, const int *st, uint32_t v, double t)
{
	const RepSet *rs = &ps->sets[st[v] - ps->ndev];
	double ar = 0, t0 = ps->gstart[v], dur = t - t0, fill = 0, tail = 0, end = t;
	uint32_t k = 0;
	for (int l = 0; l < rs->nlinks; l++)
		ar = fmax(ar, res_free_at(ps, rs->links[l]));
	for (uint32_t q = ps->grad_start[v]; q < ps->grad_start[v + 1]; q++) {
		const struct Grad *gq = &ps->grad[q];
		fill += gq->bytes;
		tail += gq->tail;
		k++;
		if (ps->bucket && fill < DDP_BUCKET && q + 1 < ps->grad_start[v + 1])
			continue;
		double pack = k > 1 ? bucket_copy(ps, rs, fill) : 0;
		ar = fmax(ar, t0 + gq->at * dur + pack) + ar_time(rs, 1, fill);
		/* The updates waiting for this one, once it is unpacked. */
		end = fmax(end, ar + pack + tail * dur);
		fill = 0;
		tail = 0;
		k = 0;
	}
	for (int l = 0; l < rs->nlinks; l++)
		res_set_free(ps, rs->links[l], ar);
	return end;
}

/* Simulated iteration time of strategy st (one entry per node); *oom
 * when some device's memory overflows (the time is then penalised). */
static double ps_eval(PlanSim *ps, const int *st, bool *oom)
{
	const TaskGraph *t = ps->t;
	ps->evals++;
	ps->ntouched = 0;
	/* a new stamp (evals) frees every resource, moves no parameter */
	ps->res.n = ps->pcopy.n = 0;
	ps->h.n = 0;
	for (uint32_t k = 0; k < ps->in_start[t->n]; k++)
		ps->arcount[k] = 0;
	for (uint32_t v = 0; v < t->n; v++)
		ps_seed(ps, st, v);
	ps_param_copies(ps, st);
	double span = 0;
	while (ps->h.n) {
		HeapItem hi;
		heap_pop(&ps->h, &hi);
		uint32_t v = hi.id / (uint32_t)ps->maxrep;
		int r = (int)(hi.id % (uint32_t)ps->maxrep);
		if ((uint32_t)(hi.tie >> 32) == PE_RDY) {
			ps_run(ps, st, v, r, hi.key);
			continue;
		}
		span = fmax(span, hi.key);
		ps_send(ps, st, v, r, hi.key);
		const int *dv;
		const double *fv;
		int nv = reps(ps, st[v], &dv, &fv);
		if (ps->self_n[v] && nv > 1 && ++ps->done[v] == (uint32_t)nv)
			span = fmax(span, ps_self_allreduce(ps, st, v, hi.key));
	}
	for (uint32_t i = 0; i < ps->res.cap; i++)
		if (ps->res.s[i].stamp == ps->evals)
			span = fmax(span, ps->res.s[i].x);
	double over = 0;
	for (int i = 0; i < ps->ntouched; i++) {
		int d = ps->touched[i];
		double cap = tg_mem_cap(t, d), use = ps->mem_perm[d] + ps->mem_temp[d];
		if (use > cap)
			over = fmax(over, use / cap - 1);
	}
	*oom = over > 0;
	ps->span = span;         /* without the penalty */
	return over > 0 ? span * (2 + over) + 1 : span;
}

static PlanSim *ps_new(Graph *g, const TaskGraph *t, const CostModel *m,
		       const BatchInfo *b)
{
	PlanSim *ps = xcalloc(1, sizeof *ps);
	ps->t = t;
	ps->c = t->c;
	ps->m = m;
	ps->n = t->n;
	ps->ndev = t->ndev;
	ps->batch = b->batch;
	ps->single = xmalloc(sizeof(int) * ((size_t)t->ndev + 1));
	for (int d = 0; d < t->ndev; d++)
		ps->single[d] = d;
	ps_links(ps);
	build_sets(ps);
	ps_model(ps, g, b);
	size_t nd1 = (size_t)ps->ndev + 1;
	ps->dev_free = xcalloc(nd1, sizeof(double));
	ps->gstart = xcalloc((size_t)ps->n + 1, sizeof(double));
	ps->rstart = xcalloc(((size_t)ps->n + 1) * (size_t)ps->maxrep,
			     sizeof(double));
	ps->arwait = xcalloc((size_t)ps->n + 1, sizeof(double));
	ps->mem_perm = xcalloc(nd1, sizeof(double));
	ps->mem_temp = xcalloc(nd1, sizeof(double));
	ps->tstamp = xcalloc(nd1, sizeof(long));
	ps->touched = xcalloc(nd1, sizeof(int));
	ps->dstamp = xcalloc(nd1, sizeof(uint64_t));
	ps->dpos = xmalloc(sizeof(int) * nd1);
	for (size_t d = 0; d < nd1; d++)
		ps->dpos[d] = -1;
	stamp_grow(&ps->res, 0);
	stamp_grow(&ps->pcopy, 0);
	uint32_t run = 1;        /* param_copies' longest run */
	for (uint32_t v = 0; v < ps->n; v++) {
		uint32_t end = ps->pin_start[v + 1];
		for (uint32_t k = ps->pin_start[v], k1; k < end; k = k1) {
			for (k1 = k + 1; k1 < end &&
					 ps->pin[k1].owner == ps->pin[k].owner; k1++)
				;
			run = k1 - k > run ? k1 - k : run;
		}
	}
	ps->pslot = xmalloc(sizeof(Stamped *) * run);
	ps->rdy = xcalloc(((size_t)ps->n + 1) * (size_t)ps->maxrep, sizeof(double));
	ps->pending = xcalloc(((size_t)ps->n + 1) * (size_t)ps->maxrep, sizeof(uint32_t));
	uint32_t ne = ps->in_start[ps->n];
	ps->arcount = xcalloc((size_t)ne + 1, sizeof(uint32_t));
	/* Outgoing edges: the consumer of every edge, edges per producer. */
	ps->edge_v = xmalloc(sizeof(uint32_t) * ((size_t)ne + 1));
	ps->out_start = xcalloc((size_t)ps->n + 2, sizeof(uint32_t));
	ps->out = xmalloc(sizeof(uint32_t) * ((size_t)ne + 1));
	for (uint32_t v = 0; v < ps->n; v++)
		for (uint32_t k = ps->in_start[v]; k < ps->in_start[v + 1]; k++) {
			ps->edge_v[k] = v;
			ps->out_start[ps->in[k].u + 1]++;
		}
	for (uint32_t u = 0; u < ps->n; u++)
		ps->out_start[u + 1] += ps->out_start[u];
	uint32_t *fill = xmalloc(sizeof(uint32_t) * ((size_t)ps->n + 1));
	memcpy(fill, ps->out_start, sizeof(uint32_t) * ((size_t)ps->n + 1));
	for (uint32_t k = 0; k < ne; k++)
		ps->out[fill[ps->in[k].u]++] = k;
	free(fill);
	return ps;
}

static void ps_free(PlanSim *ps)
{
	if (ps->pipe)
		graph_free(ps->pipe);
	for (int k = 0; k < ps->nsets; k++) {
		free(ps->sets[k].dev);
		free(ps->sets[k].frac);
		free(ps->sets[k].shares);
		free(ps->sets[k].links);
	}
	free(ps->sets);
	free(ps->single);
	free(ps->splittable);
	free(ps->dup);
	free(ps->one);
	free(ps->ovh);
	free(ps->self_partial);
	free(ps->self_n);
	free(ps->grad_start);
	free(ps->grad);
	free(ps->done);
	free(ps->params);
	free(ps->act);
	free(ps->temp);
	free(ps->in_start);
	free(ps->in);
	free(ps->pin_start);
	free(ps->pin);
	route_tab_free(&ps->rt);
	free(ps->route_res);
	free(ps->route_n);
	free(ps->route_bw);
	free(ps->route_lat);
	free(ps->dev_free);
	free(ps->gstart);
	free(ps->rstart);
	free(ps->arwait);
	free(ps->ptail);
	free(ps->res.s);
	free(ps->pcopy.s);
	free(ps->pslot);
	free(ps->rdy);
	free(ps->pending);
	free(ps->arcount);
	free(ps->edge_v);
	free(ps->out_start);
	free(ps->out);
	heap_free(&ps->h);
	free(ps->mem_perm);
	free(ps->mem_temp);
	free(ps->tstamp);
	free(ps->touched);
	free(ps->dstamp);
	free(ps->dpos);
	free(ps->pread);
	free(ps);
}

/* ---- search ----------------------------------------------------------- */

static int ncand(const PlanSim *ps, uint32_t v)
{
	if (ps->t->pinned[v] >= 0)
		return 1;
	return ps->ndev + (ps->splittable[v] ? ps->nsets : 0);
}

static int cand(const PlanSim *ps, uint32_t v, int i)
{
	return ps->t->pinned[v] >= 0 ? ps->t->pinned[v] : i;
}

typedef struct Order {
	double key;
	uint32_t v;
} Order;

static int order_cmp(const void *pa, const void *pb)
{
	const Order *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->v < b->v ? -1 : a->v > b->v;
}

/* Greedy improvement: groups in decreasing cost, every candidate, keep
 * what shortens the simulated iteration; sweeps until none changes
 * anything or evals run out. */
static double greedy(PlanSim *ps, int *st, double best, long max_evals)
{
	uint32_t n = ps->n;
	Order *ord = xmalloc(sizeof(Order) * ((size_t)n + 1));
	for (uint32_t v = 0; v < n; v++) {
		double c = 0;
		for (int d = 0; d < ps->ndev; d++)
			c = fmax(c, tg_cost(ps->t, v, d));
		ord[v] = (Order){c, v};
	}
	qsort(ord, n, sizeof(Order), order_cmp);
	bool changed = true;
	while (changed && ps->evals < max_evals) {
		changed = false;
		for (uint32_t j = 0; j < n && ps->evals < max_evals; j++) {
			uint32_t v = ord[j].v;
			int keep = st[v];
			for (int i = 0; i < ncand(ps, v) && ps->evals < max_evals; i++) {
				int s = cand(ps, v, i);
				if (s == st[v])
					continue;
				int old = st[v];
				st[v] = s;
				bool oom;
				double x = ps_eval(ps, st, &oom);
				if (x < best * (1 - 1e-9)) {
					best = x;
					changed = true;
				} else {
					st[v] = old;
				}
				pass_progress(ps->ctx, "greedy search", "estimated",
					      ps->evals, max_evals, best);
			}
			(void)keep;
		}
	}
	free(ord);
	return best;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* Local search: change one group, or a run of consecutive groups in
 * topological order, to one candidate; keep it when better.  Stops
 * after max_evals evaluations in all (the work budget), or when the
 * wall-clock cap cuts it (*cut). */
static double local_search(PlanSim *ps, int *st, double best, const PassCtx *ctx,
			   double t0, long max_evals, unsigned seed, bool *cut)
{
	uint32_t n = ps->n;
	*cut = false;
	if (!n)
		return best;
	int *trial = xmalloc(sizeof(int) * n);
	unsigned rs = seed ? seed : 1;
	/* Stop early once many tries in a row bring nothing: about ten for
	 * every (group, strategy) pair, at least 2000. */
	long stale = 0, patience = 2000;
	for (uint32_t v = 0; v < n; v++)
		patience += 10L * ncand(ps, v);
	while (ps->evals < max_evals && stale < patience) {
		if (ps->evals % 64 == 0 && search_cut(ctx, t0)) {
			*cut = true;
			break;
		}
		memcpy(trial, st, sizeof(int) * n);
		uint32_t j = rnd(&rs) % n, len = 1 + (rnd(&rs) % 2 ? rnd(&rs) % 8 : 0);
		uint32_t v0 = ps->t->topo[j];
		int s = cand(ps, v0, (int)(rnd(&rs) % (unsigned)ncand(ps, v0)));
		for (uint32_t q = j; q < n && q < j + len; q++) {
			uint32_t v = ps->t->topo[q];
			if (ps->t->pinned[v] < 0 && (s < ps->ndev || ps->splittable[v]))
				trial[v] = s;
		}
		bool oom;
		double x = ps_eval(ps, trial, &oom);
		stale++;
		if (x < best * (1 - 1e-9)) {
			best = x;
			memcpy(st, trial, sizeof(int) * n);
			stale = 0;
		}
		pass_progress(ps->ctx, "local search", "estimated", ps->evals,
			      max_evals, best);
	}
	free(trial);
	return best;
}

/* ---- writing and judging plans ----------------------------------------- */

/* Writes strategy st (per node) as annotations on g's ops. */
static void write_plan(Graph *g, const PlanSim *ps, const int *st)
{
	const TaskGraph *t = ps->t;
	for (uint32_t i = 0; i < g->nops && i < t->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead || t->op_node[i] == UINT32_MAX)
			continue;
		int s = st[t->op_node[i]];
		op_unset(g, op, ann_key(ANN_SYNC));
		if (s < ps->ndev) {
			op_unset(g, op, ann_key(ANN_REPLICAS));
			op_unset(g, op, ann_key(ANN_SHARES));
			op_set_ann(g, op, ANN_DEVICE, val_str(g->arena, t->c->devs[s].name));
		} else {
			const RepSet *r = &ps->sets[s - ps->ndev];
			plan_write_replicas(g, op, t->c, r->dev, r->shares, r->n);
		}
	}
}

/* A candidate plan for the final comparison: the search's own (st), a
 * placer of placers.def on the fused groups (t) or on single ops (per
 * op), or a strategy of strategies.def. */
typedef struct Cand {
	const char *name;
	int *st;                 /* per node, or NULL */
	PlacerFn mp;             /* a model-parallel placer, or NULL */
	const TaskGraph *mt;     /* the task graph mp runs on */
	StrategyFn sf;           /* a strategy, or NULL */
	bool bucket;             /* with DDP's gradient buckets */
} Cand;

/* The pipeline placer's candidate (place_pipeline.c), by name. */
static bool is_pipe(const Cand *k)
{
	return strcmp(k->name, "pipeline") == 0;
}

/* Writes candidate k's strategy on g. */
static int apply1(PassCtx *ctx, Graph *g, const TaskGraph *t,
		  const PlanSim *ps, const Cand *k);

static int apply(PassCtx *ctx, Graph *g, const TaskGraph *t, const PlanSim *ps,
		 const Cand *k)
{
	int rc = apply1(ctx, g, t, ps, k);
	if (rc == EXIT_OK && k->bucket)
		plan_set_buckets(g, DDP_BUCKET);
	return rc;
}

static int apply1(PassCtx *ctx, Graph *g, const TaskGraph *t,
		  const PlanSim *ps, const Cand *k)
{
	if (k->st) {
		write_plan(g, ps, k->st);
		return EXIT_OK;
	}
	if (is_pipe(k)) {
		plan_copy_strategy(ps->pipe, g);
		return EXIT_OK;
	}
	if (k->sf) {
		PassCtx c = *ctx;
		c.g = g;
		c.report = NULL;
		c.best_effort = true;    /* a candidate: the judge weighs memory */
		return k->sf(&c, t);
	}
	const TaskGraph *mt = k->mt ? k->mt : t;
	int *dev = xcalloc((size_t)mt->n + 1, sizeof(int));
	PlaceOpts po = {true, ctx->seed, NULL, ctx->scratch};
	int rc = k->mp(mt, &po, dev);
	if (rc == EXIT_OK || rc == EXIT_INFEASIBLE) {
		tg_apply(mt, g, dev);
		rc = EXIT_OK;
	}
	free(dev);
	return rc;
}

/* "needs X GiB of Y GiB" per device, to stderr, for the plan named
 * what (simulated when sim, else estimated). */
static void mem_report(const TaskGraph *t, const double *need, const char *what,
		       bool sim)
{
	fprintf(stderr, "pcc: note: per device, for %s (%s peak memory):\n", what,
		sim ? "simulated" : "estimated");
	cluster_mem_report(stderr, t->c, NULL, t->ndev, need);
}

/* Materialises candidate k on a copy of the graph (comm) and simulates
 * it: the full simulator's iteration time, and whether it overflows. */
static double judge(PassCtx *ctx, const TaskGraph *t, const PlanSim *ps,
		    const Cand *k, bool *oom, double *peak_over, double *peaks)
{
	Graph *h = graph_clone(ctx->g);
	double span = INFINITY;
	*oom = true;
	*peak_over = INFINITY;
	if (apply(ctx, h, t, ps, k) == EXIT_OK)
		span = plan_simulate(ctx, h, oom, peak_over, peaks);
	graph_free(h);
	return span;
}

const char *placer_name(int i);

/* The final candidates: the search's plan and its model-parallel start;
 * the whole model on one device of each type (a device of every type is
 * judged: the search's estimate can misjudge which is fastest, and no
 * plan should lose to the best single device by the simulator's
 * measure); every strategy of strategies.def judged at this level; at
 * -O2 every placer of placers.def on the fused groups and, when the
 * graph is fused, on single ops (the baselines' own plans).  Returns the
 * count. */
static int candidates(PassCtx *ctx, const TaskGraph *t, const TaskGraph *ops,
		      bool o2, int *st, int *mp, const char *mpname, Cand **out)
{
	int ns, nc = 0;
	const StrategyInfo *si = strategy_table(&ns);
	int ntypes = t->c->ntypes < 64 ? t->c->ntypes : 64;
	Cand *c = xmalloc(sizeof(Cand) * (size_t)(3 + 2 * ns + 2 * 64 + ntypes));
	c[nc++] = (Cand){"hybrid", st, NULL, NULL, NULL, false};
	c[nc++] = (Cand){mpname, mp, NULL, NULL, NULL, false};
	for (int ty = 0; ty < ntypes && t->ndev > 1; ty++) {
		int d = 0;
		while (d < t->ndev && t->c->devs[d].type != ty)
			d++;
		if (d == t->ndev)
			continue;
		int *one = arena_alloc(ctx->scratch, sizeof(int) * ((size_t)t->n + 1));
		for (uint32_t v = 0; v < t->n; v++)
			one[v] = t->pinned[v] >= 0 ? t->pinned[v] : d;
		c[nc++] = (Cand){arena_printf(ctx->scratch, "one %s", t->c->types[ty].name),
				 one, NULL, NULL, NULL, false};
	}
	if (o2)
		c[nc++] = (Cand){"hybrid+buckets", st, NULL, NULL, NULL, true};
	for (int i = 0; i < ns; i++)
		if (si[i].judged & (o2 ? 2 : 1))
			c[nc++] = (Cand){si[i].name, NULL, NULL, NULL, si[i].fn, false};
	for (int i = 0; o2 && placer_name(i) && i < 64; i++) {
		const char *name = placer_name(i);
		if (strcmp(name, mpname))
			c[nc++] = (Cand){name, NULL, placer_find(name), t, NULL, false};
		if (ops)
			c[nc++] = (Cand){arena_printf(ctx->scratch, "%s per op", name),
					 NULL, placer_find(name), ops, NULL, false};
	}
	*out = c;
	return nc;
}

/* Work units of judging candidate k of a plan of size ops x devices:
 * split's SPLIT_UNITS (10) per materialised op; dp-best simulates each
 * device set at most twice, then its winner with buckets. */
static double judge_units(const Cand *k, double size, int nsets)
{
	return 10 * size * (k->sf == place_dp_best ? 2.0 * nsets + 1 : 1);
}

/* Above place<portfolio> (full ops x devices): the cheap candidates of
 * cands[0..nc), each costing judge_units of size (ops x the replicas a
 * data-parallel plan can have), in place — the search's plan first, then
 * the strategies (the baselines), then that plan with buckets when the
 * search modelled them, then its
 * other plans — as many as --search-work's units allow (the search's
 * plan always).  Returns their count. */
static int cheap_candidates(PassCtx *ctx, const TaskGraph *t, Cand *cands,
			    int nc, double full, double size, bool bucket)
{
	int nsets;
	DevSet *ds = plan_devsets(t, ctx->scratch, &nsets);
	plan_devsets_free(ds, nsets);
	Cand *v = xmalloc(sizeof(Cand) * ((size_t)nc + 1));
	int kept = 0;
	double units = 0;
	for (int pass = 0; pass < 4; pass++)
		for (int k = 0; k < nc; k++) {
			bool own = k > 0 && cands[k].st == cands[0].st &&
				   cands[k].bucket == bucket;
			int cat = k == 0 ? 0 : cands[k].sf ? 1 : own ? 2 : 3;
			double u = judge_units(&cands[k], size, nsets);
			if (cat != pass || (!cands[k].st && !cands[k].sf) ||
			    (kept && units + u > ctx->search_work))
				continue;
			units += u;
			v[kept++] = cands[k];
		}
	if (ctx->report)
		fprintf(ctx->report, "place<algo=hybrid>: %.6g ops x devices > "
			"portfolio=%g: judging %d of %d candidates (%.3g work units)\n",
			full, pass_opt_num(ctx, "portfolio"), kept, nc, units);
	memcpy(cands, v, sizeof(Cand) * (size_t)kept);
	free(v);
	return kept;
}

/* The model-parallel start: adjusting's placement (else dpos's, else
 * single's) in mp; its name. */
static const char *mp_start(PassCtx *ctx, const TaskGraph *t, int *mp)
{
	static const char *const names[] = {"adjusting", "dpos", "single"};
	for (int i = 0; i < 3; i++) {
		PlacerFn f = placer_find(names[i]);
		if (f) {
			PlaceOpts po = {true, ctx->seed, NULL, ctx->scratch};
			f(t, &po, mp);
			return names[i];
		}
	}
	return "single";
}

/* The search's start in st: the best by the strategy simulator of every
 * replica set as a whole-model start (data parallelism over all devices,
 * by speed, over one machine, one type: TAG's partial replication; groups
 * that cannot be split run on the set's fastest device) and the
 * model-parallel start mp.  Returns its estimate. */
static double whole_model_start(PlanSim *ps, const TaskGraph *t,
				const int *mp, int *st)
{
	uint32_t n = t->n;
	int *trial = xmalloc(sizeof(int) * ((size_t)n + 1));
	double best = INFINITY;
	bool oom;
	for (int k = 0; k < ps->nsets; k++) {
		const RepSet *rs = &ps->sets[k];
		int home = rs->dev[0];
		for (int i = 1; i < rs->n; i++) {
			double a = 0, b2 = 0;
			for (uint32_t v = 0; v < n; v++) {
				a += tg_cost(t, v, rs->dev[i]);
				b2 += tg_cost(t, v, home);
			}
			if (a < b2)
				home = rs->dev[i];
		}
		for (uint32_t v = 0; v < n; v++)
			trial[v] = t->pinned[v] >= 0 ? t->pinned[v]
				 : ps->splittable[v] ? t->ndev + k : home;
		double x = ps_eval(ps, trial, &oom);
		if (x < best) {
			best = x;
			memcpy(st, trial, sizeof(int) * n);
		}
	}
	free(trial);
	double xmp = ps_eval(ps, mp, &oom);
	if (xmp < best) {
		best = xmp;
		memcpy(st, mp, sizeof(int) * n);
	}
	return best;
}

/* The strategy simulator's estimate of candidate k, where k is a
 * strategy of the task graph's nodes (the search's plans, one device,
 * a model-parallel placer on the groups): NAN otherwise.  For -v. */
static double estimate(PassCtx *ctx, const TaskGraph *t, PlanSim *ps,
		       const Cand *k)
{
	int *dev = NULL;
	const int *st = k->st;
	if (!st && k->mp && (!k->mt || k->mt == t)) {
		dev = xcalloc((size_t)t->n + 1, sizeof(int));
		PlaceOpts po = {true, ctx->seed, NULL, ctx->scratch};
		int rc = k->mp(t, &po, dev);
		st = rc == EXIT_OK || rc == EXIT_INFEASIBLE ? dev : NULL;
	}
	double x = NAN;
	if (st) {
		bool b = ps->bucket, oom;
		ps->bucket = k->bucket;
		ps_eval(ps, st, &oom);
		x = ps->span;
		ps->bucket = b;
	}
	free(dev);
	return x;
}

/* Judges cands[0..nc) by plan_evaluate (-v: each one's simulated time)
 * and returns the best (plan_better); *bover its overflow (1: fits),
 * bpeaks its per-device peaks, *hsim the time of the search's own plan
 * as it estimated it (with buckets at -O2). */
static int judge_all(PassCtx *ctx, const TaskGraph *t, PlanSim *ps,
		     const Cand *cands, int nc, double *bpeaks, double *bover,
		     double *hsim)
{
	double *peaks = xcalloc((size_t)t->ndev + 1, sizeof(double));
	double bspan = INFINITY;
	int chosen = 0;
	*bover = INFINITY;
	for (int k = 0; k < nc; k++) {
		bool koom;
		double over;
		double x = judge(ctx, t, ps, &cands[k], &koom, &over, peaks);
		if (ctx->judged && isfinite(x))
			sim_judged_add(ctx->judged, cands[k].name, x, koom,
				       peaks, t->ndev);
		if (ctx->report) {
			pass_progress_clear(ctx);
			double e = estimate(ctx, t, ps, &cands[k]);
			fprintf(ctx->report, "  %-12s %.6g s%s (simulated",
				cands[k].name, x, koom ? ", out of memory" : "");
			if (isfinite(e))
				fprintf(ctx->report, "; estimated %.6g s", e);
			fputs(")\n", ctx->report);
		}
		if (cands[k].st == cands[0].st && cands[k].bucket == ps->bucket)
			*hsim = x;       /* the plan the search estimated */
		if (plan_better(x, koom, over, bspan, *bover)) {
			if (ctx->judged)
				ctx->judged->chosen = ctx->judged->n - 1;
			chosen = k;
			bspan = x;
			*bover = koom ? over : 1;
			memcpy(bpeaks, peaks, sizeof(double) * (size_t)t->ndev);
		}
		pass_progress(ctx, "judging candidate plans", "simulated", k + 1,
			      nc, bspan);
	}
	free(peaks);
	return chosen;
}

/* The greedy phase's evaluation budget (evals) and the local search's
 * (--search-work, or ten times an explicit evals=N); *work: the units
 * of one evaluation, its edges and group replicas. */
static void budgets(const PassCtx *ctx, const PlanSim *ps, uint32_t n,
		    long *max_evals, long *max_local, double *work)
{
	*work = (double)ps->in_start[n] + 1;
	for (uint32_t v = 0; v < n; v++)
		*work += ps->splittable[v] ? ps->maxrep : 1;
	*max_local = (long)fmin(ctx->search_work / *work, 1e9);
	*max_evals = (long)pass_opt_int(ctx, "evals");
	if (strcmp(pass_opt(ctx, "evals"), "auto") == 0) {
		/* about 4e6 node-replica steps of search, whatever the size
		 * (a few hundred ms here), at least 300 evaluations */
		*max_evals = (long)(4e6 / *work);
		*max_evals = *max_evals < 300 ? 300 : *max_evals > 20000 ? 20000
			   : *max_evals;
	} else {
		*max_local = 10 * *max_evals;
	}
}

/* The search's plan in st, from its start (search), with its estimate
 * before and after (the report's figures). */
typedef struct Search {
	int *st, *mp;            /* [n]: the plan; the model-parallel start */
	const char *mpname;
	double start, greedy, best;
} Search;

/* Starting points: a model-parallel placement, and data parallelism over
 * each replica set; then greedy improvement and (-O2) the local search.
 * -O2 also judges the search's plan with DDP's gradient buckets
 * ("hybrid+buckets"): the search models them when its best start is
 * faster so. */
static void search(PassCtx *ctx, PlanSim *ps, const TaskGraph *t, bool o2,
		   Search *s)
{
	uint32_t n = t->n;
	long max_evals, max_local;
	double work;
	budgets(ctx, ps, n, &max_evals, &max_local, &work);
	double t0 = pcc_now();
	s->mp = xcalloc((size_t)n + 1, sizeof(int));
	s->mpname = mp_start(ctx, t, s->mp);
	s->st = xmalloc(sizeof(int) * ((size_t)n + 1));
	s->start = whole_model_start(ps, t, s->mp, s->st);
	if (o2) {
		int *bst = xmalloc(sizeof(int) * ((size_t)n + 1));
		ps->bucket = true;
		double bstart = whole_model_start(ps, t, s->mp, bst);
		if (bstart < s->start) {
			s->start = bstart;
			memcpy(s->st, bst, sizeof(int) * n);
		} else {
			ps->bucket = false;
		}
		free(bst);
	}
	s->best = s->greedy = greedy(ps, s->st, s->start, max_evals);
	if (o2) {
		bool cut;
		long e0 = ps->evals;
		s->best = local_search(ps, s->st, s->best, ctx, t0, e0 + max_local,
				       ctx->seed, &cut);
		if (cut)
			search_cut_warn(ctx, (double)(ps->evals - e0) * work,
					(double)max_local * work);
	}
}

/* Writes candidate c on the graph, or reports that no plan fits (peaks:
 * its per-device memory, simulated when sim); hsim: the search's own
 * plan simulated (NAN: not judged). */
static int finish(PassCtx *ctx, PlanSim *ps, const TaskGraph *t,
		  const Search *s, const Cand *c, bool infeasible,
		  const double *peaks, bool sim, double hsim)
{
	if (infeasible && !ctx->best_effort) {
		fprintf(stderr,
			"pcc: error: place<algo=hybrid>: no plan fits in the memory of "
			"cluster '%s'\n", t->c->name);
		mem_report(t, peaks, c->name, sim);
		fputs("pcc: note: --best-effort places it anyway\n", stderr);
		return EXIT_INFEASIBLE;
	}
	int rc = apply(ctx, ctx->g, t, ps, c);
	/* How well the strategy simulator tracked the full simulation: its
	 * time, without the penalty of a plan it finds over memory. */
	bool eoom;
	ps_eval(ps, s->st, &eoom);
	if (ctx->report && isfinite(hsim) && hsim > 0)
		fprintf(ctx->report, "place<algo=hybrid>: estimate error "
			"%+.1f%% (estimated %.6g s%s, simulated %.6g s)\n",
			100 * (ps->span - hsim) / hsim, ps->span,
			eoom ? ", over memory" : "", hsim);
	if (ctx->report)
		fprintf(ctx->report,
			"place<algo=hybrid>: %u groups, %d replica sets, %ld "
			"evaluations; estimated %.6g s from %.6g s (greedy "
			"%.6g s); chose %s\n", t->n, ps->nsets, ps->evals, s->best,
			s->start, s->greedy, c->name);
	return rc;
}

int place_hybrid(PassCtx *ctx, const TaskGraph *t)
{
	Graph *g = ctx->g;
	BatchInfo b;
	batch_analyze(g, &b);
	PlanSim *ps = ps_new(g, t, ctx->cost, &b);
	ps->ctx = ctx;
	bool o2 = strcmp(pass_opt(ctx, "search"), "local") == 0;
	Search s;
	search(ctx, ps, t, o2, &s);

	/* The final judge: the full simulator on materialised plans.
	 * Materialised size: data parallelism replicates (nearly) every op
	 * on every device.  Up to `portfolio`, every candidate is judged;
	 * up to CHEAP_JUDGE times that, the cheap ones: the search's plans,
	 * its model-parallel start and the data-parallel strategies (the
	 * baselines -O2 must never lose to), within --search-work
	 * (cheap_candidates); beyond, the strategy simulator alone
	 * decides. */
	double live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	double size = live * t->ndev;
	/* A data-parallel baseline has no more replicas than samples
	 * (place_dp keeps at most batch devices): what judging one costs
	 * where the devices outnumber the batch. */
	double dpsize = live * (b.batch >= 1 && (double)b.batch < t->ndev
				? (double)b.batch : t->ndev);
	double limit = pass_opt_num(ctx, "portfolio");
	bool full = size <= limit, cheap = dpsize <= CHEAP_JUDGE * limit;
	TaskGraph *ops = NULL;
	if (o2 && full && t->nops && t->n < t->nops)
		ops = tg_from_graph(g, ctx->cost, false, ctx->diag);
	Cand *cands;
	int nc = candidates(ctx, t, ops, o2, s.st, s.mp, s.mpname, &cands);
	if (!full && cheap)
		nc = cheap_candidates(ctx, t, cands, nc, size, dpsize, ps->bucket);
	int chosen = 0;
	if (o2 && full) {
		/* Pipeline parallelism (place_pipeline.c): its own search, once,
		 * on a copy of the graph; judged here like every other
		 * candidate. */
		PassCtx pc = *ctx;
		pc.g = ps->pipe = graph_clone(g);
		pc.report = NULL;
		pc.best_effort = true;
		if (place_pipeline_quiet(&pc, t) == EXIT_OK)
			cands[nc++] = (Cand){"pipeline", NULL, NULL, NULL, NULL, false};
	}
	double *bpeaks = xcalloc((size_t)t->ndev + 1, sizeof(double));
	bool infeasible = false;
	if (ctx->judged)
		sim_judged_free(ctx->judged);
	double hsim = NAN;       /* the hybrid's own plan, simulated */
	bool sim = cheap;        /* bpeaks simulated, not estimated */
	if (cheap) {
		double bover;
		chosen = judge_all(ctx, t, ps, cands, nc, bpeaks, &bover, &hsim);
		infeasible = bover > 1;
	} else {
		/* Too large to judge every candidate: the strategy
		 * simulator's estimate decides, but not alone whether its
		 * plan fits.  Its memory estimate is close, not exact (it
		 * counts every saved tensor and gradient at once, the
		 * simulator as the schedule holds them; a search that packs
		 * a device to the brim found plans 3.5 % over), so a plan it
		 * finds over memory or within NEAR_MEM of a device's, and
		 * the model-parallel start, are simulated in full (one
		 * materialisation each) and the faster that fits is kept. */
		bool oom2;
		ps_eval(ps, s.st, &oom2);
		infeasible = oom2;
		double fullest = 0;
		int dfull = 0;
		for (int d = 0; d < t->ndev; d++) {
			bpeaks[d] = ps_mem(ps, d);
			double f = bpeaks[d] / tg_mem_cap(t, d);
			if (f > fullest) {
				fullest = f;
				dfull = d;
			}
		}
		if (oom2 || fullest > NEAR_MEM) {
			if (ctx->report && !oom2)
				fprintf(ctx->report, "place<algo=hybrid>: the "
					"estimate fills %.1f%% of %s's memory: "
					"simulating\n", 100 * fullest,
					t->c->devs[dfull].name);
			double bover;
			int two = nc < 2 || !memcmp(s.st, s.mp, sizeof(int) * t->n)
				  ? 1 : 2;   /* the start unchanged: once */
			chosen = judge_all(ctx, t, ps, cands, two, bpeaks, &bover,
					   &hsim);
			infeasible = bover > 1;
			sim = true;
		}
	}
	int rc = finish(ctx, ps, t, &s, &cands[chosen], infeasible, bpeaks, sim, hsim);
	free(bpeaks);
	free(cands);
	if (ops)
		tg_free(ops);
	free(s.mp);
	free(s.st);
	ps_free(ps);
	batch_free(&b);
	return rc;
}
