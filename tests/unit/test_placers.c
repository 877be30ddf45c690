/* test_placers.c — the list-scheduling core (idle slots with insertion)
 * and the placers dpos, heft, dcp, mtopo, metf and metis on task graphs
 * built by hand, with answers worked out in the comments or taken from
 * the papers; then properties every placer of placers.def must have
 * (pinned nodes kept, EXIT_INFEASIBLE when nothing fits, valid
 * schedules on random DAGs).
 *
 * Clusters here have links of 1 byte/s and no latency, so an edge's bytes
 * are its transfer time in seconds, and costs are set per device type by
 * hand: the numbers are the papers' own. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/plan.h"
#include "passes/taskgraph.h"

#define NEAR(x, y) CU_ASSERT_DOUBLE_EQUAL((x), (y), 1e-9)

/* A fixed LCG: the same numbers every run. */
static uint32_t rnd(uint64_t *x, uint32_t m)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((*x >> 33) % m);
}

#define PLACER(name, fn, desc) int fn(const TaskGraph *t, const PlaceOpts *o, int *dev);
#include "passes/placers.def"
#undef PLACER

static const struct {
	const char *name;
	PlacerFn fn;
} placers[] = {
#define PLACER(name, fn, desc) {name, fn},
#include "passes/placers.def"
#undef PLACER
};
enum { NPLACERS = sizeof placers / sizeof placers[0] };

typedef struct Fix {
	Arena *a;
	Cluster *c;
	CostModel m;
} Fix;

/* ntypes device types P1..Pk, type i on machine mi with count[i] devices
 * (1 if count is NULL) of mem[i] bytes (1e12 if mem is NULL); every link
 * 1 byte/s, latency 0. */
static void fix_cluster(Fix *f, int ntypes, const int *count, const double *mem)
{
	f->a = arena_new();
	f->c = cluster_new(f->a, "t");
	for (int i = 0; i < ntypes; i++) {
		char name[8];
		snprintf(name, sizeof name, "P%d", i + 1);
		DevType ty = {.name = name, .flops = 1e12,
			      .memory = mem ? mem[i] : 1e12};
		CU_ASSERT_EQUAL_FATAL(cluster_add_type(f->c, f->a, &ty), i);
		snprintf(name, sizeof name, "m%d", i);
		Machine mc = {.name = name, .type = i, .count = count ? count[i] : 1,
			      .bw = 1, .lat = 0};
		CU_ASSERT_EQUAL_FATAL(cluster_add_machine(f->c, f->a, &mc), i);
	}
	if (ntypes > 1) {
		f->c->net_bw = 1;
		f->c->net_lat = 0;
	}
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	CU_ASSERT_EQUAL_FATAL(cluster_finalize(f->c, f->a, &d), 0);
	f->m = (CostModel){.c = f->c};
}

static void fix_free(Fix *f, TaskGraph *t)
{
	tg_free(t);
	arena_free(f->a);
}

/* Node v costs x on every device type. */
static void set_cost(TaskGraph *t, uint32_t v, double x)
{
	for (int ty = 0; ty < t->ntype; ty++)
		t->cost[(size_t)v * t->ntype + ty] = x;
}

/* ---- idle slots ---------------------------------------------------------- */

/* One device busy [2, 5) and [7, 10) (two nodes placed by hand): idle
 * [0, 2), [5, 7), [10, inf). */
static void test_slots_small(void)
{
	Fix f;
	fix_cluster(&f, 1, NULL, NULL);
	TaskGraph *t = tg_new(2, &f.m);
	set_cost(t, 0, 3);
	set_cost(t, 1, 3);
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[2];
	TgSched s;
	tg_sched_init(&s, t, dev);
	CU_ASSERT_EQUAL(dev[0], -1);
	tg_sched_put(&s, 1, 0, 7);
	tg_sched_put(&s, 0, 0, 2);
	NEAR(tg_sched_slot(&s, 0, 0, 2), 0);     /* [0, 2) is exactly long enough */
	NEAR(tg_sched_slot(&s, 0, 0, 3), 10);    /* no gap of 3 before 10 */
	NEAR(tg_sched_slot(&s, 0, 1, 1), 1);     /* inside [0, 2) */
	NEAR(tg_sched_slot(&s, 0, 1.5, 1), 5);   /* 1.5 + 1 > 2: next gap */
	NEAR(tg_sched_slot(&s, 0, 3, 2), 5);     /* ready while busy */
	NEAR(tg_sched_slot(&s, 0, 6, 1), 6);
	NEAR(tg_sched_slot(&s, 0, 6.5, 1), 10);
	NEAR(tg_sched_slot(&s, 0, 12, 100), 12);
	NEAR(tg_sched_slot(&s, 0, 3, 0), 3);     /* no work: no wait */
	NEAR(s.makespan, 10);
	tg_sched_free(&s);
	fix_free(&f, t);
}

/* Random intervals on one device, each at the slot the tree finds,
 * against the obvious linear search over the sorted busy list (integers, so every
 * comparison is exact).  A fixed LCG: the same sequence every run. */
static void test_slots_random(void)
{
	enum { N = 3000 };
	Fix f;
	fix_cluster(&f, 1, NULL, NULL);
	TaskGraph *t = tg_new(N, &f.m);
	uint64_t x = 12345;
	for (uint32_t v = 0; v < N; v++)
		set_cost(t, v, 1 + rnd(&x, 20));
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int *dev = malloc(sizeof(int) * N);
	double *bs = malloc(sizeof(double) * N), *be = malloc(sizeof(double) * N);
	uint32_t nb = 0;
	TgSched s;
	tg_sched_init(&s, t, dev);
	int bad = 0;
	for (uint32_t v = 0; v < N; v++) {
		double w = tg_cost(t, v, 0), r = rnd(&x, 4 * N);
		/* the obvious search: busy intervals sorted by start, the
		 * first gap that holds [max(gap start, r), + w) */
		double want = INFINITY, prev = 0;
		uint32_t at = nb;
		for (uint32_t i = 0; i <= nb && want == INFINITY; i++) {
			double st = prev > r ? prev : r;
			if (i == nb || st + w <= bs[i])
				want = st;
			if (i < nb)
				prev = be[i];
		}
		for (uint32_t i = 0; i < nb; i++)
			if (bs[i] > want) {
				at = i;
				break;
			}
		double got = tg_sched_slot(&s, 0, r, w);
		bad += got != want;
		tg_sched_put(&s, v, 0, got);
		memmove(bs + at + 1, bs + at, sizeof(double) * (nb - at));
		memmove(be + at + 1, be + at, sizeof(double) * (nb - at));
		bs[at] = got;
		be[at] = got + w;
		nb++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	tg_sched_free(&s);
	free(bs);
	free(be);
	free(dev);
	fix_free(&f, t);
}

/* ---- HEFT and DPOS on Topcuoglu, Hariri, Wu (TPDS 2002), Fig. 2 --------- */

static const double heft_cost[10][3] = {
	{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17}, {12, 13, 10},
	{13, 16, 9}, {7, 15, 11}, {5, 11, 14}, {18, 12, 20}, {21, 7, 16},
};
static const int heft_edge[15][3] = {
	{1, 2, 18}, {1, 3, 12}, {1, 4, 9}, {1, 5, 11}, {1, 6, 14},
	{2, 8, 19}, {2, 9, 16}, {3, 7, 23}, {4, 8, 27}, {4, 9, 23},
	{5, 9, 13}, {6, 8, 15}, {7, 10, 17}, {8, 10, 11}, {9, 10, 13},
};

/* Three processors P1, P2, P3 (one device type each); node i is n(i+1). */
static TaskGraph *heft_graph(Fix *f)
{
	fix_cluster(f, 3, NULL, NULL);
	TaskGraph *t = tg_new(10, &f->m);
	for (int v = 0; v < 10; v++)
		for (int p = 0; p < 3; p++)
			t->cost[v * 3 + p] = heft_cost[v][p];
	for (int e = 0; e < 15; e++)
		tg_add_edge(t, heft_edge[e][0] - 1, heft_edge[e][1] - 1,
			    heft_edge[e][2]);
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	return t;
}

/* The schedule s of the HEFT example against a table: order (1-based
 * node numbers) and, per node, processor (1-based), start, finish. */
static void check_table(const TgSched *s, const uint32_t *order,
			const uint32_t want_order[10], const double want[10][3])
{
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(order[i] + 1, want_order[i]);
		CU_ASSERT_EQUAL(s->dev[i] + 1, (int)want[i][0]);
		NEAR(s->start[i], want[i][1]);
		NEAR(s->finish[i], want[i][2]);
	}
}

/* The published upward ranks (Table 2 of the paper), HEFT's order
 * n1 n3 n4 n2 n5 n6 n9 n7 n8 n10 (n3 and n4 tie at 80: the earlier goes
 * first) and its schedule (Fig. 4(a)), makespan 80. */
static void test_heft_example(void)
{
	Fix f;
	TaskGraph *t = heft_graph(&f);
	double w[10], rank[10];
	tg_weights(t, TG_MEAN, w);
	tg_levels(t, w, TG_MEAN, NULL, rank);
	const double want_rank[10] = {108, 77, 80, 80, 69, 63 + 1.0 / 3,
				      42 + 2.0 / 3, 35 + 2.0 / 3, 44 + 1.0 / 3,
				      14 + 2.0 / 3};
	for (int v = 0; v < 10; v++)
		NEAR(rank[v], want_rank[v]);
	int dev[10];
	uint32_t order[10];
	PlaceOpts o = {0};
	TgSched s;
	tg_sched_init(&s, t, dev);
	CU_ASSERT_EQUAL(tg_heft(&s, &o, order), EXIT_OK);
	const uint32_t want_order[10] = {1, 3, 4, 2, 5, 6, 9, 7, 8, 10};
	/* n: processor, start, finish */
	const double sched[10][3] = {
		{3, 0, 9}, {1, 27, 40}, {3, 9, 28}, {2, 18, 26}, {3, 28, 38},
		{2, 26, 42}, {3, 38, 49}, {1, 57, 62}, {2, 56, 68}, {2, 73, 80},
	};
	check_table(&s, order, want_order, sched);
	NEAR(s.makespan, 80);
	tg_sched_free(&s);
	fix_free(&f, t);
}

/* DPOS on the same graph, worked by hand.
 *
 * Ranks with maximal costs w = (16 19 19 17 13 16 15 14 20 21) and the
 * maximal transfer time (= the edge's cost: every link is the same):
 *   n10 21; n9 20+13+21 = 54; n8 14+11+21 = 46; n7 15+17+21 = 53;
 *   n6 16+15+46 = 77; n5 13+13+54 = 80; n4 17+max(27+46, 23+54) = 94;
 *   n3 19+23+53 = 95; n2 19+max(19+46, 16+54) = 89;
 *   n1 16+max(18+89, 12+95, 9+94, 11+80, 14+77) = 123.
 * Critical path: n1, then the successor of largest rank each time:
 * n3 (95), n7 (53), n10.  Average cost over it: P1 (14+11+7+21)/4 = 13.25,
 * P2 (16+13+15+7)/4 = 12.75, P3 (9+19+11+16)/4 = 13.75: P2.
 * Order (ready node of largest rank): n1 n3 n4 n2 n5 n6 n9 n7 n8 n10.
 *   n1 CP -> P2 [0, 16];  n3 CP -> P2 [16, 29]
 *   n4 EFT: P1 16+9+13 = 38, P2 29+8 = 37, P3 25+17 = 42 -> P2 [29, 37]
 *   n2 EFT: P1 34+13 = 47, P2 37+19 = 56, P3 34+18 = 52 -> P1 [34, 47]
 *   n5 EFT: P1 from 27 no room before 34, 47+12 = 59; P2 37+13 = 50;
 *      P3 27+10 = 37 -> P3 [27, 37]
 *   n6 EFT: P1 (30+13 > 34) 47+13 = 60; P2 37+16 = 53; P3 37+9 = 46
 *      -> P3 [37, 46]
 *   n9 ready: P1 max(47, 37+23, 37+13) = 60 -> 78; P2 max(47+16, 37,
 *      50) = 63 -> 75; P3 63 -> 83 -> P2 [63, 75]
 *   n7 CP -> P2, ready 29: the idle slot [37, 63) holds 15 -> [37, 52]
 *      (insertion: decided after n9, runs before it)
 *   n8 ready: P1 max(47, 37+27, 46+15) = 64 -> 69; P2 66, the slot
 *      [52, 63) is past -> 75+11 = 86; P3 66+14 = 80 -> P1 [64, 69]
 *   n10 CP -> P2, ready max(52, 69+11, 75) = 80 -> [80, 87].
 * Makespan 87: worse here than HEFT's 80 and CPOP's 86 (the paper's
 * other critical-path heuristic), because pinning the whole critical
 * path to one processor serialises n4 and n9 behind it on P2. */
static void test_dpos_example(void)
{
	Fix f;
	TaskGraph *t = heft_graph(&f);
	double w[10], rank[10];
	tg_weights(t, TG_MAX, w);
	tg_levels(t, w, TG_MAX, NULL, rank);
	const double want_rank[10] = {123, 89, 95, 94, 80, 77, 53, 46, 54, 21};
	for (int v = 0; v < 10; v++)
		NEAR(rank[v], want_rank[v]);
	uint32_t cp[10];
	CU_ASSERT_EQUAL_FATAL(tg_critical_path(t, rank, cp), 4);
	CU_ASSERT_EQUAL(cp[0], 0);
	CU_ASSERT_EQUAL(cp[1], 2);
	CU_ASSERT_EQUAL(cp[2], 6);
	CU_ASSERT_EQUAL(cp[3], 9);
	int dev[10];
	uint32_t order[10];
	PlaceOpts o = {0};
	TgSched s;
	tg_sched_init(&s, t, dev);
	CU_ASSERT_EQUAL(tg_dpos(&s, &o, order), EXIT_OK);
	const uint32_t want_order[10] = {1, 3, 4, 2, 5, 6, 9, 7, 8, 10};
	const double sched[10][3] = {
		{2, 0, 16}, {1, 34, 47}, {2, 16, 29}, {2, 29, 37}, {3, 27, 37},
		{3, 37, 46}, {2, 37, 52}, {1, 64, 69}, {2, 63, 75}, {2, 80, 87},
	};
	check_table(&s, order, want_order, sched);
	NEAR(s.makespan, 87);
	tg_sched_free(&s);
	fix_free(&f, t);
}

/* The critical-path device changes when its memory is full.  Chain
 * a -> b -> c -> d (no bytes), each 1 GB permanent; P1 takes 1 s per
 * node and holds 2.5 GB, P2 takes 2 s and holds 100 GB.  From a, P1 fits
 * 2 nodes at average 1 s, P2 all 4 at 2 s: a and b go to P1.  At c, P1 is
 * full: the choice from c on is P2 (P1 fits none): c and d go there. */
static void test_dpos_cp_memory(void)
{
	Fix f;
	const double mem[2] = {2.5e9, 100e9};
	fix_cluster(&f, 2, NULL, mem);
	TaskGraph *t = tg_new(4, &f.m);
	for (uint32_t v = 0; v < 4; v++) {
		t->cost[v * 2] = 1;
		t->cost[v * 2 + 1] = 2;
		t->mem_perm[v] = 1e9;
		if (v)
			tg_add_edge(t, v - 1, v, 0);
	}
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[4];
	PlaceOpts o = {0};
	CU_ASSERT_EQUAL(placer_dpos(t, &o, dev), EXIT_OK);
	CU_ASSERT_EQUAL(dev[0], 0);
	CU_ASSERT_EQUAL(dev[1], 0);
	CU_ASSERT_EQUAL(dev[2], 1);
	CU_ASSERT_EQUAL(dev[3], 1);
	fix_free(&f, t);
}

/* ---- DCP (FD-DPS §4.2-4.3) ------------------------------------------------ */

/* Two identical devices, link 1 B/s.  Costs a 2, b 3, c 5, e 1, d 2;
 * edges a->b 8, a->c 1, a->e 1, b->d 1, c->d 1, e->d 1 (bytes = s).
 * Bottom levels over mean costs: d 2, b 3+1+2 = 6, c 5+1+2 = 8,
 * e 1+1+2 = 4, a 2+max(8+6, 1+8, 1+4) = 16.
 *  1. ready {a}: EST 0, DCPL 16, LST 16-16 = 0: critical.  Latest finish
 *     0+2 = 2, met on both devices.  No parent; the child of highest
 *     priority is b (EST 0+2+8 = 10, +6 = 16; c 3+8 = 11; e 3+4 = 7);
 *     both devices cost the same for a and b: rule 2, device 0, [0, 2].
 *     head: b 2+8 = 10, c 2+1 = 3, e 3.
 *  2. ready b (10+6 = 16), c (3+8 = 11), e (3+4 = 7): b first although
 *     its static bottom level is below c's (HEFT would take c).
 *     DCPL 16, EST 10 = LST 16-6: critical.  Latest finish 13: device 0
 *     (parent a there) [2, 5]; device 1 ready 2+8 = 10, ends 13: both
 *     meet it; rule 1 (a's device): 0.  head d 5+1 = 6.
 *  3. c: DCPL = max(5, c 11, e 7, d 6+2) = 11; EST 3 = LST 11-8: critical.
 *     Latest finish 8: device 0 is busy to 5, ends 10: no; device 1 ready
 *     3, [3, 8]: yes.  a's device is not in S; child d: rule 2, device 1.
 *     head d 8+1 = 9.
 *  4. e: DCPL = max(8, e 7, d 9+2) = 11; EST 3, LST 11-4 = 7: not
 *     critical (slack 4).  Latest finish 8: device 0 ready 2, idle from
 *     5: [5, 6]; device 1 busy [3, 8]: ends 9.  Rule 1: device 0.
 *  5. d: DCPL 11, EST 9 = LST 11-2.  Device 0 ready max(5, 6, 8+1) = 9,
 *     ends 11; device 1 ready max(5+1, 6+1, 8) = 8, ends 10; both hold a
 *     parent: the earlier finish, device 1, [8, 10].  Makespan 10. */
static void test_dcp_example(void)
{
	Fix f;
	const int two = 2;
	fix_cluster(&f, 1, &two, NULL);
	enum { A, B, C, D, E };
	TaskGraph *t = tg_new(5, &f.m);
	set_cost(t, A, 2);
	set_cost(t, B, 3);
	set_cost(t, C, 5);
	set_cost(t, D, 2);
	set_cost(t, E, 1);
	tg_add_edge(t, A, B, 8);
	tg_add_edge(t, A, C, 1);
	tg_add_edge(t, A, E, 1);
	tg_add_edge(t, B, D, 1);
	tg_add_edge(t, C, D, 1);
	tg_add_edge(t, E, D, 1);
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[5];
	TgDcpStep st[5];
	PlaceOpts o = {0};
	TgSched s;
	tg_sched_init(&s, t, dev);
	CU_ASSERT_EQUAL(tg_dcp(&s, &o, st), EXIT_OK);
	const struct {
		uint32_t node;
		double est, lst, dcpl;
		bool crit;
		int dev, rule;
		double start;
	} want[5] = {
		{A, 0, 0, 16, true, 0, 2, 0},
		{B, 10, 10, 16, true, 0, 1, 2},
		{C, 3, 3, 11, true, 1, 2, 3},
		{E, 3, 7, 11, false, 0, 1, 5},
		{D, 9, 9, 11, true, 1, 1, 8},
	};
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(st[i].node, want[i].node);
		NEAR(st[i].est, want[i].est);
		NEAR(st[i].lst, want[i].lst);
		NEAR(st[i].dcpl, want[i].dcpl);
		CU_ASSERT_EQUAL(st[i].critical, want[i].crit);
		CU_ASSERT_EQUAL(st[i].dev, want[i].dev);
		CU_ASSERT_EQUAL(st[i].rule, want[i].rule);
		NEAR(s.start[want[i].node], want[i].start);
	}
	NEAR(s.makespan, 10);
	tg_sched_free(&s);
	fix_free(&f, t);
}

/* One device, two independent nodes x, y of 2 s: DCPL 2 for both.
 * x (earlier) has no parent and no child: rule 3, [0, 2].  y must finish
 * by 0 + 2 = 2, but the device is busy until 2: S is empty, rule 4 (the
 * earliest finish), [2, 4]. */
static void test_dcp_rules_3_4(void)
{
	Fix f;
	fix_cluster(&f, 1, NULL, NULL);
	TaskGraph *t = tg_new(2, &f.m);
	set_cost(t, 0, 2);
	set_cost(t, 1, 2);
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[2];
	TgDcpStep st[2];
	PlaceOpts o = {0};
	TgSched s;
	tg_sched_init(&s, t, dev);
	CU_ASSERT_EQUAL(tg_dcp(&s, &o, st), EXIT_OK);
	CU_ASSERT_EQUAL(st[0].node, 0);
	CU_ASSERT_EQUAL(st[0].rule, 3);
	CU_ASSERT_EQUAL(st[1].node, 1);
	NEAR(st[1].dcpl, 2);
	CU_ASSERT_TRUE(st[1].critical);
	CU_ASSERT_EQUAL(st[1].rule, 4);
	NEAR(s.start[1], 2);
	NEAR(s.makespan, 4);
	tg_sched_free(&s);
	fix_free(&f, t);
}

/* ---- m-TOPO and m-ETF (Baechi) ------------------------------------------ */

/* Chain of four nodes, 3 GB permanent each; devices of 5, 100 and 100 GB.
 * Required 12 GB, largest node 3 GB: share 12/3 + 3 = 7 GB per device.
 * n0 -> device 0 (3 <= 5).  n1: 6 > 5 GB of device 0's memory -> device 1.
 * n2: device 1 at 6 <= 7.  n3: 9 > 7, the share -> device 2. */
static void test_mtopo(void)
{
	Fix f;
	const double G = 1e9, mem[3] = {5 * G, 100 * G, 100 * G};
	fix_cluster(&f, 3, NULL, mem);
	TaskGraph *t = tg_new(4, &f.m);
	for (uint32_t v = 0; v < 4; v++) {
		set_cost(t, v, 1);
		t->mem_perm[v] = 3 * G;
		if (v)
			tg_add_edge(t, v - 1, v, 1);
	}
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[4];
	PlaceOpts o = {0};
	CU_ASSERT_EQUAL(placer_mtopo(t, &o, dev), EXIT_OK);
	CU_ASSERT_EQUAL(dev[0], 0);
	CU_ASSERT_EQUAL(dev[1], 1);
	CU_ASSERT_EQUAL(dev[2], 1);
	CU_ASSERT_EQUAL(dev[3], 2);
	fix_free(&f, t);
}

/* Temporary memory counts by its largest: devices of 10 GB, three nodes
 * with 4 GB permanent + 4 GB temporary.  Required 24, share 24/2 + 8 = 20.
 * Device 0: n0 4+4 = 8; n1 8+4 = 12 > 10 GB -> device 1 (8); n2: 12 > 10
 * -> no device left: infeasible; --best-effort puts it on the device with
 * the most free memory (both have 2 GB: the first, 0). */
static void test_mtopo_temp(void)
{
	Fix f;
	const double G = 1e9, mem[2] = {10 * G, 10 * G};
	fix_cluster(&f, 2, NULL, mem);
	TaskGraph *t = tg_new(3, &f.m);
	for (uint32_t v = 0; v < 3; v++) {
		t->mem_perm[v] = 4 * G;
		t->mem_temp[v] = 4 * G;
	}
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[3];
	PlaceOpts o = {0};
	CU_ASSERT_EQUAL(placer_mtopo(t, &o, dev), EXIT_INFEASIBLE);
	o.best_effort = true;
	CU_ASSERT_EQUAL(placer_mtopo(t, &o, dev), EXIT_OK);
	CU_ASSERT_EQUAL(dev[0], 0);
	CU_ASSERT_EQUAL(dev[1], 1);
	CU_ASSERT_EQUAL(dev[2], 0);
	fix_free(&f, t);
}

/* Two identical devices of 2.5 GB.  Chain a -> b -> c (1 s each, 100 B
 * = 100 s per edge, 1 GB permanent each) and z (5 s, no memory, no
 * edges).  Bottom levels: a 203, b 102, c 1, z 5.
 *  1. a and z can start at 0 on either device; a has the larger bottom
 *     level; same finish on both: device 0, [0, 1].
 *  2. device 0's best: b (ready 1, avail 1) at 1; device 1's: z at 0 (b
 *     would wait for its input until 101): z on device 1, [0, 5].
 *  3. b: device 0 at 1, device 1 at 101: device 0, [1, 2].
 *  4. c: device 0 holds a and b, 2 GB; c would need 3 > 2.5: device 1,
 *     ready 2 + 100, [102, 103]. */
static void test_metf(void)
{
	Fix f;
	const int two = 2;
	const double mem = 2.5e9;
	fix_cluster(&f, 1, &two, &mem);
	enum { A, B, C, Z };
	TaskGraph *t = tg_new(4, &f.m);
	set_cost(t, A, 1);
	set_cost(t, B, 1);
	set_cost(t, C, 1);
	set_cost(t, Z, 5);
	t->mem_perm[A] = t->mem_perm[B] = t->mem_perm[C] = 1e9;
	tg_add_edge(t, A, B, 100);
	tg_add_edge(t, B, C, 100);
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[4];
	PlaceOpts o = {0};
	CU_ASSERT_EQUAL(placer_metf(t, &o, dev), EXIT_OK);
	CU_ASSERT_EQUAL(dev[A], 0);
	CU_ASSERT_EQUAL(dev[B], 0);
	CU_ASSERT_EQUAL(dev[Z], 1);
	CU_ASSERT_EQUAL(dev[C], 1);
	/* Without the memory limit c stays with its input. */
	f.c->types[0].memory = 1e12;
	CU_ASSERT_EQUAL(placer_metf(t, &o, dev), EXIT_OK);
	CU_ASSERT_EQUAL(dev[C], 0);
	fix_free(&f, t);
}

/* Baechi's channels.  Two devices, 1 B/s between them: a and z (1 s
 * each) pinned to device 0, b and c (1 s) pinned to device 1, a -> b and
 * z -> c carry 10 B.  a [0, 1], z [1, 2]; a's tensor crosses [1, 11],
 * b [11, 12]; z's waits for device 1's receive channel: [11, 21], c
 * [21, 22].  Makespan 22 s (13 s if the two transfers overlapped).  And
 * a tensor moved once serves its other consumers there: with y (1 s,
 * device 1) reading a too, nothing else crosses. */
static void test_metf_channels(void)
{
	Fix f;
	const int two = 2;
	fix_cluster(&f, 1, &two, NULL);
	enum { A, Z, B, C, Y };
	for (int with_y = 0; with_y < 2; with_y++) {
		TaskGraph *t = tg_new(with_y ? 5 : 4, &f.m);
		for (uint32_t v = 0; v < t->n; v++)
			set_cost(t, v, 1);
		t->pinned[A] = t->pinned[Z] = 0;
		t->pinned[B] = t->pinned[C] = 1;
		tg_add_edge(t, A, B, 10);
		tg_add_edge(t, Z, C, 10);
		if (with_y) {
			t->pinned[Y] = 1;
			tg_add_edge(t, A, Y, 10);
		}
		CU_ASSERT_TRUE_FATAL(tg_finish(t));
		int dev[5];
		char *buf = NULL;
		size_t len = 0;
		FILE *rf = open_memstream(&buf, &len);
		PlaceOpts o = {.report = rf};
		CU_ASSERT_EQUAL(placer_metf(t, &o, dev), EXIT_OK);
		fclose(rf);
		/* Without the cache y's copy of a would hold the channels
		 * [11, 21] and c would end at 32. */
		CU_ASSERT_PTR_NOT_NULL(strstr(buf, "estimated makespan 22 s"));
		free(buf);
		tg_free(t);
	}
	arena_free(f.a);
}

/* ---- METIS ---------------------------------------------------------------- */

/* Two chains of four nodes, 1000 B along each, joined by one 1-byte edge
 * (n3 -> n4): the only sensible 2-way cut is that edge. */
static void test_metis_cut(void)
{
	Fix f;
	const int two = 2;
	fix_cluster(&f, 1, &two, NULL);
	TaskGraph *t = tg_new(8, &f.m);
	for (uint32_t v = 0; v < 8; v++) {
		set_cost(t, v, 1);
		if (v && v != 4)
			tg_add_edge(t, v - 1, v, 1000);
	}
	tg_add_edge(t, 3, 4, 1);
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[8];
	PlaceOpts o = {.seed = 1};
	CU_ASSERT_EQUAL(placer_metis(t, &o, dev), EXIT_OK);
	for (uint32_t v = 1; v < 8; v++)
		CU_ASSERT_EQUAL(dev[v] == dev[0], v < 4);
	fix_free(&f, t);
}

/* The larger part goes to the faster device.  P1 takes 3 s per node, P2
 * 1 s: P2 is 3 times as fast, so it should get 3/4 of the work.  A chain
 * of 6 nodes (1000 B per edge) and one of 2, joined by 1 byte: the cut
 * at that byte gives exactly 6 : 2. */
static void test_metis_speed(void)
{
	Fix f;
	fix_cluster(&f, 2, NULL, NULL);
	TaskGraph *t = tg_new(8, &f.m);
	for (uint32_t v = 0; v < 8; v++) {
		t->cost[v * 2] = 3;
		t->cost[v * 2 + 1] = 1;
		if (v && v != 6)
			tg_add_edge(t, v - 1, v, 1000);
	}
	tg_add_edge(t, 5, 6, 1);
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[8];
	PlaceOpts o = {.seed = 1};
	CU_ASSERT_EQUAL(placer_metis(t, &o, dev), EXIT_OK);
	for (uint32_t v = 0; v < 8; v++)
		CU_ASSERT_EQUAL(dev[v], v < 6 ? 1 : 0);
	fix_free(&f, t);
}

/* Memory: two devices of equal speed, the second holds one node of 1 GB.
 * Eight nodes: a balanced cut (4 : 4) does not fit; the memory-aware
 * rerun or the repair must leave at most one node on device 1. */
static void test_metis_memory(void)
{
	Fix f;
	const double mem[2] = {100e9, 1.5e9};
	fix_cluster(&f, 2, NULL, mem);
	TaskGraph *t = tg_new(8, &f.m);
	for (uint32_t v = 0; v < 8; v++) {
		set_cost(t, v, 1);
		t->mem_perm[v] = 1e9;
		if (v)
			tg_add_edge(t, v - 1, v, 10);
	}
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	int dev[8];
	PlaceOpts o = {.seed = 1};
	CU_ASSERT_EQUAL(placer_metis(t, &o, dev), EXIT_OK);
	int on1 = 0;
	for (uint32_t v = 0; v < 8; v++)
		on1 += dev[v] == 1;
	CU_ASSERT_TRUE(on1 <= 1);
	FILE *null = fopen("/dev/null", "w");
	CU_ASSERT_FALSE(tg_mem_report(t, dev, null));
	fclose(null);
	fix_free(&f, t);
}

/* ---- every placer --------------------------------------------------------- */

/* A random DAG: n nodes, edges from each node to up to 3 later ones,
 * costs 1..9 differing per type, bytes 0..99; 3 device types on 2
 * machines.  Deterministic (fixed LCG). */
static TaskGraph *random_dag(Fix *f, uint32_t n, uint64_t seed)
{
	const int count[3] = {2, 1, 1};
	fix_cluster(f, 3, count, NULL);
	TaskGraph *t = tg_new(n, &f->m);
	uint64_t x = seed;
	for (uint32_t v = 0; v < n; v++) {
		for (int ty = 0; ty < 3; ty++)
			t->cost[(size_t)v * 3 + ty] = 1 + rnd(&x, 9);
		t->mem_perm[v] = rnd(&x, 1000);
		t->mem_temp[v] = rnd(&x, 1000);
		uint32_t k = rnd(&x, 4);
		for (uint32_t j = 0; j < k && v + 1 < n; j++) {
			uint32_t to = v + 1 + rnd(&x, n - v - 1 < 20 ? n - v - 1 : 20);
			tg_add_edge(t, v, to, rnd(&x, 100));
		}
	}
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
	return t;
}

static bool valid_devices(const TaskGraph *t, const int *dev)
{
	for (uint32_t v = 0; v < t->n; v++)
		if (dev[v] < 0 || dev[v] >= t->ndev ||
		    (t->pinned[v] >= 0 && dev[v] != t->pinned[v]))
			return false;
	return true;
}

/* Every placer keeps pinned nodes where they are pinned and puts every
 * other node on a real device. */
static void test_all_pinned(void)
{
	for (int i = 0; i < NPLACERS; i++) {
		Fix f;
		TaskGraph *t = random_dag(&f, 200, 7);
		for (uint32_t v = 0; v < t->n; v += 7)
			t->pinned[v] = (int)(v / 7) % t->ndev;
		int *dev = malloc(sizeof(int) * t->n);
		PlaceOpts o = {.seed = 1};
		int rc = placers[i].fn(t, &o, dev);
		if (rc != EXIT_OK || !valid_devices(t, dev))
			printf("\nplacer %s: rc %d or pinned node moved\n",
			       placers[i].name, rc);
		CU_ASSERT_EQUAL(rc, EXIT_OK);
		CU_ASSERT_TRUE(valid_devices(t, dev));
		free(dev);
		fix_free(&f, t);
	}
}

/* Nothing fits: a node larger than every device.  Every placer returns
 * EXIT_INFEASIBLE with every node on a real device (place.c reports the
 * memory per device from it); with --best-effort, EXIT_OK.  A pinned
 * node too large for its device is infeasible as well. */
static void test_all_infeasible(void)
{
	for (int i = 0; i < NPLACERS; i++) {
		for (int pin = 0; pin < 2; pin++) {
			Fix f;
			TaskGraph *t = random_dag(&f, 50, 3);
			t->mem_perm[10] = 2e12;
			if (pin)
				t->pinned[10] = 1;
			int *dev = malloc(sizeof(int) * t->n);
			PlaceOpts o = {.seed = 1};
			int rc = placers[i].fn(t, &o, dev);
			if (rc != EXIT_INFEASIBLE)
				printf("\nplacer %s (pinned %d): rc %d\n",
				       placers[i].name, pin, rc);
			CU_ASSERT_EQUAL(rc, EXIT_INFEASIBLE);
			CU_ASSERT_TRUE(valid_devices(t, dev));
			o.best_effort = true;
			CU_ASSERT_EQUAL(placers[i].fn(t, &o, dev), EXIT_OK);
			CU_ASSERT_TRUE(valid_devices(t, dev));
			free(dev);
			fix_free(&f, t);
		}
	}
}

/* Degenerate graphs: no node, one node. */
static void test_all_tiny(void)
{
	for (int i = 0; i < NPLACERS; i++)
		for (uint32_t n = 0; n < 2; n++) {
			Fix f;
			fix_cluster(&f, 2, NULL, NULL);
			TaskGraph *t = tg_new(n, &f.m);
			if (n)
				set_cost(t, 0, 1);
			CU_ASSERT_TRUE_FATAL(tg_finish(t));
			int dev[1] = {-1};
			PlaceOpts o = {0};
			CU_ASSERT_EQUAL(placers[i].fn(t, &o, dev), EXIT_OK);
			CU_ASSERT_TRUE(valid_devices(t, dev));
			fix_free(&f, t);
		}
}

/* The schedules of HEFT, DPOS and DCP on random DAGs are schedules: each
 * node starts after every input has arrived (finish + transfer time) and
 * no two nodes overlap on a device. */
static void test_schedules_valid(void)
{
	for (int algo = 0; algo < 3; algo++)
		for (uint64_t seed = 1; seed <= 5; seed++) {
			Fix f;
			TaskGraph *t = random_dag(&f, 300, seed);
			int *dev = malloc(sizeof(int) * t->n);
			PlaceOpts o = {0};
			TgSched s;
			tg_sched_init(&s, t, dev);
			int rc = algo == 0 ? tg_heft(&s, &o, NULL)
			       : algo == 1 ? tg_dpos(&s, &o, NULL)
					   : tg_dcp(&s, &o, NULL);
			CU_ASSERT_EQUAL(rc, EXIT_OK);
			int late = 0, overlap = 0;
			for (uint32_t v = 0; v < t->n; v++) {
				for (uint32_t k = t->pred_start[v];
				     k < t->pred_start[v + 1]; k++) {
					uint32_t u = t->pred[k].node;
					double arr = s.finish[u] +
						     tg_comm(t, dev[u], dev[v], t->pred[k].bytes);
					late += s.start[v] < arr - 1e-9;
				}
				NEAR(s.finish[v] - s.start[v], tg_cost(t, v, dev[v]));
			}
			/* O(n^2) overlap check: 300 nodes. */
			for (uint32_t a = 0; a < t->n; a++)
				for (uint32_t b = a + 1; b < t->n; b++)
					overlap += dev[a] == dev[b] &&
						   s.start[a] < s.finish[b] - 1e-9 &&
						   s.start[b] < s.finish[a] - 1e-9;
			CU_ASSERT_EQUAL(late, 0);
			CU_ASSERT_EQUAL(overlap, 0);
			tg_sched_free(&s);
			free(dev);
			fix_free(&f, t);
		}
}

/* tg_link_stats (per machine, the network, the overrides) equals the
 * statistics over every ordered pair of devices, worked out pair by pair
 * with cluster_link: two machines of different links, overrides inside
 * one machine (with and without its own latency) and across machines. */
static void test_link_stats(void)
{
	static const char y[] =
		"device_types:\n"
		"  A: {flops: 1 TFLOPS, memory: 1 GiB}\n"
		"machines:\n"
		"  - {name: p, type: A, count: 3, link: {bandwidth: 10 GB/s, latency: 2 us}}\n"
		"  - {name: q, type: A, count: 4, link: {bandwidth: 40 GB/s, latency: 1 us}}\n"
		"  - {name: r, type: A, count: 1, link: {bandwidth: 1 GB/s, latency: 9 us}}\n"
		"network: {bandwidth: 1 GB/s, latency: 20 us}\n"
		"links:\n"
		"  - {between: [p/gpu0, p/gpu2], bandwidth: 5 GB/s}\n"
		"  - {between: [q/gpu1, q/gpu3], bandwidth: 80 GB/s, latency: 0.5 us}\n"
		"  - {between: [p/gpu1, q/gpu0], bandwidth: 100 GB/s, latency: 30 us}\n";
	Arena *a = arena_new();
	Diag d;
	diag_init(&d, stderr, "c.yaml", y, sizeof y - 1);
	Cluster *c = cluster_parse_yaml(a, "c.yaml", y, sizeof y - 1, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	double lat[3] = {INFINITY, 0, 0}, inv[3] = {INFINITY, 0, 0};
	int pairs = 0;
	for (int i = 0; i < c->ndevs; i++)
		for (int j = 0; j < c->ndevs; j++) {
			if (i == j)
				continue;
			double bw, l;
			cluster_link(c, i, j, &bw, &l);
			lat[TG_MIN] = fmin(lat[TG_MIN], l);
			lat[TG_MAX] = fmax(lat[TG_MAX], l);
			inv[TG_MIN] = fmin(inv[TG_MIN], 1 / bw);
			inv[TG_MAX] = fmax(inv[TG_MAX], 1 / bw);
			lat[TG_MEAN] += l;
			inv[TG_MEAN] += 1 / bw;
			pairs++;
		}
	CU_ASSERT_EQUAL(pairs, 8 * 7);
	lat[TG_MEAN] /= pairs;
	inv[TG_MEAN] /= pairs;
	double l2[3], i2[3];
	tg_link_stats(c, l2, i2);
	for (int k = 0; k < 3; k++) {
		CU_ASSERT_DOUBLE_EQUAL(l2[k], lat[k], 1e-12 * lat[k]);
		CU_ASSERT_DOUBLE_EQUAL(i2[k], inv[k], 1e-12 * inv[k]);
	}
	/* by hand: the smallest latency is q's override (0.5 us), the
	 * largest the p-q override (30 us); the largest seconds per byte
	 * the network and r's (1 GB/s), the smallest the override 100 GB/s */
	CU_ASSERT_DOUBLE_EQUAL(l2[TG_MIN], 0.5e-6, 1e-18);
	CU_ASSERT_DOUBLE_EQUAL(l2[TG_MAX], 30e-6, 1e-18);
	CU_ASSERT_DOUBLE_EQUAL(i2[TG_MIN], 1 / 100e9, 1e-24);
	CU_ASSERT_DOUBLE_EQUAL(i2[TG_MAX], 1 / 1e9, 1e-21);
	arena_free(a);
}

/* plan_sort_ix, which orders devices by speed for dp, dp-best and the
 * hybrid's replica sets: stable, either direction, NaN last. */
static void test_sort_ix(void)
{
	double key[6] = {2, 5, 2, NAN, 7, 5};
	int ix[6] = {0, 1, 2, 3, 4, 5};
	plan_sort_ix(ix, 6, key, true);
	int down[6] = {4, 1, 5, 0, 2, 3};
	for (int i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(ix[i], down[i]);
	/* Stable with respect to ix's own order, not the indices. */
	int ix2[5] = {5, 2, 1, 0, 4};
	plan_sort_ix(ix2, 5, key, false);
	int up[5] = {2, 0, 5, 1, 4};
	for (int i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(ix2[i], up[i]);
	/* 4096 devices of 7 speeds: each run in order, fastest first. */
	int n = 4096, *big = malloc(sizeof(int) * (size_t)n);
	double *w = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; i++) {
		big[i] = i;
		w[i] = (double)(i * 5 % 7);
	}
	plan_sort_ix(big, n, w, true);
	for (int i = 1; i < n; i++)
		CU_ASSERT_TRUE(w[big[i - 1]] > w[big[i]] ||
			       (w[big[i - 1]] == w[big[i]] && big[i - 1] < big[i]));
	free(big);
	free(w);
}

void suite_placers(void)
{
	CU_pSuite s = CU_add_suite("placers", NULL, NULL);
	CU_add_test(s, "idle slots: hand-worked", test_slots_small);
	CU_add_test(s, "device order by speed (plan_sort_ix)", test_sort_ix);
	CU_add_test(s, "idle slots: against brute force", test_slots_random);
	CU_add_test(s, "HEFT: Topcuoglu et al. example, makespan 80",
		    test_heft_example);
	CU_add_test(s, "DPOS: HEFT example by hand, makespan 87",
		    test_dpos_example);
	CU_add_test(s, "DPOS: critical-path device memory", test_dpos_cp_memory);
	CU_add_test(s, "DCP: EST, LST, order, Find_Slot rules", test_dcp_example);
	CU_add_test(s, "DCP: rules 3 and 4", test_dcp_rules_3_4);
	CU_add_test(s, "m-TOPO: device memory and the even share", test_mtopo);
	CU_add_test(s, "m-TOPO: temporary memory, infeasible", test_mtopo_temp);
	CU_add_test(s, "m-ETF: earliest start, memory spill", test_metf);
	CU_add_test(s, "m-ETF: send/receive channels, cached tensors", test_metf_channels);
	CU_add_test(s, "METIS: the obvious 2-way cut", test_metis_cut);
	CU_add_test(s, "METIS: larger part to the faster device",
		    test_metis_speed);
	CU_add_test(s, "METIS: memory", test_metis_memory);
	CU_add_test(s, "every placer keeps pinned nodes", test_all_pinned);
	CU_add_test(s, "every placer: infeasible, best effort",
		    test_all_infeasible);
	CU_add_test(s, "every placer: empty and one-node graphs", test_all_tiny);
	CU_add_test(s, "HEFT, DPOS, DCP schedules are valid", test_schedules_valid);
	CU_add_test(s, "link statistics without the O(devices^2) pass",
		    test_link_stats);
}
