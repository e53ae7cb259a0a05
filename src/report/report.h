/*
 * report.h - printing the result of a run: text, markdown, JSON or HTML.
 *
 * The report module only reads a finished struct lp_doc; it never changes
 * what the stages produced (except that lp_doc_result may cache the joined
 * chunks in the doc's arena).
 *
 *  - text: the product (lp_doc_result) as is, then, when a verify stage
 *    ran, a blank line and one line
 *        verification: 7/10 keyphrases survived (70%), 120 words; missing: a, b
 *    so that the product can be cut off at the last blank line.
 *  - markdown: "# <pipeline name>", "## Result", "## Verification" (a table
 *    of phrases with ✓/✗, when verify ran) and "## Chunks" (counts).
 *  - html: one self-contained page (inline style, script and SVG; no
 *    fetches) showing the result, the question and retrieved chunks, the
 *    summary tree linked down to its chunks, the keyphrases, memory per
 *    stage and tag, the trace and the chunks' source text (html.c).
 *  - json: one object with a fixed set of keys (listed in lpipe(1) and in
 *    json.c), pretty-printed with an indent of two spaces. Built with
 *    jansson, never by pasting strings together.
 */
#ifndef LP_REPORT_H
#define LP_REPORT_H

#include <stdio.h>

#include "config/pipeline.h"
#include "core/mem.h"
#include "core/status.h"
#include "stages/doc.h"

/* What the runner measured about a run, beyond what the doc holds. */
struct lp_run_stats {
	enum lp_status status;               /* LP_OK or LP_E_VERIFY for a finished run */
	size_t peak_tracked_bytes;           /* tracked total, over the whole run */
	size_t peak_by_tag[LP_MEM_NTAGS];    /* per tag, over the whole run */
	size_t current_by_tag[LP_MEM_NTAGS]; /* per tag, held in the process at
					      * the end of the run, before its
					      * model was given back */
	size_t budget_bytes;                 /* 0: unlimited */
};

/*
 * Write the report of `doc` in `format` to `out`. `stats` may be NULL
 * (status ok, peaks taken from the allocator now). Returns LP_OK, LP_E_NOMEM
 * or LP_E_IO (a write failed) with `d` filled.
 */
enum lp_status lp_report_write(struct lp_doc *doc, enum lp_format format,
			       const struct lp_run_stats *stats, FILE *out,
			       struct lp_diag *d);

/* The four formats, one function each (lp_report_write dispatches). */
enum lp_status lp_report_text(struct lp_doc *doc, FILE *out, struct lp_diag *d);
enum lp_status lp_report_markdown(struct lp_doc *doc, FILE *out, struct lp_diag *d);
enum lp_status lp_report_json(struct lp_doc *doc, const struct lp_run_stats *stats,
			      FILE *out, struct lp_diag *d);
enum lp_status lp_report_html(struct lp_doc *doc, const struct lp_run_stats *stats,
			      FILE *out, struct lp_diag *d);

/* The format called `name` ("text", "markdown", "json", "html"); LP_OK or LP_E_USAGE. */
enum lp_status lp_report_parse_format(const char *name, enum lp_format *out);

/* Fill `d` for a result that could not be joined (lp_doc_result gave
 * NULL), naming the memory budget when one is set; returns LP_E_NOMEM. */
enum lp_status lp_report_result_nomem(struct lp_diag *d);

#endif
