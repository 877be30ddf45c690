/* taskgraph.h — the weighted DAG the placement and ordering algorithms
 * work on: one node per op, or per fused group (@group) when the graph is
 * fused.  Node costs are per device type, edges carry bytes, memory is
 * split into what a node keeps for the whole iteration and what it holds
 * only briefly.  Algorithms written against it are unit-tested on DAGs
 * built by hand (tg_new/tg_add_edge/tg_finish), such as HEFT's 10-task
 * example, and run on real graphs through tg_from_graph. */
#ifndef PCC_TASKGRAPH_H
#define PCC_TASKGRAPH_H

#include "../ir/ir.h"

typedef struct TgEdge {
	uint32_t node;           /* the other end */
	double bytes;            /* data carried (0: a control edge) */
} TgEdge;

typedef struct TaskGraph {
	uint32_t n;              /* nodes */
	const CostModel *m;      /* cluster, for transfer times */
	const Cluster *c;
	int ndev, ntype;
	double *cost;            /* [n * ntype]: seconds on a device of type t */
	double *mem_perm;        /* [n]: bytes kept all iteration (parameters,
				  * optimizer state, activations saved for
				  * the backward pass) */
	double *mem_temp;        /* [n]: bytes held only until consumers run */
	int *pinned;             /* [n]: device index (pinned @device), or -1 */
	uint32_t *succ_start;    /* [n + 1], CSR into succ */
	TgEdge *succ;
	uint32_t *pred_start;    /* [n + 1], CSR into pred */
	TgEdge *pred;
	uint32_t *topo;          /* [n]: a topological order (stable by id) */
	const char **name;       /* [n]: op name, or "group K" */
	double *mem_param;       /* [n]: the parameters' bytes in mem_perm
				  * (on their update's node: comm keeps a
				  * parameter where its update runs) */
	double *mem_grad;        /* [n]: the bytes in mem_perm of gradients
				  * that wait for an update */
	uint32_t *op_node;       /* [graph ops]: node of each op, UINT32_MAX
				  * for dead ops; NULL for hand-built graphs */
	uint32_t nops;           /* length of op_node */
	double elat[3], einv[3]; /* per TgWeight: link latency and seconds per
				  * byte (tg_edge_time) */
	/* building */
	uint32_t nedge, capedge;
	struct { uint32_t a, b; double bytes; } *edges;
} TaskGraph;

/* ---- taskgraph.c -------------------------------------------------------- */
/* A graph of n nodes with zero costs, for tests and synthetic problems;
 * fill cost/mem/pinned, add edges, then tg_finish. */
TaskGraph *tg_new(uint32_t n, const CostModel *m);
void tg_add_edge(TaskGraph *t, uint32_t a, uint32_t b, double bytes);
/* Builds the CSR arrays and topo; parallel edges a->b are merged (bytes
 * add).  Returns false if the edges form a cycle. */
bool tg_finish(TaskGraph *t);
/* The head of successor edge e of the TaskGraph arg (TopoDag.to_fn). */
uint32_t tg_succ_node(const void *arg, uint32_t e);
/* From a graph: one node per live op, or per @group value when groups is
 * true and every live op has @group (ops without one get a node each).
 * A tensor consumed by several ops of one node counts once on the edge to
 * that node.  Pinned @device becomes pinned[]; a node with ops pinned to
 * two devices is reported on d and NULL returned. */
TaskGraph *tg_from_graph(Graph *g, const CostModel *m, bool groups, Diag *d);
/* owner[op] for parameters: the node of the first update reading it, as
 * comm places it; every other op: its own node.  Caller frees. */
uint32_t *tg_param_owners(Graph *g, const TaskGraph *t);
void tg_free(TaskGraph *t);
/* Seconds to move bytes from device a to device b (0 when a == b). */
double tg_comm(const TaskGraph *t, int a, int b, double bytes);
/* Cost of node v on device d. */
static inline double tg_cost(const TaskGraph *t, uint32_t v, int d)
{
	return t->cost[(size_t)v * (size_t)t->ntype + (size_t)t->c->devs[d].type];
}
/* Writes @device on every op from dev[node]; clears @replicas. */
void tg_apply(const TaskGraph *t, Graph *g, const int *dev);

/* Node weights for level computations: the minimum, mean or maximum
 * cost over the cluster's devices. */
typedef enum TgWeight { TG_MIN, TG_MEAN, TG_MAX } TgWeight;
void tg_weights(const TaskGraph *t, TgWeight how, double *w);
/* Edge time used by level computations: latency + bytes / bandwidth
 * over the cluster's device-to-device links: their mean (TG_MEAN), or the
 * smallest (TG_MIN) or largest (TG_MAX) latency and seconds per byte,
 * taken separately; 0 for a control edge. */
double tg_edge_time(const TaskGraph *t, TgWeight how, double bytes);
/* Those statistics (latency, seconds per byte) over the ordered pairs of
 * distinct devices, in O(machines + links), not O(devices^2): the pairs
 * inside a machine share its link, those across machines the network,
 * but for the pairs a link override names. */
void tg_link_stats(const Cluster *c, double lat[3], double inv[3]);
/* tlevel[v]: longest path from a source to v, excluding w[v];
 * blevel[v]: longest path from v to a sink, including w[v]; edges cost
 * tg_edge_time(how) (Celeritas §5.1, FastT's rank_u, FD-DPS's EST and
 * LST = cp - blevel).  Either output may be NULL.  Returns the critical
 * path length. */
double tg_levels(const TaskGraph *t, const double *w, TgWeight how,
		 double *tlevel, double *blevel);

/* Per-device memory while placing: permanent bytes add up, temporary
 * bytes count by their largest (Baechi's m-TOPO/m-ETF accounting). */
typedef struct TgMem {
	double *perm, *temp;     /* [ndev] */
} TgMem;
void tg_mem_init(const TaskGraph *t, TgMem *mm);
void tg_mem_free(TgMem *mm);
double tg_mem_cap(const TaskGraph *t, int d);          /* device memory */
double tg_mem_used(const TgMem *mm, int d);
bool tg_mem_fits(const TaskGraph *t, const TgMem *mm, int d, uint32_t v);
void tg_mem_add(const TaskGraph *t, TgMem *mm, int d, uint32_t v);
/* "device D (TYPE): needs X GiB, has Y GiB" lines for a placement that
 * does not fit, to f; returns true if some device is over. */
bool tg_mem_report(const TaskGraph *t, const int *dev, FILE *f);
/* The device with the most free memory (best effort when nothing fits). */
int tg_mem_roomiest(const TaskGraph *t, const TgMem *mm);

/* ---- placement algorithms (one file each in passes/) -------------------- */
typedef struct PlaceOpts {
	bool best_effort;        /* place even when memory does not fit */
	unsigned seed;
	FILE *report;            /* one-line reports, or NULL */
	Arena *scratch;
} PlaceOpts;
/* Fills dev[0..t->n) with device indices, respecting t->pinned.
 * Returns EXIT_OK; or EXIT_INFEASIBLE when no placement fits memory and
 * !o->best_effort (after tg_mem_report to stderr). */
typedef int (*PlacerFn)(const TaskGraph *t, const PlaceOpts *o, int *dev);

/* ---- listsched.c, place_dpos.c, place_dcp.c: list scheduling --------- */
/* The core HEFT (place_dpos.c), FastT's DPOS (place_dpos.c) and FD-DPS's
 * DCP (place_dcp.c) share: a schedule of nodes on devices, each device
 * running one node at a time, a node taking the earliest idle slot that
 * starts at or after its data-ready time and is long enough (insertion). */
typedef struct TgSlots TgSlots;          /* idle slots per device (slots.c) */
typedef struct TgSched {
	const TaskGraph *t;
	int *dev;                /* [n]: the caller's array; -1 = not placed */
	double *start, *finish;  /* [n]: seconds */
	TgMem mem;               /* pinned nodes are reserved from the start */
	TgSlots *slots;
	double makespan;         /* largest finish so far */
	uint32_t nplaced;
} TgSched;
/* An empty schedule; sets dev[0..n) to -1. */
void tg_sched_init(TgSched *s, const TaskGraph *t, int *dev);
void tg_sched_free(TgSched *s);
/* When every placed predecessor's output has reached device d. */
double tg_sched_ready(const TgSched *s, uint32_t v, int d);
/* Earliest start >= ready of an idle slot of d at least dur long
 * (dur <= 0: ready).  O(log n) expected. */
double tg_sched_slot(const TgSched *s, int d, double ready, double dur);
/* Earliest finish of v on d with insertion; *est (or NULL) its start. */
double tg_sched_eft(const TgSched *s, uint32_t v, int d, double *est);
/* The minimum-EFT device among those whose memory holds v (ties: lower
 * index), *fits = true; without one, the device with the most free
 * memory and *fits = false.  *est: v's start there. */
int tg_sched_best(const TgSched *s, uint32_t v, double *est, bool *fits);
/* Places v on d from start (occupies [start, start + cost), which must
 * be idle: an internal error otherwise), adds its memory (unless pinned:
 * reserved already). */
void tg_sched_put(TgSched *s, uint32_t v, int d, double start);
/* Device choice inside tg_list_schedule: a device, or -1 for min EFT. */
typedef int (*TgPickFn)(TgSched *s, uint32_t v, void *arg);
/* List scheduling: the ready node of largest rank first (ties: earlier
 * in t->topo), on its pinned device, else pick's device, else the
 * minimum-EFT device that fits; at its earliest idle slot there.  order
 * (or NULL) receives the decision order.  With rank = blevel over
 * TG_MEAN weights and pick = NULL this is HEFT.  Returns tg_mem_status. */
int tg_list_schedule(TgSched *s, const double *rank, TgPickFn pick, void *arg,
		     const PlaceOpts *o, uint32_t *order);
/* The body of a list-scheduling PlacerFn: run on a fresh schedule of t
 * into dev; reports "place<algo=ALGO>: estimated makespan" (devices
 * exclusive, links uncontended) when o->report.  Returns run's status. */
int tg_sched_placer(const TaskGraph *t, const PlaceOpts *o, int *dev,
		    const char *algo, int (*run)(TgSched *s, const PlaceOpts *o));
/* FastT §5.1's critical path: the source of largest rank, then each
 * time the successor of largest rank (ties: lower id).  Writes it to cp
 * (room for n) and returns its length. */
uint32_t tg_critical_path(const TaskGraph *t, const double *rank, uint32_t *cp);
/* r rounded to 40 significant bits, for comparing priorities: ranks that
 * are equal sums added in different orders (HEFT's n3 and n4, both 80)
 * tie, and the tie goes to a stated rule instead of to rounding noise. */
double tg_rank_key(double r);
/* Upward ranks (bottom levels) with node and edge weights `how`
 * (tg_weights, tg_edge_time): HEFT's rank_u with TG_MEAN, FastT's with
 * TG_MAX.  malloc'd, n entries. */
double *tg_rank_u(const TaskGraph *t, TgWeight how);
/* pos[v] = index of v in t->topo (malloc'd). */
uint32_t *tg_topo_pos(const TaskGraph *t);

/* Reserves every pinned node's memory on its device. */
void tg_mem_pinned(const TaskGraph *t, TgMem *mm);
/* EXIT_INFEASIBLE if some device is over its memory and !o->best_effort,
 * else EXIT_OK. */
int tg_mem_status(const TaskGraph *t, const TgMem *mm, const PlaceOpts *o);


/* place_dpos.c: HEFT and FastT's DPOS (Algorithm 1) on s, which
 * tg_sched_init prepared; order (or NULL) receives the decision order.
 * Return as tg_list_schedule. */
int tg_heft(TgSched *s, const PlaceOpts *o, uint32_t *order);
int tg_dpos(TgSched *s, const PlaceOpts *o, uint32_t *order);

/* place_dcp.c: FD-DPS's dynamic-critical-path scheduling on s; steps (or
 * NULL) receives one record per decision.  Return as tg_list_schedule. */
typedef struct TgDcpStep {
	uint32_t node;
	double est, lst;         /* at the decision (FD-DPS Formulas (6), (7)) */
	double dcpl;             /* Formula (10) */
	bool critical;           /* EST = LST */
	int dev;
	int rule;                /* Find_Slot rule (1)-(4) that chose dev; 0: pinned */
} TgDcpStep;
int tg_dcp(TgSched *s, const PlaceOpts *o, TgDcpStep *steps);

/* ---- Celeritas (celeritas.txt §5): CPD-TOPO, Optimal_BP, idle slots,
 * Adjusting Placement and Order-Place ------------------------------------ */

/* cpdtopo.c */
/* cpath[v] = tlevel[v] + blevel[v] (Celeritas eq. 2 and 3): node weights
 * w (NULL: the mean cost over the cluster's devices), TG_MEAN edge
 * times. */
void tg_cpath(const TaskGraph *t, const double *w, double *cpath);
/* CPD-TOPO (Celeritas Algorithm 1, CPD_Topo): a topological order of all
 * t->n nodes into order[], depth-first along the largest cpath, with
 * cpath from w as in tg_cpath.  Ties go to the lower node id. */
void tg_cpdtopo(const TaskGraph *t, const double *w, uint32_t *order);

/* fuse.c */
/* Optimal_BP (Celeritas Algorithm 1, eq. 4-6): cuts order[0..n) into runs
 * of at most range consecutive nodes whose summed memory (mem_perm +
 * mem_temp) is at most cap (a single node may exceed it) and whose pinned
 * nodes share one device, minimising the TG_MEAN time of the edges between
 * runs.  group[v] = index of v's run, counted along the order.  Returns
 * the number of runs.  O(n * range + E). */
uint32_t tg_breakpoints(const TaskGraph *t, const uint32_t *order,
			uint32_t range, double cap, uint32_t *group);

/* slots.c */
/* The idle intervals of each device, for insertion-based list scheduling
 * (HEFT's insertion policy; Celeritas comp_EST, "d_ava").  Every device
 * starts idle on [0, inf).  O(log k) per call for k intervals. */
TgSlots *tg_slots_new(int ndev);
void tg_slots_free(TgSlots *s);
/* The earliest time >= ready at which device d is idle for dur seconds
 * (inf only after work of infinite duration). */
double tg_slots_find(const TgSlots *s, int d, double ready, double dur);
/* Marks [start, start + dur) busy on d; start from tg_slots_find. */
void tg_slots_take(TgSlots *s, int d, double start, double dur);
/* When v's inputs are all on device d: the latest finish[p] over v's
 * predecessors p, plus the transfer time from dev[p] to d for data edges
 * between devices (Celeritas eq. 7, pre_t). */
double tg_ready(const TaskGraph *t, uint32_t v, int d, const int *dev,
		const double *finish);
/* Insertion-based list schedule of placement dev, visiting nodes in
 * order: each starts at the earliest idle slot of its device after
 * tg_ready.  finish[] (or NULL) receives finish times; returns the
 * makespan.  The one evaluation both Celeritas placers are judged by. */
double tg_eval_order(const TaskGraph *t, const uint32_t *order,
		     const int *dev, double *finish);

/* place_orderplace.c, place_adjusting.c */
/* Order-Place (Celeritas §5.2, §6.2.2): nodes in order onto device 0 until
 * its memory is full, then device 1, and so on.  Fills dev[]; returns
 * false if some node did not fit (it then went where most memory was
 * free). */
bool tg_order_place(const TaskGraph *t, const uint32_t *order, int *dev);
/* Adjusting Placement exactly as Algorithm 2 (with finish times in place
 * of start times on heterogeneous devices, see place_adjusting.c), without
 * placer_adjusting's Order-Place guard.  Fills dev[]; returns false if
 * some node did not fit. */
bool tg_adjust_place(const TaskGraph *t, const uint32_t *order, int *dev);

#endif
