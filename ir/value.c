/* value.c — attribute values, units, and their canonical text.
 * Quantities are stored in base units (bytes, seconds, bytes/s, FLOP/s).
 * The printer writes each quantity in the unit that gives the shortest
 * text (ties: the larger unit), with at most 15 significant digits, so
 * print -> parse -> print is a fixed point. */
#include "ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	Unit unit;
	double scale;
} units[] = {
	{"B", UNIT_BYTES, 1},
	{"KB", UNIT_BYTES, 1e3},
	{"MB", UNIT_BYTES, 1e6},
	{"GB", UNIT_BYTES, 1e9},
	{"TB", UNIT_BYTES, 1e12},
	{"KiB", UNIT_BYTES, 1024.0},
	{"MiB", UNIT_BYTES, 1048576.0},
	{"GiB", UNIT_BYTES, 1073741824.0},
	{"TiB", UNIT_BYTES, 1099511627776.0},
	{"ns", UNIT_SECONDS, 1e-9},
	{"us", UNIT_SECONDS, 1e-6},
	{"ms", UNIT_SECONDS, 1e-3},
	{"s", UNIT_SECONDS, 1},
	{"B/s", UNIT_BYTE_RATE, 1},
	{"KB/s", UNIT_BYTE_RATE, 1e3},
	{"MB/s", UNIT_BYTE_RATE, 1e6},
	{"GB/s", UNIT_BYTE_RATE, 1e9},
	{"TB/s", UNIT_BYTE_RATE, 1e12},
	{"Mbps", UNIT_BYTE_RATE, 1e6 / 8},
	{"Gbps", UNIT_BYTE_RATE, 1e9 / 8},
	{"FLOPS", UNIT_FLOP_RATE, 1},
	{"GFLOPS", UNIT_FLOP_RATE, 1e9},
	{"TFLOPS", UNIT_FLOP_RATE, 1e12},
};
enum { NUNITS = sizeof units / sizeof units[0] };

/* Units the printer may choose (Gbps/Mbps are accepted, not printed). */
static bool printable(int i)
{
	return units[i].unit != UNIT_BYTE_RATE || units[i].name[1] == 'B' ||
	       units[i].name[0] == 'B';
}

bool unit_parse(const char *s, size_t n, Unit *u, double *scale)
{
	for (int i = 0; i < NUNITS; i++)
		if (strlen(units[i].name) == n && memcmp(units[i].name, s, n) == 0) {
			*u = units[i].unit;
			*scale = units[i].scale;
			return true;
		}
	return false;
}

const char *unit_name(Unit u)
{
	switch (u) {
	case UNIT_NONE: return "number";
	case UNIT_BYTES: return "bytes";
	case UNIT_SECONDS: return "seconds";
	case UNIT_BYTE_RATE: return "bytes/second";
	case UNIT_FLOP_RATE: return "FLOP/second";
	}
	return "?";
}

Value *val_int(Arena *a, int64_t i)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->kind = V_INT;
	v->i = i;
	return v;
}

Value *val_float(Arena *a, double f)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->kind = V_FLOAT;
	v->f = f;
	return v;
}

Value *val_qty(Arena *a, double f, Unit u)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->kind = V_QTY;
	v->unit = u;
	v->f = f;
	return v;
}

Value *val_str(Arena *a, const char *s)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->kind = V_STR;
	v->s = arena_strdup(a, s);
	return v;
}

Value *val_ident(Arena *a, const char *s)
{
	Value *v = val_str(a, s);
	v->kind = V_IDENT;
	return v;
}

Value *val_bool(Arena *a, bool b)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->kind = V_BOOL;
	v->b = b;
	return v;
}

Value *val_type(Arena *a, Type t)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->kind = V_TYPE;
	v->t = t;
	return v;
}

Value *val_list(Arena *a, uint32_t n)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->kind = V_LIST;
	v->list.n = n;
	v->list.items = arena_alloc(a, sizeof(Value *) * n);
	return v;
}

Value *val_dict(Arena *a, uint32_t n)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->kind = V_DICT;
	v->dict.n = n;
	v->dict.items = arena_alloc(a, sizeof(Attr) * n);
	return v;
}

bool val_number(const Value *v, double *out)
{
	if (!v)
		return false;
	switch (v->kind) {
	case V_INT: *out = (double)v->i; return true;
	case V_FLOAT:
	case V_QTY: *out = v->f; return true;
	default: return false;
	}
}

/* Shortest %g text of x that reads back as x (at most 17 digits). */
static void shortest(char *buf, size_t n, double x)
{
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, n, "%.*g", p, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

static void float_print(FILE *f, double x)
{
	char buf[64];
	if (isnan(x) || isinf(x)) {
		/* gir has no literal for these; print a huge finite value. */
		fputs(isnan(x) ? "0.0" : (x > 0 ? "1e308" : "-1e308"), f);
		return;
	}
	shortest(buf, sizeof buf, x);
	fputs(buf, f);
	if (!strpbrk(buf, ".e"))
		fputs(".0", f);
}

void qty_print(FILE *f, double v, Unit u)
{
	char best[80] = "", buf[80];
	double best_scale = 0;
	for (int i = 0; i < NUNITS; i++) {
		if (units[i].unit != u || !printable(i))
			continue;
		double s = units[i].scale;
		if (s > fabs(v) && !(v == 0 && s == 1))
			continue;
		snprintf(buf, sizeof buf, "%.15g%s", v / s, units[i].name);
		if (!best[0] || strlen(buf) < strlen(best) ||
		    (strlen(buf) == strlen(best) && s > best_scale)) {
			strcpy(best, buf);
			best_scale = s;
		}
	}
	if (!best[0]) {
		/* below the smallest unit: use it anyway */
		for (int i = 0; i < NUNITS; i++)
			if (units[i].unit == u && printable(i)) {
				snprintf(best, sizeof best, "%.15g%s",
					 v / units[i].scale, units[i].name);
				break;
			}
	}
	fputs(best, f);
}

bool is_ident(const char *s)
{
	if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
		return false;
	for (const char *p = s + 1; *p; p++)
		if (!(*p == '_' || *p == '.' || *p == '-' || *p == '/' ||
		      (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	return strcmp(s, "true") != 0 && strcmp(s, "false") != 0;
}

void str_print(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		switch (*s) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		default: fputc(*s, f);
		}
	}
	fputc('"', f);
}

static void key_print(FILE *f, const char *k)
{
	if (is_ident(k) || (k[0] == '@' && is_ident(k + 1)))
		fputs(k, f);
	else
		str_print(f, k);
}

void val_print(FILE *f, const Value *v)
{
	char buf[512];
	switch (v->kind) {
	case V_INT: fprintf(f, "%lld", (long long)v->i); break;
	case V_FLOAT: float_print(f, v->f); break;
	case V_QTY: qty_print(f, v->f, v->unit); break;
	case V_STR: str_print(f, v->s); break;
	case V_BOOL: fputs(v->b ? "true" : "false", f); break;
	case V_IDENT: fputs(v->s, f); break;
	case V_TYPE:
		if (v->t.rank > 60) {
			fprintf(f, "%s[", dtype_name(v->t.dt));
			for (int i = 0; i < v->t.rank; i++) {
				if (v->t.dims[i] < 0)
					fprintf(f, "%s?", i ? "," : "");
				else
					fprintf(f, "%s%lld", i ? "," : "",
						(long long)v->t.dims[i]);
			}
			fputc(']', f);
		} else {
			fputs(type_str(&v->t, buf, sizeof buf), f);
		}
		break;
	case V_LIST:
		fputc('[', f);
		for (uint32_t i = 0; i < v->list.n; i++) {
			if (i)
				fputs(", ", f);
			val_print(f, v->list.items[i]);
		}
		fputc(']', f);
		break;
	case V_DICT:
		fputc('{', f);
		for (uint32_t i = 0; i < v->dict.n; i++) {
			if (i)
				fputs(", ", f);
			key_print(f, v->dict.items[i].key);
			fputs(" = ", f);
			val_print(f, v->dict.items[i].val);
		}
		fputc('}', f);
		break;
	}
}
