/*
 * dump_blocks.c - run one document reader on a file and print its blocks
 * as JSON lines, for bench/extract (which compares them with Debian's
 * extractors) and for looking at what a reader makes of a file.
 *
 *   dump_blocks markdown|html|pdf|text FILE [--count] [--budget BYTES]
 *
 * Each block: {"kind":..,"level":..,"page":..,"off":..,"len":..,
 * "header":..,"text":..,"cells":[..]}. --count prints nothing per block.
 * Last, on standard error, one line: blocks, bytes of text, seconds, the
 * tracked peak of the document's memory (LP_MEM_DOC) and the peak RSS
 * (VmHWM: getrusage's would count what a parent held when it forked).
 * Exit 0, or 1 with the reader's message.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/status.h"
#include "doc/readers.h"

/* Peak resident bytes of this program since its exec. */
static size_t peak_rss(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %zu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

struct dump {
	struct lp_doc_sink sink;
	int count_only;
	size_t blocks, bytes;
};

static void put_json(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static enum lp_status dump_block(struct lp_doc_sink *sink, const struct lp_block_in *b,
				 struct lp_diag *d)
{
	struct dump *dp = sink->ctx;

	(void)d;
	dp->blocks++;
	dp->bytes += b->len;
	if (dp->count_only)
		return LP_OK;
	printf("{\"kind\":\"%s\",\"level\":%u,\"page\":%u,\"off\":%zu,\"len\":%zu,"
	       "\"header\":%s,\"text\":",
	       lp_block_kind_name(b->kind), b->level, b->page, b->src_off, b->src_len,
	       b->header ? "true" : "false");
	put_json(b->text, b->len);
	if (b->n_cells) {
		fputs(",\"cells\":[", stdout);
		for (size_t i = 0; i < b->n_cells; i++) {
			if (i)
				putchar(',');
			put_json(b->cells[i], b->cell_lens[i]);
		}
		putchar(']');
	}
	puts("}");
	return LP_OK;
}

int main(int argc, char **argv)
{
	struct dump dp = { { dump_block, &dp, NULL }, 0, 0, 0 };
	struct lp_diag d;
	struct timespec t0, t1;
	struct stat sb;
	enum lp_status st;
	const char *bytes;
	size_t budget = 0;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: dump_blocks markdown|html|pdf|text FILE [--count] [--budget BYTES]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--count"))
			dp.count_only = 1;
		else if (!strcmp(argv[i], "--budget") && i + 1 < argc &&
			 !lp_mem_parse_size(argv[i + 1], &budget))
			i++;
		else
			return fprintf(stderr, "dump_blocks: bad argument '%s'\n", argv[i]), 2;
	}
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) || !sb.st_size)
		return fprintf(stderr, "dump_blocks: cannot read '%s'\n", argv[2]), 1;
	bytes = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (bytes == MAP_FAILED)
		return fprintf(stderr, "dump_blocks: cannot map '%s'\n", argv[2]), 1;
	lp_mem_set_budget(budget);
	lp_diag_init(&d);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!strcmp(argv[1], "markdown"))
		st = lp_read_markdown(argv[2], bytes, (size_t)sb.st_size, &dp.sink, &d);
	else if (!strcmp(argv[1], "html"))
		st = lp_read_html(argv[2], bytes, (size_t)sb.st_size, &dp.sink, &d);
	else if (!strcmp(argv[1], "pdf"))
		st = lp_read_pdf(argv[2], bytes, (size_t)sb.st_size, &dp.sink, &d);
	else if (!strcmp(argv[1], "text"))
		st = lp_read_text(argv[2], bytes, (size_t)sb.st_size, &dp.sink, &d);
	else
		return fprintf(stderr, "dump_blocks: unknown format '%s'\n", argv[1]), 2;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fflush(stdout);
	fprintf(stderr, "blocks %zu bytes %zu seconds %.4f doc_peak %zu rss_peak %zu\n",
		dp.blocks, dp.bytes,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		lp_mem_peak(LP_MEM_DOC), peak_rss());
	if (st) {
		lp_diag_print(&d, stderr);
		return 1;
	}
	return 0;
}
