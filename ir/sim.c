/* sim.c — discrete-event simulation of one training iteration of a placed
 * graph (docs/simulator.md).
 *
 * Like the simulators of TAG §4.3.2 and HeteroG §5: each device runs one
 * op at a time, taking ops from a FIFO ready queue (TensorFlow's executor)
 * or, when the plan carries @order, in that order; a tensor consumed on
 * another device is sent once per (output, destination device) over the
 * link resources on its path (a directed intra-machine link, or the
 * sender machine's NIC-out plus the receiver machine's NIC-in), FIFO per
 * resource; memory is tracked per device with reference counting and the
 * peak is recorded (HeteroG's OOM check).
 *
 * Every resource serves its work in the order the work becomes ready, so a
 * job's start is decided when it becomes ready: start = max(ready, time the
 * resource frees); but a send from a device whose type has 'sends: idle'
 * becomes ready for its links only when that device has nothing ready to
 * run (an idle check after the readies of each moment).  Events (op
 * ready/start/finish, transfer start/done) are processed in time order
 * from a binary heap: O((V + E) log V), no recursion. */
#include "ir.h"
#include "simroute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	EV_OP_FINISH,            /* frees before allocations at equal times */
	EV_X_DONE,
	EV_OP_READY,
	EV_DEV_WAKE,             /* list scheduling: choose after all readies */
	EV_DEV_IDLE,             /* 'sends: idle': is the device idle now? */
	EV_X_START,
	EV_OP_START,
};

/* Events are ordered by time, then kind, then op: tie = kind << 32 | id. */
static void push_ev(Heap *h, double t, uint32_t kind, uint32_t id)
{
	heap_push(h, t, (uint64_t)kind << 32 | id, id);
}

/* One tensor sent implicitly from op u's output k to device dst (an edge
 * between devices without a Transfer op). */
typedef struct Xfer {
	uint32_t u, k;
	int src, dst;
	int res[2], nres;        /* link resources held for the duration */
	double bytes, dur;
	double start, finish;
	uint32_t cons, ncons;    /* consumer ops (one per input slot) in xcons */
	uint32_t ref;            /* consumer slots that have not finished */
} Xfer;

typedef struct Remote {
	uint32_t k;
	int dst;
	uint32_t c, slot;
} Remote;

static int remote_cmp(const void *pa, const void *pb)
{
	const Remote *a = pa, *b = pb;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	if (a->c != b->c)
		return a->c < b->c ? -1 : 1;
	return a->slot < b->slot ? -1 : a->slot > b->slot;
}

enum { K_COMPUTE, K_XFER, K_COLL };

/* One collective: the AllReduce ops sharing a key. */
typedef struct Coll {
	int64_t key;
	uint32_t first, n;       /* members in cmem[first .. first + n) */
	uint32_t arrived;
	double t;                /* latest arrival */
	double dur, bytes;
	int *links;              /* link resources of the ring */
	int nlinks;
} Coll;

/* Resources: [0, ndev) device compute, [ndev, 2 ndev) collective streams,
 * [rl, nres) links (overrides, NICs out, NICs in, then the intra-machine
 * device pairs the plan uses, numbered as routes first use them: a
 * machine of n devices has n^2 pairs, 16M at 4096, far more than any
 * plan uses).  Links are listed (collect_links) in the dense order:
 * overrides, pairs by (machine, source, destination), NICs. */
typedef struct Sim {
	Graph *g;
	const CostModel *m;
	const Cluster *c;
	SimResult *r;
	int ndev;
	/* per op */
	uint8_t *kind;
	double *dur, *ws, *rtime;
	uint32_t *pending;
	bool *resident;
	int *res0, *res1;        /* resources an op holds; -1: none */
	uint32_t *coll_of;       /* collective index, or UINT32_MAX */
	uint32_t *outbase, *inbase;
	uint32_t *xbase;         /* transfers of op u: xbase[u] .. xbase[u+1] */
	/* per output (outbase[u] + k) */
	uint32_t *ref;
	double *obytes;
	/* per input slot (inbase[c] + j): the transfer that delivers it */
	uint32_t *slot_x;
	Xfer *x;
	uint32_t nx;
	uint32_t *xcons;
	/* collectives */
	Coll *coll;
	uint32_t ncoll, *cmem;
	/* per device */
	double *mem;
	/* per resource */
	int nres, rl;
	double *res_free, *res_busy, *res_bytes;
	uint32_t *res_used;
	bool *ordered, *blocked;
	uint32_t *seq, *seq_start, *seq_pos;
	bool *ready;
	int r_ovr, r_pair, r_out, r_in;   /* link layout, relative to rl */
	RouteTab rt;             /* the cluster's routes (simroute.h) */
	/* the pairs in use: dense key -> r_pair + index (open addressing) */
	int64_t *pair_key;       /* [npairs]: dense key of each */
	struct PairSlot { int64_t key; int idx; } *pair_tab;
	int npairs, pair_cap;
	Heap h;
	/* list scheduling (sim_run_prio) */
	const double *prio;
	Heap *rq;                /* per device: ready ops by priority */
	bool *running;           /* per device */
	bool *waking;            /* per device: a wake-up event is queued */
	uint32_t nseq;
	/* 'sends: idle' (docs/simulator.md): per device, the sends waiting
	 * for its compute to have nothing ready, in the order they became
	 * ready: a list through snext of items, a Transfer op's id or
	 * g->nops + an implicit transfer's index. */
	uint32_t *shead, *stail, *snext;
	bool *idle_q;            /* per device: an idle check is queued */
	/* per device: compute ops given a start whose finish has not been
	 * handled; a zero-time op (a Reshape) keeps its device busy until
	 * then, as its successors are about to be ready */
	uint32_t *inflight;
	/* A device type's 'launch' (docs/simulator.md): per op, the host's
	 * time to launch it; per device, when its host has launched every
	 * op the device has started (NULL when no type gives one) */
	double *launch, *host;
} Sim;

/* ---- device names ------------------------------------------------------ */

typedef struct DevTab {
	int *slot;
	uint32_t cap;
} DevTab;

static void devtab_init(DevTab *t, const Cluster *c)
{
	t->cap = 16;
	while (t->cap < 2 * (uint32_t)c->ndevs)
		t->cap *= 2;
	t->slot = xmalloc(sizeof(int) * t->cap);
	for (uint32_t i = 0; i < t->cap; i++)
		t->slot[i] = -1;
	for (int d = 0; d < c->ndevs; d++) {
		const char *n = c->devs[d].name;
		uint32_t h = (uint32_t)hash_bytes(n, strlen(n)) & (t->cap - 1);
		while (t->slot[h] >= 0)
			h = (h + 1) & (t->cap - 1);
		t->slot[h] = d;
	}
}

static int devtab_find(const DevTab *t, const Cluster *c, const char *n)
{
	uint32_t h = (uint32_t)hash_bytes(n, strlen(n)) & (t->cap - 1);
	for (; t->slot[h] >= 0; h = (h + 1) & (t->cap - 1))
		if (strcmp(c->devs[t->slot[h]].name, n) == 0)
			return t->slot[h];
	return -1;
}

/* ---- helpers ------------------------------------------------------------ */

static void mem_add(Sim *s, int d, double b)
{
	s->mem[d] += b;
	if (s->mem[d] > s->r->peak_mem[d])
		s->r->peak_mem[d] = s->mem[d];
}

static void mem_sub(Sim *s, int d, double b)
{
	s->mem[d] -= b;
}

/* The resource of the pair with dense key k (numbered on first use). */
static int pair_res(Sim *s, int64_t k)
{
	if (2 * (s->npairs + 1) > s->pair_cap) {
		struct PairSlot *old = s->pair_tab;
		int oldcap = s->pair_cap;
		s->pair_cap = oldcap ? 2 * oldcap : 64;
		s->pair_tab = xmalloc(sizeof *s->pair_tab * (size_t)s->pair_cap);
		for (int i = 0; i < s->pair_cap; i++)
			s->pair_tab[i].idx = -1;
		s->pair_key = xrealloc(s->pair_key,
				       sizeof(int64_t) * (size_t)s->pair_cap);
		for (int i = 0; i < oldcap; i++)
			if (old[i].idx >= 0) {
				uint32_t m = (uint32_t)s->pair_cap - 1;
				uint32_t h = (uint32_t)((uint64_t)old[i].key * 0x9E3779B97F4A7C15u >> 32) & m;
				while (s->pair_tab[h].idx >= 0)
					h = (h + 1) & m;
				s->pair_tab[h] = old[i];
			}
		free(old);
	}
	uint32_t m = (uint32_t)s->pair_cap - 1;
	uint32_t h = (uint32_t)((uint64_t)k * 0x9E3779B97F4A7C15u >> 32) & m;
	for (;; h = (h + 1) & m) {
		if (s->pair_tab[h].idx < 0) {
			s->pair_tab[h] = (struct PairSlot){k, s->npairs};
			s->pair_key[s->npairs] = k;
			return s->r_pair + s->npairs++;
		}
		if (s->pair_tab[h].key == k)
			return s->r_pair + s->pair_tab[h].idx;
	}
}

void route_tab_init(RouteTab *t, const Cluster *c)
{
	t->pairbase = xmalloc(sizeof(int64_t) * (size_t)(c->nmachines + 1));
	t->local = xmalloc(sizeof(int) * (size_t)(c->ndevs ? c->ndevs : 1));
	int *cnt = xcalloc((size_t)c->nmachines + 1, sizeof(int));
	t->mcount = xcalloc((size_t)c->nmachines + 1, sizeof(int));
	for (int d = 0; d < c->ndevs; d++)
		t->local[d] = cnt[c->devs[d].machine]++;
	int64_t pairs = 0;
	for (int mi = 0; mi < c->nmachines; mi++) {
		t->pairbase[mi] = pairs;
		int n = c->machines[mi].count > cnt[mi] ? c->machines[mi].count
							: cnt[mi];
		t->mcount[mi] = n;
		pairs += (int64_t)n * n;
	}
	free(cnt);
	t->npairs = pairs;
}

void route_tab_free(RouteTab *t)
{
	free(t->pairbase);
	free(t->local);
	free(t->mcount);
}

int route_hops(const Cluster *c, const RouteTab *t, int a, int b,
	       Hop hop[2])
{
	Route r = cluster_route(c, a, b);
	switch (r.kind) {
	case ROUTE_LOCAL:
		return 0;
	case ROUTE_LINK:
		hop[0] = (Hop){HOP_LINK, 2 * r.link + r.dir};
		return 1;
	case ROUTE_PAIR:
		hop[0] = (Hop){HOP_PAIR, t->pairbase[r.ma] +
				(int64_t)t->local[a] * t->mcount[r.ma] + t->local[b]};
		return 1;
	case ROUTE_NET:
		break;
	}
	hop[0] = (Hop){HOP_OUT, r.ma};
	hop[1] = (Hop){HOP_IN, r.mb};
	return 2;
}

/* Link resources (absolute ids) of a transfer a -> b. */
static void route(Sim *s, int a, int b, int *res, int *n)
{
	Hop hop[2];
	*n = route_hops(s->c, &s->rt, a, b, hop);
	for (int i = 0; i < *n; i++) {
		int64_t x = hop[i].idx;
		res[i] = s->rl + (hop[i].kind == HOP_LINK ? s->r_ovr + (int)x
				  : hop[i].kind == HOP_PAIR ? pair_res(s, x)
				  : hop[i].kind == HOP_OUT ? s->r_out + (int)x
				  : s->r_in + (int)x);
	}
}

static double res_ready(const Sim *s, int r, double t)
{
	return r >= 0 && s->res_free[r] > t ? s->res_free[r] : t;
}

static void res_hold(Sim *s, int r, double finish, double dur, double bytes)
{
	if (r < 0)
		return;
	s->res_free[r] = finish;
	s->res_busy[r] += dur;
	s->res_bytes[r] += bytes;
	s->res_used[r]++;
}

static void advance(Sim *s, int r);

/* Whether a collective on collective stream r also holds the compute of
 * its device (the device type's 'collectives: blocking'). */
static bool coll_blocks(const Sim *s, int r)
{
	return r >= s->ndev && r < 2 * s->ndev &&
	       s->c->types[s->c->devs[r - s->ndev].type].coll_blocking;
}

/* Every member of collective c has arrived: start them together. */
static void coll_start(Sim *s, Coll *c)
{
	double st = c->t;
	for (uint32_t j = 0; j < c->n; j++) {
		int r = s->res0[s->cmem[c->first + j]];
		st = res_ready(s, r, st);
		/* A blocking device's compute waits for the collective too. */
		if (coll_blocks(s, r))
			st = res_ready(s, r - s->ndev, st);
	}
	for (int l = 0; l < c->nlinks; l++)
		st = res_ready(s, c->links[l], st);
	double fin = st + c->dur;
	for (int l = 0; l < c->nlinks; l++)
		res_hold(s, c->links[l], fin, c->dur,
			 2.0 * (c->n - 1) / c->n * c->bytes);
	for (uint32_t j = 0; j < c->n; j++) {
		uint32_t i = s->cmem[c->first + j];
		int r = s->res0[i];
		s->res_free[r] = fin;
		s->res_busy[r] += c->dur;
		if (coll_blocks(s, r))
			s->res_free[r - s->ndev] = fin;
		s->r->start[i] = st;
		s->r->finish[i] = fin;
		s->r->seq[i] = s->nseq++;
		push_ev(&s->h, st, EV_OP_START, i);
	}
	for (uint32_t j = 0; j < c->n; j++) {
		int r = s->res0[s->cmem[c->first + j]];
		if (s->blocked[r]) {
			s->blocked[r] = false;
			advance(s, r);
		}
	}
}

/* Op i may run from time t: reserve its resources (or, for a collective
 * member, arrive and wait for the others). */
static void dispatch(Sim *s, uint32_t i, double t)
{
	s->r->seq[i] = s->nseq++;
	if (s->kind[i] == K_COLL) {
		s->nseq--;               /* numbered when the collective starts */
		Coll *c = &s->coll[s->coll_of[i]];
		c->t = t > c->t ? t : c->t;
		if (s->ordered[s->res0[i]])
			s->blocked[s->res0[i]] = true;
		if (++c->arrived == c->n)
			coll_start(s, c);
		return;
	}
	int r0 = s->res0[i], r1 = s->res1[i];
	double st = res_ready(s, r1, res_ready(s, r0, t));
	if (s->host && s->kind[i] == K_COMPUTE && s->launch[i] > 0) {
		/* The host launches the device's ops one after another
		 * from time 0, never waiting for the device: an op starts
		 * once its launch is done too. */
		s->host[r0] += s->launch[i];
		st = st > s->host[r0] ? st : s->host[r0];
	}
	double fin = st + s->dur[i];
	s->r->start[i] = st;
	s->r->finish[i] = fin;
	if (s->kind[i] == K_COMPUTE) {
		s->res_free[r0] = fin;
		s->r->busy[r0] += s->dur[i];
		s->inflight[r0]++;
	} else {
		double b = s->obytes[s->outbase[i]];
		res_hold(s, r0, fin, s->dur[i], b);
		res_hold(s, r1, fin, s->dur[i], b);
	}
	push_ev(&s->h, st, EV_OP_START, i);
}

/* @order mode: dispatch resource r's next ops while they are ready. */
static void advance(Sim *s, int r)
{
	uint32_t end = s->seq_start[r + 1];
	while (!s->blocked[r] && s->seq_pos[r] < end &&
	       s->ready[s->seq[s->seq_pos[r]]]) {
		uint32_t i = s->seq[s->seq_pos[r]++];
		dispatch(s, i, s->rtime[i]);
	}
}

/* List scheduling: device d is free at t; run its best ready op. */
static void run_next(Sim *s, int d, double t)
{
	if (s->running[d] || !s->rq[d].n)
		return;
	HeapItem e;
	heap_pop(&s->rq[d], &e);
	s->running[d] = true;
	dispatch(s, e.id, t);
}

/* Op i is ready at t and goes to its resource. */
static void op_go(Sim *s, uint32_t i, double t)
{
	int r = s->res0[i];
	if (s->prio && s->kind[i] == K_COMPUTE) {
		/* Highest priority first, ties by op id. */
		heap_push(&s->rq[r], -s->prio[i], i, i);
		if (!s->running[r] && !s->waking[r]) {
			s->waking[r] = true;
			push_ev(&s->h, t, EV_DEV_WAKE, (uint32_t)r);
		}
		return;
	}
	if (r < 0 || !s->ordered[r]) {
		dispatch(s, i, t);
		return;
	}
	s->ready[i] = true;
	s->rtime[i] = t;
	advance(s, r);
}

/* Whether tensors sent from device d wait for its compute to idle. */
static bool sends_idle(const Sim *s, int d)
{
	return d >= 0 && s->c->types[s->c->devs[d].type].sends_idle;
}

/* Queues a send (item: a Transfer op, or g->nops + an implicit transfer)
 * from device d until d's compute has nothing ready. */
static void send_wait(Sim *s, int d, uint32_t item, double t)
{
	s->snext[item] = UINT32_MAX;
	if (s->shead[d] == UINT32_MAX)
		s->shead[d] = item;
	else
		s->snext[s->stail[d]] = item;
	s->stail[d] = item;
	if (!s->idle_q[d]) {
		s->idle_q[d] = true;
		push_ev(&s->h, t, EV_DEV_IDLE, (uint32_t)d);
	}
}

static void xfer_go(Sim *s, uint32_t x, double t);

/* The idle check of device d at t: every op that became ready by t has
 * been given its start (EV_DEV_IDLE follows readies and wake-ups), so d
 * is idle when nothing runs on it past t and no op given a start has
 * yet to finish (a zero-time op that starts at t finishes at t, and
 * its successors are ready then); then its waiting sends leave.  Else
 * the finish of its running op checks again. */
static void dev_idle(Sim *s, int d, double t)
{
	s->idle_q[d] = false;
	if (s->res_free[d] > t || s->inflight[d])
		return;
	uint32_t item = s->shead[d];
	s->shead[d] = UINT32_MAX;
	while (item != UINT32_MAX) {
		uint32_t next = s->snext[item];
		if (item < s->g->nops)
			op_go(s, item, t);
		else
			xfer_go(s, item - s->g->nops, t);
		item = next;
	}
}

static void op_ready(Sim *s, uint32_t i, double t)
{
	if (s->kind[i] == K_XFER) {
		int src = s->r->dev[s->g->ops[i]->in[0].src->id];
		if (sends_idle(s, src)) {
			send_wait(s, src, i, t);
			return;
		}
	}
	op_go(s, i, t);
}

static void dec_pending(Sim *s, uint32_t i, double t)
{
	if (--s->pending[i] == 0)
		push_ev(&s->h, t, EV_OP_READY, i);
}

static void release_out(Sim *s, uint32_t u, uint32_t k)
{
	uint32_t o = s->outbase[u] + k;
	if (--s->ref[o] == 0 && !s->resident[u])
		mem_sub(s, s->r->dev[u], s->obytes[o]);
}

/* Does the edge from a producer on device d to consumer c stay local
 * (no implicit transfer)?  A Transfer op moves its input itself. */
static bool local_edge(const Sim *s, int d, const Op *c)
{
	return s->r->dev[c->id] == d || s->kind[c->id] == K_XFER;
}

static void op_finish(Sim *s, uint32_t i, double t)
{
	Graph *g = s->g;
	const Op *op = g->ops[i];
	int d = s->r->dev[i];
	for (uint32_t j = 0; j < op->nin; j++) {
		const Input *in = &op->in[j];
		if (in->ctrl)
			continue;
		uint32_t x = s->slot_x[s->inbase[i] + j];
		if (x == UINT32_MAX) {
			release_out(s, in->src->id, in->idx);
		} else if (--s->x[x].ref == 0) {
			mem_sub(s, d, s->x[x].bytes);
		}
	}
	if (!s->resident[i])
		for (uint32_t k = 0; k < op->nout; k++)
			if (s->ref[s->outbase[i] + k] == 0)
				mem_sub(s, d, s->obytes[s->outbase[i] + k]);
	mem_sub(s, d, s->ws[i]);
	const Uses *us = graph_uses(g);
	for (uint32_t k = us->start[i]; k < us->start[i + 1]; k++) {
		const Use *u = &us->use[k];
		if (u->op->in[u->slot].ctrl || local_edge(s, d, u->op))
			dec_pending(s, u->op->id, t);
	}
	for (uint32_t x = s->xbase[i]; x < s->xbase[i + 1]; x++) {
		if (sends_idle(s, d))
			send_wait(s, d, g->nops + x, t);
		else
			xfer_go(s, x, t);
	}
	if (d >= 0 && s->shead[d] != UINT32_MAX && !s->idle_q[d]) {
		s->idle_q[d] = true;
		push_ev(&s->h, t, EV_DEV_IDLE, (uint32_t)d);
	}
}

/* Implicit transfer x leaves from t, when its links are free. */
static void xfer_go(Sim *s, uint32_t x, double t)
{
	Xfer *xf = &s->x[x];
	double st = t;
	for (int r = 0; r < xf->nres; r++)
		st = res_ready(s, xf->res[r], st);
	xf->start = st;
	xf->finish = st + xf->dur;
	for (int r = 0; r < xf->nres; r++)
		res_hold(s, xf->res[r], xf->finish, xf->dur, xf->bytes);
	push_ev(&s->h, st, EV_X_START, x);
}

/* ---- setup -------------------------------------------------------------- */

static int check_placement(Sim *s, Diag *d)
{
	Graph *g = s->g;
	int errs = 0;
	DevTab tab;
	devtab_init(&tab, s->c);
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		s->r->dev[i] = -1;
		if (op->dead)
			continue;
		const char *name = op_ann_str(g, op, ANN_DEVICE);
		if (!name) {
			diag_error(d, op->loc, "op '%s' is not placed (no @device)",
				   op->name);
			errs++;
			continue;
		}
		int dev = devtab_find(&tab, s->c, name);
		if (dev < 0) {
			diag_error(d, op->loc, "op '%s': unknown device '%s'",
				   op->name, name);
			errs++;
			continue;
		}
		s->r->dev[i] = dev;
	}
	free(tab.slot);
	return errs;
}

static void setup_resources(Sim *s)
{
	const Cluster *c = s->c;
	route_tab_init(&s->rt, c);
	s->rl = 2 * s->ndev;
	s->r_ovr = 0;
	s->r_out = 2 * c->nlinks;
	s->r_in = s->r_out + c->nmachines;
	s->r_pair = s->r_in + c->nmachines;
	s->nres = s->rl + s->r_pair; /* the pairs join as routes use them */
}

/* The per-resource state, once every route is known (setup_order). */
static void setup_res_state(Sim *s)
{
	s->nres = s->rl + s->r_pair + s->npairs;
	size_t n = (size_t)s->nres + 1;
	s->res_free = xcalloc(n, sizeof(double));
	s->res_busy = xcalloc(n, sizeof(double));
	s->res_bytes = xcalloc(n, sizeof(double));
	s->res_used = xcalloc(n, sizeof(uint32_t));
}

/* Link resource r's place in the dense order (links, pairs, NICs). */
static int64_t res_dense(const Sim *s, int r)
{
	r -= s->rl;
	if (r < s->r_out)
		return r;
	if (r >= s->r_pair)
		return s->r_out + s->pair_key[r - s->r_pair];
	return s->r_out + s->rt.npairs + (r - s->r_out);
}

/* Name of link resource r (absolute id); malloc'd. */
static char *res_name(const Sim *s, int r)
{
	const Cluster *c = s->c;
	char buf[512];
	r -= s->rl;
	if (r < s->r_out) {
		const LinkOverride *o = &c->links[r / 2];
		int a = r % 2 ? o->b : o->a, b = r % 2 ? o->a : o->b;
		snprintf(buf, sizeof buf, "%s->%s", c->devs[a].name,
			 c->devs[b].name);
	} else if (r >= s->r_pair) {
		int64_t key = s->pair_key[r - s->r_pair];
		int mi = 0;
		while (mi + 1 < c->nmachines && s->rt.pairbase[mi + 1] <= key)
			mi++;
		int n = s->rt.mcount[mi];
		int64_t off = key - s->rt.pairbase[mi];
		int la = (int)(off / n), lb = (int)(off % n), a = -1, b = -1;
		for (int d = 0; d < c->ndevs; d++)
			if (c->devs[d].machine == mi) {
				if (s->rt.local[d] == la)
					a = d;
				if (s->rt.local[d] == lb)
					b = d;
			}
		snprintf(buf, sizeof buf, "%s->%s", a >= 0 ? c->devs[a].name : "?",
			 b >= 0 ? c->devs[b].name : "?");
	} else if (r < s->r_in) {
		snprintf(buf, sizeof buf, "%s/out", c->machines[r - s->r_out].name);
	} else {
		snprintf(buf, sizeof buf, "%s/in", c->machines[r - s->r_in].name);
	}
	return xstrdup(buf);
}

/* Kinds and resources of every op; Transfer durations. */
static void setup_kinds(Sim *s)
{
	Graph *g = s->g;
	int xfer = op_lookup("Transfer"), coll = op_lookup("AllReduce");
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		s->res0[i] = s->res1[i] = -1;
		s->coll_of[i] = UINT32_MAX;
		if (op->dead)
			continue;
		int d = s->r->dev[i];
		if (op->opcode == xfer && op->nin >= 1 && !op->in[0].ctrl) {
			int src = s->r->dev[op->in[0].src->id], res[2], n;
			s->kind[i] = K_XFER;
			route(s, src, d, res, &n);
			s->res0[i] = n > 0 ? res[0] : -1;
			s->res1[i] = n > 1 ? res[1] : -1;
		} else if (op->opcode == coll) {
			s->kind[i] = K_COLL;
			s->res0[i] = s->ndev + d;
		} else {
			s->kind[i] = K_COMPUTE;
			s->res0[i] = d;
		}
	}
}

/* Groups AllReduce members by key and checks each collective: every
 * member on a distinct device of its `devices` list, and one member per
 * listed device.  Returns the number of errors. */
static int setup_colls(Sim *s, Diag *d)
{
	Graph *g = s->g;
	const Cluster *c = s->c;
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		n += !g->ops[i]->dead && s->kind[i] == K_COLL;
	s->cmem = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	s->coll = xcalloc((size_t)n + 1, sizeof(Coll));
	if (!n)
		return 0;
	/* the collectives: plan_view's grouping by key (planview.c) */
	PlanView pv;
	int errs = plan_view(g, &pv, d);
	uint32_t m = pv.ncoll ? pv.coll[pv.ncoll - 1].first + pv.coll[pv.ncoll - 1].n
			      : 0;
	/* keys[q]: the q-th member in (key, id) order */
	struct { int64_t key; uint32_t id; } *keys =
		xmalloc(sizeof *keys * ((size_t)m + 1));
	for (uint32_t k = 0; k < pv.ncoll; k++)
		for (uint32_t q = pv.coll[k].first; q < pv.coll[k].first + pv.coll[k].n; q++) {
			keys[q].key = pv.coll[k].key;
			keys[q].id = pv.members[q];
		}
	plan_view_free(&pv);
	DevTab tab;
	devtab_init(&tab, c);
	int *devs = xmalloc(sizeof(int) * ((size_t)c->ndevs + 1));
	for (uint32_t j = 0; j < m;) {
		uint32_t e = j;
		while (e < m && keys[e].key == keys[j].key)
			e++;
		Coll *cl = &s->coll[s->ncoll];
		cl->key = keys[j].key;
		cl->first = j;
		cl->n = e - j;
		const Op *first = g->ops[keys[j].id];
		Value *dl = op_attr(first, graph_intern(g, "devices"));
		int nd = 0;
		bool bad = !dl || dl->kind != V_LIST || dl->list.n != cl->n;
		for (uint32_t q = 0; !bad && q < dl->list.n; q++) {
			const Value *v = dl->list.items[q];
			int dv = (v->kind == V_STR || v->kind == V_IDENT)
				 ? devtab_find(&tab, c, v->s) : -1;
			for (int p = 0; dv >= 0 && p < nd; p++)
				if (devs[p] == dv)
					dv = -1;
			if (dv < 0)
				bad = true;
			else
				devs[nd++] = dv;
		}
		for (uint32_t q = j; !bad && q < e; q++) {
			int dv = s->r->dev[keys[q].id];
			bool found = false;
			for (int p = 0; p < nd; p++)
				found |= devs[p] == dv;
			for (uint32_t p = j; p < q; p++)
				found &= s->r->dev[keys[p].id] != dv;
			bad = !found;
		}
		if (bad) {
			diag_error(d, first->loc,
				   "AllReduce key %lld: its members must be one per "
				   "device of its 'devices' list",
				   (long long)cl->key);
			errs++;
			j = e;
			continue;
		}
		for (uint32_t q = j; q < e; q++) {
			s->cmem[q] = keys[q].id;
			s->coll_of[keys[q].id] = s->ncoll;
			double b = cost_out_bytes(g, g->ops[keys[q].id], 0);
			cl->bytes = b > cl->bytes ? b : cl->bytes;
		}
		const char *algo = op_get_str(g, first, "algo");
		cl->dur = algo && strcmp(algo, "hier") == 0
			  ? cost_allreduce_hier(s->m, devs, nd, cl->bytes)
			  : cost_allreduce_ring(s->m, devs, nd, cl->bytes);
		cl->links = xmalloc(sizeof(int) * (size_t)(2 * nd + 1));
		for (int p = 0; nd > 1 && p < nd; p++) {
			int res[2], nr;
			route(s, devs[p], devs[(p + 1) % nd], res, &nr);
			for (int q = 0; q < nr; q++) {
				bool dup = false;
				for (int z = 0; z < cl->nlinks; z++)
					dup |= cl->links[z] == res[q];
				if (!dup)
					cl->links[cl->nlinks++] = res[q];
			}
		}
		s->ncoll++;
		j = e;
	}
	free(devs);
	free(tab.slot);
	free(keys);
	return errs;
}

/* Builds the implicit transfers and the reference counts. */
static void setup_edges(Sim *s)
{
	Graph *g = s->g;
	uint32_t n = g->nops;
	const Uses *us = graph_uses(g);
	s->outbase = xmalloc(sizeof(uint32_t) * (n + 1));
	s->inbase = xmalloc(sizeof(uint32_t) * (n + 1));
	s->xbase = xmalloc(sizeof(uint32_t) * (n + 1));
	uint32_t no = 0, ni = 0, maxfan = 0;
	for (uint32_t i = 0; i < n; i++) {
		s->outbase[i] = no;
		s->inbase[i] = ni;
		no += g->ops[i]->nout;
		ni += g->ops[i]->nin;
		uint32_t f = us->start[i + 1] - us->start[i];
		maxfan = f > maxfan ? f : maxfan;
	}
	s->outbase[n] = no;
	s->inbase[n] = ni;
	s->ref = xcalloc(no ? no : 1, sizeof(uint32_t));
	s->obytes = xcalloc(no ? no : 1, sizeof(double));
	s->slot_x = xmalloc(sizeof(uint32_t) * (ni ? ni : 1));
	memset(s->slot_x, 0xff, sizeof(uint32_t) * (ni ? ni : 1));
	s->xcons = xmalloc(sizeof(uint32_t) * (ni ? ni : 1));
	Remote *tmp = xmalloc(sizeof(Remote) * (maxfan ? maxfan : 1));
	uint32_t capx = 16, ncons = 0;
	s->x = xmalloc(sizeof(Xfer) * capx);
	s->nx = 0;
	for (uint32_t i = 0; i < n; i++) {
		const Op *op = g->ops[i];
		s->xbase[i] = s->nx;
		if (op->dead)
			continue;
		for (uint32_t k = 0; k < op->nout; k++)
			s->obytes[s->outbase[i] + k] = cost_out_bytes(g, op, k);
		int d = s->r->dev[i];
		uint32_t nr = 0;
		for (uint32_t k = us->start[i]; k < us->start[i + 1]; k++) {
			const Use *u = &us->use[k];
			const Input *in = &u->op->in[u->slot];
			if (in->ctrl)
				continue;
			if (local_edge(s, d, u->op))
				s->ref[s->outbase[i] + in->idx]++;
			else
				tmp[nr++] = (Remote){in->idx, s->r->dev[u->op->id],
						     u->op->id, u->slot};
		}
		if (nr > 1)
			qsort(tmp, nr, sizeof *tmp, remote_cmp);
		for (uint32_t j = 0; j < nr; j++) {
			if (j == 0 || tmp[j].k != tmp[j - 1].k ||
			    tmp[j].dst != tmp[j - 1].dst) {
				if (s->nx == capx) {
					capx *= 2;
					s->x = xrealloc(s->x, sizeof(Xfer) * capx);
				}
				Xfer *x = &s->x[s->nx++];
				memset(x, 0, sizeof *x);
				x->u = i;
				x->k = tmp[j].k;
				x->src = d;
				x->dst = tmp[j].dst;
				x->bytes = s->obytes[s->outbase[i] + x->k];
				x->dur = cost_transfer(s->m, d, x->dst, x->bytes);
				route(s, d, x->dst, x->res, &x->nres);
				x->cons = ncons;
				s->ref[s->outbase[i] + x->k]++;
			}
			Xfer *x = &s->x[s->nx - 1];
			s->xcons[ncons++] = tmp[j].c;
			x->ncons++;
			x->ref++;
			s->slot_x[s->inbase[tmp[j].c] + tmp[j].slot] = s->nx - 1;
		}
	}
	s->xbase[n] = s->nx;
	free(tmp);
}

typedef struct OrdKey {
	int64_t order;
	uint32_t id;
} OrdKey;

static int ordkey_cmp(const void *pa, const void *pb)
{
	const OrdKey *a = pa, *b = pb;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Per resource: does any op on it carry @order?  If so, its sequence
 * sorted by (@order, id); ops without @order go last.  An op is ordered
 * on its first resource: its device, its collective stream, or the first
 * link of a Transfer's route. */
static void setup_order(Sim *s)
{
	Graph *g = s->g;
	setup_res_state(s);
	int nr = s->nres;
	s->ordered = xcalloc((size_t)nr + 1, sizeof(bool));
	s->blocked = xcalloc((size_t)nr + 1, sizeof(bool));
	s->seq_start = xcalloc((size_t)nr + 2, sizeof(uint32_t));
	s->seq_pos = xcalloc((size_t)nr + 1, sizeof(uint32_t));
	s->ready = xcalloc((size_t)g->nops + 1, sizeof(bool));
	OrdKey *keys = xmalloc(sizeof(OrdKey) * ((size_t)g->nops + 1));
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || s->res0[i] < 0)
			continue;
		Value *v = s->prio ? NULL : op_ann(g, op, ANN_ORDER);
		double x;
		keys[i].order = INT64_MAX;
		keys[i].id = i;
		if (v && v->kind == V_INT) {
			keys[i].order = v->i;
			s->ordered[s->res0[i]] = true;
		} else if (v && val_number(v, &x) && x == x) {
			keys[i].order = x < -9e18 ? (int64_t)-9e18
				      : x > 9e18 ? (int64_t)9e18 : (int64_t)x;
			s->ordered[s->res0[i]] = true;
		}
		s->seq_start[s->res0[i] + 1]++;
	}
	for (int r = 0; r < nr; r++)
		s->seq_start[r + 1] += s->seq_start[r];
	uint32_t total = s->seq_start[nr];
	OrdKey *sorted = xmalloc(sizeof(OrdKey) * (total ? total : 1));
	uint32_t *fill = xmalloc(sizeof(uint32_t) * ((size_t)nr + 1));
	memcpy(fill, s->seq_start, sizeof(uint32_t) * (size_t)nr);
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead && s->res0[i] >= 0)
			sorted[fill[s->res0[i]]++] = keys[i];
	s->seq = xmalloc(sizeof(uint32_t) * (total ? total : 1));
	for (int r = 0; r < nr; r++) {
		uint32_t a = s->seq_start[r], b = s->seq_start[r + 1];
		if (s->ordered[r])
			qsort(sorted + a, b - a, sizeof(OrdKey), ordkey_cmp);
		for (uint32_t j = a; j < b; j++)
			s->seq[j] = sorted[j].id;
		s->seq_pos[r] = a;
	}
	free(fill);
	free(sorted);
	free(keys);
}

/* The work term of the bound: the devices, each busy at most T, must
 * run every op somewhere.  As a linear program over fractional
 * assignments y[op][type] (k_t devices of type t), T* = min T with
 * sum_t y = 1, sum_op y c(op, t) <= k_t T; by duality every lambda >= 0
 * with sum_t k_t lambda_t = 1 gives T* >= f(lambda) = sum_op min_t
 * lambda_t c(op, t).  f is concave.  lambda starts uniform (the sum of
 * fastest times over the device count) and climbs by exact line searches
 * (golden section) that move weight between two types; every point is a
 * valid bound, and with two types the result is the LP's optimum. */
static double work_f(const double *c, uint32_t n, int nt, const double *lam)
{
	double f = 0;
	for (uint32_t o = 0; o < n; o++) {
		double bv = INFINITY;
		for (int t = 0; t < nt; t++)
			if (lam[t] >= 0 && lam[t] * c[(size_t)o * nt + t] < bv)
				bv = lam[t] * c[(size_t)o * nt + t];
		f += isfinite(bv) ? bv : 0;
	}
	return f;
}

/* work_f at lam moved by s from type u to type t (x: scratch). */
static double work_at(const double *c, uint32_t n, int nt, const int *k,
		      const double *lam, double *x, int t, int u, double s)
{
	memcpy(x, lam, sizeof(double) * (size_t)nt);
	x[t] += s / k[t];
	x[u] -= s / k[u];
	return work_f(c, n, nt, x);
}

static double work_bound(const double *c, uint32_t n, int nt, const int *k)
{
	double *lam = xmalloc(sizeof(double) * (size_t)(nt + 1));
	double *x = xmalloc(sizeof(double) * (size_t)(nt + 1));
	int ndev = 0, used = 0;
	for (int t = 0; t < nt; t++) {
		ndev += k[t];
		used += k[t] > 0;
	}
	for (int t = 0; t < nt; t++)
		lam[t] = k[t] ? 1.0 / ndev : -1;   /* -1: absent type */
	double best = ndev ? work_f(c, n, nt, lam) : 0;
	const double phi = 0.6180339887498949;
	for (int round = 0; round < (used > 2 ? 3 : 1); round++)
		for (int t = 0; t < nt; t++)
			for (int u = t + 1; u < nt; u++) {
				if (!k[t] || !k[u])
					continue;
				/* lambda_t + s / k_t, lambda_u - s / k_u */
				double lo = -lam[t] * k[t], hi = lam[u] * k[u];
				double a = lo, b = hi;
				/* each step keeps one point of the last: the
				 * golden ratio's m1 of [m1, b] is m2 of [a, b]
				 * (phi^2 = 1 - phi), so one new f per step */
				double m1 = b - phi * (b - a), m2 = a + phi * (b - a);
				double f1 = work_at(c, n, nt, k, lam, x, t, u, m1);
				double f2 = work_at(c, n, nt, k, lam, x, t, u, m2);
				for (int it = 0; it < 60; it++) {
					if (f1 < f2) {
						a = m1;
						m1 = m2;
						f1 = f2;
						m2 = a + phi * (b - a);
						f2 = work_at(c, n, nt, k, lam, x, t, u, m2);
					} else {
						b = m2;
						m2 = m1;
						f2 = f1;
						m1 = b - phi * (b - a);
						f1 = work_at(c, n, nt, k, lam, x, t, u, m1);
					}
				}
				memcpy(x, lam, sizeof(double) * (size_t)nt);
				x[t] += (a + b) / 2 / k[t];
				x[u] -= (a + b) / 2 / k[u];
				x[t] = fmax(x[t], 0);
				x[u] = fmax(x[u], 0);
				double f = work_f(c, n, nt, x);
				if (f > best) {
					best = f;
					memcpy(lam, x, sizeof(double) * (size_t)nt);
				}
			}
	free(lam);
	free(x);
	return best;
}

/* The least time of an op whose pieces may run on every device at once:
 * a piece on a device of type t doing a share s of the work takes
 * fixed[t] + s (cost[t] - fixed[t]) (each piece pays the per-op
 * overhead), so the shares finished by T sum to F(T) = sum_t k[t]
 * max(0, (T - fixed[t]) / work[t]); the least T with F(T) >= 1, found by
 * sweeping the types in order of their fixed part (F is piecewise linear
 * and increasing).  With no fixed parts, 1 / sum_t k[t] / cost[t].
 * ord: room for nt type numbers. */
static double split_time(const double *cost, const double *fixed, const int *k,
			 int nt, int *ord)
{
	int n = 0;
	double best = INFINITY;
	for (int t = 0; t < nt; t++) {
		if (!k[t] || !isfinite(cost[t]))
			continue;
		best = fmin(best, cost[t]);
		int i = n++;
		for (; i > 0 && fixed[ord[i - 1]] > fixed[t]; i--)
			ord[i] = ord[i - 1];
		ord[i] = t;
	}
	double A = 0, B = 0;     /* F(T) = A T - B over the types so far */
	for (int j = 0; j < n; j++) {
		int t = ord[j];
		double w = cost[t] - fixed[t];
		if (w <= 0)      /* no divisible work: T = fixed[t] does it */
			return fmin(best, fixed[t]);
		A += k[t] / w;
		B += k[t] * fixed[t] / w;
		double T = (1 + B) / A;
		if (j == n - 1 || T <= fixed[ord[j + 1]])
			return fmin(best, T);
	}
	return best;
}

double sim_bound_of(Graph *g, const CostModel *m, bool divisible)
{
	const Cluster *c = m->c ? m->c : g->cluster;
	const uint32_t *topo = graph_topo(g);
	if (!c || !topo || !c->ndevs)
		return 0;
	int nt = c->ntypes;
	int *k = xcalloc((size_t)nt + 1, sizeof(int));
	for (int d = 0; d < c->ndevs; d++)
		k[c->devs[d].type]++;
	uint32_t live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	double *ef = xcalloc((size_t)g->nops + 1, sizeof(double));
	double *cost = xmalloc(sizeof(double) * ((size_t)live * (size_t)nt + 1));
	double *fixed = xcalloc((size_t)nt + 1, sizeof(double));
	int *ord = xmalloc(sizeof(int) * ((size_t)nt + 1));
	double cp = 0;
	for (uint32_t j = 0; j < live; j++) {
		const Op *op = g->ops[topo[j]];
		double best = INFINITY;
		for (int t = 0; t < nt; t++) {
			double f = 0, x = !k[t] ? INFINITY
				: divisible ? cost_op_parts(m, op, t, &f)
				: cost_op(m, op, t);
			double *cx = &cost[(size_t)j * nt + t];
			*cx = isfinite(x) && x >= 0 ? x : INFINITY;
			best = x < best ? x : best;
			fixed[t] = isfinite(*cx) ? fmin(f, x) : 0;
		}
		/* Split over every device at once, each piece paying the
		 * overhead. */
		if (divisible && best > 0 && isfinite(best))
			best = split_time(cost + (size_t)j * nt, fixed, k, nt, ord);
		if (!isfinite(best) || best < 0) {
			best = 0;
			for (int t = 0; t < nt; t++)
				cost[(size_t)j * nt + t] = 0;
		}
		double est = 0;
		for (uint32_t q = 0; q < op->nin; q++) {
			double f = ef[op->in[q].src->id];
			est = f > est ? f : est;
		}
		ef[op->id] = est + best;
		cp = ef[op->id] > cp ? ef[op->id] : cp;
	}
	double work = work_bound(cost, live, nt, k);
	free(cost);
	free(fixed);
	free(ord);
	free(ef);
	free(k);
	return cp > work ? cp : work;
}

static void sim_cleanup(Sim *s)
{
	free(s->kind);
	free(s->dur);
	free(s->ws);
	free(s->rtime);
	free(s->pending);
	free(s->resident);
	free(s->res0);
	free(s->res1);
	free(s->coll_of);
	free(s->outbase);
	free(s->inbase);
	free(s->xbase);
	free(s->ref);
	free(s->obytes);
	free(s->slot_x);
	free(s->x);
	free(s->xcons);
	for (uint32_t c = 0; s->coll && c < s->ncoll; c++)
		free(s->coll[c].links);
	free(s->coll);
	free(s->cmem);
	free(s->mem);
	free(s->ordered);
	free(s->blocked);
	free(s->seq);
	free(s->seq_start);
	free(s->seq_pos);
	free(s->ready);
	free(s->res_free);
	free(s->res_busy);
	free(s->res_bytes);
	free(s->res_used);
	route_tab_free(&s->rt);
	free(s->pair_key);
	free(s->pair_tab);
	heap_free(&s->h);
	for (int d = 0; s->rq && d < s->ndev; d++)
		heap_free(&s->rq[d]);
	free(s->rq);
	free(s->running);
	free(s->waking);
	free(s->shead);
	free(s->stail);
	free(s->snext);
	free(s->idle_q);
	free(s->inflight);
	free(s->launch);
	free(s->host);
}

static int xrec_cmp(const void *pa, const void *pb)
{
	const struct SimXfer *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	return a->dst < b->dst ? -1 : a->dst > b->dst;
}

/* Link statistics and the transfer records of a finished run. */
typedef struct DenseRes {
	int64_t dense;
	int k;
} DenseRes;

static int dense_cmp(const void *pa, const void *pb)
{
	const DenseRes *a = pa, *b = pb;
	return a->dense < b->dense ? -1 : a->dense > b->dense;
}

static void collect_links(Sim *s)
{
	Graph *g = s->g;
	SimResult *r = s->r;
	int *idx = xmalloc(sizeof(int) * ((size_t)s->nres + 1));
	DenseRes *used = xmalloc(sizeof(DenseRes) * ((size_t)s->nres + 1));
	int nl = 0;
	for (int k = 0; k < s->nres; k++) {
		idx[k] = -1;
		if (k >= s->rl && s->res_used[k])
			used[nl++] = (DenseRes){res_dense(s, k), k};
	}
	qsort(used, (size_t)nl, sizeof *used, dense_cmp);
	for (int i = 0; i < nl; i++)
		idx[used[i].k] = i;
	free(used);
	r->nlinks = nl;
	r->link_name = xcalloc((size_t)nl + 1, sizeof(char *));
	r->link_busy = xcalloc((size_t)nl + 1, sizeof(double));
	r->link_bytes = xcalloc((size_t)nl + 1, sizeof(double));
	for (int k = s->rl; k < s->nres; k++)
		if (idx[k] >= 0) {
			r->link_name[idx[k]] = res_name(s, k);
			r->link_busy[idx[k]] = s->res_busy[k];
			r->link_bytes[idx[k]] = s->res_bytes[k];
		}
	uint32_t nxo = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		nxo += !g->ops[i]->dead && s->kind[i] == K_XFER;
	r->xfers = xmalloc(sizeof(struct SimXfer) * ((size_t)s->nx + nxo + 1));
	uint32_t n = 0;
	for (uint32_t x = 0; x < s->nx; x++) {
		const Xfer *xf = &s->x[x];
		r->xfers[n++] = (struct SimXfer){
			xf->u, xf->k, UINT32_MAX, xf->src, xf->dst,
			xf->nres ? idx[xf->res[0]] : -1, xf->start, xf->finish,
			xf->bytes};
	}
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || s->kind[i] != K_XFER)
			continue;
		const Input *in = &op->in[0];
		r->xfers[n++] = (struct SimXfer){
			in->src->id, in->idx, i, r->dev[in->src->id], r->dev[i],
			s->res0[i] >= 0 ? idx[s->res0[i]] : -1, r->start[i],
			r->finish[i], s->obytes[s->outbase[i]]};
	}
	qsort(r->xfers, n, sizeof(struct SimXfer), xrec_cmp);
	r->nxfers = n;
	free(idx);
}

/* Per-op durations, pending input counts and memory; parameters and
 * updates are resident from time 0.  Returns the number of live ops. */
static uint32_t setup_ops(Sim *s)
{
	Graph *g = s->g;
	const CostModel *m = s->m;
	const Cluster *c = s->c;
	SimResult *r = s->r;
	uint32_t n = g->nops;
	size_t n1 = (size_t)n + 1, nd1 = (size_t)c->ndevs + 1;
	s->dur = xcalloc(n1, sizeof(double));
	s->ws = xcalloc(n1, sizeof(double));
	s->rtime = xcalloc(n1, sizeof(double));
	s->pending = xcalloc(n1, sizeof(uint32_t));
	s->resident = xcalloc(n1, sizeof(bool));
	s->mem = xcalloc(nd1, sizeof(double));
	uint32_t live = 0;
	for (uint32_t i = 0; i < n; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		live++;
		int dv = r->dev[i];
		if (s->kind[i] == K_XFER)
			s->dur[i] = cost_transfer(m, r->dev[op->in[0].src->id], dv,
						  s->obytes[s->outbase[i]]);
		else if (s->kind[i] == K_COMPUTE) {
			int ty = c->devs[dv].type;
			s->dur[i] = cost_op(m, op, ty);
			if (s->host && c->types[ty].launch > 0 &&
			    cost_op_launches(m, op, ty))
				s->launch[i] = c->types[ty].launch;
		}
		s->pending[i] = op->nin;
		bool param = op_has_role(g, op, ROLE_PARAM);
		bool update = op_has_role(g, op, ROLE_UPDATE);
		double mem = cost_op_mem(m, op);
		if (param || update) {
			/* Resident for the whole iteration, from time 0. */
			s->resident[i] = param;
			if (param)
				for (uint32_t k = 0; k < op->nout; k++)
					mem_add(s, dv, s->obytes[s->outbase[i] + k]);
			mem_add(s, dv, mem);
		} else {
			s->ws[i] = mem;
		}
	}
	return live;
}

/* The network's dispatch latency where op i runs on a machine other than
 * the first: a step's RunGraph call from the client's machine reaches
 * that machine's partition this late, and its end comes back as late
 * (docs/simulator.md); else 0. */
static double dispatch_of(const Sim *s, uint32_t i)
{
	int dv = s->r->dev[i];
	return s->c->dispatch > 0 && dv >= 0 && s->c->devs[dv].machine != 0
	       ? s->c->dispatch : 0;
}

/* When source op i may start: at 0, or on a machine other than the first
 * the dispatch latency, and for a graph input there the transfer of its
 * value from the client on the first machine (the client feeds it). */
static double start_of(const Sim *s, uint32_t i)
{
	double t = dispatch_of(s, i);
	const Op *op = s->g->ops[i];
	if (t > 0 && op->nout && op_has_role(s->g, op, ROLE_INPUT))
		t += cost_transfer(s->m, 0, s->r->dev[i], s->obytes[s->outbase[i]]);
	return t;
}

/* Runs the event loop to the end; returns how many ops finished. */
static uint32_t run_events(Sim *s)
{
	Graph *g = s->g;
	SimResult *r = s->r;
	uint32_t done = 0;
	HeapItem hi;
	while (heap_pop(&s->h, &hi)) {
		struct { double t; uint32_t kind, id; } e = {hi.key,
			(uint32_t)(hi.tie >> 32), hi.id};
		switch (e.kind) {
		case EV_OP_READY:
			op_ready(s, e.id, e.t);
			break;
		case EV_OP_START: {
			const Op *op = g->ops[e.id];
			int dv = r->dev[e.id];
			if (!s->resident[e.id])
				for (uint32_t k = 0; k < op->nout; k++)
					mem_add(s, dv, s->obytes[s->outbase[e.id] + k]);
			mem_add(s, dv, s->ws[e.id]);
			push_ev(&s->h, r->finish[e.id], EV_OP_FINISH, e.id);
			break;
		}
		case EV_OP_FINISH:
			done++;
			if (s->kind[e.id] == K_COMPUTE)
				s->inflight[s->res0[e.id]]--;
			if (r->finish[e.id] + dispatch_of(s, e.id) > r->makespan)
				r->makespan = r->finish[e.id] + dispatch_of(s, e.id);
			op_finish(s, e.id, e.t);
			if (s->prio && s->kind[e.id] == K_COMPUTE) {
				int dv = r->dev[e.id];
				s->running[dv] = false;
				if (!s->waking[dv]) {
					s->waking[dv] = true;
					push_ev(&s->h, e.t, EV_DEV_WAKE, (uint32_t)dv);
				}
			}
			break;
		case EV_DEV_WAKE:
			s->waking[e.id] = false;
			run_next(s, (int)e.id, e.t);
			break;
		case EV_DEV_IDLE:
			dev_idle(s, (int)e.id, e.t);
			break;
		case EV_X_START: {
			Xfer *x = &s->x[e.id];
			mem_add(s, x->dst, x->bytes);
			push_ev(&s->h, x->finish, EV_X_DONE, e.id);
			break;
		}
		case EV_X_DONE: {
			Xfer *x = &s->x[e.id];
			if (x->finish > r->makespan)
				r->makespan = x->finish;
			release_out(s, x->u, x->k);
			for (uint32_t j = 0; j < x->ncons; j++)
				dec_pending(s, s->xcons[x->cons + j], e.t);
			break;
		}
		}
	}
	return done;
}

/* The error for a run that stalled (done < live ops finished). */
static int report_stall(Sim *s, Diag *d)
{
	Graph *g = s->g;
	const Cluster *c = s->c;
	int rc = 0;
	/* Only @order (or a collective whose members are ordered
	 * inconsistently) can stall: a resource's next op waits for
	 * an op that the order puts later. */
	for (int k = 0; k < s->nres && !rc; k++) {
		if (!s->ordered[k] || s->seq_pos[k] >= s->seq_start[k + 1])
			continue;
		uint32_t i = s->seq[s->seq_pos[k] - (s->blocked[k] ? 1 : 0)];
		const Op *op = g->ops[i];
		char *rn = k >= s->rl ? res_name(s, k) : NULL;
		diag_error(d, op->loc,
			   "@order deadlocks %s '%s': op '%s' waits "
			   "for an op ordered after it",
			   k < s->ndev ? "device" : k < s->rl ? "collectives of device" : "link",
			   rn ? rn : c->devs[k % s->ndev].name, op->name);
		free(rn);
		rc = EXIT_BADINPUT;
	}
	if (!rc) {
		diag_error(d, (Loc){0}, "simulation stalled");
		rc = EXIT_BADINPUT;
	}
	return rc;
}

static int simulate(Graph *g, const CostModel *m, const double *prio,
		    SimResult *r, Diag *d);

int sim_run(Graph *g, const CostModel *m, SimResult *r, Diag *d)
{
	return simulate(g, m, NULL, r, d);
}

int sim_run_prio(Graph *g, const CostModel *m, const double *prio,
		 SimResult *r, Diag *d)
{
	return simulate(g, m, prio, r, d);
}

static int simulate(Graph *g, const CostModel *m, const double *prio,
		    SimResult *r, Diag *d)
{
	memset(r, 0, sizeof *r);
	const Cluster *c = m->c ? m->c : g->cluster;
	if (!c) {
		diag_error(d, (Loc){0}, "cannot simulate: no cluster attached");
		return EXIT_BADINPUT;
	}
	const uint32_t *topo = graph_topo(g);
	if (!topo) {
		diag_error(d, (Loc){0}, "cannot simulate: the graph has a cycle");
		return EXIT_BADINPUT;
	}
	uint32_t n = g->nops;
	size_t n1 = (size_t)n + 1, nd1 = (size_t)c->ndevs + 1;
	r->nops = n;
	r->ndevs = c->ndevs;
	r->start = xcalloc(n1, sizeof(double));
	r->finish = xcalloc(n1, sizeof(double));
	r->dev = xcalloc(n1, sizeof(int));
	r->busy = xcalloc(nd1, sizeof(double));
	r->peak_mem = xcalloc(nd1, sizeof(double));
	r->seq = xcalloc(n1, sizeof(uint32_t));
	Sim s = {0};
	s.g = g;
	s.m = m;
	s.c = c;
	s.r = r;
	s.ndev = c->ndevs;
	s.prio = prio;
	if (prio) {
		s.rq = xcalloc(nd1, sizeof(Heap));
		s.running = xcalloc(nd1, sizeof(bool));
		s.waking = xcalloc(nd1, sizeof(bool));
	}
	if (check_placement(&s, d)) {
		sim_free(r);
		return EXIT_BADINPUT;
	}
	s.kind = xcalloc(n1, 1);
	s.res0 = xmalloc(n1 * sizeof(int));
	s.res1 = xmalloc(n1 * sizeof(int));
	s.coll_of = xmalloc(n1 * sizeof(uint32_t));
	setup_resources(&s);
	setup_kinds(&s);
	if (setup_colls(&s, d)) {
		sim_cleanup(&s);
		sim_free(r);
		return EXIT_BADINPUT;
	}
	setup_edges(&s);
	setup_order(&s);
	for (int t = 0; t < c->ntypes && !s.host; t++)
		if (c->types[t].launch > 0) {
			s.launch = xcalloc(n1, sizeof(double));
			s.host = xcalloc(nd1, sizeof(double));
		}
	uint32_t live = setup_ops(&s);
	s.shead = xmalloc(nd1 * sizeof(uint32_t));
	s.stail = xmalloc(nd1 * sizeof(uint32_t));
	for (int dv = 0; dv < c->ndevs; dv++)
		s.shead[dv] = UINT32_MAX;
	s.snext = xmalloc(((size_t)n + s.nx + 1) * sizeof(uint32_t));
	s.idle_q = xcalloc(nd1, sizeof(bool));
	s.inflight = xcalloc(nd1, sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		if (!g->ops[i]->dead && s.pending[i] == 0)
			push_ev(&s.h, start_of(&s, i), EV_OP_READY, i);
	uint32_t done = run_events(&s);
	int rc = 0;
	if (done < live)
		rc = report_stall(&s, d);
	if (!rc) {
		for (int dv = 0; dv < c->ndevs; dv++)
			if (r->peak_mem[dv] > c->types[c->devs[dv].type].memory)
				r->oom = true;
		collect_links(&s);
	}
	sim_cleanup(&s);
	if (rc)
		sim_free(r);
	return rc;
}

void sim_free(SimResult *r)
{
	free(r->busy);
	free(r->peak_mem);
	free(r->start);
	free(r->finish);
	free(r->dev);
	for (int i = 0; r->link_name && i < r->nlinks; i++)
		free(r->link_name[i]);
	free(r->link_name);
	free(r->link_busy);
	free(r->link_bytes);
	free(r->xfers);
	free(r->seq);
	memset(r, 0, sizeof *r);
}

void sim_judged_add(SimJudged *j, const char *name, double makespan, bool oom,
		    const double *peaks, int ndevs)
{
	j->plan = xrealloc(j->plan, sizeof *j->plan * (size_t)(j->n + 1));
	unsigned char *used = NULL;
	if (peaks && ndevs > 0) {
		used = xmalloc((size_t)ndevs);
		for (int d = 0; d < ndevs; d++)
			used[d] = peaks[d] > 0;
	}
	j->plan[j->n++] = (struct SimJudgedPlan){xstrdup(name), makespan, oom,
						 used, used ? ndevs : 0, false};
}

void sim_judged_aside(SimJudged *j, const char *name, double makespan,
		      bool oom, const double *peaks, int ndevs)
{
	sim_judged_add(j, name, makespan, oom, peaks, ndevs);
	j->plan[j->n - 1].aside = true;
}

void sim_judged_free(SimJudged *j)
{
	for (int i = 0; i < j->n; i++) {
		free((char *)j->plan[i].name);
		free(j->plan[i].used);
	}
	free(j->plan);
	j->plan = NULL;
	j->n = 0;
	j->chosen = -1;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "%.9g", x);
	else
		fputs("null", f);
}

static void json_bytes(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "%.0f", x);
	else
		fputs("null", f);
}

void sim_stats_json(FILE *f, const Graph *g, const CostModel *m,
		    const SimResult *r)
{
	const Cluster *c = m && m->c ? m->c : g->cluster;
	uint32_t live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	fputs("{\n  \"simulated\": true,\n  \"makespan_s\": ", f);
	json_num(f, r->makespan);
	fputs(",\n  \"lower_bound_s\": ", f);
	json_num(f, r->lower_bound);
	if (r->problem_bound > 0) {
		fputs(",\n  \"problem_lower_bound_s\": ", f);
		json_num(f, r->problem_bound);
		fputs(",\n  \"ratio_to_problem_bound\": ", f);
		json_num(f, r->makespan / r->problem_bound);
	}
	fprintf(f, ",\n  \"oom\": %s,\n  \"ops\": %u,\n  \"devices\": [",
		r->oom ? "true" : "false", live);
	for (int d = 0; c && d < r->ndevs && d < c->ndevs; d++) {
		const Device *dv = &c->devs[d];
		fputs(d ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
		json_str(f, dv->name);
		fputs(", \"type\": ", f);
		json_str(f, c->types[dv->type].name);
		fputs(", \"busy_s\": ", f);
		json_num(f, r->busy[d]);
		fputs(", \"peak_mem_bytes\": ", f);
		json_bytes(f, r->peak_mem[d]);
		fputs(", \"memory_bytes\": ", f);
		json_bytes(f, c->types[dv->type].memory);
		fputc('}', f);
	}
	fputs(r->ndevs ? "\n  ],\n  \"links\": [" : "],\n  \"links\": [", f);
	for (int l = 0; l < r->nlinks; l++) {
		fputs(l ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
		json_str(f, r->link_name[l]);
		fputs(", \"busy_s\": ", f);
		json_num(f, r->link_busy[l]);
		fputs(", \"bytes\": ", f);
		json_bytes(f, r->link_bytes[l]);
		fputc('}', f);
	}
	fputs(r->nlinks ? "\n  ]\n}\n" : "]\n}\n", f);
}
