/* rt_internal.h — the CPU reference runtime's own types: devices are
 * threads, buffers are host memory, events are flags under the run's
 * mutex, channels copy with memcpy, collectives meet at barriers.  All
 * state of a run lives in its pcc_rt (no globals). */
#ifndef PCC_RT_INTERNAL_H
#define PCC_RT_INTERNAL_H

#include "pcc_rt.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct pcc_buf {
	pcc_rt *rt;
	int dev;
	const char *name;
	pcc_dtype dt;
	int rank;
	int64_t dims[PCC_MAX_RANK];
	int64_t numel;
	void *data;
};

struct pcc_dev {
	pcc_rt *rt;
	int index;
	const char *name;
};

struct pcc_event {
	pcc_rt *rt;
	int set;                  /* under rt->mu */
};

struct pcc_chan {
	pcc_rt *rt;
	int src_dev;
	pcc_buf *dst;
	pcc_event done;           /* the copy has happened */
};

struct pcc_coll {
	pcc_rt *rt;
	int64_t key;
	int n;
	int *devs;
	const pcc_buf **in;       /* per member, under rt->mu until the barrier */
	pcc_buf **out;
	float *sum;               /* the reduced value */
	int64_t numel;
	int arrived, gen;         /* barrier state, under rt->mu */
};

/* Everything a run allocated, freed by pcc_rt_free. */
typedef struct RtList {
	void **items;
	size_t n, cap;
} RtList;

struct pcc_rt {
	int ndevs;
	pcc_dev *devs;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	RtList bufs, events, chans, colls;
};

/* rt.c */
_Noreturn void rt_fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void *rt_alloc(size_t n);     /* zeroed; fatal when out of memory */
size_t rt_dtype_size(pcc_dtype dt);
const char *rt_dtype_name(pcc_dtype dt);

/* kernels.c, kernels_nn.c: one function per row of pcc_kernels.def. */
typedef void KernelFn(pcc_kernel k, const pcc_attrs *a, int nin,
		      pcc_buf *const *in, int nout, pcc_buf *const *out);
#define PCC_KERNEL(name, fn, stat, doc) KernelFn fn;
#include "pcc_kernels.def"
#undef PCC_KERNEL

/* Shared by the kernels. */
#define FP(b) ((float *)(b)->data)
_Noreturn void k_fail(pcc_kernel k, const pcc_attrs *a, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void k_arity(pcc_kernel k, const pcc_attrs *a, int nin, int want_in,
	     int nout, int want_out);
void k_f32(pcc_kernel k, const pcc_attrs *a, const pcc_buf *b);
void k_same_shape(pcc_kernel k, const pcc_attrs *a, const pcc_buf *x,
		  const pcc_buf *y);
/* dst[i] = acc[i] (a kernel's double accumulators) as float; frees acc. */
float *k_to_float(double *acc, float *dst, int64_t n);
/* A float scalar input (a Const such as alpha, lr). */
double k_scalar(pcc_kernel k, const pcc_attrs *a, const pcc_buf *b);

#endif
