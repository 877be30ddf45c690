/* dot.c — --emit=dot: a graph or plan as Graphviz DOT.
 *
 * Nodes are ops (ids n<op id>, so names never need to be DOT ids), filled
 * with the colour of their @device (the cluster's devices in order, then
 * device names the cluster lacks); replicated ops of a strategy
 * (@replicas) are striped with their replicas' colours; unplaced ops are
 * white.  Communication ops are drawn with shapes of their own (Transfer:
 * cds, AllReduce: double octagon, Split/SplitV with @origin: trapezium,
 * ConcatV2/AddN with @origin: inverted trapezium) and a bold border;
 * inputs are parallelograms, parameters cylinders.  Fused groups (@group)
 * are clusters.  Data edges carry the size of their tensor; edges between
 * two devices are red and thick; control edges dashed.  A legend lists
 * the devices and the styles that occur.  Every name is escaped
 * (viz_dot_text); tooltips (SVG <title>) hold the details.  Works on
 * unplaced graphs.  O(V + E + G log G) for G grouped ops; no recursion. */
#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Device names -> colour index: open addressing on the name. */
typedef struct DevMap {
	const char **name;
	int *idx;
	uint32_t cap;
	int n;
	const char **order;     /* names by index */
	bool *used;
	int ncap;
} DevMap;

static void devmap_init(DevMap *m, uint32_t hint)
{
	m->cap = 16;
	while (m->cap < 2 * hint + 2)
		m->cap *= 2;
	m->name = xcalloc(m->cap, sizeof(char *));
	m->idx = xcalloc(m->cap, sizeof(int));
	m->n = 0;
	m->ncap = 8;
	m->order = xmalloc(sizeof(char *) * (size_t)m->ncap);
	m->used = xcalloc((size_t)m->ncap, sizeof(bool));
}

static void devmap_free(DevMap *m)
{
	free(m->name);
	free(m->idx);
	free(m->order);
	free(m->used);
}

/* Index of device name s, added if new (s must outlive the map). */
static int devmap_get(DevMap *m, const char *s)
{
	if ((uint32_t)(m->n + 1) * 2 > m->cap) {
		DevMap big = *m;
		big.cap = m->cap * 2;
		big.name = xcalloc(big.cap, sizeof(char *));
		big.idx = xcalloc(big.cap, sizeof(int));
		for (uint32_t i = 0; i < m->cap; i++) {
			if (!m->name[i])
				continue;
			uint32_t h = (uint32_t)hash_bytes(m->name[i], strlen(m->name[i])) &
				     (big.cap - 1);
			while (big.name[h])
				h = (h + 1) & (big.cap - 1);
			big.name[h] = m->name[i];
			big.idx[h] = m->idx[i];
		}
		free(m->name);
		free(m->idx);
		m->name = big.name;
		m->idx = big.idx;
		m->cap = big.cap;
	}
	uint32_t h = (uint32_t)hash_bytes(s, strlen(s)) & (m->cap - 1);
	for (; m->name[h]; h = (h + 1) & (m->cap - 1))
		if (strcmp(m->name[h], s) == 0)
			return m->idx[h];
	if (m->n == m->ncap) {
		m->ncap *= 2;
		m->order = xrealloc(m->order, sizeof(char *) * (size_t)m->ncap);
		m->used = xrealloc(m->used, sizeof(bool) * (size_t)m->ncap);
	}
	m->name[h] = s;
	m->idx[h] = m->n;
	m->order[m->n] = s;
	m->used[m->n] = false;
	return m->n++;
}

enum { STYLE_TRANSFER, STYLE_ALLREDUCE, STYLE_SPLIT, STYLE_JOIN, STYLE_CROSS,
       STYLE_CONTROL, STYLE_COLLECTIVE, STYLE_UNPLACED, STYLE_COUNT };

typedef struct Dot {
	FILE *f;
	const Graph *g;
	DevMap dev;
	int *opdev;              /* per op: colour index, -1 unplaced, -2 replicated */
	bool labels;
	bool seen[STYLE_COUNT];
} Dot;

static const char *str_of(const Value *v)
{
	return v && (v->kind == V_STR || v->kind == V_IDENT) ? v->s : NULL;
}

static void node(Dot *d, const Op *op)
{
	FILE *f = d->f;
	const Graph *g = d->g;
	VizCat cat = viz_category(g, op);
	const char *shape = "box", *style = "filled,rounded";
	bool comm = false;
	if (cat == VC_TRANSFER) {
		shape = "cds", comm = true;
		d->seen[STYLE_TRANSFER] = true;
	} else if (cat == VC_COLLECTIVE) {
		shape = "doubleoctagon", comm = true;
		d->seen[STYLE_ALLREDUCE] = true;
	} else if (cat == VC_COMM) {
		bool split = strncmp(op->type, "Split", 5) == 0;
		shape = split ? "trapezium" : "invtrapezium", comm = true;
		d->seen[split ? STYLE_SPLIT : STYLE_JOIN] = true;
	} else if (cat == VC_INPUT) {
		shape = "parallelogram", style = "filled";
	} else if (cat == VC_PARAM) {
		shape = "cylinder", style = "filled";
	}
	char col[8];
	fprintf(f, "  n%u [label=\"", op->id);
	viz_dot_text(f, op->name);
	fputs("\\n", f);
	viz_dot_text(f, op->type);
	fprintf(f, "\", shape=%s", shape);
	int di = d->opdev[op->id];
	if (di == -2) {
		/* Replicated: a stripe per replica device. */
		fputs(", style=\"striped\", fillcolor=\"", f);
		const Value *rl = op_ann(g, op, ANN_REPLICAS);
		for (uint32_t i = 0; i < rl->list.n; i++) {
			const char *s = str_of(rl->list.items[i]);
			viz_device_color(s ? devmap_get(&d->dev, s) : 0, col);
			fprintf(f, "%s%s", i ? ":" : "", col);
		}
		fputc('"', f);
	} else {
		if (di >= 0)
			viz_device_color(di, col);
		fprintf(f, ", style=\"%s%s\", fillcolor=\"%s\"", style,
			comm ? ",bold" : "", di >= 0 ? col : "#ffffff");
	}
	if (comm)
		fputs(cat == VC_TRANSFER ? ", penwidth=2, margin=\"0.3,0.055\"" : ", penwidth=2", f);
	/* Tooltip: the details. */
	char buf[256];
	fputs(", tooltip=\"", f);
	viz_dot_text(f, op->name);
	fputs(" (", f);
	viz_dot_text(f, op->type);
	fputc(')', f);
	const char *dev = op_ann_str(g, op, ANN_DEVICE);
	if (dev) {
		fputs("\\ndevice: ", f);
		viz_dot_text(f, dev);
	} else if (di == -2) {
		const Value *rl = op_ann(g, op, ANN_REPLICAS);
		for (uint32_t i = 0; i < rl->list.n; i++) {
			const char *s = str_of(rl->list.items[i]);
			fputs(i ? ", " : "\\nreplicas: ", f);
			viz_dot_text(f, s ? s : "?");
		}
	}
	for (uint32_t k = 0; k < op->nout; k++) {
		fputs(k ? ", " : "\\noutputs: ", f);
		viz_dot_text(f, type_str(&op->out[k], buf, sizeof buf));
	}
	if (cat != VC_OTHER)
		fprintf(f, "\\nrole: %s", viz_cat_desc(cat));
	const char *origin = op_ann_str(g, op, ANN_ORIGIN);
	if (origin) {
		fputs("\\nfrom: ", f);
		viz_dot_text(f, origin);
	}
	double t0 = op_ann_num(g, op, ANN_START, -1), t1 = op_ann_num(g, op, ANN_FINISH, -1);
	if (t0 >= 0 && t1 >= 0) {
		char a[32], b[32];
		fprintf(f, "\\nsimulated: %s to %s", viz_time(a, sizeof a, t0),
			viz_time(b, sizeof b, t1));
	}
	fputs("\"];\n", f);
}

static void edges(Dot *d, const Op *op)
{
	FILE *f = d->f;
	const Graph *g = d->g;
	int dc = d->opdev[op->id];
	char sz[32];
	for (uint32_t j = 0; j < op->nin; j++) {
		const Input *in = &op->in[j];
		const Op *src = in->src;
		if (!src || src->dead)
			continue;
		fprintf(f, "  n%u -> n%u [", src->id, op->id);
		if (in->ctrl) {
			d->seen[STYLE_CONTROL] = true;
			fputs("style=dashed, color=\"#888888\", arrowhead=empty, "
			      "tooltip=\"control: ", f);
			viz_dot_text(f, src->name);
			fputs(" before ", f);
			viz_dot_text(f, op->name);
			fputs("\"];\n", f);
			continue;
		}
		int ds = d->opdev[src->id];
		bool cross = ds >= 0 && dc >= 0 && ds != dc;
		double bytes = in->idx < src->nout ? cost_out_bytes(g, src, in->idx) : -1;
		if (bytes >= 0)
			viz_bytes(sz, sizeof sz, bytes);
		else
			snprintf(sz, sizeof sz, "?");
		if (d->labels) {
			fputs("label=\"", f);
			if (src->nout > 1)
				fprintf(f, ":%u ", in->idx);
			fprintf(f, "%s\", ", sz);
		}
		if (cross) {
			d->seen[STYLE_CROSS] = true;
			fputs("color=\"#d62728\", fontcolor=\"#d62728\", penwidth=2.5, ", f);
		}
		fputs("tooltip=\"", f);
		viz_dot_text(f, src->name);
		if (in->idx)
			fprintf(f, ":%u", in->idx);
		fputs(" to ", f);
		viz_dot_text(f, op->name);
		fprintf(f, ", %s%s\"];\n", sz, cross ? ", between devices" : "");
	}
}

static void legend(Dot *d)
{
	FILE *f = d->f;
	bool any = false;
	for (int i = 0; i < d->dev.n && !any; i++)
		any = d->dev.used[i];
	for (int i = 0; i < STYLE_COUNT && !any; i++)
		any = d->seen[i] && i != STYLE_UNPLACED;
	if (!any)
		return;
	fputs("  subgraph cluster_legend {\n    label=\"legend\"; fontsize=10; "
	      "style=\"rounded\"; color=\"#bbbbbb\";\n    node [fontsize=9];\n", f);
	char col[8];
	int prev = -1;          /* chained by invisible edges: left to right */
	for (int i = 0; i < d->dev.n; i++) {
		if (!d->dev.used[i])
			continue;
		viz_device_color(i, col);
		fprintf(f, "    legend_d%d [label=\"", i);
		viz_dot_text(f, d->dev.order[i]);
		fprintf(f, "\", shape=box, style=\"filled,rounded\", fillcolor=\"%s\"];\n", col);
		if (prev >= 0)
			fprintf(f, "    legend_d%d -> legend_d%d [style=invis];\n", prev, i);
		prev = i;
	}
	static const char *const item[STYLE_COUNT] = {
		[STYLE_TRANSFER] = "label=\"Transfer\", shape=cds, style=\"bold\", penwidth=2",
		[STYLE_ALLREDUCE] = "label=\"AllReduce\", shape=doubleoctagon, style=\"bold\", penwidth=2",
		[STYLE_SPLIT] = "label=\"split\", shape=trapezium, style=\"bold\", penwidth=2",
		[STYLE_JOIN] = "label=\"concat / sum\", shape=invtrapezium, style=\"bold\", penwidth=2",
		[STYLE_CROSS] = "label=\"\xe2\x9f\xb6 between devices\", shape=plaintext, fontcolor=\"#d62728\"",
		[STYLE_CONTROL] = "label=\"\xe2\x87\xa2 control (order only)\", shape=plaintext, fontcolor=\"#888888\"",
		[STYLE_COLLECTIVE] = "label=\"\xe2\x8b\xaf one collective\", shape=plaintext, fontcolor=\"#4f8f8a\"",
		[STYLE_UNPLACED] = "label=\"unplaced\", shape=box, style=\"rounded\"",
	};
	for (int i = 0; i < STYLE_COUNT; i++) {
		if (!d->seen[i])
			continue;
		fprintf(f, "    legend_s%d [%s];\n", i, item[i]);
		if (prev >= 0)
			fprintf(f, "    legend_%c%d -> legend_s%d [style=invis];\n",
				prev < d->dev.n ? 'd' : 's', prev < d->dev.n ? prev : prev - d->dev.n, i);
		prev = d->dev.n + i;
	}
	fputs("  }\n", f);
}

/* The members of each collective (AllReduce ops sharing a key) joined
 * by dotted lines that do not affect the layout. */
static void collectives(Dot *d)
{
	PlanView pv;
	plan_view(d->g, &pv, NULL);
	for (uint32_t c = 0; c < pv.ncoll; c++) {
		const PlanColl *cl = &pv.coll[c];
		for (uint32_t q = 1; q < cl->n; q++) {
			d->seen[STYLE_COLLECTIVE] = true;
			fprintf(d->f, "  n%u -> n%u [dir=none, style=dotted, color=\"#76b7b2\", "
				      "penwidth=2, constraint=false, tooltip=\"AllReduce key %lld\"];\n",
				pv.members[cl->first + q - 1], pv.members[cl->first + q],
				(long long)cl->key);
		}
	}
	plan_view_free(&pv);
}

/* ---- detail=groups ---------------------------------------------------------
 * One node per fused group (or pipeline stage: viz_groups_build), ops in
 * no group one node per device; filled with the colour of its device, or
 * striped with its devices' colours when it runs on several; labelled
 * with its first and last op names, op count, FLOPs and devices.  One
 * edge per pair of groups a data edge joins, labelled with the bytes it
 * moves in total and drawn wider the more it moves (log scale); red when
 * the two run on different device sets.  O(V + E log E). */

typedef struct GEdge {
	int u, v;
	double bytes;
} GEdge;

static int gedge_cmp(const void *pa, const void *pb)
{
	const GEdge *a = pa, *b = pb;
	if (a->u != b->u)
		return a->u < b->u ? -1 : 1;
	return a->v < b->v ? -1 : a->v > b->v;
}

/* The node of op i: its group, or ng + its device (ng + ndev: unplaced). */
static int gnode(const VizGroups *vg, const Dot *d, const int *run, uint32_t i)
{
	if (vg->of[i] >= 0)
		return run[vg->of[i]];
	int dv = d->opdev[i];
	return vg->n + (dv >= 0 ? dv : d->dev.n);
}

/* Marks the devices op i runs on in on[0..ndev). */
static void op_devices(Dot *d, uint32_t i, bool *on)
{
	if (d->opdev[i] >= 0) {
		on[d->opdev[i]] = true;
	} else if (d->opdev[i] == -2) {
		const Value *rl = op_ann(d->g, d->g->ops[i], ANN_REPLICAS);
		for (uint32_t q = 0; q < rl->list.n; q++) {
			const char *s = str_of(rl->list.items[q]);
			if (s)
				on[devmap_get(&d->dev, s)] = true;
		}
	}
}

/* run[k]: the node of group k.  Up to max_nodes groups each get their
 * own; above, consecutive groups (in @group order) on the same devices
 * share the node of the first of them, so a plan of hundreds of groups
 * still draws as a few readable nodes.  runend[k]: the last group of the
 * run node k begins. */
static void group_runs(Dot *d, const VizGroups *vg, int max_nodes, int *run,
		       int *runend)
{
	const Graph *g = d->g;
	int ng = vg->n, ndev = d->dev.n;
	bool *on = xcalloc((size_t)ng * (size_t)(ndev + 1) + 1, sizeof(bool));
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead && vg->of[i] >= 0)
			op_devices(d, i, on + (size_t)vg->of[i] * (ndev + 1));
	for (int k = 0; k < ng; k++) {
		bool same = k > 0 && ng > max_nodes &&
			    memcmp(on + (size_t)k * (ndev + 1),
				   on + (size_t)(k - 1) * (ndev + 1),
				   (size_t)(ndev + 1)) == 0;
		run[k] = same ? run[k - 1] : k;
		runend[run[k]] = k;
	}
	free(on);
}

/* Writes node k's label text: its group (or stages, or "ops in no
 * group") and the names of its first and last ops. */
static void group_label(Dot *d, const VizGroups *vg, const int *runend, int k,
			uint32_t first, uint32_t last)
{
	FILE *f = d->f;
	const Graph *g = d->g;
	int ng = vg->n;
	if (k < ng && runend[k] > k)
		fprintf(f, "%ss %lld\xe2\x80\x93%lld\\n", vg->stages ? "stage" : "group",
			(long long)vg->key[k], (long long)vg->key[runend[k]]);
	else if (k < ng)
		fprintf(f, "%s %lld\\n", vg->stages ? "stage" : "group",
			(long long)vg->key[k]);
	else
		fputs("ops in no group\\n", f);
	if (first != UINT32_MAX) {
		const char *a = op_ann_str(g, g->ops[first], ANN_ORIGIN);
		const char *b = op_ann_str(g, g->ops[last], ANN_ORIGIN);
		viz_dot_text(f, a ? a : g->ops[first]->name);
		if (last != first) {
			fputs(" \xe2\x80\xa6\\n", f);
			viz_dot_text(f, b ? b : g->ops[last]->name);
		}
	}
}

/* Writes a node's fill: striped with the colours of its ndv devices in
 * on[0..ndev) when several, the one device's colour, or white. */
static void group_fill(FILE *f, const bool *on, int ndev, int ndv)
{
	char col[8];
	if (ndv > 1) {
		fputs(", style=\"striped\", fillcolor=\"", f);
		int w = 0;
		for (int q = 0; q < ndev; q++)
			if (on[q]) {
				viz_device_color(q, col);
				fprintf(f, "%s%s", w++ ? ":" : "", col);
			}
		fputc('"', f);
	} else if (ndv == 1) {
		for (int q = 0; q < ndev; q++)
			if (on[q])
				viz_device_color(q, col);
		fprintf(f, ", fillcolor=\"%s\"", col);
	} else {
		fputs(", fillcolor=\"#ffffff\"", f);
	}
}

/* The data edges between distinct nodes, parallel ones merged: returns
 * them sorted by (u, v), bytes the total; *ne their number, (*cnt)[k]
 * the tensors edge k carries. */
static GEdge *group_edges(Dot *d, const VizGroups *vg, const int *run, size_t *ne,
			  size_t **cnt)
{
	const Graph *g = d->g;
	size_t n = 0, cap = 64;
	GEdge *e = xmalloc(sizeof(GEdge) * cap);
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		int v = gnode(vg, d, run, i);
		for (uint32_t j = 0; j < op->nin; j++) {
			const Input *in = &op->in[j];
			if (!in->src || in->src->dead || in->ctrl)
				continue;
			int u = gnode(vg, d, run, in->src->id);
			if (u == v)
				continue;
			if (n == cap)
				e = xrealloc(e, sizeof(GEdge) * (cap *= 2));
			double b = in->idx < in->src->nout ? cost_out_bytes(g, in->src, in->idx) : 0;
			e[n++] = (GEdge){u, v, b > 0 ? b : 0};
		}
	}
	qsort(e, n, sizeof *e, gedge_cmp);
	/* merge parallel edges: e[k].bytes the total, tensors in cnt */
	size_t m = 0;
	size_t *c = xmalloc(sizeof(size_t) * (n + 1));
	for (size_t k = 0; k < n;) {
		size_t q = k;
		double b = 0;
		for (; q < n && e[q].u == e[k].u && e[q].v == e[k].v; q++)
			b += e[q].bytes;
		c[m] = q - k;
		e[m] = (GEdge){e[k].u, e[k].v, b};
		m++;
		k = q;
	}
	*ne = m;
	*cnt = c;
	return e;
}

/* Writes the ne merged edges e (cnt: tensors each) among nn nodes, on:
 * each node's devices.  Keeps an edge when it moves at least min-edge of
 * the heaviest edge's bytes, or it is the heaviest edge into or out of a
 * node: every node stays connected and the layout readable (Graphviz
 * spends its time crossing edges that skip ranks). */
static void draw_group_edges(Dot *d, const GEdge *e, const size_t *cnt, size_t ne,
			     const bool *on, int nn, double min_edge)
{
	FILE *f = d->f;
	int ndev = d->dev.n;
	char buf[32];
	double maxb = 1;
	for (size_t k = 0; k < ne; k++)
		maxb = fmax(maxb, e[k].bytes);
	double *hin = xcalloc((size_t)nn, sizeof(double));
	double *hout = xcalloc((size_t)nn, sizeof(double));
	for (size_t k = 0; k < ne; k++) {
		hin[e[k].v] = fmax(hin[e[k].v], e[k].bytes);
		hout[e[k].u] = fmax(hout[e[k].u], e[k].bytes);
	}
	size_t dropped = 0;
	double dropped_b = 0;
	for (size_t k = 0; k < ne; k++) {
		double b = e[k].bytes;
		if (b < min_edge * maxb && b < hin[e[k].v] && b < hout[e[k].u]) {
			dropped++;
			dropped_b += b;
			continue;
		}
		size_t q = cnt[k];
		bool same = true;
		for (int x = 0; x < ndev; x++)
			same &= on[(size_t)e[k].u * (ndev + 1) + x] ==
				on[(size_t)e[k].v * (ndev + 1) + x];
		double w = 1 + 5 * log1p(b) / log1p(fmax(maxb, b));
		fprintf(f, "  g%d -> g%d [label=\"%s\", penwidth=%.2f%s, "
			   "tooltip=\"%zu tensors, %s\"];\n", e[k].u, e[k].v,
			viz_bytes(buf, sizeof buf, b), w,
			same ? "" : ", color=\"#d62728\", fontcolor=\"#d62728\"",
			q, buf);
		if (!same)
			d->seen[STYLE_CROSS] = true;
	}
	if (dropped)
		fprintf(f, "  omitted [shape=plaintext, fontsize=9, label=\"%zu lighter "
			   "edge%s not drawn (%s in all)\"];\n", dropped,
			dropped > 1 ? "s" : "", viz_bytes(buf, sizeof buf, dropped_b));
	free(hin);
	free(hout);
}

static void dot_groups(Dot *d, const VizGroups *vg, double min_edge, int max_nodes)
{
	FILE *f = d->f;
	const Graph *g = d->g;
	int ng = vg->n, ndev = d->dev.n, nn = ng + ndev + 1;
	int *run = xmalloc(sizeof(int) * (size_t)(nn + 1));
	int *runend = xmalloc(sizeof(int) * (size_t)(nn + 1));
	group_runs(d, vg, max_nodes, run, runend);
	/* per node: ops, FLOPs, first/last op, devices (bitset over ndev) */
	uint32_t *nops = xcalloc((size_t)nn, sizeof(uint32_t));
	uint32_t *first = xmalloc(sizeof(uint32_t) * (size_t)nn);
	uint32_t *last = xmalloc(sizeof(uint32_t) * (size_t)nn);
	double *flops = xcalloc((size_t)nn, sizeof(double));
	bool *on = xcalloc((size_t)nn * (size_t)(ndev + 1), sizeof(bool));
	for (int k = 0; k < nn; k++)
		first[k] = last[k] = UINT32_MAX;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		int k = gnode(vg, d, run, i);
		op_devices(d, i, on + (size_t)k * (ndev + 1));
		if (viz_is_comm(g, op))
			continue;
		Value *rep = op_ann(g, op, ANN_REPLICA);
		bool copy = rep && rep->kind == V_LIST && rep->list.n == 2 &&
			    rep->list.items[0]->kind == V_INT && rep->list.items[0]->i;
		double fl = op_flops(g, op);
		flops[k] += fl > 0 ? fl : 0;
		if (copy)
			continue;
		nops[k]++;
		if (first[k] == UINT32_MAX)
			first[k] = i;
		last[k] = i;
	}
	char buf[32];
	for (int k = 0; k < nn; k++) {
		const bool *onk = on + (size_t)k * (ndev + 1);
		int ndv = 0;
		for (int q = 0; q < ndev; q++)
			ndv += onk[q];
		if (first[k] == UINT32_MAX && !ndv)
			continue;
		fprintf(f, "  g%d [shape=box, style=\"filled,rounded\", label=\"", k);
		group_label(d, vg, runend, k, first[k], last[k]);
		viz_bytes(buf, sizeof buf, flops[k]);
		/* viz_bytes prints "B"; FLOPs read better without it */
		buf[strcspn(buf, "B")] = 0;
		fprintf(f, "\\n%u ops, %sFLOP", nops[k], buf);
		int shown = 0;
		for (int q = 0; q < ndev; q++)
			if (onk[q]) {
				if (shown < 4) {
					fputs(shown ? ", " : "\\n", f);
					viz_dot_text(f, d->dev.order[q]);
				}
				shown++;
			}
		if (shown > 4)
			fprintf(f, " +%d", shown - 4);
		fputc('"', f);
		group_fill(f, onk, ndev, ndv);
		fputs("];\n", f);
	}
	/* edges between nodes, bytes summed */
	size_t ne, *cnt;
	GEdge *e = group_edges(d, vg, run, &ne, &cnt);
	draw_group_edges(d, e, cnt, ne, on, nn, min_edge);
	free(cnt);
	free(e);
	for (int q = 0; q < ndev; q++)
		for (int k = 0; k < nn; k++)
			d->dev.used[q] |= on[(size_t)k * (ndev + 1) + q];
	free(run);
	free(runend);
	free(nops);
	free(first);
	free(last);
	free(flops);
	free(on);
}

bool emit_dot_backend(FILE *f, const EmitCtx *ctx)
{
	const Graph *g = ctx->g;
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : g->cluster;
	Dot d = {.f = f, .g = g, .labels = backend_opt_bool(ctx, "labels")};
	bool groups = backend_opt_bool(ctx, "groups");
	devmap_init(&d.dev, (uint32_t)(c ? c->ndevs : 0));
	for (int i = 0; c && i < c->ndevs; i++)
		devmap_get(&d.dev, c->devs[i].name);
	d.opdev = xmalloc(sizeof(int) * ((size_t)g->nops + 1));
	uint32_t live = 0, placed = 0, ngrouped = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		d.opdev[i] = -1;
		if (op->dead)
			continue;
		live++;
		const char *dev = op_ann_str(g, op, ANN_DEVICE);
		const Value *rl = op_ann(g, op, ANN_REPLICAS);
		if (dev) {
			d.opdev[i] = devmap_get(&d.dev, dev);
			d.dev.used[d.opdev[i]] = true;
			placed++;
		} else if (rl && rl->kind == V_LIST && rl->list.n) {
			d.opdev[i] = -2;
			for (uint32_t k = 0; k < rl->list.n; k++) {
				const char *s = str_of(rl->list.items[k]);
				if (s)
					d.dev.used[devmap_get(&d.dev, s)] = true;
			}
			placed++;
		}
		Value *gv = op_ann(g, op, ANN_GROUP);
		ngrouped += groups && gv && gv->kind == V_INT;
	}
	d.seen[STYLE_UNPLACED] = placed && placed < live;
	/* detail: ops, groups, or auto (groups above group-above live ops
	 * when the graph has fused groups) */
	const char *detail = backend_opt(ctx, "detail");
	if (strcmp(detail, "auto") && strcmp(detail, "ops") && strcmp(detail, "groups")) {
		fprintf(stderr, "pcc: error: --emit-opt detail: expected one of auto, "
			"ops, groups, not '%s'\n", detail);
		free(d.opdev);
		devmap_free(&d.dev);
		return false;
	}
	VizGroups vg = {0};
	bool by_group = strcmp(detail, "groups") == 0;
	if (by_group || strcmp(detail, "auto") == 0) {
		viz_groups_build(&vg, g);
		if (!by_group)
			by_group = vg.n > 0 && live > backend_opt_num(ctx, "group-above");
		if (!by_group)
			viz_groups_free(&vg);
	}

	fputs("digraph \"", f);
	viz_dot_text(f, g->name ? g->name : "graph");
	fprintf(f, "\" {\n  graph [rankdir=%s, fontname=\"Helvetica\", fontsize=12, "
		   "labelloc=t, label=\"", backend_opt_bool(ctx, "horizontal") ? "LR" : "TB");
	viz_dot_text(f, g->name ? g->name : "graph");
	fprintf(f, ": %u ops", live);
	if (by_group)
		fprintf(f, " in %d %s", vg.n, vg.stages ? "pipeline stages" : "fused groups");
	if (placed && c) {
		fputs(placed == live ? ", placed on " : ", partly placed on ", f);
		viz_dot_text(f, c->name ? c->name : "?");
	}
	fputs("\"];\n  node [fontname=\"Helvetica\", fontsize=10];\n"
	      "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\", "
	      "arrowsize=0.7];\n", f);

	if (by_group) {
		dot_groups(&d, &vg, backend_opt_num(ctx, "min-edge"),
			   (int)backend_opt_num(ctx, "max-nodes"));
		viz_groups_free(&vg);
		if (backend_opt_bool(ctx, "legend"))
			legend(&d);
		fputs("}\n", f);
		free(d.opdev);
		devmap_free(&d.dev);
		return true;
	}
	/* Grouped ops inside their cluster, the others after. */
	VizKeyId *go = xmalloc(sizeof(VizKeyId) * ((size_t)ngrouped + 1));
	uint32_t n = 0;
	bool *in_group = xcalloc((size_t)g->nops + 1, sizeof(bool));
	for (uint32_t i = 0; groups && i < g->nops; i++) {
		Value *gv = g->ops[i]->dead ? NULL : op_ann(g, g->ops[i], ANN_GROUP);
		if (gv && gv->kind == V_INT) {
			go[n++] = (VizKeyId){gv->i, i};
			in_group[i] = true;
		}
	}
	qsort(go, n, sizeof *go, viz_keyid_cmp);
	for (uint32_t k = 0; k < n; k++) {
		if (k == 0 || go[k].key != go[k - 1].key)
			fprintf(f, "  subgraph \"cluster_g%lld\" {\n  label=\"group %lld\"; "
				   "style=\"rounded,dashed\"; color=\"#777777\"; fontsize=10;\n",
				(long long)go[k].key, (long long)go[k].key);
		node(&d, g->ops[go[k].id]);
		if (k + 1 == n || go[k + 1].key != go[k].key)
			fputs("  }\n", f);
	}
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead && !in_group[i])
			node(&d, g->ops[i]);
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead)
			edges(&d, g->ops[i]);
	collectives(&d);
	if (backend_opt_bool(ctx, "legend"))
		legend(&d);
	fputs("}\n", f);
	free(in_group);
	free(go);
	free(d.opdev);
	devmap_free(&d.dev);
	return true;
}
