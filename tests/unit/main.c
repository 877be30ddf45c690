/* main.c — runs every CUnit suite (tests/unit/test_*.c each defines
 * suite_NAME; the Makefile lists them in suites.h). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#define SUITE(n) void suite_##n(void);
#include "suites.h"
#undef SUITE

int main(int argc, char **argv)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
#define SUITE(n) suite_##n();
#include "suites.h"
#undef SUITE
	CU_basic_set_mode(argc > 1 && strcmp(argv[1], "-v") == 0
				  ? CU_BRM_VERBOSE : CU_BRM_NORMAL);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures() +
			  CU_get_number_of_tests_failed();
	unsigned run = CU_get_number_of_tests_run();
	printf("\nunit: %u passed, %u failed\n",
	       run - CU_get_number_of_tests_failed(),
	       CU_get_number_of_tests_failed());
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
