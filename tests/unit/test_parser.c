/* test_parser.c — the gir frontend (frontend/gir.l, gir.y, parse.c):
 * the spec's example, units, aliases, forward and control references,
 * header comments, the cluster block, diagnostics with exact positions,
 * and many parses in one process. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

static const char mlp[] =
	"gir 1\n"
	"# two-layer perceptron, one SGD training step, batch 64\n"
	"graph mlp {batch = 64} {\n"
	"  %x      = Placeholder() {@batch_dim = 0} : f32[64,784]\n"
	"  %labels = Placeholder() {@batch_dim = 0} : i64[64]\n"
	"  %w1     = VariableV2() : f32[784,256]\n"
	"  %w2     = VariableV2() : f32[256,10]\n"
	"  %h      = MatMul(%x, %w1) : f32[64,256]\n"
	"  %a      = Relu(%h) : f32[64,256]\n"
	"  %y      = MatMul(%a, %w2) : f32[64,10]\n"
	"  %loss, %dy = SoftmaxCrossEntropyWithLogits(%y, %labels) : (f32[64], f32[64,10])\n"
	"  %gw2    = MatMul(%a, %dy) {transpose_a = true} : f32[256,10]\n"
	"  %da     = MatMul(%dy, %w2) {transpose_b = true} : f32[64,256]\n"
	"  %dh     = ReluGrad(%da, %a) : f32[64,256]\n"
	"  %gw1    = MatMul(%x, %dh) {transpose_a = true} : f32[784,256]\n"
	"  %u1     = ApplyGradientDescent(%w1, %gw1) {@cost = 12us} : ()\n"
	"  %u2     = ApplyGradientDescent(%w2, %gw2) : ()\n"
	"}\n";

/* Parses text with diagnostics captured in *errs (caller frees). */
static Graph *parse(const char *text, char **errs)
{
	size_t n = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &n);
	Diag d;
	diag_init(&d, f, "t.gir", text, strlen(text));
	Graph *g = gir_parse("t.gir", text, strlen(text), &d);
	fclose(f);
	if (errs)
		*errs = buf;
	else
		free(buf);
	return g;
}

static Op *op_named(Graph *g, const char *name)
{
	uint32_t idx = 99;
	Op *op = graph_lookup(g, name, &idx);
	return op && idx == 0 ? op : NULL;
}

static void test_mlp(void)
{
	char *errs;
	Graph *g = parse(mlp, &errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_STRING_EQUAL(errs, "");
	free(errs);
	CU_ASSERT_EQUAL(g->nops, 14);
	CU_ASSERT_STRING_EQUAL(g->name, "mlp");
	Value *b = graph_attr(g, "batch");
	CU_ASSERT_TRUE(b && b->kind == V_INT && b->i == 64);
	CU_ASSERT_STRING_EQUAL(g->ops[0]->name, "x");
	CU_ASSERT_STRING_EQUAL(g->ops[13]->name, "u2");
	/* the comment after 'gir 1' is not a header comment */
	CU_ASSERT_EQUAL(g->ncomments, 0);

	Op *h = op_named(g, "h");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_STRING_EQUAL(h->type, "MatMul");
	CU_ASSERT_EQUAL(h->loc.line, 8);
	CU_ASSERT_EQUAL(h->loc.col, 3);
	CU_ASSERT_TRUE(h->types_given);
	CU_ASSERT_EQUAL(h->nout, 1);
	CU_ASSERT_EQUAL(h->out[0].dt, DT_F32);
	CU_ASSERT_EQUAL(h->out[0].rank, 2);
	CU_ASSERT_EQUAL(h->out[0].dims[0], 64);
	CU_ASSERT_EQUAL(h->out[0].dims[1], 256);
	CU_ASSERT_EQUAL(h->nin, 2);
	CU_ASSERT_PTR_EQUAL(h->in[0].src, op_named(g, "x"));
	CU_ASSERT_PTR_EQUAL(h->in[1].src, op_named(g, "w1"));

	Op *lbl = op_named(g, "labels");
	CU_ASSERT_EQUAL(lbl->out[0].dt, DT_I64);
	Value *bd = op_get(g, lbl, "@batch_dim");
	CU_ASSERT_TRUE(bd && bd->kind == V_INT && bd->i == 0);

	/* %dy is output 1 of %loss */
	Op *loss = op_named(g, "loss");
	CU_ASSERT_PTR_NOT_NULL_FATAL(loss);
	CU_ASSERT_EQUAL(loss->nout, 2);
	uint32_t idx = 0;
	CU_ASSERT_PTR_EQUAL(graph_lookup(g, "dy", &idx), loss);
	CU_ASSERT_EQUAL(idx, 1);
	Op *gw2 = op_named(g, "gw2");
	CU_ASSERT_PTR_EQUAL(gw2->in[1].src, loss);
	CU_ASSERT_EQUAL(gw2->in[1].idx, 1);
	CU_ASSERT_FALSE(gw2->in[1].ctrl);
	CU_ASSERT_TRUE(op_get_bool(g, gw2, "transpose_a", false));
	CU_ASSERT_PTR_NULL(op_get(g, gw2, "transpose_b"));
	CU_ASSERT_TRUE(op_get_bool(g, op_named(g, "da"), "transpose_b", false));

	Op *u1 = op_named(g, "u1");
	CU_ASSERT_TRUE(u1->types_given);
	CU_ASSERT_EQUAL(u1->nout, 0);
	Value *c = op_get(g, u1, "@cost");
	CU_ASSERT_TRUE_FATAL(c && c->kind == V_QTY);
	CU_ASSERT_EQUAL(c->unit, UNIT_SECONDS);
	CU_ASSERT_TRUE(fabs(c->f - 1.2e-5) < 1e-18);
	graph_free(g);
}

static void test_refs_and_values(void)
{
	const char *text =
		"# made by hand\n"
		"#second line\n"
		"gir 1\n"
		"graph \"g 2\" {\n"
		"  %s = AddN(%q, %p:0,\n"
		"            ^%y) : f32[2,3]\n"
		"  %p, %q = Split(%c0, %y) {num_split = 2} : (f32[2,3], f32[2,3])\n"
		"  %y = Placeholder() {m = 32GiB, n = 100Gbps, f = 2.5e9, i = -1,"
		" s = \"a\\\"b\\n\", t = f16[?,3], l = [1, [SAME, false], {k = v}],"
		" d = {\"1080Ti\" = 2ms, @x = 1}} : f32[?,3]\n"
		"  %c0 = Const() {value = 0} : i32[]\n"
		"  %r = Relu(%y)\n"
		"}\n";
	char *errs;
	Graph *g = parse(text, &errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_STRING_EQUAL(errs, "");
	free(errs);
	CU_ASSERT_STRING_EQUAL(g->name, "g 2");
	CU_ASSERT_EQUAL_FATAL(g->ncomments, 2);
	CU_ASSERT_STRING_EQUAL(g->comments[0], " made by hand");
	CU_ASSERT_STRING_EQUAL(g->comments[1], "second line");

	/* forward references and a control input */
	Op *s = op_named(g, "s"), *p = op_named(g, "p"), *y = op_named(g, "y");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL_FATAL(s->nin, 3);
	CU_ASSERT_PTR_EQUAL(s->in[0].src, p);
	CU_ASSERT_EQUAL(s->in[0].idx, 1);
	CU_ASSERT_PTR_EQUAL(s->in[1].src, p);
	CU_ASSERT_EQUAL(s->in[1].idx, 0);
	CU_ASSERT_PTR_EQUAL(s->in[2].src, y);
	CU_ASSERT_TRUE(s->in[2].ctrl);
	CU_ASSERT_FALSE(s->in[0].ctrl);

	/* units normalised to base units */
	Value *v = op_get(g, y, "m");
	CU_ASSERT_TRUE(v && v->kind == V_QTY && v->unit == UNIT_BYTES &&
		       v->f == 34359738368.0);
	v = op_get(g, y, "n");
	CU_ASSERT_TRUE(v && v->kind == V_QTY && v->unit == UNIT_BYTE_RATE &&
		       v->f == 12.5e9);
	v = op_get(g, y, "f");
	CU_ASSERT_TRUE(v && v->kind == V_FLOAT && v->f == 2.5e9);
	v = op_get(g, y, "i");
	CU_ASSERT_TRUE(v && v->kind == V_INT && v->i == -1);
	v = op_get(g, y, "s");
	CU_ASSERT_TRUE(v && v->kind == V_STR && strcmp(v->s, "a\"b\n") == 0);
	v = op_get(g, y, "t");
	CU_ASSERT_TRUE(v && v->kind == V_TYPE && v->t.dt == DT_F16 &&
		       v->t.rank == 2 && v->t.dims[0] == DIM_UNKNOWN &&
		       v->t.dims[1] == 3);
	v = op_get(g, y, "l");
	CU_ASSERT_TRUE_FATAL(v && v->kind == V_LIST && v->list.n == 3);
	CU_ASSERT_EQUAL(v->list.items[1]->kind, V_LIST);
	CU_ASSERT_EQUAL(v->list.items[1]->list.items[0]->kind, V_IDENT);
	CU_ASSERT_STRING_EQUAL(v->list.items[1]->list.items[0]->s, "SAME");
	CU_ASSERT_EQUAL(v->list.items[1]->list.items[1]->kind, V_BOOL);
	CU_ASSERT_EQUAL(v->list.items[2]->kind, V_DICT);
	v = op_get(g, y, "d");
	CU_ASSERT_TRUE_FATAL(v && v->kind == V_DICT && v->dict.n == 2);
	CU_ASSERT_STRING_EQUAL(v->dict.items[0].key, "1080Ti");
	CU_ASSERT_TRUE(fabs(v->dict.items[0].val->f - 2e-3) < 1e-18);
	CU_ASSERT_STRING_EQUAL(v->dict.items[1].key, "@x");
	CU_ASSERT_EQUAL(y->out[0].dims[0], DIM_UNKNOWN);

	/* types omitted: outputs left to graph_infer_types */
	Op *r = op_named(g, "r");
	CU_ASSERT_FALSE(r->types_given);
	CU_ASSERT_EQUAL(r->nout, 0);
	Op *c0 = op_named(g, "c0");
	CU_ASSERT_EQUAL(c0->out[0].rank, 0);
	graph_free(g);
}

static void test_print_roundtrip(void)
{
	Graph *g = parse(mlp, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	FILE *f = open_memstream(&a, &na);
	gir_print(f, g);
	fclose(f);
	graph_free(g);
	g = parse(a, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	f = open_memstream(&b, &nb);
	gir_print(f, g);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(a, b);
	CU_ASSERT_PTR_NOT_NULL(strstr(a, "%loss, %dy = SoftmaxCrossEntropyWithLogits"));
	graph_free(g);
	free(a);
	free(b);
}

static void test_cluster(void)
{
	const char *text =
		"gir 1\n"
		"cluster \"tag-testbed\" {\n"
		"  type \"V100-32G\" {flops = 15.7TFLOPS, memory = 32GiB, mem_bw = 900GB/s}\n"
		"  type \"1080Ti\" {flops = 11.3TFLOPS, memory = 11GiB, mem_bw = 484GB/s,"
		" efficiency = {matmul = 0.6, conv = 0.5}}\n"
		"  machine m0 {type = \"V100-32G\", count = 4, bandwidth = 150GB/s, latency = 2us}\n"
		"  machine m1 {type = \"1080Ti\", count = 2, bandwidth = 12GB/s, latency = 5us}\n"
		"  network {bandwidth = 12.5GB/s, latency = 10us}\n"
		"  link \"m0/gpu0\" \"m1/gpu1\" {bandwidth = 5GB/s, latency = 3us}\n"
		"  link m0/gpu1 m1/gpu0 {bandwidth = 5GB/s}\n"
		"}\n"
		"graph g {\n"
		"  %x = Placeholder() {@device = \"m1/gpu1\"} : f32[4]\n"
		"}\n";
	char *errs;
	Graph *g = parse(text, &errs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_STRING_EQUAL(errs, "");
	free(errs);
	Cluster *c = g->cluster;
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(c->name, "tag-testbed");
	CU_ASSERT_EQUAL(c->ntypes, 2);
	CU_ASSERT_EQUAL(c->nmachines, 2);
	CU_ASSERT_EQUAL_FATAL(c->ndevs, 6);
	CU_ASSERT_STRING_EQUAL(c->devs[0].name, "m0/gpu0");
	CU_ASSERT_STRING_EQUAL(c->devs[3].name, "m0/gpu3");
	CU_ASSERT_STRING_EQUAL(c->devs[4].name, "m1/gpu0");
	CU_ASSERT_EQUAL(c->devs[5].type, 1);
	CU_ASSERT_EQUAL(c->types[0].flops, 15.7e12);
	CU_ASSERT_EQUAL(c->types[0].memory, 32.0 * 1073741824.0);
	CU_ASSERT_EQUAL(c->types[0].mem_bw, 900e9);
	CU_ASSERT_FALSE(c->types[0].eff_given);
	CU_ASSERT_TRUE(c->types[1].eff_given);
	CU_ASSERT_EQUAL(c->types[1].eff[OC_MATMUL], 0.6);
	CU_ASSERT_EQUAL(c->types[1].eff[OC_CONV], 0.5);
	CU_ASSERT_EQUAL(c->types[1].eff[OC_OTHER], 1.0);
	CU_ASSERT_EQUAL(c->machines[1].type, 1);
	CU_ASSERT_EQUAL(c->machines[0].lat, 2e-6);
	CU_ASSERT_EQUAL(c->net_bw, 12.5e9);
	CU_ASSERT_EQUAL_FATAL(c->nlinks, 2);
	CU_ASSERT_EQUAL(c->links[0].a, 0);
	CU_ASSERT_EQUAL(c->links[0].b, 5);
	CU_ASSERT_TRUE(fabs(c->links[0].lat - 3e-6) < 1e-18);
	CU_ASSERT_EQUAL(c->links[1].lat, -1);
	double bw, lat;
	cluster_link(c, 1, 4, &bw, &lat);
	CU_ASSERT_EQUAL(bw, 5e9);
	CU_ASSERT_TRUE(fabs(lat - 10e-6) < 1e-18);  /* the network's */
	graph_free(g);
}

/* Parses text that must fail; checks that want occurs in the messages. */
static void expect_error(const char *text, const char *want)
{
	char *errs;
	Graph *g = parse(text, &errs);
	CU_ASSERT_PTR_NULL(g);
	if (!strstr(errs, want))
		fprintf(stderr, "\nwanted: %s\ngot: %s\n", want, errs);
	CU_ASSERT_PTR_NOT_NULL(strstr(errs, want));
	graph_free(g);
	free(errs);
}

static void test_errors(void)
{
	expect_error("", "t.gir:1:1: error: empty input");
	expect_error("gir 2\ngraph g {\n}\n",
		     "t.gir:1:5: error: unsupported gir version 2");
	expect_error("gir 1\ngraph g {\n  %a = X() : f32[2]\n  %b = Y(%a, %c) : f32[2]\n}\n",
		     "t.gir:4:14: error: undefined value '%c'\n"
		     "    %b = Y(%a, %c) : f32[2]\n"
		     "               ^\n");
	expect_error("gir 1\ngraph g {\n  %a = X() : f32[2]\n\t%a = Y() : f32[2]\n}\n",
		     "t.gir:4:2: error: duplicate op name '%a'");
	expect_error("gir 1\ngraph g {\n  %a = X() : f32[2]\n\t%a = Y() : f32[2]\n}\n",
		     "t.gir:3:3: note: '%a' was first defined here");
	expect_error("gir 1\ngraph g {\n  %a = X() {t = 12parsecs} : f32[2]\n}\n",
		     "t.gir:3:17: error: unknown unit 'parsecs'");
	expect_error("gir 1\ngraph g {\n  %a, %b = X()\n}\n",
		     "t.gir:3:7: error: types required when naming several results");
	expect_error("gir 1\ngraph g {\n  %a, %b = X() : (f32[1], f32[1], f32[1])\n}\n",
		     "t.gir:3:3: error: 2 result names for 3 output types");
	expect_error("gir 1\ngraph g {\n  %a = X() : f32[1]\n  %b = Y(%a:2) : f32[1]\n}\n",
		     "t.gir:4:10: error: output index 2 out of range");
	expect_error("gir 1\ngraph g {\n  %a = X() $ : f32[1]\n}\n",
		     "t.gir:3:12: error: invalid character '$'");
	expect_error("gir 1\ngraph g {s = \"abc} {\n}\n",
		     "t.gir:2:14: error: unterminated string");
	expect_error("gir 1\ncluster c {\n  type V {flops = 1TFLOPS, memory = 1GB/s}\n"
		     "  machine m {type = V}\n}\ngraph g {\n}\n",
		     "t.gir:3:37: error: memory must be a size");

	/* several syntax errors, one per broken line */
	char *errs;
	Graph *g = parse("gir 1\ngraph g {\n  %a = X(,) : f32[1]\n"
			 "  %b = Y(%a) : f32[1]\n  %c = Z(%b : f32[1]\n"
			 "  %d = W(%c) : f32[1]\n}\n", &errs);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT_PTR_NOT_NULL(strstr(errs, "t.gir:3:10: error: syntax error, "
					    "unexpected ','"));
	CU_ASSERT_PTR_NOT_NULL(strstr(errs, "t.gir:5:15: error: syntax error, "
					    "unexpected identifier 'f32'"));
	CU_ASSERT_PTR_NULL(strstr(errs, "t.gir:4:"));
	CU_ASSERT_PTR_NULL(strstr(errs, "t.gir:6:"));
	free(errs);

	/* deep nesting stops with an error, not a stack overflow */
	size_t n = 100000;
	char *deep = malloc(n + 64);
	strcpy(deep, "gir 1\ngraph g {a = ");
	size_t k = strlen(deep);
	memset(deep + k, '[', n);
	deep[k + n] = 0;
	expect_error(deep, "nesting too deep");
	free(deep);
}

static void test_reentrant(void)
{
	int ok = 0;
	for (int i = 0; i < 1000; i++) {
		Graph *g = parse(mlp, NULL);
		ok += g && g->nops == 14;
		graph_free(g);
		g = parse("gir 1\ngraph g {\n  %b = Y(%a, %c)\n}\n", NULL);
		ok += g == NULL;
	}
	CU_ASSERT_EQUAL(ok, 2000);
}

void suite_parser(void)
{
	CU_pSuite s = CU_add_suite("parser", NULL, NULL);
	CU_add_test(s, "spec example (MLP)", test_mlp);
	CU_add_test(s, "references, values, units, comments", test_refs_and_values);
	CU_add_test(s, "print -> parse -> print", test_print_roundtrip);
	CU_add_test(s, "cluster block", test_cluster);
	CU_add_test(s, "errors at line:col", test_errors);
	CU_add_test(s, "1000 parses in one process", test_reentrant);
}
