/* tfimport.h — internal to the TensorFlow GraphDef importers: the
 * protobuf text-format reader (pbtxt.c), the GraphDef builder (tfgraph.c)
 * and the TF.js model.json reader (tfjson.c).  Not part of pcc's API. */
#ifndef PCC_TFIMPORT_H
#define PCC_TFIMPORT_H

#include "frontend.h"

/* ---- pbtxt.c: protobuf text format as a generic message tree ----------- */
typedef enum PbKind { PB_MSG, PB_SCALAR, PB_STR } PbKind;
typedef struct PbField PbField;
struct PbField {
	const char *name;
	PbKind kind;
	const char *text;        /* PB_SCALAR: the token; PB_STR: decoded bytes */
	size_t len;              /* (NUL-terminated either way) */
	PbField *child;          /* PB_MSG: its fields in order */
	PbField *next;
	Loc loc;
};
#define PB_MAX_DEPTH 100     /* protobuf's own default nesting limit */
/* Parses text format into fields allocated in a.  Iterative (an explicit
 * stack capped at PB_MAX_DEPTH).  Stops at the first syntax error, which
 * it reports as FILE:LINE:COL; returns false then. */
bool pb_parse(Arena *a, const char *file, const char *src, size_t len,
	      Diag *d, PbField **out);

/* ---- tfgraph.c: the format-independent builder ------------------------- */
typedef struct TfShape {
	int rank;                /* -1: unknown rank */
	int64_t *dims;           /* -1: unknown dimension */
} TfShape;

/* A TensorProto as read: values may be fewer than the elements (the last
 * one repeats, as in TensorFlow), or given as raw little-endian content. */
typedef struct TfTensor {
	const char *dtype;       /* "DT_FLOAT" */
	TfShape shape;
	double *f;               /* float_val, double_val, half_val (decoded) */
	int64_t *i;              /* int_val, int64_val, bool_val */
	uint32_t nf, ni;
	const unsigned char *content;   /* tensor_content */
	size_t clen;
} TfTensor;

typedef struct TfNode {
	const char *name, *op, *device;
	const char **in;
	uint32_t nin, capin;
	Attr *attrs;             /* gir values, allocated in the graph's arena */
	uint32_t nattr, capattr;
	TfShape *oshapes;        /* _output_shapes */
	uint32_t noshapes;
	bool has_oshapes;
	bool has_tensor;         /* Const: the value's type */
	const char *tdtype;
	TfShape tshape;
	Loc loc;
} TfNode;

typedef struct TfBuild {
	Graph *g;
	Diag *d;
	const char *file;
	int64_t batch;
	Arena *tmp;              /* scratch, freed by tf_build */
	TfNode *nodes;
	uint32_t n, cap;
	uint32_t nbinary;        /* binary string attrs dropped */
	const char *const *shapes;   /* TfImportOptions.shapes */
	int nshapes;
	bool *shape_used;
} TfBuild;

/* Starts a build: a new graph named after file, a scratch arena. */
void tf_build_init(TfBuild *b, const char *file, const TfImportOptions *o,
		   Diag *d);
TfNode *tf_node_new(TfBuild *b);
void tf_node_input(TfBuild *b, TfNode *n, const char *s);
/* Adds an attribute (v may be NULL: nothing is added). */
void tf_node_attr(TfBuild *b, TfNode *n, const char *key, Value *v);
/* "DT_FLOAT" (or "DT_FLOAT_REF") -> DT_F32; false for dtypes pcc lacks. */
bool tf_dtype(const char *tfname, DType *out);
/* TF DataType enum number -> "DT_FLOAT"; NULL if unknown. */
const char *tf_dtype_name(int64_t num);
/* A `type` attr as a gir identifier: f32, or the TF name if pcc lacks it. */
Value *tf_type_value(TfBuild *b, const char *tfname);
/* A `shape` attr: a list of ints, -1 unknown; `unknown` for unknown rank. */
Value *tf_shape_value(TfBuild *b, const TfShape *s);
/* A bytes attr: a string when printable, else NULL (counted in nbinary). */
Value *tf_bytes_value(TfBuild *b, const char *s, size_t n);
/* A tensor attr: its values (<= 64 elements) or NULL. */
Value *tf_tensor_value(TfBuild *b, const TfTensor *t);
/* Finishes: control-flow check, ops, inputs, types in topological order.
 * Frees the scratch arena; on error frees the graph and returns NULL. */
Graph *tf_build(TfBuild *b);
void tf_build_abort(TfBuild *b);
/* Half-precision bits to double (IEEE binary16 and bfloat16). */
double tf_half(uint16_t h);
double tf_bfloat16(uint16_t h);

#define TF_MAX_CONST_VALUES 64

#endif
