/* test_passmgr.c — the pass table, pipeline strings and pass options. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "passes/passes.h"

static char *show(const Pipeline *p, char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	pipeline_print(f, p);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static void test_table(void)
{
	int n;
	const PassInfo *t = pass_table(&n);
	CU_ASSERT_TRUE(n >= 2);
	for (int i = 0; i < n; i++) {
		CU_ASSERT_PTR_NOT_NULL(t[i].run);
		CU_ASSERT_TRUE(strlen(t[i].desc) > 10);
		CU_ASSERT_PTR_EQUAL(pass_find(t[i].name), &t[i]);
		for (int j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(t[i].name, t[j].name);
	}
	CU_ASSERT_PTR_NULL(pass_find("nosuch"));
	/* every named pipeline parses */
	const char *lv[] = {"O0", "O1", "O2"};
	for (int i = 0; i < 3; i++) {
		Pipeline p;
		char err[256];
		CU_ASSERT_PTR_NOT_NULL_FATAL(pipeline_named(lv[i]));
		CU_ASSERT_TRUE(pipeline_parse(pipeline_named(lv[i]), &p, err, sizeof err));
		pipeline_free(&p);
	}
	CU_ASSERT_PTR_NULL(pipeline_named("O3"));
}

static void test_parse(void)
{
	Pipeline p;
	char err[256], buf[256];
	CU_ASSERT_TRUE_FATAL(pipeline_parse(" simplify , annotate ", &p, err, sizeof err));
	CU_ASSERT_EQUAL(p.n, 2);
	CU_ASSERT_STRING_EQUAL(p.steps[0].pass->name, "simplify");
	CU_ASSERT_STRING_EQUAL(show(&p, buf, sizeof buf), "simplify,annotate");
	pipeline_free(&p);

	CU_ASSERT_TRUE(pipeline_parse("", &p, err, sizeof err));
	CU_ASSERT_EQUAL(p.n, 0);
	pipeline_free(&p);

	CU_ASSERT_FALSE(pipeline_parse("simplify,,annotate", &p, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "empty pass name"));
	CU_ASSERT_FALSE(pipeline_parse("simplify,bogus", &p, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown pass 'bogus'"));
	CU_ASSERT_FALSE(pipeline_parse("simplify<range=3>", &p, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "has no option 'range'"));
	CU_ASSERT_FALSE(pipeline_parse("simplify<", &p, err, sizeof err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "missing '>'"));
}

void suite_passmgr(void)
{
	CU_pSuite s = CU_add_suite("passmgr", NULL, NULL);
	CU_add_test(s, "pass table", test_table);
	CU_add_test(s, "pipeline strings", test_parse);
}
