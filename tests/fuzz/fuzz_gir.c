/* fuzz_gir.c — libFuzzer target: arbitrary bytes into the gir parser
 * (gir_parse).  It must never crash, hang or leak; errors go to /dev/null.
 * A graph that parses is also type-inferred, verified and printed, and
 * the printed text must parse again.  Seeds: tests/fuzz/corpus-gir/. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "frontend/frontend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	Diag d;
	diag_init(&d, null, "fuzz.gir", (const char *)data, size);
	Graph *g = gir_parse("fuzz.gir", (const char *)data, size, &d);
	if (!g)
		return 0;
	/* the printer's text of a parsed graph must read back */
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (f) {
		gir_print(f, g);
		fclose(f);
		Diag d2;
		diag_init(&d2, null, "print.gir", text, n);
		Graph *h = gir_parse("print.gir", text, n, &d2);
		if (!h)
			__builtin_trap();
		graph_free(h);
		free(text);
	}
	if (graph_infer_types(g, &d) == 0 && graph_verify(g, &d) == 0)
		gir_print(null, g);
	graph_free(g);
	return 0;
}
