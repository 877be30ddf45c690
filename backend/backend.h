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
/* Checks the --emit-opt strings given[0..n) against b's declared options
 * and returns, in an array allocated in a, every declared option as
 * "key=value": the given value, else the default.  On error writes a
 * message to err and returns NULL. */
const char **backend_resolve_opts(const Backend *b, const char *const *given,
				  int n, Arena *a, int *nout, char *err,
				  size_t errlen);

#endif
