#include "core/progress.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "core/global.h"

/* Live redraws: the least number of seconds between two. */
#define LIVE_S 0.25

/* Per thread: documents run in parallel each keep their own. */
static _Thread_local struct lp_progress *current; /* the progress lines are about */
static _Thread_local size_t tokens;  /* lp_progress_add_tokens, in all */
static _Thread_local char stage[64];
static _Thread_local lp_progress_observer observer; /* lp_progress_observe */
static _Thread_local void *observer_ctx;

void lp_progress_observe(lp_progress_observer fn, void *ctx)
{
	observer = fn;
	observer_ctx = ctx;
}

static void notify(const struct lp_progress *p, int ended)
{
	if (observer)
		observer(observer_ctx, p, ended, stage, tokens);
}

double lp_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void lp_progress_enable(int mode)
{
	lp_global.progress_mode = mode;
}

int lp_progress_enabled(void)
{
	if (lp_global.progress_mode < 0)
		return isatty(STDERR_FILENO);
	return lp_global.progress_mode;
}

int lp_progress_live(void)
{
	return isatty(STDERR_FILENO);
}

const char *lp_progress_format_time(double seconds, char *buf, size_t cap)
{
	unsigned long s = seconds > 0 ? (unsigned long)(seconds + 0.5) : 0;

	if (s >= 3600)
		snprintf(buf, cap, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, cap, "%lu:%02lu", s / 60, s % 60);
	return buf;
}

/* Columns of the terminal on stderr, less one so the cursor never wraps. */
static size_t line_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		return (size_t)ws.ws_col - 1;
	return 79;
}

/* The line's text, without a line end. */
static void format_line(const struct lp_progress *p, double now, int final, char *out,
			size_t cap)
{
	double el = now - p->start_s;
	double rate = el > 0 ? (double)p->done / el : 0;
	size_t tok = tokens - p->tokens0, len = 0;
	char t1[16], t2[16];

#define ADD(...)                                                                 \
	do {                                                                     \
		if (len < cap)                                                   \
			len += (size_t)snprintf(out + len, cap - len, __VA_ARGS__); \
	} while (0)
	out[0] = '\0';
	if (stage[0])
		ADD("[%s] ", stage);
	if (p->unit) {
		ADD("%s: %zu", p->what, p->done);
		if (p->total)
			ADD("/%zu", p->total);
		ADD(" %s, ", p->unit);
	} else if (p->what) {
		ADD("%s, ", p->what);
	}
	if (p->detail)
		ADD("%s, ", p->detail);
	if (tok && el > 0)
		ADD("%.0f tok/s, ", (double)tok / el);
	if (final) {
		ADD("done in %s", lp_progress_format_time(el, t1, sizeof(t1)));
	} else {
		ADD("%s elapsed", lp_progress_format_time(el, t1, sizeof(t1)));
		if (p->total && p->done && rate > 0 && p->done < p->total)
			ADD(", ETA %s", lp_progress_format_time(
					(double)(p->total - p->done) / rate, t2, sizeof(t2)));
	}
#undef ADD
}

static void draw(struct lp_progress *p, double now, int final)
{
	char line[512];

	format_line(p, now, final, line, sizeof(line));
	if (lp_progress_live()) {
		size_t w = line_width();
		if (w < sizeof(line))
			line[w] = '\0';
		/* erase to the end of the line: a shorter line leaves nothing */
		fprintf(stderr, "\r%s\033[K", line);
		lp_global.progress_on_screen = 1;
	} else {
		fprintf(stderr, "lpipe: progress: %s\n", line);
	}
	fflush(stderr);
	p->last_draw_s = now;
	p->drawn++;
}

/* Redraw `p` if it is shown and its interval has passed. */
static void maybe_draw(struct lp_progress *p)
{
	double now;

	if (!p->active)
		return;
	now = lp_now_s();
	if (lp_progress_live() ? now - p->last_draw_s >= LIVE_S
			       : now - p->last_draw_s >= LP_PROGRESS_PLAIN_S)
		draw(p, now, 0);
}

void lp_progress_clear(void)
{
	if (!lp_global.progress_on_screen)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	lp_global.progress_on_screen = 0;
	if (current)
		current->last_draw_s = 0; /* due again at once */
}

void lp_progress_begin(struct lp_progress *p, const char *what, const char *unit, size_t total)
{
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->done = 0;
	p->start_s = lp_now_s();
	p->tokens0 = tokens;
	p->drawn = 0;
	p->detail = NULL;
	p->active = lp_progress_enabled();
	/* a live line is drawn at once; plain lines wait for their interval */
	p->last_draw_s = lp_progress_live() ? 0 : p->start_s;
	p->outer = NULL;
	if (p->active) {
		p->outer = current;
		current = p;
		maybe_draw(p);
	}
	notify(p, 0);
}

void lp_progress_update(struct lp_progress *p, size_t done)
{
	p->done = done;
	maybe_draw(p);
	notify(p, 0);
}

void lp_progress_end(struct lp_progress *p)
{
	notify(p, 1);
	if (!p->active)
		return;
	if (lp_progress_live())
		lp_progress_clear();
	else if (p->unit)
		draw(p, lp_now_s(), 1);
	p->active = 0;
	if (current == p) {
		current = p->outer;
		if (current)
			current->last_draw_s = 0; /* redraw the outer line when due */
	}
}

void lp_progress_set_stage(const char *label)
{
	snprintf(stage, sizeof(stage), "%s", label ? label : "");
}

void lp_progress_add_tokens(size_t n)
{
	tokens += n;
	if (current)
		maybe_draw(current);
	notify(NULL, 0);
}

size_t lp_progress_tokens(void)
{
	return tokens;
}
