/* test_verify.c — the verifier (ir/verify.c) and type inference: every
 * check has a case that fails it, with the message and the op's line:col;
 * a valid graph passes; inference fills in omitted types. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

typedef struct V {
	Graph *g;
	char *errs;
	int nerrors;
} V;

/* Parses text (which must parse), attaches a 2-GPU cluster, infers types
 * and verifies; keeps the messages. */
static Graph *load(const char *text)
{
	FILE *null = fopen("/dev/null", "w");
	Diag d;
	diag_init(&d, null, "t.gir", text, strlen(text));
	Graph *g = gir_parse("t.gir", text, strlen(text), &d);
	fclose(null);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	if (!g->cluster)
		g->cluster = cluster_default(g->arena);
	return g;
}

static int verify(Graph *g, const char *text, char **errs)
{
	size_t n = 0;
	FILE *f = open_memstream(errs, &n);
	Diag d;
	diag_init(&d, f, "t.gir", text, text ? strlen(text) : 0);
	int e = graph_infer_types(g, &d);
	if (!e)
		e = graph_verify(g, &d);
	fclose(f);
	return e;
}

/* Verifying g (with text for carets) reports want, among >= 1 errors. */
static void expect_errors(Graph *g, const char *text, const char *want)
{
	char *errs;
	int e = verify(g, text, &errs);
	CU_ASSERT(e > 0);
	if (!strstr(errs, want))
		fprintf(stderr, "\nwanted: %s\ngot: %s\n", want, errs);
	CU_ASSERT_PTR_NOT_NULL(strstr(errs, want));
	free(errs);
}

/* text loads; verifying it reports want. */
static void expect(const char *text, const char *want)
{
	Graph *g = load(text);
	expect_errors(g, text, want);
	graph_free(g);
}

/* g, broken by hand, fails verification with want. */
static void expect_graph(Graph *g, const char *want)
{
	expect_errors(g, NULL, want);
}

static const char base[] =
	"gir 1\n"
	"graph g {batch = 4} {\n"
	"  %x = Placeholder() : f32[4,8]\n"
	"  %w = VariableV2() : f32[8,2]\n"
	"  %m = MatMul(%x, %w) : f32[4,2]\n"
	"  %l, %dy = SoftmaxCrossEntropyWithLogits(%m, %y) : (f32[4], f32[4,2])\n"
	"  %y = Placeholder() : i64[4]\n"
	"  %r = Relu(%m)\n"
	"}\n";

static void test_valid(void)
{
	Graph *g = load(base);
	char *errs;
	CU_ASSERT_EQUAL(verify(g, base, &errs), 0);
	CU_ASSERT_STRING_EQUAL(errs, "");
	free(errs);
	/* the omitted type of %r was inferred */
	Op *r = graph_lookup(g, "r", NULL);
	CU_ASSERT_EQUAL_FATAL(r->nout, 1);
	char buf[64];
	CU_ASSERT_STRING_EQUAL(type_str(&r->out[0], buf, sizeof buf), "f32[4,2]");
	CU_ASSERT_FALSE(r->types_given);
	graph_free(g);
}

static void test_structure(void)
{
	/* a cycle through a control edge, named op by op */
	expect("gir 1\ngraph g {\n  %a = Relu(%c) : f32[1]\n"
	       "  %b = Relu(%a) : f32[1]\n  %c = Identity(%x, ^%b) : f32[1]\n"
	       "  %x = Placeholder() : f32[1]\n}\n",
	       "t.gir:3:3: error: the graph has a cycle (data and control "
	       "edges): %a <- %c <- %b <- %a");
	/* an input whose producer's type is unknown */
	expect("gir 1\ngraph g {\n  %a = Custom()\n  %b = Relu(%a) : f32[1]\n}\n",
	       "t.gir:4:3: error: input 0 of %b: the type of %a is unknown; "
	       "give it with ': type'");

	/* broken by a pass: a removed producer, an output index, an id */
	Graph *g = load(base);
	Op *x = graph_lookup(g, "x", NULL), *m = graph_lookup(g, "m", NULL);
	x->dead = true;
	expect_graph(g, "t.gir:5:3: error: input 0 of %m refers to a removed op");
	x->dead = false;
	m->in[1].idx = 3;
	expect_graph(g, "t.gir:5:3: error: input 1 of %m: %w has 1 output, "
		     "no output 3");
	m->in[1].idx = 0;
	m->id = 7;
	expect_graph(g, "t.gir:5:3: error: op %m has id 7 at position 2");
	m->id = 2;
	/* the graph's batch, as a pass might set it (the parser checks the
	 * input's) */
	graph_set_attr(g, "batch", val_float(g->arena, 4.5));
	expect_graph(g, "graph attribute 'batch' must be a positive integer");
	graph_free(g);
}

static void test_names(void)
{
	Graph *g = load(base);
	Op *x = graph_lookup(g, "x", NULL), *w = graph_lookup(g, "w", NULL);
	Op *l = graph_lookup(g, "l", NULL);
	x->name = "a b";
	expect_graph(g, "t.gir:3:3: error: op name 'a b' is not a valid %name");
	x->name = "w";                      /* renamed behind the table's back */
	expect_graph(g, "t.gir:3:3: error: op name '%w' is not unique or not "
		     "registered");
	x->name = "x";
	w->type = "Not An Ident";
	expect_graph(g, "t.gir:4:3: error: op type 'Not An Ident' of %w is not "
		     "an identifier");
	w->type = graph_intern(g, "VariableV2");
	l->out_names[1] = "d y";
	expect_graph(g, "t.gir:6:3: error: output alias 'd y' of %l is not a "
		     "valid %name");
	l->out_names[1] = "elsewhere";
	expect_graph(g, "t.gir:6:3: error: output alias '%elsewhere' of %l is "
		     "not unique or not registered");
	l->out_names[1] = NULL;
	l->out_names[0] = "zero";
	expect_graph(g, "t.gir:6:3: error: output 0 of %l has an alias");
	graph_free(g);

	/* aliases are given in order */
	g = load("gir 1\ngraph g {\n  %a, %b, %c = F() : (f32[1], f32[1], "
		 "f32[1])\n}\n");
	Op *a = graph_lookup(g, "a", NULL);
	a->out_names[1] = NULL;
	expect_graph(g, "t.gir:3:3: error: output 2 of %a is named but an "
		     "earlier output is not");
	graph_free(g);
}

static void test_op_table(void)
{
	/* arity */
	expect("gir 1\ngraph g {\n  %x = Placeholder() : f32[2]\n"
	       "  %r = Relu(%x, %x) : f32[2]\n}\n",
	       "t.gir:4:3: error: Relu %r takes 1 inputs, not 2");
	expect("gir 1\ngraph g {\n  %x = Placeholder() : f32[2]\n"
	       "  %s = AddN() : f32[2]\n}\n",
	       "t.gir:4:3: error: AddN %s takes at least 1 inputs, not 0");
	/* output count */
	expect("gir 1\ngraph g {\n  %x = Placeholder() : f32[2]\n"
	       "  %r = Relu(%x) : (f32[2], f32[2])\n}\n",
	       "t.gir:4:3: error: Relu %r has 1 outputs, not 2");
	/* declared type against the shape function */
	expect("gir 1\ngraph g {\n  %x = Placeholder() : f32[2,3]\n"
	       "  %w = VariableV2() : f32[3,5]\n"
	       "  %m = MatMul(%x, %w) : f32[2,4]\n}\n",
	       "t.gir:5:3: error: MatMul %m: output 0 is declared f32[2,4] but "
	       "its inputs give f32[2,5]");
	/* inconsistent inputs */
	expect("gir 1\ngraph g {\n  %x = Placeholder() : f32[2,3]\n"
	       "  %w = VariableV2() : f32[4,5]\n"
	       "  %m = MatMul(%x, %w) : f32[2,5]\n}\n",
	       "t.gir:5:3: error: MatMul %m:");
	/* the same found by inference when the type is omitted */
	expect("gir 1\ngraph g {\n  %x = Placeholder() : f32[2,3]\n"
	       "  %w = VariableV2() : f32[4,5]\n  %m = MatMul(%x, %w)\n}\n",
	       "t.gir:5:3: error: MatMul %m:");
}

/* Each kind of annotation rejects a value of the wrong type. */
static void test_annotations(void)
{
	static const struct {
		const char *attr, *msg;
	} cases[] = {
		{"@batch_dim = 1.5", "@batch_dim of %a: expected an integer"},
		{"@output = 1", "@output of %a: expected true or false"},
		{"@flops = -3", "@flops of %a: expected a non-negative number"},
		{"@mem = 3us", "@mem of %a: expected a size in bytes"},
		{"@start = 4GB", "@start of %a: expected a time"},
		{"@origin = 3", "@origin of %a: expected a string"},
		{"@device = \"m9/gpu0\"", "@device of %a: unknown device 'm9/gpu0'"},
		{"@device = 3", "@device of %a: expected a device name string"},
		{"@replicas = []", "@replicas of %a: expected a non-empty list of "
		 "devices"},
		{"@replicas = [\"m0/gpu0\", \"m0/gpu0\"]", "@replicas of %a: device "
		 "'m0/gpu0' listed twice"},
		{"@replicas = [\"m0/gpu0\", \"m0/gpu1\", \"m0/gpu0\"]", "@replicas "
		 "of %a: device 'm0/gpu0' listed twice (only a pipeline's"},
		{"@replicas = [\"m0/gpu0\", \"m0/gpu1\", \"m0/gpu1\", \"m0/gpu0\"]",
		 "@replicas of %a: device 'm0/gpu1' listed twice"},
		{"@replicas = [\"m0/gpu0\", \"m0/gpu1\", \"m0/gpu0\", \"m0/gpu1\"]",
		 "@replicas of %a: device 'm0/gpu0' listed twice (a pipeline's list "
		 "repeats its stage's devices @micro = 2 times)"},
		{"@micro = 3, @replicas = [\"m0/gpu0\", \"m0/gpu0\"]", "@micro of %a: "
		 "expected a positive number of micro-batches dividing"},
		{"@micro = 2", "@micro of %a: expected a positive number"},
		{"@stage = [1]", "@stage of %a: expected a pair"},
		{"@shares = [2, 0]", "@shares of %a: expected a list of positive "
		 "batch shares"},
		{"@sync = tree", "@sync of %a: expected ring, hier, ps or sfb"},
		{"@replica = [1]", "@replica of %a: expected a pair of "
		 "non-negative integers"},
		{"@role = boss", "@role of %a: expected a role"},
		{"@split = halves", "@split of %a: expected a split category"},
		{"@split_dims = [0, -1]", "@split_dims of %a: expected a list of "
		 "dimension indices"},
		{"@cost = {V100 = 3GB}", "@cost of %a: expected a time for device "
		 "type 'V100'"},
		{"@cost = true", "@cost of %a: expected a time or a dict"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[256], want[256];
		snprintf(text, sizeof text, "gir 1\ngraph g {\n  %%a = F() {%s} : "
			 "f32[1]\n}\n", cases[i].attr);
		snprintf(want, sizeof want, "t.gir:3:3: error: %s", cases[i].msg);
		expect(text, want);
	}
	/* unknown @keys are kept as they are */
	Graph *g = load("gir 1\ngraph g {\n  %a = F() {@mine = [1, x]} : f32[1]\n}\n");
	char *errs;
	CU_ASSERT_EQUAL(verify(g, NULL, &errs), 0);
	free(errs);
	graph_free(g);
}

/* plan_view groups AllReduce members by key (members by id within a
 * key), plan_coll_key reads a key; the verifier accepts a consistent plan
 * (the default cluster's m0/gpu0 and m0/gpu1) and refuses a member moved
 * to its partner's device. */
static void test_plan_view(void)
{
	const char *text =
		"gir 1\n"
		"graph g {\n"
		"  %a = Placeholder() {@device = \"m0/gpu0\"} : f32[2]\n"
		"  %b = Placeholder() {@device = \"m0/gpu1\"} : f32[2]\n"
		"  %y1 = AllReduce(%b) {key = 9, devices = [\"m0/gpu0\", \"m0/gpu1\"], @device = \"m0/gpu1\"} : f32[2]\n"
		"  %x0 = AllReduce(%a) {key = 3, devices = [\"m0/gpu0\", \"m0/gpu1\"], @device = \"m0/gpu0\"} : f32[2]\n"
		"  %y0 = AllReduce(%a) {key = 9, devices = [\"m0/gpu0\", \"m0/gpu1\"], @device = \"m0/gpu0\"} : f32[2]\n"
		"  %x1 = AllReduce(%b) {key = 3, devices = [\"m0/gpu0\", \"m0/gpu1\"], @device = \"m0/gpu1\"} : f32[2]\n"
		"}\n";
	Graph *g = load(text);
	char *errs;
	CU_ASSERT_EQUAL(verify(g, text, &errs), 0);
	free(errs);
	PlanView pv;
	CU_ASSERT_EQUAL(plan_view(g, &pv, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(pv.ncoll, 2);
	CU_ASSERT_EQUAL(pv.coll[0].key, 3);
	CU_ASSERT_EQUAL(pv.coll[1].key, 9);
	CU_ASSERT_STRING_EQUAL(pv.coll[0].algo, "ring");
	uint32_t ix;
	const Op *x0 = graph_lookup(g, "x0", &ix), *x1 = graph_lookup(g, "x1", &ix);
	const Op *y1 = graph_lookup(g, "y1", &ix), *a = graph_lookup(g, "a", &ix);
	CU_ASSERT_EQUAL(pv.members[pv.coll[0].first], x0->id);
	CU_ASSERT_EQUAL(pv.members[pv.coll[0].first + 1], x1->id);
	CU_ASSERT_EQUAL(pv.members[pv.coll[1].first], y1->id);  /* y1 precedes y0 */
	CU_ASSERT_EQUAL(pv.coll_of[x1->id], 0);
	CU_ASSERT_EQUAL(pv.coll_of[a->id], UINT32_MAX);
	int64_t key;
	CU_ASSERT_TRUE(plan_coll_key(g, y1, &key));
	CU_ASSERT_EQUAL(key, 9);
	CU_ASSERT_FALSE(plan_coll_key(g, a, &key));
	CU_ASSERT_PTR_EQUAL(plan_op(g), y1);
	plan_view_free(&pv);
	/* x1 moved to m0/gpu0: two members on one device */
	op_set_ann(g, (Op *)x1, ANN_DEVICE, val_str(g->arena, "m0/gpu0"));
	expect_errors(g, NULL, "AllReduce key 3: its members must be one per "
		      "device of its 'devices' list: %x1 shares its device");
	graph_free(g);
}

void suite_verify(void)
{
	CU_pSuite s = CU_add_suite("verify", NULL, NULL);
	CU_add_test(s, "a valid graph; inferred types", test_valid);
	CU_add_test(s, "cycles, unknown types, removed ops, ids", test_structure);
	CU_add_test(s, "names, aliases, op types", test_names);
	CU_add_test(s, "arity, outputs, shapes", test_op_table);
	CU_add_test(s, "annotation types", test_annotations);
	CU_add_test(s, "plan view: collectives by key; the plan verifier",
		    test_plan_view);
}
