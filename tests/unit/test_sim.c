/* test_sim.c — the discrete-event simulator: transfers, link sharing,
 * @order, control edges, memory, OOM, errors, the lower bound, JSON.
 * Every expected time is worked out by hand in the comments (ms). */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

#define NEAR(x, y) CU_ASSERT_DOUBLE_EQUAL((x), (y), 1e-12)
#define MS 1e-3

/* nmach machines of per GPUs (memory mem bytes each); intra and network
 * links 1 GB/s, no latency. */
static Graph *mk_graph(int nmach, int per, double mem)
{
	Graph *g = graph_new("t");
	Arena *a = g->arena;
	Cluster *c = cluster_new(a, "t");
	DevType t = {.name = "GPU", .flops = 10e12, .memory = mem,
		     .mem_bw = 900e9};
	CU_ASSERT_EQUAL_FATAL(cluster_add_type(c, a, &t), 0);
	for (int i = 0; i < nmach; i++) {
		char name[16];
		snprintf(name, sizeof name, "m%d", i);
		Machine m = {.name = name, .type = 0, .count = per, .bw = 1e9,
			     .lat = 0};
		CU_ASSERT_EQUAL_FATAL(cluster_add_machine(c, a, &m), i);
	}
	c->net_bw = 1e9;
	c->net_lat = 0;
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	CU_ASSERT_EQUAL_FATAL(cluster_finalize(c, a, &d), 0);
	g->cluster = c;
	return g;
}

/* An op of unknown type "Work" with one output of `bytes` bytes, cost
 * `ms` milliseconds, on device `dev`, reading output 0 of each of in[]. */
static Op *op(Graph *g, const char *name, int64_t bytes, double ms,
	      const char *dev, int nin, ...)
{
	Op *o = graph_add_op(g, name, "Work", (uint32_t)nin, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	o->out[0] = type_make(g->arena, DT_U8, 1, (int64_t[]){bytes});
	o->types_given = true;
	va_list ap;
	va_start(ap, nin);
	for (int i = 0; i < nin; i++)
		o->in[i] = (Input){va_arg(ap, Op *), 0, false};
	va_end(ap);
	op_set_ann(g, o, ANN_COST, val_qty(g->arena, ms * MS, UNIT_SECONDS));
	if (dev)
		op_set_ann(g, o, ANN_DEVICE, val_str(g->arena, dev));
	return o;
}

static int run(Graph *g, SimResult *r)
{
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	int rc = sim_run(g, &m, r, &d);
	if (!rc)
		r->lower_bound = sim_bound_of(g, &m, false);
	return rc;
}

static char *run_capture(Graph *g, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, f, "t.gir", NULL, 0);
	SimResult r;
	*rc = sim_run(g, &m, &r, &d);
	if (*rc == 0)
		sim_free(&r);
	fclose(f);
	return buf;
}

static void test_sim_transfer(void)
{
	/* a (1 ms) -> 1 MB over 1 GB/s (1 ms) -> b (1 ms): 3 ms. */
	Graph *g = mk_graph(1, 2, 16e9);
	Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
	Op *b = op(g, "b", 1000000, 1, "m0/gpu1", 1, a);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.makespan, 3 * MS);
	NEAR(r.start[b->id], 2 * MS);
	NEAR(r.finish[a->id], 1 * MS);
	CU_ASSERT_EQUAL(r.dev[b->id], 1);
	NEAR(r.busy[0], 1 * MS);
	CU_ASSERT_EQUAL(r.nlinks, 1);
	if (r.nlinks == 1) {
		CU_ASSERT_STRING_EQUAL(r.link_name[0], "m0/gpu0->m0/gpu1");
		NEAR(r.link_busy[0], 1 * MS);
		NEAR(r.link_bytes[0], 1e6);
	}
	/* Lower bound: critical path 2 ms >= 2 ms of work / 2 devices. */
	NEAR(r.lower_bound, 2 * MS);
	CU_ASSERT_FALSE(r.oom);
	sim_free(&r);
	/* Both on one device: no transfer, 2 ms. */
	op_set_ann(g, b, ANN_DEVICE, val_str(g->arena, "m0/gpu0"));
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.makespan, 2 * MS);
	CU_ASSERT_EQUAL(r.nlinks, 0);
	sim_free(&r);
	graph_free(g);
}

/* g's cluster: na devices of type ta on machine ma, nb of tb on mb. */
static void two_types(Graph *g, const DevType *ta, int na, const DevType *tb, int nb)
{
	Arena *a = g->arena;
	Cluster *c = cluster_new(a, "t");
	CU_ASSERT_EQUAL_FATAL(cluster_add_type(c, a, ta), 0);
	CU_ASSERT_EQUAL_FATAL(cluster_add_type(c, a, tb), 1);
	Machine ma = {.name = "ma", .type = 0, .count = na, .bw = 1e9};
	Machine mb = {.name = "mb", .type = 1, .count = nb, .bw = 1e9};
	cluster_add_machine(c, a, &ma);
	cluster_add_machine(c, a, &mb);
	c->net_bw = 1e9;
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	CU_ASSERT_EQUAL_FATAL(cluster_finalize(c, a, &d), 0);
	g->cluster = c;
}

/* Types A (machine ma) and B (machine mb), na and nb devices. */
static Graph *mk_hetero(int na, int nb)
{
	Graph *g = graph_new("t");
	DevType ta = {.name = "A", .flops = 10e12, .memory = 16e9, .mem_bw = 900e9};
	DevType tb = {.name = "B", .flops = 5e12, .memory = 16e9, .mem_bw = 900e9};
	two_types(g, &ta, na, &tb, nb);
	return g;
}

/* @cost = {A = a ms, B = b ms}. */
static void cost2(Graph *g, Op *o, double a, double b)
{
	Value *v = val_dict(g->arena, 2);
	v->dict.items[0].key = graph_intern(g, "A");
	v->dict.items[0].val = val_qty(g->arena, a * MS, UNIT_SECONDS);
	v->dict.items[1].key = graph_intern(g, "B");
	v->dict.items[1].val = val_qty(g->arena, b * MS, UNIT_SECONDS);
	op_set_ann(g, o, ANN_COST, v);
}

static double bound(Graph *g, bool divisible)
{
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	return sim_bound_of(g, &m, divisible);
}

static void test_sim_problem_bound(void)
{
	/* One A, one B; three independent ops of 2 ms on A, 4 ms on B.
	 * Critical path 2 ms.  Work: A runs two (4 ms) while B runs one
	 * (4 ms); fractionally too, A's share a of the 6 ms of A-time and
	 * B's 2 (6 - a) balance at a = 4.  The sum of fastest times over
	 * the devices would say 3 ms. */
	Graph *g = mk_hetero(1, 1);
	Op *x = op(g, "x", 8, 0, NULL, 0);
	Op *y = op(g, "y", 8, 0, NULL, 0);
	Op *z = op(g, "z", 8, 0, NULL, 0);
	cost2(g, x, 2, 4);
	cost2(g, y, 2, 4);
	cost2(g, z, 2, 4);
	CU_ASSERT_DOUBLE_EQUAL(bound(g, false), 4 * MS, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(bound(g, true), 4 * MS, 1e-12);
	graph_free(g);
	/* A chain x -> y -> z: the critical path, 6 ms, decides when ops
	 * stay whole.  Divisible, each op split over A and B takes
	 * 1 / (1/2 + 1/4) = 4/3 ms: the path is 4 ms, as is the work. */
	g = mk_hetero(1, 1);
	x = op(g, "x", 8, 0, NULL, 0);
	y = op(g, "y", 8, 0, NULL, 1, x);
	z = op(g, "z", 8, 0, NULL, 1, y);
	cost2(g, x, 2, 4);
	cost2(g, y, 2, 4);
	cost2(g, z, 2, 4);
	CU_ASSERT_DOUBLE_EQUAL(bound(g, false), 6 * MS, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(bound(g, true), 4 * MS, 1e-12);
	graph_free(g);
	/* Two A, one B; four ops x of 1 ms on A, 10 on B; y 10 on A, 1 on
	 * B.  Whole ops: the x's on the two A (2 ms each), y on B: 2 ms. */
	g = mk_hetero(2, 1);
	for (int i = 0; i < 4; i++)
		cost2(g, op(g, arena_printf(g->arena, "x%d", i), 8, 0, NULL, 0), 1, 10);
	cost2(g, op(g, "y", 8, 0, NULL, 0), 10, 1);
	/* Fractionally B does take a share s of one x (10 s ms) besides y:
	 * (4 - s) / 2 = 10 s + 1, s = 2/21, T = 2 - 1/21 ms (the dual:
	 * lambda_A = 10/21, lambda_B = 1/21, 4 * 10/21 + 1/21). */
	CU_ASSERT_DOUBLE_EQUAL(bound(g, true), (2 - 1.0 / 21) * MS, 1e-12);
	graph_free(g);
}

/* One device of type A and one of B, priced by the analytic model: A
 * streams 1 GB/s with 1 ms per op, B 0.5 GB/s with b_over ms per op. */
static Graph *mk_overhead(double b_over)
{
	Graph *g = graph_new("t");
	DevType ta = {.name = "A", .flops = 10e12, .memory = 16e9, .mem_bw = 1e9,
		      .mem_eff = 1, .mem_eff_given = true,
		      .overhead = 1 * MS, .overhead_given = true};
	DevType tb = {.name = "B", .flops = 10e12, .memory = 16e9, .mem_bw = 0.5e9,
		      .mem_eff = 1, .mem_eff_given = true,
		      .overhead = b_over * MS, .overhead_given = true};
	two_types(g, &ta, 1, &tb, 1);
	Arena *a = g->arena;
	/* x -> r1 -> r2: each Relu reads and writes 500 kB (1 ms on A) */
	int64_t n = 125000;
	Op *x = graph_add_op(g, "x", "Placeholder", 0, 1);
	Op *r1 = graph_add_op(g, "r1", "Relu", 1, 1);
	Op *r2 = graph_add_op(g, "r2", "Relu", 1, 1);
	CU_ASSERT_FATAL(x && r1 && r2);
	Op *ops[] = {x, r1, r2};
	for (int i = 0; i < 3; i++) {
		ops[i]->out[0] = type_make(a, DT_F32, 1, &n);
		ops[i]->types_given = true;
	}
	r1->in[0] = (Input){x, 0, false};
	r2->in[0] = (Input){r1, 0, false};
	return g;
}

static void test_sim_problem_bound_overhead(void)
{
	/* Each Relu: A 1 + 1 = 2 ms (1 fixed), B 0.5 + 2 = 2.5 ms (0.5
	 * fixed).  Split over both, each piece pays its device's overhead:
	 * by T, A does (T - 1) / 1 of the op and B (T - 0.5) / 2; they sum
	 * to 1 at T = 1.5 ms (halves each), where 1 / (1/2 + 1/2.5) = 1.11
	 * ms would divide the overhead too.  The chain: 3 ms; the work
	 * (A a share f of 4 ms, B the rest of 5 ms: f = 5/9) 20/9 ms; whole
	 * ops, 2 x 2 = 4 ms. */
	Graph *g = mk_overhead(0.5);
	CU_ASSERT_DOUBLE_EQUAL(bound(g, true), 3 * MS, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(bound(g, false), 4 * MS, 1e-9);
	graph_free(g);
	/* B's overhead 3 ms: by T = 2 ms A alone has done the op; B, not
	 * started, adds nothing (2 ms, not 1 / (1/2 + 1/5) = 1.43). */
	g = mk_overhead(3);
	CU_ASSERT_DOUBLE_EQUAL(bound(g, true), 4 * MS, 1e-9);
	graph_free(g);
}

static void test_sim_order(void)
{
	/* gpu0: a (1) feeds c (1) and b (1); b -> x (3) on gpu1; c -> y (1)
	 * on gpu1, which also reads x.  All tensors 1 MB: 1 ms per transfer
	 * on the one link gpu0->gpu1.  c was created before b, so FIFO runs
	 * c first (ties by id):
	 *   a[0,1] c[1,2] b[2,3]; c->gpu1 [2,3]; b->gpu1 [3,4]; x[4,7];
	 *   y[7,8]: 8 ms.
	 * With @order a=0, b=1, c=2 on gpu0:
	 *   a[0,1] b[1,2] c[2,3]; b->gpu1 [2,3]; c->gpu1 [3,4]; x[3,6];
	 *   y[6,7]: 7 ms. */
	Graph *g = mk_graph(1, 2, 16e9);
	Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
	Op *c = op(g, "c", 1000000, 1, "m0/gpu0", 1, a);
	Op *b = op(g, "b", 1000000, 1, "m0/gpu0", 1, a);
	Op *x = op(g, "x", 1000000, 3, "m0/gpu1", 1, b);
	Op *y = op(g, "y", 1000000, 1, "m0/gpu1", 2, x, c);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.makespan, 8 * MS);
	NEAR(r.start[c->id], 1 * MS);
	NEAR(r.start[x->id], 4 * MS);
	sim_free(&r);
	op_set_ann(g, a, ANN_ORDER, val_int(g->arena, 0));
	op_set_ann(g, b, ANN_ORDER, val_int(g->arena, 1));
	op_set_ann(g, c, ANN_ORDER, val_int(g->arena, 2));
	/* gpu1 ordered too (x then y): x still waits for its input. */
	op_set_ann(g, x, ANN_ORDER, val_int(g->arena, 0));
	op_set_ann(g, y, ANN_ORDER, val_int(g->arena, 1));
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.makespan, 7 * MS);
	NEAR(r.start[b->id], 1 * MS);
	NEAR(r.start[x->id], 3 * MS);
	NEAR(r.start[y->id], 6 * MS);
	sim_free(&r);
	/* An order that contradicts the data edges deadlocks: an error. */
	op_set_ann(g, a, ANN_ORDER, val_int(g->arena, 5));
	int rc;
	char *e = run_capture(g, &rc);
	CU_ASSERT_EQUAL(rc, EXIT_BADINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "@order deadlocks device 'm0/gpu0': op 'b'"));
	free(e);
	graph_free(g);
}

static void test_sim_links(void)
{
	/* Two sources (0 ms) on gpu0 send 1 MB each to gpu1: the transfers
	 * share link gpu0->gpu1 and serialize: [0,1], [1,2]; b1[1,2],
	 * b2[2,3]: 3 ms. */
	Graph *g = mk_graph(1, 4, 16e9);
	Op *a1 = op(g, "a1", 1000000, 0, "m0/gpu0", 0);
	Op *a2 = op(g, "a2", 1000000, 0, "m0/gpu0", 0);
	Op *b1 = op(g, "b1", 1, 1, "m0/gpu1", 1, a1);
	Op *b2 = op(g, "b2", 1, 1, "m0/gpu1", 1, a2);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.makespan, 3 * MS);
	sim_free(&r);
	/* gpu2 -> gpu3 is a different link: both transfers [0,1], both
	 * consumers [1,2]: 2 ms. */
	op_set_ann(g, a2, ANN_DEVICE, val_str(g->arena, "m0/gpu2"));
	op_set_ann(g, b2, ANN_DEVICE, val_str(g->arena, "m0/gpu3"));
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.makespan, 2 * MS);
	CU_ASSERT_EQUAL(r.nlinks, 2);
	sim_free(&r);
	/* Two consumers of one tensor on one device share one transfer. */
	Op *b3 = op(g, "b3", 1, 1, "m0/gpu1", 1, a1);
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	/* b1 and b3 both wait for the one transfer [0,1]: [1,2], [2,3]. */
	NEAR(r.makespan, 3 * MS);
	NEAR(r.finish[b3->id], 3 * MS);
	CU_ASSERT_EQUAL(r.nlinks, 2);
	if (r.nlinks == 2)
		NEAR(r.link_bytes[0] + r.link_bytes[1], 2e6);
	sim_free(&r);
	(void)b1;
	graph_free(g);

	/* Across machines: m0/gpu0 -> m1/gpu0 and m0/gpu1 -> m1/gpu1 are
	 * different device pairs but share m0's NIC: 3 ms, as on one link. */
	g = mk_graph(2, 2, 16e9);
	a1 = op(g, "a1", 1000000, 0, "m0/gpu0", 0);
	a2 = op(g, "a2", 1000000, 0, "m0/gpu1", 0);
	op(g, "b1", 1, 1, "m1/gpu0", 1, a1);
	op(g, "b2", 1, 1, "m1/gpu1", 1, a2);
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.makespan, 3 * MS);
	CU_ASSERT_EQUAL(r.nlinks, 2);       /* m0/out and m1/in */
	if (r.nlinks == 2) {
		CU_ASSERT_STRING_EQUAL(r.link_name[0], "m0/out");
		CU_ASSERT_STRING_EQUAL(r.link_name[1], "m1/in");
		NEAR(r.link_busy[0], 2 * MS);
	}
	sim_free(&r);
	graph_free(g);
}

static void test_sim_control(void)
{
	/* A control edge across devices orders without a transfer: a[0,1],
	 * b[1,2] on the other device, although a's output is 1 MB. */
	Graph *g = mk_graph(1, 2, 16e9);
	Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
	Op *b = op(g, "b", 1, 1, "m0/gpu1", 1, a);
	b->in[0].ctrl = true;
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.makespan, 2 * MS);
	NEAR(r.start[b->id], 1 * MS);
	CU_ASSERT_EQUAL(r.nlinks, 0);
	sim_free(&r);
	graph_free(g);
}

static void test_sim_memory(void)
{
	/* Chain a -> b -> c on one device, 1 MB each: a's output is freed
	 * when b finishes, before c allocates: peak 2 MB, not 3 MB. */
	Graph *g = mk_graph(1, 1, 16e9);
	Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
	Op *b = op(g, "b", 1000000, 1, "m0/gpu0", 1, a);
	op(g, "c", 1000000, 1, "m0/gpu0", 1, b);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.peak_mem[0], 2e6);
	CU_ASSERT_FALSE(r.oom);
	sim_free(&r);
	/* Workspace (@mem) is held while the op runs: b holds 1 MB (a's) +
	 * 1 MB (its own) + 0.5 MB: 2.5 MB. */
	op_set_ann(g, b, ANN_MEM, val_qty(g->arena, 5e5, UNIT_BYTES));
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.peak_mem[0], 2.5e6);
	sim_free(&r);
	graph_free(g);

	/* Back to back on one device, outputs unused: a[0,1] frees its 2 MB
	 * at 1 ms, when b allocates its own: peak 2 MB, not 4 MB. */
	g = mk_graph(1, 1, 16e9);
	op(g, "a", 2000000, 1, "m0/gpu0", 0);
	op(g, "b", 2000000, 1, "m0/gpu0", 0);
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.peak_mem[0], 2e6);
	NEAR(r.makespan, 2 * MS);
	sim_free(&r);
	graph_free(g);

	/* A received tensor is allocated at the destination: a 1 MB on gpu0;
	 * on gpu1 the 1 MB copy plus b's 1 MB output. */
	g = mk_graph(1, 2, 16e9);
	a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
	op(g, "b", 1000000, 1, "m0/gpu1", 1, a);
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.peak_mem[0], 1e6);
	NEAR(r.peak_mem[1], 2e6);
	sim_free(&r);
	graph_free(g);

	/* Parameters and Adam state are resident from time 0: p (1 MB) + 2 MB
	 * of state, plus the gradient gr (1 MB) while it lives: 4 MB. */
	g = mk_graph(1, 1, 16e9);
	Op *p = op(g, "p", 1000000, 0, "m0/gpu0", 0);
	op_set_ann(g, p, ANN_ROLE, val_ident(g->arena, "param"));
	Op *gr = op(g, "gr", 1000000, 1, "m0/gpu0", 0);
	Op *u = graph_add_op(g, "u", "ApplyAdam", 2, 0);
	u->in[0] = (Input){p, 0, false};
	u->in[1] = (Input){gr, 0, false};
	op_set_ann(g, u, ANN_ROLE, val_ident(g->arena, "update"));
	op_set_ann(g, u, ANN_COST, val_qty(g->arena, 1 * MS, UNIT_SECONDS));
	op_set_ann(g, u, ANN_DEVICE, val_str(g->arena, "m0/gpu0"));
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.peak_mem[0], 4e6);
	NEAR(r.makespan, 2 * MS);
	sim_free(&r);
	graph_free(g);
}

static void test_sim_oom(void)
{
	/* 1 MB device, 2 MB tensor. */
	Graph *g = mk_graph(1, 1, 1e6);
	op(g, "a", 2000000, 1, "m0/gpu0", 0);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	CU_ASSERT_TRUE(r.oom);
	NEAR(r.peak_mem[0], 2e6);
	sim_free(&r);
	graph_free(g);
}

static void test_sim_errors(void)
{
	Graph *g = mk_graph(1, 1, 16e9);
	Op *a = op(g, "a", 1, 1, "m0/gpu0", 0);
	Op *b = op(g, "lonely", 1, 1, NULL, 1, a);
	b->loc = (Loc){"t.gir", 7, 3};
	int rc;
	char *e = run_capture(g, &rc);
	CU_ASSERT_EQUAL(rc, EXIT_BADINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "t.gir:7:3: error: op 'lonely' is not placed"));
	free(e);
	op_set_ann(g, b, ANN_DEVICE, val_str(g->arena, "m9/gpu0"));
	e = run_capture(g, &rc);
	CU_ASSERT_EQUAL(rc, EXIT_BADINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "unknown device 'm9/gpu0'"));
	free(e);
	graph_free(g);
}

static void test_sim_json(void)
{
	Graph *g = mk_graph(1, 2, 16e9);
	Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
	op(g, "b", 1000000, 1, "m0/gpu1", 1, a);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	sim_stats_json(f, g, &m, &r);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"simulated\": true"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"makespan_s\": 0.003,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"lower_bound_s\": 0.002,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"oom\": false"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"ops\": 2,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf,
		"{\"name\": \"m0/gpu1\", \"type\": \"GPU\", \"busy_s\": 0.001, "
		"\"peak_mem_bytes\": 2000000, \"memory_bytes\": 16000000000}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf,
		"{\"name\": \"m0/gpu0->m0/gpu1\", \"busy_s\": 0.001, "
		"\"bytes\": 1000000}"));
	free(buf);
	sim_free(&r);
	graph_free(g);
}

/* A pcc op (Transfer, AllReduce) on dev reading output 0 of src. */
static Op *comm_op(Graph *g, const char *name, const char *type,
		   const char *dev, Op *src)
{
	Op *o = graph_add_op(g, name, type, 1, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	o->opcode = op_lookup(type);
	o->out[0] = src->out[0];
	o->types_given = true;
	o->in[0] = (Input){src, 0, false};
	op_set_ann(g, o, ANN_DEVICE, val_str(g->arena, dev));
	return o;
}

static void set_coll(Graph *g, Op *o, int64_t key, const char *algo)
{
	op_set(g, o, "key", val_int(g->arena, key));
	op_set(g, o, "algo", val_ident(g->arena, algo));
	Value *l = val_list(g->arena, 2);
	l->list.items[0] = val_str(g->arena, "m0/gpu0");
	l->list.items[1] = val_str(g->arena, "m0/gpu1");
	op_set(g, o, "devices", l);
}

static void test_sim_transfer_op(void)
{
	/* gpu0: a (1 ms, 1 MB); t = Transfer(a) to gpu1 (1 ms on the link);
	 * gpu1: c (2 ms, independent) then b(t) (1 ms).  The transfer runs
	 * on the link during [1, 2] while gpu1 computes c during [0, 2]: b
	 * starts at 2 and the makespan is 3 ms (4 if a transfer took the
	 * device). */
	Graph *g = mk_graph(1, 2, 16e9);
	Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
	Op *t = comm_op(g, "t", "Transfer", "m0/gpu1", a);
	op(g, "c", 10, 2, "m0/gpu1", 0);
	Op *b = op(g, "b", 10, 1, "m0/gpu1", 1, t);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.start[t->id], 1 * MS);
	NEAR(r.finish[t->id], 2 * MS);
	NEAR(r.start[b->id], 2 * MS);
	NEAR(r.makespan, 3 * MS);
	NEAR(r.busy[1], 3 * MS);               /* c + b; not the transfer */
	CU_ASSERT_EQUAL(r.nlinks, 1);
	CU_ASSERT_EQUAL_FATAL(r.nxfers, 1);
	CU_ASSERT_EQUAL(r.xfers[0].op, a->id);
	CU_ASSERT_EQUAL(r.xfers[0].via, t->id);
	CU_ASSERT_EQUAL(r.xfers[0].src, 0);
	CU_ASSERT_EQUAL(r.xfers[0].dst, 1);
	CU_ASSERT_EQUAL(r.xfers[0].link, 0);
	NEAR(r.xfers[0].bytes, 1e6);
	/* Memory on gpu1: the copy (1 MB) from 1 ms until b finishes, c's
	 * 10 B during [0, 2], b's 10 B from 2 ms; at 2 ms c is freed before
	 * b allocates (finishes come first), so the peak is 1 MB + 10 B. */
	NEAR(r.peak_mem[1], 1e6 + 10);
	sim_free(&r);
	graph_free(g);
}

static void test_sim_allreduce(void)
{
	/* g0 on gpu0 (1 ms), g1 on gpu1 (3 ms), each 1 MB; a ring AllReduce
	 * over the two: 2 (n-1) (lat + bytes/n/bw) = 2 * 0.5 ms = 1 ms; it
	 * starts when the last member is ready (3 ms) and ends at 4; then
	 * u0, u1 (1 ms each): 5 ms.  gpu0 stays free for w (2 ms) during
	 * [1, 3]: collectives do not take the device's compute. */
	Graph *g = mk_graph(1, 2, 16e9);
	Op *g0 = op(g, "g0", 1000000, 1, "m0/gpu0", 0);
	Op *g1 = op(g, "g1", 1000000, 3, "m0/gpu1", 0);
	Op *a0 = comm_op(g, "g0/ar0", "AllReduce", "m0/gpu0", g0);
	Op *a1 = comm_op(g, "g0/ar1", "AllReduce", "m0/gpu1", g1);
	set_coll(g, a0, 7, "ring");
	set_coll(g, a1, 7, "ring");
	Op *w = op(g, "w", 10, 2, "m0/gpu0", 1, g0);
	Op *u0 = op(g, "u0", 10, 1, "m0/gpu0", 1, a0);
	op(g, "u1", 10, 1, "m0/gpu1", 1, a1);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.start[a0->id], 3 * MS);
	NEAR(r.start[a1->id], 3 * MS);
	NEAR(r.finish[a0->id], 4 * MS);
	NEAR(r.start[w->id], 1 * MS);
	NEAR(r.start[u0->id], 4 * MS);
	NEAR(r.makespan, 5 * MS);
	NEAR(r.busy[0], 4 * MS);               /* g0 + w + u0 */
	/* The ring uses both directed links for 1 ms each. */
	CU_ASSERT_EQUAL(r.nlinks, 2);
	for (int l = 0; l < r.nlinks; l++)
		NEAR(r.link_busy[l], 1 * MS);
	sim_free(&r);
	/* Hierarchical on one machine: one intra ring of two phases,
	 * 2 * 0.5 ms, and no inter-machine phase: also 1 ms. */
	set_coll(g, a0, 7, "hier");
	set_coll(g, a1, 7, "hier");
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.finish[a0->id] - r.start[a0->id], 1 * MS);
	sim_free(&r);
	graph_free(g);
}

static void test_sim_allreduce_blocking(void)
{
	/* gpu0: g0 (1 ms) then w (2 ms, after g0) and u0 (1 ms, after the
	 * AllReduce of g0 and g1); gpu1: g1 (1 ms), u1 (1 ms).  The ring
	 * takes 1 ms from 1 ms.  Overlapping (the default), w runs during
	 * [1, 3] beside the collective [1, 2]: u0 at [3, 4], makespan 4 ms.
	 * With 'collectives: blocking' the collective also holds gpu0's
	 * compute, so it and w run one after the other over [1, 4] and u0
	 * ends at 5 ms. */
	Graph *g = mk_graph(1, 2, 16e9);
	Op *g0 = op(g, "g0", 1000000, 1, "m0/gpu0", 0);
	Op *g1 = op(g, "g1", 1000000, 1, "m0/gpu1", 0);
	Op *a0 = comm_op(g, "g0/ar0", "AllReduce", "m0/gpu0", g0);
	Op *a1 = comm_op(g, "g0/ar1", "AllReduce", "m0/gpu1", g1);
	set_coll(g, a0, 7, "ring");
	set_coll(g, a1, 7, "ring");
	Op *w = op(g, "w", 10, 2, "m0/gpu0", 1, g0);
	Op *u0 = op(g, "u0", 10, 1, "m0/gpu0", 1, a0);
	op(g, "u1", 10, 1, "m0/gpu1", 1, a1);
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.start[a0->id], 1 * MS);
	NEAR(r.start[w->id], 1 * MS);
	NEAR(r.makespan, 4 * MS);
	sim_free(&r);
	g->cluster->types[0].coll_blocking = true;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	CU_ASSERT_TRUE(r.finish[a0->id] <= r.start[w->id] + 1e-12 ||
		       r.finish[w->id] <= r.start[a0->id] + 1e-12);
	NEAR(r.finish[u0->id], 5 * MS);
	NEAR(r.makespan, 5 * MS);
	sim_free(&r);
	graph_free(g);
}

/* Simulates g and checks its makespan and, when o is given, o's start. */
static void expect_run(Graph *g, const Op *o, double start, double makespan)
{
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	if (o)
		NEAR(r.start[o->id], start);
	NEAR(r.makespan, makespan);
	sim_free(&r);
}

static void test_sim_sends_idle(void)
{
	/* gpu0: a (1 ms, 1 MB), then c (2 ms, reads a); gpu1: b (1 ms)
	 * reads a, moved over 1 GB/s (1 ms).  By default the send leaves
	 * when a ends: link [1, 2], b [2, 3], c [1, 3], makespan 3 ms.
	 * With 'sends: idle' it waits for gpu0 to have nothing ready: c
	 * runs first [1, 3], the send [3, 4], b [4, 5].  The same with an
	 * explicit Transfer op.  Without c, gpu0 idles at 1 ms and the send
	 * leaves then: 3 ms again. */
	for (int explicit_op = 0; explicit_op < 2; explicit_op++) {
		Graph *g = mk_graph(1, 2, 16e9);
		Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
		Op *src = explicit_op ? comm_op(g, "t", "Transfer", "m0/gpu1", a) : a;
		Op *b = op(g, "b", 10, 1, "m0/gpu1", 1, src);
		Op *c = op(g, "c", 10, 2, "m0/gpu0", 1, a);
		expect_run(g, b, 2 * MS, 3 * MS);
		g->cluster->types[0].sends_idle = true;
		SimResult r;
		CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
		NEAR(r.start[c->id], 1 * MS);
		NEAR(r.start[b->id], 4 * MS);
		NEAR(r.makespan, 5 * MS);
		if (explicit_op)
			NEAR(r.start[src->id], 3 * MS);
		sim_free(&r);
		graph_remove_op(g, c);
		expect_run(g, b, 2 * MS, 3 * MS);
		graph_free(g);
	}
}

static void test_sim_sends_idle_zero_time(void)
{
	/* As above with 'sends: idle', but gpu0 runs a zero-time op z (a
	 * Reshape's) between a and c: z starts and ends at 1 ms, and c is
	 * ready then, so gpu0 is never idle before 3 ms.  The send waits
	 * for c: link [3, 4], b [4, 5], makespan 5 ms (before the fix, the
	 * idle check at 1 ms ran between z's start and its finish, found
	 * nothing running and let the send go: b [2, 3], makespan 3 ms).
	 * In the order pass's @order mode the same. */
	for (int ordered = 0; ordered < 2; ordered++) {
		Graph *g = mk_graph(1, 2, 16e9);
		g->cluster->types[0].sends_idle = true;
		Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
		Op *b = op(g, "b", 10, 1, "m0/gpu1", 1, a);
		Op *z = op(g, "z", 10, 0, "m0/gpu0", 1, a);
		Op *c = op(g, "c", 10, 2, "m0/gpu0", 1, z);
		if (ordered) {
			Op *seq[] = {a, z, c, b};
			for (int i = 0; i < 4; i++)
				op_set_ann(g, seq[i], ANN_ORDER, val_int(g->arena, i < 3 ? i : 0));
		}
		SimResult r;
		CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
		NEAR(r.start[z->id], 1 * MS);
		NEAR(r.start[c->id], 1 * MS);
		NEAR(r.start[b->id], 4 * MS);
		NEAR(r.makespan, 5 * MS);
		sim_free(&r);
		graph_free(g);
	}
}

static void test_sim_launch(void)
{
	/* A chain a -> b -> c on gpu0, costed by the analytic model: a
	 * writes 1 MB, b and c read 1 MB and write 1 MB, at 1 GB/s, each
	 * with a 1 ms overhead: 2, 3 and 3 ms, a [0, 2], b [2, 5], c [5, 8].
	 * With 'launch: 0.5 ms' the host launches a, b, c by 0.5, 1 and
	 * 1.5 ms, ahead of the device: only the first launch shows, a
	 * [0.5, 2.5], b [2.5, 5.5], c [5.5, 8.5].  With 'launch: 3 ms' the
	 * host is the bottleneck (launches done at 3, 6 and 9 ms): a [3, 5],
	 * b [6, 9], c [9, 12].  The device's busy time and the lower bound
	 * (8 ms) stay the kernels'; in @order mode the same. */
	for (int ordered = 0; ordered < 2; ordered++) {
		Graph *g = mk_graph(1, 2, 16e9);
		DevType *t = &g->cluster->types[0];
		t->mem_bw = 1e9;
		t->mem_eff_given = t->overhead_given = true;
		t->mem_eff = 1;
		t->overhead = 1 * MS;
		Op *a = op(g, "a", 1000000, 0, "m0/gpu0", 0);
		Op *b = op(g, "b", 1000000, 0, "m0/gpu0", 1, a);
		Op *c = op(g, "c", 1000000, 0, "m0/gpu0", 1, b);
		Op *seq[] = {a, b, c};
		for (int i = 0; i < 3; i++) {
			op_unset(g, seq[i], g->ann[ANN_COST]);
			if (ordered)
				op_set_ann(g, seq[i], ANN_ORDER, val_int(g->arena, i));
		}
		/* launch, then a's, b's and c's starts and the makespan */
		static const double want[3][5] = {{0, 0, 2, 5, 8},
						  {0.5, 0.5, 2.5, 5.5, 8.5},
						  {3, 3, 6, 9, 12}};
		for (int k = 0; k < 3; k++) {
			t->launch = want[k][0] * MS;
			SimResult r;
			CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
			for (int i = 0; i < 3; i++)
				NEAR(r.start[seq[i]->id], want[k][1 + i] * MS);
			NEAR(r.makespan, want[k][4] * MS);
			NEAR(r.busy[0], 8 * MS);
			NEAR(r.lower_bound, 8 * MS);
			sim_free(&r);
		}
		graph_free(g);
	}
}

static void test_sim_allreduce_order(void)
{
	/* Two collectives K1 (x) and K2 (y) over gpu0 and gpu1.  gpu0's
	 * collective stream orders K1 first, gpu1's K2 first: no member can
	 * start, and the simulator reports the deadlock.  Ordered
	 * consistently, it runs: K1 at [1, 2], K2 at [2, 3]. */
	Graph *g = mk_graph(1, 2, 16e9);
	Op *x0 = op(g, "x0", 1000000, 1, "m0/gpu0", 0);
	Op *x1 = op(g, "x1", 1000000, 1, "m0/gpu1", 0);
	Op *y0 = op(g, "y0", 1000000, 1, "m0/gpu0", 0);
	Op *y1 = op(g, "y1", 1000000, 1, "m0/gpu1", 0);
	Op *k[4] = {comm_op(g, "k1a", "AllReduce", "m0/gpu0", x0),
		    comm_op(g, "k1b", "AllReduce", "m0/gpu1", x1),
		    comm_op(g, "k2a", "AllReduce", "m0/gpu0", y0),
		    comm_op(g, "k2b", "AllReduce", "m0/gpu1", y1)};
	for (int i = 0; i < 4; i++)
		set_coll(g, k[i], i < 2 ? 1 : 2, "ring");
	int order[4] = {0, 1, 1, 0};  /* k1a first on gpu0, k2b on gpu1 */
	for (int i = 0; i < 4; i++)
		op_set_ann(g, k[i], ANN_ORDER, val_int(g->arena, order[i]));
	int rc;
	char *e = run_capture(g, &rc);
	CU_ASSERT_EQUAL(rc, EXIT_BADINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "@order deadlocks collectives of device"));
	free(e);
	op_set_ann(g, k[1], ANN_ORDER, val_int(g->arena, 0));
	op_set_ann(g, k[3], ANN_ORDER, val_int(g->arena, 1));
	/* x0, x1 finish at 2 ms (each device runs x then y, FIFO by id:
	 * x at [0, 1], y at [1, 2]); K1 runs [1, 2], K2 [2, 3]. */
	SimResult r;
	CU_ASSERT_EQUAL_FATAL(run(g, &r), 0);
	NEAR(r.start[k[0]->id], 1 * MS);
	NEAR(r.start[k[2]->id], 2 * MS);
	NEAR(r.makespan, 3 * MS);
	sim_free(&r);
	/* A member missing from the devices list is an error. */
	Value *l = val_list(g->arena, 1);
	l->list.items[0] = val_str(g->arena, "m0/gpu0");
	op_set(g, k[0], "devices", l);
	e = run_capture(g, &rc);
	CU_ASSERT_EQUAL(rc, EXIT_BADINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "AllReduce key 1: its members must be one per device"));
	free(e);
	graph_free(g);
}

static void test_sim_dispatch(void)
{
	/* Two machines of one GPU, 1 GB/s, dispatch latency 0.5 ms. */
	Graph *g = mk_graph(2, 1, 16e9);
	g->cluster->dispatch = 0.5 * MS;
	Op *a = op(g, "a", 1000000, 1, "m0/gpu0", 0);
	/* a alone on the first machine: no dispatch, 1 ms. */
	expect_run(g, NULL, 0, 1 * MS);
	/* a alone on m1: the call reaches it at 0.5, a runs 0.5..1.5, its
	 * end is back at 2.0. */
	op_set_ann(g, a, ANN_DEVICE, val_str(g->arena, "m1/gpu0"));
	expect_run(g, a, 0.5 * MS, 2 * MS);
	/* a on m0 (0..1), 1 MB to m1 (1..2), b on m1 (2..3; the call came
	 * at 0.5), back at 3.5. */
	op_set_ann(g, a, ANN_DEVICE, val_str(g->arena, "m0/gpu0"));
	Op *b = op(g, "b", 1000000, 1, "m1/gpu0", 1, a);
	expect_run(g, b, 2 * MS, 3.5 * MS);
	/* Without a dispatch latency: 3 ms. */
	g->cluster->dispatch = 0;
	expect_run(g, NULL, 0, 3 * MS);
	graph_free(g);

	/* A graph input on m1 (1 MB, 1 ms): the call at 0.5, its value from
	 * the client on m0 over 1 GB/s (1 ms) at 1.5, it runs 1.5..2.5, back
	 * at 3.0.  On m0 it needs neither: 1 ms. */
	g = mk_graph(2, 1, 16e9);
	g->cluster->dispatch = 0.5 * MS;
	Op *in = op(g, "in", 1000000, 1, "m1/gpu0", 0);
	op_set_ann(g, in, ANN_ROLE, val_ident(g->arena, "input"));
	expect_run(g, in, 1.5 * MS, 3 * MS);
	op_set_ann(g, in, ANN_DEVICE, val_str(g->arena, "m0/gpu0"));
	expect_run(g, NULL, 0, 1 * MS);
	graph_free(g);
}

void suite_sim(void)
{
	CU_pSuite s = CU_add_suite("sim", NULL, NULL);
	CU_add_test(s, "transfer between devices", test_sim_transfer);
	CU_add_test(s, "@order and FIFO", test_sim_order);
	CU_add_test(s, "problem lower bound", test_sim_problem_bound);
	CU_add_test(s, "problem lower bound: each piece pays the overhead",
		    test_sim_problem_bound_overhead);
	CU_add_test(s, "link sharing", test_sim_links);
	CU_add_test(s, "control edges", test_sim_control);
	CU_add_test(s, "memory", test_sim_memory);
	CU_add_test(s, "oom", test_sim_oom);
	CU_add_test(s, "errors", test_sim_errors);
	CU_add_test(s, "json", test_sim_json);
	CU_add_test(s, "Transfer op on a link", test_sim_transfer_op);
	CU_add_test(s, "AllReduce ring and hier", test_sim_allreduce);
	CU_add_test(s, "AllReduce holding a blocking device", test_sim_allreduce_blocking);
	CU_add_test(s, "sends waiting for an idle device", test_sim_sends_idle);
	CU_add_test(s, "sends waiting past a zero-time op", test_sim_sends_idle_zero_time);
	CU_add_test(s, "ops launched by the host ahead of the device", test_sim_launch);
	CU_add_test(s, "AllReduce order and errors", test_sim_allreduce_order);
	CU_add_test(s, "dispatch latency to other machines", test_sim_dispatch);
}
