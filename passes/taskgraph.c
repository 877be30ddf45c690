/* taskgraph.c — the weighted DAG of placement (taskgraph.h).
 *
 * Memory per node follows Baechi's split into permanent and temporary
 * memory: parameters, optimizer state (cost_op_mem of update ops) and the
 * forward activations that a backward op reads stay for the whole
 * iteration; every other output is temporary.  For a fused group, the
 * temporary part is what leaves the group plus the largest output used
 * only inside it.  A parameter counts on its update's node (where comm
 * keeps it), not on its own; a gradient that an update reads is
 * permanent (the updates run after the backward pass). */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TaskGraph *tg_new(uint32_t n, const CostModel *m)
{
	TaskGraph *t = xcalloc(1, sizeof *t);
	const Cluster *c = m->c ? m->c : m->g->cluster;
	size_t n1 = (size_t)n + 1;
	t->n = n;
	t->m = m;
	t->c = c;
	t->ndev = c->ndevs;
	t->ntype = c->ntypes;
	t->cost = xcalloc(n1 * (size_t)(c->ntypes ? c->ntypes : 1), sizeof(double));
	t->mem_perm = xcalloc(n1, sizeof(double));
	t->mem_temp = xcalloc(n1, sizeof(double));
	t->mem_param = xcalloc(n1, sizeof(double));
	t->mem_grad = xcalloc(n1, sizeof(double));
	t->pinned = xmalloc(n1 * sizeof(int));
	for (uint32_t i = 0; i < n; i++)
		t->pinned[i] = -1;
	t->name = xcalloc(n1, sizeof(char *));
	tg_link_stats(c, t->elat, t->einv);
	return t;
}

/* w ordered device pairs with latency l and inverse bandwidth iv. */
static void stats_add(double *lat, double *inv, double *pairs, double l,
		      double iv, double w)
{
	if (w <= 0)
		return;
	lat[TG_MIN] = l < lat[TG_MIN] ? l : lat[TG_MIN];
	inv[TG_MIN] = iv < inv[TG_MIN] ? iv : inv[TG_MIN];
	lat[TG_MAX] = l > lat[TG_MAX] ? l : lat[TG_MAX];
	inv[TG_MAX] = iv > inv[TG_MAX] ? iv : inv[TG_MAX];
	lat[TG_MEAN] += l * w;
	inv[TG_MEAN] += iv * w;
	*pairs += w;
}

void tg_link_stats(const Cluster *c, double lat[3], double inv[3])
{
	lat[TG_MIN] = inv[TG_MIN] = INFINITY;
	lat[TG_MAX] = inv[TG_MAX] = lat[TG_MEAN] = inv[TG_MEAN] = 0;
	double pairs = 0, cross = (double)c->ndevs * (c->ndevs - 1);
	double *over_in = xcalloc((size_t)c->nmachines + 1, sizeof(double));
	double over_cross = 0;
	for (int i = 0; i < c->nlinks; i++) {
		const LinkOverride *k = &c->links[i];
		int ma = c->devs[k->a].machine, mb = c->devs[k->b].machine;
		double l = ma == mb ? c->machines[ma].lat : c->net_lat;
		if (ma == mb)
			over_in[ma] += 2;
		else
			over_cross += 2;
		stats_add(lat, inv, &pairs, k->lat >= 0 ? k->lat : l,
			  k->bw > 0 ? 1 / k->bw : 0, 2);
	}
	for (int m = 0; m < c->nmachines; m++) {
		const Machine *mc = &c->machines[m];
		double inside = (double)mc->count * (mc->count - 1);
		cross -= inside;
		stats_add(lat, inv, &pairs, mc->lat, mc->bw > 0 ? 1 / mc->bw : 0,
			  inside - over_in[m]);
	}
	stats_add(lat, inv, &pairs, c->net_lat, c->net_bw > 0 ? 1 / c->net_bw : 0,
		  cross - over_cross);
	free(over_in);
	if (pairs > 0) {
		lat[TG_MEAN] /= pairs;
		inv[TG_MEAN] /= pairs;
	} else {
		lat[TG_MIN] = inv[TG_MIN] = 0;
	}
}

void tg_add_edge(TaskGraph *t, uint32_t a, uint32_t b, double bytes)
{
	if (t->nedge == t->capedge) {
		t->capedge = t->capedge ? 2 * t->capedge : 64;
		t->edges = xrealloc(t->edges, sizeof *t->edges * t->capedge);
	}
	t->edges[t->nedge].a = a;
	t->edges[t->nedge].b = b;
	t->edges[t->nedge++].bytes = bytes;
}

static int edge_cmp(const void *pa, const void *pb)
{
	const uint32_t *a = pa, *b = pb;
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

uint32_t tg_succ_node(const void *arg, uint32_t e)
{
	return ((const TaskGraph *)arg)->succ[e].node;
}

bool tg_finish(TaskGraph *t)
{
	uint32_t n = t->n, ne = t->nedge;
	/* Sort edges by (a, b) and merge parallel ones. */
	typedef struct { uint32_t a, b; double bytes; } E;
	E *e = (E *)t->edges;
	if (ne > 1)             /* e is NULL when there are no edges */
		qsort(e, ne, sizeof(E), edge_cmp);
	uint32_t m = 0;
	for (uint32_t i = 0; i < ne; i++) {
		if (e[i].a == e[i].b)
			continue;
		if (m && e[m - 1].a == e[i].a && e[m - 1].b == e[i].b)
			e[m - 1].bytes += e[i].bytes;
		else
			e[m++] = e[i];
	}
	t->succ_start = xcalloc((size_t)n + 2, sizeof(uint32_t));
	t->pred_start = xcalloc((size_t)n + 2, sizeof(uint32_t));
	t->succ = xmalloc(sizeof(TgEdge) * (m ? m : 1));
	t->pred = xmalloc(sizeof(TgEdge) * (m ? m : 1));
	for (uint32_t i = 0; i < m; i++) {
		t->succ_start[e[i].a + 1]++;
		t->pred_start[e[i].b + 1]++;
	}
	for (uint32_t v = 0; v < n; v++) {
		t->succ_start[v + 1] += t->succ_start[v];
		t->pred_start[v + 1] += t->pred_start[v];
	}
	uint32_t *fill = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	memcpy(fill, t->pred_start, sizeof(uint32_t) * ((size_t)n + 1));
	for (uint32_t i = 0; i < m; i++) {
		t->succ[i] = (TgEdge){e[i].b, e[i].bytes};
		t->pred[fill[e[i].b]++] = (TgEdge){e[i].a, e[i].bytes};
	}
	free(fill);
	free(t->edges);
	t->edges = NULL;
	t->nedge = t->capedge = 0;
	/* Kahn's algorithm, FIFO in id order. */
	t->topo = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	TopoDag dag = {.n = n, .start = t->succ_start, .to_fn = tg_succ_node,
		       .arg = t};
	return topo_sort(&dag, t->topo, NULL) == n;
}

static int cmp64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return a < b ? -1 : a > b;
}

typedef struct NodeUse {
	uint32_t node;
	uint32_t k;
} NodeUse;

static int nodeuse_cmp(const void *pa, const void *pb)
{
	const NodeUse *a = pa, *b = pb;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

/* Dense node ids of g's ops (UINT32_MAX: dead): with groups, the
 * groups in increasing @group value, then ungrouped ops in id order.
 * *n: the count; *grouped: whether any op has a @group (and groups). */
static uint32_t *node_ids(Graph *g, bool groups, uint32_t *n, bool *grouped)
{
	uint32_t nops = g->nops;
	uint32_t *node = xmalloc(sizeof(uint32_t) * ((size_t)nops + 1));
	int64_t *gid = xmalloc(sizeof(int64_t) * ((size_t)nops + 1));
	int64_t maxg = -1;
	for (uint32_t i = 0; i < nops; i++) {
		const Op *op = g->ops[i];
		gid[i] = -1;
		node[i] = UINT32_MAX;
		if (op->dead || !groups)
			continue;
		Value *v = op_ann(g, op, ANN_GROUP);
		if (v && v->kind == V_INT && v->i >= 0) {
			gid[i] = v->i;
			maxg = v->i > maxg ? v->i : maxg;
		}
	}
	*n = 0;
	if (maxg >= 0) {
		/* Compress group values (which may be sparse). */
		int64_t *vals = xmalloc(sizeof(int64_t) * ((size_t)nops + 1));
		uint32_t nv = 0;
		for (uint32_t i = 0; i < nops; i++)
			if (gid[i] >= 0)
				vals[nv++] = gid[i];
		qsort(vals, nv, sizeof(int64_t), cmp64);
		uint32_t u = 0;
		for (uint32_t i = 0; i < nv; i++)
			if (!u || vals[u - 1] != vals[i])
				vals[u++] = vals[i];
		for (uint32_t i = 0; i < nops; i++)
			if (gid[i] >= 0) {
				int64_t *p = bsearch(&gid[i], vals, u, sizeof(int64_t),
						     cmp64);
				node[i] = (uint32_t)(p - vals);
			}
		*n = u;
		free(vals);
	}
	for (uint32_t i = 0; i < nops; i++)
		if (!g->ops[i]->dead && node[i] == UINT32_MAX)
			node[i] = (*n)++;
	free(gid);
	*grouped = maxg >= 0;
	return node;
}

uint32_t *tg_param_owners(Graph *g, const TaskGraph *t)
{
	uint32_t *owner = xmalloc(sizeof(uint32_t) * ((size_t)g->nops + 1));
	for (uint32_t i = 0; i < g->nops; i++)
		owner[i] = t->op_node[i];
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || !op_has_role(g, op, ROLE_UPDATE))
			continue;
		/* The variable and its optimizer state (docs/plan.md). */
		for (uint32_t k = 0; k < op->nin; k++) {
			const Op *p = op->in[k].src;
			if (!op->in[k].ctrl && op_has_role(g, p, ROLE_PARAM) &&
			    owner[p->id] == t->op_node[p->id])
				owner[p->id] = t->op_node[i];
		}
	}
	return owner;
}

/* A parameter lives where its update runs (comm's params_follow_updates,
 * whatever device its own node gets): its bytes count on the node of its
 * first update, so that every placer's memory check holds it where the
 * plan will. */
static void params_to_owners(Graph *g, TaskGraph *t)
{
	uint32_t *owner = tg_param_owners(g, t);
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || op_role(g, op) != ROLE_PARAM)
			continue;
		double pb = 0;
		for (uint32_t k = 0; k < op->nout; k++)
			pb += cost_out_bytes(g, op, k);
		t->mem_perm[t->op_node[i]] -= pb;
		t->mem_perm[owner[i]] += pb;
		t->mem_param[owner[i]] += pb;
	}
	free(owner);
}

TaskGraph *tg_from_graph(Graph *g, const CostModel *m, bool groups, Diag *d)
{
	const Cluster *c = m->c ? m->c : g->cluster;
	uint32_t nops = g->nops, n;
	bool grouped;
	uint32_t *node = node_ids(g, groups, &n, &grouped);
	TaskGraph *t = tg_new(n, m);
	t->op_node = node;
	t->nops = nops;
	const Uses *us = graph_uses(g);
	double *internal_max = xcalloc((size_t)n + 1, sizeof(double));
	NodeUse *tmp = NULL;
	uint32_t captmp = 0;
	int errs = 0;
	for (uint32_t i = 0; i < nops; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		uint32_t v = node[i];
		if (!t->name[v])
			t->name[v] = grouped && op_ann(g, op, ANN_GROUP)
				     ? arena_printf(g->arena, "group %lld",
						    (long long)op_ann(g, op, ANN_GROUP)->i)
				     : op->name;
		for (int ty = 0; ty < c->ntypes; ty++)
			t->cost[(size_t)v * (size_t)c->ntypes + (size_t)ty] +=
				cost_op(m, op, ty);
		const char *pin = op_ann_str(g, op, ANN_DEVICE);
		if (pin) {
			int dv = cluster_find_device(c, pin);
			if (dv >= 0 && t->pinned[v] >= 0 && t->pinned[v] != dv) {
				diag_error(d, op->loc,
					   "op '%s' is pinned to '%s' but its group "
					   "is pinned to '%s'", op->name, pin,
					   c->devs[t->pinned[v]].name);
				errs++;
			} else if (dv >= 0) {
				t->pinned[v] = dv;
			}
		}
		Role r = op_role(g, op);
		if (r == ROLE_PARAM) {
			for (uint32_t k = 0; k < op->nout; k++)
				t->mem_perm[v] += cost_out_bytes(g, op, k);
		}
		t->mem_perm[v] += cost_op_mem(m, op);
		/* Consumers per output: distinct other nodes get an edge;
		 * saved activations are outputs read by a backward op. */
		uint32_t nu = us->start[i + 1] - us->start[i];
		if (nu > captmp) {
			captmp = nu;
			tmp = xrealloc(tmp, sizeof(NodeUse) * captmp);
		}
		uint32_t cnt = 0;
		bool *saved = NULL, *leaves = NULL;
		bool sbuf[8] = {0}, lbuf[8] = {0};
		saved = op->nout <= 8 ? sbuf : xcalloc(op->nout, sizeof(bool));
		leaves = op->nout <= 8 ? lbuf : xcalloc(op->nout, sizeof(bool));
		for (uint32_t k = us->start[i]; k < us->start[i + 1]; k++) {
			const Use *u = &us->use[k];
			const Input *in = &u->op->in[u->slot];
			uint32_t w = node[u->op->id];
			if (in->ctrl) {
				if (w != v)
					tg_add_edge(t, v, w, 0);
				continue;
			}
			Role ru = op_role(g, u->op);
			if (r != ROLE_BWD && r != ROLE_UPDATE && r != ROLE_PARAM &&
			    ru == ROLE_BWD)
				saved[in->idx] = true;
			/* A gradient waits for its update, which runs after
			 * the backward pass: all of them are there at once. */
			if (r == ROLE_BWD && ru == ROLE_UPDATE)
				saved[in->idx] = true;
			if (w != v) {
				leaves[in->idx] = true;
				tmp[cnt++] = (NodeUse){w, in->idx};
			}
		}
		if (cnt > 1)
			qsort(tmp, cnt, sizeof(NodeUse), nodeuse_cmp);
		for (uint32_t j = 0; j < cnt; j++)
			if (j == 0 || tmp[j].node != tmp[j - 1].node ||
			    tmp[j].k != tmp[j - 1].k)
				tg_add_edge(t, v, tmp[j].node,
					    cost_out_bytes(g, op, tmp[j].k));
		if (r != ROLE_PARAM)
			for (uint32_t k = 0; k < op->nout; k++) {
				double b = cost_out_bytes(g, op, k);
				if (saved[k]) {
					t->mem_perm[v] += b;
					/* a backward op's: a gradient */
					if (r == ROLE_BWD)
						t->mem_grad[v] += b;
				} else if (leaves[k])
					t->mem_temp[v] += b;
				else if (b > internal_max[v])
					internal_max[v] = b;
			}
		if (saved != sbuf)
			free(saved);
		if (leaves != lbuf)
			free(leaves);
	}
	for (uint32_t v = 0; v < n; v++)
		t->mem_temp[v] += internal_max[v];
	params_to_owners(g, t);
	free(internal_max);
	free(tmp);
	if (errs) {
		tg_free(t);
		return NULL;
	}
	if (!tg_finish(t)) {
		diag_error(d, (Loc){0},
			   "the fused groups form a cycle; re-run fuse or remove "
			   "the @group annotations");
		tg_free(t);
		return NULL;
	}
	return t;
}

void tg_free(TaskGraph *t)
{
	if (!t)
		return;
	free(t->cost);
	free(t->mem_perm);
	free(t->mem_param);
	free(t->mem_grad);
	free(t->mem_temp);
	free(t->pinned);
	free(t->succ_start);
	free(t->succ);
	free(t->pred_start);
	free(t->pred);
	free(t->topo);
	free(t->name);
	free(t->op_node);
	free(t->edges);
	free(t);
}

double tg_comm(const TaskGraph *t, int a, int b, double bytes)
{
	return a == b ? 0 : cost_transfer(t->m, a, b, bytes);
}

void tg_apply(const TaskGraph *t, Graph *g, const int *dev)
{
	for (uint32_t i = 0; i < g->nops && i < t->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead || t->op_node[i] == UINT32_MAX)
			continue;
		int d = dev[t->op_node[i]];
		op_set_ann(g, op, ANN_DEVICE, val_str(g->arena, t->c->devs[d].name));
		op_unset(g, op, ann_key(ANN_REPLICAS));
		op_unset(g, op, ann_key(ANN_SHARES));
		op_unset(g, op, ann_key(ANN_DUP));
	}
}

void tg_weights(const TaskGraph *t, TgWeight how, double *w)
{
	for (uint32_t v = 0; v < t->n; v++) {
		double acc = how == TG_MIN ? INFINITY : 0;
		for (int d = 0; d < t->ndev; d++) {
			double x = tg_cost(t, v, d);
			if (how == TG_MIN)
				acc = x < acc ? x : acc;
			else if (how == TG_MAX)
				acc = x > acc ? x : acc;
			else
				acc += x;
		}
		if (how == TG_MEAN && t->ndev)
			acc /= t->ndev;
		w[v] = t->ndev ? acc : 0;
	}
}

double tg_edge_time(const TaskGraph *t, TgWeight how, double bytes)
{
	if (bytes <= 0 || t->ndev < 2)
		return 0;
	return t->elat[how] + bytes * t->einv[how];
}

double tg_levels(const TaskGraph *t, const double *w, TgWeight how,
		 double *tlevel, double *blevel)
{
	uint32_t n = t->n;
	double *tl = tlevel ? tlevel : xmalloc(sizeof(double) * ((size_t)n + 1));
	double *bl = blevel ? blevel : xmalloc(sizeof(double) * ((size_t)n + 1));
	double cp = 0;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t v = t->topo[j];
		double best = 0;
		for (uint32_t k = t->pred_start[v]; k < t->pred_start[v + 1]; k++) {
			uint32_t u = t->pred[k].node;
			double x = tl[u] + w[u] + tg_edge_time(t, how, t->pred[k].bytes);
			best = x > best ? x : best;
		}
		tl[v] = best;
	}
	for (uint32_t j = n; j-- > 0;) {
		uint32_t v = t->topo[j];
		double best = 0;
		for (uint32_t k = t->succ_start[v]; k < t->succ_start[v + 1]; k++) {
			uint32_t s = t->succ[k].node;
			double x = tg_edge_time(t, how, t->succ[k].bytes) + bl[s];
			best = x > best ? x : best;
		}
		bl[v] = w[v] + best;
		cp = tl[v] + bl[v] > cp ? tl[v] + bl[v] : cp;
	}
	if (!tlevel)
		free(tl);
	if (!blevel)
		free(bl);
	return cp;
}

void tg_mem_init(const TaskGraph *t, TgMem *mm)
{
	mm->perm = xcalloc((size_t)t->ndev + 1, sizeof(double));
	mm->temp = xcalloc((size_t)t->ndev + 1, sizeof(double));
}

void tg_mem_free(TgMem *mm)
{
	free(mm->perm);
	free(mm->temp);
	mm->perm = mm->temp = NULL;
}

double tg_mem_cap(const TaskGraph *t, int d)
{
	return t->c->types[t->c->devs[d].type].memory;
}

double tg_mem_used(const TgMem *mm, int d)
{
	return mm->perm[d] + mm->temp[d];
}

bool tg_mem_fits(const TaskGraph *t, const TgMem *mm, int d, uint32_t v)
{
	double temp = t->mem_temp[v] > mm->temp[d] ? t->mem_temp[v] : mm->temp[d];
	return mm->perm[d] + t->mem_perm[v] + temp <= tg_mem_cap(t, d);
}

void tg_mem_add(const TaskGraph *t, TgMem *mm, int d, uint32_t v)
{
	mm->perm[d] += t->mem_perm[v];
	if (t->mem_temp[v] > mm->temp[d])
		mm->temp[d] = t->mem_temp[v];
}

bool tg_mem_report(const TaskGraph *t, const int *dev, FILE *f)
{
	TgMem mm;
	tg_mem_init(t, &mm);
	for (uint32_t v = 0; v < t->n; v++)
		tg_mem_add(t, &mm, dev[v], v);
	double *used = xmalloc(sizeof(double) * ((size_t)t->ndev + 1));
	for (int d = 0; d < t->ndev; d++)
		used[d] = tg_mem_used(&mm, d);
	bool over = cluster_mem_report(f, t->c, NULL, t->ndev, used) > 0;
	free(used);
	tg_mem_free(&mm);
	return over;
}

int tg_mem_roomiest(const TaskGraph *t, const TgMem *mm)
{
	int best = 0;
	double room = -INFINITY;
	for (int d = 0; d < t->ndev; d++) {
		double r = tg_mem_cap(t, d) - tg_mem_used(mm, d);
		if (r > room) {
			room = r;
			best = d;
		}
	}
	return best;
}
