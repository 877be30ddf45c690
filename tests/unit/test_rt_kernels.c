/* test_rt_kernels.c — the C runtime's kernels against answers worked out
 * by hand (in the comments), TensorFlow's semantics: transposes, padding,
 * layouts, ties in max pooling, broadcasting, the optimizers' formulas;
 * and the seeded initial values. */
#include "rt_helpers.h"

#include <string.h>

#define EPS 1e-5

/* [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]], also
 * with a given as its transpose and b given as its transpose. */
static void test_matmul(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *a = ten(rt, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
	pcc_buf *at = ten(rt, 2, DIMS(3, 2), VALS(1, 4, 2, 5, 3, 6));
	pcc_buf *b = ten(rt, 2, DIMS(3, 2), VALS(7, 8, 9, 10, 11, 12));
	pcc_buf *bt = ten(rt, 2, DIMS(2, 3), VALS(7, 9, 11, 8, 10, 12));
	pcc_buf *c = ten(rt, 2, DIMS(2, 2), NULL);
	const float want[] = {58, 64, 139, 154};
	run(rt, PCC_K_MatMul, NULL, 2, BUFS(a, b), 1, BUFS(c));
	expect(c, want, EPS);
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = 1}, 2, BUFS(at, b), 1,
	    BUFS(c));
	expect(c, want, EPS);
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_b = 1}, 2, BUFS(a, bt), 1,
	    BUFS(c));
	expect(c, want, EPS);
	run(rt, PCC_K_MatMul, &(pcc_attrs){.transpose_a = 1, .transpose_b = 1}, 2,
	    BUFS(at, bt), 1, BUFS(c));
	expect(c, want, EPS);
	pcc_rt_free(rt);
}

/* Two batches of [[1,2],[3,4]]-style matrices times one broadcast
 * matrix b = [[1,0],[1,1]]: [[1,2],[3,4]] b = [[3,2],[7,4]],
 * [[5,6],[7,8]] b = [[11,6],[15,8]]; with adj_x each x is transposed
 * first: [[1,3],[2,4]] b = [[4,3],[6,4]], [[5,7],[6,8]] b = [[12,7],[14,8]];
 * with adj_y b^T = [[1,1],[0,1]]: [[1,3],[3,7]], [[5,11],[7,15]]. */
static void test_batch_matmul(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 3, DIMS(2, 2, 2), VALS(1, 2, 3, 4, 5, 6, 7, 8));
	pcc_buf *b = ten(rt, 2, DIMS(2, 2), VALS(1, 0, 1, 1));
	pcc_buf *b3 = ten(rt, 3, DIMS(1, 2, 2), VALS(1, 0, 1, 1));
	pcc_buf *y = ten(rt, 3, DIMS(2, 2, 2), NULL);
	run(rt, PCC_K_BatchMatMulV2, NULL, 2, BUFS(x, b), 1, BUFS(y));
	expect(y, VALS(3, 2, 7, 4, 11, 6, 15, 8), EPS);
	run(rt, PCC_K_BatchMatMulV2, NULL, 2, BUFS(x, b3), 1, BUFS(y));
	expect(y, VALS(3, 2, 7, 4, 11, 6, 15, 8), EPS);
	run(rt, PCC_K_BatchMatMulV2, &(pcc_attrs){.transpose_a = 1}, 2, BUFS(x, b),
	    1, BUFS(y));
	expect(y, VALS(4, 3, 6, 4, 12, 7, 14, 8), EPS);
	run(rt, PCC_K_BatchMatMul, &(pcc_attrs){.transpose_b = 1}, 2, BUFS(x, b3),
	    1, BUFS(y));
	expect(y, VALS(1, 3, 3, 7, 5, 11, 7, 15), EPS);
	/* [2,1,1,2] x [1,3,2,1]: batch dims broadcast to [2,3]; row (p, q) of
	 * x times column q of w: x = [1,2] and [3,4], w columns [1,1], [0,1],
	 * [2,0]: [3, 2, 2], [7, 4, 6]. */
	pcc_buf *x4 = ten(rt, 4, DIMS(2, 1, 1, 2), VALS(1, 2, 3, 4));
	pcc_buf *w4 = ten(rt, 4, DIMS(1, 3, 2, 1), VALS(1, 1, 0, 1, 2, 0));
	pcc_buf *y4 = ten(rt, 4, DIMS(2, 3, 1, 1), NULL);
	run(rt, PCC_K_BatchMatMulV2, NULL, 2, BUFS(x4, w4), 1, BUFS(y4));
	expect(y4, VALS(3, 2, 2, 7, 4, 6), EPS);
	pcc_rt_free(rt);
}

/* floor: 2.7 -> 2, -1.5 -> -2, 3 -> 3, -0.25 -> -1, 0.9 + 0.25 (stochastic
 * depth's keep_prob + u) -> 1, 0.9 + 0.05 -> 0. */
static void test_floor(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 1, DIMS(6), VALS(2.7f, -1.5f, 3, -0.25f, 1.15f, 0.95f));
	pcc_buf *y = ten(rt, 1, DIMS(6), NULL);
	run(rt, PCC_K_Floor, NULL, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(2, -2, 3, -1, 1, 0), 0);
	pcc_rt_free(rt);
}

/* erf(0) = 0, erf(0.5) = 0.5204999, erf(1) = 0.8427008, erf(-2) =
 * -0.9953223; comparisons write bool (1 byte, 0 or 1), broadcasting;
 * Cast turns them back into 0.0 / 1.0. */
static void test_erf_compare(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 1, DIMS(4), VALS(0, 0.5f, 1, -2));
	pcc_buf *y = ten(rt, 1, DIMS(4), NULL);
	run(rt, PCC_K_Erf, NULL, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(0, 0.5204999f, 0.8427008f, -0.9953223f), 1e-6);
	pcc_buf *h = ten(rt, 0, NULL, VALS(0.5f));
	pcc_buf *m = pcc_buf_new(rt, 0, "m", PCC_BOOL, 1, DIMS(4));
	pcc_buf *f = ten(rt, 1, DIMS(4), NULL);
	static const struct { pcc_kernel k; float want[4]; } cases[] = {
		{PCC_K_GreaterEqual, {0, 1, 1, 0}}, {PCC_K_Greater, {0, 0, 1, 0}},
		{PCC_K_Less, {1, 0, 0, 1}}, {PCC_K_LessEqual, {1, 1, 0, 1}},
		{PCC_K_Equal, {0, 1, 0, 0}}, {PCC_K_NotEqual, {1, 0, 1, 1}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		run(rt, cases[i].k, NULL, 2, BUFS(x, h), 1, BUFS(m));
		uint8_t raw[4];
		pcc_buf_read(m, raw);
		for (int e = 0; e < 4; e++)
			CU_ASSERT_EQUAL(raw[e], (uint8_t)cases[i].want[e]);
		run(rt, PCC_K_Cast, NULL, 1, BUFS(m), 1, BUFS(f));
		expect(f, cases[i].want, 0);
	}
	pcc_rt_free(rt);
}

/* Comparisons of integer ids, exactly: i64 ids [3, 1, 3, 7] == 3 gives
 * [1, 0, 1, 0] (a padding mask); i32 [[0, 5], [9, 2]] < [1, 6] gives
 * [[1, 1], [0, 1]], the row broadcast. */
static void test_int_compare(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *ids = iten(rt, PCC_I64, 1, DIMS(4), (const int64_t[]){3, 1, 3, 7});
	pcc_buf *pad = iten(rt, PCC_I64, 0, NULL, (const int64_t[]){3});
	pcc_buf *m = pcc_buf_new(rt, 0, "m", PCC_BOOL, 1, DIMS(4));
	run(rt, PCC_K_Equal, NULL, 2, BUFS(ids, pad), 1, BUFS(m));
	uint8_t raw[4];
	pcc_buf_read(m, raw);
	static const uint8_t eq[4] = {1, 0, 1, 0};
	CU_ASSERT_EQUAL(memcmp(raw, eq, 4), 0);
	pcc_buf *x = iten(rt, PCC_I32, 2, DIMS(2, 2), (const int64_t[]){0, 5, 9, 2});
	pcc_buf *r = iten(rt, PCC_I32, 1, DIMS(2), (const int64_t[]){1, 6});
	pcc_buf *l = pcc_buf_new(rt, 0, "l", PCC_BOOL, 2, DIMS(2, 2));
	run(rt, PCC_K_Less, NULL, 2, BUFS(x, r), 1, BUFS(l));
	pcc_buf_read(l, raw);
	static const uint8_t lt[4] = {1, 1, 0, 1};
	CU_ASSERT_EQUAL(memcmp(raw, lt, 4), 0);
	pcc_rt_free(rt);
}

/* Integer arithmetic, broadcasting (RoBERTa's position ids): i32 counts
 * [1, 2, 2, 3] times the mask [1, 1, 0, 1] = [1, 2, 0, 3]; i64 [1, 2, 0,
 * 3] + 1 = [2, 3, 1, 4]; i32 [5, -7] - [[1], [10]] = [[4, -8], [-5,
 * -17]]; Maximum and Minimum of [3, -4] and 0: [3, 0], [0, -4]; i32
 * 2147483647 + 1 wraps to -2147483648 as TensorFlow's kernel does. */
static void test_int_arith(void)
{
	pcc_rt *rt = rt1();
	int64_t got[4];
	pcc_buf *c = iten(rt, PCC_I32, 1, DIMS(4), (const int64_t[]){1, 2, 2, 3});
	pcc_buf *m = iten(rt, PCC_I32, 1, DIMS(4), (const int64_t[]){1, 1, 0, 1});
	pcc_buf *o = pcc_buf_new(rt, 0, "o", PCC_I32, 1, DIMS(4));
	run(rt, PCC_K_Mul, NULL, 2, BUFS(c, m), 1, BUFS(o));
	int32_t o32[4];
	pcc_buf_read(o, o32);
	CU_ASSERT(o32[0] == 1 && o32[1] == 2 && o32[2] == 0 && o32[3] == 3);
	pcc_buf *p = iten(rt, PCC_I64, 1, DIMS(4), (const int64_t[]){1, 2, 0, 3});
	pcc_buf *one = iten(rt, PCC_I64, 0, NULL, (const int64_t[]){1});
	pcc_buf *q = pcc_buf_new(rt, 0, "q", PCC_I64, 1, DIMS(4));
	run(rt, PCC_K_AddV2, NULL, 2, BUFS(p, one), 1, BUFS(q));
	pcc_buf_read(q, got);
	CU_ASSERT(got[0] == 2 && got[1] == 3 && got[2] == 1 && got[3] == 4);
	pcc_buf *a = iten(rt, PCC_I32, 1, DIMS(2), (const int64_t[]){5, -7});
	pcc_buf *b = iten(rt, PCC_I32, 2, DIMS(2, 1), (const int64_t[]){1, 10});
	pcc_buf *d = pcc_buf_new(rt, 0, "d", PCC_I32, 2, DIMS(2, 2));
	run(rt, PCC_K_Sub, NULL, 2, BUFS(a, b), 1, BUFS(d));
	pcc_buf_read(d, o32);
	CU_ASSERT(o32[0] == 4 && o32[1] == -8 && o32[2] == -5 && o32[3] == -17);
	pcc_buf *e = iten(rt, PCC_I32, 1, DIMS(2), (const int64_t[]){3, -4});
	pcc_buf *z = iten(rt, PCC_I32, 0, NULL, (const int64_t[]){0});
	pcc_buf *mm = pcc_buf_new(rt, 0, "mm", PCC_I32, 1, DIMS(2));
	run(rt, PCC_K_Maximum, NULL, 2, BUFS(e, z), 1, BUFS(mm));
	pcc_buf_read(mm, o32);
	CU_ASSERT(o32[0] == 3 && o32[1] == 0);
	run(rt, PCC_K_Minimum, NULL, 2, BUFS(e, z), 1, BUFS(mm));
	pcc_buf_read(mm, o32);
	CU_ASSERT(o32[0] == 0 && o32[1] == -4);
	pcc_buf *big = iten(rt, PCC_I32, 0, NULL, (const int64_t[]){2147483647});
	pcc_buf *i1 = iten(rt, PCC_I32, 0, NULL, (const int64_t[]){1});
	pcc_buf *w = pcc_buf_new(rt, 0, "w", PCC_I32, 0, NULL);
	run(rt, PCC_K_AddV2, NULL, 2, BUFS(big, i1), 1, BUFS(w));
	pcc_buf_read(w, o32);
	CU_ASSERT_EQUAL(o32[0], INT32_MIN);
	pcc_rt_free(rt);
}

/* Pow broadcasting a scalar exponent and an exponent per element:
 * [1, 2, 3, 4]^2 = [1, 4, 9, 16]; [4, 9, 2, 8]^[0.5, 0.5, -1, 1/3] =
 * [2, 3, 0.5, 2]. */
static void test_pow(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 1, DIMS(4), VALS(1, 2, 3, 4));
	pcc_buf *two = ten(rt, 0, NULL, VALS(2));
	pcc_buf *y = ten(rt, 1, DIMS(4), NULL);
	run(rt, PCC_K_Pow, NULL, 2, BUFS(x, two), 1, BUFS(y));
	expect(y, VALS(1, 4, 9, 16), 0);
	pcc_buf *b = ten(rt, 1, DIMS(4), VALS(4, 9, 2, 8));
	pcc_buf *e = ten(rt, 1, DIMS(4), VALS(0.5f, 0.5f, -1, 1.0f / 3));
	run(rt, PCC_K_Pow, NULL, 2, BUFS(b, e), 1, BUFS(y));
	expect(y, VALS(2, 3, 0.5f, 2), 1e-6);
	pcc_rt_free(rt);
}

/* RandomUniform: floats in [0, 1) that depend on the original op, its
 * seeds and the element index only (the op's own name, a replica's, does
 * not matter); 100000 of them average 0.5 within 0.005 (the standard
 * error is 0.0009), and u >= 0.25 (dropout's keep mask at rate 0.25)
 * holds for 0.75 of them within 0.005. */
static void test_random_uniform(void)
{
	pcc_rt *rt = rt1();
	enum { N = 100000 };
	pcc_buf *u = ten(rt, 2, DIMS(N / 10, 10), NULL);
	pcc_buf *v = ten(rt, 2, DIMS(N / 10, 10), NULL);
	pcc_attrs a = {.op = "drop/RandomUniform", .origin = "drop/RandomUniform",
		       .seed = 1, .seed2 = 7};
	run(rt, PCC_K_RandomUniform, &a, 0, NULL, 1, BUFS(u));
	pcc_attrs r = a;
	r.op = "drop/RandomUniform/replica_1";
	run(rt, PCC_K_RandomUniform, &r, 0, NULL, 1, BUFS(v));
	float *p = get(u), *q = get(v);
	CU_ASSERT_EQUAL(memcmp(p, q, sizeof(float) * N), 0);
	double sum = 0;
	int keep = 0;
	for (int i = 0; i < N; i++) {
		CU_ASSERT(p[i] >= 0 && p[i] < 1);
		sum += p[i];
		keep += p[i] >= 0.25f;
	}
	CU_ASSERT_DOUBLE_EQUAL(sum / N, 0.5, 0.005);
	CU_ASSERT_DOUBLE_EQUAL((double)keep / N, 0.75, 0.005);
	/* the element's value: the top 24 bits of its hash, times 2^-24 */
	CU_ASSERT_EQUAL(p[12345], (float)(pcc_seed_hash("drop/RandomUniform",
		(1ull << 32) ^ 7, 12345) >> 40) * 0x1.0p-24f);
	/* another seed2, another origin: other numbers */
	r = a;
	r.seed2 = 8;
	run(rt, PCC_K_RandomUniform, &r, 0, NULL, 1, BUFS(v));
	free(q);
	q = get(v);
	int same = 0;
	for (int i = 0; i < N; i++)
		same += p[i] == q[i];
	CU_ASSERT(same < 100);
	r = a;
	r.origin = "drop2/RandomUniform";
	run(rt, PCC_K_RandomUniform, &r, 0, NULL, 1, BUFS(v));
	free(q);
	q = get(v);
	same = 0;
	for (int i = 0; i < N; i++)
		same += p[i] == q[i];
	CU_ASSERT(same < 100);
	free(p);
	free(q);
	pcc_rt_free(rt);
}

/* x = 1..9 as a 3x3 image, filter [[1,2],[3,4]]:
 *   VALID: [1+4+12+20, 2+6+15+24, 4+10+21+32, 5+12+24+36] = [37,47,67,77];
 *   SAME stride 2: out 2x2, padding total (2-1)*2+2-3 = 1 (all after):
 *   windows at (0,0), (0,2), (2,0), (2,2): [37, 3+3*6, 7+2*8, 9] =
 *   [37, 21, 23, 9];
 *   dilation 2, VALID: one output, taps x[0,0], x[0,2], x[2,0], x[2,2]:
 *   1 + 2*3 + 3*7 + 4*9 = 64;
 *   EXPLICIT padding 1 on top and left only, stride 2: windows at
 *   (-1,-1), (-1,1), (1,-1), (1,1): [4*1, 3*2+4*3, 2*4+4*7, 37+... ] =
 *   [4, 18, 36, 1*5+2*6+3*8+4*9 = 77]. */
static void test_conv2d(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 4, DIMS(1, 3, 3, 1), VALS(1, 2, 3, 4, 5, 6, 7, 8, 9));
	pcc_buf *f = ten(rt, 4, DIMS(2, 2, 1, 1), VALS(1, 2, 3, 4));
	pcc_buf *y = ten(rt, 4, DIMS(1, 2, 2, 1), NULL);
	run(rt, PCC_K_Conv2D, NULL, 2, BUFS(x, f), 1, BUFS(y));
	expect(y, VALS(37, 47, 67, 77), EPS);
	run(rt, PCC_K_Conv2D, &(pcc_attrs){.padding = PCC_PAD_SAME,
		.strides = {2, 2}}, 2, BUFS(x, f), 1, BUFS(y));
	expect(y, VALS(37, 21, 23, 9), EPS);
	pcc_buf *y1 = ten(rt, 4, DIMS(1, 1, 1, 1), NULL);
	run(rt, PCC_K_Conv2D, &(pcc_attrs){.dilations = {2, 2}}, 2, BUFS(x, f), 1,
	    BUFS(y1));
	expect(y1, VALS(64), EPS);
	run(rt, PCC_K_Conv2D, &(pcc_attrs){.padding = PCC_PAD_EXPLICIT,
		.pads = {1, 0, 1, 0}, .strides = {2, 2}}, 2, BUFS(x, f), 1,
	    BUFS(y));
	expect(y, VALS(4, 18, 36, 77), EPS);
	/* One channel, one image: NCHW holds the same numbers. */
	pcc_buf *xc = ten(rt, 4, DIMS(1, 1, 3, 3), VALS(1, 2, 3, 4, 5, 6, 7, 8, 9));
	pcc_buf *yc = ten(rt, 4, DIMS(1, 1, 2, 2), NULL);
	run(rt, PCC_K_Conv2D, &(pcc_attrs){.nchw = 1}, 2, BUFS(xc, f), 1, BUFS(yc));
	expect(yc, VALS(37, 47, 67, 77), EPS);
	pcc_rt_free(rt);
}

/* Two input channels, two output channels, 1x1 filter [[1,2],[3,4]]
 * ([in][out]): out_c0 = x_c0 + 3 x_c1, out_c1 = 2 x_c0 + 4 x_c1, pixel
 * by pixel, in NHWC and in NCHW. */
static void test_conv2d_channels(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *f = ten(rt, 4, DIMS(1, 1, 2, 2), VALS(1, 2, 3, 4));
	/* pixels (c0, c1): (1, 10), (2, 20) */
	pcc_buf *x = ten(rt, 4, DIMS(1, 1, 2, 2), VALS(1, 10, 2, 20));
	pcc_buf *y = ten(rt, 4, DIMS(1, 1, 2, 2), NULL);
	run(rt, PCC_K_Conv2D, NULL, 2, BUFS(x, f), 1, BUFS(y));
	expect(y, VALS(31, 42, 62, 84), EPS);
	pcc_buf *xc = ten(rt, 4, DIMS(1, 2, 1, 2), VALS(1, 2, 10, 20));
	pcc_buf *yc = ten(rt, 4, DIMS(1, 2, 1, 2), NULL);
	run(rt, PCC_K_Conv2D, &(pcc_attrs){.nchw = 1}, 2, BUFS(xc, f), 1, BUFS(yc));
	expect(yc, VALS(31, 62, 42, 84), EPS);
	pcc_rt_free(rt);
}

/* Grouped (TensorFlow's: filter [1, 1, C / 2, OC], 2 groups), 1x1 over
 * two pixels of 4 channels, (1, 2, 3, 4) and (1, 0, 0, 1); filter rows
 * (in-group channel) [1, 2, 3, 4] and [5, 6, 7, 8].  Output channels 0, 1
 * read channels 0, 1: a0·f[0][oc] + a1·f[1][oc]; 2, 3 read 2, 3:
 *   (11, 14, 37, 44) and (1, 2, 7, 8).
 * dy = ones at pixel 0: dx[c] sums its group's filter row: (1+2, 5+6,
 * 3+4, 7+8) = (3, 11, 7, 15), 0 at pixel 1.  dy = ones everywhere:
 * df[r][oc] sums channel group(oc)·2 + r over the pixels: (2, 2, 3, 3)
 * and (2, 2, 5, 5). */
static void test_conv2d_groups(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 4, DIMS(1, 1, 2, 4), VALS(1, 2, 3, 4, 1, 0, 0, 1));
	pcc_buf *f = ten(rt, 4, DIMS(1, 1, 2, 4), VALS(1, 2, 3, 4, 5, 6, 7, 8));
	pcc_buf *y = ten(rt, 4, DIMS(1, 1, 2, 4), NULL);
	run(rt, PCC_K_Conv2D, NULL, 2, BUFS(x, f), 1, BUFS(y));
	expect(y, VALS(11, 14, 37, 44, 1, 2, 7, 8), EPS);
	pcc_buf *dy = ten(rt, 4, DIMS(1, 1, 2, 4), VALS(1, 1, 1, 1, 0, 0, 0, 0));
	pcc_buf *dx = ten(rt, 4, DIMS(1, 1, 2, 4), NULL);
	run(rt, PCC_K_Conv2DBackpropInput, NULL, 2, BUFS(f, dy), 1, BUFS(dx));
	expect(dx, VALS(3, 11, 7, 15, 0, 0, 0, 0), EPS);
	pcc_buf *ones = ten(rt, 4, DIMS(1, 1, 2, 4), VALS(1, 1, 1, 1, 1, 1, 1, 1));
	pcc_buf *df = ten(rt, 4, DIMS(1, 1, 2, 4), NULL);
	run(rt, PCC_K_Conv2DBackpropFilter, NULL, 2, BUFS(x, ones), 1, BUFS(df));
	expect(df, VALS(2, 2, 3, 3, 2, 2, 5, 5), EPS);
	pcc_rt_free(rt);
}

/* The VALID example above with dy = ones: dx adds the filter at each of
 * the 4 windows: [[1,3,2],[4,10,6],[3,7,4]]; df[a][b] = the sum of the
 * x under tap (a,b) over the windows: [1+2+4+5, 2+3+5+6, 4+5+7+8,
 * 5+6+8+9] = [12,16,24,28].  With dy = [1,0,0,0] only window (0,0). */
static void test_conv2d_backprops(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 4, DIMS(1, 3, 3, 1), VALS(1, 2, 3, 4, 5, 6, 7, 8, 9));
	pcc_buf *f = ten(rt, 4, DIMS(2, 2, 1, 1), VALS(1, 2, 3, 4));
	pcc_buf *dy = ten(rt, 4, DIMS(1, 2, 2, 1), VALS(1, 1, 1, 1));
	pcc_buf *dx = ten(rt, 4, DIMS(1, 3, 3, 1), NULL);
	pcc_buf *df = ten(rt, 4, DIMS(2, 2, 1, 1), NULL);
	run(rt, PCC_K_Conv2DBackpropInput, NULL, 2, BUFS(f, dy), 1, BUFS(dx));
	expect(dx, VALS(1, 3, 2, 4, 10, 6, 3, 7, 4), EPS);
	run(rt, PCC_K_Conv2DBackpropFilter, NULL, 2, BUFS(x, dy), 1, BUFS(df));
	expect(df, VALS(12, 16, 24, 28), EPS);
	pcc_buf *d1 = ten(rt, 4, DIMS(1, 2, 2, 1), VALS(1, 0, 0, 0));
	run(rt, PCC_K_Conv2DBackpropInput, NULL, 2, BUFS(f, d1), 1, BUFS(dx));
	expect(dx, VALS(1, 2, 0, 3, 4, 0, 0, 0, 0), EPS);
	run(rt, PCC_K_Conv2DBackpropFilter, NULL, 2, BUFS(x, d1), 1, BUFS(df));
	expect(df, VALS(1, 2, 4, 5), EPS);
	pcc_rt_free(rt);
}

/* Depthwise, multiplier 2, VALID: x 3x3 with channel 0 = 1..9 and
 * channel 1 = ones; filters (c, m): (0,0) [[1,2],[3,4]] (test_conv2d's:
 * 37, 47, 67, 77), (0,1) [[1,0],[0,0]] (the window's top-left: 1, 2, 4,
 * 5), (1,0) all ones (4), (1,1) [[0,0],[0,1]] (1); output channel
 * c * 2 + m.  Backprops: dy 1 at output (0,0), every channel, gives the
 * filter gradient x's top-left 2x2 window per (c, m); dy 1 at output
 * (1,1), channel (0,0) only, puts filter (0,0) on x's bottom-right 2x2 of
 * channel 0. */
static void test_depthwise(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 4, DIMS(1, 3, 3, 2), VALS(1, 1, 2, 1, 3, 1, 4, 1, 5,
						     1, 6, 1, 7, 1, 8, 1, 9, 1));
	pcc_buf *f = ten(rt, 4, DIMS(2, 2, 2, 2), VALS(1, 1, 1, 0, 2, 0, 1, 0, 3,
						     0, 1, 0, 4, 0, 1, 1));
	pcc_buf *y = ten(rt, 4, DIMS(1, 2, 2, 4), NULL);
	run(rt, PCC_K_DepthwiseConv2dNative, NULL, 2, BUFS(x, f), 1, BUFS(y));
	expect(y, VALS(37, 1, 4, 1, 47, 2, 4, 1, 67, 4, 4, 1, 77, 5, 4, 1), EPS);
	pcc_buf *dy = ten(rt, 4, DIMS(1, 2, 2, 4), VALS(1, 1, 1, 1, 0, 0, 0, 0, 0,
						      0, 0, 0, 0, 0, 0, 0));
	pcc_buf *df = ten(rt, 4, DIMS(2, 2, 2, 2), NULL);
	run(rt, PCC_K_DepthwiseConv2dNativeBackpropFilter, NULL, 2, BUFS(x, dy), 1,
	    BUFS(df));
	expect(df, VALS(1, 1, 1, 1, 2, 2, 1, 1, 4, 4, 1, 1, 5, 5, 1, 1), EPS);
	float d1[16] = {0};
	d1[12] = 1;
	pcc_buf_write(dy, d1);
	pcc_buf *dx = ten(rt, 4, DIMS(1, 3, 3, 2), NULL);
	run(rt, PCC_K_DepthwiseConv2dNativeBackpropInput, NULL, 2, BUFS(f, dy), 1,
	    BUFS(dx));
	expect(dx, VALS(0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 3, 0, 4, 0), EPS);
	/* NCHW, SAME, stride 2, multiplier 1, one channel: Conv2D's answer
	 * (test_conv2d: 37, 21, 23, 9). */
	pcc_buf *xc = ten(rt, 4, DIMS(1, 1, 3, 3), VALS(1, 2, 3, 4, 5, 6, 7, 8, 9));
	pcc_buf *fc = ten(rt, 4, DIMS(2, 2, 1, 1), VALS(1, 2, 3, 4));
	pcc_buf *yc = ten(rt, 4, DIMS(1, 1, 2, 2), NULL);
	run(rt, PCC_K_DepthwiseConv2dNative, &(pcc_attrs){.nchw = 1,
		.padding = PCC_PAD_SAME, .strides = {2, 2}}, 2, BUFS(xc, fc), 1,
	    BUFS(yc));
	expect(yc, VALS(37, 21, 23, 9), EPS);
	pcc_rt_free(rt);
}

/* Batch normalisation of 4 pixels, 2 channels, epsilon 0:
 *   channel 0: 1, 5, 1, 5: mean 3, biased variance 4, x̂ = -1, 1, -1, 1;
 *     scale 2, offset 10: y = 8, 12, 8, 12;
 *   channel 1: 0, 0, 2, 2: mean 1, variance 1, x̂ = -1, -1, 1, 1;
 *     scale 3, offset -1: y = -4, -4, 2, 2.
 * batch_variance is Bessel-corrected (·4/3): 16/3, 4/3; blended with
 * factor 0.5 and the inputs mean [1, 3], variance [2, 2]: mean [2, 2],
 * variance [1 + 8/3, 1 + 2/3].  reserve_space_1/2: mean [3, 1], biased
 * variance [4, 1].  Inference with mean [3, 1], variance [3, 0] and
 * epsilon 1 normalises alike.
 * Gradient (training), dy channel 0: 1, 2, 3, 4 (Σdy 10, Σdy·x̂ 2),
 * r = 1/2: dx = 2·½·(dy - 10/4 - x̂·2/4) = -1, -1, 1, 1; channel 1:
 * 0, 0, 0, 4 (Σdy 4, Σdy·x̂ 4), r = 1: dx = 3·(dy - 1 - x̂) = 0, 0, -6, 6.
 * Inference: dx = scale·r·dy = 1, 2, 3, 4 and 0, 0, 0, 12; the scale
 * and offset gradients are the same: [2, 4], [10, 4]. */
static void test_batchnorm(void)
{
	for (int nchw = 0; nchw < 2; nchw++) {
		pcc_rt *rt = rt1();
		pcc_attrs a = {.nchw = nchw, .avg_factor = 0.5};
		const int64_t *d = DIMS(1, 2, 2, 2);
		pcc_buf *x = ten(rt, 4, d, nchw ? VALS(1, 5, 1, 5, 0, 0, 2, 2)
						: VALS(1, 0, 5, 0, 1, 2, 5, 2));
		pcc_buf *sc = ten(rt, 1, DIMS(2), VALS(2, 3));
		pcc_buf *of = ten(rt, 1, DIMS(2), VALS(10, -1));
		pcc_buf *m = ten(rt, 1, DIMS(2), VALS(1, 3));
		pcc_buf *v = ten(rt, 1, DIMS(2), VALS(2, 2));
		pcc_buf *o[6];
		o[0] = ten(rt, 4, d, NULL);
		for (int i = 1; i < 5; i++)
			o[i] = ten(rt, 1, DIMS(2), NULL);
		o[5] = ten(rt, 1, DIMS(0), NULL);
		const float *y = nchw ? VALS(8, 12, 8, 12, -4, -4, 2, 2)
				      : VALS(8, -4, 12, -4, 8, 2, 12, 2);
		run(rt, PCC_K_FusedBatchNormV3, &a, 5, BUFS(x, sc, of, m, v), 6, o);
		expect(o[0], y, EPS);
		expect(o[1], VALS(2, 2), EPS);
		expect(o[2], VALS(1 + 8.0f / 3, 1 + 2.0f / 3), EPS);
		expect(o[3], VALS(3, 1), EPS);
		expect(o[4], VALS(4, 1), EPS);
		/* factor 1: no blend; the mean and variance may be empty */
		pcc_buf *none = ten(rt, 1, DIMS(0), NULL);
		run(rt, PCC_K_FusedBatchNormV3, &(pcc_attrs){.nchw = nchw, .avg_factor = 1},
		    5, BUFS(x, sc, of, none, none), 6, o);
		expect(o[0], y, EPS);
		expect(o[1], VALS(3, 1), EPS);
		expect(o[2], VALS(16.0f / 3, 4.0f / 3), EPS);

		pcc_buf *dy = ten(rt, 4, d, nchw ? VALS(1, 2, 3, 4, 0, 0, 0, 4)
						 : VALS(1, 0, 2, 0, 3, 0, 4, 4));
		pcc_buf *g[5];
		g[0] = ten(rt, 4, d, NULL);
		g[1] = ten(rt, 1, DIMS(2), NULL);
		g[2] = ten(rt, 1, DIMS(2), NULL);
		g[3] = g[4] = none;
		run(rt, PCC_K_FusedBatchNormGradV3, &a, 6,
		    BUFS(dy, x, sc, o[3], o[4], o[5]), 5, g);
		expect(g[0], nchw ? VALS(-1, -1, 1, 1, 0, 0, -6, 6)
				  : VALS(-1, 0, -1, 0, 1, -6, 1, 6), EPS);
		expect(g[1], VALS(2, 4), EPS);
		expect(g[2], VALS(10, 4), EPS);

		pcc_attrs inf = {.nchw = nchw, .inference = 1, .epsilon = 1};
		pcc_buf *pm = ten(rt, 1, DIMS(2), VALS(3, 1));
		pcc_buf *pv = ten(rt, 1, DIMS(2), VALS(3, 0));
		run(rt, PCC_K_FusedBatchNormV3, &inf, 5, BUFS(x, sc, of, pm, pv), 6, o);
		expect(o[0], y, EPS);
		expect(o[1], VALS(3, 1), EPS);
		expect(o[2], VALS(3, 0), EPS);
		run(rt, PCC_K_FusedBatchNormGradV3, &inf, 6,
		    BUFS(dy, x, sc, pm, pv, o[5]), 5, g);
		expect(g[0], nchw ? VALS(1, 2, 3, 4, 0, 0, 0, 12)
				  : VALS(1, 0, 2, 0, 3, 0, 4, 12), EPS);
		expect(g[1], VALS(2, 4), EPS);
		expect(g[2], VALS(10, 4), EPS);
		pcc_rt_free(rt);
	}
}

static void test_bias(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
	pcc_buf *b = ten(rt, 1, DIMS(3), VALS(10, 20, 30));
	pcc_buf *y = ten(rt, 2, DIMS(2, 3), NULL);
	pcc_buf *g = ten(rt, 1, DIMS(3), NULL);
	run(rt, PCC_K_BiasAdd, NULL, 2, BUFS(x, b), 1, BUFS(y));
	expect(y, VALS(11, 22, 33, 14, 25, 36), EPS);
	run(rt, PCC_K_BiasAddGrad, NULL, 1, BUFS(x), 1, BUFS(g));
	expect(g, VALS(5, 7, 9), EPS);
	/* NCHW [1, 2, 1, 2]: channel 0 holds 1, 2; channel 1 holds 3, 4. */
	pcc_buf *xc = ten(rt, 4, DIMS(1, 2, 1, 2), VALS(1, 2, 3, 4));
	pcc_buf *bc = ten(rt, 1, DIMS(2), VALS(10, 20));
	pcc_buf *yc = ten(rt, 4, DIMS(1, 2, 1, 2), NULL);
	pcc_buf *gc = ten(rt, 1, DIMS(2), NULL);
	run(rt, PCC_K_BiasAdd, &(pcc_attrs){.nchw = 1}, 2, BUFS(xc, bc), 1, BUFS(yc));
	expect(yc, VALS(11, 12, 23, 24), EPS);
	run(rt, PCC_K_BiasAddGrad, &(pcc_attrs){.nchw = 1}, 1, BUFS(xc), 1, BUFS(gc));
	expect(gc, VALS(3, 7), EPS);
	pcc_rt_free(rt);
}

/* Relu(-1, 0, 2) = (0, 0, 2); ReluGrad passes where features > 0 only;
 * tanh(0) = 0, sigmoid(0) = 1/2; TanhGrad(y=.5, dy=2) = 2(1-.25) = 1.5;
 * SigmoidGrad(y=.5, dy=2) = 2 * .5 * .5 = .5. */
static void test_elementwise(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 1, DIMS(3), VALS(-1, 0, 2));
	pcc_buf *g = ten(rt, 1, DIMS(3), VALS(5, 6, 7));
	pcc_buf *y = ten(rt, 1, DIMS(3), NULL);
	run(rt, PCC_K_Relu, NULL, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(0, 0, 2), 0);
	run(rt, PCC_K_ReluGrad, NULL, 2, BUFS(g, x), 1, BUFS(y));
	expect(y, VALS(0, 0, 7), 0);
	run(rt, PCC_K_Neg, NULL, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(1, 0, -2), 0);
	run(rt, PCC_K_Square, NULL, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(1, 0, 4), 0);
	pcc_buf *z = ten(rt, 1, DIMS(1), VALS(0));
	pcc_buf *o = ten(rt, 1, DIMS(1), NULL);
	run(rt, PCC_K_Tanh, NULL, 1, BUFS(z), 1, BUFS(o));
	expect(o, VALS(0), EPS);
	run(rt, PCC_K_Sigmoid, NULL, 1, BUFS(z), 1, BUFS(o));
	expect(o, VALS(0.5f), EPS);
	pcc_buf *yh = ten(rt, 1, DIMS(1), VALS(0.5f));
	pcc_buf *dy = ten(rt, 1, DIMS(1), VALS(2));
	run(rt, PCC_K_TanhGrad, NULL, 2, BUFS(yh, dy), 1, BUFS(o));
	expect(o, VALS(1.5f), EPS);
	run(rt, PCC_K_SigmoidGrad, NULL, 2, BUFS(yh, dy), 1, BUFS(o));
	expect(o, VALS(0.5f), EPS);
	/* Cast truncates toward zero, as static_cast does. */
	pcc_buf *c = ten(rt, 1, DIMS(2), VALS(1.7f, -2.2f));
	pcc_buf *ci = pcc_buf_new(rt, 0, "ci", PCC_I32, 1, DIMS(2));
	run(rt, PCC_K_Cast, NULL, 1, BUFS(c), 1, BUFS(ci));
	int32_t iv[2];
	pcc_buf_read(ci, iv);
	CU_ASSERT(iv[0] == 1 && iv[1] == -2);
	pcc_rt_free(rt);
}

/* [[1,2,3],[4,5,6]] + [10,20,30] = [[11,22,33],[14,25,36]];
 * + [[100],[200]] = [[101,102,103],[204,205,206]]; - and * likewise. */
static void test_broadcast(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
	pcc_buf *row = ten(rt, 1, DIMS(3), VALS(10, 20, 30));
	pcc_buf *col = ten(rt, 2, DIMS(2, 1), VALS(100, 200));
	pcc_buf *y = ten(rt, 2, DIMS(2, 3), NULL);
	run(rt, PCC_K_Add, NULL, 2, BUFS(x, row), 1, BUFS(y));
	expect(y, VALS(11, 22, 33, 14, 25, 36), 0);
	run(rt, PCC_K_AddV2, NULL, 2, BUFS(col, x), 1, BUFS(y));
	expect(y, VALS(101, 102, 103, 204, 205, 206), 0);
	run(rt, PCC_K_Sub, NULL, 2, BUFS(x, row), 1, BUFS(y));
	expect(y, VALS(-9, -18, -27, -6, -15, -24), 0);
	run(rt, PCC_K_Mul, NULL, 2, BUFS(col, row), 1, BUFS(y));
	expect(y, VALS(1000, 2000, 3000, 2000, 4000, 6000), 0);
	pcc_buf *a = ten(rt, 1, DIMS(2), VALS(1, 2));
	pcc_buf *b = ten(rt, 1, DIMS(2), VALS(3, 4));
	pcc_buf *c = ten(rt, 1, DIMS(2), VALS(5, 6));
	pcc_buf *s = ten(rt, 1, DIMS(2), NULL);
	run(rt, PCC_K_AddN, NULL, 3, BUFS(a, b, c), 1, BUFS(s));
	expect(s, VALS(9, 12), 0);
	pcc_rt_free(rt);
}

/* x = [[1,5,2,0],[3,4,8,1],[0,9,2,2],[6,1,3,7]], 2x2 windows, stride 2:
 * max [5,8,9,7]; the gradient [1,2,3,4] goes to the maxima's cells.
 * A window of equal values sends it to its first cell (TensorFlow). */
static void test_maxpool(void)
{
	pcc_rt *rt = rt1();
	pcc_attrs a = {.ksize = {2, 2}, .strides = {2, 2}};
	pcc_buf *x = ten(rt, 4, DIMS(1, 4, 4, 1),
			 VALS(1, 5, 2, 0, 3, 4, 8, 1, 0, 9, 2, 2, 6, 1, 3, 7));
	pcc_buf *y = ten(rt, 4, DIMS(1, 2, 2, 1), NULL);
	pcc_buf *g = ten(rt, 4, DIMS(1, 2, 2, 1), VALS(1, 2, 3, 4));
	pcc_buf *dx = ten(rt, 4, DIMS(1, 4, 4, 1), NULL);
	run(rt, PCC_K_MaxPool, &a, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(5, 8, 9, 7), 0);
	run(rt, PCC_K_MaxPoolGrad, &a, 3, BUFS(x, y, g), 1, BUFS(dx));
	expect(dx, VALS(0, 1, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0, 0, 0, 4), 0);
	pcc_buf *t = ten(rt, 4, DIMS(1, 2, 2, 1), VALS(3, 3, 1, 3));
	pcc_buf *ty = ten(rt, 4, DIMS(1, 1, 1, 1), NULL);
	pcc_buf *tg = ten(rt, 4, DIMS(1, 1, 1, 1), VALS(5));
	pcc_buf *tdx = ten(rt, 4, DIMS(1, 2, 2, 1), NULL);
	run(rt, PCC_K_MaxPool, &a, 1, BUFS(t), 1, BUFS(ty));
	run(rt, PCC_K_MaxPoolGrad, &a, 3, BUFS(t, ty, tg), 1, BUFS(tdx));
	expect(tdx, VALS(5, 0, 0, 0), 0);
	pcc_rt_free(rt);
}

/* x = 1..9 (3x3), 2x2 windows, stride 2, SAME: padding (2-1)*2+2-3 = 1
 * after; windows {1,2,4,5}, {3,6}, {7,8}, {9}: max [5,6,8,9], average
 * (padded cells not counted) [3, 4.5, 7.5, 9]; AvgPoolGrad of
 * [4,2,2,1] spreads 1 to every cell. */
static void test_pool_same(void)
{
	pcc_rt *rt = rt1();
	pcc_attrs a = {.ksize = {2, 2}, .strides = {2, 2}, .padding = PCC_PAD_SAME};
	pcc_buf *x = ten(rt, 4, DIMS(1, 3, 3, 1), VALS(1, 2, 3, 4, 5, 6, 7, 8, 9));
	pcc_buf *y = ten(rt, 4, DIMS(1, 2, 2, 1), NULL);
	pcc_buf *dx = ten(rt, 4, DIMS(1, 3, 3, 1), NULL);
	run(rt, PCC_K_MaxPool, &a, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(5, 6, 8, 9), 0);
	run(rt, PCC_K_AvgPool, &a, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(3, 4.5f, 7.5f, 9), EPS);
	pcc_buf *g = ten(rt, 4, DIMS(1, 2, 2, 1), VALS(4, 2, 2, 1));
	run(rt, PCC_K_AvgPoolGrad, &a, 1, BUFS(g), 1, BUFS(dx));
	expect(dx, VALS(1, 1, 1, 1, 1, 1, 1, 1, 1), EPS);
	pcc_rt_free(rt);
}

/* Row 0: logits (0, 0), class 0: softmax (1/2, 1/2), loss ln 2, backprop
 * (-1/2, 1/2).  Row 1: logits (ln 3, 0), class 1: softmax (3/4, 1/4),
 * loss ln 4, backprop (3/4, -3/4).  Dense labels give the same; soft
 * labels (1/2, 1/2) on row 0: loss ln 2, backprop (0, 0). */
static void test_softmax_xent(void)
{
	pcc_rt *rt = rt1();
	float l3 = logf(3);
	pcc_buf *x = ten(rt, 2, DIMS(2, 2), VALS(0, 0, l3, 0));
	pcc_buf *loss = ten(rt, 1, DIMS(2), NULL);
	pcc_buf *bp = ten(rt, 2, DIMS(2, 2), NULL);
	for (int dt = 0; dt < 2; dt++) {
		pcc_buf *lab = iten(rt, dt ? PCC_I32 : PCC_I64, 1, DIMS(2),
				    (const int64_t[]){0, 1});
		run(rt, PCC_K_SparseSoftmaxCrossEntropyWithLogits, NULL, 2,
		    BUFS(x, lab), 2, BUFS(loss, bp));
		expect(loss, VALS(logf(2), logf(4)), EPS);
		expect(bp, VALS(-0.5f, 0.5f, 0.75f, -0.75f), EPS);
	}
	pcc_buf *onehot = ten(rt, 2, DIMS(2, 2), VALS(1, 0, 0, 1));
	run(rt, PCC_K_SoftmaxCrossEntropyWithLogits, NULL, 2, BUFS(x, onehot), 2,
	    BUFS(loss, bp));
	expect(loss, VALS(logf(2), logf(4)), EPS);
	expect(bp, VALS(-0.5f, 0.5f, 0.75f, -0.75f), EPS);
	pcc_buf *soft = ten(rt, 2, DIMS(2, 2), VALS(0.5f, 0.5f, 0, 1));
	run(rt, PCC_K_SoftmaxCrossEntropyWithLogits, NULL, 2, BUFS(x, soft), 2,
	    BUFS(loss, bp));
	expect(loss, VALS(logf(2), logf(4)), EPS);
	expect(bp, VALS(0, 0, 0.75f, -0.75f), EPS);
	pcc_buf *sm = ten(rt, 2, DIMS(2, 2), NULL);
	run(rt, PCC_K_Softmax, NULL, 1, BUFS(x), 1, BUFS(sm));
	expect(sm, VALS(0.5f, 0.5f, 0.75f, 0.25f), EPS);
	run(rt, PCC_K_LogSoftmax, NULL, 1, BUFS(x), 1, BUFS(sm));
	expect(sm, VALS(logf(0.5f), logf(0.5f), logf(0.75f), logf(0.25f)), EPS);
	pcc_rt_free(rt);
}

/* [[1,2,3,4],[5,6,7,8]] split along axis 1 in halves, and as [1, 3];
 * ConcatV2 along axis 0 of [[1,2]] and [[3,4],[5,6]]. */
static void test_split_concat(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 2, DIMS(2, 4), VALS(1, 2, 3, 4, 5, 6, 7, 8));
	pcc_buf *p = ten(rt, 2, DIMS(2, 2), NULL), *q = ten(rt, 2, DIMS(2, 2), NULL);
	pcc_attrs a1 = {.axis = 1};
	run(rt, PCC_K_Split, &a1, 1, BUFS(x), 2, BUFS(p, q));
	expect(p, VALS(1, 2, 5, 6), 0);
	expect(q, VALS(3, 4, 7, 8), 0);
	pcc_buf *r = ten(rt, 2, DIMS(2, 1), NULL), *s = ten(rt, 2, DIMS(2, 3), NULL);
	run(rt, PCC_K_SplitV, &a1, 1, BUFS(x), 2, BUFS(r, s));
	expect(r, VALS(1, 5), 0);
	expect(s, VALS(2, 3, 4, 6, 7, 8), 0);
	pcc_buf *back = ten(rt, 2, DIMS(2, 4), NULL);
	run(rt, PCC_K_ConcatV2, &a1, 2, BUFS(r, s), 1, BUFS(back));
	expect(back, VALS(1, 2, 3, 4, 5, 6, 7, 8), 0);
	pcc_buf *u = ten(rt, 2, DIMS(1, 2), VALS(1, 2));
	pcc_buf *v = ten(rt, 2, DIMS(2, 2), VALS(3, 4, 5, 6));
	pcc_buf *w = ten(rt, 2, DIMS(3, 2), NULL);
	run(rt, PCC_K_ConcatV2, &(pcc_attrs){.axis = 0}, 2, BUFS(u, v), 1, BUFS(w));
	expect(w, VALS(1, 2, 3, 4, 5, 6), 0);
	pcc_buf *flat = ten(rt, 1, DIMS(6), NULL);
	run(rt, PCC_K_Reshape, NULL, 1, BUFS(w), 1, BUFS(flat));
	expect(flat, VALS(1, 2, 3, 4, 5, 6), 0);
	pcc_rt_free(rt);
}

/* Slice of [[0..3],[4..7],[8..11]] at [1, 1], size [2, -1]:
 * [[5,6,7],[9,10,11]]; of x[a][b][c] = 6a + 2b + c ([2,3,2]) at [1, 0, 1]
 * size [1, 2, 1]: x[1][0][1] = 7, x[1][1][1] = 9. */
static void test_slice(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 2, DIMS(3, 4), VALS(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
	pcc_buf *y = ten(rt, 2, DIMS(2, 3), NULL);
	run(rt, PCC_K_Slice, &(pcc_attrs){.begin = {1, 1}}, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(5, 6, 7, 9, 10, 11), 0);
	pcc_buf *x3 = ten(rt, 3, DIMS(2, 3, 2), VALS(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
	pcc_buf *y3 = ten(rt, 3, DIMS(1, 2, 1), NULL);
	run(rt, PCC_K_Slice, &(pcc_attrs){.begin = {1, 0, 1}}, 1, BUFS(x3), 1,
	    BUFS(y3));
	expect(y3, VALS(7, 9), 0);
	pcc_rt_free(rt);
}

/* GatherV2 of [[1,2],[3,4],[5,6]] at i32 [[2,0],[1,1]], axis 0:
 * [[[5,6],[1,2]],[[3,4],[3,4]]]; of [[1,2,3],[4,5,6]] at i64 [2,0],
 * axis 1: [[3,1],[6,4]]. */
static void test_gather(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *p = ten(rt, 2, DIMS(3, 2), VALS(1, 2, 3, 4, 5, 6));
	pcc_buf *i = iten(rt, PCC_I32, 2, DIMS(2, 2), (const int64_t[]){2, 0, 1, 1});
	pcc_buf *y = ten(rt, 3, DIMS(2, 2, 2), NULL);
	run(rt, PCC_K_GatherV2, NULL, 2, BUFS(p, i), 1, BUFS(y));
	expect(y, VALS(5, 6, 1, 2, 3, 4, 3, 4), 0);
	pcc_buf *p1 = ten(rt, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
	pcc_buf *i1 = iten(rt, PCC_I64, 1, DIMS(2), (const int64_t[]){2, 0});
	pcc_buf *y1 = ten(rt, 2, DIMS(2, 2), NULL);
	run(rt, PCC_K_GatherV2, &(pcc_attrs){.axis = 1}, 2, BUFS(p1, i1), 1,
	    BUFS(y1));
	expect(y1, VALS(3, 1, 6, 4), 0);
	pcc_rt_free(rt);
}

/* UnsortedSegmentSum of rows [1,2], [3,4], [5,6], [7,8] by ids 2, 0, 2, -1
 * into 3 segments: [[3,4],[0,0],[6,8]] (the row of id -1 dropped); of
 * [2,2,1] = 1..4 by [[1,1],[0,1]] into 2: [[3],[1+2+4]]. */
static void test_segment_sum(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 2, DIMS(4, 2), VALS(1, 2, 3, 4, 5, 6, 7, 8));
	pcc_buf *ids = iten(rt, PCC_I32, 1, DIMS(4), (const int64_t[]){2, 0, 2, -1});
	pcc_buf *y = ten(rt, 2, DIMS(3, 2), VALS(9, 9, 9, 9, 9, 9));
	run(rt, PCC_K_UnsortedSegmentSum, NULL, 2, BUFS(x, ids), 1, BUFS(y));
	expect(y, VALS(3, 4, 0, 0, 6, 8), 0);
	pcc_buf *x2 = ten(rt, 3, DIMS(2, 2, 1), VALS(1, 2, 3, 4));
	pcc_buf *id2 = iten(rt, PCC_I64, 2, DIMS(2, 2), (const int64_t[]){1, 1, 0, 1});
	pcc_buf *y2 = ten(rt, 2, DIMS(2, 1), NULL);
	run(rt, PCC_K_UnsortedSegmentSum, NULL, 2, BUFS(x2, id2), 1, BUFS(y2));
	expect(y2, VALS(3, 7), 0);
	pcc_rt_free(rt);
}

/* BroadcastTo of [[1],[2],[3]] to [2,3,2]: each row's value twice, the
 * whole twice. */
static void test_broadcast_to(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 2, DIMS(3, 1), VALS(1, 2, 3));
	pcc_buf *y = ten(rt, 3, DIMS(2, 3, 2), NULL);
	run(rt, PCC_K_BroadcastTo, NULL, 1, BUFS(x), 1, BUFS(y));
	expect(y, VALS(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3), 0);
	pcc_rt_free(rt);
}

/* [[1,2,3],[4,5,6]] with perm [1,0] is [[1,4],[2,5],[3,6]]; a [2,2,3]
 * tensor x[a][b][c] = 100a + 10b + c with perm [2,0,1] is y[c][a][b]. */
static void test_transpose(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
	pcc_buf *y = ten(rt, 2, DIMS(3, 2), NULL);
	run(rt, PCC_K_Transpose, &(pcc_attrs){.perm = {1, 0}}, 1, BUFS(x), 1,
	    BUFS(y));
	expect(y, VALS(1, 4, 2, 5, 3, 6), 0);
	float v[12], want[12];
	for (int a = 0; a < 2; a++)
		for (int b = 0; b < 2; b++)
			for (int c = 0; c < 3; c++) {
				v[(a * 2 + b) * 3 + c] = (float)(100 * a + 10 * b + c);
				want[(c * 2 + a) * 2 + b] = (float)(100 * a + 10 * b + c);
			}
	pcc_buf *x3 = ten(rt, 3, DIMS(2, 2, 3), v);
	pcc_buf *y3 = ten(rt, 3, DIMS(3, 2, 2), NULL);
	run(rt, PCC_K_Transpose, &(pcc_attrs){.perm = {2, 0, 1}}, 1, BUFS(x3), 1,
	    BUFS(y3));
	expect(y3, want, 0);
	pcc_rt_free(rt);
}

/* [[1,2,3],[4,5,6]]: Sum over 0 = [5,7,9], over 1 = [6,15], over both 21;
 * Mean over 1 = [2,5]; Max over 0 = [4,5,6]; Min over 1 = [1,4]. */
static void test_reduce(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *x = ten(rt, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
	pcc_buf *r3 = ten(rt, 1, DIMS(3), NULL), *r2 = ten(rt, 1, DIMS(2), NULL);
	pcc_buf *r0 = ten(rt, 0, NULL, NULL);
	run(rt, PCC_K_Sum, &(pcc_attrs){.axes = 1}, 1, BUFS(x), 1, BUFS(r3));
	expect(r3, VALS(5, 7, 9), 0);
	run(rt, PCC_K_Sum, &(pcc_attrs){.axes = 2}, 1, BUFS(x), 1, BUFS(r2));
	expect(r2, VALS(6, 15), 0);
	run(rt, PCC_K_Sum, &(pcc_attrs){.axes = 3}, 1, BUFS(x), 1, BUFS(r0));
	expect(r0, VALS(21), 0);
	run(rt, PCC_K_Mean, &(pcc_attrs){.axes = 2}, 1, BUFS(x), 1, BUFS(r2));
	expect(r2, VALS(2, 5), EPS);
	run(rt, PCC_K_Max, &(pcc_attrs){.axes = 1}, 1, BUFS(x), 1, BUFS(r3));
	expect(r3, VALS(4, 5, 6), 0);
	run(rt, PCC_K_Min, &(pcc_attrs){.axes = 2}, 1, BUFS(x), 1, BUFS(r2));
	expect(r2, VALS(1, 4), 0);
	pcc_rt_free(rt);
}

/* SGD: [1,2] - 0.5 [2,-4] = [0, 4].
 * Momentum (lr .1, momentum .9, accum .5, grad 2): accum = .45 + 2 = 2.45,
 * var = 1 - .1 * 2.45 = .755; Nesterov: 1 - (2 * .1 + 2.45 * .9 * .1) =
 * .5795.
 * Adam (lr .1, β1 .9, β2 .999, step 1: powers .9, .999, ε 1e-8, grad 2):
 * m = .2, v = .004, lr_t = .1 sqrt(.001) / .1 = .0316228,
 * var = 1 - .0316228 * .2 / (.0632456 + 1e-8) = .9. */
static void test_optimizers(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *var = ten(rt, 1, DIMS(2), VALS(1, 2));
	pcc_buf *alpha = ten(rt, 0, NULL, VALS(0.5f));
	pcc_buf *delta = ten(rt, 1, DIMS(2), VALS(2, -4));
	pcc_buf *out = ten(rt, 1, DIMS(2), NULL);
	run(rt, PCC_K_ApplyGradientDescent, NULL, 3, BUFS(var, alpha, delta), 1,
	    BUFS(out));
	expect(var, VALS(0, 4), EPS);
	expect(out, VALS(0, 4), EPS);
	for (int nest = 0; nest < 2; nest++) {
		pcc_buf *v = ten(rt, 1, DIMS(1), VALS(1));
		pcc_buf *acc = ten(rt, 1, DIMS(1), VALS(0.5f));
		pcc_buf *lr = ten(rt, 0, NULL, VALS(0.1f));
		pcc_buf *g = ten(rt, 1, DIMS(1), VALS(2));
		pcc_buf *mom = ten(rt, 0, NULL, VALS(0.9f));
		run(rt, PCC_K_ApplyMomentum, &(pcc_attrs){.use_nesterov = nest}, 5,
		    BUFS(v, acc, lr, g, mom), 0, NULL);
		expect(acc, VALS(2.45f), EPS);
		expect(v, VALS(nest ? 0.5795f : 0.755f), EPS);
	}
	pcc_buf *v = ten(rt, 1, DIMS(1), VALS(1));
	pcc_buf *m = ten(rt, 1, DIMS(1), VALS(0)), *s = ten(rt, 1, DIMS(1), VALS(0));
	pcc_buf *hp[6];
	const float hv[6] = {0.9f, 0.999f, 0.1f, 0.9f, 0.999f, 1e-8f};
	for (int i = 0; i < 6; i++)
		hp[i] = ten(rt, 0, NULL, &hv[i]);
	pcc_buf *g = ten(rt, 1, DIMS(1), VALS(2));
	run(rt, PCC_K_ApplyAdam, NULL, 10,
	    BUFS(v, m, s, hp[0], hp[1], hp[2], hp[3], hp[4], hp[5], g), 0, NULL);
	expect(m, VALS(0.2f), EPS);
	expect(s, VALS(0.004f), EPS);
	expect(v, VALS(0.9f), EPS);
	pcc_rt_free(rt);
}

/* ---- initial values ------------------------------------------------------ */

static void test_seed_values(void)
{
	/* Deterministic, in [-1, 1), different for another name or seed. */
	CU_ASSERT_EQUAL(pcc_seed_hash("x", 0, 5), pcc_seed_hash("x", 0, 5));
	CU_ASSERT_NOT_EQUAL(pcc_seed_hash("x", 0, 5), pcc_seed_hash("y", 0, 5));
	CU_ASSERT_NOT_EQUAL(pcc_seed_hash("x", 0, 5), pcc_seed_hash("x", 1, 5));
	CU_ASSERT_NOT_EQUAL(pcc_seed_hash("x", 0, 5), pcc_seed_hash("x", 0, 6));
	double lo = 1, hi = -1, mean = 0;
	for (int i = 0; i < 10000; i++) {
		double u = pcc_seed_uniform("w", 0, (uint64_t)i);
		lo = u < lo ? u : lo;
		hi = u > hi ? u : hi;
		mean += u / 10000;
	}
	CU_ASSERT(lo >= -1 && hi < 1 && lo < -0.99 && hi > 0.99);
	CU_ASSERT(fabs(mean) < 0.05);
}

/* A replica's rows [4, 7) of a [10, 3] input are rows 4..6 of the whole;
 * along batch dimension 1 of a [2, 10] input, columns 4..6. */
static void test_seed_shards(void)
{
	pcc_rt *rt = rt1();
	pcc_buf *whole = ten(rt, 2, DIMS(10, 3), NULL);
	pcc_buf *part = ten(rt, 2, DIMS(3, 3), NULL);
	pcc_buf_init(whole, &(pcc_seed){PCC_INIT_INPUT, "x", -1, 0, 0, 0, NULL, 0}, 7);
	pcc_buf_init(part, &(pcc_seed){PCC_INIT_INPUT, "x", 0, 4, 10, 0, NULL, 0}, 7);
	float *w = get(whole), *p = get(part);
	CU_ASSERT(memcmp(p, w + 12, 9 * sizeof(float)) == 0);
	free(w);
	free(p);
	pcc_buf *wt = ten(rt, 2, DIMS(2, 10), NULL);
	pcc_buf *pt = ten(rt, 2, DIMS(2, 3), NULL);
	pcc_buf_init(wt, &(pcc_seed){PCC_INIT_INPUT, "x", -1, 0, 0, 0, NULL, 0}, 7);
	pcc_buf_init(pt, &(pcc_seed){PCC_INIT_INPUT, "x", 1, 4, 10, 0, NULL, 0}, 7);
	w = get(wt);
	p = get(pt);
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 3; c++)
			CU_ASSERT_EQUAL(p[r * 3 + c], w[r * 10 + 4 + c]);
	free(w);
	free(p);
	pcc_rt_free(rt);
}

static void test_seed_kinds(void)
{
	pcc_rt *rt = rt1();
	/* Labels: class indices in [0, 3), all three used over 60 rows. */
	pcc_buf *lab = pcc_buf_new(rt, 0, "labels", PCC_I64, 1, DIMS(60));
	pcc_buf_init(lab, &(pcc_seed){PCC_INIT_LABELS, "labels", -1, 0, 0, 3, NULL, 0}, 0);
	int64_t l[60];
	pcc_buf_read(lab, l);
	int seen = 0;
	for (int i = 0; i < 60; i++) {
		CU_ASSERT(l[i] >= 0 && l[i] < 3);
		seen |= 1 << (l[i] & 3);
	}
	CU_ASSERT_EQUAL(seen, 7);
	/* Glorot: |w| <= sqrt(6 / (6 + 5)) for a [6, 5] matrix; for a
	 * [3, 3, 2, 4] filter fans 18 and 36: sqrt(6 / 54) = 1/3. */
	pcc_buf *w = ten(rt, 2, DIMS(6, 5), NULL);
	pcc_buf_init(w, &(pcc_seed){PCC_INIT_PARAM, "w1", -1, 0, 0, 0, NULL, 0}, 0);
	float *v = get(w), big = 0;
	for (int i = 0; i < 30; i++)
		big = fabsf(v[i]) > big ? fabsf(v[i]) : big;
	CU_ASSERT(big <= sqrtf(6.0f / 11) && big > 0.5f * sqrtf(6.0f / 11));
	free(v);
	pcc_buf *k = ten(rt, 4, DIMS(3, 3, 2, 4), NULL);
	pcc_buf_init(k, &(pcc_seed){PCC_INIT_PARAM, "k", -1, 0, 0, 0, NULL, 0}, 0);
	v = get(k);
	big = 0;
	for (int i = 0; i < 72; i++)
		big = fabsf(v[i]) > big ? fabsf(v[i]) : big;
	CU_ASSERT(big <= 1.0f / 3 + 1e-6f && big > 0.25f);
	free(v);
	/* A constant's one value fills it; zeros are zeros. */
	pcc_buf *c = ten(rt, 1, DIMS(3), NULL);
	pcc_buf_init(c, &(pcc_seed){PCC_INIT_CONST, "c", -1, 0, 0, 0,
				    (const double[]){2.5}, 1}, 0);
	expect(c, VALS(2.5f, 2.5f, 2.5f), 0);
	pcc_buf_init(c, &(pcc_seed){PCC_INIT_ZEROS, "c", -1, 0, 0, 0, NULL, 0}, 0);
	expect(c, VALS(0, 0, 0), 0);
	pcc_rt_free(rt);
}

void suite_rt_kernels(void)
{
	CU_pSuite s = CU_add_suite("rt_kernels", NULL, NULL);
	CU_add_test(s, "MatMul and its transposes", test_matmul);
	CU_add_test(s, "BatchMatMul(V2): adj_x, adj_y, broadcast batch dims", test_batch_matmul);
	CU_add_test(s, "Erf, comparisons to bool, Cast from bool", test_erf_compare);
	CU_add_test(s, "Floor", test_floor);
	CU_add_test(s, "Pow: a scalar exponent, one per element", test_pow);
	CU_add_test(s, "Equal, Less on i64 and i32 ids, broadcasting", test_int_compare);
	CU_add_test(s, "Mul, AddV2, Sub, Maximum, Minimum on i32 and i64", test_int_arith);
	CU_add_test(s, "RandomUniform: range, keys, rate", test_random_uniform);
	CU_add_test(s, "Conv2D: VALID, SAME, strides, dilations, EXPLICIT", test_conv2d);
	CU_add_test(s, "Conv2D: channels in NHWC and NCHW", test_conv2d_channels);
	CU_add_test(s, "Conv2D: grouped, and its backprops", test_conv2d_groups);
	CU_add_test(s, "Conv2D backprops", test_conv2d_backprops);
	CU_add_test(s, "DepthwiseConv2dNative and its backprops", test_depthwise);
	CU_add_test(s, "FusedBatchNormV3 and its gradient, NHWC and NCHW", test_batchnorm);
	CU_add_test(s, "BiasAdd and BiasAddGrad, NHWC and NCHW", test_bias);
	CU_add_test(s, "element-wise ops and their gradients", test_elementwise);
	CU_add_test(s, "broadcasting, AddN", test_broadcast);
	CU_add_test(s, "MaxPool, MaxPoolGrad, ties", test_maxpool);
	CU_add_test(s, "pooling with SAME padding", test_pool_same);
	CU_add_test(s, "softmax and cross-entropy", test_softmax_xent);
	CU_add_test(s, "Split, SplitV, ConcatV2, Reshape", test_split_concat);
	CU_add_test(s, "Slice", test_slice);
	CU_add_test(s, "GatherV2, i32 and i64 indices", test_gather);
	CU_add_test(s, "UnsortedSegmentSum", test_segment_sum);
	CU_add_test(s, "BroadcastTo", test_broadcast_to);
	CU_add_test(s, "Transpose", test_transpose);
	CU_add_test(s, "reductions", test_reduce);
	CU_add_test(s, "SGD, momentum, Adam", test_optimizers);
	CU_add_test(s, "seeded values", test_seed_values);
	CU_add_test(s, "seeded shards are rows of the whole", test_seed_shards);
	CU_add_test(s, "labels, Glorot, constants, zeros", test_seed_kinds);
}
