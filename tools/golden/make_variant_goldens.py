#!/usr/bin/python3
"""Regenerate the X-former variant goldens under tests/data/variants/.

    /usr/bin/python3 tools/golden/make_variant_goldens.py

Needs python3-numpy and python3-torch (Debian).  Runs variant_reference.py (float64 PyTorch) on
the golden checkpoints of tests/data/models (bert, gpt2, llama) and on a 6-head GPT-2 written
here (ALiBi slopes for a head count that is not a power of two), and writes

    tests/data/variants/golden.json                 the cases: model folder, input, spec JSON,
                                                    stored tensors; ALiBi slopes; SplitMix64 draws
    tests/data/variants/golden/<case>.safetensors   attentions [L,H,T,T], last_hidden_state [T,D]
                                                    and the engine's internals for the case
    tests/data/variants/models/gpt2_h6/             config.json + model.safetensors

Deterministic (fixed seeds, sorted JSON); the output folder is deleted and rewritten.  Before
writing, the reference is checked against models_ref.py (numpy) with an empty spec, and against
variants that must reproduce vanilla attention exactly.  See docs/golden-references.md.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checkpoints as C  # noqa: E402
import models_ref as M  # noqa: E402
import safetensors_io as S  # noqa: E402
import variant_reference as R  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "tests", "data")
OUT = os.path.join(DATA, "variants")
SIZE_BUDGET = 2 * 1000 * 1000


def golden_input(model, case):
    """ids, token types and mask of one case of tests/data/models/<model>/golden.json."""
    g = json.load(open(os.path.join(DATA, "models", model, "golden.json")))
    c = next(c for c in g["cases"] if c["name"] == case)
    return {"ids": c["ids"], "token_type_ids": c["token_type_ids"], "attention_mask": c["attention_mask"]}


# a non-trivial 4 × 4 head mix (dyadic numbers: the same in float32 and float64)
MIX_L = [[1.0, 0.25, 0.0, -0.5], [0.5, 0.75, 0.25, 0.0], [-0.25, 0.0, 1.25, 0.5], [0.0, 0.5, -0.5, 1.0]]
MIX_W = [[0.5, 0.25, 0.125, 0.125], [0.0, 1.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.75, -0.25, 0.0, 0.5]]
EYE4 = [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]


def cases():
    bert = golden_input("bert", "punctuation")   # T = 19
    bert_long = golden_input("bert", "rare")     # T = 22
    bert_pad = golden_input("bert", "padding")   # T = 13, 3 padded keys
    gpt = golden_input("gpt2", "punctuation")    # T = 16
    gpt_pad = golden_input("gpt2", "padding")    # T = 11, 3 padded keys
    llama = golden_input("llama", "punctuation") # T = 16
    h6 = {"ids": [(7 * t + 3) % 64 for t in range(14)], "token_type_ids": [0] * 14, "attention_mask": [1] * 14}
    B, G, L6, LL = "models/bert", "models/gpt2", "variants/models/gpt2_h6", "models/llama"
    return [
        # sparse masks, every preset (option 2)
        ("bert_star", B, bert, {"mask": {"preset": "star"}}),
        ("bert_longformer", B, bert, {"mask": {"preset": "longformer", "window": 2, "global": [0, -1]}}),
        ("bert_longformer_dilated", B, bert_long,
         {"mask": {"preset": "longformer", "window": 3, "dilation": 2, "global": [0]}}),
        ("bert_bigbird", B, bert_long, {"mask": {"preset": "bigbird", "block": 4, "random": 1, "seed": 7}}),
        ("bert_bigbird_r2", B, bert_long,
         {"mask": {"preset": "bigbird", "block": 3, "random": 2, "seed": 123, "global": [0, 5]}}),
        ("bert_sparse_strided", B, bert, {"mask": {"preset": "sparse_strided", "stride": 4}}),
        ("bert_sparse_fixed", B, bert, {"mask": {"preset": "sparse_fixed", "block": 5, "summary": 2}}),
        ("bert_image_local", B, bert, {"mask": {"preset": "image_local", "block": 4, "memory": 3}}),
        ("bert_blockwise", B, bert_pad, {"mask": {"preset": "blockwise", "block": 5}}),
        ("bert_multiscale", B, bert, {"mask": {"preset": "multiscale"}}),
        ("bert_parts_random", B, bert,
         {"mask": {"seed": 99, "parts": [{"kind": "band", "window": 0}, {"kind": "random", "count": 3},
                                         {"kind": "global", "tokens": [-1]}]}}),
        ("bert_parts_mixed", B, bert_long,
         {"mask": {"parts": [{"kind": "block", "size": 3, "window": 1}, {"kind": "strided", "stride": 5},
                             {"kind": "summary", "size": 6, "count": 1},
                             {"kind": "band", "windows": [0, 3]},
                             {"kind": "dilated", "window": 2, "dilation": 3}]}}),
        ("gpt2_sparse_strided", G, gpt, {"mask": {"preset": "sparse_strided", "stride": 3}}),
        ("gpt2_sparse_fixed", G, gpt, {"mask": {"preset": "sparse_fixed", "block": 4, "summary": 1}}),
        ("gpt2_image_local", G, gpt_pad, {"mask": {"preset": "image_local", "block": 3, "memory": 2}}),
        ("gpt2_bigbird", G, gpt, {"mask": {"preset": "bigbird", "block": 2, "random": 2, "seed": 5}}),
        ("gpt2_parts_random", G, gpt,
         {"mask": {"seed": 2024, "parts": [{"kind": "band", "window": 1}, {"kind": "random", "count": 2}]}}),
        # priors (option 8)
        ("bert_prior_residual", B, bert_pad, {"prior": {"kind": "residual"}}),
        ("bert_prior_residual_mean", B, bert, {"prior": {"kind": "residual_mean"}}),
        ("bert_prior_share", B, bert, {"prior": {"kind": "share", "every": 2}}),
        ("bert_prior_gaussian", B, bert, {"prior": {"kind": "gaussian", "sigma": 2.0}}),
        ("gpt2_prior_residual", G, gpt_pad, {"prior": {"kind": "residual"}}),
        ("gpt2_prior_share", G, gpt, {"prior": {"kind": "share", "every": 2}}),
        # adaptive span (option 9), talking heads (option 10)
        ("bert_span", B, bert, {"span": {"z": [0.0, 1.5, 4.0, 12.0], "ramp": 2.0}}),
        ("gpt2_span", G, gpt, {"span": {"z": [3.0], "ramp": 4.0}}),
        ("bert_talking_heads_identity", B, bert, {"talking_heads": {"logits": EYE4, "weights": EYE4}}),
        ("bert_talking_heads", B, bert, {"talking_heads": {"logits": MIX_L, "weights": MIX_W}}),
        ("gpt2_talking_heads_gaussian", G, gpt,
         {"talking_heads": {"logits": MIX_L}, "prior": {"kind": "gaussian", "sigma": 3.0}}),
        # positions (option 11) and dropped FFNs (option 13)
        ("bert_position_none", B, bert, {"position": "none"}),
        ("bert_position_sinusoidal", B, bert, {"position": "sinusoidal"}),
        ("bert_position_alibi", B, bert, {"position": "alibi"}),
        ("gpt2_position_none", G, gpt, {"position": "none"}),
        ("gpt2_position_sinusoidal", G, gpt, {"position": "sinusoidal"}),
        ("gpt2_position_alibi", G, gpt, {"position": "alibi"}),
        ("gpt2_h6_alibi", L6, h6, {"position": "alibi"}),
        ("llama_position_none", LL, llama, {"position": "none"}),
        ("llama_position_alibi", LL, llama, {"position": "alibi"}),
        ("llama_longformer", LL, llama, {"mask": {"preset": "longformer", "window": 3}}),
        ("bert_drop_ffn", B, bert, {"drop_ffn": True}),
        ("gpt2_drop_ffn", G, gpt, {"drop_ffn": True}),
        # everything on the composed path at once, with padding
        ("bert_combined", B, bert_pad,
         {"mask": {"preset": "longformer", "window": 2}, "prior": {"kind": "residual_mean"}, "position": "alibi",
          "span": {"z": [2.0, 6.0], "ramp": 3.0}, "talking_heads": {"logits": MIX_L, "weights": MIX_W}}),
        ("gpt2_combined", G, gpt,
         {"mask": {"preset": "multiscale", "windows": [2, 5]}, "prior": {"kind": "share", "every": 2},
          "position": "alibi", "talking_heads": {"weights": MIX_W}, "drop_ffn": True}),
        # attention rules (option 21): softmax with a sink logit, sigmoid attention
        ("bert_sink_softmax", B, bert_pad, {"attention_rule": {"kind": "sink_softmax"}}),
        ("gpt2_sink_softmax", G, gpt_pad, {"attention_rule": {"kind": "sink_softmax", "sink": 0.0}}),
        ("gpt2_sink_softmax_b2", G, gpt, {"attention_rule": {"kind": "sink_softmax", "sink": 2.0}}),
        ("llama_sink_softmax", LL, llama, {"attention_rule": {"kind": "sink_softmax", "sink": -1.0}}),
        ("bert_sigmoid", B, bert_pad, {"attention_rule": {"kind": "sigmoid"}}),
        ("gpt2_sigmoid", G, gpt_pad, {"attention_rule": {"kind": "sigmoid"}}),
        ("llama_sigmoid", LL, llama, {"attention_rule": {"kind": "sigmoid", "bias": -1.5}}),
        ("bert_sigmoid_longformer", B, bert_pad,
         {"attention_rule": {"kind": "sigmoid"}, "mask": {"preset": "longformer", "window": 1}}),
        ("gpt2_sink_softmax_combined", G, gpt,
         {"attention_rule": {"kind": "sink_softmax", "sink": 1.0}, "mask": {"preset": "sparse_fixed", "block": 4},
          "position": "alibi", "talking_heads": {"logits": MIX_L, "weights": MIX_W}}),
    ]


def write_gpt2_h6(folder):
    """A 2-layer GPT-2 with 6 heads of width 4 (GPT2Model layout, no prefix), random weights drawn
    as checkpoints.py draws them: ALiBi's slope rule for n not a power of two (p = 4, then every
    other slope of 8) in a whole forward pass."""
    D, H, L, V, P = 24, 6, 2, 64, 64
    cfg = C._cfg({
        "activation_function": "gelu_new", "architectures": ["GPT2Model"], "attn_pdrop": 0.1,
        "bos_token_id": 0, "embd_pdrop": 0.1, "eos_token_id": 0, "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": P, "n_embd": D, "n_head": H,
        "n_inner": None, "n_layer": L, "n_positions": P, "reorder_and_upcast_attn": False,
        "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True,
        "use_cache": True, "vocab_size": V}, "F32")
    s = [("wte.weight", (V, D)), ("wpe.weight", (P, D))]
    for i in range(L):
        p = f"h.{i}."
        s += [(p + "ln_1.weight", (D,)), (p + "ln_1.bias", (D,)),
              (p + "attn.c_attn.weight", (D, 3 * D)), (p + "attn.c_attn.bias", (3 * D,)),
              (p + "attn.c_proj.weight", (D, D)), (p + "attn.c_proj.bias", (D,)),
              (p + "ln_2.weight", (D,)), (p + "ln_2.bias", (D,)),
              (p + "mlp.c_fc.weight", (D, 4 * D)), (p + "mlp.c_fc.bias", (4 * D,)),
              (p + "mlp.c_proj.weight", (4 * D, D)), (p + "mlp.c_proj.bias", (D,))]
    s += [("ln_f.weight", (D,)), ("ln_f.bias", (D,))]
    tensors = C.make_tensors(11, s, "F32")
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w", newline="\n") as f:
        f.write(C.dumps_config(cfg))
    S.save(os.path.join(folder, "model.safetensors"), {n: (a, "F32") for n, a in tensors.items()},
           {"format": "pt"})


# ------------------------------------------------------------------------------------------
# checks of the reference itself
# ------------------------------------------------------------------------------------------

def check_reference(folder, inp):
    """An empty spec reproduces models_ref.py (numpy, float64, itself checked against HF); and
    variants that the catalogue marks INF-EXACT or that cannot bind reproduce vanilla."""
    cfg, W = R.load(folder)
    Wn = {k: v.numpy() for k, v in W.items()}
    ids, mask, tt = inp["ids"], inp["attention_mask"], inp["token_type_ids"]
    mt = cfg["model_type"]
    if mt == "bert":
        ref = M.bert_forward(Wn, cfg, ids, mask, tt)
    elif mt == "gpt2":
        prefix = "transformer." if any(k.startswith("transformer.") for k in Wn) else ""
        ref = M.gpt2_forward(Wn, cfg, ids, mask, prefix=prefix)
    else:
        ref = M.llama_forward(Wn, cfg, ids, mask)
    H = ref["attentions"].shape[1]
    eye = [[float(i == j) for j in range(H)] for i in range(H)]
    same = [{}, {"talking_heads": {"logits": eye, "weights": eye}}, {"prior": {"kind": "share", "every": 1}},
            {"span": {"z": [1e4]}}, {"mask": {"preset": "blockwise", "block": len(ids)}},
            {"mask": {"parts": [{"kind": "band", "window": len(ids)}]}},
            {"attention_rule": {"kind": "sink_softmax", "sink": -1e4}}]  # e^(b − max) = 0 in float64
    for spec in same:
        att, last, _ = R.forward(folder, ids, spec, mask, tt)
        assert np.abs(att.numpy() - ref["attentions"]).max() < 1e-12, (folder, spec)
        assert np.abs(last.numpy() - ref["last_hidden_state"]).max() < 1e-12, (folder, spec)


def check_case(name, att, internals, spec):
    """Probabilities are zero where the mask says no; rows sum to 1 unless a weights mix that is
    not row-stochastic (or a padded, fully masked row) or an attention rule says otherwise."""
    if "mask" in internals:
        allowed = torch.as_tensor(internals["mask"]).expand(att.shape[1:]) > 0
        allowed = allowed | ~allowed.any(-1, keepdim=True)  # fully masked rows are uniform
        assert torch.all(att[:, ~allowed] == 0) or "talking_heads" in spec, name
    rule = spec.get("attention_rule", {}).get("kind", "softmax")
    if rule == "sink_softmax" and "talking_heads" not in spec:  # the sink keeps some of each row
        assert torch.all(att.sum(-1) < 1.0) and torch.all(att >= 0), name
    elif rule == "sigmoid":  # each weight on its own in (0, 1); rows need not sum to 1
        assert torch.all((att >= 0) & (att < 1)), name
    elif "talking_heads" not in spec or "weights" not in spec["talking_heads"]:
        sums = att.sum(-1)
        if "span" in spec:  # a padded query may lose every key to the span: a zero row
            sums = torch.where(sums == 0, torch.ones(()), sums)
        assert torch.allclose(sums, torch.ones(()), atol=1e-12), name
    assert torch.isfinite(att).all(), name


def splitmix_vectors():
    """First draws of SeededRandom and a few stream seeds, as hex (uint64 does not fit a JSON
    number), so that the C++ test checks the port draw by draw."""
    out = []
    for seed in (0, 1, 12345, 2 ** 63 + 7):
        r = R.SeededRandom(seed)
        out.append({"seed": f"{seed:016x}", "next": [f"{r.next():016x}" for _ in range(3)],
                    "below_10": [r.below(10) for _ in range(4)]})
    streams = [{"seed": s, "purpose": p, "layer": ly, "value": f"{R.stream_seed(s, p, ly):016x}"}
               for s, p, ly in ((0, 1, 0), (7, 2, 0), (99, 2, 3))]
    return {"random": out, "streams": streams}


def dumps(golden):
    """JSON with one line per case, like make_goldens.py's golden.json."""
    head = {k: v for k, v in golden.items() if k != "cases"}
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}," for k, v in sorted(head.items())]
    lines.append(' "cases": [')
    cs = [json.dumps(c, sort_keys=True) for c in golden["cases"]]
    lines += ["  " + c + ("," if i + 1 < len(cs) else "") for i, c in enumerate(cs)]
    lines += [" ]", "}"]
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == golden
    return text


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "golden"))
    write_gpt2_h6(os.path.join(OUT, "models", "gpt2_h6"))
    checked = set()
    out_cases = []
    for name, model, inp, spec in cases():
        folder = os.path.join(DATA, model)
        key = (model, tuple(inp["ids"]), tuple(inp["attention_mask"]))
        if key not in checked:
            check_reference(folder, inp)
            checked.add(key)
        att, last, internals = R.forward(folder, inp["ids"], spec, inp["attention_mask"], inp["token_type_ids"])
        check_case(name, att, internals, spec)
        tensors = {"attentions": (att.numpy(), "F32"), "last_hidden_state": (last.numpy(), "F32")}
        tensors.update({k: (v.numpy(), "F32") for k, v in internals.items()})
        S.save(os.path.join(OUT, "golden", name + ".safetensors"), tensors, {"case": name})
        out_cases.append({"name": name, "model": model, "ids": inp["ids"],
                          "token_type_ids": inp["token_type_ids"], "attention_mask": inp["attention_mask"],
                          "spec": spec, "tensors": sorted(tensors)})
        print(f"{name:30s} T = {len(inp['ids']):2d}  {', '.join(sorted(internals))}")
    golden = {"generator": "tools/golden/make_variant_goldens.py", "cases": out_cases,
              "alibi_slopes": {str(n): R.alibi_slopes(n) for n in (1, 2, 3, 4, 5, 6, 8, 12, 16)},
              "seeded_random": splitmix_vectors()}
    with open(os.path.join(OUT, "golden.json"), "w", newline="\n") as f:
        f.write(dumps(golden))
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(OUT) for f in fs)
    print(f"{len(out_cases)} cases, {size / 1e6:.2f} MB in {OUT}")
    if size > SIZE_BUDGET:
        sys.exit(f"over the {SIZE_BUDGET / 1e6:.0f} MB budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
