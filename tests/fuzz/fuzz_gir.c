/* fuzz_gir.c — libFuzzer target: arbitrary bytes into the gir parser.
 * It must never crash, hang, leak or trip UBSan; errors go to /dev/null.
 * Oracles, each a trap when it fails:
 *   - a graph that parses prints canonical text that parses again and
 *     prints to the same bytes (print -> parse -> print is byte-identical);
 *   - after type inference and verification, the same holds;
 *   - a verified graph survives simplify,annotate under --verify-each,
 *     the cost table, and the round trip once more.
 * Seeds: tests/fuzz/corpus-gir/; dictionary: tests/fuzz/gir.dict. */
#include <stddef.h>
#include <stdint.h>

#include "passes/passes.h"
#include "roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	Diag d;
	diag_init(&d, null, "fuzz.gir", (const char *)data, size);
	Graph *g = gir_parse("fuzz.gir", (const char *)data, size, &d);
	if (!g)
		goto out;
	round_trip(g, null);
	if (!g->cluster)
		g->cluster = cluster_default(g->arena);
	if (graph_infer_types(g, &d) || graph_verify(g, &d))
		goto out;
	round_trip(g, null);
	Pipeline p;
	char err[256];
	if (!pipeline_parse("simplify,annotate", &p, err, sizeof err))
		abort();
	RunOptions ro = {.verify_each = true};
	CostModel cm = {g, g->cluster, NULL, NULL, 0};
	int rc = pipeline_run(&p, g, &cm, &d, &ro);
	pipeline_free(&p);
	if (rc == EXIT_INTERNAL)
		__builtin_trap();
	if (rc == EXIT_OK) {
		cost_print_csv(null, &cm);
		round_trip(g, null);
	}
out:
	graph_free(g);
	fclose(null);
	return 0;
}
