/* gir_target.h — what the two gir fuzz targets (fuzz_gir.c,
 * fuzz_pipeline.c) share besides the round trip: the input parsed as
 * gir, and a pipeline run whose internal error is a trap. */
#ifndef PCC_FUZZ_GIR_TARGET_H
#define PCC_FUZZ_GIR_TARGET_H

#include <stdint.h>

#include "passes/passes.h"
#include "roundtrip.h"

/* The fuzzer's bytes as gir, errors to null; NULL when they do not parse. */
static Graph *parse_input(const uint8_t *data, size_t size, FILE *null,
			  Diag *d)
{
	diag_init(d, null, "fuzz.gir", (const char *)data, size);
	return gir_parse("fuzz.gir", (const char *)data, size, d);
}

/* Runs pipeline str over g; traps on an internal error (a pass failed
 * or left IR the verifier refuses), else returns its exit status. */
static int run_pipeline(Graph *g, const char *str, const RunOptions *ro,
			CostModel *cm, Diag *d)
{
	Pipeline p;
	char err[256];
	if (!pipeline_parse(str, &p, err, sizeof err))
		abort();
	int rc = pipeline_run(&p, g, cm, d, ro);
	pipeline_free(&p);
	if (rc == EXIT_INTERNAL)
		__builtin_trap();
	return rc;
}

#endif
