/* fuzz_tfjson.c — libFuzzer target: arbitrary bytes into the TF.js
 * model.json / GraphDef-JSON importer (tf_parse_json: tfjson.c with
 * json-c, tfgraph.c's builder).  The file is named in a directory that
 * does not exist, so weight shards are never found (a warning) and the
 * target reads no files.  It must never crash, hang or leak.  A graph
 * that imports goes through tf_roundtrip.h.  Seeds:
 * tests/fuzz/corpus-tfjson/. */
#include <stddef.h>
#include <stdint.h>

#include "tf_roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	static const char file[] = "/nonexistent-pcc-fuzz/model.json";
	Diag d;
	diag_init(&d, null, file, (const char *)data, size);
	TfImportOptions o = {.batch = 2};
	Graph *g = tf_parse_json(file, (const char *)data, size, &o, &d);
	if (!g)
		return 0;
	tf_roundtrip(g, null);
	graph_free(g);
	return 0;
}
