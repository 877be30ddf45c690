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

/* ---- tfgraph.c: TensorFlow GraphDef importers --------------------------- */
/* GraphDefs in protobuf text format (.pbtxt) and TF.js graph models
 * (model.json; weights read beside it for small constants).  -1
 * dimensions of Placeholders become batch; the rest follows by inference
 * (docs/tf-import.md). */
typedef struct TfImportOptions {
	int64_t batch;               /* binds -1 dims; default 1 */
	const char *const *shapes;   /* "NAME=D0,D1,..." overriding the shape of
				      * Placeholder NAME (-1: the batch) */
	int nshapes;
} TfImportOptions;
/* Checks one --input-shape spec "NAME=D0,D1,..." (D >= -1). */
bool tf_shape_spec_ok(const char *spec);
Graph *tf_parse_pbtxt(const char *file, const char *src, size_t len, const TfImportOptions *o, Diag *d);
Graph *tf_parse_json(const char *file, const char *src, size_t len, const TfImportOptions *o, Diag *d);
/* The reader an input needs: by file extension (.gir; .pbtxt, .pbtx,
 * .pb.txt; .json; .pb), else by its first bytes. */
typedef enum InputKind { IN_GIR, IN_PBTXT, IN_JSON, IN_BINARY } InputKind;
InputKind input_kind(const char *path, const char *src, size_t len);
/* A text after its UTF-8 byte order mark, if any (not part of any of
 * the formats: columns count from after it); *len shrinks with it. */
const char *skip_bom(const char *text, size_t *len);
/* Parses text, the contents of path (named name in diagnostics; "-":
 * stdin), with the reader input_kind chooses; a binary GraphDef is an
 * error.  The one loader of graph inputs: pcc's and read_any_graph's. */
Graph *parse_any_graph(const char *path, const char *name, const char *text,
		       size_t len, const TfImportOptions *o, Diag *d);
/* Reads path ("-" = stdin) with parse_any_graph; d is initialised here;
 * *srcp receives the text (free it). */
Graph *read_any_graph(const char *path, const TfImportOptions *o, Diag *d, char **srcp);
/* After a cluster is attached: each op's TensorFlow device string
 * (`_device`, "/job:worker/replica:0/task:T/device:GPU:K") that names a
 * device of the cluster becomes a pinned @device (machine T, gpuK); a GPU
 * the cluster lacks is an error; other devices (CPU) are left unpinned,
 * with one note.  An op already carrying @device keeps it.  Returns the
 * number of errors. */
int tf_pin_devices(Graph *g, Diag *d);

#endif
