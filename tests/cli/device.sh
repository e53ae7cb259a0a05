#!/bin/sh
# device.sh - the backends: `lpipe version` lists them, `lpipe device` lists
# GPUs, `device: cuda` without a usable GPU stops with exit code 3 naming
# why, and gpu_layers is refused where no GPU can take it.
. "$top_srcdir/tests/cli/lib.sh"

gen=${top_builddir:-.}/tests/tools/gen_tiny_model
model=$WORK/tiny.gguf
"$gen" "$model" || { echo "cannot write the tiny model"; exit 1; }
doc=$DATA/small.txt

lp version
expect "version" 0
if grep -qE '^backends: cpu( cuda)?$' "$OUT"; then ok "version lists the backends"
else fail "version lists the backends: $(cat "$OUT")"; fi

lp device extra
expect "device takes no argument" 2 "unexpected argument 'extra'"
lp device
expect "device" 0
if grep -q '^cuda:[0-9]' "$OUT"; then
	ok "device lists a GPU: $(head -1 "$OUT")"
	has_gpu=1
elif grep -q '^no CUDA device' "$OUT"; then
	ok "device says there is none: $(cat "$OUT")"
	has_gpu=0
else
	fail "device output: $(cat "$OUT")"
	has_gpu=0
fi

if [ "$has_gpu" = 0 ]; then
	lp run "$PIPELINES/summarize.yaml" --set model.device=cuda --set "model.path=$model" "$doc"
	expect "device: cuda without a GPU exits 3" 3 "device cuda is unusable: "
	if grep -qE "was not built|no CUDA driver|no CUDA device|unable to load|CUDA is unusable" "$ERR"
	then ok "the message names the reason"
	else fail "the message names the reason: $(cat "$ERR")"; fi
	lp run "$PIPELINES/summarize.yaml" --set model.device=auto --set "model.path=$model" -v "$doc"
	if grep -q "device: cpu (auto: " "$ERR"; then ok "-v says auto chose the CPU and why"
	else fail "-v says auto chose the CPU and why: $(grep device "$ERR")"; fi
fi

if [ "$has_gpu" = 0 ]; then
	lp probe "$model" --device cuda --max 256
	expect "probe --device cuda without a GPU exits 3" 3 "device cuda is unusable: "
fi
lp probe "$model" --device tpu
expect "probe: bad device" 2 "bad device 'tpu'"

# plan --gpu-budget: the tiny model's two layers fit 8 MiB, none fits 1 KiB.
lp plan "$model" --mem-budget 64MiB --gpu-budget 8MiB --threads 2
expect "plan --gpu-budget" 0
if grep -q '^  device: cuda$' "$OUT" && grep -q '^  gpu_layers: 2$' "$OUT" &&
	grep -q '^  gpu_budget: 8MiB$' "$OUT" && grep -q '^# gpu: 2 of 2 layers' "$OUT"
then ok "plan puts every layer on an ample GPU"; else fail "plan output: $(cat "$OUT")"; fi
{ printf 'version: 1\nname: planned\n'; grep -v '^#' "$OUT"
  echo '  - summarize: {strategy: extractive, fanout: 4, max_words: 100}'; } >"$WORK/planned.yaml"
lp check "$WORK/planned.yaml"
expect "the GPU plan's YAML passes lpipe check" 0
lp plan "$model" --mem-budget 64MiB --gpu-budget 1KiB --threads 2
expect "plan with a tiny GPU" 0
if grep -q '^  gpu_layers: 0$' "$OUT"; then ok "no layer fits a 1 KiB GPU"
else fail "plan output: $(grep gpu "$OUT")"; fi
lp plan "$model" --mem-budget 64MiB --gpu-budget lots
expect "plan: bad gpu budget" 2 "bad size 'lots' for '--gpu-budget'"

lp run "$PIPELINES/summarize.yaml" --set model.device=cpu --set model.gpu_layers=4 \
	--set "model.path=$model" "$doc"
expect "gpu_layers with device: cpu is refused" 2 "'gpu_layers' needs a GPU, but 'device' is cpu"
lp check "$PIPELINES/summarize.yaml" --set memory.gpu_budget=2GiB
expect "check accepts memory.gpu_budget" 0
if grep -q "gpu_budget: 2GiB" "$OUT"; then ok "check prints gpu_budget"
else fail "check prints gpu_budget: $(grep -A3 '^memory' "$OUT")"; fi

[ "$n_fail" -eq 0 ]
