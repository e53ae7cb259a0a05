/* check_text.c - document loading, sentence segmentation and chunking. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/status.h"
#include "core/utf8.h"
#include "text/alone.h"
#include "text/document.h"
#include "text/focus.h"
#include "text/money.h"
#include "text/request.h"
#include "text/lang.h"
#include "text/sentence.h"
#include "text/sides.h"
#include "text/split.h"

/* All sentences of `text`, each verbatim, joined by '|'. */
static char *sentences(const char *text)
{
	static char out[4096];
	size_t pos = 0, n = 0, len = strlen(text);
	struct lp_span s;

	out[0] = '\0';
	while (lp_sentence_next(text, len, &pos, &s)) {
		ck_assert_uint_le(s.off + s.len, len);
		ck_assert_uint_gt(s.len, 0);
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%.*s", n ? "|" : "",
				      (int)s.len, text + s.off);
	}
	ck_assert_uint_eq(pos, len);
	return out;
}

/* The mark a sentence ends with, as the segmenter reads it. */
START_TEST(test_sentence_mark_before)
{
	static const char en[] = "It ends. Or?";
	static const char zh[] = "它结束了。然后；再说";

	ck_assert_uint_eq(lp_sentence_mark_before(en, 8), 1);
	ck_assert_uint_eq(lp_sentence_mark_before(en, strlen(en)), 1);
	ck_assert_uint_eq(lp_sentence_mark_before(en, 7), 0);
	ck_assert_uint_eq(lp_sentence_mark_before(en, 0), 0);
	ck_assert_uint_eq(lp_sentence_mark_before(zh, 15), 3);   /* 。 */
	ck_assert_uint_eq(lp_sentence_mark_before(zh, 24), 3);   /* ； */
	ck_assert_uint_eq(lp_sentence_mark_before(zh, 12), 0);
}
END_TEST

/* A sentence end where only the text up to it is known: ASCII marks
 * before white space or the end, CJK ones anywhere, no decimal point. */
START_TEST(test_sentence_end_at)
{
	static const char en[] = "Pi is 3.14. Next";
	static const char zh[] = "它结束了。然后";

	ck_assert_uint_eq(lp_sentence_end_at(en, strlen(en), 11), 1);
	ck_assert_uint_eq(lp_sentence_end_at(en, 11, 11), 1);       /* the end */
	ck_assert_uint_eq(lp_sentence_end_at(en, strlen(en), 8), 0); /* "3.14" */
	ck_assert_uint_eq(lp_sentence_end_at(en, strlen(en), 12), 0);
	ck_assert_uint_eq(lp_sentence_end_at(zh, strlen(zh), 15), 3); /* 。 before 然 */
	ck_assert_uint_eq(lp_sentence_end_at(zh, strlen(zh), 12), 0);
}
END_TEST

/* The closers the segmenter keeps with a sentence, and the space after
 * them, are trimmed; nothing else is. */
START_TEST(test_sentence_trim_closers)
{
	static const char en[] = "He said \"go.\") \n";
	static const char zh[] = "他说：「好。」";
	static const char word[] = "no closer";

	ck_assert_uint_eq(lp_sentence_trim_closers(en, strlen(en)), 12);
	ck_assert_uint_eq(lp_sentence_mark_before(en, 12), 1);
	ck_assert_uint_eq(lp_sentence_trim_closers(zh, strlen(zh)), strlen(zh) - 3);
	ck_assert_uint_eq(lp_sentence_mark_before(zh, strlen(zh) - 3), 3);
	ck_assert_uint_eq(lp_sentence_trim_closers(word, strlen(word)), strlen(word));
	ck_assert_uint_eq(lp_sentence_trim_closers("\")", 2), 0);
}
END_TEST

START_TEST(test_sentence_english)
{
	ck_assert_str_eq(sentences("Hello world. How are you? Fine!"),
			 "Hello world.|How are you?|Fine!");
	ck_assert_str_eq(sentences("  Leading space.   Trailing space.  \n"),
			 "Leading space.|Trailing space.");
	ck_assert_str_eq(sentences("No terminator at all"), "No terminator at all");
	ck_assert_str_eq(sentences(""), "");
	ck_assert_str_eq(sentences(" \n\t "), "");
}
END_TEST

START_TEST(test_sentence_abbreviations)
{
	ck_assert_str_eq(sentences("Dr. Smith arrived. He sat down."),
			 "Dr. Smith arrived.|He sat down.");
	ck_assert_str_eq(sentences("Use a fruit, e.g. this apple. Then eat it."),
			 "Use a fruit, e.g. this apple.|Then eat it.");
	ck_assert_str_eq(sentences("Some fruit, i.e. Apples, are red. Yes."),
			 "Some fruit, i.e. Apples, are red.|Yes.");
	ck_assert_str_eq(sentences("Pi is 3.14 roughly. Right."),
			 "Pi is 3.14 roughly.|Right.");
	ck_assert_str_eq(sentences("He moved to the U.S.A. in 1990. Then he left."),
			 "He moved to the U.S.A. in 1990.|Then he left.");
	ck_assert_str_eq(sentences("J. R. R. Tolkien wrote it. See Fig. 3 and Mr. Brown."),
			 "J. R. R. Tolkien wrote it.|See Fig. 3 and Mr. Brown.");
	ck_assert_str_eq(sentences("Bring pens, paper etc. The rest is here."),
			 "Bring pens, paper etc.|The rest is here.");
	ck_assert_str_eq(sentences("It was in 1999. The end."), "It was in 1999.|The end.");
}
END_TEST

START_TEST(test_sentence_quotes_and_ellipsis)
{
	ck_assert_str_eq(sentences("He said \"Stop.\" Then he left."),
			 "He said \"Stop.\"|Then he left.");
	ck_assert_str_eq(sentences("\"Really?\" she asked. (Yes.) Fine."),
			 "\"Really?\" she asked.|(Yes.)|Fine.");
	ck_assert_str_eq(sentences("Wait... what happened... Nothing."),
			 "Wait... what happened...|Nothing.");
	ck_assert_str_eq(sentences("Really?! Yes."), "Really?!|Yes.");
	ck_assert_str_eq(sentences("She wrote \xe2\x80\x9cgo.\xe2\x80\x9d Then stopped."),
			 "She wrote \xe2\x80\x9cgo.\xe2\x80\x9d|Then stopped.");
}
END_TEST

START_TEST(test_sentence_paragraphs)
{
	ck_assert_str_eq(sentences("A heading\n\nFirst line of text\nwraps here. Next.\n \nLast"),
			 "A heading|First line of text\nwraps here.|Next.|Last");
}
END_TEST

START_TEST(test_sentence_cjk)
{
	ck_assert_str_eq(sentences("你好。我很好！你呢？"), "你好。|我很好！|你呢？");
	ck_assert_str_eq(sentences("他说：“走吧。”然后走了；就这样"),
			 "他说：“走吧。”|然后走了；|就这样");
	ck_assert_str_eq(sentences("全角问号？Yes. 中文句子。"), "全角问号？|Yes.|中文句子。");
	ck_assert_str_eq(sentences("English first.中文在后。"), "English first.|中文在后。");
	ck_assert_str_eq(sentences("東京は大きい。 Tokyo is big. 本当？"),
			 "東京は大きい。|Tokyo is big.|本当？");
}
END_TEST

START_TEST(test_sentence_invalid_bytes_terminate)
{
	const char text[] = "ab\xff\xfe. Cd\xe4. \xe4\xb8";
	size_t pos = 0, n = 0;
	struct lp_span s;

	while (lp_sentence_next(text, sizeof(text) - 1, &pos, &s)) {
		ck_assert_uint_le(s.off + s.len, sizeof(text) - 1);
		n++;
	}
	ck_assert_uint_eq(n, 3);
}
END_TEST

/* A long line without punctuation, and one made only of full stops, must
 * each be one linear pass (a quadratic scan would time out here). */
START_TEST(test_sentence_linear_on_long_line)
{
	size_t len = 20u << 20, pos = 0, n = 0;
	char *t = malloc(len);
	struct lp_span s;

	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < len; i++)
		t[i] = (i % 7 == 6) ? ' ' : 'a';
	while (lp_sentence_next(t, len, &pos, &s))
		n++;
	ck_assert_uint_eq(n, 1);
	memset(t, '.', len);
	pos = 0;
	n = 0;
	while (lp_sentence_next(t, len, &pos, &s))
		n++;
	ck_assert_uint_eq(n, 1);
	for (size_t i = 0; i < len; i++)
		t[i] = (i % 2) ? ' ' : '\n';
	t[len / 2] = 'x';
	pos = 0;
	n = 0;
	while (lp_sentence_next(t, len, &pos, &s))
		n++;
	ck_assert_uint_eq(n, 1);
	free(t);
}
END_TEST


/* ---- document loading ---- */

static enum lp_status load(const char *bytes, size_t n, enum lp_invalid_utf8 mode,
			   struct lp_document *doc, struct lp_diag *d)
{
	lp_diag_init(d);
	return lp_document_from_bytes("t.txt", bytes, n, mode, doc, d);
}

START_TEST(test_document_clean_is_not_copied)
{
	const char text[] = "Hello, world.\n\xe4\xbd\xa0\xe5\xa5\xbd\n";
	struct lp_document doc;
	struct lp_diag d;

	ck_assert_int_eq(load(text, sizeof(text) - 1, LP_UTF8_ERROR, &doc, &d), LP_OK);
	ck_assert_ptr_eq(doc.text, text);
	ck_assert_ptr_null(doc.copy);
	ck_assert_uint_eq(doc.len, sizeof(text) - 1);
	lp_document_release(&doc);
}
END_TEST

START_TEST(test_document_bom_and_crlf)
{
	const char text[] = "\xef\xbb\xbfline one\r\nline two\rline three\r\n";
	struct lp_document doc;
	struct lp_diag d;
	size_t before = lp_mem_current(LP_MEM_DOC);

	ck_assert_int_eq(load(text, sizeof(text) - 1, LP_UTF8_ERROR, &doc, &d), LP_OK);
	ck_assert_ptr_nonnull(doc.copy);
	ck_assert_str_eq(doc.text, "line one\nline two\nline three\n");
	ck_assert_uint_eq(doc.len, strlen(doc.text));
	ck_assert_uint_gt(lp_mem_current(LP_MEM_DOC), before);
	lp_document_release(&doc);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), before);
}
END_TEST

START_TEST(test_document_invalid_utf8_offset)
{
	char text[2000];
	struct lp_document doc;
	struct lp_diag d;

	memset(text, 'a', sizeof(text));
	text[1234] = (char)0xC3; /* lead byte followed by an ASCII letter */
	ck_assert_int_eq(load(text, sizeof(text), LP_UTF8_ERROR, &doc, &d), LP_E_INPUT);
	ck_assert_int_eq(d.offset, 1234);
	ck_assert_str_eq(d.file, "t.txt");
	ck_assert_str_eq(d.msg, "invalid UTF-8 at byte 1234 (use input: {invalid_utf8: replace} to replace it)");
	ck_assert_ptr_null(doc.text);
}
END_TEST

START_TEST(test_document_replace_mode)
{
	const char text[] = "ok \xff\xfe mid \xe4\xb8 end \xc0\xaf.";
	struct lp_document doc;
	struct lp_diag d;

	ck_assert_int_eq(load(text, sizeof(text) - 1, LP_UTF8_REPLACE, &doc, &d), LP_OK);
	ck_assert_str_eq(doc.text, "ok \xef\xbf\xbd\xef\xbf\xbd mid \xef\xbf\xbd end \xef\xbf\xbd.");
	ck_assert_uint_eq(doc.n_replaced, 4);
	ck_assert_uint_eq(lp_utf8_find_invalid((const unsigned char *)doc.text, doc.len), doc.len);
	lp_document_release(&doc);
}
END_TEST

START_TEST(test_document_refuses_binary_and_empty)
{
	const char bin[] = "text\0more";
	struct lp_document doc;
	struct lp_diag d;

	ck_assert_int_eq(load(bin, sizeof(bin) - 1, LP_UTF8_REPLACE, &doc, &d), LP_E_INPUT);
	ck_assert_str_eq(d.msg, "binary file (NUL byte at offset 4), not text");
	ck_assert_int_eq(d.offset, 4);
	ck_assert_int_eq(load("", 0, LP_UTF8_ERROR, &doc, &d), LP_E_INPUT);
	ck_assert_str_eq(d.msg, "empty document");
	ck_assert_int_eq(load(" \r\n\t\n\xe3\x80\x80", 8, LP_UTF8_ERROR, &doc, &d), LP_E_INPUT);
	ck_assert_str_eq(d.msg, "empty document");
	ck_assert_int_eq(load("\xef\xbb\xbf", 3, LP_UTF8_ERROR, &doc, &d), LP_E_INPUT);
	ck_assert_str_eq(d.msg, "empty document");
}
END_TEST

START_TEST(test_document_load_file)
{
	char path[] = "/tmp/lp_docXXXXXX";
	int fd = mkstemp(path);
	struct lp_document doc;
	struct lp_diag d;
	size_t before = lp_mem_current(LP_MEM_DOC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "a\r\nb", 4), 4);
	close(fd);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_document_load(path, LP_UTF8_ERROR, &doc, &d), LP_OK);
	ck_assert_str_eq(doc.text, "a\nb");
	ck_assert_str_eq(doc.path, path);
	/* The raw mapping (4 bytes) is dropped once copied: only the copy
	 * (sized for the raw length plus a NUL) stays accounted, and what the
	 * model reserves for its block table's pages (doc/model.h). */
	ck_assert_uint_eq(doc.model.reserved, sizeof(struct lp_doc_block));
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), before + 5 + doc.model.reserved);
	lp_document_release(&doc);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), before);
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "clean text", 10), 10);
	close(fd);
	ck_assert_int_eq(lp_document_load(path, LP_UTF8_ERROR, &doc, &d), LP_OK);
	ck_assert_ptr_null(doc.copy);
	ck_assert_int_eq(memcmp(doc.text, "clean text", 10), 0);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), before + 10 + doc.model.reserved);
	lp_document_release(&doc);
	unlink(path);
	ck_assert_int_eq(lp_document_load("/nonexistent/x", LP_UTF8_ERROR, &doc, &d), LP_E_IO);
	ck_assert_str_eq(d.file, "/nonexistent/x");
}
END_TEST

/* A 50 MB single line with a CR at its end forces a copy: one pass. */
START_TEST(test_document_large_single_line)
{
	size_t n = 50u << 20;
	char *t = malloc(n);
	struct lp_document doc;
	struct lp_diag d;

	ck_assert_ptr_nonnull(t);
	memset(t, 'x', n);
	t[n - 1] = '\r';
	t[n / 2] = (char)0xFF;
	ck_assert_int_eq(load(t, n, LP_UTF8_REPLACE, &doc, &d), LP_OK);
	ck_assert_uint_eq(doc.len, n + 2);
	ck_assert_int_eq(doc.text[doc.len - 1], '\n');
	lp_document_release(&doc);
	free(t);
}
END_TEST

/* ---- splitting ---- */

static struct lp_splitter *splitter(enum lp_split_unit unit, size_t size, size_t overlap,
				    enum lp_split_boundary b, const char *pattern)
{
	struct lp_split_params p = lp_split_default_params();
	struct lp_splitter *s;
	struct lp_diag d;

	p.unit = unit;
	p.size = size;
	p.overlap = overlap;
	p.boundary = b;
	p.pattern = pattern;
	lp_diag_init(&d);
	ck_assert_msg(lp_split_new(&p, &s, &d) == LP_OK, "%s", d.msg);
	return s;
}

/* The chunks of `text` as verbatim slices joined by '|'. */
static char *chunks(struct lp_splitter *s, const char *text)
{
	static char out[8192];
	struct lp_span *v;
	size_t n, o = 0;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_split_run(s, text, strlen(text), &v, &n, &d), LP_OK);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%.*s", i ? "|" : "",
				      (int)v[i].len, text + v[i].off);
	lp_mem_free(v);
	lp_split_free(s);
	return out;
}

START_TEST(test_split_units)
{
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_CHARS, 3, 1, LP_BOUNDARY_NONE, NULL), "abc de fg"),
			 "abc|c de|e fg");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_CHARS, 2, 0, LP_BOUNDARY_NONE, NULL), "你好吗"),
			 "你好|吗");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_WORDS, 2, 0, LP_BOUNDARY_NONE, NULL),
				"one two, three\n four 中文"), "one two,|three\n four|中文");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_WORDS, 3, 2, LP_BOUNDARY_NONE, NULL), "a b c d"),
			 "a b c|b c d");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_SENTENCES, 2, 1, LP_BOUNDARY_NONE, NULL),
				"One. Two. Three."), "One. Two.|Two. Three.");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_PARAGRAPHS, 1, 0, LP_BOUNDARY_NONE, NULL),
				"\n\nFirst para\nstill.\n\n  \nSecond.\n"), "First para\nstill.|Second.");
	/* "tokenization" is 12 letters: three pieces of four. */
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_TOKENS, 2, 0, LP_BOUNDARY_NONE, NULL),
				"tokenization, ok"), "tokeniza|tion,|ok");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_TOKENS, 4, 1, LP_BOUNDARY_NONE, NULL),
				"你好。世界"), "你好。世|世界");
}
END_TEST

START_TEST(test_split_regex_keeps_headings_with_sections)
{
	const char *md = "Preamble text.\n\n# One\nbody one\n\n## Two\nbody two\n# Three\n";

	ck_assert_str_eq(chunks(splitter(LP_SPLIT_REGEX, 1, 0, LP_BOUNDARY_NONE, "(?m)^#+ "), md),
			 "Preamble text.|# One\nbody one|## Two\nbody two|# Three");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_REGEX, 2, 1, LP_BOUNDARY_NONE, "(?m)^#+ "), md),
			 "Preamble text.\n\n# One\nbody one|# One\nbody one\n\n## Two\nbody two|"
			 "## Two\nbody two\n# Three");
	/* Invalid UTF-8 never reaches PCRE2. */
	{
		struct lp_splitter *s = splitter(LP_SPLIT_REGEX, 1, 0, LP_BOUNDARY_NONE, "b");
		struct lp_span *v;
		size_t n;
		struct lp_diag d;

		lp_diag_init(&d);
		ck_assert_int_eq(lp_split_run(s, "ab\xff" "c", 4, &v, &n, &d), LP_E_INPUT);
		ck_assert_int_eq(d.offset, 2);
		ck_assert_ptr_null(v);
		lp_split_free(s);
	}
	/* A pattern that matches the empty string still makes progress. */
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_REGEX, 2, 0, LP_BOUNDARY_NONE, "x*"), "abc"),
			 "ab|c");
}
END_TEST

START_TEST(test_split_boundary_prefers_sentence_end)
{
	const char *t = "One two three. Four five six seven. Eight nine.";

	ck_assert_str_eq(chunks(splitter(LP_SPLIT_WORDS, 5, 0, LP_BOUNDARY_NONE, NULL), t),
			 "One two three. Four five|six seven. Eight nine.");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_WORDS, 5, 0, LP_BOUNDARY_SENTENCE, NULL), t),
			 "One two three.|Four five six seven.|Eight nine.");
	/* No sentence end fits: fall back to the hard limit. */
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_WORDS, 2, 0, LP_BOUNDARY_SENTENCE, NULL), t),
			 "One two|three.|Four five|six seven.|Eight nine.");
	/* The cut must leave more than `overlap` words in the chunk. */
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_WORDS, 5, 3, LP_BOUNDARY_SENTENCE, NULL), t),
			 "One two three. Four five|three. Four five six seven.|"
			 "five six seven. Eight nine.");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_SENTENCES, 3, 0, LP_BOUNDARY_PARAGRAPH, NULL),
				"One. Two.\n\nThree. Four. Five. Six."),
			 "One. Two.|Three. Four. Five.|Six.");
	ck_assert_str_eq(chunks(splitter(LP_SPLIT_CHARS, 8, 0, LP_BOUNDARY_SENTENCE, NULL),
				"你好。我很好！谢谢你。"), "你好。我很好！|谢谢你。");
}
END_TEST

START_TEST(test_split_rejects_bad_params)
{
	struct lp_split_params p = lp_split_default_params();
	struct lp_splitter *s = (void *)1;
	struct lp_diag d;

	ck_assert_int_eq(p.unit, LP_SPLIT_TOKENS);
	ck_assert_uint_eq(p.size, 384);
	ck_assert_int_eq(p.boundary, LP_BOUNDARY_SENTENCE);
	lp_diag_init(&d);
	p.overlap = 400;
	ck_assert_int_eq(lp_split_new(&p, &s, &d), LP_E_CONFIG);
	ck_assert_str_eq(d.msg, "overlap (400) must be smaller than size (384)");
	ck_assert_ptr_null(s);
	p.overlap = 0;
	p.size = 0;
	ck_assert_int_eq(lp_split_new(&p, &s, &d), LP_E_CONFIG);
	p.size = 10;
	p.unit = LP_SPLIT_REGEX;
	ck_assert_int_eq(lp_split_new(&p, &s, &d), LP_E_CONFIG);
	ck_assert_str_eq(d.msg, "unit regex needs a pattern");
	p.pattern = "ab(c";
	ck_assert_int_eq(lp_split_new(&p, &s, &d), LP_E_CONFIG);
	ck_assert_int_eq(d.offset, 4);
	ck_assert_ptr_nonnull(strstr(d.msg, "invalid pattern 'ab(c': "));
	ck_assert_ptr_nonnull(strstr(d.msg, "at offset 4"));
	ck_assert_ptr_null(s);
	lp_split_free(NULL);
}
END_TEST

/* Counts letters only: a stand-in for a model tokenizer. */
static size_t count_letters(void *ctx, const char *t, size_t n)
{
	size_t k = 0;

	(*(size_t *)ctx)++;
	for (size_t i = 0; i < n; i++)
		k += ((t[i] | 0x20) >= 'a' && (t[i] | 0x20) <= 'z');
	return k;
}

START_TEST(test_split_custom_counter)
{
	struct lp_split_params p = lp_split_default_params();
	struct lp_splitter *s;
	struct lp_span *v;
	size_t n, calls = 0;
	struct lp_diag d;
	const char *t = "abc de, f ghij";

	p.size = 5;
	p.boundary = LP_BOUNDARY_NONE;
	p.counter.count = count_letters;
	p.counter.ctx = &calls;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_split_new(&p, &s, &d), LP_OK);
	/* Weights: abc 3, de 2, "," 1 (at least one), f 1, ghij 4. */
	ck_assert_uint_eq(lp_split_count(s, t, strlen(t)), 11);
	ck_assert_uint_gt(calls, 0);
	ck_assert_int_eq(lp_split_run(s, t, strlen(t), &v, &n, &d), LP_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(v[0].off, 0);
	ck_assert_uint_eq(v[0].len, 6);  /* "abc de" */
	ck_assert_uint_eq(v[1].off, 6);  /* ", f" */
	ck_assert_uint_eq(v[2].off, 10); /* "ghij" */
	lp_mem_free(v);
	lp_split_free(s);
}
END_TEST

/* A 20 MB line without white space or punctuation: every unit must still
 * be a linear pass (a rescan per chunk from the line start would not end). */
START_TEST(test_split_long_line_is_linear)
{
	static const enum lp_split_unit units[] = { LP_SPLIT_TOKENS, LP_SPLIT_WORDS,
		LP_SPLIT_CHARS, LP_SPLIT_SENTENCES, LP_SPLIT_REGEX };
	size_t len = 20u << 20, n;
	char *t = malloc(len);
	struct lp_span *v;
	struct lp_diag d;

	ck_assert_ptr_nonnull(t);
	memset(t, 'a', len);
	lp_diag_init(&d);
	for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
		struct lp_splitter *s = splitter(units[k], 100000, 1000, LP_BOUNDARY_SENTENCE, "(?m)^#");
		ck_assert_int_eq(lp_split_run(s, t, len, &v, &n, &d), LP_OK);
		ck_assert_uint_ge(n, 1);
		ck_assert_uint_eq(v[n - 1].off + v[n - 1].len, len);
		lp_mem_free(v);
		lp_split_free(s);
	}
	free(t);
}
END_TEST

/* Every tracked allocation of a load and a split, failed in turn: each
 * failure is reported as LP_E_NOMEM and leaves no tracked memory behind.
 * The sequence: the file mapping, the normalised copy, the plain-text
 * reader's line table, the model's block-table reservation, the splitter,
 * its pattern, then the chunk table growing 64 -> 128 -> 256. */
#define LOAD_SPLIT_ALLOCS 9

START_TEST(test_load_and_split_alloc_faults)
{
	char path[] = "/tmp/lp_faultXXXXXX", n[16];
	int fd = mkstemp(path);
	struct lp_split_params p = lp_split_default_params();
	struct lp_document doc;
	struct lp_splitter *s = NULL;
	struct lp_span *v = NULL;
	struct lp_diag d;
	size_t nc = 0;
	enum lp_status st;

	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(write(fd, "word\r\n", 6), 6);
	close(fd);
	snprintf(n, sizeof(n), "%d", _i);
	setenv("LPIPE_FAIL_ALLOC", n, 1); /* forked test: stays in this child */
	p.unit = LP_SPLIT_REGEX;
	p.pattern = "\\n";
	p.size = 1;
	lp_diag_init(&d);
	st = lp_document_load(path, LP_UTF8_ERROR, &doc, &d);
	if (!st) {
		st = lp_split_new(&p, &s, &d);
		if (!st)
			st = lp_split_run(s, doc.text, doc.len, &v, &nc, &d);
		lp_split_free(s);
		lp_mem_free(v);
		lp_document_release(&doc);
	}
	unlink(path);
	if (_i <= LOAD_SPLIT_ALLOCS) {
		ck_assert_int_eq(st, LP_E_NOMEM);
		ck_assert_ptr_nonnull(strstr(d.msg, "LPIPE_FAIL_ALLOC"));
	} else {
		ck_assert_int_eq(st, LP_OK);
		ck_assert_uint_eq(nc, 200);
	}
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

/* ---- properties on random documents ---- */

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* A random text mixing ASCII words, abbreviations, decimals, accented
 * letters, CJK, punctuation, headings, newlines and blank lines. */
static size_t random_text(char *out, size_t cap)
{
	static const char *const parts[] = {
		"the", "Cat", "sat", "on", "a", "mat", "tokenization", "x", "Dr.", "e.g.",
		"3.14", "U.S.A.", "caf\xc3\xa9", "na\xc3\xafve", "\xe4\xbd\xa0\xe5\xa5\xbd",
		"\xe4\xb8\x96\xe7\x95\x8c\xe3\x80\x82", "\xe5\xa5\xbd\xef\xbc\x81", ".", ",",
		"!", "?", "...", "\"", "(", ")", "\n", "\n\n", "\n# ", "\n## ", "  ", "\t",
		"\xe3\x80\x80", "42", "\xf0\x9f\x98\x80",
	};
	size_t n = 0, words = 1 + rnd(120);

	for (size_t w = 0; w < words; w++) {
		const char *p = parts[rnd(sizeof(parts) / sizeof(parts[0]))];
		size_t k = strlen(p);
		if (n + k + 2 >= cap)
			break;
		memcpy(out + n, p, k);
		n += k;
		if (rnd(3))
			out[n++] = ' ';
	}
	out[n] = '\0';
	return n;
}

static int is_space_at(const char *t, size_t len, size_t i, size_t *n)
{
	uint32_t cp;
	int k = lp_utf8_decode((const unsigned char *)t + i, len - i, &cp);

	*n = k ? (size_t)k : 1;
	return k && lp_utf8_is_space(cp);
}

static void assert_blank(const char *t, size_t len, size_t from, size_t to)
{
	size_t n;

	for (size_t i = from; i < to; i += n)
		ck_assert_msg(is_space_at(t, len, i, &n), "non-space at %zu not covered", i);
}

static int cp_start(const char *t, size_t len, size_t i)
{
	return i == len || ((unsigned char)t[i] & 0xC0) != 0x80;
}

/* Units of text[a, b): those of `units` (the whole text split with size 1,
 * so one unit per chunk) lying inside it. */
static size_t units_in(const struct lp_span *units, size_t n_units, size_t a, size_t b)
{
	size_t k = 0;

	for (size_t i = 0; i < n_units; i++)
		k += units[i].off >= a && units[i].off + units[i].len <= b;
	return k;
}

static void check_invariants(struct lp_splitter *s, const char *t, size_t len)
{
	const struct lp_split_params *p = lp_split_params_of(s);
	struct lp_splitter *one = splitter(p->unit, 1, 0, LP_BOUNDARY_NONE, p->pattern);
	struct lp_span *v, *u;
	size_t n, nu, covered = 0, sp;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_split_run(s, t, len, &v, &n, &d), LP_OK);
	ck_assert_int_eq(lp_split_run(one, t, len, &u, &nu, &d), LP_OK);
	for (size_t i = 0; i < n; i++) {
		size_t off = v[i].off, end = off + v[i].len;
		ck_assert_uint_le(end, len);
		ck_assert_uint_gt(v[i].len, 0);
		ck_assert(cp_start(t, len, off) && cp_start(t, len, end));
		ck_assert(!is_space_at(t, len, off, &sp));
		ck_assert_uint_le(units_in(u, nu, off, end), p->size);
		if (p->unit != LP_SPLIT_REGEX) /* a slice loses the pattern's context */
			ck_assert_uint_eq(lp_split_count(s, t + off, v[i].len), units_in(u, nu, off, end));
		assert_blank(t, len, covered, off > covered ? off : covered);
		if (i) {
			size_t pend = v[i - 1].off + v[i - 1].len;
			ck_assert_uint_gt(off, v[i - 1].off);
			ck_assert_uint_gt(end, pend);
			if (p->overlap == 0)
				ck_assert_uint_ge(off, pend);
			else
				ck_assert_msg(units_in(u, nu, off, pend) == p->overlap,
					      "unit %d size %zu overlap %zu boundary %d: [%.*s] then [%.*s]",
					      (int)p->unit, p->size, p->overlap, (int)p->boundary,
					      (int)v[i - 1].len, t + v[i - 1].off, (int)v[i].len, t + off);
		}
		if (end > covered)
			covered = end;
	}
	assert_blank(t, len, covered, len);
	lp_mem_free(v);
	lp_mem_free(u);
	lp_split_free(one);
}

START_TEST(test_split_properties_random)
{
	static const char *const patterns[] = { "(?m)^#+ ", "\\n\\n", "[.!?]" };
	char text[4096];

	for (int iter = 0; iter < 400; iter++) {
		size_t len = random_text(text, sizeof(text));
		for (int unit = LP_SPLIT_CHARS; unit <= LP_SPLIT_REGEX; unit++) {
			size_t size = 1 + rnd(iter % 2 ? 6 : 40), overlap = rnd((uint32_t)size);
			struct lp_splitter *s = splitter((enum lp_split_unit)unit, size, overlap,
							 (enum lp_split_boundary)rnd(3),
							 patterns[rnd(3)]);
			check_invariants(s, text, len);
			lp_split_free(s);
		}
	}
}
END_TEST

/* With a custom counter pieces weigh more than one: chunks still respect
 * `size`, cover the text, and overlap by at most `overlap`. */
START_TEST(test_split_properties_weighted)
{
	char text[4096];
	size_t calls = 0;

	for (int iter = 0; iter < 300; iter++) {
		size_t len = random_text(text, sizeof(text)), n, covered = 0;
		struct lp_split_params p = lp_split_default_params();
		struct lp_splitter *s;
		struct lp_span *v;
		struct lp_diag d;

		p.size = 2 + rnd(30);
		p.overlap = rnd((uint32_t)p.size);
		p.boundary = (enum lp_split_boundary)rnd(3);
		p.counter.count = count_letters;
		p.counter.ctx = &calls;
		lp_diag_init(&d);
		ck_assert_int_eq(lp_split_new(&p, &s, &d), LP_OK);
		ck_assert_int_eq(lp_split_run(s, text, len, &v, &n, &d), LP_OK);
		for (size_t i = 0; i < n; i++) {
			size_t off = v[i].off, end = off + v[i].len;
			ck_assert_uint_le(lp_split_count(s, text + off, v[i].len), p.size);
			assert_blank(text, len, covered, off > covered ? off : covered);
			if (i) {
				size_t pend = v[i - 1].off + v[i - 1].len;
				ck_assert_uint_gt(off, v[i - 1].off);
				ck_assert_uint_gt(end, pend);
				if (off < pend)
					ck_assert_uint_le(lp_split_count(s, text + off, pend - off), p.overlap);
			}
			if (end > covered)
				covered = end;
		}
		assert_blank(text, len, covered, len);
		lp_mem_free(v);
		lp_split_free(s);
	}
}
END_TEST

/* Memory is O(chunks): one split of 8 MB holds nothing but the chunk table. */
START_TEST(test_split_memory_is_per_chunk)
{
	size_t len = 8u << 20, n;
	char *t = malloc(len + 1);
	struct lp_splitter *s = splitter(LP_SPLIT_TOKENS, 384, 48, LP_BOUNDARY_SENTENCE, NULL);
	struct lp_span *v;
	struct lp_diag d;

	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < len; i++)
		t[i] = "Lorem ipsum dolor sit amet. "[i % 28];
	lp_mem_reset_peaks();
	lp_diag_init(&d);
	ck_assert_int_eq(lp_split_run(s, t, len, &v, &n, &d), LP_OK);
	ck_assert_uint_gt(n, len / 2000);
	ck_assert_uint_le(lp_mem_peak(LP_MEM_DOC), 2 * n * sizeof(*v) + 64 * sizeof(*v));
	lp_mem_free(v);
	lp_split_free(s);
	free(t);
}
END_TEST

START_TEST(test_lang_script)
{
	const char *en = "Use apt-get install to add a package.";
	/* A Chinese manual line quoting a long command: still Chinese. */
	const char *zh = "\xe4\xbd\xbf\xe7\x94\xa8 apt-get install package-name "
			 "\xe5\xae\x89\xe8\xa3\x85\xe8\xbd\xaf\xe4\xbb\xb6\xe5\x8c\x85";
	/* Greek letters only. */
	const char *el = "\xce\xb1\xce\xb2\xce\xb3 \xce\xb4\xce\xb5";
	/* Three Latin letters per Han one: Han is 1/4 of letters, still Han. */
	const char *edge = "abc\xe4\xb8\xad";
	/* Nine Latin letters per Han one: English with a quoted character. */
	const char *mostly_en = "abcdefghi\xe4\xb8\xad";

	ck_assert_int_eq(lp_lang_script(en, strlen(en)), LP_SCRIPT_LATIN);
	ck_assert_int_eq(lp_lang_script(zh, strlen(zh)), LP_SCRIPT_HAN);
	ck_assert_int_eq(lp_lang_script(el, strlen(el)), LP_SCRIPT_OTHER);
	ck_assert_int_eq(lp_lang_script(edge, strlen(edge)), LP_SCRIPT_HAN);
	ck_assert_int_eq(lp_lang_script(mostly_en, strlen(mostly_en)), LP_SCRIPT_LATIN);
	ck_assert_int_eq(lp_lang_script("", 0), LP_SCRIPT_LATIN);
	ck_assert_int_eq(lp_lang_script("12 -- 34", 8), LP_SCRIPT_LATIN);
	/* Cut inside a multi-byte sequence and invalid bytes: no overread. */
	ck_assert_int_eq(lp_lang_script(zh, 4), LP_SCRIPT_HAN);
	ck_assert_int_eq(lp_lang_script("\xff\xfe\xe4", 3), LP_SCRIPT_LATIN);
	ck_assert_str_eq(lp_lang_tag(LP_SCRIPT_HAN), "zh");
	ck_assert_str_eq(lp_lang_tag(LP_SCRIPT_LATIN), "en");
	ck_assert_str_eq(lp_lang_tag(LP_SCRIPT_OTHER), "und");
}
END_TEST

/* The focus tokens of q, joined by '|' (static). */
static const char *focus_of(const char *q)
{
	static char out[512];
	size_t pos = 0, n = 0;
	struct lp_span t;

	out[0] = '\0';
	while (lp_focus_next(q, strlen(q), &pos, &t)) {
		ck_assert_uint_lt(n + t.len + 2, sizeof(out));
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%.*s", n ? "|" : "",
				      (int)t.len, q + t.off);
	}
	return out;
}

/* The question's content words a text never uses, by stem. */
START_TEST(test_focus_absent_words)
{
	static const char text[] = "tar saves many files together into a single tape or disk "
				   "archive. Compression of the archive is by gzip; encryption "
				   "is not offered.";
	struct lp_span w[2];
	const char *q = "Which option encrypts the archive with a password?";

	/* "encrypts" is used by "encryption"; "password" is not */
	ck_assert_uint_eq(lp_focus_absent_words(q, text, strlen(text), w, 2), 1);
	ck_assert_uint_eq(w[0].len, 8);
	ck_assert(!strncmp(q + w[0].off, "password", 8));
	q = "Which company sells commercial support for tar archives?";
	ck_assert_uint_eq(lp_focus_absent_words(q, text, strlen(text), w, 2), 4);
	ck_assert(!strncmp(q + w[0].off, "company", 7) && !strncmp(q + w[1].off, "sells", 5));
	/* asking words, short words, and names glued to marks do not count */
	q = "What does the default value of the --zstd option mean for tar?";
	ck_assert_uint_eq(lp_focus_absent_words(q, text, strlen(text), w, 2), 0);
	/* a stem is used only at a word's start */
	ck_assert_uint_eq(lp_focus_absent_words("Where is the rchive kept?", text, strlen(text),
						w, 2), 2);
}
END_TEST

START_TEST(test_focus_tokens)
{
	ck_assert_str_eq(focus_of("What does the --delete option do?"), "--delete");
	ck_assert_str_eq(focus_of("What does the SHLVL variable count?"), "SHLVL");
	ck_assert_str_eq(focus_of("Is -v the same as 'PROMPT_COMMAND'?"), "-v|PROMPT_COMMAND");
	ck_assert_str_eq(focus_of("What does RefCell<T> enforce?"), "RefCell<T>");
	ck_assert_str_eq(focus_of("Which file, ~/.bashrc or /etc/profile, comes first?"),
			 "~/.bashrc|/etc/profile");
	ck_assert_str_eq(focus_of("Which Debian release is codenamed \"Nebula\"?"), "Nebula");
	ck_assert_str_eq(focus_of("What is PS1 in sshd_config, e.g. here?"), "PS1|sshd_config");
	ck_assert_str_eq(focus_of("ssh 的 -o 选项有什么用？"), "-o");
	/* ordinary words, capitalised names and a single capital are not */
	ck_assert_str_eq(focus_of("How does Bash read a file when N is 2, i.e. twice?"), "");
	ck_assert_str_eq(focus_of("Which company sells support - and why?"), "");
}
END_TEST

START_TEST(test_focus_held)
{
	static const char text[] = "'SHLVL' is incremented. Use --delete\xE2\x80\x90" "after or "
				   "\xE2\x88\x92\xE2\x88\x92verbose; see ~/.bash\n  profile";

	ck_assert(lp_focus_held(text, strlen(text), "SHLVL", 5));
	ck_assert(!lp_focus_held(text, strlen(text), "shlvl", 5));
	ck_assert(!lp_focus_held(text, strlen(text), "SHLV", 4));
	/* "--delete" is only the head of "--delete-after" (a U+2010 hyphen) */
	ck_assert(!lp_focus_held(text, strlen(text), "--delete", 8));
	ck_assert(lp_focus_held(text, strlen(text), "--delete-after", 14));
	/* U+2212 twice, as man renders "--" */
	ck_assert(lp_focus_held(text, strlen(text), "--verbose", 9));
	ck_assert(!lp_focus_held(text, strlen(text), "-verbose", 8));
	/* a space of a phrase matches a line break and indentation */
	ck_assert(lp_focus_held(text, strlen(text), "~/.bash profile", 15));
	ck_assert(!lp_focus_held(text, 0, "SHLVL", 5));
}
END_TEST

START_TEST(test_focus_asks)
{
	ck_assert_int_eq(lp_focus_asks("How many arguments may a function take?", NULL), LP_ASKS_QUANTITY);
	ck_assert_int_eq(lp_focus_asks("What block size does ulimit use for -c?", NULL), LP_ASKS_QUANTITY);
	ck_assert_int_eq(lp_focus_asks("Which Python version introduced lambda?", NULL), LP_ASKS_QUANTITY);
	ck_assert_int_eq(lp_focus_asks("Which port does the daemon listen on?", NULL), LP_ASKS_QUANTITY);
	ck_assert_int_eq(lp_focus_asks("Debian 参考手册的印刷版售价是多少元？", NULL), LP_ASKS_QUANTITY);
	ck_assert_int_eq(lp_focus_asks("Which variable expands to the number of seconds?", NULL),
			 LP_ASKS_NAME);
	ck_assert_int_eq(lp_focus_asks("Which shell option stops > from overwriting a file?", NULL),
			 LP_ASKS_NAME);
	ck_assert_int_eq(lp_focus_asks("What command lists the jobs?", NULL), LP_ASKS_NAME);
	ck_assert_int_eq(lp_focus_asks("哪个命令可以列出作业？", NULL), LP_ASKS_NAME);
	ck_assert_int_eq(lp_focus_asks("What does the --delete option do?", NULL), LP_ASKS_OTHER);
	ck_assert_int_eq(lp_focus_asks("What is the default value of IFS?", NULL), LP_ASKS_OTHER);
	ck_assert_int_eq(lp_focus_asks("Why is the sky blue?", NULL), LP_ASKS_OTHER);
	ck_assert_int_eq(lp_focus_asks("What does exit code 1 mean after --compare?", NULL),
			 LP_ASKS_OTHER);
	ck_assert_int_eq(lp_focus_asks("What exit code does tar return on a fatal error?", NULL),
			 LP_ASKS_QUANTITY);
	{
		const char *q = "Which shell option stops > from overwriting?";
		struct lp_span k;

		ck_assert_int_eq(lp_focus_asks(q, &k), LP_ASKS_NAME);
		ck_assert_int_eq(strncmp(q + k.off, "option", k.len), 0);
		ck_assert_uint_eq(k.len, 6);
		q = "用什么命令启用它？";
		ck_assert_int_eq(lp_focus_asks(q, &k), LP_ASKS_NAME);
		ck_assert_int_eq(strncmp(q + k.off, "命令", k.len), 0);
	}
}
END_TEST

START_TEST(test_focus_numbers)
{
	ck_assert(lp_focus_has_number("The default is 60 seconds.", 26));
	ck_assert(lp_focus_has_number("It runs twice a day.", 20));
	ck_assert(lp_focus_has_number("每年举行一次", strlen("每年举行一次")));
	ck_assert(!lp_focus_has_number("None of the options is someone's.", 33));
	ck_assert(!lp_focus_has_number("It is done often.", 17));
	ck_assert(!lp_focus_has_number("Use the dircolors(1) command or fsck(8).", 40));
	ck_assert(!lp_focus_has_number("(1). If FORMAT is set", 21));
	ck_assert(lp_focus_has_number("Up to (2) items.", 16));
}
END_TEST

/* lp_focus_quantity_held on a NUL-terminated text. */
static int quantity(const char *q, const char *text)
{
	return lp_focus_quantity_held(q, text, strlen(text));
}

START_TEST(test_focus_quantity_kinds)
{
	const char *v = "Which Python version introduced lambda?";
	const char *y = "Which year was it released?";
	const char *p = "How much does the book cost in print?";
	const char *z = "What block size does ulimit use?";

	ck_assert(quantity(v, "It came with Python 2.2 and later."));
	ck_assert(!quantity(v, "It takes 2 arguments."));
	ck_assert(quantity(y, "It was released in 1993, in August."));
	ck_assert(!quantity(y, "It has 512 pages."));
	ck_assert(quantity(p, "It sells for $25 in print."));
	ck_assert(quantity("印刷版售价是多少元？", "售价 30 元"));
	ck_assert(!quantity(p, "Chapter 3 covers printing."));
	ck_assert(quantity(z, "Blocks are 512-byte units in POSIX mode."));
	ck_assert(quantity(z, "The size is 4 KiB."));
	ck_assert(quantity(z, "Set record size to BLOCKSx512 bytes."));
	ck_assert(!quantity(z, "Built for x86 machines."));
	ck_assert(!quantity(z, "See section 6.11 for the mode."));
	ck_assert(quantity("How many jobs may run?", "Up to 64 jobs."));
	ck_assert(!quantity("How many jobs may run?", "Jobs run in the background."));
	/* the question's own number is not its answer */
	ck_assert(!quantity("How many bugs did 2.0 fix?", "This is release 2.0 of it."));
	ck_assert(quantity("How many bugs did 2.0 fix?", "Release 2.0 fixed 12 bugs."));
	ck_assert(!quantity("When did version 2.0 come out?", "This is version 2.0 of it."));
	ck_assert(quantity("When did version 2 come out?", "It came with version 2.5."));
	ck_assert(!quantity("Which version followed 2.0?", "Until 2.0, nothing changed."));
	ck_assert(quantity("Which version followed 2.0?", "Version 2.1 followed 2.0."));
	ck_assert(quantity("How many jobs in 1 shell?", "One shell runs many jobs."));
	/* an open count sets no bound: no answer to "at most", "maximum" */
	ck_assert(!quantity("How many triggers may a package have at most?",
			    "Zero or more packages may be added."));
	ck_assert(!quantity("What is the maximum number of jobs?", "It takes 2 or more jobs."));
	ck_assert(quantity("What is the maximum number of jobs?", "At most 64 jobs, 2 or more."));
	ck_assert(quantity("How many jobs may run?", "Zero or more jobs may run."));
}
END_TEST

/* lp_alone_check on a NUL-terminated sentence. */
static enum lp_alone alone(const char *s)
{
	return lp_alone_check(s, strlen(s));
}

/* The sides of a sentence that sets two things side by side, and the
 * shapes that say which words name things of one kind. */
START_TEST(test_sides)
{
	static const char mime[] = "If no magic rule matches the data, use the default type of "
				   "application/octet-stream for binary data, or text/plain for "
				   "textual data.";
	static const char hist[] = "A value of 'ignoreboth' is shorthand for 'ignorespace' and "
				   "'ignoredups'.  A value of 'erasedups' causes all previous lines "
				   "to be removed.";
	static const char one[] = "Use e.g. the default value, or none at all.";
	struct lp_span sp[8];
	size_t k;

	k = lp_sides_of(mime, strlen(mime), sp, 8);
	ck_assert_uint_eq(k, 2);
	ck_assert(memmem(mime + sp[0].off, sp[0].len, "octet-stream", 12));
	ck_assert(memmem(mime + sp[1].off, sp[1].len, "text/plain", 10));
	ck_assert_uint_eq(sp[1].off + sp[1].len, strlen(mime));
	k = lp_sides_of(hist, strlen(hist), sp, 8);
	ck_assert_uint_eq(k, 2);
	ck_assert(memmem(hist + sp[1].off, sp[1].len, "erasedups", 9));
	ck_assert(!memmem(hist + sp[0].off, sp[0].len, "erasedups", 9));
	/* "e.g. the" is no sentence end; ", or none" is a side */
	ck_assert_uint_eq(lp_sides_of(one, strlen(one), sp, 8), 2);
	ck_assert_uint_eq(lp_sides_of("a; b; c", 7, sp, 2), 2); /* at most max */
	ck_assert_uint_eq(sp[1].off + sp[1].len, 7);
	ck_assert_uint_eq(lp_sides_of("", 0, sp, 8), 0);

	ck_assert_uint_eq(lp_name_shape("text/plain", 0, 10), LP_SHAPE_SLASH);
	ck_assert_uint_eq(lp_name_shape("--delete", 0, 8), LP_SHAPE_OPTION);
	ck_assert_uint_eq(lp_name_shape("TAR_GNAME", 0, 9), LP_SHAPE_SNAKE | LP_SHAPE_CAPS);
	ck_assert_uint_eq(lp_name_shape("'erasedups'", 1, 9), LP_SHAPE_QUOTED);
	ck_assert_uint_eq(lp_name_shape("value", 0, 5), 0);
	ck_assert_uint_eq(lp_name_shape("/etc", 0, 4), 0); /* a leading slash is no inner one */
	k = lp_sides_of(mime, strlen(mime), sp, 8);
	ck_assert(lp_sides_holds_like(mime + sp[0].off, sp[0].len, LP_SHAPE_SLASH));
	ck_assert(!lp_sides_holds_like("for textual data.", 17, LP_SHAPE_SLASH));
	ck_assert(lp_sides_holds_like(hist, 72, LP_SHAPE_QUOTED));
	ck_assert(!lp_sides_holds_like("A value of erasedups.", 21, LP_SHAPE_QUOTED));
}
END_TEST

/* The topic lp_request_quote finds in q, or "" when q is no request. */
static const char *request_topic(const char *q)
{
	static char out[128];
	struct lp_span t;

	if (!lp_request_quote(q, &t))
		return "";
	snprintf(out, sizeof(out), "%.*s", (int)t.len, q + t.off);
	return out;
}

START_TEST(test_request_quote)
{
	ck_assert_str_eq(request_topic("Quote the clause about termination."), "termination");
	ck_assert_str_eq(request_topic("please, show me the exact wording of the --delete option"),
			 "the --delete option");
	ck_assert_str_eq(request_topic("Quote the text that says what --delete does."),
			 "--delete does");
	ck_assert_str_eq(request_topic("Quote the sentence that limits the size"),
			 "that limits the size");
	ck_assert_str_eq(request_topic("Cite the passage on patents verbatim?"), "patents");
	ck_assert_str_eq(request_topic("Quote the paragraph dealing with export rules, word for word."),
			 "export rules");
	ck_assert_str_eq(request_topic("引用关于专利的条款。"), "专利");
	ck_assert_str_eq(request_topic("请摘录文档中有关 /tmp 清理的段落原文"), "/tmp 清理");
	ck_assert_str_eq(request_topic("给出关于默认配置文件的原文？"), "默认配置文件");
	/* questions, however they mention quoting, are answered as questions */
	ck_assert_str_eq(request_topic("What does the quote builtin do?"), "");
	ck_assert_str_eq(request_topic("Which clause is about termination?"), "");
	ck_assert_str_eq(request_topic("Quote the clause about"), "");
	ck_assert_str_eq(request_topic("Quote termination"), "");
	ck_assert_str_eq(request_topic("Show the options"), "");
	ck_assert_str_eq(request_topic("引用是什么意思？"), "");
	ck_assert_str_eq(request_topic(""), "");
	ck_assert_int_eq(lp_request_quote(NULL, NULL), 0);
}
END_TEST

/* The price lp_money_price finds around the first number of s, or "". */
static const char *price_of(const char *s)
{
	static char out[64];
	size_t off = strcspn(s, "0123456789"), n = strspn(s + off, "0123456789.");
	struct lp_span p;

	while (n && s[off + n - 1] == '.')
		n--;
	if (!lp_money_price(s, strlen(s), off, n, &p))
		return "";
	snprintf(out, sizeof(out), "%.*s", (int)p.len, s + p.off);
	return out;
}

START_TEST(test_money)
{
	ck_assert_str_eq(price_of("It costs $25 today."), "$25");
	ck_assert_str_eq(price_of("It costs US$ 4.99."), "US$ 4.99");
	ck_assert_str_eq(price_of("Only \xE2\x82\xAC" "12."), "\xE2\x82\xAC" "12");
	ck_assert_str_eq(price_of("A fee of 30 EUR is due."), "30 EUR");
	ck_assert_str_eq(price_of("It was 100 Dollars."), "100 Dollars");
	ck_assert_str_eq(price_of("售价 25\xE5\x85\x83。"), "25\xE5\x85\x83");
	ck_assert_str_eq(price_of("USD 7"), "USD 7");
	/* no currency beside the number, or a word that only starts like one */
	ck_assert_str_eq(price_of("Run echo $1 now."), "");
	ck_assert_str_eq(price_of("It has 25 options."), "");
	ck_assert_str_eq(price_of("See 25 Europeans and 3 dollarsign."), "");
	ck_assert_str_eq(price_of("x$25"), "$25");
	ck_assert_str_eq(price_of("MYEUR 25"), "");
	ck_assert_str_eq(price_of("25  dollars"), "");
	ck_assert_int_eq(lp_money_named("a dollar a day", 14), 1);
	ck_assert_int_eq(lp_money_named("the dollarsign", 14), 0);
	ck_assert_int_eq(lp_money_named("", 0), 0);
}
END_TEST

START_TEST(test_alone)
{
	/* lead-ins without their list */
	ck_assert_int_eq(alone("The following packages caught my eyes."), LP_ALONE_LEAD_IN);
	ck_assert_int_eq(alone("If you want to make a package, read followings."), LP_ALONE_LEAD_IN);
	ck_assert_int_eq(alone("Set it up as follows."), LP_ALONE_LEAD_IN);
	ck_assert_int_eq(alone("Install it by the commands:"), LP_ALONE_LEAD_IN);
	ck_assert_int_eq(alone("配置如下。"), LP_ALONE_LEAD_IN);
	/* ... with it, or no pointer at all */
	ck_assert_int_eq(alone("It reads the following files: /etc/profile, ~/.profile and "
			       "~/.bashrc."), LP_ALONE_PRONOUN);
	ck_assert_int_eq(alone("Bash reads the following files: /etc/profile, ~/.profile and "
			       "~/.bashrc."), LP_ALONE_OK);
	ck_assert_int_eq(alone("The followers of the project meet yearly."), LP_ALONE_OK);
	/* pronoun openers */
	ck_assert_int_eq(alone("It is a shell."), LP_ALONE_PRONOUN);
	ck_assert_int_eq(alone("They run in the background."), LP_ALONE_PRONOUN);
	ck_assert_int_eq(alone("This is the default."), LP_ALONE_PRONOUN);
	ck_assert_int_eq(alone("These apply to every file."), LP_ALONE_PRONOUN);
	ck_assert_int_eq(alone("That happens at boot."), LP_ALONE_PRONOUN);
	ck_assert_int_eq(alone("这些命令需要 root 权限。"), LP_ALONE_PRONOUN);
	/* a determiner, a possessive name, a word that only starts alike */
	ck_assert_int_eq(alone("This option sets the mode."), LP_ALONE_OK);
	ck_assert_int_eq(alone("It's name is kept."), LP_ALONE_OK);
	ck_assert_int_eq(alone("Items are listed in order."), LP_ALONE_OK);
	ck_assert_int_eq(alone("Theirs is not a word here."), LP_ALONE_OK);
	ck_assert_int_eq(alone(""), LP_ALONE_OK);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("sentence");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sentence_english);
	tcase_add_test(tc, test_sentence_mark_before);
	tcase_add_test(tc, test_sentence_end_at);
	tcase_add_test(tc, test_sentence_trim_closers);
	tcase_add_test(tc, test_sentence_abbreviations);
	tcase_add_test(tc, test_sentence_quotes_and_ellipsis);
	tcase_add_test(tc, test_sentence_paragraphs);
	tcase_add_test(tc, test_sentence_cjk);
	tcase_add_test(tc, test_sentence_invalid_bytes_terminate);
	tcase_add_test(tc, test_sentence_linear_on_long_line);
	tcase_add_test(tc, test_lang_script);
	suite_add_tcase(s, tc);
	tc = tcase_create("focus");
	tcase_add_test(tc, test_focus_tokens);
	tcase_add_test(tc, test_focus_absent_words);
	tcase_add_test(tc, test_focus_held);
	tcase_add_test(tc, test_focus_asks);
	tcase_add_test(tc, test_focus_numbers);
	tcase_add_test(tc, test_focus_quantity_kinds);
	tcase_add_test(tc, test_request_quote);
	tcase_add_test(tc, test_sides);
	tcase_add_test(tc, test_money);
	tcase_add_test(tc, test_alone);
	suite_add_tcase(s, tc);
	tc = tcase_create("document");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_document_clean_is_not_copied);
	tcase_add_test(tc, test_document_bom_and_crlf);
	tcase_add_test(tc, test_document_invalid_utf8_offset);
	tcase_add_test(tc, test_document_replace_mode);
	tcase_add_test(tc, test_document_refuses_binary_and_empty);
	tcase_add_test(tc, test_document_load_file);
	tcase_add_test(tc, test_document_large_single_line);
	suite_add_tcase(s, tc);
	tc = tcase_create("split");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_split_units);
	tcase_add_test(tc, test_split_regex_keeps_headings_with_sections);
	tcase_add_test(tc, test_split_boundary_prefers_sentence_end);
	tcase_add_test(tc, test_split_rejects_bad_params);
	tcase_add_test(tc, test_split_custom_counter);
	tcase_add_test(tc, test_split_properties_random);
	tcase_add_test(tc, test_split_properties_weighted);
	tcase_add_test(tc, test_split_memory_is_per_chunk);
	tcase_add_test(tc, test_split_long_line_is_linear);
	tcase_add_loop_test(tc, test_load_and_split_alloc_faults, 1, LOAD_SPLIT_ALLOCS + 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
