#!/bin/sh
# layering.sh - the include graph of src/ follows src/LAYERS, the
# architecture (tests/cli/layers.awk checks every #include of every folder
# against it); and `lpipe run` and `lpipe batch` are clients of the public
# library: their sources include only lpipe.h, the CLI's own headers and
# the utilities the CLI shares with the library (atomic files, hashes,
# messages, the progress line, status codes), never the pipeline's
# internals (config, engine, model, stages, report, the runner). The
# library's side is checked by the lpipe(3) example and check_api, which
# see lpipe.h only.
. "$top_srcdir/tests/cli/lib.sh"

# every folder: its includes against src/LAYERS
out=$(cd "$top_srcdir" && grep -rn '^#[ 	]*include[ 	]*"' src --include='*.c' --include='*.h' |
	awk -f tests/cli/layers.awk src/LAYERS -)
rc=$?
echo "$out" | grep -v '^FAIL'
if [ $rc -ne 0 ] || echo "$out" | grep -q '^FAIL'; then
	echo "$out" | grep '^FAIL'
	fail "the include graph breaks src/LAYERS (above)"
else
	ok "every include of src/ follows src/LAYERS"
fi

# the CLI's run and batch: lpipe.h and the CLI's own headers only
allowed='^(api/lpipe\.h|cli/[a-z_]+\.h|core/(fileio|log|progress|sha256|status)\.h)$'
for f in cmd_run.c cmd_batch.c batch_inputs.c batch_manifest.c batch_merge.c \
	batch_outdir.c batch_sbatch.c batch.h shard.c shard.h commands.c commands.h \
	options.h main.c; do
	src=$top_srcdir/src/cli/$f
	if [ ! -f "$src" ]; then
		fail "src/cli/$f: missing"
		continue
	fi
	bad=$(sed -n 's/^#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$src" | grep -Ev "$allowed")
	if [ -n "$bad" ]; then
		fail "src/cli/$f reaches past lpipe.h: $(echo $bad)"
	else
		ok "src/cli/$f includes only lpipe.h, cli/ and core utilities"
	fi
done
# the commands reach lpipe.h's functions, not a copy of the runner
grep -q 'lpipe_run_file' "$top_srcdir/src/cli/cmd_run.c" &&
	grep -q 'lpipe_run_file' "$top_srcdir/src/cli/cmd_batch.c" &&
	ok "run and batch run documents with lpipe_run_file" ||
	fail "run or batch does not call lpipe_run_file"
finish
