/* simroute.h — the link resources of a route, for both simulators: the
 * event simulator (ir/sim.c) and the hybrid placer's strategy simulator
 * (passes/place_hybrid.c) (issue 13: one cluster route).  The route is
 * cluster_route's (ir/cluster.c): an override link of the cluster (one
 * hop), else the pair channel of two devices of one machine (one hop,
 * keyed densely per machine), else machine a's NIC out and machine b's
 * NIC in (two hops).  Each simulator numbers the hops as resources of
 * its own. */
#ifndef PCC_SIMROUTE_H
#define PCC_SIMROUTE_H

#include "ir.h"

typedef struct RouteTab {
	int64_t *pairbase;       /* per machine: its first dense pair key */
	int *local;              /* per device: its index in its machine */
	int *mcount;             /* per machine: devices (at least count) */
	int64_t npairs;          /* dense pair keys in all */
} RouteTab;

enum { HOP_LINK, HOP_PAIR, HOP_OUT, HOP_IN };
typedef struct Hop {
	int kind;                /* HOP_* */
	int64_t idx;             /* LINK: 2 * link + direction; PAIR: the
				  * dense key; OUT, IN: the machine */
} Hop;

void route_tab_init(RouteTab *t, const Cluster *c);
void route_tab_free(RouteTab *t);
/* The hops of a transfer a -> b (0 when a == b, else 1 or 2). */
int route_hops(const Cluster *c, const RouteTab *t, int a, int b,
	       Hop hop[2]);

#endif
