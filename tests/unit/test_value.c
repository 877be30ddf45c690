/* test_value.c — units and the canonical text of values. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static char *show(const Value *v)
{
	static char buf[256]; /* test-only scratch */
	FILE *f = fmemopen(buf, sizeof buf, "w");
	val_print(f, v);
	fclose(f);
	return buf;
}

static char *qty(double x, Unit u)
{
	Value v = {.kind = V_QTY, .unit = u, .f = x};
	return show(&v);
}

static void test_unit_parse(void)
{
	Unit u;
	double s;
	CU_ASSERT_TRUE(unit_parse("GiB", 3, &u, &s));
	CU_ASSERT_EQUAL(u, UNIT_BYTES);
	CU_ASSERT_EQUAL(s, 1073741824.0);
	CU_ASSERT_TRUE(unit_parse("Gbps", 4, &u, &s));
	CU_ASSERT_EQUAL(u, UNIT_BYTE_RATE);
	CU_ASSERT_EQUAL(s, 125e6);
	/* Gb/s is bits too (a 10 Gb/s NIC moves 1.25 GB/s); GB/s bytes */
	CU_ASSERT_TRUE(unit_parse("Gb/s", 4, &u, &s));
	CU_ASSERT_EQUAL(u, UNIT_BYTE_RATE);
	CU_ASSERT_EQUAL(s, 125e6);
	CU_ASSERT_TRUE(unit_parse("GB/s", 4, &u, &s));
	CU_ASSERT_EQUAL(s, 1e9);
	CU_ASSERT_TRUE(unit_parse("Tbps", 4, &u, &s));
	CU_ASSERT_EQUAL(s, 125e9);
	CU_ASSERT_TRUE(unit_parse("us", 2, &u, &s));
	CU_ASSERT_EQUAL(u, UNIT_SECONDS);
	CU_ASSERT_TRUE(unit_parse("TFLOPS", 6, &u, &s));
	CU_ASSERT_EQUAL(s, 1e12);
	CU_ASSERT_FALSE(unit_parse("parsecs", 7, &u, &s));
	CU_ASSERT_FALSE(unit_parse("gb", 2, &u, &s)); /* case matters */
}

static void test_canonical_units(void)
{
	CU_ASSERT_STRING_EQUAL(qty(12e-6, UNIT_SECONDS), "12us");
	CU_ASSERT_STRING_EQUAL(qty(1.5e-3, UNIT_SECONDS), "1.5ms");
	CU_ASSERT_STRING_EQUAL(qty(2, UNIT_SECONDS), "2s");
	CU_ASSERT_STRING_EQUAL(qty(0, UNIT_SECONDS), "0s");
	CU_ASSERT_STRING_EQUAL(qty(34359738368.0, UNIT_BYTES), "32GiB");
	CU_ASSERT_STRING_EQUAL(qty(16e9, UNIT_BYTES), "16GB");
	CU_ASSERT_STRING_EQUAL(qty(1000, UNIT_BYTES), "1KB");
	CU_ASSERT_STRING_EQUAL(qty(1023, UNIT_BYTES), "1023B");
	CU_ASSERT_STRING_EQUAL(qty(12.5e9, UNIT_BYTE_RATE), "12.5GB/s");
	CU_ASSERT_STRING_EQUAL(qty(100e9 / 8, UNIT_BYTE_RATE), "12.5GB/s");
	CU_ASSERT_STRING_EQUAL(qty(15.7e12, UNIT_FLOP_RATE), "15.7TFLOPS");
	/* the printed text reads back to a value that prints the same */
	double xs[] = {1.2e-5, 3.3e-7, 0.1, 7e-3, 123456789e-9};
	for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		char first[64];
		strcpy(first, qty(xs[i], UNIT_SECONDS));
		char *end;
		double m = strtod(first, &end);
		Unit u;
		double sc;
		CU_ASSERT_TRUE_FATAL(unit_parse(end, strlen(end), &u, &sc));
		CU_ASSERT_STRING_EQUAL(qty(m * sc, UNIT_SECONDS), first);
	}
}

static void test_values(void)
{
	Arena *a = arena_new();
	CU_ASSERT_STRING_EQUAL(show(val_int(a, -64)), "-64");
	CU_ASSERT_STRING_EQUAL(show(val_float(a, 0.25)), "0.25");
	CU_ASSERT_STRING_EQUAL(show(val_float(a, 2)), "2.0");
	CU_ASSERT_STRING_EQUAL(show(val_float(a, 1e-05)), "1e-05");
	CU_ASSERT_STRING_EQUAL(show(val_float(a, 0.1)), "0.1");
	CU_ASSERT_STRING_EQUAL(show(val_str(a, "a\"b\\c\nd")), "\"a\\\"b\\\\c\\nd\"");
	CU_ASSERT_STRING_EQUAL(show(val_ident(a, "SAME")), "SAME");
	CU_ASSERT_STRING_EQUAL(show(val_bool(a, false)), "false");
	Value *l = val_list(a, 3);
	l->list.items[0] = val_int(a, 1);
	l->list.items[1] = val_qty(a, 2e-3, UNIT_SECONDS);
	l->list.items[2] = val_list(a, 0);
	CU_ASSERT_STRING_EQUAL(show(l), "[1, 2ms, []]");
	Value *d = val_dict(a, 2);
	d->dict.items[0] = (Attr){"V100", val_qty(a, 1.2e-3, UNIT_SECONDS)};
	d->dict.items[1] = (Attr){"1080Ti", val_qty(a, 3.1e-3, UNIT_SECONDS)};
	CU_ASSERT_STRING_EQUAL(show(d), "{V100 = 1.2ms, \"1080Ti\" = 3.1ms}");
	Value *t = val_type(a, type_make(a, DT_F32, 2, (int64_t[]){3, 3}));
	CU_ASSERT_STRING_EQUAL(show(t), "f32[3,3]");
	double x;
	CU_ASSERT_TRUE(val_number(val_int(a, 7), &x));
	CU_ASSERT_EQUAL(x, 7);
	CU_ASSERT_FALSE(val_number(val_str(a, "7"), &x));
	CU_ASSERT_TRUE(is_ident("m0/gpu0"));
	CU_ASSERT_FALSE(is_ident("1080Ti"));
	CU_ASSERT_FALSE(is_ident("true"));
	arena_free(a);
}

void suite_value(void)
{
	CU_pSuite s = CU_add_suite("value", NULL, NULL);
	CU_add_test(s, "unit parsing", test_unit_parse);
	CU_add_test(s, "canonical units", test_canonical_units);
	CU_add_test(s, "values", test_values);
}
