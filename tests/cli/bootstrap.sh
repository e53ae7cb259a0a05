#!/bin/sh
# bootstrap.sh - `sh scripts/bootstrap run > out.txt` leaves in out.txt the
# result of `lpipe run` and nothing else.
#
# In `make check` (cheap, offline): a copy of the script runs in a scratch
# tree where apt-get, sudo, dpkg-query, autoreconf, configure, make and
# the fetch scripts are stand-ins that print on standard output and
# standard error; the tree's pipelines/summarize.yaml is the model-free
# extractive pipeline and its sample a short document, and build/lpipe is
# the lpipe under test. out.txt must equal what that lpipe prints itself.
#
# With --full, run from the top of a source tree (CI: .ci/run, after
# `bootstrap test` has built everything and fetched the models): the real
# `sh scripts/bootstrap run`, unchanged; out.txt must hold the summary
# paragraphs, a blank line and the verification line, nothing else. It
# takes as long as the README's main job.
if [ "${1:-}" = --full ]; then
	top_srcdir=$(pwd)
	LPIPE=$top_srcdir/build/lpipe
fi
. "$top_srcdir/tests/cli/lib.sh"

# Lines that only the tools around lpipe print.
NOISE='Reading package lists\|^Get:\|^Setting up\|^checking \|^config\.status\|make\[\|Entering directory\|^fetch-\|^bootstrap\|^configure\|Collecting\|^STUB'

if [ "${1:-}" = --full ]; then
	rc=0
	sh scripts/bootstrap run >"$WORK/out.txt" 2>"$WORK/err.txt" </dev/null || rc=$?
	out=$WORK/out.txt
	last=$(tail -n 1 "$out")
	blank=$(tail -n 2 "$out" | head -n 1)
	if [ "$rc" -le 1 ] && [ -s "$out" ] && [ -z "$blank" ] &&
	   printf '%s\n' "$last" | grep -q '^verification: [0-9]*/[0-9]* keyphrases survived' &&
	   ! grep -q "$NOISE\\|^lpipe: " "$out"; then
		ok "bootstrap run: stdout holds the summary and the verification line"
	else
		fail "bootstrap run (status $rc): $(head -c 400 "$out")"
	fi
	[ "$n_fail" -eq 0 ]
	exit
fi

T=$WORK/tree
B=$WORK/bin
mkdir -p "$T/scripts" "$T/pipelines" "$T/data" "$B"
cp "$top_srcdir/scripts/bootstrap" "$T/scripts/"
cp "$PIPELINES/extractive-summary.yaml" "$T/pipelines/summarize.yaml"
cp "$top_srcdir/data/eval/docs/bash-jobs.en.txt" "$T/data/debian-reference.en.txt"

# stub NAME BODY: a stand-in command in $B
stub() {
	printf '#!/bin/sh\n%s\n' "$2" >"$B/$1"
	chmod +x "$B/$1"
}
noise='echo "STUB $0 $*"; echo "STUB $0 to stderr" >&2'
stub dpkg-query "$noise >/dev/null"'
case $* in *check) exit 1 ;; esac
printf "install ok installed"'
stub sudo 'exec "$@"'
stub apt-get "$noise"'
echo "Reading package lists... Done"; echo "Setting up check"'
stub autoreconf "$noise"'
printf "#!/bin/sh\necho \"checking for cc... cc\"; echo STUB configure >&2; : >Makefile\n" >configure
chmod +x configure'
stub make "$noise"'
echo "make[1]: Entering directory /somewhere"
ln -sf "$LPIPE" build/lpipe'
for f in fetch-models fetch-embedder; do
	printf '#!/bin/sh\necho "%s: present and verified"; echo "STUB %s" >&2\n' "$f" "$f" \
		>"$T/scripts/$f"
done

# The lpipe that the stand-in make "builds", run directly for reference.
"$LPIPE" run "$T/pipelines/summarize.yaml" "$T/data/debian-reference.en.txt" \
	>"$WORK/want.txt" 2>/dev/null </dev/null
rc=0
(cd "$T" && PATH=$B:$PATH LPIPE=$LPIPE sh scripts/bootstrap run \
	>"$WORK/out.txt" 2>"$WORK/err.txt" </dev/null) || rc=$?
if [ "$rc" -le 1 ] && [ -s "$WORK/want.txt" ] && cmp -s "$WORK/out.txt" "$WORK/want.txt"; then
	ok "bootstrap run: stdout is lpipe's result alone"
else
	fail "bootstrap run (status $rc): stdout differs: $(grep "$NOISE" "$WORK/out.txt" | head -3)"
	sed 's/^/  stderr: /' "$WORK/err.txt" | tail -5
fi
# the stand-ins did run, and what they printed went to stderr
for tool in apt-get autoreconf configure make fetch-models fetch-embedder; do
	grep -q "STUB.*$tool" "$WORK/err.txt" || { fail "$tool did not run or its output is lost"; continue; }
done
grep -q 'Reading package lists' "$WORK/err.txt" &&
	grep -q 'fetch-embedder: present and verified' "$WORK/err.txt" &&
	grep -q 'checking for cc' "$WORK/err.txt" &&
	ok "everything the tools print is on stderr" || fail "tool output missing from stderr"
tail -n 1 "$WORK/out.txt" | grep -q '^verification: ' &&
	ok "the verification line ends stdout" || fail "no verification line at the end"

[ "$n_fail" -eq 0 ]
