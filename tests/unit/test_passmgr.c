/* test_passmgr.c — the pass manager: the pass table, pipeline strings,
 * pass options and their defaults, and pipeline_run: per-pass dumps
 * BASE.NN.PASS.gir that read back, --stop-after, --verify-each catching
 * each way test-break-ir breaks the IR and naming the pass, and the
 * reproducer. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "passes/passes.h"

static char *show(const Pipeline *p, char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	pipeline_print(f, p);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static void test_table(void)
{
	int n;
	const PassInfo *t = pass_table(&n);
	CU_ASSERT_TRUE(n >= 2);
	for (int i = 0; i < n; i++) {
		CU_ASSERT_PTR_NOT_NULL(t[i].run);
		CU_ASSERT_TRUE(strlen(t[i].desc) > 10);
		CU_ASSERT_PTR_EQUAL(pass_find(t[i].name), &t[i]);
		for (int j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(t[i].name, t[j].name);
	}
	CU_ASSERT_PTR_NULL(pass_find("nosuch"));
	/* every named pipeline parses */
	const char *lv[] = {"O0", "O1", "O2"};
	for (int i = 0; i < 3; i++) {
		Pipeline p;
		char err[256];
		CU_ASSERT_PTR_NOT_NULL_FATAL(pipeline_named(lv[i]));
		CU_ASSERT_TRUE(pipeline_parse(pipeline_named(lv[i]), &p, err, sizeof err));
		pipeline_free(&p);
	}
	CU_ASSERT_PTR_NULL(pipeline_named("O3"));
}

static void test_parse(void)
{
	Pipeline p;
	char err[256], buf[256];
	CU_ASSERT_TRUE_FATAL(pipeline_parse(" simplify , annotate ", &p, err, sizeof err));
	CU_ASSERT_EQUAL(p.n, 2);
	CU_ASSERT_STRING_EQUAL(p.steps[0].pass->name, "simplify");
	CU_ASSERT_STRING_EQUAL(show(&p, buf, sizeof buf), "simplify,annotate");
	pipeline_free(&p);

	CU_ASSERT_TRUE(pipeline_parse("", &p, err, sizeof err));
	CU_ASSERT_EQUAL(p.n, 0);
	pipeline_free(&p);

	CU_ASSERT_FALSE(pipeline_parse("simplify,,annotate", &p, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "empty pass name"));
	CU_ASSERT_FALSE(pipeline_parse("simplify,bogus", &p, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown pass 'bogus'"));
	CU_ASSERT_FALSE(pipeline_parse("simplify<range=3>", &p, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "has no option 'range'"));
	CU_ASSERT_FALSE(pipeline_parse("simplify<", &p, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "missing '>'"));
}

static void test_options(void)
{
	Pipeline p;
	char err[256], buf[256];
	/* options ride in the string and print back the same */
	CU_ASSERT_TRUE_FATAL(pipeline_parse("simplify,test-break-ir<how=cycle>",
					    &p, err, sizeof err));
	CU_ASSERT_EQUAL_FATAL(p.steps[1].nargs, 1);
	CU_ASSERT_STRING_EQUAL(p.steps[1].args[0].key, "how");
	CU_ASSERT_STRING_EQUAL(p.steps[1].args[0].val, "cycle");
	CU_ASSERT_STRING_EQUAL(show(&p, buf, sizeof buf),
			       "simplify,test-break-ir<how=cycle>");
	/* a pass sees the given value, else the declared default */
	Arena *a = arena_new();
	PassCtx ctx = {.pass = "test-break-ir", .scratch = a,
		       .args = p.steps[1].args, .nargs = 1};
	CU_ASSERT_STRING_EQUAL(pass_opt(&ctx, "how"), "cycle");
	ctx.nargs = 0;
	CU_ASSERT_STRING_EQUAL(pass_opt(&ctx, "how"), "removed-input");
	arena_free(a);
	pipeline_free(&p);
	/* an option without a value is 'true' */
	CU_ASSERT_TRUE_FATAL(pipeline_parse("comm<sfb>", &p, err, sizeof err));
	CU_ASSERT_STRING_EQUAL(p.steps[0].args[0].val, "true");
	pipeline_free(&p);
}

/* Typed options (PASS_OPT): every default fits its own kind and range,
 * and bad values are refused by pipeline_parse, naming pass and option. */
static void test_typed_options(void)
{
	int n;
	const PassInfo *t = pass_table(&n);
	int total = 0;
	for (int i = 0; i < n; i++) {
		int no;
		const PassOpt *o = pass_options(&t[i], &no);
		for (int k = 0; k < no; k++) {
			char err[512];
			CU_ASSERT_STRING_EQUAL(o[k].pass, t[i].name);
			CU_ASSERT_TRUE(pass_opt_check(&o[k], o[k].dflt, err, sizeof err));
			CU_ASSERT_PTR_EQUAL(pass_opt_find(&t[i], o[k].name), &o[k]);
			CU_ASSERT_TRUE(strlen(o[k].help) > 5);
			total++;
		}
	}
	CU_ASSERT_TRUE(total >= 9);
	static const struct {
		const char *pipe, *msg;
	} bad[] = {
		{"split<mode=bogus>", "split<mode=bogus>: expected one of first|budget"},
		{"split<max_parts=-1>", "split<max_parts=-1>: expected an integer in [2,8]"},
		{"split<max_parts=0>", "max_parts=0"},
		{"split<max_parts=9>", "max_parts=9"},
		{"split<max_parts=2.5>", "max_parts=2.5"},
		{"split<max_parts= 3x>", "max_parts=3x"},
		{"comm<sfb=yes>", "comm<sfb=yes>: expected true or false"},
		{"comm<sfb=1>", "comm<sfb=1>"},
		{"place<evals=xyz>", "place<evals=xyz>: expected an integer in [1,1000000000], or auto"},
		{"place<evals=0>", "evals=0"},
		{"place<search=nope>", "place<search=nope>: expected one of none|local"},
		{"place<algo=bogus>", "place<algo=bogus>: expected one of hybrid dp"},
		{"place<portfolio=nan>", "portfolio=nan"},
		{"place<portfolio=-1>", "portfolio=-1"},
		{"fuse<mem=0>", "fuse<mem=0>: expected a size (bytes, or 25MB, 4MiB) in (0,inf)"},
		{"fuse<mem=inf>", "mem=inf"},
		{"fuse<mem=2GHz>", "fuse<mem=2GHz>: expected a size (bytes, or 25MB, 4MiB) in (0,inf)"},
		{"fuse<mem=MiB>", "mem=MiB"},
		{"fuse<range=>", "fuse<range=>"},
		{"simplify,annotate,test-break-ir<how=maybe>", "how=maybe"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		Pipeline p;
		char err[512] = "";
		CU_ASSERT_FALSE(pipeline_parse(bad[i].pipe, &p, err, sizeof err));
		if (!strstr(err, bad[i].msg))
			printf("\n%s: got '%s'\n", bad[i].pipe, err);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].msg));
	}
	static const char *good[] = {
		"split<mode=budget,max_parts=2>", "split<max_parts=8>",
		"comm<sfb>", "comm<sfb=false>", "place<evals=1,portfolio=0>",
		"place<algo=metis,search=local>", "fuse<range=1,mem=1e9>",
		"fuse<mem=2GiB>", "fuse<mem=512 MB>",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		Pipeline p;
		char err[512] = "";
		CU_ASSERT_TRUE(pipeline_parse(good[i], &p, err, sizeof err));
		pipeline_free(&p);
	}
	/* typed lookups: given values and defaults */
	Pipeline p;
	char err[256];
	CU_ASSERT_TRUE_FATAL(pipeline_parse("split<max_parts=3>,comm<sfb>", &p,
					    err, sizeof err));
	PassCtx ctx = {.pass = "split", .args = p.steps[0].args, .nargs = 1};
	CU_ASSERT_EQUAL(pass_opt_int(&ctx, "max_parts"), 3);
	CU_ASSERT_STRING_EQUAL(pass_opt(&ctx, "mode"), "first");
	ctx = (PassCtx){.pass = "comm", .args = p.steps[1].args, .nargs = 1};
	CU_ASSERT_TRUE(pass_opt_bool(&ctx, "sfb"));
	ctx.nargs = 0;
	CU_ASSERT_FALSE(pass_opt_bool(&ctx, "sfb"));
	ctx = (PassCtx){.pass = "fuse"};
	CU_ASSERT_DOUBLE_EQUAL(pass_opt_num(&ctx, "mem"), 0.25, 1e-12);
	pipeline_free(&p);
	CU_ASSERT_TRUE_FATAL(pipeline_parse("fuse<mem=2GiB>", &p, err, sizeof err));
	ctx = (PassCtx){.pass = "fuse", .args = p.steps[0].args, .nargs = 1};
	CU_ASSERT_DOUBLE_EQUAL(pass_opt_num(&ctx, "mem"), 2147483648.0, 1e-3);
	ctx.nargs = 0;
	CU_ASSERT_EQUAL(pass_opt_int(&ctx, "range"), 200);
	pipeline_free(&p);
}

static const char mlp[] =
	"gir 1\n"
	"graph mlp {batch = 4} {\n"
	"  %x = Placeholder() : f32[4,8]\n"
	"  %w = VariableV2() : f32[8,2]\n"
	"  %i = Identity(%x) : f32[4,8]\n"
	"  %m = MatMul(%i, %w) : f32[4,2]\n"
	"  %y = Placeholder() : i64[4]\n"
	"  %l, %dy = SoftmaxCrossEntropyWithLogits(%m, %y) : (f32[4], f32[4,2])\n"
	"  %dw = MatMul(%i, %dy) {transpose_a = true} : f32[8,2]\n"
	"  %u = ApplyGradientDescent(%w, %dw) : ()\n"
	"  %dead = Relu(%x) : f32[4,8]\n"
	"}\n";

typedef struct Run {
	Graph *g;
	int rc;
	char *log;                          /* what pipeline_run printed */
} Run;

/* Parses mlp and runs pipeline on it with o; dumps go to dir. */
static Run run(const char *pipeline, RunOptions o, const char *dir)
{
	Run r = {0};
	size_t n = 0;
	FILE *f = open_memstream(&r.log, &n);
	Diag d;
	diag_init(&d, f, "mlp.gir", mlp, strlen(mlp));
	r.g = gir_parse("mlp.gir", mlp, strlen(mlp), &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r.g);
	r.g->cluster = cluster_default(r.g->arena);
	CU_ASSERT_EQUAL(graph_infer_types(r.g, &d) + graph_verify(r.g, &d), 0);
	Pipeline p;
	char err[256];
	CU_ASSERT_TRUE_FATAL(pipeline_parse(pipeline, &p, err, sizeof err));
	CostModel cm = {r.g, r.g->cluster, NULL, NULL, 0};
	o.dump_dir = dir;
	o.dump_base = "mlp";
	o.repro_src = mlp;
	o.repro_len = strlen(mlp);
	o.repro_cmd = "pcc test";
	r.rc = pipeline_run(&p, r.g, &cm, &d, &o);
	pipeline_free(&p);
	fclose(f);
	return r;
}

static void run_free(Run *r)
{
	graph_free(r->g);
	free(r->log);
}

/* The names in dir, sorted, joined by spaces; then dir is emptied. */
static char *take_dir(const char *dir, char *buf, size_t n)
{
	struct dirent **list;
	int k = scandir(dir, &list, NULL, alphasort);
	buf[0] = 0;
	for (int i = 0; i < k; i++) {
		if (list[i]->d_name[0] != '.') {
			if (buf[0])
				strncat(buf, " ", n - strlen(buf) - 1);
			strncat(buf, list[i]->d_name, n - strlen(buf) - 1);
			char path[512];
			snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name);
			unlink(path);
		}
		free(list[i]);
	}
	free(list);
	return buf;
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return read_file(path, len);
}

static void test_dumps(void)
{
	char dir[] = "/tmp/pcc-passmgr.XXXXXX", names[512];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));

	/* --dump-after-all: 00 after parsing, then one per pass, in order */
	Run r = run("simplify,annotate", (RunOptions){.dump_all = true}, dir);
	CU_ASSERT_EQUAL(r.rc, EXIT_OK);
	/* each dump reads back; the last one is the final graph */
	const char *want[] = {"mlp.00.parse.gir", "mlp.01.simplify.gir",
			      "mlp.02.annotate.gir"};
	for (int i = 0; i < 3; i++) {
		size_t len;
		char *text = slurp(dir, want[i], &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		FILE *null = fopen("/dev/null", "w");
		Diag d;
		diag_init(&d, null, want[i], text, len);
		Graph *g = gir_parse(want[i], text, len, &d);
		fclose(null);
		CU_ASSERT_PTR_NOT_NULL(g);
		/* simplify bypassed %i and dropped %dead */
		CU_ASSERT_EQUAL(g ? g->nops : 0, i == 0 ? 9 : 7);
		if (g && i == 2) {
			char *out = NULL;
			size_t on = 0;
			FILE *f = open_memstream(&out, &on);
			gir_print(f, r.g);
			fclose(f);
			CU_ASSERT_STRING_EQUAL(out, text);
			free(out);
		}
		graph_free(g);
		free(text);
	}
	CU_ASSERT_STRING_EQUAL(take_dir(dir, names, sizeof names),
			       "mlp.00.parse.gir mlp.01.simplify.gir "
			       "mlp.02.annotate.gir");
	run_free(&r);

	/* --dump-after=annotate,parse: NN is the position in the pipeline */
	r = run("simplify,annotate", (RunOptions){.dump_after = "annotate,parse"},
		dir);
	CU_ASSERT_STRING_EQUAL(take_dir(dir, names, sizeof names),
			       "mlp.00.parse.gir mlp.02.annotate.gir");
	run_free(&r);

	/* --stop-after: annotate never runs */
	r = run("simplify,annotate", (RunOptions){.dump_all = true,
						  .stop_after = "simplify"}, dir);
	CU_ASSERT_EQUAL(r.rc, EXIT_OK);
	CU_ASSERT_STRING_EQUAL(take_dir(dir, names, sizeof names),
			       "mlp.00.parse.gir mlp.01.simplify.gir");
	CU_ASSERT_PTR_NULL(op_ann(r.g, graph_lookup(r.g, "m", NULL), ANN_ROLE));
	run_free(&r);

	/* a dump directory that does not exist yet is created */
	char sub[600];
	snprintf(sub, sizeof sub, "%s/d", dir);
	r = run("simplify", (RunOptions){.dump_after = "simplify"}, sub);
	CU_ASSERT_EQUAL(r.rc, EXIT_OK);
	CU_ASSERT_STRING_EQUAL(take_dir(sub, names, sizeof names),
			       "mlp.01.simplify.gir");
	rmdir(sub);
	run_free(&r);
	rmdir(dir);
}

static void test_verify_each(void)
{
	char dir[] = "/tmp/pcc-passmgr.XXXXXX", names[512];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	static const struct {
		const char *how, *msg;
	} cases[] = {
		{"removed-input", "refers to a removed op"},
		{"cycle", "the graph has a cycle"},
		{"bad-index", "no output"},
		{"bad-annotation", "@device of %m: expected a device name"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char pipe[128];
		snprintf(pipe, sizeof pipe, "simplify,test-break-ir<how=%s>,annotate",
			 cases[i].how);
		Run r = run(pipe, (RunOptions){.verify_each = true}, dir);
		CU_ASSERT_EQUAL(r.rc, EXIT_INTERNAL);
		if (!strstr(r.log, cases[i].msg))
			fprintf(stderr, "\n%s: %s\n", cases[i].how, r.log);
		CU_ASSERT_PTR_NOT_NULL(strstr(r.log, cases[i].msg));
		CU_ASSERT_PTR_NOT_NULL(strstr(r.log, "pcc: internal error: invalid "
						  "IR after pass 'test-break-ir'"));
		/* annotate did not run on the broken graph */
		CU_ASSERT_PTR_NULL(op_ann(r.g, r.g->ops[0], ANN_ROLE));
		/* the reproducer: the input and how it was run */
		size_t len;
		char *rep = slurp(dir, "mlp.repro.gir", &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
		CU_ASSERT_EQUAL(strncmp(rep, "# pcc reproducer", 16), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(rep, "\n# RUN: pcc test\n"));
		CU_ASSERT_PTR_NOT_NULL(strstr(rep, mlp));
		free(rep);
		CU_ASSERT_STRING_EQUAL(take_dir(dir, names, sizeof names),
				       "mlp.repro.gir");
		run_free(&r);
	}
	/* without --verify-each the same breakage goes unnoticed here */
	Run r = run("test-break-ir<how=bad-annotation>", (RunOptions){0}, dir);
	CU_ASSERT_EQUAL(r.rc, EXIT_OK);
	run_free(&r);
	rmdir(dir);
}

void suite_passmgr(void)
{
	CU_pSuite s = CU_add_suite("passmgr", NULL, NULL);
	CU_add_test(s, "pass table", test_table);
	CU_add_test(s, "pipeline strings", test_parse);
	CU_add_test(s, "pass options and defaults", test_options);
	CU_add_test(s, "typed pass options", test_typed_options);
	CU_add_test(s, "dumps, --dump-after, --stop-after", test_dumps);
	CU_add_test(s, "--verify-each and the reproducer", test_verify_each);
}
