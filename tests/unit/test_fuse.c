/* test_fuse.c — Celeritas §5.1: cpath, the CPD-TOPO order (Algorithm 1,
 * CPD_Topo), optimal breakpoints (Optimal_BP, eq. 4-6) on a chain and on
 * DAGs worked by hand and against an exhaustive search on random DAGs,
 * the Figure 4 case where naive merging closes a cycle, and the fuse pass
 * on gir input.  Times are seconds; links move 1 byte per second
 * (tg_util.h), so an edge of b bytes costs b. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "passes/passes.h"
#include "tg_util.h"

/* The DAG of the CPD-TOPO test, nodes a..g = 0..6:
 *   a(1) -1-> c(3) -1-> f(1) -1-> g(1)
 *   a    -2-> d(1) -1-> f
 *   b(2) -1-> e(1) -1-> g
 * (node weights in parentheses, edge times on the arrows). */
static void dag7(TguFix *f)
{
	tgu_init(f, 7, 2, (double[]){1, 2, 3, 1, 1, 1, 1}, 1e9);
	enum { A, B, C, D, E, F, G };
	tgu_edges(f->t, (TguEdge[]){{A, C, 1}, {A, D, 2}, {B, E, 1}, {C, F, 1},
				    {D, F, 1}, {E, G, 1}, {F, G, 1}}, 7);
}

/* The CPD-TOPO order of t with node weights w must be want[]. */
static void expect_order(const TaskGraph *t, const double *w,
			 const uint32_t *want)
{
	uint32_t order[64];
	tg_cpdtopo(t, w, order);
	for (uint32_t k = 0; k < t->n; k++)
		CU_ASSERT_EQUAL(order[k], want[k]);
}

static void test_cpath(void)
{
	/* tlevel (eq. 2): a 0, b 0, c 0+1+1 = 2, d 0+1+2 = 3, e 0+2+1 = 3,
	 *   f max(2+3+1, 3+1+1) = 6, g max(3+1+1, 6+1+1) = 8.
	 * blevel (eq. 3): g 1, f 1+1+1 = 3, e 1+1+1 = 3, d 1+1+3 = 5,
	 *   c 3+1+3 = 7, b 2+1+3 = 6, a 1+max(1+7, 2+5) = 9.
	 * cpath = tlevel + blevel: a 9, b 6, c 9, d 8, e 6, f 9, g 9. */
	TguFix f;
	dag7(&f);
	double cp[7];
	tg_cpath(f.t, NULL, cp);
	double want[7] = {9, 6, 9, 8, 6, 9, 9};
	for (int v = 0; v < 7; v++)
		CU_ASSERT_EQUAL(cp[v], want[v]);
	tgu_free(&f);
}

static void test_cpdtopo_order(void)
{
	/* Q = [a 9, b 6] (decreasing cpath).  Dequeue a; its children in
	 * increasing cpath are d 8, c 9, both now of indegree 0, each put at
	 * the head: Q = [c, d, b].  Dequeue c (f still waits for d): Q =
	 * [d, b].  Dequeue d; f is ready: Q = [f, b].  Dequeue f (g waits for
	 * e): Q = [b].  Then b, e, g.  Order: a c d f b e g.  Kahn's FIFO
	 * order (t->topo, m-TOPO) is a b c d e f g instead. */
	TguFix f;
	dag7(&f);
	expect_order(f.t, NULL, (uint32_t[]){0, 2, 3, 5, 1, 4, 6});
	for (uint32_t k = 0; k < 7; k++)
		CU_ASSERT_EQUAL(f.t->topo[k], k);
	/* Given weights, b = 20 is the heaviest source: cpath b = e = g =
	 * 20+1+1+1+1 = 24 > a's 9, so b's branch goes first: b e (g waits
	 * for f), then a c d f g. */
	expect_order(f.t, (double[]){1, 20, 3, 1, 1, 1, 1},
		     (uint32_t[]){1, 4, 0, 2, 3, 5, 6});
	tgu_free(&f);
}

static void test_cpdtopo_ties(void)
{
	/* 0 -> 1, 0 -> 2, 3 alone; all weights 1, edges 1 s.
	 * cpath 0 = 1+1+1 = 3, 1 = 2 = (1+1)+1 = 3, 3 = 1.  Sources: 0 (3)
	 * before 3 (1).  Children 1 and 2 tie: the lower id comes out first.
	 * Order 0 1 2 3. */
	TguFix f;
	tgu_init(&f, 4, 2, NULL, 1e9);
	tgu_edges(f.t, (TguEdge[]){{0, 2, 1}, {0, 1, 1}}, 2);
	expect_order(f.t, NULL, (uint32_t[]){0, 1, 2, 3});
	tgu_free(&f);
}

/* The summed time of the edges between different groups. */
static double cut(const TaskGraph *t, const uint32_t *group)
{
	double c = 0;
	for (uint32_t v = 0; v < t->n; v++)
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++)
			if (group[v] != group[t->succ[e].node])
				c += tg_edge_time(t, TG_MEAN, t->succ[e].bytes);
	return c;
}

/* A chain 0 -5-> 1 -1-> 2 -4-> 3 -2-> 4 -3-> 5 (edge times in seconds),
 * every node holding 1 byte, so a cap of k bytes allows k nodes. */
static void chain6(TguFix *f)
{
	tgu_init(f, 6, 2, NULL, 1e9);
	double e[5] = {5, 1, 4, 2, 3};
	for (uint32_t v = 0; v < 6; v++) {
		f->t->mem_perm[v] = 1;
		if (v < 5)
			tg_add_edge(f->t, v, v + 1, e[v]);
	}
	CU_ASSERT_TRUE_FATAL(tg_finish(f->t));
}

/* Optimal_BP over the CPD-TOPO order of t gives groups want[] (by node),
 * ngroups of them, cutting want_cut seconds of edges. */
static void expect_groups(const TaskGraph *t, uint32_t range, double cap,
			  const uint32_t *want, uint32_t ngroups,
			  double want_cut)
{
	uint32_t order[64], group[64];
	tg_cpdtopo(t, NULL, order);
	CU_ASSERT_EQUAL(tg_breakpoints(t, order, range, cap, group), ngroups);
	for (uint32_t v = 0; v < t->n; v++)
		CU_ASSERT_EQUAL(group[v], want[v]);
	CU_ASSERT_EQUAL(cut(t, group), want_cut);
}

/* The chain with node pin_a pinned to device 0 and pin_b to device 1
 * (-1: none); its CPD-TOPO order is 0..5. */
static void chain_case(uint32_t range, double cap, int pin_a, int pin_b,
		       const uint32_t *want, uint32_t ngroups, double want_cut)
{
	TguFix f;
	chain6(&f);
	if (pin_a >= 0)
		f.t->pinned[pin_a] = 0;
	if (pin_b >= 0)
		f.t->pinned[pin_b] = 1;
	expect_order(f.t, NULL, (uint32_t[]){0, 1, 2, 3, 4, 5});
	expect_groups(f.t, range, cap, want, ngroups, want_cut);
	tgu_free(&f);
}

static void test_breakpoints_chain(void)
{
	/* No limit: one group, nothing cut. */
	chain_case(200, INFINITY, -1, -1, (uint32_t[]){0, 0, 0, 0, 0, 0}, 1, 0);
	/* At most 4 nodes per group (memory cap 4 bytes): the single cuts
	 * leaving no run longer than 4 are 1-2 (1 s), 2-3 (4 s) and 3-4
	 * (2 s); 1-2 wins: [0 1][2 3 4 5]. */
	chain_case(200, 4, -1, -1, (uint32_t[]){0, 0, 1, 1, 1, 1}, 2, 1);
	/* At most 3 (cap 3 bytes): the only single cut is 2-3 (4 s); the
	 * cuts 1-2 and 3-4 cost 1 + 2 = 3 s, the least (1-2 with 4-5: 4 s;
	 * any set with 0-1: 5 s or more): [0 1][2 3][4 5]. */
	chain_case(200, 3, -1, -1, (uint32_t[]){0, 0, 1, 1, 2, 2}, 3, 3);
	/* The exploration range R = 3 limits runs the same way. */
	chain_case(3, INFINITY, -1, -1, (uint32_t[]){0, 0, 1, 1, 2, 2}, 3, 3);
	/* R = 1: every node alone; all 15 s cut. */
	chain_case(1, INFINITY, -1, -1, (uint32_t[]){0, 1, 2, 3, 4, 5}, 6, 15);
	/* Node 0 pinned to device 0, node 5 to device 1: they must part;
	 * the cheapest single cut is 1-2. */
	chain_case(200, INFINITY, 0, 5, (uint32_t[]){0, 0, 1, 1, 1, 1}, 2, 1);
	/* Pinned 3 (device 0) and 4 (device 1): the 2 s edge 3-4 is cut. */
	chain_case(200, INFINITY, 3, 4, (uint32_t[]){0, 0, 0, 0, 1, 1}, 2, 2);
}

/* Celeritas Figure 4: M -> N directly and through M -> Y -> Z -> N.
 * Merging M and N (the heavy edge) would give X -> Y -> Z -> X. */
enum { FM, FY, FZ, FN };
static void fig4(TguFix *f)
{
	tgu_init(f, 4, 2, NULL, 1e9);
	tgu_edges(f->t, (TguEdge[]){{FM, FN, 100}, {FM, FY, 1}, {FY, FZ, 1},
				    {FZ, FN, 1}}, 4);
}

static void test_breakpoints_fig4(void)
{
	/* The only topological order is M Y Z N.  Runs of at most 2 (R = 2):
	 * M and N can never share one, so the 100 s edge is always cut;
	 * [M Y][Z N] cuts 100 + 1 (Y -> Z) = 101, every other split cuts a
	 * third edge (102 or 103). */
	TguFix f;
	fig4(&f);
	expect_order(f.t, NULL, (uint32_t[]){FM, FY, FZ, FN});
	expect_groups(f.t, 2, INFINITY, (uint32_t[]){0, 0, 1, 1}, 2, 101);
	tgu_free(&f);
}

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

/* The optimum by the definition (eq. 4 and 6), cost(i, j) summed edge by
 * edge for every run: O(n^2 E). */
static double brute_force(const TaskGraph *t, const uint32_t *order,
			  uint32_t R, double cap)
{
	uint32_t n = t->n, pos[64];
	double S[65];
	for (uint32_t k = 0; k < n; k++)
		pos[order[k]] = k;
	S[0] = 0;
	for (uint32_t j = 1; j <= n; j++) {
		S[j] = INFINITY;
		double mem = 0;
		int pin = -1;
		for (uint32_t i = j; i-- > 0 && j - i <= R;) {
			uint32_t u = order[i];
			mem += t->mem_perm[u] + t->mem_temp[u];
			if (i < j - 1 && mem > cap)
				break;
			if (t->pinned[u] >= 0 && pin >= 0 && t->pinned[u] != pin)
				break;
			if (t->pinned[u] >= 0)
				pin = t->pinned[u];
			double c = 0;
			for (uint32_t k = i; k < j; k++) {
				uint32_t v = order[k];
				for (uint32_t e = t->succ_start[v];
				     e < t->succ_start[v + 1]; e++)
					if (pos[t->succ[e].node] >= j)
						c += tg_edge_time(t, TG_MEAN,
								  t->succ[e].bytes);
			}
			if (S[i] + c < S[j])
				S[j] = S[i] + c;
		}
	}
	return S[n];
}

static void test_breakpoints_random(void)
{
	/* 300 random DAGs of up to 40 nodes, random edge sizes (0: a control
	 * edge), memory, caps, ranges and pins: Optimal_BP's cut equals the
	 * exhaustive optimum, and its groups obey every rule. */
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int iter = 0; iter < 300; iter++) {
		uint32_t n = 2 + rnd(&seed) % 39;
		TguFix f;
		tgu_init(&f, n, 2, NULL, 1e9);
		TaskGraph *t = f.t;
		for (uint32_t v = 0; v < n; v++) {
			tgu_cost(t, v, 1 + rnd(&seed) % 9);
			t->mem_perm[v] = rnd(&seed) % 10;
			t->mem_temp[v] = rnd(&seed) % 3;
			if (rnd(&seed) % 8 == 0)
				t->pinned[v] = (int)(rnd(&seed) % 2);
			for (uint32_t u = 0; u < v; u++)
				if (rnd(&seed) % 5 == 0)
					tg_add_edge(t, u, v, rnd(&seed) % 10);
		}
		CU_ASSERT_TRUE_FATAL(tg_finish(t));
		uint32_t R = 1 + rnd(&seed) % (n + 2);
		double cap = rnd(&seed) % 3 ? 5 + rnd(&seed) % 40 : INFINITY;
		uint32_t order[64], group[64], pos[64];
		tg_cpdtopo(t, NULL, order);
		uint32_t ng = tg_breakpoints(t, order, R, cap, group);
		double best = brute_force(t, order, R, cap);
		CU_ASSERT_DOUBLE_EQUAL(cut(t, group), best, 1e-9 * (1 + best));
		/* Groups: numbered 0.. along the order, consecutive runs of at
		 * most R nodes, within the cap unless alone, one pinned device. */
		for (uint32_t k = 0; k < n; k++)
			pos[order[k]] = k;
		uint32_t start = 0;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t gk = group[order[k]];
			CU_ASSERT_TRUE(k == 0 ? gk == 0
				       : gk == group[order[k - 1]] ||
					 gk == group[order[k - 1]] + 1);
			if (k + 1 < n && group[order[k + 1]] == gk)
				continue;
			double mem = 0;
			int pin = -1;
			for (uint32_t i = start; i <= k; i++) {
				uint32_t u = order[i];
				mem += t->mem_perm[u] + t->mem_temp[u];
				if (t->pinned[u] >= 0) {
					CU_ASSERT_TRUE(pin < 0 || pin == t->pinned[u]);
					pin = t->pinned[u];
				}
			}
			CU_ASSERT_TRUE(k - start + 1 <= R);
			CU_ASSERT_TRUE(k == start || mem <= cap);
			start = k + 1;
		}
		CU_ASSERT_EQUAL(group[order[n - 1]] + 1, ng);
		/* Lemma 2: no edge runs from a later group to an earlier one. */
		for (uint32_t v = 0; v < n; v++)
			for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++)
				CU_ASSERT_TRUE(group[v] <= group[t->succ[e].node] &&
					       pos[v] < pos[t->succ[e].node]);
		tgu_free(&f);
	}
}

/* ---- the pass, on gir -------------------------------------------------- */

/* Figure 4 as a graph: M's output 0 (100 bytes) goes to N, output 1
 * (1 byte) to Y; Y -> Z -> N carry 1 byte each.  Two devices on a 1 GB/s
 * link; every op takes 1 ms and holds 1000 bytes (@mem) besides its
 * outputs (M 101 + 1000, Y, Z, N 1 + 1000). */
static const char *fig4_gir =
	"gir 1\n"
	"cluster \"two\" {\n"
	"  type \"GPU\" {flops = 10TFLOPS, memory = 1GB, mem_bw = 900GB/s}\n"
	"  machine \"m0\" {type = \"GPU\", count = 2, bandwidth = 1GB/s, latency = 0us}\n"
	"}\n"
	"graph fig4 {\n"
	"  %M = Work() {@cost = 1ms, @mem = 1000B} : (u8[100], u8[1])\n"
	"  %Y = Work(%M:1) {@cost = 1ms, @mem = 1000B} : u8[1]\n"
	"  %Z = Work(%Y) {@cost = 1ms, @mem = 1000B} : u8[1]\n"
	"  %N = Work(%M, %Z) {@cost = 1ms, @mem = 1000B} : u8[1]\n"
	"}\n";

static Graph *parse(const char *src)
{
	Diag d;
	diag_init(&d, stderr, "t.gir", src, strlen(src));
	Graph *g = gir_parse("t.gir", src, strlen(src), &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(graph_infer_types(g, &d), 0);
	CU_ASSERT_EQUAL_FATAL(graph_verify(g, &d), 0);
	return g;
}

static int run(Graph *g, const char *pipe)
{
	Pipeline p;
	char err[256];
	CU_ASSERT_TRUE_FATAL(pipeline_parse(pipe, &p, err, sizeof err));
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, stderr, "t.gir", NULL, 0);
	RunOptions o = {.verify_each = true};
	int rc = pipeline_run(&p, g, &m, &d, &o);
	pipeline_free(&p);
	return rc;
}

/* Runs pipe on g; the four ops named in names[] must get @group want[]. */
static void expect_fused(Graph *g, const char *pipe, const char *names[4],
			 const int64_t want[4])
{
	CU_ASSERT_EQUAL_FATAL(run(g, pipe), EXIT_OK);
	for (int i = 0; i < 4; i++) {
		uint32_t idx;
		Op *op = graph_lookup(g, names[i], &idx);
		CU_ASSERT_PTR_NOT_NULL_FATAL(op);
		Value *v = op_ann(g, op, ANN_GROUP);
		CU_ASSERT_TRUE(v && v->kind == V_INT && v->i == want[i]);
	}
}

static const char *MYZN[4] = {"M", "Y", "Z", "N"}, *ABCD[4] = {"a", "b", "c", "d"};

static void set_group(Graph *g, const char *name, int64_t k)
{
	uint32_t idx;
	op_set_ann(g, graph_lookup(g, name, &idx), ANN_GROUP,
		   val_int(g->arena, k));
}

static void test_fig4_cycle(void)
{
	Graph *g = parse(fig4_gir);
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	Diag d;
	diag_init(&d, f, "t.gir", NULL, 0);
	/* Naive merging of the heavy edge M -> N: X = {M, N}, Y, Z form the
	 * cycle X -> Y -> Z -> X, which tg_from_graph refuses. */
	set_group(g, "M", 0);
	set_group(g, "N", 0);
	set_group(g, "Y", 1);
	set_group(g, "Z", 2);
	CU_ASSERT_PTR_NULL(tg_from_graph(g, &m, true, &d));
	fflush(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "cycle"));
	/* Lemma 2: any cut of the order M Y Z N into runs is a DAG (all 8
	 * choices of breakpoints). */
	for (int cuts = 0; cuts < 8; cuts++) {
		int64_t k = 0;
		for (int i = 0; i < 4; i++) {
			if (i && (cuts >> (i - 1) & 1))
				k++;
			set_group(g, MYZN[i], k);
		}
		TaskGraph *t = tg_from_graph(g, &m, true, &d);
		CU_ASSERT_PTR_NOT_NULL(t);
		if (t)
			CU_ASSERT_EQUAL(t->n, (uint32_t)k + 1);
		tg_free(t);
	}
	fclose(f);
	free(buf);
	graph_free(g);
}

static void test_pass_fig4(void)
{
	/* range=2 (as in test_breakpoints_fig4): [M Y][Z N]. */
	Graph *g = parse(fig4_gir);
	expect_fused(g, "fuse<range=2>", MYZN, (int64_t[]){0, 0, 1, 1});
	/* A memory cap of 2500 bytes instead: two ops hold at most 1101 +
	 * 1001 = 2102 bytes, any three at least 3003, so again runs of two,
	 * and again [M Y][Z N]. */
	expect_fused(g, "fuse<mem=2500>", MYZN, (int64_t[]){0, 0, 1, 1});
	/* Defaults (R = 200, a quarter of 1 GB): one group, nothing cut. */
	expect_fused(g, "fuse", MYZN, (int64_t[]){0, 0, 0, 0});
	graph_free(g);
}

/* A chain a -> b -> c -> d of ops holding 200 bytes (@mem) plus a 1-byte
 * output each, on devices of 1000 and 2000 bytes. */
static const char *chain_gir =
	"gir 1\n"
	"cluster \"mixed\" {\n"
	"  type \"small\" {flops = 10TFLOPS, memory = 1000B, mem_bw = 900GB/s}\n"
	"  type \"big\" {flops = 10TFLOPS, memory = 2000B, mem_bw = 900GB/s}\n"
	"  machine \"m0\" {type = \"small\", count = 1, bandwidth = 1GB/s, latency = 0us}\n"
	"  machine \"m1\" {type = \"big\", count = 1, bandwidth = 1GB/s, latency = 0us}\n"
	"  network {bandwidth = 1GB/s, latency = 0us}\n"
	"}\n"
	"graph chain {\n"
	"  %a = Work() {@cost = 1ms, @mem = 200B, @group = 7} : u8[1]\n"
	"  %b = Work(%a) {@cost = 1ms, @mem = 200B, @group = 3} : u8[1]\n"
	"  %c = Work(%b) {@cost = 1ms, @mem = 200B} : u8[1]\n"
	"  %d = Work(%c) {@cost = 1ms, @mem = 200B} : u8[1]\n"
	"}\n";

static void test_pass_mem_fraction(void)
{
	/* mem=0.5 is half the smallest device (1000 B): 500 B.  Each op holds
	 * 201 B (its output leaves for the next op), so two fit (402) and
	 * three do not (603): [a b][c d].  Half the larger device would
	 * allow all four together.  The input's @group values (7, 3) are
	 * replaced. */
	Graph *g = parse(chain_gir);
	expect_fused(g, "fuse<mem=0.5>", ABCD, (int64_t[]){0, 0, 1, 1});
	/* Fusing again gives the same groups (fuse reads the op graph). */
	expect_fused(g, "fuse<mem=0.5>", ABCD, (int64_t[]){0, 0, 1, 1});
	/* 602 bytes: still two per run.  603 bytes: three fit, and [a b c][d]
	 * and [a][b c d] both cut one 1-byte edge; among equal costs the run
	 * that ends the order is the longest: [a][b c d]. */
	expect_fused(g, "fuse<mem=602>", ABCD, (int64_t[]){0, 0, 1, 1});
	expect_fused(g, "fuse<mem=603>", ABCD, (int64_t[]){0, 1, 1, 1});
	graph_free(g);
}

static void test_pass_pins(void)
{
	/* b pinned to m0/gpu0 and c to m1/gpu0: no group holds both, and
	 * place keeps them. */
	static const char *pins =
		"gir 1\n"
		"cluster \"two\" {\n"
		"  type \"GPU\" {flops = 10TFLOPS, memory = 1GB, mem_bw = 900GB/s}\n"
		"  machine \"m0\" {type = \"GPU\", count = 1, bandwidth = 1GB/s, latency = 0us}\n"
		"  machine \"m1\" {type = \"GPU\", count = 1, bandwidth = 1GB/s, latency = 0us}\n"
		"  network {bandwidth = 1GB/s, latency = 0us}\n"
		"}\n"
		"graph pins {\n"
		"  %a = Work() {@cost = 1ms} : u8[10]\n"
		"  %b = Work(%a) {@cost = 1ms, @device = \"m0/gpu0\"} : u8[1]\n"
		"  %c = Work(%b) {@cost = 1ms, @device = \"m1/gpu0\"} : u8[10]\n"
		"  %d = Work(%c) {@cost = 1ms} : u8[1]\n"
		"}\n";
	Graph *g = parse(pins);
	/* Cutting a-b or c-d costs 10 bytes, b-c only 1: [a b][c d]. */
	expect_fused(g, "fuse,place<algo=adjusting>", ABCD, (int64_t[]){0, 0, 1, 1});
	uint32_t idx;
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, graph_lookup(g, "a", &idx), ANN_DEVICE),
			       "m0/gpu0");
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, graph_lookup(g, "d", &idx), ANN_DEVICE),
			       "m1/gpu0");
	graph_free(g);
}

/* A parameter counts on its update's node, where comm keeps it: w
 * (8 x 16 floats, 512 B) is read by the forward group 0 and updated by
 * group 1, so group 0 holds what the backward reads, x and h (4 x 8 and
 * 4 x 16 floats, 384 B), and group 1 the 512 B of w and the 512 B of its
 * gradient g, which waits for the update (permanent: every gradient is
 * there at the end of the backward pass). */
static void test_param_on_update_node(void)
{
	Graph *g = parse(
		"gir 1\n"
		"cluster c {\n"
		"  type G {flops = 10TFLOPS, memory = 16GiB, mem_bw = 500GB/s}\n"
		"  machine m0 {type = G, count = 2, bandwidth = 20GB/s, latency = 2us}\n"
		"}\n"
		"graph r {batch = 4} {\n"
		"  %x = Placeholder() {@batch_dim = 0, @group = 0} : f32[4,8]\n"
		"  %w = VariableV2() {@group = 0} : f32[8,16]\n"
		"  %h = MatMul(%x, %w) {@group = 0} : f32[4,16]\n"
		"  %g = MatMul(%x, %h) {transpose_a = true, @role = bwd, @group = 1} : f32[8,16]\n"
		"  %u = ApplyGradientDescent(%w, %g) {@group = 1} : ()\n"
		"}\n");
	CostModel m = {g, g->cluster, NULL, NULL, 0};
	Diag d;
	diag_init(&d, stderr, "t.gir", NULL, 0);
	TaskGraph *t = tg_from_graph(g, &m, true, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(t->n, 2);
	uint32_t idx;
	uint32_t a = t->op_node[graph_lookup(g, "w", &idx)->id];
	uint32_t b = t->op_node[graph_lookup(g, "u", &idx)->id];
	CU_ASSERT_NOT_EQUAL(a, b);
	CU_ASSERT_DOUBLE_EQUAL(t->mem_perm[a], 384, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t->mem_param[a], 0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t->mem_perm[b], 1024, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t->mem_param[b], 512, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t->mem_grad[b], 512, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t->mem_grad[a], 0, 1e-9);
	uint32_t *own = tg_param_owners(g, t);
	CU_ASSERT_EQUAL(own[graph_lookup(g, "w", &idx)->id], b);
	CU_ASSERT_EQUAL(own[graph_lookup(g, "h", &idx)->id], a);
	free(own);
	tg_free(t);
	graph_free(g);
}

void suite_fuse(void)
{
	CU_pSuite s = CU_add_suite("fuse", NULL, NULL);
	CU_add_test(s, "cpath (eq. 2, 3)", test_cpath);
	CU_add_test(s, "CPD-TOPO order", test_cpdtopo_order);
	CU_add_test(s, "CPD-TOPO ties", test_cpdtopo_ties);
	CU_add_test(s, "Optimal_BP on a chain", test_breakpoints_chain);
	CU_add_test(s, "Optimal_BP on Figure 4", test_breakpoints_fig4);
	CU_add_test(s, "Optimal_BP vs exhaustive", test_breakpoints_random);
	CU_add_test(s, "Figure 4: naive merge cycles, runs do not", test_fig4_cycle);
	CU_add_test(s, "fuse pass: Figure 4", test_pass_fig4);
	CU_add_test(s, "fuse pass: mem fraction, re-fusing", test_pass_mem_fraction);
	CU_add_test(s, "fuse pass: pinned ops", test_pass_pins);
	CU_add_test(s, "task graph: a parameter on its update's node",
		    test_param_on_update_node);
}
