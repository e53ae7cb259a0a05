#!/usr/bin/env python3
"""Reference next-token fixtures for SmolLM2-135M-Instruct (Q4_1 GGUF).

Writes, for a few prompts given as token ids, the top-5 next-token ids and
their logits, and the greedy 32-token continuation of a chat prompt. The
token ids come from a byte-level BPE built from the GGUF's own vocabulary
and merges (package `tokenizers`), so the C test needs no tokenizer.

Backend: llama-cpp-python when it imports (--backend llama), else a plain
numpy forward pass over weights dequantized with gguf.quants (--backend
numpy). The numpy pass uses float32 activations; llama.cpp quantizes
activations to 8 bits, so the two differ by a few hundredths of a logit.

    python3 tests/data/smollm2-forward/make-logits.py MODEL.gguf > tests/data/smollm2-forward/logits.txt
"""
import argparse
import sys

import numpy as np

PROMPTS = [
    "The capital of France is",
    "Once upon a time, there was a little",
    "def fibonacci(n):\n    if n <",
    "Water boils at a temperature of",
]
CHAT = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
        "Hugging Face<|im_end|>\n<|im_start|>user\nWhat is the capital of France?"
        "<|im_end|>\n<|im_start|>assistant\n")
N_GREEDY = 32


def field(r, key):
    f = r.fields[key]
    if len(f.data) == 1:
        v = f.parts[f.data[0]]
        return bytes(v).decode() if f.types[0].name == "STRING" else v[0]
    return [bytes(f.parts[i]).decode() for i in f.data]


def make_tokenizer(r):
    from tokenizers import Tokenizer, models, pre_tokenizers, AddedToken
    toks = field(r, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in field(r, "tokenizer.ggml.merges")]
    tk = Tokenizer(models.BPE({t: i for i, t in enumerate(toks)}, merges))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.add_special_tokens([AddedToken(t, special=True) for t in ("<|im_start|>", "<|im_end|>")])
    return lambda text: tk.encode(text).ids


class NumpyModel:
    def __init__(self, r):
        from gguf.quants import dequantize
        a = field(r, "general.architecture")
        self.arch = a
        g = lambda k: field(r, f"{a}.{k}")
        self.n_layer, self.n_head = int(g("block_count")), int(g("attention.head_count"))
        self.n_kv = int(g("attention.head_count_kv"))
        self.eps = float(g("attention.layer_norm_rms_epsilon"))
        self.base = float(g("rope.freq_base"))
        self.w = {}
        for t in r.tensors:
            arr = dequantize(t.data, t.tensor_type).astype(np.float32)
            shape = [int(x) for x in reversed(t.shape)]
            self.w[t.name] = arr.reshape(shape)
        self.out = self.w.get("output.weight", self.w["token_embd.weight"])

    def norm(self, x, w):
        return x / np.sqrt(np.mean(x.astype(np.float64) ** 2, -1, keepdims=True) + self.eps) * w

    def rope(self, x, pos):  # x: (T, heads, hd); llama: adjacent pairs
        hd = x.shape[-1]
        inv = self.base ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
        ang = np.outer(pos, inv)[:, None, :]
        c, s = np.cos(ang), np.sin(ang)
        if self.arch == "llama":
            a, b = x[..., 0::2], x[..., 1::2]
            y = np.empty_like(x)
            y[..., 0::2], y[..., 1::2] = a * c - b * s, a * s + b * c
        else:
            a, b = x[..., : hd // 2], x[..., hd // 2:]
            y = np.concatenate([a * c - b * s, a * s + b * c], -1)
        return y

    def logits(self, ids):
        """Logits of every position, recomputed from scratch."""
        w, T = self.w, len(ids)
        x = w["token_embd.weight"][ids].astype(np.float64)
        pos = np.arange(T)
        for l in range(self.n_layer):
            p = lambda n: w[f"blk.{l}.{n}"]
            h = self.norm(x, p("attn_norm.weight"))
            q = h @ p("attn_q.weight").T + w.get(f"blk.{l}.attn_q.bias", 0)
            k = h @ p("attn_k.weight").T + w.get(f"blk.{l}.attn_k.bias", 0)
            v = h @ p("attn_v.weight").T + w.get(f"blk.{l}.attn_v.bias", 0)
            hd = q.shape[1] // self.n_head
            q = self.rope(q.reshape(T, self.n_head, hd), pos)
            k = self.rope(k.reshape(T, self.n_kv, hd), pos)
            v = v.reshape(T, self.n_kv, hd)
            rep = self.n_head // self.n_kv
            k, v = np.repeat(k, rep, 1), np.repeat(v, rep, 1)
            s = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd)
            s = s + np.triu(np.full((T, T), -np.inf), 1)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            o = np.einsum("hts,shd->thd", s, v).reshape(T, -1)
            x = x + o @ p("attn_output.weight").T
            h = self.norm(x, p("ffn_norm.weight"))
            gt = h @ p("ffn_gate.weight").T
            x = x + ((gt / (1 + np.exp(-gt))) * (h @ p("ffn_up.weight").T)) @ p("ffn_down.weight").T
        return self.norm(x, w["output_norm.weight"]) @ self.out.T


class LlamaModel:
    def __init__(self, path):
        from llama_cpp import Llama
        self.m = Llama(model_path=path, n_ctx=512, logits_all=True, verbose=False, n_threads=2)

    def logits(self, ids):
        self.m.reset()
        self.m.eval(ids)
        return np.array(self.m.scores[: len(ids)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--backend", choices=["auto", "llama", "numpy"], default="auto")
    a = ap.parse_args()
    from gguf import GGUFReader
    r = GGUFReader(a.model)
    enc = make_tokenizer(r)
    backend = a.backend
    if backend == "auto":
        try:
            import llama_cpp  # noqa: F401
            backend = "llama"
        except ImportError:
            backend = "numpy"
    m = LlamaModel(a.model) if backend == "llama" else NumpyModel(r)
    print(f"# SmolLM2-135M-Instruct Q4_1 reference, backend {backend}")
    print("# generated by: python3 tests/data/smollm2-forward/make-logits.py MODEL.gguf")
    for text in PROMPTS:
        ids = enc(text)
        lg = m.logits(ids)[-1]
        top = np.argsort(-lg, kind="stable")[:5]
        print("prompt", *ids)
        print("top5", *top)
        print("logits", *(f"{lg[i]:.4f}" for i in top))
    ids = enc(CHAT)
    gen = []
    for _ in range(N_GREEDY):
        lg = m.logits(ids + gen)[-1]
        gen.append(int(np.argmax(lg)))
    print("chat", *ids)
    print("greedy", *gen)


if __name__ == "__main__":
    sys.exit(main())
