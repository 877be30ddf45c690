/* frontend.h — readers of pcc's inputs: gir (flex/bison) and cluster
 * YAML (libyaml; declared in ir/ir.h beside the cluster builder). */
#ifndef PCC_FRONTEND_H
#define PCC_FRONTEND_H

#include "../ir/ir.h"

/* ---- gir.y / gir.l / parse.c ------------------------------------------- */
/* Parses gir text.  file names the input in diagnostics.  Resolves every
 * input reference (ops may appear in any order).  On error, reports every
 * error found (up to d->max_errors) and returns NULL.  The returned graph
 * records each op's source location and whether ': types' was given; it is
 * not yet type-inferred or verified (see graph_infer_types). */
Graph *gir_parse(const char *file, const char *src, size_t len, Diag *d);
/* Reads and parses a file ("-" = stdin); d is initialised here and keeps
 * a pointer to the source text, which the caller frees with free(*srcp). */
Graph *gir_read_file(const char *path, Diag *d, char **srcp);

#endif
