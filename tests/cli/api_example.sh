#!/bin/sh
# api_example.sh - the example of lpipe(3), built against a staged install
# with pkg-config, prints what `lpipe run` prints; the man page shows the
# very file tests/api/example.c; the shared library exports lpipe_* only.
. "$top_srcdir/tests/cli/lib.sh"

EXAMPLE=$top_srcdir/tests/api/example.c

# 1. The man page's example is tests/api/example.c (roff escapes undone).
sed -n '/^\.SH EXAMPLE/,/^\.EE/p' "$top_srcdir/man/lpipe.3" |
	sed -e '1,/^\.EX/d' -e '/^\.EE/d' -e 's/\\e/\\/g' -e 's/^\\&//' >"$WORK/man-example.c"
if [ -s "$WORK/man-example.c" ] && cmp -s "$WORK/man-example.c" "$EXAMPLE"; then
	ok "lpipe(3) shows tests/api/example.c"
else
	fail "lpipe(3)'s example differs from tests/api/example.c"
	diff "$EXAMPLE" "$WORK/man-example.c" | head -10
fi

# 2. A staged install.
STAGE=$WORK/stage
if ! ${MAKE:-make} -C "$top_builddir" install DESTDIR="$STAGE" >"$WORK/install.log" 2>&1; then
	fail "make install DESTDIR=... failed"
	tail -20 "$WORK/install.log"
	exit 1
fi
pc=$(find "$STAGE" -name lpipe.pc | head -1)
so=$(find "$STAGE" -name 'liblpipe.so.*' | head -1)
[ -n "$pc" ] && ok "lpipe.pc installed" || fail "no lpipe.pc in the staged install"
[ -n "$so" ] && ok "liblpipe.so installed" || fail "no liblpipe.so in the staged install"
[ -n "$(find "$STAGE" -name liblpipe.a)" ] && ok "liblpipe.a installed" ||
	fail "no liblpipe.a in the staged install"
[ -n "$(find "$STAGE" -path '*/include/lpipe.h')" ] && ok "lpipe.h installed" ||
	fail "no include/lpipe.h in the staged install"
[ -n "$(find "$STAGE" -path '*/man3/lpipe.3')" ] && ok "lpipe.3 installed" ||
	fail "no man3/lpipe.3 in the staged install"
for f in bin/lpipe man1/lpipe.1 man5/lpipe-pipeline.5 pipelines/extractive-summary.yaml \
	completions/lpipe; do
	[ -n "$(find "$STAGE" -path "*/$f")" ] && ok "$f installed" || fail "no $f in the staged install"
done
# the CUDA module, when this build made one
if [ -f "$top_builddir/.libs/lpipe-cuda.so" ]; then
	[ -n "$(find "$STAGE" -name lpipe-cuda.so)" ] && ok "lpipe-cuda.so installed" ||
		fail "lpipe-cuda.so was built but is not in the staged install"
fi
[ -n "$pc" ] && [ -n "$so" ] || exit 1

# 3. Exported: lpipe_* and nothing else.
if command -v nm >/dev/null 2>&1; then
	nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' >"$WORK/syms"
	if grep -q '^lpipe_run_file$' "$WORK/syms" && ! grep -v '^lpipe_' "$WORK/syms" >/dev/null; then
		ok "the shared library exports lpipe_* only ($(wc -l <"$WORK/syms") symbols)"
	else
		fail "the shared library exports: $(grep -v '^lpipe_' "$WORK/syms" | head -5 | tr '\n' ' ')"
	fi
fi

# 4. Build the example with pkg-config against the staged prefix.
PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR=$STAGE
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
flags=$(${PKG_CONFIG:-pkg-config} --cflags --libs lpipe) || { fail "pkg-config lpipe failed"; exit 1; }
case $flags in
*"-I$STAGE/"*"-L$STAGE/"*) ok "pkg-config points into the staged prefix" ;;
*) fail "pkg-config flags miss the staged prefix: $flags" ;;
esac
# A library built with --enable-sanitizers needs its runtimes in the
# program too (make check-sanitize): link the example with them.
san=
if readelf -d "$so" 2>/dev/null | grep -q 'libasan'; then
	san="-fsanitize=address,undefined"
fi
flags="$san $flags"
# shellcheck disable=SC2086
if ${CC:-cc} -Wall -Werror -o "$WORK/example" "$EXAMPLE" $flags 2>"$WORK/cc.log"; then
	ok "the example compiles with pkg-config --cflags --libs lpipe"
else
	fail "the example does not compile: $(head -5 "$WORK/cc.log")"
	exit 1
fi
# and with liblpipe.a: the packages it requires privately, linked shared
# (pkg-config --static would ask for static libraries of all of libcurl's)
PC=${PKG_CONFIG:-pkg-config}
static_flags="$san $($PC --cflags lpipe) $(dirname "$so")/liblpipe.a
	$($PC --libs $($PC --print-requires-private lpipe | awk '{ print $1 }')) -lm -lpthread"
# shellcheck disable=SC2086
if ${CC:-cc} -o "$WORK/example-static" "$EXAMPLE" $static_flags 2>"$WORK/cc.log" &&
	[ -z "$(ldd "$WORK/example-static" 2>/dev/null | grep liblpipe)" ]; then
	ok "the example links with liblpipe.a (ldd shows no liblpipe)"
else
	fail "the example does not link with liblpipe.a: $(head -5 "$WORK/cc.log")"
fi
LD_LIBRARY_PATH=$(dirname "$so")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

# 5. Its output is lpipe run's, on the installed extractive-summary.yaml.
pipeline=$(find "$STAGE" -path '*/pipelines/extractive-summary.yaml' | head -1)
lp run "$pipeline" "$DATA/small.txt"
want_rc=$rc
cp "$OUT" "$WORK/want"
rc=0
"$WORK/example" "$pipeline" "$DATA/small.txt" >"$WORK/got" 2>"$WORK/got.err" || rc=$?
if [ "$rc" -eq "$want_rc" ] && [ -s "$WORK/want" ] && cmp -s "$WORK/want" "$WORK/got"; then
	ok "the example prints what lpipe run prints (exit $rc, $(wc -c <"$WORK/got") bytes)"
else
	fail "the example (exit $rc) differs from lpipe run (exit $want_rc)"
	diff "$WORK/want" "$WORK/got" | head -10
	head -5 "$WORK/got.err"
fi
rc=0
"$WORK/example-static" "$pipeline" "$DATA/small.txt" >"$WORK/got-static" 2>/dev/null || rc=$?
if [ "$rc" -eq "$want_rc" ] && cmp -s "$WORK/want" "$WORK/got-static"; then
	ok "the static example prints what lpipe run prints"
else
	fail "the static example (exit $rc) differs from lpipe run (exit $want_rc)"
fi
if grep -q '^passed: [01], survival: [0-9.]*$' "$WORK/got.err"; then
	ok "the example reads the verification: $(cat "$WORK/got.err")"
else
	fail "no verification line from the example: $(head -3 "$WORK/got.err")"
fi

# 6. Errors as codes plus a message: a missing document gives lpipe run's
# exit status (3) and a message naming it.
lp run "$pipeline" "$WORK/missing.txt"
want_rc=$rc
rc=0
"$WORK/example" "$pipeline" "$WORK/missing.txt" >/dev/null 2>"$WORK/err" || rc=$?
if [ "$rc" -eq 3 ] && [ "$rc" -eq "$want_rc" ] && grep -q "missing.txt" "$WORK/err"; then
	ok "a missing document: exit 3 as lpipe run, and a message naming it"
else
	fail "a missing document: exit $rc (lpipe run: $want_rc), message: $(cat "$WORK/err")"
fi

finish
