#!/usr/bin/env python3
"""bench_st.py MODEL_DIR TEXT_FILE N - sentence-transformers' speed on the
GPU for tests/gpu/run.sh: the same chunks as bench_embed (100 words each,
the file read again from its start when it runs out), mean pooling and
normalisation as all-MiniLM-L6-v2, max_seq_length 256, batches of 128.
Timed twice after a warm-up of 64 chunks: with float32 weights (the F16
file widened, as lpipe widens it) and with float16 ones. Prints
"st cuda chunks N seconds S chunks_s R" and "st-f16 cuda chunks ...".
The plain SentenceTransformer(dir) call is used first (a directory without
modules.json gets mean pooling), so that it runs across library versions."""
import sys
import time


def chunks(path, n):
    words = open(path, encoding="utf-8", errors="replace").read().split()
    out, at = [], 0
    while len(out) < n:
        if at >= len(words):
            at = 0
        out.append(" ".join(words[at:at + 100]))
        at += 100
    return out


def load(model_dir):
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(model_dir, device="cuda")
    except Exception as e:  # an older or newer API: build the modules
        print("st: plain load failed (%s); building the modules" % e, file=sys.stderr)
        from sentence_transformers import models
        word = models.Transformer(model_dir)
        pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
        return SentenceTransformer(modules=[word, pool], device="cuda")


def timed(model, texts, label):
    import torch

    model.encode(texts[:64], batch_size=128, normalize_embeddings=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    model.encode(texts, batch_size=128, convert_to_numpy=True, normalize_embeddings=True)
    torch.cuda.synchronize()
    t = time.perf_counter() - t0
    print("%s cuda chunks %d seconds %.3f chunks_s %.1f" % (label, len(texts), t, len(texts) / t))


def main(model_dir, text, n):
    import torch

    model = load(model_dir)
    model.max_seq_length = 256
    texts = chunks(text, n)
    model.float()
    timed(model, texts, "st")
    model.half()
    timed(model, texts, "st-f16")
    print("st_device %s torch %s" % (torch.cuda.get_device_name(0), torch.__version__))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: bench_st.py MODEL_DIR TEXT_FILE N")
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
