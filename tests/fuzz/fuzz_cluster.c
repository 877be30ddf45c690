/* fuzz_cluster.c — libFuzzer target: arbitrary bytes into the YAML
 * readers, the cluster reader (cluster_parse_yaml) and the profile reader
 * (profile_parse), which share libyaml and the unit parser.  They must
 * never crash, hang, leak or trip UBSan; errors go to /dev/null.
 * Oracles: a cluster that loads answers its own device lookups, and its
 * gir 'cluster' block parses back to the same bytes.
 * Seeds: tests/fuzz/corpus-cluster/; dictionary: tests/fuzz/cluster.dict. */
#include <stddef.h>
#include <stdint.h>

#include "roundtrip.h"

static void check_cluster(Cluster *c, FILE *null)
{
	double bw, lat;
	for (int i = 0; i < c->ndevs && i < 64; i++) {
		cluster_link(c, 0, i, &bw, &lat);
		if (!(bw > 0) || !(lat >= 0))
			__builtin_trap();
		if (cluster_find_device(c, c->devs[i].name) != i)
			__builtin_trap();
	}
	/* attached to a graph, the cluster prints as gir and reads back */
	Graph *g = graph_new("g");
	g->cluster = cluster_clone(g->arena, c);
	round_trip(g, null);
	graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	Arena *a = arena_new();
	Diag d;
	diag_init(&d, null, "fuzz.yaml", (const char *)data, size);
	Cluster *c = cluster_parse_yaml(a, "fuzz.yaml", (const char *)data,
					size, &d);
	if (c)
		check_cluster(c, null);
	diag_init(&d, null, "fuzz.yaml", (const char *)data, size);
	profile_parse(a, "fuzz.yaml", (const char *)data, size, &d);
	arena_free(a);
	fclose(null);
	return 0;
}
