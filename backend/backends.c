/* backends.c — the --emit table, and the two simplest backends. */
#include "backend.h"

#include <string.h>

static const Backend backends[] = {
#define BACKEND(name, fn, desc) {name, desc, fn},
#include "backends.def"
#undef BACKEND
};
enum { NBACKENDS = sizeof backends / sizeof backends[0] };

const Backend *backend_table(int *n)
{
	*n = NBACKENDS;
	return backends;
}

const Backend *backend_find(const char *name)
{
	for (int i = 0; i < NBACKENDS; i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}

bool emit_gir_backend(FILE *f, const EmitCtx *ctx)
{
	gir_print(f, ctx->g);
	return true;
}

bool emit_costs_backend(FILE *f, const EmitCtx *ctx)
{
	cost_print_csv(f, ctx->cost);
	return true;
}
