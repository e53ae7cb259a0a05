#!/bin/sh
# bench/batch/run.sh - lpipe batch against a shell loop of lpipe run, in
# the same run: documents per minute with -j 1 and -j 2, peak RSS, and the
# time per document that loading the model (and the rest) once saves.
#
#   sh bench/batch/run.sh [BUILD_DIR]       (default: build)
#
# N_EXTRACT (default 200) documents of about 20 KB go through
# pipelines/extractive-summary.yaml, N_LOAD (default 50) through a pipeline
# that opens the model and only splits by its tokens (what loading the
# model costs a process, without generation to hide it), N_SUMMARIZE
# (default 4) through pipelines/summarize.yaml (each takes seconds of
# generation on a small CPU: raise it on a machine of your own). Prints one
# table row per run.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
N_EXTRACT=${N_EXTRACT:-200}
N_SUMMARIZE=${N_SUMMARIZE:-4}
N_LOAD=${N_LOAD:-50}
work=$(mktemp -d "${TMPDIR:-/tmp}/lpipe-bench-batch.XXXXXX")
trap 'rm -rf "$work"' EXIT
# a copy: a rebuild while the benchmark runs must not change the program
cp "$build/lpipe" "$work/lpipe"
lpipe=$work/lpipe

# n documents of about 20 KB, cut at different places of the two manuals
# (iconv drops the pieces of a character cut in two at either end).
make_corpus() {
	dir=$1
	n=$2
	mkdir -p "$dir"
	i=1
	while [ "$i" -le "$n" ]; do
		src=$top/data/debian-reference.en.txt
		[ $((i % 2)) = 0 ] && src=$top/data/bash-reference.en.txt
		size=$(wc -c <"$src")
		off=$(( (i * 104729) % (size - 21000) + 1 ))
		tail -c +"$off" "$src" | head -c $((19000 + (i * 37) % 2000)) |
			iconv -c -f UTF-8 -t UTF-8 >"$dir/doc$i.txt" 2>/dev/null || true
		i=$((i + 1))
	done
}

now() { date +%s.%N; }

# row NAME N SECONDS RSS_KIB
row() {
	awk -v name="$1" -v n="$2" -v s="$3" -v rss="$4" 'BEGIN {
		printf "| %-34s | %4d | %8.1f | %8.1f | %8.3f | %7.1f |\n",
			name, n, s, 60 * n / s, s / n, rss / 1024 }'
}

# time_rss OUTFILE CMD...: run CMD, write "seconds rss_kib" to OUTFILE.
time_rss() {
	out=$1
	shift
	t0=$(now)
	/usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>"$work/err" || true
	t1=$(now)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') $(tail -1 "$work/rss")" >"$out"
}

bench() {
	label=$1
	pipe=$2
	n=$3
	corpus=$work/corpus-$label
	[ "$n" -gt 0 ] || return 0
	make_corpus "$corpus" "$n"
	for j in 1 2; do
		time_rss "$work/t" "$lpipe" batch "$pipe" "$corpus" -o "$work/out-$label-j$j" -j "$j"
		read -r s rss <"$work/t"
		row "$label: batch -j $j" "$n" "$s" "$rss"
		tail -1 "$work/err" | sed 's/^/  /' >&2
	done
	# the shell loop a user writes today, one process per document
	t0=$(now)
	max=0
	for f in "$corpus"/*.txt; do
		/usr/bin/time -f %M -o "$work/rss" "$lpipe" run "$pipe" "$f" \
			-o "$work/loop-$(basename "$f")" 2>/dev/null || true
		r=$(tail -1 "$work/rss")
		[ "$r" -gt "$max" ] && max=$r
	done
	t1=$(now)
	row "$label: shell loop of lpipe run" "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$max"
	same=0
	for f in "$corpus"/*.txt; do
		b=$(basename "$f")
		cmp -s "$work/loop-$b" "$work/out-$label-j1/$b.txt" && same=$((same + 1))
	done
	echo "  $label: $same of $n batch outputs byte-identical to lpipe run's" >&2
}

echo "| run | docs | wall s | docs/min | s/doc | peak RSS MiB |"
echo "|---|---:|---:|---:|---:|---:|"
bench extractive "$top/pipelines/extractive-summary.yaml" "$N_EXTRACT"
cat >"$work/load.yaml" <<'Y'
version: 1
name: model-load
model:
  context: 2048
stages:
  - split: {unit: tokens, size: 384, overlap: 0, boundary: sentence}
Y
bench model-load "$work/load.yaml" "$N_LOAD"
bench summarize "$top/pipelines/summarize.yaml" "$N_SUMMARIZE"
