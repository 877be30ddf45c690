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

#include "gir_target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	Diag d;
	Graph *g = parse_input(data, size, null, &d);
	if (!g)
		goto out;
	round_trip(g, null);
	if (!g->cluster)
		g->cluster = cluster_default(g->arena);
	if (graph_infer_types(g, &d) || graph_verify(g, &d))
		goto out;
	round_trip(g, null);
	RunOptions ro = {.verify_each = true};
	CostModel cm = {g, g->cluster, NULL, NULL, 0};
	if (run_pipeline(g, "simplify,annotate", &ro, &cm, &d) == EXIT_OK) {
		cost_print_csv(null, &cm);
		round_trip(g, null);
	}
out:
	graph_free(g);
	fclose(null);
	return 0;
}
