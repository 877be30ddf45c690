/* heap.c — one binary min-heap for every event queue and ready list in
 * pcc: items ordered by (key, tie), each carrying an id.  The simulator
 * keys events by time with (kind, op) as tie; list schedulers key nodes
 * by negated rank with a topological position as tie. */
#include "ir.h"

#include <stdlib.h>

static bool less(const HeapItem *x, const HeapItem *y)
{
	if (x->key != y->key)
		return x->key < y->key;
	return x->tie < y->tie;
}

void heap_push(Heap *h, double key, uint64_t tie, uint32_t id)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->a = xrealloc(h->a, sizeof *h->a * h->cap);
	}
	HeapItem it = {key, tie, id};
	size_t i = h->n++;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!less(&it, &h->a[p]))
			break;
		h->a[i] = h->a[p];
		i = p;
	}
	h->a[i] = it;
}

bool heap_pop(Heap *h, HeapItem *out)
{
	if (!h->n)
		return false;
	if (out)
		*out = h->a[0];
	HeapItem last = h->a[--h->n];
	size_t i = 0, n = h->n;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && less(&h->a[c + 1], &h->a[c]))
			c++;
		if (!less(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (n)
		h->a[i] = last;
	return true;
}

void heap_free(Heap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}
