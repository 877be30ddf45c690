/* intern.c — string interning with open addressing (linear probing). */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ull;
	}
	return h;
}

void interner_init(Interner *in, Arena *a)
{
	in->arena = a;
	in->cap = 256;
	in->n = 0;
	in->slots = xcalloc(in->cap, sizeof *in->slots);
}

void interner_free(Interner *in)
{
	free(in->slots);
	in->slots = NULL;
	in->cap = in->n = 0;
}

static void grow(Interner *in)
{
	size_t cap = in->cap * 2;
	const char **slots = xcalloc(cap, sizeof *slots);
	for (size_t i = 0; i < in->cap; i++) {
		const char *s = in->slots[i];
		if (!s)
			continue;
		size_t j = hash_bytes(s, strlen(s)) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = s;
	}
	free(in->slots);
	in->slots = slots;
	in->cap = cap;
}

const char *intern_n(Interner *in, const char *s, size_t n)
{
	if (2 * (in->n + 1) > in->cap)
		grow(in);
	size_t j = hash_bytes(s, n) & (in->cap - 1);
	for (;;) {
		const char *t = in->slots[j];
		if (!t)
			break;
		if (strncmp(t, s, n) == 0 && t[n] == 0)
			return t;
		j = (j + 1) & (in->cap - 1);
	}
	const char *t = arena_strndup(in->arena, s, n);
	in->slots[j] = t;
	in->n++;
	return t;
}

const char *intern(Interner *in, const char *s)
{
	return intern_n(in, s, strlen(s));
}
