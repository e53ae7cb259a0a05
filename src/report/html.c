/*
 * html.c - the HTML report: one self-contained page.
 *
 * The page needs nothing but itself: the style and the script are inline,
 * the memory chart is inline SVG, and a Content-Security-Policy forbids
 * every fetch (default-src 'none'), so opening it never touches the
 * network. It shows, in this order: the result; the question, answer and
 * retrieved chunks with their scores; the summary tree level by level
 * (top first, each summary linked to the summaries and chunks it came
 * from); the keyphrases kept or lost and the grounding check; memory per
 * stage and per tag; the trace; the chunks with their byte and line
 * ranges and the source excerpt.
 *
 * Injection: every string that comes from the document, the model, the
 * pipeline or the command line goes through put_text, which escapes the
 * five HTML specials and replaces invalid UTF-8 and code points HTML
 * forbids with U+FFFD. Nothing variable is ever written inside <script> or
 * <style>, and the policy admits only the one script whose SHA-256 it
 * names, so even a missed escape could not run code. Change SCRIPT and
 * the hash with it (tests/cli/html.sh checks they match).
 *
 * Without the script the page still works: summaries and chunks are
 * <details> elements a click opens; the script adds opening the target of
 * a link, highlighting it, and the expand/collapse-all buttons.
 */
#include "report/report.h"

#include <stdint.h>
#include <string.h>

#include "core/utf8.h"

/* Source bytes shown as chunk excerpts, at most: a report of a summary
 * over a whole book stays a page, not a second copy of the book. */
#define MAX_EXCERPT_BYTES (4u << 20)
/* Chunk links listed under one summary, and rows of the chunk table. */
#define MAX_LINKS 48
#define MAX_CHUNK_ROWS 5000
/* Summaries shown per level, and chunks shown with an excerpt: a tree over
 * a 50 MB text has 100k leaves, which no reader pages through. */
#define MAX_LEVEL_SUMMARIES 2000
#define MAX_SHOWN_CHUNKS 2000
/* Bytes of a summary shown on its closed line. */
#define PREVIEW_BYTES 110

static const char SCRIPT[] =
	"(function(){"
	"function show(id){var e=document.getElementById(id);if(!e)return;"
	"for(var p=e;p;p=p.parentElement)if(p.tagName==='DETAILS')p.open=true;"
	"var o=document.querySelectorAll('.hl');"
	"for(var i=0;i<o.length;i++)o[i].classList.remove('hl');"
	"e.classList.add('hl');}"
	"function hash(){if(location.hash.length>1)"
	"show(decodeURIComponent(location.hash.slice(1)));}"
	"document.addEventListener('click',function(ev){"
	"var a=ev.target.closest('a[href^=\"#\"]');"
	"if(a){show(a.getAttribute('href').slice(1));return;}"
	"var b=ev.target.closest('button[data-sel]');if(!b)return;"
	"var d=document.querySelectorAll(b.getAttribute('data-sel'));"
	"for(var i=0;i<d.length;i++)d[i].open=b.hasAttribute('data-open');});"
	"window.addEventListener('hashchange',hash);hash();"
	"})();";

/* base64 of SHA-256(SCRIPT), for the policy. */
static const char SCRIPT_SHA256[] = "zfH4Esp/L5azZjVAbPzNLj0+VQSKjg6GgTFefvT65hk=";

static const char STYLE[] =
	"body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}"
	"main{max-width:1100px;margin:0 auto;padding:0 16px 48px}"
	"header{background:#1d2330;color:#fff;padding:14px 16px}"
	"header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#c9ceda}"
	"nav{max-width:1100px;margin:0 auto;padding:8px 16px}nav a{margin-right:14px}"
	"section{background:#fff;border:1px solid #d9dce3;border-radius:6px;"
	"margin:14px 0;padding:4px 16px 12px}"
	"h2{font-size:17px;border-bottom:1px solid #e3e5ea;padding-bottom:4px}"
	"h3{font-size:15px;margin:14px 0 6px}"
	"pre{white-space:pre-wrap;word-wrap:break-word;font:13px/1.4 ui-monospace,monospace;"
	"background:#f7f7f9;border:1px solid #e6e7eb;padding:8px;margin:6px 0}"
	"table{border-collapse:collapse;width:100%;font-size:14px}"
	"th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eceef2;vertical-align:top}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"details{border:1px solid #e0e2e8;border-radius:4px;margin:4px 0;padding:2px 8px}"
	"details>summary{cursor:pointer;padding:2px 0}"
	"details.hl{outline:2px solid #e8a317;background:#fff8e6}"
	".meta,.muted{color:#5b6273;font-size:13px}"
	".tag{display:inline-block;border-radius:3px;padding:0 5px;font-size:12px;"
	"margin-left:4px;background:#e8eaf0}"
	".kept{color:#126b2f}.lost{color:#a8151b}"
	"li.kept::marker{content:'\\2713  '}li.lost::marker{content:'\\2717  '}"
	".pass{color:#126b2f;font-weight:600}.fail{color:#a8151b;font-weight:600}"
	"meter{width:120px}"
	"svg text{font:12px system-ui,sans-serif;fill:#1d2330}"
	"svg .bar{fill:#4a78c2}svg .tagbar{fill:#3b9a6b}svg .budget{stroke:#a8151b;"
	"stroke-dasharray:4 3}button{margin:0 6px 6px 0}";

struct html {
	FILE *out;
	struct lp_doc *doc;
	const struct lp_run_stats *st;
	const size_t *set;       /* working set: level-0 input i is chunk set[i] */
	size_t n_set;
	unsigned char *flags;    /* [n_chunks] F_* below */
	size_t excerpt_left;     /* of MAX_EXCERPT_BYTES */
	size_t line_off, line_no; /* cursor of line_at */
};

enum { F_SUMMARISED = 1, F_CITED = 2, F_SHOWN = 4 };

/* Whether HTML forbids `cp` in text (controls other than white space,
 * noncharacters): those are written as U+FFFD. */
static int forbidden(uint32_t cp)
{
	if (cp < 0x20)
		return cp != '\t' && cp != '\n' && cp != '\r';
	if (cp >= 0x7f && cp < 0xa0)
		return 1;
	return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
}

/* Write s[0..n) as HTML text or attribute value: escaped, valid UTF-8. */
static void put_textn(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		uint32_t cp;
		int k;

		switch (*p) {
		case '&': fputs("&amp;", out); p++; continue;
		case '<': fputs("&lt;", out); p++; continue;
		case '>': fputs("&gt;", out); p++; continue;
		case '"': fputs("&quot;", out); p++; continue;
		case '\'': fputs("&#39;", out); p++; continue;
		}
		k = lp_utf8_decode(p, (size_t)(end - p), &cp);
		if (!k || forbidden(cp)) {
			fputs("\xef\xbf\xbd", out);
			p += k ? k : 1;
			continue;
		}
		fwrite(p, 1, (size_t)k, out);
		p += k;
	}
}

static void put_text(FILE *out, const char *s)
{
	if (s)
		put_textn(out, s, strlen(s));
}

/* The first PREVIEW_BYTES of s on one line, cut at a character boundary. */
static void put_preview(FILE *out, const char *s)
{
	size_t n = s ? strlen(s) : 0, cut = n, i = 0;

	if (cut > PREVIEW_BYTES) {
		cut = PREVIEW_BYTES;
		while (cut && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	}
	while (i < cut) {
		size_t j = i;
		while (j < cut && s[j] != '\n' && s[j] != '\r' && s[j] != '\t')
			j++;
		put_textn(out, s + i, j - i);
		if (j < cut)
			fputc(' ', out);
		i = j + 1;
	}
	if (cut < n)
		fputs("\xe2\x80\xa6", out);
}

/* The chunk at working-set position `pos`, or (size_t)-1. */
static size_t chunk_at(const struct html *h, size_t pos)
{
	size_t id;

	if (pos >= h->n_set)
		return (size_t)-1;
	id = h->set ? h->set[pos] : pos;
	return id < h->doc->n_chunks ? id : (size_t)-1;
}

static size_t newlines(const char *s, size_t n)
{
	size_t k = 0;

	for (const char *end = s + n; (s = memchr(s, '\n', (size_t)(end - s))); s++)
		k++;
	return k;
}

/* The 1-based line of byte `off`: a cursor moving forward, so that
 * offsets asked in document order cost one pass over the text. */
static size_t line_at(struct html *h, size_t off)
{
	const char *t = h->doc->text;

	if (off > h->doc->len)
		off = h->doc->len;
	if (off < h->line_off) {
		h->line_off = 0;
		h->line_no = 1;
	}
	while (h->line_off < off) {
		const char *nl = memchr(t + h->line_off, '\n', off - h->line_off);
		if (!nl) {
			h->line_off = off;
			break;
		}
		h->line_no++;
		h->line_off = (size_t)(nl - t) + 1;
	}
	return h->line_no;
}

/* Where text[off, off + len) came from (stages/doc.h): its kind, section
 * path, page and bytes in the original file. */
static void put_where(struct html *h, size_t off, size_t len)
{
	struct lp_doc_where w;

	lp_doc_where(h->doc, off, len, &w);
	fprintf(h->out, " <span class=\"meta\">%s", lp_block_kind_name(w.kind));
	if (w.section[0]) {
		fputs(" in <span class=\"section\">", h->out);
		put_text(h->out, w.section);
		fputs("</span>", h->out);
	}
	if (w.page)
		fprintf(h->out, ", p. %u", w.page);
	fprintf(h->out, ", original bytes %zu&ndash;%zu</span>", w.src_off, w.src_off + w.src_len);
}

/* A link to chunk `id`, or its name alone when the page does not show it. */
static void chunk_link(struct html *h, size_t id)
{
	if (h->flags[id] & F_SHOWN)
		fprintf(h->out, "<a href=\"#c-%zu\">chunk %zu</a>", id, id);
	else
		fprintf(h->out, "chunk %zu", id);
}

/*
 * The working-set positions [*a, *b) that summary i of level l covers,
 * followed down the tree. Returns 0 when the tree's ranges do not hold
 * together (then nothing is linked).
 */
static int covered(const struct lp_doc *doc, size_t l, size_t i, size_t *a, size_t *b)
{
	const struct lp_summary_level *lv = &doc->levels[l];
	size_t f, n, a2, b2;

	if (i >= lv->n || !lv->first_input || !lv->n_inputs || !lv->n_inputs[i])
		return 0;
	f = lv->first_input[i];
	n = lv->n_inputs[i];
	if (l == 0) {
		*a = f;
		*b = f + n;
		return 1;
	}
	if (!covered(doc, l - 1, f, a, &b2) || !covered(doc, l - 1, f + n - 1, &a2, b))
		return 0;
	return *a <= *b;
}

/* Mark the chunks the summaries and the answer refer to, and choose the
 * ones shown (F_SHOWN): the cited, then the retrieved, then the summarised,
 * each in document order, at most MAX_SHOWN_CHUNKS. */
static void mark_chunks(struct html *h)
{
	static const int want[] = { F_CITED, -1, F_SUMMARISED };
	struct lp_doc *doc = h->doc;
	size_t a, b, n_shown = 0;

	if (doc->n_levels)
		for (size_t i = 0; i < doc->levels[0].n && i < MAX_LEVEL_SUMMARIES; i++)
			if (covered(doc, 0, i, &a, &b))
				for (size_t p = a; p < b; p++)
					if (chunk_at(h, p) != (size_t)-1)
						h->flags[chunk_at(h, p)] |= F_SUMMARISED;
	for (size_t i = 0; i < doc->n_cited; i++)
		if (doc->cited[i] < doc->n_chunks)
			h->flags[doc->cited[i]] |= F_CITED;
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++)
		for (size_t i = 0; i < doc->n_chunks && n_shown < MAX_SHOWN_CHUNKS; i++) {
			int hit = want[w] < 0 ? doc->chunks[i].selected : h->flags[i] & want[w];
			if (hit && !(h->flags[i] & F_SHOWN)) {
				h->flags[i] |= F_SHOWN;
				n_shown++;
			}
		}
}

static void head(struct html *h, const char *title)
{
	FILE *out = h->out;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:; script-src 'sha256-", out);
	fputs(SCRIPT_SHA256, out);
	fputs("'\">\n<title>lpipe report: ", out);
	put_text(out, title);
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", STYLE);
}

static void header(struct html *h, const char *title)
{
	const struct lp_doc *doc = h->doc;
	enum lp_status s = h->st ? h->st->status : LP_OK;
	char sz[32];

	fputs("<header><h1>", h->out);
	put_text(h->out, title);
	fputs("</h1><p>document <code>", h->out);
	put_text(h->out, doc->path ? doc->path : "-");
	fprintf(h->out, "</code>, %zu bytes (%s), %zu chunk%s; status <span id=\"status\">",
		doc->len, lp_mem_format_size(doc->len, sz, sizeof(sz)), doc->n_chunks,
		doc->n_chunks == 1 ? "" : "s");
	put_text(h->out, lp_status_str(s));
	fputs("</span></p></header>\n<nav><a href=\"#result\">Result</a>"
	      "<a href=\"#question\">Question</a><a href=\"#tree\">Summary tree</a>"
	      "<a href=\"#keyphrases\">Keyphrases</a><a href=\"#memory\">Memory</a>"
	      "<a href=\"#trace\">Trace</a><a href=\"#chunks\">Chunks</a></nav>\n<main>\n", h->out);
}

static void section_result(struct html *h, const char *result)
{
	fputs("<section id=\"result\"><h2>Result</h2>\n<pre class=\"result\">", h->out);
	put_text(h->out, result);
	fputs("</pre></section>\n", h->out);
}

/* 1 + the number of selected chunks scored above chunk `id`; 0 when the
 * selection is too long to rank (the table stays linear). */
static size_t score_rank(const struct lp_doc *doc, size_t id)
{
	size_t r = 1;

	if (doc->n_selection > MAX_CHUNK_ROWS)
		return 0;
	for (size_t k = 0; k < doc->n_selection; k++)
		if (doc->selection[k] < doc->n_chunks && doc->chunks[doc->selection[k]].selected &&
		    doc->chunks[doc->selection[k]].score > doc->chunks[id].score)
			r++;
	return r;
}

/* The selection in the order the later stages saw it, with each chunk's
 * rank by score. */
static void retrieved_table(struct html *h)
{
	struct lp_doc *doc = h->doc;
	double top = 0;
	size_t n = 0;

	for (size_t i = 0; i < doc->n_chunks; i++)
		if (doc->chunks[i].selected && doc->chunks[i].score > top)
			top = doc->chunks[i].score;
	for (size_t k = 0; k < doc->n_selection; k++) {
		size_t id = doc->selection[k];
		const struct lp_chunk *c;

		if (id >= doc->n_chunks || !doc->chunks[id].selected)
			continue;
		c = &doc->chunks[id];
		if (!n)
			fputs("<table id=\"retrieved\"><thead><tr><th class=\"n\">order</th>"
			      "<th>chunk</th><th>bytes</th><th class=\"n\">rank</th>"
			      "<th class=\"n\">score</th><th></th></tr></thead><tbody>\n", h->out);
		fprintf(h->out, "<tr><td class=\"n\">%zu</td><td>", ++n);
		chunk_link(h, id);
		if (h->flags[id] & F_CITED)
			fputs("<span class=\"tag\">cited</span>", h->out);
		fprintf(h->out, "</td><td>%zu&ndash;%zu</td><td class=\"n\">", c->off,
			c->off + c->len);
		if (score_rank(doc, id))
			fprintf(h->out, "%zu", score_rank(doc, id));
		fprintf(h->out, "</td><td class=\"n\">%.4g</td><td><meter min=\"0\" "
			"max=\"%.6g\" value=\"%.6g\">%.0f%%</meter></td></tr>\n", c->score,
			top > 0 ? top : 1.0,
			c->score > 0 ? c->score : 0.0,
			top > 0 && c->score > 0 ? 100.0 * c->score / top : 0.0);
	}
	if (n)
		fputs("</tbody></table>\n", h->out);
	else
		fputs("<p class=\"muted\">No retrieve stage chose chunks.</p>\n", h->out);
}

static void section_question(struct html *h, const char *result)
{
	struct lp_doc *doc = h->doc;

	fputs("<section id=\"question\"><h2>Question</h2>\n", h->out);
	if (doc->question) {
		fputs("<p class=\"q\">", h->out);
		put_text(h->out, doc->question);
		fputs("</p>\n", h->out);
	} else {
		fputs("<p class=\"muted\">No question was asked.</p>\n", h->out);
	}
	if (doc->answer) {
		/* the answer is usually the result: not shown twice */
		fputs("<h3>Answer</h3>\n", h->out);
		if (strcmp(doc->answer, result)) {
			fputs("<pre class=\"answer\">", h->out);
			put_text(h->out, doc->answer);
			fputs("</pre>\n", h->out);
		} else {
			fputs("<p>The answer is the <a href=\"#result\">result</a> above.</p>\n",
			      h->out);
		}
		fputs("<p class=\"meta\">", h->out);
		if (doc->answer_check) {
			fputs("check: ", h->out);
			put_text(h->out, doc->answer_check);
		}
		for (size_t i = 0; i < doc->n_cited; i++) {
			fputs(i ? ", " : (doc->answer_check ? "; cites " : "cites "), h->out);
			if (doc->cited[i] < doc->n_chunks)
				chunk_link(h, doc->cited[i]);
		}
		if (doc->quote_len && doc->quote_off + doc->quote_len <= doc->len) {
			fputs("; quote from ", h->out);
			for (size_t i = 0; i < doc->n_chunks; i++)
				if (doc->chunks[i].off <= doc->quote_off &&
				    doc->quote_off + doc->quote_len <=
					    doc->chunks[i].off + doc->chunks[i].len) {
					chunk_link(h, i);
					break;
				}
			put_where(h, doc->quote_off, doc->quote_len);
		}
		fputs("</p>\n", h->out);
	}
	fputs("<h3>Retrieved chunks</h3>\n", h->out);
	retrieved_table(h);
	fputs("</section>\n", h->out);
}

/* "from" line of summary i of level l: the summaries below and the chunks. */
static void summary_sources(struct html *h, size_t l, size_t i)
{
	const struct lp_summary_level *lv = &h->doc->levels[l];
	size_t a, b, shown_links = 0;

	if (!covered(h->doc, l, i, &a, &b)) {
		fputs("<p class=\"meta\">sources unknown</p>\n", h->out);
		return;
	}
	fputs("<p class=\"meta from\">", h->out);
	if (l > 0) {
		fputs("from ", h->out);
		for (size_t k = 0; k < lv->n_inputs[i] && k < MAX_LINKS; k++) {
			size_t j = lv->first_input[i] + k;
			if (j < MAX_LEVEL_SUMMARIES)
				fprintf(h->out, "%s<a href=\"#s-%zu-%zu\">S%zu.%zu</a>", k ? ", " : "",
					l - 1, j, l - 1, j);
			else
				fprintf(h->out, "%sS%zu.%zu", k ? ", " : "", l - 1, j);
		}
		if (lv->n_inputs[i] > MAX_LINKS)
			fprintf(h->out, " &hellip; (%zu in all)", lv->n_inputs[i]);
		fputs("; ", h->out);
	}
	fputs("chunks ", h->out);
	for (size_t p = a; p < b; p++) {
		size_t id = chunk_at(h, p);
		if (id == (size_t)-1)
			continue;
		if (shown_links++ == MAX_LINKS) {
			fprintf(h->out, " &hellip; (%zu in all)", b - a);
			break;
		}
		fputs(shown_links > 1 ? ", " : "", h->out);
		chunk_link(h, id);
	}
	fputs("</p>\n", h->out);
}

static void one_summary(struct html *h, size_t l, size_t i, int top)
{
	const char *t = h->doc->levels[l].texts ? h->doc->levels[l].texts[i] : NULL;

	fprintf(h->out, "<details class=\"summary\" id=\"s-%zu-%zu\"%s><summary>"
		"<b>S%zu.%zu</b> <span class=\"muted\">", l, i, top ? " open" : "", l, i);
	put_preview(h->out, t);
	fputs("</span></summary>\n<pre class=\"text\">", h->out);
	put_text(h->out, t);
	fputs("</pre>\n", h->out);
	summary_sources(h, l, i);
	fputs("</details>\n", h->out);
}

static void section_tree(struct html *h)
{
	const struct lp_doc *doc = h->doc;

	fputs("<section id=\"tree\"><h2>Summary tree</h2>\n", h->out);
	if (!doc->n_levels) {
		fputs("<p class=\"muted\">No summarize stage ran.</p></section>\n", h->out);
		return;
	}
	fputs("<button type=\"button\" data-sel=\"details.summary\" data-open>expand all"
	      "</button><button type=\"button\" data-sel=\"details.summary\">collapse all"
	      "</button>\n", h->out);
	for (size_t l = doc->n_levels; l-- > 0;) {
		const struct lp_summary_level *lv = &doc->levels[l];
		fprintf(h->out, "<div class=\"lv\" id=\"level-%zu\"><h3>Level %zu%s: "
			"%zu summar%s", l, l, l + 1 == doc->n_levels ? " (top)" : "",
			lv->n, lv->n == 1 ? "y" : "ies");
		if (lv->tokens_in)
			fprintf(h->out, ", %zu tokens in, %zu out", lv->tokens_in, lv->tokens_out);
		fputs("</h3>\n", h->out);
		for (size_t i = 0; i < lv->n && i < MAX_LEVEL_SUMMARIES; i++)
			one_summary(h, l, i, l + 1 == doc->n_levels);
		if (lv->n > MAX_LEVEL_SUMMARIES)
			fprintf(h->out, "<p class=\"muted\">&hellip; and %zu more (the JSON report "
				"holds them all)</p>\n", lv->n - MAX_LEVEL_SUMMARIES);
		fputs("</div>\n", h->out);
	}
	fputs("</section>\n", h->out);
}

static void grounding(struct html *h, const struct lp_verify_result *v)
{
	if (!v->grounded)
		return;
	fprintf(h->out, "<h3>Grounding</h3>\n<p>%zu/%zu checked tokens found in the source, "
		"%zu sentence%s removed.</p>\n", v->ground_found, v->ground_tokens, v->n_removed,
		v->n_removed == 1 ? "" : "s");
	if (!v->n_ungrounded)
		return;
	fputs("<ul class=\"ungrounded\">\n", h->out);
	for (size_t i = 0; i < v->n_ungrounded; i++) {
		const struct lp_ungrounded *u = &v->ungrounded[i];
		fprintf(h->out, "<li class=\"lost\"><span class=\"tag\">%s</span> ",
			u->removed ? "removed" : "kept");
		put_text(h->out, u->sentence);
		fputs(" <span class=\"meta\">not in the source:", h->out);
		for (size_t k = 0; k < u->n_tokens; k++) {
			fputs(k ? ", <code>" : " <code>", h->out);
			put_text(h->out, u->tokens[k]);
			fputs("</code> (", h->out);
			put_text(h->out, u->kinds ? u->kinds[k] : "?");
			fputc(')', h->out);
		}
		fputs("</span></li>\n", h->out);
	}
	fputs("</ul>\n", h->out);
}

static void section_keyphrases(struct html *h)
{
	const struct lp_verify_result *v = &h->doc->verify;

	fputs("<section id=\"keyphrases\"><h2>Keyphrases</h2>\n", h->out);
	if (!v->done) {
		fputs("<p class=\"muted\">No verify stage ran.</p></section>\n", h->out);
		return;
	}
	fprintf(h->out, "<p><span class=\"%s\">%s</span>: %zu of %zu kept (%d%%), %zu words "
		"(minimum %zu), %d retr%s.</p>\n<ul class=\"phrases\">\n",
		v->passed ? "pass" : "fail", v->passed ? "passed" : "failed", v->n_survived,
		v->n_phrases, (int)(v->survival_rate * 100 + 0.5), v->words, v->min_words,
		v->retries, v->retries == 1 ? "y" : "ies");
	for (size_t i = 0; i < v->n_phrases; i++) {
		const struct lp_keyphrase *k = &v->phrases[i];
		fprintf(h->out, "<li class=\"%s\">", k->survived ? "kept" : "lost");
		put_text(h->out, k->text);
		fputs("<span class=\"tag\">", h->out);
		put_text(h->out, k->origin);
		fprintf(h->out, "</span> %s", k->survived ? "kept" : "lost");
		if (!k->survived && k->lost_level >= 0 && (size_t)k->lost_level < h->doc->n_levels)
			fprintf(h->out, " at <a href=\"#level-%d\">summary level %d</a>",
				k->lost_level, k->lost_level);
		fputs("</li>\n", h->out);
	}
	fputs("</ul>\n", h->out);
	grounding(h, v);
	fputs("</section>\n", h->out);
}

struct bar {
	char label[64];
	size_t bytes;
};

/* A horizontal bar chart of `n` bars, scaled to the largest bar or the
 * budget, whichever is larger (then a dashed line marks the budget). */
static void svg_bars(struct html *h, const char *id, const char *title,
		     const struct bar *bars, size_t n, const char *cls)
{
	const int label_w = 170, bar_w = 560, row = 22, pad = 6;
	size_t budget = h->st ? h->st->budget_bytes : lp_mem_budget(), top = budget;
	int height = (int)n * row + 2 * pad;
	char sz[32];

	for (size_t i = 0; i < n; i++)
		if (bars[i].bytes > top)
			top = bars[i].bytes;
	if (!top)
		top = 1;
	fprintf(h->out, "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>%s</title>\n",
		id, label_w + bar_w + 90, height, label_w + bar_w + 90, height, title);
	for (size_t i = 0; i < n; i++) {
		int y = pad + (int)i * row, w = (int)((double)bars[i].bytes / (double)top * bar_w);
		fprintf(h->out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label_w - 8, y + 15);
		put_text(h->out, bars[i].label);
		fprintf(h->out, "</text><rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" "
			"height=\"%d\"><title>%zu bytes</title></rect><text x=\"%d\" y=\"%d\">%s"
			"</text>\n", cls, label_w, y + 3, w > 0 ? w : 1, row - 6, bars[i].bytes,
			label_w + (w > 0 ? w : 1) + 6, y + 15,
			lp_mem_format_size(bars[i].bytes, sz, sizeof(sz)));
	}
	if (budget)
		fprintf(h->out, "<line class=\"budget\" x1=\"%d\" y1=\"2\" x2=\"%d\" y2=\"%d\">"
			"<title>budget %s</title></line>\n", label_w + bar_w, label_w + bar_w,
			height - 2, lp_mem_format_size(budget, sz, sizeof(sz)));
	fputs("</svg>\n", h->out);
}

static void section_memory(struct html *h)
{
	const struct lp_doc *doc = h->doc;
	struct bar bars[LP_MEM_NTAGS > 24 ? LP_MEM_NTAGS : 24];
	size_t n = 0, peak = h->st ? h->st->peak_tracked_bytes : lp_mem_peak_total();
	size_t budget = h->st ? h->st->budget_bytes : lp_mem_budget();
	char sz[32], cap[32], rss[32];

	fprintf(h->out, "<section id=\"memory\"><h2>Memory</h2>\n<p>tracked peak %s, budget "
		"%s%s, peak resident set %s.</p>\n<h3>Peak per stage</h3>\n",
		lp_mem_format_size(peak, sz, sizeof(sz)),
		budget ? lp_mem_format_size(budget, cap, sizeof(cap)) : "none",
		budget ? " (the dashed line)" : "",
		lp_mem_format_size(lp_mem_peak_rss(), rss, sizeof(rss)));
	/* a long retry chain keeps its last 24 steps: the chart stays a chart */
	for (size_t i = doc->n_trace > 24 ? doc->n_trace - 24 : 0; i < doc->n_trace; i++) {
		const struct lp_stage_trace *t = &doc->trace[i];
		snprintf(bars[n].label, sizeof(bars[n].label), "%zu %s%s", t->stage + 1,
			 t->kind ? t->kind : "?", t->pass > 1 ? " (again)" : "");
		bars[n++].bytes = t->peak_tracked_bytes;
	}
	svg_bars(h, "mem-stages", "peak tracked memory per stage", bars, n, "bar");
	fputs("<h3>Peak per tag</h3>\n", h->out);
	n = 0;
	for (int t = 0; t < LP_MEM_NTAGS; t++) {
		size_t p = h->st ? h->st->peak_by_tag[t] : lp_mem_peak(t);
		if (lp_mem_tag_is_gpu(t) && !p)
			continue;
		snprintf(bars[n].label, sizeof(bars[n].label), "%s", lp_mem_tag_name(t));
		bars[n++].bytes = p;
	}
	svg_bars(h, "mem-tags", "peak tracked memory per tag", bars, n, "tagbar");
	fputs("</section>\n", h->out);
}

static void section_trace(struct html *h)
{
	const struct lp_doc *doc = h->doc;
	char sz[32];

	fputs("<section id=\"trace\"><h2>Trace</h2>\n<table><thead><tr><th class=\"n\">stage"
	      "</th><th>kind</th><th class=\"n\">pass</th><th class=\"n\">seconds</th>"
	      "<th class=\"n\">peak</th><th>note and events</th></tr></thead><tbody>\n", h->out);
	for (size_t i = 0; i < doc->n_trace; i++) {
		const struct lp_stage_trace *t = &doc->trace[i];
		fprintf(h->out, "<tr><td class=\"n\">%zu</td><td>", t->stage + 1);
		put_text(h->out, t->kind);
		fprintf(h->out, "</td><td class=\"n\">%d</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%s</td><td>", t->pass ? t->pass : 1, t->seconds,
			lp_mem_format_size(t->peak_tracked_bytes, sz, sizeof(sz)));
		put_text(h->out, t->note);
		if (t->n_events || t->n_events_dropped)
			fputs("<ul class=\"events\">", h->out);
		for (size_t k = 0; k < t->n_events; k++) {
			fputs("<li>", h->out);
			put_text(h->out, t->events[k]);
			fputs("</li>", h->out);
		}
		if (t->n_events_dropped)
			fprintf(h->out, "<li class=\"muted\">%zu more not kept</li>",
				t->n_events_dropped);
		if (t->n_events || t->n_events_dropped)
			fputs("</ul>", h->out);
		fputs("</td></tr>\n", h->out);
	}
	fputs("</tbody></table></section>\n", h->out);
}

static void one_chunk(struct html *h, size_t id)
{
	const struct lp_chunk *c = &h->doc->chunks[id];
	size_t first = line_at(h, c->off), last = first;

	/* counted inside the chunk, so that the cursor stays at its start:
	 * the next chunk may start before this one ends (overlap) */
	if (c->len && c->off + c->len <= h->doc->len)
		last += newlines(h->doc->text + c->off, c->len - 1);
	fprintf(h->out, "<details class=\"chunk\" id=\"c-%zu\"><summary><b>chunk %zu</b> "
		"<span class=\"range\">bytes %zu&ndash;%zu</span> <span class=\"meta\">"
		"(lines %zu&ndash;%zu, %zu bytes, score %.4g)</span>", id, id, c->off,
		c->off + c->len, first, last, c->len, c->score);
	put_where(h, c->off, c->len);
	if (c->selected)
		fputs("<span class=\"tag\">retrieved</span>", h->out);
	if (h->flags[id] & F_SUMMARISED)
		fputs("<span class=\"tag\">summarised</span>", h->out);
	if (h->flags[id] & F_CITED)
		fputs("<span class=\"tag\">cited</span>", h->out);
	fputs("</summary>\n<pre class=\"excerpt\">", h->out);
	if (c->off + c->len <= h->doc->len && c->len <= h->excerpt_left) {
		put_textn(h->out, h->doc->text + c->off, c->len);
		h->excerpt_left -= c->len;
	} else {
		fprintf(h->out, "(not included: the report holds at most %u MiB of the source)",
			MAX_EXCERPT_BYTES >> 20);
	}
	fputs("</pre></details>\n", h->out);
}

static void section_chunks(struct html *h)
{
	const struct lp_doc *doc = h->doc;
	size_t n_shown = 0, n_ref = 0, rows = 0;

	fputs("<section id=\"chunks\"><h2>Chunks</h2>\n", h->out);
	for (size_t i = 0; i < doc->n_chunks; i++) {
		n_shown += (h->flags[i] & F_SHOWN) != 0;
		n_ref += doc->chunks[i].selected || (h->flags[i] & (F_SUMMARISED | F_CITED));
	}
	fprintf(h->out, "<p>%zu chunk%s; ", doc->n_chunks, doc->n_chunks == 1 ? "" : "s");
	if (n_shown < n_ref)
		fprintf(h->out, "%zu of the %zu that were retrieved, summarised or cited (the "
			"cited and retrieved first)", n_shown, n_ref);
	else
		fprintf(h->out, "the %zu that were retrieved, summarised or cited", n_shown);
	fputs(" are shown with their source text.</p>\n<button type=\"button\" "
	      "data-sel=\"details.chunk\" data-open>expand all</button><button type=\"button\" "
	      "data-sel=\"details.chunk\">collapse all</button>\n", h->out);
	for (size_t i = 0; i < doc->n_chunks; i++)
		if (h->flags[i] & F_SHOWN)
			one_chunk(h, i);
	if (n_shown == doc->n_chunks) {
		fputs("</section>\n", h->out);
		return;
	}
	fputs("<details class=\"all\"><summary>All chunks by byte range</summary>\n<table>"
	      "<thead><tr><th class=\"n\">chunk</th><th>bytes</th><th class=\"n\">score</th>"
	      "</tr></thead><tbody>\n", h->out);
	for (size_t i = 0; i < doc->n_chunks && rows < MAX_CHUNK_ROWS; i++, rows++)
		fprintf(h->out, "<tr><td class=\"n\">%zu</td><td>%zu&ndash;%zu</td>"
			"<td class=\"n\">%.4g</td></tr>\n", i, doc->chunks[i].off,
			doc->chunks[i].off + doc->chunks[i].len, doc->chunks[i].score);
	fputs("</tbody></table>\n", h->out);
	if (rows < doc->n_chunks)
		fprintf(h->out, "<p class=\"muted\">&hellip; and %zu more</p>\n",
			doc->n_chunks - rows);
	fputs("</details></section>\n", h->out);
}

enum lp_status lp_report_html(struct lp_doc *doc, const struct lp_run_stats *stats,
			      FILE *out, struct lp_diag *d)
{
	const struct lp_pipeline *p = doc->pipeline;
	const char *title = p && p->name ? p->name : (p && p->path ? p->path : "lpipe");
	const char *result = lp_doc_result(doc);
	struct html h = { .out = out, .doc = doc, .st = stats, .excerpt_left = MAX_EXCERPT_BYTES,
			  .line_no = 1 };

	if (!result)
		return lp_report_result_nomem(d);
	h.set = doc->selection;
	h.n_set = doc->selection ? doc->n_selection : doc->n_chunks;
	h.flags = lp_arena_alloc(&doc->arena, doc->n_chunks ? doc->n_chunks : 1);
	if (!h.flags)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the HTML report");
	memset(h.flags, 0, doc->n_chunks ? doc->n_chunks : 1);
	mark_chunks(&h);
	head(&h, title);
	header(&h, title);
	section_result(&h, result);
	section_question(&h, result);
	section_tree(&h);
	section_keyphrases(&h);
	section_memory(&h);
	section_trace(&h);
	section_chunks(&h);
	fprintf(out, "</main>\n<script>%s</script>\n</body>\n</html>\n", SCRIPT);
	return LP_OK;
}
