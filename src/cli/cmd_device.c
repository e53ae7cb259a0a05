/* cmd_device.c - `lpipe device`: the GPUs the CUDA backend can use. */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "core/mem.h"
#include "core/status.h"

const char lp_usage_device[] =
	"usage: lpipe device\n"
	"\n"
	"List the GPUs the CUDA backend can use: index, name, compute capability,\n"
	"free and total memory. Without one it prints \"no CUDA device\" and the\n"
	"reason (the backend was not built, the module or the driver could not be\n"
	"loaded, no device) and still exits 0: having no GPU is not an error.\n";

#define MAX_DEVICES 16

int cmd_device(int argc, char **argv)
{
	struct lp_backend_device dev[MAX_DEVICES];
	struct lp_diag d;
	int n;

	if (argc > 1)
		return lp_cli_usage_error("device", "unexpected argument '%s'", argv[1]);
	lp_diag_init(&d);
	n = lp_backend_devices(dev, MAX_DEVICES, &d);
	if (n <= 0) {
		if (n == 0 || !strcmp(d.msg, "no CUDA device"))
			puts("no CUDA device");
		else
			printf("no CUDA device (%s)\n", d.msg);
	}
	for (int i = 0; i < n && i < MAX_DEVICES; i++) {
		char free_s[32], total_s[32];
		printf("cuda:%d  %s  sm_%d%d  %s free of %s\n", dev[i].index, dev[i].name,
		       dev[i].cc_major, dev[i].cc_minor,
		       lp_mem_format_size(dev[i].mem_free, free_s, sizeof(free_s)),
		       lp_mem_format_size(dev[i].mem_total, total_s, sizeof(total_s)));
	}
	return fflush(stdout) ? LP_EXIT_INPUT : LP_EXIT_OK;
}
