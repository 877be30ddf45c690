/* backend.h — output formats chosen by --emit=NAME: a table of function
 * pointers (QBE's Target), one file each in backend/, listed once in
 * backend/backends.def. */
#ifndef PCC_BACKEND_H
#define PCC_BACKEND_H

#include "../ir/ir.h"

typedef struct EmitCtx {
	const Graph *g;
	const CostModel *cost;
} EmitCtx;

typedef struct Backend {
	const char *name;
	const char *desc;
	bool (*emit)(FILE *f, const EmitCtx *ctx);
} Backend;

#define BACKEND(name, fn, desc) bool fn(FILE *f, const EmitCtx *ctx);
#include "backends.def"
#undef BACKEND

const Backend *backend_find(const char *name);
const Backend *backend_table(int *n);

#endif
