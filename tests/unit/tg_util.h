/* tg_util.h — small clusters and hand-built task graphs for the tests of
 * the Celeritas passes (test_fuse.c, test_celeritas_place.c).
 *
 * Every link moves 1 byte per second with no latency, so an edge of b
 * bytes takes exactly b seconds between devices and 0 on one device;
 * node costs are set directly, in seconds.  With small integers all
 * arithmetic is exact, which is what lets the tests compare times with
 * ==. */
#ifndef TG_UTIL_H
#define TG_UTIL_H

#include <CUnit/CUnit.h>
#include <stdio.h>

#include "passes/taskgraph.h"

/* ndev devices, device i of type type_of[i] (NULL: all type 0), one per
 * machine; type k has mem[k] bytes of memory. */
static inline Cluster *tgu_cluster(Arena *a, int ndev, const int *type_of,
				   int ntypes, const double *mem)
{
	Cluster *c = cluster_new(a, "test");
	for (int k = 0; k < ntypes; k++) {
		char name[16];
		snprintf(name, sizeof name, "T%d", k);
		DevType t = {.name = name, .flops = 1e12, .memory = mem[k],
			     .mem_bw = 1e12};
		cluster_add_type(c, a, &t);
	}
	for (int i = 0; i < ndev; i++) {
		char name[16];
		snprintf(name, sizeof name, "m%d", i);
		Machine m = {.name = name, .type = type_of ? type_of[i] : 0,
			     .count = 1, .bw = 1, .lat = 0};
		cluster_add_machine(c, a, &m);
	}
	c->net_bw = 1;
	c->net_lat = 0;
	Diag d;
	diag_init(&d, stderr, "test", NULL, 0);
	CU_ASSERT_EQUAL_FATAL(cluster_finalize(c, a, &d), 0);
	return c;
}

/* Node v costs w seconds on every device type. */
static inline void tgu_cost(TaskGraph *t, uint32_t v, double w)
{
	for (int k = 0; k < t->ntype; k++)
		t->cost[(size_t)v * (size_t)t->ntype + (size_t)k] = w;
}

/* A task graph of n nodes costing w[v] seconds (w NULL: 1 s) on ndev
 * devices of mem bytes each, with the arena and cost model it uses. */
typedef struct TguFix {
	Arena *a;
	CostModel m;
	TaskGraph *t;
} TguFix;

static inline void tgu_init(TguFix *f, uint32_t n, int ndev, const double *w,
			    double mem)
{
	f->a = arena_new();
	f->m = (CostModel){NULL, tgu_cluster(f->a, ndev, NULL, 1, &mem), NULL, NULL, 0};
	f->t = tg_new(n, &f->m);
	for (uint32_t v = 0; v < n; v++)
		tgu_cost(f->t, v, w ? w[v] : 1);
}

static inline void tgu_free(TguFix *f)
{
	tg_free(f->t);
	arena_free(f->a);
}

/* Adds n edges {from, to, bytes} and finishes the graph. */
typedef struct TguEdge {
	uint32_t a, b;
	double bytes;
} TguEdge;

static inline void tgu_edges(TaskGraph *t, const TguEdge *e, int n)
{
	for (int i = 0; i < n; i++)
		tg_add_edge(t, e[i].a, e[i].b, e[i].bytes);
	CU_ASSERT_TRUE_FATAL(tg_finish(t));
}

#endif
