#include "doc/model.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/utf8.h"

/* Resident bytes of the spool's mapping reserved against the budget: the
 * same window a mapped document gets (text/document.h). */
#define SPOOL_WINDOW ((size_t)1 << 20)

/* sink->passed drops the source's pages behind the reader in steps of
 * this many bytes. */
#define DROP_STEP ((size_t)1 << 19)

/* Longest heading or term name in a section path, bytes. */
#define PATH_NAME_MAX 60

static const char blank_line[] = "\n\n";

static enum lp_status sink_block(struct lp_doc_sink *sink, const struct lp_block_in *b,
				 struct lp_diag *d)
{
	return lp_doc_model_add(sink->ctx, b, d);
}

static void sink_passed(struct lp_doc_sink *sink, size_t off)
{
	struct lp_doc_model *m = sink->ctx;

	if (!m->src_map)
		return;
	if (off < m->src_dropped) /* a new pass */
		m->src_dropped = off;
	if (off - m->src_dropped >= DROP_STEP) {
		lp_file_drop(m->src_map, m->src_dropped, off - m->src_dropped);
		m->src_dropped = off;
	}
}

void lp_doc_model_init(struct lp_doc_model *m, const char *src, size_t src_len)
{
	memset(m, 0, sizeof(*m));
	m->src = src;
	m->src_len = src ? src_len : 0;
	m->same = src != NULL;
	m->last_term = LP_DOC_NONE;
	for (int i = 0; i < 7; i++)
		m->open[i] = LP_DOC_NONE;
	m->sink.block = sink_block;
	m->sink.passed = sink_passed;
	m->sink.ctx = m;
}

struct lp_doc_sink *lp_doc_model_sink(struct lp_doc_model *m)
{
	return &m->sink;
}

/* An unlinked file in $TMPDIR (else /tmp): nothing is left behind however
 * the process ends. */
static enum lp_status open_file(FILE **fp, struct lp_diag *d)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/lpipe-doc.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return lp_diag_set(d, LP_E_IO, path, 0, 0,
				   "unable to create the document's text spool: %s",
				   strerror(errno));
	unlink(path);
	*fp = fdopen(fd, "w+");
	if (!*fp) {
		close(fd);
		return lp_diag_set(d, LP_E_IO, NULL, 0, 0, "unable to open the text spool: %s",
				   strerror(errno));
	}
	return LP_OK;
}

static enum lp_status spool_write(struct lp_doc_model *m, const void *p, size_t n,
				  struct lp_diag *d)
{
	if (n && fwrite(p, 1, n, m->spool) != n)
		return lp_diag_set(d, LP_E_IO, NULL, 0, 0, "unable to write the text spool: %s",
				   strerror(errno));
	m->out += n;
	return LP_OK;
}

/* The clean text departs from the source here: start the spool with the
 * source's bytes so far. */
static enum lp_status depart(struct lp_doc_model *m, struct lp_diag *d)
{
	size_t n = m->out;
	enum lp_status s;

	if (m->spool)
		return LP_OK;
	if ((s = open_file(&m->spool, d)))
		return s;
	m->same = 0;
	m->out = 0;
	return spool_write(m, m->src, n, d);
}

/* Append text that is not the source's: invalid UTF-8 and NUL bytes (a
 * reader's bug or a hostile file) become U+FFFD, so that the clean text
 * keeps the promise downstream code relies on. */
static enum lp_status write_clean(struct lp_doc_model *m, const char *text, size_t len,
				  struct lp_diag *d)
{
	static const unsigned char fffd[3] = { 0xEF, 0xBF, 0xBD };
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, run = 0;
	enum lp_status st;

	while (i < len) {
		uint32_t cp;
		int n = s[i] && s[i] < 0x80 ? 1 : s[i] ? lp_utf8_decode(s + i, len - i, &cp) : 0;

		if (n) {
			i += (size_t)n;
			continue;
		}
		if ((st = spool_write(m, s + run, i - run, d)) || (st = spool_write(m, fffd, 3, d)))
			return st;
		run = ++i;
	}
	return spool_write(m, s + run, len - run, d);
}

/* Whether s[0, n) is white space only; *blank: it holds a blank line (two
 * line breaks with nothing but white space between). */
static int all_space(const char *s, size_t n, int *blank)
{
	int nl = 0;

	*blank = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			*blank |= nl++ > 0;
		else if (s[i] != ' ' && s[i] != '\t')
			return 0;
	}
	return 1;
}

static int is_verbatim(const struct lp_doc_model *m, const struct lp_block_in *b)
{
	return m->src && b->text == m->src + b->src_off && b->len == b->src_len &&
	       b->src_off <= m->src_len && b->src_len <= m->src_len - b->src_off;
}

/* How a verbatim block is set apart from the verbatim block before it:
 * GAP_KEEP, the source's own white space, when it holds a blank line (or
 * leads the document); GAP_NEWLINE, the source's white space after one more
 * line break, when it holds a line break but no blank line (the next
 * line keeps its indentation, so line-based heuristics still see it);
 * GAP_NONE otherwise: a plain blank line. */
enum { GAP_NONE, GAP_KEEP, GAP_NEWLINE };

static int source_gap(const struct lp_doc_model *m, const struct lp_block_in *b)
{
	const struct lp_doc_block *prev = m->n_blocks ? &m->prev : NULL;
	size_t n;
	int blank;

	if ((prev && !prev->verbatim) || (!prev && m->out) || b->src_off < m->src_end)
		return GAP_NONE;
	n = b->src_off - m->src_end;
	if (!all_space(m->src + m->src_end, n, &blank))
		return GAP_NONE;
	if (blank || !prev)
		return GAP_KEEP;
	return memchr(m->src + m->src_end, '\n', n) ? GAP_NEWLINE : GAP_NONE;
}

static enum lp_status put_record(FILE **fp, const void *rec, size_t size, struct lp_diag *d)
{
	enum lp_status s;

	if (!*fp && (s = open_file(fp, d)))
		return s;
	if (fwrite(rec, size, 1, *fp) != 1)
		return lp_diag_set(d, LP_E_IO, NULL, 0, 0, "unable to write the block table: %s",
				   strerror(errno));
	return LP_OK;
}

/* Write a table row's cells joined by LP_DOC_CELL_SEP, recording each. */
static enum lp_status write_cells(struct lp_doc_model *m, const struct lp_block_in *b,
				  struct lp_doc_block *blk, struct lp_diag *d)
{
	enum lp_status s;

	blk->first_cell = m->n_cells;
	blk->n_cells = b->n_cells;
	for (size_t c = 0; c < b->n_cells; c++) {
		struct lp_doc_cell cell;

		if (c && (s = spool_write(m, LP_DOC_CELL_SEP, strlen(LP_DOC_CELL_SEP), d)))
			return s;
		cell.off = m->out;
		if ((s = write_clean(m, b->cells[c], b->cell_lens[c], d)))
			return s;
		cell.len = m->out - cell.off;
		if ((s = put_record(&m->cell_spool, &cell, sizeof(cell), d)))
			return s;
		m->n_cells++;
	}
	return LP_OK;
}

/* Sections and terms: see "Sections" in model.h. */
static void place(struct lp_doc_model *m, struct lp_doc_block *blk, size_t idx)
{
	unsigned lv = blk->level;

	blk->section = blk->term = LP_DOC_NONE;
	if (blk->kind == LP_BLOCK_HEADING) {
		lv = lv < 1 ? 1 : lv > 6 ? 6 : lv;
		blk->level = lv;
		for (unsigned l = lv; l <= 6; l++)
			m->open[l] = LP_DOC_NONE;
		for (unsigned l = lv - 1; l >= 1 && blk->section == LP_DOC_NONE; l--)
			blk->section = m->open[l];
		m->open[lv] = idx;
		m->last_term = LP_DOC_NONE;
		return;
	}
	for (unsigned l = 6; l >= 1 && blk->section == LP_DOC_NONE; l--)
		blk->section = m->open[l];
	if (blk->kind == LP_BLOCK_DEF_TERM)
		m->last_term = idx;
	else if (blk->kind == LP_BLOCK_DEF_BODY)
		blk->term = m->last_term;
}

enum lp_status lp_doc_model_add(struct lp_doc_model *m, const struct lp_block_in *b,
				struct lp_diag *d)
{
	int verbatim = is_verbatim(m, b) && b->n_cells == 0;
	struct lp_doc_block blk_, *blk = &blk_;
	enum lp_status s;
	int gap;

	if (!b->len && !b->n_cells)
		return LP_OK; /* nothing to read, nothing to cite */
	gap = verbatim ? source_gap(m, b) : GAP_NONE;
	if (gap == GAP_KEEP && m->same && m->out == m->src_end) {
		m->out += b->src_off - m->src_end;
	} else if (gap != GAP_NONE) {
		if ((s = depart(m, d)) || (gap == GAP_NEWLINE && (s = spool_write(m, "\n", 1, d))) ||
		    (s = spool_write(m, m->src + m->src_end, b->src_off - m->src_end, d)))
			return s;
	} else {
		if ((s = depart(m, d)))
			return s;
		if (m->out && (s = spool_write(m, blank_line, 2, d)))
			return s;
	}
	memset(blk, 0, sizeof(*blk));
	blk->kind = b->kind < LP_BLOCK_N_KINDS ? b->kind : LP_BLOCK_PARAGRAPH;
	blk->level = b->level;
	blk->page = b->page;
	blk->header = b->header;
	blk->verbatim = verbatim;
	blk->src_off = b->src_off;
	blk->src_len = b->src_len;
	blk->off = m->out;
	if (verbatim && m->same && m->out == b->src_off)
		m->out += b->len;
	else if (verbatim)
		s = spool_write(m, b->text, b->len, d);
	else if (b->n_cells)
		s = write_cells(m, b, blk, d);
	else
		s = write_clean(m, b->text, b->len, d);
	if (s)
		return s;
	blk->len = m->out - blk->off;
	if (m->src)
		m->src_end = verbatim || b->src_off + b->src_len > m->src_end
				     ? b->src_off + b->src_len : m->src_end;
	place(m, blk, m->n_blocks);
	if ((s = put_record(&m->block_spool, blk, sizeof(*blk), d)))
		return s;
	m->prev = *blk;
	m->n_kind[blk->kind]++;
	m->n_blocks++;
	return LP_OK;
}

/* Map a table spool without reserving its length (see "Memory"). */
static enum lp_status map_table(FILE **fp, const char *name, struct lp_mapped *map,
				struct lp_diag *d)
{
	enum lp_status s;

	if (!*fp)
		return LP_OK;
	if (fflush(*fp))
		return lp_diag_set(d, LP_E_IO, name, 0, 0, "unable to write the block table: %s",
				   strerror(errno));
	s = lp_file_map_fd_window(fileno(*fp), name, LP_MEM_DOC, (size_t)-1, map, d);
	fclose(*fp);
	*fp = NULL;
	return s;
}

static enum lp_status map_tables(struct lp_doc_model *m, const char *name, struct lp_diag *d)
{
	size_t total;
	enum lp_status s;

	if ((s = map_table(&m->block_spool, name, &m->block_map, d)) ||
	    (s = map_table(&m->cell_spool, name, &m->cell_map, d)))
		return s;
	total = m->block_map.len + m->cell_map.len;
	m->reserved = total < LP_DOC_TABLE_RESIDENT ? total : LP_DOC_TABLE_RESIDENT;
	if ((s = lp_mem_reserve(LP_MEM_DOC, m->reserved, d))) {
		m->reserved = 0;
		return s;
	}
	m->blocks = (const struct lp_doc_block *)m->block_map.data;
	m->cells = (const struct lp_doc_cell *)m->cell_map.data;
	return LP_OK;
}

enum lp_status lp_doc_model_finish(struct lp_doc_model *m, const char *name,
				   struct lp_diag *d)
{
	enum lp_status s;
	int blank;

	m->finished = 1;
	if (!m->n_blocks)
		return lp_diag_set(d, LP_E_INPUT, name, 0, 0, "empty document");
	if ((s = map_tables(m, name, d)))
		return s;
	if (m->same && !m->spool &&
	    all_space(m->src + m->src_end, m->src_len - m->src_end, &blank)) {
		m->text = m->src;
		m->len = m->src_len;
		return LP_OK;
	}
	if ((s = depart(m, d)))
		return s;
	if (fflush(m->spool))
		return lp_diag_set(d, LP_E_IO, name, 0, 0, "unable to write the text spool: %s",
				   strerror(errno));
	s = lp_file_map_fd_window(fileno(m->spool), name, LP_MEM_DOC, SPOOL_WINDOW, &m->map, d);
	fclose(m->spool);
	m->spool = NULL;
	if (s)
		return s;
	m->text = (const char *)m->map.data;
	m->len = m->map.len;
	return LP_OK;
}

int lp_doc_model_is_source(const struct lp_doc_model *m)
{
	return m->finished && m->src && m->text == m->src;
}

void lp_doc_model_release(struct lp_doc_model *m)
{
	if (!m)
		return;
	if (m->spool)
		fclose(m->spool);
	if (m->block_spool)
		fclose(m->block_spool);
	if (m->cell_spool)
		fclose(m->cell_spool);
	lp_file_unmap(&m->map);
	lp_file_unmap(&m->block_map);
	lp_file_unmap(&m->cell_map);
	lp_mem_unreserve(LP_MEM_DOC, m->reserved);
	lp_doc_model_init(m, NULL, 0);
}

size_t lp_doc_model_find(const struct lp_doc_model *m, size_t off)
{
	size_t lo = 0, hi = m->n_blocks;

	if (!m->n_blocks)
		return LP_DOC_NONE;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->blocks[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

size_t lp_doc_model_range(const struct lp_doc_model *m, size_t off, size_t len,
			  size_t *first)
{
	size_t i = lp_doc_model_find(m, off), n = 0;

	*first = i;
	if (i == LP_DOC_NONE)
		return 0;
	while (i + n < m->n_blocks && (n == 0 || m->blocks[i + n].off < off + len))
		n++;
	return n;
}

/* Append block i's text folded to one line, at most PATH_NAME_MAX bytes,
 * cut at a character boundary. */
static size_t put_name(const struct lp_doc_model *m, size_t i, char *buf, size_t at,
		       size_t cap)
{
	const struct lp_doc_block *b = &m->blocks[i];
	const char *t = m->text + b->off;
	size_t start = at, n = 0;
	int space = 0;

	for (size_t k = 0; k < b->len && at + 1 < cap; k++) {
		unsigned char c = (unsigned char)t[k];

		if (c == ' ' || c == '\t' || c == '\n') {
			space = at > start;
			continue;
		}
		if (space) {
			if (n + 1 > PATH_NAME_MAX)
				break;
			buf[at++] = ' ';
			n++;
			space = 0;
			if (at + 1 >= cap)
				break;
		}
		/* a lead byte starts a character: stop before one that would pass the cap */
		if ((c & 0xC0) != 0x80 && n >= PATH_NAME_MAX)
			break;
		buf[at++] = (char)c;
		n++;
	}
	while (at > start && ((unsigned char)buf[at - 1] & 0xC0) == 0x80) {
		/* a cut in the middle of a character: take back the partial one */
		size_t k = at - 1;

		while (k > start && ((unsigned char)buf[k] & 0xC0) == 0x80)
			k--;
		if (at - k >= (size_t)(((unsigned char)buf[k] >= 0xF0) ? 4
				      : ((unsigned char)buf[k] >= 0xE0) ? 3 : 2))
			break;
		at = k;
	}
	buf[at] = '\0';
	return at;
}

size_t lp_doc_model_section_path(const struct lp_doc_model *m, size_t i, char *buf,
				 size_t cap)
{
	static const char sep[] = " \xE2\x80\xBA "; /* " › " */
	size_t chain[16], n = 0, at = 0;
	const struct lp_doc_block *b;

	if (!cap)
		return 0;
	buf[0] = '\0';
	if (i >= m->n_blocks)
		return 0;
	b = &m->blocks[i];
	if (b->kind == LP_BLOCK_DEF_TERM)
		chain[n++] = i;
	else if (b->kind == LP_BLOCK_DEF_BODY && b->term != LP_DOC_NONE)
		chain[n++] = b->term;
	for (size_t h = b->kind == LP_BLOCK_HEADING ? i : b->section; h != LP_DOC_NONE && n < 16;
	     h = m->blocks[h].section)
		chain[n++] = h;
	while (n--) {
		if (at) {
			if (at + sizeof(sep) > cap)
				break; /* no room for the separator and a name */
			memcpy(buf + at, sep, sizeof(sep) - 1);
			at += sizeof(sep) - 1;
			buf[at] = '\0';
		}
		at = put_name(m, chain[n], buf, at, cap);
	}
	return at;
}

unsigned lp_doc_model_page(const struct lp_doc_model *m, size_t off)
{
	size_t i = lp_doc_model_find(m, off);

	return i == LP_DOC_NONE ? 0 : m->blocks[i].page;
}

int lp_doc_model_keep_next(void *model, size_t from, size_t *start, size_t *end)
{
	struct lp_doc_model *m = model;
	size_t i;

	/* resume the cursor unless the caller went back */
	if (from < m->keep_from || !m->keep_block) {
		i = lp_doc_model_find(m, from);
		m->keep_dropped = 0;
	}
	else
		i = m->keep_block - 1;
	if (i == LP_DOC_NONE)
		return 0;
	for (; i < m->n_blocks; i++) {
		const struct lp_doc_block *b = &m->blocks[i];
		size_t k = i;

		if (!lp_doc_block_is_data(b) || b->off + b->len <= from)
			continue;
		/* header rows stay with the row after them */
		while (m->blocks[k].kind == LP_BLOCK_TABLE_ROW && m->blocks[k].header &&
		       k + 1 < m->n_blocks && m->blocks[k + 1].kind == LP_BLOCK_TABLE_ROW)
			k++;
		*start = b->off;
		*end = m->blocks[k].off + m->blocks[k].len;
		m->keep_from = from;
		m->keep_block = i + 1;
		/* the table is read once in order here: let its pages go behind */
		if (i * sizeof(*m->blocks) - m->keep_dropped >= DROP_STEP) {
			lp_file_drop(&m->block_map, m->keep_dropped,
				     i * sizeof(*m->blocks) - m->keep_dropped);
			m->keep_dropped = i * sizeof(*m->blocks);
		}
		return 1;
	}
	m->keep_from = from;
	m->keep_block = m->n_blocks + 1;
	return 0;
}

int lp_doc_block_is_data(const struct lp_doc_block *b)
{
	return b->kind == LP_BLOCK_CODE || b->kind == LP_BLOCK_TABLE_ROW;
}
