"""The zoo's byte-level tokenizer: one token per UTF-8 byte (ids 0–255) and four specials.

Written as a Hugging Face tokenizer.json that Headlight's C++ tokenizer loads: a BPE model with
no merges over GPT-2's byte-to-unicode alphabet (so every byte is one vocabulary entry and the
id of byte b is b) behind a ByteLevel pre-tokenizer without the regex split or a prefix space.
Nothing is added around the text: a zoo model sees exactly the bytes of what the user typed.
"""
import json
import os
import re

SPECIALS = ["[PAD]", "[BOS]", "[EOS]", "[SEP]"]
VOCAB_SIZE = 256 + len(SPECIALS)
PAD, BOS, EOS, SEP = range(256, VOCAB_SIZE)


def bytes_to_unicode():
    """GPT-2's reversible map from bytes to printable unicode characters (the ByteLevel
    alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def encode(text):
    """The ids the C++ tokenizer gives: specials written in the text are matched as tokens."""
    ids = []
    for part in re.split("(" + "|".join(re.escape(s) for s in SPECIALS) + ")", text):
        ids += [256 + SPECIALS.index(part)] if part in SPECIALS else list(part.encode("utf-8"))
    return ids


def decode(ids):
    return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


def tokenizer_json():
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    added = [{"id": 256 + i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(SPECIALS)]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": []},
    }


def write(folder):
    with open(os.path.join(folder, "tokenizer.json"), "w", newline="\n") as f:
        json.dump(tokenizer_json(), f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "[BOS]", "eos_token": "[EOS]",
              "pad_token": "[PAD]", "sep_token": "[SEP]", "model_max_length": 1024}
    with open(os.path.join(folder, "tokenizer_config.json"), "w", newline="\n") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
