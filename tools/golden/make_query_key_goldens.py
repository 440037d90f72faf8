#!/usr/bin/python3
"""Regenerate the query-key embedding goldens under tests/data/query_key/.

    /usr/bin/python3 tools/golden/make_query_key_goldens.py

Needs python3-numpy and python3-torch (Debian).  From the golden checkpoints of tests/data/models
(GPT-2, and Llama with grouped-query attention), in float64 and independent of the engine:

  queries, keys   the input of layer L is hidden_states[L] of models_ref.py; GPT-2: ln_1, then
                  c_attn (Conv1D, x @ W + b) split into q | k | v; Llama: input_layernorm (RMS),
                  q_proj and k_proj, then rotary embeddings (rotate_half, theta from config.json)
                  as modeling_llama.py's apply_rotary_pos_emb.  Query head h reads key head
                  h // (heads / kv_heads) (repeat_kv).
  embedding       per head, over the valid tokens only (AttentionViz, Yeh et al. 2023, §4.1):
                  queries times c and keys divided by c, c = sqrt(mean |k - mean k| /
                  mean |q - mean q|), then keys translated so that their mean is the queries'
                  mean (the paper's key scaling and translation); the 2n points centred on their
                  joint mean and projected on the two leading eigenvectors of their covariance
                  (torch.linalg.eigh), each signed so that its largest-magnitude loading is
                  positive; the eigenvalue shares of the trace; the Pearson correlation between
                  the 2-D distance and the dot product of the normalised vectors over every pair.

Writes tests/data/query_key/golden.json (the cases) and tests/data/query_key/<case>.safetensors:
query_xy and key_xy [H, T, 2] (NaN for padding), explained [H, 2], scale [H], correlation [H].
Deterministic; the folder is rewritten.  See docs/golden-references.md.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models_ref as M  # noqa: E402
import safetensors_io as S  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "tests", "data", "models")
OUT = os.path.join(REPO, "tests", "data", "query_key")

# (case name, model folder, golden case of that model, layer)
CASES = [
    ("gpt2_punctuation", "gpt2", "punctuation", 1),
    ("gpt2_padding", "gpt2", "padding", 0),
    ("llama_punctuation", "llama", "punctuation", 1),
]


def load(model):
    folder = os.path.join(MODELS, model)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    return cfg, S.load_folder_f64(folder)


def golden_case(model, name):
    g = json.load(open(os.path.join(MODELS, model, "golden.json")))
    return next(c for c in g["cases"] if c["name"] == name)


def gpt2_qk(cfg, W, x, layer):
    p = ("transformer." if any(k.startswith("transformer.") for k in W) else "") + f"h.{layer}."
    D = cfg["n_embd"]
    h = M.layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], cfg["layer_norm_epsilon"])
    qkv = h @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]
    return qkv[:, :D], qkv[:, D:2 * D], cfg["n_head"], cfg["n_head"]


def llama_qk(cfg, W, x, layer):
    p = f"model.layers.{layer}."
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim") or cfg["hidden_size"] // H
    T = x.shape[0]
    h = M.rms_norm(x, W[p + "input_layernorm.weight"], cfg["rms_norm_eps"])
    q = M.linear(h, W[p + "self_attn.q_proj.weight"]).reshape(T, H, d)
    k = M.linear(h, W[p + "self_attn.k_proj.weight"]).reshape(T, KV, d)
    cos, sin = M.rope_cos_sin(T, d, cfg["rope_theta"])
    q = M.apply_rope(q, cos[:, None], sin[:, None])
    k = M.apply_rope(k, cos[:, None], sin[:, None])
    return q.reshape(T, H * d), k.reshape(T, KV * d), H, KV


def queries_keys(cfg, W, c, layer):
    if cfg["model_type"] == "gpt2":
        p = "transformer." if any(k.startswith("transformer.") for k in W) else ""
        hs = M.gpt2_forward(W, cfg, c["ids"], c["attention_mask"], prefix=p)["hidden_states"]
        return gpt2_qk(cfg, W, hs[layer], layer)
    hs = M.llama_forward(W, cfg, c["ids"], c["attention_mask"])["hidden_states"]
    return llama_qk(cfg, W, hs[layer], layer)


def embed(q, k):
    """One head's valid queries and keys [n, d] -> coordinates, shares, scale, correlation."""
    q, k = torch.from_numpy(q), torch.from_numpy(k)
    c = torch.sqrt((k - k.mean(0)).norm(dim=1).mean() / (q - q.mean(0)).norm(dim=1).mean())
    q, k = q * c, k / c
    k = k - k.mean(0) + q.mean(0)
    joint = torch.cat([q, k])
    centre = joint.mean(0)
    values, vectors = torch.linalg.eigh((joint - centre).T @ (joint - centre) / joint.shape[0])
    axes = vectors[:, [-1, -2]]
    signs = torch.sign(axes.gather(0, axes.abs().argmax(0, keepdim=True)))
    axes = axes * signs
    q2, k2 = (q - centre) @ axes, (k - centre) @ axes
    distance = torch.cdist(q2, k2).flatten()
    dot = (q @ k.T).flatten()
    correlation = torch.corrcoef(torch.stack([distance, dot]))[0, 1]
    shares = values.clamp(min=0)[[-1, -2]] / values.clamp(min=0).sum()
    return q2.numpy(), k2.numpy(), shares.numpy(), float(c), float(correlation)


def case_tensors(cfg, W, c, layer):
    queries, keys, H, KV = queries_keys(cfg, W, c, layer)
    T = len(c["ids"])
    d = queries.shape[1] // H
    valid = np.array(c["attention_mask"], dtype=bool)
    qxy = np.full((H, T, 2), np.nan)
    kxy = np.full((H, T, 2), np.nan)
    explained, scale, correlation = np.zeros((H, 2)), np.zeros(H), np.zeros(H)
    for h in range(H):
        g = h // (H // KV)
        q2, k2, explained[h], scale[h], correlation[h] = embed(
            queries[valid, h * d:(h + 1) * d], keys[valid, g * d:(g + 1) * d])
        qxy[h, valid], kxy[h, valid] = q2, k2
    f32 = lambda a: (a.astype(np.float32), "F32")  # noqa: E731
    return {"query_xy": f32(qxy), "key_xy": f32(kxy), "explained": f32(explained),
            "scale": f32(scale), "correlation": f32(correlation)}


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    cases = []
    for name, model, case, layer in CASES:
        cfg, W = load(model)
        c = golden_case(model, case)
        tensors = case_tensors(cfg, W, c, layer)
        S.save(os.path.join(OUT, name + ".safetensors"), tensors, {"case": name})
        cases.append({"name": name, "model": model, "layer": layer, "ids": c["ids"],
                      "attention_mask": c["attention_mask"],
                      "token_type_ids": c["token_type_ids"], "tensors": sorted(tensors)})
        shares = tensors["explained"][0].sum(1)
        print(f"{name}: T = {len(c['ids'])}, layer {layer}, PC1+PC2 share "
              f"{shares.min():.3f}..{shares.max():.3f}, correlation "
              f"{tensors['correlation'][0].min():.3f}..{tensors['correlation'][0].max():.3f}")
    with open(os.path.join(OUT, "golden.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps({"generator": "tools/golden/make_query_key_goldens.py",
                            "cases": cases}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
