/* roundtrip.h — the oracle both fuzz targets share: the printed text of a
 * graph parses again and prints to the same bytes. */
#ifndef PCC_FUZZ_ROUNDTRIP_H
#define PCC_FUZZ_ROUNDTRIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

static char *print_graph(const Graph *g, size_t *n)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, n);
	if (!f)
		abort();
	gir_print(f, g);
	fclose(f);
	return text;
}

/* Traps unless print(g) parses and prints back byte for byte. */
static void round_trip(const Graph *g, FILE *null)
{
	size_t n1 = 0, n2 = 0;
	char *t1 = print_graph(g, &n1);
	Diag d;
	diag_init(&d, null, "print.gir", t1, n1);
	Graph *h = gir_parse("print.gir", t1, n1, &d);
	if (!h)
		__builtin_trap();
	char *t2 = print_graph(h, &n2);
	if (n1 != n2 || memcmp(t1, t2, n1) != 0)
		__builtin_trap();
	graph_free(h);
	free(t1);
	free(t2);
}

#endif
