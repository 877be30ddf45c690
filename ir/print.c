/* print.c — canonical gir.  Header comments, 'gir 1', the cluster block,
 * then the graph with ops in their current order.  Within an op: its own
 * attributes in insertion order, then the @annotations pcc knows in
 * annots.def order, then other @keys in insertion order.  Re-reading the
 * output and printing it again gives the same bytes. */
#include "ir.h"

#include <string.h>

static void print_input(FILE *f, const Input *in)
{
	if (in->ctrl) {
		fputs("^%", f);
		fputs(in->src->name, f);
		return;
	}
	fputc('%', f);
	if (in->idx && in->src->out_names && in->idx < in->src->nout &&
	    in->src->out_names[in->idx]) {
		fputs(in->src->out_names[in->idx], f);
		return;
	}
	fputs(in->src->name, f);
	if (in->idx)
		fprintf(f, ":%u", in->idx);
}

static void print_type(FILE *f, const Type *t)
{
	Value v = {.kind = V_TYPE, .t = *t};
	val_print(f, &v);
}

static bool is_known_ann(const Graph *g, const char *key, int *rank)
{
	for (int k = 0; k < ANN_COUNT; k++)
		if (g->ann[k] == key) {
			*rank = k;
			return true;
		}
	return false;
}

static void print_attr(FILE *f, const Attr *a, bool *first)
{
	fputs(*first ? " {" : ", ", f);
	*first = false;
	if (a->key[0] == '@' || is_ident(a->key))
		fputs(a->key, f);
	else
		str_print(f, a->key);
	fputs(" = ", f);
	val_print(f, a->val);
}

static void print_attrs(FILE *f, const Graph *g, const Attr *attrs,
			uint32_t n)
{
	bool first = true;
	int rank;
	for (uint32_t i = 0; i < n; i++)
		if (attrs[i].key[0] != '@')
			print_attr(f, &attrs[i], &first);
	for (int k = 0; k < ANN_COUNT; k++)
		for (uint32_t i = 0; i < n; i++)
			if (attrs[i].key == g->ann[k])
				print_attr(f, &attrs[i], &first);
	for (uint32_t i = 0; i < n; i++)
		if (attrs[i].key[0] == '@' && !is_known_ann(g, attrs[i].key, &rank))
			print_attr(f, &attrs[i], &first);
	if (!first)
		fputc('}', f);
}

void op_print(FILE *f, const Graph *g, const Op *op)
{
	fputs("  %", f);
	fputs(op->name, f);
	for (uint32_t k = 1; op->out_names && k < op->nout && op->out_names[k]; k++) {
		fputs(", %", f);
		fputs(op->out_names[k], f);
	}
	fputs(" = ", f);
	fputs(op->type, f);
	fputc('(', f);
	for (uint32_t i = 0; i < op->nin; i++) {
		if (i)
			fputs(", ", f);
		print_input(f, &op->in[i]);
	}
	fputc(')', f);
	print_attrs(f, g, op->attrs, op->nattr);
	if (op->types_given || op->nout) {
		fputs(" : ", f);
		if (op->nout == 1) {
			print_type(f, &op->out[0]);
		} else {
			fputc('(', f);
			for (uint32_t k = 0; k < op->nout; k++) {
				if (k)
					fputs(", ", f);
				print_type(f, &op->out[k]);
			}
			fputc(')', f);
		}
	}
	fputc('\n', f);
}

void gir_print(FILE *f, const Graph *g)
{
	for (uint32_t i = 0; i < g->ncomments; i++) {
		fputc('#', f);
		fputs(g->comments[i], f);
		fputc('\n', f);
	}
	fprintf(f, "gir %d\n", GIR_VERSION);
	if (g->cluster)
		cluster_print(f, g->cluster);
	fputs("graph ", f);
	if (is_ident(g->name))
		fputs(g->name, f);
	else
		str_print(f, g->name);
	print_attrs(f, g, g->attrs, g->nattr);
	fputs(" {\n", f);
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead)
			op_print(f, g, g->ops[i]);
	fputs("}\n", f);
}
