/* cpdtopo.c — critical-path DFS topological order (CPD-TOPO), Celeritas
 * §5.1.3 and Algorithm 1 (function CPD_Topo).
 *
 * Every node gets cpath = tlevel + blevel (eq. 2 and 3): the length of the
 * longest source-to-sink path through it, counting node weights and edge
 * transfer times.  The order is then built with a queue Q that is only
 * ever used at its head, i.e. a stack:
 *   - Q starts with the nodes of indegree 0, sorted by decreasing cpath
 *     (the head holds the largest);
 *   - repeatedly the head node v is dequeued and appended to the order,
 *     its out-edges are deleted, and its children are visited in
 *     increasing cpath; each child whose indegree has dropped to 0 is
 *     put at the head of Q.  The last one put there, the child with the
 *     largest cpath, is therefore the next node out.
 * So the order follows a critical path depth-first as far as it can before
 * it turns to other branches, which keeps the nodes of one path adjacent
 * (DFS-TOPO, §4.2.2) and puts critical nodes first.  Ties in cpath go to
 * the lower node id, so the order is deterministic.
 *
 * tg_levels gives tlevel and blevel in O(V + E); the traversal visits each
 * edge once and sorts each node's newly ready children, O(V + E log d)
 * for out-degree d.  No recursion. */
#include "taskgraph.h"

#include <math.h>
#include <stdlib.h>

void tg_cpath(const TaskGraph *t, const double *w, double *cpath)
{
	size_t n1 = (size_t)t->n + 1;
	double *wm = NULL;
	if (!w) {
		wm = xmalloc(n1 * sizeof *wm);
		tg_weights(t, TG_MEAN, wm);
		w = wm;
	}
	double *tl = xmalloc(n1 * sizeof *tl);
	tg_levels(t, w, TG_MEAN, tl, cpath);
	for (uint32_t v = 0; v < t->n; v++) {
		cpath[v] += tl[v];
		if (isnan(cpath[v]))
			cpath[v] = -INFINITY;
	}
	free(tl);
	free(wm);
}

/* A node and its priority: larger cpath first, then the lower id. */
typedef struct Key {
	double c;
	uint32_t v;
} Key;

/* Increasing priority, the order in which nodes are put at the head. */
static int key_cmp(const void *pa, const void *pb)
{
	const Key *a = pa, *b = pb;
	if (a->c != b->c)
		return a->c < b->c ? -1 : 1;
	return a->v > b->v ? -1 : a->v < b->v;
}

void tg_cpdtopo(const TaskGraph *t, const double *w, uint32_t *order)
{
	uint32_t n = t->n;
	size_t n1 = (size_t)n + 1;
	double *cp = xmalloc(n1 * sizeof *cp);
	tg_cpath(t, w, cp);
	uint32_t *indeg = xmalloc(n1 * sizeof *indeg);
	uint32_t *stack = xmalloc(n1 * sizeof *stack);
	Key *tmp = xmalloc(n1 * sizeof *tmp);
	uint32_t k = 0, top = 0, out = 0;
	for (uint32_t v = 0; v < n; v++) {
		indeg[v] = t->pred_start[v + 1] - t->pred_start[v];
		if (!indeg[v])
			tmp[k++] = (Key){cp[v], v};
	}
	/* Q sorted by decreasing cpath: the head is the top of the stack. */
	qsort(tmp, k, sizeof *tmp, key_cmp);
	for (uint32_t i = 0; i < k; i++)
		stack[top++] = tmp[i].v;
	while (top) {
		uint32_t v = stack[--top];
		order[out++] = v;
		k = 0;
		for (uint32_t e = t->succ_start[v]; e < t->succ_start[v + 1]; e++) {
			uint32_t s = t->succ[e].node;
			if (--indeg[s] == 0)
				tmp[k++] = (Key){cp[s], s};
		}
		/* Children in increasing cpath, each put at the head. */
		if (k > 1)
			qsort(tmp, k, sizeof *tmp, key_cmp);
		for (uint32_t i = 0; i < k; i++)
			stack[top++] = tmp[i].v;
	}
	if (out != n)
		pcc_die("tg_cpdtopo: the task graph has a cycle");
	free(tmp);
	free(stack);
	free(indeg);
	free(cp);
}
