#include "text/document.h"

#include <stdint.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"
#include "core/utf8.h"

#define NONE ((size_t)-1)

/* What one pass over the raw bytes found; decides map-or-copy. */
struct scan {
	size_t nul;           /* offset of the first NUL, or NONE */
	size_t first_invalid; /* offset of the first invalid sequence, or NONE */
	size_t n_invalid;     /* invalid sequences (each becomes one U+FFFD) */
	int has_cr;
	int has_text;         /* something other than white space (and a BOM) */
	size_t bom;           /* 3 when the input opens with a UTF-8 BOM, else 0 */
};

/* Bytes an invalid sequence at s[0..len) occupies: the offending lead byte
 * plus any continuation bytes right after it, so that one damaged character
 * becomes one U+FFFD rather than several. */
static size_t invalid_span(const unsigned char *s, size_t len)
{
	size_t n = 1;

	while (n < len && n < 4 && (s[n] & 0xC0) == 0x80)
		n++;
	return n;
}

static int is_ascii_space(unsigned char c)
{
	return c == ' ' || (c >= 0x09 && c <= 0x0D);
}

/* The load's passes release the mapping behind them every this many bytes. */
#define PASS_STEP (LP_DOCUMENT_WINDOW / 2)

/* Release raw[*done, i) once it is PASS_STEP long (`m` may be NULL). */
static void drop_behind(struct lp_mapped *m, size_t *done, size_t i)
{
	if (m && i - *done >= PASS_STEP) {
		lp_file_drop(m, *done, i - *done);
		*done = i;
	}
}

static void scan_bytes(const unsigned char *s, size_t len, struct lp_mapped *m,
		       struct scan *sc)
{
	size_t i, done = 0;

	memset(sc, 0, sizeof(*sc));
	sc->nul = sc->first_invalid = NONE;
	if (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF)
		sc->bom = 3;
	for (i = sc->bom; i < len;) {
		unsigned char c = s[i];
		uint32_t cp;
		int n;

		drop_behind(m, &done, i);
		if (c < 0x80) {
			if (c == 0) {
				sc->nul = i;
				break;
			}
			sc->has_cr |= c == '\r';
			sc->has_text |= !is_ascii_space(c);
			i++;
			continue;
		}
		n = lp_utf8_decode(s + i, len - i, &cp);
		if (!n) {
			if (sc->first_invalid == NONE)
				sc->first_invalid = i;
			sc->n_invalid++;
			sc->has_text = 1; /* it becomes U+FFFD */
			i += invalid_span(s + i, len - i);
			continue;
		}
		sc->has_text |= !lp_utf8_is_space(cp);
		i += (size_t)n;
	}
	if (m)
		lp_file_drop(m, done, len - done);
}

/* Write the normalised text of s[from..len) into out (room for the result
 * and a NUL, sized by the caller from the scan); returns its length. */
static size_t normalise(const unsigned char *s, size_t from, size_t len, struct lp_mapped *m,
			char *out)
{
	static const unsigned char replacement[3] = { 0xEF, 0xBF, 0xBD };
	size_t i = from, o = 0, done = 0;

	while (i < len) {
		unsigned char c = s[i];
		uint32_t cp;
		int n;

		drop_behind(m, &done, i);
		if (c == '\r') {
			out[o++] = '\n';
			i += (i + 1 < len && s[i + 1] == '\n') ? 2 : 1;
			continue;
		}
		if (c < 0x80) {
			out[o++] = (char)c;
			i++;
			continue;
		}
		n = lp_utf8_decode(s + i, len - i, &cp);
		if (!n) {
			memcpy(out + o, replacement, 3);
			o += 3;
			i += invalid_span(s + i, len - i);
			continue;
		}
		memcpy(out + o, s + i, (size_t)n);
		o += (size_t)n;
		i += (size_t)n;
	}
	out[o] = '\0';
	return o;
}

/* `m` (may be NULL) is the mapping s[0..len) lives in, released behind
 * each pass. */
static enum lp_status make_text(const char *name, const unsigned char *s, size_t len,
				struct lp_mapped *m, enum lp_invalid_utf8 mode,
				struct lp_document *doc, struct lp_diag *d)
{
	struct scan sc;
	size_t cap;

	scan_bytes(s, len, m, &sc);
	if (sc.nul != NONE)
		return lp_diag_set_offset(d, LP_E_INPUT, name, (long long)sc.nul,
					  "binary file (NUL byte at offset %zu), not text", sc.nul);
	if (sc.first_invalid != NONE && mode == LP_UTF8_ERROR)
		return lp_diag_set_offset(d, LP_E_INPUT, name, (long long)sc.first_invalid,
					  "invalid UTF-8 at byte %zu (use input: {invalid_utf8: replace} to replace it)",
					  sc.first_invalid);
	if (!sc.has_text)
		return lp_diag_set(d, LP_E_INPUT, name, 0, 0, "empty document");
	if (!sc.bom && !sc.has_cr && sc.first_invalid == NONE) {
		doc->text = (const char *)s;
		doc->len = len;
		return LP_OK;
	}
	/* Each replacement turns at least one byte into three. */
	cap = len - sc.bom + 2 * sc.n_invalid + 1;
	doc->copy = lp_mem_alloc(LP_MEM_DOC, cap, d);
	if (!doc->copy)
		return LP_E_NOMEM;
	doc->len = normalise(s, sc.bom, len, m, doc->copy);
	doc->text = doc->copy;
	doc->n_replaced = sc.n_invalid;
	return LP_OK;
}

/* Read doc->text (plain text) or raw[0..len) (another format) into a new
 * model; the text is then the model's. */
static enum lp_status build_model(const char *name, const char *raw, size_t len,
				  struct lp_document *doc, struct lp_diag *d)
{
	int text = doc->format == LP_DOC_FORMAT_TEXT;
	struct lp_doc_model *m = &doc->model;
	enum lp_status st;

	lp_doc_model_init(m, text ? doc->text : NULL, text ? doc->len : 0);
	/* only the raw mapping may be dropped behind the reader */
	if (!doc->copy && doc->map.is_mmap && (!text || doc->text == (const char *)doc->map.data))
		m->src_map = &doc->map;
	st = text ? lp_read_text(name, doc->text, doc->len, lp_doc_model_sink(m), d)
		  : lp_read_document(doc->format, name, raw, len, lp_doc_model_sink(m), d);
	if (st || (st = lp_doc_model_finish(m, name, d)))
		return st;
	m->src_map = NULL;
	if (lp_doc_model_is_source(m))
		return LP_OK;
	/* the clean text is the spool's: the source is no longer needed */
	lp_mem_free(doc->copy);
	doc->copy = NULL;
	lp_file_unmap(&doc->map);
	doc->map = m->map;
	memset(&m->map, 0, sizeof(m->map));
	doc->text = (const char *)doc->map.data;
	doc->len = doc->map.len;
	m->text = doc->text;
	return LP_OK;
}

static enum lp_status load_as(const char *name, const unsigned char *raw, size_t len,
			      struct lp_mapped *m, enum lp_invalid_utf8 mode,
			      enum lp_doc_format format, struct lp_document *doc,
			      struct lp_diag *d)
{
	enum lp_status st;

	doc->format = format != LP_DOC_FORMAT_AUTO
			      ? format
			      : lp_doc_sniff(name, (const char *)raw, len < 4096 ? len : 4096);
	/* Markdown is text too: a build without its reader reads a .md named
	 * one as text when asked to choose (asked for markdown, it refuses) */
	if (format == LP_DOC_FORMAT_AUTO && doc->format == LP_DOC_FORMAT_MARKDOWN &&
	    !lp_reader_available(LP_DOC_FORMAT_MARKDOWN)) {
		lp_warn("%s: read as plain text: this lpipe has no markdown reader (install %s "
			"and rebuild for its structure)", name,
			lp_reader_package(LP_DOC_FORMAT_MARKDOWN));
		doc->format = LP_DOC_FORMAT_TEXT;
	}
	if (doc->format != LP_DOC_FORMAT_TEXT)
		return build_model(name, (const char *)raw, len, doc, d);
	if ((st = make_text(name, raw, len, m, mode, doc, d)))
		return st;
	/* A normalised copy no longer needs the raw bytes: drop them so a
	 * large file is not held (and counted against the budget) twice. */
	if (doc->copy && m)
		lp_file_unmap(m);
	return build_model(name, NULL, 0, doc, d);
}

enum lp_status lp_document_from_bytes_as(const char *name, const void *data, size_t len,
					 enum lp_invalid_utf8 mode, enum lp_doc_format format,
					 struct lp_document *doc, struct lp_diag *d)
{
	enum lp_status st;

	memset(doc, 0, sizeof(*doc));
	doc->path = name;
	st = load_as(name, data, len, NULL, mode, format, doc, d);
	if (st)
		lp_document_release(doc);
	return st;
}

enum lp_status lp_document_from_bytes(const char *name, const void *data, size_t len,
				      enum lp_invalid_utf8 mode,
				      struct lp_document *doc, struct lp_diag *d)
{
	return lp_document_from_bytes_as(name, data, len, mode, LP_DOC_FORMAT_AUTO, doc, d);
}

enum lp_status lp_document_load_as(const char *path, enum lp_invalid_utf8 mode,
				   enum lp_doc_format format, struct lp_document *doc,
				   struct lp_diag *d)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	enum lp_status st;

	memset(doc, 0, sizeof(*doc));
	st = lp_file_map_window(path, LP_FILE_DOCUMENT, LP_MEM_DOC, LP_DOCUMENT_WINDOW, &doc->map, d);
	if (st)
		return st;
	doc->path = path;
	st = load_as(name, doc->map.data, doc->map.len, &doc->map, mode, format, doc, d);
	if (st)
		lp_document_release(doc);
	return st;
}

enum lp_status lp_document_load(const char *path, enum lp_invalid_utf8 mode,
				struct lp_document *doc, struct lp_diag *d)
{
	return lp_document_load_as(path, mode, LP_DOC_FORMAT_AUTO, doc, d);
}

void lp_document_release(struct lp_document *doc)
{
	if (!doc)
		return;
	lp_doc_model_release(&doc->model);
	lp_mem_free(doc->copy);
	lp_file_unmap(&doc->map);
	memset(doc, 0, sizeof(*doc));
}

void lp_document_done(struct lp_document *doc, size_t off, size_t len)
{
	/* only a mapped text is the mapping's bytes; a copy stays whole */
	if (doc && !doc->copy && doc->map.is_mmap)
		lp_file_drop(&doc->map, off, len);
}

void lp_document_done_upto(struct lp_document *doc, size_t *from, size_t off, size_t len)
{
	if (off < *from) {
		/* read again behind the pass: the fault may have mapped the
		 * whole block of lp_file_fault_bytes() around it */
		size_t fb = lp_file_fault_bytes(), a = off / fb * fb;
		size_t e = (off + len + fb - 1) / fb * fb;
		lp_document_done(doc, a, (e < doc->len ? e : doc->len) - a);
		return;
	}
	lp_document_done(doc, *from, off + len - *from);
	*from = off + len;
}

enum lp_status lp_document_need(struct lp_document *doc, size_t bytes, struct lp_diag *d)
{
	if (!doc || doc->copy || !doc->map.is_mmap)
		return LP_OK;
	return lp_file_need(&doc->map, bytes, d);
}
