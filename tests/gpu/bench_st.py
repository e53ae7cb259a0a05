#!/usr/bin/env python3
"""bench_st.py MODEL_DIR TEXT_FILE N - sentence-transformers' speed on the
GPU for tests/gpu/run.sh: the same chunks as bench_embed (100 words each,
the file read again from its start when it runs out), mean pooling and
normalisation as all-MiniLM-L6-v2, float32 weights (the F16 file widened,
as lpipe widens it), batches of 128, max_seq_length 256. Prints
"st cuda chunks N seconds S chunks_s R" after a warm-up of 64 chunks."""
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


def main(model_dir, text, n):
    import torch
    from sentence_transformers import SentenceTransformer, models

    word = models.Transformer(model_dir, max_seq_length=256,
                              model_args={"torch_dtype": torch.float32})
    pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[word, pool, models.Normalize()], device="cuda")
    model.float()
    texts = chunks(text, n)
    model.encode(texts[:64], batch_size=128)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    model.encode(texts, batch_size=128, convert_to_numpy=True)
    torch.cuda.synchronize()
    t = time.perf_counter() - t0
    print("st cuda chunks %d seconds %.3f chunks_s %.1f" % (n, t, n / t))
    print("st_device %s torch %s" % (torch.cuda.get_device_name(0), torch.__version__))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: bench_st.py MODEL_DIR TEXT_FILE N")
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
