/*
 * prefix.h - where the installed files are, seen from the running program.
 *
 * configure fixes the install folders at build time: LP_BINDIR for the
 * program, and others (the ready pipelines, the CUDA module) beside it. A
 * staged install (`make install DESTDIR=/tmp/stage`) or a prefix moved as a
 * whole puts every folder somewhere else but keeps their layout. So when
 * the running program's folder ends as LP_BINDIR ends past the part it
 * shares with a folder F (/tmp/stage/usr/local/bin for /usr/local/bin), F
 * is looked for at the same place (/tmp/stage/usr/local/share/lpipe for
 * /usr/local/share/lpipe). Nothing is cached; no memory is allocated.
 */
#ifndef LP_PREFIX_H
#define LP_PREFIX_H

#include <stddef.h>

/*
 * The install folder `dir` (absolute, as configured) moved as the running
 * program moved from LP_BINDIR: writes it to out[0..cap) and returns 1 when
 * the program runs from elsewhere than LP_BINDIR, its folder ends as
 * LP_BINDIR does and the result fits. Returns 0 otherwise (out is then
 * the empty string): the program runs from LP_BINDIR, from an unrelated
 * folder (the build tree), or its location is unknown.
 */
int lp_prefix_relocate(const char *dir, char *out, size_t cap);

/*
 * The folder to use for the install folder `dir`: the relocated one (see
 * above) when it exists as a folder, else `dir` itself. Written to
 * out[0..cap) (truncated to fit); returns out.
 */
const char *lp_prefix_dir(const char *dir, char *out, size_t cap);

#endif
