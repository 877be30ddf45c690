/* gantt.c — --emit=gantt-svg: the simulated schedule as a self-contained
 * SVG Gantt chart (no scripts, no external fonts or styles).
 *
 * One row per device, per device collective stream in use and per link
 * (viz.c's schedule, the same rows as --emit=trace), a time axis with
 * 1-2-5 ticks, ops as rectangles coloured by role (viz_cat_color;
 * color=kind), by fused group (color=group: viz_groups_build, so a
 * replica, its transfers and its AllReduce share their group's colour)
 * or by device (color=device; a transfer: its sender), each with a
 * <title> tooltip (name, type, row, start, finish), names written inside
 * bars wide enough to hold them, and a legend of the keys present.  Ops
 * of zero duration are not drawn.
 *
 * Large plans: when more than merge-above bars would be drawn, each run
 * of consecutive bars on a row that are narrower than a pixel, separated
 * by gaps narrower than a pixel, becomes one rectangle in the colour of
 * the role with most time in the run, as opaque as the run is busy
 * (at least 25 %), whose tooltip counts the ops.
 * Every rectangle drawn then is either at least a pixel wide or followed
 * by a gap of at least a pixel, so a row holds at most about 2 x width
 * rectangles whatever the plan's size.  O(V + X) after the schedule's
 * sort. */
#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	ROW_H = 22, BAR_H = 16, TOP = 92, RIGHT = 24, LABEL_MAX = 40,
	CHAR_W = 7, LEGEND_H = 22,
};

/* What bars are coloured by (--emit-opt color=): their role (kind), their
 * fused group, or their device; a legend item per key. */
typedef enum { COLOR_KIND, COLOR_GROUP, COLOR_DEVICE } ColorBy;

typedef struct Key {
	char color[8];
	const char *desc;
} Key;

typedef struct Chart {
	FILE *f;
	const EmitCtx *ctx;
	const VizSched *s;
	double x0, scale;        /* px = x0 + t * scale */
	bool merge;
	size_t merged_runs, merged_bars;
	ColorBy by;
	const VizGroups *vg;     /* COLOR_GROUP */
	Key *keys;
	int nkeys;
	bool *used;              /* keys drawn */
} Chart;

/* The legend key of bar b. */
static int bar_key(const Chart *ch, const VizBar *b)
{
	if (ch->by == COLOR_KIND)
		return b->cat;
	const SimResult *r = ch->ctx->sim;
	uint32_t op = b->op;
	if (b->xfer != UINT32_MAX && op == UINT32_MAX)
		op = r->xfers[b->xfer].op;      /* an implicit transfer: its producer */
	if (ch->by == COLOR_GROUP) {
		int k = op != UINT32_MAX ? ch->vg->of[op] : -1;
		return k >= 0 ? k : ch->nkeys - 1;     /* the last key: no group */
	}
	int d = -1;
	if (b->xfer != UINT32_MAX)
		d = r->xfers[b->xfer].src;
	else if (op != UINT32_MAX && op < r->nops)
		d = r->dev[op];
	return d >= 0 && d < ch->nkeys - 1 ? d : ch->nkeys - 1;
}

static void keys_build(Chart *ch)
{
	const EmitCtx *ctx = ch->ctx;
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : ctx->g->cluster;
	if (ch->by == COLOR_KIND) {
		ch->nkeys = VC_COUNT;
		ch->keys = xcalloc(VC_COUNT, sizeof(Key));
		for (int k = 0; k < VC_COUNT; k++) {
			snprintf(ch->keys[k].color, 8, "%s", viz_cat_color(k));
			ch->keys[k].desc = viz_cat_desc(k);
		}
	} else if (ch->by == COLOR_GROUP) {
		ch->nkeys = ch->vg->n + 1;
		ch->keys = xcalloc((size_t)ch->nkeys, sizeof(Key));
		for (int k = 0; k < ch->vg->n; k++) {
			viz_device_color(k, ch->keys[k].color);
			ch->keys[k].desc = arena_printf(ch->ctx->g->arena, "%s %lld",
							ch->vg->stages ? "stage" : "group",
							(long long)ch->vg->key[k]);
		}
		snprintf(ch->keys[ch->vg->n].color, 8, "#bbbbbb");
		ch->keys[ch->vg->n].desc = "in no group";
	} else {
		int nd = c ? c->ndevs : 0;
		ch->nkeys = nd + 1;
		ch->keys = xcalloc((size_t)ch->nkeys, sizeof(Key));
		for (int k = 0; k < nd; k++) {
			viz_device_color(k, ch->keys[k].color);
			ch->keys[k].desc = c->devs[k].name;
		}
		snprintf(ch->keys[nd].color, 8, "#bbbbbb");
		ch->keys[nd].desc = "no device";
	}
	ch->used = xcalloc((size_t)ch->nkeys + 1, sizeof(bool));
}

static double px(const Chart *ch, double t)
{
	return ch->x0 + t * ch->scale;
}

/* Text limited to LABEL_MAX code points, with an ellipsis when cut. */
static void short_text(FILE *f, const char *s)
{
	if (viz_text_len(s) <= LABEL_MAX) {
		viz_xml_text(f, s);
		return;
	}
	size_t n = viz_text_prefix(s, LABEL_MAX - 1);
	char *t = xmalloc(n + 1);
	memcpy(t, s, n);
	t[n] = 0;
	viz_xml_text(f, t);
	fputs("\xe2\x80\xa6", f);
	free(t);
}

static void bar_title(const Chart *ch, const VizBar *b)
{
	FILE *f = ch->f;
	const Graph *g = ch->ctx->g;
	char buf[512], t0[32], t1[32], d[32];
	fputs("<title>", f);
	viz_bar_name(f, viz_xml_text, ch->s, b, ch->ctx);
	const Op *op = b->op != UINT32_MAX ? g->ops[b->op] : NULL;
	if (op) {
		fputs(" (", f);
		viz_xml_text(f, op->type);
		fputc(')', f);
	}
	fputs("&#10;", f);
	viz_xml_text(f, viz_row_name(ch->s, b->row, ch->ctx, buf, sizeof buf));
	fprintf(f, ": %s to %s (%s), %s", viz_time(t0, sizeof t0, b->start),
		viz_time(t1, sizeof t1, b->finish),
		viz_time(d, sizeof d, b->finish - b->start), viz_cat_desc(b->cat));
	if (b->xfer != UINT32_MAX)
		fprintf(f, ", %s", viz_bytes(d, sizeof d, ch->ctx->sim->xfers[b->xfer].bytes));
	const char *origin = op ? op_ann_str(g, op, ANN_ORIGIN) : NULL;
	if (origin) {
		fputs(", from ", f);
		viz_xml_text(f, origin);
	}
	fputs("</title>", f);
}

static void raw_text(FILE *f, const char *s)
{
	fputs(s, f);
}

static void draw_bar(Chart *ch, const VizBar *b, double y)
{
	FILE *f = ch->f;
	double x = px(ch, b->start), w = (b->finish - b->start) * ch->scale;
	if (w < 0.5)
		w = 0.5;
	int key = bar_key(ch, b);
	ch->used[key] = true;
	fprintf(f, "<g><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%d\" "
		   "fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"0.5\">",
		x, y, w, BAR_H, ch->keys[key].color);
	bar_title(ch, b);
	fputs("</rect>", f);
	/* The name inside when it fits (about 6 px a character at 10 px),
	 * dark on the light fills. */
	char *name = NULL;
	size_t len = 0;
	FILE *m = w >= 12 ? open_memstream(&name, &len) : NULL;
	if (m) {
		viz_bar_name(m, raw_text, ch->s, b, ch->ctx);
		fclose(m);
	}
	if (name && w >= 6.0 * (double)viz_text_len(name) + 6) {
		bool light = ch->by != COLOR_KIND || b->cat == VC_INPUT ||
			     b->cat == VC_COMM || b->cat == VC_COLLECTIVE;
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" fill=\"%s\" "
			   "pointer-events=\"none\">", x + 3, y + BAR_H - 4.5,
			light ? "#222222" : "#ffffff");
		viz_xml_text(f, name);
		fputs("</text>", f);
	}
	free(name);
	fputs("</g>\n", f);
}

/* Bars [i, j] of one row, all narrower than a pixel, as one rectangle
 * in the colour of the role that takes most of their time. */
static void draw_run(Chart *ch, const VizBar *bars, size_t i, size_t j,
		     double y)
{
	FILE *f = ch->f;
	if (i == j) {
		draw_bar(ch, &bars[i], y);
		return;
	}
	double t0 = bars[i].start, t1 = bars[i].finish, time[VC_COUNT] = {0};
	for (size_t k = i; k <= j; k++) {
		t1 = bars[k].finish > t1 ? bars[k].finish : t1;
		time[bars[k].cat] += bars[k].finish - bars[k].start;
	}
	int top = 0;
	for (int c = 1; c < VC_COUNT; c++)
		top = time[c] > time[top] ? c : top;
	/* by group or device: the key of the run's longest bar */
	int key = top;
	if (ch->by != COLOR_KIND) {
		size_t lk = i;
		for (size_t k = i; k <= j; k++)
			if (bars[k].finish - bars[k].start > bars[lk].finish - bars[lk].start)
				lk = k;
		key = bar_key(ch, &bars[lk]);
	}
	ch->merged_runs++;
	ch->merged_bars += j - i + 1;
	ch->used[key] = true;
	double x = px(ch, t0), w = (t1 - t0) * ch->scale, busy = 0;
	for (int c = 0; c < VC_COUNT; c++)
		busy += time[c];
	/* Opacity: the share of the run's span that its ops are busy. */
	double share = t1 > t0 ? busy / (t1 - t0) : 1;
	share = share < 0.25 ? 0.25 : share > 1 ? 1 : share;
	char a[32], b[32];
	fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		   "fill-opacity=\"%.2f\"><title>%zu ops merged (each under a pixel; mostly %s, "
		   "busy %.0f%%): ",
		x, y, w < 1 ? 1.0 : w, BAR_H, ch->keys[key].color, share, j - i + 1,
		viz_cat_desc(top), 100 * share);
	viz_bar_name(f, viz_xml_text, ch->s, &bars[i], ch->ctx);
	fputs(" \xe2\x80\xa6 ", f);
	viz_bar_name(f, viz_xml_text, ch->s, &bars[j], ch->ctx);
	fprintf(f, "&#10;%s to %s</title></rect>\n", viz_time(a, sizeof a, t0),
		viz_time(b, sizeof b, t1));
}

static void draw_row(Chart *ch, int row, double y)
{
	const VizBar *bars = ch->s->bars;
	size_t i = ch->s->row_first[row], end = ch->s->row_first[row + 1];
	while (i < end) {
		if (bars[i].finish <= bars[i].start) {
			i++;
			continue;
		}
		double w = (bars[i].finish - bars[i].start) * ch->scale;
		if (!ch->merge || w >= 1) {
			draw_bar(ch, &bars[i], y);
			i++;
			continue;
		}
		size_t j = i;
		double t1 = bars[i].finish;
		for (size_t k = i + 1; k < end; k++) {
			if (bars[k].finish <= bars[k].start)
				continue;
			if ((bars[k].finish - bars[k].start) * ch->scale >= 1 ||
			    (bars[k].start - t1) * ch->scale >= 1)
				break;
			j = k;
			t1 = bars[k].finish > t1 ? bars[k].finish : t1;
		}
		draw_run(ch, bars, i, j, y);
		i = j + 1;
	}
}

/* Tick step: 1, 2 or 5 times a power of ten, about eight ticks. */
static double tick_step(double span)
{
	double raw = span / 8, mag = pow(10, floor(log10(raw))), n = raw / mag;
	return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * mag;
}

static void tick_label(char *buf, size_t n, double t, double step)
{
	double unit = step >= 1 ? 1 : step >= 1e-3 ? 1e-3 : step >= 1e-6 ? 1e-6 : 1e-9;
	const char *name = step >= 1 ? "s" : step >= 1e-3 ? "ms" : step >= 1e-6 ? "us" : "ns";
	snprintf(buf, n, "%.6g %s", t / unit, name);
}

static void row_title(FILE *f, const EmitCtx *ctx, const VizSched *s, int w)
{
	const SimResult *r = ctx->sim;
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : ctx->g->cluster;
	const VizRow *row = &s->rows[w];
	char a[32], b[32], buf[512];
	fputs("<title>", f);
	viz_xml_text(f, viz_row_name(s, w, ctx, buf, sizeof buf));
	if (row->kind == VR_LINK) {
		fprintf(f, ": link busy %s, %s moved", viz_time(a, sizeof a, r->link_busy[row->index]),
			viz_bytes(b, sizeof b, r->link_bytes[row->index]));
	} else if (row->kind == VR_DEVICE) {
		fputs(" (", f);
		viz_xml_text(f, c->types[c->devs[row->index].type].name);
		fprintf(f, "): busy %s, peak memory %s", viz_time(a, sizeof a, r->busy[row->index]),
			viz_bytes(b, sizeof b, r->peak_mem[row->index]));
	} else {
		fputs(": the device's collective stream (beside compute)", f);
	}
	fputs("</title>", f);
}

/* Lays out (and, when f is not NULL, draws) the legend of the keys in
 * used[] from y; returns the number of lines. */
static int legend(FILE *f, const Chart *ch, const bool *used, double y,
		  double width)
{
	double x = 16;
	int lines = 1;
	if (f)
		fputs("<g font-size=\"12\">\n", f);
	for (int c = 0; c < ch->nkeys; c++) {
		if (!used[c])
			continue;
		const char *desc = ch->keys[c].desc;
		double w = 12 + 6 + CHAR_W * (double)viz_text_len(desc) + 18;
		if (x + w > width && x > 16) {
			x = 16;
			y += LEGEND_H;
			lines++;
		}
		if (f) {
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"12\" "
				   "fill=\"%s\"/><text x=\"%.2f\" y=\"%.2f\">",
				x, y, ch->keys[c].color, x + 18, y + 10.5);
			viz_xml_text(f, desc);
			fputs("</text>\n", f);
		}
		x += w;
	}
	if (f)
		fputs("</g>\n", f);
	return lines;
}

bool emit_gantt_backend(FILE *f, const EmitCtx *ctx)
{
	const Graph *g = ctx->g;
	const SimResult *r = ctx->sim;
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : g->cluster;
	VizSched s;
	viz_sched_build(&s, ctx);
	char buf[512], a[32], b[32];

	size_t label = 14, drawable = 0;   /* room for "simulated time" */
	for (int w = 0; w < s.nrows; w++) {
		size_t n = viz_text_len(viz_row_name(&s, w, ctx, buf, sizeof buf));
		label = n > label ? n : label;
	}
	for (size_t k = 0; k < s.nbars; k++)
		drawable += s.bars[k].finish > s.bars[k].start;
	label = label > LABEL_MAX ? LABEL_MAX : label;
	double width = backend_opt_num(ctx, "width");
	double merge_above = backend_opt_num(ctx, "merge-above");
	double lw = CHAR_W * (double)label + 24;
	if (!(width >= lw + RIGHT + 200))
		width = lw + RIGHT + 200;
	if (width > 1e6)
		width = 1e6;
	double pw = width - lw - RIGHT;
	double span = r->makespan > 0 ? r->makespan : 1e-3;
	const char *color = backend_opt(ctx, "color");
	ColorBy by = strcmp(color, "kind") == 0 ? COLOR_KIND
		   : strcmp(color, "group") == 0 ? COLOR_GROUP
		   : strcmp(color, "device") == 0 ? COLOR_DEVICE : (ColorBy)-1;
	if ((int)by < 0) {
		fprintf(stderr, "pcc: error: --emit-opt color: expected one of kind, "
			"group, device, not '%s'\n", color);
		viz_sched_free(&s);
		return false;
	}
	VizGroups vg = {0};
	if (by == COLOR_GROUP)
		viz_groups_build(&vg, g);
	Chart ch = {f, ctx, &s, lw, pw / span, (double)drawable > merge_above,
		    0, 0, by, &vg, NULL, 0, NULL};
	keys_build(&ch);
	double plot_h = (double)s.nrows * ROW_H;
	/* Room for the legend of every key a bar has (drawn: a subset). */
	bool *maybe = xcalloc((size_t)ch.nkeys + 1, sizeof(bool));
	for (size_t k = 0; k < s.nbars; k++)
		maybe[bar_key(&ch, &s.bars[k])] |= s.bars[k].finish > s.bars[k].start;
	double height = TOP + plot_h + 16 + LEGEND_H * legend(NULL, &ch, maybe, 0, width) + 8;
	free(maybe);

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\" "
		   "font-size=\"12\">\n<title>Simulated schedule of ",
		width, height, width, height);
	viz_xml_text(f, g->name ? g->name : "");
	fputs(" (pcc)</title>\n", f);
	fprintf(f, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, height);
	fputs("<text x=\"16\" y=\"26\" font-size=\"16\" font-weight=\"bold\">Simulated schedule of ", f);
	viz_xml_text(f, g->name ? g->name : "");
	fputs(" on ", f);
	viz_xml_text(f, c && c->name ? c->name : "?");
	fputs("</text>\n", f);
	fprintf(f, "<text x=\"16\" y=\"46\" fill=\"#555555\">makespan %s, lower bound %s; "
		   "times simulated by pcc " PCC_VERSION " (docs/simulator.md), not measured",
		viz_time(a, sizeof a, r->makespan), viz_time(b, sizeof b, r->lower_bound));
	if (r->oom)
		fputs("; <tspan fill=\"#d62728\" font-weight=\"bold\">out of memory on some device</tspan>", f);
	fputs("</text>\n", f);

	/* Rows: stripes and labels. */
	fputs("<g>\n", f);
	for (int w = 0; w < s.nrows; w++) {
		double y = TOP + (double)w * ROW_H;
		const char *fill = s.rows[w].kind == VR_LINK ? (w % 2 ? "#eef3f8" : "#e4ecf4")
							     : (w % 2 ? "#f4f4f4" : "#fafafa");
		fprintf(f, "<g><rect x=\"0\" y=\"%.0f\" width=\"%.0f\" height=\"%d\" fill=\"%s\"/>"
			   "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"%s>",
			y, width, ROW_H, fill, lw - 8, y + ROW_H - 7,
			s.rows[w].kind == VR_DEVICE ? "" : " fill=\"#444444\" font-style=\"italic\"");
		short_text(f, viz_row_name(&s, w, ctx, buf, sizeof buf));
		row_title(f, ctx, &s, w);
		fputs("</text></g>\n", f);
	}
	fputs("</g>\n", f);

	/* Time axis and grid. */
	double step = tick_step(span);
	fprintf(f, "<g font-size=\"11\" fill=\"#333333\">\n<text x=\"16\" y=\"%d\" "
		   "fill=\"#555555\">simulated time</text>\n", TOP - 12);
	for (int k = 0; k * step <= span * (1 + 1e-9) && k < 1000; k++) {
		double x = px(&ch, k * step);
		tick_label(a, sizeof a, k * step, step);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#cccccc\" "
			   "stroke-width=\"1\"/><text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			x, TOP - 6, x, TOP + plot_h, x, TOP - 12, a);
	}
	fputs("</g>\n", f);

	/* Bars. */
	fputs("<g>\n", f);
	for (int w = 0; w < s.nrows; w++)
		draw_row(&ch, w, TOP + (double)w * ROW_H + (ROW_H - BAR_H) / 2.0);
	fputs("</g>\n", f);
	if (ch.merged_runs)
		fprintf(f, "<text x=\"16\" y=\"64\" fill=\"#555555\" font-size=\"11\">%zu sub-pixel ops drawn as "
			   "%zu merged rectangles (more than %.0f bars; --emit-opt=merge-above=N)</text>\n",
			ch.merged_bars, ch.merged_runs, merge_above);
	legend(f, &ch, ch.used, TOP + plot_h + 16, width);
	fputs("</svg>\n", f);
	free(ch.keys);
	free(ch.used);
	viz_groups_free(&vg);
	viz_sched_free(&s);
	return true;
}
