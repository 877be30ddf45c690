/* fuzz_pbtxt.c — libFuzzer target: arbitrary bytes into the GraphDef
 * text-format importer (tf_parse_pbtxt: pbtxt.c's reader, tfgraph.c's
 * builder and shape inference).  It must never crash, hang or leak;
 * errors go to /dev/null.  A graph that imports goes through
 * tf_roundtrip.h.  Seeds: tests/fuzz/corpus-pbtxt/. */
#include <stddef.h>
#include <stdint.h>

#include "tf_roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	Diag d;
	diag_init(&d, null, "fuzz.pbtxt", (const char *)data, size);
	TfImportOptions o = {.batch = 3};
	Graph *g = tf_parse_pbtxt("fuzz.pbtxt", (const char *)data, size, &o, &d);
	if (!g)
		return 0;
	tf_roundtrip(g, null);
	graph_free(g);
	return 0;
}
