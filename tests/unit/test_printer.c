/* test_printer.c — canonical gir (ir/print.c, ir/value.c): print -> parse
 * -> print is byte-identical over every example, golden input and golden
 * output, every fuzzing seed, and over the corner cases of the printer:
 * keys and words that need quotes, numbers gir cannot spell, quantities
 * whose rounding moves them, aliases, huge types, values nested deeper
 * than any recursion could go. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

static char *print_graph(const Graph *g)
{
	char *t = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&t, &n);
	gir_print(f, g);
	fclose(f);
	return t;
}

static Graph *parse(const char *name, const char *text, size_t len)
{
	FILE *null = fopen("/dev/null", "w");
	Diag d;
	diag_init(&d, null, name, text, len);
	Graph *g = gir_parse(name, text, len, &d);
	fclose(null);
	return g;
}

/* text parses; its print parses and prints the same bytes.  Returns the
 * number of files checked (0 or 1). */
static int round_trip_text(const char *name, const char *text, size_t len)
{
	Graph *g = parse(name, text, len);
	if (!g) {
		fprintf(stderr, "\n%s does not parse\n", name);
		CU_FAIL("input does not parse");
		return 0;
	}
	char *a = print_graph(g);
	Graph *h = parse("printed", a, strlen(a));
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	char *b = print_graph(h);
	if (strcmp(a, b) != 0)
		fprintf(stderr, "\n%s: print -> parse -> print differs\n", name);
	CU_ASSERT_STRING_EQUAL(a, b);
	graph_free(g);
	graph_free(h);
	free(a);
	free(b);
	return 1;
}

/* Every NAME*SUFFIX in dir that is gir (it has a line 'gir 1'). */
static int round_trip_dir(const char *dir, const char *suffix)
{
	DIR *dp = opendir(dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		size_t l = strlen(e->d_name), sl = strlen(suffix);
		if (l <= sl || strcmp(e->d_name + l - sl, suffix) != 0)
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		size_t len;
		char *text = read_file(path, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		if (strncmp(text, "gir 1\n", 6) == 0 || strstr(text, "\ngir 1\n"))
			n += round_trip_text(path, text, len);
		free(text);
	}
	closedir(dp);
	return n;
}

static void test_files(void)
{
	/* the unit tests run in tests/ */
	CU_ASSERT(round_trip_dir("../examples", ".gir") >= 2);
	CU_ASSERT(round_trip_dir("../examples/models", ".gir") >= 7);
	CU_ASSERT(round_trip_dir("golden", ".gir") >= 5);
	CU_ASSERT(round_trip_dir("golden", ".expected") >= 4);
	CU_ASSERT(round_trip_dir("fuzz/corpus-gir", ".gir") >= 10);
}

/* The printed form of one op of a graph given by text. */
static void expect_print(const char *text, const char *want)
{
	Graph *g = parse("t.gir", text, strlen(text));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	char *a = print_graph(g);
	if (!strstr(a, want))
		fprintf(stderr, "\nwanted: %s\ngot: %s\n", want, a);
	CU_ASSERT_PTR_NOT_NULL(strstr(a, want));
	free(a);
	CU_ASSERT_EQUAL(round_trip_text("t.gir", text, strlen(text)), 1);
	graph_free(g);
}

static void test_quoting(void)
{
	/* keys: bare when they read back as a key, else quoted, '@' keys too */
	expect_print("gir 1\ngraph g {\n  %a = F() {\"x y\" = 1, \"@a b\" = 2, "
		     "\"1x\" = 3, \"true\" = 4, gir = 5, \"@\" = 6} : f32[1]\n}\n",
		     "%a = F() {\"x y\" = 1, \"1x\" = 3, \"true\" = 4, gir = 5, "
		     "\"@a b\" = 2, \"@\" = 6} : f32[1]");
	/* graph names, dict keys, strings with escapes */
	expect_print("gir 1\ngraph \"my graph\" {\n  %a = F() {d = {\"k k\" = "
		     "\"q\\\"\\\\\\n\\t\"}} : f32[1]\n}\n",
		     "graph \"my graph\" {\n  %a = F() {d = {\"k k\" = "
		     "\"q\\\"\\\\\\n\\t\"}} : f32[1]\n");
	/* a word a pass wrote that is not an identifier prints as a string */
	Graph *g = graph_new("g");
	Op *op = graph_add_op(g, "a", "F", 0, 0);
	op_set(g, op, "w", val_ident(g->arena, "not a word"));
	op_set(g, op, "v", val_ident(g->arena, "true"));
	char *t = print_graph(g);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "{w = \"not a word\", v = \"true\"}"));
	CU_ASSERT_EQUAL(round_trip_text("t", t, strlen(t)), 1);
	free(t);
	graph_free(g);
}

static void test_numbers(void)
{
	Graph *g = graph_new("g");
	Op *op = graph_add_op(g, "a", "F", 0, 0);
	op_set(g, op, "nan", val_float(g->arena, NAN));
	op_set(g, op, "inf", val_float(g->arena, INFINITY));
	op_set(g, op, "ninf", val_float(g->arena, -INFINITY));
	op_set(g, op, "qinf", val_qty(g->arena, INFINITY, UNIT_SECONDS));
	op_set(g, op, "third", val_float(g->arena, 1.0 / 3));
	char *t = print_graph(g);
	/* NaN and the infinities are the words nan, inf, -inf (keys and
	 * identifiers spelled so are quoted); quantities have no such
	 * spelling and print as 0 and the largest power of ten. */
	if (!strstr(t, "{\"nan\" = nan, \"inf\" = inf, ninf = -inf, qinf = "
		       "1e+308s, third = 0.3333333333333333}"))
		fprintf(stderr, "\ngot: %s\n", t);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "{\"nan\" = nan, \"inf\" = inf, ninf = "
					 "-inf, qinf = 1e+308s, third = "
					 "0.3333333333333333}"));
	CU_ASSERT_EQUAL(round_trip_text("t", t, strlen(t)), 1);
	free(t);
	graph_free(g);

	/* ... and read back as themselves; longer words stay words */
	const char *src = "gir 1\ngraph g {\n  %a = F() {v = [inf, -inf, +inf, nan], "
			  "w = infinity, x = nanx, y = \"inf\"} : f32[1]\n}\n";
	g = parse("t.gir", src, strlen(src));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	op = g->ops[0];
	Value *v = op_get(g, op, "v");
	CU_ASSERT_FATAL(v && v->kind == V_LIST && v->list.n == 4);
	CU_ASSERT(v->list.items[0]->kind == V_FLOAT && isinf(v->list.items[0]->f) &&
		  v->list.items[0]->f > 0);
	CU_ASSERT(isinf(v->list.items[1]->f) && v->list.items[1]->f < 0);
	CU_ASSERT(isinf(v->list.items[2]->f) && v->list.items[2]->f > 0);
	CU_ASSERT(v->list.items[3]->kind == V_FLOAT && isnan(v->list.items[3]->f));
	CU_ASSERT_EQUAL(op_get(g, op, "w")->kind, V_IDENT);
	CU_ASSERT_EQUAL(op_get(g, op, "x")->kind, V_IDENT);
	CU_ASSERT_EQUAL(op_get(g, op, "y")->kind, V_STR);
	t = print_graph(g);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "{v = [inf, -inf, inf, nan], w = infinity, "
					 "x = nanx, y = \"inf\"}"));
	CU_ASSERT_EQUAL(round_trip_text("t", t, strlen(t)), 1);
	free(t);
	graph_free(g);

	/* quantities: the text is a fixed point even where rounding to 15
	 * digits and scaling by the unit move the value */
	g = graph_new("g");
	op = graph_add_op(g, "a", "F", 0, 0);
	unsigned seed = 12345;
	char key[32];
	for (int i = 0; i < 2000; i++) {
		seed = seed * 1103515245u + 12345u;
		double m = (double)(seed >> 8) / (1 << 24);
		double x = m * pow(10, (int)(seed % 40) - 20);
		snprintf(key, sizeof key, "q%d", i);
		op_set(g, op, key, val_qty(g->arena, x, (Unit)(1 + i % 4)));
	}
	t = print_graph(g);
	CU_ASSERT_EQUAL(round_trip_text("t", t, strlen(t)), 1);
	free(t);
	graph_free(g);
}

static void test_structure(void)
{
	/* aliases and control inputs; an alias stands for its output */
	expect_print("gir 1\ngraph g {\n  %s = AddN(%q, %p:0, %p:1, ^%x) : "
		     "f32[2]\n  %p, %q = Split(%c, %x) {num_split = 2} : "
		     "(f32[2], f32[2])\n  %c = Const() {value = 0} : i32[]\n"
		     "  %x = Placeholder() : f32[4]\n}\n",
		     "%s = AddN(%q, %p, %q, ^%x) : f32[2]");
	/* an op with no outputs, one with types left to inference */
	expect_print("gir 1\ngraph g {\n  %n = NoOp() : ()\n  %r = Relu(%x)\n"
		     "  %x = Placeholder() : f32[4]\n}\n",
		     "  %n = NoOp() : ()\n  %r = Relu(%x)\n");
	/* a type of 60 dimensions of 19 digits */
	char text[4096] = "gir 1\ngraph g {\n  %a = F() : f32[";
	for (int i = 0; i < 60; i++)
		strcat(text, i ? ",1000000000000000000" : "1000000000000000000");
	strcat(text, "]\n}\n");
	CU_ASSERT_EQUAL(round_trip_text("t", text, strlen(text)), 1);
}

/* A list nested 200000 deep prints (iteratively) without overflowing the
 * stack; the parser would refuse it, which is why it is built here. */
static void test_deep_value(void)
{
	enum { DEPTH = 200000 };
	Arena *a = arena_new();
	Value *v = val_int(a, 7);
	for (int i = 0; i < DEPTH; i++) {
		Value *l = val_list(a, 1);
		l->list.items[0] = v;
		v = l;
	}
	StrBuf b = {0};
	val_format(&b, v);
	CU_ASSERT_EQUAL(b.n, 2 * (size_t)DEPTH + 1);
	CU_ASSERT_EQUAL(b.s[0], '[');
	CU_ASSERT_EQUAL(b.s[DEPTH], '7');
	CU_ASSERT_EQUAL(b.s[2 * DEPTH], ']');
	sb_free(&b);
	arena_free(a);
}

void suite_printer(void)
{
	CU_pSuite s = CU_add_suite("printer", NULL, NULL);
	CU_add_test(s, "round trip: examples, golden files, seeds", test_files);
	CU_add_test(s, "quoting", test_quoting);
	CU_add_test(s, "numbers and quantities", test_numbers);
	CU_add_test(s, "aliases, control inputs, types", test_structure);
	CU_add_test(s, "values nested 200000 deep", test_deep_value);
}
