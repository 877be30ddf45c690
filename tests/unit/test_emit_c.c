/* test_emit_c.c — the C emitter (backend/c.c) on small plans written
 * here: what it refuses (unsupported ops, unplaced ops, strategies,
 * deadlocking orders, cycles through a parameter's update), the
 * communication it writes (implicit channels, relays, events for control
 * edges, collectives), the results it prints, and where --runtime-flags
 * looks for the runtime. */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend.h"
#include "frontend/frontend.h"

#define CLUSTER \
	"gir 1\ncluster \"two\" {\n" \
	"  type \"GPU\" {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n" \
	"  machine m0 {type = \"GPU\", count = 3, bandwidth = 1GB/s, latency = 0s}\n" \
	"}\n"

typedef struct Out {
	bool ok;
	char *code;              /* what the emitter wrote */
	char *err;               /* what it reported */
} Out;

static char *slurp(FILE *f)
{
	fflush(f);
	long n = ftell(f);
	char *s = malloc((size_t)n + 1);
	rewind(f);
	size_t got = fread(s, 1, (size_t)n, f);
	s[got] = 0;
	return s;
}

/* Parses text, emits C with the given --emit-opt strings; stderr is
 * captured into out.err. */
static Out emit(const char *text, int nopt, const char *const *opt)
{
	Out o = {0};
	Diag d;
	diag_init(&d, stderr, "t.gir", text, strlen(text));
	Graph *g = gir_parse("t.gir", text, strlen(text), &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(graph_infer_types(g, &d), 0);
	/* a plan the verifier refuses (plan_verify: collectives, @order)
	 * never reaches the backend: its messages are the run's */
	{
		char *vbuf = NULL;
		size_t vlen = 0;
		FILE *vf = open_memstream(&vbuf, &vlen);
		Diag vd;
		diag_init(&vd, vf, "t.gir", text, strlen(text));
		int bad = graph_verify(g, &vd);
		fclose(vf);
		if (bad) {
			o.ok = false;
			o.code = xstrdup("");
			o.err = vbuf;
			graph_free(g);
			return o;
		}
		free(vbuf);
	}
	Arena *a = arena_new();
	int n;
	char msg[256];
	const char **opts = backend_resolve_opts(backend_find("c"), opt, nopt, a,
						 &n, msg, sizeof msg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(opts);
	CostModel cost = {g, g->cluster, NULL, NULL, 0};
	EmitCtx ctx = {g, &cost, NULL, opts, n, "-", NULL};
	FILE *code = tmpfile(), *err = tmpfile();
	fflush(stderr);
	int saved = dup(2);
	dup2(fileno(err), 2);
	o.ok = emit_c_backend(code, &ctx);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	o.code = slurp(code);
	o.err = slurp(err);
	fclose(code);
	fclose(err);
	arena_free(a);
	graph_free(g);
	return o;
}

static void done(Out *o)
{
	free(o->code);
	free(o->err);
}

static bool has(const char *s, const char *sub)
{
	if (!strstr(s, sub))
		fprintf(stderr, "\n  missing: %s", sub);
	return strstr(s, sub) != NULL;
}

/* tmpl with $1 and $2 replaced by a and b. */
static void subst(char *out, size_t n, const char *tmpl, const char *a,
		  const char *b)
{
	size_t k = 0;
	for (const char *p = tmpl; *p && k + 1 < n; p++) {
		const char *r = p[0] == '$' && p[1] == '1' ? a
				: p[0] == '$' && p[1] == '2' ? b : NULL;
		if (!r) {
			out[k++] = *p;
			continue;
		}
		for (; *r && k + 1 < n; r++)
			out[k++] = *r;
		p++;
	}
	out[k] = 0;
}

static void test_refusals(void)
{
	Out o = emit(CLUSTER "graph g {\n"
		     "  %x = Placeholder() {@device = \"m0/gpu0\"} : f32[4]\n"
		     "  %y = Softplus(%x) {@device = \"m0/gpu0\"} : f32[4]\n}\n", 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT_EQUAL(o.code[0], 0);
	CU_ASSERT(has(o.err, "t.gir:8:3: error: --emit=c: op %y (Softplus): the C "
		      "runtime has no kernel for op type 'Softplus' (1 op of this type;"));
	done(&o);
	/* One message per op type, at its first op in the source, counting
	 * the rest: three Softplus and one Softsign give two errors. */
	o = emit(CLUSTER "graph g {\n"
		 "  %x = Placeholder() {@device = \"m0/gpu0\"} : f32[4]\n"
		 "  %s = Softsign(%x) {@device = \"m0/gpu0\"} : f32[4]\n"
		 "  %a = Softplus(%x) {@device = \"m0/gpu0\"} : f32[4]\n"
		 "  %b = Softplus(%a) {@device = \"m0/gpu1\"} : f32[4]\n"
		 "  %c = Softplus(%b) {@device = \"m0/gpu0\"} : f32[4]\n}\n", 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT(has(o.err, "t.gir:8:3: error: --emit=c: op %s (Softsign): the C "
		      "runtime has no kernel for op type 'Softsign' (1 op of this type;"));
	CU_ASSERT(has(o.err, "t.gir:9:3: error: --emit=c: op %a (Softplus): the C "
		      "runtime has no kernel for op type 'Softplus' (3 ops of this type;"));
	CU_ASSERT_PTR_NULL(strstr(o.err, "op %b (Softplus)"));
	CU_ASSERT_PTR_NULL(strstr(o.err, "op %c (Softplus)"));
	CU_ASSERT(strstr(o.err, "Softsign") < strstr(o.err, "op %a (Softplus)"));
	done(&o);
	o = emit(CLUSTER "graph g {\n"
		 "  %x = Placeholder() : f32[4]\n}\n", 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT(has(o.err, "op %x (Placeholder): has no @device"));
	done(&o);
	o = emit(CLUSTER "graph g {\n"
		 "  %x = Placeholder() {@replicas = [\"m0/gpu0\", \"m0/gpu1\"]} : f32[4]\n}\n",
		 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT(has(o.err, "has @replicas: a strategy, not a plan"));
	done(&o);
	o = emit(CLUSTER "graph g {\n"
		 "  %x = Placeholder() {@device = \"m0/gpu0\"} : f16[4]\n}\n", 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT(has(o.err, "output 0 is f16"));
	done(&o);
	/* A learning rate that is not a number never reaches the backend. */
	const char *bad[] = {"lr=fast"};
	Arena *a = arena_new();
	int n;
	char msg[256];
	CU_ASSERT_PTR_NULL(backend_resolve_opts(backend_find("c"), bad, 1, a, &n,
						msg, sizeof msg));
	CU_ASSERT(has(msg, "expected a number, not 'fast'"));
	arena_free(a);
	/* An update of something that is not a parameter. */
	o = emit(CLUSTER "graph g {\n"
		 "  %x = Placeholder() {@device = \"m0/gpu0\"} : f32[4]\n"
		 "  %u = ApplyGradientDescent(%x, %x) {@device = \"m0/gpu0\"} : ()\n}\n",
		 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT(has(o.err, "updates %x, which is not a parameter on its device"));
	done(&o);
}

/* A value used on another device without a Transfer gets a channel of
 * its own; a Transfer of a Transfer is relayed by the sender's thread;
 * control edges between devices become events. */
static void test_communication(void)
{
	Out o = emit(CLUSTER "graph g {\n"
		     "  %x = Const() {value = [1, -2], @device = \"m0/gpu0\"} : f32[2]\n"
		     "  %r = Relu(%x) {@device = \"m0/gpu1\"} : f32[2]\n"
		     "  %t1 = Transfer(%r) {@device = \"m0/gpu2\"} : f32[2]\n"
		     "  %t2 = Transfer(%t1) {@device = \"m0/gpu0\"} : f32[2]\n"
		     "  %n = Neg(%t2, ^%r) {@device = \"m0/gpu0\", @output = true} : f32[2]\n"
		     "}\n", 0, NULL);
	CU_ASSERT_TRUE_FATAL(o.ok);
	/* Buffers: x 0, r 1, t1 2, t2 3, n 4, then the implicit copy of x
	 * on m0/gpu1, 5.  Channels in topological order: that copy 0, t1 1,
	 * t2 2 (sent by m0/gpu1's thread, which fills t1). */
	CU_ASSERT(has(o.code, "{\"x/to/m0/gpu1\", 1, PCC_F32, 1, {2}"));
	CU_ASSERT(has(o.code, "static const pcc_chan_info chans[] = {\n"
		      "\t{0, 5},\n\t{1, 2},\n\t{1, 3},\n};"));
	/* Device 0 sends x at its start; device 1 receives it before Relu,
	 * sends r, relays t1 to t2, records the event for ^%r. */
	CU_ASSERT(has(o.code, "{\n\tpcc_send(d, C(0), B(0));"));
	CU_ASSERT(has(o.code, "\tpcc_recv(d, C(0));\n\tpcc_launch(d, PCC_K_Relu"));
	CU_ASSERT(has(o.code, "pcc_send(d, C(1), B(1));\t/* t1 */\n"
		      "\tpcc_send(d, C(2), B(2));\t/* t2 */\n"
		      "\tpcc_event_record(d, EV(0));"));
	CU_ASSERT(has(o.code, "\tpcc_recv(d, C(2));\n\tpcc_event_wait(d, EV(0));\n"
		      "\tpcc_launch(d, PCC_K_Neg"));
	CU_ASSERT(has(o.code, "{\"n\", 0, PCC_RES_COPIES, 0, 1, res0, NULL}"));
	CU_ASSERT(has(o.code, "static const double cv0[] = {1, -2};"));
	done(&o);
}

#define RING(k, dev, in) \
	"  %" #k "/ar" #dev " = AllReduce(%" in ") {key = " #k ", algo = ring, " \
	"devices = [\"m0/gpu0\", \"m0/gpu1\"], @device = \"m0/gpu" #dev "\""

/* Two collectives whose @order differs between the two devices would
 * wait for each other forever; in one order on both they are fine. */
static void test_collective_order(void)
{
	const char *g1 =
		CLUSTER "graph g {\n"
		"  %a = Placeholder() {@device = \"m0/gpu0\"} : f32[2]\n"
		"  %b = Placeholder() {@device = \"m0/gpu1\"} : f32[2]\n"
		RING(1, 0, "a") ", @order = 0} : f32[2]\n"
		RING(2, 0, "a") ", @order = 1} : f32[2]\n"
		RING(1, 1, "b") ", @order = $1} : f32[2]\n"
		RING(2, 1, "b") ", @order = $2} : f32[2]\n"
		"}\n";
	char text[2048];
	subst(text, sizeof text, g1, "1", "0");
	Out o = emit(text, 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT(has(o.err, "@order deadlocks"));
	done(&o);
	subst(text, sizeof text, g1, "0", "1");
	o = emit(text, 0, NULL);
	CU_ASSERT_TRUE(o.ok);
	CU_ASSERT(has(o.code, "static const int coll0[] = {0, 1};"));
	CU_ASSERT(has(o.code, "{1, \"ring\", 2, coll0},"));
	CU_ASSERT(has(o.code, "pcc_allreduce(d, R(0), B(0), B(2));"));
	done(&o);
	/* A member missing from its devices list. */
	o = emit(CLUSTER "graph g {\n"
		 "  %a = Placeholder() {@device = \"m0/gpu0\"} : f32[2]\n"
		 RING(1, 0, "a") "} : f32[2]\n}\n", 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT(has(o.err, "AllReduce key 1: its members must be one per device"));
	done(&o);
}

/* The update writes w in place: every reader of w runs before it, and an
 * @order that updates first is refused. */
static void test_update_order(void)
{
	const char *text =
		CLUSTER "graph g {\n"
		"  %w = VariableV2() {@device = \"m0/gpu0\"} : f32[2]\n"
		"  %g = Placeholder() {@device = \"m0/gpu0\"} : f32[2]\n"
		"  %u = ApplyGradientDescent(%w, %g) {@device = \"m0/gpu0\"$1} : ()\n"
		"  %r = Neg(%w) {@device = \"m0/gpu0\", @output = true$2} : f32[2]\n"
		"}\n";
	char buf[1024];
	subst(buf, sizeof buf, text, "", "");
	Out o = emit(buf, 0, NULL);
	CU_ASSERT_TRUE_FATAL(o.ok);
	const char *neg = strstr(o.code, "PCC_K_Neg"), *upd = strstr(o.code,
		"PCC_K_ApplyGradientDescent, ");
	CU_ASSERT(neg && upd && neg < upd);
	/* gir's short form: the learning rate is a hidden constant */
	CU_ASSERT(has(o.code, "{\"u/lr\", 0, PCC_F32, 0, {0}, {PCC_INIT_CONST, \"u/lr\""));
	CU_ASSERT(has(o.code, "static const double cv3[] = {0.01};"));
	CU_ASSERT(has(o.code, "{\"w\", 1, PCC_RES_COPIES, 0, 1, res1, NULL}"));
	done(&o);
	subst(buf, sizeof buf, text, ", @order = 0", ", @order = 1");
	o = emit(buf, 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	/* the verifier's word, as the simulator's (the sources come last on
	 * an ordered device: %w waits for %u that reads it) */
	CU_ASSERT(has(o.err, "@order deadlocks the plan"));
	done(&o);
}

/* Replicas of an output are concatenated along their @shard dimension;
 * a replicated Placeholder gets its rows of the whole input; integer
 * labels get the class count of the cross-entropy that reads them. */
static void test_replicas(void)
{
	Out o = emit(CLUSTER "graph g {batch = 5} {\n"
		     "  %x/rep0 = Placeholder() {@batch_dim = 0, @origin = \"x\", @replica = [0, 2], @shard = [0, 3], @device = \"m0/gpu0\"} : f32[3,4]\n"
		     "  %x/rep1 = Placeholder() {@batch_dim = 0, @origin = \"x\", @replica = [1, 2], @shard = [3, 2], @device = \"m0/gpu1\"} : f32[2,4]\n"
		     "  %l/rep0 = Placeholder() {@batch_dim = 0, @origin = \"l\", @replica = [0, 2], @shard = [0, 3], @device = \"m0/gpu0\"} : i32[3]\n"
		     "  %l/rep1 = Placeholder() {@batch_dim = 0, @origin = \"l\", @replica = [1, 2], @shard = [3, 2], @device = \"m0/gpu1\"} : i32[2]\n"
		     "  %e/rep0, %d0 = SparseSoftmaxCrossEntropyWithLogits(%x/rep0, %l/rep0) {@origin = \"e\", @output = true, @replica = [0, 2], @shard = [0, 3], @device = \"m0/gpu0\"} : (f32[3], f32[3,4])\n"
		     "  %e/rep1, %d1 = SparseSoftmaxCrossEntropyWithLogits(%x/rep1, %l/rep1) {@origin = \"e\", @output = true, @replica = [1, 2], @shard = [3, 2], @device = \"m0/gpu1\"} : (f32[2], f32[2,4])\n"
		     "}\n", 0, NULL);
	CU_ASSERT_TRUE_FATAL(o.ok);
	CU_ASSERT(has(o.code, "{\"x/rep1\", 1, PCC_F32, 2, {2, 4}, {PCC_INIT_INPUT, \"x\", 0, 3, 5, 0, NULL, 0}}"));
	CU_ASSERT(has(o.code, "{\"l/rep1\", 1, PCC_I32, 1, {2}, {PCC_INIT_LABELS, \"l\", 0, 3, 5, 4, NULL, 0}}"));
	CU_ASSERT(has(o.code, "static const int64_t res0_begin[] = {0, 3};"));
	CU_ASSERT(has(o.code, "{\"e\", 0, PCC_RES_CONCAT, 0, 2, res0, res0_begin},"));
	CU_ASSERT(has(o.code, "{\"e:1\", 0, PCC_RES_CONCAT, 0, 2, res1, res1_begin},"));
	done(&o);
}

/* --runtime-flags: the build directory, the tree's root, an installation. */
static void touch(const char *dir, const char *file)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	for (char *s = strchr(p + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(p, 0700);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fclose(f);
}

static void test_runtime_flags(void)
{
	char dir[] = "/tmp/pcc-flags-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	char *real = realpath(dir, NULL), exe[4200], want[8192], got[8192], msg[512];
	FILE *f = fmemopen(got, sizeof got, "w");
	/* Nothing there yet. */
	snprintf(exe, sizeof exe, "%s/inst/bin/pcc", real);
	touch(real, "inst/bin/pcc");
	CU_ASSERT_FALSE(c_runtime_flags(f, exe, "", msg, sizeof msg));
	CU_ASSERT(has(msg, "cannot find the C runtime"));
	/* Installed: PREFIX/include/pcc, PREFIX/lib. */
	touch(real, "inst/include/pcc/pcc_rt.h");
	touch(real, "inst/lib/libpcc_rt.a");
	CU_ASSERT_TRUE(c_runtime_flags(f, exe, "-fsanitize=thread", msg, sizeof msg));
	fputc(0, f);
	fflush(f);
	snprintf(want, sizeof want, "-I%s/inst/include/pcc %s/inst/lib/libpcc_rt.a "
		 "-lpthread -lm -fsanitize=thread\n", real, real);
	CU_ASSERT_STRING_EQUAL(got, want);
	/* The build tree: SRC/build/pcc and its copy SRC/pcc. */
	touch(real, "src/backend/runtime/pcc_rt.h");
	touch(real, "src/build/libpcc_rt.a");
	const char *exes[] = {"src/build/pcc", "src/pcc"};
	for (int i = 0; i < 2; i++) {
		touch(real, exes[i]);
		snprintf(exe, sizeof exe, "%s/%s", real, exes[i]);
		rewind(f);
		CU_ASSERT_TRUE(c_runtime_flags(f, exe, "", msg, sizeof msg));
		fputc(0, f);
		fflush(f);
		snprintf(want, sizeof want, "-I%s/src/backend/runtime "
			 "%s/src/build/libpcc_rt.a -lpthread -lm\n", real, real);
		CU_ASSERT_STRING_EQUAL(got, want);
	}
	fclose(f);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", real);
	CU_ASSERT_EQUAL(system(cmd), 0);
	free(real);
}

/* The new kernels' attributes: FusedBatchNorm's epsilon, factor and
 * mode (TensorFlow's defaults when absent), Slice's begin (size -1 to
 * the end), GatherV2's axis; index placeholders seeded below the size
 * they index; GatherV2 with batch_dims refused. */
static void test_kernel_attrs(void)
{
	Out o = emit(CLUSTER "graph g {\n"
		     "  %x = Placeholder() {@device = \"m0/gpu0\"} : f32[2,3,3,4]\n"
		     "  %s = Const() {value = 1, @device = \"m0/gpu0\"} : f32[4]\n"
		     "  %s3 = Const() {value = 1, @device = \"m0/gpu0\"} : f32[3]\n"
		     "  %e = Const() {value = [], @device = \"m0/gpu0\"} : f32[0]\n"
		     "  %bn = FusedBatchNormV3(%x, %s3, %s3, %e, %e) {epsilon = 0.001, "
		     "data_format = \"NCHW\", @device = \"m0/gpu0\"} : "
		     "(f32[2,3,3,4], f32[3], f32[3], f32[3], f32[3], f32[0])\n"
		     "  %in = FusedBatchNormV3(%x, %s, %s, %s, %s) {is_training = false, "
		     "exponential_avg_factor = 0.5, @device = \"m0/gpu0\"} : "
		     "(f32[2,3,3,4], f32[4], f32[4], f32[4], f32[4], f32[0])\n"
		     "  %b = Const() {value = [1, 0, 1, 2], @device = \"m0/gpu0\"} : i32[4]\n"
		     "  %z = Const() {value = [-1, 2, -1, 1], @device = \"m0/gpu0\"} : i32[4]\n"
		     "  %sl = Slice(%x, %b, %z) {@device = \"m0/gpu0\"} : f32[1,2,2,1]\n"
		     "  %ix = Placeholder() {@device = \"m0/gpu0\"} : i64[5]\n"
		     "  %ax = Const() {value = 1, @device = \"m0/gpu0\"} : i32[]\n"
		     "  %ga = GatherV2(%x, %ix, %ax) {@device = \"m0/gpu0\"} : f32[2,5,3,4]\n"
		     "}\n", 0, NULL);
	CU_ASSERT(o.ok);
	CU_ASSERT(has(o.code, "{.op = \"bn\", .nchw = 1, .epsilon = 0.001, "
		      ".avg_factor = 1},"));
	CU_ASSERT(has(o.code, "{.op = \"in\", .epsilon = 0.0001, .avg_factor = 0.5, "
		      ".inference = 1},"));
	CU_ASSERT(has(o.code, "{.op = \"sl\", .begin = {1, 0, 1, 2, 0, 0, 0, 0}},"));
	CU_ASSERT(has(o.code, "{.op = \"ga\", .axis = 1},"));
	CU_ASSERT(has(o.code, "{PCC_INIT_LABELS, \"ix\", -1, 0, 0, 3, NULL, 0}"));
	CU_ASSERT(has(o.code, "pcc_launch(d, PCC_K_Slice, &attrs[2], 1, "));
	done(&o);
	o = emit(CLUSTER "graph g {\n"
		 "  %x = Placeholder() {@device = \"m0/gpu0\"} : f32[3,4]\n"
		 "  %ix = Placeholder() {@device = \"m0/gpu0\"} : i32[3,2]\n"
		 "  %ax = Const() {value = 1, @device = \"m0/gpu0\"} : i32[]\n"
		 "  %ga = GatherV2(%x, %ix, %ax) {batch_dims = 1, @device = \"m0/gpu0\"} : f32[3,2]\n"
		 "}\n", 0, NULL);
	CU_ASSERT_FALSE(o.ok);
	CU_ASSERT(has(o.err, "op %ga (GatherV2): batch_dims 1: the C runtime gathers "
		      "with batch_dims 0 only"));
	done(&o);
}

void suite_emit_c(void)
{
	CU_pSuite s = CU_add_suite("emit_c", NULL, NULL);
	CU_add_test(s, "refusals name the op", test_refusals);
	CU_add_test(s, "the new kernels' attributes and refusals", test_kernel_attrs);
	CU_add_test(s, "channels, relays, events", test_communication);
	CU_add_test(s, "collectives in one order", test_collective_order);
	CU_add_test(s, "readers of a parameter before its update", test_update_order);
	CU_add_test(s, "replicas, shards, labels", test_replicas);
	CU_add_test(s, "--runtime-flags finds the runtime", test_runtime_flags);
}
