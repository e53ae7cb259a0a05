#include "core/prefix.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LP_BINDIR
#define LP_BINDIR ""
#endif

/* The running program's folder into out[0..cap): its length, or 0. */
static size_t program_dir(char *out, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", out, cap - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= cap - 1)
		return 0;
	out[n] = 0;
	slash = strrchr(out, '/');
	if (!slash || slash == out)
		return 0;
	*slash = 0;
	return (size_t)(slash - out);
}

int lp_prefix_relocate(const char *dir, char *out, size_t cap)
{
	const char *bindir = LP_BINDIR;
	char exe[4096];
	size_t n_exe, common = 0, bin_tail, root;

	if (cap)
		out[0] = 0;
	if (!cap || !dir || dir[0] != '/' || bindir[0] != '/')
		return 0;
	/* the longest shared leading part that ends at a '/' */
	for (size_t i = 0; bindir[i] && bindir[i] == dir[i]; i++)
		if (bindir[i] == '/')
			common = i;
	n_exe = program_dir(exe, sizeof(exe));
	if (!n_exe || !strcmp(exe, bindir))
		return 0;
	bin_tail = strlen(bindir) - common; /* "/bin" of /usr/local/bin */
	if (n_exe <= bin_tail || strcmp(exe + n_exe - bin_tail, bindir + common))
		return 0;
	root = n_exe - bin_tail;
	if (root + strlen(dir + common) + 1 > cap)
		return 0;
	memcpy(out, exe, root);
	strcpy(out + root, dir + common);
	return 1;
}

const char *lp_prefix_dir(const char *dir, char *out, size_t cap)
{
	struct stat st;

	if (!cap)
		return out;
	if (lp_prefix_relocate(dir, out, cap) && !stat(out, &st) && S_ISDIR(st.st_mode))
		return out;
	snprintf(out, cap, "%s", dir ? dir : "");
	return out;
}
