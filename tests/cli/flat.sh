#!/bin/sh
# flat.sh - memory does not grow with the document: summarize.yaml (split,
# model summary tree, verify with auto keyphrases) on the tiny chat model
# over a generated document of 5 MB and of 10 MB. The mapped document
# reserves its resident windows, not its size, so the tracked document peak
# is the same for both (but for the chunk table): from about 5 MB of this
# text the windows are full (a smaller document reserves less, as much as
# it is, so it cannot show flatness); the text the passes read
# is released behind them, so the peak RSS may not grow by anything like
# the 5 MB added (before: 8 MB and more); and the
# tracked total may grow only by the per-chunk bookkeeping and summaries
# (well under 1 MiB for the few chunks added here).
. "$top_srcdir/tests/cli/lib.sh"

SRC=$top_srcdir/data/debian-reference.en.txt
[ -r "$SRC" ] || { echo "skip: $SRC is missing"; exit 77; }
MODEL=$WORK/tiny.gguf
"$top_builddir/tests/tools/gen_chat_model" "$MODEL" || { fail "write the tiny model"; finish; }

# BYTES of the sample text, repeated with every number shifted by the
# repetition's index, so that later text is not a copy of the start.
make_doc() {
	bytes=$1 out=$2 r=0
	: >"$out"
	while [ "$(wc -c <"$out")" -lt "$bytes" ]; do
		awk -v r=$r '{
			s = $0; o = ""
			while (match(s, /[0-9]+/)) {
				o = o substr(s, 1, RSTART - 1) (substr(s, RSTART, RLENGTH) + r)
				s = substr(s, RSTART + RLENGTH)
			}
			print o s
		}' "$SRC" >>"$out"
		r=$((r + 1))
	done
	head -c "$bytes" "$out" >"$out.cut" && mv "$out.cut" "$out"
	echo "The end." >>"$out" # never end inside a character
}

# Large chunks keep the model calls few; the document is still read by
# every pass (load, split, summaries of extracts, keyphrases).
measure() {
	lp run "$PIPELINES/summarize.yaml" "$1" -v --set model.path="$MODEL" \
		--set stages.split.size=40000 -o "$WORK/out.txt"
	[ "$rc" -eq 1 ] && rc=0 # junk summaries may fail verification
	line=$(grep 'memory: tracked peak' "$ERR")
	tracked=$(echo "$line" | sed -n 's/.*tracked peak [^(]*(\([0-9]*\) bytes).*/\1/p')
	doc=$(echo "$line" | sed -n 's/.*doc peak [^(]*(\([0-9]*\) bytes).*/\1/p')
	rss=$(echo "$line" | sed -n 's/.*peak rss [^(]*(\([0-9]*\) bytes).*/\1/p')
}

make_doc 5000000 "$WORK/a.txt"
make_doc 10000000 "$WORK/b.txt"
measure "$WORK/a.txt"
expect "5 MB document" 0
t1=$tracked d1=$doc r1=$rss
measure "$WORK/b.txt"
expect "10 MB document" 0
t2=$tracked d2=$doc r2=$rss
echo "# tracked $t1 -> $t2 bytes, doc peak $d1 -> $d2, peak rss $r1 -> $r2 bytes"

if [ -z "$t1" ] || [ -z "$t2" ] || [ -z "$r1" ] || [ -z "$r2" ]; then
	fail "-v printed no memory line"
else
	# the window is the same; only the chunk table grows (16 bytes a chunk)
	[ $((d2 - d1)) -lt 131072 ] && ok "the tracked document peak stays ($d1 -> $d2 bytes)" ||
		fail "the tracked document peak grew with the document: $d1 -> $d2 bytes"
	[ $((t2 - t1)) -lt 1048576 ] && ok "the tracked peak grew by less than 1 MiB" ||
		fail "the tracked peak grew by $((t2 - t1)) bytes for 5 MB more text"
	# what is resident of the mapping also depends on where the page
	# cache's large folios fall (up to 2 MiB mapped per fault). Under
	# AddressSanitizer the RSS holds its shadow memory and quarantine,
	# which grow with everything the run allocates: no bound to check.
	if ldd "$LPIPE" 2>/dev/null | grep -q libasan; then
		echo "# peak RSS not checked: built with AddressSanitizer"
	elif [ $((r2 - r1)) -lt 3670016 ]; then
		ok "the peak RSS grew by less than 3.5 MiB"
	else
		fail "the peak RSS grew by $((r2 - r1)) bytes for 5 MB more text"
	fi
fi

finish
