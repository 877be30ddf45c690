/* main.c — the pcc command line (docs/pcc.1).
 *
 *   pcc [options] INPUT [-o OUTPUT]
 *
 * Reads gir or a TensorFlow GraphDef (docs/tf-import.md), attaches a
 * cluster, infers and verifies types, runs a pass
 * pipeline, and writes the result with a backend.  Every output file is
 * written to a temporary file and renamed on success, so an error never
 * leaves a partial or clobbered file.  Exit: 0 ok, 1 bad input, 2 bad
 * usage, 3 infeasible plan, 4 internal error. */
#include "backend/backend.h"
#include "frontend/frontend.h"
#include "passes/passes.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Opts {
	const char *input, *output, *cluster, *profile;
	const char *passes, *olevel;
	const char *emit;
	const char *stats_json, *print_costs;
	const char **emit_opts;
	int nemit_opts;
	bool print_pipeline, list_passes, runtime_flags;
	int max_errors;
	int64_t batch;
	const char **shapes;
	int nshapes;
	bool ignore_devices;
	RunOptions run;
} Opts;

enum {
	OPT_CLUSTER = 256, OPT_PROFILE, OPT_PASSES, OPT_PRINT_PIPELINE,
	OPT_LIST_PASSES, OPT_DUMP_AFTER, OPT_DUMP_AFTER_ALL, OPT_DUMP_DIR,
	OPT_STOP_AFTER, OPT_TIME_PASSES, OPT_VERIFY_EACH, OPT_NO_VERIFY_EACH,
	OPT_STATS_JSON, OPT_PRINT_COSTS, OPT_EMIT, OPT_BEST_EFFORT,
	OPT_SEARCH_BUDGET, OPT_SEARCH_WORK, OPT_SEED, OPT_MAX_ERRORS, OPT_VERSION, OPT_HELP,
	OPT_EMIT_OPT, OPT_RUNTIME_FLAGS, OPT_BATCH, OPT_IGNORE_DEVICES, OPT_INPUT_SHAPE,
	OPT_PROGRESS,
};

static const struct option longopts[] = {
	{"cluster", required_argument, NULL, OPT_CLUSTER},
	{"profile", required_argument, NULL, OPT_PROFILE},
	{"output", required_argument, NULL, 'o'},
	{"passes", required_argument, NULL, OPT_PASSES},
	{"print-pipeline", no_argument, NULL, OPT_PRINT_PIPELINE},
	{"list-passes", no_argument, NULL, OPT_LIST_PASSES},
	{"dump-after", required_argument, NULL, OPT_DUMP_AFTER},
	{"dump-after-all", no_argument, NULL, OPT_DUMP_AFTER_ALL},
	{"dump-dir", required_argument, NULL, OPT_DUMP_DIR},
	{"stop-after", required_argument, NULL, OPT_STOP_AFTER},
	{"time-passes", no_argument, NULL, OPT_TIME_PASSES},
	{"verify-each", no_argument, NULL, OPT_VERIFY_EACH},
	{"no-verify-each", no_argument, NULL, OPT_NO_VERIFY_EACH},
	{"stats-json", required_argument, NULL, OPT_STATS_JSON},
	{"print-costs", required_argument, NULL, OPT_PRINT_COSTS},
	{"emit", required_argument, NULL, OPT_EMIT},
	{"emit-opt", required_argument, NULL, OPT_EMIT_OPT},
	{"runtime-flags", no_argument, NULL, OPT_RUNTIME_FLAGS},
	{"best-effort", no_argument, NULL, OPT_BEST_EFFORT},
	{"search-budget", required_argument, NULL, OPT_SEARCH_BUDGET},
	{"search-work", required_argument, NULL, OPT_SEARCH_WORK},
	{"seed", required_argument, NULL, OPT_SEED},
	{"max-errors", required_argument, NULL, OPT_MAX_ERRORS},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"ignore-devices", no_argument, NULL, OPT_IGNORE_DEVICES},
	{"input-shape", required_argument, NULL, OPT_INPUT_SHAPE},
	{"progress", required_argument, NULL, OPT_PROGRESS},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, OPT_VERSION},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fputs("usage: pcc [options] INPUT [-o OUTPUT]\n"
	      "Compiles a training graph (gir, or a TensorFlow GraphDef: .pbtxt, TF.js\n"
	      "model.json) into a distributed plan for a cluster.  INPUT may be '-' for\n"
	      "standard input.\n"
	      "\n"
	      "Input and output:\n"
	      "      --batch=N           TensorFlow inputs: bind unknown (-1) dimensions to N\n"
	      "                          (default 1)\n"
	      "      --input-shape=NAME=D0,D1,...  TensorFlow inputs: the shape of Placeholder\n"
	      "                          NAME (-1: the batch); repeatable\n"
	      "      --ignore-devices    TensorFlow inputs: do not pin ops to their device fields\n"
	      "  -o, --output=FILE       write the result to FILE (default: stdout; '-' = stdout)\n"
	      "      --cluster=FILE      the cluster (YAML, docs/cluster.md); default: the\n"
	      "                          input's cluster block, else a built-in 2-GPU box\n"
	      "      --profile=FILE      measured op times (YAML, docs/cost-model.md)\n"
	      "      --emit=NAME         output format (see below; default gir)\n"
	      "      --emit-opt=K=V,K2=V2  options of the backend (see below); repeatable\n"
	      "      --stats-json=FILE   simulate the plan; write makespan, bounds, memory as JSON\n"
	      "      --print-costs=FILE  write the cost table as CSV\n"
	      "      --runtime-flags     print the cc flags that build --emit=c output:\n"
	      "                          cc plan.c $(pcc --runtime-flags)\n"
	      "Pipeline:\n"
	      "  -O0, -O1, -O2           named pipelines (default -O1; --print-pipeline shows them)\n"
	      "  -passes=LIST            run exactly LIST, e.g. -passes=simplify,annotate\n"
	      "                          (also --passes=LIST); options: pass<key=val,...>\n"
	      "      --print-pipeline    print the pipeline as a -passes= string and exit\n"
	      "      --list-passes       list passes and their options and exit\n"
	      "      --stop-after=PASS   stop after PASS\n"
	      "      --verify-each       verify the IR after every pass\n"
	      "      --no-verify-each    do not (the default)\n"
	      "      --time-passes       print each pass's time and op count\n"
	      "      --dump-after=A,B    write BASE.NN.PASS.gir after passes A and B ('parse' = 00)\n"
	      "      --dump-after-all    write a dump after parsing and after every pass\n"
	      "      --dump-dir=DIR      directory for dumps (default .)\n"
	      "      --best-effort       place even if memory does not fit\n"
	      "      --search-work=N     work units for each of -O2's searches (default 4e7;\n"
	      "                          docs/passes.md); the plan depends on N only\n"
	      "      --search-budget=S   wall-clock safety cap per search, seconds (default\n"
	      "                          60): warns when it cuts, as the plan then depends\n"
	      "                          on the machine's speed\n"
	      "      --seed=N            seed for randomised searches (default 1)\n"
	      "Other:\n"
	      "      --max-errors=N      stop after N errors (default 20)\n"
	      "  -v, --verbose           one-line report from each pass, and the plan's\n"
	      "                          headline (--emit=summary) at the end\n"
	      "      --progress=WHEN     progress of long searches on stderr: auto (when\n"
	      "                          stderr is a terminal, after ~1 s), always, never\n"
	      "      --version           print the version and exit\n"
	      "  -h, --help              print this help and exit\n"
	      "\n"
	      "Exit status: 0 success, 1 bad input, 2 bad usage, 3 infeasible plan,\n"
	      "4 internal error.\n",
	      f);
	int n;
	const Backend *b = backend_table(&n);
	fputs("\nBackends (--emit):\n", f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "  %-10s %s\n", b[i].name, b[i].desc);
		if (*b[i].options)
			fprintf(f, "  %-10s options: %s\n", "", b[i].options);
	}
}

static void list_passes(void)
{
	int n;
	const PassInfo *p = pass_table(&n);
	for (int i = 0; i < n; i++) {
		printf("%-14s %s\n", p[i].name, p[i].desc);
		int no;
		const PassOpt *po = pass_options(&p[i], &no);
		for (int k = 0; k < no; k++) {
			char what[512];
			pass_opt_describe(&po[k], what, sizeof what);
			printf("%-16s%s=%s  %s\n%-18s(%s)\n", "", po[k].name,
			       po[k].dflt, po[k].help, "", what);
		}
	}
	fputs("\nNamed pipelines:\n", stdout);
	const char *lv[] = {"O0", "O1", "O2"};
	for (int i = 0; i < 3; i++)
		printf("  -%s = -passes=%s\n", lv[i], pipeline_named(lv[i]));
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("pcc: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'pcc --help'.\n", stderr);
	return EXIT_USAGE;
}

/* "unknown option '--emitt=dot'; did you mean '--emit'?" */
static int unknown_option(const char *arg)
{
	const char *w = arg;
	while (*w == '-')
		w++;
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(w, "="), w);
	Suggest sg;
	suggest_init(&sg, name);
	for (const struct option *lo = longopts; lo->name; lo++)
		suggest_add(&sg, lo->name);
	const char *best = suggest_best(&sg);
	fprintf(stderr, "pcc: error: unknown option '%s'", arg);
	if (best)
		fprintf(stderr, "; did you mean '--%s'?", best);
	fputs("\nTry 'pcc --help'.\n", stderr);
	return EXIT_USAGE;
}

/* path as a key for "the same file": the directory's real path and the
 * name (the file itself may not exist yet); malloc'd. */
static char *path_key(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path))
			  : strdup(".");
	char *real = realpath(dir, NULL);
	const char *name = slash ? slash + 1 : path;
	size_t n = strlen(real ? real : dir) + strlen(name) + 2;
	char *key = xmalloc(n);
	snprintf(key, n, "%s/%s", real ? real : dir, name);
	free(real);
	free(dir);
	return key;
}

/* Do paths a and b name one regular file (or one that does not exist
 * yet)?  Devices (/dev/null) and '-' are never the same. */
static bool same_file(const char *a, const char *b)
{
	if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
		return false;
	struct stat sa, sb;
	bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
	if (ea && eb)
		return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
		       sa.st_ino == sb.st_ino;
	if (ea || eb)
		return false;
	char *ka = path_key(a), *kb = path_key(b);
	bool same = strcmp(ka, kb) == 0;
	free(ka);
	free(kb);
	return same;
}

/* No output may overwrite an input (the graph, --cluster, --profile) or
 * another output: a slip such as --stats-json=model.gir would destroy
 * the model.  Checked before anything is read or written. */
static int check_paths(const Opts *o)
{
	const char *name[6] = {"-o", "--stats-json", "--print-costs", NULL,
			       "--cluster", "--profile"};
	const char *path[6] = {o->output, o->stats_json, o->print_costs, o->input,
			       o->cluster, o->profile};
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; path[i] && j < 6; j++)
			if (path[j] && same_file(path[i], path[j])) {
				fprintf(stderr, "pcc: error: %s '%s' is %s%s '%s': pcc "
					"would overwrite it\nTry 'pcc --help'.\n",
					name[i], path[i], j == 3 ? "" : "the file of ",
					j == 3 ? "the input file" : name[j], path[j]);
				return EXIT_USAGE;
			}
	return EXIT_OK;
}

/* --emit-opt=a=1,b=2: one option per comma-separated KEY=VALUE; a comma
 * not followed by KEY= belongs to the value (weights_file=a,b.bin). */
static void add_emit_opts(Opts *o, const char *arg, Arena *a)
{
	const char *p = arg;
	while (*p) {
		const char *q = p;
		for (;;) {
			q += strcspn(q, ",");
			if (!*q)
				break;
			size_t k = strspn(q + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij"
					  "klmnopqrstuvwxyz0123456789_-");
			if (k && q[1 + k] == '=')
				break;
			q++;
		}
		o->emit_opts = xrealloc(o->emit_opts, sizeof(char *) *
					(size_t)(o->nemit_opts + 1));
		o->emit_opts[o->nemit_opts++] = arena_strndup(a, p, (size_t)(q - p));
		p = *q ? q + 1 : q;
	}
	if (!*arg) {
		o->emit_opts = xrealloc(o->emit_opts, sizeof(char *) *
					(size_t)(o->nemit_opts + 1));
		o->emit_opts[o->nemit_opts++] = arg;
	}
}

static int parse_args(int argc, char **argv, Opts *o, Arena *a)
{
	/* LLVM spells '-passes=' with one dash; so do we. */
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "-passes=", 8) == 0)
			argv[i] = arena_printf(a, "-%s", argv[i]);
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:O:vh", longopts, NULL)) != -1) {
		double x;
		long long v;
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'O':
			if (strcmp(optarg, "0") && strcmp(optarg, "1") &&
			    strcmp(optarg, "2"))
				return usage_error("unknown optimisation level '-O%s'",
						   optarg);
			o->olevel = optarg;
			break;
		case 'v': o->run.verbose = true; break;
		case 'h':
		case OPT_HELP: usage(stdout); exit(EXIT_OK);
		case OPT_VERSION:
			printf("pcc %s (gir %d)\n", PCC_VERSION, GIR_VERSION);
			exit(EXIT_OK);
		case OPT_CLUSTER: o->cluster = optarg; break;
		case OPT_PROFILE: o->profile = optarg; break;
		case OPT_PASSES: o->passes = optarg; break;
		case OPT_PRINT_PIPELINE: o->print_pipeline = true; break;
		case OPT_LIST_PASSES: o->list_passes = true; break;
		case OPT_DUMP_AFTER: o->run.dump_after = optarg; break;
		case OPT_DUMP_AFTER_ALL: o->run.dump_all = true; break;
		case OPT_DUMP_DIR: o->run.dump_dir = optarg; break;
		case OPT_STOP_AFTER: o->run.stop_after = optarg; break;
		case OPT_TIME_PASSES: o->run.time_passes = true; break;
		case OPT_VERIFY_EACH: o->run.verify_each = true; break;
		case OPT_NO_VERIFY_EACH: o->run.verify_each = false; break;
		case OPT_STATS_JSON: o->stats_json = optarg; break;
		case OPT_PRINT_COSTS: o->print_costs = optarg; break;
		case OPT_EMIT: o->emit = optarg; break;
		case OPT_EMIT_OPT: add_emit_opts(o, optarg, a); break;
		case OPT_PROGRESS:
			if (!progress_mode_parse(optarg, &o->run.progress))
				return usage_error("bad --progress '%s' (auto, always "
						   "or never)", optarg);
			break;
		case OPT_RUNTIME_FLAGS: o->runtime_flags = true; break;
		case OPT_BEST_EFFORT: o->run.best_effort = true; break;
		case OPT_SEARCH_BUDGET:
			if (!num_parse(optarg, &x) || x < 0)
				return usage_error("bad --search-budget '%s' (seconds: "
						   "a finite number >= 0)", optarg);
			o->run.search_budget = x;
			break;
		case OPT_SEARCH_WORK:
			if (!num_parse(optarg, &x) || x < 0)
				return usage_error("bad --search-work '%s' (work units: "
						   "a finite number >= 0)", optarg);
			o->run.search_work = x;
			break;
		case OPT_SEED:
			if (!int_parse(optarg, 0, 4294967295LL, &v))
				return usage_error("bad --seed '%s' (an integer in "
						   "[0,4294967295])", optarg);
			o->run.seed = (unsigned)v;
			break;
		case OPT_BATCH:
			if (!int_parse(optarg, 1, 1000000000, &v))
				return usage_error("bad --batch '%s' (an integer in "
						   "[1,1000000000])", optarg);
			o->batch = v;
			break;
		case OPT_IGNORE_DEVICES: o->ignore_devices = true; break;
		case OPT_INPUT_SHAPE:
			if (!tf_shape_spec_ok(optarg))
				return usage_error("bad --input-shape '%s' (NAME=D0,D1,...)",
						   optarg);
			o->shapes = arena_realloc(a, o->shapes,
						  sizeof(char *) * (size_t)o->nshapes,
						  sizeof(char *) * (size_t)(o->nshapes + 1));
			o->shapes[o->nshapes++] = optarg;
			break;
		case OPT_MAX_ERRORS:
			if (!int_parse(optarg, 1, 1000000, &v))
				return usage_error("bad --max-errors '%s' (an integer in "
						   "[1,1000000])", optarg);
			o->max_errors = (int)v;
			break;
		case ':':
			return usage_error("option '%s' needs an argument",
					   argv[optind - 1]);
		default:
			return unknown_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->input = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (o->passes && o->olevel)
		return usage_error("%s", "give either -passes= or -O, not both");
	const char *out = o->output ? o->output : "-";
	if (strcmp(out, "-") == 0 && ((o->stats_json && strcmp(o->stats_json, "-") == 0) ||
				      (o->print_costs && strcmp(o->print_costs, "-") == 0)))
		return usage_error("%s", "--stats-json=- and --print-costs=- need -o FILE: "
				   "the output already goes to standard output");
	return check_paths(o);
}

/* Does every live op have @device (so the simulator can run it)? */
static bool graph_placed(const Graph *g)
{
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead && !op_ann_str(g, g->ops[i], ANN_DEVICE))
			return false;
	return g->nops > 0;
}

/* Simulates g with its errors discarded: true when it ran. */
static bool sim_quiet(Graph *g, const CostModel *cost, SimResult *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return false;
	Diag d;
	diag_init(&d, f, "simulate", NULL, 0);
	bool ok = sim_run(g, cost, r, &d) == EXIT_OK;
	fclose(f);
	free(buf);
	return ok;
}

/* "dir/model.gir" -> "model" (arena string) */
static const char *dump_base(Arena *a, const char *input)
{
	if (strcmp(input, "-") == 0)
		return "stdin";
	const char *b = strrchr(input, '/');
	b = b ? b + 1 : input;
	const char *dot = strrchr(b, '.');
	return arena_strndup(a, b, dot && dot != b ? (size_t)(dot - b) : strlen(b));
}

/* The command line as a shell would take it back: words with characters
 * special to the shell are single-quoted. */
static const char *join_args(Arena *a, int argc, char **argv)
{
	StrBuf b = {0};
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];
		if (i)
			sb_putc(&b, ' ');
		if (*w && !w[strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
				      "nopqrstuvwxyz0123456789_-+=/.,:@%")]) {
			sb_puts(&b, w);
			continue;
		}
		sb_putc(&b, '\'');
		for (; *w; w++)
			if (*w == '\'')
				sb_puts(&b, "'\\''");
			else
				sb_putc(&b, *w);
		sb_putc(&b, '\'');
	}
	sb_putc(&b, 0);
	const char *s = arena_strdup(a, b.s);
	sb_free(&b);
	return s;
}

typedef struct EmitArg {
	const Backend *b;
	EmitCtx ctx;
	bool failed;             /* the backend refused (and said why) */
} EmitArg;

static bool emit_backend(FILE *f, const void *arg)
{
	EmitArg *e = (EmitArg *)arg;   /* defined non-const in run() */
	e->failed = !e->b->emit(f, &e->ctx);
	return !e->failed;
}

typedef struct StatsArg {
	const Graph *g;
	const CostModel *m;
	const SimResult *r;
} StatsArg;

static bool emit_stats(FILE *f, const void *arg)
{
	const StatsArg *s = arg;
	sim_stats_json(f, s->g, s->m, s->r);
	return true;
}

/* refused: set by fn when it failed for a reason it reported itself. */
static int write_out(const char *path, bool (*fn)(FILE *, const void *),
		     const void *arg, const bool *failed)
{
	if (write_file_atomic(path, fn, arg))
		return EXIT_OK;
	if (failed && *failed)
		return EXIT_BADINPUT;
	fprintf(stderr, "pcc: error: cannot write '%s': %s\n", path,
		strerror(errno));
	return EXIT_BADINPUT;
}

/* ---- the crash reproducer ---------------------------------------------
 * On an internal error that kills pcc (pcc_die aborts; a wild pointer
 * faults) the input and the command line are written to
 * DIR/BASE.repro.gir, as for an internal error a pass reports, and pcc
 * exits with status 4.  The handler may only make async-signal-safe
 * calls, so what it writes is prepared beforehand, in the one piece of
 * process-wide state pcc has: set once by crash_arm, read by the handler. */
static struct Crash {
	char *path, *header;
	const char *src;
	size_t len;
} crash;

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void on_crash(int sig)
{
	(void)sig;
	tmp_cleanup();
	int fd = open(crash.path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd >= 0) {
		write_all(fd, crash.header, strlen(crash.header));
		write_all(fd, crash.src, crash.len);
		close(fd);
		const char *m = "pcc: note: reproducer written to '";
		write_all(2, m, strlen(m));
		write_all(2, crash.path, strlen(crash.path));
		write_all(2, "'\n", 2);
	}
	_exit(EXIT_INTERNAL);
}

static void crash_arm(const RunOptions *ro)
{
	crash = (struct Crash){repro_path(ro), repro_header(ro), ro->repro_src,
			       ro->repro_len};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_crash;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGABRT, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
#ifndef __SANITIZE_ADDRESS__
	/* under ASan its own report of a bad access is worth more */
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
#endif
}

static void crash_disarm(void)
{
	free(crash.path);
	free(crash.header);
	crash = (struct Crash){0};
}

/* --time-passes: the phases around the pipeline, and the peak RSS. */
static void phase(const Opts *o, const char *name, double *t0)
{
	double t = pcc_now();
	if (o->run.time_passes)
		fprintf(stderr, "%-4s %-14s %12.6f\n", "", name, t - *t0);
	*t0 = t;
}

static void report_rss(const Opts *o)
{
	struct rusage ru;
	if (!o->run.time_passes || getrusage(RUSAGE_SELF, &ru) != 0)
		return;
	double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	fprintf(stderr, "%-4s %-14s %12.6f\n", "", "cpu (user+sys)", cpu);
	fprintf(stderr, "%-4s %-14s %12.1f MiB\n", "", "peak RSS",
		(double)ru.ru_maxrss / 1024.0);
}

#ifndef PCC_RT_LINK_FLAGS
#define PCC_RT_LINK_FLAGS ""
#endif

/* --runtime-flags: found from the executable's own path (/proc/self/exe,
 * else argv[0]), as llvm-config does. */
static int runtime_flags(const char *argv0)
{
	char exe[4096], msg[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0)
		exe[n] = 0;
	else
		snprintf(exe, sizeof exe, "%s", argv0);
	if (c_runtime_flags(stdout, exe, PCC_RT_LINK_FLAGS, msg, sizeof msg))
		return EXIT_OK;
	fprintf(stderr, "pcc: error: %s\n", msg);
	return EXIT_BADINPUT;
}

/* problem_lower_bound_s: the bound of the input graph once simplify has
 * dropped what no plan runs (Identity-like ops, ops no sink needs), on a
 * copy (docs/simulator.md). */
static double problem_bound(Graph *g, const CostModel *cost, Diag *d)
{
	Graph *h = graph_clone(g);
	Arena *scratch = arena_new();
	CostModel m = *cost;
	m.g = h;
	m.memo = NULL;
	m.nmemo = 0;
	PassCtx ctx = {.g = h, .diag = d, .cost = &m, .scratch = scratch,
		       .pass = "simplify"};
	double b = pass_simplify(&ctx) == EXIT_OK ? sim_bound_of(h, &m, true) : 0;
	arena_free(scratch);
	graph_free(h);
	return b;
}

/* One run of pcc: what the steps of run() share. */
typedef struct Job {
	Opts o;
	Pipeline pipe;
	const Backend *be;
	const char **opts;       /* the backend's resolved options */
	int nopts;
	char *src;               /* the input's text (diagnostics point into it) */
	size_t srclen;
	bool mapped;
	char *repro;             /* an imported input printed as gir, or NULL */
	bool is_gir;             /* the input is gir (else imported) */
	Graph *g;
	Diag d;
	CostModel cost;
	SimJudged judged;
} Job;

/* An unknown name, with the closest of names[0..n) as a hint. */
static int unknown_name(const char *fmt, const char *name,
			const char *(*name_of)(int i), int n)
{
	Suggest sg;
	suggest_init(&sg, name);
	for (int i = 0; i < n; i++)
		suggest_add(&sg, name_of(i));
	fprintf(stderr, fmt, name, suggest_hint(&sg));
	fputs("Try 'pcc --help'.\n", stderr);
	return EXIT_USAGE;
}

static const char *pass_name_at(int i)
{
	int n;
	return pass_table(&n)[i].name;
}

static const char *backend_name_at(int i)
{
	int n;
	return backend_table(&n)[i].name;
}

/* Whether j's pipeline runs the pass called name. */
static bool pipe_runs(const Job *j, const char *name, size_t len)
{
	for (int i = 0; i < j->pipe.n; i++) {
		const char *p = j->pipe.steps[i].pass->name;
		if (strlen(p) == len && strncmp(p, name, len) == 0)
			return true;
	}
	return false;
}

/* One name of --stop-after or --dump-after: a pass the pipeline runs
 * (or, for a dump, 'parse').  A name pcc does not know, or a pass this
 * pipeline does not run, would stop nowhere or dump nothing, silently.
 * Returns -1 when it is one, else pcc's exit status, said. */
static int check_pass_name(const Job *j, const char *opt, const char *name,
			   size_t len)
{
	char *buf = xmalloc(len + 1);
	memcpy(buf, name, len);
	buf[len] = 0;
	int n, rc = -1;
	if (!pass_find(buf)) {
		char fmt[96];
		pass_table(&n);
		snprintf(fmt, sizeof fmt, "pcc: error: unknown pass '%%s' in %s%%s\n",
			 opt);
		rc = unknown_name(fmt, buf, pass_name_at, n);
	} else if (!pipe_runs(j, name, len)) {
		fprintf(stderr, "pcc: error: %s=%s: the pipeline does not run "
			"'%s'; it runs\n  -passes=", opt, buf, buf);
		pipeline_print(stderr, &j->pipe);
		fputs("Try 'pcc --help'.\n", stderr);
		rc = EXIT_USAGE;
	}
	free(buf);
	return rc;
}

/* --stop-after and every name of --dump-after (comma-separated). */
static int check_pass_names(const Job *j)
{
	const RunOptions *r = &j->o.run;
	int rc;
	if (r->stop_after &&
	    (rc = check_pass_name(j, "--stop-after", r->stop_after,
				  strlen(r->stop_after))) >= 0)
		return rc;
	for (const char *p = r->dump_after; p && *p;) {
		size_t m = strcspn(p, ",");
		if (!(m == 5 && strncmp(p, "parse", 5) == 0) &&
		    (rc = check_pass_name(j, "--dump-after", p, m)) >= 0)
			return rc;
		p += m + (p[m] != 0);
	}
	return -1;
}

/* The command line into j: the pipeline, the backend and its options.
 * Returns -1 to go on, else pcc's exit status (the options that only
 * print, and usage errors). */
static int configure(Job *j, int argc, char **argv, Arena *a)
{
	Opts *o = &j->o;
	*o = (Opts){.output = "-", .emit = "gir", .max_errors = 20};
	o->run.search_budget = 60;
	o->run.search_work = 4e7;
	o->run.seed = 1;
	j->judged = (SimJudged){NULL, 0, -1};
	o->run.judged = &j->judged;
	int rc = parse_args(argc, argv, o, a);
	if (rc)
		return rc;
	if (o->list_passes) {
		list_passes();
		return EXIT_OK;
	}
	if (o->runtime_flags)
		return runtime_flags(argv[0]);
	const char *pstr = o->passes;
	if (!pstr)
		pstr = pipeline_named(o->olevel ? (o->olevel[0] == '0' ? "O0" :
						   o->olevel[0] == '1' ? "O1" : "O2")
						: "O1");
	char err[512];
	if (!pipeline_parse(pstr, &j->pipe, err, sizeof err))
		return usage_error("%s", err);
	if (o->print_pipeline) {
		fputs("-passes=", stdout);
		pipeline_print(stdout, &j->pipe);
		pipeline_free(&j->pipe);
		return EXIT_OK;
	}
	int n;
	if ((rc = check_pass_names(j)) >= 0) {
		pipeline_free(&j->pipe);
		return rc;
	}
	if (!(j->be = backend_find(o->emit))) {
		pipeline_free(&j->pipe);
		backend_table(&n);
		return unknown_name("pcc: error: unknown backend '%s'%s (see --help)\n",
				    o->emit, backend_name_at, n);
	}
	j->opts = backend_resolve_opts(j->be, o->emit_opts, o->nemit_opts, a,
				       &j->nopts, err, sizeof err);
	free(o->emit_opts);
	if (!j->opts) {
		pipeline_free(&j->pipe);
		return usage_error("%s", err);
	}
	if (!o->input) {
		pipeline_free(&j->pipe);
		return usage_error("%s", "no input file");
	}
	return -1;
}

/* A file's text (malloc'd), d set up to report on it; or NULL, said. */
/* A side input (--cluster, --profile): its text, and d ready for its
 * diagnostics under --max-errors. */
static char *read_input(const Job *j, const char *path, size_t *len, Diag *d)
{
	char *text = read_file(path, len);
	if (text) {
		diag_init(d, stderr, path, text, *len);
		d->max_errors = j->o.max_errors;
	} else
		fprintf(stderr, "pcc: error: cannot read '%s': %s\n", path,
			read_error(errno));
	return text;
}

/* Reads and parses the input graph (parse_any_graph picks the reader),
 * arming the crash reproducer with its text. */
static int read_graph(Job *j, Arena *a, const char *cmdline, double *t0)
{
	Opts *o = &j->o;
	j->src = map_file(o->input, &j->srclen, &j->mapped);
	if (!j->src) {
		fprintf(stderr, "pcc: error: cannot read '%s': %s\n", o->input,
			read_error(errno));
		return EXIT_BADINPUT;
	}
	o->run.dump_base = dump_base(a, o->input);
	o->run.repro_src = j->src;
	o->run.repro_len = j->srclen;
	o->run.repro_cmd = cmdline;
	crash_arm(&o->run);
	const char *name = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
	size_t tlen = j->srclen;
	const char *text = skip_bom(j->src, &tlen);
	diag_init(&j->d, stderr, name, text, tlen);
	j->d.max_errors = o->max_errors;
	TfImportOptions tfo = {o->batch, o->shapes, o->nshapes};
	j->is_gir = input_kind(o->input, text, tlen) == IN_GIR;
	j->g = parse_any_graph(o->input, name, text, tlen, &tfo, &j->d);
	phase(o, "read+parse", t0);
	return j->g ? EXIT_OK : EXIT_BADINPUT;
}

/* --cluster, else the graph's own, else the built-in default. */
static int attach_cluster(Job *j)
{
	Graph *g = j->g;
	const char *path = j->o.cluster;
	if (!path) {
		if (!g->cluster) {
			g->cluster = cluster_default(g->arena);
			fprintf(stderr,
				"pcc: note: no cluster given; using the built-in default "
				"'%s' (see docs/cluster.md)\n", g->cluster->name);
		}
		return EXIT_OK;
	}
	size_t len;
	Diag cd;
	char *text = read_input(j, path, &len, &cd);
	if (!text)
		return EXIT_BADINPUT;
	Cluster *c = cluster_parse_yaml(g->arena, path, text, len, &cd);
	free(text);
	if (!c)
		return EXIT_BADINPUT;
	g->cluster = c;
	return EXIT_OK;
}

/* -O plans a training graph.  Run over a plan, comm would move the
 * Transfers' values again (a Transfer of a Transfer on one device): a
 * plan is refused, unless -passes= names what to run on it (comm and
 * the passes that judge plans with it refuse one themselves). */
static int refuse_plan(Job *j)
{
	const Op *planned = j->o.passes ? NULL : plan_op(j->g);
	if (!planned)
		return EXIT_OK;
	diag_error(&j->d, planned->loc, "the input is already a plan (%%%s "
		   "is a %s); -O%s plans a training graph: give the "
		   "graph it was made from, or run chosen passes on the "
		   "plan with -passes= (e.g. -passes=order)",
		   planned->name,
		   op_flags(planned) & OPF_COMM ? planned->type
		   : "replica or partition of an input op",
		   j->o.olevel ? j->o.olevel : "1");
	return EXIT_BADINPUT;
}

/* A reproducer must be gir: an imported graph's, as printed.  The
 * input's text stays: diagnostics show its lines. */
static void repro_as_gir(Job *j)
{
	size_t blen = 0;
	FILE *mf = open_memstream(&j->repro, &blen);
	if (!mf)
		return;
	gir_print(mf, j->g);
	fclose(mf);
	j->o.run.repro_src = j->repro;
	j->o.run.repro_len = blen;
	crash_disarm();
	crash_arm(&j->o.run);
}

/* --profile into the cost model. */
static int read_profile(Job *j)
{
	const char *path = j->o.profile;
	if (!path)
		return EXIT_OK;
	size_t len;
	Diag pd;
	char *text = read_input(j, path, &len, &pd);
	if (!text)
		return EXIT_BADINPUT;
	j->cost.prof = profile_parse(j->g->arena, path, text, len, &pd);
	profile_check(j->cost.prof, j->g, &pd);
	free(text);
	return j->cost.prof ? EXIT_OK : EXIT_BADINPUT;
}

/* A plan of -O0/-O1/-O2 that the simulator finds over a device's memory
 * (its passes judged it by estimates only: -O0's data parallelism, a
 * graph too large for the hybrid's final judge) is refused as the judge
 * refuses one: exit 3 with the per-device peaks, the output untouched,
 * unless --best-effort. */
static int refuse_oom(const Graph *g, const SimResult *r)
{
	const Cluster *c = g->cluster;
	int over = 0;
	for (int d = 0; c && d < r->ndevs && d < c->ndevs; d++)
		over += r->peak_mem[d] > c->types[c->devs[d].type].memory;
	if (!over)
		return EXIT_OK;
	fprintf(stderr, "pcc: error: the plan does not fit in the memory of "
		"cluster '%s' (simulated peak over capacity on %d device%s):\n",
		c->name, over, over > 1 ? "s" : "");
	cluster_mem_report(stderr, c, NULL, r->ndevs < c->ndevs ? r->ndevs : c->ndevs,
			   r->peak_mem);
	fputs("pcc: note: --best-effort writes it anyway\n", stderr);
	return EXIT_INFEASIBLE;
}

/* After the pipeline: the simulation where an output needs it (-v's
 * headline, a named pipeline's memory check), then --stats-json,
 * --print-costs and the output. */
static int simulate_and_emit(Job *j, double pbound)
{
	Opts *o = &j->o;
	Graph *g = j->g;
	double t0 = pcc_now();
	SimResult sim = {0};
	bool simulated = false;
	int rc = EXIT_OK;
	if (o->stats_json || j->be->needs_sim) {
		if ((rc = sim_run(g, &j->cost, &sim, &j->d)))
			return rc;
		sim.lower_bound = sim_bound_of(g, &j->cost, false);
		simulated = true;
		sim.problem_bound = pbound;
		phase(o, "simulate", &t0);
	} else if ((o->run.verbose || (!o->passes && !o->run.best_effort)) &&
		   graph_placed(g)) {
		/* for -v's headline, and for the memory check of a named
		 * pipeline's plan: a plan the simulator refuses is still
		 * written, without a headline */
		simulated = sim_quiet(g, &j->cost, &sim);
		if (simulated)
			sim.lower_bound = sim_bound_of(g, &j->cost, false);
		sim.problem_bound = pbound;
		phase(o, "simulate", &t0);
	}
	if (simulated && !o->passes && !o->run.best_effort &&
	    (rc = refuse_oom(g, &sim))) {
		sim_free(&sim);
		return rc;
	}
	if (o->stats_json) {
		StatsArg sa = {g, &j->cost, &sim};
		rc = write_out(o->stats_json, emit_stats, &sa, NULL);
	}
	if (!rc && o->print_costs) {
		EmitArg ea = {backend_find("costs"), {g, &j->cost, NULL, NULL, 0, NULL, NULL}, false};
		rc = write_out(o->print_costs, emit_backend, &ea, &ea.failed);
	}
	if (!rc) {
		EmitArg ea = {j->be, {g, &j->cost, simulated ? &sim : NULL, j->opts,
				      j->nopts, o->output, &j->judged}, false};
		rc = write_out(o->output, emit_backend, &ea, &ea.failed);
		phase(o, "emit", &t0);
	}
	report_rss(o);
	if (!rc && simulated && o->run.verbose)
		summary_headline(stderr, "pcc: ", g, &sim, &j->judged);
	if (simulated)
		sim_free(&sim);
	return rc;
}

static int run(int argc, char **argv, Arena *a)
{
	const char *cmdline = join_args(a, argc, argv);  /* as given */
	Job j = {0};
	int rc = configure(&j, argc, argv, a);
	if (rc >= 0)
		return rc;
	double t0 = pcc_now();
	if ((rc = read_graph(&j, a, cmdline, &t0)) || (rc = attach_cluster(&j)))
		goto out;
	Graph *g = j.g;
	if ((!j.o.ignore_devices && tf_pin_devices(g, &j.d)) ||
	    graph_infer_types(g, &j.d) || graph_verify(g, &j.d)) {
		rc = EXIT_BADINPUT;
		goto out;
	}
	if ((rc = refuse_plan(&j)))
		goto out;
	phase(&j.o, "infer+verify", &t0);
	if (!j.is_gir)
		repro_as_gir(&j);
	j.cost = (CostModel){g, g->cluster, NULL, NULL, 0};
	if ((rc = read_profile(&j)))
		goto out;
	/* The bound of the problem itself, before any pass changes it. */
	double pbound = j.o.stats_json || j.be->needs_sim || j.o.run.verbose
		? problem_bound(g, &j.cost, &j.d) : 0;
	rc = pipeline_run(&j.pipe, g, &j.cost, &j.d, &j.o.run);
	if (!rc)
		rc = simulate_and_emit(&j, pbound);
out:
	pipeline_free(&j.pipe);
	graph_free(j.g);
	crash_disarm();
	free(j.repro);
	if (j.src)
		unmap_file(j.src, j.srclen, j.mapped);
	sim_judged_free(&j.judged);
	return rc;
}

/* SIGINT, SIGTERM, SIGHUP, SIGXFSZ (a file over ulimit -f): remove the
 * temporary file of a write in progress, then die of the signal as if
 * pcc had not caught it. */
static void on_stop(int sig)
{
	tmp_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void stop_arm(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGXFSZ, &sa, NULL);
	atexit(tmp_cleanup); /* an exit() from deep inside a write */
}

int main(int argc, char **argv)
{
	stop_arm();
	Arena *a = arena_new();
	char **args = xmalloc(sizeof(char *) * (size_t)(argc + 1));
	memcpy(args, argv, sizeof(char *) * (size_t)(argc + 1));
	int rc = run(argc, args, a);
	free(args);
	arena_free(a);
	return rc;
}
