/* progress.c — progress of long searches on stderr (--progress).
 *
 * One small API for every searching pass: pass_progress(ctx, phase,
 * done, budget, best) after each evaluation.  The pass manager owns one
 * Progress per run and brackets every pass with progress_pass_begin and
 * progress_pass_end.  On a terminal (mode auto, stderr a TTY) nothing is
 * shown until the pass has run for PROGRESS_DELAY seconds; then one line
 * is redrawn in place ("\r", erase to the end of the line) at most every
 * PROGRESS_PERIOD seconds and erased when the pass ends.  With
 * --progress=always and stderr not a terminal (a file, a pipe) each
 * update is a line of its own, from the first call and at most every
 * PROGRESS_PERIOD seconds, and the pass's last state is written as a
 * final line when it ends, so logs hold the outcome.  Nothing is ever
 * written to standard output.  A call costs one clock read. */
#include "passes.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

enum { PROGRESS_LINE = 160 };
static const double PROGRESS_DELAY = 1.0, PROGRESS_PERIOD = 0.1;

bool progress_mode_parse(const char *s, int *mode)
{
	static const char *const names[] = {"auto", "always", "never"};
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*mode = i;
			return true;
		}
	return false;
}

void progress_init(Progress *p, FILE *out, int mode)
{
	memset(p, 0, sizeof *p);
	p->out = out;
	p->tty = out && isatty(fileno(out));
	p->on = out && (mode == PROGRESS_ALWAYS || (mode == PROGRESS_AUTO && p->tty));
	p->delay = mode == PROGRESS_ALWAYS ? 0 : PROGRESS_DELAY;
}

void progress_pass_begin(Progress *p, const char *pass)
{
	p->pass = pass;
	p->t0 = p->last = pcc_now();
	p->shown = p->called = false;
}

static void draw(Progress *p, bool final)
{
	char line[PROGRESS_LINE];
	int n = snprintf(line, sizeof line, "pcc: progress: %s: %s %ld", p->pass,
			 p->phase ? p->phase : "", p->done);
	if (p->budget > 0 && n > 0 && (size_t)n < sizeof line)
		n += snprintf(line + n, sizeof line - (size_t)n, "/%ld", p->budget);
	if (n > 0 && (size_t)n < sizeof line)
		n += snprintf(line + n, sizeof line - (size_t)n, " evaluations");
	if (isfinite(p->best) && p->best > 0 && n > 0 && (size_t)n < sizeof line)
		snprintf(line + n, sizeof line - (size_t)n, ", best plan %.4g %s (%s)",
			 p->best < 1 ? p->best * 1e3 : p->best, p->best < 1 ? "ms" : "s",
			 p->label ? p->label : "simulated");
	if (p->tty)
		fprintf(p->out, "\r\033[K%s", line);
	else
		fprintf(p->out, "%s%s\n", line, final ? " (done)" : "");
	fflush(p->out);
	p->shown = true;
}

void progress_pass_end(Progress *p)
{
	if (!p->on || !p->called)
		return;
	if (p->tty && p->shown) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
	} else if (!p->tty) {
		draw(p, true);
	}
	p->pass = NULL;
}

void pass_progress_clear(const PassCtx *ctx)
{
	Progress *p = ctx->progress;
	if (p && p->on && p->tty && p->shown) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
		p->shown = false;
	}
}

void pass_progress(const PassCtx *ctx, const char *phase, const char *label,
		   long done, long budget, double best)
{
	Progress *p = ctx->progress;
	if (!p || !p->on || !p->pass)
		return;
	p->called = true;
	p->phase = phase;
	p->label = label;
	p->done = done;
	p->budget = budget;
	p->best = best;
	double t = pcc_now();
	if (t - p->t0 < p->delay || (p->shown && t - p->last < PROGRESS_PERIOD))
		return;
	p->last = t;
	draw(p, false);
}
