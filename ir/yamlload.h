/* yamlload.h — loading a YAML document with libyaml, shared by the
 * cluster reader (cluster_yaml.c) and the profile reader (cost.c). */
#ifndef PCC_YAMLLOAD_H
#define PCC_YAMLLOAD_H

#include "ir.h"
#include <yaml.h>

/* The deepest nesting of collections a file may have.  libyaml has no
 * limit of its own, and its time grows with the square of the depth
 * (100k nested '[' took over 30 s). */
#define YAML_MAX_DEPTH 256

/* Loads the next document of p (whose input is text) into doc, after
 * checking, on the first call (first), that text nests no deeper than
 * YAML_MAX_DEPTH.  False after a located error on d: at the collection
 * that goes too deep, or at a syntax error (yaml_report_error). */
bool yaml_load_checked(yaml_parser_t *p, yaml_document_t *doc, bool first,
		       const char *file, const char *text, size_t len, Diag *d);
/* A libyaml parser error as "FILE:LINE:COL: error: YAML syntax error:
 * ...": at the opening token of the collection it was parsing when it
 * knows it (an unclosed '{' on line 3, not where libyaml noticed, 4:9),
 * with a note where it noticed. */
void yaml_report_error(Diag *d, const char *file, const yaml_parser_t *p);

#endif
