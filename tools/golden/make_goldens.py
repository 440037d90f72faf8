#!/usr/bin/python3
"""Regenerate every tiny checkpoint and golden tensor under tests/data/models/.

    /usr/bin/python3 tools/golden/make_goldens.py [--out DIR] [--no-verify]

Needs numpy and the `regex` module (Debian: python3-numpy python3-regex).  Deterministic:
fixed seeds, sorted JSON, no timestamps; running it twice gives identical bytes.  The output
folder is deleted and rewritten.  See docs/golden-references.md.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import analysis_ref as A  # noqa: E402
import checkpoints as C  # noqa: E402
import models_ref as M  # noqa: E402
import safetensors_io as S  # noqa: E402
import tokenizers_ref as T  # noqa: E402
from corpus import LONG_TEXT  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "models")
SIZE_BUDGET = 12 * 1000 * 1000

TEXTS = {
    "punctuation": "Hello, world! It's 3.14 — isn't it?",
    "accents": "Café naïve résumé Über",
    "cjk": "我爱自然语言处理",
    "emoji": "I like 🙂 and 👍.",
    # unknown words, letters outside every vocabulary, Cf / Cc / U+FFFD characters that BERT's
    # clean_text drops, and a tab
    "rare": "Zyzzyvas quaff ß and Ω\u200bsoft\u00adhyphen caf\ufffdé\tbell\u0007!",
}
# WordPiece models also get a 135-character word (> max_input_chars_per_word = 100 -> [UNK]);
# byte-level models would turn it into ~100 tokens for no extra coverage.
LONG_WORD = " " + "pneumonoultramicroscopicsilicovolcanoconiosis" * 3
PAIR = ("Where is the café?", "The café is over the bridge, isn't it?")
PAD_SOURCE = "The dog sleeps."
LONG_MODELS = {"bert", "gpt2", "llama"}
LONG_RANGE = (210, 260)


def long_text(tok):
    """The shortest prefix (whole words) of corpus.LONG_TEXT with >= 210 tokens."""
    words = LONG_TEXT.split(" ")
    for n in range(1, len(words) + 1):
        text = " ".join(words[:n])
        k = len(tok.encode(text).ids)
        if k >= LONG_RANGE[0]:
            assert k <= LONG_RANGE[1], k
            return text
    raise RuntimeError("LONG_TEXT too short")


def text_case(model, name, text, pair=None, add_special_tokens=True):
    enc = model.tokenizer.encode(text, pair, add_special_tokens)
    type_ids = enc.type_ids if model.family == "wordpiece" else [0] * len(enc.ids)
    case = {"name": name, "input": "text", "text": text}
    if pair is not None:
        case["text_pair"] = pair
    case.update({"add_special_tokens": add_special_tokens, "ids": enc.ids,
                 "token_type_ids": type_ids, "attention_mask": [1] * len(enc.ids),
                 "tokens": enc.tokens, "offsets": enc.offsets,
                 "sequence_ids": enc.sequence_ids})
    return case


def id_to_token(model):
    v = model.tokenizer.vocab
    return {i: t for t, i in v.items()}


def ids_case(model, name, ids, mask, note):
    inv = id_to_token(model)
    return {"name": name, "input": "ids", "note": note, "add_special_tokens": False,
            "ids": list(ids), "token_type_ids": [0] * len(ids), "attention_mask": list(mask),
            "tokens": [inv[i] for i in ids]}


def cases_for(model):
    cases = []
    for name, text in TEXTS.items():
        if name == "rare" and model.family == "wordpiece":
            text += LONG_WORD
        cases.append(text_case(model, name, text, add_special_tokens=(name != "cjk")))
    if model.family in ("wordpiece", "roberta"):
        cases.append(text_case(model, "pair", PAIR[0], PAIR[1]))
    word = " the" if model.family in ("bytelevel", "roberta") else "the"
    one = model.tokenizer.encode(word, add_special_tokens=False).ids
    cases.append(ids_case(model, "single_id", one[-1:], [1],
                          "one token id, no special tokens"))
    src = model.tokenizer.encode(PAD_SOURCE).ids
    cases.append(ids_case(model, "padding", src + [model.pad_id] * 3,
                          [1] * len(src) + [0] * 3,
                          f"tokenizer({PAD_SOURCE!r}) + 3 x pad id {model.pad_id}, right padding"))
    if model.name in LONG_MODELS:
        cases.append(text_case(model, "long", long_text(model.tokenizer)))
    return cases


def run_case(model, W64, case):
    out = model.forward(W64, model.config, case["ids"], case["attention_mask"],
                        case["token_type_ids"])
    att = out["attentions"]
    tensors = {
        "input_ids": (np.asarray(case["ids"], dtype=np.int64), "I64"),
        "token_type_ids": (np.asarray(case["token_type_ids"], dtype=np.int64), "I64"),
        "attention_mask": (np.asarray(case["attention_mask"], dtype=np.int64), "I64"),
        "position_ids": (np.asarray(out["position_ids"], dtype=np.int64), "I64"),
        "attentions": (att.astype(np.float32), "F32"),
        "last_hidden_state": (out["last_hidden_state"].astype(np.float32), "F32"),
        "hidden_states": (out["hidden_states"].astype(np.float32), "F32"),
        "entropy": (A.entropy(att).astype(np.float32), "F32"),
        "jsd_adjacent": (A.jsd_adjacent(att).astype(np.float32), "F32"),
    }
    if "logits" in out:  # Gemma: the tied LM head with its final soft-capping
        tensors["logits"] = (out["logits"].astype(np.float32), "F32")
    return tensors


def dumps_golden(golden):
    """JSON with one line per case (ensure_ascii=False: strings are raw UTF-8)."""
    head = {k: v for k, v in golden.items() if k != "cases"}
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines.append(' "cases": [')
    cases = [json.dumps(c, ensure_ascii=False) for c in golden["cases"]]
    lines += ["  " + c + ("," if i + 1 < len(cases) else "") for i, c in enumerate(cases)]
    lines += [" ]", "}"]
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == golden
    return text


def write_model(model, out_dir):
    d = os.path.join(out_dir, model.name)
    os.makedirs(os.path.join(d, "golden"))
    with open(os.path.join(d, "config.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(C.dumps_config(model.config))
    for fname, text in sorted(model.files.items()):
        with open(os.path.join(d, fname), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    meta = {"format": "pt"}
    if model.shards is None:
        S.save(os.path.join(d, "model.safetensors"),
               {n: (a, model.dtype) for n, a in model.tensors.items()}, meta)
    else:
        n = len(model.shards)
        weight_map, total = {}, 0
        for k, names in enumerate(model.shards):
            fname = f"model-{k + 1:05d}-of-{n:05d}.safetensors"
            total += S.save(os.path.join(d, fname),
                            {nm: (model.tensors[nm], model.dtype) for nm in names}, meta)
            weight_map.update({nm: fname for nm in names})
        assert sorted(weight_map) == sorted(model.tensors)
        index = {"metadata": {"total_size": total},
                 "weight_map": {k: weight_map[k] for k in sorted(weight_map)}}
        with open(os.path.join(d, "model.safetensors.index.json"), "w", newline="\n") as f:
            f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    W64 = {k: v.astype(np.float64) for k, v in model.tensors.items()}
    cases = cases_for(model)
    for case in cases:
        S.save(os.path.join(d, "golden", case["name"] + ".safetensors"),
               run_case(model, W64, case), {"model": model.name, "case": case["name"]})
    golden = {"model": model.name, "stored_dtype": model.dtype,
              "generator": "tools/golden/make_goldens.py", "cases": cases}
    with open(os.path.join(d, "golden.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(dumps_golden(golden))
    return cases


# ------------------------------------------------------------------------------------------
# verification
# ------------------------------------------------------------------------------------------

def _check_tokenizer_roundtrip(model, case):
    if case["input"] != "text" or case.get("text_pair"):
        return
    toks = [t for t, s in zip(case["tokens"], case["sequence_ids"]) if s >= 0]
    text = case["text"]
    if model.family in ("bytelevel", "roberta"):
        dec = {c: b for b, c in T.BYTE_ENCODER.items()}
        got = bytes(dec[c] for t in toks for c in t).decode("utf-8")
        assert got == text, (model.name, case["name"])
    elif model.family == "llama":
        raw = b""
        for t in toks:
            if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
                raw += bytes([int(t[3:5], 16)])
            else:
                raw += t.replace(T.SPIECE, " ").encode("utf-8")
        assert raw.decode("utf-8") == " " + text, (model.name, case["name"])
    for (b, e), s in zip(case["offsets"], case["sequence_ids"]):
        assert 0 <= b <= e <= len(text) or s < 0


def verify(out_dir, models, all_cases):
    report = []
    for model in models:
        d = os.path.join(out_dir, model.name)
        cfg = json.load(open(os.path.join(d, "config.json")))
        # reload the checkpoint from disk, compare with what the forward used
        files = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))
        loaded = {}
        for f in files:
            t, dtypes, _ = S.load(os.path.join(d, f))
            assert set(dtypes.values()) == {model.dtype}, (f, set(dtypes.values()))
            loaded.update(t)
        assert sorted(loaded) == sorted(model.tensors), model.name
        for k in loaded:
            assert np.array_equal(loaded[k], model.tensors[k]), k
        W32 = {k: v.astype(np.float32) for k, v in loaded.items()}
        worst_f32 = 0.0
        ratios = []
        for case in all_cases[model.name]:
            _check_tokenizer_roundtrip(model, case)
            g, _, _ = S.load(os.path.join(d, "golden", case["name"] + ".safetensors"))
            att, mask = g["attentions"], g["attention_mask"].astype(bool)
            L, H, Tn, _ = att.shape
            assert np.all(np.isfinite(att)) and np.all(np.isfinite(g["hidden_states"]))
            assert np.allclose(att.sum(-1), 1.0, atol=1e-5), (model.name, case["name"])
            assert np.all(att[..., ~mask] == 0.0), "masked key got attention"
            causal = cfg["model_type"] in ("gpt2", "llama", "qwen2", "mistral", "qwen3", "opt",
                                           "gemma2", "gemma3_text")
            if causal:
                assert np.all(att[..., np.triu(np.ones((Tn, Tn), bool), 1)] == 0.0)
            if cfg["model_type"] == "mistral":
                w = cfg["sliding_window"]
                far = np.tril(np.ones((Tn, Tn), bool), -w)
                assert np.all(att[..., far] == 0.0)
            if cfg["model_type"].startswith("gemma"):  # the windowed layers only
                far = np.tril(np.ones((Tn, Tn), bool), -cfg["sliding_window"])
                for layer, sliding in enumerate(M.gemma_sliding_layers(cfg)):
                    assert np.all(att[layer][..., far] == 0.0) == sliding or Tn <= 4

            assert np.array_equal(g["hidden_states"][-1], g["last_hidden_state"])
            assert g["entropy"].shape == (L, H, Tn) and g["jsd_adjacent"].shape == (L - 1, H, Tn)
            assert np.all(g["jsd_adjacent"] >= -1e-6) and np.all(g["jsd_adjacent"] <= 1 + 1e-6)
            # how far a float32 evaluation of the same forward lands from the golden
            out32 = model.forward(W32, cfg, np.asarray(case["ids"]), case["attention_mask"],
                                  case["token_type_ids"])
            for key in ("attentions", "hidden_states"):
                worst_f32 = max(worst_f32, float(np.max(np.abs(out32[key].astype(np.float64) - g[key]))))
            # attention must not be uniform: mean entropy well below ln(#visible keys)
            if Tn >= 8 and case["name"] != "padding":
                vis = np.tril(np.ones((Tn, Tn))).sum(-1) if causal else np.full(Tn, float(Tn))
                if cfg["model_type"] == "mistral":
                    vis = np.minimum(vis, cfg["sliding_window"])
                ratio = float(np.mean(g["entropy"][..., vis > 1] / np.log(vis[vis > 1])))
                assert ratio < 0.95, (model.name, case["name"], ratio)
                ratios.append(ratio)
        hmax = max(float(np.max(np.abs(S.load(os.path.join(d, "golden", c["name"] + ".safetensors"))[0]["hidden_states"])))
                   for c in all_cases[model.name])
        report.append((model.name, len(all_cases[model.name]), worst_f32, hmax, np.mean(ratios)))
    return report


def dir_size(path):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--no-verify", action="store_true")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    models = C.build_all()
    all_cases = {}
    for m in models:
        all_cases[m.name] = write_model(m, out)
        print(f"{m.name:11s} {len(all_cases[m.name])} cases, "
              f"T = {[len(c['ids']) for c in all_cases[m.name]]}")
    size = dir_size(out)
    print(f"total {size / 1e6:.2f} MB in {out}")
    if size > SIZE_BUDGET:
        sys.exit(f"over the {SIZE_BUDGET / 1e6:.0f} MB budget")
    if not args.no_verify:
        for name, n, worst, hmax, ratio in verify(out, models, all_cases):
            print(f"verified {name:11s} {n} cases; float32 re-evaluation max |diff| {worst:.1e}; "
                  f"max |hidden| {hmax:.1f}; mean entropy / ln(#keys) {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
