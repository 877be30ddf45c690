/* tfjson.c — TensorFlow.js graph models (model.json) and GraphDefs in
 * protobuf's JSON mapping, read with json-c.
 *
 * model.json is {"format": "graph-model", "modelTopology": GraphDef,
 * "weightsManifest": [{"paths": [...], "weights": [{name, shape, dtype,
 * quantization?}]}]}.  In the JSON mapping int64s are strings and bytes
 * are base64.  TF.js keeps every Const's data in the weight shards, so
 * the values of small constants (<= 64 elements: shapes, axes, perms that
 * shape inference needs) are read from the shards beside model.json,
 * dequantizing uint8/uint16/float16 weights; large ones keep only their
 * type.  The nodes then go through tfgraph.c's builder. */
#include "tfimport.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A position in the JSON text, moved forward only: json-c keeps no
 * locations, so nodes are found again in the text, in order (each node's
 * "name" after the previous one's), in one pass over it. */
typedef struct TextPos {
	const char *src;
	size_t len, off;
	uint32_t line, col;
} TextPos;

typedef struct JCtx {
	TfBuild *b;
	bool bad;
	TextPos at;
} JCtx;

static void tp_advance(TextPos *tp, size_t to)
{
	for (; tp->off < to && tp->off < tp->len; tp->off++) {
		if (tp->src[tp->off] == '\n') {
			tp->line++;
			tp->col = 1;
		} else if (((unsigned char)tp->src[tp->off] & 0xC0) != 0x80) {
			tp->col++;
		}
	}
}

/* The next "KEY": at or after tp (quoted key then a colon), or false. */
static bool tp_find_key(const TextPos *tp, const char *key, size_t *at)
{
	size_t kl = strlen(key), from = tp->off;
	while (from < tp->len) {
		const char *p = memchr(tp->src + from, '"', tp->len - from);
		if (!p)
			return false;
		size_t o = (size_t)(p - tp->src);
		if (o + kl + 2 <= tp->len && memcmp(p + 1, key, kl) == 0 &&
		    p[kl + 1] == '"') {
			size_t q = o + kl + 2;
			while (q < tp->len && strchr(" \t\r\n", tp->src[q]))
				q++;
			if (q < tp->len && tp->src[q] == ':') {
				*at = o;
				return true;
			}
		}
		from = o + 1;
	}
	return false;
}

/* Where "KEY": is first in the text (the top-level keys), else 1:1. */
static Loc key_loc(const JCtx *c, const char *key)
{
	TextPos tp = {c->at.src, c->at.len, 0, 1, 1};
	size_t at;
	if (tp_find_key(&tp, key, &at))
		tp_advance(&tp, at);
	return (Loc){c->b->file, tp.line, tp.col};
}

/* Moves c->at to node name's "name": key and returns its location, or no
 * location if the text does not have it after c->at. */
static Loc node_text_loc(JCtx *c, const char *name)
{
	TextPos probe = c->at;
	size_t nl = name ? strlen(name) : 0, at;
	while (name && tp_find_key(&probe, "name", &at)) {
		size_t q = at + 6;
		while (q < probe.len && strchr(" \t\r\n:", probe.src[q]))
			q++;
		if (q + nl + 2 <= probe.len && probe.src[q] == '"' &&
		    memcmp(probe.src + q + 1, name, nl) == 0 &&
		    probe.src[q + 1 + nl] == '"') {
			tp_advance(&c->at, at);
			Loc l = {c->b->file, c->at.line, c->at.col};
			tp_advance(&c->at, q + nl + 2);
			return l;
		}
		probe.off = at + 1;
	}
	return (Loc){c->b->file, 0, 0};
}

static json_object *jget(json_object *o, const char *k1, const char *k2)
{
	json_object *v = NULL;
	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	if (json_object_object_get_ex(o, k1, &v))
		return v;
	if (k2 && json_object_object_get_ex(o, k2, &v))
		return v;
	return NULL;
}

static void jerr(JCtx *c, const TfNode *nd, const char *what, const char *key)
{
	diag_error(c->b->d, nd ? nd->loc : (Loc){c->b->file, 0, 0},
		   "node '%s': %s%s%s%s",
		   nd && nd->name ? nd->name : "?", what, key ? " '" : "",
		   key ? key : "", key ? "'" : "");
	c->bad = true;
}

/* int64 as a JSON number or a decimal string. */
static bool j_int(json_object *v, int64_t *out)
{
	if (!v)
		return false;
	switch (json_object_get_type(v)) {
	case json_type_int:
		*out = json_object_get_int64(v);
		return true;
	case json_type_double: {
		double f = json_object_get_double(v);
		if (f != floor(f) || fabs(f) > 9.2e18)
			return false;
		*out = (int64_t)f;
		return true;
	}
	case json_type_string: {
		const char *s = json_object_get_string(v);
		char *e;
		long long x = strtoll(s, &e, 10);
		if (e == s || *e)
			return false;
		*out = x;
		return true;
	}
	case json_type_boolean:
		*out = json_object_get_boolean(v);
		return true;
	default:
		return false;
	}
}

static bool j_float(json_object *v, double *out)
{
	if (!v)
		return false;
	switch (json_object_get_type(v)) {
	case json_type_int:
	case json_type_double:
		*out = json_object_get_double(v);
		return true;
	case json_type_string: { /* "NaN", "Infinity", "-Infinity", "1.5" */
		const char *s = json_object_get_string(v);
		char *e;
		*out = strtod(s, &e);
		return e != s && !*e;
	}
	default:
		return false;
	}
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Base64 (standard or URL-safe, padding optional) into a; NULL if bad. */
static unsigned char *b64_decode(Arena *a, const char *s, size_t n, size_t *outn)
{
	unsigned char *o = arena_alloc(a, n / 4 * 3 + 4);
	size_t k = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '=')
			break;
		int v = b64val((unsigned char)s[i]);
		if (v < 0)
			return NULL;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[k++] = (unsigned char)(acc >> bits);
		}
	}
	o[k] = 0;
	*outn = k;
	return o;
}

static const char *j_dtype(json_object *v)
{
	int64_t n;
	if (v && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	if (j_int(v, &n))
		return tf_dtype_name(n);
	return NULL;
}

static bool j_shape(JCtx *c, json_object *v, TfShape *s)
{
	s->rank = 0;
	s->dims = NULL;
	if (!v || !json_object_is_type(v, json_type_object))
		return false;
	json_object *ur = jget(v, "unknownRank", "unknown_rank");
	if (ur && json_object_get_boolean(ur)) {
		s->rank = -1;
		return true;
	}
	json_object *dims = jget(v, "dim", NULL);
	if (!dims)
		return true;
	if (!json_object_is_type(dims, json_type_array))
		return false;
	size_t n = json_object_array_length(dims);
	if (n > 4096)
		return false;
	s->dims = arena_alloc(c->b->tmp, sizeof(int64_t) * (n + 1));
	for (size_t k = 0; k < n; k++) {
		int64_t x = 0;
		json_object *sz = jget(json_object_array_get_idx(dims, k), "size", NULL);
		if (sz && !j_int(sz, &x))
			return false;
		s->dims[k] = x < 0 ? -1 : x;
	}
	s->rank = (int)n;
	return true;
}

static bool j_tensor(JCtx *c, json_object *v, TfTensor *t)
{
	TfBuild *b = c->b;
	memset(t, 0, sizeof *t);
	if (!v || !json_object_is_type(v, json_type_object))
		return false;
	t->dtype = j_dtype(jget(v, "dtype", NULL));
	json_object *sh = jget(v, "tensorShape", "tensor_shape");
	if (sh && !j_shape(c, sh, &t->shape))
		return false;
	json_object *tc = jget(v, "tensorContent", "tensor_content");
	if (tc && json_object_is_type(tc, json_type_string)) {
		t->content = b64_decode(b->tmp, json_object_get_string(tc),
					(size_t)json_object_get_string_len(tc), &t->clen);
		if (!t->content)
			return false;
	}
	static const char *const fkeys[][2] = {{"floatVal", "float_val"},
					       {"doubleVal", "double_val"},
					       {"halfVal", "half_val"}};
	static const char *const ikeys[][2] = {{"intVal", "int_val"},
					       {"int64Val", "int64_val"},
					       {"boolVal", "bool_val"},
					       {"uint32Val", "uint32_val"},
					       {"uint64Val", "uint64_val"}};
	for (int k = 0; k < 3; k++) {
		json_object *a = jget(v, fkeys[k][0], fkeys[k][1]);
		if (!a || !json_object_is_type(a, json_type_array))
			continue;
		size_t n = json_object_array_length(a);
		if (n > TF_MAX_CONST_VALUES)
			n = TF_MAX_CONST_VALUES; /* larger tensors keep no values */
		t->f = arena_alloc(b->tmp, sizeof(double) * (n + 1));
		for (size_t j = 0; j < n; j++) {
			json_object *x = json_object_array_get_idx(a, j);
			double f = 0;
			int64_t h;
			if (k == 2 && j_int(x, &h))
				f = t->dtype && !strcmp(t->dtype, "DT_BFLOAT16")
					    ? tf_bfloat16((uint16_t)h) : tf_half((uint16_t)h);
			else if (k < 2 && !j_float(x, &f))
				return false;
			t->f[j] = f;
		}
		t->nf = (uint32_t)n;
	}
	for (int k = 0; k < 5; k++) {
		json_object *a = jget(v, ikeys[k][0], ikeys[k][1]);
		if (!a || !json_object_is_type(a, json_type_array))
			continue;
		size_t n = json_object_array_length(a);
		if (n > TF_MAX_CONST_VALUES)
			n = TF_MAX_CONST_VALUES;
		t->i = arena_alloc(b->tmp, sizeof(int64_t) * (n + 1));
		for (size_t j = 0; j < n; j++)
			if (!j_int(json_object_array_get_idx(a, j), &t->i[j]))
				return false;
		t->ni = (uint32_t)n;
	}
	return true;
}

static Value *j_bytes(JCtx *c, json_object *v)
{
	if (!v || !json_object_is_type(v, json_type_string))
		return NULL;
	size_t n;
	unsigned char *s = b64_decode(c->b->tmp, json_object_get_string(v),
				      (size_t)json_object_get_string_len(v), &n);
	if (!s)
		return NULL;
	return tf_bytes_value(c->b, (const char *)s, n);
}

/* Element e of an AttrValue list's field kinds[k] (see j_attr_list) ->
 * gir value; NULL if nothing to keep.  Records an _output_shapes shape
 * on nd when oshapes.  *ok false on a malformed value. */
static Value *j_list_item(JCtx *c, TfNode *nd, int k, json_object *e,
			  bool oshapes, bool *ok)
{
	TfBuild *b = c->b;
	Arena *a = b->g->arena;
	Value *item = NULL;
	int64_t iv;
	double fv;
	switch (k) {
	case 0:
		item = j_bytes(c, e);
		break;
	case 1:
		if (!j_int(e, &iv))
			*ok = false;
		else
			item = val_int(a, iv);
		break;
	case 2:
		if (!j_float(e, &fv))
			*ok = false;
		else
			item = isfinite(fv) ? val_float(a, fv)
					    : val_str(a, json_object_get_string(e));
		break;
	case 3:
		item = val_bool(a, json_object_get_boolean(e));
		break;
	case 4:
		item = tf_type_value(b, j_dtype(e));
		break;
	case 5: {
		TfShape s;
		if (!j_shape(c, e, &s)) {
			*ok = false;
			break;
		}
		if (oshapes)
			nd->oshapes[nd->noshapes++] = s;
		item = tf_shape_value(b, &s);
		break;
	}
	case 6: {
		TfTensor t;
		if (!j_tensor(c, e, &t))
			*ok = false;
		else
			item = tf_tensor_value(b, &t);
		break;
	}
	case 7: {
		json_object *nm = jget(e, "name", NULL);
		if (nm && json_object_is_type(nm, json_type_string))
			item = val_str(a, json_object_get_string(nm));
		break;
	}
	}
	return item;
}

/* An AttrValue's list x (attribute key of nd) -> gir list; NULL for
 * _output_shapes, kept on nd instead.  *ok false on a malformed value. */
static Value *j_attr_list(JCtx *c, TfNode *nd, const char *key, json_object *x,
			  bool *ok)
{
	TfBuild *b = c->b;
	Arena *a = b->g->arena;
	if (!json_object_is_type(x, json_type_object)) {
		*ok = false;
		return NULL;
	}
	bool oshapes = !strcmp(key, "_output_shapes");
	static const char *const kinds[] = {"s", "i", "f", "b", "type",
					    "shape", "tensor", "func"};
	uint32_t total = 0;
	for (int k = 0; k < 8; k++) {
		json_object *arr = jget(x, kinds[k], NULL);
		if (arr && json_object_is_type(arr, json_type_array))
			total += (uint32_t)json_object_array_length(arr);
	}
	if (oshapes) {
		nd->has_oshapes = true;
		nd->oshapes = arena_alloc(b->tmp, sizeof(TfShape) * (total + 1));
	}
	Value *l = val_list(a, total);
	uint32_t j = 0;
	for (int k = 0; k < 8; k++) {
		json_object *arr = jget(x, kinds[k], NULL);
		if (!arr || !json_object_is_type(arr, json_type_array))
			continue;
		size_t n = json_object_array_length(arr);
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(arr, i);
			Value *item = j_list_item(c, nd, k, e, oshapes, ok);
			if (item)
				l->list.items[j++] = item;
		}
	}
	l->list.n = j;
	return oshapes ? NULL : l;
}

/* One AttrValue -> gir value; NULL if nothing to keep.  *ok false on a
 * malformed value. */
static Value *j_attr(JCtx *c, TfNode *nd, const char *key, json_object *v,
		     bool *ok)
{
	TfBuild *b = c->b;
	Arena *a = b->g->arena;
	json_object *x;
	*ok = true;
	if (!v || !json_object_is_type(v, json_type_object)) {
		*ok = false;
		return NULL;
	}
	if ((x = jget(v, "list", NULL)))
		return j_attr_list(c, nd, key, x, ok);
	if ((x = jget(v, "s", NULL)))
		return j_bytes(c, x);
	if ((x = jget(v, "i", NULL))) {
		int64_t iv;
		if (j_int(x, &iv))
			return val_int(a, iv);
		*ok = false;
		return NULL;
	}
	if ((x = jget(v, "f", NULL))) {
		double fv;
		if (!j_float(x, &fv)) {
			*ok = false;
			return NULL;
		}
		return isfinite(fv) ? val_float(a, fv) : val_str(a, json_object_get_string(x));
	}
	if ((x = jget(v, "b", NULL)))
		return val_bool(a, json_object_get_boolean(x));
	if ((x = jget(v, "type", NULL)))
		return tf_type_value(b, j_dtype(x));
	if ((x = jget(v, "shape", NULL))) {
		TfShape s;
		if (!j_shape(c, x, &s)) {
			*ok = false;
			return NULL;
		}
		return tf_shape_value(b, &s);
	}
	if ((x = jget(v, "tensor", NULL))) {
		TfTensor t;
		if (!j_tensor(c, x, &t)) {
			*ok = false;
			return NULL;
		}
		if (!strcmp(key, "value")) {
			nd->has_tensor = true;
			nd->tdtype = t.dtype ? arena_strdup(b->tmp, t.dtype) : NULL;
			nd->tshape = t.shape;
			/* TF.js keeps a Const's data in the weight shards, never
			 * in the graph: an empty tensor here is not TensorFlow's
			 * "zeros" but "in the shards".  It stays value-less
			 * unless read_weights finds its data. */
			if (!t.nf && !t.ni && !t.clen)
				return NULL;
		}
		return tf_tensor_value(b, &t);
	}
	if ((x = jget(v, "func", NULL))) {
		json_object *nm = jget(x, "name", NULL);
		return nm && json_object_is_type(nm, json_type_string)
			       ? val_str(a, json_object_get_string(nm)) : NULL;
	}
	if ((x = jget(v, "placeholder", NULL)) &&
	    json_object_is_type(x, json_type_string))
		return val_str(a, json_object_get_string(x));
	return NULL; /* {}: an unset AttrValue */
}

static const char *j_str(json_object *o, const char *key)
{
	json_object *v = jget(o, key, NULL);
	return v && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v) : NULL;
}

static void j_node(JCtx *c, json_object *o, size_t idx)
{
	TfBuild *b = c->b;
	TfNode *nd = tf_node_new(b);
	if (!json_object_is_type(o, json_type_object)) {
		diag_error(b->d, key_loc(c, "node"), "node %zu is not an object",
			   idx);
		c->bad = true;
		return;
	}
	const char *s;
	if ((s = j_str(o, "name")))
		nd->name = arena_strdup(b->tmp, s);
	nd->loc = node_text_loc(c, nd->name);
	if ((s = j_str(o, "op")))
		nd->op = arena_strdup(b->tmp, s);
	if ((s = j_str(o, "device")))
		nd->device = arena_strdup(b->tmp, s);
	json_object *in = jget(o, "input", NULL);
	if (in) {
		if (!json_object_is_type(in, json_type_array)) {
			jerr(c, nd, "'input' is not a list", NULL);
			return;
		}
		size_t n = json_object_array_length(in);
		for (size_t k = 0; k < n; k++) {
			json_object *e = json_object_array_get_idx(in, k);
			if (!json_object_is_type(e, json_type_string)) {
				jerr(c, nd, "an input is not a string", NULL);
				return;
			}
			tf_node_input(b, nd, json_object_get_string(e));
		}
	}
	json_object *attrs = jget(o, "attr", NULL);
	if (attrs && json_object_is_type(attrs, json_type_object)) {
		struct json_object_iterator it = json_object_iter_begin(attrs);
		struct json_object_iterator end = json_object_iter_end(attrs);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			const char *key = json_object_iter_peek_name(&it);
			bool ok;
			Value *v = j_attr(c, nd, key, json_object_iter_peek_value(&it), &ok);
			if (!ok)
				jerr(c, nd, "malformed attribute", key);
			else
				tf_node_attr(b, nd, key, v);
		}
	}
}

/* ---- weights: values of small constants -------------------------------- */

static int wsize(const char *dt)
{
	if (!strcmp(dt, "float32") || !strcmp(dt, "int32"))
		return 4;
	if (!strcmp(dt, "float16") || !strcmp(dt, "uint16") || !strcmp(dt, "int16"))
		return 2;
	if (!strcmp(dt, "uint8") || !strcmp(dt, "int8") || !strcmp(dt, "bool"))
		return 1;
	if (!strcmp(dt, "int64") || !strcmp(dt, "float64"))
		return 8;
	return 0; /* string, complex64: sizes unknown here */
}

/* Concatenated shards of one group, or NULL (warned once). */
static unsigned char *load_group(JCtx *c, json_object *paths, size_t *len)
{
	TfBuild *b = c->b;
	const char *slash = b->file ? strrchr(b->file, '/') : NULL;
	size_t dl = slash ? (size_t)(slash - b->file) + 1 : 0;
	size_t n = json_object_is_type(paths, json_type_array)
			   ? json_object_array_length(paths) : 0;
	unsigned char *all = NULL;
	size_t total = 0;
	for (size_t k = 0; k < n; k++) {
		const char *p = json_object_get_string(json_object_array_get_idx(paths, k));
		if (!p || strstr(p, "..") || p[0] == '/')
			goto fail;
		char *path = xmalloc(dl + strlen(p) + 1);
		memcpy(path, b->file, dl);
		strcpy(path + dl, p);
		size_t l;
		char *data = read_file_bytes(path, &l);
		if (!data) {
			diag_warning(b->d, (Loc){b->file, 0, 0},
				     "weights file '%s' not found; small constants "
				     "stored there have no values",
				     path);
			free(path);
			goto fail;
		}
		free(path);
		all = xrealloc(all, total + l + 1);
		memcpy(all + total, data, l);
		total += l;
		free(data);
	}
	*len = total;
	return all ? all : xcalloc(1, 1);
fail:
	free(all);
	return NULL;
}

static uint32_t node_find(const TfBuild *b, const uint32_t *ht, uint32_t mask,
			  const char *s)
{
	size_t n = strlen(s);
	for (uint32_t h = (uint32_t)hash_bytes(s, n) & mask; ht[h]; h = (h + 1) & mask) {
		const char *t = b->nodes[ht[h] - 1].name;
		if (t && !strcmp(t, s))
			return ht[h];
	}
	return 0;
}

/* Hashes the nodes that want values from the shards (small Consts
 * j_attr left value-less) into ht[cap] (node index + 1); returns how
 * many. */
static uint32_t wanted_consts(const TfBuild *b, uint32_t *ht, uint32_t cap)
{
	uint32_t want = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		TfNode *nd = &b->nodes[i];
		if (!nd->name || !nd->has_tensor || nd->tshape.rank < 0)
			continue;
		int64_t ne = 1;
		for (int k = 0; k < nd->tshape.rank && ne <= TF_MAX_CONST_VALUES; k++) {
			int64_t d = nd->tshape.dims[k];
			/* unknown or too large: no values wanted (and no overflow) */
			if (d < 0 || (d > 0 && ne > TF_MAX_CONST_VALUES / d))
				ne = TF_MAX_CONST_VALUES + 1;
			else
				ne *= d;
		}
		/* a Const with no data in the graph (j_attr left it
		 * value-less): the shard's data gives its value */
		if (ne > TF_MAX_CONST_VALUES)
			continue;
		uint32_t h = (uint32_t)hash_bytes(nd->name, strlen(nd->name)) & (cap - 1);
		while (ht[h])
			h = (h + 1) & (cap - 1);
		ht[h] = i + 1;
		want++;
	}
	return want;
}

/* The number of elements of a manifest entry's shape into *ne; false
 * when it is malformed or too large. */
static bool weight_count(json_object *shape, int64_t *ne)
{
	size_t r = json_object_array_length(shape);
	*ne = 1;
	for (size_t k = 0; k < r; k++) {
		int64_t dd;
		if (!j_int(json_object_array_get_idx(shape, k), &dd) || dd < 0 ||
		    (dd && *ne > INT64_MAX / 16 / dd))
			return false;
		*ne *= dd;
	}
	return true;
}

/* One stored element of es little-endian bytes at p, of dtype sd. */
static double weight_value(const unsigned char *p, int es, const char *sd)
{
	uint64_t bits = 0;
	for (int j = es - 1; j >= 0; j--)
		bits = bits << 8 | p[j];
	double v;
	if (!strcmp(sd, "float32")) {
		uint32_t u32 = (uint32_t)bits;
		float f;
		memcpy(&f, &u32, sizeof f);
		v = f;
	} else if (!strcmp(sd, "float16")) {
		v = tf_half((uint16_t)bits);
	} else if (!strcmp(sd, "float64")) {
		memcpy(&v, &bits, sizeof v);
	} else if (!strcmp(sd, "int32")) {
		v = (int32_t)bits;
	} else if (!strcmp(sd, "int16")) {
		v = (int16_t)bits;
	} else if (!strcmp(sd, "int8")) {
		v = (int8_t)bits;
	} else if (!strcmp(sd, "int64")) {
		v = (double)(int64_t)bits;
	} else {
		v = (double)bits; /* uint8, uint16, bool */
	}
	return v;
}

static void read_weights(JCtx *c, json_object *manifest)
{
	TfBuild *b = c->b;
	if (!manifest || !json_object_is_type(manifest, json_type_array))
		return;
	/* hash of the nodes that want values: small Consts */
	uint32_t cap = 16;
	while (cap < 2 * b->n + 2)
		cap *= 2;
	uint32_t *ht = xcalloc(cap, sizeof *ht);
	uint32_t want = wanted_consts(b, ht, cap);
	size_t ng = json_object_array_length(manifest);
	for (size_t gi = 0; gi < ng && want; gi++) {
		json_object *grp = json_object_array_get_idx(manifest, gi);
		json_object *ws = jget(grp, "weights", NULL);
		if (!ws || !json_object_is_type(ws, json_type_array))
			continue;
		unsigned char *data = NULL;
		size_t dlen = 0, off = 0;
		bool tried = false;
		size_t nw = json_object_array_length(ws);
		for (size_t wi = 0; wi < nw; wi++) {
			json_object *w = json_object_array_get_idx(ws, wi);
			const char *name = j_str(w, "name"), *dt = j_str(w, "dtype");
			json_object *shape = jget(w, "shape", NULL);
			json_object *q = jget(w, "quantization", NULL);
			const char *qdt = q ? j_str(q, "dtype") : NULL;
			if (!name || !dt || !shape ||
			    !json_object_is_type(shape, json_type_array))
				break;
			int es = wsize(qdt ? qdt : dt);
			if (!es)
				break; /* later offsets unknown */
			int64_t ne;
			if (!weight_count(shape, &ne))
				break;
			size_t bytes = (size_t)ne * (size_t)es;
			uint32_t id = node_find(b, ht, cap - 1, name);
			if (id && ne <= TF_MAX_CONST_VALUES) {
				if (!tried) {
					tried = true;
					data = load_group(c, jget(grp, "paths", NULL), &dlen);
				}
				if (!data || off + bytes > dlen)
					break;
				TfNode *nd = &b->nodes[id - 1];
				TfTensor t = {.dtype = nd->tdtype, .shape = nd->tshape};
				double scale = 1, mn = 0;
				if (q) {
					j_float(jget(q, "scale", NULL), &scale);
					j_float(jget(q, "min", NULL), &mn);
				}
				bool isf = !strcmp(dt, "float32") || !strcmp(dt, "float16") ||
					   !strcmp(dt, "float64");
				t.f = arena_alloc(b->tmp, sizeof(double) * (size_t)(ne + 1));
				t.i = arena_alloc(b->tmp, sizeof(int64_t) * (size_t)(ne + 1));
				const char *sd = qdt ? qdt : dt;
				for (int64_t k = 0; k < ne; k++) {
					double v = weight_value(data + off + (size_t)k * (size_t)es,
								es, sd);
					if (qdt && strcmp(qdt, "float16"))
						v = v * scale + mn;
					t.f[k] = v;
					t.i[k] = (int64_t)llround(v);
				}
				if (isf)
					t.nf = (uint32_t)ne;
				else
					t.ni = (uint32_t)ne;
				tf_node_attr(b, nd, "value", tf_tensor_value(b, &t));
				want--;
			}
			off += bytes;
		}
		free(data);
	}
	free(ht);
}

/* ---- entry ---------------------------------------------------------------- */

static void offset_loc(const char *src, size_t len, size_t off, Loc *loc)
{
	uint32_t line = 1, col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (src[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	loc->line = line;
	loc->col = col;
}

Graph *tf_parse_json(const char *file, const char *src, size_t len,
		     const TfImportOptions *o, Diag *d)
{
	TfBuild b;
	tf_build_init(&b, file, o, d);
	JCtx c = {&b, false, {src, len, 0, 1, 1}};
	if (len > INT_MAX) {
		diag_error(d, (Loc){b.file, 0, 0}, "JSON file too large");
		tf_build_abort(&b);
		return NULL;
	}
	json_tokener *tok = json_tokener_new_ex(64);
	if (!tok) {
		diag_error(d, (Loc){b.file, 0, 0}, "out of memory");
		tf_build_abort(&b);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *root = json_tokener_parse_ex(tok, src, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (je == json_tokener_continue) {
		Loc loc = {b.file, 0, 0};
		offset_loc(src, len, len, &loc);
		diag_error(d, loc, "unexpected end of JSON input");
		goto fail;
	}
	if (je != json_tokener_success || !root) {
		Loc loc = {b.file, 0, 0};
		offset_loc(src, len, end, &loc);
		diag_error(d, loc, "JSON: %s", json_tokener_error_desc(je));
		goto fail;
	}
	while (end < len && (src[end] == ' ' || src[end] == '\n' || src[end] == '\r' ||
			     src[end] == '\t'))
		end++;
	if (end < len) {
		Loc loc = {b.file, 0, 0};
		offset_loc(src, len, end, &loc);
		diag_error(d, loc, "JSON: unexpected text after the top-level value");
		goto fail;
	}
	json_object *gd = root, *manifest = NULL;
	json_object *topo = jget(root, "modelTopology", NULL);
	if (topo) {
		manifest = jget(root, "weightsManifest", NULL);
		gd = topo;
		if (jget(topo, "class_name", NULL) || jget(topo, "model_config", NULL)) {
			diag_error(d, key_loc(&c, "modelTopology"),
				   "a TF.js layers model is not a graph; convert it with "
				   "tensorflowjs_converter --output_format=tfjs_graph_model");
			goto fail;
		}
	} else if (jget(root, "graphDef", "graph_def")) {
		gd = jget(root, "graphDef", "graph_def");
	}
	json_object *nodes = jget(gd, "node", NULL);
	if (!nodes || !json_object_is_type(nodes, json_type_array)) {
		diag_error(d, key_loc(&c, nodes ? "node" : topo ? "modelTopology" :
					   jget(root, "graphDef", "graph_def") ?
					   (jget(root, "graphDef", NULL) ? "graphDef"
									  : "graph_def")
					   : ""),
			   "not a GraphDef or TF.js graph model: no 'node' list");
		goto fail;
	}
	json_object *lib = jget(gd, "library", NULL);
	if (lib && jget(lib, "function", NULL) &&
	    json_object_array_length(jget(lib, "function", NULL)) > 0)
		diag_warning(d, key_loc(&c, "library"),
			     "the graph's function library is ignored; calls to "
			     "its functions are opaque ops");
	size_t n = json_object_array_length(nodes);
	for (size_t k = 0; k < n && (!d->max_errors || d->nerrors < d->max_errors); k++)
		j_node(&c, json_object_array_get_idx(nodes, k), k);
	if (c.bad)
		goto fail;
	if (n == 0) {
		diag_error(d, key_loc(&c, "node"), "the graph has no nodes");
		goto fail;
	}
	read_weights(&c, manifest);
	json_object_put(root);
	return tf_build(&b);
fail:
	if (root)
		json_object_put(root);
	tf_build_abort(&b);
	return NULL;
}
