#!/usr/bin/env python3
"""Tokenization speed: lpipe vs the Python peers that are installed.

Usage: tokenizer-speed.py BUILD_DIR MODEL.gguf TEXT

Runs BUILD_DIR/tests/bench/bench_tokenizer (make tests/bench/bench_tokenizer)
and, when importable, llama-cpp-python (vocab_only) and a Hugging Face
`tokenizers` BPE rebuilt from the GGUF (as in tests/data/smollm2/
make-fixtures.py) on the same text; prints bytes, tokens and MB/s for each,
best of 5 runs, model load excluded.
"""
import importlib.util
import os
import subprocess
import sys
import time


def best_of(fn, reps=5):
    best, out = 1e30, None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    build, model, path = sys.argv[1:]
    data = open(path, "rb").read()
    text = data.decode("utf-8")
    rows = []
    out = subprocess.run([os.path.join(build, "tests/bench/bench_tokenizer"), model, path],
                         check=True, capture_output=True, text=True).stdout.split("\t")
    rows.append(("lpipe", int(out[2].split()[0]), float(out[3].split()[0])))
    try:
        import llama_cpp
        llm = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
        s, ids = best_of(lambda: llm.tokenize(data, add_bos=False, special=False))
        rows.append(("llama-cpp-python %s" % llama_cpp.__version__, len(ids), s))
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "mf", os.path.join(here, "..", "data", "smollm2", "make-fixtures.py"))
    mf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mf)
    try:
        who, enc = mf.hf_encoder(model)
        s, ids = best_of(lambda: enc(text))
        rows.append((who, len(ids), s))
    except ImportError:
        pass
    print("%-28s %10s %10s %8s" % ("tokenizer", "bytes", "tokens", "MB/s"))
    for name, n, s in rows:
        print("%-28s %10d %10d %8.2f" % (name, len(data), n, len(data) / s / 1e6))


if __name__ == "__main__":
    main()
