/*
 * backend.c - open a backend by name; load the CUDA module on demand.
 *
 * The module is looked for, first found wins, in: $LPIPE_MODULE_DIR; the
 * directory of the running program and its .libs (the build tree, where
 * libtool leaves the module); LP_MODULE_DIR (the install directory), where
 * a staged or moved install put it (core/prefix.h), then as configured. It is
 * loaded at most once per process; the outcome (the module's table, or
 * the reason it could not be had) is kept for later calls.
 */
#include "backend/backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core/log.h"
#include "core/prefix.h"

#ifndef LP_MODULE_DIR
#define LP_MODULE_DIR ""
#endif

struct lp_backend_params lp_backend_default_params(void)
{
	return (struct lp_backend_params){ .n_threads = 0, .gemm_min = 16, .device_index = 0,
					   .as_device = 0 };
}

const char *lp_backend_built(void)
{
#ifdef LP_HAVE_CUDA
	return "cpu cuda";
#else
	return "cpu";
#endif
}

const char *lp_backend_module_path(char *out, size_t cap)
{
	char dir[2048];

	lp_prefix_dir(LP_MODULE_DIR, dir, sizeof(dir));
	snprintf(out, cap, "%s/%s", dir, LP_BACKEND_MODULE_NAME);
	return out;
}

/* ---- the module ------------------------------------------------------- */

static void host_log_verbose(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lp_log(LP_LOG_DEBUG, "%s", msg);
}

static const struct lp_backend_host host_services = {
	.abi = LP_BACKEND_ABI_VERSION,
	.mem_reserve = lp_mem_reserve,
	.mem_unreserve = lp_mem_unreserve,
	.mem_phase = lp_mem_phase,
	.diag_set = lp_diag_set,
	.log_verbose = host_log_verbose,
};

static pthread_once_t module_once = PTHREAD_ONCE_INIT;
static const struct lp_backend_module *module;
static char module_why[1536];

/* Try dir/lpipe-cuda.so: 1 loaded, 0 not there, -1 there but unusable
 * (module_why says why). */
static int try_module(const char *dir)
{
	char path[1024];
	void *h;
	lp_backend_entry_fn entry;

	if (!dir || !*dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, LP_BACKEND_MODULE_NAME);
	if (access(path, F_OK))
		return 0;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		/* typically the CUDA runtime or driver library is missing */
		snprintf(module_why, sizeof(module_why), "unable to load '%s': %s", path,
			 dlerror());
		return -1;
	}
	*(void **)&entry = dlsym(h, LP_BACKEND_MODULE_ENTRY);
	if (!entry) {
		snprintf(module_why, sizeof(module_why), "'%s' has no symbol %s", path,
			 LP_BACKEND_MODULE_ENTRY);
		dlclose(h);
		return -1;
	}
	module = entry(LP_BACKEND_ABI_VERSION);
	if (!module || module->abi != LP_BACKEND_ABI_VERSION) {
		snprintf(module_why, sizeof(module_why),
			 "'%s' was built for another lpipe (backend ABI %u, this lpipe has %u)",
			 path, module ? module->abi : 0, LP_BACKEND_ABI_VERSION);
		module = NULL;
		dlclose(h);
		return -1;
	}
	lp_log(LP_LOG_DEBUG, "loaded the CUDA backend from '%s' (%s)", path,
	       module->version ? module->version : "?");
	return 1;
}

/*
 * Whether an NVIDIA kernel driver is present. The module pulls in the CUDA
 * runtime and cuBLAS, which map and touch about 150 MiB on load: a
 * `device: auto` run on a machine without a GPU must not pay that, so the
 * module is not opened when neither the driver's control device nor its
 * /proc entry exists (both are visible inside GPU containers too).
 */
static int nvidia_driver_present(void)
{
	return !access("/dev/nvidiactl", F_OK) || !access("/proc/driver/nvidia/version", F_OK);
}

static void load_module(void)
{
	char exe[1024], dirs[3][1100];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int nd = 0, rc = 0;

#ifdef LP_HAVE_CUDA
	/* a module named by $LPIPE_MODULE_DIR is what the caller wants,
	 * driver or not (the emulated device of tests/cuda-emu needs none) */
	if (!getenv("LPIPE_MODULE_DIR") && !nvidia_driver_present()) {
		snprintf(module_why, sizeof(module_why),
			 "no CUDA driver (neither /dev/nvidiactl nor /proc/driver/nvidia exists)");
		return;
	}
#endif
	if (n > 0) {
		char *slash;
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(dirs[nd++], sizeof(dirs[0]), "%s", exe);
			snprintf(dirs[nd++], sizeof(dirs[0]), "%s/.libs", exe);
		}
	}
	rc = try_module(getenv("LPIPE_MODULE_DIR"));
	for (int i = 0; !rc && i < nd; i++)
		rc = try_module(dirs[i]);
	if (!rc && lp_prefix_relocate(LP_MODULE_DIR, exe, sizeof(exe)))
		rc = try_module(exe);
	if (!rc)
		rc = try_module(LP_MODULE_DIR);
	if (!rc)
		snprintf(module_why, sizeof(module_why),
#ifdef LP_HAVE_CUDA
			 "the CUDA backend module '%s' was not found (looked in $LPIPE_MODULE_DIR, "
			 "beside the program and in '%s')", LP_BACKEND_MODULE_NAME, LP_MODULE_DIR
#else
			 "the CUDA backend was not built (configure --with-cuda)%s%s", "", ""
#endif
		);
}

/* The module, or NULL with d filled (LP_E_DEVICE). */
static const struct lp_backend_module *get_module(struct lp_diag *d)
{
	pthread_once(&module_once, load_module);
	if (!module)
		lp_diag_set(d, LP_E_DEVICE, NULL, 0, 0, "%s", module_why);
	return module;
}

/* ---- opening ---------------------------------------------------------- */

static enum lp_status open_cuda(const struct lp_backend_params *p, struct lp_backend **out,
				struct lp_diag *d)
{
	const struct lp_backend_module *m = get_module(d);
	enum lp_status st = m ? m->open(&host_services, p, out, d) : LP_E_DEVICE;

	if (st == LP_E_DEVICE && d) {
		char msg[sizeof(d->msg)];
		snprintf(msg, sizeof(msg), "%s", d->msg);
		snprintf(d->msg, sizeof(d->msg), "device cuda is unusable: %.900s", msg);
	}
	return st;
}

enum lp_status lp_backend_open_auto(const struct lp_backend_params *p, struct lp_backend **out,
				    char *why, size_t cap, struct lp_diag *d)
{
	struct lp_backend_params def = lp_backend_default_params();
	struct lp_diag dc;
	enum lp_status st;

	if (!p)
		p = &def;
	lp_diag_init(&dc);
	st = open_cuda(p, out, &dc);
	if (st == LP_OK)
		return LP_OK;
	if (st != LP_E_DEVICE) {
		/* a GPU is there but failed (memory): that is the user's to know */
		if (d)
			*d = dc;
		return st;
	}
	if (why && cap)
		snprintf(why, cap, "%s", dc.msg);
	return lp_backend_cpu_open(p, out, d);
}

enum lp_status lp_backend_open(const char *name, const struct lp_backend_params *p,
			       struct lp_backend **out, struct lp_diag *d)
{
	struct lp_backend_params def = lp_backend_default_params();

	*out = NULL;
	if (!p)
		p = &def;
	if (!strcmp(name, "cpu"))
		return lp_backend_cpu_open(p, out, d);
	if (!strcmp(name, "cuda"))
		return open_cuda(p, out, d);
	if (!strcmp(name, "auto"))
		return lp_backend_open_auto(p, out, NULL, 0, d);
	return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
			   "unknown device '%s' (expected cpu, cuda or auto)", name);
}

void lp_backend_free(struct lp_backend *be)
{
	if (be)
		be->ops->destroy(be);
}

int lp_backend_devices(struct lp_backend_device *out, int max, struct lp_diag *d)
{
	const struct lp_backend_module *m = get_module(d);

	if (!m)
		return -1;
	return m->devices(&host_services, out, max, d);
}
