/* test_suggest.c — "did you mean" (ir/diag.c suggest_*): edit distances
 * worked out by hand, the length-dependent limit, prefixes, key lists. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "ir/ir.h"

static const char *best(const char *word, const char *const *cands, int n)
{
	static Suggest s;   /* test-only scratch */
	suggest_init(&s, word);
	for (int i = 0; i < n; i++)
		suggest_add(&s, cands[i]);
	return suggest_best(&s);
}

static void test_suggest_distance(void)
{
	static const char *const passes[] = {"simplify", "annotate", "fuse",
					     "place", "split", "comm", "order"};
	/* one deletion */
	CU_ASSERT_STRING_EQUAL(best("simplfy", passes, 7), "simplify");
	/* one swap of neighbours counts 1 (odrer -> order) */
	CU_ASSERT_STRING_EQUAL(best("odrer", passes, 7), "order");
	/* one substitution in a 4-letter word: limit max(1, 4/3) = 1 */
	CU_ASSERT_STRING_EQUAL(best("fuze", passes, 7), "fuse");
	/* two edits in a 4-letter word: over the limit */
	CU_ASSERT_PTR_NULL(best("fzze", passes, 7));
	/* nothing near */
	CU_ASSERT_PTR_NULL(best("zzzzzz", passes, 7));
	/* the nearest wins: "plase" is 1 from "place", 2 from "split" */
	CU_ASSERT_STRING_EQUAL(best("plase", passes, 7), "place");
	/* an exact match is no suggestion */
	CU_ASSERT_PTR_NULL(best("fuse", passes, 7));
	/* one letter for another keeps nothing of the word: no hint; one
	 * of two letters does ("T5": "T4") */
	static const char *const types[] = {"A", "T4", "x"};
	CU_ASSERT_PTR_NULL(best("B", types, 3));
	CU_ASSERT_STRING_EQUAL(best("T5", types, 3), "T4");
	CU_ASSERT_STRING_EQUAL(best("xy", types, 3), "x");
	/* a difference of case alone is nearer than any one edit, however
	 * many letters it changes ('mygpu': 'MyGPU'), and wins over an
	 * earlier candidate one edit away ('a100': 'A100', not 'P100') */
	static const char *const gpus[] = {"P100", "A100", "MyGPU"};
	CU_ASSERT_STRING_EQUAL(best("a100", gpus, 3), "A100");
	CU_ASSERT_STRING_EQUAL(best("mygpu", gpus, 3), "MyGPU");
	/* an empty word suggests nothing */
	CU_ASSERT_PTR_NULL(best("", passes, 7));
}

static void test_suggest_prefix(void)
{
	static const char *const be[] = {"gir", "costs", "trace", "gantt-svg",
					 "dot", "summary"};
	/* "gant" is 5 edits from "gantt-svg" but a prefix of 3+ letters */
	CU_ASSERT_STRING_EQUAL(best("gant", be, 6), "gantt-svg");
	CU_ASSERT_STRING_EQUAL(best("gant-svg", be, 6), "gantt-svg");
	CU_ASSERT_STRING_EQUAL(best("summ", be, 6), "summary");
	/* a two-letter prefix is too little */
	CU_ASSERT_PTR_NULL(best("su", be, 6));
}

static void test_suggest_keys(void)
{
	Suggest s;
	suggest_init(&s, "rnage");
	suggest_add_keys(&s, "range=200,mem=0.25,flag");
	CU_ASSERT_STRING_EQUAL(suggest_best(&s), "range");
	CU_ASSERT_STRING_EQUAL(suggest_hint(&s), "; did you mean 'range'?");
	suggest_init(&s, "flga");
	suggest_add_keys(&s, "range=200,mem=0.25,flag");
	CU_ASSERT_STRING_EQUAL(suggest_best(&s), "flag");
	suggest_init(&s, "xyzzy");
	suggest_add_keys(&s, "range=200,mem=0.25");
	CU_ASSERT_STRING_EQUAL(suggest_hint(&s), "");
	/* words of 64 bytes or more are not compared (no overflow) */
	char longw[100];
	memset(longw, 'a', sizeof longw - 1);
	longw[sizeof longw - 1] = 0;
	suggest_init(&s, longw);
	suggest_add(&s, "aaaa");
	CU_ASSERT_PTR_NULL(suggest_best(&s));
}

void suite_suggest(void)
{
	CU_pSuite s = CU_add_suite("suggest", NULL, NULL);
	CU_add_test(s, "edit distance and limit", test_suggest_distance);
	CU_add_test(s, "prefixes", test_suggest_prefix);
	CU_add_test(s, "option key lists", test_suggest_keys);
}
