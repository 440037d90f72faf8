#!/usr/bin/python3
"""Regenerate the sparse-autoencoder goldens under tests/data/sae/.

    /usr/bin/python3 tools/golden/make_sae_goldens.py

Needs python3-numpy and python3-torch (Debian).  Independent of the engine: small random SAEs
are written in SAELens's on-disk layouts (cfg.json + sae_weights.safetensors, in the 6.x layout
and the older flat one), the residual stream at each SAE's hook comes from the float64 reference
forward passes of models_ref.py on the golden checkpoints of tests/data/models, and the SAE is
applied by the PyTorch code below, written from SAELens's inference classes (sae_lens/saes/
standard_sae.py, jumprelu_sae.py, topk_sae.py, gated_sae.py and sae.py's process_sae_in and
_setup_activation_normalization, 6.x), in float64:

  sae_in   = normalise(x) - b_dec * apply_b_dec_to_input
  standard relu(sae_in @ W_enc + b_enc)
  jumprelu relu(p) * (p > threshold),  p = sae_in @ W_enc + b_enc
  topk     p (* ||W_dec rows|| with rescale_acts_by_decoder_norm), torch.topk(k) kept, relu
  gated    (sae_in @ W_enc + b_gate > 0) * relu(sae_in @ (W_enc * exp(r_mag)) + b_mag)
  sae_out  = denormalise(feature_acts (/ ||W_dec rows|| with the rescale) @ W_dec + b_dec)

normalise: constant_norm_rescale x * sqrt(d_in) / ||x||; layer_norm (x - mean) / (std + 1e-5)
with torch's unbiased std, undone as y * std + mean; expected_average_only_in x * s with s from
activation_scaler.json (what SAELens's fold_activation_norm_scaling_factor folds in), undone / s.

Llama Scope (hyperparams.json + checkpoints/final.safetensors, nn.Linear orientation) follows
SAELens's llama_scope loader with the release's norm scaling factor folded: jumprelu, W_enc =
encoder.weight^T, W_dec = decoder.weight^T, no b_dec on the input, the input times s = sqrt(d_model)
/ dataset_average_activation_norm.in (the output divided by s), one threshold jump_relu_threshold * s.

Hooks (TransformerLens names): blocks.L.hook_resid_pre is hidden_states[L]; blocks.L.hook_resid_post
is hidden_states[L + 1] except for the last block, whose output HF's hidden_states give after the
final norm.  For that one the reference runs the model with one more block whose output
projections are zero (it adds exactly 0 to the residual), so that hidden_states[L] of the longer
model is the last real block's output before the final norm.

Thresholds are kept away from every value they compare (margin 1e-3): a bias or threshold is put
in the middle of a gap between the sorted pre-activations of the text, and a TopK SAE is redrawn
until every token's k-th and (k+1)-th largest differ by more than the margin, so float32 rounding
in the engine cannot flip a feature.

Writes tests/data/sae/<case>/ (the SAE folders), tests/data/sae/expected/<case>.safetensors
(sae_in, feature_acts, sae_out as float32) and tests/data/sae/golden.json (the token ids, each
case's model, hook and reconstruction quality).  Deterministic; the files are rewritten.
"""
import json
import math
import os
import shutil
import sys
import zipfile

import numpy as np
import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models_ref as M  # noqa: E402
import safetensors_io as S  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data")
MODELS = os.path.join(ROOT, "models")
OUT = os.path.join(ROOT, "sae")
MARGIN = 1e-3
# 24 ids of the gpt2_plain golden's "rare" case; in range for qwen2's vocabulary (704) too
IDS = [57, 88, 89, 549, 85, 301, 343, 64, 379, 455, 253, 268, 220, 138, 102, 158, 222, 233, 82,
       78, 427, 126, 255, 71]

CASES = [
    # name, model, layout, architecture, hook, normalisation, apply_b_dec, options
    dict(name="gpt2_plain_standard_pre0", model="gpt2_plain", layout="flat",
         architecture="standard", hook="blocks.0.hook_resid_pre", norm="none", b_dec_in=True,
         d_sae=48, seed=1, ones_scaling_factor=True),
    dict(name="gpt2_plain_jumprelu_pre1", model="gpt2_plain", layout="6", architecture="jumprelu",
         hook="blocks.1.hook_resid_pre", norm="none", b_dec_in=False, d_sae=40, seed=2),
    dict(name="gpt2_plain_topk_post2", model="gpt2_plain", layout="6", architecture="topk",
         hook="blocks.2.hook_resid_post", norm="constant_norm_rescale", b_dec_in=True, d_sae=40,
         seed=3, k=6, rescale=True),
    dict(name="gpt2_plain_gated_post1", model="gpt2_plain", layout="flat", architecture="gated",
         hook="blocks.1.hook_resid_post", norm="layer_norm", b_dec_in=True, d_sae=36, seed=4),
    dict(name="gpt2_plain_topk_flat_pre2", model="gpt2_plain", layout="flat",
         architecture="topk", hook="blocks.2.hook_resid_pre", norm="none", b_dec_in=True,
         d_sae=32, seed=5, k=4, rescale=False, dtype="BF16"),
    dict(name="qwen2_jumprelu_post2", model="qwen2", layout="6", architecture="jumprelu",
         hook="blocks.2.hook_resid_post", norm="expected_average_only_in", b_dec_in=True,
         d_sae=56, seed=6, scaling_factor=0.75),
    # Llama Scope (hyperparams.json + checkpoints/final.safetensors, nn.Linear orientation), as
    # SAELens's llama_scope loader converts it: jumprelu with one threshold jump_relu_threshold * s
    # for every feature, b_dec not applied to the input, the input times s = sqrt(d_model) /
    # dataset_average_activation_norm.in (the release's norm_scaling_factor, folded)
    dict(name="qwen2_llama_scope_post1", model="qwen2", layout="llama_scope",
         architecture="jumprelu", hook="blocks.1.hook_resid_post",
         norm="expected_average_only_in", b_dec_in=False, d_sae=64, seed=7, dtype="BF16"),
    # Gemma Scope 1 (params.npz as numpy.savez writes it, ZIP64 local headers included), as
    # SAELens's gemma_2 loader converts it: jumprelu, b_dec not applied to the input, no
    # normalisation; the hook comes from the release's name and layer_L in the folder's path
    dict(name="gemma2_gemma_scope_res1", model="gemma2", layout="gs1", architecture="jumprelu",
         hook="blocks.1.hook_resid_post", norm="none", b_dec_in=False, d_sae=48, seed=8,
         folder="gemma-scope-2b-pt-res/layer_1/width_48/average_l0_12"),
    # the last block's MLP output, after Gemma 2's post_feedforward_layernorm
    dict(name="gemma2_gemma_scope_mlp3", model="gemma2", layout="gs1", architecture="jumprelu",
         hook="blocks.3.hook_mlp_out", norm="none", b_dec_in=False, d_sae=40, seed=9,
         folder="gemma-scope-2b-pt-mlp/layer_3/width_40/average_l0_9"),
    # the heads before o_proj, [T, H * d_head] = [T, 64]; W_enc saved in Fortran order
    dict(name="gemma2_gemma_scope_att0", model="gemma2", layout="gs1", architecture="jumprelu",
         hook="blocks.0.attn.hook_z", norm="none", b_dec_in=False, d_sae=56, seed=10,
         fortran=True, folder="gemma-scope-2b-pt-att/layer_0/width_56/average_l0_11"),
    # Gemma Scope 2 (config.json with Hugging Face module names, params.safetensors with w_enc,
    # w_dec, b_enc, b_dec, threshold): the last block's output, before the final norm
    dict(name="gemma3_gemma_scope_2_res2", model="gemma3", layout="gs2", architecture="jumprelu",
         hook="model.layers.2.output", norm="none", b_dec_in=False, d_sae=48, seed=11,
         folder="gemma-scope-2-1b-pt/resid_post/layer_2_width_48_l0_small"),
    dict(name="gemma3_gemma_scope_2_att1", model="gemma3", layout="gs2", architecture="jumprelu",
         hook="model.layers.1.self_attn.o_proj.input", norm="none", b_dec_in=False, d_sae=40,
         seed=12, folder="gemma-scope-2-1b-pt/attn_out/layer_1_width_40_l0_small"),
    # a transcoder with an affine skip: reads the MLP's input (after pre_feedforward_layernorm),
    # reconstructs its output (after post_feedforward_layernorm): f @ w_dec + b_dec + x @ W_skip
    dict(name="gemma3_gemma_scope_2_transcoder1", model="gemma3", layout="gs2",
         architecture="jumprelu", hook="model.layers.1.pre_feedforward_layernorm.output",
         hook_out="model.layers.1.post_feedforward_layernorm.output", norm="none",
         b_dec_in=False, d_sae=64, seed=13,
         folder="gemma-scope-2-1b-pt/transcoder/layer_1_width_64_l0_small"),
    # SAELens 6.x SAEs at the other TransformerLens hooks, on Gemma 2: attention's output after
    # post_attention_layernorm, and the residual stream between attention and MLP
    dict(name="gemma2_jumprelu_attn_out2", model="gemma2", layout="6", architecture="jumprelu",
         hook="blocks.2.hook_attn_out", norm="none", b_dec_in=True, d_sae=40, seed=14),
    dict(name="gemma2_standard_resid_mid1", model="gemma2", layout="6", architecture="standard",
         hook="blocks.1.hook_resid_mid", norm="none", b_dec_in=True, d_sae=36, seed=15),
]

# Gemma's sub-layer tensors (models_ref.gemma_forward's taps) by hook name: TransformerLens's, and
# the Hugging Face module names Gemma Scope 2's config.json gives
GEMMA_TAPS = {
    "hook_resid_post": "resid_post", "hook_resid_mid": "resid_mid", "hook_attn_out": "attn_out",
    "hook_mlp_out": "mlp_out", "attn.hook_z": "hook_z", "output": "resid_post",
    "self_attn.o_proj.input": "hook_z", "post_feedforward_layernorm.output": "mlp_out",
    "pre_feedforward_layernorm.output": "mlp_in",
}


# ------------------------------------------------------------------------------------------
# the residual stream at a hook, from models_ref.py
# ------------------------------------------------------------------------------------------

def with_identity_block(model, cfg, W):
    """cfg and W with one more block that adds exactly zero to the residual stream."""
    cfg = dict(cfg)
    W = dict(W)
    if model.startswith("gpt2"):
        L, D = cfg["n_layer"], cfg["n_embd"]
        inner = cfg.get("n_inner") or 4 * D
        p = f"h.{L}."
        W[p + "ln_1.weight"], W[p + "ln_1.bias"] = np.ones(D), np.zeros(D)
        W[p + "ln_2.weight"], W[p + "ln_2.bias"] = np.ones(D), np.zeros(D)
        W[p + "attn.c_attn.weight"], W[p + "attn.c_attn.bias"] = np.zeros((D, 3 * D)), np.zeros(3 * D)
        W[p + "attn.c_proj.weight"], W[p + "attn.c_proj.bias"] = np.zeros((D, D)), np.zeros(D)
        W[p + "mlp.c_fc.weight"], W[p + "mlp.c_fc.bias"] = np.zeros((D, inner)), np.zeros(inner)
        W[p + "mlp.c_proj.weight"], W[p + "mlp.c_proj.bias"] = np.zeros((inner, D)), np.zeros(D)
        cfg["n_layer"] = L + 1
    else:
        L, D = cfg["num_hidden_layers"], cfg["hidden_size"]
        H, KV = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
        d = cfg.get("head_dim") or D // H
        inner = cfg["intermediate_size"]
        p = f"model.layers.{L}."
        a = p + "self_attn."
        W[p + "input_layernorm.weight"] = np.ones(D)
        W[p + "post_attention_layernorm.weight"] = np.ones(D)
        W[a + "q_proj.weight"], W[a + "q_proj.bias"] = np.zeros((H * d, D)), np.zeros(H * d)
        W[a + "k_proj.weight"], W[a + "k_proj.bias"] = np.zeros((KV * d, D)), np.zeros(KV * d)
        W[a + "v_proj.weight"], W[a + "v_proj.bias"] = np.zeros((KV * d, D)), np.zeros(KV * d)
        W[a + "o_proj.weight"] = np.zeros((D, H * d))
        W[p + "mlp.gate_proj.weight"] = np.zeros((inner, D))
        W[p + "mlp.up_proj.weight"] = np.zeros((inner, D))
        W[p + "mlp.down_proj.weight"] = np.zeros((D, inner))
        cfg["num_hidden_layers"] = L + 1
    return cfg, W


def hidden_states(model, cfg, W, ids):
    mask = [1] * len(ids)
    if cfg["model_type"] == "gpt2":
        return M.gpt2_forward(W, cfg, ids, mask)["hidden_states"]
    return M.llama_forward(W, cfg, ids, mask)["hidden_states"]


def gemma_tap(model, hook, ids):
    """The tensor at `hook` (blocks.L.NAME or model.layers.L.NAME) of a Gemma reference pass."""
    folder = os.path.join(MODELS, model)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    taps = {}
    M.gemma_forward(S.load_folder_f64(folder), cfg, ids, [1] * len(ids), taps)
    parts = hook.split(".")
    layer, name = (int(parts[1]), ".".join(parts[2:])) if parts[0] == "blocks" else (
        int(parts[2]), ".".join(parts[3:]))
    return taps[(layer, GEMMA_TAPS[name])]


def residual_at(model, hook, ids):
    if model.startswith("gemma"):
        return gemma_tap(model, hook, ids)
    folder = os.path.join(MODELS, model)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    W = S.load_folder_f64(folder)
    layers = cfg.get("n_layer") or cfg["num_hidden_layers"]
    _, layer, point = hook.split(".")
    layer = int(layer)
    if point == "hook_resid_pre":
        return hidden_states(model, cfg, W, ids)[layer]
    assert point == "hook_resid_post"
    if layer < layers - 1:
        return hidden_states(model, cfg, W, ids)[layer + 1]
    cfg1, W1 = with_identity_block(model, cfg, W)
    hs = hidden_states(model, cfg1, W1, ids)
    # the identity block's input is the last real block's output, before the final norm
    return hs[layers]


# ------------------------------------------------------------------------------------------
# SAELens's inference, in torch float64
# ------------------------------------------------------------------------------------------

class Normaliser:
    def __init__(self, kind, d_in, scaling_factor=None):
        self.kind, self.d_in, self.s = kind, d_in, scaling_factor

    def into(self, x):
        if self.kind == "constant_norm_rescale":
            self.coeff = (self.d_in ** 0.5) / x.norm(dim=-1, keepdim=True)
            return x * self.coeff
        if self.kind == "layer_norm":
            mu = x.mean(dim=-1, keepdim=True)
            x = x - mu
            std = x.std(dim=-1, keepdim=True)
            self.mu, self.std = mu, std
            return x / (std + 1e-5)
        if self.kind == "expected_average_only_in" and self.s is not None:
            return x * self.s
        return x

    def out(self, y):
        if self.kind == "constant_norm_rescale":
            return y / self.coeff
        if self.kind == "layer_norm":
            return y * self.std + self.mu
        if self.kind == "expected_average_only_in" and self.s is not None:
            return y / self.s
        return y


def sae_in_of(case, P, x):
    n = Normaliser(case["norm"], x.shape[-1], case.get("scaling_factor"))
    sae_in = n.into(x) - P["b_dec"] * (1.0 if case["b_dec_in"] else 0.0)
    return n, sae_in


def pre_activations(case, P, sae_in):
    """The values the architecture compares: standard/jumprelu/topk p, gated (gate, magnitude)."""
    a = case["architecture"]
    if a == "gated":
        gate = sae_in @ P["W_enc"] + P["b_gate"]
        mag = sae_in @ (P["W_enc"] * P["r_mag"].exp()) + P["b_mag"]
        return gate, mag
    p = sae_in @ P["W_enc"] + P["b_enc"]
    if a == "topk" and case.get("rescale"):
        p = p * P["W_dec"].norm(dim=-1)
    return p, None


def encode(case, P, sae_in):
    a = case["architecture"]
    p, mag = pre_activations(case, P, sae_in)
    if a == "standard":
        return torch.relu(p)
    if a == "jumprelu":
        return torch.relu(p) * (p > P["threshold"]).to(p.dtype)
    if a == "topk":
        values, indices = torch.topk(p, k=case["k"], dim=-1, sorted=False)
        return torch.zeros_like(p).scatter(-1, indices, values.relu())
    if a == "gated":
        return (p > 0).to(p.dtype) * torch.relu(mag)
    raise ValueError(a)


def decode(case, P, n, f, x):
    """x: the SAE's input as given, which a transcoder's affine skip reads."""
    if case["architecture"] == "topk" and case.get("rescale"):
        f = f / P["W_dec"].norm(dim=-1)
    y = n.out(f @ P["W_dec"] + P["b_dec"])
    return y + x @ P["W_skip"] if "W_skip" in P else y


# ------------------------------------------------------------------------------------------
# random SAEs with every comparison away from its threshold
# ------------------------------------------------------------------------------------------

def gap_midpoint(values, rng, lo_q=0.25, hi_q=0.8):
    """A point between two consecutive sorted `values`, more than MARGIN from both, near a random
    quantile in [lo_q, hi_q] of them."""
    v = np.sort(values)
    target = rng.uniform(lo_q, hi_q) * (len(v) - 1)
    best = None
    for i in range(len(v) - 1):
        if v[i + 1] - v[i] > 4 * MARGIN:
            if best is None or abs(i - target) < abs(best - target):
                best = i
    assert best is not None, "no gap"
    return 0.5 * (v[best] + v[best + 1])


def make_params(case, x):
    rng = np.random.default_rng(case["seed"])
    d_in, d_sae = x.shape[1], case["d_sae"]
    t = lambda a: torch.tensor(np.asarray(a, dtype=np.float64))  # noqa: E731
    scale = 1.0 / math.sqrt(d_in)
    x_scale = float(np.sqrt((x.numpy() ** 2).mean()))
    P = {
        "W_enc": t(rng.normal(0, scale, (d_in, d_sae))),
        "W_dec": t(rng.normal(0, scale, (d_sae, d_in))),
        "b_dec": t(rng.normal(0, 0.1 * x_scale if case["norm"] == "none" else 0.1, d_in)),
    }
    a = case["architecture"]
    if a == "gated":
        P["r_mag"] = t(rng.normal(0, 0.3, d_sae))
    if "hook_out" in case:
        P["W_skip"] = t(rng.normal(0, 0.3 * scale, (d_in, d_in)))
    P = round_params(case, P)
    n, sae_in = sae_in_of(case, P, x)
    if a in ("standard", "jumprelu"):
        z = (sae_in @ P["W_enc"]).numpy()
        if a == "standard":
            P["b_enc"] = t([-gap_midpoint(z[:, j], rng) for j in range(d_sae)])
        elif case["layout"] == "llama_scope":
            P["b_enc"] = t(rng.normal(0, 0.1, d_sae))
            P = round_params(case, P)
            p = z + P["b_enc"].numpy()
            # one threshold for every feature, in a gap of all the pre-activations above 8 margins
            flat = p.ravel()
            case["threshold"] = gap_midpoint(flat[flat > 8 * MARGIN], rng, 0.5, 0.8)
            P["threshold"] = t(np.full(d_sae, case["threshold"]))
        else:
            P["b_enc"] = t(rng.normal(0, 0.1, d_sae))
            p = z + P["b_enc"].numpy()
            # positive thresholds in a gap between two of the feature's values above 8 margins
            # (so ReLU is moot and every value is more than a margin away); a feature with fewer
            # than two such values gets one above them all and never fires
            thr = []
            for j in range(d_sae):
                positive = p[:, j][p[:, j] > 8 * MARGIN]
                if len(positive) >= 2:
                    thr.append(gap_midpoint(positive, rng, 0.0, 0.7))
                else:
                    thr.append(float(np.abs(p[:, j]).max()) + 1.0)
            P["threshold"] = t(thr)
    elif a == "gated":
        z = (sae_in @ P["W_enc"]).numpy()
        zm = (sae_in @ (P["W_enc"] * P["r_mag"].exp())).numpy()
        P["b_gate"] = t([-gap_midpoint(z[:, j], rng) for j in range(d_sae)])
        P["b_mag"] = t([-gap_midpoint(zm[:, j], rng, 0.05, 0.4) for j in range(d_sae)])
    elif a == "topk":
        for _ in range(1000):
            P["b_enc"] = t(rng.normal(0.5, 0.5, d_sae))
            P = round_params(case, P)
            p, _ = pre_activations(case, P, sae_in)
            top = torch.sort(p, dim=-1, descending=True).values
            k = case["k"]
            gaps = (top[:, k - 1] - top[:, k]).min().item()
            if gaps > MARGIN and (top[:, k - 1].abs() > MARGIN).all():
                break
        else:
            raise RuntimeError("no TopK draw with clear gaps")
    P = round_params(case, P)
    check_margins(case, P, sae_in)
    return P


def round_params(case, P):
    """The parameters as the stored dtype gives them back (float32 or bfloat16), in float64.
    Llama Scope's threshold is not stored: it is hyperparams.json's number times s, in float64."""
    dtype = case.get("dtype", "F32")
    return {k: v if (k == "threshold" and case["layout"] == "llama_scope") else
            torch.tensor(S.round_to_dtype(v.numpy(), dtype).astype(np.float64))
            for k, v in P.items()}


def check_margins(case, P, sae_in):
    p, mag = pre_activations(case, P, sae_in)
    a = case["architecture"]
    if a == "standard":
        assert p.abs().min() > MARGIN
    elif a == "jumprelu":
        assert (p - P["threshold"]).abs().min() > MARGIN
        assert (P["threshold"] > MARGIN).all()
    elif a == "gated":
        assert p.abs().min() > MARGIN and mag.abs().min() > MARGIN
    else:
        top = torch.sort(p, dim=-1, descending=True).values
        k = case["k"]
        assert (top[:, k - 1] - top[:, k]).min() > MARGIN and (top[:, k - 1].abs() > MARGIN).all()


# ------------------------------------------------------------------------------------------
# the on-disk layouts
# ------------------------------------------------------------------------------------------

def cfg_json(case, d_in):
    layer = int(case["hook"].split(".")[1])
    if case["layout"] == "6":
        cfg = {
            "architecture": case["architecture"],
            "d_in": d_in,
            "d_sae": case["d_sae"],
            "dtype": "float32",
            "device": "cpu",
            "apply_b_dec_to_input": case["b_dec_in"],
            "normalize_activations": case["norm"],
            "reshape_activations": "none",
            "metadata": {
                "sae_lens_version": "6.18.0",
                "sae_lens_training_version": "6.18.0",
                "model_name": case["model"],
                "hook_name": case["hook"],
                "hook_head_index": None,
                "prepend_bos": True,
                "dataset_path": "tests/data/sae (random weights)",
                "context_size": 128,
                "model_class_name": "HookedTransformer",
                "model_from_pretrained_kwargs": {},
            },
        }
        if case["architecture"] == "topk":
            cfg["k"] = case["k"]
            cfg["rescale_acts_by_decoder_norm"] = case["rescale"]
        return cfg
    # pre-6 flat layout (SAELens 3.x-5.x): hook and training fields at the top level
    cfg = {
        "model_name": case["model"],
        "hook_layer": layer,
        "d_in": d_in,
        "d_sae": case["d_sae"],
        "dtype": "float32",
        "device": "cpu",
        "context_size": 128,
        "prepend_bos": True,
        "dataset_path": "tests/data/sae (random weights)",
        "apply_b_dec_to_input": case["b_dec_in"],
        "finetuning_scaling_factor": False,
        "sae_lens_training_version": "3.13.0",
    }
    if case["name"].endswith("pre0"):  # the oldest spelling: hook_point, normalize as a bool
        cfg.update(hook_point=case["hook"], hook_point_head_index=None,
                   normalize_activations=False, activation_fn_str="relu")
    else:
        cfg.update(hook_name=case["hook"], hook_head_index=None,
                   normalize_activations=case["norm"], sae_lens_version="4.4.1")
        if case["architecture"] == "topk":
            cfg.update(activation_fn_str="topk", activation_fn_kwargs={"k": case["k"]})
        else:
            cfg.update(architecture=case["architecture"], activation_fn_str="relu",
                       activation_fn_kwargs={})
    return cfg


def write_case(case):
    x = torch.tensor(residual_at(case["model"], case["hook"], IDS))
    if case["layout"] == "llama_scope":
        # a dataset average norm near the text's own mean norm, rounded to a short decimal
        case["norm_in"] = round(float(x.norm(dim=-1).mean()) * 1.1, 3)
        case["scaling_factor"] = math.sqrt(x.shape[1]) / case["norm_in"]
    P = make_params(case, x)
    n, sae_in = sae_in_of(case, P, x)
    f = encode(case, P, sae_in)
    y = decode(case, P, n, f, x)
    folder = os.path.join(OUT, case.get("folder", case["name"]))
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    WRITERS[case["layout"]](case, P, folder, x.shape[1])
    expected = {"sae_in": (x.numpy(), "F32"), "feature_acts": (f.numpy(), "F32"),
                "sae_out": (y.numpy(), "F32")}
    target = x
    if "hook_out" in case:  # a transcoder reconstructs the activations at its output hook
        target = torch.tensor(residual_at(case["model"], case["hook_out"], IDS))
        expected["sae_target"] = (target.numpy(), "F32")
    S.save(os.path.join(OUT, "expected", case["name"] + ".safetensors"), expected)
    resid = ((target - y) ** 2).sum()
    total = ((target - target.mean(dim=0)) ** 2).sum()
    extra = {"folder": case["folder"]} if "folder" in case else {}
    if "hook_out" in case:
        extra["hook_out"] = case["hook_out"]
    return {
        "name": case["name"], "model": case["model"], "hook": case["hook"], **extra,
        "architecture": case["architecture"],
        "layout": {"6": "saelens-6", "flat": "saelens-flat", "llama_scope": "llama-scope",
                   "gs1": "gemma-scope", "gs2": "gemma-scope-2"}[case["layout"]],
        "normalize_activations": case["norm"],
        "d_in": int(x.shape[1]), "d_sae": case["d_sae"],
        "variance_explained": float(1 - resid / total),
        "mse": float(resid / x.numel()),
        "l0": int((f != 0).sum()) / int(x.shape[0]),
        "firing": int((f != 0).sum()),
    }


def write_llama_scope(case, P, folder, d_in):
    hyper = {
        "d_model": d_in, "expansion_factor": case["d_sae"] // d_in, "d_sae": case["d_sae"],
        "hook_point_in": case["hook"], "hook_point_out": case["hook"], "use_decoder_bias": True,
        "act_fn": "jumprelu", "jump_relu_threshold": case["threshold"] / case["scaling_factor"],
        "norm_activation": "dataset-wise",
        "dataset_average_activation_norm": {"in": case["norm_in"], "out": case["norm_in"]},
    }
    with open(os.path.join(folder, "hyperparams.json"), "w") as fh:
        json.dump(hyper, fh, indent=2)
        fh.write("\n")
    os.makedirs(os.path.join(folder, "checkpoints"))
    dtype = case["dtype"]
    S.save(os.path.join(folder, "checkpoints", "final.safetensors"), {
        "encoder.weight": (P["W_enc"].numpy().T, dtype), "encoder.bias": (P["b_enc"].numpy(), dtype),
        "decoder.weight": (P["W_dec"].numpy().T, dtype), "decoder.bias": (P["b_dec"].numpy(), dtype)})


def write_saelens(case, P, folder, d_in):
    with open(os.path.join(folder, "cfg.json"), "w") as fh:
        json.dump(cfg_json(case, d_in), fh, indent=2)
        fh.write("\n")
    dtype = case.get("dtype", "F32")
    tensors = {k: (v.numpy(), dtype) for k, v in P.items()}
    if case.get("ones_scaling_factor"):
        tensors["scaling_factor"] = (np.ones(case["d_sae"]), dtype)
    S.save(os.path.join(folder, "sae_weights.safetensors"), tensors)
    if "scaling_factor" in case:
        with open(os.path.join(folder, "activation_scaler.json"), "w") as fh:
            json.dump({"scaling_factor": case["scaling_factor"]}, fh)
            fh.write("\n")


def write_gemma_scope_1(case, P, folder, d_in):
    """params.npz as numpy.savez writes it (stored .npy entries with ZIP64 local headers), with
    a fixed timestamp so that the bytes repeat."""
    arrays = {k: np.asarray(v.numpy(), dtype=np.float32) for k, v in P.items()}
    if case.get("fortran"):
        arrays["W_enc"] = np.asfortranarray(arrays["W_enc"])
    with zipfile.ZipFile(os.path.join(folder, "params.npz"), "w", zipfile.ZIP_STORED) as zf:
        for name in ("W_enc", "W_dec", "b_enc", "b_dec", "threshold"):
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arrays[name], allow_pickle=False)


def write_gemma_scope_2(case, P, folder, d_in):
    """config.json and params.safetensors as google/gemma-scope-2-* publish them."""
    transcoder = "hook_out" in case
    config = {"hf_hook_point_in": case["hook"], "hf_hook_point_out": case.get("hook_out", case["hook"]),
              "width": case["d_sae"], "model_name": "google/gemma-3-1b-pt",
              "architecture": "jump_relu", "l0": 10, "affine_connection": transcoder,
              "type": "transcoder" if transcoder else "sae"}
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(config, fh, indent=2)
        fh.write("\n")
    names = {"W_enc": "w_enc", "W_dec": "w_dec", "b_enc": "b_enc", "b_dec": "b_dec",
             "threshold": "threshold", "W_skip": "affine_skip_connection"}
    S.save(os.path.join(folder, "params.safetensors"),
           {names[k]: (v.numpy(), "F32") for k, v in P.items()})


WRITERS = {"6": write_saelens, "flat": write_saelens,
           "llama_scope": write_llama_scope, "gs1": write_gemma_scope_1,
           "gs2": write_gemma_scope_2}


def main():
    os.makedirs(os.path.join(OUT, "expected"), exist_ok=True)
    results = [write_case(c) for c in CASES]
    golden = {"generator": "tools/golden/make_sae_goldens.py", "ids": IDS, "margin": MARGIN,
              "cases": results}
    with open(os.path.join(OUT, "golden.json"), "w") as fh:
        json.dump(golden, fh, indent=1)
        fh.write("\n")
    for r in results:
        print(f'{r["name"]}: L0 {r["l0"]:.2f}, variance explained {r["variance_explained"]:.4f}')


if __name__ == "__main__":
    main()
