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
# (every other installed file: tests/cli/install.sh)
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

# 4b. Statically with liblpipe.a: `pkg-config --static --libs lpipe` must
# name all that liblpipe.a needs: its Libs.private (-lm -lpthread, -ldl
# where dlopen is not in the C library) and, through Requires.private, the
# libraries it calls (libyaml, PCRE2, Jansson, utf8proc, libcurl) with
# their own private dependencies.
PC=${PKG_CONFIG:-pkg-config}
a=$(dirname "$so")/liblpipe.a
[ -f "$a" ] || { fail "no liblpipe.a beside $so"; exit 1; }
static=$($PC --static --libs lpipe) || { fail "pkg-config --static lpipe failed"; exit 1; }
static=$(echo $static) # one space between words
echo "# pkg-config --static --libs lpipe: $static"
for lib in -lm -lpthread -lyaml -lpcre2-8 -ljansson -lutf8proc -lcurl; do
	case " $static " in
	*" $lib "*) ;;
	*) fail "pkg-config --static --libs lpipe lacks $lib" ;;
	esac
done

# lib_file NAME EXT: libNAME.EXT in the -L folders of $static or the
# compiler's, or nothing.
lib_file() {
	for f in $static; do
		case $f in -L*) [ -f "${f#-L}/lib$1.$2" ] && { echo "${f#-L}/lib$1.$2"; return; } ;; esac
	done
	f=$(${CC:-cc} -print-file-name="lib$1.$2" 2>/dev/null)
	case $f in /*) [ -f "$f" ] && echo "$f" ;; esac
}
# link_static NAME LIBS FLAGS: build $WORK/NAME with the example and the
# link flags FLAGS, taking liblpipe and the libraries LIBS (-lX words)
# from their archives (the rest shared where the linker finds one).
link_static() {
	out=$1 libs=$2 flags=
	for f in $3; do
		case " -llpipe $libs " in
		*" $f "*) f=$(lib_file "${f#-l}" a) ;;
		esac
		flags="$flags $f"
	done
	# shellcheck disable=SC2086
	${CC:-cc} $san -o "$WORK/$out" "$EXAMPLE" $($PC --cflags lpipe) $flags 2>"$WORK/cc.log"
}
# static_ok NAME LIBS: WORK/NAME needs none of them (nor liblpipe) shared.
static_ok() {
	readelf -d "$WORK/$1" >"$WORK/dynamic" 2>/dev/null || return 1
	for f in -llpipe $2; do
		grep -q -e "(NEEDED).*\[lib${f#-l}\." -e "(NEEDED).*\[lib${f#-l}-" "$WORK/dynamic" &&
			return 1
	done
	return 0
}
cc_errors() {
	grep -v warning "$WORK/cc.log" | head -5
}

required=$($PC --print-requires-private lpipe | awk '{ print $1 }')
reqs=$($PC --libs-only-l $required)
unfound=
for f in $static; do
	case $f in
	-llpipe) ;;
	-l*) [ -n "$(lib_file "${f#-l}" a)$(lib_file "${f#-l}" so)" ] || unfound="$unfound $f" ;;
	esac
done
if [ -n "$unfound" ]; then
	# libcurl's own dependencies are missing: link what lpipe.pc itself
	# says (Libs, Libs.private) and its required packages' shared libraries.
	echo "# not on this machine:$unfound (their -dev packages: sh scripts/bootstrap test)"
	echo "# so liblpipe.a is linked with lpipe.pc's own flags and the required packages' --libs"
	theirs=" $($PC --static --libs $required) "
	own=
	for f in $static; do
		case $theirs in *" $f "*) ;; *) own="$own $f" ;; esac
	done
	# a word of lpipe.pc's Libs.private that a required package names
	# too (-lm, poppler's) is lpipe's own as well: after the shared ones
	private=$(sed -n 's/^Libs\.private: *//p' "$($PC --path lpipe)")
	if link_static example-static "" "$own $($PC --libs $required) $private" &&
		static_ok example-static ""; then
		ok "the example links with liblpipe.a (lpipe.pc's own:$own; shared: $(echo $reqs))"
	else
		fail "the example does not link with liblpipe.a: $(cc_errors)"
	fi
else
	# i. liblpipe.a alone static: what lpipe.pc adds must cover its symbols.
	if link_static example-static "" "$static" && static_ok example-static ""; then
		ok "the example links with liblpipe.a and pkg-config --static (the rest shared)"
	else
		fail "the example does not link with liblpipe.a: $(cc_errors)"
	fi
	# ii. the libraries lpipe requires from their archives too: what
	# lpipe.pc brings of theirs (libcurl's: nghttp2, OpenSSL, ...) must
	# cover them.
	have= missing=
	for f in $reqs; do
		if [ -n "$(lib_file "${f#-l}" a)" ]; then have="$have $f"; else missing="$missing $f"; fi
	done
	[ -z "$missing" ] ||
		echo "# no static library for:$missing (install its Debian -dev package): linked shared"
	if [ -z "$have" ]; then
		echo "# none of$reqs has a static library here: only liblpipe.a was linked statically"
	elif link_static example-static2 "$have" "$static" && static_ok example-static2 "$have"; then
		ok "the example links with liblpipe.a and the archives of$have"
	else
		fail "the example does not link with liblpipe.a and$have: $(cc_errors)"
	fi
fi
# Every library static is out of reach on Debian 12: libgssapi_krb5 (in
# libcurl's list) has no archive there, and the Libs.private of libcurl.pc
# lists -lidn2, -lbrotlidec, -lrtmp, ... without what they need in turn
# (libunistring, libbrotlicommon, GnuTLS), which a fully static link would.
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
for x in example-static example-static2; do
	[ -x "$WORK/$x" ] || continue
	rc=0
	"$WORK/$x" "$pipeline" "$DATA/small.txt" >"$WORK/got-static" 2>/dev/null || rc=$?
	if [ "$rc" -eq "$want_rc" ] && cmp -s "$WORK/want" "$WORK/got-static"; then
		ok "$x prints what lpipe run prints"
	else
		fail "$x (exit $rc) differs from lpipe run (exit $want_rc)"
	fi
done
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
