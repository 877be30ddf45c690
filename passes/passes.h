/* passes.h — the pass manager and every pass (one file each). */
#ifndef PCC_PASSES_H
#define PCC_PASSES_H

#include "../ir/ir.h"

/* Options of one pass instance: "fuse<range=200,mem=0.25>". */
typedef struct PassArg {
	const char *key, *val;
} PassArg;

typedef struct Progress Progress;
struct PipeStep;
struct BatchInfo;
typedef struct EvalCache EvalCache;

typedef struct PassCtx {
	Graph *g;
	Diag *diag;
	const CostModel *cost;
	Arena *scratch;          /* reset after each pass */
	const PassArg *args;
	int nargs;
	const char *pass;        /* name of the running pass */
	bool best_effort;
	double search_budget;    /* seconds: a safety cap (search_cut) */
	double search_work;      /* work units per search (docs/passes.md) */
	unsigned seed;
	FILE *report;            /* stderr: one-line pass reports */
	Progress *progress;      /* pass_progress's state, or NULL */
	SimJudged *judged;       /* plans a placer judged, for the summary's
				  * headline (may be NULL) */
	/* For plan_evaluate (passes/evaluate.c): the pipeline's steps after
	 * this pass, whose options (comm's, order's) judge candidate plans
	 * as the pipeline will really materialise them; NULL/0 when the
	 * pass runs alone (their defaults then). */
	const struct PipeStep *later;
	int nlater;
	EvalCache *eval;         /* plan_evaluate's cache for this pass run
				  * (the manager's), or NULL: none */
	const struct BatchInfo *batch;   /* comm: the batch analysis of g,
				  * computed already (borrowed), or NULL */
} PassCtx;

/* A pass returns EXIT_OK, or EXIT_BADINPUT / EXIT_INFEASIBLE after
 * reporting on ctx->diag. */
typedef int (*PassFn)(PassCtx *ctx);

/* The kinds of a pass option's value (passes.def explains each). */
typedef enum PassOptKind {
	POPT_INT, POPT_NUM, POPT_BYTES, POPT_BOOL, POPT_ENUM, POPT_ALGO,
} PassOptKind;

/* One PASS_OPT row of passes.def. */
typedef struct PassOpt {
	const char *pass, *name;
	PassOptKind kind;
	const char *range;       /* "[2,8]", "(0,inf)|auto", "first|budget" */
	const char *dflt;
	const char *help;
} PassOpt;

typedef struct PassInfo {
	const char *name;
	const char *desc;
	PassFn run;
} PassInfo;

/* passes.def expands to one prototype per pass. */
#define PASS(name, fn, desc) int fn(PassCtx *ctx);
#include "passes.def"

/* ---- evaluate.c: the cache plan_evaluate keeps for one pass run ------- */
/* A cache bound to g (the pass's graph); freed when the pass ends. */
EvalCache *eval_cache_new(const Graph *g);
void eval_cache_free(EvalCache *e);
/* How many plans the pass judged (plan_evaluate, on its graph or on a
 * copy of it), how often the cached batch analysis was lent (hits) and
 * how often it was computed (misses). */
void eval_cache_stats(const EvalCache *e, long *judged, long *hits,
		      long *misses);

/* ---- manager.c --------------------------------------------------------- */
const PassInfo *pass_find(const char *name);
const PassInfo *pass_table(int *n);
const char *pipeline_named(const char *name);   /* "O1" -> its string */

typedef struct PipeStep {
	const PassInfo *pass;
	PassArg *args;
	int nargs;
} PipeStep;

typedef struct Pipeline {
	PipeStep *steps;
	int n;
} Pipeline;

/* Parses "a,b<k=v,k2=v2>,c": pass names, option names and option values
 * (pass_opt_check) are all checked here, before anything runs.  Errors
 * to err, naming the pass and the option; false on failure. */
bool pipeline_parse(const char *s, Pipeline *p, char *err, size_t n);
void pipeline_free(Pipeline *p);
void pipeline_print(FILE *f, const Pipeline *p);

/* The options of pass pi (its PASS_OPT rows, *n of them). */
const PassOpt *pass_options(const PassInfo *pi, int *n);
/* The option key of pass pi, or NULL. */
const PassOpt *pass_opt_find(const PassInfo *pi, const char *key);
/* Does val fit option o's kind and range?  If not, err says why:
 * "split<max_parts=-1>: expected an integer in [2,8]". */
bool pass_opt_check(const PassOpt *o, const char *val, char *err, size_t n);
/* "an integer in [2,8]", "true or false", ...: what o takes. */
void pass_opt_describe(const PassOpt *o, char *buf, size_t n);
/* Option lookup for the running pass: the given value, else the default
 * declared in the pass table.  Values were checked by pipeline_parse, so
 * the typed forms need no error path. */
const char *pass_opt(const PassCtx *ctx, const char *key);
double pass_opt_num(const PassCtx *ctx, const char *key);
long long pass_opt_int(const PassCtx *ctx, const char *key);  /* words: -1 */
bool pass_opt_bool(const PassCtx *ctx, const char *key);
/* place.c: is name an algorithm of place<algo=...>?  The list of them,
 * space-separated, for messages. */
bool place_algo_known(const char *name);
const char *place_algo_names(void);
/* A bug found by a pass: "pcc: internal error in pass 'P': ...";
 * returns EXIT_INTERNAL for the pass to return. */
int pass_internal_error(const PassCtx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* When ctx's graph already has comm's output (plan_comm_op): "the graph
 * already has its communication (%X is a Transfer): <what>" at that op;
 * returns EXIT_BADINPUT for the pass to return, else EXIT_OK. */
int pass_refuse_plan(const PassCtx *ctx, const char *what);
/* The wall-clock safety cap of a search that began at t0: true once
 * --search-budget seconds have passed.  Searches stop on their work
 * budget (search_work), which makes the plan deterministic; the cap is
 * only for machines far slower than expected. */
bool search_cut(const PassCtx *ctx, double t0);
/* Warns that the cap cut a search after `done` of `budget` work units. */
void search_cut_warn(const PassCtx *ctx, double done, double budget);

/* ---- progress.c: --progress ---------------------------------------------- */
enum { PROGRESS_AUTO, PROGRESS_ALWAYS, PROGRESS_NEVER };
/* "auto", "always", "never" -> PROGRESS_*; false for anything else. */
bool progress_mode_parse(const char *s, int *mode);
struct Progress {
	FILE *out;
	bool on, tty, shown, called;
	double delay, t0, last;
	const char *pass, *phase, *label;
	long done, budget;
	double best;
};
void progress_init(Progress *p, FILE *out, int mode);
void progress_pass_begin(Progress *p, const char *pass);
void progress_pass_end(Progress *p);
/* For searching passes, after each evaluation: the phase ("search"),
 * evaluations done and the budget (<= 0: none, e.g. a time budget), the
 * best plan's iteration time so far in seconds (label: "simulated" or
 * "estimated"; <= 0 or not finite: none).  Shown per --progress on
 * stderr; costs one clock read. */
void pass_progress(const PassCtx *ctx, const char *phase, const char *label,
		   long done, long budget, double best);
/* Erases a progress line drawn on a terminal, before a pass writes a
 * report line of its own in mid-pass (-v). */
void pass_progress_clear(const PassCtx *ctx);

/* Runs a pipeline over g.  See docs/passes.md for the options. */
typedef struct RunOptions {
	bool verify_each;
	bool time_passes;
	bool verbose;            /* pass reports on stderr */
	bool best_effort;
	double search_budget;    /* seconds, the cap */
	double search_work;      /* work units */
	unsigned seed;
	const char *dump_dir;    /* NULL: dumps beside the output / cwd */
	const char *dump_base;   /* BASE of BASE.NN.PASS.gir */
	bool dump_all;
	const char *dump_after;  /* comma-separated pass names, or NULL */
	const char *stop_after;  /* pass name, or NULL */
	const char *repro_src;   /* original input text, for BASE.repro.gir */
	size_t repro_len;
	const char *repro_cmd;   /* command line for the repro header */
	int progress;            /* PROGRESS_AUTO, _ALWAYS, _NEVER */
	SimJudged *judged;       /* filled by placers that judge candidate
				  * plans (may be NULL) */
} RunOptions;
int pipeline_run(const Pipeline *p, Graph *g, const CostModel *cost,
		 Diag *d, const RunOptions *o);
/* The reproducer of a failed run: DIR/BASE.repro.gir, whose first lines
 * ("# pcc reproducer ...", "# RUN: COMMAND") precede the input text.
 * Both malloc'd. */
char *repro_path(const RunOptions *o);
char *repro_header(const RunOptions *o);
/* Writes g to path atomically (temporary file, then rename); "-" is
 * stdout.  Returns false with errno set on failure. */
bool write_gir_file(const char *path, const Graph *g);
bool write_file_atomic(const char *path,
		       bool (*emit)(FILE *f, const void *arg), const void *arg);
/* Removes the temporary file of a write in progress, if any; safe to
 * call from a signal handler (main.c's, on SIGINT, SIGTERM, a crash). */
void tmp_cleanup(void);

/* ---- order.c ------------------------------------------------------------ */
/* PipeDream-flush's 1F1B schedule of S stages and m micro-batches, each
 * forward taking tf and each backward tb on every stage: the start of
 * forward j on stage s in fstart[s*m + j], of backward j in bstart[s*m + j]
 * (each S*m entries). */
void pipeline_1f1b(int S, int m, double tf, double tb, double *fstart,
		   double *bstart);
/* Writes the 1F1B @order of a pipelined plan (ops with @stage and
 * @microbatch; docs/passes.md, order), without simulating it: EXIT_OK
 * with its stage and micro-batch counts, -1 when ctx->g is not one. */
int order_1f1b(PassCtx *ctx, const CostModel *m, int *stages, int *micro);
/* The schedule the order pass keeps for the materialised plan on ctx->g,
 * simulated into *r (a pipelined plan: 1F1B; else the faster of the list
 * schedule and ready order); only a pipelined plan's @order is written.
 * EXIT_OK or an error (reported). */
int order_simulate(PassCtx *ctx, const CostModel *m, SimResult *r);

#endif
