/* test_viz.c — the picture and timeline backends (backend/viz.c, dot.c,
 * trace.c, gantt.c): escaping of arbitrary bytes for DOT, JSON and XML;
 * human units; the trace of tests/golden/viz-trace.gir read back with
 * json-c, every event at the time worked out by hand in that file's
 * comment; names with quotes, markup and invalid UTF-8 surviving into
 * valid output; the Gantt chart merging sub-pixel bars; typed --emit-opt
 * values. */
#include <CUnit/CUnit.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "frontend/frontend.h"

/* What f(FILE *, s) writes, as a malloc'd string. */
static char *capture(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	fn(f, s);
	fclose(f);
	return buf;
}

#define FFFD "\xef\xbf\xbd"

static void test_viz_escape(void)
{
	char *s = capture(viz_json_str, "a\"b\\c\n\x01\xff\xe2\x9c\x93");
	CU_ASSERT_STRING_EQUAL(s, "\"a\\\"b\\\\c\\n\\u0001" FFFD "\xe2\x9c\x93\"");
	free(s);
	/* A surrogate and an overlong '/' are three and two bad bytes. */
	s = capture(viz_xml_text, "<&>\"'\t\n\x02\xed\xa0\x80\xc0\xaf\xf0\x9f\x98\x80");
	CU_ASSERT_STRING_EQUAL(s, "&lt;&amp;&gt;&quot;&apos;&#9;&#10;" FFFD FFFD FFFD
				  FFFD FFFD FFFD "\xf0\x9f\x98\x80");
	free(s);
	s = capture(viz_dot_text, "a\"b\\c\nd\xe2\x9c");
	CU_ASSERT_STRING_EQUAL(s, "a\\\"b\\\\c d" FFFD FFFD);
	free(s);
	CU_ASSERT_EQUAL(viz_text_len("a\xe2\x9c\x93\xff"), 3);
	CU_ASSERT_EQUAL(viz_text_prefix("a\xe2\x9c\x93" "b", 2), 4);
}

static void test_viz_units(void)
{
	char b[32];
	CU_ASSERT_STRING_EQUAL(viz_bytes(b, sizeof b, 0), "0 B");
	CU_ASSERT_STRING_EQUAL(viz_bytes(b, sizeof b, 999), "999 B");
	CU_ASSERT_STRING_EQUAL(viz_bytes(b, sizeof b, 1000), "1 KB");
	CU_ASSERT_STRING_EQUAL(viz_bytes(b, sizeof b, 65536), "65.5 KB");
	CU_ASSERT_STRING_EQUAL(viz_bytes(b, sizeof b, 802816), "803 KB");
	CU_ASSERT_STRING_EQUAL(viz_bytes(b, sizeof b, 1e6), "1 MB");
	CU_ASSERT_STRING_EQUAL(viz_bytes(b, sizeof b, 2.5e9), "2.5 GB");
	CU_ASSERT_STRING_EQUAL(viz_time(b, sizeof b, 0), "0 s");
	CU_ASSERT_STRING_EQUAL(viz_time(b, sizeof b, 2), "2 s");
	CU_ASSERT_STRING_EQUAL(viz_time(b, sizeof b, 1e-3), "1 ms");
	CU_ASSERT_STRING_EQUAL(viz_time(b, sizeof b, 1.5e-6), "1.5 us");
	CU_ASSERT_STRING_EQUAL(viz_time(b, sizeof b, 12e-9), "12 ns");
}

/* A graph read, typed and verified as main.c does; NULL on error. */
static Graph *load(const char *path, const char *text)
{
	Diag d;
	char *src = NULL;
	Graph *g;
	if (path) {
		g = gir_read_file(path, &d, &src);
	} else {
		diag_init(&d, stderr, "t.gir", text, strlen(text));
		g = gir_parse("t.gir", text, strlen(text), &d);
	}
	if (g && !g->cluster)
		g->cluster = cluster_default(g->arena);
	if (g && (graph_infer_types(g, &d) || graph_verify(g, &d))) {
		graph_free(g);
		g = NULL;
	}
	free(src);
	return g;
}

/* Runs backend name on g with the --emit-opt strings opts[0..n): its
 * output, malloc'd. */
static char *emit(Graph *g, const char *name, const char *const *opts, int n)
{
	const Backend *b = backend_find(name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	Arena *a = arena_new();
	char err[256];
	int nopts = 0;
	const char **o = backend_resolve_opts(b, opts, n, a, &nopts, err, sizeof err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	SimResult r;
	bool sim = b->needs_sim;
	if (sim) {
		Diag d;
		diag_init(&d, stderr, "t.gir", NULL, 0);
		CU_ASSERT_EQUAL_FATAL(sim_run(g, &m, &r, &d), 0);
	}
	EmitCtx ctx = {g, &m, sim ? &r : NULL, o, nopts, "-", NULL};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CU_ASSERT_TRUE(b->emit(f, &ctx));
	fclose(f);
	if (sim)
		sim_free(&r);
	arena_free(a);
	return buf;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, key, &v);
	return v;
}

/* The name of thread (pid, tid) from the metadata events, or NULL. */
static const char *thread_name(json_object *events, int pid, int tid)
{
	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *e = json_object_array_get_idx(events, i);
		if (strcmp(json_object_get_string(get(e, "name")), "thread_name") == 0 &&
		    json_object_get_int(get(e, "pid")) == pid &&
		    json_object_get_int(get(e, "tid")) == tid)
			return json_object_get_string(get(get(e, "args"), "name"));
	}
	return NULL;
}

/* Is there an X event name on track `track` at ts with dur (us)? */
static bool has_event(json_object *events, const char *track, const char *name,
		      double ts, double dur)
{
	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *e = json_object_array_get_idx(events, i);
		if (strcmp(json_object_get_string(get(e, "ph")), "X") != 0 ||
		    strcmp(json_object_get_string(get(e, "name")), name) != 0)
			continue;
		const char *t = thread_name(events, json_object_get_int(get(e, "pid")),
					    json_object_get_int(get(e, "tid")));
		if (t && strcmp(t, track) == 0 &&
		    json_object_get_double(get(e, "ts")) == ts &&
		    json_object_get_double(get(e, "dur")) == dur)
			return true;
	}
	return false;
}

static void test_viz_trace(void)
{
	Graph *g = load("golden/viz-trace.gir", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	char *out = emit(g, "trace", NULL, 0);
	json_object *root = json_tokener_parse(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	json_object *other = get(root, "otherData");
	CU_ASSERT_TRUE(json_object_get_boolean(get(other, "simulated")));
	CU_ASSERT_EQUAL(json_object_get_double(get(other, "makespan_us")), 8000);
	json_object *ev = get(root, "traceEvents");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
	/* The schedule of viz-trace.gir's comment, in microseconds. */
	static const struct {
		const char *track, *name;
		double ts, dur;
	} want[] = {
		{"m0/gpu0", "x", 0, 1000},
		{"m0/gpu0", "dim", 1000, 0},
		{"m0/gpu0", "x/split", 1000, 1000},
		{"m0/gpu0", "y/rep0", 2000, 2000},
		{"m0/gpu0", "g/rep0", 4000, 1000},
		{"m0/gpu0", "u/rep0", 7000, 1000},
		{"m0/gpu0 collectives", "g/ar0", 6000, 1000},
		{"m0/gpu1", "w/rep1", 0, 0},
		{"m0/gpu1", "y/rep1", 3000, 2000},
		{"m0/gpu1", "g/rep1", 5000, 1000},
		{"m0/gpu1", "u/rep1", 7000, 1000},
		{"m0/gpu1 collectives", "g/ar1", 6000, 1000},
		{"m1/gpu0", "mon", 5000, 1000},
		{"m0/gpu0->m0/gpu1", "x.1/to/m0/gpu1", 2000, 1000},
		{"m0/gpu0->m0/gpu1", "AllReduce g (key 1)", 6000, 1000},
		{"m0/gpu1->m0/gpu0", "AllReduce g (key 1)", 6000, 1000},
		{"m0/out", "y/rep0 -> m1/gpu0", 4000, 1000},
		{"m1/in", "y/rep0 -> m1/gpu0", 4000, 1000},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!has_event(ev, want[i].track, want[i].name, want[i].ts, want[i].dur)) {
			fprintf(stderr, "\nmissing: %s on %s at %g+%g\n", want[i].name,
				want[i].track, want[i].ts, want[i].dur);
			CU_FAIL("trace event missing");
		}
	/* 14 ops (the Transfer op is on its link only) + 5 on links. */
	size_t nx = 0;
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i);
		if (strcmp(json_object_get_string(get(e, "ph")), "X") == 0) {
			nx++;
			CU_ASSERT_PTR_NOT_NULL(get(e, "args"));
		}
	}
	CU_ASSERT_EQUAL(nx, 19);
	/* The Transfer's args: its tensor, devices and size. */
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i);
		if (strcmp(json_object_get_string(get(e, "name")), "x.1/to/m0/gpu1") != 0)
			continue;
		json_object *a = get(e, "args");
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(a, "tensor")), "x/split:1");
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(a, "from")), "m0/gpu0");
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(a, "to")), "m0/gpu1");
		CU_ASSERT_EQUAL(json_object_get_int64(get(a, "bytes")), 1000000);
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(a, "@origin")), "x");
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(e, "cat")), "transfer");
	}
	json_object_put(root);
	free(out);

	/* args=false: the same events without args. */
	const char *noargs[] = {"args=false"};
	out = emit(g, "trace", noargs, 1);
	root = json_tokener_parse(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	ev = get(root, "traceEvents");
	nx = 0;
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i);
		if (strcmp(json_object_get_string(get(e, "ph")), "X") == 0) {
			nx++;
			CU_ASSERT_PTR_NULL(get(e, "args"));
		}
	}
	CU_ASSERT_EQUAL(nx, 19);
	json_object_put(root);
	free(out);
	graph_free(g);
}

/* Device names from a machine named with a quote, markup, a backslash, a
 * newline and invalid UTF-8; an @origin with more of the same. */
static const char weird[] =
	"gir 1\n"
	"cluster \"c\\\"<&>\" {\n"
	"  type \"G\" {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n"
	"  machine \"m<&\\\"\\\\>\\n\xff\" {type = \"G\", count = 2, bandwidth = 1GB/s, latency = 0s}\n"
	"}\n"
	"graph g-1.x/y {\n"
	"  %a-1/b.c = Placeholder() {@cost = 1ms, @origin = \"q\\\"\\t\x01\", "
	"@device = \"m<&\\\"\\\\>\\n\xff/gpu0\", @group = -3} : u8[1000]\n"
	"  %b = Relu(%a-1/b.c) {@cost = 1ms, @device = \"m<&\\\"\\\\>\\n\xff/gpu1\"} : u8[1000]\n"
	"}\n";

/* No control characters but the line ends. */
static bool no_controls(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 && *p != '\n')
			return false;
	return true;
}

static void test_viz_names(void)
{
	Graph *g = load(NULL, weird);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	/* JSON: the names come back as the text, bad bytes as U+FFFD. */
	char *out = emit(g, "trace", NULL, 0);
	json_object *root = json_tokener_parse(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	json_object *ev = get(root, "traceEvents");
	const char *t = thread_name(ev, 1, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_STRING_EQUAL(t, "m<&\"\\>\n" FFFD "/gpu0");
	CU_ASSERT_STRING_EQUAL(json_object_get_string(get(get(root, "otherData"), "cluster")),
			       "c\"<&>");
	CU_ASSERT_TRUE(has_event(ev, "m<&\"\\>\n" FFFD "/gpu0", "a-1/b.c", 0, 1000));
	json_object_put(root);
	free(out);
	/* DOT: quotes and backslashes escaped, the newline a space, the
	 * group a quoted cluster name. */
	out = emit(g, "dot", NULL, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "subgraph \"cluster_g-3\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "label=\"m<&\\\"\\\\> " FFFD "/gpu0\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "from: q\\\"  \""));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "digraph \"g-1.x/y\""));
	CU_ASSERT_TRUE(no_controls(out));
	free(out);
	/* SVG: markup escaped, no control characters XML forbids. */
	out = emit(g, "gantt-svg", NULL, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "m&lt;&amp;&quot;\\&gt;&#10;" FFFD "/gpu0"));
	CU_ASSERT_TRUE(no_controls(out));
	free(out);
	graph_free(g);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_viz_gantt_merge(void)
{
	/* One device: a 1 s op, then 20000 ops of 1 us each, back to back
	 * (FIFO by id).  At 1200 px a microsecond is about a thousandth of
	 * a pixel. */
	enum { N = 20000 };
	Graph *g = graph_new("many");
	g->cluster = cluster_default(g->arena);
	for (int i = 0; i <= N; i++) {
		char name[32];
		snprintf(name, sizeof name, "op%d", i);
		Op *o = graph_add_op(g, name, "Work", 0, 1);
		o->out[0] = type_make(g->arena, DT_U8, 1, (int64_t[]){1});
		o->types_given = true;
		op_set_ann(g, o, ANN_COST, val_qty(g->arena, i ? 1e-6 : 1.0, UNIT_SECONDS));
		op_set_ann(g, o, ANN_DEVICE, val_str(g->arena, "m0/gpu0"));
		op_set_ann(g, o, ANN_ROLE, val_ident(g->arena, i % 3 ? "fwd" : "bwd"));
	}
	/* Default merge-above=5000: the tiny ops, contiguous, are one
	 * rectangle, in the colour of forward, two thirds of their time. */
	char *out = emit(g, "gantt-svg", NULL, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "fill=\"#4e79a7\" fill-opacity=\"1.00\"><title>"
					   "20000 ops merged (each under a pixel; mostly forward, "
					   "busy 100%)"));
	CU_ASSERT_TRUE(count(out, "<rect") < 50);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "</svg>\n"));
	free(out);
	/* Merging off: every op drawn. */
	const char *off[] = {"merge-above=1e9"};
	out = emit(g, "gantt-svg", off, 1);
	CU_ASSERT_PTR_NULL(strstr(out, "merged"));
	CU_ASSERT_TRUE(count(out, "<rect") > N);
	free(out);
	graph_free(g);
}

static void test_viz_opts(void)
{
	Arena *a = arena_new();
	char err[256];
	int n;
	const char *bad_bool[] = {"groups=maybe"};
	CU_ASSERT_PTR_NULL(backend_resolve_opts(backend_find("dot"), bad_bool, 1, a,
						&n, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "groups: expected true or false, not 'maybe'"));
	const char *bad_num[] = {"width=wide"};
	CU_ASSERT_PTR_NULL(backend_resolve_opts(backend_find("gantt-svg"), bad_num, 1, a,
						&n, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "width: expected a number, not 'wide'"));
	const char *good[] = {"width=800", "merge-above=0"};
	const char **o = backend_resolve_opts(backend_find("gantt-svg"), good, 2, a,
					      &n, err, sizeof err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	EmitCtx ctx = {NULL, NULL, NULL, o, n, "-", NULL};
	CU_ASSERT_EQUAL(backend_opt_num(&ctx, "width"), 800);
	CU_ASSERT_EQUAL(backend_opt_num(&ctx, "merge-above"), 0);
	o = backend_resolve_opts(backend_find("dot"), NULL, 0, a, &n, err, sizeof err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	ctx = (EmitCtx){NULL, NULL, NULL, o, n, "-", NULL};
	CU_ASSERT_TRUE(backend_opt_bool(&ctx, "groups"));
	CU_ASSERT_FALSE(backend_opt_bool(&ctx, "horizontal"));
	arena_free(a);
}

void suite_viz(void)
{
	CU_pSuite s = CU_add_suite("viz", NULL, NULL);
	CU_add_test(s, "escaping any bytes", test_viz_escape);
	CU_add_test(s, "human units", test_viz_units);
	CU_add_test(s, "trace: hand-computed events", test_viz_trace);
	CU_add_test(s, "odd names in dot, trace, svg", test_viz_names);
	CU_add_test(s, "gantt: merging sub-pixel bars", test_viz_gantt_merge);
	CU_add_test(s, "typed --emit-opt values", test_viz_opts);
}
