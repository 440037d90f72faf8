#!/usr/bin/python3
"""BERT checkpoints with TensorFlow-era names, as Google's original BERT checkpoints on the Hub
were saved: LayerNorm.gamma / LayerNorm.beta instead of LayerNorm.weight / LayerNorm.bias.

    /usr/bin/python3 tools/golden/make_legacy_names.py [--out DIR]

Writes, from the weights of tests/data/models/bert (so the bert goldens are their goldens too):

  bert_gamma_beta/          one model.safetensors, BertForPreTraining layout: "bert." prefix,
                            bert.pooler.*, the bert.embeddings.position_ids buffer (I64) and the
                            cls.predictions.* / cls.seq_relationship.* heads (seeded random)
  bert_gamma_beta_sharded/  BertModel layout (no prefix, pooler, position_ids) in two shards
                            plus model.safetensors.index.json, whose weight_map uses the stored
                            (legacy) names

Before writing anything it loads each checkpoint the way Hugging Face's from_pretrained loads
BertModel: every key renamed by _fix_state_dict_key_on_load (transformers >= 4.48: names ending
in LayerNorm.gamma/.beta) and by the older _load_state_dict_into_model rule ("gamma" -> "weight",
"beta" -> "bias" anywhere in the key; both rules must agree here), the base_model_prefix "bert."
stripped, keys BertModel does not have dropped (the heads, the non-persistent position_ids
buffer). The result must equal the original state dict bit for bit, and a PyTorch forward pass of
it (crosscheck_torch.encoder) must reproduce every bert golden within 1e-5. Deterministic output.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck_torch as X  # noqa: E402
import safetensors_io as S  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(REPO, "tests", "data", "models", "bert")
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "legacy")
COPIED = ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json")
SHARDS = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
TOLERANCE = 1e-5


def legacy_name(key):
    if key.endswith("LayerNorm.weight"):
        return key[:-len("weight")] + "gamma"
    if key.endswith("LayerNorm.bias"):
        return key[:-len("bias")] + "beta"
    return key


def hf_fix_key(key):
    """transformers >= 4.48, PreTrainedModel._fix_state_dict_key_on_load."""
    if key.endswith("LayerNorm.beta"):
        return key.replace("LayerNorm.beta", "LayerNorm.bias")
    if key.endswith("LayerNorm.gamma"):
        return key.replace("LayerNorm.gamma", "LayerNorm.weight")
    return key


def hf_fix_key_before_4_48(key):
    """transformers <= 4.47, _load_state_dict_into_model's _fix_key."""
    if "beta" in key:
        return key.replace("beta", "bias")
    if "gamma" in key:
        return key.replace("gamma", "weight")
    return key


def heads(rng, D, V):
    """BertForPreTraining's heads; the decoder weight is tied to the embeddings and not saved."""
    def draw(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)
    return {
        "cls.predictions.bias": draw(V),
        "cls.predictions.transform.dense.weight": draw(D, D),
        "cls.predictions.transform.dense.bias": draw(D),
        "cls.predictions.transform.LayerNorm.gamma": 1 + draw(D),
        "cls.predictions.transform.LayerNorm.beta": draw(D),
        "cls.seq_relationship.weight": draw(2, D),
        "cls.seq_relationship.bias": draw(2),
    }


def checkpoint(weights, cfg, prefix, with_heads):
    """{stored name: (array, dtype)} in the legacy spelling."""
    tensors = {prefix + legacy_name(k): (v, "F32") for k, v in weights.items()}
    positions = np.arange(cfg["max_position_embeddings"], dtype=np.int64)[None]
    tensors[prefix + "embeddings.position_ids"] = (positions, "I64")
    if with_heads:
        rng = np.random.default_rng(18)
        tensors.update({k: (v, "F32") for k, v in heads(rng, cfg["hidden_size"], cfg["vocab_size"]).items()})
    return tensors


def load_as_hf(tensors, original):
    """The BertModel state dict from_pretrained would build from `tensors`, and what it dropped."""
    renamed = {}
    for key, (value, _) in tensors.items():
        new, old = hf_fix_key(key), hf_fix_key_before_4_48(key)
        assert new == old, (key, new, old)
        renamed[new] = value
    prefix = "bert." if any(k.startswith("bert.") for k in renamed) else ""
    loaded = {k[len(prefix):]: v for k, v in renamed.items() if k.startswith(prefix)}
    dropped = sorted(set(renamed) - {prefix + k for k in original})
    missing = set(original) - set(loaded)
    assert not missing, missing
    for k, v in original.items():
        assert loaded[k].dtype == v.dtype and np.array_equal(loaded[k], v), k
    return {k: loaded[k] for k in original}, dropped


def verify(weights, cfg):
    W = {k: torch.from_numpy(v.astype(np.float64)) for k, v in weights.items()}
    worst = 0.0
    for case in json.load(open(os.path.join(SOURCE, "golden.json"), encoding="utf-8"))["cases"]:
        g = S.load(os.path.join(SOURCE, "golden", case["name"] + ".safetensors"))[0]
        with torch.no_grad():
            att, hs = X.encoder(W, cfg, case["ids"], case["attention_mask"], case["token_type_ids"])
        worst = max(worst, float((att - torch.from_numpy(g["attentions"].astype(np.float64))).abs().max()),
                    float((hs - torch.from_numpy(g["hidden_states"].astype(np.float64))).abs().max()))
    return worst


def write_folder(folder, cfg, files):
    os.makedirs(folder)
    for name in COPIED:
        shutil.copyfile(os.path.join(SOURCE, name), os.path.join(folder, name))
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    for name, tensors in files.items():
        S.save(os.path.join(folder, name), tensors, {"format": "pt"})


def sharded_files(tensors):
    """Embeddings and layer 0 in the first shard, the rest in the second, with the index."""
    first = {k: v for k, v in tensors.items() if k.startswith(("embeddings.", "encoder.layer.0."))}
    second = {k: v for k, v in tensors.items() if k not in first}
    files = {SHARDS[0]: first, SHARDS[1]: second}
    total = sum(v.nbytes for v, _ in tensors.values())
    weight_map = {k: SHARDS[0] if k in first else SHARDS[1] for k in sorted(tensors)}
    return files, {"metadata": {"total_size": total}, "weight_map": weight_map}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT)
    out = parser.parse_args().out
    original = S.load(os.path.join(SOURCE, "model.safetensors"))[0]
    base_cfg = json.load(open(os.path.join(SOURCE, "config.json"), encoding="utf-8"))

    pretraining = checkpoint(original, base_cfg, "bert.", with_heads=True)
    plain = checkpoint(original, base_cfg, "", with_heads=False)
    for name, tensors in (("bert_gamma_beta", pretraining), ("bert_gamma_beta_sharded", plain)):
        loaded, dropped = load_as_hf(tensors, original)
        worst = verify(loaded, base_cfg)
        print(f"{name}: HF drops {len(dropped)} keys ({', '.join(dropped[:3])}, ...); "
              f"torch forward vs bert goldens: {worst:.2e}")
        if worst > TOLERANCE:
            sys.exit(f"{name}: MISMATCH against the bert goldens")

    if os.path.exists(out):
        for name in ("bert_gamma_beta", "bert_gamma_beta_sharded"):
            shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    write_folder(os.path.join(out, "bert_gamma_beta"), dict(base_cfg, architectures=["BertForPreTraining"]),
                 {"model.safetensors": pretraining})
    files, index = sharded_files(plain)
    folder = os.path.join(out, "bert_gamma_beta_sharded")
    write_folder(folder, base_cfg, files)
    with open(os.path.join(folder, "model.safetensors.index.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
