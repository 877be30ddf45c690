/* value.c — attribute values, units, and their canonical text.
 * Quantities are stored in base units (bytes, seconds, bytes/s, FLOP/s).
 * The printer writes each quantity in the unit that gives the shortest
 * text (ties: the larger unit), with at most 15 significant digits, so
 * print -> parse -> print is a fixed point. */
#include "ir.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
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
	{"Tbps", UNIT_BYTE_RATE, 1e12 / 8},
	{"Mb/s", UNIT_BYTE_RATE, 1e6 / 8},   /* bits, as network cards say */
	{"Gb/s", UNIT_BYTE_RATE, 1e9 / 8},
	{"Tb/s", UNIT_BYTE_RATE, 1e12 / 8},
	{"FLOPS", UNIT_FLOP_RATE, 1},
	{"GFLOPS", UNIT_FLOP_RATE, 1e9},
	{"TFLOPS", UNIT_FLOP_RATE, 1e12},
};
enum { NUNITS = sizeof units / sizeof units[0] };

/* Units the printer may choose (bits per second are accepted, not
 * printed). */
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

bool num_parse(const char *s, double *out)
{
	char *end;
	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	double x = strtod(s, &end);
	if (*end || errno || !isfinite(x))
		return false;
	*out = x;
	return true;
}

bool int_parse(const char *s, long long lo, long long hi, long long *out)
{
	const char *d = s + (*s == '-' || *s == '+');
	if (!*d || d[strspn(d, "0123456789")])
		return false;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
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

/* ---- text buffers ------------------------------------------------------ */

void sb_reserve(StrBuf *b, size_t n)
{
	if (b->n + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->n + n)
		cap *= 2;
	b->s = xrealloc(b->s, cap);
	b->cap = cap;
}

void sb_putn(StrBuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	memcpy(b->s + b->n, s, n);
	b->n += n;
}

void sb_puts(StrBuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

void sb_putc(StrBuf *b, char c)
{
	sb_reserve(b, 1);
	b->s[b->n++] = c;
}

void sb_i64(StrBuf *b, int64_t x)
{
	char tmp[24];
	int k = sizeof tmp;
	uint64_t u = x < 0 ? -(uint64_t)x : (uint64_t)x;
	do {
		tmp[--k] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (x < 0)
		tmp[--k] = '-';
	sb_putn(b, tmp + k, sizeof tmp - (size_t)k);
}

void sb_printf(StrBuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		pcc_die("sb_printf: bad format");
	sb_reserve(b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

bool sb_flush(StrBuf *b, FILE *f)
{
	bool ok = fwrite(b->s, 1, b->n, f) == b->n;
	b->n = 0;
	return ok;
}

void sb_free(StrBuf *b)
{
	free(b->s);
	*b = (StrBuf){0};
}

/* Prints through a buffer: fmt(b, arg) then one fwrite. */
#define VIA_BUF(f, call)                                                   \
	do {                                                               \
		StrBuf b_ = {0};                                           \
		call;                                                      \
		sb_flush(&b_, (f));                                        \
		sb_free(&b_);                                              \
	} while (0)

/* ---- canonical text ------------------------------------------------------ */

/* Shortest %g text of x that reads back as x (at most 17 digits). */
static void shortest(char *buf, size_t n, double x)
{
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, n, "%.*g", p, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

/* Quantities have no spelling for NaN and the infinities: they print as
 * 0 and as the largest power of ten below DBL_MAX, which read back as
 * themselves. */
static double finite_or_max(double x)
{
	if (isnan(x))
		return 0;
	if (isinf(x))
		return x > 0 ? 1e308 : -1e308;
	return x;
}

/* NaN and the infinities are gir's words nan, inf and -inf. */
static void float_format(StrBuf *b, double x)
{
	char buf[64];
	if (isnan(x) || isinf(x)) {
		sb_puts(b, isnan(x) ? "nan" : x < 0 ? "-inf" : "inf");
		return;
	}
	shortest(buf, sizeof buf, x);
	sb_puts(b, buf);
	if (!strpbrk(buf, ".e"))
		sb_puts(b, ".0");
}

/* The text of v in unit kind u, in the unit that gives the shortest text
 * (ties: the larger unit), with at most 15 significant digits. */
static void qty_text(char *best, size_t n, double v, Unit u, double *scale)
{
	char buf[80];
	double best_scale = 0;
	best[0] = 0;
	for (int i = 0; i < NUNITS; i++) {
		if (units[i].unit != u || !printable(i))
			continue;
		double s = units[i].scale;
		if ((s > fabs(v) && !(v == 0 && s == 1)) || !isfinite(v / s))
			continue;
		snprintf(buf, sizeof buf, "%.15g%s", v / s, units[i].name);
		if (!best[0] || strlen(buf) < strlen(best) ||
		    (strlen(buf) == strlen(best) && s > best_scale)) {
			snprintf(best, n, "%s", buf);
			best_scale = s;
		}
	}
	if (!best[0]) {
		/* below the smallest unit: use it anyway */
		for (int i = 0; i < NUNITS; i++)
			if (units[i].unit == u && printable(i)) {
				best_scale = units[i].scale;
				snprintf(best, n, "%.15g%s", v / best_scale,
					 units[i].name);
				break;
			}
	}
	*scale = best_scale;
}

/* Rounding to 15 digits and scaling by the unit are not exact, so the text
 * of v may read back as a slightly different number whose own text
 * differs.  The printer writes a text that is a fixed point: it reads
 * back (number times unit scale, as the lexer does) to a value with the
 * same text. */
static void qty_format(StrBuf *b, double v, Unit u)
{
	char t[80], t2[80];
	double s, s2;
	v = finite_or_max(v);
	qty_text(t, sizeof t, v, u, &s);
	for (int i = 0; i < 8; i++) {
		double back = finite_or_max(strtod(t, NULL) * s);
		/* t is the text of v: reading back as v, it is its own */
		if (back == v)
			break;
		qty_text(t2, sizeof t2, back, u, &s2);
		if (strcmp(t, t2) == 0)
			break;
		memcpy(t, t2, sizeof t);
		s = s2;
		v = back;
	}
	sb_puts(b, t);
}

void qty_print(FILE *f, double v, Unit u)
{
	VIA_BUF(f, qty_format(&b_, v, u));
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
	return strcmp(s, "true") != 0 && strcmp(s, "false") != 0 &&
	       strcmp(s, "inf") != 0 && strcmp(s, "nan") != 0;
}

void str_format(StrBuf *b, const char *s)
{
	sb_putc(b, '"');
	for (;;) {
		size_t k = strcspn(s, "\"\\\n\r\t");
		sb_putn(b, s, k);
		s += k;
		if (!*s)
			break;
		switch (*s++) {
		case '"': sb_puts(b, "\\\""); break;
		case '\\': sb_puts(b, "\\\\"); break;
		case '\n': sb_puts(b, "\\n"); break;
		case '\r': sb_puts(b, "\\r"); break;
		case '\t': sb_puts(b, "\\t"); break;
		}
	}
	sb_putc(b, '"');
}

void str_print(FILE *f, const char *s)
{
	VIA_BUF(f, str_format(&b_, s));
}

void key_format(StrBuf *b, const char *k)
{
	if (is_ident(k) || (k[0] == '@' && is_ident(k + 1)))
		sb_puts(b, k);
	else
		str_format(b, k);
}

void type_format(StrBuf *b, const Type *t)
{
	sb_puts(b, dtype_name(t->dt));
	sb_putc(b, '[');
	for (int i = 0; i < t->rank; i++) {
		if (i)
			sb_putc(b, ',');
		if (t->dims[i] < 0)
			sb_putc(b, '?');
		else
			sb_i64(b, t->dims[i]);
	}
	sb_putc(b, ']');
}

static void scalar_format(StrBuf *b, const Value *v)
{
	switch (v->kind) {
	case V_INT: sb_i64(b, v->i); break;
	case V_FLOAT: float_format(b, v->f); break;
	case V_QTY: qty_format(b, v->f, v->unit); break;
	case V_STR: str_format(b, v->s); break;
	case V_BOOL: sb_puts(b, v->b ? "true" : "false"); break;
	case V_IDENT:
		/* a bare word only where it reads back as one */
		if (is_ident(v->s))
			sb_puts(b, v->s);
		else
			str_format(b, v->s);
		break;
	case V_TYPE: type_format(b, &v->t); break;
	case V_LIST:
	case V_DICT: break;
	}
}

/* Lists and dicts nest to any depth: walked with an explicit stack, not
 * by recursion. */
void val_format(StrBuf *b, const Value *v)
{
	struct Frame {
		const Value *v;
		uint32_t i;
	} local[16], *stack = local;
	size_t n = 0, cap = 16;
	for (;;) {
		if (v) {
			if (v->kind != V_LIST && v->kind != V_DICT) {
				scalar_format(b, v);
			} else {
				if (n == cap) {
					cap *= 2;
					if (stack == local) {
						stack = xmalloc(sizeof *stack * cap);
						memcpy(stack, local, sizeof local);
					} else {
						stack = xrealloc(stack,
								 sizeof *stack * cap);
					}
				}
				sb_putc(b, v->kind == V_LIST ? '[' : '{');
				stack[n++] = (struct Frame){v, 0};
			}
			v = NULL;
		}
		if (n == 0)
			break;
		struct Frame *top = &stack[n - 1];
		const Value *c = top->v;
		uint32_t len = c->kind == V_LIST ? c->list.n : c->dict.n;
		if (top->i == len) {
			sb_putc(b, c->kind == V_LIST ? ']' : '}');
			n--;
			continue;
		}
		if (top->i)
			sb_puts(b, ", ");
		if (c->kind == V_LIST) {
			v = c->list.items[top->i];
		} else {
			key_format(b, c->dict.items[top->i].key);
			sb_puts(b, " = ");
			v = c->dict.items[top->i].val;
		}
		top->i++;
	}
	if (stack != local)
		free(stack);
}

void val_print(FILE *f, const Value *v)
{
	VIA_BUF(f, val_format(&b_, v));
}
