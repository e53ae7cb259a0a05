#!/bin/sh
# hostile2.sh - hostile outputs, inputs and options (second round): -o never
# replaces what is not a regular file, reads stop at the limit of their kind
# of file, options are range-checked, stdout errors are exit 3, and a killed
# run leaves no temporary behind.
. "$top_srcdir/tests/cli/lib.sh"

DOC=$DATA/small.txt
SPLIT=$(pipeline split <<'Y'
version: 1
stages:
  - split: {size: 64}
Y
)
# Commands that could hang (read without end) run under a time limit: a
# hang is a failure with status 124, not a stuck test.
lpt() {
	rc=0
	timeout 60 "$LPIPE" "$@" >"$OUT" 2>"$ERR" </dev/null || rc=$?
}
MODEL=$WORK/chat.gguf
"$top_builddir/tests/tools/gen_chat_model" "$MODEL" || fail "write the tiny model"

# ---- (1) -o never replaces what is not a regular file --------------------
mkfifo "$WORK/fifo"
timeout 60 cat "$WORK/fifo" >"$WORK/from-fifo" &
reader=$!
lpt run "$SPLIT" "$DOC" -o "$WORK/fifo"
wait "$reader"
expect "(1) -o FIFO: written through" 0
[ -p "$WORK/fifo" ] && ok "(1) the FIFO is still a FIFO" || fail "(1) the FIFO was replaced"
[ -s "$WORK/from-fifo" ] && ok "(1) the reader got the output" || fail "(1) nothing came out of the FIFO"

echo old >"$WORK/target"
ln -s target "$WORK/link"
lpt run "$SPLIT" "$DOC" -o "$WORK/link"
expect "(1) -o symlink" 0
[ -L "$WORK/link" ] && ok "(1) the link is still a link" || fail "(1) the link was replaced"
grep -q Lighthouse "$WORK/target" && ok "(1) the link's target got the output" ||
	fail "(1) the link's target is unchanged"
ln -s no-such-dir/x "$WORK/dangling"
lpt run "$SPLIT" "$DOC" -o "$WORK/dangling"
expect "(1) -o dangling symlink refused" 3 "dangling" "symbolic link"

if mknod "$WORK/null" c 1 3 2>/dev/null; then
	lpt run "$SPLIT" "$DOC" -o "$WORK/null"
	expect "(1) -o character device" 0
	[ -c "$WORK/null" ] && ok "(1) the device is still a device" ||
		fail "(1) the device was replaced by a file"
else
	echo "# skip: (1) -o character device: mknod not permitted (not root)"
fi
# never -o /dev/full itself: a binary with the defect would replace it
if mknod "$WORK/full" c 1 7 2>/dev/null; then
	lpt run "$SPLIT" "$DOC" -o "$WORK/full"
	expect "(13) a failed write names the path and the reason" 3 "$WORK/full" "No space left"
	[ -c "$WORK/full" ] && ok "(1) a full device is still a device" ||
		fail "(1) the full device was replaced"
else
	echo "# skip: (13) -o to a full device: mknod not permitted (not root)"
fi

# ---- (7) temporaries: signals, stale ones, long names --------------------
# A document that is a FIFO nobody writes keeps the run waiting after -o is
# open, so the signal comes while the temporary exists.
mkfifo "$WORK/stuck"
for sig in TERM INT; do
	rm -f "$WORK/sig.txt"
	"$LPIPE" run "$SPLIT" "$WORK/stuck" -o "$WORK/sig.txt" >/dev/null 2>&1 &
	pid=$!
	n=0
	while [ "$n" -lt 600 ] && ! ls "$WORK"/sig.txt.tmp.* >/dev/null 2>&1; do
		sleep 0.1
		n=$((n + 1))
	done
	if [ "$n" -lt 600 ]; then ok "(7) SIG$sig: the temporary exists while the run waits"; else
		fail "(7) SIG$sig: no temporary while the run waits (-o opened late)"; fi
	kill -"$sig" "$pid"
	rc=0
	wait "$pid" || rc=$?
	want=143
	[ "$sig" = INT ] && want=130
	[ "$rc" -eq "$want" ] && ok "(7) SIG$sig: status $rc" || fail "(7) SIG$sig: status $rc, expected $want"
	if ls "$WORK"/sig.txt.tmp.* >/dev/null 2>&1; then
		fail "(7) SIG$sig left a temporary"
		rm -f "$WORK"/sig.txt.tmp.*
	else
		ok "(7) SIG$sig: no temporary left"
	fi
done
# a temporary of a process that is gone goes; one of a live process stays
: >"$WORK/out.txt.tmp.2147483646.AbCdEf"
: >"$WORK/out.txt.tmp.$$.GhIjKl"
: >"$WORK/other.txt.tmp.2147483646.MnOpQr"
lpt run "$SPLIT" "$DOC" -o "$WORK/out.txt"
expect "(7) run with stale temporaries" 0
[ ! -e "$WORK/out.txt.tmp.2147483646.AbCdEf" ] && ok "(7) the stale temporary is removed" ||
	fail "(7) the stale temporary is still there"
[ -e "$WORK/out.txt.tmp.$$.GhIjKl" ] && ok "(7) a live process's temporary stays" ||
	fail "(7) a live process's temporary was removed"
[ -e "$WORK/other.txt.tmp.2147483646.MnOpQr" ] && ok "(7) another output's temporary stays" ||
	fail "(7) another output's temporary was removed"
long=$WORK/$(printf 'n%.0s' $(seq 1 250))
lpt run "$SPLIT" "$DOC" -o "$long"
expect "(13) a 250-character output name" 0
[ -s "$long" ] && ok "(13) the long name holds the output" || fail "(13) no output under the long name"
# an output that cannot be written fails before the document is read (it
# never will be: the FIFO has no writer)
lpt run "$SPLIT" "$WORK/stuck" -o "$WORK/no-such-dir/out.txt"
expect "(13) unwritable -o fails before the work" 3 "no-such-dir/out.txt"

# ---- (2) reads stop at their limit; binary stops at the first NUL -------
lpt check /dev/zero
expect "(2) check /dev/zero" 3 "NUL byte at offset 0"
lpt model info /dev/zero
expect "(2) model info /dev/zero" 3 "not a regular file"
lpt tokenize /dev/zero hello
expect "(2) tokenize /dev/zero" 3 "not a regular file"
rc=0
timeout 60 "$LPIPE" tokenize "$MODEL" - </dev/zero >"$OUT" 2>"$ERR" || rc=$?
expect "(2) tokenize - </dev/zero" 3 "NUL byte at offset 0"
lpt generate /dev/zero -p hi
expect "(2) generate /dev/zero" 3 "not a regular file"
P=$(pipeline model-dev <<'Y'
version: 1
model: {path: /dev/zero}
stages:
  - answer: {question: "why?"}
Y
)
lpt run "$P" "$DOC"
expect "(2) model.path: /dev/zero" 3 "not a regular file"
lpt run "$SPLIT" /dev/urandom
expect "(2) document /dev/urandom" 3 "NUL byte"
rc=0
timeout 60 "$LPIPE" run "$SPLIT" - </dev/zero >"$OUT" 2>"$ERR" || rc=$?
expect "(2) run - </dev/zero" 3 "NUL byte at offset 0"
rc=0
yes '# a comment line' | timeout 60 "$LPIPE" check /dev/stdin >"$OUT" 2>"$ERR" || rc=$?
expect "(2) a pipeline from a pipe without end" 3 "larger than the 1.00 MiB limit for a pipeline"
for dev in /dev/zero /dev/urandom; do
	P=$(pipeline prompt-dev <<Y
version: 1
model: {path: $MODEL}
stages:
  - answer: {question: "why?", prompt_file: $dev}
Y
)
	LPIPE_MEM_BUDGET=64MiB lpt check "$P"
	expect "(2) prompt_file: $dev" 2 "prompt_file" "NUL byte"
done
head -c 2000000 /dev/zero | tr '\0' 'x' >"$WORK/prompt.txt"
P=$(pipeline prompt-big <<Y
version: 1
model: {path: $MODEL}
stages:
  - answer: {question: "why?", prompt_file: prompt.txt}
Y
)
lpt check "$P"
expect "(2) a 2 MB prompt_file" 2 "larger than the 1.00 MiB limit for a prompt file"

# ---- (3) the pipeline is read under the budget, and has a size limit ----
python3 -c 'import sys
print("version: 1\nstages:\n  - split: {size: 64}\n  - retrieve: {query: x, must_include: [" +
      ",".join("w%d" % i for i in range(300000)) + "]}")' >"$WORK/big.yaml"
lpt check "$WORK/big.yaml"
expect "(3) a 2 MB pipeline" 3 "big.yaml" "larger than the 1.00 MiB limit"
lpt run "$WORK/big.yaml" "$DOC" --mem-budget 64MiB
expect "(3) a 2 MB pipeline under a budget" 3 "big.yaml" "limit for a pipeline"
python3 -c 'import sys
print("version: 1\nstages:\n  - split: {size: 64}\n  - retrieve: {query: x, must_include: [" +
      ",".join("w%d" % i for i in range(80000)) + "]}")' >"$WORK/mid.yaml"
lpt run "$WORK/mid.yaml" "$DOC" --mem-budget 1MiB
expect "(3) parsing the pipeline counts in the budget" 4 "mid.yaml" "reading the pipeline"
LPIPE_MEM_BUDGET=1MiB lpt check "$WORK/mid.yaml"
expect "(3) check under LPIPE_MEM_BUDGET" 4 "mid.yaml" "reading the pipeline"

# ---- (4) a stage-count limit; a split stage does not grow memory -------
{ echo "version: 1"; echo "stages:"; for i in $(seq 65); do echo "  - split: {size: 64}"; done; } >"$WORK/s65.yaml"
lpt check "$WORK/s65.yaml"
expect "(4) 65 stages" 2 "s65.yaml:67:" "too many stages: 65 (at most 64)"
sed '$d' "$WORK/s65.yaml" >"$WORK/s64.yaml"
lpt check "$WORK/s64.yaml"
expect "(4) 64 stages" 0
yes 'The quick brown fox jumps over the lazy dog near the river bank.' | head -c 400000 >"$WORK/mid.txt"
peak() { sed -n 's/.*tracked peak [^(]*(\([0-9]*\) bytes).*/\1/p' "$ERR" | head -1; }
{ echo "version: 1"; echo "stages:"; echo "  - split: {size: 64}"; } >"$WORK/s1.yaml"
lpt run "$WORK/s1.yaml" "$WORK/mid.txt" -v
one=$(peak)
lpt run "$WORK/s64.yaml" "$WORK/mid.txt" -v
many=$(peak)
if [ -n "$one" ] && [ -n "$many" ] && [ "$many" -lt $((one + 262144)) ]; then
	ok "(4) 64 split stages: tracked peak $many bytes, one: $one"
else
	fail "(4) 64 split stages: tracked peak '$many' bytes, one: '$one'"
fi

# ---- (5) a fraction of a byte is no budget ------------------------------
for v in 0.5B 0.9 1.5; do
	lpt run "$SPLIT" "$DOC" --mem-budget "$v"
	expect "(5) --mem-budget $v" 2 "--mem-budget"
done
LPIPE_MEM_BUDGET=0.5B lpt run "$SPLIT" "$DOC"
expect "(5) LPIPE_MEM_BUDGET=0.5B" 2 "LPIPE_MEM_BUDGET"
P=$(pipeline halfbyte <<'Y'
version: 1
memory: {budget: 0.5B}
stages:
  - split: {size: 64}
Y
)
lpt check "$P"
expect "(5) memory: {budget: 0.5B}" 2 "budget"

# ---- (6) writes to standard output are checked --------------------------
full() {
	what=$1
	shift
	rc=0
	timeout 60 "$LPIPE" "$@" >/dev/full 2>"$ERR" </dev/null || rc=$?
	expect "(6) $what > /dev/full" 3 "standard output"
}
full "help" help
full "--help" --help
full "version" version
full "model info" model info "$MODEL"
full "plan" plan "$MODEL" --mem-budget 64MiB
full "tokenize" tokenize "$MODEL" hello
full "check" check "$SPLIT"
rc=0
timeout 60 "$LPIPE" generate "$MODEL" -p hi -n 4 --temp 0 >/dev/full 2>"$ERR" </dev/null || rc=$?
expect "(6) generate > /dev/full" 3 "unable to write"
rc=0
timeout 60 "$LPIPE" run "$SPLIT" "$DOC" >/dev/full 2>"$ERR" </dev/null || rc=$?
expect "(6) run > /dev/full" 3 "unable to write"

# ---- (8) (9) numeric options: one parser, ranges named -------------------
bad_opt() {
	lpt "$@"
	expect "(8) $*" 2 "invalid value" "expected"
}
bad_opt generate "$MODEL" -p hi --ctx -5
bad_opt generate "$MODEL" -p hi --threads 100000
bad_opt generate "$MODEL" -p hi --temp nan
bad_opt generate "$MODEL" -p hi --temp inf
bad_opt generate "$MODEL" -p hi --top-k -1
bad_opt generate "$MODEL" -p hi --top-p 2
bad_opt generate "$MODEL" -p hi --min-p nan
bad_opt generate "$MODEL" -p hi --repeat-penalty -1
bad_opt generate "$MODEL" -p hi -n -3
bad_opt generate "$MODEL" -p hi --seed -1
bad_opt model info "$MODEL" --context 9223372036854775807
bad_opt plan "$MODEL" --mem-budget 64MiB --threads 0
bad_opt probe "$MODEL" --threads 100000
bad_opt probe "$MODEL" --max 99999999999
lpt generate "$MODEL" -p hi --ctx -5
expect "(8) the message names the option and the range" 2 "--ctx" "from 1 to"
lpt generate "$MODEL" -p ""
expect "(13) an empty prompt says so" 3 "prompt is empty"

# ---- (10) broken models are refused at load, by every command ----------
# patch KEY TYPE VALUE: copy the tiny model with metadata KEY's value
# replaced (TYPE u32 or f32), or with TENSOR's first float when KEY is
# tensor:NAME.
patch() {
	python3 - "$MODEL" "$WORK/bad.gguf" "$@" <<'PY'
import struct, sys
src, dst, key, typ, val = sys.argv[1:6]
b = bytearray(open(src, 'rb').read())
def u64(o): return struct.unpack_from('<Q', b, o)[0]
def u32(o): return struct.unpack_from('<I', b, o)[0]
sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip(t, o):
    if t == 8: return o + 8 + u64(o)
    if t == 9:
        et, n = u32(o), u64(o + 4); o += 12
        for _ in range(n): o = skip(et, o)
        return o
    return o + sizes[t]
n_t, n_kv = u64(8), u64(16)
o, align = 24, 32
for _ in range(n_kv):
    kl = u64(o); k = b[o + 8:o + 8 + kl].decode(); o += 8 + kl
    t = u32(o); o += 4
    if k == key:
        struct.pack_into('<I' if typ == 'u32' else '<f', b, o, int(val) if typ == 'u32' else float(val))
    if k == 'general.alignment': align = u32(o)
    o = skip(t, o)
tensors = {}
for _ in range(n_t):
    nl = u64(o); name = b[o + 8:o + 8 + nl].decode(); o += 8 + nl
    nd = u32(o); o += 4 + 8 * nd
    t = u32(o); off = u64(o + 4); o += 12
    tensors[name] = (t, off)
data = (o + align - 1) // align * align
if key.startswith('tensor:'):
    t, off = tensors[key[7:]]
    assert t == 0, 'not F32'
    struct.pack_into('<f', b, data + off, float(val))
open(dst, 'wb').write(b)
PY
}
bad_model() {
	what=$1
	shift
	patch "$@" || { fail "(10) $what: cannot patch"; return; }
	lpt model info "$WORK/bad.gguf"
	expect "(10) model info: $what" 3 "$1"
	lpt generate "$WORK/bad.gguf" -p hi -n 2
	expect "(10) generate: $what" 3
}
bad_model "head count 0" llama.attention.head_count u32 0
bad_model "block count 0" llama.block_count u32 0
bad_model "context 0" llama.context_length u32 0
bad_model "rms epsilon NaN" llama.attention.layer_norm_rms_epsilon f32 nan
bad_model "rms epsilon -1" llama.attention.layer_norm_rms_epsilon f32 -1
bad_model "rms epsilon 0" llama.attention.layer_norm_rms_epsilon f32 0
bad_model "rope base NaN" llama.rope.freq_base f32 nan
bad_model "rope base inf" llama.rope.freq_base f32 inf
bad_model "rope base 0" llama.rope.freq_base f32 0
patch tensor:output_norm.weight f32 nan && {
	lpt generate "$WORK/bad.gguf" -p hi -n 2
	expect "(10) generate: NaN norm weight" 3 "output_norm.weight" "not finite"
}
patch tensor:output_norm.weight f32 inf && {
	lpt generate "$WORK/bad.gguf" -p hi -n 2
	expect "(10) generate: inf norm weight" 3 "output_norm.weight" "not finite"
}
# (13) a string length past the end is named as such, not as the count
python3 -c 'import struct,sys; sys.stdout.buffer.write(b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 1 << 40) + b"k")' >"$WORK/str.gguf"
lpt model info "$WORK/str.gguf"
expect "(13) a huge string length" 3 "string length"

# ---- (12) a summary is never larger than its document ------------------
python3 -c '
import random
random.seed(1)
p = "\u3002\u3001\u300c\u300d\uff01\uff1f\u30fb\u2026\uff08\uff09"
out, n = [], 0
while n < 360000:
    s = "".join(random.choice(p) for _ in range(random.randint(3, 20))) + "\u3002"
    out.append(s); n += len(s.encode())
open(__import__("sys").argv[1], "w").write("".join(out))' "$WORK/punct.txt"
lpt run "$PIPELINES/extractive-summary.yaml" "$WORK/punct.txt"
size=$(wc -c <"$OUT")
if [ "$rc" -le 1 ] && [ "$size" -lt 8000 ]; then
	ok "(12) 360 KB of CJK punctuation: a summary of $size bytes"
else
	fail "(12) 360 KB of CJK punctuation: status $rc, a summary of $size bytes"
fi

# ---- lpipe check prints a prompt_file's path and size, not its content --
printf 'the secret is swordfish\n' >"$WORK/secret.txt"
P=$(pipeline secret <<Y
version: 1
model: {path: $MODEL}
stages:
  - answer: {question: "why?", prompt_file: secret.txt}
Y
)
lpt check "$P"
expect "check with a prompt_file" 0
if grep -q swordfish "$OUT"; then fail "check prints the prompt_file's content"; else
	ok "check keeps the prompt_file's content to itself"; fi
expect_out "check names the prompt_file and its size" "secret.txt" "24 bytes"
cp "$OUT" "$WORK/plan.yaml"
lpt check "$WORK/plan.yaml"
expect "the plan with a prompt_file checks again" 0

finish
