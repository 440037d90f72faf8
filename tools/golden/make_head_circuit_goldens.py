#!/usr/bin/python3
"""Regenerate tests/data/head_roles/circuits.json: every head's copying score and the Q-, K- and
V-composition scores between heads, on golden checkpoints of tests/data/models.

    /usr/bin/python3 tools/golden/make_head_circuit_goldens.py

Needs python3-numpy and python3-torch (Debian).  Independent of the engine: the weights are read
from the checkpoints by their Hugging Face names here, processed as TransformerLens's
HookedTransformer.from_pretrained does with its defaults, and every score is computed densely in
float64 from its definition (Elhage et al. 2021; TransformerLens HookedTransformer
.all_composition_scores, utilities/matrix.composition_scores, FactoredMatrix):

  weights, row-vector convention, per head h: W_Q, W_K, W_V [D, dh], W_O [dh, D]; grouped
      key/value heads repeated (repeat_interleave); W_E [V, D]; W_U [D, V].
  fold_ln (pre-norm models): the block's input norm gain scales the rows of W_Q, W_K, W_V
      (Gemma's stored w as 1 + w); with LayerNorm those are then centred over D
      (W - W.mean(D)); the final norm's gain scales the rows of W_U, centred over D with
      LayerNorm.
  center_writing_weights (pre-norm LayerNorm models): W_O and W_E centred over D.
  center_unembed (every model): W_U - W_U.mean(over the vocabulary).
  Post-norm models (BERT, OPT with do_layer_norm_before false) keep the stored weights but
      for center_unembed.

  composition(a, b) for head a of layer l1 < l2 and head b of layer l2:
      ||OV_a @ R_b||_F / (||OV_a||_F ||R_b||_F), OV = W_V W_O, QK = W_Q W_K^T, and
      R_b = QK_b (Q), QK_b^T (K), OV_b (V); 0 where l2 <= l1.  Dense [D, D] products here.
  copying(h): sum(eig) / sum(|eig|) of the full OV circuit W_E W_V W_O W_U, a dense [V, V]
      matrix here (the engine takes the dh x dh W_O W_U W_E W_V).  Null where the model has no
      linear unembedding (BERT without its MLM head; a masked-LM head is not linear).

Deterministic; the file is rewritten.  See docs/head-roles.md.
"""
import json
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import safetensors_io as S  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "tests", "data", "models")
OUT = os.path.join(REPO, "tests", "data", "head_roles", "circuits.json")
CHECKPOINTS = ["gpt2", "llama", "gpt_neox", "gemma2", "qwen2", "bert", "opt_post_ln"]


def t(array):
    return torch.from_numpy(np.asarray(array, dtype=np.float64))


def split_heads_rows(weight, heads, d):
    """nn.Linear weight [heads*d, D] -> [heads, D, d] (x @ W per head)."""
    return weight.reshape(heads, d, -1).transpose(1, 2)


def split_heads_cols(weight, heads, d):
    """nn.Linear output weight [D, heads*d] -> [heads, d, D]."""
    return weight.reshape(weight.shape[0], heads, d).permute(1, 2, 0)


def separate_heads(W, names, H, KV, d):
    """One layer's q, k, v, o from separate nn.Linear weights named names[0..3], grouped
    key/value heads repeated (repeat_interleave) for every query head of their group."""
    q, k, v, o = (W[n] for n in names)
    return dict(q=split_heads_rows(q, H, d),
                k=split_heads_rows(k, KV, d).repeat_interleave(H // KV, 0),
                v=split_heads_rows(v, KV, d).repeat_interleave(H // KV, 0),
                o=split_heads_cols(o, H, d))


def family_weights(model):
    folder = os.path.join(MODELS, model)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    W = {k: t(v) for k, v in S.load_folder_f64(folder).items()}
    mt = cfg["model_type"]
    layers = []
    if mt == "gpt2":
        p = "transformer." if any(k.startswith("transformer.") for k in W) else ""
        D, H = cfg["n_embd"], cfg["n_head"]
        d = D // H
        for i in range(cfg["n_layer"]):
            a = f"{p}h.{i}."
            c_attn = W[a + "attn.c_attn.weight"]  # Conv1D [D, 3D]
            q, k, v = (c_attn[:, j * D:(j + 1) * D].reshape(D, H, d).permute(1, 0, 2)
                       for j in range(3))
            o = W[a + "attn.c_proj.weight"].reshape(H, d, D)  # Conv1D [D_in = H*d, D]
            layers.append(dict(q=q, k=k, v=v, o=o, gain=W[a + "ln_1.weight"]))
        info = dict(pre=True, layer_norm=True, embed=W[p + "wte.weight"],
                    unembed=W[p + "wte.weight"], final_gain=W[p + "ln_f.weight"])
    elif mt in ("llama", "qwen2", "gemma2"):
        D, H = cfg["hidden_size"], cfg["num_attention_heads"]
        KV = cfg.get("num_key_value_heads", H)
        d = cfg.get("head_dim") or D // H
        offset = 1.0 if mt == "gemma2" else 0.0
        for i in range(cfg["num_hidden_layers"]):
            a = f"model.layers.{i}.self_attn."
            names = [a + n + "_proj.weight" for n in ("q", "k", "v", "o")]
            layers.append(dict(separate_heads(W, names, H, KV, d),
                               gain=W[f"model.layers.{i}.input_layernorm.weight"] + offset))
        embed = W["model.embed_tokens.weight"]
        unembed = W.get("lm_head.weight", embed)
        info = dict(pre=True, layer_norm=False, embed=embed, unembed=unembed,
                    final_gain=W["model.norm.weight"] + offset)
    elif mt == "gpt_neox":
        p = "gpt_neox."
        D, H = cfg["hidden_size"], cfg["num_attention_heads"]
        d = D // H
        for i in range(cfg["num_hidden_layers"]):
            a = f"{p}layers.{i}.attention."
            qkv = W[a + "query_key_value.weight"].reshape(H, 3, d, D)  # per head q | k | v
            q, k, v = (qkv[:, j].transpose(1, 2) for j in range(3))
            layers.append(dict(q=q, k=k, v=v, o=split_heads_cols(W[a + "dense.weight"], H, d),
                               gain=W[f"{p}layers.{i}.input_layernorm.weight"]))
        info = dict(pre=True, layer_norm=True, embed=W[p + "embed_in.weight"],
                    unembed=W["embed_out.weight"], final_gain=W[p + "final_layer_norm.weight"])
    elif mt == "bert":
        p = "bert." if any(k.startswith("bert.") for k in W) else ""
        D, H = cfg["hidden_size"], cfg["num_attention_heads"]
        d = D // H
        for i in range(cfg["num_hidden_layers"]):
            a = f"{p}encoder.layer.{i}.attention."
            names = [a + n + ".weight" for n in ("self.query", "self.key", "self.value",
                                                 "output.dense")]
            layers.append(dict(separate_heads(W, names, H, H, d), gain=None))
        info = dict(pre=False, layer_norm=True, embed=None, unembed=None, final_gain=None)
    elif mt == "opt":
        p = "model.decoder."
        D, H = cfg["hidden_size"], cfg["num_attention_heads"]
        d = D // H
        pre = cfg.get("do_layer_norm_before", True)
        for i in range(cfg["num_hidden_layers"]):
            a = f"{p}layers.{i}.self_attn."
            names = [a + n + ".weight" for n in ("q_proj", "k_proj", "v_proj", "out_proj")]
            layers.append(dict(separate_heads(W, names, H, H, d),
                               gain=W[f"{p}layers.{i}.self_attn_layer_norm.weight"]))
        final = W.get(p + "final_layer_norm.weight")
        info = dict(pre=pre, layer_norm=True, embed=W[p + "embed_tokens.weight"],
                    unembed=W[p + "embed_tokens.weight"], final_gain=final)
    else:
        raise ValueError(mt)
    return layers, info


def process(layers, info):
    """TransformerLens's from_pretrained defaults (the module docstring)."""
    fold, center = info["pre"], info["pre"] and info["layer_norm"]
    for layer in layers:
        for name in ("q", "k", "v"):
            w = layer[name]
            if fold:
                w = w * layer["gain"][None, :, None]
            if center:
                w = w - w.mean(dim=1, keepdim=True)
            layer[name] = w
        if center:
            layer["o"] = layer["o"] - layer["o"].mean(dim=2, keepdim=True)
    if info["unembed"] is None:
        return layers, None, None
    embed = info["embed"]
    unembed = info["unembed"].T.clone()  # [D, V]
    if center:
        embed = embed - embed.mean(dim=1, keepdim=True)
    if fold and info["final_gain"] is not None:
        unembed = unembed * info["final_gain"][:, None]
        if center:
            unembed = unembed - unembed.mean(dim=0, keepdim=True)
    unembed = unembed - unembed.mean(dim=1, keepdim=True)
    return layers, embed, unembed


def composition(layers):
    L, H = len(layers), layers[0]["q"].shape[0]
    scores = {kind: torch.zeros(L, H, L, H, dtype=torch.float64) for kind in ("Q", "K", "V")}
    ov = [[layer["v"][h] @ layer["o"][h] for h in range(H)] for layer in layers]
    qk = [[layer["q"][h] @ layer["k"][h].T for h in range(H)] for layer in layers]
    for l1 in range(L):
        for l2 in range(l1 + 1, L):
            for h1 in range(H):
                left = ov[l1][h1]
                for h2 in range(H):
                    for kind, right in (("Q", qk[l2][h2]), ("K", qk[l2][h2].T),
                                        ("V", ov[l2][h2])):
                        scores[kind][l1, h1, l2, h2] = (
                            torch.linalg.norm(left @ right) / torch.linalg.norm(left) /
                            torch.linalg.norm(right))
    return {kind: s.tolist() for kind, s in scores.items()}


def copying(layers, embed, unembed):
    if embed is None:
        return None
    result = []
    for layer in layers:
        for h in range(layer["q"].shape[0]):
            full = embed @ layer["v"][h] @ layer["o"][h] @ unembed  # [V, V]
            eig = torch.linalg.eigvals(full)
            result.append(float(eig.real.sum() / eig.abs().sum()))
    return result


def main():
    golden = {}
    for model in CHECKPOINTS:
        layers, info = family_weights(model)
        layers, embed, unembed = process(layers, info)
        golden[model] = {"composition": composition(layers),
                         "copying": copying(layers, embed, unembed)}
    with open(OUT, "w") as f:
        f.write(json.dumps(golden, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
