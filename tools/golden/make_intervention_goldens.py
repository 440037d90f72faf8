#!/usr/bin/python3
"""Goldens for head ablation and activation patching (issue 21 §3), from PyTorch hooks.

    /usr/bin/python3 tools/golden/make_intervention_goldens.py

Builds the GPT-2 and Qwen2 (Llama family) golden checkpoints of tests/data/models as torch.nn
modules written the way transformers' modeling_gpt2.py and modeling_qwen2.py write them
(float64; Conv1D weights transposed into nn.Linear), independent of Headlight's engine, and
intervenes the way interpretability code does on a Hugging Face model, with hooks:

  * a forward pre-hook on the attention's output projection (GPT2Attention.c_proj,
    Qwen2Attention.o_proj) edits the slice [h·d, (h+1)·d) of its input, head h's output:
    zero it, set every position to its mean over the text, to its mean over every position of
    a corpus of texts (mean-corpus; the means read by the same hook in one clean run per text),
    or replace it by another run's (the clean run's, or a source text's for replace);
  * a forward pre-hook on decoder layer l replaces hidden_states[:, p] (the residual stream
    entering layer l) by the clean run's.

Logits are the tied LM head, final norm output · wteᵀ.  Writes

    tests/data/interventions/golden.json               cases: model, ids, ablated heads (with the
                                                        replace source's ids or the corpus's id
                                                        lists), patch setup
    tests/data/interventions/golden/<case>.safetensors  clean_logits, ablated_logits [T, V]
                                                        (mean-corpus: head_means [L, H, d] too) or
                                                        recovered, difference [L, T | H]

Deterministic; the output folder is deleted and rewritten.  Before writing, the clean logits of
each model are checked against models_ref.py (numpy) through its hidden states.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models_ref as M  # noqa: E402
import safetensors_io as S  # noqa: E402

torch.set_default_dtype(torch.float64)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "tests", "data", "models")
OUT = os.path.join(REPO, "tests", "data", "interventions")


def load_weights(folder):
    """The checkpoint's tensors, GPT2LMHeadModel's "transformer." prefix dropped."""
    weights = S.load_folder_f64(folder)
    return {k.removeprefix("transformer."): torch.from_numpy(v) for k, v in weights.items()}


def linear(weight, bias=None):
    m = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    with torch.no_grad():
        m.weight.copy_(weight)
        if bias is not None:
            m.bias.copy_(bias)
    return m


class RMSNorm(nn.Module):  # Qwen2RMSNorm
    def __init__(self, weight, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(weight.clone()), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def layer_norm(weight, bias, eps):
    m = nn.LayerNorm(weight.shape[0], eps=eps)
    with torch.no_grad():
        m.weight.copy_(weight)
        m.bias.copy_(bias)
    return m


class GPT2Attention(nn.Module):
    def __init__(self, W, p, D, H):
        super().__init__()
        self.H, self.d = H, D // H
        self.c_attn = linear(W[p + "c_attn.weight"].T, W[p + "c_attn.bias"])  # Conv1D [in, out]
        self.c_proj = linear(W[p + "c_proj.weight"].T, W[p + "c_proj.bias"])

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.c_attn(x).split(self.H * self.d, dim=2)
        q, k, v = (t.view(1, T, self.H, self.d).transpose(1, 2) for t in (q, k, v))
        w = q @ k.transpose(-1, -2) / self.d ** 0.5
        w = w.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), torch.finfo(w.dtype).min)
        o = (F.softmax(w, dim=-1) @ v).transpose(1, 2).reshape(1, T, self.H * self.d)
        return self.c_proj(o)


class GPT2Block(nn.Module):
    def __init__(self, W, p, cfg):
        super().__init__()
        D, eps = cfg["n_embd"], cfg["layer_norm_epsilon"]
        self.ln_1 = layer_norm(W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        self.attn = GPT2Attention(W, p + "attn.", D, cfg["n_head"])
        self.ln_2 = layer_norm(W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        self.c_fc = linear(W[p + "mlp.c_fc.weight"].T, W[p + "mlp.c_fc.bias"])
        self.c_proj = linear(W[p + "mlp.c_proj.weight"].T, W[p + "mlp.c_proj.bias"])

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2LMHead(nn.Module):
    def __init__(self, W, cfg):
        super().__init__()
        self.wte, self.wpe = W["wte.weight"], W["wpe.weight"]
        self.layers = nn.ModuleList(GPT2Block(W, f"h.{i}.", cfg) for i in range(cfg["n_layer"]))
        self.ln_f = layer_norm(W["ln_f.weight"], W["ln_f.bias"], cfg["layer_norm_epsilon"])

    def out_proj(self, layer):
        return self.layers[layer].attn.c_proj

    def forward(self, ids):
        x = (self.wte[ids] + self.wpe[: len(ids)])[None]
        for block in self.layers:
            x = block(x)
        return (self.ln_f(x) @ self.wte.T)[0]


class Qwen2Attention(nn.Module):
    def __init__(self, W, p, cfg):
        super().__init__()
        self.H, self.KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
        self.d = cfg["hidden_size"] // self.H
        self.theta = cfg["rope_theta"]
        self.q_proj = linear(W[p + "q_proj.weight"], W[p + "q_proj.bias"])
        self.k_proj = linear(W[p + "k_proj.weight"], W[p + "k_proj.bias"])
        self.v_proj = linear(W[p + "v_proj.weight"], W[p + "v_proj.bias"])
        self.o_proj = linear(W[p + "o_proj.weight"])

    def forward(self, x):
        T, d = x.shape[1], self.d
        q = self.q_proj(x).view(1, T, self.H, d).transpose(1, 2)
        k = self.k_proj(x).view(1, T, self.KV, d).transpose(1, 2)
        v = self.v_proj(x).view(1, T, self.KV, d).transpose(1, 2)
        inv_freq = 1.0 / (self.theta ** (torch.arange(0, d, 2, dtype=torch.int64).double() / d))
        emb = torch.cat([torch.outer(torch.arange(T).double(), inv_freq)] * 2, dim=-1)
        cos, sin = emb.cos(), emb.sin()

        def rotate_half(t):
            return torch.cat((-t[..., d // 2:], t[..., : d // 2]), dim=-1)

        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = self.H // self.KV  # repeat_kv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        w = q @ k.transpose(2, 3) / d ** 0.5
        w = w.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), torch.finfo(w.dtype).min)
        o = (F.softmax(w, dim=-1) @ v).transpose(1, 2).reshape(1, T, self.H * d)
        return self.o_proj(o)


class Qwen2Layer(nn.Module):
    def __init__(self, W, p, cfg):
        super().__init__()
        eps = cfg["rms_norm_eps"]
        self.input_layernorm = RMSNorm(W[p + "input_layernorm.weight"], eps)
        self.self_attn = Qwen2Attention(W, p + "self_attn.", cfg)
        self.post_attention_layernorm = RMSNorm(W[p + "post_attention_layernorm.weight"], eps)
        self.gate_proj = linear(W[p + "mlp.gate_proj.weight"])
        self.up_proj = linear(W[p + "mlp.up_proj.weight"])
        self.down_proj = linear(W[p + "mlp.down_proj.weight"])

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Qwen2LMHead(nn.Module):
    def __init__(self, W, cfg):
        super().__init__()
        self.embed = W["model.embed_tokens.weight"]
        self.layers = nn.ModuleList(Qwen2Layer(W, f"model.layers.{i}.", cfg)
                                    for i in range(cfg["num_hidden_layers"]))
        self.norm = RMSNorm(W["model.norm.weight"], cfg["rms_norm_eps"])

    def out_proj(self, layer):
        return self.layers[layer].self_attn.o_proj

    def forward(self, ids):
        x = self.embed[ids][None]
        for layer in self.layers:
            x = layer(x)
        return (self.norm(x) @ self.embed.T)[0]


def build(name):
    folder = os.path.join(MODELS, name)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    W = load_weights(folder)
    model = GPT2LMHead(W, cfg) if cfg["model_type"] == "gpt2" else Qwen2LMHead(W, cfg)
    return model.eval(), cfg


def heads_and_dim(model):
    attn = model.layers[0].attn if isinstance(model, GPT2LMHead) else model.layers[0].self_attn
    return attn.H, attn.d


def run(model, ids, head_edits=(), residual_edits=(), capture=None):
    """head_edits: (layer, head, fn(o_h [T, d]) -> [T, d]); residual_edits: (layer, pos, row)."""
    H, d = heads_and_dim(model)
    handles = []

    def head_hook(edits, layer):
        def hook(module, args):
            o = args[0].clone()
            for head, fn in edits:
                o[0, :, head * d:(head + 1) * d] = fn(o[0, :, head * d:(head + 1) * d])
            if capture is not None:
                capture.setdefault("heads", {})[layer] = o[0].clone()
            return (o,)
        return hook

    def residual_hook(edits, layer):
        def hook(module, args):
            x = args[0].clone()
            for pos, row in edits:
                x[0, pos] = row
            if capture is not None:
                capture.setdefault("residual", {})[layer] = x[0].clone()
            return (x,)
        return hook

    for layer in range(len(model.layers)):
        edits = [(h, fn) for (l, h, fn) in head_edits if l == layer]
        handles.append(model.out_proj(layer).register_forward_pre_hook(head_hook(edits, layer)))
        rows = [(p, r) for (l, p, r) in residual_edits if l == layer]
        handles.append(model.layers[layer].register_forward_pre_hook(residual_hook(rows, layer)))
    try:
        with torch.no_grad():
            return model(torch.tensor(ids))
    finally:
        for h in handles:
            h.remove()


ZERO = lambda o: torch.zeros_like(o)  # noqa: E731
MEAN = lambda o: o.mean(0, keepdim=True).expand_as(o)  # noqa: E731


def head_outputs(model, ids):
    """Every head's output [L, H, T, d] of one clean run, as the output projection reads it."""
    H, d = heads_and_dim(model)
    capture = {}
    run(model, ids, capture=capture)
    return torch.stack([capture["heads"][l].view(len(ids), H, d).transpose(0, 1)
                        for l in range(len(model.layers))])


def corpus_means(model, corpus):
    """[L, H, d]: each head's output averaged over every position of every text."""
    return torch.cat([head_outputs(model, ids) for ids in corpus], dim=2).mean(2)


def ablation_case(name, model_name, model, ids, heads, source=None, corpus=None):
    """heads: (layer, head, mode); replace takes `source`'s outputs, mean-corpus `corpus`'s mean."""
    outputs = head_outputs(model, source) if source else None
    means = corpus_means(model, corpus) if corpus else None

    def edit(l, h, mode):
        if mode == "replace":
            return lambda o: outputs[l, h]
        if mode == "mean-corpus":
            return lambda o: means[l, h].expand_as(o)
        return ZERO if mode == "zero" else MEAN

    edits = [(l, h, edit(l, h, mode)) for (l, h, mode) in heads]
    clean, ablated = run(model, ids), run(model, ids, head_edits=edits)
    case = {"name": name, "kind": "ablation", "model": model_name, "ids": ids,
            "heads": [{"layer": l, "head": h, "mode": mode} for (l, h, mode) in heads]}
    tensors = {"clean_logits": clean, "ablated_logits": ablated}
    if source:
        case["source_ids"] = source
    if corpus:
        case["corpus"] = corpus
        tensors["head_means"] = means
    return case, tensors


def patch_case(name, model_name, model, clean_ids, corrupt_ids, grid):
    capture = {}
    clean = run(model, clean_ids, capture=capture)
    corrupt = run(model, corrupt_ids)
    last = len(clean_ids) - 1
    target = int(clean[last].argmax())
    order = torch.argsort(corrupt[last], descending=True)
    foil = int(order[0]) if int(order[0]) != target else int(order[1])
    diff = lambda logits: float(logits[last, target] - logits[last, foil])  # noqa: E731
    clean_d, corrupt_d = diff(clean), diff(corrupt)
    H, d = heads_and_dim(model)
    L, cols = len(model.layers), len(clean_ids) if grid == "layers_positions" else H
    difference = np.zeros((L, cols))
    for l in range(L):
        for c in range(cols):
            if grid == "layers_positions":
                logits = run(model, corrupt_ids, residual_edits=[(l, c, capture["residual"][l][c])])
            else:
                source = capture["heads"][l][:, c * d:(c + 1) * d]
                logits = run(model, corrupt_ids, head_edits=[(l, c, lambda o, s=source: s)])
            difference[l, c] = diff(logits)
    case = {"name": name, "kind": "patch", "model": model_name, "grid": grid, "clean_ids": clean_ids,
            "corrupt_ids": corrupt_ids, "target": target, "foil": foil,
            "clean_difference": clean_d, "corrupt_difference": corrupt_d}
    recovered = (difference - corrupt_d) / (clean_d - corrupt_d)
    return case, {"difference": difference, "recovered": recovered}


def check_against_numpy(model_name, model, cfg, ids):
    folder = os.path.join(MODELS, model_name)
    W = {k: v.numpy() for k, v in load_weights(folder).items()}
    forward = M.gpt2_forward if cfg["model_type"] == "gpt2" else M.llama_forward
    ref = forward(W, cfg, np.array(ids), np.ones(len(ids), dtype=np.int64))
    table = W["wte.weight"] if "wte.weight" in W else W["model.embed_tokens.weight"]
    want = ref["last_hidden_state"] @ table.T
    got = run(model, ids).numpy()
    worst = float(np.abs(want - got).max())
    print(f"{model_name}: torch hooks model vs models_ref.py logits, max |diff| {worst:.2e}")
    if worst > 1e-9:
        sys.exit(f"{model_name}: the torch module disagrees with models_ref.py")


# Token ids of each model's golden "punctuation" case, and a corruption of one of them.
INPUTS = {
    "gpt2": ([489, 11, 659, 0, 399, 484, 453, 13], [489, 11, 659, 0, 399, 30, 453, 13]),
    "qwen2": ([489, 11, 659, 0, 399, 484, 220, 18], [489, 11, 659, 0, 399, 30, 220, 18]),
}
ABLATIONS = {
    "zero": [(0, 1, "zero"), (1, 2, "zero")],
    "mean": [(0, 3, "mean"), (1, 0, "mean"), (1, 2, "zero")],
}
# Three texts of 5 to 9 tokens for mean-corpus: the means pool 21 positions.
CORPUS = [[12, 407, 33, 5, 98, 61, 250, 7, 300], [489, 11, 659, 0, 399], [42, 42, 17, 230, 88, 3, 641]]
CORPUS_MEAN = [(0, 3, "mean-corpus"), (1, 0, "mean-corpus"), (1, 2, "zero")]
REPLACE = [(0, 2, "replace"), (1, 1, "replace")]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(os.path.join(OUT, "golden"))
    cases = []
    for model_name, (clean_ids, corrupt_ids) in INPUTS.items():
        model, cfg = build(model_name)
        check_against_numpy(model_name, model, cfg, clean_ids)
        made = [ablation_case(f"{model_name}_ablate_{k}", model_name, model, clean_ids, v)
                for k, v in ABLATIONS.items()]
        made.append(ablation_case(f"{model_name}_ablate_mean_corpus", model_name, model, clean_ids,
                                  CORPUS_MEAN, corpus=CORPUS))
        made.append(ablation_case(f"{model_name}_ablate_replace", model_name, model, clean_ids,
                                  REPLACE, source=corrupt_ids))
        made += [patch_case(f"{model_name}_patch_{g}", model_name, model, clean_ids, corrupt_ids, g)
                 for g in ("layers_positions", "layers_heads")]
        for case, tensors in made:
            S.save(os.path.join(OUT, "golden", case["name"] + ".safetensors"),
                   {k: (np.asarray(v, dtype=np.float64), "F32") for k, v in tensors.items()})
            cases.append(case)
    with open(os.path.join(OUT, "golden.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tools/golden/make_intervention_goldens.py", "cases": cases}, f,
                  indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
