/* tf.h — internal to the TensorFlow backends (--emit=tf, --emit=tf-json):
 * TensorFlow's dtypes and OpDefs (tfopdef.c, table in tfops.def), the
 * GraphDef a gir graph or plan is lowered to (tf.c), and its writers in
 * protobuf text format and in TF.js's model.json (tfwrite.c).  Not part
 * of pcc's API; docs/backends.md describes the mapping. */
#ifndef PCC_TF_H
#define PCC_TF_H

#include "backend.h"

/* ---- tfopdef.c: dtypes ------------------------------------------------ */
/* TensorFlow's DataType numbers (types.proto); _REF types are +100. */
enum {
	TFDT_INVALID = 0, TFDT_FLOAT = 1, TFDT_DOUBLE = 2, TFDT_INT32 = 3,
	TFDT_UINT8 = 4, TFDT_INT16 = 5, TFDT_INT8 = 6, TFDT_STRING = 7,
	TFDT_COMPLEX64 = 8, TFDT_INT64 = 9, TFDT_BOOL = 10, TFDT_QINT8 = 11,
	TFDT_QUINT8 = 12, TFDT_QINT32 = 13, TFDT_BFLOAT16 = 14,
	TFDT_QINT16 = 15, TFDT_QUINT16 = 16, TFDT_UINT16 = 17,
	TFDT_COMPLEX128 = 18, TFDT_HALF = 19, TFDT_RESOURCE = 20,
	TFDT_VARIANT = 21, TFDT_UINT32 = 22, TFDT_UINT64 = 23, TFDT_COUNT
};
const char *tfdt_enum(int dt);              /* "DT_FLOAT"; NULL if unknown */
/* "float", "float32", "half", "DT_FLOAT", pcc's "f32"...: the number, or 0. */
int tfdt_parse(const char *s, size_t n);
int tfdt_of(DType dt);                      /* pcc dtype -> TF number */

/* ---- tfopdef.c: OpDefs ------------------------------------------------- */
typedef enum TfKind {
	TK_TYPE, TK_INT, TK_FLOAT, TK_BOOL, TK_STRING, TK_SHAPE, TK_TENSOR,
	TK_FUNC,
} TfKind;
const char *tk_name(TfKind k, bool list);   /* "list(int)" */

typedef struct TfArgDef {
	const char *name;
	const char *type_attr;   /* `x: T`: T (a type or list(type) attr) */
	const char *num_attr;    /* `values: N * T`: N */
	int fixed;               /* `split_dim: int32`: a TF dtype number */
	bool ref;                /* Ref(T) */
} TfArgDef;

typedef struct TfAttrDef {
	const char *name;
	TfKind kind;
	bool list;
	uint32_t types;          /* allowed TF dtypes, bit per number; 0 = any */
	const char **strs;       /* allowed strings, or NULL */
	int nstrs;
	bool has_min;
	int64_t min;             /* `>= MIN`: a list's length or an int */
	const char *dflt;        /* TensorFlow's default as written, or NULL */
	const char *pcc;         /* pcc's assumed value (PCC column), or NULL */
	const char *alias;       /* gir's other name (PCC `name <- alias`) */
} TfAttrDef;

typedef struct TfOpDef {
	const char *name;
	TfArgDef *in, *out;
	int nin, nout;
	TfAttrDef *attrs;
	int nattrs;
} TfOpDef;

/* The rows of tfops.def, parsed on first use into an arena (no global
 * state: one cache per emission or per test). */
typedef struct TfOpDefs {
	Arena *a;
	const TfOpDef **rows;
} TfOpDefs;
void tf_opdefs_init(TfOpDefs *t);
void tf_opdefs_free(TfOpDefs *t);
/* The OpDef of op type name, or NULL if the table has none.  A malformed
 * row is a bug: pcc_die. */
const TfOpDef *tf_opdef(TfOpDefs *t, const char *name);
const TfAttrDef *tf_opdef_attr(const TfOpDef *d, const char *name);
int tf_opdef_count(void);
const char *tf_opdef_name(int i);
bool tf_type_allowed(const TfAttrDef *a, int dt);

/* ---- tf.c: the lowered GraphDef --------------------------------------- */
typedef struct GdShape {
	int rank;                /* -1: unknown rank */
	int64_t *dims;           /* -1: unknown dimension */
} GdShape;

typedef enum GdSrc {
	GS_VALUES,               /* the gir value: 1 value (repeated) or numel */
	GS_GENERATED,            /* tf_gen_value(seed, offset + k) */
	GS_ZEROS,                /* no content: TensorFlow reads zeros */
} GdSrc;

typedef struct GdTensor {
	int dtype;               /* TF number */
	GdShape shape;
	GdSrc src;
	uint32_t nv;             /* GS_VALUES: number of values */
	double *f;               /* values of float dtypes */
	const char **s;          /* values of DT_STRING (NUL-terminated) */
	int64_t *i;              /* values of integer and bool dtypes */
	uint64_t seed;           /* GS_GENERATED */
	int64_t offset;
} GdTensor;

typedef struct GdVal GdVal;
struct GdVal {
	TfKind kind;
	bool list;
	union {
		struct { const char *p; size_t len; } s;
		int64_t i;
		double f;
		bool b;
		int type;
		GdShape shape;
		GdTensor *tensor;
		const char *func;
		struct { GdVal *items; uint32_t n; } l;   /* list: items of kind */
	};
};

typedef struct GdIn {
	uint32_t node;
	uint32_t idx;
	bool ctrl;
} GdIn;

typedef struct GdAttr {
	const char *key;
	GdVal v;
} GdAttr;

typedef struct GdNode {
	const char *name, *op;
	const char *device;      /* NULL: none */
	GdIn *in;
	uint32_t nin, capin;
	GdAttr *attrs;           /* sorted by key before writing */
	uint32_t nattr, capattr;
	const Op *src;           /* the gir op, NULL for nodes pcc adds */
	GdTensor *weight;        /* Const (and frozen variable): its data */
	int64_t order;           /* @order, or -1 */
} GdNode;

/* Node names, op types and string values point into the gir graph (or
 * the arena): the GdGraph is valid while the graph it was lowered from. */
typedef struct GdGraph {
	Arena *a;
	GdNode *nodes;
	uint32_t n, cap;
	int producer;
} GdGraph;

/* Options (docs/backends.md), read from --emit-opt. */
enum { TF_ORDER_CONTROL = 1, TF_ORDER_PRIORITY = 2 };
enum { TF_VARS_KEEP, TF_VARS_CONST, TF_VARS_AUTO };
typedef struct TfOpts {
	bool json;               /* tf-json: Consts hold no values, weights do */
	unsigned order;          /* TF_ORDER_* bits */
	bool keep_annotations;   /* @key -> _pcc_key */
	bool nccl;               /* allreduce=nccl */
	bool generate;           /* weights=generated */
	bool output_shapes;      /* _output_shapes on every node */
	int variables;           /* tf-json: TF_VARS_* */
	const char *job;
	int producer;
	double lr, momentum, beta1, beta2, epsilon;
	const char *weights_file;/* tf-json; "" = beside the output */
	const char *output;      /* -o argument */
	bool init;               /* the init target and save/ (docs/backends.md) */
	bool custom_ops;         /* ops outside tfops.def: written (else an error) */
} TfOpts;
/* Reads the backend's resolved options; false (message on stderr) on a
 * bad value. */
bool tf_opts_read(const EmitCtx *ctx, bool json, TfOpts *o);
/* Lowers g (a graph or a materialised plan, docs/plan.md) to a GraphDef:
 * Transfers become edges, AllReduce a collective, gir's shorthands valid
 * TF, every attr typed by its OpDef, @order enforced as o->order says.
 * Checks that the result is acyclic.  NULL after errors on d. */
GdGraph *tf_lower(const Graph *g, const TfOpts *o, Diag *d);
/* When tf_lower writes op as a chain of core TensorFlow ops (TF.js's Prelu
 * and FusedDepthwiseConv2dNative; _FusedConv2D and _FusedMatMul whose
 * fused_ops TensorFlow's kernels do not implement): the op type of the
 * chain's last node, which keeps op's name; the others are named
 * NAME/...  NULL when op is written as one node. */
const char *tf_lowered(const Graph *g, const Op *op);
void gd_free(GdGraph *gd);
/* Deterministic generated weights: element k of the tensor named name
 * (its @origin), uniform in [-0.5, 0.5) for floats, 0..4 for integers. */
uint64_t tf_gen_seed(const char *name);
double tf_gen_value(uint64_t seed, int64_t k, int dtype);
/* Value k of a tensor (generated, explicit with repetition, or zero). */
double gd_tensor_value(const GdTensor *t, int64_t k);
int64_t gd_numel(const GdShape *s);         /* -1 if unknown */

/* ---- tfwrite.c --------------------------------------------------------- */
/* protobuf text format, as protoc --decode prints a GraphDef. */
void gd_write_pbtxt(FILE *f, const GdGraph *gd);
/* model.json (TF.js graph model) naming the weights file wname; the
 * weights are written by gd_write_weights. */
void gd_write_json(FILE *f, const GdGraph *gd, const char *wname);
bool gd_write_weights(FILE *f, const GdGraph *gd);
/* Text format's float and double spelling (protobuf's SimpleFtoa/Dtoa). */
void tf_fmt_float(char *buf, size_t n, double v);
void tf_fmt_double(char *buf, size_t n, double v);

#endif
