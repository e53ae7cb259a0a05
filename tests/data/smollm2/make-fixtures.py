#!/usr/bin/env python3
"""Token-id fixtures for SmolLM2-135M-Instruct from an independent tokenizer.

Reads the vocabulary of the GGUF file and tokenizes sample strings with
llama-cpp-python (vocab_only, special tokens not parsed) when it is
installed, else with a Hugging Face `tokenizers` BPE rebuilt from the GGUF's
tokens and merges with SmolLM2's pre-tokenizer (single digits, then GPT-2
byte-level splitting). Writes, into OUT_DIR (default: beside this script),
tokens.tsv (hand-picked strings) and random.tsv (500 strings drawn with a
fixed seed from a pool of letters, digits, white space of every kind,
punctuation, accents, CJK, emoji, combining and zero-width characters):

    name <TAB> escaped text <TAB> space-separated ids

Text escapes: \\\\ \\t \\n \\r and \\xHH for other ASCII control bytes;
everything else is raw UTF-8.

Usage: make-fixtures.py [MODEL.gguf] [OUT_DIR]
"""
import os
import random
import sys

SAMPLES = [
    ("hello", "Hello world"),
    ("punct", "Hello, world! How are you today?"),
    ("lead_space", " leading space"),
    ("trail_space", "trailing space "),
    ("two_lead", "  two leading spaces"),
    ("space_runs", "multiple    spaces   between words"),
    ("newlines", "line one\nline two\n\nline four"),
    ("tabs", "tabs\tand\t\ttabs"),
    ("only_newlines", "\n\n\n"),
    ("ws_mix", "   \n  \t \n"),
    ("digits", "1234567890"),
    ("numbers", "The year 2024 had 365 days and 3.14159 is pi."),
    ("chinese", "中文分词测试：你好，世界！"),
    ("japanese", "日本語のテキストとカタカナ"),
    ("korean", "한국어 문장입니다"),
    ("emoji", "emoji 😀🎉👍🏽 and flags 🇫🇷"),
    ("accents", "café naïve résumé Ångström"),
    ("greek_cyrillic", "Ελληνικά και русский текст"),
    ("arabic", "مرحبا بالعالم"),
    ("python", "def f(x):\n    return x ** 2  # square\n"),
    ("c_code", "int main(void) { printf(\"%d\\n\", 42); return 0; }"),
    ("chatml_lookalike", "<|im_start|>user\nhi<|im_end|>"),
    ("eot_lookalike", "<|endoftext|>"),
    ("contractions", "I'm sure it's what they'd've done, we'll see"),
    ("shout", "DON'T SHOUT, IT'S LOUD"),
    ("url", "https://example.com/path?query=1&x=y#frag"),
    ("contact", "email@example.org, +1-555-0100"),
    ("spaces_only", "   "),
    ("single", "a"),
    ("mixed_scripts", "mixed日本English中文123abc"),
    ("fullwidth", "ＦＵＬＬＷＩＤＴＨ　ｔｅｘｔ"),
    ("nbsp", "\u00a0non-breaking\u00a0spaces\u2003em"),
    ("zero_width", "zero\u200bwidth joiner\u200d here"),
    ("unicode_numbers", "Numbers: ½ ⅓ ² ³ ٣ ४"),
    ("symbols", "$$$ ??? !!! ... ---"),
    ("crlf", "\r\nWindows\r\nline endings\r\n"),
    ("paragraph",
     "It was the best of times, it was the worst of times, it was the age of "
     "wisdom, it was the age of foolishness, it was the epoch of belief, it "
     "was the epoch of incredulity, it was the season of Light, it was the "
     "season of Darkness."),
    ("markdown", "# Title\n\n- item *one*\n- item `two`\n\n> quote"),
    ("json", "{\"key\": [1, 2.5, null], \"ok\": true}"),
]


RANDOM_POOL = (
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    + list(" \t\n\r\x0b\x0c")
    + list(".,;:!?'\"()[]{}<>|/\\-_+=*&^%$#@~`")
    + list("éèêëàçñöüßÅÆØœ") + list("中文日本語한국어")
    + ["😀", "👍🏽", "🇫🇷", "\u0301", "\u00a0", "\u2003", "\u3000", "\u200b",
       "\u200d", "\u0085", "\u2028", "٣", "४", "½", "²", "Ⅻ", "\u0600", "ـ",
       "'s", "'t", "'re", "'ll", "'S", "\ufeff", "\U0001F9D1\u200d\U0001F4BB"]
)


def random_samples(n=500, seed=1):
    rng = random.Random(seed)
    return [("r%d" % i, "".join(rng.choice(RANDOM_POOL) for _ in range(rng.randint(1, 30))))
            for i in range(n)]


def write_tsv(path, who, enc, samples):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("# token ids of SmolLM2-135M-Instruct by %s; see README\n" % who)
        for name, text in samples:
            ids = enc(text)
            f.write("%s\t%s\t%s\n" % (name, escape(text), " ".join(map(str, ids))))
    print("wrote %d samples to %s (%s)" % (len(samples), path, who))


def escape(s):
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    return "".join(out)


def read_vocab(path):
    from gguf import GGUFReader
    r = GGUFReader(path)
    f = r.fields
    tokens = f["tokenizer.ggml.tokens"].contents()
    merges = f["tokenizer.ggml.merges"].contents()
    pre = f["tokenizer.ggml.pre"].contents()
    return tokens, merges, pre


def hf_encoder(path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    tokens, merges, pre = read_vocab(path)
    if pre != "smollm":
        sys.exit("make-fixtures: pre-tokenizer '%s' is not smollm" % pre)
    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab, pairs))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    return "tokenizers %s" % __import__("tokenizers").__version__, \
        lambda s: tok.encode(s, add_special_tokens=False).ids


def llama_encoder(path):
    import llama_cpp
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    return "llama-cpp-python %s" % llama_cpp.__version__, \
        lambda s: llm.tokenize(s.encode("utf-8"), add_bos=False, special=False)


def main():
    default = os.path.join(os.environ.get("LPIPE_MODEL_DIR",
                                          os.path.expanduser("~/.cache/lpipe/models")),
                           "SmolLM2-135M-Instruct.Q4_1.gguf")
    model = sys.argv[1] if len(sys.argv) > 1 else default
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    try:
        who, enc = llama_encoder(model)
    except ImportError:
        who, enc = hf_encoder(model)
    write_tsv(os.path.join(out, "tokens.tsv"), who, enc, SAMPLES)
    write_tsv(os.path.join(out, "random.tsv"), who, enc, random_samples())


if __name__ == "__main__":
    main()
