#include "report/report.h"

#include <errno.h>
#include <string.h>

enum lp_status lp_report_parse_format(const char *name, enum lp_format *out)
{
	if (!strcmp(name, "text"))
		*out = LP_FORMAT_TEXT;
	else if (!strcmp(name, "markdown"))
		*out = LP_FORMAT_MARKDOWN;
	else if (!strcmp(name, "json"))
		*out = LP_FORMAT_JSON;
	else if (!strcmp(name, "html"))
		*out = LP_FORMAT_HTML;
	else
		return LP_E_USAGE;
	return LP_OK;
}

enum lp_status lp_report_write(struct lp_doc *doc, enum lp_format format,
			       const struct lp_run_stats *stats, FILE *out,
			       struct lp_diag *d)
{
	enum lp_status s;

	switch (format) {
	case LP_FORMAT_TEXT: s = lp_report_text(doc, out, d); break;
	case LP_FORMAT_MARKDOWN: s = lp_report_markdown(doc, out, d); break;
	case LP_FORMAT_JSON: s = lp_report_json(doc, stats, out, d); break;
	case LP_FORMAT_HTML: s = lp_report_html(doc, stats, out, d); break;
	default:
		return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0, "unknown output format %d",
				   (int)format);
	}
	if (!s && ferror(out))
		s = lp_diag_set(d, LP_E_IO, NULL, 0, 0, "unable to write the report: %s",
				strerror(errno ? errno : EIO));
	return s;
}

enum lp_status lp_report_result_nomem(struct lp_diag *d)
{
	char cap[32];

	/* the result of a run without a summary is its chunks joined: a copy
	 * as long as the document, the one place the budget meets its length */
	if (lp_mem_budget())
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				   "memory budget of %s exceeded joining the result",
				   lp_mem_format_size(lp_mem_budget(), cap, sizeof(cap)));
	return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory joining the result");
}

static const char *result_or_fail(struct lp_doc *doc, struct lp_diag *d)
{
	const char *r = lp_doc_result(doc);

	if (!r)
		lp_report_result_nomem(d);
	return r;
}

/* Print `s` followed by exactly one newline. */
static void put_line_block(const char *s, FILE *out)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == '\n')
		n--;
	fwrite(s, 1, n, out);
	fputc('\n', out);
}

static int percent(double rate)
{
	return (int)(rate * 100.0 + 0.5);
}

/* "7/10 keyphrases survived (70%), 120 words" plus the minimum when short. */
static void verify_counts(const struct lp_verify_result *v, FILE *out)
{
	fprintf(out, "%zu/%zu keyphrase%s survived (%d%%), %zu word%s", v->n_survived,
		v->n_phrases, v->n_phrases == 1 ? "" : "s", percent(v->survival_rate),
		v->words, v->words == 1 ? "" : "s");
	if (v->words < v->min_words)
		fprintf(out, " (minimum %zu)", v->min_words);
	if (v->grounded)
		fprintf(out, ", %zu/%zu tokens grounded, %zu sentence%s removed", v->ground_found,
			v->ground_tokens, v->n_removed, v->n_removed == 1 ? "" : "s");
	for (size_t l = 0; l < v->n_levels; l++)
		fprintf(out, "%s %zu/%zu", l ? "," : ", levels kept of their inputs' keyphrases:",
			v->levels[l].survived, v->levels[l].phrases);
}

/* One line per ungrounded sentence: what the source does not hold. */
static void ungrounded_lines(const struct lp_verify_result *v, const char *indent, FILE *out)
{
	for (size_t i = 0; i < v->n_ungrounded; i++) {
		const struct lp_ungrounded *u = &v->ungrounded[i];
		fprintf(out, "%s%s: \"", indent, u->removed ? "removed" : "ungrounded");
		for (const char *c = u->sentence; *c; c++)
			fputc(*c == '\n' ? ' ' : *c, out);
		fputs("\" (not in the source:", out);
		for (size_t k = 0; k < u->n_tokens; k++)
			fprintf(out, "%s %s", k ? "," : "", u->tokens[k]);
		fputs(")\n", out);
	}
}

/* The answer's "Sources: [chunk 3], [chunk 7]" line as the reader can
 * follow it: each chunk with its section path or page (stages/doc.h). The
 * answer itself keeps the bare ids, which the verify stage reads. */
static void put_answer(struct lp_doc *doc, const char *r, FILE *out)
{
	const char *src = strstr(r, "Sources: [chunk ");
	char cite[320];

	while (src && src != r && src[-1] != '\n')
		src = strstr(src + 1, "Sources: [chunk ");
	if (!src || strspn(src + strcspn(src, "\n"), "\n") != strlen(src + strcspn(src, "\n")) ||
	    !doc->n_cited) {
		put_line_block(r, out);
		return;
	}
	fwrite(r, 1, (size_t)(src - r), out);
	fputs("Sources: ", out);
	for (size_t i = 0; i < doc->n_cited; i++) {
		lp_doc_citation(doc, doc->cited[i], cite, sizeof(cite));
		fprintf(out, "%s%s", i ? ", " : "", cite);
	}
	fputc('\n', out);
}

enum lp_status lp_report_text(struct lp_doc *doc, FILE *out, struct lp_diag *d)
{
	const struct lp_verify_result *v = &doc->verify;
	const char *r = result_or_fail(doc, d);
	int first = 1;

	if (!r)
		return LP_E_NOMEM;
	if (r == doc->answer)
		put_answer(doc, r, out);
	else
		put_line_block(r, out);
	if (!v->done)
		return LP_OK;
	fputs("\nverification: ", out);
	verify_counts(v, out);
	for (size_t i = 0; i < v->n_phrases; i++) {
		if (v->phrases[i].survived)
			continue;
		fprintf(out, "%s%s", first ? "; missing: " : ", ", v->phrases[i].text);
		first = 0;
	}
	fputc('\n', out);
	ungrounded_lines(v, "  ", out);
	return LP_OK;
}

/* A table cell: '|' escaped, line breaks flattened. */
static void md_cell(const char *s, FILE *out)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

static void md_verification(const struct lp_verify_result *v, FILE *out)
{
	fprintf(out, "\n## Verification\n\n**%s**: ", v->passed ? "passed" : "failed");
	verify_counts(v, out);
	fputs(".\n", out);
	if (v->n_ungrounded) {
		fputc('\n', out);
		ungrounded_lines(v, "- ", out);
	}
	if (!v->n_phrases)
		return;
	fputs("\n| Keyphrase | Origin | Survived |\n|---|---|:-:|\n", out);
	for (size_t i = 0; i < v->n_phrases; i++) {
		fputs("| ", out);
		md_cell(v->phrases[i].text, out);
		fprintf(out, " | %s | %s |\n", v->phrases[i].origin,
			v->phrases[i].survived ? "✓" : "✗");
	}
}

static void md_chunks(const struct lp_doc *doc, FILE *out)
{
	size_t n_sel = 0, total = 0, longest = 0;

	for (size_t i = 0; i < doc->n_chunks; i++) {
		n_sel += doc->chunks[i].selected != 0;
		total += doc->chunks[i].len;
		if (doc->chunks[i].len > longest)
			longest = doc->chunks[i].len;
	}
	fprintf(out, "\n## Chunks\n\n- document: %zu bytes\n- chunks: %zu", doc->len,
		doc->n_chunks);
	if (doc->n_chunks)
		fprintf(out, " (mean %zu bytes, longest %zu)", total / doc->n_chunks, longest);
	fputc('\n', out);
	if (n_sel)
		fprintf(out, "- selected: %zu\n", n_sel);
	if (doc->n_levels)
		fprintf(out, "- summary levels: %zu\n", doc->n_levels);
	for (size_t i = 0; i < doc->n_trace; i++) {
		const struct lp_stage_trace *t = &doc->trace[i];
		fprintf(out, "- %s", t->kind);
		if (t->pass > 1)
			fprintf(out, " (pass %d)", t->pass);
		fprintf(out, ": %.3f s%s%s\n", t->seconds, t->note ? ", " : "",
			t->note ? t->note : "");
	}
}

enum lp_status lp_report_markdown(struct lp_doc *doc, FILE *out, struct lp_diag *d)
{
	const struct lp_pipeline *p = doc->pipeline;
	const char *r = result_or_fail(doc, d);
	const char *name = p && p->name ? p->name : (p && p->path ? p->path : "lpipe");

	if (!r)
		return LP_E_NOMEM;
	fprintf(out, "# %s\n\n## Result\n\n", name);
	put_line_block(r, out);
	if (doc->verify.done)
		md_verification(&doc->verify, out);
	md_chunks(doc, out);
	return LP_OK;
}
