"""The zoo's byte-level tokenizer: one token per UTF-8 byte (ids 0–255) and four specials, plus
[MASK] (id 260) for the masked-byte encoders.

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
# Why a fifth special only for masked-byte encoders: the causal models' vocabulary stays 260.
MASKED_SPECIALS = SPECIALS + ["[MASK]"]
MASKED_VOCAB_SIZE = VOCAB_SIZE + 1
MASK = VOCAB_SIZE


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


def encode(text, masked=False):
    """The ids the C++ tokenizer gives: specials written in the text are matched as tokens."""
    specials = MASKED_SPECIALS if masked else SPECIALS
    ids = []
    for part in re.split("(" + "|".join(re.escape(s) for s in specials) + ")", text):
        ids += [256 + specials.index(part)] if part in specials else list(part.encode("utf-8"))
    return ids


def decode(ids):
    return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


def tokenizer_json(masked=False):
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    specials = MASKED_SPECIALS if masked else SPECIALS
    added = [{"id": 256 + i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(specials)]
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


def write(folder, masked=False):
    with open(os.path.join(folder, "tokenizer.json"), "w", newline="\n") as f:
        json.dump(tokenizer_json(masked), f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "[BOS]", "eos_token": "[EOS]",
              "pad_token": "[PAD]", "sep_token": "[SEP]", "model_max_length": 1024}
    if masked:
        config["mask_token"] = "[MASK]"
    with open(os.path.join(folder, "tokenizer_config.json"), "w", newline="\n") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
