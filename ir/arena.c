/* arena.c — bump allocation per graph (lcc alloc.c, QBE util.c).
 * Blocks are chained; arena_reset frees them all.  With -DPCC_ARENA_MALLOC
 * each allocation is its own malloc'd block, so ASan/valgrind see overruns. */
#include "ir.h"

#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>

typedef struct Block {
	struct Block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
} Block;

struct Arena {
	Block *head;
	size_t bytes;
};

enum { BLOCK_MIN = 64 * 1024 };

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		pcc_die("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		pcc_die("out of memory (%zu x %zu bytes)", n, sz);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		pcc_die("out of memory (%zu bytes)", n);
	return p;
}

void *xmalloc_huge(size_t n)
{
	enum { HUGE = 2u << 20 };
	if (n < 2 * HUGE)
		return xmalloc(n);
	n = (n + HUGE - 1) & ~(size_t)(HUGE - 1);
	void *p = aligned_alloc(HUGE, n);
	if (!p)
		pcc_die("out of memory (%zu bytes)", n);
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE);   /* a hint: failure is harmless */
#endif
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

_Noreturn void pcc_die(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("pcc: internal error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

Arena *arena_new(void)
{
	return xcalloc(1, sizeof(Arena));
}

void arena_reset(Arena *a)
{
	Block *b = a->head;
	while (b) {
		Block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->bytes = 0;
}

void arena_free(Arena *a)
{
	if (!a)
		return;
	arena_reset(a);
	free(a);
}

static Block *new_block(Arena *a, size_t need)
{
	size_t size = need;
#ifndef PCC_ARENA_MALLOC
	if (size < BLOCK_MIN)
		size = BLOCK_MIN;
	/* Grow blocks with the arena so a huge graph needs few mallocs. */
	if (a->bytes / 8 > size)
		size = a->bytes / 8;
#endif
	Block *b = xmalloc_huge(sizeof(Block) + size);
	b->size = size;
	b->used = 0;
	b->next = a->head;
	a->head = b;
	a->bytes += size;
	return b;
}

void *arena_alloc(Arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	Block *b = a->head;
#ifdef PCC_ARENA_MALLOC
	b = new_block(a, n);
#else
	if (!b || b->size - b->used < n)
		b = new_block(a, n);
#endif
	void *p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

void *arena_realloc(Arena *a, void *p, size_t old, size_t n)
{
	if (n <= old)
		return p;
	void *q = arena_alloc(a, n);
	if (p && old)
		memcpy(q, p, old);
	return q;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		pcc_die("arena_printf: bad format");
	char *p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

size_t arena_bytes(const Arena *a)
{
	return a->bytes;
}

int64_t pcc_sat_i64(double x)
{
	if (x != x)
		return 0;
	if (x >= 9.2e18)
		return INT64_MAX;
	if (x <= -9.2e18)
		return INT64_MIN;
	return (int64_t)x;
}

double pcc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
