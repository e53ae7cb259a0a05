#include "core/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int progress_mode = -1;

double lp_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void lp_progress_enable(int mode)
{
	progress_mode = mode;
}

int lp_progress_enabled(void)
{
	if (progress_mode < 0)
		return isatty(STDERR_FILENO);
	return progress_mode;
}

static void progress_draw(struct lp_progress *p, int final)
{
	double el = lp_now_s() - p->start_s;
	double rate = el > 0 ? (double)p->done / el : 0;

	fprintf(stderr, "%s%s: %zu", p->lines ? "" : "\r", p->what, p->done);
	if (p->total)
		fprintf(stderr, "/%zu", p->total);
	fprintf(stderr, " %s, %.1f/s", p->unit, rate);
	if (p->detail)
		fprintf(stderr, ", %s", p->detail);
	if (p->total && rate > 0 && !final)
		fprintf(stderr, ", ETA %.0fs", (double)(p->total - p->done) / rate);
	fputs(final || p->lines ? "\n" : "   ", stderr);
	fflush(stderr);
	p->last_draw_s = lp_now_s();
}

void lp_progress_begin(struct lp_progress *p, const char *what, const char *unit, size_t total)
{
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->done = 0;
	p->start_s = lp_now_s();
	p->last_draw_s = 0;
	p->active = lp_progress_enabled();
	p->detail = NULL;
	p->lines = 0;
}

void lp_progress_update(struct lp_progress *p, size_t done)
{
	p->done = done;
	if (p->active && lp_now_s() - p->last_draw_s > (p->lines ? 2.0 : 0.25))
		progress_draw(p, 0);
}

void lp_progress_end(struct lp_progress *p)
{
	if (p->active && p->last_draw_s > 0)
		progress_draw(p, 1);
	p->active = 0;
}
