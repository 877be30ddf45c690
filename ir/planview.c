/* planview.c — one view of a plan's communication (docs/plan.md): its
 * collectives (AllReduce members grouped by `key`), its Transfers and its
 * @order, and the plan verifier built on it.
 *
 * Every reader of an AllReduce's `key` goes through plan_coll_key, and
 * the simulator groups collectives with plan_view, so the simulator, the
 * backends and the verifier agree on what a collective is.  plan_verify checks, with a
 * located error for each problem (graph_verify calls it: after parsing
 * and, with --verify-each, after every pass):
 *   - the members of a collective agree on `devices` and `algo`, have
 *     one output of the same type, and sit one per listed device;
 *   - a Transfer's input lives on another device than the Transfer (a
 *     Transfer of a value to the device it is on moves nothing: comm run
 *     twice over a plan produced those);
 *   - @order cannot deadlock: each device runs its ops (its collective
 *     stream its AllReduces, each link its Transfers) in @order, a
 *     collective's members start together, and no op waits, through
 *     those and the data and control edges, for an op that must run
 *     after it (the simulator's rule and its sequences);
 *   - every device named (@device, @replicas, @ps, `devices`) exists in
 *     the cluster.
 * O(V log V + E). */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

bool plan_coll_key(const Graph *g, const Op *op, int64_t *key)
{
	const Value *k = op_get(g, op, "key");
	if (!k || k->kind != V_INT)
		return false;
	*key = k->i;
	return true;
}

static bool is_allreduce(const Op *op)
{
	return strcmp(op->type, "AllReduce") == 0;
}

typedef struct KeyId {
	int64_t key;
	uint32_t id;
} KeyId;

static int keyid_cmp(const void *pa, const void *pb)
{
	const KeyId *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int plan_device(const Cluster *c, const Value *v)
{
	if (!c || !v || (v->kind != V_STR && v->kind != V_IDENT))
		return -1;
	return cluster_find_device(c, v->s);
}

int plan_coll_devices(const Cluster *c, const Value *list, int *devs, int max)
{
	int n = 0;
	for (uint32_t q = 0; list && list->kind == V_LIST && q < list->list.n &&
			     n < max; q++) {
		int d = plan_device(c, list->list.items[q]);
		if (d >= 0)
			devs[n++] = d;
	}
	return n;
}

int plan_view(const Graph *g, PlanView *pv, Diag *d)
{
	int before = d ? d->nerrors : 0, errs = 0;
	memset(pv, 0, sizeof *pv);
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		n += !g->ops[i]->dead && is_allreduce(g->ops[i]);
	pv->coll_of = xmalloc(sizeof(uint32_t) * ((size_t)g->nops + 1));
	for (uint32_t i = 0; i < g->nops; i++)
		pv->coll_of[i] = UINT32_MAX;
	pv->members = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	pv->coll = xcalloc((size_t)n + 1, sizeof(PlanColl));
	KeyId *ks = xmalloc(sizeof(KeyId) * ((size_t)n + 1));
	uint32_t m = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		int64_t key;
		if (op->dead || !is_allreduce(op))
			continue;
		if (!plan_coll_key(g, op, &key)) {
			if (d)
				diag_error(d, op->loc, "AllReduce %%%s has no integer "
					   "'key'", op->name);
			errs++;
			continue;
		}
		ks[m++] = (KeyId){key, i};
	}
	qsort(ks, m, sizeof *ks, keyid_cmp);
	for (uint32_t j = 0; j < m;) {
		uint32_t e = j;
		while (e < m && ks[e].key == ks[j].key)
			e++;
		PlanColl *cl = &pv->coll[pv->ncoll];
		cl->key = ks[j].key;
		cl->first = j;
		cl->n = e - j;
		const Op *first = g->ops[ks[j].id];
		const char *algo = op_get_str(g, first, "algo");
		cl->algo = algo ? algo : "ring";
		cl->devices = op_get(g, first, "devices");
		for (uint32_t q = j; q < e; q++) {
			pv->members[q] = ks[q].id;
			pv->coll_of[ks[q].id] = pv->ncoll;
		}
		pv->ncoll++;
		j = e;
	}
	free(ks);
	return d ? d->nerrors - before : errs;
}

void plan_view_free(PlanView *pv)
{
	free(pv->coll_of);
	free(pv->members);
	free(pv->coll);
	memset(pv, 0, sizeof *pv);
}

/* ---- the plan verifier -------------------------------------------------- */

static bool same_value(const Value *a, const Value *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case V_INT: return a->i == b->i;
	case V_BOOL: return a->b == b->b;
	case V_STR: case V_IDENT: return strcmp(a->s, b->s) == 0;
	case V_LIST:
		if (a->list.n != b->list.n)
			return false;
		for (uint32_t i = 0; i < a->list.n; i++)
			if (!same_value(a->list.items[i], b->list.items[i]))
				return false;
		return true;
	default: return false;
	}
}

static int op_device(const Graph *g, const Op *op)
{
	return plan_device(g->cluster, op_ann(g, op, ANN_DEVICE));
}

/* One collective: members agree with the first, one per listed device. */
static void check_coll(const Graph *g, const PlanView *pv, const PlanColl *cl,
		       Diag *d)
{
	const Op *first = g->ops[pv->members[cl->first]];
	const Value *dl = cl->devices;
	const Cluster *c = g->cluster;
	if (!dl || dl->kind != V_LIST || dl->list.n == 0) {
		diag_error(d, first->loc, "AllReduce key %lld: %%%s has no "
			   "'devices' list", (long long)cl->key, first->name);
		return;
	}
	for (uint32_t q = 0; q < dl->list.n; q++)
		if (c && plan_device(c, dl->list.items[q]) < 0) {
			diag_error(d, first->loc, "AllReduce key %lld: device %u "
				   "of 'devices' is not a device of cluster '%s'",
				   (long long)cl->key, q, c->name);
			return;
		}
	for (uint32_t q = 1; q < cl->n; q++) {
		const Op *op = g->ops[pv->members[cl->first + q]];
		const char *algo = op_get_str(g, op, "algo");
		if (!same_value(op_get(g, op, "devices"), dl))
			diag_error(d, op->loc, "AllReduce key %lld: %%%s's 'devices' "
				   "differ from %%%s's", (long long)cl->key,
				   op->name, first->name);
		else if (strcmp(algo ? algo : "ring", cl->algo) != 0)
			diag_error(d, op->loc, "AllReduce key %lld: %%%s's algo "
				   "'%s' differs from %%%s's '%s'", (long long)cl->key,
				   op->name, algo ? algo : "ring", first->name, cl->algo);
		else if (op->nout != first->nout ||
			 (op->nout && !type_eq(&op->out[0], &first->out[0])))
			diag_error(d, op->loc, "AllReduce key %lld: %%%s's type "
				   "differs from %%%s's", (long long)cl->key,
				   op->name, first->name);
	}
	if (dl->list.n != cl->n) {
		diag_error(d, first->loc, "AllReduce key %lld: its members must be "
			   "one per device of its 'devices' list: %u members for "
			   "%u devices", (long long)cl->key, cl->n, dl->list.n);
		return;
	}
	if (!c)
		return;
	/* one member per listed device */
	for (uint32_t q = 0; q < cl->n; q++) {
		const Op *op = g->ops[pv->members[cl->first + q]];
		int dv = op_device(g, op);
		bool listed = false, twice = false;
		for (uint32_t p = 0; p < dl->list.n; p++)
			listed |= plan_device(c, dl->list.items[p]) == dv;
		for (uint32_t p = 0; p < q; p++)
			twice |= op_device(g, g->ops[pv->members[cl->first + p]]) == dv;
		if (dv < 0 || !listed || twice) {
			diag_error(d, op->loc, "AllReduce key %lld: its members must "
				   "be one per device of its 'devices' list: %%%s %s",
				   (long long)cl->key, op->name,
				   dv < 0 ? "has no @device"
				   : !listed ? "runs on a device its 'devices' list lacks"
					     : "shares its device with another member");
			return;
		}
	}
}

static bool order_of(const Graph *g, const Op *op, int64_t *o)
{
	const Value *v = op_ann(g, op, ANN_ORDER);
	if (!v || v->kind != V_INT)
		return false;
	*o = v->i;
	return true;
}

/* An op's place in the sequence of its resource, as the simulator runs
 * it: resource (its device's compute, its device's collective stream for
 * an AllReduce, the first link of its route for a Transfer), then @order
 * (none: last), then id. */
typedef struct SeqKey {
	int64_t res;
	int64_t order;
	uint32_t id;
	bool ordered;            /* carries @order */
} SeqKey;

/* The link a Transfer from device a to device b is sequenced on, as
 * the simulator picks it (sim.c: an op is ordered on the first resource
 * of its cluster_route): the link override, the directed device pair
 * inside one machine, or the sending machine's NIC out.  Numbered after
 * the 2 ndevs device and collective resources; -1 when a == b (the
 * simulator gives it no resource). */
static int64_t link_res(const Cluster *c, int a, int b)
{
	int64_t nd = c->ndevs, base = 2 * nd;
	Route r = cluster_route(c, a, b);
	switch (r.kind) {
	case ROUTE_LOCAL:
		return -1;
	case ROUTE_LINK:
		return base + 2 * r.link + r.dir;
	case ROUTE_PAIR:
		return base + 2 * (int64_t)c->nlinks + a * nd + b;
	case ROUTE_NET:
		break;
	}
	return base + 2 * (int64_t)c->nlinks + nd * nd + r.ma;
}

static int seqkey_cmp(const void *pa, const void *pb)
{
	const SeqKey *a = pa, *b = pb;
	if (a->res != b->res)
		return a->res < b->res ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The nodes of the deadlock graph: live ops that are not a
 * collective's member other than its first. */
typedef struct NodeOf {
	const Graph *g;
	const uint32_t *node;
} NodeOf;

static bool is_node(const void *arg, uint32_t i)
{
	const NodeOf *no = arg;
	return !no->g->ops[i]->dead && no->node[i] == i;
}

typedef struct EdgesLeft {
	const uint32_t *eu, *ev;
	uint32_t k;
	const uint32_t *left;
} EdgesLeft;

/* The tail of the first edge into v whose tail is left unordered. */
static uint32_t pred_left(const void *arg, uint32_t v)
{
	const EdgesLeft *el = arg;
	for (uint32_t e = 0; e < el->k; e++)
		if (el->ev[e] == v && el->left[el->eu[e]])
			return el->eu[e];
	return UINT32_MAX;
}

/* Can the plan run to the end?  Each device runs its ops, its
 * collective stream its AllReduces and each link its Transfers, in
 * @order (where any op of it has one; unordered ops after the ordered
 * ones), and a collective's members
 * start together.  A cycle among the data and control edges, those
 * sequences and the collectives (members merged into one node) is a
 * deadlock: reported at an op on it. */
static void check_deadlock(const Graph *g, const PlanView *pv, Diag *d)
{
	const Cluster *c = g->cluster;
	uint32_t n = g->nops;
	if (!c)
		return;
	/* without @order the sequences are dynamic, and the graph (already
	 * checked acyclic) cannot deadlock */
	bool any = false;
	int64_t o0;
	for (uint32_t i = 0; i < n && !any; i++)
		any = !g->ops[i]->dead && order_of(g, g->ops[i], &o0);
	if (!any)
		return;
	/* node of each op: itself, or its collective's first member */
	uint32_t *node = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	for (uint32_t i = 0; i < n; i++)
		node[i] = pv->coll_of[i] == UINT32_MAX
				  ? i : pv->members[pv->coll[pv->coll_of[i]].first];
	SeqKey *sk = xmalloc(sizeof(SeqKey) * ((size_t)n + 1));
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		const Op *op = g->ops[i];
		int dv;
		if (op->dead || (dv = op_device(g, op)) < 0)
			continue;
		int64_t res = is_allreduce(op) ? c->ndevs + dv : dv;
		/* a Transfer of a value (not a control input) is the
		 * simulator's: sequenced on its link, or nowhere */
		if (strcmp(op->type, "Transfer") == 0 && op->nin &&
		    !op->in[0].ctrl) {
			int src = op_device(g, op->in[0].src);
			if (src < 0 || (res = link_res(c, src, dv)) < 0)
				continue;
		}
		int64_t o = INT64_MAX;
		bool has = order_of(g, op, &o);
		sk[m++] = (SeqKey){res, o, i, has};
	}
	qsort(sk, m, sizeof *sk, seqkey_cmp);
	/* a resource is ordered when any op of it carries @order: mark
	 * each op of such a run */
	for (uint32_t a = 0, b; a < m; a = b) {
		bool any_o = false;
		for (b = a; b < m && sk[b].res == sk[a].res; b++)
			any_o |= sk[b].ordered;
		for (uint32_t q = a; q < b; q++)
			sk[q].ordered = any_o;
	}
	/* edges: inputs, then consecutive ops of an ordered resource */
	uint32_t ne = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!g->ops[i]->dead)
			ne += g->ops[i]->nin;
	ne += m;
	uint32_t *eu = xmalloc(sizeof(uint32_t) * ((size_t)ne + 1));
	uint32_t *ev = xmalloc(sizeof(uint32_t) * ((size_t)ne + 1));
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		const Op *op = g->ops[i];
		for (uint32_t j = 0; !op->dead && j < op->nin; j++)
			if (op->in[j].src && !op->in[j].src->dead &&
			    node[op->in[j].src->id] != node[i]) {
				eu[k] = node[op->in[j].src->id];
				ev[k++] = node[i];
			}
	}
	for (uint32_t q = 1; q < m; q++)
		if (sk[q].res == sk[q - 1].res && sk[q].ordered &&
		    node[sk[q - 1].id] != node[sk[q].id]) {
			eu[k] = node[sk[q - 1].id];
			ev[k++] = node[sk[q].id];
		}
	uint32_t *start = xmalloc(sizeof(uint32_t) * ((size_t)n + 2));
	uint32_t *to = xmalloc(sizeof(uint32_t) * ((size_t)k + 1));
	topo_csr(n, k, eu, ev, 1, start, to);
	uint32_t *indeg = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	uint32_t *queue = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	NodeOf no = {g, node};
	TopoDag dag = {.n = n, .start = start, .to = to, .keep = is_node,
		       .arg = &no};
	uint32_t nodes = 0;
	for (uint32_t i = 0; i < n; i++)
		nodes += is_node(&no, i);
	if (topo_sort(&dag, queue, indeg) < nodes) {
		/* walk back from a node left over, through predecessors also
		 * left over, until a node repeats: it is on a cycle */
		uint32_t i = 0;
		while (!is_node(&no, i) || !indeg[i])
			i++;
		EdgesLeft el = {eu, ev, k, indeg};
		topo_cycle(n, i, pred_left, &el, queue);
		const Op *op = g->ops[queue[0]];
		int dv = op_device(g, op);
		diag_error(d, op->loc, "@order deadlocks the plan: %%%s on %s "
			   "waits, through its inputs, its device's or a link's "
			   "order or a collective, for an op ordered after it", op->name,
			   dv >= 0 ? c->devs[dv].name : "?");
	}
	free(queue);
	free(to);
	free(indeg);
	free(start);
	free(ev);
	free(eu);
	free(sk);
	free(node);
}

int plan_verify(const Graph *g, Diag *d)
{
	int before = d->nerrors;
	const Cluster *c = g->cluster;
	/* Transfers connect two devices */
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || strcmp(op->type, "Transfer") != 0 || !op->nin ||
		    op->in[0].ctrl || !c)
			continue;
		int to = op_device(g, op), from = op_device(g, op->in[0].src);
		if (to >= 0 && from >= 0 && to == from)
			diag_error(d, op->loc, "Transfer %%%s moves %%%s to %s, the "
				   "device it is on", op->name, op->in[0].src->name,
				   c->devs[to].name);
	}
	PlanView pv;
	if (plan_view(g, &pv, d) == 0) {
		for (uint32_t k = 0; k < pv.ncoll; k++)
			check_coll(g, &pv, &pv.coll[k], d);
		if (d->nerrors == before)
			check_deadlock(g, &pv, d);
	}
	plan_view_free(&pv);
	return d->nerrors - before;
}

const Op *plan_comm_op(const Graph *g)
{
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (!op->dead &&
		    ((op_flags(op) & OPF_COMM) || op_ann(g, op, ANN_REPLICA)))
			return op;
	}
	return NULL;
}

const Op *plan_op(const Graph *g)
{
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		if ((op_flags(op) & OPF_COMM) || op_ann(g, op, ANN_REPLICA) ||
		    op_ann(g, op, ANN_PART))
			return op;
	}
	return NULL;
}
