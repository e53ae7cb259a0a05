#!/bin/sh
# extract.sh - the extract stage: every item of every chunk, once each,
# counted, with the chunk and section of its first occurrence; overlapping
# chunks counted once; a bad kind refused at its line.
. "$top_srcdir/tests/cli/lib.sh"

DOC=$WORK/man.txt
cat >"$DOC" <<'TXT'
OPTIONS
       --delete
              delete extraneous files, 3 times at most.

       --timeout=SECONDS
              set I/O timeout in seconds; 0 means no timeout. See --delete.

       -v     increase verbosity, up to 3 levels, with /etc/rsyncd.conf read.
TXT
P=$(pipeline ex <<'YAML'
version: 1
stages:
  - split: {unit: tokens, size: 12, overlap: 6, boundary: sentence}
  - extract: {kinds: [number, option]}
YAML
)
lp run "$P" "$DOC" --format json
expect "extract runs" 0
if python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
items = {(i["kind"], i["text"]): i for i in r["items"]}
want = {("option", "--delete"): 2, ("option", "--timeout"): 1, ("option", "-v"): 1,
        ("number", "3"): 2, ("number", "0"): 1}
for k, n in want.items():
    assert k in items, (k, sorted(items))
    assert items[k]["count"] == n, (k, items[k])
assert not any(k == "path" for k, _ in items), items
d = items[("option", "--delete")]
assert "--delete" in d["section"], d
assert d["chunk"] in [c["id"] for c in r["chunks"]]
text = r["result"]
assert text.startswith("Numbers: 2 (3 occurrences)\n"), text
assert "Options: 3 (4 occurrences)" in text, text
PY
then ok "every item once, counted once across overlaps, with its section"; else
	fail "items wrong: $(cat "$OUT")"; fi

lp run "$P" "$DOC" --set 'stages.extract.kinds=[path]'
expect "extract paths" 0
expect_out "a path is listed with its citation" "/etc/rsyncd.conf  x1  [chunk"

lp run "$P" "$DOC" --set stages.extract.max_items=2
expect "a cap on the items" 0
expect_out "the listing says what it left out" "not listed (max_items 2)"

lp check "$P" --set 'stages.extract.kinds=[number, cost]'
expect "an unknown kind is a config error" 2 "unknown kind 'cost'"

printf 'The book costs $25 or EUR 23.50 (25\345\205\203), and\n100 dollars\nwith shipping. Run echo $1.\n' >"$WORK/prices.txt"
lp run "$P" "$WORK/prices.txt" --set 'stages.extract.kinds=[price]' --format json
expect "extract prices" 0
if python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
got = [(i["kind"], i["text"]) for i in r["items"]]
want = [("price", "$25"), ("price", "EUR 23.50"), ("price", "25\u5143"), ("price", "100 dollars")]
assert got == want, got
PY
then ok "every price with its currency, a shell's \$1 none, a currency past a line's end kept"; else
	fail "prices wrong: $(cat "$OUT")"; fi

lp run "$PIPELINES/extract.yaml" "$DOC"
expect "the shipped extract pipeline runs" 0
expect_out "it lists the options" "Options: 3"

finish
