#!/bin/sh
# run.sh - the one script that proves the CUDA backend on a GPU machine:
# build with CUDA, run the GPU tests, and print one table.
#
#   here:            sh tests/gpu/prepare.sh        (fills .gpu/, ~16 MB)
#   on the GPU box:  sh tests/gpu/run.sh            (carry .gpu along)
#
# The GPU machine has nvcc, cuBLAS and a C compiler but no package registry:
# the Debian packages in .gpu/debs are unpacked with 'dpkg -x' into
# $WORK/deps (never into /) and CPPFLAGS, LDFLAGS, PKG_CONFIG_PATH and
# LD_LIBRARY_PATH point there; .gpu/autotools stands in for autoreconf.
# It builds in $WORK/build (default /tmp/lpipe-gpu; WORK=... to change) with
# configure --with-cuda and make -j$(nproc), then:
#   1. check_decode  - the GPU decoders against the CPU's, on the host;
#   2. check_cuda_ops - every backend op, CUDA against CPU (tests/);
#   3. check_kernels - encoder kernels, top-k, copy bandwidth, top-k latency;
#   4. bench_gpu     - a random model with SmolLM2-135M's shapes, Q4_1:
#                      prefill (512) and decode tok/s on GPU and CPU;
#   5. bench_embed   - MiniLM (.gpu/minilm, F16 weights widened to F32):
#                      chunks of 100 words embedded per second, 10,000 on
#                      the GPU (products on f16 weights, the default, and
#                      again on f32: LPIPE_ENCODER_WEIGHTS=f32),
#                      and EMBED_CPU_CHUNKS (default 2000) on the
#                      CPU's every core; query latency, 1 and 1000 queries,
#                      top-10 over 1,000,000 random 384-d vectors on the GPU;
#   6. bench_st.py   - sentence-transformers on the same GPU, same chunks,
#                      float32 weights (the row lpipe is measured against)
#                      and float16.
# Each of 5 and 6 runs under its own time limit and failure of one leaves
# the others' rows (n/a where it failed).
# and prints the table: speeds, peak device memory, the decode floor (model
# bytes / measured bandwidth, plus kernels per step x measured graph-node
# cost) beside the measured decode time, and each op's max error.
# Logs are kept in $WORK/logs (and copied to $OUT when that is set).
#
# Exit status: 0 everything ran and passed; 1 the build or a check failed;
# 3 built and host checks passed but there is no usable GPU (GPU rows
# skipped, as on a machine without one).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${WORK:-/tmp/lpipe-gpu}
LOGS=$WORK/logs
DEPS=$WORK/deps
START=$(date +%s)
JOBS=$(nproc 2>/dev/null || echo 4)
mkdir -p "$LOGS"

say() { printf 'run.sh: %s\n' "$*" >&2; }
elapsed() { echo $(($(date +%s) - START)); }
keep_logs() { [ -n "${OUT:-}" ] && [ -d "$OUT" ] && cp "$LOGS"/*.log "$OUT"/ 2>/dev/null; true; }
die() { say "error: $*"; keep_logs; exit 1; }

# ---- dependencies ------------------------------------------------------------
if [ -d "$ROOT/.gpu/debs" ] && ls "$ROOT"/.gpu/debs/*.deb >/dev/null 2>&1; then
	rm -rf "$DEPS" && mkdir -p "$DEPS"
	for f in "$ROOT"/.gpu/debs/*.deb; do
		dpkg -x "$f" "$DEPS" || die "dpkg -x $f failed"
	done
	# the .pc files say /usr: make them say where the packages are
	find "$DEPS" -name '*.pc' -exec sed -i "s|=/usr|=$DEPS/usr|g" {} +
	LIB=$DEPS/usr/lib/x86_64-linux-gnu
	export PKG_CONFIG_PATH="$LIB/pkgconfig:$LIB/openblas-pthread/pkgconfig:$DEPS/usr/share/pkgconfig"
	export CPPFLAGS="-I$DEPS/usr/include -I$DEPS/usr/include/x86_64-linux-gnu/openblas-pthread ${CPPFLAGS:-}"
	export LDFLAGS="-L$LIB -L$LIB/openblas-pthread ${LDFLAGS:-}"
	export LD_LIBRARY_PATH="$LIB:$LIB/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export PATH="$DEPS/usr/bin:$PATH"
	command -v pkg-config >/dev/null 2>&1 || die "no pkg-config (pkgconf missing from .gpu/debs)"
	say "unpacked $(ls "$ROOT"/.gpu/debs/*.deb | wc -l) packages into $DEPS"
else
	say "no .gpu/debs: using the system's libraries (run tests/gpu/prepare.sh to carry them)"
fi
command -v nvcc >/dev/null 2>&1 || die "nvcc is not on PATH"

# ---- build -------------------------------------------------------------------
if [ ! -x "$ROOT/configure" ]; then
	if [ -d "$ROOT/.gpu/autotools" ]; then
		cp -R "$ROOT"/.gpu/autotools/* "$ROOT"/
	else
		(cd "$ROOT" && autoreconf -fi) >"$LOGS/autoreconf.log" 2>&1 ||
			die "autoreconf failed (see $LOGS/autoreconf.log)"
	fi
fi
mkdir -p "$WORK/build"
cd "$WORK/build" || die "cannot enter $WORK/build"
if [ ! -f Makefile ]; then
	"$ROOT/configure" --with-cuda >"$LOGS/configure.log" 2>&1 ||
		die "configure failed (see $LOGS/configure.log)"
fi
grep -q 'CUDA backend: yes' "$LOGS/configure.log" 2>/dev/null ||
	say "warning: configure did not report the CUDA backend"
make -j"$JOBS" >"$LOGS/build.log" 2>&1 || { tail -30 "$LOGS/build.log" >&2; die "build failed"; }
make -j"$JOBS" check TESTS= >>"$LOGS/build.log" 2>&1 ||
	{ tail -30 "$LOGS/build.log" >&2; die "building the tests failed"; }
say "built in $(elapsed) s"

# Tools of this script, compiled beside the build.
NVCC_FLAGS="-std=c++17 -O2 -arch=sm_90 -I$ROOT -I$ROOT/src -I$WORK/build"
nvcc $NVCC_FLAGS "$ROOT/tests/gpu/check_decode.cu" "$ROOT/src/quant/quant.c" \
	-o check_decode >"$LOGS/tools.log" 2>&1 || die "check_decode did not build (see $LOGS/tools.log)"
nvcc $NVCC_FLAGS "$ROOT/tests/gpu/check_kernels.cu" "$ROOT"/kernels/bert.cu \
	"$ROOT"/kernels/topk.cu "$ROOT"/kernels/membw.cu "$ROOT/src/retrieve/topk.c" -lcublas \
	-o check_kernels >>"$LOGS/tools.log" 2>&1 || die "check_kernels did not build (see $LOGS/tools.log)"

# ---- checks ------------------------------------------------------------------
fail=0
./check_decode >"$LOGS/check_decode.log" 2>&1 || { fail=1; say "check_decode FAILED"; }
say "$(tail -1 "$LOGS/check_decode.log")"

gpu=1
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >"$LOGS/gpu.log" 2>&1; then
	gpu=0
fi
./check_kernels >"$LOGS/check_kernels.log" 2>&1
rc=$?
[ $rc -eq 77 ] && gpu=0
[ $rc -ne 0 ] && [ $rc -ne 77 ] && { fail=1; say "check_kernels FAILED (rc $rc)"; }

# the module as built, for the programs run directly; the MiniLM carried
# in .gpu/minilm for check_cuda_ops' end-to-end encoder test and the bench
export LPIPE_MODULE_DIR="$WORK/build/.libs"
MINILM=${MINILM:-$ROOT/.gpu/minilm}
if [ -f "$MINILM/model.safetensors.gz" ] && [ ! -f "$MINILM/model.safetensors" ]; then
	# carried gzipped (prepare.sh): unpack beside the build
	rm -rf "$WORK/minilm" && mkdir -p "$WORK/minilm" &&
		cp "$MINILM"/*.json "$MINILM"/vocab.txt "$WORK/minilm"/ &&
		gzip -dc "$MINILM/model.safetensors.gz" >"$WORK/minilm/model.safetensors" ||
		say "cannot unpack $MINILM/model.safetensors.gz"
	MINILM=$WORK/minilm
fi
[ -f "$MINILM/model.safetensors" ] && export LPIPE_EMBED_MODEL="$MINILM"
if [ $gpu -eq 1 ]; then
	make check TESTS=tests/check_cuda_ops >"$LOGS/check_cuda_ops.make.log" 2>&1 ||
		{ fail=1; say "check_cuda_ops FAILED"; }
	cp tests/check_cuda_ops.log "$LOGS/check_cuda_ops.log" 2>/dev/null
	if ! grep -q '^# PASS: *1' "$LOGS/check_cuda_ops.make.log"; then
		fail=1
		# again, each op waited for and no graphs: the log names the op
		LPIPE_CUDA_SYNC=1 LPIPE_CUDA_GRAPH=0 ./tests/check_cuda_ops \
			>"$LOGS/check_cuda_ops.sync.log" 2>&1
	fi
	./tests/gpu/bench_gpu "$WORK/smollm2-shaped-q4_1.gguf" --write \
		>"$LOGS/bench.log" 2>&1 || { fail=1; say "bench_gpu FAILED"; }
	: >"$LOGS/embed.log"
	TEXT="$ROOT/data/debian-reference.en.txt"
	if [ -f "$MINILM/model.safetensors" ]; then
		timeout 120 ./tests/gpu/bench_embed embed "$MINILM" "$TEXT" cuda 10000 \
			>>"$LOGS/embed.log" 2>&1 || { fail=1; say "bench_embed (cuda) FAILED"; }
		LPIPE_ENCODER_WEIGHTS=f32 timeout 120 ./tests/gpu/bench_embed embed "$MINILM" "$TEXT" cuda 10000 \
			2>&1 | sed 's/^embed cuda /embed cuda-f32 /' >>"$LOGS/embed.log"
		timeout 90 ./tests/gpu/bench_embed embed "$MINILM" "$TEXT" cpu "${EMBED_CPU_CHUNKS:-2000}" \
			>>"$LOGS/embed.log" 2>&1 || { fail=1; say "bench_embed (cpu) FAILED"; }
		PYTHONUNBUFFERED=1 timeout 180 python3 "$ROOT/tests/gpu/bench_st.py" "$MINILM" "$TEXT" 10000 \
			>"$LOGS/st.log" 2>&1 || say "sentence-transformers bench did not run (see $LOGS/st.log)"
		cat "$LOGS/st.log" >>"$LOGS/embed.log" 2>/dev/null
	else
		say "no MiniLM at $MINILM (tests/gpu/prepare.sh): encoder rows skipped"
	fi
	timeout 90 ./tests/gpu/bench_embed query cuda 1000000 384 10 \
		>>"$LOGS/embed.log" 2>&1 || { fail=1; say "bench_embed (query) FAILED"; }
else
	say "no GPU here: the GPU rows are skipped"
fi

# ---- the table -----------------------------------------------------------------
val() { awk -v k="$1" '$1 == k { print $2; exit }' "$2" 2>/dev/null; }
bench() { awk -v d="$1" -v k="$2" '$1 == "bench" && $2 == d { for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }' "$LOGS/bench.log" 2>/dev/null; }
na() { [ -n "$1" ] && echo "$1" || echo "n/a"; }

{
	echo
	echo "== lpipe CUDA backend: $(head -1 "$LOGS/gpu.log" 2>/dev/null || echo 'no GPU')"
	printf '%-44s %14s %14s\n' "" "GPU" "CPU"
	printf '%-44s %14s %14s\n' "prefill 512 tokens (tok/s)" "$(na "$(bench cuda prefill_tok_s)")" "$(na "$(bench cpu prefill_tok_s)")"
	printf '%-44s %14s %14s\n' "decode (tok/s)" "$(na "$(bench cuda decode_tok_s)")" "$(na "$(bench cpu decode_tok_s)")"
	printf '%-44s %14s %14s\n' "decode step (ms)" "$(na "$(bench cuda decode_ms)")" "$(na "$(bench cpu decode_ms)")"
	mb=$(val model_bytes "$LOGS/bench.log")
	bw=$(val bandwidth_gbs "$LOGS/check_kernels.log")
	node=$(val graph_node_us "$LOGS/check_kernels.log")
	peak=$(val peak_gpu_bytes "$LOGS/bench.log")
	# kernels of one decode step: 17 per layer (2 norms, 7 mat-vecs, 2 RoPE,
	# 1 cache store, 2 attention, 1 SwiGLU, 2 adds), output norm and product
	kern=$((17 * 30 + 2))
	floor_bw=$( [ -n "$mb" ] && [ -n "$bw" ] && awk -v b="$mb" -v g="$bw" 'BEGIN { printf "%.4f", b / (g * 1e9) * 1e3 }')
	floor_ln=$( [ -n "$node" ] && awk -v n="$node" -v k="$kern" 'BEGIN { printf "%.4f", n * k / 1e3 }')
	printf '%-44s %14s\n' "model bytes" "$(na "$mb")"
	printf '%-44s %14s\n' "device copy bandwidth (GB/s, read+write)" "$(na "$bw")"
	printf '%-44s %14s\n' "decode floor: bytes / bandwidth (ms)" "$(na "$floor_bw")"
	printf '%-44s %14s\n' "decode floor: $kern graph nodes (ms)" "$(na "$floor_ln")"
	printf '%-44s %14s\n' "decode step measured (ms)" "$(na "$(bench cuda decode_ms)")"
	printf '%-44s %14s\n' "peak device memory (MiB)" "$( [ -n "$peak" ] && echo $((peak / 1048576)) || echo n/a)"
	printf '%-44s %14s\n' "prefill logits, GPU vs CPU (max rel err)" "$(na "$(val prefill_logits_maxerr "$LOGS/bench.log")")"
	printf '%-44s %14s\n' "greedy tokens identical to the CPU" "$(na "$(awk '$1 == "greedy_match" { print $2 "/" $3 }' "$LOGS/bench.log" 2>/dev/null)")"
	printf '%-44s %14s\n' "top-k 1 query, 1M x 384 (ms)" "$(na "$(awk '$1 == "topk_ms" && $2 == 1 { print $3 }' "$LOGS/check_kernels.log")")"
	printf '%-44s %14s\n' "top-k 1000 queries, 1M x 384 (ms)" "$(na "$(awk '$1 == "topk_ms" && $2 == 1000 { print $3 }' "$LOGS/check_kernels.log")")"
	emb() { awk -v d="$1" '$1 == "embed" && $2 == d { print $8; exit }' "$LOGS/embed.log" 2>/dev/null; }
	qms() { awk -v n="$1" '$1 == "query" && $4 == n { print $10; exit }' "$LOGS/embed.log" 2>/dev/null; }
	stc=$(awk '$1 == "st" { print $8; exit }' "$LOGS/embed.log" 2>/dev/null)
	eg=$(emb cuda); ec=$(emb cpu)
	printf '%-44s %14s %14s\n' "MiniLM chunks/s (100 words; lpipe)" "$(na "$eg")" "$(na "$ec")"
	printf '%-44s %14s\n' "MiniLM chunks/s lpipe GPU, f32 weights" "$(na "$(emb cuda-f32)")"
	printf '%-44s %14s\n' "MiniLM chunks/s sentence-transformers GPU" "$(na "$stc")"
	printf '%-44s %14s\n' "  the same, float16 weights" "$(na "$(awk '$1 == "st-f16" { print $8; exit }' "$LOGS/embed.log" 2>/dev/null)")"
	printf '%-44s %14s\n' "  lpipe GPU / sentence-transformers" "$(na "$( [ -n "$eg" ] && [ -n "$stc" ] && awk -v a="$eg" -v b="$stc" 'BEGIN { printf "%.2fx", a / b }')")"
	printf '%-44s %14s\n' "  lpipe GPU / lpipe CPU" "$(na "$( [ -n "$eg" ] && [ -n "$ec" ] && awk -v a="$eg" -v b="$ec" 'BEGIN { printf "%.1fx", a / b }')")"
	printf '%-44s %14s\n' "query 1, top-10 of 1M x 384, lpipe (ms)" "$(na "$(qms 1)")"
	printf '%-44s %14s\n' "query 1000, top-10 of 1M x 384, lpipe (ms)" "$(na "$(qms 1000)")"
	echo
	echo "max error per op (relative to the output's largest magnitude):"
	cat "$LOGS/check_cuda_ops.log" "$LOGS/check_kernels.log" 2>/dev/null |
		awk '$1 == "maxerr" { if (!($2 in e) || $4 + 0 > e[$2]) { e[$2] = $4 + 0; t[$2] = $5 }
			if ($4 + 0 > $5 + 0) bad[$2]++ }
		     END { for (o in e) printf "  %-16s %10.3g  (tolerance %s)%s\n", o, e[o], t[o],
			     bad[o] ? "  FAIL" : "" }' | sort
	echo "  topk vs sort: $(cat "$LOGS/check_kernels.log" "$LOGS/check_cuda_ops.log" 2>/dev/null | grep -c "topk_check .* ok") cases identical, $(grep -c 'MISMATCH' "$LOGS/check_kernels.log" 2>/dev/null) mismatches"
	echo "  decoders (host): $(tail -1 "$LOGS/check_decode.log")"
	echo
	echo "elapsed $(elapsed) s; logs in $LOGS"
}
keep_logs
if [ $fail -ne 0 ]; then
	say "FAILED (see the logs)"
	exit 1
fi
[ $gpu -eq 1 ] || exit 3
exit 0
