/* viz.c — what the picture and timeline backends (dot.c, trace.c,
 * gantt.c) share: text escaping for DOT, JSON and XML that is safe for
 * any name (invalid UTF-8 becomes U+FFFD), human units, the colour of a
 * device and of an op's role, and the schedule of a simulation as rows
 * (device compute, device collective stream, link) of bars.
 *
 * The schedule (docs/backends.md): compute ops on their device's row;
 * AllReduce members on their device's collective row (the simulator's
 * collective stream, beside compute); every tensor movement of
 * SimResult.xfers on the row of the first link of its route and, for a
 * route through the NICs (first link "M/out"), also on the receiver
 * machine's "M/in" row, which the transfer holds for the same time.
 * Transfer ops appear only there, not on a device row.  A collective is
 * also drawn on each link of its ring.  Links are found by the names the
 * simulator gives them (docs/simulator.md).  Building the schedule is
 * O((V + X) log (V + X) + L log L) for V ops, X movements and L links,
 * plus a scan of the cluster's link overrides per route; no recursion. */
#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- text ---------------------------------------------------------------- */

/* The code point at *p (advancing *p past it): U+FFFD for a byte that
 * does not start a well-formed UTF-8 sequence (overlong forms, surrogates
 * and values above U+10FFFF included), which is then skipped alone. */
static uint32_t next_cp(const unsigned char **p)
{
	const unsigned char *s = *p;
	uint32_t c = s[0];
	int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2
	      : (c & 0xf8) == 0xf0 ? 3 : -1;
	*p = s + 1;
	if (n == 0)
		return c;
	if (n < 0)
		return 0xfffd;
	c &= 0x3f >> n;
	for (int i = 1; i <= n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0xfffd;
		c = c << 6 | (s[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0x80, 0x800, 0x10000};
	if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0xfffd;
	*p = s + n + 1;
	return c;
}

static void put_utf8(FILE *f, uint32_t c)
{
	if (c < 0x80) {
		fputc((int)c, f);
	} else if (c < 0x800) {
		fputc((int)(0xc0 | c >> 6), f);
		fputc((int)(0x80 | (c & 0x3f)), f);
	} else if (c < 0x10000) {
		fputc((int)(0xe0 | c >> 12), f);
		fputc((int)(0x80 | (c >> 6 & 0x3f)), f);
		fputc((int)(0x80 | (c & 0x3f)), f);
	} else {
		fputc((int)(0xf0 | c >> 18), f);
		fputc((int)(0x80 | (c >> 12 & 0x3f)), f);
		fputc((int)(0x80 | (c >> 6 & 0x3f)), f);
		fputc((int)(0x80 | (c & 0x3f)), f);
	}
}

void viz_dot_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		uint32_t c = next_cp(&p);
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", (int)c);
		else if (c < 0x20 || c == 0x7f)
			fputc(' ', f);
		else
			put_utf8(f, c);
	}
}

void viz_xml_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		uint32_t c = next_cp(&p);
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\t': fputs("&#9;", f); break;
		case '\n': fputs("&#10;", f); break;
		default:
			/* XML 1.0 has no other control characters, nor
			 * U+FFFE and U+FFFF, even as references. */
			if (c < 0x20 || c == 0xfffe || c == 0xffff)
				c = 0xfffd;
			put_utf8(f, c);
		}
	}
}

void viz_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	viz_json_text(f, s);
	fputc('"', f);
}

void viz_json_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		uint32_t c = next_cp(&p);
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", (int)c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", (unsigned)c);
		else
			put_utf8(f, c);
	}
}

size_t viz_text_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	while (*p) {
		next_cp(&p);
		n++;
	}
	return n;
}

size_t viz_text_prefix(const char *s, size_t ncp)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p && ncp--)
		next_cp(&p);
	return (size_t)(p - (const unsigned char *)s);
}

/* ---- units --------------------------------------------------------------- */

char *viz_bytes(char *buf, size_t n, double bytes)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB", "PB"};
	int u = 0;
	if (!(bytes >= 0) || !isfinite(bytes)) {
		snprintf(buf, n, "?");
		return buf;
	}
	while (bytes >= 999.5 && u < 5) {
		bytes /= 1000;
		u++;
	}
	snprintf(buf, n, u ? "%.3g %s" : "%.0f %s", bytes, unit[u]);
	return buf;
}

char *viz_time(char *buf, size_t n, double s)
{
	double a = fabs(s);
	if (!isfinite(s))
		snprintf(buf, n, "?");
	else if (a == 0)
		snprintf(buf, n, "0 s");
	else if (a >= 0.9995)
		snprintf(buf, n, "%.4g s", s);
	else if (a >= 0.9995e-3)
		snprintf(buf, n, "%.4g ms", s * 1e3);
	else if (a >= 0.9995e-6)
		snprintf(buf, n, "%.4g us", s * 1e6);
	else
		snprintf(buf, n, "%.4g ns", s * 1e9);
	return buf;
}

/* ---- colours and categories --------------------------------------------- */

void viz_device_color(int i, char buf[8])
{
	/* Twelve light, distinct fills that keep black text readable; then
	 * hues a golden angle apart. */
	static const char *const pal[] = {
		"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
		"#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f",
	};
	if (i >= 0 && i < 12) {
		memcpy(buf, pal[i], 8);
		return;
	}
	double h = fmod((i < 0 ? 0 : i) * 0.618033988749895, 1.0) * 6;
	double s = 0.35, v = 0.95, fr = h - floor(h);
	double p = v * (1 - s), q = v * (1 - s * fr), t = v * (1 - s * (1 - fr));
	double rgb[6][3] = {{v, t, p}, {q, v, p}, {p, v, t},
			    {p, q, v}, {t, p, v}, {v, p, q}};
	const double *c = rgb[(int)h % 6];
	snprintf(buf, 8, "#%02x%02x%02x", (int)lround(c[0] * 255),
		 (int)lround(c[1] * 255), (int)lround(c[2] * 255));
}

static const struct {
	const char *name, *color, *desc;
} cats[VC_COUNT] = {
	[VC_INPUT] = {"input", "#bab0ac", "input"},
	[VC_PARAM] = {"param", "#9c755f", "parameter"},
	[VC_FWD] = {"fwd", "#4e79a7", "forward"},
	[VC_LOSS] = {"loss", "#b07aa1", "loss"},
	[VC_BWD] = {"bwd", "#f28e2b", "backward"},
	[VC_UPDATE] = {"update", "#59a14f", "update"},
	[VC_COMM] = {"comm", "#edc948", "split / concat / sum"},
	[VC_TRANSFER] = {"transfer", "#e15759", "transfer"},
	[VC_COLLECTIVE] = {"collective", "#76b7b2", "AllReduce"},
	[VC_OTHER] = {"other", "#79706e", "other"},
};

const char *viz_cat_name(VizCat c) { return cats[c].name; }
const char *viz_cat_color(VizCat c) { return cats[c].color; }
const char *viz_cat_desc(VizCat c) { return cats[c].desc; }

bool viz_is_comm(const Graph *g, const Op *op)
{
	VizCat c = viz_category(g, op);
	return c == VC_COMM || c == VC_TRANSFER || c == VC_COLLECTIVE;
}

VizCat viz_category(const Graph *g, const Op *op)
{
	const char *t = op->type;
	if (strcmp(t, "Transfer") == 0)
		return VC_TRANSFER;
	if (strcmp(t, "AllReduce") == 0)
		return VC_COLLECTIVE;
	if (op_ann(g, op, ANN_ORIGIN) &&
	    (strcmp(t, "Split") == 0 || strcmp(t, "SplitV") == 0 ||
	     strcmp(t, "ConcatV2") == 0 || strcmp(t, "AddN") == 0))
		return VC_COMM;
	const char *r = op_ann_str(g, op, ANN_ROLE);
	Role role = r ? role_parse(r) : ROLE_NONE;
	const OpInfo *info = op_info(op->opcode);
	unsigned fl = info ? info->flags : 0;
	if (role == ROLE_NONE)
		role = fl & OPF_INPUT ? ROLE_INPUT : fl & OPF_PARAM ? ROLE_PARAM
		     : fl & OPF_UPDATE ? ROLE_UPDATE : fl & OPF_LOSS ? ROLE_LOSS
		     : fl & OPF_GRAD ? ROLE_BWD : ROLE_NONE;
	switch (role) {
	case ROLE_INPUT: return VC_INPUT;
	case ROLE_PARAM: return VC_PARAM;
	case ROLE_FWD: return VC_FWD;
	case ROLE_LOSS: return VC_LOSS;
	case ROLE_BWD: return VC_BWD;
	case ROLE_UPDATE: return VC_UPDATE;
	default: return VC_OTHER;
	}
}

/* ---- the schedule -------------------------------------------------------- */

static int bar_cmp(const void *pa, const void *pb)
{
	const VizBar *a = pa, *b = pb;
	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->finish != b->finish)
		return a->finish < b->finish ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	return a->xfer < b->xfer ? -1 : a->xfer > b->xfer;
}

typedef struct NamedIdx {
	const char *name;
	int idx;
} NamedIdx;

static int named_cmp(const void *pa, const void *pb)
{
	return strcmp(((const NamedIdx *)pa)->name, ((const NamedIdx *)pb)->name);
}

/* The link resources of the simulation sorted by name, to find a
 * route's links by the names the simulator gives them. */
typedef struct Links {
	NamedIdx *by_name;
	int n;
} Links;

static int link_find(const Links *L, const char *name)
{
	NamedIdx k = {name, 0};
	const NamedIdx *hit = L->n ? bsearch(&k, L->by_name, (size_t)L->n,
					     sizeof *L->by_name, named_cmp) : NULL;
	return hit ? hit->idx : -1;
}

static int link_find2(const Links *L, const char *a, const char *sep,
		      const char *b)
{
	char *key = xmalloc(strlen(a) + strlen(sep) + strlen(b) + 1);
	sprintf(key, "%s%s%s", a, sep, b);
	int l = link_find(L, key);
	free(key);
	return l;
}

/* Links of the route a -> b as the simulator names them (docs/simulator.md):
 * a link override or two devices of one machine, "A->B"; else the NICs
 * "MA/out" and "MB/in".  Returns how many were found (0..2). */
static int route_links(const Cluster *c, const Links *L, int a, int b, int out[2])
{
	int n = 0;
	Route r = cluster_route(c, a, b);
	if (r.kind == ROUTE_LINK || r.kind == ROUTE_PAIR) {
		out[n] = link_find2(L, c->devs[a].name, "->", c->devs[b].name);
		n += out[n] >= 0;
	} else if (r.kind == ROUTE_NET) {
		out[n] = link_find2(L, c->machines[r.ma].name, "/out", "");
		n += out[n] >= 0;
		out[n] = link_find2(L, c->machines[r.mb].name, "/in", "");
		n += out[n] >= 0;
	}
	return n;
}

int viz_keyid_cmp(const void *pa, const void *pb)
{
	const VizKeyId *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

typedef struct Bars {
	VizBar *a;
	size_t n, cap;
} Bars;

static void bar_add(Bars *b, VizBar v)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->a = xrealloc(b->a, sizeof(VizBar) * b->cap);
	}
	b->a[b->n++] = v;
}

/* Each collective (the AllReduce members sharing a key) on the links of
 * its ring, devices[p] -> devices[p+1], for the collective's time. */
static void coll_link_bars(const EmitCtx *ctx, const Cluster *c,
			   const Links *L, int link0, Bars *bars)
{
	const Graph *g = ctx->g;
	const SimResult *r = ctx->sim;
	PlanView pv;
	plan_view(g, &pv, NULL);
	int *devs = xmalloc(sizeof(int) * ((size_t)c->ndevs + 1));
	int *seen = xcalloc((size_t)r->nlinks + 1, sizeof(int));
	int stamp = 0;
	for (uint32_t k = 0; k < pv.ncoll; k++) {
		/* the collective's first member the simulation placed */
		uint32_t id = UINT32_MAX;
		for (uint32_t q = 0; q < pv.coll[k].n && id == UINT32_MAX; q++) {
			uint32_t i = pv.members[pv.coll[k].first + q];
			if (i < r->nops && r->dev[i] >= 0)
				id = i;
		}
		if (id == UINT32_MAX)
			continue;
		const Op *op = g->ops[id];
		int nd = plan_coll_devices(c, op_get(g, op, "devices"), devs,
					   c->ndevs);
		stamp++;
		for (int p = 0; nd > 1 && p < nd; p++) {
			int ls[2], k = route_links(c, L, devs[p], devs[(p + 1) % nd], ls);
			for (int q = 0; q < k; q++) {
				if (seen[ls[q]] == stamp)
					continue;
				seen[ls[q]] = stamp;
				bar_add(bars, (VizBar){link0 + ls[q], VC_COLLECTIVE,
						       id, UINT32_MAX, r->start[id],
						       r->finish[id]});
			}
		}
	}
	free(seen);
	free(devs);
	plan_view_free(&pv);
}

void viz_sched_build(VizSched *s, const EmitCtx *ctx)
{
	const Graph *g = ctx->g;
	const SimResult *r = ctx->sim;
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : g->cluster;
	memset(s, 0, sizeof *s);
	int nd = r->ndevs;
	bool *has_coll = xcalloc((size_t)nd + 1, sizeof(bool));
	Bars bars = {0};
	for (uint32_t i = 0; i < g->nops && i < r->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || r->dev[i] < 0)
			continue;
		VizCat cat = viz_category(g, op);
		if (cat == VC_TRANSFER)
			continue;
		if (cat == VC_COLLECTIVE)
			has_coll[r->dev[i]] = true;
		/* row: the device for now; renumbered below */
		bar_add(&bars, (VizBar){r->dev[i], cat, i, UINT32_MAX,
					r->start[i], r->finish[i]});
	}
	/* Rows: each device, then its collective stream if used; links. */
	s->dev_row = xmalloc(sizeof(int) * (size_t)(nd + 1));
	s->coll_row = xmalloc(sizeof(int) * (size_t)(nd + 1));
	s->rows = xmalloc(sizeof(VizRow) * (size_t)(2 * nd + r->nlinks + 1));
	for (int d = 0; d < nd; d++) {
		s->dev_row[d] = s->nrows;
		s->rows[s->nrows++] = (VizRow){VR_DEVICE, d};
		s->coll_row[d] = -1;
		if (has_coll[d]) {
			s->coll_row[d] = s->nrows;
			s->rows[s->nrows++] = (VizRow){VR_COLL, d};
		}
	}
	for (size_t k = 0; k < bars.n; k++)
		bars.a[k].row = bars.a[k].cat == VC_COLLECTIVE
				? s->coll_row[bars.a[k].row] : s->dev_row[bars.a[k].row];
	int link0 = s->nrows;
	for (int l = 0; l < r->nlinks; l++)
		s->rows[s->nrows++] = (VizRow){VR_LINK, l};
	Links L = {xmalloc(sizeof(NamedIdx) * (size_t)(r->nlinks + 1)), r->nlinks};
	for (int l = 0; l < r->nlinks; l++)
		L.by_name[l] = (NamedIdx){r->link_name[l], l};
	qsort(L.by_name, (size_t)L.n, sizeof *L.by_name, named_cmp);
	for (uint32_t x = 0; c && x < r->nxfers; x++) {
		const struct SimXfer *xf = &r->xfers[x];
		if (xf->src < 0 || xf->dst < 0 || xf->src >= c->ndevs ||
		    xf->dst >= c->ndevs)
			continue;
		int ls[2], k = route_links(c, &L, xf->src, xf->dst, ls);
		for (int q = 0; q < k; q++)
			bar_add(&bars, (VizBar){link0 + ls[q], VC_TRANSFER, xf->via,
						x, xf->start, xf->finish});
	}
	if (c)
		coll_link_bars(ctx, c, &L, link0, &bars);
	free(L.by_name);
	if (bars.n) /* bars.a is NULL when there are none: not for qsort */
		qsort(bars.a, bars.n, sizeof *bars.a, bar_cmp);
	s->bars = bars.a;
	s->nbars = bars.n;
	s->row_first = xmalloc(sizeof(size_t) * (size_t)(s->nrows + 1));
	size_t k = 0;
	for (int row = 0; row <= s->nrows; row++) {
		while (k < bars.n && bars.a[k].row < row)
			k++;
		s->row_first[row] = k;
	}
	free(has_coll);
}

void viz_sched_free(VizSched *s)
{
	free(s->rows);
	free(s->bars);
	free(s->dev_row);
	free(s->coll_row);
	free(s->row_first);
	memset(s, 0, sizeof *s);
}

const char *viz_row_name(const VizSched *s, int row, const EmitCtx *ctx,
			 char *buf, size_t n)
{
	const VizRow *w = &s->rows[row];
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : ctx->g->cluster;
	if (w->kind == VR_LINK)
		return ctx->sim->link_name[w->index];
	const char *dev = c && w->index < c->ndevs ? c->devs[w->index].name : "?";
	if (w->kind == VR_DEVICE)
		return dev;
	snprintf(buf, n, "%s collectives", dev);
	return buf;
}

void viz_bar_name(FILE *f, void (*text)(FILE *, const char *),
		  const VizSched *s, const VizBar *b, const EmitCtx *ctx)
{
	const Graph *g = ctx->g;
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : g->cluster;
	char num[48];
	if (b->xfer != UINT32_MAX) {
		const struct SimXfer *x = &ctx->sim->xfers[b->xfer];
		if (x->via != UINT32_MAX) {
			text(f, g->ops[x->via]->name);
			return;
		}
		text(f, g->ops[x->op]->name);
		if (x->k) {
			snprintf(num, sizeof num, ":%u", x->k);
			text(f, num);
		}
		text(f, " -> ");
		text(f, c->devs[x->dst].name);
		return;
	}
	const Op *op = g->ops[b->op];
	if (s->rows[b->row].kind != VR_LINK) {
		text(f, op->name);
		return;
	}
	/* A collective on one of its ring's links. */
	const char *origin = op_ann_str(g, op, ANN_ORIGIN);
	int64_t key;
	if (!plan_coll_key(g, op, &key))
		key = -1;
	text(f, "AllReduce ");
	if (origin)
		text(f, origin);
	snprintf(num, sizeof num, origin ? " (key %lld)" : "key %lld",
		 (long long)key);
	text(f, num);
}

/* ---- fused groups ---------------------------------------------------------- */

static int64_t int_ann(const Graph *g, const Op *op, const char *key, bool *ok)
{
	const Value *v = op_get(g, op, key);
	*ok = v && v->kind == V_INT;
	return *ok ? v->i : 0;
}

int64_t viz_stage_of(const Graph *g, const Op *op)
{
	/* @stage = [s, n] (place<algo=pipeline>, docs/gir.md) */
	const Value *v = op_ann(g, op, ANN_STAGE);
	if (!v || v->kind != V_LIST || v->list.n != 2 || v->list.items[0]->kind != V_INT)
		return -1;
	return v->list.items[0]->i >= 0 ? v->list.items[0]->i : -1;
}

/* Name -> @group (open addressing on the name's hash). */
typedef struct GroupMap {
	const char **name;
	int64_t *key;
	uint32_t cap, n;
} GroupMap;

static void gmap_put(GroupMap *m, const char *s, int64_t key)
{
	if ((m->n + 1) * 2 > m->cap) {
		GroupMap big = {xcalloc(m->cap * 2, sizeof(char *)),
				xcalloc(m->cap * 2, sizeof(int64_t)), m->cap * 2, 0};
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->name[i])
				gmap_put(&big, m->name[i], m->key[i]);
		free(m->name);
		free(m->key);
		*m = big;
	}
	size_t len = strlen(s);
	uint32_t h = (uint32_t)hash_bytes(s, len) & (m->cap - 1);
	for (; m->name[h]; h = (h + 1) & (m->cap - 1))
		if (strcmp(m->name[h], s) == 0)
			return;                 /* the first group seen wins */
	m->name[h] = s;
	m->key[h] = key;
	m->n++;
}

static bool gmap_get(const GroupMap *m, const char *s, size_t len, int64_t *key)
{
	uint32_t h = (uint32_t)hash_bytes(s, len) & (m->cap - 1);
	for (; m->name[h]; h = (h + 1) & (m->cap - 1))
		if (strncmp(m->name[h], s, len) == 0 && !m->name[h][len]) {
			*key = m->key[h];
			return true;
		}
	return false;
}

static int i64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return a < b ? -1 : a > b;
}

void viz_groups_build(VizGroups *vg, const Graph *g)
{
	memset(vg, 0, sizeof *vg);
	vg->of = xmalloc(sizeof(int) * ((size_t)g->nops + 1));
	int64_t *key = xmalloc(sizeof(int64_t) * ((size_t)g->nops + 1));
	bool *has = xcalloc((size_t)g->nops + 1, sizeof(bool));
	GroupMap m = {xcalloc(16, sizeof(char *)), xcalloc(16, sizeof(int64_t)), 16, 0};
	/* Pipeline stages, when a plan has them, are the groups. */
	bool stages = false;
	for (uint32_t i = 0; i < g->nops && !stages; i++)
		stages = !g->ops[i]->dead && viz_stage_of(g, g->ops[i]) >= 0;
	vg->stages = stages;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		bool ok;
		int64_t k = stages ? viz_stage_of(g, op) : int_ann(g, op, "@group", &ok);
		if (stages)
			ok = k >= 0;
		if (!ok)
			continue;
		key[i] = k;
		has[i] = true;
		gmap_put(&m, op->name, k);
		const char *origin = op_ann_str(g, op, ANN_ORIGIN);
		if (origin)
			gmap_put(&m, origin, k);
	}
	/* The others (Transfers, AllReduces, glue): their @origin's group;
	 * an origin "x:1" names output 1 of op x. */
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		const char *origin = op->dead || has[i] ? NULL
				     : op_ann_str(g, op, ANN_ORIGIN);
		if (!origin)
			continue;
		size_t len = strlen(origin);
		const char *colon = strrchr(origin, ':');
		has[i] = gmap_get(&m, origin, len, &key[i]) ||
			 (colon && gmap_get(&m, origin, (size_t)(colon - origin), &key[i]));
	}
	int64_t *keys = xmalloc(sizeof(int64_t) * ((size_t)g->nops + 1));
	int n = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		if (has[i])
			keys[n++] = key[i];
	qsort(keys, (size_t)n, sizeof *keys, i64_cmp);
	int u = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || keys[i] != keys[u - 1])
			keys[u++] = keys[i];
	vg->n = u;
	vg->key = keys;
	for (uint32_t i = 0; i < g->nops; i++) {
		vg->of[i] = -1;
		if (!has[i])
			continue;
		int lo = 0, hi = u - 1;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (keys[mid] < key[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		vg->of[i] = lo;
	}
	free(m.name);
	free(m.key);
	free(has);
	free(key);
}

void viz_groups_free(VizGroups *vg)
{
	free(vg->of);
	free(vg->key);
	memset(vg, 0, sizeof *vg);
}
