#!/usr/bin/env python3
"""Seeds for tests/fuzz/fuzz_vocab: two tiny vocabulary-only GGUF files.

Usage (needs the pip package gguf):
    python3 tests/fuzz/make-vocab-seeds.py tests/fuzz/corpus/fuzz_vocab
"""
import os
import sys

import gguf


def byte_level():
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    moved, out = 0, []
    for b in range(256):
        if b in keep:
            out.append(chr(b))
        else:
            out.append(chr(256 + moved))
            moved += 1
    return out


def write(path, build):
    w = gguf.GGUFWriter(path, "llama")
    build(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def bpe(w):
    toks = byte_level() + ["\u0120t", "he", "\u0120the", "12", "<|im_start|>", "<|im_end|>"]
    types = [1] * (len(toks) - 2) + [3, 3]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(toks)
    w.add_token_types(types)
    w.add_token_merges(["\u0120 t", "h e", "\u0120t he", "1 2"])
    w.add_bos_token_id(len(toks) - 2)
    w.add_eos_token_id(len(toks) - 1)
    w.add_add_bos_token(False)
    w.add_chat_template("{{'<|im_start|>system\nHi<|im_end|>'}}")


def spm(w):
    toks = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + \
        ["\u2581", "\u2581t", "he", "\u2581the", "a", "\u65e5"]
    types = [2, 3, 3] + [6] * 256 + [1] * 6
    scores = [0.0] * 259 + [-1.0, -2.0, -3.0, -0.5, -4.0, -5.0]
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_types(types)
    w.add_token_scores(scores)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_space_prefix(True)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus/fuzz_vocab"
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "bpe.gguf"), bpe)
    write(os.path.join(out, "spm.gguf"), spm)


if __name__ == "__main__":
    main()
