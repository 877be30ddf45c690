/* tfgraph.c — TensorFlow GraphDefs into pcc graphs.
 *
 * Two readers fill one intermediate form (TfNode: name, op, inputs, attrs
 * already converted to gir values, _output_shapes, a Const's type): the
 * protobuf text-format reader here (over pbtxt.c's message tree) and the
 * TF.js model.json reader (tfjson.c).  tf_build then
 *   1. refuses TF1 control flow (NextIteration makes cycles; Switch/Merge
 *      make data-dependent execution that a static plan cannot schedule);
 *   2. creates one op per node, resolves "x", "x:k" and "^x" inputs;
 *   3. types every op in topological order (Kahn's algorithm, iterative):
 *      Placeholders and Variables from their shape/dtype attrs with -1
 *      bound to the batch, Consts from their tensor, everything else from
 *      the op table's shape functions (op_infer, which folds small shape
 *      computations such as Shape -> StridedSlice -> Pack) or, failing
 *      that, from _output_shapes;
 *   4. reports every node whose outputs are used or expected but whose
 *      shape is unknown, by name.
 * docs/tf-import.md describes the mapping. */
#include "tfimport.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- dtypes --------------------------------------------------------- */

/* TensorFlow's DataType enum, by number (types.proto). */
static const char *const tf_dtypes[] = {
	"DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8",
	"DT_INT16", "DT_INT8", "DT_STRING", "DT_COMPLEX64", "DT_INT64",
	"DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16",
	"DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF",
	"DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64",
};

static const struct {
	const char *tf;
	DType dt;
} dtype_map[] = {
	{"DT_FLOAT", DT_F32}, {"DT_DOUBLE", DT_F64}, {"DT_HALF", DT_F16},
	{"DT_BFLOAT16", DT_BF16}, {"DT_INT8", DT_I8}, {"DT_INT16", DT_I16},
	{"DT_INT32", DT_I32}, {"DT_INT64", DT_I64}, {"DT_UINT8", DT_U8},
	{"DT_BOOL", DT_BOOL},
};

const char *tf_dtype_name(int64_t num)
{
	if (num >= 100)
		num -= 100; /* _REF types */
	if (num < 0 || num >= (int64_t)(sizeof tf_dtypes / sizeof *tf_dtypes))
		return NULL;
	return tf_dtypes[num];
}

bool tf_dtype(const char *tfname, DType *out)
{
	if (!tfname)
		return false;
	size_t n = strlen(tfname);
	if (n > 4 && strcmp(tfname + n - 4, "_REF") == 0)
		n -= 4;
	for (size_t i = 0; i < sizeof dtype_map / sizeof *dtype_map; i++)
		if (strlen(dtype_map[i].tf) == n &&
		    strncmp(dtype_map[i].tf, tfname, n) == 0) {
			*out = dtype_map[i].dt;
			return true;
		}
	return false;
}

double tf_half(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;
	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m + 1024, e - 25);
	return (h & 0x8000) ? -v : v;
}

double tf_bfloat16(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

/* ---- building nodes ------------------------------------------------- */

void tf_build_init(TfBuild *b, const char *file, const TfImportOptions *o,
		   Diag *d)
{
	memset(b, 0, sizeof *b);
	/* graph name: the file's base name without extension, as an ident */
	const char *base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : (file ? file : "main");
	char name[128];
	size_t k = 0;
	for (const char *p = base; *p && *p != '.' && k + 2 < sizeof name; p++)
		name[k++] = isalnum((unsigned char)*p) || *p == '_' || *p == '-'
				    ? *p : '_';
	name[k] = 0;
	if (k == 0 || strcmp(name, "model") == 0) {
		/* TF.js: .../age/model.json is "age" */
		const char *dir = file ? strrchr(file, '/') : NULL;
		k = 0;
		if (dir && dir > file) {
			const char *s = dir - 1;
			while (s > file && s[-1] != '/')
				s--;
			for (const char *p = s; p < dir && k + 2 < sizeof name; p++)
				name[k++] = isalnum((unsigned char)*p) || *p == '_' ||
						    *p == '-' ? *p : '_';
		}
		name[k] = 0;
		if (k == 0)
			strcpy(name, "main");
	}
	if (isdigit((unsigned char)name[0]) || name[0] == '-') {
		memmove(name + 1, name, strlen(name) + 1);
		name[0] = '_';
	}
	b->g = graph_new(name);
	b->d = d;
	b->file = file ? graph_intern(b->g, file) : NULL;
	b->g->src_file = b->file;
	b->batch = o && o->batch > 0 ? o->batch : 1;
	b->tmp = arena_new();
	if (o && o->nshapes > 0) {
		b->shapes = o->shapes;
		b->nshapes = o->nshapes;
		b->shape_used = arena_alloc(b->tmp, sizeof(bool) * (size_t)o->nshapes);
	}
}

TfNode *tf_node_new(TfBuild *b)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->nodes = xrealloc(b->nodes, sizeof(TfNode) * b->cap);
	}
	TfNode *n = &b->nodes[b->n++];
	memset(n, 0, sizeof *n);
	n->loc = (Loc){b->file, 0, 0};
	return n;
}

void tf_node_input(TfBuild *b, TfNode *n, const char *s)
{
	if (n->nin == n->capin) {
		uint32_t nc = n->capin ? n->capin * 2 : 4;
		n->in = arena_realloc(b->tmp, n->in, sizeof(char *) * n->capin,
				      sizeof(char *) * nc);
		n->capin = nc;
	}
	n->in[n->nin++] = arena_strdup(b->tmp, s);
}

void tf_node_attr(TfBuild *b, TfNode *n, const char *key, Value *v)
{
	if (!v)
		return;
	if (key[0] == '@') { /* pcc's annotations are not TensorFlow's to set */
		diag_warning(b->d, n->loc, "node%s%s%s: attribute '%s' dropped: "
			     "names beginning with '@' are pcc's annotations",
			     n->name ? " '" : "", n->name ? n->name : "",
			     n->name ? "'" : "", key);
		return;
	}
	key = graph_intern(b->g, key);
	for (uint32_t i = 0; i < n->nattr; i++)
		if (n->attrs[i].key == key) {
			n->attrs[i].val = v;
			return;
		}
	if (n->nattr == n->capattr) {
		uint32_t nc = n->capattr ? n->capattr * 2 : 4;
		n->attrs = arena_realloc(b->g->arena, n->attrs,
					 sizeof(Attr) * n->capattr,
					 sizeof(Attr) * nc);
		n->capattr = nc;
	}
	n->attrs[n->nattr++] = (Attr){key, v};
}

Value *tf_type_value(TfBuild *b, const char *tfname)
{
	DType dt;
	if (tf_dtype(tfname, &dt))
		return val_ident(b->g->arena, dtype_name(dt));
	if (!tfname || !is_ident(tfname))
		return NULL;
	return val_ident(b->g->arena, tfname);
}

Value *tf_shape_value(TfBuild *b, const TfShape *s)
{
	if (s->rank < 0)
		return val_ident(b->g->arena, "unknown");
	Value *v = val_list(b->g->arena, (uint32_t)s->rank);
	for (int k = 0; k < s->rank; k++)
		v->list.items[k] = val_int(b->g->arena, s->dims[k] < 0 ? -1 : s->dims[k]);
	return v;
}

Value *tf_bytes_value(TfBuild *b, const char *s, size_t n)
{
	/* printable ASCII or valid-looking UTF-8, no NUL or control bytes */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) {
			b->nbinary++;
			return NULL;
		}
	}
	char *t = arena_strndup(b->g->arena, s, n);
	Value *v = arena_alloc(b->g->arena, sizeof *v);
	v->kind = V_STR;
	v->s = t;
	return v;
}

static int64_t numel_of(const TfShape *s)
{
	if (s->rank < 0)
		return -1;
	int64_t n = 1;
	for (int k = 0; k < s->rank; k++) {
		if (s->dims[k] < 0)
			return -1;
		if (s->dims[k] && n > INT64_MAX / s->dims[k])
			return -1;
		n *= s->dims[k];
	}
	return n;
}

static uint64_t le_bits(const unsigned char *p, int size)
{
	uint64_t v = 0;
	for (int k = size - 1; k >= 0; k--)
		v = v << 8 | p[k];
	return v;
}

Value *tf_tensor_value(TfBuild *b, const TfTensor *t)
{
	DType dt;
	int64_t n = numel_of(&t->shape);
	if (n < 0 || n > TF_MAX_CONST_VALUES || !tf_dtype(t->dtype, &dt))
		return NULL;
	bool isf = dt == DT_F16 || dt == DT_BF16 || dt == DT_F32 || dt == DT_F64;
	int size = dtype_size(dt);
	double fv[TF_MAX_CONST_VALUES];
	int64_t iv[TF_MAX_CONST_VALUES];
	if (t->clen) {
		if (t->clen != (size_t)n * (size_t)size)
			return NULL;
		for (int64_t k = 0; k < n; k++) {
			uint64_t bits = le_bits(t->content + k * size, size);
			switch (dt) {
			case DT_F16: fv[k] = tf_half((uint16_t)bits); break;
			case DT_BF16: fv[k] = tf_bfloat16((uint16_t)bits); break;
			case DT_F32: {
				uint32_t u = (uint32_t)bits;
				float f;
				memcpy(&f, &u, sizeof f);
				fv[k] = f;
				break;
			}
			case DT_F64: memcpy(&fv[k], &bits, sizeof(double)); break;
			case DT_I8: iv[k] = (int8_t)bits; break;
			case DT_I16: iv[k] = (int16_t)bits; break;
			case DT_I32: iv[k] = (int32_t)bits; break;
			case DT_I64: iv[k] = (int64_t)bits; break;
			default: iv[k] = (int64_t)bits; break; /* u8, bool */
			}
		}
	} else {
		for (int64_t k = 0; k < n; k++) {
			if (isf)
				fv[k] = t->nf ? t->f[k < t->nf ? k : t->nf - 1]
					      : (t->ni ? (double)t->i[k < t->ni ? k : t->ni - 1] : 0);
			else
				iv[k] = t->ni ? t->i[k < t->ni ? k : t->ni - 1]
					      : (t->nf ? pcc_sat_i64(t->f[k < t->nf ? k : t->nf - 1]) : 0);
		}
	}
	Arena *a = b->g->arena;
	Value *items[TF_MAX_CONST_VALUES];
	for (int64_t k = 0; k < n; k++) {
		if (isf) {
			if (!isfinite(fv[k]))
				return NULL; /* gir has no spelling for inf/nan */
			items[k] = val_float(a, fv[k]);
		} else if (dt == DT_BOOL) {
			items[k] = val_bool(a, iv[k] != 0);
		} else {
			items[k] = val_int(a, iv[k]);
		}
	}
	if (t->shape.rank == 0)
		return items[0];
	Value *v = val_list(a, (uint32_t)n);
	for (int64_t k = 0; k < n; k++)
		v->list.items[k] = items[k];
	return v;
}

/* ---- protobuf text format: GraphDef message tree -> TfNodes ------------ */

typedef struct PbCtx {
	TfBuild *b;
	bool bad;
} PbCtx;

static bool pb_int(PbCtx *c, const PbField *f, int64_t *out)
{
	if (f->kind == PB_SCALAR) {
		char *e;
		errno = 0;
		long long v = strtoll(f->text, &e, 0);
		if (errno == ERANGE && f->text[0] != '-') {
			errno = 0;
			v = (long long)strtoull(f->text, &e, 0);
		}
		if (*e == 0 && e != f->text && errno == 0) {
			*out = v;
			return true;
		}
	}
	diag_error(c->b->d, f->loc, "field '%s': expected an integer", f->name);
	c->bad = true;
	return false;
}

static bool pb_float(PbCtx *c, const PbField *f, double *out)
{
	if (f->kind == PB_SCALAR) {
		char *e;
		double v = strtod(f->text, &e);
		if (e != f->text && (*e == 0 || ((*e == 'f' || *e == 'F') && !e[1]))) {
			*out = v;
			return true;
		}
	}
	diag_error(c->b->d, f->loc, "field '%s': expected a number", f->name);
	c->bad = true;
	return false;
}

static bool pb_bool(PbCtx *c, const PbField *f, bool *out)
{
	if (f->kind == PB_SCALAR) {
		const char *s = f->text;
		if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "t") ||
		    !strcmp(s, "1")) {
			*out = true;
			return true;
		}
		if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "f") ||
		    !strcmp(s, "0")) {
			*out = false;
			return true;
		}
	}
	diag_error(c->b->d, f->loc, "field '%s': expected true or false", f->name);
	c->bad = true;
	return false;
}

/* A DataType: an enum name or number. */
static const char *pb_dtype(PbCtx *c, const PbField *f)
{
	if (f->kind == PB_SCALAR) {
		if (isalpha((unsigned char)f->text[0]))
			return f->text;
		int64_t n;
		if (pb_int(c, f, &n)) {
			const char *s = tf_dtype_name(n);
			if (s)
				return s;
		}
	}
	diag_error(c->b->d, f->loc, "field '%s': expected a DataType", f->name);
	c->bad = true;
	return NULL;
}

static const char *pb_str(PbCtx *c, const PbField *f)
{
	if (f->kind == PB_STR)
		return f->text;
	diag_error(c->b->d, f->loc, "field '%s': expected a string", f->name);
	c->bad = true;
	return NULL;
}

/* TensorShapeProto { dim { size: N name: "" } unknown_rank: true } */
static void pb_shape(PbCtx *c, const PbField *m, TfShape *s)
{
	int rank = 0;
	bool unknown = false;
	for (const PbField *f = m->child; f; f = f->next)
		if (!strcmp(f->name, "dim"))
			rank++;
	s->dims = arena_alloc(c->b->tmp, sizeof(int64_t) * (size_t)(rank + 1));
	s->rank = 0;
	for (const PbField *f = m->child; f; f = f->next) {
		if (!strcmp(f->name, "dim") && f->kind == PB_MSG) {
			int64_t v = 0;
			for (const PbField *x = f->child; x; x = x->next)
				if (!strcmp(x->name, "size"))
					pb_int(c, x, &v);
			s->dims[s->rank++] = v < 0 ? -1 : v;
		} else if (!strcmp(f->name, "unknown_rank")) {
			pb_bool(c, f, &unknown);
		}
	}
	if (unknown)
		s->rank = -1;
}

static void push_f(TfBuild *b, TfTensor *t, double v)
{
	if ((t->nf & (t->nf - 1)) == 0 || t->nf == 0) {
		uint32_t nc = t->nf ? t->nf * 2 : 4;
		t->f = arena_realloc(b->tmp, t->f, sizeof(double) * t->nf,
				     sizeof(double) * nc);
	}
	t->f[t->nf++] = v;
}

static void push_i(TfBuild *b, TfTensor *t, int64_t v)
{
	if ((t->ni & (t->ni - 1)) == 0 || t->ni == 0) {
		uint32_t nc = t->ni ? t->ni * 2 : 4;
		t->i = arena_realloc(b->tmp, t->i, sizeof(int64_t) * t->ni,
				     sizeof(int64_t) * nc);
	}
	t->i[t->ni++] = v;
}

static void pb_tensor(PbCtx *c, const PbField *m, TfTensor *t)
{
	memset(t, 0, sizeof *t);
	t->shape.rank = 0;
	for (const PbField *f = m->child; f; f = f->next) {
		const char *k = f->name;
		int64_t iv;
		double fv;
		bool bv;
		if (!strcmp(k, "dtype")) {
			t->dtype = pb_dtype(c, f);
		} else if (!strcmp(k, "tensor_shape") && f->kind == PB_MSG) {
			pb_shape(c, f, &t->shape);
		} else if (!strcmp(k, "tensor_content")) {
			if (pb_str(c, f)) {
				t->content = (const unsigned char *)f->text;
				t->clen = f->len;
			}
		} else if (!strcmp(k, "float_val") || !strcmp(k, "double_val")) {
			if (pb_float(c, f, &fv))
				push_f(c->b, t, fv);
		} else if (!strcmp(k, "half_val")) {
			if (pb_int(c, f, &iv))
				push_f(c->b, t, t->dtype && !strcmp(t->dtype, "DT_BFLOAT16")
							? tf_bfloat16((uint16_t)iv)
							: tf_half((uint16_t)iv));
		} else if (!strcmp(k, "int_val") || !strcmp(k, "int64_val") ||
			   !strcmp(k, "uint32_val") || !strcmp(k, "uint64_val")) {
			if (pb_int(c, f, &iv))
				push_i(c->b, t, iv);
		} else if (!strcmp(k, "bool_val")) {
			if (pb_bool(c, f, &bv))
				push_i(c->b, t, bv);
		}
	}
}

/* One AttrValue message -> a gir value (NULL: nothing to keep). */
static Value *pb_attr_value(PbCtx *c, TfNode *nd, const char *key,
			    const PbField *m)
{
	TfBuild *b = c->b;
	Arena *a = b->g->arena;
	const PbField *f = m->child;
	if (!f)
		return NULL;
	const char *k = f->name;
	if (!strcmp(k, "list")) {
		if (f->kind != PB_MSG)
			goto bad;
		uint32_t n = 0;
		for (const PbField *x = f->child; x; x = x->next)
			n++;
		bool oshapes = !strcmp(key, "_output_shapes");
		if (oshapes) {
			nd->has_oshapes = true;
			nd->oshapes = arena_alloc(b->tmp, sizeof(TfShape) * (n + 1));
		}
		Value *l = val_list(a, n);
		uint32_t j = 0;
		for (const PbField *x = f->child; x; x = x->next) {
			Value *v = NULL;
			int64_t iv;
			double fv;
			bool bv;
			if (!strcmp(x->name, "s")) {
				if (pb_str(c, x))
					v = tf_bytes_value(b, x->text, x->len);
			} else if (!strcmp(x->name, "i")) {
				if (pb_int(c, x, &iv))
					v = val_int(a, iv);
			} else if (!strcmp(x->name, "f")) {
				if (pb_float(c, x, &fv))
					v = val_float(a, fv);
			} else if (!strcmp(x->name, "b")) {
				if (pb_bool(c, x, &bv))
					v = val_bool(a, bv);
			} else if (!strcmp(x->name, "type")) {
				v = tf_type_value(b, pb_dtype(c, x));
			} else if (!strcmp(x->name, "shape") && x->kind == PB_MSG) {
				TfShape s;
				pb_shape(c, x, &s);
				if (oshapes)
					nd->oshapes[nd->noshapes++] = s;
				v = tf_shape_value(b, &s);
			} else if (!strcmp(x->name, "tensor") && x->kind == PB_MSG) {
				TfTensor t;
				pb_tensor(c, x, &t);
				v = tf_tensor_value(b, &t);
			} else if (!strcmp(x->name, "func") && x->kind == PB_MSG) {
				for (const PbField *y = x->child; y; y = y->next)
					if (!strcmp(y->name, "name") && y->kind == PB_STR)
						v = val_str(a, y->text);
			}
			if (v)
				l->list.items[j++] = v;
		}
		l->list.n = j;
		return oshapes ? NULL : l;
	}
	if (!strcmp(k, "s"))
		return pb_str(c, f) ? tf_bytes_value(b, f->text, f->len) : NULL;
	if (!strcmp(k, "i")) {
		int64_t v;
		return pb_int(c, f, &v) ? val_int(a, v) : NULL;
	}
	if (!strcmp(k, "f")) {
		double v;
		if (!pb_float(c, f, &v))
			return NULL;
		return isfinite(v) ? val_float(a, v) : val_str(a, f->text);
	}
	if (!strcmp(k, "b")) {
		bool v;
		return pb_bool(c, f, &v) ? val_bool(a, v) : NULL;
	}
	if (!strcmp(k, "type"))
		return tf_type_value(b, pb_dtype(c, f));
	if (!strcmp(k, "shape") && f->kind == PB_MSG) {
		TfShape s;
		pb_shape(c, f, &s);
		return tf_shape_value(b, &s);
	}
	if (!strcmp(k, "tensor") && f->kind == PB_MSG) {
		TfTensor t;
		pb_tensor(c, f, &t);
		if (!strcmp(key, "value")) {
			nd->has_tensor = true;
			nd->tdtype = t.dtype;
			nd->tshape = t.shape;
		}
		return tf_tensor_value(b, &t);
	}
	if (!strcmp(k, "func") && f->kind == PB_MSG) {
		for (const PbField *y = f->child; y; y = y->next)
			if (!strcmp(y->name, "name") && y->kind == PB_STR)
				return val_str(a, y->text);
		return NULL;
	}
	if (!strcmp(k, "placeholder") && f->kind == PB_STR)
		return val_str(a, f->text);
bad:
	diag_error(b->d, f->loc, "attribute '%s': unexpected field '%s'", key, k);
	c->bad = true;
	return NULL;
}

static void pb_node(PbCtx *c, const PbField *m)
{
	TfBuild *b = c->b;
	TfNode *nd = tf_node_new(b);
	nd->loc = m->loc;
	nd->loc.file = b->file;
	for (const PbField *f = m->child; f; f = f->next) {
		const char *k = f->name;
		if (!strcmp(k, "name")) {
			nd->name = pb_str(c, f);
		} else if (!strcmp(k, "op")) {
			nd->op = pb_str(c, f);
		} else if (!strcmp(k, "input")) {
			if (pb_str(c, f))
				tf_node_input(b, nd, f->text);
		} else if (!strcmp(k, "device")) {
			nd->device = pb_str(c, f);
		} else if (!strcmp(k, "attr") && f->kind == PB_MSG) {
			const char *key = NULL;
			const PbField *val = NULL;
			for (const PbField *x = f->child; x; x = x->next) {
				if (!strcmp(x->name, "key"))
					key = pb_str(c, x);
				else if (!strcmp(x->name, "value") && x->kind == PB_MSG)
					val = x;
			}
			if (!key) {
				diag_error(b->d, f->loc, "attr without a key");
				c->bad = true;
			} else if (val) {
				tf_node_attr(b, nd, key, pb_attr_value(c, nd, key, val));
			}
		}
	}
}

Graph *tf_parse_pbtxt(const char *file, const char *src, size_t len,
		      const TfImportOptions *o, Diag *d)
{
	TfBuild b;
	tf_build_init(&b, file, o, d);
	PbField *root;
	if (!pb_parse(b.tmp, b.file, src, len, d, &root)) {
		tf_build_abort(&b);
		return NULL;
	}
	PbCtx c = {&b, false};
	bool any = false;
	for (PbField *f = root; f; f = f->next) {
		if (!strcmp(f->name, "node") && f->kind == PB_MSG) {
			pb_node(&c, f);
			any = true;
		} else if (!strcmp(f->name, "library") && f->kind == PB_MSG &&
			   f->child) {
			diag_warning(d, f->loc,
				     "the graph's function library is ignored; "
				     "calls to its functions are opaque ops");
		}
	}
	if (!any && !c.bad) {
		diag_error(d, (Loc){b.file, 0, 0}, "no 'node' in the GraphDef");
		c.bad = true;
	}
	if (c.bad) {
		tf_build_abort(&b);
		return NULL;
	}
	return tf_build(&b);
}

/* ---- the builder ------------------------------------------------------ */

void tf_build_abort(TfBuild *b)
{
	graph_free(b->g);
	b->g = NULL;
	arena_free(b->tmp);
	b->tmp = NULL;
	free(b->nodes);
	b->nodes = NULL;
}

static bool girname_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-/", *s))
			return false;
	return true;
}

static bool optype_ok(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	return girname_ok(s);
}

static uint32_t hash_find(const TfBuild *b, const uint32_t *ht, uint32_t mask,
			  const char *s, size_t n)
{
	uint32_t h = (uint32_t)hash_bytes(s, n) & mask;
	for (; ht[h]; h = (h + 1) & mask) {
		const char *t = b->nodes[ht[h] - 1].name;
		if (strlen(t) == n && memcmp(t, s, n) == 0)
			return ht[h];
	}
	return 0;
}

static const char *cf_kind(const char *op)
{
	static const char *const loops[] = {
		"NextIteration", "RefNextIteration", "Enter", "RefEnter",
		"Exit", "RefExit", "LoopCond",
	};
	static const char *const conds[] = {"Switch", "RefSwitch", "Merge",
					    "RefMerge"};
	for (size_t i = 0; i < sizeof loops / sizeof *loops; i++)
		if (!strcmp(op, loops[i]))
			return "while loop";
	for (size_t i = 0; i < sizeof conds / sizeof *conds; i++)
		if (!strcmp(op, conds[i]))
			return "conditional";
	return NULL;
}

/* Data input k (0-based, control inputs skipped) and its type, or NULL. */
static const Type *in_type(const Op *op, uint32_t k)
{
	for (uint32_t i = 0; i < op->nin; i++) {
		if (op->in[i].ctrl)
			continue;
		if (k-- == 0) {
			const Op *s = op->in[i].src;
			return op->in[i].idx < s->nout ? &s->out[op->in[i].idx] : NULL;
		}
	}
	return NULL;
}

static const char *pick_dtype_attr(const Graph *g, const Op *op, uint32_t k,
				   DType *dt)
{
	static const char *const keys[] = {"T", "dtype", "out_type", "DstT",
					   "output_type", "Tout",
					   "element_dtype", "type"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		Value *v = op_get(g, op, keys[i]);
		if (v && v->kind == V_LIST && k < v->list.n)
			v = v->list.items[k];
		if (v && v->kind == V_IDENT &&
		    dtype_parse(v->s, strlen(v->s), dt))
			return keys[i];
	}
	return NULL;
}

/* Placeholder-like ops: the type from `shape` and `dtype` attrs with -1
 * bound to the batch.  *bdim: first bound dimension or -1. */
bool tf_shape_spec_ok(const char *spec)
{
	const char *eq = strrchr(spec, '=');
	if (!eq || eq == spec || !eq[1])
		return false;
	int n = 0;
	for (const char *p = eq + 1; *p;) {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (end == p || errno || v < -1 || v > ((long long)1 << 40) ||
		    (*end && *end != ','))
			return false;
		if (++n > 32)
			return false;
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p)
			return false;
	}
	return true;
}

/* The --input-shape override for node name, as a shape value; NULL if
 * none. */
static Value *shape_override(TfBuild *b, const char *name)
{
	size_t ln = strlen(name);
	for (int i = 0; i < b->nshapes; i++) {
		const char *spec = b->shapes[i], *eq = strrchr(spec, '=');
		if (!eq || (size_t)(eq - spec) != ln || strncmp(spec, name, ln) != 0)
			continue;
		b->shape_used[i] = true;
		uint32_t n = 1;
		for (const char *p = eq + 1; *p; p++)
			n += *p == ',';
		Value *v = val_list(b->g->arena, n);
		const char *p = eq + 1;
		for (uint32_t k = 0; k < n; k++) {
			char *end;
			v->list.items[k] = val_int(b->g->arena, strtoll(p, &end, 10));
			p = *end ? end + 1 : end;
		}
		return v;
	}
	return NULL;
}

static bool shape_attr_type(TfBuild *b, Op *op, const TfNode *nd, Type *t,
			    int *bdim)
{
	Graph *g = b->g;
	Value *sv = op_get(g, op, "shape"), *dv = op_get(g, op, "dtype");
	Value *ov = b->nshapes && nd->name ? shape_override(b, nd->name) : NULL;
	DType dt;
	*bdim = -1;
	if (ov) {
		op_set(g, op, "shape", ov);
		sv = ov;
	}
	if (!sv || sv->kind != V_LIST || !dv || dv->kind != V_IDENT ||
	    !dtype_parse(dv->s, strlen(dv->s), &dt))
		return false;
	int64_t *dims = arena_alloc(g->arena, sizeof(int64_t) * (sv->list.n + 1));
	for (uint32_t k = 0; k < sv->list.n; k++) {
		if (sv->list.items[k]->kind != V_INT)
			return false;
		dims[k] = sv->list.items[k]->i;
		if (dims[k] < 0) {
			if (*bdim >= 0)
				diag_warning(b->d, op->loc,
					     "node '%s': unknown dimension %u also bound to the batch size %lld",
					     op->name, k, (long long)b->batch);
			else
				*bdim = (int)k;
			dims[k] = b->batch;
		}
	}
	t->dt = dt;
	t->rank = (int)sv->list.n;
	t->dims = dims;
	return true;
}

static bool is_placeholder_like(const char *t)
{
	return !strcmp(t, "Placeholder") || !strcmp(t, "PlaceholderWithDefault") ||
	       !strcmp(t, "VariableV2") || !strcmp(t, "Variable");
}

/* Types op (node nd).  Returns false if its shape stays unknown for a
 * reason already reported. */
static bool type_op(TfBuild *b, Op *op, TfNode *nd, bool *bound)
{
	Graph *g = b->g;
	char msg[256] = "";
	int bdim;
	Type t;
	if (is_placeholder_like(op->type) && shape_attr_type(b, op, nd, &t, &bdim)) {
		op->out = arena_alloc(g->arena, sizeof(Type));
		op->out[0] = t;
		op->nout = 1;
		op->types_given = true;
		if (bdim >= 0) {
			*bound = true;
			if (!strcmp(op->type, "Placeholder"))
				op_set_ann(g, op, ANN_BATCH_DIM, val_int(g->arena, bdim));
		}
		return true;
	}
	DType dt;
	if (nd->has_tensor && tf_dtype(nd->tdtype, &dt) && nd->tshape.rank >= 0 &&
	    numel_of(&nd->tshape) >= 0) {
		op->out = arena_alloc(g->arena, sizeof(Type));
		op->out[0] = type_make(g->arena, dt, nd->tshape.rank, nd->tshape.dims);
		op->nout = 1;
		op->types_given = true;
		return true;
	}
	int n = op->opcode != OPC_UNKNOWN ? op_num_outputs(g, op) : -1;
	if (n > 0) {
		Type *out = arena_alloc(g->arena, sizeof(Type) * (size_t)n);
		int r = op_infer(g, op, out, (uint32_t)n, g->arena, msg, sizeof msg);
		if (r == 0) {
			op->out = out;
			op->nout = (uint32_t)n;
			return true;
		}
		if (r < 0) {
			diag_error(b->d, op->loc, "node '%s' (%s): %s", op->name,
				   op->type, msg);
			return false;
		}
	}
	if (nd->has_oshapes && nd->noshapes > 0 && (n < 0 || (uint32_t)n == nd->noshapes)) {
		Type *out = arena_alloc(g->arena, sizeof(Type) * nd->noshapes);
		for (uint32_t k = 0; k < nd->noshapes; k++) {
			const TfShape *s = &nd->oshapes[k];
			if (!pick_dtype_attr(g, op, k, &out[k].dt)) {
				const Type *x = in_type(op, 0);
				if (!x)
					return true; /* left untyped: reported by the caller */
				out[k].dt = x->dt;
			}
			if (s->rank < 0)
				return true;
			out[k].rank = s->rank;
			out[k].dims = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(s->rank + 1));
			for (int j = 0; j < s->rank; j++)
				out[k].dims[j] = s->dims[j] < 0 ? b->batch : s->dims[j];
		}
		op->out = out;
		op->nout = nd->noshapes;
		op->types_given = true;
	}
	return true;
}

static void add_device_attrs(TfBuild *b, Op *op, const TfNode *nd)
{
	if (nd->device && *nd->device)
		op_set(b->g, op, "_device", val_str(b->g->arena, nd->device));
}

/* Union-find root of node i (iterative, with path halving). */
static uint32_t uf_root(uint32_t *parent, uint32_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

/* TensorFlow's colocation constraints: a node whose `_class` lists
 * "loc:@Y" must share Y's device.  The groups (transitive) become
 * @colocate = "ROOT" on every member, ROOT being the gir name of the node
 * the group's constraints lead to; `_class` itself is kept for the
 * backends. */
static void colocate(TfBuild *b, const uint32_t *ht, uint32_t mask)
{
	Graph *g = b->g;
	const char *key = graph_intern(g, "_class");
	uint32_t *parent = NULL;
	for (uint32_t i = 0; i < b->n; i++) {
		const Value *v = op_attr(g->ops[i], key);
		if (!v || v->kind != V_LIST)
			continue;
		for (uint32_t k = 0; k < v->list.n; k++) {
			const Value *x = v->list.items[k];
			if (x->kind != V_STR || strncmp(x->s, "loc:@", 5) != 0)
				continue;
			uint32_t j = hash_find(b, ht, mask, x->s + 5, strlen(x->s + 5));
			if (!j) {
				diag_warning(b->d, g->ops[i]->loc,
					     "node '%s': colocation with unknown node '%s' ignored",
					     b->nodes[i].name, x->s + 5);
				continue;
			}
			if (!parent) {
				parent = xmalloc(sizeof *parent * b->n);
				for (uint32_t m = 0; m < b->n; m++)
					parent[m] = m;
			}
			uint32_t ri = uf_root(parent, i), rj = uf_root(parent, j - 1);
			if (ri != rj)
				parent[ri] = rj;
		}
	}
	if (!parent)
		return;
	uint32_t *size = xcalloc(b->n, sizeof *size);
	for (uint32_t i = 0; i < b->n; i++)
		size[uf_root(parent, i)]++;
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t r = uf_root(parent, i);
		if (size[r] > 1)
			op_set_ann(g, g->ops[i], ANN_COLOCATE,
				   val_str(g->arena, g->ops[r]->name));
	}
	free(size);
	free(parent);
}

/* 1. TF1 control flow (a while loop's NextIteration first): reported,
 * false. */
static bool no_control_flow(TfBuild *b)
{
	const TfNode *cf = NULL;
	int cfrank = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		const char *op = b->nodes[i].op;
		const char *k = op ? cf_kind(op) : NULL;
		int r = !k ? 0 : strstr(op, "NextIteration") ? 3
			       : !strcmp(k, "while loop") ? 2 : 1;
		if (r > cfrank) {
			cf = &b->nodes[i];
			cfrank = r;
		}
	}
	if (cf)
		diag_error(b->d, cf->loc,
			   "graph uses TensorFlow 1 control flow (%s: node '%s' is %s); "
			   "pcc cannot plan dynamic control flow",
			   cf_kind(cf->op), cf->name ? cf->name : "?", cf->op);
	return !cf;
}

/* 2. the node names' hash table (cap slots: node index + 1, 0 free);
 * nameless, opless and duplicate nodes are reported. */
static uint32_t *index_names(TfBuild *b, uint32_t cap)
{
	Diag *d = b->d;
	uint32_t *ht = xcalloc(cap, sizeof *ht);
	for (uint32_t i = 0; i < b->n; i++) {
		TfNode *nd = &b->nodes[i];
		if (!nd->name || !*nd->name || !nd->op || !*nd->op) {
			if (nd->name && *nd->name)
				diag_error(d, nd->loc, "node '%s' has no op", nd->name);
			else
				diag_error(d, nd->loc, "node %u (op %s) has no name", i,
					   nd->op && *nd->op ? nd->op : "?");
			continue;
		}
		size_t ln = strlen(nd->name);
		if (hash_find(b, ht, cap - 1, nd->name, ln)) {
			diag_error(d, nd->loc, "duplicate node name '%s'", nd->name);
			continue;
		}
		uint32_t h = (uint32_t)hash_bytes(nd->name, ln) & (cap - 1);
		while (ht[h])
			h = (h + 1) & (cap - 1);
		ht[h] = i + 1;
	}
	return ht;
}

/* 3. the ops, in GraphDef order: op id == node index.  False (reported)
 * on an op type that is not an identifier. */
static bool add_ops(TfBuild *b)
{
	Graph *g = b->g;
	for (uint32_t i = 0; i < b->n; i++) {
		TfNode *nd = &b->nodes[i];
		if (!optype_ok(nd->op)) {
			diag_error(b->d, nd->loc, "node '%s': op type '%s' is not an identifier",
				   nd->name, nd->op);
			return false;
		}
		const char *name = nd->name;
		if (!girname_ok(name)) {
			char *s = arena_strdup(b->tmp, name);
			for (char *p = s; *p; p++)
				if (!isalnum((unsigned char)*p) && !strchr("_.-/", *p))
					*p = '_';
			name = s;
		}
		uint32_t idx;
		if (graph_lookup(g, name, &idx))
			name = graph_fresh_name(g, name);
		Op *op;
		while (!(op = graph_add_op(g, name, nd->op, nd->nin, 0)))
			name = graph_fresh_name(g, name);
		op->loc = nd->loc;
		op->attrs = nd->attrs;
		op->nattr = nd->nattr;
		op->capattr = nd->capattr;
		add_device_attrs(b, op, nd);
	}
	return true;
}

/* 4. the inputs, by name ("NAME", "NAME:K", "^NAME"); returns, per node,
 * 1 + the highest output index its users read (0: none). */
static uint32_t *connect_inputs(TfBuild *b, const uint32_t *ht, uint32_t mask)
{
	Graph *g = b->g;
	uint32_t *need = xcalloc(b->n + 1, sizeof *need);
	for (uint32_t i = 0; i < b->n; i++) {
		TfNode *nd = &b->nodes[i];
		Op *op = g->ops[i];
		for (uint32_t j = 0; j < nd->nin; j++) {
			const char *s = nd->in[j];
			bool ctrl = s[0] == '^';
			s += ctrl;
			size_t ln = strlen(s);
			uint64_t k = 0;
			const char *colon = strrchr(s, ':');
			if (colon && colon[1] && !ctrl) {
				const char *p = colon + 1;
				while (*p >= '0' && *p <= '9' && k < UINT32_MAX)
					k = k * 10 + (uint64_t)(*p++ - '0');
				if (!*p && k < UINT32_MAX)
					ln = (size_t)(colon - s);
				else
					k = 0;
			}
			uint32_t src = hash_find(b, ht, mask, s, ln);
			if (!src) {
				diag_error(b->d, nd->loc, "node '%s': input '%s' names no node",
					   nd->name, nd->in[j]);
				continue;
			}
			op->in[j] = (Input){g->ops[src - 1], (uint32_t)k, ctrl};
			if (!ctrl && k + 1 > need[src - 1])
				need[src - 1] = (uint32_t)k + 1;
		}
	}
	return need;
}

/* 5. types every op in topological order (an op after a bad input is
 * bad, unreported); a cycle is reported at its first node.  False when
 * --max-errors is reached. */
static bool type_all(TfBuild *b, const uint32_t *need, bool *bound)
{
	Graph *g = b->g;
	Diag *d = b->d;
	uint32_t n = b->n;
	graph_invalidate(g);
	TopoDag dag;
	graph_dag(g, &dag);
	dag.keep = NULL;
	uint32_t *left = xmalloc(sizeof *left * (n + 1));
	uint32_t *order = xmalloc(sizeof *order * (n + 1));
	uint8_t *bad = xcalloc(n + 1, 1);
	uint32_t m = topo_sort(&dag, order, left);
	bool ok = true;
	for (uint32_t t = 0; t < m && ok; t++) {
		uint32_t i = order[t];
		Op *op = g->ops[i];
		bool inbad = false;
		for (uint32_t j = 0; j < op->nin; j++)
			if (!op->in[j].ctrl && bad[op->in[j].src->id])
				inbad = true;
		if (inbad || !type_op(b, op, &b->nodes[i], bound)) {
			bad[i] = 1;
		} else if (op->nout == 0 && (need[i] > 0 ||
			   (op->opcode != OPC_UNKNOWN && op_num_outputs(g, op) > 0))) {
			bool known = op->opcode != OPC_UNKNOWN;
			diag_error(d, op->loc, "cannot infer the shape of node '%s' (%s)%s",
				   op->name, op->type,
				   known ? "" : ": pcc does not know this op type and the "
						"node has no _output_shapes");
			bad[i] = 1;
		} else if (need[i] > op->nout) {
			diag_error(d, op->loc,
				   "node '%s' (%s) has %u output%s but output %u is used",
				   op->name, op->type, op->nout, op->nout == 1 ? "" : "s",
				   need[i] - 1);
			bad[i] = 1;
		}
		ok = !(d->max_errors && d->nerrors >= d->max_errors);
	}
	for (uint32_t i = 0; ok && m < n && i < n; i++)
		if (left[i]) {
			diag_error(d, g->ops[i]->loc,
				   "the graph has a cycle through node '%s' (%s)",
				   g->ops[i]->name, g->ops[i]->type);
			break;
		}
	free(left);
	free(order);
	free(bad);
	return ok;
}

Graph *tf_build(TfBuild *b)
{
	Graph *g = b->g;
	Diag *d = b->d;
	int before = d->nerrors;
	uint32_t *ht = NULL, *need = NULL;
	bool bound = false;
	if (!no_control_flow(b))
		goto fail;
	uint32_t cap = 16;
	while (cap < 2 * b->n + 2)
		cap *= 2;
	ht = index_names(b, cap);
	if (d->nerrors != before || !add_ops(b))
		goto fail;
	/* 3b. colocation groups (_class: ["loc:@NAME", ...]) */
	colocate(b, ht, cap - 1);
	need = connect_inputs(b, ht, cap - 1);
	if (d->nerrors != before || !type_all(b, need, &bound) ||
	    d->nerrors != before)
		goto fail;
	if (bound)
		graph_set_attr(g, "batch", val_int(g->arena, b->batch));
	for (int i = 0; i < b->nshapes; i++)
		if (!b->shape_used[i])
			diag_warning(d, (Loc){b->file, 0, 0},
				     "--input-shape '%s': no Placeholder of that name",
				     b->shapes[i]);
	if (b->nbinary)
		diag_note(d, (Loc){b->file, 0, 0},
			  "%u binary string attribute%s dropped", b->nbinary,
			  b->nbinary == 1 ? "" : "s");
	graph_invalidate(g);
	free(ht);
	free(need);
	arena_free(b->tmp);
	b->tmp = NULL;
	free(b->nodes);
	b->nodes = NULL;
	return g;
fail:
	free(ht);
	free(need);
	tf_build_abort(b);
	return NULL;
}

/* ---- choosing a reader -------------------------------------------------- */

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

InputKind input_kind(const char *path, const char *src, size_t len)
{
	if (ends_with(path, ".gir"))
		return IN_GIR;
	if (ends_with(path, ".pbtxt") || ends_with(path, ".pbtx") ||
	    ends_with(path, ".pb.txt"))
		return IN_PBTXT;
	if (ends_with(path, ".json"))
		return IN_JSON;
	if (memchr(src, 0, len < 4096 ? len : 4096) || ends_with(path, ".pb"))
		return IN_BINARY;
	/* sniff: skip blanks and # comments */
	const char *p = src, *e = src + len;
	while (p < e) {
		if (isspace((unsigned char)*p)) {
			p++;
		} else if (*p == '#') {
			while (p < e && *p != '\n')
				p++;
		} else {
			break;
		}
	}
	if (p < e && (*p == '{' || *p == '['))
		return IN_JSON;
	if (e - p >= 4 && !strncmp(p, "gir", 3) && isspace((unsigned char)p[3]))
		return IN_GIR;
	return IN_PBTXT;
}

const char *skip_bom(const char *text, size_t *len)
{
	if (*len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		*len -= 3;
		return text + 3;
	}
	return text;
}

/* A binary file (a NUL byte, or .pb): an error at the first NUL byte,
 * where there is one. */
static void binary_input(Diag *d, const char *name, const char *text,
			 size_t len)
{
	const char *nul = memchr(text, 0, len);
	Loc loc = {name, 0, 0};
	if (nul) {
		loc.line = loc.col = 1;
		for (const char *p = text; p < nul; p++) {
			if (*p == '\n') {
				loc.line++;
				loc.col = 1;
			} else {
				loc.col++;
			}
		}
	}
	diag_error(d, loc, "%sbinary GraphDefs are not supported; write "
		   "the graph as text with tf.io.write_graph(graph_def, dir, "
		   "name, as_text=True)", nul ? "a NUL byte: a binary file; " : "");
}

Graph *parse_any_graph(const char *path, const char *name, const char *text,
		       size_t len, const TfImportOptions *o, Diag *d)
{
	switch (input_kind(path, text, len)) {
	case IN_GIR:
		return gir_parse(name, text, len, d);
	case IN_PBTXT:
		return tf_parse_pbtxt(name, text, len, o, d);
	case IN_JSON:
		return tf_parse_json(path, text, len, o, d);
	case IN_BINARY:
		break;
	}
	binary_input(d, name, text, len);
	return NULL;
}

Graph *read_any_graph(const char *path, const TfImportOptions *o, Diag *d,
		      char **srcp)
{
	size_t len = 0;
	char *src = read_file(path, &len);
	*srcp = src;
	const char *text = src ? skip_bom(src, &len) : NULL;
	diag_init(d, stderr, path, text, len);
	if (!src)
		return NULL;
	return parse_any_graph(path, path, text, len, o, d);
}

/* ---- TensorFlow device strings -> pinned @device ------------------------ */

/* "/job:worker/replica:0/task:1/device:GPU:0", "/device:GPU:0", "/gpu:0",
 * "/job:localhost/task:0/cpu:0": *task (0 if absent), *kind ("GPU",
 * "CPU", ... upper-cased into kind), *index.  False if malformed. */
static bool parse_tf_device(const char *s, long *task, char *kind,
			    size_t kn, long *index)
{
	*task = 0;
	*index = -1;
	kind[0] = 0;
	if (*s != '/')
		return false;
	while (*s == '/') {
		const char *p = ++s;
		while (*s && *s != '/')
			s++;
		size_t n = (size_t)(s - p);
		char part[64];
		if (n == 0 || n >= sizeof part)
			return false;
		memcpy(part, p, n);
		part[n] = 0;
		char *colon = strchr(part, ':');
		if (!colon)
			return false;
		*colon = 0;
		const char *val = colon + 1;
		char *end;
		if (!strcmp(part, "job") || !strcmp(part, "replica"))
			continue;
		if (!strcmp(part, "task")) {
			*task = strtol(val, &end, 10);
			if (end == val || *end || *task < 0)
				return false;
			continue;
		}
		const char *ty = part, *num = val;
		if (!strcmp(part, "device")) {
			/* device:GPU:0 */
			const char *c2 = strchr(val, ':');
			if (!c2)
				return false;
			size_t tl = (size_t)(c2 - val);
			if (tl == 0 || tl >= kn)
				return false;
			for (size_t i = 0; i < tl; i++)
				kind[i] = (char)toupper((unsigned char)val[i]);
			kind[tl] = 0;
			num = c2 + 1;
		} else {
			size_t tl = strlen(ty);
			if (tl >= kn)
				return false;
			for (size_t i = 0; i <= tl; i++)
				kind[i] = (char)toupper((unsigned char)ty[i]);
		}
		if (!strcmp(num, "*")) {
			*index = -1;
			continue;
		}
		*index = strtol(num, &end, 10);
		if (end == num || *end || *index < 0)
			return false;
	}
	return *s == 0 && kind[0];
}

int tf_pin_devices(Graph *g, Diag *d)
{
	int before = d->nerrors;
	const char *key = graph_intern(g, "_device");
	uint32_t other = 0;
	const Op *first_other = NULL;
	const char *other_dev = NULL;
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		const Value *v = op_attr(op, key);
		if (op->dead || !v || (v->kind != V_STR && v->kind != V_IDENT) ||
		    !*v->s || op_ann(g, op, ANN_DEVICE))
			continue;
		long task, idx;
		char kind[32];
		if (!parse_tf_device(v->s, &task, kind, sizeof kind, &idx)) {
			diag_error(d, op->loc, "node '%s': cannot read the device '%s'",
				   op->name, v->s);
			continue;
		}
		if (strcmp(kind, "GPU") || idx < 0) {
			if (!other++) {
				first_other = op;
				other_dev = v->s;
			}
			continue;
		}
		const Cluster *c = g->cluster;
		int dev = -1;
		if (c && task < c->nmachines) {
			char name[256];
			snprintf(name, sizeof name, "%s/gpu%ld",
				 c->machines[task].name, idx);
			dev = cluster_find_device(c, name);
		}
		if (dev < 0) {
			diag_error(d, op->loc,
				   "node '%s': device '%s' (task %ld, GPU %ld) is not in cluster '%s'; "
				   "give a cluster that has it, or --ignore-devices",
				   op->name, v->s, task, idx, c ? c->name : "?");
			continue;
		}
		op_set_ann(g, op, ANN_DEVICE, val_str(g->arena, c->devs[dev].name));
	}
	if (other)
		diag_note(d, (Loc){g->src_file, 0, 0},
			  "%u node%s name%s a device that is not a GPU (e.g. '%s' on '%s'); "
			  "pcc places ops on GPUs only, so %s not pinned",
			  other, other == 1 ? "" : "s", other == 1 ? "s" : "",
			  first_other->name, other_dev, other == 1 ? "it is" : "they are");
	return d->nerrors - before;
}
