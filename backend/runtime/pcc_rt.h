/* pcc_rt.h — the runtime API that pcc's C launch code (--emit=c) calls.
 *
 * A generated program describes one training step of a plan: which
 * tensors live on which device, how each is initialised, the Transfers
 * (channels) and AllReduce collectives between devices, and one function
 * per device that issues that device's work in the plan's order.  The
 * runtime supplies devices, buffers, events, send/recv, allreduce and
 * kernels by op type, plus a driver (pcc_main) that sets everything up,
 * runs the device functions concurrently, and prints the results.
 *
 * The semantics are those of CUDA streams, so that a CUDA runtime
 * (streams, cudaEvents, NCCL, cuBLAS/cuDNN) can implement this header
 * unchanged (docs/backends.md, "A CUDA runtime"):
 *   - work issued on one pcc_dev runs in issue order (a stream);
 *   - pcc_event_record marks "everything issued on this device so far";
 *     pcc_event_wait makes later work on another device wait for it;
 *   - pcc_send copies a buffer to another device's buffer, ordered after
 *     the sender's earlier work, and never waits for the receiver;
 *     pcc_recv makes the receiver's later work wait for that copy;
 *   - pcc_allreduce is one member's part of a collective sum; every
 *     member of a collective reaches its call in one global order.
 * The CPU reference runtime (libpcc_rt.a) runs each device as a thread,
 * executes each call synchronously, and copies with memcpy.
 *
 * Only f32 tensors are computed on; i32 and i64 tensors hold labels,
 * indices and shapes.  Layouts and semantics are TensorFlow's. */
#ifndef PCC_RT_H
#define PCC_RT_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PCC_RT_API_VERSION 1
#define PCC_MAX_RANK 8

typedef enum pcc_dtype { PCC_F32, PCC_I32, PCC_I64, PCC_BOOL } pcc_dtype;  /* bool: 1 byte, 0 or 1 */

/* Kernels by op type (pcc_kernels.def). */
#define PCC_IN(i) (1u << (i))
#define PCC_IN_LAST (1u << 31)
typedef enum pcc_kernel {
#define PCC_KERNEL(name, fn, stat, doc) PCC_K_##name,
#include "pcc_kernels.def"
#undef PCC_KERNEL
	PCC_K_COUNT
} pcc_kernel;

typedef struct pcc_rt pcc_rt;       /* one run: devices and everything on them */
typedef struct pcc_dev pcc_dev;     /* a device: a thread (CPU), a stream (CUDA) */
typedef struct pcc_buf pcc_buf;     /* a dense tensor in one device's memory */
typedef struct pcc_event pcc_event; /* a point in one device's work */
typedef struct pcc_chan pcc_chan;   /* a Transfer: a copy to one destination buffer */
typedef struct pcc_coll pcc_coll;   /* an AllReduce collective: one key, its devices */

/* ---- devices and buffers ------------------------------------------- */
pcc_rt *pcc_rt_new(int ndevs, const char *const *dev_names);
void pcc_rt_free(pcc_rt *rt);
pcc_dev *pcc_rt_dev(pcc_rt *rt, int dev);
int pcc_dev_index(const pcc_dev *d);

/* A buffer of the given type and shape on device dev; its contents are
 * zero until written.  name appears in error messages. */
pcc_buf *pcc_buf_new(pcc_rt *rt, int dev, const char *name, pcc_dtype dt,
		     int rank, const int64_t *dims);
pcc_dtype pcc_buf_dtype(const pcc_buf *b);
int pcc_buf_rank(const pcc_buf *b);
int64_t pcc_buf_dim(const pcc_buf *b, int i);
int64_t pcc_buf_numel(const pcc_buf *b);
/* Host <-> device copies of the whole buffer (numel elements of its
 * dtype); only outside the step, or on the buffer's own device. */
void pcc_buf_write(pcc_buf *b, const void *host);
void pcc_buf_read(const pcc_buf *b, void *host);

/* ---- events -------------------------------------------------------- */
pcc_event *pcc_event_new(pcc_rt *rt);
/* The event completes when the work issued on d so far has. */
void pcc_event_record(pcc_dev *d, pcc_event *e);
/* Work issued on d after this call waits for e to complete. */
void pcc_event_wait(pcc_dev *d, pcc_event *e);

/* ---- send / recv --------------------------------------------------- */
/* A channel from device src_dev into buffer dst (on device dst_dev). */
pcc_chan *pcc_chan_new(pcc_rt *rt, int src_dev, pcc_buf *dst);
/* Issued on the source device once src holds the value: copies src into
 * the channel's buffer over the link.  Never waits for the receiver. */
void pcc_send(pcc_dev *d, pcc_chan *c, const pcc_buf *src);
/* Issued on the destination device: later work waits for the copy. */
void pcc_recv(pcc_dev *d, pcc_chan *c);

/* ---- collectives --------------------------------------------------- */
/* The collective `key` over devs[0..n) (the AllReduce's `devices`, in
 * order); algo is the plan's `algo` ("ring", "hier"): a hint, the sum is
 * the same. */
pcc_coll *pcc_coll_new(pcc_rt *rt, int64_t key, const char *algo, int n,
		       const int *devs);
/* Member d's part: out = the element-wise sum over the members' `in`,
 * added in the order of devs, so every member gets the same bits.  in and
 * out may be the same buffer. */
void pcc_allreduce(pcc_dev *d, pcc_coll *c, const pcc_buf *in, pcc_buf *out);

/* ---- kernels ------------------------------------------------------- */
enum { PCC_PAD_VALID, PCC_PAD_SAME, PCC_PAD_EXPLICIT };

/* What a kernel needs besides its tensors; pcc resolves it at emit time
 * from the op's attributes and static inputs.  Zero is every default but
 * epsilon and avg_factor, which pcc always writes for FusedBatchNorm*. */
typedef struct pcc_attrs {
	const char *op;           /* the op's name, for messages */
	int transpose_a, transpose_b;       /* MatMul */
	int nchw;                 /* data_format NCHW (default NHWC) */
	int padding;              /* PCC_PAD_* */
	int64_t pads[4];          /* EXPLICIT: top, bottom, left, right */
	int64_t strides[2];       /* h, w (0 = 1) */
	int64_t ksize[2];         /* pooling window h, w */
	int64_t dilations[2];     /* h, w (0 = 1) */
	int axis;                 /* ConcatV2, Split, SplitV (normalised) */
	int perm[PCC_MAX_RANK];   /* Transpose */
	unsigned axes;            /* reductions: bit i = reduce dimension i */
	double alpha;             /* LeakyRelu */
	int use_nesterov;         /* ApplyMomentum */
	int64_t begin[PCC_MAX_RANK];        /* Slice: the box's corner */
	double epsilon;           /* FusedBatchNorm*: added to the variance */
	double avg_factor;        /* FusedBatchNormV3: exponential_avg_factor */
	int inference;            /* FusedBatchNorm*: is_training = false */
	const char *origin;       /* RandomUniform: the original op's name */
	int64_t seed, seed2;      /* RandomUniform: with origin, its stream */
	int rng_dim;              /* RandomUniform, rng_whole > 0: the output */
	int64_t rng_begin;        /* is [rng_begin, + its size) along rng_dim */
	int64_t rng_whole;        /* of a whole tensor rng_whole long there */
} pcc_attrs;

/* Runs kernel k on device d: in[0..nin) are the op's non-static inputs in
 * order, out[0..nout) its outputs (shapes already set); an update op
 * writes its variable, in[0], in place (and out[0], if given, gets a
 * copy).  A shape or type the kernel cannot run is a fatal error. */
void pcc_launch(pcc_dev *d, pcc_kernel k, const pcc_attrs *a, int nin,
		pcc_buf *const *in, int nout, pcc_buf *const *out);
const char *pcc_kernel_name(pcc_kernel k);

/* ---- initial values -------------------------------------------------- */
/* Every value derives from the tensor's original name (the op of the
 * input graph: @origin, else its own name), the seed and the element's
 * index in the whole (unsplit) tensor, so every plan of one graph starts
 * from the same values (docs/backends.md, "Initial values"). */
typedef enum pcc_init {
	PCC_INIT_NONE,            /* computed by the step */
	PCC_INIT_INPUT,           /* U(-1, 1) */
	PCC_INIT_PARAM,           /* Glorot uniform: U(-a, a), a = sqrt(6/(fan_in+fan_out)) */
	PCC_INIT_ZEROS,           /* optimizer state (Adam m, v; momentum accum) */
	PCC_INIT_LABELS,          /* integers in [0, classes) */
	PCC_INIT_CONST,           /* values[], or one value for every element */
} pcc_init;

typedef struct pcc_seed {
	pcc_init kind;
	const char *name;         /* original name */
	int batch_dim;            /* >= 0: the tensor is rows [begin, begin + dims[batch_dim]) */
	int64_t begin;            /*   of the whole tensor's batch dimension, */
	int64_t full;             /*   whose size is full */
	int64_t classes;          /* LABELS */
	const double *values;     /* CONST: nvalues values, or 1 for all */
	int64_t nvalues;
} pcc_seed;

void pcc_buf_init(pcc_buf *b, const pcc_seed *s, uint64_t seed);
/* The raw stream: a 64-bit hash of (name, seed, index). */
uint64_t pcc_seed_hash(const char *name, uint64_t seed, uint64_t index);
/* U(-1, 1) from the hash. */
double pcc_seed_uniform(const char *name, uint64_t seed, uint64_t index);

/* ---- the program: what pcc --emit=c writes ---------------------------- */
typedef struct pcc_buf_info {
	const char *name;         /* the op output it holds ("op", "op:k") */
	int dev;
	pcc_dtype dt;
	int rank;
	int64_t dims[PCC_MAX_RANK];
	pcc_seed init;
} pcc_buf_info;

typedef struct pcc_chan_info {
	int src_dev;
	int dst;                  /* buffer index */
} pcc_chan_info;

typedef struct pcc_coll_info {
	int64_t key;
	const char *algo;
	int n;
	const int *devs;
} pcc_coll_info;

/* What the program prints: a parameter of the input graph (every copy
 * must hold the same bits), or a graph output (its replicas concatenated
 * along axis in the order of begin, or summed). */
typedef enum pcc_result_kind {
	PCC_RES_COPIES, PCC_RES_CONCAT, PCC_RES_SUM
} pcc_result_kind;

typedef struct pcc_result_info {
	const char *name;         /* original name */
	int is_param;
	pcc_result_kind kind;
	int axis;                 /* CONCAT */
	int n;
	const int *bufs;          /* n buffer indices */
	const int64_t *begins;    /* CONCAT: each piece's offset along axis */
} pcc_result_info;

/* The handles a device function uses (indices as in the program). */
typedef struct pcc_handles {
	pcc_buf *const *buf;
	pcc_chan *const *chan;
	pcc_coll *const *coll;
	pcc_event *const *event;
} pcc_handles;

typedef void pcc_dev_fn(pcc_dev *d, const pcc_handles *h);

typedef struct pcc_program {
	int api_version;          /* PCC_RT_API_VERSION */
	const char *graph, *source;
	uint64_t seed;
	int ndevs;
	const char *const *dev_names;
	pcc_dev_fn *const *run;   /* one per device */
	int nbufs;
	const pcc_buf_info *bufs;
	int nchans;
	const pcc_chan_info *chans;
	int ncolls;
	const pcc_coll_info *colls;
	int nevents;
	int nresults;
	const pcc_result_info *results;
} pcc_program;

/* Runs one training step of p and prints one line per result:
 * "NAME SUM L2" (%.9g).  Options: --values (every element, "NAME INDEX
 * VALUE"), --values=N (at most N elements of each result, evenly spaced:
 * indices floor(k * size / N)), --init (the parameters' initial values; no
 * step), --help.
 * Returns the exit status: 0, 1 (copies of a parameter differ), 2 (usage),
 * 3 (an error running the step). */
int pcc_main(const pcc_program *p, int argc, char **argv);

/* What pcc_main does, for embedding and tests: set up, run one step (or
 * none when step is 0), write the results to out: summaries when values
 * is 0, every element when it is negative, else at most `values` elements
 * of each result, evenly spaced.  Returns 0, or 1 when copies of a
 * parameter differ. */
int pcc_program_run(const pcc_program *p, int step, int64_t values,
		    FILE *out);

#ifdef __cplusplus
}
#endif
#endif
