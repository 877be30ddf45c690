/* topo.c — Kahn's topological sort (Kahn, "Topological sorting of large
 * networks", CACM 5(11), 1962), the one every DAG in pcc is ordered with:
 * the graph's ops (graph_topo, the verifier, the TF importer), the task
 * graph, the C and TF backends' plans, the plan verifier's deadlock check
 * and the list schedulers' ready lists.
 *
 * A TopoDag describes the edges in CSR form, so each caller keeps its
 * own representation (use lists, TgEdge arrays, plain uint32 arrays).
 * Ties among ready nodes are broken deterministically: FIFO (the sources
 * in id order, then nodes in the order they become ready), or, with a
 * key array, the ready node of least (key, tie) first.  Nodes left
 * unordered have a non-zero count in `left`; topo_cycle walks back from
 * one of them to a cycle, for error messages.  Iterative: O(V + E), and
 * O((V + E) log V) with keys. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

static uint32_t head_of(const TopoDag *d, uint32_t e)
{
	return d->to ? d->to[e] : d->to_fn(d->arg, e);
}

static bool kept(const TopoDag *d, uint32_t v)
{
	return !d->keep || d->keep(d->arg, v);
}

uint32_t topo_sort(const TopoDag *d, uint32_t *order, uint32_t *left)
{
	uint32_t n = d->n, out = 0;
	uint32_t *deg = left ? left : xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	memset(deg, 0, sizeof(uint32_t) * ((size_t)n + 1));
	for (uint32_t e = d->start[0]; e < d->start[n]; e++)
		deg[head_of(d, e)]++;
	if (!d->key) {
		/* FIFO: order[] is the queue */
		uint32_t head = 0;
		for (uint32_t v = 0; v < n; v++)
			if (!deg[v] && kept(d, v))
				order[out++] = v;
		while (head < out) {
			uint32_t v = order[head++];
			for (uint32_t e = d->start[v]; e < d->start[v + 1]; e++) {
				uint32_t w = head_of(d, e);
				if (--deg[w] == 0)
					order[out++] = w;
			}
		}
	} else {
		Heap ready = {0};
		HeapItem it;
		for (uint32_t v = 0; v < n; v++)
			if (!deg[v] && kept(d, v))
				heap_push(&ready, d->key[v], d->tie ? d->tie[v] : v, v);
		while (heap_pop(&ready, &it)) {
			uint32_t v = it.id;
			order[out++] = v;
			for (uint32_t e = d->start[v]; e < d->start[v + 1]; e++) {
				uint32_t w = head_of(d, e);
				if (--deg[w] == 0)
					heap_push(&ready, d->key[w],
						  d->tie ? d->tie[w] : w, w);
			}
		}
		heap_free(&ready);
	}
	if (!left)
		free(deg);
	return out;
}

uint32_t topo_cycle(uint32_t n, uint32_t start,
		    uint32_t (*pred)(const void *arg, uint32_t v),
		    const void *arg, uint32_t *path)
{
	if (start >= n)
		return 0;
	uint32_t *seen = xcalloc((size_t)n + 1, sizeof(uint32_t));
	uint32_t len = 0, x = start;
	while (x < n && !seen[x]) {
		seen[x] = ++len;
		path[len - 1] = x;
		x = pred(arg, x);
	}
	uint32_t k = 0;
	if (x < n) {
		uint32_t first = seen[x] - 1;
		k = len - first;
		memmove(path, path + first, sizeof(uint32_t) * k);
	} else {
		path[0] = path[len - 1];
	}
	free(seen);
	return k;
}

void topo_csr(uint32_t n, uint32_t m, const uint32_t *from,
	      const uint32_t *to, size_t stride, uint32_t *start, uint32_t *adj)
{
	memset(start, 0, sizeof(uint32_t) * ((size_t)n + 1));
	for (uint32_t k = 0; k < m; k++)
		start[from[k * stride] + 1]++;
	for (uint32_t i = 0; i < n; i++)
		start[i + 1] += start[i];
	uint32_t *fill = xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
	memcpy(fill, start, sizeof(uint32_t) * ((size_t)n + 1));
	for (uint32_t k = 0; k < m; k++)
		adj[fill[from[k * stride]]++] = to[k * stride];
	free(fill);
}
