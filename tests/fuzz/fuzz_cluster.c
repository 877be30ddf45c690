/* fuzz_cluster.c — libFuzzer target: arbitrary bytes into the cluster YAML
 * reader (cluster_parse_yaml).  It must never crash, hang or leak; the
 * errors themselves go to /dev/null.  Seeds: tests/fuzz/corpus-cluster/. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"

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
	if (c) {
		/* a cluster that loads must print, clone and answer lookups */
		cluster_print(null, c);
		Cluster *k = cluster_clone(a, c);
		double bw, lat;
		for (int i = 0; i < k->ndevs && i < 64; i++) {
			cluster_link(k, 0, i, &bw, &lat);
			if (cluster_find_device(k, k->devs[i].name) != i)
				__builtin_trap();
		}
	}
	arena_free(a);
	fclose(null);
	return 0;
}
