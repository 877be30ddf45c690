/* test_pipeline.c — PipeDream-flush's 1F1B schedule (order.c,
 * pipeline_1f1b), worked out by hand, and the pipeline placer's estimate
 * of a data-parallel stage against the simulation of its plan.  The
 * placer and the 1F1B order of whole plans: tests/golden/pipeline-*.gir;
 * training equality: tests/ctests/plans.txt. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

/* S = 3 stages, m = 4 micro-batches, forward 1, backward 2.  Sequences:
 *   s0 (2 warm-up forwards): F0 F1 F2 B0 F3 B1 B2 B3
 *   s1 (1):                  F0 F1 B0 F2 B1 F3 B2 B3
 *   s2 (0):                  F0 B0 F1 B1 F2 B2 F3 B3
 * Each unit starts when its stage is free and its input is done (F on
 * s-1, B on s+1, the last stage's B after its own F):
 *   s0: F0 0, F1 1, F2 2, B0 7 (s1's B0 ends 7), F3 9, B1 10, B2 13, B3 16
 *   s1: F0 1, F1 2, B0 5, F2 7, B1 8, F3 10, B2 11, B3 14
 *   s2: F0 2, B0 3, F1 5, B1 6, F2 8, B2 9, F3 11, B3 12
 * The last backward ends at 18 = (m + S - 1)(1 + 2), 1F1B's bubble. */
static void test_1f1b(void)
{
	double fs[12], bs[12];
	pipeline_1f1b(3, 4, 1, 2, fs, bs);
	static const double wf[12] = {0, 1, 2, 9, 1, 2, 7, 10, 2, 5, 8, 11};
	static const double wb[12] = {7, 10, 13, 16, 5, 8, 11, 14, 3, 6, 9, 12};
	for (int i = 0; i < 12; i++) {
		CU_ASSERT_DOUBLE_EQUAL(fs[i], wf[i], 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(bs[i], wb[i], 1e-12);
	}
}

/* Fewer micro-batches than stages (m = 1): no steady state; the one
 * micro-batch goes forward through s0, s1, s2 (0, 1, 2) and back (s2 at
 * 3, s1 at 5, s0 at 7). */
static void test_1f1b_short(void)
{
	double fs[3], bs[3];
	pipeline_1f1b(3, 1, 1, 2, fs, bs);
	CU_ASSERT_DOUBLE_EQUAL(fs[0], 0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(fs[1], 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(fs[2], 2, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(bs[2], 3, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(bs[1], 5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(bs[0], 7, 1e-12);
}

/* One stage is plain gradient accumulation: F0 B0 F1 B1 ... */
static void test_1f1b_one_stage(void)
{
	double fs[3], bs[3];
	pipeline_1f1b(1, 3, 1, 2, fs, bs);
	for (int j = 0; j < 3; j++) {
		CU_ASSERT_DOUBLE_EQUAL(fs[j], 3 * j, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(bs[j], 3 * j + 1, 1e-12);
	}
}

/* The placer's report (-v) of its judged plans of pipeline p on problem
 * text: for the first line naming a data-parallel stage, its estimate's
 * error against the simulation of the plan, in percent (NAN: none). */
static double dp_stage_error(const char *text, const char *p)
{
	char *out = tu_report(text, p);
	double e = NAN, est, sim;
	const char *key = "(data-parallel stages): estimated ";
	const char *q = strstr(out, key);
	if (q && sscanf(q + strlen(key), "%lf s, %lf s", &est, &sim) == 2 && sim > 0)
		e = 100 * (est - sim) / sim;
	free(out);
	return e;
}

/* One data-parallel stage (stages=1, micro=1: data parallelism within a
 * machine) on random problems of batch 512 with a machine of 2 or 3
 * GPUs: the estimate (the stage's work over its devices, then what its
 * chain of gradient AllReduces and the updates that wait for them add
 * after the backward pass) is within 15 % of the simulation, 6 % on
 * average.  Gathering the gradients on the stage's first device and
 * counting the whole exchange after the backward, as the placer did
 * before, was 22 % off on average and up to 49 %; the order pass's list
 * schedule, which may compute a large gradient (and start its
 * AllReduce) before the last layer's, is what is left (now 4.8 % on
 * average, up to 13.6 %). */
static void test_dp_stage_estimate(void)
{
	static char buf[16384];
	int n = 0;
	double worst = 0, sum = 0;
	for (unsigned seed = 1; seed <= 40; seed++) {
		tu_random_problem(seed, buf, sizeof buf, 16e9, 512, 8);
		if (!strstr(buf, "count = 2") && !strstr(buf, "count = 3"))
			continue;
		double e = dp_stage_error(buf, "simplify,annotate,"
					  "place<algo=pipeline,stages=1,micro=1>,comm,order");
		if (isnan(e))
			continue;
		n++;
		worst = fmax(worst, fabs(e));
		sum += fabs(e);
		CU_ASSERT_TRUE(fabs(e) <= 15);
		if (fabs(e) > 15)
			fprintf(stderr, "seed %u: data-parallel stage estimate %+.1f%%\n",
				seed, e);
	}
	CU_ASSERT_TRUE(n >= 10);
	CU_ASSERT_TRUE(n > 0 && sum / n <= 6);
	CU_ASSERT_TRUE(worst > 0);
}

void suite_pipeline(void)
{
	CU_pSuite s = CU_add_suite("pipeline", NULL, NULL);
	CU_add_test(s, "1F1B, 3 stages, 4 micro-batches", test_1f1b);
	CU_add_test(s, "1F1B, fewer micro-batches than stages", test_1f1b_short);
	CU_add_test(s, "1F1B, one stage", test_1f1b_one_stage);
	CU_add_test(s, "a data-parallel stage's estimate tracks the simulator",
		    test_dp_stage_estimate);
}
