/* diag.c — user diagnostics: "FILE:LINE:COL: error: MSG", the source line
 * and a caret under the column (cproc token.c, jq locfile.c). */
#include "ir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void diag_init(Diag *d, FILE *out, const char *file, const char *src,
	       size_t srclen)
{
	memset(d, 0, sizeof *d);
	d->out = out ? out : stderr;
	d->file = file;
	d->src = src;
	d->srclen = srclen;
	d->max_errors = 20;
}

/* Prints line `line` of the source and a caret under column col. */
static void show_line(Diag *d, Loc loc)
{
	if (!d->src || loc.line == 0 || (loc.file && d->file &&
					  strcmp(loc.file, d->file) != 0))
		return;
	const char *p = d->src, *end = d->src + d->srclen;
	/* lines end at \n, \r\n or a lone \r, as the lexers count them */
	for (uint32_t l = 1; l < loc.line && p < end; p++)
		if (*p == '\n' || (*p == '\r' && (p + 1 == end || p[1] != '\n')))
			l++;
	if (p >= end && loc.line > 1)
		return;
	const char *e = p;
	while (e < end && *e != '\n' && *e != '\r')
		e++;
	/* a long line (a 200 KB YAML flow, a minified JSON) is shown as
	 * the SHOW bytes around the caret, "..." marking what is cut */
	enum { SHOW = 160 };
	uint32_t col = loc.col;
	bool cut_left = false, cut_right = false;
	if (e - p > SHOW) {
		size_t at = col ? col - 1 : 0;
		if (at > SHOW / 2 && at < (size_t)(e - p)) {
			size_t skip = at - SHOW / 2;
			p += skip;
			col -= (uint32_t)skip;
			cut_left = true;
		}
		if (e - p > SHOW) {
			e = p + SHOW;
			cut_right = true;
		}
	}
	fputs(cut_left ? "..." : "  ", d->out);
	for (const char *q = p; q < e; q++)
		fputc(*q == '\t' || *q == '\0' ? ' ' : *q, d->out);
	fputs(cut_right ? "...\n" : "\n", d->out);
	fputs(cut_left ? "   " : "  ", d->out);
	for (uint32_t c = 1; c < col && p + c - 1 < e; c++)
		fputc(' ', d->out);
	fputs("^\n", d->out);
}

static void report(Diag *d, Loc loc, const char *kind, const char *fmt,
		   va_list ap)
{
	if (d->quiet)
		return;
	const char *file = loc.file ? loc.file : d->file;
	if (file && loc.line)
		fprintf(d->out, "%s:%u:%u: %s: ", file, loc.line, loc.col, kind);
	else if (file)
		fprintf(d->out, "%s: %s: ", file, kind);
	else
		fprintf(d->out, "pcc: %s: ", kind);
	if (d->pass)
		fprintf(d->out, "[%s] ", d->pass);
	vfprintf(d->out, fmt, ap);
	fputc('\n', d->out);
	show_line(d, loc);
}

void diag_verror(Diag *d, Loc loc, const char *fmt, va_list ap)
{
	d->nerrors++;
	if (d->max_errors && d->nerrors > d->max_errors)
		return;
	report(d, loc, "error", fmt, ap);
	if (d->max_errors && d->nerrors == d->max_errors && !d->quiet)
		fprintf(d->out, "pcc: too many errors, stopping\n");
}

void diag_error(Diag *d, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_verror(d, loc, fmt, ap);
	va_end(ap);
}

void diag_note(Diag *d, Loc loc, const char *fmt, ...)
{
	if (d->max_errors && d->nerrors > d->max_errors)
		return;
	va_list ap;
	va_start(ap, fmt);
	report(d, loc, "note", fmt, ap);
	va_end(ap);
}

void diag_warning(Diag *d, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(d, loc, "warning", fmt, ap);
	va_end(ap);
}

static char *read_whole(const char *path, size_t *len, bool text)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat sd;
	if (fstat(fileno(f), &sd) == 0 && S_ISDIR(sd.st_mode)) {
		if (f != stdin)
			fclose(f);
		errno = EISDIR; /* not the EIO a read would give */
		return NULL;
	}
	/* a regular file is read into a buffer of its size (plus the NUL);
	 * anything else (a pipe, a growing file) into a doubling one, up to
	 * READ_MAX bytes and, for text, the first NUL byte.  Memory that
	 * is not there is an error of this input (ENOMEM), not pcc's. */
	struct stat sb;
	size_t cap = 1 << 16, n = 0;
	bool stream = !(fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode));
	if (!stream && (uintmax_t)sb.st_size > READ_MAX) {
		if (f != stdin)
			fclose(f);
		errno = EFBIG;
		return NULL;
	}
	if (!stream)
		cap = (size_t)sb.st_size + 2;
	char *buf = malloc(cap);
	int bad = buf ? 0 : ENOMEM;
	while (!bad) {
		if (n + 1 >= cap) {
			if (n >= READ_MAX) {
				bad = EFBIG;
				break;
			}
			char *more = realloc(buf, 2 * cap);
			if (!more) {
				bad = ENOMEM;
				break;
			}
			buf = more;
			cap *= 2;
		}
		size_t k = fread(buf + n, 1, cap - n - 1, f);
		if (stream && text && memchr(buf + n, 0, k)) {
			bad = EILSEQ;
			break;
		}
		n += k;
		if (k == 0)
			break;
	}
	if (!bad && ferror(f))
		bad = EIO;
	if (f != stdin)
		fclose(f);
	if (bad) {
		free(buf);
		errno = bad;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

char *read_file(const char *path, size_t *len)
{
	return read_whole(path, len, true);
}

char *read_file_bytes(const char *path, size_t *len)
{
	return read_whole(path, len, false);
}

const char *read_error(int err)
{
	switch (err) {
	case EILSEQ:
		return "not text (a NUL byte)";
	case EFBIG:
		return "larger than 2 GiB";
	default:
		return strerror(err);
	}
}

char *map_file(const char *path, size_t *len, bool *mapped)
{
	*mapped = false;
	if (strcmp(path, "-") != 0) {
		int fd = open(path, O_RDONLY);
		struct stat sb;
		if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    sb.st_size > 0 && (uintmax_t)sb.st_size <= READ_MAX) {
			void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ,
				       MAP_PRIVATE, fd, 0);
			close(fd);
			if (p != MAP_FAILED) {
				*len = (size_t)sb.st_size;
				*mapped = true;
				return p;
			}
		} else if (fd >= 0) {
			close(fd);
		}
	}
	return read_file(path, len);
}

void unmap_file(char *p, size_t len, bool mapped)
{
	if (mapped)
		munmap(p, len);
	else
		free(p);
}

/* ---- "did you mean" ------------------------------------------------------ */

void suggest_init(Suggest *s, const char *word)
{
	memset(s, 0, sizeof *s);
	s->word = word;
	s->bestd = SIZE_MAX;
}

/* Optimal string alignment distance between a[0..n) and b[0..m), two
 * rows of the table plus the one before; 0 <= n, m < 64. */
static size_t osa_distance(const char *a, size_t n, const char *b, size_t m)
{
	size_t r0[65], r1[65], r2[65], *pp = r0, *prev = r1, *cur = r2;
	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t d = sub < del ? sub : del;
			d = d < ins ? d : ins;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			cur[j] = d;
		}
		size_t *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[m];
}

void suggest_addn(Suggest *s, const char *cand, size_t m)
{
	size_t n = strlen(s->word);
	if (n == 0 || m == 0 || n >= 64 || m >= 64)
		return;
	/* distances count double, so that a candidate that differs only in
	 * case ('mygpu': 'MyGPU'; 'a100': 'A100', not 'P100') is nearer
	 * than any one edit */
	size_t d;
	if (n == m && strncasecmp(cand, s->word, n) == 0) {
		d = memcmp(cand, s->word, n) ? 1 : 0;
	} else {
		d = osa_distance(s->word, n, cand, m);
		/* a candidate that keeps nothing of the word ('B' for 'A')
		 * is no hint */
		if (d >= (n > m ? n : m))
			return;
		size_t limit = n / 3 > 1 ? n / 3 : 1;
		if (d > limit &&
		    !(n >= 3 && n < m && strncmp(cand, s->word, n) == 0))
			return;
		/* a prefix counts as a distance just past the limit */
		d = 2 * (d > limit ? limit + 1 : d);
	}
	if (d == 0 || d >= s->bestd)
		return;
	s->bestd = d;
	memcpy(s->best, cand, m);
	s->best[m] = 0;
}

void suggest_add(Suggest *s, const char *cand)
{
	suggest_addn(s, cand, strlen(cand));
}

void suggest_add_keys(Suggest *s, const char *list)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		suggest_addn(s, p, eq ? (size_t)(eq - p) : len);
		p += len + (p[len] == ',');
	}
}

const char *suggest_best(const Suggest *s)
{
	return s->bestd == SIZE_MAX ? NULL : s->best;
}

const char *suggest_hint(Suggest *s)
{
	if (!suggest_best(s))
		return "";
	snprintf(s->hint, sizeof s->hint, "; did you mean '%s'?", s->best);
	return s->hint;
}
