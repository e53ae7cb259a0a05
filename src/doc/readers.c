#include "doc/readers.h"

#include <string.h>
#include <strings.h>

static const char *const format_names[] = { "auto", "text", "markdown", "html", "pdf" };

const char *lp_doc_format_name(enum lp_doc_format f)
{
	return (unsigned)f < sizeof(format_names) / sizeof(*format_names) ? format_names[f]
									   : "unknown";
}

const char *lp_block_kind_name(enum lp_block_kind kind)
{
	static const char *const names[] = {
		"heading", "paragraph", "list_item", "definition_term", "definition_body",
		"table_row", "code", "quote",
	};

	return (unsigned)kind < LP_BLOCK_N_KINDS ? names[kind] : "paragraph";
}

static int has_ext(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);

	return n > e && path[n - e - 1] == '.' && !strcasecmp(path + n - e, ext);
}

/* The format the name's extension says, or AUTO when it says none. */
static enum lp_doc_format by_extension(const char *path)
{
	static const struct {
		const char *ext;
		enum lp_doc_format f;
	} exts[] = {
		{ "md", LP_DOC_FORMAT_MARKDOWN }, { "markdown", LP_DOC_FORMAT_MARKDOWN },
		{ "mkd", LP_DOC_FORMAT_MARKDOWN }, { "html", LP_DOC_FORMAT_HTML },
		{ "htm", LP_DOC_FORMAT_HTML },     { "xhtml", LP_DOC_FORMAT_HTML },
		{ "pdf", LP_DOC_FORMAT_PDF },      { "txt", LP_DOC_FORMAT_TEXT },
		{ "text", LP_DOC_FORMAT_TEXT },
	};

	for (size_t i = 0; path && i < sizeof(exts) / sizeof(*exts); i++)
		if (has_ext(path, exts[i].ext))
			return exts[i].f;
	return LP_DOC_FORMAT_AUTO;
}

/* head[i..] opens with `word`, case aside. */
static int opens_with(const char *head, size_t n, size_t i, const char *word)
{
	size_t w = strlen(word);

	return n - i >= w && !strncasecmp(head + i, word, w);
}

/* The content is unmistakably HTML: after a BOM and white space, a
 * doctype, <html, or an XML declaration followed by an XHTML root. */
static int looks_html(const char *head, size_t n)
{
	size_t i = 0;

	if (n >= 3 && !memcmp(head, "\xEF\xBB\xBF", 3))
		i = 3;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
		i++;
	if (opens_with(head, n, i, "<!doctype html") || opens_with(head, n, i, "<html"))
		return 1;
	if (opens_with(head, n, i, "<?xml")) {
		/* an XHTML file: its root element shows in the first bytes */
		for (size_t k = i; k + 5 <= n && k < i + 1024; k++)
			if (!strncasecmp(head + k, "<html", 5))
				return 1;
	}
	return 0;
}

enum lp_doc_format lp_doc_sniff(const char *path, const char *head, size_t n)
{
	enum lp_doc_format ext = by_extension(path);

	if (!head)
		n = 0;
	/* A PDF may carry junk before its header; readers accept 1024 bytes. */
	for (size_t i = 0; i + 5 <= n && i < 1024; i++)
		if (!memcmp(head + i, "%PDF-", 5))
			return LP_DOC_FORMAT_PDF;
	if (looks_html(head, n))
		return LP_DOC_FORMAT_HTML;
	/* Markdown has no magic; only its name says so. A .pdf or .html name
	 * on content that is neither is read as what the content is: text. */
	if (ext == LP_DOC_FORMAT_MARKDOWN)
		return ext;
	if (ext == LP_DOC_FORMAT_HTML && n && memchr(head, '<', n))
		return ext;
	return LP_DOC_FORMAT_TEXT;
}

typedef enum lp_status (*reader_fn)(const char *name, const char *bytes, size_t len,
				    struct lp_doc_sink *sink, struct lp_diag *d);

/* Each format's reader, NULL when configure did not find its library,
 * and the Debian package that provides the library. */
static const struct {
	reader_fn read;
	const char *package;
} readers[] = {
	[LP_DOC_FORMAT_TEXT] = { lp_read_text, NULL },
#ifdef LP_HAVE_MD4C
	[LP_DOC_FORMAT_MARKDOWN] = { lp_read_markdown, "libmd4c-dev" },
#else
	[LP_DOC_FORMAT_MARKDOWN] = { NULL, "libmd4c-dev" },
#endif
#ifdef LP_HAVE_LIBXML2
	[LP_DOC_FORMAT_HTML] = { lp_read_html, "libxml2-dev" },
#else
	[LP_DOC_FORMAT_HTML] = { NULL, "libxml2-dev" },
#endif
#ifdef LP_HAVE_POPPLER
	[LP_DOC_FORMAT_PDF] = { lp_read_pdf, "libpoppler-glib-dev" },
#else
	[LP_DOC_FORMAT_PDF] = { NULL, "libpoppler-glib-dev" },
#endif
};

static int known(enum lp_doc_format f)
{
	return f > LP_DOC_FORMAT_AUTO && (size_t)f < sizeof(readers) / sizeof(*readers);
}

int lp_reader_available(enum lp_doc_format f)
{
	return known(f) && readers[f].read != NULL;
}

const char *lp_reader_package(enum lp_doc_format f)
{
	return known(f) ? readers[f].package : NULL;
}

enum lp_status lp_read_document(enum lp_doc_format f, const char *name, const char *bytes,
				size_t len, struct lp_doc_sink *sink, struct lp_diag *d)
{
	if (!known(f))
		return lp_diag_set(d, LP_E_INTERNAL, name, 0, 0,
				   "lp_read_document needs a format, not auto");
	if (!readers[f].read)
		return lp_diag_set(d, LP_E_INPUT, name, 0, 0,
				   "this lpipe was built without the %s reader: install %s and "
				   "rebuild (configure finds it), or give input.format: text",
				   lp_doc_format_name(f), readers[f].package);
	return readers[f].read(name, bytes, len, sink, d);
}
