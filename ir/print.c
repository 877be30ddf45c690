/* print.c — canonical gir.  Header comments, 'gir 1', the cluster block,
 * then the graph with ops in their current order.  Within an op: its own
 * attributes in insertion order, then the @annotations pcc knows in
 * annots.def order, then other @keys in insertion order.  Re-reading the
 * output and printing it again gives the same bytes.  Text is built in a
 * StrBuf and written in large blocks (a million-op graph is ~60 MB). */
#include "ir.h"

#include <string.h>

enum { FLUSH_AT = 1 << 16 };

/* Is output k of op spelled by its own name?  Outputs are named in order
 * (graph_name_output; the verifier checks it), so op_format prints every
 * alias up to the first missing one. */
static bool alias_printed(const Op *op, uint32_t k)
{
	return k && op->out_names && k < op->nout && op->out_names[k];
}

static void format_input(StrBuf *b, const Input *in)
{
	if (in->ctrl) {
		sb_puts(b, "^%");
		sb_puts(b, in->src->name);
		return;
	}
	sb_putc(b, '%');
	if (in->idx && alias_printed(in->src, in->idx)) {
		sb_puts(b, in->src->out_names[in->idx]);
		return;
	}
	sb_puts(b, in->src->name);
	if (in->idx) {
		sb_putc(b, ':');
		sb_i64(b, in->idx);
	}
}

static bool is_known_ann(const Graph *g, const char *key)
{
	for (int k = 0; k < ANN_COUNT; k++)
		if (g->ann[k] == key)
			return true;
	return false;
}

static void format_attr(StrBuf *b, const Attr *a, bool *first)
{
	sb_puts(b, *first ? " {" : ", ");
	*first = false;
	key_format(b, a->key);
	sb_puts(b, " = ");
	val_format(b, a->val);
}

static void format_attrs(StrBuf *b, const Graph *g, const Attr *attrs,
			 uint32_t n)
{
	bool first = true;
	for (uint32_t i = 0; i < n; i++)
		if (attrs[i].key[0] != '@')
			format_attr(b, &attrs[i], &first);
	for (int k = 0; k < ANN_COUNT; k++)
		for (uint32_t i = 0; i < n; i++)
			if (attrs[i].key == g->ann[k])
				format_attr(b, &attrs[i], &first);
	for (uint32_t i = 0; i < n; i++)
		if (attrs[i].key[0] == '@' && !is_known_ann(g, attrs[i].key))
			format_attr(b, &attrs[i], &first);
	if (!first)
		sb_putc(b, '}');
}

static void format_op(StrBuf *b, const Graph *g, const Op *op)
{
	sb_puts(b, "  %");
	sb_puts(b, op->name);
	for (uint32_t k = 1; alias_printed(op, k); k++) {
		sb_puts(b, ", %");
		sb_puts(b, op->out_names[k]);
	}
	sb_puts(b, " = ");
	sb_puts(b, op->type);
	sb_putc(b, '(');
	for (uint32_t i = 0; i < op->nin; i++) {
		if (i)
			sb_puts(b, ", ");
		format_input(b, &op->in[i]);
	}
	sb_putc(b, ')');
	format_attrs(b, g, op->attrs, op->nattr);
	if (op->types_given || op->nout) {
		sb_puts(b, " : ");
		if (op->nout == 1) {
			type_format(b, &op->out[0]);
		} else {
			sb_putc(b, '(');
			for (uint32_t k = 0; k < op->nout; k++) {
				if (k)
					sb_puts(b, ", ");
				type_format(b, &op->out[k]);
			}
			sb_putc(b, ')');
		}
	}
	sb_putc(b, '\n');
}

void gir_print(FILE *f, const Graph *g)
{
	StrBuf b = {0};
	for (uint32_t i = 0; i < g->ncomments; i++) {
		sb_putc(&b, '#');
		sb_puts(&b, g->comments[i]);
		sb_putc(&b, '\n');
	}
	sb_printf(&b, "gir %d\n", GIR_VERSION);
	sb_flush(&b, f);
	if (g->cluster)
		cluster_print(f, g->cluster);
	sb_puts(&b, "graph ");
	if (is_ident(g->name))
		sb_puts(&b, g->name);
	else
		str_format(&b, g->name);
	format_attrs(&b, g, g->attrs, g->nattr);
	sb_puts(&b, " {\n");
	for (uint32_t i = 0; i < g->nops; i++) {
		if (!g->ops[i]->dead)
			format_op(&b, g, g->ops[i]);
		if (b.n >= FLUSH_AT)
			sb_flush(&b, f);
	}
	sb_puts(&b, "}\n");
	sb_flush(&b, f);
	sb_free(&b);
}
