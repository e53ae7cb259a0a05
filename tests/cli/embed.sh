#!/bin/sh
# embed.sh - `lpipe embed MODEL FILE`: the .npy it writes is read back by
# hand (numpy may be absent): magic, version 1.0, dtype, shape, data size,
# unit-length rows; the JSON sidecar's chunks match the rows and the
# document. A tiny random BERT made here serves as the model, so the test
# never needs a download; the MiniLM is used too when it is present.
. "$(dirname "$0")/lib.sh"

# A BERT with hidden 32, 2 layers, 2 heads, 16-token vocabulary, F32.
make_tiny() {
	mkdir -p "$1"
	python3 - "$1" <<'PY'
import json, random, struct, sys
d = sys.argv[1]
E, F, L, V, P, T = 32, 64, 2, 16, 64, 2
rng = random.Random(7)
tensors = []
def add(name, shape, scale, base=0.0):
    n = 1
    for s in shape:
        n *= s
    tensors.append((name, shape, [base + rng.uniform(-scale, scale) for _ in range(n)]))
add("embeddings.word_embeddings.weight", [V, E], 1.0)
add("embeddings.position_embeddings.weight", [P, E], 0.5)
add("embeddings.token_type_embeddings.weight", [T, E], 0.5)
add("embeddings.LayerNorm.weight", [E], 0.2, 1.0)
add("embeddings.LayerNorm.bias", [E], 0.1)
for l in range(L):
    for m, (o, i) in (("attention.self.query", (E, E)), ("attention.self.key", (E, E)),
                      ("attention.self.value", (E, E)), ("attention.output.dense", (E, E)),
                      ("intermediate.dense", (F, E)), ("output.dense", (E, F))):
        add(f"encoder.layer.{l}.{m}.weight", [o, i], 1.5 / i ** 0.5)
        add(f"encoder.layer.{l}.{m}.bias", [o], 0.1)
    for m in ("attention.output.LayerNorm", "output.LayerNorm"):
        add(f"encoder.layer.{l}.{m}.weight", [E], 0.2, 1.0)
        add(f"encoder.layer.{l}.{m}.bias", [E], 0.1)
header, data = {}, b""
for name, shape, v in tensors:
    header[name] = {"dtype": "F32", "shape": shape,
                    "data_offsets": [len(data), len(data) + 4 * len(v)]}
    data += struct.pack("<%df" % len(v), *v)
h = json.dumps(header).encode()
with open(d + "/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
with open(d + "/config.json", "w") as f:
    json.dump({"hidden_size": E, "num_hidden_layers": L, "num_attention_heads": 2,
               "intermediate_size": F, "max_position_embeddings": P,
               "type_vocab_size": T, "vocab_size": V, "layer_norm_eps": 1e-12}, f)
with open(d + "/vocab.txt", "w") as f:
    f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "shell", "reads",
                       "a", "file", "##s", ".", ",", "mail", "every", "minute", "!"]) + "\n")
PY
}

# check_npy NPY JSON DOC DIM: the reader's verdict on stdout ("ok ROWS" or
# what is wrong).
check_npy() {
	python3 - "$@" <<'PY'
import json, math, struct, sys
npy, side, doc, dim = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
b = open(npy, "rb").read()
meta = json.load(open(side))
text = open(doc, "rb").read()
def bad(msg):
    print(msg)
    sys.exit(0)
if b[:8] != b"\x93NUMPY\x01\x00":
    bad("bad magic or version %r" % b[:8])
hlen = b[8] | b[9] << 8
start = 10 + hlen
if start % 64 or b[start - 1:start] != b"\n":
    bad("header not padded to 64 bytes ending in a newline")
h = b[10:start].decode("latin-1").strip()
if "'descr': '<f4'" not in h or "'fortran_order': False" not in h:
    bad("header %s" % h)
shape = h[h.index("'shape': (") + 10:]
shape = shape[:shape.index(")")]
rows, cols = (int(x) for x in shape.split(","))
if cols != dim or rows != meta["rows"] or dim != meta["dim"] or rows != len(meta["chunks"]):
    bad("shape (%d, %d), sidecar rows %d dim %d chunks %d"
        % (rows, cols, meta["rows"], meta["dim"], len(meta["chunks"])))
if len(b) != start + 4 * rows * cols:
    bad("data is %d bytes, want %d" % (len(b) - start, 4 * rows * cols))
v = struct.unpack("<%df" % (rows * cols), b[start:])
for r in range(rows):
    n = math.sqrt(sum(x * x for x in v[r * cols:(r + 1) * cols]))
    if abs(n - 1) > 1e-4:
        bad("row %d has norm %g" % (r, n))
last = -1
for c in meta["chunks"]:
    piece = text[c["offset"]:c["offset"] + c["length"]]
    if c["offset"] <= last or not piece.strip() or piece != piece.strip():
        bad("chunk %r is not a trimmed slice in order" % c)
    last = c["offset"]
if rows < 2:
    bad("only %d rows" % rows)
print("ok %d" % rows)
PY
}

# The model id memo goes to the cache directory: keep it in $WORK.
LPIPE_CACHE_DIR=$WORK/cache
export LPIPE_CACHE_DIR
tiny=$WORK/tiny
make_tiny "$tiny"
doc=$WORK/doc.txt
{
	i=0
	while [ $i -lt 40 ]; do
		echo "The shell reads a file every minute. Mail reads files, the shell!"
		i=$((i + 1))
	done
} >"$doc"

lp embed
[ "$rc" -eq 2 ] && ok "no arguments is a usage error" || fail "no arguments: $rc"
lp embed "$tiny" "$doc" --bogus
[ "$rc" -eq 2 ] && ok "unknown option" || fail "unknown option: $rc"
lp embed "$tiny" "$doc" --size 10 --overlap 10
[ "$rc" -eq 2 ] && ok "overlap not below size" || fail "overlap >= size: $rc"
lp embed "$tiny" - </dev/null
[ "$rc" -eq 2 ] && ok "stdin needs -o" || fail "stdin without -o: $rc"
lp help embed
grep -q "NumPy format 1.0" "$OUT" && ok "lpipe help embed" || fail "help embed: $(head -1 "$OUT")"

lp embed "$tiny" "$doc" --size 40 --overlap 5
verdict=$(check_npy "$doc.npy" "$doc.json" "$doc" 32)
case $rc/$verdict in
0/ok*) ok "tiny model: FILE.npy and FILE.json (${verdict#ok } rows)" ;;
*) fail "tiny model: status $rc, $verdict"; sed 's/^/  stderr: /' "$ERR" | head -3 ;;
esac
rows=${verdict#ok }

lp embed "$tiny" "$doc" -o "$WORK/v.npy" --size 20 --overlap 0 --unit words
verdict=$(check_npy "$WORK/v.npy" "$WORK/v.json" "$doc" 32)
case $rc/$verdict in
0/ok*) [ "${verdict#ok }" -gt "$rows" ] && ok "-o, smaller chunks give more rows" ||
	fail "--size 20: $verdict, not more than $rows" ;;
*) fail "-o: status $rc, $verdict" ;;
esac

# A failed run leaves the previous output as it was.
cp "$WORK/v.npy" "$WORK/before.npy"
lp embed "$WORK/no-such-model" "$doc" -o "$WORK/v.npy"
if [ "$rc" -eq 3 ] && cmp -s "$WORK/v.npy" "$WORK/before.npy" &&
   [ -z "$(ls "$WORK" | grep '\.tmp\.')" ]; then
	ok "missing model: status 3, previous output kept, no temporary file"
else
	fail "missing model: status $rc"
fi

minilm=${LPIPE_EMBED_MODEL:-${LPIPE_MODEL_DIR:-${HOME:-.}/.cache/lpipe/models}/all-MiniLM-L6-v2}
if [ -r "$minilm/model.safetensors" ]; then
	lp embed "$minilm" "$doc" -o "$WORK/m.npy" --size 60 --overlap 10
	verdict=$(check_npy "$WORK/m.npy" "$WORK/m.json" "$doc" 384)
	case $rc/$verdict in
	0/ok*) ok "MiniLM: 384 dims, unit rows" ;;
	*) fail "MiniLM: status $rc, $verdict" ;;
	esac
else
	echo "# no MiniLM at $minilm: its check is skipped"
fi

finish
