/* cmd_version.c - `lpipe version` and `lpipe --version`. */
#include "cli/commands.h"

#include <stdio.h>

#include "backend/backend.h"
#include "config.h"
#include "config/pipeline.h"
#include "core/status.h"
#include "doc/readers.h"

const char lp_usage_version[] =
	"usage: lpipe version\n"
	"       lpipe --version\n"
	"\n"
	"Print \"lpipe VERSION\" on standard output, then the backends this build\n"
	"has (\"backends: cpu\" or \"backends: cpu cuda\"; cuda is the module\n"
	"lpipe-cuda.so, which `lpipe device` tries), then \"pipelines: DIR\", the\n"
	"folder a bare pipeline name is looked up in (`lpipe run summarize FILE`),\n"
	"in a build with cuda \"cuda module: PATH\", the installed module, and\n"
	"\"readers: text ...\", the document formats this build reads (text, and\n"
	"markdown, html, pdf when their libraries were found), and last \"cpu\n"
	"kernels: SET\", the CPU kernel set the model's products run on here\n"
	"(avx512, avx2 or scalar: the fastest this CPU runs, or what LPIPE_CPU\n"
	"forces).\n";

int cmd_version(int argc, char **argv)
{
	char path[4096];

	if (argc > 1)
		return lp_cli_usage_error("version", "unexpected argument '%s'", argv[1]);
	printf("lpipe %s\nbackends: %s\n", PACKAGE_VERSION, lp_backend_built());
	printf("pipelines: %s\n", lp_pipeline_dir(path, sizeof(path)));
#ifdef LP_HAVE_CUDA
	printf("cuda module: %s\n", lp_backend_module_path(path, sizeof(path)));
#endif
	fputs("readers:", stdout);
	for (int f = LP_DOC_FORMAT_TEXT; f <= LP_DOC_FORMAT_PDF; f++)
		if (lp_reader_available(f))
			printf(" %s", lp_doc_format_name(f));
	putchar('\n');
	printf("cpu kernels: %s\n", lp_backend_cpu_kernels());
	return LP_EXIT_OK; /* lp_cli_close_stdout checks the writes */
}
