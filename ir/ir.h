/* ir.h — pcc's in-memory graph IR: arena, types, values, ops, graphs,
 * clusters, diagnostics, the op table, the cost model and the simulator.
 * One header for the ir/ layer, sectioned by the file that defines each
 * prototype (QBE all.h style).  Nothing here holds global mutable state. */
#ifndef PCC_IR_H
#define PCC_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PCC_VERSION "0.1.0"
#define GIR_VERSION 1

/* Exit statuses (documented in docs/pcc.1). */
enum {
	EXIT_OK = 0,
	EXIT_BADINPUT = 1,
	EXIT_USAGE = 2,
	EXIT_INFEASIBLE = 3,
	EXIT_INTERNAL = 4,
};

typedef struct Arena Arena;
typedef struct Graph Graph;
typedef struct Op Op;
typedef struct Value Value;
typedef struct Attr Attr;
typedef struct Cluster Cluster;
typedef struct Diag Diag;

/* ---- arena.c ---------------------------------------------------------- */
/* Bump allocator.  Memory is zeroed and 16-byte aligned.  Built with
 * -DPCC_ARENA_MALLOC every allocation is a separate malloc so ASan and
 * valgrind see overruns (lcc's PURIFY). */
Arena *arena_new(void);
void arena_free(Arena *a);
void arena_reset(Arena *a);                 /* frees everything allocated */
void *arena_alloc(Arena *a, size_t n);
void *arena_realloc(Arena *a, void *p, size_t old, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
size_t arena_bytes(const Arena *a);         /* bytes obtained from malloc */

/* Checked malloc helpers for growable arrays outside arenas. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* For large arrays (arena blocks, name tables): memory the kernel may back
 * with huge pages, which cuts page faults and TLB misses on
 * million-op graphs.  Not zeroed; free() releases it. */
void *xmalloc_huge(size_t n);
/* Seconds on the monotonic clock (timing and search budgets only). */
double pcc_now(void);
/* x truncated to int64, defined for every double (a plan's or a model
 * file's numbers may be anything): NaN is 0, out of range saturates. */
int64_t pcc_sat_i64(double x);
/* Internal error: prints "pcc: internal error: ..." and aborts. */
_Noreturn void pcc_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* ---- intern.c --------------------------------------------------------- */
/* String interning: equal strings get the same pointer (open hashing). */
typedef struct Interner {
	Arena *arena;
	const char **slots;
	size_t cap, n;
} Interner;
void interner_init(Interner *in, Arena *a);
void interner_free(Interner *in);
const char *intern(Interner *in, const char *s);
const char *intern_n(Interner *in, const char *s, size_t n);
/* FNV-1a, shared by every hash table in pcc. */
uint64_t hash_bytes(const void *p, size_t n);

/* ---- heap.c ----------------------------------------------------------- */
/* A binary min-heap of (key, tie, id), ordered by key then tie. */
typedef struct HeapItem {
	double key;
	uint64_t tie;
	uint32_t id;
} HeapItem;
typedef struct Heap {
	HeapItem *a;
	size_t n, cap;
} Heap;
void heap_push(Heap *h, double key, uint64_t tie, uint32_t id);
bool heap_pop(Heap *h, HeapItem *out);      /* false when empty */
void heap_free(Heap *h);

/* ---- topo.c ----------------------------------------------------------- */
/* A DAG over nodes 0 .. n-1 for topo_sort: node v's out-edges are
 * start[v] .. start[v+1]-1 (start[0] .. start[n] are all the edges),
 * edge e leading to to[e], or to to_fn(arg, e) when to is NULL.  Nodes
 * keep rejects (keep NULL: none) are never sources; the caller sees that
 * no edge leads to them.  key NULL: FIFO, the sources by id, then nodes
 * as they become ready; else the ready node of least (key[v], tie[v])
 * first (tie NULL: the id). */
typedef struct TopoDag {
	uint32_t n;
	const uint32_t *start;
	const uint32_t *to;
	uint32_t (*to_fn)(const void *arg, uint32_t e);
	bool (*keep)(const void *arg, uint32_t v);
	const void *arg;
	const double *key;
	const uint64_t *tie;
} TopoDag;
/* Kahn's algorithm: the order into order[0 .. returned count); fewer
 * than the kept nodes when there is a cycle.  left (n + 1 entries, or
 * NULL) receives each node's in-edges from nodes not ordered: non-zero
 * exactly for the nodes left out by a cycle (or behind one). */
uint32_t topo_sort(const TopoDag *d, uint32_t *order, uint32_t *left);
/* From start, steps to pred(arg, v) (a value >= n: none) until a node
 * repeats; path (n + 1 entries) receives the cycle found, in the order
 * walked (backwards along the edges when pred gives predecessors), and
 * the length is returned.  0 when the walk ends first: path[0] is then
 * the last node reached (start >= n: path untouched). */
uint32_t topo_cycle(uint32_t n, uint32_t start,
		    uint32_t (*pred)(const void *arg, uint32_t v),
		    const void *arg, uint32_t *path);
/* The CSR form (start: n + 1 entries, adj: m) of the m edges
 * from[k * stride] -> to[k * stride], each node's in their order. */
void topo_csr(uint32_t n, uint32_t m, const uint32_t *from,
	      const uint32_t *to, size_t stride, uint32_t *start, uint32_t *adj);

/* ---- types.c ---------------------------------------------------------- */
typedef enum DType {
	DT_F16, DT_BF16, DT_F32, DT_F64,
	DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_BOOL,
	DT_COUNT,
} DType;
const char *dtype_name(DType dt);           /* "f32" */
int dtype_size(DType dt);                   /* bytes per element */
bool dtype_parse(const char *s, size_t n, DType *out);

#define DIM_UNKNOWN (-1)                    /* printed as '?' */
typedef struct Type {
	DType dt;
	int rank;
	int64_t *dims;                      /* rank entries (arena) */
} Type;
/* The largest dimension and the largest tensor (in bytes) pcc handles:
 * larger ones are refused at input (graph_verify), so that sizes, byte
 * counts and their sums never overflow int64 or lose precision as double. */
#define PCC_DIM_MAX ((int64_t)1 << 40)
#define PCC_BYTES_MAX ((int64_t)1 << 53)
/* Within those limits?  (Unknown dimensions are.) */
bool type_in_range(const Type *t);
int64_t type_numel(const Type *t);          /* -1 if any dim unknown */
int64_t type_bytes(const Type *t);          /* -1 if unknown */
bool type_eq(const Type *a, const Type *b);
bool type_known(const Type *t);
Type type_make(Arena *a, DType dt, int rank, const int64_t *dims);
/* Writes "f32[64,784]" into buf; returns buf. */
char *type_str(const Type *t, char *buf, size_t n);

/* ---- value.c ---------------------------------------------------------- */
/* Attribute values.  Quantities with units are normalised on input to a
 * base unit (bytes, seconds, bytes/second, FLOP/second) and printed back
 * in a canonical unit. */
typedef enum Unit {
	UNIT_NONE,
	UNIT_BYTES,
	UNIT_SECONDS,
	UNIT_BYTE_RATE,                     /* bytes per second */
	UNIT_FLOP_RATE,                     /* FLOP per second */
} Unit;

typedef enum ValKind {
	V_INT,                              /* i */
	V_FLOAT,                            /* f */
	V_QTY,                              /* f in base units of .unit */
	V_STR,                              /* s */
	V_BOOL,                             /* b */
	V_IDENT,                            /* s: bare identifier, e.g. SAME */
	V_TYPE,                             /* t */
	V_LIST,                             /* list */
	V_DICT,                             /* dict */
} ValKind;

struct Attr {
	const char *key;                    /* interned in the graph */
	Value *val;
};

struct Value {
	ValKind kind;
	Unit unit;                          /* V_QTY only */
	union {
		int64_t i;
		double f;
		const char *s;
		bool b;
		Type t;
		struct { Value **items; uint32_t n; } list;
		struct { Attr *items; uint32_t n; } dict;
	};
};

Value *val_int(Arena *a, int64_t i);
Value *val_float(Arena *a, double f);
Value *val_qty(Arena *a, double f, Unit u);
Value *val_str(Arena *a, const char *s);      /* copies s */
Value *val_ident(Arena *a, const char *s);    /* copies s */
Value *val_bool(Arena *a, bool b);
Value *val_type(Arena *a, Type t);
Value *val_list(Arena *a, uint32_t n);        /* n NULL items to fill */
Value *val_dict(Arena *a, uint32_t n);        /* n empty entries to fill */
/* Numeric value of an int, float or quantity; false for other kinds. */
bool val_number(const Value *v, double *out);
/* Strict number parsing for options: the whole of s, no blanks.
 * num_parse: a finite number (no nan, inf or overflow); int_parse: a
 * decimal integer in [lo,hi]. */
bool num_parse(const char *s, double *out);
bool int_parse(const char *s, long long lo, long long hi, long long *out);
/* Parses a unit suffix ("us", "GiB", "Gbps", ...): scale to base unit. */
bool unit_parse(const char *s, size_t n, Unit *u, double *scale);
const char *unit_name(Unit u);                /* "bytes", "seconds", ... */
/* A growable text buffer (malloc'd): the printers build text in one and
 * write it with one fwrite, instead of many locked stdio calls. */
typedef struct StrBuf {
	char *s;
	size_t n, cap;
} StrBuf;
void sb_reserve(StrBuf *b, size_t n);         /* room for n more bytes */
void sb_putn(StrBuf *b, const char *s, size_t n);
void sb_puts(StrBuf *b, const char *s);
void sb_putc(StrBuf *b, char c);
void sb_i64(StrBuf *b, int64_t x);
void sb_printf(StrBuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool sb_flush(StrBuf *b, FILE *f);            /* writes and empties b */
void sb_free(StrBuf *b);
/* Canonical text of a value (the printer's form), appended to b or
 * written to f.  Non-finite numbers, which gir cannot spell, print as 0
 * (NaN) or +-1e308. */
void val_format(StrBuf *b, const Value *v);
void val_print(FILE *f, const Value *v);
/* Canonical text of a number with a unit, e.g. "12us", "32GiB": the
 * shortest, and a fixed point of print -> parse -> print. */
void qty_print(FILE *f, double v, Unit u);
/* Identifier test for the printer: may s be printed without quotes? */
bool is_ident(const char *s);
void str_format(StrBuf *b, const char *s);   /* quoted, escaped */
void str_print(FILE *f, const char *s);
/* An attribute key: bare when it reads back as one, else quoted. */
void key_format(StrBuf *b, const char *k);
void type_format(StrBuf *b, const Type *t);   /* f32[64,784] */

/* ---- diag.c ----------------------------------------------------------- */
/* A source location.  file is interned or static; line/col are 1-based;
 * line 0 means "no location" (ops created by passes). */
typedef struct Loc {
	const char *file;
	uint32_t line, col;
} Loc;

/* A diagnostic sink for one input file.  src (optional) is the whole text,
 * used to print the offending line and a caret under col. */
struct Diag {
	FILE *out;                          /* stderr normally */
	const char *file;
	const char *src;
	size_t srclen;
	int nerrors;
	int max_errors;                     /* stop after this many (20) */
	const char *pass;                   /* set by the pass manager */
	bool quiet;                         /* count, print nothing */
};
void diag_init(Diag *d, FILE *out, const char *file, const char *src,
	       size_t srclen);
/* "FILE:LINE:COL: error: MSG\n  source line\n      ^\n" */
void diag_error(Diag *d, Loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_verror(Diag *d, Loc loc, const char *fmt, va_list ap);
void diag_note(Diag *d, Loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, Loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Reads a whole text file ("-" = stdin) into a malloc'd NUL-terminated
 * buffer.  Refused (NULL, errno EFBIG) beyond READ_MAX bytes (no reader
 * takes more: the gir parser's positions are ints), and what is no
 * regular file (a pipe, a device) is read as it comes and refused at a
 * NUL byte (EILSEQ: /dev/zero, /dev/urandom); ENOMEM when the memory
 * is not there.  read_error words them. */
char *read_file(const char *path, size_t *len);
/* The same for binary data (a TF.js weights shard): NUL bytes allowed. */
char *read_file_bytes(const char *path, size_t *len);
#define READ_MAX ((size_t)1 << 31)
/* What "cannot read 'FILE': ..." says after read_file set errno err. */
const char *read_error(int err);
/* The same without a copy where it can: a regular file is mapped
 * read-only (*mapped true; the text is then not NUL-terminated), anything
 * else read.  unmap_file releases either. */
char *map_file(const char *path, size_t *len, bool *mapped);
void unmap_file(char *p, size_t len, bool mapped);
/* "Did you mean": the candidate nearest to a misspelt word by edit
 * distance (optimal string alignment: insert, delete, substitute, swap
 * two neighbours), when at most a third of the word's length (at least
 * 1) — or the word is a prefix of the candidate.  Feed candidates with
 * suggest_add (one name) or suggest_add_keys (the keys of a
 * "key=default,..." list); suggest_best is NULL when none is close, and
 * suggest_hint is "; did you mean 'X'?" or "". */
typedef struct Suggest {
	const char *word;
	size_t bestd;
	char best[64];
	char hint[96];
} Suggest;
void suggest_init(Suggest *s, const char *word);
void suggest_add(Suggest *s, const char *cand);
void suggest_addn(Suggest *s, const char *cand, size_t n);
void suggest_add_keys(Suggest *s, const char *list);
const char *suggest_best(const Suggest *s);
const char *suggest_hint(Suggest *s);

/* ---- graph.c ---------------------------------------------------------- */
typedef struct Input {
	Op *src;                            /* producer */
	uint32_t idx;                       /* output index of src */
	bool ctrl;                          /* ^%src: order only */
} Input;

struct Op {
	const char *name;                   /* arena; unique in the graph */
	const char *type;                   /* interned op type, e.g. "MatMul" */
	Input *in;
	Type *out;
	const char **out_names;             /* NULL, or nout entries (NULL = none) */
	Attr *attrs;                        /* op attrs and @annotations, in order */
	uint32_t id;                        /* index in g->ops (see graph_compact) */
	int opcode;                         /* op table index or OPC_UNKNOWN */
	uint32_t nin;
	uint32_t nout;
	uint32_t nattr, capattr;
	bool dead;                          /* unlinked; removed by compact */
	bool types_given;                   /* ': types' present in the input */
	Loc loc;
};

/* Consumers of every op: CSR arrays indexed by op id. */
typedef struct Use {
	Op *op;                             /* consumer */
	uint32_t slot;                      /* index into op->in */
} Use;
typedef struct Uses {
	uint32_t *start;                    /* nops + 1 */
	Use *use;
} Uses;

/* One slot of the name table: a name -> (op, output index) entry.  The
 * name is op->name (idx 0) or op->out_names[idx].  Empty: op NULL, idx 0;
 * removed: op NULL, idx UINT32_MAX. */
struct NameSlot {
	Op *op;
	uint32_t hash;
	uint32_t idx;
};

/* Well-known annotation keys, interned once per graph (see annots.def). */
typedef enum AnnKey {
#define ANN(id, key, kind, doc) ANN_##id,
#include "annots.def"
#undef ANN
	ANN_COUNT
} AnnKey;

struct Graph {
	Arena *arena;
	Interner strs;
	const char *name;
	Attr *attrs;                        /* graph attrs {batch = 64} */
	uint32_t nattr, capattr;
	Op **ops;                           /* malloc'd; ops[i]->id == i */
	uint32_t nops, capops;
	struct NameSlot *names;             /* hash: op and output-alias names */
	uint32_t names_cap, names_used;     /* used counts tombstones */
	Cluster *cluster;                   /* NULL until attached */
	const char *src_file;               /* interned */
	const char *ann[ANN_COUNT];         /* interned annotation keys */
	Uses *uses;                         /* cached analysis, or NULL */
	uint32_t *topo;                     /* cached analysis, or NULL */
	uint8_t *folded;                    /* cached analysis, or NULL */
	/* Mutation counter: bumped by graph_invalidate (so by adding,
	 * removing and rewiring ops) and by op_set, op_unset and
	 * graph_set_attr.  Analyses cached outside the graph (the plan
	 * evaluator's batch analysis, passes/evaluate.c) are valid while it
	 * is unchanged.  Code that rewrites an op's inputs or types in place
	 * calls graph_invalidate, as the topological order needs anyway. */
	uint64_t gen;
	const char **comments;              /* header comments, printed back */
	uint32_t ncomments;
	/* graph_fresh_name: the next suffix to try per (interned) base */
	struct FreshSlot { const char *base; uint32_t next; } *fresh;
	uint32_t fresh_cap, fresh_n;
};

Graph *graph_new(const char *name);
/* A copy of g's live ops (renumbered in order), for trying a plan: it
 * shares attribute values, types' dimensions and the cluster with g, so
 * it must be freed before g. */
Graph *graph_clone(const Graph *g);
void graph_free(Graph *g);
const char *graph_intern(Graph *g, const char *s);
/* Creates an op with nin inputs and nout outputs (zeroed), appends it,
 * registers its name.  Returns NULL if the name is taken. */
Op *graph_add_op(Graph *g, const char *name, const char *type,
		 uint32_t nin, uint32_t nout);
/* The same with a name of n bytes (not NUL-terminated). */
Op *graph_add_op_n(Graph *g, const char *name, size_t n, const char *type,
		   uint32_t nin, uint32_t nout);
/* Name of a fresh op derived from base: "base", "base/1", "base/2", ... */
const char *graph_fresh_name(Graph *g, const char *base);
/* Gives output k >= 1 of op its own name (%loss, %dy = ...).  Outputs are
 * named in order: k - 1 must be named already unless k is 1.  False if
 * the name is taken or k is out of range or out of order. */
bool graph_name_output(Graph *g, Op *op, uint32_t k, const char *name);
/* Looks up an op or output alias; *idx receives the output index. */
Op *graph_lookup(const Graph *g, const char *name, uint32_t *idx);
Op *graph_lookup_n(const Graph *g, const char *name, size_t n, uint32_t *idx);
/* The hash of a name in the name table; graph_prefetch_name asks the CPU
 * to fetch its slot early (the parser does it a statement ahead, so that
 * the lookups of a million-op graph do not wait for memory). */
uint32_t graph_name_hash(const char *s, size_t n);
void graph_prefetch_name(const Graph *g, uint32_t h);
/* Marks op dead; removes its name.  Caller rewires users first. */
void graph_remove_op(Graph *g, Op *op);
/* Drops dead ops and renumbers ids in order.  Invalidates analyses. */
void graph_compact(Graph *g);
/* Structure changed: drops cached analyses (uses, topo), bumps gen. */
void graph_invalidate(Graph *g);
const Uses *graph_uses(Graph *g);
/* Topological order of live op ids counting control edges, ties broken by
 * id (stable).  NULL if the graph has a cycle. */
const uint32_t *graph_topo(Graph *g);
/* Per op id: 1 where the op computes the same value every step from
 * constants alone (a Const, or a deterministic op whose inputs are all
 * such, with outputs of known size up to 10 MiB): TensorFlow's Grappler
 * folds those into constants before the first step (constant folding,
 * its max_constant_size_in_bytes), so they cost no time per step.
 * Cached until the graph changes. */
const uint8_t *graph_folded(Graph *g);
/* The live ops and their data and control edges as a TopoDag (valid
 * until the graph changes). */
void graph_dag(Graph *g, TopoDag *d);
/* Replaces every use of (from, fidx) by (to, tidx); control uses of from
 * become control uses of to. */
void graph_replace_uses(Graph *g, Op *from, uint32_t fidx, Op *to,
			uint32_t tidx);

/* Attributes (op attrs, @annotations and graph attrs share the API). */
Value *op_attr(const Op *op, const char *ikey);       /* interned key */
Value *op_get(const Graph *g, const Op *op, const char *key);
Value *op_ann(const Graph *g, const Op *op, AnnKey k);
void op_set(Graph *g, Op *op, const char *key, Value *v);
void op_set_ann(Graph *g, Op *op, AnnKey k, Value *v);
void op_scale_ann(Graph *g, Op *op, AnnKey k, double f);
bool op_unset(Graph *g, Op *op, const char *key);
Value *graph_attr(const Graph *g, const char *key);
void graph_set_attr(Graph *g, const char *key, Value *v);
/* Typed getters with defaults. */
int64_t op_get_int(const Graph *g, const Op *op, const char *key, int64_t dflt);
bool op_get_bool(const Graph *g, const Op *op, const char *key, bool dflt);
const char *op_get_str(const Graph *g, const Op *op, const char *key);
const char *op_ann_str(const Graph *g, const Op *op, AnnKey k);
double op_ann_num(const Graph *g, const Op *op, AnnKey k, double dflt);

/* ---- annots.c --------------------------------------------------------- */
const char *ann_key(AnnKey k);              /* "@device" */
/* Checks that v is well-typed for annotation key (any '@' key); on error
 * returns false and writes a message. */
bool ann_check(const Graph *g, const char *key, const Value *v, char *msg,
	       size_t n);

/* Roles (@role). */
typedef enum Role {
	ROLE_NONE, ROLE_INPUT, ROLE_PARAM, ROLE_FWD, ROLE_BWD, ROLE_UPDATE,
	ROLE_LOSS, ROLE_COUNT
} Role;
const char *role_name(Role r);
Role role_parse(const char *s);             /* ROLE_NONE if unknown */

/* ---- print.c ---------------------------------------------------------- */
/* Canonical gir: header comments, cluster block, graph in op order.
 * print -> parse -> print is byte-identical. */
void gir_print(FILE *f, const Graph *g);

/* ---- verify.c --------------------------------------------------------- */
/* Structural and type checks (see docs/gir.md).  Errors go to d with the
 * op's location.  Returns the number of errors. */
int graph_verify(Graph *g, Diag *d);
/* Fills in the output types of ops whose ': types' were omitted, from the
 * op table's shape functions, in topological order.  Returns the number of
 * errors (inconsistent inputs); ops that cannot be inferred stay untyped. */
int graph_infer_types(Graph *g, Diag *d);

/* ---- cluster.c -------------------------------------------------------- */
typedef enum OpClass {
	OC_MATMUL, OC_CONV, OC_ELEMWISE, OC_REDUCE, OC_DATA, OC_OTHER,
	OC_COUNT
} OpClass;
const char *opclass_name(OpClass c);
bool opclass_parse(const char *s, OpClass *out);

typedef struct DevType {
	const char *name;
	double flops;                       /* FLOP/s peak */
	double memory;                      /* bytes usable per device */
	double mem_bw;                      /* bytes/s */
	double eff[OC_COUNT];               /* efficiency per op class, (0,1] */
	bool eff_given;
	double overhead;                    /* fixed time per op, s (kernel
					     * launch + executor) */
	bool overhead_given;                /* else the cost model's default */
	double mem_eff;                     /* achievable fraction of mem_bw */
	bool mem_eff_given;                 /* else the cost model's default */
	double kern_eff;                    /* scales the kernel classes'
					     * efficiencies (an architecture's
					     * factor) */
	bool kern_eff_given;                /* else 1 */
	double gemm_eff;                    /* scales the GEMM class for
					     * matrix products (MatMul,
					     * BatchMatMul: cuBLAS), not
					     * convolutions (cuDNN) */
	bool gemm_eff_given;                /* else kern_eff */
	bool coll_blocking;                 /* a collective holds the
					     * device's compute (docs/simulator.md) */
	bool sends_idle;                    /* a tensor sent from the device
					     * leaves only when its compute has
					     * no ready op (docs/simulator.md) */
	double cuda_flops;                  /* 'cuda_core_flops': FLOP/s of the
					     * CUDA cores of a tensor-core type
					     * (depthwise and element-wise ops
					     * run there); 0: flops */
	bool tensor_cores;                  /* flops is a tensor-core peak:
					     * convolutions run as implicit
					     * GEMM, never Winograd (cost.c) */
	bool source_kernels;                /* 'kernels: source': ops with one
					     * @kernel cost as one kernel
					     * (docs/cost-model.md) */
	double launch;                      /* 'launch': the host's time to
					     * launch one op, ahead of the
					     * device; 0: not modelled
					     * (docs/simulator.md) */
	double sms;                         /* 'sms': streaming multiprocessors
					     * (compute units); 0: not known
					     * (docs/cost-model.md) */
	bool bn_cudnn;                      /* 'batch_norm: cudnn': training
					     * batch norms cost as cuDNN's
					     * multi-pass per-channel kernels
					     * (docs/cost-model.md) */
	const char *gpu;                    /* the named type whose spelling
					     * name is (devtype_spelled), or
					     * name: what profiles are looked
					     * up under; set by
					     * cluster_add_type */
	Loc loc;
} DevType;

typedef struct Machine {
	const char *name;
	int type;                           /* index into types */
	int count;
	int first;                          /* index of its gpu0 (set by
					     * cluster_add_machine) */
	double bw, lat;                     /* intra-machine link */
	Loc loc;
} Machine;

typedef struct Device {
	const char *name;                   /* "m0/gpu0" */
	int type;
	int machine;
	int local;                          /* K in gpuK */
} Device;

typedef struct LinkOverride {
	int a, b;                           /* device indices, unordered */
	double bw, lat;                     /* lat < 0: inherit */
	Loc loc;
} LinkOverride;

struct Cluster {
	const char *name;
	DevType *types;
	int ntypes;
	Machine *machines;
	int nmachines;
	Device *devs;                       /* expanded from machines */
	int ndevs;
	double net_bw, net_lat;             /* between machines */
	double coll_bw, coll_lat;           /* a collective's ring step between
					     * machines; coll_bw 0: net_bw's */
	double dispatch;                    /* a step's call from the first
					     * machine to each other one, one
					     * way (network's dispatch_latency) */
	LinkOverride *links;
	int nlinks;
	const char **link_ends;             /* 2 per link: device names, kept
					     * for cluster_finalize to resolve */
	bool is_default;                    /* built-in default */
	Loc loc;
	/* hash indexes (cluster.c): slots hold index + 1, 0 = empty; the
	 * builder keeps them current, so no lookup scans a list */
	struct ClusterIx {
		int *slot;
		uint32_t cap;
	} type_ix, mach_ix, link_ix;
	int nlinked;                        /* links in link_ix */
};

/* Builder, shared by the YAML reader and the gir parser.  Name strings are
 * copied into a.  Each returns the new index or -1 on a duplicate. */
Cluster *cluster_new(Arena *a, const char *name);
int cluster_add_type(Cluster *c, Arena *a, const DevType *t);
int cluster_find_type(const Cluster *c, const char *name);
/* The named device types users may refer to without defining them
 * (docs/cluster.md): the catalog entry called name, or NULL. */
const DevType *devtype_named(const char *name);
/* The same, or the entry name is another spelling of (nvidia-smi's
 * "Tesla V100-SXM2-16GB", "v100", "V100-16GB"), or NULL. */
const DevType *devtype_spelled(const char *name);
/* The catalog's names, comma-separated, for messages. */
const char *devtype_names(void);
int cluster_add_machine(Cluster *c, Arena *a, const Machine *m);
void cluster_add_link(Cluster *c, Arena *a, const char *dev_a,
		      const char *dev_b, double bw, double lat, Loc loc);
/* Indexes link i by its resolved ends (links[i].a, .b); returns an
 * earlier link between the same two devices (then i is not indexed), or
 * -1.  cluster_finalize indexes every link afresh. */
int cluster_index_link(Cluster *c, Arena *a, int i);
/* Validates (positive speeds, known types and devices, duplicates),
 * expands devices.  Errors to d; returns the number of errors. */
int cluster_finalize(Cluster *c, Arena *a, Diag *d);
int cluster_find_device(const Cluster *c, const char *name);
/* The per-device memory report of every "does not fit" message: for
 * devices devs[0..n) of c (NULL: all of them, n = c->ndevs), one line
 * "  NAME TYPE needs X GiB of Y GiB" to f, "  (over)" where need[i]
 * bytes exceed the device's memory.  Returns how many are over. */
int cluster_mem_report(FILE *f, const Cluster *c, const int *devs, int n,
		       const double *need);
/* The link override between devices a and b (either order), or -1. */
int cluster_find_link(const Cluster *c, int a, int b);
/* How data goes from device a to device b, the simulator's routing
 * (docs/simulator.md): one route for every reader (sim.c, the plan
 * verifier, the visualisations, the cost model). */
typedef enum RouteKind {
	ROUTE_LOCAL,             /* a == b: nothing moves */
	ROUTE_LINK,              /* the link override links[link]; dir 0 when
				  * a is its first device, 1 the other way */
	ROUTE_PAIR,              /* two devices of machine ma, directed */
	ROUTE_NET,               /* the network: ma's NIC out, mb's NIC in */
} RouteKind;
typedef struct Route {
	RouteKind kind;
	int link, dir;
	int ma, mb;              /* the machines of a and b */
} Route;
Route cluster_route(const Cluster *c, int a, int b);
/* Bandwidth (bytes/s) and latency (s) between two devices. */
void cluster_link(const Cluster *c, int a, int b, double *bw, double *lat);
/* The same for one step of a collective from a to b: the network's
 * collective figures (network's collective_bandwidth and
 * collective_latency) where the step crosses the network, else
 * cluster_link's. */
void cluster_coll_link(const Cluster *c, int a, int b, double *bw,
		       double *lat);
/* The built-in default cluster (docs/cluster.md). */
Cluster *cluster_default(Arena *a);
/* Deep copy into another arena (attaching a cluster to a graph). */
Cluster *cluster_clone(Arena *a, const Cluster *c);
/* The 'cluster ... { }' block of gir. */
void cluster_print(FILE *f, const Cluster *c);

/* cluster_yaml.c: reads FILE.yaml; errors as FILE:LINE:COL.  NULL on error. */
Cluster *cluster_read_yaml(Arena *a, const char *path, Diag *d);
Cluster *cluster_parse_yaml(Arena *a, const char *path, const char *text,
			    size_t len, Diag *d);

/* ---- ops.c, infer.c, fold.c, dims.c (table in ops.def) ------------------ */
#define OPC_UNKNOWN (-1)
/* Opcodes: O_MatMul, O_Transfer, ... in ops.def order. */
enum OpCode {
#define OP(n, ...) O_##n,
#include "ops.def"
#undef OP
	O_COUNT
};

/* TAG §4.1.1: how the outputs of an op split along the batch recombine. */
typedef enum SplitCat { SPLIT_NONE, SPLIT_CONCAT, SPLIT_SUM } SplitCat;
const char *splitcat_name(SplitCat s);
bool splitcat_parse(const char *s, SplitCat *out);

enum {
	OPF_NOOP = 1 << 0,       /* Identity, NoOp, StopGradient...: simplify removes */
	OPF_SOURCE = 1 << 1,     /* Placeholder, Const: no inputs, no work */
	OPF_PARAM = 1 << 2,      /* VariableV2, VarHandleOp: a trainable parameter */
	OPF_UPDATE = 1 << 3,     /* Apply*: updates a parameter (a sink) */
	OPF_LOSS = 1 << 4,       /* produces the loss (SoftmaxCrossEntropy...) */
	OPF_GRAD = 1 << 5,       /* a gradient op (…Grad, …Backprop…): role bwd */
	OPF_INPUT = 1 << 6,      /* Placeholder: a data input */
	OPF_COMM = 1 << 7,       /* pcc's Transfer, AllReduce: occupy links (docs/plan.md) */
};

/* The kinds of per-op dimension rule (dims.def; ops.def names one of
 * each per op). */
typedef enum BatchRule {
#define BATCH_RULE(n, s, d) BR_##n,
#include "dims.def"
	BR_COUNT
} BatchRule;

typedef enum PartRule {
#define PART_RULE(n, d) PT_##n,
#include "dims.def"
	PT_COUNT
} PartRule;

typedef struct OpInfo {
	const char *name;        /* TensorFlow op name */
	int min_in, max_in;      /* max_in < 0: variadic */
	int nout;                /* < 0: depends on attrs (Split: num_split) */
	OpClass cls;
	SplitCat split;
	unsigned flags;          /* OPF_* */
	BatchRule batch;         /* how batch slices flow through it */
	PartRule part;           /* how the split pass partitions it */
	const char *doc;         /* one line */
} OpInfo;

int op_lookup(const char *type);            /* OPC_UNKNOWN if not in table */
const OpInfo *op_info(int opcode);          /* NULL for OPC_UNKNOWN */
int op_table_size(void);
/* Number of outputs the op must have, or -1 if unknown/opaque. */
int op_num_outputs(const Graph *g, const Op *op);
/* Output types of op from its input types and attrs (TensorFlow's shape
 * functions).  Returns 0 and fills out[0..nout) (dims in a), 1 if it cannot
 * be inferred (unknown op, unknown input shape, non-constant shape input),
 * or -1 with a message in msg when the inputs are inconsistent. */
int op_infer(const Graph *g, const Op *op, Type *out, uint32_t nout,
	     Arena *a, char *msg, size_t n);
/* FLOPs of one execution (multiply-add = 2), from @flops when given,
 * else from the table; 0 for ops with no arithmetic; -1 if unknown. */
double op_flops(const Graph *g, const Op *op);
/* The contraction an op's kernel performs (op_contraction). */
typedef enum ContractionKind { CT_NONE, CT_GEMM, CT_CONV, CT_DWCONV } ContractionKind;
typedef struct Contraction {
	ContractionKind kind;
	double m, n, k;          /* GEMM (implicit GEMM for convolutions):
				  * m x k times k x n; a batched matmul's
				  * batch folds into m */
	double kh, kw;           /* convolution window, else 0 */
	double stride, dilation; /* largest of the op's strides, dilations */
} Contraction;
/* Fills c and returns true for matmuls and convolutions whose shapes are
 * known (by the op table's FLOP kind), false otherwise. */
bool op_contraction(const Graph *g, const Op *op, Contraction *c);
/* Bytes an op reads and writes (inputs + outputs), for the bandwidth
 * term of the cost model. */
double op_bytes_moved(const Graph *g, const Op *op);
/* Dimensions of output 0 along which the op may be partitioned (the batch
 * dimension for SPLIT_CONCAT/SPLIT_SUM ops, plus channel / output-feature
 * dimensions where the op allows); returns how many were written. */
int op_split_dims(const Graph *g, const Op *op, int *dims, int max);
/* Does op hand data input 0 on unchanged (output 0 of the same type, and
 * nothing moved: zero paddings, unit multiples, the identity permutation,
 * a full slice, a cast to its own type, a concatenation of one tensor)?
 * simplify bypasses such ops as it bypasses Identity. */
bool op_is_identity(const Graph *g, const Op *op);
/* A Roll's net shift along every dimension of its input, in [0, size)
 * (shifts along one axis add up); false when shift or axis is not
 * constant, or an axis is out of range. */
bool op_roll_shifts(const Graph *g, const Op *op, int64_t *shift, int max);
/* The output-0 dimensions a part of op may take in the split pass:
 * op_split_dims, and the filter's channels of a filter gradient. */
int op_part_dims(const Graph *g, const Op *op, int *dims, int max);
/* How op's inputs slice when its output 0 is split along p (ops.def
 * PART): in_dim[i] a dimension of op->in[i], or -1 for the whole input;
 * *shape the input holding the output's shape (rewritten per part), or
 * -1.  in_dim holds op->nin entries.  False: no part along p. */
bool op_part_inputs(const Graph *g, const Op *op, int p, int *in_dim,
		    int *shape);
/* The name of a batch rule (dims.def), for reports. */
const char *batch_rule_str(BatchRule r);
/* The op table's OPF_* flags of op (0 for a type it does not know). */
unsigned op_flags(const Op *op);
/* The role op plays: its @role, else what the op table's flags say
 * (param, update, loss, input; a gradient op is bwd), else ROLE_NONE. */
Role op_role(const Graph *g, const Op *op);
/* Does op play role r, by its @role or by the op table's flag for r? */
bool op_has_role(const Graph *g, const Op *op, Role r);
/* The integers of data input k when it is a Const (or a Shape of a known
 * type): how many were written to out, or -1. */
int op_input_ints(const Graph *g, const Op *op, uint32_t k, int64_t *out,
		  int max);
/* Op class for the cost model's efficiency lookup. */
OpClass op_class(const Graph *g, const Op *op);
/* TAG category of this op: @split when given, else the table's, refined
 * by attributes (MatMul with transpose_a and Sum over dim 0: sum; Mean
 * over dim 0: none).  Unknown ops: none. */
SplitCat op_split_cat(const Graph *g, const Op *op);
/* Category of output k where outputs differ (FusedBatchNormGradV3:
 * x_backprop concat, scale/offset gradients sum, reserve spaces none);
 * otherwise op_split_cat. */
SplitCat op_split_output(const Graph *g, const Op *op, uint32_t k);

/* ---- cost.c ------------------------------------------------------------ */
/* Per-op times measured on device types (--profile FILE.yaml). */
typedef struct Profile Profile;
Profile *profile_parse(Arena *a, const char *path, const char *text,
		       size_t len, Diag *d);
/* Warns (on d, at the profile's text) when graph g and its cluster
 * would read nothing of profile p: none of its device types is the
 * cluster's, or none of its ops is the graph's (by name or a replica's
 * @origin).  A profile that covers other clusters and models besides
 * this one says nothing. */
void profile_check(const Profile *p, const Graph *g, Diag *d);

typedef struct CostModel {
	const Graph *g;
	const Cluster *c;
	const Profile *prof;     /* may be NULL */
	/* Optional memo of cost_op, nmemo ops × the cluster's types, NaN =
	 * not computed yet (cost_memo_init); only while the graph's ops do
	 * not change. */
	double *memo;
	uint32_t nmemo;
} CostModel;
/* Gives m a memo of cost_op for g's current ops; cost_memo_free drops it. */
void cost_memo_init(CostModel *m);
void cost_memo_free(CostModel *m);

/* Seconds to run op once on a device of type devtype (order: @cost,
 * profile, analytic max(flops/(peak*eff), bytes/mem_bw)). */
double cost_op(const CostModel *m, const Op *op, int devtype);
/* Whether op launches a kernel of its own on devtype: it takes time
 * (cost_op > 0) and is not a piece of a source kernel that another
 * piece launches ('kernels: source').  A device type's 'launch' is the
 * host's time for each (sim.c). */
bool cost_op_launches(const CostModel *m, const Op *op, int devtype);
/* cost_op (not memoised), and in *fixed the part of it that a piece of
 * op pays whatever its share of the work: the device type's per-op
 * overhead when the analytic model prices op and op launches; 0 for a
 * @cost or a profiled time (sim_bound_of). */
double cost_op_parts(const CostModel *m, const Op *op, int devtype, double *fixed);
/* The analytic model's fixed time per op on t, and the fraction of t's
 * memory bandwidth ops achieve: t's own figures or the defaults
 * (docs/cost-model.md). */
double cost_overhead(const DevType *t);
double cost_mem_eff(const DevType *t);
/* The time of a copy kernel that reads bytes and writes them (a gradient
 * bucket's ConcatV2 or SplitV): what cost_op gives such an op on a device
 * of type t without a profile. */
double cost_copy(const DevType *t, double bytes);
/* Seconds to move bytes from device a to device b (0 if a == b). */
double cost_transfer(const CostModel *m, int a, int b, double bytes);
/* The same on a link of bandwidth bw and latency lat (a != b). */
double cost_link_time(double bw, double lat, double bytes);
/* Collectives over n devices; formulas in docs/cost-model.md. */
double cost_allreduce_ring(const CostModel *m, const int *devs, int n,
			   double bytes);
double cost_allreduce_hier(const CostModel *m, const int *devs, int n,
			   double bytes);
double cost_ps(const CostModel *m, const int *workers, int n, int ps,
	       double bytes);
/* Bytes of output k of op. */
double cost_out_bytes(const Graph *g, const Op *op, uint32_t k);
/* Bytes the op holds beyond its outputs: @mem if given; for an update
 * op (Apply*) the optimizer state of its variable (Adam 2x, Momentum 1x,
 * GD 0; docs/cost-model.md); else 0 (a parameter's value is its output). */
double cost_op_mem(const CostModel *m, const Op *op);
/* The cost table as CSV: op,type,device_type,time_s,out_bytes,mem_bytes */
/* s as one CSV field: quoted (with "" for ") when it holds a comma, a
 * quote or a line end. */
void csv_str(FILE *f, const char *s);
void cost_print_csv(FILE *f, const CostModel *m);

/* ---- planview.c: the plan's collectives, transfers and order ---------- */
/* One collective: the AllReduce ops of one `key` (docs/plan.md). */
typedef struct PlanColl {
	int64_t key;
	uint32_t first, n;       /* its members: PlanView.members[first..+n) */
	const char *algo;        /* the first member's `algo`, or "ring" */
	const Value *devices;    /* the first member's `devices` list */
} PlanColl;

typedef struct PlanView {
	PlanColl *coll;          /* by increasing key */
	uint32_t ncoll;
	uint32_t *members;       /* op ids, grouped by collective, by id */
	uint32_t *coll_of;       /* per op: its collective, or UINT32_MAX */
} PlanView;

/* The `key` of an AllReduce: the one reader of it.  False if it has none
 * (or not an integer). */
bool plan_coll_key(const Graph *g, const Op *op, int64_t *key);
/* The index of the device a string or identifier names in c, or -1
 * (also for NULL). */
int plan_device(const Cluster *c, const Value *v);
/* The devices of a collective's `devices` list that c has, in order, at
 * most max of them, into devs; returns how many. */
int plan_coll_devices(const Cluster *c, const Value *list, int *devs, int max);
/* Groups g's AllReduce ops by key.  An AllReduce without an integer key
 * is an error on d (d may be NULL: errors are then only counted).
 * Returns the number of errors; free the view with plan_view_free even
 * then. */
int plan_view(const Graph *g, PlanView *pv, Diag *d);
void plan_view_free(PlanView *pv);
/* The plan verifier (graph_verify runs it): collectives consistent,
 * Transfers between two devices, @order along edges and deadlock-free
 * across collectives.  Returns the number of errors. */
int plan_verify(const Graph *g, Diag *d);
/* An op that only a plan has (a Transfer, an AllReduce, a replica or a
 * partition of an input op), or NULL: -O refuses such input. */
const Op *plan_op(const Graph *g);
/* An op that comm makes (a Transfer, a collective, a replica), or NULL:
 * place and comm refuse such input; split's partitions are theirs. */
const Op *plan_comm_op(const Graph *g);

/* ---- sim.c ------------------------------------------------------------- */
typedef struct SimResult {
	double makespan;         /* seconds */
	double lower_bound;      /* seconds, see docs/simulator.md: 0 from
				  * sim_run, which the judges of candidate
				  * plans call; set it with sim_bound_of
				  * where it is reported */
	double problem_bound;    /* seconds: sim_bound_of the input graph,
				  * set by the caller (0: not known) */
	bool oom;
	uint32_t nops;
	int ndevs;
	double *busy;            /* per device, seconds */
	double *peak_mem;        /* per device, bytes */
	double *start, *finish;  /* per op id, seconds */
	int *dev;                /* per op id, device index */
	int nlinks;              /* link resources that carried data */
	char **link_name;        /* per link: "m0/gpu0->m0/gpu1", "m0/out" */
	double *link_busy;       /* per link, seconds */
	double *link_bytes;      /* per link, bytes */
	/* Every tensor movement, in start order: the Transfer ops of a plan
	 * and the implicit transfers of cross-device edges without one. */
	struct SimXfer {
		uint32_t op;     /* producer op id */
		uint32_t k;      /* its output index */
		uint32_t via;    /* the Transfer op id, or UINT32_MAX */
		int src, dst;    /* devices */
		int link;        /* index into link_name: the route's first link */
		double start, finish, bytes;
	} *xfers;
	uint32_t nxfers;
	uint32_t *seq;           /* per op id: the order ops were dispatched
				  * in (a linear extension of the graph) */
} SimResult;
/* Simulates one iteration of a placed graph (every op has @device).
 * Compute ops occupy their device; Transfer ops the links of their route;
 * AllReduce members (one collective per `key`) start together on every
 * member's collective stream and occupy the ring's links (docs/plan.md,
 * docs/simulator.md).
 * Returns 0, or EXIT_BADINPUT with errors on d (e.g. an unplaced op). */
int sim_run(Graph *g, const CostModel *m, SimResult *r, Diag *d);
/* The same as a list schedule (HeteroG §4.2): @order is ignored and each
 * device, when free, runs its ready op of highest prio[op id]; links and
 * collectives serve in ready order.  r->seq then gives each resource's
 * order for the order pass. */
int sim_run_prio(Graph *g, const CostModel *m, const double *prio,
		 SimResult *r, Diag *d);
void sim_free(SimResult *r);
/* Plans a placer judged with the simulator on the way to its choice
 * (place<algo=hybrid>: the search's result and the baselines), kept for
 * the summary's headline (--emit=summary, -v).  Names are copies. */
typedef struct SimJudged {
	struct SimJudgedPlan {
		const char *name;
		double makespan;         /* simulated seconds */
		bool oom;
		unsigned char *used;     /* per device: 1 if the plan puts
					  * anything there (NULL: not known) */
		int ndevs;
		bool aside;              /* simulated inside a baseline (dp-best's
					  * subsets): evidence for the idle
					  * machines, no baseline line */
	} *plan;
	int n;
	int chosen;              /* index of the plan written, or -1 */
} SimJudged;
/* Adds a plan; peaks (ndevs simulated peaks, or NULL) say which devices
 * it uses. */
void sim_judged_add(SimJudged *j, const char *name, double makespan, bool oom,
		    const double *peaks, int ndevs);
/* The same for a plan a baseline simulated on its way (aside). */
void sim_judged_aside(SimJudged *j, const char *name, double makespan,
		      bool oom, const double *peaks, int ndevs);
void sim_judged_free(SimJudged *j);
/* A lower bound on the iteration time of g on the cluster of m
 * (docs/simulator.md): the larger of the critical path, communication
 * free, and the work bound of the fractional assignment of ops to
 * devices.  On the critical path each op takes its time at its fastest
 * present device type, or with divisible its time split perfectly over
 * every device (plans may replicate or split the input's ops).  On the
 * input graph with divisible it is problem_lower_bound_s; on a plan's
 * own graph without, lower_bound_s. */
double sim_bound_of(Graph *g, const CostModel *m, bool divisible);
void sim_stats_json(FILE *f, const Graph *g, const CostModel *m,
		    const SimResult *r);

#endif
