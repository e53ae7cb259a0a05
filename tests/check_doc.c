/* check_doc.c - the document model (doc/model.h), the plain-text reader's
 * repairs (doc/textread.h) and the readers' dispatch (doc/readers.h).
 *
 * With LPIPE_DOC_DUMP=FILE the program prints FILE's blocks and exits: a
 * tool for looking at what the reader makes of a document. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/status.h"
#include "doc/model.h"
#include "doc/readers.h"
#include "doc/term.h"
#include "doc/textread.h"
#include "core/fileio.h"
#include "text/document.h"
#include "text/sentence.h"
#include "text/split.h"
#include "text/extractive.h"
#include "stages/doc.h"

/* Read text with the plain-text reader into m (finished). */
static void read_into(struct lp_doc_model *m, const char *text, size_t len,
		      struct lp_textread_stats *st)
{
	struct lp_diag d;

	lp_diag_init(&d);
	lp_doc_model_init(m, text, len);
	ck_assert_int_eq(lp_textread_run("t.txt", text, len, lp_doc_model_sink(m), st, &d), LP_OK);
	ck_assert_int_eq(lp_doc_model_finish(m, "t.txt", &d), LP_OK);
}

/* The clean text of the model as a NUL-terminated copy (static). */
static const char *clean(const struct lp_doc_model *m)
{
	static char out[8192];

	ck_assert_uint_lt(m->len, sizeof(out));
	memcpy(out, m->text, m->len);
	out[m->len] = '\0';
	return out;
}

/* Block i's clean text (static). */
static const char *btext(const struct lp_doc_model *m, size_t i)
{
	static char out[2048];
	const struct lp_doc_block *b = &m->blocks[i];

	ck_assert_uint_lt(b->len, sizeof(out));
	memcpy(out, m->text + b->off, b->len);
	out[b->len] = '\0';
	return out;
}

/* The end marks a term or a title does not end with, ASCII and CJK. */
START_TEST(test_term_end_marks)
{
	static const char zh_stop[] = "\xe8\xae\xbe\xe7\xbd\xae\xe3\x80\x82";  /* 设置。 */
	static const char zh_colon[] = "\xe8\xae\xbe\xe7\xbd\xae\xef\xbc\x9a"; /* 设置： */
	static const char zh_word[] = "\xe8\xae\xbe\xe7\xbd\xae";                 /* 设置 */

	ck_assert(lp_term_ends_cjk_clause(zh_stop, strlen(zh_stop)));
	ck_assert(lp_term_ends_cjk_clause(zh_colon, strlen(zh_colon)));
	ck_assert(!lp_term_ends_cjk_clause(zh_word, strlen(zh_word)));
	ck_assert(!lp_term_ends_cjk_clause("a.", 2));
	ck_assert(lp_term_ends_clause(';') && !lp_term_ends_clause(']'));
	ck_assert(lp_term_fits("--verbose, -v", 13, 2));
	ck_assert(!lp_term_fits("It ends.", 8, 2));
}
END_TEST

START_TEST(test_plain_text_is_source)
{
	const char text[] = "A title line\n\nA paragraph that\nwraps over lines.\n\n"
			    "Another one.\n";
	struct lp_doc_model m;

	read_into(&m, text, strlen(text), NULL);
	ck_assert(lp_doc_model_is_source(&m));
	ck_assert_ptr_eq(m.text, text);
	ck_assert_uint_eq(m.len, strlen(text));
	ck_assert_uint_ge(m.n_blocks, 2);
	for (size_t i = 0; i < m.n_blocks; i++) {
		ck_assert(m.blocks[i].verbatim);
		ck_assert_uint_eq(m.blocks[i].off, m.blocks[i].src_off);
	}
	lp_doc_model_release(&m);
}
END_TEST

START_TEST(test_hyphen_breaks)
{
	/* "returned" and "x86-64" occur whole elsewhere: the list decides */
	const char text[] =
		"       Each re\xe2\x80\x90\n       turned number is returned whole.\n\n"
		"       Builds for x86-\n       64 and the x86-64 port, UTF-\n"
		"       8 text, the --no-\n       OPTION form, a de\xe2\x88\x92\n"
		"       fault timeout, a soft hy\xc2\xad\n       phen.\n";
	struct lp_textread_stats st;
	struct lp_doc_model m;
	const char *c;

	/* before the fix these are the breaks a reader meets */
	ck_assert_uint_eq(lp_textread_count_breaks(text, strlen(text)), 6);
	read_into(&m, text, strlen(text), &st);
	c = clean(&m);
	ck_assert_ptr_nonnull(strstr(c, "Each returned number"));
	ck_assert_ptr_nonnull(strstr(c, "for x86-64 and"));
	ck_assert_ptr_nonnull(strstr(c, "UTF-8 text"));
	ck_assert_ptr_nonnull(strstr(c, "the --no-OPTION form"));
	ck_assert_ptr_nonnull(strstr(c, "a default timeout"));
	ck_assert_ptr_nonnull(strstr(c, "a soft hyphen."));
	ck_assert_uint_eq(st.breaks, 6);
	ck_assert_uint_eq(st.joined, 3);
	ck_assert_uint_eq(lp_textread_count_breaks(m.text, m.len), 0);
	ck_assert(!lp_doc_model_is_source(&m));
	lp_doc_model_release(&m);
}
END_TEST

START_TEST(test_word_list_keeps_compounds)
{
	/* "well-known" occurs whole, so the broken one keeps its hyphen */
	const char text[] = "A well-known fact.\n\nThe well-\nknown port.\n";
	struct lp_doc_model m;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_ptr_nonnull(strstr(clean(&m), "The well-known port."));
	lp_doc_model_release(&m);
}
END_TEST

static const char man_page[] =
	"RSYNC(1)\n\n"
	"NAME\n"
	"       rsync - a fast, versatile, local/remote file-copying tool\n\n"
	"OPTION SUMMARY\n"
	"       Here is a short summary of the options.\n\n"
	"       --verbose, -v\t\tincrease verbosity\n"
	"       --quiet, -q\t\tsuppress non-error messages\n"
	"       --delete\t\t\tdelete extraneous files from dest dirs\n"
	"       --delete-after\t\treceiver deletes after transfer, not\n"
	"\t\t\t\tduring\n\n"
	"OPTIONS\n"
	"       --delete\n"
	"              This tells rsync to delete extraneous files from the\n"
	"              receiving side.\n\n"
	"              More about it.\n\n"
	"       --help Print a short help page describing the options available\n"
	"              in rsync and exit.\n\n"
	"   Daemon Options\n"
	"       The daemon listens on port 873.\n";

START_TEST(test_man_page_blocks)
{
	struct lp_doc_model m;
	char path[256];
	size_t i, rows = 0, del = LP_DOC_NONE;

	read_into(&m, man_page, strlen(man_page), NULL);
	for (i = 0; i < m.n_blocks; i++) {
		const struct lp_doc_block *b = &m.blocks[i];

		if (b->kind == LP_BLOCK_TABLE_ROW) {
			rows++;
			ck_assert_uint_eq(b->n_cells, 2);
		}
		if (b->kind == LP_BLOCK_DEF_TERM && !strcmp(btext(&m, i), "--delete"))
			del = i;
	}
	ck_assert_uint_eq(rows, 4);
	/* the wrapped row's continuation joins its last cell */
	ck_assert_ptr_nonnull(strstr(clean(&m), "receiver deletes after transfer, not during"));
	ck_assert_uint_ne(del, LP_DOC_NONE);
	ck_assert_int_eq(m.blocks[del + 1].kind, LP_BLOCK_DEF_BODY);
	ck_assert_uint_eq(m.blocks[del + 1].term, del);
	ck_assert_int_eq(m.blocks[del + 2].kind, LP_BLOCK_DEF_BODY); /* "More about it." */
	ck_assert_uint_eq(m.blocks[del + 2].term, del);
	lp_doc_model_section_path(&m, del + 2, path, sizeof(path));
	ck_assert_str_eq(path, "OPTIONS \xe2\x80\xba --delete");
	/* a hanging term */
	i = lp_doc_model_find(&m, (size_t)(strstr(clean(&m), "--help") - clean(&m)));
	ck_assert_int_eq(m.blocks[i].kind, LP_BLOCK_DEF_TERM);
	ck_assert_str_eq(btext(&m, i), "--help");
	ck_assert_int_eq(m.blocks[i + 1].kind, LP_BLOCK_DEF_BODY);
	/* a subsection under OPTIONS */
	i = lp_doc_model_find(&m, (size_t)(strstr(clean(&m), "The daemon") - clean(&m)));
	lp_doc_model_section_path(&m, i, path, sizeof(path));
	ck_assert_str_eq(path, "OPTIONS \xe2\x80\xba Daemon Options");
	/* the summary is no longer one sentence: no sentence holds two rows */
	{
		size_t pos = 0;
		struct lp_span s;

		while (lp_sentence_next(m.text, m.len, &pos, &s)) {
			const char *a = memmem(m.text + s.off, s.len, "--verbose", 9);

			ck_assert(!a || !memmem(m.text + s.off, s.len, "--quiet", 7));
		}
	}
	lp_doc_model_release(&m);
}
END_TEST

/* An info manual rendered to text: underlined headings, and entries whose
 * term is a quoted name at column 0 (a heading's shape, but not one). */
static const char info_text[] =
	"File: bash.info,  Node: Shell Variables,  Next: Bash Features,  Up: Top\n\n"
	"5 Shell Variables\n"
	"*****************\n\n"
	"5.2 Bash Variables\n"
	"==================\n\n"
	"'EPOCHSECONDS'\n"
	"     Each time this parameter is referenced, it expands to the number\n"
	"     of seconds since the Unix Epoch.\n\n"
	"'PROMPT_COMMAND'\n"
	"     Run before each prompt.\n\n"
	"NAME\n"
	"       tool - a man page heading still\n\n"
	"9.4.5.\xC2\xA0Listing open files\n\n"
	"You can list them.\n\n"
	"1. Unpack the file\n\n"
	"2. Run the script\n";

START_TEST(test_info_text_blocks)
{
	struct lp_doc_model m;
	char path[256];
	size_t i;

	read_into(&m, info_text, strlen(info_text), NULL);
	ck_assert_int_eq(m.blocks[0].kind, LP_BLOCK_HEADING);
	ck_assert_uint_eq(m.blocks[0].level, 1);
	ck_assert_str_eq(btext(&m, 0), "5 Shell Variables");
	ck_assert_int_eq(m.blocks[1].kind, LP_BLOCK_HEADING);
	ck_assert_uint_eq(m.blocks[1].level, 2);
	ck_assert_str_eq(btext(&m, 1), "5.2 Bash Variables");
	ck_assert_int_eq(m.blocks[2].kind, LP_BLOCK_DEF_TERM);
	ck_assert_str_eq(btext(&m, 2), "'EPOCHSECONDS'");
	ck_assert_int_eq(m.blocks[3].kind, LP_BLOCK_DEF_BODY);
	ck_assert_uint_eq(m.blocks[3].term, 2);
	lp_doc_model_section_path(&m, 3, path, sizeof(path));
	ck_assert_str_eq(path, "5 Shell Variables \xe2\x80\xba 5.2 Bash Variables \xe2\x80\xba "
			       "'EPOCHSECONDS'");
	ck_assert_int_eq(m.blocks[4].kind, LP_BLOCK_DEF_TERM);
	ck_assert_str_eq(btext(&m, 4), "'PROMPT_COMMAND'");
	for (i = 0; i < m.n_blocks && strcmp(btext(&m, i), "NAME"); i++)
		;
	ck_assert_uint_lt(i, m.n_blocks);
	ck_assert_int_eq(m.blocks[i].kind, LP_BLOCK_HEADING);
	/* a numbered heading alone in its paragraph; numbered steps are not */
	for (i = 0; i < m.n_blocks && strncmp(btext(&m, i), "9.4.5.", 6); i++)
		;
	ck_assert_uint_lt(i, m.n_blocks);
	ck_assert_int_eq(m.blocks[i].kind, LP_BLOCK_HEADING);
	ck_assert_uint_eq(m.blocks[i].level, 3);
	ck_assert_int_ne(m.blocks[i + 2].kind, LP_BLOCK_HEADING);
	ck_assert_str_eq(btext(&m, i + 2), "1. Unpack the file");
	/* no underline is a text block of its own, nor the node line */
	ck_assert_ptr_null(strstr(clean(&m), "*****"));
	ck_assert_ptr_null(strstr(clean(&m), "Node:"));
	lp_doc_model_release(&m);
}
END_TEST

/* A table whose cells wrap (a man page's list of operators, set with
 * tabs): a word broken at a cell's line end is joined, as in prose. */
START_TEST(test_table_cell_break)
{
	static const char text[] =
		"\t      U\t     The  expansion is a string that is the value of parameter\n"
		"\t\t     with lowercase alphabetic characters converted to\tupper\xe2\x80\x90\n"
		"\t\t     case.\n"
		"\t      u\t     The  expansion is a string that is the value of parameter\n"
		"\t\t     with the first character converted to uppercase, if it is\n"
		"\t\t     alphabetic.\n"
		"\t      L\t     The  expansion is a string that is the value of parameter\n"
		"\t\t     with uppercase alphabetic characters converted to\tlower\xe2\x80\x90\n"
		"\t\t     case.\n";
	struct lp_doc_model m;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_ptr_nonnull(strstr(clean(&m), "converted to uppercase."));
	ck_assert_ptr_nonnull(strstr(clean(&m), "converted to lowercase."));
	ck_assert_ptr_null(strstr(clean(&m), "\xe2\x80\x90"));
	lp_doc_model_release(&m);
}
END_TEST

/* A paragraph that opens like a node line but is prose stays. */
START_TEST(test_info_node_prose)
{
	static const char text[] = "File: a.txt, Nodes: two, and more words here.\n\n"
				   "  File: b.info,  Node: Top\n";
	struct lp_doc_model m;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_ptr_nonnull(strstr(clean(&m), "Nodes: two"));
	ck_assert_ptr_nonnull(strstr(clean(&m), "Node: Top"));
	lp_doc_model_release(&m);
}
END_TEST

/* A title centred on the page is a heading, not an entry's term; an
 * indented example line under it is no title. */
START_TEST(test_centred_title)
{
	static const char text[] =
		"                    THE SAMPLE PUBLIC NOTICE\n"
		"                       Version 2, 1 May 2000\n\n"
		" Everyone may copy and hand on this notice, but not change it.\n\n"
		"                            Preamble\n\n"
		"  The notice says what a reader may do with the text.\n\n"
		"              rsync -avz foo:src/bar /data/tmp\n\n"
		"       --verbose, -v\n"
		"              Tell more about what is done.\n";
	struct lp_doc_model m;
	size_t i;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_int_eq(m.blocks[0].kind, LP_BLOCK_HEADING);
	ck_assert_uint_eq(m.blocks[0].level, 1);
	ck_assert_str_eq(btext(&m, 0), "THE SAMPLE PUBLIC NOTICE");
	ck_assert_int_eq(m.blocks[1].kind, LP_BLOCK_PARAGRAPH);
	ck_assert_int_eq(m.blocks[2].kind, LP_BLOCK_PARAGRAPH);
	ck_assert_int_eq(m.blocks[3].kind, LP_BLOCK_HEADING);
	ck_assert_str_eq(btext(&m, 3), "Preamble");
	for (i = 4; i < m.n_blocks; i++)
		if (!strncmp(btext(&m, i), "rsync", 5) || !strncmp(btext(&m, i), "--verbose", 9))
			ck_assert_int_ne(m.blocks[i].kind, LP_BLOCK_HEADING);
	lp_doc_model_release(&m);
	/* a sentence over an indented example starts with no hanging term */
	read_into(&m, "When Bash starts a job, it prints a line that looks like:\n"
		      "     [1] 25647\n", 73, NULL);
	for (i = 0; i < m.n_blocks; i++)
		ck_assert_int_ne(m.blocks[i].kind, LP_BLOCK_DEF_TERM);
	lp_doc_model_release(&m);
}
END_TEST

START_TEST(test_ascii_table)
{
	const char text[] = "+------+-----+\n| Name | Age |\n+======+=====+\n| Ann  | 31  |\n"
			    "| Bob  | 42  |\n+------+-----+\n";
	struct lp_doc_model m;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_uint_eq(m.n_blocks, 3);
	ck_assert_int_eq(m.blocks[0].kind, LP_BLOCK_TABLE_ROW);
	ck_assert(m.blocks[0].header);
	ck_assert(!m.blocks[1].header);
	ck_assert_str_eq(btext(&m, 1), "Ann | 31");
	ck_assert_uint_eq(m.blocks[1].n_cells, 2);
	ck_assert_uint_eq(m.cells[m.blocks[1].first_cell + 1].len, 2);
	lp_doc_model_release(&m);
}
END_TEST

/* A path or a slashed word broken after its '/' at a line's end is one
 * word again; a command line after a path is not joined to it. */
START_TEST(test_path_break)
{
	static const char text[] =
		"    The apt package comes with its own cron script \"/etc/cron.daily/\n"
		"    apt\" to support the automatic download of packages, through its\n"
		"    preload/\n"
		"    configuration file, see https://\n"
		"    snapshot.debian.org/ for old ones.\n\n"
		"    # cd /some/location/\n"
		"    # chown -R foo:bar .\n";
	struct lp_doc_model m;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_ptr_nonnull(strstr(clean(&m), "\"/etc/cron.daily/apt\""));
	ck_assert_ptr_nonnull(strstr(clean(&m), " preload/configuration file"));
	ck_assert_ptr_nonnull(strstr(clean(&m), "https://snapshot.debian.org/ for"));
	ck_assert_ptr_nonnull(strstr(clean(&m), "/some/location/\n"));
	lp_doc_model_release(&m);
}
END_TEST

/* A grid table (a border under every row) whose rows wrap over several
 * lines: each row is one block, its cells' parts joined, a bar inside a
 * cell kept as text, Han parts joined with no space, a word broken at a
 * cell's line end repaired. */
START_TEST(test_grid_table_rows)
{
	const char text[] =
		"    +-----------------------------------+\n"
		"    |command       |description         |\n"
		"    |--------------+--------------------|\n"
		"    |route -n      |display all the     |\n"
		"    |              |routing table in    |\n"
		"    |              |numerical addresses |\n"
		"    |--------------+--------------------|\n"
		"    |dig [{a|mx|   |check DNS records   |\n"
		"    |any}]         |of a name           |\n"
		"    |--------------+--------------------|\n"
		"    |vim           |Unix \xe6\x96\x87\xe6\x9c\xac\xe7\xbc\x96\xe8\xbe\x91\xe5\x99\xa8|\n"
		"    |              |\xe7\x9a\x84\xe6\x94\xb9\xe8\xbf\x9b\xe7\x89\x88       |\n"
		"    |--------------+--------------------|\n"
		"    |ls            |list the files, up- |\n"
		"    |              |dated or not        |\n"
		"    +-----------------------------------+\n";
	struct lp_doc_model m;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_uint_eq(m.n_kind[LP_BLOCK_TABLE_ROW], 5);
	ck_assert(m.blocks[0].header);
	ck_assert_str_eq(btext(&m, 1), "route -n | display all the routing table in numerical addresses");
	ck_assert_uint_eq(m.blocks[2].n_cells, 2);
	ck_assert_str_eq(btext(&m, 2), "dig [{a|mx| any}] | check DNS records of a name");
	/* 文本编辑器 + 的改进版: no space between the Han parts */
	ck_assert_str_eq(btext(&m, 3), "vim | Unix \xe6\x96\x87\xe6\x9c\xac\xe7\xbc\x96\xe8\xbe\x91"
				       "\xe5\x99\xa8\xe7\x9a\x84\xe6\x94\xb9\xe8\xbf\x9b\xe7\x89\x88");
	ck_assert_str_eq(btext(&m, 4), "ls | list the files, updated or not");
	lp_doc_model_release(&m);
}
END_TEST

/* A table ruled only under its header keeps one row a line: there the
 * lines are rows, not the parts of one. */
START_TEST(test_header_ruled_table_rows)
{
	const char text[] = "| Name | Age |\n|------+-----|\n| Ann  | 31  |\n|      | 32  |\n"
			    "| Bob  | 42  |\n";
	struct lp_doc_model m;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_uint_eq(m.n_kind[LP_BLOCK_TABLE_ROW], 4);
	ck_assert_str_eq(btext(&m, 2), " | 32");
	lp_doc_model_release(&m);
}
END_TEST

static enum lp_status add(struct lp_doc_model *m, enum lp_block_kind k, unsigned level,
			  const char *text, unsigned page)
{
	struct lp_block_in b = { 0 };
	struct lp_diag d;

	lp_diag_init(&d);
	b.kind = k;
	b.level = level;
	b.text = text;
	b.len = strlen(text);
	b.page = page;
	b.src_off = 100;
	b.src_len = 7;
	return lp_doc_model_add(m, &b, &d);
}

START_TEST(test_model_sections_and_find)
{
	struct lp_doc_model m;
	struct lp_diag d;
	char path[256];
	size_t first;

	lp_diag_init(&d);
	lp_doc_model_init(&m, NULL, 0);
	ck_assert_int_eq(add(&m, LP_BLOCK_HEADING, 1, "Guide", 1), LP_OK);
	ck_assert_int_eq(add(&m, LP_BLOCK_HEADING, 2, "Install", 1), LP_OK);
	ck_assert_int_eq(add(&m, LP_BLOCK_PARAGRAPH, 0, "Run  make.", 2), LP_OK);
	ck_assert_int_eq(add(&m, LP_BLOCK_HEADING, 2, "Use", 3), LP_OK);
	ck_assert_int_eq(add(&m, LP_BLOCK_PARAGRAPH, 0, "bad \xff byte", 3), LP_OK);
	ck_assert_int_eq(lp_doc_model_finish(&m, "x", &d), LP_OK);
	ck_assert(!lp_doc_model_is_source(&m));
	ck_assert_str_eq(clean(&m), "Guide\n\nInstall\n\nRun  make.\n\nUse\n\nbad \xef\xbf\xbd byte");
	ck_assert_uint_eq(lp_doc_model_find(&m, 0), 0);
	ck_assert_uint_eq(lp_doc_model_find(&m, 17), 2);
	ck_assert_uint_eq(lp_doc_model_page(&m, 17), 2);
	lp_doc_model_section_path(&m, 2, path, sizeof(path));
	ck_assert_str_eq(path, "Guide \xe2\x80\xba Install");
	lp_doc_model_section_path(&m, 4, path, sizeof(path));
	ck_assert_str_eq(path, "Guide \xe2\x80\xba Use");
	ck_assert_uint_eq(lp_doc_model_range(&m, 10, 12, &first), 2);
	ck_assert_uint_eq(first, 1);
	/* a short buffer cuts at a character boundary */
	ck_assert_uint_eq(lp_doc_model_section_path(&m, 4, path, 10), 5);
	ck_assert_str_eq(path, "Guide");
	ck_assert_uint_eq(lp_doc_model_section_path(&m, 4, path, 12), 11);
	ck_assert_str_eq(path, "Guide \xe2\x80\xba U");
	ck_assert_uint_eq(m.blocks[0].src_off, 100);
	lp_doc_model_release(&m);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 0);
}
END_TEST

/* A question names an entry by its option, its name in capitals or its
 * only word; an ordinary word of a longer term (a menu line) does not. */
START_TEST(test_question_names_term)
{
	static const char *const terms[] = { "Controlling the Prompt", "-v, --verbose",
					     "--delete", "SHLVL", "umask", "Bash Startup Files",
					     "'EPOCHSECONDS'", "'for'", "'variable'",
					     "1.6. \"Executable Form\"" };
	struct lp_doc doc;
	struct lp_diag d;
	int only;

	lp_diag_init(&d);
	lp_doc_init(&doc, NULL);
	lp_doc_model_init(&doc.src.model, NULL, 0);
	for (size_t i = 0; i < sizeof(terms) / sizeof(*terms); i++) {
		ck_assert_int_eq(add(&doc.src.model, LP_BLOCK_DEF_TERM, 0, terms[i], 0), LP_OK);
		ck_assert_int_eq(add(&doc.src.model, LP_BLOCK_DEF_BODY, 0, "Body text.", 0), LP_OK);
	}
	ck_assert_int_eq(lp_doc_model_finish(&doc.src.model, "x", &d), LP_OK);
	doc.text = doc.src.model.text;
	ck_assert(!lp_doc_names_term(&doc, 0, "In which file is the history saved by the shell?",
				     &only));
	ck_assert(lp_doc_names_term(&doc, 2, "What does --verbose do?", &only) && only);
	ck_assert(lp_doc_names_term(&doc, 2, "Is -v the same as -q here?", &only) && !only);
	ck_assert(lp_doc_names_term(&doc, 4, "What does the --delete option do?", &only) && only);
	ck_assert(!lp_doc_names_term(&doc, 4, "What does --delete-after do?", &only));
	ck_assert(lp_doc_names_term(&doc, 6, "What does the SHLVL variable count?", &only));
	ck_assert(!lp_doc_names_term(&doc, 6, "What does shlvl count?", &only));
	ck_assert(lp_doc_names_term(&doc, 8, "Which builtin is umask?", &only));
	ck_assert(!lp_doc_names_term(&doc, 10, "Which files does Bash read at startup?", &only));
	/* quote marks around a name are not part of it */
	ck_assert(lp_doc_names_term(&doc, 12, "What is EPOCHSECONDS?", &only) && only);
	/* a stop word or an asking word does not name an entry */
	ck_assert(!lp_doc_names_term(&doc, 14, "How often does bash check for mail?", &only));
	ck_assert(!lp_doc_names_term(&doc, 16, "Which variable holds the epoch?", &only));
	/* a defined phrase, after its clause number, in any case */
	ck_assert(lp_doc_names_term(&doc, 18, "What does \"executable form\" mean?", &only) && only);
	ck_assert(!lp_doc_names_term(&doc, 18, "Who may distribute the Executable Form?", &only));
	ck_assert(!lp_doc_names_term(&doc, 18, "What does the executable do?", &only));
	doc.text = NULL;
	lp_doc_model_release(&doc.src.model);
	lp_doc_release(&doc);
}
END_TEST

/* A document names itself by its title and the initials of its
 * capitalised words. */
START_TEST(test_doc_names_itself)
{
	struct lp_doc doc;
	struct lp_diag d;

	lp_diag_init(&d);
	lp_doc_init(&doc, NULL);
	lp_doc_model_init(&doc.src.model, NULL, 0);
	ck_assert_int_eq(add(&doc.src.model, LP_BLOCK_HEADING, 1,
			     "Mozilla Public License Version 2.0", 0), LP_OK);
	ck_assert_int_eq(add(&doc.src.model, LP_BLOCK_PARAGRAPH, 0, "The MPL covers the code.", 0),
			 LP_OK);
	ck_assert_int_eq(lp_doc_model_finish(&doc.src.model, "x", &d), LP_OK);
	doc.text = doc.src.model.text;
	doc.len = doc.src.model.len;
	ck_assert(lp_doc_names_itself(&doc, "MPL", 3));
	ck_assert(lp_doc_names_itself(&doc, "PL", 2));
	ck_assert(lp_doc_names_itself(&doc, "Mozilla", 7));
	ck_assert(!lp_doc_names_itself(&doc, "GPL", 3));
	ck_assert(!lp_doc_names_itself(&doc, "M", 1));
	ck_assert(!lp_doc_names_itself(&doc, "covers", 6));
	doc.text = NULL;
	lp_doc_model_release(&doc.src.model);
	lp_doc_release(&doc);
}
END_TEST

START_TEST(test_model_empty)
{
	struct lp_doc_model m;
	struct lp_diag d;

	lp_diag_init(&d);
	lp_doc_model_init(&m, NULL, 0);
	ck_assert_int_eq(add(&m, LP_BLOCK_PARAGRAPH, 0, "", 0), LP_OK);
	ck_assert_int_eq(lp_doc_model_finish(&m, "x", &d), LP_E_INPUT);
	ck_assert_ptr_nonnull(strstr(d.msg, "empty"));
	lp_doc_model_release(&m);
}
END_TEST

START_TEST(test_sniff_and_dispatch)
{
	struct lp_doc_model m;
	struct lp_diag d;

	ck_assert_int_eq(lp_doc_sniff("a.pdf", "%PDF-1.4\n", 9), LP_DOC_FORMAT_PDF);
	ck_assert_int_eq(lp_doc_sniff("a.txt", "%PDF-1.4\n", 9), LP_DOC_FORMAT_PDF);
	ck_assert_int_eq(lp_doc_sniff("a.pdf", "hello", 5), LP_DOC_FORMAT_TEXT);
	ck_assert_int_eq(lp_doc_sniff("x", "\xef\xbb\xbf  <!DOCTYPE HTML>", 20), LP_DOC_FORMAT_HTML);
	ck_assert_int_eq(lp_doc_sniff("x", "<html lang=en>", 14), LP_DOC_FORMAT_HTML);
	ck_assert_int_eq(lp_doc_sniff("a.htm", "<p>hi", 5), LP_DOC_FORMAT_HTML);
	ck_assert_int_eq(lp_doc_sniff("README.md", "# Title", 7), LP_DOC_FORMAT_MARKDOWN);
	ck_assert_int_eq(lp_doc_sniff("README", "# Title", 7), LP_DOC_FORMAT_TEXT);
	ck_assert_int_eq(lp_doc_sniff("-", NULL, 0), LP_DOC_FORMAT_TEXT);
	ck_assert_str_eq(lp_doc_format_name(LP_DOC_FORMAT_MARKDOWN), "markdown");
	ck_assert_str_eq(lp_block_kind_name(LP_BLOCK_DEF_BODY), "definition_body");
	ck_assert_str_eq(lp_reader_package(LP_DOC_FORMAT_PDF), "libpoppler-glib-dev");
	ck_assert(lp_reader_available(LP_DOC_FORMAT_TEXT));
	for (int f = LP_DOC_FORMAT_MARKDOWN; f <= LP_DOC_FORMAT_PDF; f++) {
		if (lp_reader_available(f))
			continue;
		lp_diag_init(&d);
		lp_doc_model_init(&m, NULL, 0);
		ck_assert_int_eq(lp_read_document(f, "x", "a", 1, lp_doc_model_sink(&m), &d),
				 LP_E_INPUT);
		ck_assert_ptr_nonnull(strstr(d.msg, lp_reader_package(f)));
		lp_doc_model_release(&m);
	}
}
END_TEST

/* Split the model's text by words, `size` a chunk, keeping its rows. */
static size_t split_words(struct lp_doc_model *m, size_t size, int keep, struct lp_span **v)
{
	struct lp_split_params p = lp_split_default_params();
	struct lp_splitter *s;
	struct lp_diag d;
	size_t n;

	lp_diag_init(&d);
	p.unit = LP_SPLIT_WORDS;
	p.size = size;
	p.boundary = LP_BOUNDARY_NONE;
	if (keep) {
		p.keep.next = lp_doc_model_keep_next;
		p.keep.ctx = m;
	}
	ck_assert_int_eq(lp_split_new(&p, &s, &d), LP_OK);
	ck_assert_int_eq(lp_split_run(s, m->text, m->len, v, &n, &d), LP_OK);
	lp_split_free(s);
	return n;
}

START_TEST(test_split_keeps_rows)
{
	const char text[] = "Some nine words come before the table down here.\n\n"
			    "| Name | Age |\n+=====+=====+\n"
			    "| Ann | 31 |\n| Bob | 42 |\n| Cy | 53 |\n";
	struct lp_doc_model m;
	struct lp_span *v;
	size_t n, cut_inside = 0;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_uint_eq(m.n_kind[LP_BLOCK_TABLE_ROW], 4);
	/* without the model's spans, 7-word chunks cut rows in two */
	n = split_words(&m, 7, 0, &v);
	for (size_t c = 0; c < n; c++) {
		size_t e = v[c].off + v[c].len, b = lp_doc_model_find(&m, e - 1);

		cut_inside += e < m.blocks[b].off + m.blocks[b].len;
	}
	ck_assert_uint_gt(cut_inside, 0);
	lp_mem_free(v);
	n = split_words(&m, 7, 1, &v);
	for (size_t c = 0; c < n; c++) {
		size_t e = v[c].off + v[c].len, b = lp_doc_model_find(&m, e - 1);

		/* every chunk ends where a row does; the header is not alone */
		if (m.blocks[b].kind == LP_BLOCK_TABLE_ROW)
			ck_assert_uint_eq(e, m.blocks[b].off + m.blocks[b].len);
		ck_assert(!(m.blocks[b].kind == LP_BLOCK_TABLE_ROW && m.blocks[b].header));
	}
	lp_mem_free(v);
	/* a row over the size alone is still cut */
	n = split_words(&m, 2, 1, &v);
	ck_assert_uint_ge(n, 11);
	lp_mem_free(v);
	lp_doc_model_release(&m);
}
END_TEST

START_TEST(test_summary_skips_tables)
{
	/* the rows repeat the words of every sentence: the most central */
	const char text[] = "The apt tool installs packages from the archive.\n\n"
			    "The apt tool removes packages from the system.\n\n"
			    "| apt tool packages | installs packages from the archive system |\n"
			    "| apt tool packages | removes packages from the archive system |\n";
	struct lp_extractive_opts o = { 0, 1, NULL, NULL };
	struct lp_doc_model m;
	struct lp_diag d;
	char *out;
	size_t n;

	read_into(&m, text, strlen(text), NULL);
	ck_assert_uint_eq(m.n_kind[LP_BLOCK_TABLE_ROW], 2);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_extractive_summarize(m.text, m.len, &o, &out, &n, &d), LP_OK);
	ck_assert_ptr_nonnull(strstr(out, " | ")); /* by centrality alone, a row */
	lp_mem_free(out);
	o.model = &m;
	ck_assert_int_eq(lp_extractive_summarize(m.text, m.len, &o, &out, &n, &d), LP_OK);
	ck_assert_ptr_null(strstr(out, " | "));
	ck_assert_ptr_nonnull(strstr(out, "The apt tool"));
	lp_mem_free(out);
	lp_doc_model_release(&m);
}
END_TEST

/* Dump FILE's blocks (LPIPE_DOC_DUMP). */
static int dump(const char *path)
{
	struct lp_document doc;
	struct lp_diag d;

	lp_diag_init(&d);
	if (lp_document_load(path, LP_UTF8_REPLACE, &doc, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return 1;
	}
	for (size_t i = 0; i < doc.model.n_blocks; i++) {
		const struct lp_doc_block *b = &doc.model.blocks[i];
		char path_buf[256];

		size_t n = b->len > 100 ? 100 : b->len;

		lp_doc_model_section_path(&doc.model, i, path_buf, sizeof(path_buf));
		printf("%zu %s%u p%u [%s] ", i, lp_block_kind_name(b->kind), b->level, b->page,
		       path_buf);
		for (size_t k = 0; k < n; k++)
			putchar(doc.text[b->off + k] == '\n' ? '/' : doc.text[b->off + k]);
		putchar('\n');
	}
	lp_document_release(&doc);
	return 0;
}

/* Figures of FILE (LPIPE_DOC_STATS): words broken at line ends before and
 * after the reader, and the sentences of over 80 words in both. */
static size_t long_sentences(const char *t, size_t len, int show)
{
	size_t pos = 0, n = 0;
	struct lp_span s;

	while (lp_sentence_next(t, len, &pos, &s)) {
		size_t w = 0;
		int in = 0;

		for (size_t k = 0; k < s.len; k++) {
			int sp = t[s.off + k] == ' ' || t[s.off + k] == '\n' || t[s.off + k] == '\t';

			w += !sp && !in;
			in = !sp;
		}
		if (w <= 80)
			continue;
		n++;
		if (show) {
			printf("  %zu words: ", w);
			for (size_t k = 0; k < s.len && k < 120; k++)
				putchar(strchr("\n\t", t[s.off + k]) ? ' ' : t[s.off + k]);
			putchar('\n');
		}
	}
	return n;
}

static int stats(const char *path)
{
	struct lp_mapped raw;
	struct lp_document doc;
	struct lp_diag d;

	lp_diag_init(&d);
	if (lp_file_map(path, LP_FILE_DOCUMENT, LP_MEM_DOC, &raw, &d) ||
	    lp_document_load(path, LP_UTF8_REPLACE, &doc, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return 1;
	}
	printf("%s: broken words %zu -> %zu; sentences over 80 words %zu -> %zu\n", path,
	       lp_textread_count_breaks((const char *)raw.data, raw.len),
	       lp_textread_count_breaks(doc.text, doc.len),
	       long_sentences((const char *)raw.data, raw.len, 0),
	       long_sentences(doc.text, doc.len, 0));
	long_sentences(doc.text, doc.len, 1);
	lp_document_release(&doc);
	lp_file_unmap(&raw);
	return 0;
}

int main(void)
{
	Suite *s = suite_create("doc");
	TCase *tc = tcase_create("doc");
	SRunner *sr;
	int failed;

	if (getenv("LPIPE_DOC_STATS"))
		return stats(getenv("LPIPE_DOC_STATS"));
	if (getenv("LPIPE_DOC_DUMP"))
		return dump(getenv("LPIPE_DOC_DUMP"));
	tcase_add_test(tc, test_term_end_marks);
	tcase_add_test(tc, test_plain_text_is_source);
	tcase_add_test(tc, test_hyphen_breaks);
	tcase_add_test(tc, test_word_list_keeps_compounds);
	tcase_add_test(tc, test_man_page_blocks);
	tcase_add_test(tc, test_info_text_blocks);
	tcase_add_test(tc, test_info_node_prose);
	tcase_add_test(tc, test_table_cell_break);
	tcase_add_test(tc, test_centred_title);
	tcase_add_test(tc, test_ascii_table);
	tcase_add_test(tc, test_grid_table_rows);
	tcase_add_test(tc, test_path_break);
	tcase_add_test(tc, test_header_ruled_table_rows);
	tcase_add_test(tc, test_split_keeps_rows);
	tcase_add_test(tc, test_summary_skips_tables);
	tcase_add_test(tc, test_model_sections_and_find);
	tcase_add_test(tc, test_question_names_term);
	tcase_add_test(tc, test_doc_names_itself);
	tcase_add_test(tc, test_model_empty);
	tcase_add_test(tc, test_sniff_and_dispatch);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
