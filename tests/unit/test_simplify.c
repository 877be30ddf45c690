/* test_simplify.c — the simplify pass (TAG §4.1.1; docs/passes.md) on
 * small graphs whose result is worked out by hand: which ops go, which
 * stay, and every surviving op's inputs, data and control, in order.
 * Through the pipeline (tu_run, --verify-each), so the verifier also
 * checks every result. */
#include <CUnit/CUnit.h>

#include "testutil.h"

#define ONE_GPU \
	"gir 1\n" \
	"cluster one {\n" \
	"  type GPU {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n" \
	"  machine m0 {type = GPU, count = 1, bandwidth = 10GB/s, latency = 1us}\n" \
	"}\n"

/* Parses ONE_GPU + body and runs simplify on it. */
static Graph *simplified(const char *body)
{
	char buf[8192];
	snprintf(buf, sizeof buf, "%s%s", ONE_GPU, body);
	Graph *g = tu_parse(buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "simplify"), EXIT_OK);
	return g;
}

/* The inputs of op name as gir spells them: "h, x:1, ^c" ("-" when the
 * op is gone). */
static const char *ins(const Graph *g, const char *name)
{
	static char buf[512];
	Op *op = tu_op(g, name);
	if (!op || op->dead)
		return "-";
	char *p = buf;
	*p = 0;
	for (uint32_t i = 0; i < op->nin; i++) {
		const Input *in = &op->in[i];
		p += sprintf(p, "%s%s%s", i ? ", " : "", in->ctrl ? "^" : "",
			     in->src->name);
		if (!in->ctrl && in->idx)
			p += sprintf(p, ":%u", in->idx);
	}
	return buf;
}

static int live(const Graph *g)
{
	int n = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		n += !g->ops[i]->dead;
	return n;
}

#define EXPECT_INS(g, name, want) CU_ASSERT_STRING_EQUAL(ins(g, name), want)

/* A chain of Identities collapses in one sweep; a data use inherits the
 * bypassed op's control inputs. */
static void test_chain(void)
{
	Graph *g = simplified(
		"graph g {\n"
		"  %x = Placeholder() : f32[4]\n"
		"  %c = Const() {value = 1} : f32[]\n"
		"  %i1 = Identity(%x, ^%c) : f32[4]\n"
		"  %i2 = StopGradient(%i1) : f32[4]\n"
		"  %i3 = Snapshot(%i2) : f32[4]\n"
		"  %r = Relu(%i3) {@output = true} : f32[4]\n"
		"}\n");
	/* x, c, r are left: r reads x, waits for c (i1's control input) */
	CU_ASSERT_EQUAL(live(g), 3);
	EXPECT_INS(g, "r", "x, ^c");
	EXPECT_INS(g, "i1", "-");
	EXPECT_INS(g, "i2", "-");
	EXPECT_INS(g, "i3", "-");
	graph_free(g);
}

/* IdentityN: a use of output k reads data input k; a control use of a
 * bypassed op waits for all of its inputs. */
static void test_identityn_and_control_use(void)
{
	Graph *g = simplified(
		"graph g {\n"
		"  %a = Placeholder() : f32[2]\n"
		"  %b = Placeholder() : f32[3]\n"
		"  %p, %q = IdentityN(%a, %b) : (f32[2], f32[3])\n"
		"  %s = Relu(%q) : f32[3]\n"
		"  %t = Relu(%p, ^%p) : f32[2]\n"
		"  %w = Relu(%a, ^%q) {@output = true} : f32[2]\n"
		"  %o = AddN(%s, %s) {@output = true} : f32[3]\n"
		"  %o2 = Neg(%t) {@output = true} : f32[2]\n"
		"}\n");
	EXPECT_INS(g, "p", "-");
	EXPECT_INS(g, "s", "b");
	/* ^p would wait for a and b; a is a data input already */
	EXPECT_INS(g, "t", "a, ^b");
	/* ^q: a control use waits for IdentityN's inputs a (already data)
	 * and b */
	EXPECT_INS(g, "w", "a, ^b");
	/* a repeated data input keeps both positions */
	EXPECT_INS(g, "o", "s, s");
	CU_ASSERT_EQUAL(live(g), 7);
	graph_free(g);
}

/* Dead ops: nothing a sink (update, loss, @output) depends on; an op a
 * sink only waits for (control edge) is kept. */
static void test_dead(void)
{
	Graph *g = simplified(
		"graph g {\n"
		"  %x = Placeholder() : f32[8,4]\n"
		"  %w = VariableV2() : f32[4,4]\n"
		"  %h = MatMul(%x, %w) : f32[8,4]\n"
		"  %side = Relu(%x) : f32[8,4]\n"
		"  %gw = MatMul(%x, %h) {transpose_a = true} : f32[4,4]\n"
		"  %u = ApplyGradientDescent(%w, %gw, ^%side) : ()\n"
		"  %d1 = Relu(%h) : f32[8,4]\n"
		"  %d2 = Sigmoid(%d1) : f32[8,4]\n"
		"  %d3 = Relu(%w) : f32[4,4]\n"
		"}\n");
	/* sink: u (an Apply* op); d1 d2 d3 feed nothing that reaches it.
	 * In a training graph an op without consumers is not a sink. */
	CU_ASSERT_EQUAL(live(g), 6);
	CU_ASSERT_PTR_NULL(tu_op(g, "d1"));
	CU_ASSERT_PTR_NULL(tu_op(g, "d2"));
	CU_ASSERT_PTR_NULL(tu_op(g, "d3"));
	EXPECT_INS(g, "u", "w, gw, ^side");
	graph_free(g);
}

/* Sinks by role: @role = loss and @role = update are sinks; an Apply*
 * op whose given @role is not update is not one. */
static void test_sinks_by_role(void)
{
	Graph *g = simplified(
		"graph g {\n"
		"  %x = Placeholder() : f32[4]\n"
		"  %w = VariableV2() : f32[4]\n"
		"  %l = Relu(%x) {@role = loss} : f32[4]\n"
		"  %n = Neg(%x) : f32[4]\n"
		"  %u = ApplyGradientDescent(%w, %n) {@role = fwd} : ()\n"
		"  %v = Sigmoid(%x) {@role = update} : f32[4]\n"
		"}\n");
	CU_ASSERT_PTR_NOT_NULL(tu_op(g, "l"));
	CU_ASSERT_PTR_NOT_NULL(tu_op(g, "v"));
	CU_ASSERT_PTR_NULL(tu_op(g, "u"));
	CU_ASSERT_PTR_NULL(tu_op(g, "n"));
	CU_ASSERT_PTR_NULL(tu_op(g, "w"));
	CU_ASSERT_EQUAL(live(g), 3);
	graph_free(g);
}

/* Inference graph (no update, loss or @output): every op without
 * consumers is a sink, except a no-op without outputs; an Identity that
 * is a sink stays. */
static void test_inference(void)
{
	Graph *g = simplified(
		"graph g {\n"
		"  %x = Placeholder() : f32[4]\n"
		"  %i = Identity(%x) : f32[4]\n"
		"  %y = Relu(%i) : f32[4]\n"
		"  %z = Identity(%y) : f32[4]\n"
		"  %n = NoOp(^%y) : ()\n"
		"}\n");
	EXPECT_INS(g, "i", "-");
	EXPECT_INS(g, "y", "x");
	EXPECT_INS(g, "z", "y");
	EXPECT_INS(g, "n", "-");
	CU_ASSERT_EQUAL(live(g), 3);
	graph_free(g);
}

/* A NoOp joining n control inputs for m control consumers: n + m edges;
 * its bypass makes n * m.  Bypassed when n * m <= n + m (2 x 2: 4 <= 4),
 * kept otherwise (3 x 3: 9 > 6). */
static void noop_join(int n, int m, bool bypassed)
{
	char body[4096], *p = body;
	p += sprintf(p, "graph g {\n");
	for (int i = 0; i < n; i++)
		p += sprintf(p, "  %%a%d = Placeholder() {@output = true} : f32[1]\n", i);
	p += sprintf(p, "  %%j = NoOp(");
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s^%%a%d", i ? ", " : "", i);
	p += sprintf(p, ") : ()\n");
	for (int k = 0; k < m; k++)
		p += sprintf(p, "  %%c%d = Const(^%%j) {value = 0, @output = true} : f32[]\n", k);
	sprintf(p, "}\n");
	Graph *g = simplified(body);
	CU_ASSERT_EQUAL(tu_op(g, "j") == NULL, bypassed);
	char want[256], *w = want;
	*w = 0;
	for (int i = 0; i < n; i++)
		w += sprintf(w, "%s^a%d", i ? ", " : "", i);
	for (int k = 0; k < m; k++) {
		char name[16];
		snprintf(name, sizeof name, "c%d", k);
		EXPECT_INS(g, name, bypassed ? want : "^j");
	}
	CU_ASSERT_EQUAL(live(g), n + m + !bypassed);
	graph_free(g);
}

static void test_noop_fanin(void)
{
	noop_join(2, 2, true);
	noop_join(1, 5, true);   /* 5 <= 6 */
	noop_join(3, 3, false);
	noop_join(2, 4, false);  /* 8 > 6 */
}

/* Ops that hand their input on unchanged go like Identity: each r_k reads
 * x, and the op it read stays only where it moves or converts data. */
static void test_identity_values(void)
{
	Graph *g = simplified(
		"graph g {\n"
		"  %x = Placeholder() : f32[2,3]\n"
		"  %z4 = Const() {value = [0, 0, 0, 0]} : i32[2,2]\n"
		"  %p4 = Const() {value = [1, 0, 0, 0]} : i32[2,2]\n"
		"  %b0 = Const() {value = [0, 0]} : i32[2]\n"
		"  %b1 = Const() {value = [1, 0]} : i32[2]\n"
		"  %sz = Const() {value = [-1, 3]} : i32[2]\n"
		"  %sz1 = Const() {value = [1, 3]} : i32[2]\n"
		"  %id = Const() {value = [0, 1]} : i32[2]\n"
		"  %sw = Const() {value = [1, 0]} : i32[2]\n"
		"  %one = Const() {value = [1, 1]} : i32[2]\n"
		"  %two = Const() {value = [1, 2]} : i32[2]\n"
		"  %ax = Const() {value = 0} : i32[]\n"
		"  %e = Const() {value = [2, 3]} : i32[2]\n"
		"  %pad = Pad(%x, %z4) : f32[2,3]\n"
		"  %padn = Pad(%x, %p4) : f32[3,3]\n"
		"  %sl = Slice(%x, %b0, %sz) : f32[2,3]\n"
		"  %sln = Slice(%x, %b0, %sz1) : f32[1,3]\n"
		"  %ss = StridedSlice(%x, %b0, %e, %one) : f32[2,3]\n"
		"  %tr = Transpose(%x, %id) : f32[2,3]\n"
		"  %trn = Transpose(%x, %sw) : f32[3,2]\n"
		"  %ti = Tile(%x, %one) : f32[2,3]\n"
		"  %tin = Tile(%x, %two) : f32[2,6]\n"
		"  %ca = Cast(%x) {SrcT = f32, DstT = f32} : f32[2,3]\n"
		"  %can = Cast(%x) {SrcT = f32, DstT = f64} : f64[2,3]\n"
		"  %cc = ConcatV2(%x, %ax) : f32[2,3]\n"
		"  %ccn = ConcatV2(%x, %x, %ax) : f32[4,3]\n"
		"  %an = AddN(%x) : f32[2,3]\n"
		"  %r1 = Relu(%pad) {@output = true} : f32[2,3]\n"
		"  %r2 = Relu(%sl) {@output = true} : f32[2,3]\n"
		"  %r3 = Relu(%ss) {@output = true} : f32[2,3]\n"
		"  %r4 = Relu(%tr) {@output = true} : f32[2,3]\n"
		"  %r5 = Relu(%ti) {@output = true} : f32[2,3]\n"
		"  %r6 = Relu(%ca) {@output = true} : f32[2,3]\n"
		"  %r7 = Relu(%cc) {@output = true} : f32[2,3]\n"
		"  %r8 = Relu(%an, ^%pad) {@output = true} : f32[2,3]\n"
		"  %k1 = Relu(%padn) {@output = true} : f32[3,3]\n"
		"  %k2 = Relu(%sln) {@output = true} : f32[1,3]\n"
		"  %k3 = Relu(%trn) {@output = true} : f32[3,2]\n"
		"  %k4 = Relu(%tin) {@output = true} : f32[2,6]\n"
		"  %k5 = Relu(%can) {@output = true} : f64[2,3]\n"
		"  %k6 = Relu(%ccn) {@output = true} : f32[4,3]\n"
		"}\n");
	static const char *const gone[] = {"pad", "sl", "ss", "tr", "ti", "ca", "cc", "an"};
	for (int i = 1; i <= 7; i++) {
		char r[4];
		snprintf(r, sizeof r, "r%d", i);
		EXPECT_INS(g, r, "x");
	}
	/* a control use of the Pad waits for its inputs: x (data already)
	 * and the paddings */
	EXPECT_INS(g, "r8", "x, ^z4");
	for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
		EXPECT_INS(g, gone[i], "-");
	EXPECT_INS(g, "k1", "padn");
	EXPECT_INS(g, "k2", "sln");
	EXPECT_INS(g, "k3", "trn");
	EXPECT_INS(g, "k4", "tin");
	EXPECT_INS(g, "k5", "can");
	EXPECT_INS(g, "k6", "ccn");
	graph_free(g);
}

/* Running it again changes nothing (the first run left no no-op it can
 * bypass and no dead op). */
static void test_idempotent(void)
{
	Graph *g = simplified(
		"graph g {\n"
		"  %x = Placeholder() : f32[4]\n"
		"  %i = Identity(%x) : f32[4]\n"
		"  %y = Relu(%i) {@output = true} : f32[4]\n"
		"  %d = Relu(%y) : f32[4]\n"
		"}\n");
	CU_ASSERT_EQUAL(live(g), 2);
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "simplify"), EXIT_OK);
	CU_ASSERT_EQUAL(live(g), 2);
	EXPECT_INS(g, "y", "x");
	graph_free(g);
}

void suite_simplify(void)
{
	CU_pSuite s = CU_add_suite("simplify", NULL, NULL);
	CU_add_test(s, "Identity chains collapse", test_chain);
	CU_add_test(s, "IdentityN outputs and control uses", test_identityn_and_control_use);
	CU_add_test(s, "dead ops in a training graph", test_dead);
	CU_add_test(s, "sinks by @role", test_sinks_by_role);
	CU_add_test(s, "inference graph sinks", test_inference);
	CU_add_test(s, "NoOp joins: n*m against n+m", test_noop_fanin);
	CU_add_test(s, "ops that hand their input on unchanged", test_identity_values);
	CU_add_test(s, "idempotent", test_idempotent);
}
