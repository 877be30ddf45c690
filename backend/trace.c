/* trace.c — --emit=trace: the simulated schedule as Chrome trace-event
 * JSON (the "Trace Event Format" that chrome://tracing and Perfetto
 * open).
 *
 * Process 1 ("devices") has a thread per device and one per device
 * collective stream that carries an AllReduce; process 2 ("links") a
 * thread per link that carried data (the schedule of viz.c).  Every op
 * and every tensor movement is a complete event ("ph": "X") with its
 * category (viz_cat_name), ts and dur in microseconds, and args.  Times
 * are rounded to whole nanoseconds before printing, and a duration is
 * finish - start in those units, so back-to-back events on one track
 * never overlap by a rounding error (Perfetto rejects overlapping slices
 * on a track).  "otherData" and the process labels say the times are
 * simulated.  One pass over the schedule: O(V + X) output. */
#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Seconds as nanoseconds, rounded and saturated (a plan may carry times
 * beyond 292 years: llround's result would be unspecified). */
static long long to_ns(double s)
{
	return isfinite(s) && s > 0 ? pcc_sat_i64(round(s * 1e9)) : 0;
}

/* Microseconds with three decimals, from nanoseconds. */
static void put_us(FILE *f, long long ns)
{
	fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000);
}

static void meta(FILE *f, int pid, int tid, const char *what,
		 const char *key, const char *sval, int ival)
{
	fprintf(f, ",\n{\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, "
		   "\"args\": {\"%s\": ", what, pid, tid, key);
	if (sval)
		viz_json_str(f, sval);
	else
		fprintf(f, "%d", ival);
	fputs("}}", f);
}

static void arg_str(FILE *f, const char *key, const char *val)
{
	fprintf(f, ", \"%s\": ", key);
	viz_json_str(f, val);
}

/* An op's args; on_link: a collective drawn on one of its links. */
static void op_args(FILE *f, const EmitCtx *ctx, const Op *op, bool on_link)
{
	const Graph *g = ctx->g;
	char buf[256];
	fputs("\"type\": ", f);
	viz_json_str(f, op->type);
	const char *dev = op_ann_str(g, op, ANN_DEVICE);
	if (dev && !on_link)
		arg_str(f, "device", dev);
	double bytes = 0;
	for (uint32_t k = 0; k < op->nout; k++)
		bytes += cost_out_bytes(g, op, k) > 0 ? cost_out_bytes(g, op, k) : 0;
	fputs(", \"outputs\": [", f);
	for (uint32_t k = 0; k < op->nout; k++) {
		fputs(k ? ", " : "", f);
		viz_json_str(f, type_str(&op->out[k], buf, sizeof buf));
	}
	fputc(']', f);
	fprintf(f, ", \"bytes\": %.0f", bytes);
	const char *origin = op_ann_str(g, op, ANN_ORIGIN);
	if (origin)
		arg_str(f, "@origin", origin);
	Value *v = op_ann(g, op, ANN_GROUP);
	if (v && v->kind == V_INT)
		fprintf(f, ", \"@group\": %lld", (long long)v->i);
	v = op_ann(g, op, ANN_ORDER);
	if (v && v->kind == V_INT)
		fprintf(f, ", \"@order\": %lld", (long long)v->i);
	if (strcmp(op->type, "AllReduce") != 0)
		return;
	int64_t key;
	if (plan_coll_key(g, op, &key))
		fprintf(f, ", \"key\": %lld", (long long)key);
	const char *algo = op_get_str(g, op, "algo");
	if (algo)
		arg_str(f, "algo", algo);
	v = op_get(g, op, "devices");
	if (v && v->kind == V_LIST) {
		fputs(", \"devices\": [", f);
		for (uint32_t i = 0; i < v->list.n; i++) {
			const Value *d = v->list.items[i];
			fputs(i ? ", " : "", f);
			viz_json_str(f, d->kind == V_STR || d->kind == V_IDENT ? d->s : "?");
		}
		fputc(']', f);
	}
}

static void xfer_args(FILE *f, const EmitCtx *ctx, const struct SimXfer *x)
{
	const Graph *g = ctx->g;
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : g->cluster;
	const Op *src = g->ops[x->op];
	fputs("\"tensor\": ", f);
	if (x->k) {
		char *t = xmalloc(strlen(src->name) + 16);
		sprintf(t, "%s:%u", src->name, x->k);
		viz_json_str(f, t);
		free(t);
	} else {
		viz_json_str(f, src->name);
	}
	arg_str(f, "from", c->devs[x->src].name);
	arg_str(f, "to", c->devs[x->dst].name);
	fprintf(f, ", \"bytes\": %.0f", isfinite(x->bytes) ? x->bytes : 0);
	if (x->via != UINT32_MAX) {
		const Op *t = g->ops[x->via];
		arg_str(f, "op", t->name);
		const char *origin = op_ann_str(g, t, ANN_ORIGIN);
		if (origin)
			arg_str(f, "@origin", origin);
	} else {
		fputs(", \"implicit\": true", f);
	}
}

bool emit_trace_backend(FILE *f, const EmitCtx *ctx)
{
	const Graph *g = ctx->g;
	const SimResult *r = ctx->sim;
	const Cluster *c = ctx->cost && ctx->cost->c ? ctx->cost->c : g->cluster;
	bool args = backend_opt_bool(ctx, "args");
	VizSched s;
	viz_sched_build(&s, ctx);

	fputs("{\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"simulated\": true, "
	      "\"source\": \"simulated by pcc (docs/simulator.md), not measured\", "
	      "\"generator\": \"pcc " PCC_VERSION "\", \"graph\": ", f);
	viz_json_str(f, g->name ? g->name : "");
	fputs(", \"cluster\": ", f);
	viz_json_str(f, c && c->name ? c->name : "");
	fputs(", \"makespan_us\": ", f);
	put_us(f, to_ns(r->makespan));
	fputs(", \"lower_bound_us\": ", f);
	put_us(f, to_ns(r->lower_bound));
	fprintf(f, ", \"oom\": %s},\n\"traceEvents\": [\n", r->oom ? "true" : "false");

	/* Track names and order. */
	fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
	      "\"args\": {\"name\": \"devices (simulated)\"}}", f);
	meta(f, 1, 0, "process_labels", "labels", "simulated by pcc", 0);
	meta(f, 1, 0, "process_sort_index", "sort_index", NULL, 1);
	if (r->nlinks) {
		meta(f, 2, 0, "process_name", "name", "links (simulated)", 0);
		meta(f, 2, 0, "process_labels", "labels", "simulated by pcc", 0);
		meta(f, 2, 0, "process_sort_index", "sort_index", NULL, 2);
	}
	char buf[512];
	for (int w = 0; w < s.nrows; w++) {
		int pid = s.rows[w].kind == VR_LINK ? 2 : 1;
		meta(f, pid, w + 1, "thread_name", "name",
		     viz_row_name(&s, w, ctx, buf, sizeof buf), 0);
		meta(f, pid, w + 1, "thread_sort_index", "sort_index", NULL, w);
	}

	for (size_t k = 0; k < s.nbars; k++) {
		const VizBar *b = &s.bars[k];
		const struct SimXfer *x = b->xfer != UINT32_MAX ? &r->xfers[b->xfer] : NULL;
		long long t0 = to_ns(b->start), t1 = to_ns(b->finish);
		fputs(",\n{\"name\": \"", f);
		viz_bar_name(f, viz_json_text, &s, b, ctx);
		fprintf(f, "\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": ",
			viz_cat_name(b->cat));
		put_us(f, t0);
		fputs(", \"dur\": ", f);
		put_us(f, t1 > t0 ? t1 - t0 : 0);
		fprintf(f, ", \"pid\": %d, \"tid\": %d",
			s.rows[b->row].kind == VR_LINK ? 2 : 1, b->row + 1);
		if (args) {
			fputs(", \"args\": {", f);
			if (x)
				xfer_args(f, ctx, x);
			else
				op_args(f, ctx, g->ops[b->op],
					s.rows[b->row].kind == VR_LINK);
			fputc('}', f);
		}
		fputc('}', f);
	}
	fputs("\n]\n}\n", f);
	viz_sched_free(&s);
	return true;
}
