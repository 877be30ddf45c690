/* tfopdef.c — TensorFlow's dtypes, and the OpDef table of tfops.def
 * parsed from its REGISTER_OP-style rows on first use.
 *
 * A row is four strings (inputs, outputs, attrs, pcc's conveniences);
 * the parser is a few loops over ';'-separated items.  Rows are code, so
 * a row it cannot read is a bug (pcc_die names it); the unit tests parse
 * every row. */
#include "tf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- dtypes -------------------------------------------------------- */

static const struct {
	const char *name;        /* TensorFlow's short name (REGISTER_OP) */
	int dt;
} dt_names[] = {
	{"float", TFDT_FLOAT}, {"float32", TFDT_FLOAT}, {"double", TFDT_DOUBLE},
	{"float64", TFDT_DOUBLE}, {"int32", TFDT_INT32}, {"uint8", TFDT_UINT8},
	{"int16", TFDT_INT16}, {"int8", TFDT_INT8}, {"string", TFDT_STRING},
	{"complex64", TFDT_COMPLEX64}, {"int64", TFDT_INT64},
	{"bool", TFDT_BOOL}, {"qint8", TFDT_QINT8}, {"quint8", TFDT_QUINT8},
	{"qint32", TFDT_QINT32}, {"bfloat16", TFDT_BFLOAT16},
	{"qint16", TFDT_QINT16}, {"quint16", TFDT_QUINT16},
	{"uint16", TFDT_UINT16}, {"complex128", TFDT_COMPLEX128},
	{"half", TFDT_HALF}, {"float16", TFDT_HALF},
	{"resource", TFDT_RESOURCE}, {"variant", TFDT_VARIANT},
	{"uint32", TFDT_UINT32}, {"uint64", TFDT_UINT64},
};

static const char *const dt_enums[TFDT_COUNT] = {
	"DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8",
	"DT_INT16", "DT_INT8", "DT_STRING", "DT_COMPLEX64", "DT_INT64",
	"DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16",
	"DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF",
	"DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64",
};

static const int pcc_dts[DT_COUNT] = {
	[DT_F16] = TFDT_HALF, [DT_BF16] = TFDT_BFLOAT16, [DT_F32] = TFDT_FLOAT,
	[DT_F64] = TFDT_DOUBLE, [DT_I8] = TFDT_INT8, [DT_I16] = TFDT_INT16,
	[DT_I32] = TFDT_INT32, [DT_I64] = TFDT_INT64, [DT_U8] = TFDT_UINT8,
	[DT_BOOL] = TFDT_BOOL,
};

const char *tfdt_enum(int dt)
{
	return dt > 0 && dt < TFDT_COUNT ? dt_enums[dt] : NULL;
}

int tfdt_of(DType dt)
{
	return (unsigned)dt < DT_COUNT ? pcc_dts[dt] : 0;
}

int tfdt_parse(const char *s, size_t n)
{
	DType d;
	if (dtype_parse(s, n, &d))
		return tfdt_of(d);
	for (size_t i = 0; i < sizeof dt_names / sizeof *dt_names; i++)
		if (strlen(dt_names[i].name) == n && !strncmp(dt_names[i].name, s, n))
			return dt_names[i].dt;
	for (int i = 1; i < TFDT_COUNT; i++)
		if (strlen(dt_enums[i]) == n && !strncmp(dt_enums[i], s, n))
			return i;
	return 0;
}

#define BIT(dt) (1u << (dt))
static const uint32_t realnumbertypes =
	BIT(TFDT_FLOAT) | BIT(TFDT_DOUBLE) | BIT(TFDT_INT32) | BIT(TFDT_UINT8) |
	BIT(TFDT_INT16) | BIT(TFDT_INT8) | BIT(TFDT_INT64) | BIT(TFDT_BFLOAT16) |
	BIT(TFDT_UINT16) | BIT(TFDT_HALF) | BIT(TFDT_UINT32) | BIT(TFDT_UINT64);
static const uint32_t numbertypes =
	BIT(TFDT_FLOAT) | BIT(TFDT_DOUBLE) | BIT(TFDT_INT32) | BIT(TFDT_UINT8) |
	BIT(TFDT_INT16) | BIT(TFDT_INT8) | BIT(TFDT_COMPLEX64) | BIT(TFDT_INT64) |
	BIT(TFDT_QINT8) | BIT(TFDT_QUINT8) | BIT(TFDT_QINT32) |
	BIT(TFDT_BFLOAT16) | BIT(TFDT_QINT16) | BIT(TFDT_QUINT16) |
	BIT(TFDT_UINT16) | BIT(TFDT_COMPLEX128) | BIT(TFDT_HALF) |
	BIT(TFDT_UINT32) | BIT(TFDT_UINT64);

bool tf_type_allowed(const TfAttrDef *a, int dt)
{
	return !a->types || (dt > 0 && dt < 32 && (a->types & BIT(dt)));
}

static const char *const kind_names[] = {
	"type", "int", "float", "bool", "string", "shape", "tensor", "func",
};

const char *tk_name(TfKind k, bool list)
{
	static const char *const lists[] = {
		"list(type)", "list(int)", "list(float)", "list(bool)",
		"list(string)", "list(shape)", "list(tensor)", "list(func)",
	};
	return (unsigned)k < 8 ? (list ? lists[k] : kind_names[k]) : "?";
}

/* ---- the table ------------------------------------------------------- */

static const struct Row {
	const char *name, *in, *out, *attrs, *pcc;
} rows[] = {
#define TFOP(n, in, out, attrs, pcc) {#n, in, out, attrs, pcc},
#include "tfops.def"
#undef TFOP
};
enum { NROWS = sizeof rows / sizeof rows[0] };

int tf_opdef_count(void)
{
	return NROWS;
}

const char *tf_opdef_name(int i)
{
	return i >= 0 && i < NROWS ? rows[i].name : NULL;
}

void tf_opdefs_init(TfOpDefs *t)
{
	t->a = arena_new();
	t->rows = arena_alloc(t->a, sizeof(*t->rows) * NROWS);
}

void tf_opdefs_free(TfOpDefs *t)
{
	arena_free(t->a);
	t->a = NULL;
	t->rows = NULL;
}

/* ---- parsing a row ---------------------------------------------------- */

typedef struct Cur {
	const struct Row *row;
	const char *p, *end;     /* the current item */
} Cur;

_Noreturn static void bad(const Cur *c, const char *what)
{
	pcc_die("backend/tfops.def: row %s: %s near '%.*s'", c->row->name, what,
		(int)(c->end - c->p), c->p);
}

static void skip_ws(Cur *c)
{
	while (c->p < c->end && isspace((unsigned char)*c->p))
		c->p++;
}

static bool eat(Cur *c, const char *s)
{
	skip_ws(c);
	size_t n = strlen(s);
	if ((size_t)(c->end - c->p) >= n && !strncmp(c->p, s, n)) {
		c->p += n;
		return true;
	}
	return false;
}

static const char *ident(Cur *c, Arena *a)
{
	skip_ws(c);
	const char *s = c->p;
	while (c->p < c->end && (isalnum((unsigned char)*c->p) || *c->p == '_'))
		c->p++;
	if (c->p == s)
		bad(c, "expected a name");
	return arena_strndup(a, s, (size_t)(c->p - s));
}

/* Splits s at top-level ';' into items; returns the count. */
static int items(const char *s, const char **beg, const char **end, int max)
{
	int n = 0;
	while (*s) {
		const char *e = strchr(s, ';');
		if (!e)
			e = s + strlen(s);
		const char *b = s, *z = e;
		while (b < z && isspace((unsigned char)*b))
			b++;
		while (z > b && isspace((unsigned char)z[-1]))
			z--;
		if (z > b) {
			if (n == max)
				pcc_die("backend/tfops.def: too many items in '%s'", s);
			beg[n] = b;
			end[n] = z;
			n++;
		}
		s = *e ? e + 1 : e;
	}
	return n;
}

/* A set {a, b, 'c'}: types into *types or strings into *strs. */
static void parse_set(Cur *c, Arena *a, TfAttrDef *d)
{
	const char *close = memchr(c->p, '}', (size_t)(c->end - c->p));
	if (!close)
		bad(c, "unclosed '{'");
	skip_ws(c);
	bool strs = c->p < close && *c->p == '\'';
	int cap = 1;
	for (const char *q = c->p; q < close; q++)
		cap += *q == ',';
	if (strs)
		d->strs = arena_alloc(a, sizeof(char *) * (size_t)cap);
	while (c->p < close) {
		skip_ws(c);
		const char *s = c->p;
		const char *e = s;
		while (e < close && *e != ',')
			e++;
		const char *z = e;
		while (z > s && isspace((unsigned char)z[-1]))
			z--;
		if (strs) {
			if (z - s < 2 || *s != '\'' || z[-1] != '\'')
				bad(c, "expected a 'string'");
			d->strs[d->nstrs++] = arena_strndup(a, s + 1, (size_t)(z - s - 2));
		} else if ((size_t)(z - s) == 10 && !strncmp(s, "numbertype", 10)) {
			d->types |= numbertypes;
		} else if ((size_t)(z - s) == 14 && !strncmp(s, "realnumbertype", 14)) {
			d->types |= realnumbertypes;
		} else {
			int dt = tfdt_parse(s, (size_t)(z - s));
			if (!dt)
				bad(c, "unknown type");
			d->types |= BIT(dt);
		}
		c->p = e < close ? e + 1 : e;
	}
	c->p = close + 1;
	d->kind = strs ? TK_STRING : TK_TYPE;
}

static TfKind kind_word(Cur *c, const char *w)
{
	for (int k = 0; k < 8; k++)
		if (!strcmp(w, kind_names[k]))
			return (TfKind)k;
	bad(c, "unknown attr kind");
}

static void parse_attr(Cur *c, Arena *a, TfAttrDef *d)
{
	d->name = ident(c, a);
	if (!eat(c, ":"))
		bad(c, "expected ':'");
	skip_ws(c);
	if (eat(c, "{")) {
		parse_set(c, a, d);
	} else if (eat(c, "list(")) {
		const char *w = ident(c, a);
		d->kind = kind_word(c, w);
		d->list = true;
		if (!eat(c, ")"))
			bad(c, "expected ')'");
	} else {
		const char *w = ident(c, a);
		if (!strcmp(w, "numbertype")) {
			d->kind = TK_TYPE;
			d->types = numbertypes;
		} else if (!strcmp(w, "realnumbertype")) {
			d->kind = TK_TYPE;
			d->types = realnumbertypes;
		} else {
			d->kind = kind_word(c, w);
		}
	}
	if (eat(c, ">=")) {
		skip_ws(c);
		char *e;
		d->min = strtoll(c->p, &e, 10);
		if (e == c->p)
			bad(c, "expected a number");
		d->has_min = true;
		c->p = e;
	}
	if (eat(c, "=")) {
		skip_ws(c);
		d->dflt = arena_strndup(a, c->p, (size_t)(c->end - c->p));
		c->p = c->end;
	}
	skip_ws(c);
	if (c->p != c->end)
		bad(c, "unexpected text");
}

static void parse_arg(Cur *c, Arena *a, const TfOpDef *od, TfArgDef *d)
{
	d->name = ident(c, a);
	if (!eat(c, ":"))
		bad(c, "expected ':'");
	if (eat(c, "Ref(")) {
		d->ref = true;
		d->type_attr = ident(c, a);
		if (!eat(c, ")"))
			bad(c, "expected ')'");
	} else {
		const char *w = ident(c, a);
		if (eat(c, "*")) {
			d->num_attr = w;
			w = ident(c, a);
		}
		if (tf_opdef_attr(od, w))
			d->type_attr = w;
		else if (!(d->fixed = tfdt_parse(w, strlen(w))))
			bad(c, "neither a type attr nor a type");
	}
	skip_ws(c);
	if (c->p != c->end)
		bad(c, "unexpected text");
	const TfAttrDef *t = d->type_attr ? tf_opdef_attr(od, d->type_attr) : NULL;
	const TfAttrDef *nm = d->num_attr ? tf_opdef_attr(od, d->num_attr) : NULL;
	if ((t && t->kind != TK_TYPE) || (d->num_attr && (!nm || nm->kind != TK_INT)))
		bad(c, "argument attrs of the wrong kind");
}

static TfArgDef *parse_args(const struct Row *r, const char *s, Arena *a,
			    const TfOpDef *od, int *n)
{
	const char *b[16], *e[16];
	*n = items(s, b, e, 16);
	TfArgDef *args = arena_alloc(a, sizeof *args * (size_t)(*n + 1));
	for (int i = 0; i < *n; i++) {
		Cur c = {r, b[i], e[i]};
		parse_arg(&c, a, od, &args[i]);
	}
	return args;
}

static TfOpDef *parse_row(const struct Row *r, Arena *a)
{
	TfOpDef *od = arena_alloc(a, sizeof *od);
	od->name = r->name;
	const char *b[24], *e[24];
	od->nattrs = items(r->attrs, b, e, 24);
	od->attrs = arena_alloc(a, sizeof(TfAttrDef) * (size_t)(od->nattrs + 1));
	for (int i = 0; i < od->nattrs; i++) {
		Cur c = {r, b[i], e[i]};
		parse_attr(&c, a, &od->attrs[i]);
	}
	od->in = parse_args(r, r->in, a, od, &od->nin);
	od->out = parse_args(r, r->out, a, od, &od->nout);
	int np = items(r->pcc, b, e, 24);
	for (int i = 0; i < np; i++) {
		Cur c = {r, b[i], e[i]};
		const char *name = ident(&c, a);
		TfAttrDef *d = (TfAttrDef *)tf_opdef_attr(od, name);
		if (!d)
			bad(&c, "PCC names no attr");
		if (eat(&c, "<-")) {
			d->alias = ident(&c, a);
		} else if (eat(&c, "=")) {
			skip_ws(&c);
			d->pcc = arena_strndup(a, c.p, (size_t)(c.end - c.p));
			c.p = c.end;
		} else {
			bad(&c, "expected '=' or '<-'");
		}
		skip_ws(&c);
		if (c.p != c.end)
			bad(&c, "unexpected text");
	}
	return od;
}

static int cmp_row(const void *key, const void *elem)
{
	return strcmp(key, ((const struct Row *)elem)->name);
}

const TfOpDef *tf_opdef(TfOpDefs *t, const char *name)
{
	if (!name)
		return NULL;
	const struct Row *r = bsearch(name, rows, NROWS, sizeof rows[0], cmp_row);
	if (!r)
		return NULL;
	size_t i = (size_t)(r - rows);
	if (!t->rows[i])
		t->rows[i] = parse_row(r, t->a);
	return t->rows[i];
}

const TfAttrDef *tf_opdef_attr(const TfOpDef *d, const char *name)
{
	for (int i = 0; i < d->nattrs; i++)
		if (!strcmp(d->attrs[i].name, name))
			return &d->attrs[i];
	return NULL;
}
