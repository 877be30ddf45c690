/* backends.c — the --emit table, and the two simplest backends. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

static const Backend backends[] = {
#define BACKEND(name, fn, sim, opts, desc) {name, desc, fn, sim, opts},
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

const char *backend_opt(const EmitCtx *ctx, const char *key)
{
	size_t klen = strlen(key);
	for (int i = 0; i < ctx->nopts; i++)
		if (strncmp(ctx->opts[i], key, klen) == 0 &&
		    ctx->opts[i][klen] == '=')
			return ctx->opts[i] + klen + 1;
	pcc_die("backend asked for undeclared option '%s'", key);
}

static bool opt_is_bool(const char *v)
{
	return strcmp(v, "true") == 0 || strcmp(v, "false") == 0;
}

static bool opt_is_num(const char *v)
{
	char *end;
	if (!*v)
		return false;
	double x = strtod(v, &end);
	return !*end && x == x;
}

/* A given value fits the kind of the declared default decl ("key=dflt"):
 * a true/false default takes true or false, a numeric one a number,
 * anything else any string. */
static bool opt_value_ok(const char *decl, const char *v)
{
	const char *d = strchr(decl, '=') + 1;
	if (opt_is_bool(d))
		return opt_is_bool(v);
	if (opt_is_num(d))
		return opt_is_num(v);
	return true;
}

bool backend_opt_bool(const EmitCtx *ctx, const char *key)
{
	return strcmp(backend_opt(ctx, key), "true") == 0;
}

double backend_opt_num(const EmitCtx *ctx, const char *key)
{
	return strtod(backend_opt(ctx, key), NULL);
}

const char **backend_resolve_opts(const Backend *b, const char *const *given,
				  int n, Arena *a, int *nout, char *err,
				  size_t errlen)
{
	/* One "key=value" per declared option, defaults first. */
	int cap = 1;
	for (const char *p = b->options; *p; p++)
		cap += *p == ',';
	const char **out = arena_alloc(a, sizeof(char *) * (size_t)cap);
	int m = 0;
	for (const char *p = b->options; *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		out[m++] = eq ? arena_strndup(a, p, len)
			      : arena_printf(a, "%.*s=", (int)len, p);
		p += len + (p[len] == ',');
	}
	for (int i = 0; i < n; i++) {
		const char *eq = strchr(given[i], '=');
		if (!eq || eq == given[i]) {
			snprintf(err, errlen, "--emit-opt needs KEY=VALUE, not '%s'",
				 given[i]);
			return NULL;
		}
		size_t klen = (size_t)(eq - given[i]) + 1;
		int j = 0;
		while (j < m && strncmp(out[j], given[i], klen) != 0)
			j++;
		if (j == m) {
			Suggest sg;
			char *key = arena_strndup(a, given[i], klen - 1);
			suggest_init(&sg, key);
			suggest_add_keys(&sg, b->options);
			snprintf(err, errlen, "backend '%s' has no option '%s'%s%s%s",
				 b->name, key, suggest_hint(&sg),
				 *b->options ? "; options: " : "", b->options);
			return NULL;
		}
		if (!opt_value_ok(out[j], eq + 1)) {
			snprintf(err, errlen, "--emit-opt %.*s: expected %s, not '%s'",
				 (int)klen - 1, given[i],
				 opt_is_bool(strchr(out[j], '=') + 1) ? "true or false"
								     : "a number",
				 eq + 1);
			return NULL;
		}
		out[j] = given[i];
	}
	*nout = m;
	return out;
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
