/* backend.h — output formats chosen by --emit=NAME: a table of function
 * pointers (QBE's Target), one file each in backend/, listed once in
 * backend/backends.def. */
#ifndef PCC_BACKEND_H
#define PCC_BACKEND_H

#include "../ir/ir.h"

/* What a backend gets: the graph, the cost model, the simulation of the
 * graph when the backend asked for one (needs_sim), and the --emit-opt
 * KEY=VALUE options given on the command line. */
typedef struct EmitCtx {
	const Graph *g;
	const CostModel *cost;
	const SimResult *sim;    /* NULL unless the backend needs_sim */
	const char *const *opts; /* "key=value" strings */
	int nopts;
	const char *output;      /* the -o argument ("-" = stdout), for
				  * backends that write files beside it */
	const SimJudged *judged; /* plans the placer judged, or NULL */
} EmitCtx;

/* emit returns false after printing "pcc: error: ..." when it cannot
 * emit the graph; the caller then exits with status 1. */
typedef struct Backend {
	const char *name;
	const char *desc;
	bool (*emit)(FILE *f, const EmitCtx *ctx);
	bool needs_sim;          /* simulate the graph before emitting */
	const char *options;     /* "key=default,..." accepted by --emit-opt */
} Backend;

#define BACKEND(name, fn, sim, opts, desc) bool fn(FILE *f, const EmitCtx *ctx);
#include "backends.def"
#undef BACKEND

/* backends.c */
const Backend *backend_find(const char *name);
const Backend *backend_table(int *n);
/* The value of option key ("" when declared without a default); dies
 * if the backend never declared it (a bug). */
const char *backend_opt(const EmitCtx *ctx, const char *key);
/* Typed values: an option declared with a true/false default is
 * "true" or "false", one with a numeric default a number (checked by
 * backend_resolve_opts). */
bool backend_opt_bool(const EmitCtx *ctx, const char *key);
double backend_opt_num(const EmitCtx *ctx, const char *key);
/* Checks the --emit-opt strings given[0..n) against b's declared options
 * and returns, in an array allocated in a, every declared option as
 * "key=value": the given value, else the default.  A value must fit the
 * kind of its default (true/false, a number, or any string).  On error
 * writes a message to err and returns NULL. */
const char **backend_resolve_opts(const Backend *b, const char *const *given,
				  int n, Arena *a, int *nout, char *err,
				  size_t errlen);

/* ---- viz.c: shared by the dot, trace and gantt-svg backends ------------ */
/* Escaped text, safe for any bytes (invalid UTF-8 becomes U+FFFD):
 * the inside of a DOT "..." string (control characters become spaces),
 * XML character data or attribute value, a JSON string with quotes. */
void viz_dot_text(FILE *f, const char *s);
void viz_xml_text(FILE *f, const char *s);
void viz_json_str(FILE *f, const char *s);
void viz_json_text(FILE *f, const char *s);   /* without the quotes */
/* Code points in s, and the bytes of its first ncp code points. */
size_t viz_text_len(const char *s);
size_t viz_text_prefix(const char *s, size_t ncp);
/* "1 MB", "803 KB", "12 B" (powers of 1000, 3 significant digits);
 * "1.5 ms", "12 us".  Return buf. */
char *viz_bytes(char *buf, size_t n, double bytes);
char *viz_time(char *buf, size_t n, double seconds);
/* Fill colour "#rrggbb" of the i-th device. */
void viz_device_color(int i, char buf[8]);

/* What an op is, for colours and trace categories: communication
 * (Transfer, AllReduce, and Split/SplitV/ConcatV2/AddN carrying @origin),
 * else its @role (or the op table's flags when it has none). */
typedef enum VizCat {
	VC_INPUT, VC_PARAM, VC_FWD, VC_LOSS, VC_BWD, VC_UPDATE,
	VC_COMM, VC_TRANSFER, VC_COLLECTIVE, VC_OTHER, VC_COUNT
} VizCat;
VizCat viz_category(const Graph *g, const Op *op);
bool viz_is_comm(const Graph *g, const Op *op);
const char *viz_cat_name(VizCat c);   /* "fwd": the trace category */
const char *viz_cat_color(VizCat c);  /* "#4e79a7" */
const char *viz_cat_desc(VizCat c);   /* "forward": legends */
/* Op ids keyed by an integer (@group, an AllReduce key), for qsort by
 * (key, id). */
typedef struct VizKeyId {
	int64_t key;
	uint32_t id;
} VizKeyId;
int viz_keyid_cmp(const void *a, const void *b);

/* A simulated schedule as rows of bars (docs/backends.md). */
typedef enum VizRowKind { VR_DEVICE, VR_COLL, VR_LINK } VizRowKind;
typedef struct VizRow {
	VizRowKind kind;
	int index;               /* device (VR_DEVICE, VR_COLL) or link */
} VizRow;
typedef struct VizBar {
	int row;
	VizCat cat;
	uint32_t op;             /* op id; for a transfer its Transfer op or
				  * UINT32_MAX when implicit */
	uint32_t xfer;           /* index into sim->xfers, or UINT32_MAX */
	double start, finish;
} VizBar;
typedef struct VizSched {
	VizRow *rows;
	int nrows;
	VizBar *bars;            /* sorted by row, start, finish, op */
	size_t nbars;
	size_t *row_first;       /* bars of row w: [row_first[w], row_first[w+1]) */
	int *dev_row, *coll_row; /* per device; coll_row -1 when unused */
} VizSched;
/* Needs ctx->sim. */
void viz_sched_build(VizSched *s, const EmitCtx *ctx);
void viz_sched_free(VizSched *s);
/* The name of a bar through text (one of the escapers above): the op;
 * a transfer's Transfer op, or "tensor:k -> device" when implicit; a
 * collective on a link "AllReduce ORIGIN (key K)". */
void viz_bar_name(FILE *f, void (*text)(FILE *, const char *),
		  const VizSched *s, const VizBar *b, const EmitCtx *ctx);
/* "m0/gpu0", "m0/gpu0 collectives", "m0/out" (may use buf). */
const char *viz_row_name(const VizSched *s, int row, const EmitCtx *ctx,
			 char *buf, size_t n);

/* Fused groups of a plan (docs/backends.md): an op's @group, else the
 * group of the op its @origin names, so replicas, partitions, Transfers,
 * AllReduces and the glue comm inserts belong to the group of the op
 * they derive from.  When some op has a pipeline stage (viz_stage_of),
 * the stages are the groups instead.  Groups are numbered 0..n-1 in
 * increasing @group (stage); ops in none get -1.  O(V log V). */
typedef struct VizGroups {
	int *of;                 /* per op id: group index, or -1 */
	int n;
	int64_t *key;            /* per group: its @group (or stage) */
	bool stages;             /* the groups are pipeline stages */
} VizGroups;
void viz_groups_build(VizGroups *vg, const Graph *g);
void viz_groups_free(VizGroups *vg);
/* The pipeline stage of op, or -1 (a hook: see viz.c). */
int64_t viz_stage_of(const Graph *g, const Op *op);

/* summary.c: the headline of --emit=summary (simulated iteration time,
 * lower bound, speedup over the judged baselines) as text lines, each
 * prefixed with prefix; -v prints it at the end of a run. */
void summary_headline(FILE *f, const char *prefix, const Graph *g,
		      const SimResult *r, const SimJudged *judged);

/* c.c: writes the cc flags that compile and link a program written by
 * --emit=c against the runtime belonging to the pcc executable exe — its
 * build tree or its installation (PREFIX/include/pcc, PREFIX/lib) — plus
 * extra (flags the runtime was built with).  On failure writes a message
 * to msg and returns false. */
bool c_runtime_flags(FILE *f, const char *exe, const char *extra, char *msg,
		     size_t n);

#endif
