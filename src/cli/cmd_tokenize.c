/* cmd_tokenize.c - `lpipe tokenize MODEL TEXT`: show how a model tokenizes. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "core/buf.h"
#include "core/fileio.h"
#include "core/status.h"
#include "core/utf8.h"
#include "model/gguf.h"
#include "model/tokenizer.h"

const char lp_usage_tokenize[] =
	"usage: lpipe tokenize MODEL TEXT [--ids-only] [--special]\n"
	"\n"
	"Print the tokens of TEXT ('-' reads standard input) under the vocabulary\n"
	"of the GGUF file MODEL: one line per token, its id and its piece (control\n"
	"bytes and incomplete UTF-8 escaped as \\n, \\t, \\xHH).\n"
	"  --ids-only  print only the ids, on one line\n"
	"  --special   match special tokens such as <|im_start|> in TEXT (by\n"
	"              default they are tokenized as plain text)\n"
	"Exit status 3 when the model cannot be read.\n";

/* Print a piece so that control bytes and broken UTF-8 stay visible. */
static void print_piece(const char *p, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = (unsigned char)p[i];
		uint32_t cp;
		int n;

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c == '\r')
			fputs("\\r", stdout);
		else if (c < 0x20 || c == 0x7F)
			printf("\\x%02x", c);
		else if (c < 0x80)
			putchar(c);
		else if ((n = lp_utf8_decode((const unsigned char *)p + i, len - i, &cp)) > 0) {
			fwrite(p + i, 1, (size_t)n, stdout);
			i += (size_t)n;
			continue;
		} else
			printf("\\x%02x", c);
		i++;
	}
}

/* The text to tokenize: `arg`, or standard input for "-", read as a
 * document is (it stops at the limit of a stream, and at a NUL byte). */
static int read_text(const char *arg, struct lp_buf *text)
{
	struct lp_mapped m;
	struct lp_diag d;
	int rc;

	if (strcmp(arg, "-"))
		return lp_buf_adds(text, arg) == LP_OK ? 0 : -1;
	lp_diag_init(&d);
	if (lp_file_map("-", LP_FILE_DOCUMENT, LP_MEM_DOC, &m, &d)) {
		lp_diag_print(&d, stderr);
		return -1;
	}
	rc = m.len && lp_buf_add(text, m.data, m.len) ? -1 : 0;
	lp_file_unmap(&m);
	return rc;
}

static void print_tokens(const struct lp_tok *tok, const struct lp_tokens *ids, int ids_only)
{
	for (size_t i = 0; i < ids->n; i++) {
		size_t len;
		const char *p;

		if (ids_only) {
			printf("%s%d", i ? " " : "", ids->ids[i]);
			continue;
		}
		p = lp_tok_piece(tok, ids->ids[i], LP_TOK_SPECIAL, &len);
		printf("%d\t", ids->ids[i]);
		print_piece(p, len);
		putchar('\n');
	}
	if (ids_only)
		putchar('\n');
}

int cmd_tokenize(int argc, char **argv)
{
	const char *model = NULL, *arg = NULL;
	int ids_only = 0, special = 0, rc;
	struct lp_diag d;
	struct lp_gguf *g = NULL;
	struct lp_tok *tok = NULL;
	struct lp_tokens ids;
	struct lp_buf text;
	enum lp_status st;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ids-only"))
			ids_only = 1;
		else if (!strcmp(argv[i], "--special"))
			special = 1;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(lp_usage_tokenize, stdout);
			return LP_EXIT_OK;
		} else if (argv[i][0] == '-' && argv[i][1])
			return lp_cli_usage_error("tokenize", "unknown option '%s'", argv[i]);
		else if (!model)
			model = argv[i];
		else if (!arg)
			arg = argv[i];
		else
			return lp_cli_usage_error("tokenize", "unexpected argument '%s'", argv[i]);
	}
	if (!model || !arg)
		return lp_cli_usage_error("tokenize", "missing %s", model ? "TEXT" : "MODEL");
	lp_diag_init(&d);
	lp_buf_init(&text);
	lp_tokens_init(&ids);
	if (read_text(arg, &text)) {
		fprintf(stderr, "lpipe tokenize: cannot read the text\n");
		lp_buf_release(&text);
		return LP_EXIT_INPUT;
	}
	st = lp_gguf_open(model, &g, &d);
	if (!st)
		st = lp_tok_from_gguf(g, &tok, &d);
	if (!st)
		st = lp_tok_encode(tok, text.data, text.len, special ? LP_TOK_SPECIAL : 0, &ids, &d);
	if (!st)
		print_tokens(tok, &ids, ids_only);
	else
		lp_diag_print(&d, stderr);
	rc = lp_status_exit_code(st);
	lp_tokens_release(&ids);
	lp_tok_free(tok);
	lp_gguf_close(g);
	lp_buf_release(&text);
	return rc;
}
