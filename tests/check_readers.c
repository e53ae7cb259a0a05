/*
 * check_readers.c - the Markdown, HTML and PDF readers (doc/readers.h):
 * the blocks they give on small documents written here, and how each
 * ends on hostile input (no crash, no hang under Check's timeout, a
 * message naming the file and the line or page, inside a memory budget).
 *
 * The PDFs are written at test time by tests/data/docs/mkpdf.py (python3),
 * so every fixture's bytes are visible in one script. The long line of
 * the HTML tests is 64 MiB (the 1 GB would take minutes of CI
 * for the same check: the reader's tracked memory does not grow with it).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "core/mem.h"
#include "core/status.h"
#include "core/utf8.h"
#include "doc/readers.h"

#define MiB ((size_t)1 << 20)

/* --- a sink that writes each block as one line ------------------------
 * "H2 text", "P text", "L1 text", "DT text", "DD text", "T a|b" (a row;
 * "T*" a header row), "C text" (code, lines joined by '/'), "Q text";
 * a page is written as "@3 " before the kind. Lines end with '\n'. */
struct collect {
	struct lp_doc_sink sink;
	char *out;
	size_t len, cap;
	size_t n_blocks, bytes;
	int keep;             /* 0: count only (large inputs) */
	int fail_after;       /* > 0: the sink fails at this block */
	const char *src;      /* the input, to check byte ranges */
	size_t src_len;
	int bad_range, bad_utf8;
	unsigned max_page, bad_page;
};

static void put(struct collect *c, const char *s, size_t n)
{
	if (c->len + n + 1 > c->cap) {
		c->cap = (c->len + n + 1) * 2;
		c->out = realloc(c->out, c->cap);
		ck_assert_ptr_nonnull(c->out);
	}
	memcpy(c->out + c->len, s, n);
	c->len += n;
	c->out[c->len] = '\0';
}

static const char *kind_tag(enum lp_block_kind k)
{
	static const char *tags[] = { "H", "P", "L", "DT", "DD", "T", "C", "Q" };
	return (unsigned)k < sizeof(tags) / sizeof(tags[0]) ? tags[k] : "?";
}

static enum lp_status collect_block(struct lp_doc_sink *sink, const struct lp_block_in *b,
				    struct lp_diag *d)
{
	struct collect *c = sink->ctx;
	char head[32];

	c->n_blocks++;
	c->bytes += b->len;
	if (c->fail_after && (int)c->n_blocks == c->fail_after)
		return lp_diag_set(d, LP_E_IO, "sink", 7, 0, "sink refused block %zu", c->n_blocks);
	if (!b->len || lp_utf8_find_invalid((const unsigned char *)b->text, b->len) != b->len)
		c->bad_utf8 = 1;
	if (b->src_off > c->src_len || b->src_len > c->src_len - b->src_off)
		c->bad_range = 1;
	if (b->page > c->max_page)
		c->max_page = b->page;
	if (c->max_page && !b->page)
		c->bad_page = 1;
	if (!c->keep)
		return LP_OK;
	if (b->page) {
		snprintf(head, sizeof(head), "@%u ", b->page);
		put(c, head, strlen(head));
	}
	if (b->kind == LP_BLOCK_HEADING || b->kind == LP_BLOCK_LIST_ITEM)
		snprintf(head, sizeof(head), "%s%u ", kind_tag(b->kind), b->level);
	else if (b->kind == LP_BLOCK_TABLE_ROW)
		snprintf(head, sizeof(head), "T%s ", b->header ? "*" : "");
	else
		snprintf(head, sizeof(head), "%s ", kind_tag(b->kind));
	put(c, head, strlen(head));
	if (b->kind == LP_BLOCK_TABLE_ROW) {
		for (size_t i = 0; i < b->n_cells; i++) {
			if (i)
				put(c, "|", 1);
			put(c, b->cells[i], b->cell_lens[i]);
		}
	} else {
		for (size_t i = 0; i < b->len; i++)
			put(c, b->text[i] == '\n' ? "/" : b->text + i, 1);
	}
	put(c, "\n", 1);
	return LP_OK;
}

static void collect_init(struct collect *c, const char *src, size_t len, int keep)
{
	memset(c, 0, sizeof(*c));
	c->sink.block = collect_block;
	c->sink.ctx = c;
	c->src = src;
	c->src_len = len;
	c->keep = keep;
	if (keep)
		put(c, "", 0);
}

typedef enum lp_status (*reader_fn)(const char *, const char *, size_t, struct lp_doc_sink *,
				    struct lp_diag *);

/* The blocks of `src` as lines (a static buffer), asserting success. */
static const char *blocks(reader_fn read, const char *src)
{
	static char out[8192];
	struct collect c;
	struct lp_diag d;
	enum lp_status st;

	collect_init(&c, src, strlen(src), 1);
	lp_diag_init(&d);
	st = read("doc", src, strlen(src), &c.sink, &d);
	ck_assert_msg(st == LP_OK, "status %d: %s", st, d.msg);
	ck_assert(!c.bad_range);
	ck_assert(!c.bad_utf8);
	snprintf(out, sizeof(out), "%s", c.out);
	free(c.out);
	return out;
}

/* Run a reader on `len` bytes under `budget`, counting blocks; returns
 * the status, the peak of the document's tracked memory in *peak. */
static enum lp_status run_counted(reader_fn read, const char *name, const char *src,
				  size_t len, size_t budget, struct collect *c,
				  struct lp_diag *d, size_t *peak)
{
	enum lp_status st;

	collect_init(c, src, len, 0);
	lp_diag_init(d);
	lp_mem_set_budget(budget);
	lp_mem_reset_peaks();
	st = read(name, src, len, &c->sink, d);
	*peak = lp_mem_peak(LP_MEM_DOC);
	lp_mem_set_budget(0);
	return st;
}

/* ------------------------------------------------------------------ */
/* HTML                                                                */

#ifdef LP_HAVE_LIBXML2

START_TEST(test_html_structure)
{
	const char *doc =
		"<!DOCTYPE html><html><head><title>T</title><style>p{}</style>"
		"<script>var x = '<p>no</p>';</script></head><body>"
		"<nav><a href=/>Home</a></nav>"
		"<h1>The <em>Title</em></h1>"
		"<p>One &amp; two,\n   three&nbsp;&#x2014;&eacute;.</p>"
		"<ul><li>first</li><li>second<ul><li>inner</li></ul></li></ul>"
		"<dl><dt><code>--delete</code></dt><dd>delete extraneous files</dd></dl>"
		"<table><thead><tr><td>Name</td><td>Size</td></tr></thead>"
		"<tr><td>a</td><td><p>1</p> kB</td></tr>"
		"<tr><th>x</th><th>y</th></tr></table>"
		"<pre>line 1\n  line 2</pre>"
		"<blockquote><p>quoted</p></blockquote>"
		"<div>loose <b>text</b><noscript>no</noscript><template>no</template></div>"
		"<p hidden>no</p><div style=\"color:red; Display : None\">no</div>"
		"<h6>Six<a class=\"headerlink\" href=\"#six\" title=\"Permalink\">\xC2\xB6</a>"
		"<span aria-hidden=\"true\">#</span></h6></body></html>";

	ck_assert_str_eq(blocks(lp_read_html, doc),
			 "H1 The Title\n"
			 "P One & two, three \xE2\x80\x94\xC3\xA9.\n"
			 "L1 first\n"
			 "L1 second\n"
			 "L2 inner\n"
			 "DT --delete\n"
			 "DD delete extraneous files\n"
			 "T* Name|Size\n"
			 "T a|1 kB\n"
			 "T* x|y\n"
			 "C line 1/  line 2\n"
			 "Q quoted\n"
			 "P loose text\n"
			 "H6 Six\n");
}
END_TEST

/* Each block's range holds its text in the source. */
struct range_check {
	struct lp_doc_sink sink;
	const char *src;
	int ok, n;
};

static enum lp_status range_block(struct lp_doc_sink *sink, const struct lp_block_in *b,
				  struct lp_diag *d)
{
	struct range_check *rc = sink->ctx;
	char word[16];
	size_t n = b->len < sizeof(word) - 1 ? b->len : sizeof(word) - 1;

	(void)d;
	memcpy(word, b->text, n);
	word[n] = '\0';
	if (strchr(word, ' '))
		*strchr(word, ' ') = '\0';
	rc->n++;
	if (!memmem(rc->src + b->src_off, b->src_len, word, strlen(word)))
		rc->ok = 0;
	return LP_OK;
}

static void check_ranges(reader_fn read, const char *doc, int want)
{
	struct range_check rc = { { range_block, &rc }, doc, 1, 0 };
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(read("doc", doc, strlen(doc), &rc.sink, &d), LP_OK);
	ck_assert_int_eq(rc.n, want);
	ck_assert_msg(rc.ok, "a block's byte range misses its text");
}

START_TEST(test_html_range_text)
{
	check_ranges(lp_read_html,
		     "<html><body>\n<h2>Alpha beta</h2>\n<p>Gamma <b>delta</b></p>\n"
		     "<ul><li>Epsilon</li></ul><table><tr><td>Zeta</td></tr></table></body></html>",
		     4);
}
END_TEST

START_TEST(test_html_meta_charset)
{
	/* Latin-1 bytes declared by <meta charset> and by http-equiv */
	ck_assert_str_eq(blocks(lp_read_html, "<html><head><meta charset=\"iso-8859-1\"></head>"
					      "<body><p>caf\xE9</p></body></html>"),
			 "P caf\xC3\xA9\n");
	ck_assert_str_eq(blocks(lp_read_html,
				"<html><head><meta http-equiv=\"Content-Type\" "
				"content=\"text/html; charset=windows-1252\"></head>"
				"<body><p>\x93quoted\x94</p></body></html>"),
			 "P \xE2\x80\x9Cquoted\xE2\x80\x9D\n");
}
END_TEST

START_TEST(test_html_wrong_charset)
{
	/* declared UTF-8, written in Latin-1; then a charset nobody knows:
	 * read without a crash, the text still UTF-8 */
	const char *a = "<html><head><meta charset=utf-8></head><body><p>na\xEFve caf\xE9</p>"
			"<p>after</p></body></html>";
	const char *b = "<html><head><meta charset=\"x-no-such-charset\"></head>"
			"<body><p>plain words</p></body></html>";
	const char *out = blocks(lp_read_html, a);

	ck_assert_msg(strstr(out, "after") != NULL, "%s", out);
	ck_assert_str_eq(blocks(lp_read_html, b), "P plain words\n");
}
END_TEST

START_TEST(test_html_depth_bomb)
{
	/* 100,000 nested elements: refused at the depth limit with the line */
	size_t n = 100000, len = 0;
	char *doc = malloc(n * 12 + 64);
	struct collect c;
	struct lp_diag d;
	size_t peak;

	len += (size_t)sprintf(doc, "<html><body>\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(doc + len, "<div><span>");
	len += (size_t)sprintf(doc + len, "deep");
	ck_assert_int_eq(run_counted(lp_read_html, "deep.html", doc, len, 64 * MiB, &c, &d, &peak),
			 LP_E_INPUT);
	ck_assert_str_eq(d.file, "deep.html");
	ck_assert_int_eq(d.line, 2);
	ck_assert_msg(strstr(d.msg, "nested deeper") != NULL, "%s", d.msg);
	ck_assert_uint_lt(peak, 16 * MiB);
	free(doc);
}
END_TEST

START_TEST(test_html_entity_bomb)
{
	/* the billion laughs: the HTML parser takes no entity declarations,
	 * so nothing expands (and the output stays small) */
	struct {
		char *s;
		size_t n;
	} b = { malloc(8192), 0 };
	struct collect c;
	struct lp_diag d;
	size_t peak;

	b.n += (size_t)sprintf(b.s, "<!DOCTYPE html [<!ENTITY lol \"lol\">");
	for (int i = 1; i < 10; i++)
		b.n += (size_t)sprintf(b.s + b.n, "<!ENTITY lol%d \"&lol%d;&lol%d;&lol%d;&lol%d;"
						  "&lol%d;&lol%d;&lol%d;&lol%d;&lol%d;&lol%d;\">",
				       i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
				       i - 1, i - 1);
	b.n += (size_t)sprintf(b.s + b.n, "]><html><body><p>&lol9;&lol9;</p><p>end</p></body></html>");
	ck_assert_int_eq(run_counted(lp_read_html, "lol.html", b.s, b.n, 64 * MiB, &c, &d, &peak),
			 LP_OK);
	ck_assert_uint_lt(c.bytes, 4096);
	ck_assert_uint_lt(peak, 4 * MiB);
	free(b.s);
}
END_TEST

/* 64 MiB on one line: many paragraphs, then one paragraph of words. The
 * reader's tracked memory stays small beside the input. */
#define LONG_LINE (64 * MiB)

START_TEST(test_html_long_line)
{
	char *doc = malloc(LONG_LINE + 64);
	const char *p = "<p>lorem ipsum dolor sit amet</p>";
	size_t len = 0, plen = strlen(p), peak;
	struct collect c;
	struct lp_diag d;

	while (len + plen < LONG_LINE)
		len += (size_t)sprintf(doc + len, "%s", p);
	ck_assert_int_eq(run_counted(lp_read_html, "line.html", doc, len, 256 * MiB, &c, &d,
				     &peak),
			 LP_OK);
	ck_assert_uint_eq(c.n_blocks, len / plen);
	ck_assert(!c.bad_range);
	ck_assert_uint_lt(peak, 8 * MiB);

	/* one paragraph of 64 MiB of words: handed on in parts */
	len = (size_t)sprintf(doc, "<p>");
	while (len + 6 < LONG_LINE)
		len += (size_t)sprintf(doc + len, "word ");
	ck_assert_int_eq(run_counted(lp_read_html, "line.html", doc, len, 256 * MiB, &c, &d,
				     &peak),
			 LP_OK);
	ck_assert_uint_ge(c.n_blocks, 60);
	ck_assert_uint_gt(c.bytes, LONG_LINE - 8 * MiB);
	ck_assert(!c.bad_utf8);
	free(doc);
}
END_TEST

START_TEST(test_html_dense_markup)
{
	/* markup with few text nodes (a page's table of contents): libxml2
	 * 2.9 alone would hold the whole file here (50 MB for 32 MB) */
	const char *item = "<li><span class=\"stability_2\"><a href=\"#all_stream_stream\">"
			   "Stream</a></span>\n<ul>\n<li><a href=\"#all_single-executable-"
			   "applications_platform-support\">Platform support</a></li>\n</ul>\n"
			   "</li>\n";
	size_t len = 0, ilen = strlen(item), peak;
	char *doc = malloc(16 * MiB + 64);
	struct collect c;
	struct lp_diag d;

	len += (size_t)sprintf(doc, "<html><body><ul>\n");
	while (len + ilen < 16 * MiB)
		len += (size_t)sprintf(doc + len, "%s", item);
	ck_assert_int_eq(run_counted(lp_read_html, "toc.html", doc, len, 256 * MiB, &c, &d, &peak),
			 LP_OK);
	ck_assert_uint_eq(c.n_blocks, 2 * ((len - 17) / ilen));
	ck_assert_uint_lt(peak, 4 * MiB);
	free(doc);
}
END_TEST

START_TEST(test_html_budget)
{
	/* a budget too small for the parser: refused, naming the file */
	char *doc = malloc(MiB + 64);
	size_t len = 0, peak;
	struct collect c;
	struct lp_diag d;

	while (len + 40 < MiB)
		len += (size_t)sprintf(doc + len, "<p class=\"x%zu\">words here</p>\n", len);
	ck_assert_int_eq(run_counted(lp_read_html, "big.html", doc, len, 64 * 1024, &c, &d, &peak),
			 LP_E_NOMEM);
	ck_assert_str_eq(d.file, "big.html");
	ck_assert_uint_le(peak, 64 * 1024);
	free(doc);
}
END_TEST

START_TEST(test_html_sink_error)
{
	const char *doc = "<p>a</p><p>b</p><p>c</p><p>d</p>";
	struct collect c;
	struct lp_diag d;

	collect_init(&c, doc, strlen(doc), 1);
	c.fail_after = 2;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_html("doc", doc, strlen(doc), &c.sink, &d), LP_E_IO);
	ck_assert_str_eq(d.msg, "sink refused block 2");
	ck_assert_uint_eq(c.n_blocks, 2);
	free(c.out);
}
END_TEST

#endif /* LP_HAVE_LIBXML2 */

/* ------------------------------------------------------------------ */
/* Markdown                                                            */

#ifdef LP_HAVE_MD4C

START_TEST(test_md_structure)
{
	const char *doc =
		"Title\n=====\n\n"
		"Some *emphasis*, `code span`, a [link](http://x.org \"t\") and &copy; &#65;.\n"
		"Second line.\n\n"
		"## Section two\n\n"
		"- one\n- two\n  - nested\n\n"
		"| Name | Size |\n|------|-----:|\n| a    | 1    |\n\n"
		"```c\nint x;\n  y();\n```\n\n"
		"    indented\n    code\n\n"
		"> quoted *text*\n>\n> more\n\n"
		"<div align=center><img src=x></div>\n\n"
		"### Three ###\n";

	ck_assert_str_eq(blocks(lp_read_markdown, doc),
			 "H1 Title\n"
			 "P Some emphasis, code span, a link and \xC2\xA9 A. Second line.\n"
			 "H2 Section two\n"
			 "L1 one\n"
			 "L1 two\n"
			 "L2 nested\n"
			 "T* Name|Size\n"
			 "T a|1\n"
			 "C int x;/  y();\n"
			 "C indented/code\n"
			 "Q quoted text\n"
			 "Q more\n"
			 "H3 Three\n");
}
END_TEST

START_TEST(test_md_loose_list)
{
	ck_assert_str_eq(blocks(lp_read_markdown, "1. first\n\n   more of it\n\n2. second\n"),
			 "L1 first\nL1 more of it\nL1 second\n");
}
END_TEST

START_TEST(test_md_range_text)
{
	check_ranges(lp_read_markdown,
		     "# Alpha beta\n\nGamma **delta**\n\n- Epsilon\n\n| Zeta |\n|---|\n| eta |\n", 5);
}
END_TEST

START_TEST(test_md_nesting)
{
	/* 100,000 nested quotes, then 100,000 nested list items, then
	 * unclosed emphasis and brackets: read, no hang */
	size_t n = 100000, len = 0, peak;
	char *doc = malloc(n * 8 + 64);
	struct collect c;
	struct lp_diag d;

	for (size_t i = 0; i < n; i++)
		doc[len++] = '>';
	len += (size_t)sprintf(doc + len, " deep\n\n");
	ck_assert_int_eq(run_counted(lp_read_markdown, "q.md", doc, len, 256 * MiB, &c, &d, &peak),
			 LP_OK);
	ck_assert_uint_eq(c.n_blocks, 1);

	len = 0;
	for (size_t i = 0; i < n / 2; i++)
		len += (size_t)sprintf(doc + len, "- ");
	len += (size_t)sprintf(doc + len, "item\n");
	ck_assert_int_eq(run_counted(lp_read_markdown, "l.md", doc, len, 256 * MiB, &c, &d, &peak),
			 LP_OK);
	ck_assert_uint_eq(c.n_blocks, 1);

	len = 0;
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(doc + len, i % 2 ? "*[" : "_(");
	ck_assert_int_eq(run_counted(lp_read_markdown, "e.md", doc, len, 256 * MiB, &c, &d, &peak),
			 LP_OK);
	ck_assert_uint_eq(c.n_blocks, 1);
	ck_assert_uint_gt(c.bytes, len / 2);
	free(doc);
}
END_TEST

START_TEST(test_md_link_refs)
{
	/* a reference definition with a 1 MiB destination, which md4c
	 * would rescan at each of 10,000 uses: refused with its line; one
	 * of 60 KiB is read; and 2 MiB of references to labels never
	 * defined */
	size_t len = 0, peak;
	char *doc = malloc(4 * MiB);
	struct collect c;
	struct lp_diag d;

	len += (size_t)sprintf(doc, "# refs\n\n[big]: http://x.org/");
	memset(doc + len, 'a', MiB);
	len += MiB;
	len += (size_t)sprintf(doc + len, "\n\n");
	for (int i = 0; i < 10000; i++)
		len += (size_t)sprintf(doc + len, "[t][big] ");
	ck_assert_int_eq(run_counted(lp_read_markdown, "refs.md", doc, len, 256 * MiB, &c, &d,
				     &peak),
			 LP_E_INPUT);
	ck_assert_str_eq(d.file, "refs.md");
	ck_assert_int_eq(d.line, 3);
	ck_assert_msg(strstr(d.msg, "link reference definition") != NULL, "%s", d.msg);

	len = (size_t)sprintf(doc, "[big]: http://x.org/");
	memset(doc + len, 'a', 60 * 1024);
	len += 60 * 1024;
	len += (size_t)sprintf(doc + len, "\n\n");
	for (int i = 0; i < 100; i++)
		len += (size_t)sprintf(doc + len, "[t][big] ");
	len += (size_t)sprintf(doc + len, "\n\n");
	for (size_t i = 0; len + 16 < 3 * MiB; i++)
		len += (size_t)sprintf(doc + len, "[n%zu] ", i);
	ck_assert_int_eq(run_counted(lp_read_markdown, "refs.md", doc, len, 256 * MiB, &c, &d,
				     &peak),
			 LP_OK);
	/* the uses, then 2.9 MiB of labels in LP_GATHER_MAX parts */
	ck_assert_uint_eq(c.n_blocks, 1 + 3);
	ck_assert(!c.bad_utf8);
	free(doc);
}
END_TEST

START_TEST(test_md_budget)
{
	/* md4c's memory is charged before it runs: a budget below it
	 * refuses the document with a message */
	char *doc = malloc(MiB);
	size_t peak;
	struct collect c;
	struct lp_diag d;

	memset(doc, 'a', MiB);
	ck_assert_int_eq(run_counted(lp_read_markdown, "a.md", doc, MiB, MiB, &c, &d, &peak),
			 LP_E_NOMEM);
	ck_assert(d.msg[0]);
	ck_assert_str_eq(d.file, "a.md");
	free(doc);
}
END_TEST

/* A document over the reader's window is parsed a window at a time:
 * the same blocks as whole (a fence or a comment with blank lines in
 * it is never cut, a link defined only at the end resolves in every
 * window), byte ranges right, and a tracked peak flat in its size. */
static size_t md_windows_run(size_t pad, size_t reps, int check)
{
	static const char chunk[] =
		"# Part\n\nSee [the manual][man] for more.\n\n"
		"```\ncode line one\n\ncode line two\n```\n\n"
		"<!--\nhidden\n\nstill hidden\n-->\n\n"
		"- item one\n\n- item two\n\n"
		"A closing paragraph that ends the part.\n\n";
	static const char blocks[] =
		"H1 Part\nP See the manual for more.\nC code line one//code line two\n"
		"L1 item one\nL1 item two\nP A closing paragraph that ends the part.\n";
	static const char def[] = "[man]: https://example.org/manual\n";
	size_t n = pad + 2 + reps * (sizeof(chunk) - 1) + sizeof(def) - 1, at = 0, peak;
	char *doc = malloc(n), *want = malloc(pad + 4 + reps * (sizeof(blocks) - 1) + 1);
	struct collect c;
	struct lp_diag d;
	const char *h;

	memset(doc, 'x', pad);
	memcpy(doc + pad, "\n\n", 2);
	for (size_t i = 0; i < reps; i++)
		memcpy(doc + pad + 2 + i * (sizeof(chunk) - 1), chunk, sizeof(chunk) - 1);
	memcpy(doc + n - (sizeof(def) - 1), def, sizeof(def) - 1);
	memcpy(want, "P ", 2);
	memset(want + 2, 'x', pad);
	at = pad + 2;
	want[at++] = '\n';
	for (size_t i = 0; i < reps; i++, at += sizeof(blocks) - 1)
		memcpy(want + at, blocks, sizeof(blocks) - 1);
	want[at] = '\0';
	collect_init(&c, doc, n, check);
	lp_diag_init(&d);
	lp_mem_reset_peaks();
	ck_assert_int_eq(lp_read_markdown("big.md", doc, n, &c.sink, &d), LP_OK);
	peak = lp_mem_peak(LP_MEM_DOC);
	ck_assert_uint_eq(c.n_blocks, 1 + 6 * reps);
	ck_assert(!c.bad_range);
	if (check) {
		ck_assert_msg(c.len == at && !memcmp(c.out, want, at), "pad %zu: blocks differ",
			      pad);
		/* the last heading's bytes are its own */
		h = doc + pad + 2 + (reps - 1) * (sizeof(chunk) - 1);
		ck_assert(!memcmp(h, "# Part", 6));
	}
	free(c.out);
	free(doc);
	free(want);
	return peak;
}

START_TEST(test_md_windows)
{
	size_t reps = (3 * MiB / 2) / 175, small, big;

	/* the cut falls on every line of the chunk as the padding moves */
	for (size_t pad = 1; pad < 175; pad += 13)
		md_windows_run(pad, reps, 1);
	small = md_windows_run(1, 2 * reps, 0);
	big = md_windows_run(1, 8 * reps, 0);
	/* the whole document's charge would be twice its size */
	ck_assert_uint_lt(small, 4 * MiB);
	ck_assert_uint_lt(big, small + small / 10);
}
END_TEST

/* The scans that cut windows and copy definitions stop at the last
 * byte: a document ending in a line of spaces, one whose only line is
 * 4 MiB long (malloc'ed to its size, so a sanitizer run sees a byte read
 * past it). */
START_TEST(test_md_window_edges)
{
	size_t n = 4 * MiB, peak;
	char *doc = malloc(n);
	struct collect c;
	struct lp_diag d;

	memset(doc, 'a', n);
	ck_assert_int_eq(run_counted(lp_read_markdown, "line.md", doc, n, 0, &c, &d, &peak), LP_OK);
	ck_assert_uint_eq(c.bytes, n);
	for (size_t i = 0; i + 1 < n; i += 64)
		doc[i] = '\n';
	memset(doc + n - 3, ' ', 3);
	ck_assert_int_eq(run_counted(lp_read_markdown, "spaces.md", doc, n, 0, &c, &d, &peak),
			 LP_OK);
	ck_assert(!c.bad_range);
	free(doc);
}
END_TEST

#endif /* LP_HAVE_MD4C */

/* ------------------------------------------------------------------ */
/* PDF                                                                 */

#ifdef LP_HAVE_POPPLER

static char pdf_dir[] = "/tmp/check_readers.XXXXXX";

/* Write the fixtures once, before the tests fork. */
static void pdf_setup(void)
{
	const char *top = getenv("top_srcdir");
	char cmd[4096];

	ck_assert_ptr_nonnull(mkdtemp(pdf_dir));
	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/data/docs/mkpdf.py' '%s'", top ? top : ".",
		 pdf_dir);
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

static void pdf_teardown(void)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pdf_dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", pdf_dir);
}

/* The fixture `name`, malloc'ed; its size in *len. */
static char *pdf_fixture(const char *name, size_t *len)
{
	char path[4200];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", pdf_dir, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "no fixture %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Read fixture `name` under a 64 MiB budget, counting its blocks. */
static enum lp_status pdf_read_fixture(const char *name, struct collect *c, struct lp_diag *d)
{
	size_t len, peak;
	char *buf = pdf_fixture(name, &len);
	enum lp_status st = run_counted(lp_read_pdf, name, buf, len, 64 * MiB, c, d, &peak);

	free(buf);
	return st;
}

START_TEST(test_pdf_text)
{
	size_t len;
	char *buf = pdf_fixture("text.pdf", &len);
	struct collect c;
	struct lp_diag d;
	const char *body = "The quick brown fox jumps over the lazy dog while the reader keeps "
			   "its memory bounded by reading one page at a time, and the default "
			   "timeout is sixty seconds for a well-known reason.\n";
	char want[4096];
	size_t n;

	collect_init(&c, buf, len, 1);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_pdf("text.pdf", buf, len, &c.sink, &d), LP_OK);
	/* the heading by its size; the header and footer of every page
	 * gone; "de-" + "fault" joined, "well-known" kept; pages right */
	n = (size_t)snprintf(want, sizeof(want),
			     "@1 H1 Getting Started\n@1 P This page is called alpha.\n@1 P %s"
			     "@1 P The alpha page ends here.\n", body);
	ck_assert_msg(!strncmp(c.out, want, n), "got:\n%s", c.out);
	snprintf(want, sizeof(want),
		 "@5 P This page is called echo.\n@5 P %s@5 P The echo page ends here.\n", body);
	ck_assert_msg(strstr(c.out, want) != NULL, "got:\n%s", c.out);
	/* a bold line at the body's size is a subheading */
	ck_assert_msg(strstr(c.out, "@2 H3 Reading Files\n@2 P This page is called bravo.\n"),
		      "got:\n%s", c.out);
	ck_assert_uint_eq(c.n_blocks, 2 + 3 * 5);
	ck_assert_ptr_null(strstr(c.out, "Acme"));
	ck_assert_ptr_null(strstr(c.out, "Page"));
	ck_assert_uint_eq(c.max_page, 5);
	ck_assert(!c.bad_page);
	free(c.out);
	free(buf);
}
END_TEST

START_TEST(test_pdf_outline)
{
	size_t len;
	char *buf = pdf_fixture("outline.pdf", &len);
	struct collect c;
	struct lp_diag d;
	const char *want =
		"@1 H1 Installing\n"
		"@1 P The quick brown fox jumps over the lazy dog while the reader keeps its "
		"memory bounded by reading a page.\n"
		"@1 L1 \xE2\x80\xA2 Building from the source tree\n"
		"@1 H2 Building from the source tree\n"
		"@1 P Run the configure script and then make in the top directory of the tree, "
		"as the other manuals say.\n"
		"@2 P ~~~~~~~~\n"
		"@2 H2 <dir prefix=\"default\">\n"
		"@2 P This element names a directory to scan for fonts, and Installing is a "
		"word that this page uses in its running text.\n"
		"@3 P The last page has no heading of its own at all, and its bookmark names "
		"nothing that is printed on it.\n"
		"@3 H2 5.1 Closing Words\n"
		"@3 P That is all there is to say.\n"
		"@4 P A fourth page, so that the running lines are known.\n"
		"@5 P A fifth page, for the same reason.\n";

	/* headings set like the body, known from the outline alone: each
	 * with its outline level, on its entry's page only; a wrapped title
	 * is one heading, with its number where a line of its own prints
	 * it, not with a rule above it; a list item naming the title is not
	 * the title; the named destination is followed */
	collect_init(&c, buf, len, 1);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_pdf("outline.pdf", buf, len, &c.sink, &d), LP_OK);
	ck_assert_str_eq(c.out, want);
	free(c.out);
	free(buf);
}
END_TEST

/* A real PDF (data/eval) whose section numbers poppler gives as lines
 * of their own, a running header's line between number and title:
 * the number stays with the title its bookmark names without it. */
START_TEST(test_pdf_outline_numbers)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	FILE *f;
	char *buf;
	long n;
	struct collect c;
	struct lp_diag d;

	snprintf(path, sizeof(path), "%s/data/eval/docs/debian-history.en.pdf", top ? top : ".");
	ck_assert_ptr_nonnull(f = fopen(path, "rb"));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	collect_init(&c, buf, (size_t)n, 1);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_pdf("debian-history.en.pdf", buf, (size_t)n, &c.sink, &d), LP_OK);
	ck_assert_msg(strstr(c.out, "\n@14 H2 4.3 The 2.x Releases\n") != NULL, "got:\n%.2000s",
		      c.out);
	ck_assert_msg(strstr(c.out, "\n@23 H3 4.13.5 July 2002: Martin Butterweck died\n") != NULL,
		      "got:\n%.2000s", c.out);
	free(c.out);
	free(buf);
}
END_TEST

START_TEST(test_pdf_10k_pages)
{
	struct collect c;
	struct lp_diag d;

	ck_assert_int_eq(pdf_read_fixture("pages10k.pdf", &c, &d), LP_OK);
	ck_assert_uint_eq(c.n_blocks, 10000);
	ck_assert_uint_eq(c.max_page, 10000);
	ck_assert(!c.bad_page);
	/* flat in the pages: poppler's charge for the document (1 MiB and
	 * a byte per byte of the file) and for one page (1 MiB and 1 KiB a
	 * character), beside the reader's own tables */
	ck_assert_uint_gt(lp_mem_peak(LP_MEM_DOC), 2 * MiB + 1600000);
	ck_assert_uint_lt(lp_mem_peak(LP_MEM_DOC), 3 * MiB + 1600000);
}
END_TEST

/* poppler's memory is charged: a budget too small for the document, or
 * for its first page, refuses it naming the file (and the page). */
START_TEST(test_pdf_budget)
{
	size_t len, peak;
	char *buf = pdf_fixture("text.pdf", &len);
	struct collect c;
	struct lp_diag d;

	ck_assert_int_eq(run_counted(lp_read_pdf, "text.pdf", buf, len, MiB / 2, &c, &d, &peak),
			 LP_E_NOMEM);
	ck_assert_str_eq(d.file, "text.pdf");
	ck_assert_msg(strstr(d.msg, "poppler's memory for the document") != NULL, "%s", d.msg);
	ck_assert_int_eq(run_counted(lp_read_pdf, "text.pdf", buf, len, 3 * MiB / 2, &c, &d, &peak),
			 LP_E_NOMEM);
	ck_assert_str_eq(d.file, "text.pdf");
	ck_assert_msg(strstr(d.msg, "page 1: poppler's memory for the page") != NULL, "%s", d.msg);
	ck_assert_uint_eq(c.n_blocks, 0);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 0);
	ck_assert_int_eq(run_counted(lp_read_pdf, "text.pdf", buf, len, 4 * MiB, &c, &d, &peak),
			 LP_OK);
	ck_assert_uint_eq(c.n_blocks, 17);
	free(buf);
}
END_TEST

/* A refused fixture: LP_E_INPUT, the file named, `want` in the message. */
static void pdf_refused(const char *name, const char *want)
{
	struct collect c;
	struct lp_diag d;

	ck_assert_int_eq(pdf_read_fixture(name, &c, &d), LP_E_INPUT);
	ck_assert_str_eq(d.file, name);
	ck_assert_msg(strstr(d.msg, want) != NULL, "%s: %s", name, d.msg);
	ck_assert_uint_eq(c.n_blocks, 0);
}

START_TEST(test_pdf_encrypted)
{
	pdf_refused("encrypted.pdf", "encrypted PDF: it needs a password");
}
END_TEST

START_TEST(test_pdf_no_text_layer)
{
	pdf_refused("image.pdf", "no text layer: run OCR first");
}
END_TEST

START_TEST(test_pdf_truncated)
{
	size_t len;
	struct lp_diag d;
	struct collect c;
	char *buf = pdf_fixture("truncated.pdf", &len);

	pdf_refused("truncated.pdf", "not a readable PDF (damaged or truncated)");
	/* the place: where the file stops */
	ck_assert_int_eq(pdf_read_fixture("truncated.pdf", &c, &d), LP_E_INPUT);
	ck_assert_int_eq(d.offset, (long long)len);
	free(buf);
}
END_TEST

/* A PDF cut short anywhere before its end is refused, naming the file
 * and the byte where it stops; one whose middle is lost, naming the
 * trailer that points past its end. */
START_TEST(test_pdf_cut_short)
{
	size_t len, eof, cuts = 0;
	char *buf = pdf_fixture("text.pdf", &len), *tail;
	struct collect c;
	struct lp_diag d;

	ck_assert_ptr_nonnull(tail = memmem(buf, len, "startxref", 9));
	ck_assert_ptr_nonnull(memmem(tail, len - (size_t)(tail - buf), "%%EOF", 5));
	eof = (size_t)((char *)memmem(tail, len - (size_t)(tail - buf), "%%EOF", 5) - buf);
	for (size_t cut = 64; cut < eof; cut += 61, cuts++) {
		collect_init(&c, buf, cut, 0);
		lp_diag_init(&d);
		ck_assert_int_eq(lp_read_pdf("cut.pdf", buf, cut, &c.sink, &d), LP_E_INPUT);
		ck_assert_str_eq(d.file, "cut.pdf");
		ck_assert_int_eq(d.offset, (long long)cut);
		ck_assert_msg(strstr(d.msg, "the file ends here") != NULL, "%zu: %s", cut, d.msg);
		ck_assert_uint_eq(c.n_blocks, 0);
	}
	ck_assert_uint_gt(cuts, 50);
	/* the first 200 bytes and the trailer: the table is past the end */
	memmove(buf + 200, tail, len - (size_t)(tail - buf));
	len = 200 + len - (size_t)(tail - buf);
	collect_init(&c, buf, len, 0);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_pdf("hole.pdf", buf, len, &c.sink, &d), LP_E_INPUT);
	ck_assert_str_eq(d.file, "hole.pdf");
	ck_assert_int_eq(d.offset, 200);
	ck_assert_msg(strstr(d.msg, "past the end of the file") != NULL, "%s", d.msg);
	free(buf);
}
END_TEST

START_TEST(test_pdf_malformed)
{
	pdf_refused("malformed.pdf", "not a readable PDF (damaged or truncated)");
}
END_TEST

START_TEST(test_pdf_not_pdf)
{
	struct collect c;
	struct lp_diag d;

	collect_init(&c, "x", 1, 1);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_pdf("a.pdf", "<html>hello</html>", 18, &c.sink, &d), LP_E_INPUT);
	ck_assert_str_eq(d.file, "a.pdf");
	ck_assert(strstr(d.msg, "not a PDF") != NULL);
	free(c.out);
}
END_TEST

START_TEST(test_pdf_sink_error)
{
	size_t len;
	char *buf = pdf_fixture("text.pdf", &len);
	struct collect c;
	struct lp_diag d;

	collect_init(&c, buf, len, 1);
	c.fail_after = 3;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_pdf("text.pdf", buf, len, &c.sink, &d), LP_E_IO);
	ck_assert_str_eq(d.msg, "sink refused block 3");
	ck_assert_uint_eq(c.n_blocks, 3);
	free(c.out);
	free(buf);
}
END_TEST

#endif /* LP_HAVE_POPPLER */

#if !defined(LP_HAVE_MD4C) || !defined(LP_HAVE_LIBXML2) || !defined(LP_HAVE_POPPLER)
#define LP_SOME_READER_MISSING 1
/* Each reader that is not built refuses naming its package. */
START_TEST(test_missing_readers)
{
	struct collect c;
	struct lp_diag d;
	collect_init(&c, "x", 1, 1);
#ifndef LP_HAVE_MD4C
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_markdown("a.md", "x", 1, &c.sink, &d), LP_E_INPUT);
	ck_assert(strstr(d.msg, "libmd4c-dev") != NULL);
#endif
#ifndef LP_HAVE_LIBXML2
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_html("a.html", "x", 1, &c.sink, &d), LP_E_INPUT);
	ck_assert(strstr(d.msg, "libxml2-dev") != NULL);
#endif
#ifndef LP_HAVE_POPPLER
	lp_diag_init(&d);
	ck_assert_int_eq(lp_read_pdf("a.pdf", "x", 1, &c.sink, &d), LP_E_INPUT);
	ck_assert(strstr(d.msg, "libpoppler-glib-dev") != NULL);
#endif
	free(c.out);
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("readers");
	TCase *tc;
	SRunner *sr;
	int failed;

#ifdef LP_HAVE_LIBXML2
	/* a 64 MiB page takes seconds alone, a minute on a loaded machine */
	tc = tcase_create("html");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_html_structure);
	tcase_add_test(tc, test_html_range_text);
	tcase_add_test(tc, test_html_meta_charset);
	tcase_add_test(tc, test_html_wrong_charset);
	tcase_add_test(tc, test_html_depth_bomb);
	tcase_add_test(tc, test_html_entity_bomb);
	tcase_add_test(tc, test_html_long_line);
	tcase_add_test(tc, test_html_dense_markup);
	tcase_add_test(tc, test_html_budget);
	tcase_add_test(tc, test_html_sink_error);
	suite_add_tcase(s, tc);
#endif
#ifdef LP_HAVE_MD4C
	tc = tcase_create("markdown");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_md_structure);
	tcase_add_test(tc, test_md_loose_list);
	tcase_add_test(tc, test_md_range_text);
	tcase_add_test(tc, test_md_nesting);
	tcase_add_test(tc, test_md_link_refs);
	tcase_add_test(tc, test_md_budget);
	tcase_add_test(tc, test_md_windows);
	tcase_add_test(tc, test_md_window_edges);
	suite_add_tcase(s, tc);
#endif
#ifdef LP_HAVE_POPPLER
	tc = tcase_create("pdf");
	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, pdf_setup, pdf_teardown);
	tcase_add_test(tc, test_pdf_text);
	tcase_add_test(tc, test_pdf_10k_pages);
	tcase_add_test(tc, test_pdf_encrypted);
	tcase_add_test(tc, test_pdf_no_text_layer);
	tcase_add_test(tc, test_pdf_outline);
	tcase_add_test(tc, test_pdf_outline_numbers);
	tcase_add_test(tc, test_pdf_budget);
	tcase_add_test(tc, test_pdf_truncated);
	tcase_add_test(tc, test_pdf_cut_short);
	tcase_add_test(tc, test_pdf_malformed);
	tcase_add_test(tc, test_pdf_not_pdf);
	tcase_add_test(tc, test_pdf_sink_error);
	suite_add_tcase(s, tc);
#endif
#ifdef LP_SOME_READER_MISSING
	tc = tcase_create("build");
	tcase_add_test(tc, test_missing_readers);
	suite_add_tcase(s, tc);
#endif

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
