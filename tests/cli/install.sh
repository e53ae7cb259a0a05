#!/bin/sh
# install.sh - a staged `make install` (DESTDIR) puts every installed file
# where this build's configure said: the tool, liblpipe shared and static,
# lpipe.h, lpipe.pc, the CUDA module in the folder the tool looks in, the
# man pages, the bash completion and the ready pipelines, which the staged
# tool finds by their bare name (`lpipe run summarize doc.txt`); `make
# uninstall` takes them all away again.
. "$top_srcdir/tests/cli/lib.sh"

MK="${MAKE:-make} --no-print-directory"
# absolute: the tool is run from another folder below
top_builddir=$(cd "$top_builddir" && pwd)
DATA=$(cd "$DATA" && pwd)

# The install folders as this build's Makefile has them.
dirs=$(printf 'lp-dirs:\n\t@echo $(bindir) $(libdir) $(includedir) $(pkgconfigdir) $(pkglibdir) $(mandir) $(bashcompletiondir) $(pipelinesdir)\n' |
	MAKEFLAGS= MFLAGS= $MK -s -C "$top_builddir" -f Makefile -f - lp-dirs | tail -1) || {
	fail "cannot read the install folders from $top_builddir/Makefile"
	exit 1
}
# shellcheck disable=SC2086 # one word per folder
set -- $dirs
[ $# -eq 8 ] || { fail "install folders: '$dirs'"; exit 1; }
bindir=$1 libdir=$2 includedir=$3 pkgconfigdir=$4 pkglibdir=$5 mandir=$6 complete_dir=$7
pipelinesdir=$8

STAGE=$WORK/stage
if ! $MK -C "$top_builddir" install DESTDIR="$STAGE" >"$WORK/install.log" 2>&1; then
	fail "make install DESTDIR=... failed"
	tail -20 "$WORK/install.log"
	exit 1
fi

# installed FILE DESCRIPTION: $STAGE/FILE is there.
installed() {
	if [ -f "$STAGE$1" ]; then
		ok "$2 installed as $1"
	else
		fail "$2 is not in $1"
	fi
}
installed "$bindir/lpipe" "the tool"
installed "$libdir/liblpipe.a" "the static library"
installed "$includedir/lpipe.h" "the header"
installed "$pkgconfigdir/lpipe.pc" "the pkg-config file"
installed "$mandir/man1/lpipe.1" "lpipe(1)"
installed "$mandir/man3/lpipe.3" "lpipe(3)"
installed "$mandir/man5/lpipe-pipeline.5" "lpipe-pipeline(5)"
installed "$complete_dir/lpipe" "the bash completion"
# the shared library and the links to it
so=$(readlink -f "$STAGE$libdir/liblpipe.so" 2>/dev/null)
soname=$(readelf -d "$so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ -f "$so" ] && [ -n "$soname" ] && [ -f "$STAGE$libdir/$soname" ]; then
	ok "the shared library installed as $libdir/liblpipe.so -> $soname -> $(basename "$so")"
else
	fail "no shared library at $libdir/liblpipe.so (soname '$soname')"
fi

# The files that come from the source as they are.
for f in man/lpipe.1 man/lpipe-pipeline.5 man/lpipe.3 src/api/lpipe.h; do
	case $f in
	man/*) dest=$mandir/man${f##*.}/${f#man/} ;;
	*) dest=$includedir/${f##*/} ;;
	esac
	cmp -s "$top_srcdir/$f" "$STAGE$dest" || fail "$dest differs from $f"
done
n=0
for f in "$PIPELINES"/*.yaml; do
	n=$((n + 1))
	cmp -s "$f" "$STAGE$pipelinesdir/${f##*/}" ||
		fail "ready pipeline ${f##*/} missing from $pipelinesdir, or different"
done
n_inst=$(find "$STAGE$pipelinesdir" -name '*.yaml' | wc -l)
[ "$n" -ge 2 ] && [ "$n_inst" -eq "$n" ] &&
	ok "the $n ready pipelines installed in $pipelinesdir, and the man pages and header as written" ||
	fail "$n_inst pipelines in $pipelinesdir, $n in the source"

# lpipe.pc names the folders the files went to.
PC=${PKG_CONFIG:-pkg-config}
pc_libdir=$(PKG_CONFIG_PATH=$STAGE$pkgconfigdir $PC --variable=libdir lpipe)
pc_incdir=$(PKG_CONFIG_PATH=$STAGE$pkgconfigdir $PC --variable=includedir lpipe)
[ "$pc_libdir" = "$libdir" ] && [ "$pc_incdir" = "$includedir" ] &&
	ok "lpipe.pc: libdir $pc_libdir, includedir $pc_incdir" ||
	fail "lpipe.pc says libdir '$pc_libdir', includedir '$pc_incdir'"

# The completion offers the installed pipelines, and bash reads it.
if grep -qF "$pipelinesdir" "$STAGE$complete_dir/lpipe" &&
	{ ! command -v bash >/dev/null || bash -n "$STAGE$complete_dir/lpipe" 2>"$WORK/bash.err"; }; then
	ok "the completion looks in $pipelinesdir"
else
	fail "the completion does not name $pipelinesdir: $(head -3 "$WORK/bash.err")"
fi

# The staged tool: where it looks for ready pipelines and the CUDA module.
# A staged install keeps the layout, so it looks in the staged folders.
TOOL=$STAGE$bindir/lpipe
LPIPE_PIPELINES_DIR=
export LPIPE_PIPELINES_DIR
"$TOOL" version >"$WORK/version" 2>&1 || fail "the staged lpipe version failed: $(cat "$WORK/version")"
grep -qFx "pipelines: $STAGE$pipelinesdir" "$WORK/version" &&
	ok "the staged tool looks for ready pipelines in the staged $pipelinesdir" ||
	fail "the staged tool looks for ready pipelines in: $(grep '^pipelines' "$WORK/version")"
if grep -q '^#define LP_HAVE_CUDA 1' "$top_builddir/config.h"; then
	installed "$pkglibdir/lpipe-cuda.so" "the CUDA module"
	grep -qFx "cuda module: $STAGE$pkglibdir/lpipe-cuda.so" "$WORK/version" &&
		ok "the tool looks for the CUDA module where it is installed" ||
		fail "the tool looks for $(sed -n 's/^cuda module: //p' "$WORK/version"), installed: $pkglibdir/lpipe-cuda.so"
else
	[ -z "$(find "$STAGE" -name 'lpipe-cuda*')" ] && ok "no CUDA module installed (built without)" ||
		fail "a build without CUDA installed $(find "$STAGE" -name 'lpipe-cuda*')"
fi

# Ready pipelines by bare name, from a folder that has none of them.
mkdir -p "$WORK/elsewhere"
cd "$WORK/elsewhere" || exit 1
LPIPE=$TOOL
lp check summarize
expect "lpipe check summarize: the ready pipeline" 0
expect_out "it is summarize.yaml" "name: summarize"
lp run "$STAGE$pipelinesdir/extractive-summary.yaml" "$DATA/small.txt"
cp "$OUT" "$WORK/want"
lp run extractive-summary "$DATA/small.txt"
if [ "$rc" -eq 0 ] && [ -s "$OUT" ] && cmp -s "$OUT" "$WORK/want"; then
	ok "lpipe run extractive-summary: the ready pipeline's output ($(wc -c <"$OUT") bytes)"
else
	fail "lpipe run extractive-summary: exit $rc, $(head -3 "$ERR")"
fi
lp check summarize.yaml
expect "lpipe check summarize.yaml: the ready pipeline too" 0
lp run summarize "$DATA/small.txt"
if [ "$rc" -eq 0 ] && [ -s "$OUT" ]; then
	ok "lpipe run summarize DOC: summarized with the ready pipeline ($(wc -w <"$OUT") words)"
elif [ "$rc" -eq 3 ] && grep -q "no model" "$ERR"; then
	# the pipeline was found and read: it stopped at its model
	echo "# the default model is not fetched: lpipe run summarize stopped at the model"
	ok "lpipe run summarize DOC: the ready pipeline found ($(head -1 "$ERR"))"
else
	fail "lpipe run summarize DOC: exit $rc, $(head -3 "$ERR")"
fi
# a file of the current folder comes first
printf 'version: 1\nname: mine\nstages:\n  - split: {unit: words, size: 100}\n' >summarize.yaml
lp check summarize.yaml
expect "a summarize.yaml of the current folder comes first" 0
expect_out "it is the local one" "name: mine"
# $LPIPE_PIPELINES_DIR instead of the installed folder
mkdir "$WORK/mine"
mv summarize.yaml "$WORK/mine/own.yaml"
LPIPE_PIPELINES_DIR=$WORK/mine
lp check own
expect "LPIPE_PIPELINES_DIR=DIR: lpipe check own reads DIR/own.yaml" 0
LPIPE_PIPELINES_DIR=
lp check no-such-pipeline
expect "an unknown bare name" 3 "no-such-pipeline.yaml" "$STAGE$pipelinesdir"
cd "$top_builddir" || exit 1

# make uninstall takes it all away (folders may stay).
if $MK -C "$top_builddir" uninstall DESTDIR="$STAGE" >"$WORK/uninstall.log" 2>&1; then
	left=$(find "$STAGE" ! -type d)
	[ -z "$left" ] && ok "make uninstall leaves no file" ||
		fail "make uninstall left: $(echo "$left" | head -5 | tr '\n' ' ')"
else
	fail "make uninstall DESTDIR=... failed: $(tail -5 "$WORK/uninstall.log")"
fi

finish
