#!/usr/bin/env python3
"""minilm_f16.py SRC DST - copy a BERT sentence model directory (config.json,
vocab.txt, sentence_bert_config.json, model.safetensors) with its F32
tensors stored as F16, so that MiniLM (87 MB) travels to a GPU machine
within the 64 MiB a call may carry. lpipe converts F16 back to F32 at load
and so do transformers: both sides then run the very same weights.
Standard library only (no numpy on the machines this runs on)."""
import json
import os
import shutil
import struct
import sys


def main(src, dst):
    os.makedirs(dst, exist_ok=True)
    for name in ("config.json", "vocab.txt", "sentence_bert_config.json"):
        if os.path.exists(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), os.path.join(dst, name))
    with open(os.path.join(src, "model.safetensors"), "rb") as f:
        (hlen,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(hlen))
        base = 8 + hlen
        out_header, chunks, at = {}, [], 0
        for name, t in header.items():
            if name == "__metadata__":
                out_header[name] = t
                continue
            b, e = t["data_offsets"]
            f.seek(base + b)
            raw = f.read(e - b)
            if t["dtype"] == "F32":
                n = len(raw) // 4
                raw = struct.pack("<%de" % n, *struct.unpack("<%df" % n, raw))
                dtype = "F16"
            else:
                dtype = t["dtype"]
            out_header[name] = {"dtype": dtype, "shape": t["shape"],
                                "data_offsets": [at, at + len(raw)]}
            chunks.append(raw)
            at += len(raw)
    hdr = json.dumps(out_header, separators=(",", ":")).encode()
    hdr += b" " * (-len(hdr) % 8)
    with open(os.path.join(dst, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hdr)))
        f.write(hdr)
        for c in chunks:
            f.write(c)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: minilm_f16.py SRC_DIR DST_DIR")
    main(sys.argv[1], sys.argv[2])
