/* tfwrite.c — the GraphDef of tf.c written out, and the two backends.
 *
 * --emit=tf: protobuf text format, laid out exactly as protobuf's C++
 * printer (protoc --decode) prints a tensorflow.GraphDef: fields in
 * field-number order, map entries sorted by key, proto3 defaults left
 * out except inside the AttrValue oneof, floats as SimpleFtoa spells
 * them, bytes CEscape'd.  tf.io.write_graph(as_text=True) writes the
 * same fields.
 * --emit=tf-json: the same GraphDef in protobuf's JSON mapping, inside a
 * TF.js graph model: {format: "graph-model", modelTopology, weightsManifest}.
 * As TF.js's converter does, Const nodes keep only dtype and shape; their
 * values (and those of frozen variables) are in one weights file, float
 * dtypes as float32, integer dtypes as int32, bool as one byte, little
 * endian, in node order (docs/backends.md).  Both writers are linear. */
#include "tf.h"

#include "../passes/passes.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers and strings ------------------------------------------------ */

void tf_fmt_float(char *buf, size_t n, double v)
{
	float f = (float)v;
	if (isinf(f)) {
		snprintf(buf, n, f < 0 ? "-inf" : "inf");
		return;
	}
	if (isnan(f)) {
		snprintf(buf, n, "nan");
		return;
	}
	snprintf(buf, n, "%.*g", FLT_DIG, (double)f);
	if (strtof(buf, NULL) != f)
		snprintf(buf, n, "%.*g", FLT_DIG + 3, (double)f);
}

void tf_fmt_double(char *buf, size_t n, double v)
{
	if (isinf(v)) {
		snprintf(buf, n, v < 0 ? "-inf" : "inf");
		return;
	}
	if (isnan(v)) {
		snprintf(buf, n, "nan");
		return;
	}
	snprintf(buf, n, "%.*g", DBL_DIG, v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, n, "%.*g", DBL_DIG + 2, v);
}

/* protobuf's CEscape: \n \r \t \" \' \\ and octal for the rest. */
static void put_escaped(FILE *f, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		switch (c) {
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '"': fputs("\\\"", f); break;
		case '\'': fputs("\\'", f); break;
		case '\\': fputs("\\\\", f); break;
		default:
			if (c < 0x20 || c >= 0x7f)
				fprintf(f, "\\%03o", c);
			else
				fputc(c, f);
		}
	}
}

static void put_bytes(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	put_escaped(f, (const unsigned char *)s, n);
	fputc('"', f);
}

static void put_str(FILE *f, const char *s)
{
	put_bytes(f, s, strlen(s));
}

static void ind(FILE *f, int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", f);
}

/* Little-endian bytes of element k of a tensor in its own dtype (the
 * tensor_content encoding); returns the size. */
static int elem_bytes(const GdTensor *t, int64_t k, unsigned char *b)
{
	double v = gd_tensor_value(t, k);
	uint64_t bits = 0;
	int size;
	switch (t->dtype) {
	case TFDT_FLOAT: {
		float x = (float)v;
		uint32_t u;
		memcpy(&u, &x, 4);
		bits = u;
		size = 4;
		break;
	}
	case TFDT_DOUBLE:
		memcpy(&bits, &v, 8);
		size = 8;
		break;
	case TFDT_HALF:
	case TFDT_BFLOAT16: {
		float x = (float)v;
		uint32_t u;
		memcpy(&u, &x, 4);
		if (t->dtype == TFDT_BFLOAT16) {
			bits = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
		} else {
			/* binary16, round to nearest even */
			uint32_t sign = (u >> 16) & 0x8000;
			int e = (int)((u >> 23) & 0xff) - 127 + 15;
			uint32_t m = u & 0x7fffff;
			if (e >= 31)
				bits = sign | 0x7c00;
			else if (e <= 0) {
				if (e < -10) {
					bits = sign;
				} else {
					m |= 0x800000;
					int shift = 14 - e;
					uint32_t h = m >> shift;
					uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
					if (rem > half || (rem == half && (h & 1)))
						h++;
					bits = sign | h;
				}
			} else {
				uint32_t h = ((uint32_t)e << 10) | (m >> 13);
				uint32_t rem = m & 0x1fff;
				if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
					h++;
				bits = sign | h;
			}
		}
		size = 2;
		break;
	}
	case TFDT_INT64:
		bits = (uint64_t)(int64_t)v;
		size = 8;
		break;
	case TFDT_INT32:
		bits = (uint32_t)(int32_t)v;
		size = 4;
		break;
	case TFDT_INT16:
		bits = (uint16_t)(int16_t)v;
		size = 2;
		break;
	default:   /* int8, uint8, bool */
		bits = (uint8_t)(int)v;
		size = 1;
		break;
	}
	for (int i = 0; i < size; i++)
		b[i] = (unsigned char)(bits >> (8 * i));
	return size;
}

/* ---- protobuf text format ----------------------------------------------- */

static void pb_shape_body(FILE *f, const GdShape *s, int depth)
{
	if (s->rank < 0) {
		ind(f, depth);
		fputs("unknown_rank: true\n", f);
		return;
	}
	for (int i = 0; i < s->rank; i++) {
		ind(f, depth);
		if (s->dims[i] == 0) {
			fputs("dim {\n", f);
		} else {
			fputs("dim {\n", f);
			ind(f, depth + 1);
			fprintf(f, "size: %lld\n", (long long)s->dims[i]);
		}
		ind(f, depth);
		fputs("}\n", f);
	}
}

static void pb_tensor_body(FILE *f, const GdTensor *t, int depth)
{
	char buf[64];
	ind(f, depth);
	fprintf(f, "dtype: %s\n", tfdt_enum(t->dtype));
	ind(f, depth);
	fputs("tensor_shape {\n", f);
	pb_shape_body(f, &t->shape, depth + 1);
	ind(f, depth);
	fputs("}\n", f);
	if (t->src == GS_GENERATED) {
		int64_t n = gd_numel(&t->shape);
		ind(f, depth);
		fputs("tensor_content: \"", f);
		unsigned char b[8];
		for (int64_t k = 0; k < n; k++)
			put_escaped(f, b, (size_t)elem_bytes(t, k, b));
		fputs("\"\n", f);
		return;
	}
	if (t->src != GS_VALUES)
		return;
	for (uint32_t k = 0; k < t->nv; k++) {
		ind(f, depth);
		switch (t->dtype) {
		case TFDT_FLOAT:
			tf_fmt_float(buf, sizeof buf, t->f[k]);
			fprintf(f, "float_val: %s\n", buf);
			break;
		case TFDT_DOUBLE:
			tf_fmt_double(buf, sizeof buf, t->f[k]);
			fprintf(f, "double_val: %s\n", buf);
			break;
		case TFDT_HALF:
		case TFDT_BFLOAT16: {
			unsigned char b[8];
			GdTensor one = *t;
			one.nv = 1;
			one.f = &t->f[k];
			elem_bytes(&one, 0, b);
			fprintf(f, "half_val: %d\n", b[0] | b[1] << 8);
			break;
		}
		case TFDT_INT64:
			fprintf(f, "int64_val: %lld\n", (long long)t->i[k]);
			break;
		case TFDT_UINT64:
			fprintf(f, "uint64_val: %llu\n", (unsigned long long)(uint64_t)t->i[k]);
			break;
		case TFDT_STRING:
			fputs("string_val: ", f);
			put_str(f, t->s[k]);
			fputc('\n', f);
			break;
		case TFDT_BOOL:
			fprintf(f, "bool_val: %s\n", t->i[k] ? "true" : "false");
			break;
		default:
			fprintf(f, "int_val: %lld\n", (long long)t->i[k]);
			break;
		}
	}
}

static const char *const pb_field[] = {
	[TK_TYPE] = "type", [TK_INT] = "i", [TK_FLOAT] = "f", [TK_BOOL] = "b",
	[TK_STRING] = "s", [TK_SHAPE] = "shape", [TK_TENSOR] = "tensor",
	[TK_FUNC] = "func",
};

/* One scalar of an AttrValue (or of its ListValue) as `field: value`. */
static void pb_scalar(FILE *f, const GdVal *v, int depth)
{
	char buf[64];
	ind(f, depth);
	switch (v->kind) {
	case TK_TYPE:
		fprintf(f, "type: %s\n", tfdt_enum(v->type));
		break;
	case TK_INT:
		fprintf(f, "i: %lld\n", (long long)v->i);
		break;
	case TK_FLOAT:
		tf_fmt_float(buf, sizeof buf, v->f);
		fprintf(f, "f: %s\n", buf);
		break;
	case TK_BOOL:
		fprintf(f, "b: %s\n", v->b ? "true" : "false");
		break;
	case TK_STRING:
		fputs("s: ", f);
		put_bytes(f, v->s.p, v->s.len);
		fputc('\n', f);
		break;
	case TK_SHAPE:
		fputs("shape {\n", f);
		pb_shape_body(f, &v->shape, depth + 1);
		ind(f, depth);
		fputs("}\n", f);
		break;
	case TK_TENSOR:
		fputs("tensor {\n", f);
		pb_tensor_body(f, v->tensor, depth + 1);
		ind(f, depth);
		fputs("}\n", f);
		break;
	case TK_FUNC:
		fputs("func {\n", f);
		ind(f, depth + 1);
		fputs("name: ", f);
		put_str(f, v->func);
		fputc('\n', f);
		ind(f, depth);
		fputs("}\n", f);
		break;
	}
}

static void pb_attr_value(FILE *f, const GdVal *v, int depth)
{
	if (!v->list) {
		pb_scalar(f, v, depth);
		return;
	}
	ind(f, depth);
	fputs("list {\n", f);
	for (uint32_t i = 0; i < v->l.n; i++)
		pb_scalar(f, &v->l.items[i], depth + 1);
	ind(f, depth);
	fputs("}\n", f);
}

static void input_name(char *buf, size_t n, const GdGraph *gd, const GdIn *in)
{
	const char *s = gd->nodes[in->node].name;
	if (in->ctrl)
		snprintf(buf, n, "^%s", s);
	else if (in->idx)
		snprintf(buf, n, "%s:%u", s, in->idx);
	else
		snprintf(buf, n, "%s", s);
}

void gd_write_pbtxt(FILE *f, const GdGraph *gd)
{
	char *buf = xmalloc(4096);
	for (uint32_t i = 0; i < gd->n; i++) {
		const GdNode *n = &gd->nodes[i];
		fputs("node {\n  name: ", f);
		put_str(f, n->name);
		fputs("\n  op: ", f);
		put_str(f, n->op);
		fputc('\n', f);
		for (uint32_t j = 0; j < n->nin; j++) {
			input_name(buf, 4096, gd, &n->in[j]);
			fputs("  input: ", f);
			put_str(f, buf);
			fputc('\n', f);
		}
		if (n->device) {
			fputs("  device: ", f);
			put_str(f, n->device);
			fputc('\n', f);
		}
		for (uint32_t j = 0; j < n->nattr; j++) {
			fputs("  attr {\n    key: ", f);
			put_str(f, n->attrs[j].key);
			fputs("\n    value {\n", f);
			pb_attr_value(f, &n->attrs[j].v, 3);
			fputs("    }\n  }\n", f);
		}
		fputs("}\n", f);
	}
	if (gd->producer)
		fprintf(f, "versions {\n  producer: %d\n}\n", gd->producer);
	else
		fputs("versions {\n}\n", f);
	free(buf);
}

/* ---- JSON ------------------------------------------------------------------ */

static void js_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void js_cstr(FILE *f, const char *s)
{
	js_str(f, s, strlen(s));
}

static void js_base64(FILE *f, const unsigned char *s, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	fputc('"', f);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		fputc(tab[v >> 18 & 63], f);
		fputc(tab[v >> 12 & 63], f);
		fputc(i + 1 < n ? tab[v >> 6 & 63] : '=', f);
		fputc(i + 2 < n ? tab[v & 63] : '=', f);
	}
	fputc('"', f);
}

static void js_float(FILE *f, double v)
{
	char buf[64];
	float x = (float)v;
	if (isnan(x))
		fputs("\"NaN\"", f);
	else if (isinf(x))
		fputs(x < 0 ? "\"-Infinity\"" : "\"Infinity\"", f);
	else {
		tf_fmt_float(buf, sizeof buf, v);
		fputs(buf, f);
	}
}

static void js_shape(FILE *f, const GdShape *s)
{
	if (s->rank < 0) {
		fputs("{\"unknownRank\":true}", f);
		return;
	}
	if (s->rank == 0) {
		fputs("{}", f);
		return;
	}
	fputs("{\"dim\":[", f);
	for (int i = 0; i < s->rank; i++) {
		if (s->dims[i])
			fprintf(f, "%s{\"size\":\"%lld\"}", i ? "," : "", (long long)s->dims[i]);
		else
			fprintf(f, "%s{}", i ? "," : "");
	}
	fputs("]}", f);
}

/* Topology tensors hold no values: they are in the weights. */
static void js_tensor(FILE *f, const GdTensor *t)
{
	fprintf(f, "{\"dtype\":\"%s\",\"tensorShape\":", tfdt_enum(t->dtype));
	js_shape(f, &t->shape);
	fputc('}', f);
}

static void js_scalar(FILE *f, const GdVal *v)
{
	switch (v->kind) {
	case TK_TYPE:
		fprintf(f, "\"%s\"", tfdt_enum(v->type));
		break;
	case TK_INT:
		fprintf(f, "\"%lld\"", (long long)v->i);
		break;
	case TK_FLOAT:
		js_float(f, v->f);
		break;
	case TK_BOOL:
		fputs(v->b ? "true" : "false", f);
		break;
	case TK_STRING:
		js_base64(f, (const unsigned char *)v->s.p, v->s.len);
		break;
	case TK_SHAPE:
		js_shape(f, &v->shape);
		break;
	case TK_TENSOR:
		js_tensor(f, v->tensor);
		break;
	case TK_FUNC:
		fputs("{\"name\":", f);
		js_cstr(f, v->func);
		fputc('}', f);
		break;
	}
}

static void js_attr_value(FILE *f, const GdVal *v)
{
	fputc('{', f);
	fprintf(f, "\"%s\":", v->list ? "list" : pb_field[v->kind]);
	if (v->list) {
		fputc('{', f);
		if (v->l.n) {
			fprintf(f, "\"%s\":[", pb_field[v->kind]);
			for (uint32_t i = 0; i < v->l.n; i++) {
				if (i)
					fputc(',', f);
				js_scalar(f, &v->l.items[i]);
			}
			fputc(']', f);
		}
		fputc('}', f);
	} else {
		js_scalar(f, v);
	}
	fputc('}', f);
}

static const char *weight_dtype(int dt)
{
	switch (dt) {
	case TFDT_FLOAT: case TFDT_DOUBLE: case TFDT_HALF: case TFDT_BFLOAT16:
		return "float32";
	case TFDT_BOOL:
		return "bool";
	default:
		return "int32";
	}
}

void gd_write_json(FILE *f, const GdGraph *gd, const char *wname)
{
	char *buf = xmalloc(4096);
	fprintf(f, "{\"format\":\"graph-model\",\"generatedBy\":\"pcc %s\","
		"\"convertedBy\":\"pcc %s --emit=tf-json\",\n\"modelTopology\":{\"node\":[\n",
		PCC_VERSION, PCC_VERSION);
	for (uint32_t i = 0; i < gd->n; i++) {
		const GdNode *n = &gd->nodes[i];
		fputs("{\"name\":", f);
		js_cstr(f, n->name);
		fputs(",\"op\":", f);
		js_cstr(f, n->op);
		if (n->nin) {
			fputs(",\"input\":[", f);
			for (uint32_t j = 0; j < n->nin; j++) {
				input_name(buf, 4096, gd, &n->in[j]);
				if (j)
					fputc(',', f);
				js_cstr(f, buf);
			}
			fputc(']', f);
		}
		if (n->device) {
			fputs(",\"device\":", f);
			js_cstr(f, n->device);
		}
		if (n->nattr) {
			fputs(",\"attr\":{", f);
			for (uint32_t j = 0; j < n->nattr; j++) {
				if (j)
					fputc(',', f);
				js_cstr(f, n->attrs[j].key);
				fputc(':', f);
				js_attr_value(f, &n->attrs[j].v);
			}
			fputc('}', f);
		}
		fprintf(f, "}%s\n", i + 1 < gd->n ? "," : "");
	}
	fprintf(f, "],\"library\":{},\"versions\":{");
	if (gd->producer)
		fprintf(f, "\"producer\":%d", gd->producer);
	fputs("}},\n\"weightsManifest\":[{\"paths\":[", f);
	js_cstr(f, wname);
	fputs("],\"weights\":[", f);
	bool first = true;
	for (uint32_t i = 0; i < gd->n; i++) {
		const GdNode *n = &gd->nodes[i];
		if (!n->weight)
			continue;
		fputs(first ? "\n" : ",\n", f);
		first = false;
		fputs("{\"name\":", f);
		js_cstr(f, n->name);
		fputs(",\"shape\":[", f);
		for (int k = 0; k < n->weight->shape.rank; k++)
			fprintf(f, "%s%lld", k ? "," : "", (long long)n->weight->shape.dims[k]);
		fprintf(f, "],\"dtype\":\"%s\"}", weight_dtype(n->weight->dtype));
	}
	fputs("]}]}\n", f);
	free(buf);
}

bool gd_write_weights(FILE *f, const GdGraph *gd)
{
	for (uint32_t i = 0; i < gd->n; i++) {
		const GdTensor *t = gd->nodes[i].weight;
		if (!t)
			continue;
		int64_t n = gd_numel(&t->shape);
		const char *wd = weight_dtype(t->dtype);
		for (int64_t k = 0; k < n; k++) {
			double v = gd_tensor_value(t, k);
			unsigned char b[4];
			if (!strcmp(wd, "float32")) {
				float x = (float)v;
				uint32_t u;
				memcpy(&u, &x, 4);
				for (int j = 0; j < 4; j++)
					b[j] = (unsigned char)(u >> (8 * j));
				fwrite(b, 1, 4, f);
			} else if (!strcmp(wd, "int32")) {
				uint32_t u = (uint32_t)(int32_t)v;
				for (int j = 0; j < 4; j++)
					b[j] = (unsigned char)(u >> (8 * j));
				fwrite(b, 1, 4, f);
			} else {
				fputc(v != 0, f);
			}
		}
	}
	return !ferror(f);
}

/* ---- the backends ------------------------------------------------------------ */

static GdGraph *lower(const EmitCtx *ctx, bool json, TfOpts *o)
{
	if (!tf_opts_read(ctx, json, o))
		return NULL;
	Diag d;
	diag_init(&d, stderr, ctx->g->src_file, NULL, 0);
	return tf_lower(ctx->g, o, &d);
}

bool emit_tf_backend(FILE *f, const EmitCtx *ctx)
{
	TfOpts o;
	GdGraph *gd = lower(ctx, false, &o);
	if (!gd)
		return false;
	gd_write_pbtxt(f, gd);
	gd_free(gd);
	return true;
}

static bool emit_weights(FILE *f, const void *gd)
{
	return gd_write_weights(f, gd);
}

bool emit_tfjson_backend(FILE *f, const EmitCtx *ctx)
{
	TfOpts o;
	GdGraph *gd = lower(ctx, true, &o);
	if (!gd)
		return false;
	/* the weights file: as given, else beside the output, its name
	 * from -o alone (never from the input's graph name, which could
	 * lead anywhere: "graph x/../../y") */
	char *path;
	bool none = !strcmp(o.weights_file, "none");
	if (*o.weights_file && !none) {
		path = xstrdup(o.weights_file);
	} else if (!strcmp(o.output, "-")) {
		path = xstrdup("model.weights.bin");
	} else {
		size_t n = strlen(o.output);
		if (n > 5 && !strcmp(o.output + n - 5, ".json"))
			n -= 5;
		path = xmalloc(n + 16);
		snprintf(path, n + 16, "%.*s.weights.bin", (int)n, o.output);
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	bool ok = true;
	if (!none) {
		if (!write_file_atomic(path, emit_weights, gd)) {
			fprintf(stderr, "pcc: error: cannot write '%s': %s\n", path,
				strerror(errno));
			ok = false;
		} else if (!strcmp(o.output, "-") && !*o.weights_file) {
			fprintf(stderr, "pcc: note: weights written to '%s' (model.json "
				"names it; --emit-opt=weights_file=PATH to choose)\n", path);
		}
	}
	if (ok)
		gd_write_json(f, gd, base);
	free(path);
	gd_free(gd);
	return ok;
}
