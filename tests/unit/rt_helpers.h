/* rt_helpers.h — small helpers for the C runtime's CUnit suites
 * (test_rt_kernels.c, test_rt_grad.c): tensors from literals on a
 * one-device run, kernel launches, element-wise comparisons. */
#ifndef PCC_TEST_RT_HELPERS_H
#define PCC_TEST_RT_HELPERS_H

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "backend/runtime/pcc_rt.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define VALS(...) ((const float[]){__VA_ARGS__})
#define BUFS(...) ((pcc_buf *const[]){__VA_ARGS__})

static inline pcc_rt *rt1(void)
{
	static const char *const names[] = {"cpu0"};
	return pcc_rt_new(1, names);
}

/* An f32 tensor; v (may be NULL: zeros) holds its elements. */
static inline pcc_buf *ten(pcc_rt *rt, int rank, const int64_t *dims,
			   const float *v)
{
	pcc_buf *b = pcc_buf_new(rt, 0, "t", PCC_F32, rank, dims);
	if (v)
		pcc_buf_write(b, v);
	return b;
}

static inline pcc_buf *iten(pcc_rt *rt, pcc_dtype dt, int rank,
			    const int64_t *dims, const int64_t *v)
{
	pcc_buf *b = pcc_buf_new(rt, 0, "i", dt, rank, dims);
	int64_t n = pcc_buf_numel(b);
	if (dt == PCC_I64) {
		pcc_buf_write(b, v);
	} else {
		int32_t *w = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
		for (int64_t i = 0; i < n; i++)
			w[i] = (int32_t)v[i];
		pcc_buf_write(b, w);
		free(w);
	}
	return b;
}

static inline float *get(const pcc_buf *b)
{
	float *v = malloc(sizeof(float) * (size_t)(pcc_buf_numel(b) + 1));
	pcc_buf_read(b, v);
	return v;
}

static inline void run(pcc_rt *rt, pcc_kernel k, const pcc_attrs *a, int nin,
		       pcc_buf *const *in, int nout, pcc_buf *const *out)
{
	pcc_launch(pcc_rt_dev(rt, 0), k, a, nin, in, nout, out);
}

/* Every element of b within tol of want[]. */
static inline void expect(const pcc_buf *b, const float *want, double tol)
{
	float *v = get(b);
	for (int64_t i = 0; i < pcc_buf_numel(b); i++)
		CU_ASSERT_DOUBLE_EQUAL(v[i], want[i], tol);
	free(v);
}

#endif
