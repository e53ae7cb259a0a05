#!/bin/sh
# retrieve-device.sh - retrieval.device: the hashed scorer runs where it is
# told; `cuda` without a usable GPU stops with exit code 3 naming why, and
# `auto` falls back to the CPU with the very ranking `cpu` gives.
. "$top_srcdir/tests/cli/lib.sh"

doc=$top_srcdir/data/bash-reference.en.txt
pipe=$PIPELINES/retrieve.yaml
q="How often does bash check for mail?"

lp run "$pipe" --set retrieval.scorer=hash --set retrieval.device=cpu -q "$q" "$doc"
expect "hash scorer on the CPU" 0
cp "$OUT" "$WORK/cpu.out"

lp check "$pipe" --set retrieval.device=tpu
expect "a bad retrieval.device is refused" 2 "device"

lp device
if grep -q '^cuda:[0-9]' "$OUT"; then
	lp run "$pipe" --set retrieval.scorer=hash --set retrieval.device=cuda -q "$q" "$doc"
	expect "hash scorer on the GPU" 0
	if cmp -s "$OUT" "$WORK/cpu.out"; then ok "the GPU ranks as the CPU does"
	else fail "the GPU ranks otherwise: $(diff "$WORK/cpu.out" "$OUT" | head -5)"; fi
else
	lp run "$pipe" --set retrieval.scorer=hash --set retrieval.device=cuda -q "$q" "$doc"
	expect "retrieval.device: cuda without a GPU exits 3" 3 "device cuda is unusable: "
	lp run "$pipe" --set retrieval.scorer=hash --set retrieval.device=auto -q "$q" "$doc"
	expect "retrieval.device: auto without a GPU" 0
	if cmp -s "$OUT" "$WORK/cpu.out"; then ok "auto ranks as the CPU does"
	else fail "auto ranks otherwise: $(diff "$WORK/cpu.out" "$OUT" | head -5)"; fi
fi
# model.device is the default: cuda there applies to retrieval too
lp run "$pipe" --set retrieval.scorer=hash --set model.device=cpu -q "$q" "$doc"
expect "model.device: cpu" 0
if cmp -s "$OUT" "$WORK/cpu.out"; then ok "model.device's cpu reaches retrieval"
else fail "model.device's cpu: $(diff "$WORK/cpu.out" "$OUT" | head -5)"; fi

finish
