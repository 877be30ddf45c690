/* capture.h — diagnostics captured in memory, for tests that check the
 * text of errors and warnings (test_tfimport.c, test_tfops.c). */
#ifndef PCC_TEST_CAPTURE_H
#define PCC_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct Cap {
	FILE *f;
	char *buf;
	size_t len;
	Diag d;
} Cap;

static inline void cap_open(Cap *c, const char *file, const char *src)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	diag_init(&c->d, c->f, file, src, strlen(src));
}

static inline const char *cap_text(Cap *c)
{
	fflush(c->f);
	return c->buf ? c->buf : "";
}

static inline void cap_close(Cap *c)
{
	fclose(c->f);
	free(c->buf);
}

#endif
