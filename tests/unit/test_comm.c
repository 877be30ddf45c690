/* test_comm.c — batch analysis, comm and order on small plans whose
 * materialisation is worked out by hand (docs/plan.md), plus properties
 * over random strategies: the verifier accepts every plan, every
 * cross-device edge goes through a Transfer, shards add up to the batch,
 * and @order replays its schedule without deadlock. */
#include <CUnit/CUnit.h>
#include <stdlib.h>

#include "passes/plan.h"
#include "testutil.h"

#define CLUSTER4 \
	"gir 1\n" \
	"cluster c {\n" \
	"  type GPU {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n" \
	"  machine m0 {type = GPU, count = 4, bandwidth = 10GB/s, latency = 1us}\n" \
	"}\n"

/* The MLP of gir.md: $0 is replaced by each op's strategy, $S by ", "
 * and the strategy, $U by ", " and the updates' extra annotations. */
static const char *mlp_ops[] = {
	"%x = Placeholder() {@batch_dim = 0$S} : f32[64,784]",
	"%labels = Placeholder() {@batch_dim = 0$S} : i64[64]",
	"%w1 = VariableV2() {$0} : f32[784,256]",
	"%w2 = VariableV2() {$0} : f32[256,10]",
	"%h = MatMul(%x, %w1) {$0} : f32[64,256]",
	"%a = Relu(%h) {$0} : f32[64,256]",
	"%y = MatMul(%a, %w2) {$0} : f32[64,10]",
	"%loss, %dy = SoftmaxCrossEntropyWithLogits(%y, %labels) {$0} : (f32[64], f32[64,10])",
	"%gw2 = MatMul(%a, %dy) {transpose_a = true$S} : f32[256,10]",
	"%da = MatMul(%dy, %w2) {transpose_b = true$S} : f32[64,256]",
	"%dh = ReluGrad(%da, %a) {$0} : f32[64,256]",
	"%gw1 = MatMul(%x, %dh) {transpose_a = true$S} : f32[784,256]",
	"%u1 = ApplyGradientDescent(%w1, %gw1) {$0$U} : ()",
	"%u2 = ApplyGradientDescent(%w2, %gw2) {$0$U} : ()",
};
enum { NMLP = sizeof mlp_ops / sizeof mlp_ops[0] };

/* Builds the MLP with strategy strat[i] for op i ("" = none) and extra
 * annotations upd for the updates. */
static Graph *mlp(const char *const *strat, const char *upd)
{
	static char buf[16384];
	char *p = buf;
	p += sprintf(p, "%sgraph mlp {batch = 64} {\n", CLUSTER4);
	for (int i = 0; i < NMLP; i++) {
		const char *s = mlp_ops[i];
		p += sprintf(p, "  ");
		for (; *s; s++) {
			if (s[0] != '$') {
				*p++ = *s;
				continue;
			}
			s++;
			if (*s == '0')
				p += sprintf(p, "%s", strat[i]);
			else if (*s == 'S' && *strat[i])
				p += sprintf(p, ", %s", strat[i]);
			else if (*s == 'U' && *upd)
				p += sprintf(p, "%s%s", *strat[i] ? ", " : "", upd);
		}
		p += sprintf(p, "\n");
	}
	sprintf(p, "}\n");
	Graph *g = tu_parse(buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	return g;
}

static const Type *ty(const Graph *g, const char *name)
{
	Op *op = tu_op(g, name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	return &op->out[0];
}

static const char *devof(const Graph *g, const char *name)
{
	Op *op = tu_op(g, name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	return op_ann_str(g, op, ANN_DEVICE);
}

#define R2 "@replicas = [\"m0/gpu0\", \"m0/gpu1\"]"

static void test_dp_equal(void)
{
	/* Data parallelism over two GPUs, equal shares: 32 rows each, no
	 * transfer at all, one AllReduce per weight gradient; each update
	 * applies the reduced gradient to its own copy. */
	const char *s[NMLP];
	for (int i = 0; i < NMLP; i++)
		s[i] = R2;
	Graph *g = mlp(s, "@sync = ring");
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "annotate,comm"), 0);
	CU_ASSERT_EQUAL(ty(g, "x/rep0")->dims[0], 32);
	CU_ASSERT_EQUAL(ty(g, "x/rep1")->dims[0], 32);
	CU_ASSERT_EQUAL(ty(g, "gw1/rep1")->dims[0], 784);      /* a partial sum */
	CU_ASSERT_EQUAL(tu_count(g, "Transfer"), 0);
	CU_ASSERT_EQUAL(tu_count(g, "AllReduce"), 4);
	Op *u = tu_op(g, "u1/rep1"), *ar = tu_op(g, "gw1/ar1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ar);
	CU_ASSERT_PTR_EQUAL(u->in[0].src, tu_op(g, "w1/rep1"));
	CU_ASSERT_PTR_EQUAL(u->in[1].src, ar);
	CU_ASSERT_EQUAL(op_get_int(g, ar, "key", 0),
			op_get_int(g, tu_op(g, "gw1/ar0"), "key", -1));
	CU_ASSERT_STRING_EQUAL(devof(g, "gw1/ar1"), "m0/gpu1");
	Value *sh = op_ann(g, tu_op(g, "h/rep1"), ANN_SHARD);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	CU_ASSERT_EQUAL(sh->list.items[0]->i, 32);
	CU_ASSERT_EQUAL(sh->list.items[1]->i, 32);
	/* The weights and the updates are not split: no @shard there. */
	CU_ASSERT_PTR_NULL(op_ann(g, tu_op(g, "w1/rep0"), ANN_SHARD));
	CU_ASSERT_PTR_NULL(op_ann(g, tu_op(g, "u1/rep0"), ANN_SHARD));
	graph_free(g);
}

static void test_dp_shares(void)
{
	/* Shares 48 + 16: replica shapes follow, shards are [0,48], [48,16],
	 * and the per-replica FLOPs of h scale: 2*48*784*256 = 19267584. */
	const char *s[NMLP];
	for (int i = 0; i < NMLP; i++)
		s[i] = R2 ", @shares = [48, 16]";
	Graph *g = mlp(s, "");
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "annotate,comm"), 0);
	CU_ASSERT_EQUAL(ty(g, "h/rep0")->dims[0], 48);
	CU_ASSERT_EQUAL(ty(g, "h/rep1")->dims[0], 16);
	CU_ASSERT_EQUAL(ty(g, "labels/rep1")->dims[0], 16);
	Value *sh = op_ann(g, tu_op(g, "dh/rep1"), ANN_SHARD);
	CU_ASSERT_EQUAL(sh->list.items[0]->i, 48);
	CU_ASSERT_EQUAL(sh->list.items[1]->i, 16);
	CU_ASSERT_EQUAL(op_ann(g, tu_op(g, "h/rep0"), ANN_FLOPS)->i, 19267584);
	graph_free(g);
}

static void test_concat_vs_addn(void)
{
	/* Forward ops replicated, every backward op and update on gpu1: the
	 * unreplicated consumers of replicated tensors get ConcatV2 (split
	 * category concat: %dy's producer, %a) along the batch; nothing is
	 * summed.  Then the weight gradient replicated and its update on one
	 * device: partial sums, so AddN on the update's device. */
	const char *s[NMLP];
	for (int i = 0; i < NMLP; i++)
		s[i] = i < 8 ? R2 : "@device = \"m0/gpu1\"";
	Graph *g = mlp(s, "");
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "annotate,comm"), 0);
	Op *c = tu_op(g, "a/concat");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(c->type, "ConcatV2");
	CU_ASSERT_STRING_EQUAL(devof(g, "a/concat"), "m0/gpu1");
	CU_ASSERT_EQUAL(c->nin, 3);
	CU_ASSERT_STRING_EQUAL(c->in[0].src->type, "Transfer");   /* from gpu0 */
	CU_ASSERT_PTR_EQUAL(c->in[1].src, tu_op(g, "a/rep1"));     /* local */
	CU_ASSERT_EQUAL(c->out[0].dims[0], 64);
	CU_ASSERT_EQUAL(tu_count(g, "AddN"), 0);
	graph_free(g);

	for (int i = 0; i < NMLP; i++)
		s[i] = i == 12 || i == 2 ? "@device = \"m0/gpu0\"" : R2;
	g = mlp(s, "");
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "annotate,comm"), 0);
	Op *sum = tu_op(g, "gw1/sum");
	CU_ASSERT_PTR_NOT_NULL_FATAL(sum);
	CU_ASSERT_STRING_EQUAL(sum->type, "AddN");
	CU_ASSERT_STRING_EQUAL(devof(g, "gw1/sum"), "m0/gpu0");
	CU_ASSERT_PTR_EQUAL(tu_op(g, "u1")->in[1].src, sum);
	/* w1 on gpu0 feeds h/rep1 on gpu1 through one Transfer, also used
	 * by nothing else there. */
	Op *t = tu_op(g, "w1/to/m0/gpu1");
	CU_ASSERT_PTR_NOT_NULL(t);
	CU_ASSERT_PTR_EQUAL(tu_op(g, "h/rep1")->in[1].src, t);
	CU_ASSERT_EQUAL(tu_count(g, "AllReduce"), 2);   /* the other gradient */
	graph_free(g);
}

static void test_split(void)
{
	/* x on gpu0, everything else replicated: Split on gpu0 (equal
	 * shares), or SplitV with sizes [40, 24]; slice 1 is transferred. */
	const char *s[NMLP];
	for (int sv = 0; sv < 2; sv++) {
		for (int i = 0; i < NMLP; i++)
			s[i] = i == 0 ? "@device = \"m0/gpu0\""
				      : sv ? R2 ", @shares = [40, 24]" : R2;
		Graph *g = mlp(s, "");
		CU_ASSERT_EQUAL_FATAL(tu_run(g, "annotate,comm"), 0);
		Op *sp = tu_op(g, "x/split");
		CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
		CU_ASSERT_STRING_EQUAL(sp->type, sv ? "SplitV" : "Split");
		CU_ASSERT_STRING_EQUAL(devof(g, "x/split"), "m0/gpu0");
		CU_ASSERT_EQUAL(sp->nout, 2);
		CU_ASSERT_EQUAL(sp->out[0].dims[0], sv ? 40 : 32);
		CU_ASSERT_EQUAL(sp->out[1].dims[0], sv ? 24 : 32);
		Op *h1 = tu_op(g, "h/rep1");
		CU_ASSERT_STRING_EQUAL(h1->in[0].src->type, "Transfer");
		CU_ASSERT_PTR_EQUAL(h1->in[0].src->in[0].src, sp);
		CU_ASSERT_EQUAL(h1->in[0].src->in[0].idx, 1);
		CU_ASSERT_PTR_EQUAL(tu_op(g, "h/rep0")->in[0].src, sp);
		graph_free(g);
	}
}

static void test_ps(void)
{
	/* A parameter server on gpu1: the updates run once there, the
	 * weights live there, gradient slices arrive by Transfer and add up
	 * in AddN; replicas on gpu0 read the weights through Transfers. */
	const char *s[NMLP];
	for (int i = 0; i < NMLP; i++)
		s[i] = R2;
	Graph *g = mlp(s, "@sync = ps, @ps = \"m0/gpu1\"");
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "annotate,comm"), 0);
	CU_ASSERT_STRING_EQUAL(devof(g, "u1"), "m0/gpu1");
	CU_ASSERT_STRING_EQUAL(devof(g, "w1"), "m0/gpu1");
	CU_ASSERT_PTR_NULL(tu_op(g, "w1/rep0"));
	CU_ASSERT_STRING_EQUAL(tu_op(g, "u1")->in[1].src->type, "AddN");
	CU_ASSERT_STRING_EQUAL(tu_op(g, "h/rep0")->in[1].src->type, "Transfer");
	CU_ASSERT_PTR_EQUAL(tu_op(g, "h/rep1")->in[1].src, tu_op(g, "w1"));
	CU_ASSERT_EQUAL(tu_count(g, "AllReduce"), 0);
	graph_free(g);
}

static void test_views(void)
{
	/* Sequence-first: x[8, 4, 6] with the batch (4) at dimension 1,
	 * reshaped to rows (s, b): a batch slice is strided in [32, 6], and
	 * contiguous only in the view [8, 4, 6].  Replicas get [16, 6] rows
	 * and never need the whole; the unreplicated %s gathers %mm as
	 * Reshape [8, 2, 5] per slice, ConcatV2 on axis 1, Reshape [32, 5].
	 * %mm2 (replicated) reads the unreplicated %r2 through a Reshape to
	 * the view, a Split on axis 1 and Reshapes to [16, 6]. */
	const char *src = CLUSTER4
		"graph v {batch = 4} {\n"
		"  %x = Placeholder() {@batch_dim = 1, " R2 "} : f32[8,4,6]\n"
		"  %sh = Const() {value = [32, 6], " R2 "} : i32[2]\n"
		"  %r = Reshape(%x, %sh) {" R2 "} : f32[32,6]\n"
		"  %w = VariableV2() {" R2 "} : f32[6,5]\n"
		"  %mm = MatMul(%r, %w) {" R2 "} : f32[32,5]\n"
		"  %s = Relu(%mm) {@device = \"m0/gpu0\"} : f32[32,5]\n"
		"  %x2 = Placeholder() {@batch_dim = 1, @device = \"m0/gpu0\"} : f32[8,4,6]\n"
		"  %r2 = Reshape(%x2, %sh) {@device = \"m0/gpu0\"} : f32[32,6]\n"
		"  %mm2 = MatMul(%r2, %w) {" R2 "} : f32[32,5]\n"
		"  %o2 = Relu(%mm2) {" R2 "} : f32[32,5]\n"
		"}\n";
	Graph *g = tu_parse(src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "comm"), 0);
	CU_ASSERT_EQUAL(ty(g, "x/rep1")->dims[1], 2);
	CU_ASSERT_EQUAL(ty(g, "r/rep1")->dims[0], 16);
	CU_ASSERT_EQUAL(ty(g, "mm/rep0")->dims[0], 16);
	Op *s = tu_op(g, "s");
	const Op *re = s->in[0].src;
	CU_ASSERT_STRING_EQUAL(re->type, "Reshape");
	CU_ASSERT_EQUAL(re->out[0].dims[0], 32);
	const Op *cat = re->in[0].src;
	CU_ASSERT_STRING_EQUAL_FATAL(cat->type, "ConcatV2");
	CU_ASSERT_EQUAL(cat->out[0].rank, 3);
	CU_ASSERT_EQUAL(cat->out[0].dims[1], 4);
	int64_t ax;
	CU_ASSERT_EQUAL(op_input_ints(g, cat, 2, &ax, 1), 1);
	CU_ASSERT_EQUAL(ax, 1);
	CU_ASSERT_STRING_EQUAL(cat->in[0].src->type, "Reshape");
	CU_ASSERT_EQUAL(cat->in[0].src->out[0].dims[1], 2);
	/* The split of %r2 in its view. */
	Op *sp = tu_op(g, "r2/split");
	CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
	CU_ASSERT_EQUAL(sp->out[0].rank, 3);
	CU_ASSERT_EQUAL(sp->out[1].dims[1], 2);
	CU_ASSERT_EQUAL(tu_op(g, "mm2/rep1")->in[0].src->out[0].dims[0], 16);
	graph_free(g);
}

/* ---- properties over random strategies ---------------------------------- */

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* Every data edge between devices ends in a Transfer (whose input may
 * live elsewhere); AllReduce members read local tensors. */
static int bad_edges(const Graph *g)
{
	int bad = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead || op->opcode == O_Transfer)
			continue;
		const char *d = op_ann_str(g, op, ANN_DEVICE);
		for (uint32_t k = 0; k < op->nin; k++) {
			const char *e = op_ann_str(g, op->in[k].src, ANN_DEVICE);
			if (!op->in[k].ctrl && (!d || !e || strcmp(d, e)))
				bad++;
		}
	}
	return bad;
}

/* For every op of the input with replicas, the shards add up to the
 * batch (64) and do not overlap. */
static int bad_shards(const Graph *g)
{
	int bad = 0;
	for (int i = 0; i < NMLP; i++) {
		char name[32];
		int64_t next = 0;
		int found = 0;
		sscanf(mlp_ops[i], "%%%31[a-z0-9_]", name);
		for (int r = 0; r < 4; r++) {
			char rn[48];
			snprintf(rn, sizeof rn, "%s/rep%d", name, r);
			Op *op = tu_op(g, rn);
			Value *sh = op ? op_ann(g, op, ANN_SHARD) : NULL;
			if (!sh)
				continue;
			found++;
			bad += sh->list.items[0]->i != next;
			next += sh->list.items[1]->i;
		}
		bad += found && next != 64;
	}
	return bad;
}

static void test_random_strategies(void)
{
	static const char *devs[] = {"m0/gpu0", "m0/gpu1", "m0/gpu2", "m0/gpu3"};
	static const char *syncs[] = {"ring", "hier", "ps"};
	char strat[NMLP][160], upd[96];
	const char *s[NMLP];
	for (unsigned seed = 1; seed <= 40; seed++) {
		unsigned st = seed;
		for (int i = 0; i < NMLP; i++) {
			int n = 1 + (int)(rnd(&st) % 4), first = (int)(rnd(&st) % 4);
			if (n == 1) {
				snprintf(strat[i], sizeof strat[i], "@device = \"%s\"",
					 devs[first]);
			} else {
				char *p = strat[i];
				p += sprintf(p, "@replicas = [");
				for (int r = 0; r < n; r++)
					p += sprintf(p, "%s\"%s\"", r ? ", " : "",
						     devs[(first + r) % 4]);
				p += sprintf(p, "]");
				if (rnd(&st) % 2) {
					int left = 64;
					p += sprintf(p, ", @shares = [");
					for (int r = 0; r < n; r++) {
						int x = r == n - 1 ? left
							: 1 + (int)(rnd(&st) % (unsigned)(left - (n - r - 1)));
						left -= x;
						p += sprintf(p, "%s%d", r ? ", " : "", x);
					}
					sprintf(p, "]");
				}
			}
			s[i] = strat[i];
		}
		int sy = (int)(rnd(&st) % 3);
		if (sy == 2)
			snprintf(upd, sizeof upd, "@sync = ps, @ps = \"%s\"",
				 devs[rnd(&st) % 4]);
		else
			snprintf(upd, sizeof upd, "@sync = %s", syncs[sy]);
		Graph *g = mlp(s, upd);
		CU_ASSERT_EQUAL_FATAL(tu_run(g, "annotate,comm,order"), 0);
		CU_ASSERT_EQUAL(bad_edges(g), 0);
		CU_ASSERT_EQUAL(bad_shards(g), 0);
		/* @order replays: the enforced schedule ends at the latest
		 * @finish, without deadlock. */
		CostModel m = {g, g->cluster, NULL, NULL, 0};
		Diag d;
		diag_init(&d, stderr, "t", NULL, 0);
		SimResult r;
		CU_ASSERT_EQUAL_FATAL(sim_run(g, &m, &r, &d), 0);
		double fin = 0;
		for (uint32_t i = 0; i < g->nops; i++)
			if (!g->ops[i]->dead) {
				double f = op_ann_num(g, g->ops[i], ANN_FINISH, -1);
				fin = f > fin ? f : fin;
			}
		CU_ASSERT_DOUBLE_EQUAL(r.makespan, fin, 1e-12);
		sim_free(&r);
		graph_free(g);
	}
}

static void test_order_random_dags(void)
{
	/* Random DAGs of opaque ops on random devices: @order increases
	 * along every edge, and enforcing it replays the schedule. */
	for (unsigned seed = 1; seed <= 30; seed++) {
		unsigned st = seed;
		char buf[32768], *p = buf;
		int n = 8 + (int)(rnd(&st) % 40);
		p += sprintf(p, "%sgraph r {\n", CLUSTER4);
		for (int i = 0; i < n; i++) {
			p += sprintf(p, "  %%n%d = Work(", i);
			int k = i ? (int)(rnd(&st) % 3) : 0;
			for (int j = 0; j < k; j++)
				p += sprintf(p, "%s%%n%d", j ? ", " : "",
					     (int)(rnd(&st) % (unsigned)i));
			p += sprintf(p, ") {@cost = %dus, @device = \"m0/gpu%d\"} : u8[%d]\n",
				     1 + (int)(rnd(&st) % 50), (int)(rnd(&st) % 4),
				     1000 * (1 + (int)(rnd(&st) % 100)));
		}
		sprintf(p, "}\n");
		Graph *g = tu_parse(buf);
		CU_ASSERT_PTR_NOT_NULL_FATAL(g);
		CU_ASSERT_EQUAL_FATAL(tu_run(g, "order"), 0);
		for (uint32_t i = 0; i < g->nops; i++) {
			const Op *op = g->ops[i];
			for (uint32_t k = 0; k < op->nin; k++)
				CU_ASSERT_TRUE(op_ann(g, op->in[k].src, ANN_ORDER)->i <
					       op_ann(g, op, ANN_ORDER)->i);
		}
		CostModel m = {g, g->cluster, NULL, NULL, 0};
		Diag d;
		diag_init(&d, stderr, "t", NULL, 0);
		SimResult r;
		CU_ASSERT_EQUAL_FATAL(sim_run(g, &m, &r, &d), 0);
		for (uint32_t i = 0; i < g->nops; i++)
			CU_ASSERT_DOUBLE_EQUAL(r.start[i],
					       op_ann_num(g, g->ops[i], ANN_START, -1),
					       1e-12);
		sim_free(&r);
		graph_free(g);
	}
}

static void test_order_priority(void)
{
	/* gpu0 runs a (1 ms) then must choose between b (1 ms, a chain of
	 * 5 ms more on gpu1 after it) and c (2 ms, nothing after): the list
	 * schedule runs b first (rank 1 + 1 + 5 = 7 > 2): b ends at 2, the
	 * transfer of 1 kB takes 1us + 0.1us, d runs [2.0011, 7.0011];
	 * ready order (FIFO by id: c before b) would end at 8.0011 ms. */
	const char *src = CLUSTER4
		"graph p {\n"
		"  %a = Work() {@cost = 1ms, @device = \"m0/gpu0\"} : u8[1000]\n"
		"  %c = Work(%a) {@cost = 2ms, @device = \"m0/gpu0\"} : u8[1000]\n"
		"  %b = Work(%a) {@cost = 1ms, @device = \"m0/gpu0\"} : u8[1000]\n"
		"  %d = Work(%b) {@cost = 5ms, @device = \"m0/gpu1\"} : u8[1000]\n"
		"}\n";
	Graph *g = tu_parse(src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "order"), 0);
	CU_ASSERT_TRUE(op_ann(g, tu_op(g, "b"), ANN_ORDER)->i <
		       op_ann(g, tu_op(g, "c"), ANN_ORDER)->i);
	CU_ASSERT_DOUBLE_EQUAL(op_ann_num(g, tu_op(g, "d"), ANN_FINISH, 0),
			       7.0011e-3, 1e-12);
	graph_free(g);
}

/* Every op of the table has a batch rule, or is marked as having none:
 * a new op must say how data parallelism treats it. */
static void test_batch_rules_cover_ops(void)
{
	for (int i = 0; i < op_table_size(); i++) {
		const char *r = batch_rule_name(i);
		if (!r)
			fprintf(stderr, "\n  op %s has no batch rule (ops.def BATCH column)",
				op_info(i)->name);
		CU_ASSERT_PTR_NOT_NULL(r);
	}
	CU_ASSERT_STRING_EQUAL(batch_rule_name(op_lookup("_FusedConv2D")), "batch0");
	CU_ASSERT_STRING_EQUAL(batch_rule_name(op_lookup("_FusedMatMul")), "fused-matmul");
	CU_ASSERT_STRING_EQUAL(batch_rule_name(op_lookup("ApplyAdam")), "none");
	CU_ASSERT_STRING_EQUAL(batch_rule_name(op_lookup("Relu")), "elementwise");
}

#define RESPLIT_OPS \
	"  %x = Placeholder() {@batch_dim = 0, " R2 "} : f32[8,4]\n" \
	"  %w = VariableV2() {" R2 "} : f32[4,4]\n" \
	"  %h = MatMul(%x, %w) {" R2 "} : f32[8,4]\n" \
	"  %f = aten.flip(%h) {dims = [0], @device = \"m0/gpu0\"} : f32[8,4]\n" \
	"  %r = Relu(%f) {" R2 "} : f32[8,4]\n" \
	"  %ax = Const() {value = [0, 1], " R2 "} : i32[2]\n" \
	"  %m = Mean(%r, %ax) {@device = \"m0/gpu0\"} : f32[]\n" \
	"  %n = Neg(%m) {" R2 "} : f32[]\n"

static void test_resplit(void)
{
	/* aten.flip is not in the op table and has no @split: it runs once,
	 * on the whole batch (ConcatV2 of h's two [4,4] slices on gpu0), and
	 * Relu after it is split again (Split on gpu0, slice 1 transferred):
	 * [4,4] per replica, not the whole [8,4].  The Mean over the batch
	 * ends it: its scalar carries no batch, Neg's replicas compute it
	 * whole. */
	Graph *g = tu_parse(CLUSTER4 "graph r {batch = 8} {\n" RESPLIT_OPS "}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	BatchInfo b;
	batch_analyze(g, &b);
	Op *f = tu_op(g, "f"), *r = tu_op(g, "r"), *m = tu_op(g, "m");
	CU_ASSERT_FALSE(b.replicable[f->id]);
	CU_ASSERT_EQUAL(batch_okind(&b, f, 0), OK_FULL);
	CU_ASSERT_EQUAL(batch_odim(&b, f, 0), 0);       /* the whole batch */
	CU_ASSERT_PTR_NOT_NULL(b.why[f->id]);
	CU_ASSERT_TRUE(b.replicable[r->id]);
	CU_ASSERT_EQUAL(batch_okind(&b, r, 0), OK_SPLIT);
	CU_ASSERT_FALSE(b.replicable[m->id]);
	CU_ASSERT_EQUAL(batch_odim(&b, m, 0), -1);      /* a plain scalar */
	CU_ASSERT_EQUAL(batch_okind(&b, tu_op(g, "n"), 0), OK_FULL);
	batch_free(&b);
	CU_ASSERT_EQUAL_FATAL(tu_run(g, "comm"), 0);
	CU_ASSERT_EQUAL(ty(g, "r/rep0")->dims[0], 4);
	CU_ASSERT_EQUAL(ty(g, "r/rep1")->dims[0], 4);
	Op *cat = tu_op(g, "h/concat"), *sp = tu_op(g, "f/split");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cat);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
	CU_ASSERT_PTR_EQUAL(tu_op(g, "f")->in[0].src, cat);
	CU_ASSERT_STRING_EQUAL(devof(g, "f/split"), "m0/gpu0");
	CU_ASSERT_PTR_EQUAL(tu_op(g, "r/rep0")->in[0].src, sp);
	Op *t = tu_op(g, "r/rep1")->in[0].src;
	CU_ASSERT_STRING_EQUAL(t->type, "Transfer");
	CU_ASSERT_PTR_EQUAL(t->in[0].src, sp);
	CU_ASSERT_EQUAL(t->in[0].idx, 1);
	CU_ASSERT_EQUAL(ty(g, "n/rep1")->rank, 0);
	graph_free(g);
}

static void test_batch_rules_new(void)
{
	/* qkv[0] of a packed projection: GatherV2 of params [3,8,4] (batch
	 * at dim 1) at a scalar index along axis 0 -> [8,4], batch at 0.
	 * StridedSlice keeping the batch whole, shrinking dim 0 -> batch at
	 * 0.  _FusedConv2D and Unpack keep it; TopKV2 over the last dim. */
	Graph *g = tu_parse(CLUSTER4 "graph q {batch = 8} {\n"
		"  %p = Placeholder() {@batch_dim = 1} : f32[3,8,4]\n"
		"  %i = Const() {value = 0} : i32[]\n"
		"  %a = Const() {value = 0} : i32[]\n"
		"  %q = GatherV2(%p, %i, %a) : f32[8,4]\n"
		"  %b = Const() {value = [1, 0, 0]} : i32[3]\n"
		"  %e = Const() {value = [2, 8, 4]} : i32[3]\n"
		"  %s = Const() {value = [1, 1, 1]} : i32[3]\n"
		"  %ss = StridedSlice(%p, %b, %e, %s) {shrink_axis_mask = 1} : f32[8,4]\n"
		"  %bad = StridedSlice(%p, %b, %e, %s) {shrink_axis_mask = 2} : f32[1,4]\n"
		"  %u0, %u1, %u2 = Unpack(%p) {num = 3, axis = 0} : (f32[8,4], f32[8,4], f32[8,4])\n"
		"  %k = Const() {value = 2} : i32[]\n"
		"  %tv, %ti = TopKV2(%q, %k) : (f32[8,2], i32[8,2])\n"
		"}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	BatchInfo b;
	batch_analyze(g, &b);
	const char *split0[] = {"q", "ss", "u0", "u2", "tv"};
	for (int i = 0; i < 5; i++) {
		Op *op = tu_op(g, split0[i]);
		uint32_t k = strcmp(split0[i], "u2") == 0 ? 2 : 0;
		if (k)
			op = tu_op(g, "u0");
		CU_ASSERT_TRUE(b.replicable[op->id]);
		CU_ASSERT_EQUAL(batch_okind(&b, op, k), OK_SPLIT);
		CU_ASSERT_EQUAL(batch_odim(&b, op, k), 0);
	}
	CU_ASSERT_EQUAL(batch_okind(&b, tu_op(g, "tv"), 1), OK_SPLIT);
	/* Shrinking the batch's own dimension picks one sample: whole. */
	CU_ASSERT_FALSE(b.replicable[tu_op(g, "bad")->id]);
	batch_free(&b);
	graph_free(g);
}

/* Layer norm as Keras lays it out for FusedBatchNormV3: x [8, 3, 4]
 * (batch 8) as [1, 24, 4, 1] NCHW, a channel per row: the batch is in
 * the channel, so scale and offset (Consts of 24) slice along their
 * dimension 0, the empty mean and variance stay whole, y splits at 1,
 * the statistics and reserve spaces at 0; the gradient alike, its
 * scale and offset gradients per channel (split, not partial sums). */
static void test_batch_fbn_channel(void)
{
	Graph *g = tu_parse(CLUSTER4 "graph ln {batch = 8} {\n"
		"  %x = Placeholder() {@batch_dim = 0} : f32[8,3,4]\n"
		"  %dy = Placeholder() {@batch_dim = 0} : f32[8,3,4]\n"
		"  %s4 = Const() {value = [1, 24, 4, 1]} : i32[4]\n"
		"  %x4 = Reshape(%x, %s4) : f32[1,24,4,1]\n"
		"  %g4 = Reshape(%dy, %s4) : f32[1,24,4,1]\n"
		"  %ones = Const() {value = 1.0} : f32[24]\n"
		"  %zeros = Const() {value = 0.0} : f32[24]\n"
		"  %e = Const() : f32[0]\n"
		"  %y, %m, %v, %r1, %r2, %r3 = FusedBatchNormV3(%x4, %ones, %zeros, %e, %e) "
		"{data_format = \"NCHW\", is_training = true} : "
		"(f32[1,24,4,1], f32[24], f32[24], f32[24], f32[24], f32[0])\n"
		"  %dx, %ds, %do, %q1, %q2 = FusedBatchNormGradV3(%g4, %x4, %ones, %r1, %r2, %r3) "
		"{data_format = \"NCHW\", is_training = true} : "
		"(f32[1,24,4,1], f32[24], f32[24], f32[0], f32[0])\n"
		"}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	BatchInfo b;
	batch_analyze(g, &b);
	Op *y = tu_op(g, "y"), *dx = tu_op(g, "dx");
	CU_ASSERT_TRUE(b.replicable[y->id]);
	CU_ASSERT_TRUE(b.replicable[dx->id]);
	CU_ASSERT_EQUAL(batch_okind(&b, y, 0), OK_SPLIT);
	CU_ASSERT_EQUAL(batch_odim(&b, y, 0), 1);
	for (uint32_t k = 1; k <= 4; k++) {
		CU_ASSERT_EQUAL(batch_okind(&b, y, k), OK_SPLIT);
		CU_ASSERT_EQUAL(batch_odim(&b, y, k), 0);
	}
	CU_ASSERT_EQUAL(batch_okind(&b, y, 5), OK_LOCAL);
	/* inputs: x4 at 1, ones and zeros at 0, the empty ones whole */
	const int8_t *id = &b.idim[b.inbase[y->id]];
	CU_ASSERT_EQUAL(id[0], 1);
	CU_ASSERT_EQUAL(id[1], 0);
	CU_ASSERT_EQUAL(id[2], 0);
	CU_ASSERT_EQUAL(id[3], -1);
	CU_ASSERT_EQUAL(id[4], -1);
	CU_ASSERT_EQUAL(batch_okind(&b, dx, 0), OK_SPLIT);
	CU_ASSERT_EQUAL(batch_odim(&b, dx, 0), 1);
	for (uint32_t k = 1; k <= 2; k++) {
		CU_ASSERT_EQUAL(batch_okind(&b, dx, k), OK_SPLIT);
		CU_ASSERT_EQUAL(batch_odim(&b, dx, k), 0);
	}
	id = &b.idim[b.inbase[dx->id]];
	CU_ASSERT_EQUAL(id[0], 1);
	CU_ASSERT_EQUAL(id[1], 1);
	CU_ASSERT_EQUAL(id[2], 0);
	CU_ASSERT_EQUAL(id[3], 0);
	CU_ASSERT_EQUAL(id[4], 0);
	CU_ASSERT_EQUAL(id[5], -1);
	batch_free(&b);
	graph_free(g);
}

/* A Slice, Pad or Roll whose batch is only in another input (begin,
 * paddings, shift computed from a batch of 2) is not split: it runs whole
 * (an out-of-range read once, caught by ASan). */
static void test_batch_slice_other_input(void)
{
	Graph *g = tu_parse(CLUSTER4 "graph s {batch = 2} {\n"
		"  %x = Const() {value = 1.0} : f32[4,4]\n"
		"  %p = Placeholder() {@batch_dim = 0} : i32[2]\n"
		"  %sz = Const() {value = [1, 1]} : i32[2]\n"
		"  %s = Slice(%x, %p, %sz) {@output = true} : f32[1,1]\n"
		"  %ax = Const() {value = [0, 1]} : i32[2]\n"
		"  %r = Roll(%x, %p, %ax) {@output = true} : f32[4,4]\n"
		"}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	BatchInfo b;
	batch_analyze(g, &b);
	CU_ASSERT_FALSE(b.replicable[tu_op(g, "s")->id]);
	CU_ASSERT_FALSE(b.replicable[tu_op(g, "r")->id]);
	batch_free(&b);
	graph_free(g);
}

static void test_colocate(void)
{
	/* %w, %r and %y form one colocation group; %r is pinned to gpu1, so
	 * whatever the placer, all three run there. */
	static const char *algos[] = {"single", "dpos", "metf", "adjusting",
				      "dp", "hybrid"};
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
		char p[64];
		snprintf(p, sizeof p, "annotate,place<algo=%s>", algos[a]);
		Graph *g = tu_parse(CLUSTER4
			"graph g {batch = 8} {\n"
			"  %x = Placeholder() {@batch_dim = 0} : f32[8,64]\n"
			"  %w = VariableV2() {@colocate = \"w\"} : f32[64,64]\n"
			"  %r = Identity(%w) {@colocate = \"w\", @device = \"m0/gpu1\"} : f32[64,64]\n"
			"  %h = MatMul(%x, %r) : f32[8,64]\n"
			"  %y = Relu(%h) {@colocate = \"w\"} : f32[8,64]\n"
			"}\n");
		CU_ASSERT_PTR_NOT_NULL_FATAL(g);
		CU_ASSERT_EQUAL_FATAL(tu_run(g, p), 0);
		static const char *names[] = {"w", "r", "y"};
		for (int i = 0; i < 3; i++) {
			const char *d = devof(g, names[i]);
			CU_ASSERT_PTR_NOT_NULL(d);
			if (d)
				CU_ASSERT_STRING_EQUAL(d, "m0/gpu1");
			CU_ASSERT_PTR_NULL(op_ann(g, tu_op(g, names[i]), ANN_REPLICAS));
		}
		graph_free(g);
	}
}

void suite_comm(void)
{
	CU_pSuite s = CU_add_suite("comm", NULL, NULL);
	CU_add_test(s, "data parallel, equal shares", test_dp_equal);
	CU_add_test(s, "data parallel, unequal shares", test_dp_shares);
	CU_add_test(s, "ConcatV2 for concat, AddN for sum", test_concat_vs_addn);
	CU_add_test(s, "Split and SplitV of an unreplicated tensor", test_split);
	CU_add_test(s, "parameter server", test_ps);
	CU_add_test(s, "views of sequence-first reshapes", test_views);
	CU_add_test(s, "random strategies", test_random_strategies);
	CU_add_test(s, "order on random DAGs", test_order_random_dags);
	CU_add_test(s, "order by upward rank", test_order_priority);
	CU_add_test(s, "colocation groups stay together", test_colocate);
	CU_add_test(s, "every op has a batch rule", test_batch_rules_cover_ops);
	CU_add_test(s, "gather, run whole, re-split", test_resplit);
	CU_add_test(s, "batch rules: gather, strided slice, unpack, top-k",
		    test_batch_rules_new);
	CU_add_test(s, "batch norm with the batch in its channel (layer norm)",
		    test_batch_fbn_channel);
	CU_add_test(s, "a slice whose batch is in another input runs whole",
		    test_batch_slice_other_input);
}
