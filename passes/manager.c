/* manager.c — the pass manager: the pass table (passes.def), -passes=
 * pipeline strings, named -O pipelines, per-pass dumps, --verify-each,
 * --time-passes, --stop-after, and crash reproducers. */
#include "passes.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static const PassOpt opt_tab[] = {
#define PASS_OPT(pass, name, kind, range, dflt, help) \
	{pass, name, kind, range, dflt, help},
#include "passes.def"
};
enum { NOPTS = sizeof opt_tab / sizeof opt_tab[0] };

static const PassInfo pass_tab[] = {
#define PASS(name, fn, desc) {name, desc, fn},
#include "passes.def"
};
enum { NPASSES = sizeof pass_tab / sizeof pass_tab[0] };

static const struct {
	const char *name, *str;
} pipe_tab[] = {
#define PIPELINE(name, str) {name, str},
#include "passes.def"
};
enum { NPIPES = sizeof pipe_tab / sizeof pipe_tab[0] };

const PassInfo *pass_table(int *n)
{
	*n = NPASSES;
	return pass_tab;
}

const PassInfo *pass_find(const char *name)
{
	for (int i = 0; i < NPASSES; i++)
		if (strcmp(pass_tab[i].name, name) == 0)
			return &pass_tab[i];
	return NULL;
}

const char *pipeline_named(const char *name)
{
	for (int i = 0; i < NPIPES; i++)
		if (strcmp(pipe_tab[i].name, name) == 0)
			return pipe_tab[i].str;
	return NULL;
}

/* Is name one of the comma-separated list's words? */
static bool in_list(const char *list, const char *name)
{
	if (!list)
		return false;
	size_t len = strlen(name);
	for (const char *p = list; *p;) {
		size_t m = strcspn(p, ",");
		if (m == len && strncmp(p, name, len) == 0)
			return true;
		p += m + (p[m] != 0);
	}
	return false;
}

/* ---- typed pass options (PASS_OPT in passes.def) ----------------------- */

const PassOpt *pass_options(const PassInfo *pi, int *n)
{
	int i = 0;
	while (i < NOPTS && strcmp(opt_tab[i].pass, pi->name) != 0)
		i++;
	int k = i;
	while (k < NOPTS && strcmp(opt_tab[k].pass, pi->name) == 0)
		k++;
	*n = k - i;
	return opt_tab + i;
}

const PassOpt *pass_opt_find(const PassInfo *pi, const char *key)
{
	int n;
	const PassOpt *o = pass_options(pi, &n);
	for (int i = 0; i < n; i++)
		if (strcmp(o[i].name, key) == 0)
			return &o[i];
	return NULL;
}

/* Is val one of the '|'-separated words of list? */
static bool is_word(const char *list, const char *val)
{
	size_t len = strlen(val);
	for (const char *p = list; *p;) {
		size_t m = strcspn(p, "|");
		if (m == len && strncmp(p, val, len) == 0)
			return true;
		p += m + (p[m] != 0);
	}
	return false;
}

/* A numeric range "[lo,hi]" or "(lo,inf)", then perhaps "|word|...". */
typedef struct Range {
	double lo, hi;
	bool lo_open, hi_open;
	const char *words;       /* "auto|..." or "" */
} Range;

static Range range_of(const PassOpt *o)
{
	Range r = {0, 0, false, false, ""};
	const char *s = o->range;
	r.lo_open = *s == '(';
	r.lo = strtod(s + 1, (char **)&s);
	r.hi = strtod(s + 1, (char **)&s);
	r.hi_open = *s == ')';
	s += *s != 0;
	r.words = *s == '|' ? s + 1 : s;
	return r;
}

/* A size: a finite number, then nothing or a byte unit ("25MB"). */
static bool bytes_parse(const char *s, double *out)
{
	char *end;
	if (!*s || isspace((unsigned char)*s))
		return false;
	double x = strtod(s, &end);
	if (end == s || !isfinite(x))
		return false;
	while (*end == ' ')
		end++;
	if (*end) {
		Unit u;
		double scale;
		if (!unit_parse(end, strlen(end), &u, &scale) || u != UNIT_BYTES)
			return false;
		x *= scale;
	}
	*out = x;
	return isfinite(x);
}

void pass_opt_describe(const PassOpt *o, char *buf, size_t n)
{
	switch (o->kind) {
	case POPT_INT:
	case POPT_NUM:
	case POPT_BYTES: {
		Range r = range_of(o);
		const char *w = r.words;
		size_t rlen = strcspn(o->range, "|");
		snprintf(buf, n, "%s in %.*s%s%s",
			 o->kind == POPT_INT ? "an integer"
			 : o->kind == POPT_BYTES ? "a size (bytes, or 25MB, 4MiB)"
						 : "a number",
			 (int)rlen, o->range, *w ? ", or " : "", w);
		break;
	}
	case POPT_BOOL: snprintf(buf, n, "true or false"); break;
	case POPT_ENUM: snprintf(buf, n, "one of %s", o->range); break;
	case POPT_ALGO:
		snprintf(buf, n, "one of %s", place_algo_names());
		break;
	}
}

bool pass_opt_check(const PassOpt *o, const char *val, char *err, size_t n)
{
	bool ok = false;
	switch (o->kind) {
	case POPT_INT:
	case POPT_NUM:
	case POPT_BYTES: {
		Range r = range_of(o);
		if (*r.words && is_word(r.words, val)) {
			ok = true;
			break;
		}
		double x;
		long long v;
		if (o->kind == POPT_INT) {
			if (!int_parse(val, LLONG_MIN, LLONG_MAX, &v))
				break;
			x = (double)v;
		} else if (o->kind == POPT_BYTES ? !bytes_parse(val, &x)
						 : !num_parse(val, &x)) {
			break;
		}
		ok = (r.lo_open ? x > r.lo : x >= r.lo) &&
		     (r.hi_open ? x < r.hi : x <= r.hi);
		break;
	}
	case POPT_BOOL:
		ok = strcmp(val, "true") == 0 || strcmp(val, "false") == 0;
		break;
	case POPT_ENUM: ok = is_word(o->range, val); break;
	case POPT_ALGO: ok = place_algo_known(val); break;
	}
	if (!ok) {
		char what[512];
		pass_opt_describe(o, what, sizeof what);
		snprintf(err, n, "%s<%s=%s>: expected %s", o->pass, o->name, val,
			 what);
	}
	return ok;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	return s;
}

void pipeline_free(Pipeline *p)
{
	for (int i = 0; i < p->n; i++) {
		for (int j = 0; j < p->steps[i].nargs; j++) {
			free((char *)p->steps[i].args[j].key);
			free((char *)p->steps[i].args[j].val);
		}
		free(p->steps[i].args);
	}
	free(p->steps);
	p->steps = NULL;
	p->n = 0;
}

bool pipeline_parse(const char *s, Pipeline *p, char *err, size_t n)
{
	p->steps = NULL;
	p->n = 0;
	char *buf = xstrdup(s);
	char *q = buf;
	bool ok = true;
	while (ok) {
		/* one element: name or name<args>, up to a ',' outside <> */
		char *start = q;
		int depth = 0;
		while (*q && !(*q == ',' && depth == 0)) {
			if (*q == '<')
				depth++;
			else if (*q == '>')
				depth--;
			q++;
		}
		bool last = !*q;
		*q = 0;
		char *elem = trim(start);
		if (!*elem) {
			if (last && p->n == 0)
				break; /* the empty pipeline */
			snprintf(err, n, "empty pass name in pipeline '%s'", s);
			ok = false;
			break;
		}
		char *args = strchr(elem, '<');
		if (args) {
			size_t len = strlen(args);
			if (args[len - 1] != '>') {
				snprintf(err, n, "missing '>' after options of '%s'", elem);
				ok = false;
				break;
			}
			args[len - 1] = 0;
			*args++ = 0;
		}
		elem = trim(elem);
		const PassInfo *pi = pass_find(elem);
		if (!pi) {
			Suggest sg;
			suggest_init(&sg, elem);
			for (int k = 0; k < NPASSES; k++)
				suggest_add(&sg, pass_tab[k].name);
			snprintf(err, n, "unknown pass '%s'%s (see --list-passes)", elem,
				 suggest_hint(&sg));
			ok = false;
			break;
		}
		p->steps = xrealloc(p->steps, sizeof(PipeStep) * (size_t)(p->n + 1));
		PipeStep *st = &p->steps[p->n++];
		*st = (PipeStep){pi, NULL, 0};
		for (char *a = args; ok && a && *a;) {
			char *comma = strchr(a, ',');
			if (comma)
				*comma = 0;
			char *eq = strchr(a, '=');
			char *key = trim(a), *val = (char *)"true";
			if (eq) {
				*eq = 0;
				key = trim(a);
				val = trim(eq + 1);
			}
			const PassOpt *po = pass_opt_find(pi, key);
			if (!po) {
				int no;
				const PassOpt *all = pass_options(pi, &no);
				Suggest sg;
				suggest_init(&sg, key);
				StrBuf names = {0};
				for (int k = 0; k < no; k++) {
					suggest_add(&sg, all[k].name);
					sb_printf(&names, "%s%s", k ? ", " : "; options: ",
						  all[k].name);
				}
				sb_putc(&names, 0);
				snprintf(err, n, "pass '%s' has no option '%s'%s%s",
					 pi->name, key, suggest_hint(&sg),
					 names.s ? names.s : "");
				sb_free(&names);
				ok = false;
				break;
			}
			if (!pass_opt_check(po, val, err, n)) {
				ok = false;
				break;
			}
			st->args = xrealloc(st->args,
					    sizeof(PassArg) * (size_t)(st->nargs + 1));
			st->args[st->nargs++] = (PassArg){xstrdup(key), xstrdup(val)};
			a = comma ? comma + 1 : NULL;
		}
		if (last)
			break;
		q++;
	}
	free(buf);
	if (!ok)
		pipeline_free(p);
	return ok;
}

void pipeline_print(FILE *f, const Pipeline *p)
{
	for (int i = 0; i < p->n; i++) {
		fprintf(f, "%s%s", i ? "," : "", p->steps[i].pass->name);
		for (int j = 0; j < p->steps[i].nargs; j++)
			fprintf(f, "%c%s=%s", j ? ',' : '<', p->steps[i].args[j].key,
				p->steps[i].args[j].val);
		if (p->steps[i].nargs)
			fputc('>', f);
	}
	fputc('\n', f);
}

const char *pass_opt(const PassCtx *ctx, const char *key)
{
	for (int i = 0; i < ctx->nargs; i++)
		if (strcmp(ctx->args[i].key, key) == 0)
			return ctx->args[i].val;
	const PassInfo *pi = pass_find(ctx->pass);
	const PassOpt *o = pi ? pass_opt_find(pi, key) : NULL;
	if (o)
		return o->dflt;
	pcc_die("pass '%s' asked for undeclared option '%s'", ctx->pass, key);
}

double pass_opt_num(const PassCtx *ctx, const char *key)
{
	double x;
	const char *v = pass_opt(ctx, key);
	return num_parse(v, &x) || bytes_parse(v, &x) ? x : -1;
}

long long pass_opt_int(const PassCtx *ctx, const char *key)
{
	long long v;
	return int_parse(pass_opt(ctx, key), LLONG_MIN, LLONG_MAX, &v) ? v : -1;
}

bool pass_opt_bool(const PassCtx *ctx, const char *key)
{
	return strcmp(pass_opt(ctx, key), "true") == 0;
}

bool search_cut(const PassCtx *ctx, double t0)
{
	return pcc_now() - t0 >= ctx->search_budget;
}

void search_cut_warn(const PassCtx *ctx, double done, double budget)
{
	fprintf(stderr, "pcc: warning: %s: the --search-budget cap of %g s cut "
		"the search after %.3g of %.3g work units; the plan now depends "
		"on this machine's speed and load (raise the cap, or lower "
		"--search-work)\n", ctx->pass, ctx->search_budget, done, budget);
}

int pass_internal_error(const PassCtx *ctx, const char *fmt, ...)
{
	va_list ap;
	FILE *f = ctx->diag ? ctx->diag->out : stderr;
	fprintf(f, "pcc: internal error in pass '%s': ", ctx->pass);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	return EXIT_INTERNAL;
}

int pass_refuse_plan(const PassCtx *ctx, const char *what)
{
	const Op *op = plan_comm_op(ctx->g);
	if (!op)
		return EXIT_OK;
	diag_error(ctx->diag, op->loc, "the graph already has its communication "
		   "(%%%s is a %s): %s", op->name,
		   op_flags(op) & OPF_COMM ? op->type : "replica", what);
	return EXIT_BADINPUT;
}

/* ---- writing files ---------------------------------------------------- */

static bool write_replacing(const char *path,
			    bool (*emit)(FILE *f, const void *arg), const void *arg);

/* Writes straight into path (a device, a pipe, a socket: nothing that a
 * rename could replace, and nothing a partial write could corrupt). */
static bool write_direct(const char *path, bool (*emit)(FILE *f, const void *arg),
			 const void *arg)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	bool ok = emit(f, arg);
	ok = fflush(f) == 0 && ok;
	int e = errno;
	ok = fclose(f) == 0 && ok;
	if (!ok)
		errno = e ? e : EIO;
	return ok;
}

/* ---- the temporary file of the write in progress ----------------------
 * A signal or a crash must not leave OUT.tmpXXXXXX behind: its name is
 * kept here, in one fixed buffer that a signal handler may read
 * (tmp_cleanup, async-signal-safe), from mkstemp until the rename or the
 * unlink.  This and main.c's crash state are pcc's only process-wide
 * mutable state. */
static char live_tmp[4096];
static volatile sig_atomic_t live_tmp_set;

static void tmp_hold(const char *tmp)
{
	size_t n = strlen(tmp);
	if (n >= sizeof live_tmp)
		return; /* no cleanup for a path this long; none is that long */
	memcpy(live_tmp, tmp, n + 1);
	live_tmp_set = 1;
}

static void tmp_release(void)
{
	live_tmp_set = 0;
}

void tmp_cleanup(void)
{
	if (live_tmp_set) {
		live_tmp_set = 0;
		unlink(live_tmp);
	}
}

/* A symbolic link whose target does not exist: the path it names,
 * followed through further links (at most 40, as the kernel does);
 * NULL if path is not such a link.  Malloc'd. */
static char *dangling_target(const char *path)
{
	char *cur = xstrdup(path);
	for (int hop = 0; hop < 40; hop++) {
		struct stat st;
		if (lstat(cur, &st) != 0)
			return hop ? cur : (free(cur), NULL);
		if (!S_ISLNK(st.st_mode) || stat(cur, &st) == 0)
			break;
		char buf[4096];
		ssize_t n = readlink(cur, buf, sizeof buf - 1);
		if (n <= 0)
			break;
		buf[n] = 0;
		const char *slash = strrchr(cur, '/');
		size_t dlen = buf[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
		char *next = xmalloc(dlen + (size_t)n + 1);
		memcpy(next, cur, dlen);
		memcpy(next + dlen, buf, (size_t)n + 1);
		free(cur);
		cur = next;
	}
	free(cur);
	return NULL;
}

bool write_file_atomic(const char *path, bool (*emit)(FILE *f, const void *arg),
		       const void *arg)
{
	if (strcmp(path, "-") == 0) {
		bool ok = emit(stdout, arg);
		return fflush(stdout) == 0 && ok;
	}
	/* Only a regular file (or a new one) is replaced by renaming a
	 * temporary: renaming over /dev/null, as root, would turn it into a
	 * regular file.  A symbolic link is followed, so that the file it
	 * names is replaced and the link stays; a dangling one has its
	 * target created by the rename, so that a failure creates nothing. */
	struct stat st;
	char *real = NULL;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (stat(path, &st) != 0) {
			if (errno != ENOENT || !(real = dangling_target(path)))
				return false;
		} else if (!S_ISREG(st.st_mode)) {
			return write_direct(path, emit, arg);
		} else if (!(real = realpath(path, NULL))) {
			return false;
		}
		path = real;
	}
	bool ok = write_replacing(path, emit, arg);
	free(real);
	return ok;
}

/* The temporary-and-rename write of a regular file.  An existing file
 * keeps its permission bits; one we may not write, or with no write
 * permission for anyone (0444, even for root), is refused rather than
 * replaced.  (The rename
 * gives the path a new inode: other hard links to the old file keep the
 * old contents, docs/pcc.1.) */
static bool write_replacing(const char *path,
			    bool (*emit)(FILE *f, const void *arg), const void *arg)
{
	struct stat old;
	bool exists = stat(path, &old) == 0;
	if (exists && (access(path, W_OK) != 0 || !(old.st_mode & 0222))) {
		if (!(old.st_mode & 0222))
			errno = EACCES; /* read-only to everyone, even root */
		return false;
	}
	size_t n = strlen(path);
	char *tmp = xmalloc(n + 16);
	snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return false;
	}
	tmp_hold(tmp);
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		tmp_release();
		free(tmp);
		errno = e;
		return false;
	}
	static const int BUFSZ = 1 << 20;
	setvbuf(f, NULL, _IOFBF, BUFSZ);
	bool ok = emit(f, arg);
	ok = fflush(f) == 0 && ok;
	ok = !ferror(f) && ok;
	int e = errno;
	ok = fclose(f) == 0 && ok;
	/* mkstemp creates 0600: give the file the old one's mode, else the
	 * usual permissions. */
	mode_t mode;
	if (exists) {
		mode = old.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if (ok && chmod(tmp, mode) != 0)
		ok = false;
	if (ok && rename(tmp, path) != 0)
		ok = false;
	if (!ok) {
		if (!e)
			e = errno;
		unlink(tmp);
		errno = e ? e : EIO;
	}
	tmp_release();
	free(tmp);
	return ok;
}

static bool emit_gir(FILE *f, const void *g)
{
	gir_print(f, g);
	return true;
}

bool write_gir_file(const char *path, const Graph *g)
{
	return write_file_atomic(path, emit_gir, g);
}

/* ---- running ---------------------------------------------------------- */

static uint32_t live_ops(const Graph *g)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		n += !g->ops[i]->dead;
	return n;
}

static int dump(const RunOptions *o, FILE *out, const Graph *g, int nn,
		const char *pass)
{
	const char *dir = o->dump_dir ? o->dump_dir : ".";
	const char *base = o->dump_base ? o->dump_base : "pcc";
	size_t n = strlen(dir) + strlen(base) + strlen(pass) + 32;
	char *path = xmalloc(n);
	snprintf(path, n, "%s/%s.%02d.%s.gir", dir, base, nn, pass);
	bool ok = write_gir_file(path, g);
	if (!ok)
		fprintf(out, "pcc: error: cannot write dump '%s': %s\n", path,
			strerror(errno));
	free(path);
	return ok ? EXIT_OK : EXIT_BADINPUT;
}

char *repro_path(const RunOptions *o)
{
	const char *dir = o->dump_dir ? o->dump_dir : ".";
	const char *base = o->dump_base ? o->dump_base : "pcc";
	size_t n = strlen(dir) + strlen(base) + 16;
	char *path = xmalloc(n);
	snprintf(path, n, "%s/%s.repro.gir", dir, base);
	return path;
}

char *repro_header(const RunOptions *o)
{
	const char *cmd = o->repro_cmd ? o->repro_cmd : "pcc";
	const char *fmt = "# pcc reproducer: the input of a run that failed\n"
			  "# RUN: %s\n";
	size_t n = strlen(fmt) + strlen(cmd) + 1;
	char *h = xmalloc(n);
	snprintf(h, n, fmt, cmd);
	return h;
}

static bool emit_repro(FILE *f, const void *arg)
{
	const RunOptions *o = arg;
	char *h = repro_header(o);
	fputs(h, f);
	free(h);
	fwrite(o->repro_src, 1, o->repro_len, f);
	return true;
}

static void write_repro(const RunOptions *o, FILE *out)
{
	if (!o->repro_src)
		return;
	char *path = repro_path(o);
	if (write_file_atomic(path, emit_repro, o))
		fprintf(out, "pcc: note: reproducer written to '%s'\n", path);
	free(path);
}

/* Creates the dump directory when a dump is asked for (one level, as
 * LLVM's -ir-dump-directory does). */
static int make_dump_dir(const RunOptions *o, FILE *out)
{
	if (!o->dump_dir || !(o->dump_all || o->dump_after))
		return EXIT_OK;
	if (mkdir(o->dump_dir, 0777) == 0 || errno == EEXIST)
		return EXIT_OK;
	fprintf(out, "pcc: error: cannot create dump directory '%s': %s\n",
		o->dump_dir, strerror(errno));
	return EXIT_BADINPUT;
}

int pipeline_run(const Pipeline *p, Graph *g, const CostModel *cost,
		 Diag *d, const RunOptions *o)
{
	FILE *out = d->out;
	int rc = make_dump_dir(o, out);
	if (rc)
		return rc;
	if ((o->dump_all || in_list(o->dump_after, "parse")) &&
	    (rc = dump(o, out, g, 0, "parse")))
		return rc;
	Arena *scratch = arena_new();
	double total = 0;
	Progress prog;
	progress_init(&prog, out, o->progress);
	if (o->time_passes)
		fprintf(out, "%-4s %-14s %12s %10s\n", "#", "pass", "seconds", "ops");
	for (int i = 0; i < p->n; i++) {
		const PipeStep *st = &p->steps[i];
		PassCtx ctx = {
			.g = g, .diag = d, .cost = cost, .scratch = scratch,
			.args = st->args, .nargs = st->nargs,
			.pass = st->pass->name, .best_effort = o->best_effort,
			.search_budget = o->search_budget,
			.search_work = o->search_work, .seed = o->seed,
			.report = o->verbose ? out : NULL,
			.progress = &prog, .judged = o->judged,
			.later = p->steps + i + 1, .nlater = p->n - i - 1,
			.eval = eval_cache_new(g),
		};
		d->pass = st->pass->name;
		double t0 = pcc_now();
		progress_pass_begin(&prog, st->pass->name);
		rc = st->pass->run(&ctx);
		progress_pass_end(&prog);
		long judged, hits, misses;
		eval_cache_stats(ctx.eval, &judged, &hits, &misses);
		if (ctx.report && judged)
			fprintf(ctx.report, "%s: %ld plan%s judged with the pipeline's "
				"comm and order options; batch analysis computed %ld "
				"time%s, reused %ld\n", st->pass->name, judged,
				judged == 1 ? "" : "s", misses, misses == 1 ? "" : "s",
				hits);
		eval_cache_free(ctx.eval);
		double dt = pcc_now() - t0;
		total += dt;
		d->pass = NULL;
		arena_reset(scratch);
		for (uint32_t k = 0; k < g->nops; k++)
			if (g->ops[k]->dead) {
				graph_compact(g);
				break;
			}
		if (o->time_passes)
			fprintf(out, "%-4d %-14s %12.6f %10u\n", i + 1,
				st->pass->name, dt, live_ops(g));
		if (rc == EXIT_INTERNAL)
			write_repro(o, out);
		if (rc)
			break;
		if (o->verify_each) {
			Diag vd = *d;
			vd.nerrors = 0;
			vd.src = NULL; /* locations may be stale after a pass */
			if (graph_verify(g, &vd)) {
				fprintf(out,
					"pcc: internal error: invalid IR after pass '%s'\n",
					st->pass->name);
				write_repro(o, out);
				rc = EXIT_INTERNAL;
				break;
			}
		}
		if ((o->dump_all || in_list(o->dump_after, st->pass->name)) &&
		    (rc = dump(o, out, g, i + 1, st->pass->name)))
			break;
		if (o->stop_after && strcmp(o->stop_after, st->pass->name) == 0)
			break;
	}
	if (o->time_passes)
		fprintf(out, "%-4s %-14s %12.6f %10u\n", "", "total", total,
			live_ops(g));
	arena_free(scratch);
	return rc;
}

/* ---- a test-only pass -------------------------------------------------- */

/* Breaks the IR on purpose, so tests can check that --verify-each catches
 * it and names the pass (LLVM trigger-verifier-error), and that a crash
 * leaves a reproducer.  how=: removed-input (an input points at a removed
 * op), cycle (a control edge closes a cycle), bad-index (an input reads an
 * output its producer does not have), bad-annotation (@device is a
 * number), coll-key (an AllReduce leaves its collective: a key of its
 * own), abort (an internal error: pcc_die). */
int pass_test_break_ir(PassCtx *ctx)
{
	Graph *g = ctx->g;
	const char *how = pass_opt(ctx, "how");
	if (strcmp(how, "abort") == 0)
		pcc_die("test-break-ir<how=abort> was asked to crash");
	if (strcmp(how, "coll-key") == 0) {
		/* the last AllReduce leaves its collective */
		for (uint32_t i = g->nops; i-- > 0;)
			if (!g->ops[i]->dead && strcmp(g->ops[i]->type, "AllReduce") == 0) {
				op_set(g, g->ops[i], "key", val_int(g->arena, 999999));
				return EXIT_OK;
			}
		return EXIT_OK;
	}
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead || !op->nin)
			continue;
		if (strcmp(how, "removed-input") == 0) {
			op->in[0].src->dead = true; /* without rewiring */
		} else if (strcmp(how, "cycle") == 0) {
			Op *src = op->in[0].src;
			Input *in = arena_alloc(g->arena, sizeof(Input) *
							   (src->nin + 1));
			if (src->nin)
				memcpy(in, src->in, sizeof(Input) * src->nin);
			in[src->nin] = (Input){op, 0, true};
			src->in = in;
			src->nin++;
			graph_invalidate(g);
		} else if (strcmp(how, "bad-index") == 0) {
			op->in[0].ctrl = false;
			op->in[0].idx = op->in[0].src->nout;
		} else if (strcmp(how, "bad-annotation") == 0) {
			op_set_ann(g, op, ANN_DEVICE, val_int(g->arena, 7));
		} else {
			fprintf(ctx->diag->out, "pcc: error: test-break-ir: unknown "
				"how=%s\n",
				how);
			return EXIT_USAGE;
		}
		return EXIT_OK;
	}
	return EXIT_OK;
}
