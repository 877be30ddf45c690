/* passes.h — the pass manager and every pass (one file each). */
#ifndef PCC_PASSES_H
#define PCC_PASSES_H

#include "../ir/ir.h"

/* Options of one pass instance: "fuse<range=200,mem=0.25>". */
typedef struct PassArg {
	const char *key, *val;
} PassArg;

typedef struct PassCtx {
	Graph *g;
	Diag *diag;
	const CostModel *cost;
	Arena *scratch;          /* reset after each pass */
	const PassArg *args;
	int nargs;
	const char *pass;        /* name of the running pass */
	bool best_effort;
	double search_budget;    /* seconds */
	unsigned seed;
	FILE *report;            /* stderr: one-line pass reports */
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

/* Runs a pipeline over g.  See docs/passes.md for the options. */
typedef struct RunOptions {
	bool verify_each;
	bool time_passes;
	bool verbose;            /* pass reports on stderr */
	bool best_effort;
	double search_budget;
	unsigned seed;
	const char *dump_dir;    /* NULL: dumps beside the output / cwd */
	const char *dump_base;   /* BASE of BASE.NN.PASS.gir */
	bool dump_all;
	const char *dump_after;  /* comma-separated pass names, or NULL */
	const char *stop_after;  /* pass name, or NULL */
	const char *repro_src;   /* original input text, for BASE.repro.gir */
	size_t repro_len;
	const char *repro_cmd;   /* command line for the repro header */
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

#endif
