#!/usr/bin/python3
"""Goldens for edits of the residual stream inside the pass (issue 34 §3, §4), from PyTorch hooks.

    /usr/bin/python3 tools/golden/make_steering_goldens.py

Independent of the engine.  The golden GPT-2 and Qwen2 checkpoints run as the torch modules of
make_intervention_goldens.py (float64, written the way transformers writes them), and the SAEs
are the SAELens folders of tests/data/sae, read back from their files (the stored values in
float64) and applied by make_sae_goldens.py's encode/decode (SAELens's inference classes).  The
edits are hooks, as SAELens's HookedSAETransformer and steering code place them:

  * hook_resid_pre L: a forward pre-hook on block L edits its input; hook_resid_post L: a
    forward hook on block L edits its output (for the last block: before the final norm);
  * SAE feature edits (sae_lens/saes/sae.py SAE.forward, the clamp a hook on hook_sae_acts_post):
        f = encode(x); f' = f with f'_i = v for each clamp
        with-error  x' = decode(f') + (x - decode(f))     (use_error_term=True)
        no-error    x' = decode(f')                       (use_error_term=False)
        no splice   x' = x
    then x' += alpha * W_dec[j] for each steer (the raw decoder row, as SAELens's steering
    tutorial adds it);
  * a steering vector v at hook_resid_post L:  x' = x + alpha * v, v the difference of the means
    of the hook's activations at the last token of two sets of texts (token ids);
  * a llama.cpp control vector (GGUF, written below from ggml's gguf.md: version 3, tensors
    direction.N, F32): direction.N added to block N's output (common_control_vector_load_one,
    llama_control_vector::apply_to), times the strength.

Writes tests/data/steering/golden.json (cases: model, ids, edits) and
tests/data/steering/<case>.safetensors: last_hidden_state [T, D] (after the final norm) and
last_logits [V] (the last position's), plus the vector for the steering vector case, and
tests/data/steering/control_gpt2_plain.gguf.  Deterministic; the files are rewritten.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_intervention_goldens as I  # noqa: E402
import make_sae_goldens as SAE  # noqa: E402
import safetensors_io as S  # noqa: E402

torch.set_default_dtype(torch.float64)
OUT = os.path.join(I.REPO, "tests", "data", "steering")
IDS = SAE.IDS[:12]  # a prefix of the SAE goldens' ids: the same margins hold (causal models)
POSITIVE = [[57, 88, 89, 549], [85, 301, 343], [64, 379, 455, 253, 268]]
NEGATIVE = [[220, 138, 102], [158, 222, 233, 82], [78, 427]]

CASES = [
    dict(name="zero_standard_pre0", sae="gpt2_plain_standard_pre0", clamp={}, zero_top=True,
         steer={}, splice="with-error"),
    dict(name="clamp_topk_post2_no_error", sae="gpt2_plain_topk_post2", clamp={5: 2.5},
         steer={}, splice="no-error"),
    dict(name="steer_jumprelu_pre1", sae="gpt2_plain_jumprelu_pre1", clamp={}, steer={7: 3.0},
         splice="none"),
    dict(name="clamp_steer_qwen2_post2", sae="qwen2_jumprelu_post2", clamp={3: 1.5, 11: 0.0},
         steer={20: -2.0}, splice="with-error"),
    dict(name="splice_gated_post1", sae="gpt2_plain_gated_post1", clamp={}, steer={},
         splice="no-error"),
]


def sae_case(name):
    return next(c for c in SAE.CASES if c["name"] == name)


def sae_params(case):
    tensors, _, _ = S.load(os.path.join(SAE.OUT, case["name"], "sae_weights.safetensors"))
    return {k: torch.tensor(v.astype(np.float64)) for k, v in tensors.items()
            if k != "scaling_factor"}


def hook_point(hook):
    _, layer, point = hook.split(".")
    return int(layer), point


def run_with(model, ids, edits):
    """edits: [(hook, fn(x [T, D]) -> [T, D])]. Returns (final normed states [T, D], logits)."""
    handles = []
    for hook, fn in edits:
        layer, point = hook_point(hook)
        block = model.layers[layer]
        if point == "hook_resid_pre":
            handles.append(block.register_forward_pre_hook(
                lambda m, args, fn=fn: (fn(args[0][0])[None],)))
        else:
            handles.append(block.register_forward_hook(
                lambda m, args, out, fn=fn: fn(out[0])[None]))
    states = {}
    norm = model.ln_f if isinstance(model, I.GPT2LMHead) else model.norm
    handles.append(norm.register_forward_hook(
        lambda m, args, out: states.update(final=out[0].clone())))  # None: the output stays
    try:
        with torch.no_grad():
            logits = model(torch.tensor(ids))
    finally:
        for h in handles:
            h.remove()
    return states["final"], logits


def residual_at(model, ids, hook):
    seen = {}
    run_with(model, ids, [(hook, lambda x: seen.setdefault("x", x.clone()))])
    return seen["x"]


def sae_edit(case, sae, P):
    def edit(x):
        n, sae_in = SAE.sae_in_of(sae, P, x)
        f = SAE.encode(sae, P, sae_in)
        out = x
        if case["splice"] != "none":
            clean = SAE.decode(sae, P, n, f, x)
            f2 = f.clone()
            for feature, value in case["clamp"].items():
                f2[:, feature] = value
            out = SAE.decode(sae, P, n, f2, x)
            if case["splice"] == "with-error":
                out = out + (x - clean)
        for feature, alpha in case["steer"].items():
            out = out + alpha * P["W_dec"][feature]
        return out
    return edit


def most_firing_feature(sae, P, x):
    _, sae_in = SAE.sae_in_of(sae, P, x)
    f = SAE.encode(sae, P, sae_in)
    return int((f != 0).sum(dim=0).argmax())


def save_case(name, final, logits, extra=None):
    tensors = {"last_hidden_state": (final.numpy(), "F32"), "last_logits": (logits[-1].numpy(), "F32")}
    tensors.update(extra or {})
    S.save(os.path.join(OUT, name + ".safetensors"), tensors)


def sae_cases():
    results = []
    for case in CASES:
        sae = sae_case(case["sae"])
        model, _ = I.build(sae["model"])
        P = sae_params(sae)
        if case.get("zero_top"):
            case["clamp"] = {most_firing_feature(sae, P, residual_at(model, IDS, sae["hook"])): 0.0}
        final, logits = run_with(model, IDS, [(sae["hook"], sae_edit(case, sae, P))])
        _, clean = run_with(model, IDS, [])
        save_case(case["name"], final, logits)
        results.append({"name": case["name"], "model": sae["model"], "sae": sae["name"],
                        "hook": sae["hook"], "ids": IDS, "splice": case["splice"],
                        "clamp": [[k, v] for k, v in case["clamp"].items()],
                        "steer": [[k, v] for k, v in case["steer"].items()],
                        "last_kl": kl(clean[-1], logits[-1])})
    return results


def kl(p_logits, q_logits):
    p, q = torch.log_softmax(p_logits, -1), torch.log_softmax(q_logits, -1)
    return float((p.exp() * (p - q)).sum())


def steering_vector_case():
    model, _ = I.build("qwen2")
    hook, strength = "blocks.1.hook_resid_post", 3.0
    mean = lambda sets: torch.stack([residual_at(model, ids, hook)[-1] for ids in sets]).mean(0)  # noqa: E731
    v = mean(POSITIVE) - mean(NEGATIVE)
    final, logits = run_with(model, IDS, [(hook, lambda x: x + strength * v)])
    _, clean = run_with(model, IDS, [])
    save_case("vector_qwen2_post1", final, logits, {"vector": (v.numpy(), "F32")})
    return {"name": "vector_qwen2_post1", "model": "qwen2", "hook": hook, "ids": IDS,
            "positive": POSITIVE, "negative": NEGATIVE, "strength": strength,
            "last_kl": kl(clean[-1], logits[-1])}


def paired_component_case(method):
    """repeng's read_representations (vgel/repeng, extract.py) in NumPy: the rows, sklearn's
    PCA(n_components=1) as the first right singular vector of the rows centred by their mean, and
    the sign flipped when more pairs project the positive below the negative."""
    model, _ = I.build("qwen2")
    hook = "blocks.1.hook_resid_post"
    last = lambda sets: np.stack([residual_at(model, ids, hook)[-1].numpy() for ids in sets])  # noqa: E731
    p, n = last(POSITIVE), last(NEGATIVE)
    if method == "pca-diff":
        rows = p - n
    else:
        centre = (p + n) / 2
        rows = np.empty((2 * len(p), p.shape[1]))
        rows[0::2], rows[1::2] = p - centre, n - centre
    _, _, vt = np.linalg.svd(rows - rows.mean(0), full_matrices=False)
    v = vt[0]
    above, below = p @ v / np.linalg.norm(v), n @ v / np.linalg.norm(v)
    if np.mean(above < below) > np.mean(above > below):
        v = -v
    name = "pca_" + method.split("-")[1] + "_qwen2_post1"
    S.save(os.path.join(OUT, name + ".safetensors"), {"vector": (v.astype(np.float32), "F32")})
    return {"name": name, "model": "qwen2", "hook": hook, "method": method,
            "positive": POSITIVE, "negative": NEGATIVE}


def gguf_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def write_control_vector(path, directions, model_hint):
    """GGUF version 3: two string/u32 metadata entries, then F32 tensors direction.N."""
    alignment = 32
    header = b"GGUF" + struct.pack("<IQQ", 3, len(directions), 2)
    header += gguf_string("controlvector.model_hint") + struct.pack("<I", 8) + gguf_string(model_hint)
    header += gguf_string("controlvector.layer_count") + struct.pack("<II", 4, len(directions))
    data, offset = b"", 0
    for block, v in directions:
        blob = np.asarray(v, dtype="<f4").tobytes()
        header += gguf_string(f"direction.{block}") + struct.pack("<IQ", 1, len(v))
        header += struct.pack("<IQ", 0, offset)
        padded = blob + b"\0" * ((-len(blob)) % alignment)
        data += padded
        offset += len(padded)
    header += b"\0" * ((-len(header)) % alignment)
    with open(path, "wb") as f:
        f.write(header + data)


def control_vector_case():
    model, cfg = I.build("gpt2_plain")
    rng = np.random.default_rng(34)
    D = cfg["n_embd"]
    # float32 values, so the file holds exactly what the reference adds
    directions = [(b, rng.normal(0, 0.5, D).astype(np.float32).astype(np.float64)) for b in (1, 2)]
    write_control_vector(os.path.join(OUT, "control_gpt2_plain.gguf"), directions, "gpt2_plain")
    strength = 1.5
    edits = [(f"blocks.{b}.hook_resid_post", lambda x, v=torch.tensor(v): x + strength * v)
             for b, v in directions]
    final, logits = run_with(model, IDS, edits)
    _, clean = run_with(model, IDS, [])
    save_case("control_gpt2_plain", final, logits)
    return {"name": "control_gpt2_plain", "model": "gpt2_plain", "ids": IDS,
            "file": "control_gpt2_plain.gguf", "blocks": [b for b, _ in directions],
            "strength": strength, "last_kl": kl(clean[-1], logits[-1])}


def check_clean_against_numpy_reference():
    """The torch modules' clean final states against models_ref.py's numpy passes."""
    for name in ("gpt2_plain", "qwen2"):
        model, _ = I.build(name)
        final, _ = run_with(model, IDS, [])
        folder = os.path.join(I.MODELS, name)
        cfg = json.load(open(os.path.join(folder, "config.json")))
        W = S.load_folder_f64(folder)
        forward = SAE.M.gpt2_forward if cfg["model_type"] == "gpt2" else SAE.M.llama_forward
        ref = forward(W, cfg, IDS, [1] * len(IDS))["last_hidden_state"]
        assert np.abs(final.numpy() - ref).max() < 1e-9, name


def main():
    check_clean_against_numpy_reference()
    os.makedirs(OUT, exist_ok=True)
    golden = {"generator": "tools/golden/make_steering_goldens.py", "sae_cases": sae_cases(),
              "vector_case": steering_vector_case(), "control_case": control_vector_case(),
              "pca_cases": [paired_component_case(m) for m in ("pca-diff", "pca-center")]}
    with open(os.path.join(OUT, "golden.json"), "w") as fh:
        json.dump(golden, fh, indent=1)
        fh.write("\n")
    for c in golden["sae_cases"]:
        print(f'{c["name"]}: clamp {c["clamp"]}, steer {c["steer"]}, last KL {c["last_kl"]:.4g}')


if __name__ == "__main__":
    main()
