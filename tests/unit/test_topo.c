/* test_topo.c — topo_sort (Kahn's algorithm) and topo_cycle on DAGs
 * worked by hand. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "ir/ir.h"

/* 0->2, 1->2, 0->3, 2->4, 3->4 in CSR form */
static const uint32_t start5[] = {0, 2, 3, 4, 5, 5};
static const uint32_t to5[] = {2, 3, 2, 4, 4};

static void check_order(const uint32_t *got, uint32_t n, const uint32_t *want)
{
	for (uint32_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(got[i], want[i]);
}

/* FIFO: sources 0, 1; popping 0 frees 3 (2 still waits for 1), 1
 * frees 2, 3 leaves 4 one edge, 2 frees 4. */
static void test_fifo(void)
{
	TopoDag d = {.n = 5, .start = start5, .to = to5};
	uint32_t order[6], left[6];
	CU_ASSERT_EQUAL(topo_sort(&d, order, left), 5);
	check_order(order, 5, (const uint32_t[]){0, 1, 3, 2, 4});
	for (uint32_t v = 0; v < 5; v++)
		CU_ASSERT_EQUAL(left[v], 0);
}

static uint32_t head_cb(const void *arg, uint32_t e)
{
	return ((const uint32_t *)arg)[e];
}

/* The same DAG through a callback orders the same. */
static void test_callback(void)
{
	TopoDag d = {.n = 5, .start = start5, .to_fn = head_cb, .arg = to5};
	uint32_t order[6];
	CU_ASSERT_EQUAL(topo_sort(&d, order, NULL), 5);
	check_order(order, 5, (const uint32_t[]){0, 1, 3, 2, 4});
}

/* Keys: ready {0 (5), 1 (1)}: 1; then 0, which frees 2 (0) and 3 (3):
 * 2, then 3, then 4.  All keys equal with ties 4..0: ready {0, 1}: 1
 * (tie 3); then 0, freeing 2 (tie 2) and 3 (tie 1): 3, 2, 4. */
static void test_priority(void)
{
	const double key[] = {5, 1, 0, 3, 0};
	TopoDag d = {.n = 5, .start = start5, .to = to5, .key = key};
	uint32_t order[6];
	CU_ASSERT_EQUAL(topo_sort(&d, order, NULL), 5);
	check_order(order, 5, (const uint32_t[]){1, 0, 2, 3, 4});
	const double zero[] = {0, 0, 0, 0, 0};
	const uint64_t tie[] = {4, 3, 2, 1, 0};
	d.key = zero;
	d.tie = tie;
	CU_ASSERT_EQUAL(topo_sort(&d, order, NULL), 5);
	check_order(order, 5, (const uint32_t[]){1, 0, 3, 2, 4});
}

static bool not_one(const void *arg, uint32_t v)
{
	(void)arg;
	return v != 1;
}

/* Without source 1, node 2 never becomes ready, nor 4 behind it: the
 * order is 0, 3; 2 keeps its edge from 1, 4 its edge from 2. */
static void test_keep(void)
{
	TopoDag d = {.n = 5, .start = start5, .to = to5, .keep = not_one};
	uint32_t order[6], left[6];
	CU_ASSERT_EQUAL(topo_sort(&d, order, left), 2);
	check_order(order, 2, (const uint32_t[]){0, 3});
	CU_ASSERT_EQUAL(left[1], 0);
	CU_ASSERT_EQUAL(left[2], 1);
	CU_ASSERT_EQUAL(left[4], 1);
}

/* 0->1, 1->2, 2->1, 2->3: only 0 is ordered; 1, 2 (the cycle) and 3
 * (behind it) are left. */
static const uint32_t startc[] = {0, 1, 2, 4, 4};
static const uint32_t toc[] = {1, 2, 1, 3};
static const uint32_t fromc[] = {0, 1, 2, 2};

typedef struct Left {
	const uint32_t *left;
} Left;

/* The tail of the first edge into v that is left unordered. */
static uint32_t pred_left(const void *arg, uint32_t v)
{
	const Left *l = arg;
	for (uint32_t e = 0; e < 4; e++)
		if (toc[e] == v && l->left[fromc[e]])
			return fromc[e];
	return UINT32_MAX;
}

static uint32_t no_pred(const void *arg, uint32_t v)
{
	(void)arg;
	return v == 3 ? 2 : v == 2 ? 1 : UINT32_MAX;
}

/* From 3 the walk goes 3, 2, 1, 2: the cycle is 2 <- 1 <- 2. */
static void test_cycle(void)
{
	TopoDag d = {.n = 4, .start = startc, .to = toc};
	uint32_t order[5], left[5], path[5];
	CU_ASSERT_EQUAL(topo_sort(&d, order, left), 1);
	CU_ASSERT_EQUAL(order[0], 0);
	CU_ASSERT_EQUAL(left[0], 0);
	CU_ASSERT_EQUAL(left[1], 1);
	CU_ASSERT_EQUAL(left[2], 1);
	CU_ASSERT_EQUAL(left[3], 1);
	Left l = {left};
	CU_ASSERT_EQUAL(topo_cycle(4, 3, pred_left, &l, path), 2);
	check_order(path, 2, (const uint32_t[]){2, 1});
	/* a walk that ends (3, 2, 1, none): no cycle, path[0] its last node */
	CU_ASSERT_EQUAL(topo_cycle(4, 3, no_pred, NULL, path), 0);
	CU_ASSERT_EQUAL(path[0], 1);
	/* no start: path untouched */
	path[0] = 7;
	CU_ASSERT_EQUAL(topo_cycle(4, UINT32_MAX, no_pred, NULL, path), 0);
	CU_ASSERT_EQUAL(path[0], 7);
}

/* A self-loop is a cycle of one. */
static void test_self_loop(void)
{
	static const uint32_t st[] = {0, 1, 1};
	static const uint32_t to[] = {1};
	uint32_t order[3], left[3];
	/* 0->1 and, separately, nothing else: all ordered */
	TopoDag d = {.n = 2, .start = st, .to = to};
	CU_ASSERT_EQUAL(topo_sort(&d, order, left), 2);
	static const uint32_t st2[] = {0, 0, 1};
	TopoDag s = {.n = 2, .start = st2, .to = to};  /* 1->1 */
	CU_ASSERT_EQUAL(topo_sort(&s, order, left), 1);
	CU_ASSERT_EQUAL(order[0], 0);
	CU_ASSERT_EQUAL(left[1], 1);
}

/* The edges of the first DAG, as pairs in any order, give its CSR
 * form, each node's edges in the order given. */
static void test_csr(void)
{
	const uint32_t uv[5][2] = {{2, 4}, {0, 2}, {3, 4}, {1, 2}, {0, 3}};
	uint32_t st[7], adj[5];
	topo_csr(5, 5, &uv[0][0], &uv[0][1], 2, st, adj);
	check_order(st, 6, start5);
	check_order(adj, 5, (const uint32_t[]){2, 3, 2, 4, 4});
	const uint32_t from[] = {0, 0}, to[] = {3, 1};
	topo_csr(5, 2, from, to, 1, st, adj);
	check_order(st, 6, (const uint32_t[]){0, 2, 2, 2, 2, 2});
	check_order(adj, 2, (const uint32_t[]){3, 1});
}

void suite_topo(void)
{
	CU_pSuite s = CU_add_suite("topo", NULL, NULL);
	CU_add_test(s, "FIFO order", test_fifo);
	CU_add_test(s, "edges through a callback", test_callback);
	CU_add_test(s, "priority order and ties", test_priority);
	CU_add_test(s, "nodes left out", test_keep);
	CU_add_test(s, "cycle", test_cycle);
	CU_add_test(s, "self-loop", test_self_loop);
	CU_add_test(s, "CSR from edge pairs", test_csr);
}
