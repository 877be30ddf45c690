/* verify.c — the IR verifier and type inference.
 * Checks (docs/gir.md, "Verifier"): op names and output aliases are valid
 * gir names, unique, and found in the name table; aliases are given in
 * output order; op types are identifiers; ids match positions; inputs
 * refer to live ops; output indices are in range; the graph is acyclic
 * counting control edges; known ops have the arity and output count the
 * op table gives and the types their shape functions give; source ops
 * (no inputs) have a type; every type is within PCC_DIM_MAX and
 * PCC_BYTES_MAX; attributes of a known meaning have the right kind;
 * @annotations are well-typed, and @batch_dim and @split_dims name
 * dimensions the op's output has; and a plan's collectives, transfers
 * and order are consistent (plan_verify, planview.c).  It runs after parsing always and after every pass with
 * --verify-each.  O(V + E) apart from the shape functions. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

typedef struct Left {
	const Graph *g;
	const uint32_t *left;
} Left;

/* The first input of op v left unordered, or UINT32_MAX. */
static uint32_t left_input(const void *arg, uint32_t v)
{
	const Left *l = arg;
	const Op *op = l->g->ops[v];
	for (uint32_t j = 0; j < op->nin; j++)
		if (l->left[op->in[j].src->id])
			return op->in[j].src->id;
	return UINT32_MAX;
}

/* Reports one cycle among the ops Kahn's algorithm could not order. */
static void report_cycle(Graph *g, Diag *d)
{
	uint32_t n = g->nops;
	uint32_t *left = xmalloc(sizeof *left * (n + 1));
	uint32_t *path = xmalloc(sizeof *path * (n + 1));
	TopoDag dag;
	graph_dag(g, &dag);
	topo_sort(&dag, path, left);
	/* Walk backwards through unordered inputs until an op repeats. */
	uint32_t start = n;
	for (uint32_t i = 0; i < n && start == n; i++)
		if (!g->ops[i]->dead && left[i])
			start = i;
	Left l = {g, left};
	uint32_t len = topo_cycle(n, start, left_input, &l, path);
	if (len) {
		Op *first = g->ops[path[0]];
		char buf[512];
		size_t k = 0;
		/* the cycle: from its first op, following inputs, back to it */
		uint32_t hops = 0;
		for (; hops < len && hops < 16; hops++) {
			Op *op = g->ops[path[hops]];
			int w = snprintf(buf + k, sizeof buf - k, "%s%%%s",
					 hops ? " <- " : "", op->name);
			if (w < 0 || (size_t)w >= sizeof buf - k) {
				k = sizeof buf - 1;
				break;
			}
			k += (size_t)w;
		}
		diag_error(d, first->loc,
			   "the graph has a cycle (data and control edges): %s <- %%%s%s",
			   buf, first->name, hops >= 16 && len > 16 ? " ..." : "");
	} else {
		diag_error(d, (Loc){0}, "the graph has a cycle");
	}
	free(left);
	free(path);
}

/* Attributes whose kind is fixed wherever they appear (TensorFlow's op
 * definitions): a wrong kind is a type error, not a silent default. */
static const struct {
	const char *key;
	ValKind kind;            /* V_STR: a string or an identifier */
} attr_kinds[] = {
	{"transpose_a", V_BOOL}, {"transpose_b", V_BOOL}, {"adj_x", V_BOOL},
	{"adj_y", V_BOOL}, {"keep_dims", V_BOOL}, {"keepdims", V_BOOL},
	{"use_nesterov", V_BOOL}, {"use_locking", V_BOOL},
	{"is_training", V_BOOL}, {"align_corners", V_BOOL},
	{"half_pixel_centers", V_BOOL}, {"sorted", V_BOOL},
	{"num_split", V_INT}, {"batch_dims", V_INT}, {"block_size", V_INT},
	{"begin_mask", V_INT}, {"end_mask", V_INT}, {"ellipsis_mask", V_INT},
	{"new_axis_mask", V_INT}, {"shrink_axis_mask", V_INT},
	{"data_format", V_STR}, {"padding", V_STR},
};

static const char *kind_word(ValKind k)
{
	switch (k) {
	case V_INT: return "an integer";
	case V_FLOAT: return "a number";
	case V_QTY: return "a quantity";
	case V_STR: case V_IDENT: return "a string";
	case V_BOOL: return "true or false";
	case V_TYPE: return "a type";
	case V_LIST: return "a list";
	case V_DICT: return "a dict";
	}
	return "?";
}

static int check_attr_kinds(Diag *d, const Op *op)
{
	int before = d->nerrors;
	for (uint32_t a = 0; a < op->nattr; a++) {
		const Attr *at = &op->attrs[a];
		if (at->key[0] == '@' || !at->val)
			continue;
		for (size_t k = 0; k < sizeof attr_kinds / sizeof attr_kinds[0]; k++) {
			if (strcmp(attr_kinds[k].key, at->key) != 0)
				continue;
			ValKind want = attr_kinds[k].kind, got = at->val->kind;
			if (got == V_IDENT)
				got = V_STR;
			if (got != want)
				diag_error(d, op->loc, "attribute '%s' of %%%s must be %s, "
					   "not %s", at->key, op->name,
					   kind_word(want), kind_word(at->val->kind));
			break;
		}
	}
	return d->nerrors - before;
}

/* @batch_dim and @split_dims: dimensions output 0 has. */
static void check_dim_anns(Graph *g, Diag *d, const Op *op)
{
	int rank = op->nout ? op->out[0].rank : 0;
	Value *b = op_ann(g, op, ANN_BATCH_DIM);
	if (b && b->kind == V_INT && (b->i < 0 || b->i >= rank))
		diag_error(d, op->loc, "@batch_dim of %%%s is %lld, but its output "
			   "has rank %d", op->name, (long long)b->i, rank);
	Value *s = op_ann(g, op, ANN_SPLIT_DIMS);
	for (uint32_t i = 0; s && s->kind == V_LIST && i < s->list.n; i++) {
		const Value *x = s->list.items[i];
		if (x && x->kind == V_INT && (x->i < 0 || x->i >= rank)) {
			diag_error(d, op->loc, "@split_dims of %%%s names dimension "
				   "%lld, but its output has rank %d", op->name,
				   (long long)x->i, rank);
			break;
		}
	}
}

static void check_types(Graph *g, Diag *d, Op *op, Arena *scratch)
{
	const OpInfo *info = op_info(op->opcode);
	uint32_t ndata = 0;
	for (uint32_t i = 0; i < op->nin; i++)
		ndata += !op->in[i].ctrl;
	if ((int)ndata < info->min_in ||
	    (info->max_in >= 0 && (int)ndata > info->max_in)) {
		if (info->max_in == info->min_in)
			diag_error(d, op->loc, "%s %%%s takes %d inputs, not %u",
				   op->type, op->name, info->min_in, ndata);
		else if (info->max_in < 0)
			diag_error(d, op->loc,
				   "%s %%%s takes at least %d inputs, not %u",
				   op->type, op->name, info->min_in, ndata);
		else
			diag_error(d, op->loc,
				   "%s %%%s takes %d to %d inputs, not %u",
				   op->type, op->name, info->min_in, info->max_in,
				   ndata);
		return;
	}
	int nout = op_num_outputs(g, op);
	if (nout >= 0 && op->types_given && (uint32_t)nout != op->nout) {
		diag_error(d, op->loc, "%s %%%s has %d outputs, not %u", op->type,
			   op->name, nout, op->nout);
		return;
	}
	if (op->nout == 0) {
		if (info->max_in == 0 && nout > 0)
			diag_error(d, op->loc, "%s %%%s has no type; give it with "
				   "': type' (or a shape and dtype)", op->type,
				   op->name);
		return;
	}
	for (uint32_t k = 0; k < op->nout; k++)
		if (!type_in_range(&op->out[k])) {
			char a[128];
			diag_error(d, op->loc, "%s %%%s: output %u, %s, is larger "
				   "than pcc handles (dimensions up to 2^40, "
				   "tensors up to 2^53 bytes)", op->type, op->name,
				   k, type_str(&op->out[k], a, sizeof a));
			return;
		}
	if (op_ann(g, op, ANN_BATCH_DIM) || op_ann(g, op, ANN_SPLIT_DIMS))
		check_dim_anns(g, d, op);
	Type *want = arena_alloc(scratch, sizeof(Type) * op->nout);
	char msg[256] = "";
	int r = op_infer(g, op, want, op->nout, scratch, msg, sizeof msg);
	if (r < 0) {
		diag_error(d, op->loc, "%s %%%s: %s", op->type, op->name, msg);
		return;
	}
	if (r > 0)
		return;
	for (uint32_t k = 0; k < op->nout; k++)
		if (!type_eq(&want[k], &op->out[k])) {
			char a[128], b[128];
			diag_error(d, op->loc,
				   "%s %%%s: output %u is declared %s but its inputs give %s",
				   op->type, op->name, k,
				   type_str(&op->out[k], a, sizeof a),
				   type_str(&want[k], b, sizeof b));
		}
}

/* A %name: one or more of [A-Za-z0-9_.-/] (docs/gir.md). */
static bool is_value_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '.' || *s == '-' || *s == '/' ||
		      (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static bool is_name(const Value *v)
{
	return v->kind == V_STR || v->kind == V_IDENT;
}

/* A device list that repeats (a pipeline's micro-batches) needs @micro
 * equal to the number of repeats, and @micro needs such a list. */
static void check_micro(const Graph *g, Diag *d, const Op *op)
{
	const Value *r = op_ann(g, op, ANN_REPLICAS), *m = op_ann(g, op, ANN_MICRO);
	if (m && m->kind == V_INT && (m->i < 1 || !r || r->kind != V_LIST ||
				      r->list.n % (uint32_t)m->i)) {
		diag_error(d, op->loc, "@micro of %%%s: expected a positive number "
			   "of micro-batches dividing the length of @replicas",
			   op->name);
		return;
	}
	if (!r || r->kind != V_LIST || r->list.n < 2 || !is_name(r->list.items[0]))
		return;
	uint32_t k = 1;
	while (k < r->list.n && is_name(r->list.items[k]) &&
	       strcmp(r->list.items[k]->s, r->list.items[0]->s))
		k++;
	if (k < r->list.n && (!m || m->kind != V_INT ||
			      (int64_t)(r->list.n / k) != m->i))
		diag_error(d, op->loc, "@replicas of %%%s: device '%s' listed "
			   "twice (a pipeline's list repeats its stage's devices "
			   "@micro = %u times)", op->name, r->list.items[0]->s,
			   r->list.n / k);
}

/* Names: printable, unique (each resolves to this op and output). */
static void check_names(Graph *g, Diag *d, const Op *op)
{
	uint32_t idx;
	if (!is_value_name(op->name))
		diag_error(d, op->loc, "op name '%s' is not a valid %%name",
			   op->name);
	else if (graph_lookup(g, op->name, &idx) != op || idx != 0)
		diag_error(d, op->loc, "op name '%%%s' is not unique or not "
			   "registered in the name table", op->name);
	if (!is_ident(op->type))
		diag_error(d, op->loc, "op type '%s' of %%%s is not an "
			   "identifier", op->type, op->name);
	if (!op->out_names)
		return;
	if (op->nout && op->out_names[0])
		diag_error(d, op->loc, "output 0 of %%%s has an alias; output 0 "
			   "is named by the op", op->name);
	bool gap = false;
	for (uint32_t k = 1; k < op->nout; k++) {
		const char *a = op->out_names[k];
		if (!a) {
			gap = true;
			continue;
		}
		if (gap)
			diag_error(d, op->loc, "output %u of %%%s is named but an "
				   "earlier output is not", k, op->name);
		if (!is_value_name(a))
			diag_error(d, op->loc, "output alias '%s' of %%%s is not "
				   "a valid %%name", a, op->name);
		else if (graph_lookup(g, a, &idx) != op || idx != k)
			diag_error(d, op->loc, "output alias '%%%s' of %%%s is not "
				   "unique or not registered", a, op->name);
	}
}

int graph_verify(Graph *g, Diag *d)
{
	int before = d->nerrors;
	Arena *scratch = arena_new();
	char msg[256];
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		if (op->id != i)
			diag_error(d, op->loc, "op %%%s has id %u at position %u",
				   op->name, op->id, i);
		/* the name table is large and looked up in op order: fetch
		 * the slot of an op a little ahead */
		if (i + 16 < g->nops && !g->ops[i + 16]->dead) {
			const char *ahead = g->ops[i + 16]->name;
			graph_prefetch_name(g, graph_name_hash(ahead, strlen(ahead)));
		}
		check_names(g, d, op);
		for (uint32_t j = 0; j < op->nin; j++) {
			Input *in = &op->in[j];
			if (!in->src || in->src->dead) {
				diag_error(d, op->loc,
					   "input %u of %%%s refers to a removed op",
					   j, op->name);
				continue;
			}
			if (in->ctrl)
				continue;
			if (in->idx >= in->src->nout) {
				if (in->src->nout == 0 && !in->src->types_given)
					diag_error(d, op->loc,
						   "input %u of %%%s: the type of %%%s is unknown; "
						   "give it with ': type'",
						   j, op->name, in->src->name);
				else
					diag_error(d, op->loc,
						   "input %u of %%%s: %%%s has %u output%s, "
						   "no output %u",
						   j, op->name, in->src->name, in->src->nout,
						   in->src->nout == 1 ? "" : "s", in->idx);
			}
		}
		if (op->opcode != OPC_UNKNOWN)
			check_attr_kinds(d, op);
		for (uint32_t a = 0; a < op->nattr; a++)
			if (op->attrs[a].key[0] == '@' &&
			    !ann_check(g, op->attrs[a].key, op->attrs[a].val, msg,
				       sizeof msg))
				diag_error(d, op->loc, "%s of %%%s: %s",
					   op->attrs[a].key, op->name, msg);
		check_micro(g, d, op);
	}
	Value *b = graph_attr(g, "batch");
	if (b && (b->kind != V_INT || b->i <= 0 || b->i > PCC_DIM_MAX))
		diag_error(d, (Loc){g->src_file, 0, 0},
			   "graph attribute 'batch' must be a positive integer "
			   "up to 2^40");
	if (d->nerrors == before) {
		if (!graph_topo(g)) {
			report_cycle(g, d);
		} else {
			for (uint32_t i = 0; i < g->nops; i++) {
				Op *op = g->ops[i];
				if (!op->dead && op->opcode != OPC_UNKNOWN)
					check_types(g, d, op, scratch);
				if ((i & 4095) == 4095)
					arena_reset(scratch);
			}
			if (d->nerrors == before)
				plan_verify(g, d);
		}
	}
	arena_free(scratch);
	return d->nerrors - before;
}

int graph_infer_types(Graph *g, Diag *d)
{
	int before = d->nerrors;
	const uint32_t *topo = graph_topo(g);
	if (!topo)
		return 0; /* the verifier reports the cycle */
	uint32_t live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	char msg[256];
	for (uint32_t t = 0; t < live; t++) {
		Op *op = g->ops[topo[t]];
		if (op->opcode == OPC_UNKNOWN || check_attr_kinds(d, op) ||
		    op->types_given)
			continue;
		int n = op_num_outputs(g, op);
		if (n <= 0)
			continue;
		Type *out = arena_alloc(g->arena, sizeof(Type) * (size_t)n);
		msg[0] = 0;
		int r = op_infer(g, op, out, (uint32_t)n, g->arena, msg, sizeof msg);
		if (r < 0) {
			diag_error(d, op->loc, "%s %%%s: %s", op->type, op->name, msg);
		} else if (r == 0) {
			op->out = out;
			op->nout = (uint32_t)n;
		}
	}
	return d->nerrors - before;
}
