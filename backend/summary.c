/* summary.c — --emit=summary: the plan a person reads first
 * (docs/backends.md).
 *
 * Four tables, all from the simulator's result (ctx->sim, ir/sim.c) and
 * the plan's annotations, nothing re-simulated:
 *
 *   groups   one row per fused group (viz_groups_build: @group, else the
 *            group of the op @origin names; pipeline stages when a plan
 *            has them): the range of original op names, original ops,
 *            FLOPs of every replica, parameters, the strategy (one
 *            device; replicas and their batch shares; split into parts;
 *            pipeline stage), the devices, gradient synchronisation
 *            (AllReduce collectives by algo, parameter-server sums,
 *            sufficient-factor broadcasts), simulated time on the
 *            critical path, and the bytes the group's ops hold on its
 *            busiest device (outputs plus workspace and optimizer state,
 *            all at once: an upper bound of its share of the peak);
 *   devices  busy and idle time, peak memory against capacity;
 *   links    bytes carried and busy time;
 *   headline simulated iteration time, the simulator's lower bound, and
 *            the speedup over the plans the placer judged (ctx->judged).
 *
 * The critical path is one chain of ops, walked back from the op that
 * finished last: each op's predecessor is whichever finished last among
 * its inputs' producers and the previous op on its device, provided it
 * finished by the op's start.  Time the chain spends waiting (implicit
 * transfers, links) is reported as such.
 *
 * format=text (aligned columns, human units), md (Markdown tables), csv
 * (each row begins with its table's name; a header row precedes each
 * table; SI units: seconds, bytes, FLOPs) or json.  O(V log V + E). */
#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables --------------------------------------------------------------- */

typedef struct Col {
	const char *key;         /* csv / json name */
	const char *head;        /* text / md header */
	char align;              /* 'l' or 'r' */
} Col;

typedef struct Cell {
	const char *human;       /* with units */
	const char *raw;         /* SI number or plain string */
	bool num;                /* raw is a number (json: unquoted) */
} Cell;

typedef struct Table {
	const char *name;
	const Col *cols;
	int ncols;
	Cell *cells;             /* rows × ncols */
	int nrows, cap;
} Table;

typedef struct Sum {
	Arena *a;
	const EmitCtx *ctx;
	const Graph *g;
	const SimResult *r;
	const Cluster *c;
	const char *fmt;
} Sum;

static Cell *row_new(Table *t)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->cells = xrealloc(t->cells, sizeof(Cell) * (size_t)t->cap *
					      (size_t)t->ncols);
	}
	Cell *row = &t->cells[(size_t)t->nrows++ * (size_t)t->ncols];
	memset(row, 0, sizeof(Cell) * (size_t)t->ncols);
	return row;
}

static Cell cstr(const char *s)
{
	return (Cell){s, s, false};
}

static Cell cnum(Sum *s, double x, const char *human)
{
	const char *raw = isfinite(x) ? arena_printf(s->a, "%.9g", x) : "";
	return (Cell){human ? arena_strdup(s->a, human) : raw, raw, isfinite(x)};
}

static Cell csecs(Sum *s, double x)
{
	char b[32];
	return cnum(s, x, viz_time(b, sizeof b, x));
}

static Cell cbytes(Sum *s, double x)
{
	char b[32];
	return cnum(s, x, viz_bytes(b, sizeof b, x));
}

static Cell cpct(Sum *s, double x)
{
	return cnum(s, x, isfinite(x) ? arena_printf(s->a, "%.0f%%", 100 * x) : "?");
}

/* "7.55 G" (powers of 1000, 3 significant digits). */
static Cell ccount(Sum *s, double x)
{
	static const char *const unit[] = {"", " k", " M", " G", " T", " P", " E"};
	double v = x;
	int u = 0;
	while (fabs(v) >= 999.5 && u < 6) {
		v /= 1000;
		u++;
	}
	return cnum(s, x, arena_printf(s->a, u ? "%.3g%s" : "%.0f%s", v, unit[u]));
}

static void md_field(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

static void table_print(FILE *f, const Table *t, const char *fmt)
{
	int nc = t->ncols;
	if (strcmp(fmt, "csv") == 0) {
		fputs(t->name, f);
		for (int j = 0; j < nc; j++)
			fprintf(f, ",%s", t->cols[j].key);
		fputc('\n', f);
		for (int i = 0; i < t->nrows; i++) {
			fputs(t->name, f);
			for (int j = 0; j < nc; j++) {
				fputc(',', f);
				csv_str(f, t->cells[(size_t)i * nc + j].raw);
			}
			fputc('\n', f);
		}
		return;
	}
	if (strcmp(fmt, "json") == 0) {
		fprintf(f, "  \"%s\": [", t->name);
		for (int i = 0; i < t->nrows; i++) {
			fputs(i ? ",\n    {" : "\n    {", f);
			for (int j = 0; j < nc; j++) {
				const Cell *c = &t->cells[(size_t)i * nc + j];
				fprintf(f, "%s\"%s\": ", j ? ", " : "", t->cols[j].key);
				if (c->num)
					fputs(c->raw, f);
				else if (!*c->raw && c->human != c->raw)
					fputs("null", f);
				else
					viz_json_str(f, c->raw);
			}
			fputc('}', f);
		}
		fputs(t->nrows ? "\n  ]" : "]", f);
		return;
	}
	if (strcmp(fmt, "md") == 0) {
		fprintf(f, "\n### %s\n\n|", t->name);
		for (int j = 0; j < nc; j++)
			fprintf(f, " %s |", t->cols[j].head);
		fputs("\n|", f);
		for (int j = 0; j < nc; j++)
			fputs(t->cols[j].align == 'r' ? "---:|" : "---|", f);
		fputc('\n', f);
		for (int i = 0; i < t->nrows; i++) {
			fputc('|', f);
			for (int j = 0; j < nc; j++) {
				fputc(' ', f);
				md_field(f, t->cells[(size_t)i * nc + j].human);
				fputs(" |", f);
			}
			fputc('\n', f);
		}
		return;
	}
	/* text: aligned columns (widths in code points) */
	size_t *w = xcalloc((size_t)nc, sizeof(size_t));
	for (int j = 0; j < nc; j++)
		w[j] = viz_text_len(t->cols[j].head);
	for (int i = 0; i < t->nrows; i++)
		for (int j = 0; j < nc; j++) {
			size_t n = viz_text_len(t->cells[(size_t)i * nc + j].human);
			w[j] = n > w[j] ? n : w[j];
		}
	fprintf(f, "\n%s\n", t->name);
	for (int i = -1; i < t->nrows; i++) {
		for (int j = 0; j < nc; j++) {
			const char *s = i < 0 ? t->cols[j].head
					      : t->cells[(size_t)i * nc + j].human;
			int pad = (int)(w[j] - viz_text_len(s));
			bool last = j + 1 == nc;
			if (t->cols[j].align == 'r')
				fprintf(f, "%*s%s", pad, "", s);
			else
				fprintf(f, "%s%*s", s, last ? 0 : pad, "");
			fputs(last ? "\n" : "  ", f);
		}
	}
	free(w);
}

static void table_free(Table *t)
{
	free(t->cells);
}

/* ---- groups --------------------------------------------------------------- */

typedef struct GRow {
	uint32_t first, last;    /* ops with the first and last original name */
	uint32_t nops;           /* original ops */
	double flops, params;
	int reps, parts;
	int64_t stage, micro;    /* pipeline stage, micro-batches (-1, 1: none) */
	double ring, hier;       /* collectives (member ops / members) */
	uint32_t ps, accum, sfb; /* AddNs across devices, across micro-batches */
	double crit;
} GRow;

static bool pair_of(const Graph *g, const Op *op, AnnKey k, int64_t *a, int64_t *b)
{
	const Value *v = op_ann(g, op, k);
	if (!v || v->kind != V_LIST || v->list.n != 2 ||
	    v->list.items[0]->kind != V_INT || v->list.items[1]->kind != V_INT)
		return false;
	*a = v->list.items[0]->i;
	*b = v->list.items[1]->i;
	return true;
}

static const char *orig_name(const Graph *g, const Op *op)
{
	const char *o = op_ann_str(g, op, ANN_ORIGIN);
	return o ? o : op->name;
}

/* A start time in seconds as a sort key in picoseconds, saturated: a plan
 * may carry times (@cost, @start) beyond int64's picoseconds (106 days),
 * and NaN sorts last. */
static int64_t ps_key(double t)
{
	return isnan(t) ? INT64_MAX : pcc_sat_i64(t * 1e12);
}

/* The chain of ops on the critical path: crit[group] += its time there;
 * returns the time the chain spends waiting between ops. */
static double critical_path(const Sum *s, const VizGroups *vg, GRow *rows)
{
	const Graph *g = s->g;
	const SimResult *r = s->r;
	uint32_t n = g->nops < r->nops ? g->nops : r->nops;
	/* the previous op on each device, by start */
	VizKeyId *ord = xmalloc(sizeof(VizKeyId) * ((size_t)n + 1));
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!g->ops[i]->dead && !viz_is_comm(g, g->ops[i]) && r->dev[i] >= 0)
			ord[m++] = (VizKeyId){i, i};
	/* sort by (device, start, id): key the device, then a stable
	 * insertion by start within each device's run */
	for (uint32_t k = 0; k < m; k++)
		ord[k].key = r->dev[ord[k].id];
	qsort(ord, m, sizeof *ord, viz_keyid_cmp);
	/* pos[i]: op i's index in ord; dev_lo[i]: where its device's run
	 * begins */
	uint32_t *pos = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	uint32_t *dev_lo = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	for (uint32_t i = 0; i < n; i++)
		pos[i] = UINT32_MAX;
	for (uint32_t lo = 0; lo < m;) {
		uint32_t hi = lo;
		while (hi < m && ord[hi].key == ord[lo].key)
			hi++;
		/* one device's ops by (start, id) */
		VizKeyId *run = ord + lo;
		for (uint32_t k = 0; k < hi - lo; k++)
			run[k].key = ps_key(r->start[run[k].id]);
		qsort(run, hi - lo, sizeof *run, viz_keyid_cmp);
		for (uint32_t k = lo; k < hi; k++) {
			pos[ord[k].id] = k;
			dev_lo[ord[k].id] = lo;
		}
		lo = hi;
	}
	/* collectives (plan_view): a member's predecessor is the last input
	 * of any member (they start together) */
	PlanView pv;
	plan_view(g, &pv, NULL);
	uint32_t cur = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++)
		if (!g->ops[i]->dead &&
		    (cur == UINT32_MAX || r->finish[i] > r->finish[cur]))
			cur = i;
	double wait = 0;
	for (uint32_t steps = 0; cur != UINT32_MAX && steps <= n; steps++) {
		double t = r->finish[cur] - r->start[cur];
		int gi = vg->of[cur];
		rows[gi >= 0 ? gi : vg->n].crit += t;
		uint32_t best = UINT32_MAX;
		double bf = -INFINITY, lim = r->start[cur] + 1e-12;
		/* the members of cur's collective (cur alone otherwise) */
		const uint32_t *mem = &cur;
		uint32_t nm = 1, ci = pv.coll_of[cur];
		if (ci != UINT32_MAX) {
			mem = pv.members + pv.coll[ci].first;
			nm = pv.coll[ci].n;
		}
		for (uint32_t q = 0; q < nm; q++) {
			if (mem[q] >= n)
				continue;
			const Op *op = g->ops[mem[q]];
			for (uint32_t j = 0; j < op->nin; j++) {
				const Op *src = op->in[j].src;
				if (src && !src->dead && src->id < n &&
				    r->finish[src->id] <= lim && r->finish[src->id] > bf) {
					bf = r->finish[src->id];
					best = src->id;
				}
			}
		}
		/* the device's previous op: the last, among the few before it
		 * by start, that finished by its start (an op without work may
		 * start while another runs) */
		for (uint32_t k = pos[cur], q = 0; k != UINT32_MAX && k > dev_lo[cur] &&
						   q < 64; k--, q++) {
			uint32_t p = ord[k - 1].id;
			if (r->finish[p] <= lim) {
				if (r->finish[p] > bf) {
					bf = r->finish[p];
					best = p;
				}
				break;
			}
		}
		if (best != UINT32_MAX)
			wait += fmax(0, r->start[cur] - bf);
		else
			wait += fmax(0, r->start[cur]);
		cur = best;
	}
	plan_view_free(&pv);
	free(pos);
	free(dev_lo);
	free(ord);
	return wait;
}

static const Col group_cols[] = {
	{"group", "group", 'r'}, {"first_op", "first op", 'l'},
	{"last_op", "last op", 'l'}, {"ops", "ops", 'r'},
	{"flops", "FLOPs", 'r'}, {"params", "params", 'r'},
	{"strategy", "strategy", 'l'}, {"devices", "devices", 'l'},
	{"sync", "gradient sync", 'l'},
	{"critical_path_s", "critical path (sim.)", 'r'},
	{"mem_bytes_max_device", "memory/device", 'r'},
};

/* A name cut to 40 code points in text output: its first 16 and last
 * 23 (where the layer and op are), an ellipsis between. */
static const char *short_name(Sum *s, const char *name)
{
	if (strcmp(s->fmt, "text") != 0 || viz_text_len(name) <= 40)
		return name;
	size_t n = viz_text_len(name);
	size_t head = viz_text_prefix(name, 16);
	size_t skip = viz_text_prefix(name, n - 23);
	return arena_printf(s->a, "%.*s\xe2\x80\xa6%s", (int)head, name, name + skip);
}

/* Adds op i to its group's row w and to the group's per-device on (the
 * devices that compute it), mem (bytes) and share (batch shares). */
static void tally_op(const Sum *s, GRow *w, uint32_t i, bool *on, double *mem,
		     int64_t *share)
{
	const Graph *g = s->g;
	const SimResult *r = s->r;
	const Op *op = g->ops[i];
	int nd = r->ndevs;
	int d = r->dev[i];
	VizCat cat = viz_category(g, op);
	if (d >= 0 && d < nd) {
		/* the devices that compute the group, not those its
		 * transfers, collectives and constant copies (comm's
		 * "x/on/DEV", with @origin) deliver to */
		bool glue = cat == VC_COMM || cat == VC_TRANSFER ||
			    cat == VC_COLLECTIVE ||
			    (cat == VC_OTHER && op_ann(g, op, ANN_ORIGIN));
		if (!glue)
			on[d] = true;
		double b = cost_op_mem(s->ctx->cost, op);
		for (uint32_t o = 0; o < op->nout; o++)
			b += fmax(0, cost_out_bytes(g, op, o));
		mem[d] += b;
	}
	int64_t st = viz_stage_of(g, op);
	if (st >= 0 && (w->stage < 0 || st < w->stage))
		w->stage = st;
	int64_t mj, mm;
	bool micro = pair_of(g, op, ANN_MICROBATCH, &mj, &mm) && mm > 1;
	if (micro && mm > w->micro)
		w->micro = mm;
	if (cat == VC_COLLECTIVE) {
		const Value *dl = op_get(g, op, "devices");
		double members = dl && dl->kind == V_LIST && dl->list.n ? dl->list.n : 1;
		const char *algo = op_get_str(g, op, "algo");
		if (algo && strcmp(algo, "hier") == 0)
			w->hier += 1 / members;
		else
			w->ring += 1 / members;
		return;
	}
	if (cat == VC_COMM && strcmp(op->type, "AddN") == 0) {
		/* a pipeline's gradient accumulation sums the
		 * micro-batches on the stage's own device; a parameter
		 * server sums replicas from other devices */
		bool local = true;
		for (uint32_t q = 0; q < op->nin && local; q++) {
			const Op *p = op->in[q].src;
			local = p && p->id < r->nops && r->dev[p->id] == d;
		}
		if (local && w->stage >= 0)
			w->accum++;
		else
			w->ps++;
	}
	if (cat == VC_COMM || cat == VC_TRANSFER)
		return;
	int64_t ri = 0, rn = 1, pi = 0, pn = 1, b0, bs;
	bool rep = pair_of(g, op, ANN_REPLICA, &ri, &rn);
	bool part = pair_of(g, op, ANN_PART, &pi, &pn);
	bool shard = pair_of(g, op, ANN_SHARD, &b0, &bs);
	if (rep && micro && rn % mm == 0)
		rn /= mm;        /* @replicas lists the stage's devices m times */
	if (rep && rn > w->reps)
		w->reps = (int)rn;
	if (part && pn > w->parts)
		w->parts = (int)pn;
	if (rep && shard && d >= 0 && d < nd && !share[d])
		share[d] = bs;
	/* comm's sufficient-factor broadcast: a replicated weight
	 * gradient MatMul(x, dy, transpose_a) each replica computes
	 * whole (no @shard) */
	if (rep && !shard && ri == 0 && op->opcode == O_MatMul &&
	    op_role(g, op) == ROLE_BWD &&
	    op_get_bool(g, op, "transpose_a", false))
		w->sfb++;
	double fl = op_flops(g, op);
	if (fl > 0)
		w->flops += fl;
	if (ri != 0 || pi != 0)
		return;          /* the original op counts once */
	w->nops++;
	if (w->first == UINT32_MAX)
		w->first = i;
	w->last = i;
	if (op_role(g, op) == ROLE_PARAM) {
		int64_t e = op->nout ? type_numel(&op->out[0]) : -1;
		if (e > 0)
			w->params += (double)e;
	}
}

/* The strategy column: "stage S, R replicas (shares), split into P
 * parts, M micro-batches", or "one device". */
static const char *strategy_text(Sum *s, const GRow *w, const int64_t *share, int nd)
{
	StrBuf b = {0};
	if (w->stage >= 0)
		sb_printf(&b, "stage %lld, ", (long long)w->stage);
	if (w->reps > 1) {
		sb_printf(&b, "%d replicas", w->reps);
		bool equal = true, any = false;
		int64_t first = 0;
		for (int d = 0; d < nd; d++) {
			int64_t x = share[d];
			if (!x)
				continue;
			equal &= !any || x == first;
			if (!any)
				first = x;
			any = true;
		}
		if (any && equal)
			sb_printf(&b, " (equal shares of %lld)", (long long)first);
		else if (any) {
			sb_puts(&b, " (shares");
			const char *sep = " ";
			for (int d = 0; d < nd; d++)
				if (share[d]) {
					sb_printf(&b, "%s%lld", sep, (long long)share[d]);
					sep = "/";
				}
			sb_putc(&b, ')');
		}
	}
	if (w->parts > 1)
		sb_printf(&b, "%ssplit into %d parts", w->reps > 1 ? ", " : "",
			  w->parts);
	if (w->reps <= 1 && w->parts <= 1)
		sb_puts(&b, "one device");
	if (w->micro > 1)
		sb_printf(&b, ", %lld micro-batches", (long long)w->micro);
	sb_putc(&b, 0);
	const char *str = arena_strdup(s->a, b.s);
	sb_free(&b);
	return str;
}

/* The devices column: the devices in on[], the first 4 and a count of
 * the rest in text output. */
static const char *devices_text(Sum *s, const bool *on, int nd)
{
	StrBuf b = {0};
	int ndv = 0;
	for (int d = 0; d < nd; d++)
		if (on[d]) {
			if (ndv < 4 || strcmp(s->fmt, "text") != 0)
				sb_printf(&b, "%s%s", ndv ? " " : "", s->c->devs[d].name);
			ndv++;
		}
	if (ndv > 4 && strcmp(s->fmt, "text") == 0)
		sb_printf(&b, " +%d more", ndv - 4);
	sb_putc(&b, 0);
	const char *str = arena_strdup(s->a, b.s);
	sb_free(&b);
	return str;
}

/* The gradient sync column: the group's collectives, AddNs and
 * sufficient-factor broadcasts by kind, "-" if none. */
static const char *sync_text(Sum *s, const GRow *w)
{
	StrBuf b = {0};
	if (w->ring >= 0.5)
		sb_printf(&b, "ring x%.0f", w->ring);
	if (w->hier >= 0.5)
		sb_printf(&b, "%shierarchical x%.0f", b.n ? ", " : "", w->hier);
	if (w->ps)
		sb_printf(&b, "%sPS x%u", b.n ? ", " : "", w->ps);
	if (w->accum)
		sb_printf(&b, "%saccumulate x%u", b.n ? ", " : "", w->accum);
	if (w->sfb)
		sb_printf(&b, "%sSFB x%u", b.n ? ", " : "", w->sfb);
	/* bucketing: pcc does not fuse AllReduces into buckets (yet);
	 * a bucketed collective would be counted here. */
	if (!b.n)
		sb_puts(&b, "-");
	sb_putc(&b, 0);
	const char *str = arena_strdup(s->a, b.s);
	sb_free(&b);
	return str;
}

static void groups_table(Sum *s, Table *t, const VizGroups *vg)
{
	const Graph *g = s->g;
	const SimResult *r = s->r;
	int nd = r->ndevs, ng = vg->n;
	/* rows[ng]: the ops in no group */
	GRow *rows = xcalloc((size_t)ng + 1, sizeof(GRow));
	int64_t *share = xcalloc((size_t)(ng + 1) * (size_t)nd + 1, sizeof(int64_t));
	bool *on = xcalloc((size_t)(ng + 1) * (size_t)nd + 1, sizeof(bool));
	double *mem = xcalloc((size_t)(ng + 1) * (size_t)nd + 1, sizeof(double));
	for (int k = 0; k <= ng; k++)
		rows[k] = (GRow){UINT32_MAX, UINT32_MAX, 0, 0, 0, 1, 1, -1, 1, 0, 0, 0, 0, 0, 0};
	uint32_t n = g->nops < r->nops ? g->nops : r->nops;
	for (uint32_t i = 0; i < n; i++) {
		int k = vg->of[i] >= 0 ? vg->of[i] : ng;
		if (!g->ops[i]->dead)
			tally_op(s, &rows[k], i, on + (size_t)k * nd,
				 mem + (size_t)k * nd, share + (size_t)k * nd);
	}
	double wait = critical_path(s, vg, rows);
	for (int k = 0; k <= ng; k++) {
		GRow *w = &rows[k];
		bool used = false;
		for (int d = 0; d < nd; d++)
			used |= on[(size_t)k * nd + d];
		if (k == ng && !used && w->first == UINT32_MAX && w->crit <= 0)
			break;           /* every op is in a group */
		Cell *row = row_new(t);
		row[0] = k < ng ? cnum(s, (double)vg->key[k], NULL) : cstr("(none)");
		row[1] = cstr(w->first == UINT32_MAX ? "" : short_name(s, orig_name(g, g->ops[w->first])));
		row[2] = cstr(w->last == UINT32_MAX ? "" : short_name(s, orig_name(g, g->ops[w->last])));
		row[3] = cnum(s, w->nops, NULL);
		row[4] = ccount(s, w->flops);
		row[5] = ccount(s, w->params);
		row[6] = cstr(strategy_text(s, w, share + (size_t)k * nd, nd));
		row[7] = cstr(devices_text(s, on + (size_t)k * nd, nd));
		row[8] = cstr(sync_text(s, w));
		row[9] = csecs(s, w->crit);
		double mx = 0;
		for (int d = 0; d < nd; d++)
			mx = fmax(mx, mem[(size_t)k * nd + d]);
		row[10] = cbytes(s, mx);
	}
	if (wait > 0) {
		Cell *row = row_new(t);
		row[0] = cstr("");
		row[1] = cstr("(waiting)");
		row[2] = row[3] = row[4] = row[5] = row[6] = row[7] = row[8] = cstr("");
		row[10] = cstr("");
		row[9] = csecs(s, wait);
	}
	free(rows);
	free(share);
	free(on);
	free(mem);
}

/* ---- devices, links -------------------------------------------------------- */

static const Col dev_cols[] = {
	{"device", "device", 'l'}, {"type", "type", 'l'},
	{"busy_s", "busy (sim.)", 'r'}, {"idle_s", "idle (sim.)", 'r'},
	{"peak_mem_bytes", "peak memory (sim.)", 'r'},
	{"memory_bytes", "capacity", 'r'}, {"peak_fraction", "use", 'r'},
};

static void devices_table(Sum *s, Table *t)
{
	const SimResult *r = s->r;
	for (int d = 0; d < r->ndevs && d < s->c->ndevs; d++) {
		const Device *dv = &s->c->devs[d];
		double cap = s->c->types[dv->type].memory;
		Cell *row = row_new(t);
		row[0] = cstr(dv->name);
		row[1] = cstr(s->c->types[dv->type].name);
		row[2] = csecs(s, r->busy[d]);
		row[3] = csecs(s, fmax(0, r->makespan - r->busy[d]));
		row[4] = cbytes(s, r->peak_mem[d]);
		row[5] = cbytes(s, cap);
		row[6] = cpct(s, cap > 0 ? r->peak_mem[d] / cap : NAN);
		if (cap > 0 && r->peak_mem[d] > cap)
			row[6].human = arena_printf(s->a, "%s OOM", row[6].human);
	}
}

static const Col link_cols[] = {
	{"link", "link", 'l'}, {"bytes", "bytes (sim.)", 'r'},
	{"busy_s", "busy (sim.)", 'r'}, {"busy_fraction", "busy/iteration", 'r'},
};

static void links_table(Sum *s, Table *t)
{
	const SimResult *r = s->r;
	for (int l = 0; l < r->nlinks; l++) {
		Cell *row = row_new(t);
		row[0] = cstr(r->link_name[l]);
		row[1] = cbytes(s, r->link_bytes[l]);
		row[2] = csecs(s, r->link_busy[l]);
		row[3] = cpct(s, r->makespan > 0 ? r->link_busy[l] / r->makespan : NAN);
	}
}

/* ---- headline ------------------------------------------------------------- */

/* The problem's lower bound (problem_lower_bound_s of --stats-json: the
 * input graph on the cluster, whatever the plan); NAN where the caller
 * did not compute it, and the headline leaves the line out. */
static double problem_lower_bound(const SimResult *r)
{
	return r->problem_bound > 0 ? r->problem_bound : NAN;
}

typedef struct HeadItem {
	const char *key;         /* csv / json */
	const char *text;        /* the human line */
	double value;            /* seconds or a ratio; NAN: none */
	const char *str;         /* instead of value */
} HeadItem;

static int idle_items(Arena *a, const Graph *g, const SimResult *r,
		      const SimJudged *j, HeadItem *it, int n, int max);

/* The headline as items (at most 8 + the judged plans + the idle
 * machines), in a. */
static int headline_items(Arena *a, const Graph *g, const SimResult *r,
			  const SimJudged *j, HeadItem *it, int max)
{
	char b1[32], b2[32];
	int n = 0;
	it[n++] = (HeadItem){"iteration_s", arena_printf(a,
		"simulated iteration time: %s", viz_time(b1, sizeof b1, r->makespan)),
		r->makespan, NULL};
	it[n++] = (HeadItem){"lower_bound_s", arena_printf(a,
		"lower bound (simulator's, docs/simulator.md): %s; the plan is "
		"%.2fx of it", viz_time(b2, sizeof b2, r->lower_bound),
		r->lower_bound > 0 ? r->makespan / r->lower_bound : NAN),
		r->lower_bound, NULL};
	double pb = problem_lower_bound(r);
	if (isfinite(pb))
		it[n++] = (HeadItem){"problem_lower_bound_s", arena_printf(a,
			"problem lower bound (the model on the cluster, any plan): %s; "
			"the plan is %.2fx of it", viz_time(b2, sizeof b2, pb),
			r->makespan / pb), pb, NULL};
	int oom = 0;
	for (int d = 0; d < r->ndevs && g->cluster && d < g->cluster->ndevs; d++)
		oom += r->peak_mem[d] > g->cluster->types[g->cluster->devs[d].type].memory;
	it[n++] = (HeadItem){"memory", oom ? arena_printf(a,
		"memory: OUT OF MEMORY on %d device%s (simulated)", oom, oom > 1 ? "s" : "")
		: "memory: fits on every device (simulated)", NAN, oom ? "oom" : "fits"};
	int shown = 0;
	for (int k = 0; j && k < j->n; k++)
		shown += !j->plan[k].aside;
	if (!shown) {
		it[n++] = (HeadItem){"baselines", "baselines: none judged in this run "
			"(place<algo=hybrid> judges data parallelism and the "
			"model-parallel placers)", NAN, "none"};
		/* no evidence for idle machines unless a baseline
		 * simulated some on its way (dp-best alone) */
		return j && j->n ? idle_items(a, g, r, j, it, n, max) : n;
	}
	for (int k = 0; k < j->n && n < max; k++) {
		const struct SimJudgedPlan *p = &j->plan[k];
		bool chosen = k == j->chosen;
		if (p->aside)
			continue;
		it[n++] = (HeadItem){arena_printf(a, "speedup_over_%s", p->name),
			arena_printf(a, "%s %-12s %s simulated%s: %.2fx", chosen ?
				     "chosen  " : "baseline", p->name,
				     viz_time(b1, sizeof b1, p->makespan),
				     p->oom ? " (out of memory)" : "",
				     r->makespan > 0 ? p->makespan / r->makespan : NAN),
			r->makespan > 0 ? p->makespan / r->makespan : NAN, NULL};
	}
	return idle_items(a, g, r, j, it, n, max);
}

/* Whether judged plan p puts anything on machine m of c. */
static bool plan_uses(const struct SimJudgedPlan *p, const Cluster *c, int m)
{
	const Machine *mc = &c->machines[m];
	for (int d = mc->first; d < mc->first + mc->count && d < p->ndevs; d++)
		if (p->used[d])
			return true;
	return false;
}

/* Whether judged plan p uses every machine the plan written uses
 * (busy[k]) and machine m as well. */
static bool plan_adds(const struct SimJudgedPlan *p, const Cluster *c,
		      const bool *busy, int m)
{
	if (!plan_uses(p, c, m))
		return false;
	for (int k = 0; k < c->nmachines; k++)
		if (busy[k] && !plan_uses(p, c, k))
			return false;
	return true;
}

/* Why a machine the plan leaves idle is idle: the fastest judged plan
 * that fits and uses it beside every machine the plan written uses (else
 * the fastest that uses it at all), against the plan written (at most
 * IDLE_MAX machines, then a count). */
enum { IDLE_MAX = 6 };
static int idle_items(Arena *a, const Graph *g, const SimResult *r,
		      const SimJudged *j, HeadItem *it, int n, int max)
{
	const Cluster *c = g->cluster;
	if (!c || r->ndevs != c->ndevs || !r->busy || c->nmachines < 2)
		return n;
	int shown = 0, more = 0;
	bool *busy = arena_alloc(a, sizeof(bool) * (size_t)c->nmachines);
	for (int m = 0; m < c->nmachines; m++) {
		const Machine *mc = &c->machines[m];
		busy[m] = false;
		for (int d = mc->first; d < mc->first + mc->count; d++)
			busy[m] = busy[m] || r->busy[d] > 0;
	}
	for (int m = 0; m < c->nmachines; m++) {
		const Machine *mc = &c->machines[m];
		if (busy[m])
			continue;
		if (shown == IDLE_MAX || n >= max - 1) {
			more++;
			continue;
		}
		int best = -1;
		for (int pass = 0; pass < 2 && best < 0; pass++)
			for (int k = 0; k < j->n; k++) {
				const struct SimJudgedPlan *p = &j->plan[k];
				if (p->used && !p->oom &&
				    (pass ? plan_uses(p, c, m)
					  : plan_adds(p, c, busy, m)) &&
				    (best < 0 ||
				     p->makespan < j->plan[best].makespan))
					best = k;
			}
		const char *what = arena_printf(a, "%dx %s", mc->count,
						c->types[mc->type].name);
		char b1[32];
		double x = best >= 0 && r->makespan > 0
			? j->plan[best].makespan / r->makespan : NAN;
		it[n++] = (HeadItem){arena_printf(a, "idle_machine_%d", m),
			best >= 0 ? arena_printf(a, "idle: %s (%s): the fastest "
				"judged plan that uses it, %s, is %s "
				"(%s simulated)", mc->name, what,
				j->plan[best].name, x < 1.005 ? "as fast"
				: arena_printf(a, "%.2fx slower", x),
				viz_time(b1, sizeof b1, j->plan[best].makespan))
			: arena_printf(a, "idle: %s (%s): no judged plan that "
				"fits in memory uses it", mc->name, what), x, NULL};
		shown++;
	}
	if (more)
		it[n++] = (HeadItem){"idle_machines_more", arena_printf(a,
			"idle: %d more machine%s", more, more > 1 ? "s" : ""),
			more, NULL};
	return n;
}

enum { HEAD_MAX = 64 };

void summary_headline(FILE *f, const char *prefix, const Graph *g,
		      const SimResult *r, const SimJudged *judged)
{
	Arena *a = arena_new();
	HeadItem it[HEAD_MAX];
	int n = headline_items(a, g, r, judged, it, HEAD_MAX);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s\n", prefix, it[i].text);
	arena_free(a);
}

/* ---- the backend ---------------------------------------------------------- */

bool emit_summary_backend(FILE *f, const EmitCtx *ctx)
{
	const char *fmt = backend_opt(ctx, "format");
	if (strcmp(fmt, "text") && strcmp(fmt, "md") && strcmp(fmt, "csv") &&
	    strcmp(fmt, "json")) {
		fprintf(stderr, "pcc: error: --emit-opt format: expected one of text, "
			"md, csv, json, not '%s'\n", fmt);
		return false;
	}
	const Graph *g = ctx->g;
	Sum s = {arena_new(), ctx, g, ctx->sim,
		 ctx->cost && ctx->cost->c ? ctx->cost->c : g->cluster, fmt};
	VizGroups vg;
	viz_groups_build(&vg, g);
	Table tg = {vg.stages ? "stages" : "groups", group_cols,
		    (int)(sizeof group_cols / sizeof group_cols[0]), NULL, 0, 0};
	Table td = {"devices", dev_cols, (int)(sizeof dev_cols / sizeof dev_cols[0]),
		    NULL, 0, 0};
	Table tl = {"links", link_cols, (int)(sizeof link_cols / sizeof link_cols[0]),
		    NULL, 0, 0};
	groups_table(&s, &tg, &vg);
	devices_table(&s, &td);
	links_table(&s, &tl);
	HeadItem it[HEAD_MAX];
	int nh = headline_items(s.a, g, s.r, ctx->judged, it, HEAD_MAX);
	const char *gname = g->name ? g->name : "graph";
	const char *cname = s.c && s.c->name ? s.c->name : "?";
	if (strcmp(fmt, "json") == 0) {
		fputs("{\n  \"simulated\": true,\n  \"graph\": ", f);
		viz_json_str(f, gname);
		fputs(",\n  \"cluster\": ", f);
		viz_json_str(f, cname);
		fputs(",\n", f);
		table_print(f, &tg, fmt);
		fputs(",\n", f);
		table_print(f, &td, fmt);
		fputs(",\n", f);
		table_print(f, &tl, fmt);
		fputs(",\n  \"headline\": {", f);
		for (int i = 0; i < nh; i++) {
			fprintf(f, "%s\n    \"%s\": ", i ? "," : "", it[i].key);
			if (it[i].str)
				viz_json_str(f, it[i].str);
			else if (isfinite(it[i].value))
				fprintf(f, "%.9g", it[i].value);
			else
				fputs("null", f);
		}
		fputs("\n  }\n}\n", f);
	} else if (strcmp(fmt, "csv") == 0) {
		table_print(f, &tg, fmt);
		table_print(f, &td, fmt);
		table_print(f, &tl, fmt);
		fputs("headline,key,value\n", f);
		for (int i = 0; i < nh; i++) {
			fprintf(f, "headline,%s,", it[i].key);
			if (it[i].str)
				csv_str(f, it[i].str);
			else if (isfinite(it[i].value))
				fprintf(f, "%.9g", it[i].value);
			fputc('\n', f);
		}
	} else {
		bool md = strcmp(fmt, "md") == 0;
		fputs(md ? "## Plan summary: " : "plan summary: ", f);
		fprintf(f, "%s on %s (figures marked sim. are simulated: "
			"docs/simulator.md)\n", gname, cname);
		table_print(f, &tg, fmt);
		table_print(f, &td, fmt);
		table_print(f, &tl, fmt);
		fputs(md ? "\n### headline\n\n" : "\nheadline\n", f);
		for (int i = 0; i < nh; i++)
			fprintf(f, "%s%s\n", md ? "- " : "  ", it[i].text);
	}
	table_free(&tg);
	table_free(&td);
	table_free(&tl);
	viz_groups_free(&vg);
	arena_free(s.a);
	return true;
}
