/* annotate.c — splittability, roles and FLOPs (TAG §4.1.1, "Annotating
 * tensor split and concatenation methods").
 *
 * For every op, unless the input already pins the annotation:
 *   @split       TAG's category from the op table: concat (outputs of a
 *                batch-split op concatenate), sum (they add up: gradients
 *                of parameters), none (the op needs whole tensors: updates).
 *                Unknown op types are none.
 *   @split_dims  the output dimensions along which the op may be
 *                partitioned (op_split_dims), when there are any.
 *   @role        input / param from the op table; update and loss ops;
 *                bwd for ops that depend on the loss (or, without a marked
 *                loss, on a gradient op) and that an update depends on;
 *                fwd otherwise.  Consts get no role.
 *   @flops       FLOPs of one execution for ops the table knows (> 0).
 * Two sweeps over the graph (forward from the loss, backward from the
 * updates): O(V + E), no recursion. */
#include "passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static Role given_role(const Graph *g, const Op *op)
{
	const char *r = op_ann_str(g, op, ANN_ROLE);
	return r ? role_parse(r) : ROLE_NONE;
}

int pass_annotate(PassCtx *ctx)
{
	Graph *g = ctx->g;
	const uint32_t *topo = graph_topo(g);
	if (!topo)
		return pass_internal_error(ctx, "graph has a cycle");
	uint32_t n = g->nops;
	const Uses *u = graph_uses(g);

	/* Roles: seeds of the backward pass and the update ops. */
	bool *after = xcalloc(n + 1, sizeof *after);  /* depends on a seed */
	bool *before = xcalloc(n + 1, sizeof *before); /* an update depends on it */
	bool have_loss = false;
	for (uint32_t i = 0; i < n; i++) {
		const Op *op = g->ops[i];
		const OpInfo *info = op_info(op->opcode);
		Role r = given_role(g, op);
		if (r == ROLE_LOSS || (r == ROLE_NONE && info &&
				       (info->flags & OPF_LOSS)))
			have_loss = true;
	}
	for (uint32_t t = 0; t < n; t++) {
		const Op *op = g->ops[topo[t]];
		const OpInfo *info = op_info(op->opcode);
		Role r = given_role(g, op);
		bool seed = have_loss ? (r == ROLE_LOSS || (r == ROLE_NONE && info &&
							    (info->flags & OPF_LOSS)))
				      : (r == ROLE_BWD || (info && (info->flags & OPF_GRAD)));
		if (seed)
			after[op->id] = true;
		if (!after[op->id])
			continue;
		for (uint32_t k = u->start[op->id]; k < u->start[op->id + 1]; k++)
			if (!u->use[k].op->in[u->use[k].slot].ctrl)
				after[u->use[k].op->id] = true;
	}
	for (uint32_t t = n; t-- > 0;) {
		const Op *op = g->ops[topo[t]];
		const OpInfo *info = op_info(op->opcode);
		Role r = given_role(g, op);
		if (r == ROLE_UPDATE || (r == ROLE_NONE && info &&
					 (info->flags & OPF_UPDATE)))
			before[op->id] = true;
		if (!before[op->id])
			continue;
		for (uint32_t j = 0; j < op->nin; j++)
			if (!op->in[j].ctrl)
				before[op->in[j].src->id] = true;
	}

	uint32_t counts[3] = {0};
	int dims[16];
	for (uint32_t i = 0; i < n; i++) {
		Op *op = g->ops[i];
		const OpInfo *info = op_info(op->opcode);

		if (!op_ann(g, op, ANN_ROLE)) {
			Role r = ROLE_NONE;
			if (info && (info->flags & OPF_INPUT))
				r = ROLE_INPUT;
			else if (info && (info->flags & OPF_PARAM))
				r = ROLE_PARAM;
			else if (info && (info->flags & OPF_UPDATE))
				r = ROLE_UPDATE;
			else if (info && (info->flags & OPF_LOSS))
				r = ROLE_LOSS;
			else if (info && (info->flags & OPF_SOURCE))
				r = ROLE_NONE;
			else if (after[i] && before[i])
				r = ROLE_BWD;
			else
				r = ROLE_FWD;
			if (r != ROLE_NONE)
				op_set_ann(g, op, ANN_ROLE,
					   val_ident(g->arena, role_name(r)));
		}

		SplitCat sc = SPLIT_NONE;
		Value *given = op_ann(g, op, ANN_SPLIT);
		if (given && (given->kind == V_IDENT || given->kind == V_STR))
			splitcat_parse(given->s, &sc);
		else if (given)
			sc = op_split_cat(g, op);   /* a list per output: kept */
		else {
			sc = op_split_cat(g, op);
			op_set_ann(g, op, ANN_SPLIT,
				   val_ident(g->arena, splitcat_name(sc)));
		}
		counts[sc]++;

		if (!op_ann(g, op, ANN_SPLIT_DIMS) && info) {
			int nd = op_split_dims(g, op, dims, 16);
			if (nd > 0) {
				Value *l = val_list(g->arena, (uint32_t)nd);
				for (int k = 0; k < nd; k++)
					l->list.items[k] = val_int(g->arena, dims[k]);
				op_set_ann(g, op, ANN_SPLIT_DIMS, l);
			}
		}

		if (!op_ann(g, op, ANN_FLOPS) && info) {
			double f = op_flops(g, op);
			if (f > 0)
				op_set_ann(g, op, ANN_FLOPS,
					   f < 9007199254740992.0 && f == floor(f)
						   ? val_int(g->arena, (int64_t)f)
						   : val_float(g->arena, f));
		}
	}
	if (ctx->report)
		fprintf(ctx->report,
			"annotate: %u ops: %u concat, %u sum, %u none\n", n,
			counts[SPLIT_CONCAT], counts[SPLIT_SUM], counts[SPLIT_NONE]);
	free(after);
	free(before);
	return EXIT_OK;
}
