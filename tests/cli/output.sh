#!/bin/sh
# output.sh - output formats, -o atomicity, JSON keys and chunk offsets.
. "$top_srcdir/tests/cli/lib.sh"

DOC=$DATA/small.txt
SPLIT=$(pipeline split <<'Y'
version: 1
name: split-only
stages:
  - split: {size: 64, overlap: 8}
Y
)

# -o: a good run replaces the file; a failing run leaves it untouched and
# leaves no temporary file behind.
echo "previous output" >"$WORK/out.txt"
lp run "$SPLIT" "$WORK/missing.txt" -o "$WORK/out.txt"
expect "failing run with -o" 3
[ "$(cat "$WORK/out.txt")" = "previous output" ] && ok "-o untouched by a failed run" ||
	fail "-o changed by a failed run"
lp run "$SPLIT" "$DOC" -o "$WORK/out.txt" --mem-budget 1KiB
[ "$(cat "$WORK/out.txt")" = "previous output" ] && ok "-o untouched by a run over budget" ||
	fail "-o changed by a run over budget"
lp run "$SPLIT" "$DOC" -o "$WORK/out.txt"
expect "run with -o" 0
[ -s "$OUT" ] && fail "-o still wrote to stdout" || ok "-o: nothing on stdout"
grep -q "previous output" "$WORK/out.txt" && fail "-o did not replace the file" ||
	ok "-o replaced the file"
ls "$WORK" | grep -q '\.tmp\.' && fail "temporary file left behind" || ok "no temporary file left"
lp run "$SPLIT" "$DOC" -o "$WORK/no-such-dir/out.txt"
expect "-o into a missing directory" 3 "no-such-dir/out.txt"

# Options after the arguments, and --format overriding output.format.
lp run "$SPLIT" "$DOC" --format markdown
expect "--format markdown" 0
expect_out "markdown sections" "# split-only" "## Result" "## Chunks"
lp run "$SPLIT" "$DOC" --set output.format=json
expect "--set output.format=json" 0
python3 -m json.tool "$OUT" >/dev/null && ok "--set output.format=json is JSON" ||
	fail "--set output.format=json is not JSON"

# JSON: valid, exactly the documented keys, chunk offsets that cut the
# document into the slices the chunks claim.
lp run "$SPLIT" "$DOC" --format json -o "$WORK/r.json"
expect "--format json" 0
if python3 -m json.tool "$WORK/r.json" >/dev/null; then ok "json.tool accepts the report"; else
	fail "json.tool rejects the report"; fi
if python3 - "$WORK/r.json" "$DOC" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
text = open(sys.argv[2], "rb").read()
keys = ["lpipe_version", "pipeline", "document", "stages", "chunks", "selected",
        "summary_levels", "summary", "answer", "cited", "quote", "answer_check", "abstained", "items", "result",
        "verification", "memory", "status", "exit_code"]
assert list(r) == keys, list(r)
assert set(r["pipeline"]) == {"path", "name", "config"}
assert r["pipeline"]["name"] == "split-only"
assert r["pipeline"]["config"]["stages"][0]["split"]["size"] == "64"
assert r["document"]["bytes"] == len(text), (r["document"], len(text))
assert r["document"]["replaced_invalid"] == 0
assert r["document"]["format"] == "text" and r["document"]["blocks"] > 0
assert [s["kind"] for s in r["stages"]] == ["split"]
assert all(set(s) == {"kind", "stage", "pass", "seconds", "peak_tracked_bytes", "note"}
           for s in r["stages"])
assert [(s["stage"], s["pass"]) for s in r["stages"]] == [(0, 1)]
ch = r["chunks"]
assert len(ch) > 1, len(ch)
end = 0
for i, c in enumerate(ch):
    assert set(c) == {"id", "offset", "length", "score", "selected", "kind", "section",
                      "page", "source_offset", "source_length"}, c
    assert c["kind"] in ("heading", "paragraph", "list_item", "definition_term",
                         "definition_body", "table_row", "code", "quote") and c["page"] is None
    # plain text that needed no repair: the clean text is the file
    assert c["source_offset"] <= c["offset"] and c["source_length"] > 0
    assert c["id"] == i
    assert 0 <= c["offset"] <= end, ("gap before chunk", i, c, end)
    assert c["length"] > 0 and c["offset"] + c["length"] <= len(text)
    text[c["offset"]:c["offset"] + c["length"]].decode("utf-8")  # whole characters
    end = max(end, c["offset"] + c["length"])
assert text[end:].strip() == b"", "text after the last chunk"
assert r["selected"] == []
assert r["verification"] is None and r["summary"] is None and r["answer"] is None
assert r["cited"] == [] and r["answer_check"] is None and r["quote"] is None
assert r["status"] == "ok" and r["exit_code"] == 0
m = r["memory"]
assert set(m) == {"peak_tracked_bytes", "peak_rss_bytes", "budget_bytes", "by_tag"}
assert set(m["by_tag"]) == {"weights", "kv", "scratch", "logits", "index", "doc", "other"}
assert m["peak_tracked_bytes"] > 0 and m["budget_bytes"] == 0
PY
then ok "json keys and chunk offsets"; else fail "json keys and chunk offsets"; fi

lp run "$SPLIT" "$DOC" --format json --mem-budget 64MiB
python3 -c 'import json,sys; assert json.load(sys.stdin)["memory"]["budget_bytes"] == 64 << 20' \
	<"$OUT" && ok "json budget_bytes follows --mem-budget" || fail "json budget_bytes"

# -v reports each stage on stderr; --quiet says nothing on success.
lp run -v "$SPLIT" "$DOC"
expect "-v names the stage" 0 "split"
lp run --quiet "$SPLIT" "$DOC"
[ -s "$ERR" ] && fail "--quiet printed on stderr" || ok "--quiet is quiet"

finish
