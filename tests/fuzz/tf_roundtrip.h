/* tf_roundtrip.h — the check both TensorFlow-importer fuzz targets make
 * after an import succeeds: the graph infers and verifies, or fails with
 * a reported error; a graph that verifies prints as gir that parses back,
 * verifies, and prints to the same bytes (an import is a valid dump).
 * Any other outcome traps. */
#ifndef PCC_FUZZ_TF_ROUNDTRIP_H
#define PCC_FUZZ_TF_ROUNDTRIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

static char *print_graph(const Graph *g, size_t *n)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, n);
	if (!f)
		return NULL;
	gir_print(f, g);
	fclose(f);
	return text;
}

static void tf_roundtrip(Graph *g, FILE *null)
{
	Diag d;
	diag_init(&d, null, "fuzz", NULL, 0);
	int before = d.nerrors;
	/* device pins against the built-in cluster, as the driver does */
	g->cluster = cluster_default(g->arena);
	if (tf_pin_devices(g, &d) || graph_infer_types(g, &d) || graph_verify(g, &d)) {
		if (d.nerrors == before)
			__builtin_trap(); /* failed without saying why */
		return;
	}
	size_t n1 = 0, n2 = 0;
	char *t1 = print_graph(g, &n1);
	if (!t1)
		return;
	Diag d2;
	diag_init(&d2, null, "print.gir", t1, n1);
	Graph *h = gir_parse("print.gir", t1, n1, &d2);
	if (!h || graph_infer_types(h, &d2) || graph_verify(h, &d2))
		__builtin_trap(); /* the import does not read back */
	char *t2 = print_graph(h, &n2);
	if (t2 && (n1 != n2 || memcmp(t1, t2, n1) != 0))
		__builtin_trap(); /* print -> parse -> print differs */
	free(t2);
	graph_free(h);
	free(t1);
}

#endif
