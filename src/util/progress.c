/* progress.c - the one progress line; see progress.h. */
#include "progress.h"

#include <unistd.h>

#include "clock.h"
#include "escape.h"

#define PROGRESS_REDRAW_S 0.2 /* the terminal line is rewritten at most this often */

void capsim_progress_init(capsim_progress *p, const char *label, const char *unit,
			  capsim_progress_mode mode)
{
	p->f = stderr;
	p->label = label;
	p->unit = unit;
	int tty = isatty(fileno(stderr));
	p->tty = mode != CAPSIM_PROGRESS_OFF && tty;
	p->log = mode == CAPSIM_PROGRESS_LOG && !tty;
	p->t0 = capsim_now_s();
	p->last = -1.0;
	p->last_tenth = -1;
	p->log_every_s = 0;
	p->ended = 0;
	p->open = 0;
}

/* "LABEL: DONE/TOTAL UNIT (NOTE), RATE/s" and the times, without an end */
static void words(const capsim_progress *p, long done, long total, const char *note,
		  double elapsed)
{
	double rate = elapsed > 0 ? (double)done / elapsed : 0.0;
	fprintf(p->f, "%s: %ld/%ld%s%s", p->label, done, total, p->unit ? " " : "",
		p->unit ? p->unit : "");
	if (note && *note) {
		fputs(" (", p->f);
		capsim_term_text(p->f, note);
		fputc(')', p->f);
	}
	fprintf(p->f, ", %.1f/s", rate);
	if (!p->tty)
		fprintf(p->f, ", %.1f s elapsed", elapsed);
	if (rate > 0 && done < total)
		fprintf(p->f, ", ETA %.0f s", (double)(total - done) / rate);
}

int capsim_progress_show(capsim_progress *p, long done, long total, const char *note)
{
	if ((!p->tty && !p->log) || p->ended)
		return 0;
	double now = capsim_now_s();
	int end = done >= total;
	p->ended = end;
	if (p->tty) {
		if (!end && p->open && now - p->last < PROGRESS_REDRAW_S)
			return 0;
		fputs("\r\033[K", p->f);
		words(p, done, total, note, now - p->t0);
		if (end)
			fputc('\n', p->f);
		p->open = !end;
		p->last = now;
	} else {
		long tenth = total > 0 ? done * 10 / total : 10;
		int first = p->last_tenth < 0;
		int due = p->log_every_s > 0 ? now - p->last >= p->log_every_s : tenth != p->last_tenth;
		if (!first && !end && !due)
			return 0;
		p->last_tenth = tenth;
		p->last = now;
		words(p, done, total, note, now - p->t0);
		fputc('\n', p->f);
	}
	fflush(p->f);
	return 1;
}

void capsim_progress_clear(capsim_progress *p)
{
	if (!p->open)
		return;
	fputs("\r\033[K", p->f);
	fflush(p->f);
	p->open = 0;
}

void capsim_progress_end(capsim_progress *p)
{
	if (!p->open)
		return;
	fputc('\n', p->f);
	fflush(p->f);
	p->open = 0;
}
