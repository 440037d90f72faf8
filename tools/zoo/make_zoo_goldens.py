#!/usr/bin/python3
"""Regenerate the zoo-format goldens under tests/data/zoo/.

    /usr/bin/python3 tools/zoo/make_zoo_goldens.py

Needs python3-numpy and python3-torch (Debian).  For each case a small `headlight` checkpoint
with random weights (D = 32, 4 heads, V = 64, fixed seeds) is written with tools/zoo/model.py,
read back, and run in float64:

    tests/data/zoo/<case>/config.json, model.safetensors    the checkpoint (f32)
    tests/data/zoo/<case>/golden.safetensors                attentions [L,H,T,T] (ACT: [steps,H,T,T];
                                                            funnel: layer{l}.attention [H,T_q,T_k]),
                                                            last_hidden_state [T,D], logits [T,V] (tied
                                                            head), the internals of docs/zoo-format.md
                                                            (per layer as "layer{l}.<name>"), f32
    tests/data/zoo/golden.json                              cases, input ids, stored tensors

Before writing, each case is checked: the module's tensor names are the ones the format lists,
a float32 pass agrees with the float64 one, no discrete decision (ACT halting, MoE top-k, T5
bucket, LSH hash) sits within reach of float32 rounding, ACT weights sum to 1, reversible layers
invert, and three training steps lower the loss with finite gradients.  Deterministic; the output folder
is deleted and rewritten.  The C++ side: tests/backends/test_zoo_goldens.cpp
(ctest runs it as test_zoo_goldens on the CPU and test_vulkan_zoo_goldens on Vulkan).
"""
import json
import math
import os
import shutil
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import model as M  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "tests", "data", "zoo")
SIZE_BUDGET = 3500 * 1000  # the repository carries these files
V, D, H, I, P = 64, 32, 4, 48, 16
MARGIN = 1e-3  # how far a discrete decision must sit from its boundary


class Marginal(Exception):
    """A discrete decision too close to its boundary for float32: the case draws other weights."""

# non-trivial 4 × 4 head mixes (dyadic: the same in float32 and float64)
MIX_L = [[1.0, 0.25, 0.0, -0.5], [0.5, 0.75, 0.25, 0.0], [-0.25, 0.0, 1.25, 0.5], [0.0, 0.5, -0.5, 1.0]]
MIX_W = [[0.5, 0.25, 0.125, 0.125], [0.0, 1.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.75, -0.25, 0.0, 0.5]]


def cases():
    """(name, decoder, layers, T, headlight section): every value of the format's table at
    least once, and the combinations a zoo is likely to hold."""
    pre = {"placement": "pre"}
    return [
        ("post_layer_learned_gelu", False, 2, 10, {}),
        ("pre_rms_swiglu_rope", True, 2, 12,
         {"position": "rope", "norm": {"kind": "rms", **pre}, "ffn": {"activation": "swiglu"}}),
        ("post_ada_alibi_gelu_tanh", False, 2, 9,
         {"position": "alibi", "norm": {"kind": "ada"}, "ffn": {"activation": "gelu_tanh"}}),
        ("pre_gtrxl_t5_reglu", True, 2, 12,
         {"position": "t5", "norm": {"residual": "gtrxl", **pre}, "ffn": {"activation": "reglu"},
          "t5": {"buckets": 16, "max_distance": 32}}),
        ("t5_encoder_scale_post", False, 2, 12,
         {"position": "t5", "norm": {"kind": "scale"}, "t5": {"buckets": 8, "max_distance": 16}}),
        ("rezero_learned_swish", False, 2, 10, {"norm": {"residual": "rezero"}, "ffn": {"activation": "swish"}}),
        ("pre_scale_sinusoidal_geglu", True, 2, 11,
         {"position": "sinusoidal", "norm": {"kind": "scale", **pre}, "ffn": {"activation": "geglu"}}),
        ("none_relu_decoder", True, 2, 8, {"position": "none", "ffn": {"activation": "relu"}}),
        ("macaron_post_glu", False, 2, 10, {"order": {"kind": "macaron"}, "ffn": {"activation": "glu"}}),
        ("macaron_pre_rms_rope", True, 2, 10,
         {"position": "rope", "norm": {"kind": "rms", **pre}, "order": {"kind": "macaron"}}),
        ("sandwich_k1_l3", True, 3, 10, {"norm": pre, "order": {"kind": "sandwich", "sandwich": 1}}),
        ("moe_top_k2", False, 2, 10, {"ffn": {"experts": 4, "routing": "top_k", "k": 2}}),
        ("moe_switch_pre_rms", True, 2, 10,
         {"norm": {"kind": "rms", **pre}, "ffn": {"experts": 4, "routing": "switch", "activation": "swiglu"}}),
        ("moe_hash", False, 2, 12, {"position": "sinusoidal", "ffn": {"experts": 3, "routing": "hash"}}),
        ("act_ut_post", False, 1, 10, {"position": "sinusoidal", "act": {"max_steps": 3, "threshold": 0.99}}),
        ("act_ut_pre_early_stop", True, 1, 9,
         {"position": "sinusoidal", "norm": pre, "act": {"max_steps": 5, "threshold": 0.9}}),
        ("reversible_pre_rope", True, 2, 10, {"position": "rope", "norm": pre, "reversible": True}),
        ("reversible_moe_rms", False, 2, 9,
         {"norm": {"kind": "rms", **pre}, "reversible": True, "ffn": {"experts": 3, "routing": "top_k", "k": 2}}),
        ("realformer_residual_post", False, 2, 10, {"prior": {"kind": "residual"}}),
        ("realformer_residual_mean_pre", True, 2, 10, {"norm": pre, "prior": {"kind": "residual_mean"}}),
        ("talking_heads", False, 2, 10, {"talking_heads": {"logits": MIX_L, "weights": MIX_W}}),
        ("mask_longformer_t5", False, 2, 12,
         {"position": "t5", "mask": {"preset": "longformer", "window": 2, "global": [0]},
          "t5": {"buckets": 8, "max_distance": 16}}),
        ("mask_bigbird_span_decoder", True, 2, 12,
         {"position": "alibi", "norm": pre, "mask": {"preset": "bigbird", "block": 3, "random": 1, "seed": 7},
          "span": {"z": [0.0, 2.0, 5.0, 9.0], "ramp": 3.0}}),
        ("share_rezero_macaron", False, 2, 10,
         {"norm": {"residual": "rezero"}, "order": {"kind": "macaron"},
          "prior": {"kind": "share", "every": 2}}),
        ("gaussian_prior_gtrxl_switch", True, 2, 10,
         {"norm": {"kind": "layer", "residual": "gtrxl", **pre}, "prior": {"kind": "gaussian", "sigma": 2.0},
          "ffn": {"experts": 4, "routing": "switch"}}),
        # the kernels' other forms (the zoo's performer and reformer are causal, orthogonal, shared QK)
        ("favor_encoder_iid", False, 2, 10,
         {"attention": {"kernel": "favor", "features": 16, "orthogonal": False}, "seed": 5}),
        ("lsh_keys_encoder", False, 2, 11,
         {"position": "rope", "attention": {"kernel": "lsh", "buckets": 6, "chunk": 3, "shared_qk": False}}),
        # Funnel Transformer: pooled blocks, rectangular maps stored per layer; odd T pools a lone row
        ("funnel_encoder_2x2", False, 4, 12, {"funnel": {"blocks": [2, 2]}}),
        ("funnel_pre_sinusoidal_3_blocks", False, 4, 11,
         {"position": "sinusoidal", "norm": pre, "funnel": {"blocks": [1, 2, 1], "stride": 2}}),
        # Linformer's learned E, F [5, P], cut to T < P columns
        ("linformer_learned_encoder", False, 2, 11, {"attention": {"kernel": "linformer", "projected": 5}}),
        # attention rules: softmax with a sink logit (gpt-oss), sigmoid attention (with ALiBi, as
        # Ramapuram et al. 2024 train it)
        ("sink_softmax_pre_rope", True, 2, 10,
         {"position": "rope", "norm": pre, "attention_rule": {"kind": "sink_softmax", "sink": 0.5}}),
        ("sigmoid_alibi_decoder", True, 2, 11,
         {"position": "alibi", "norm": pre, "attention_rule": {"kind": "sigmoid", "bias": -2.0}}),
    ]


def config_of(decoder, layers, section):
    return {"model_type": "headlight", "vocab_size": V, "hidden_size": D, "num_hidden_layers": layers,
            "num_attention_heads": H, "intermediate_size": I, "max_position_embeddings": P,
            "layer_norm_eps": 1e-5, "is_decoder": decoder, "headlight": section}


# halting-unit biases: tokens that stop at every step (max 3), or all before the last (max 5)
ACT_BIAS = {"act_ut_post": 1.0, "act_ut_pre_early_stop": 3.0}


def randomize(model, seed, act_bias=0.0):
    """Weights far from the training initialisation so that every mechanism shows: unit-scale
    matrices, non-trivial norms, ReZero α ≠ 0, GTrXL gates half open, halting units that stop
    tokens at different steps, routers with clear preferences."""
    g = torch.Generator().manual_seed(seed)
    n = lambda shape: torch.randn(shape, generator=g, dtype=torch.float64)  # noqa: E731
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name in M.CONFIG_PARAMETERS:
                continue
            leaf = name.rsplit(".", 2)
            if "norm" in name and name.endswith("weight"):
                base = math.sqrt(D) if p.numel() == 1 else 1.0
                value = base * (1 + 0.2 * n(p.shape))
            elif "norm" in name:
                value = 0.1 * n(p.shape)
            elif ".rezero." in name:
                value = 0.5 + 0.2 * n(p.shape)
            elif name.endswith("bias_g"):
                value = 0.5 + 0.5 * n(p.shape)
            elif name == "act.halting.weight":
                value = 2.0 * n(p.shape) / math.sqrt(D)
            elif name == "act.halting.bias":
                value = torch.full(p.shape, act_bias, dtype=torch.float64)
            elif name.startswith("embeddings.token"):
                value = n(p.shape)
            elif name.startswith("embeddings"):
                value = 0.5 * n(p.shape)
            elif "linformer" in name:
                value = n(p.shape) / math.sqrt(P)
            elif name.endswith("router.weight"):
                value = 3.0 * n(p.shape) / math.sqrt(D)
            elif leaf[-1] == "weight":
                value = n(p.shape) / math.sqrt(p.shape[-1])
            else:
                value = 0.1 * n(p.shape)
            p.copy_(value.to(p.dtype))


# ------------------------------------------------------------------------------------------
# checks
# ------------------------------------------------------------------------------------------

def check_act(name, internals, h):
    """Replays the halting decisions: none within MARGIN of the threshold; weights sum to 1."""
    p_steps, w_steps = internals["halting_probability"], internals["update_weight"]
    steps, T = p_steps.shape
    P = torch.zeros(T, dtype=torch.float64)
    for t in range(steps):
        p = p_steps[t]
        running = P < 1
        forced = t + 1 == h["act"]["max_steps"]
        if not forced:
            gap = (P + p - h["act"]["threshold"])[running].abs()
            if gap.numel() and gap.min() <= MARGIN:
                raise Marginal(f"{name}: step {t + 1} halts within {float(gap.min()):.1e}")
        halts = running & ((P + p > h["act"]["threshold"]) | forced)
        P = torch.where(running & ~halts, P + p, torch.where(halts, torch.ones(()), P))
    assert torch.allclose(w_steps.sum(0), torch.ones(T, dtype=torch.float64), atol=1e-12), name
    assert torch.allclose(internals["ponder"] - internals["remainder"],
                          (w_steps > 0).sum(0).double()), name


def check_router(name, internals, k):
    for key, logits in internals.items():
        if key.endswith("router_logits"):
            top = torch.softmax(logits, -1).sort(-1, descending=True).values
            gap = (top[:, k - 1] - top[:, k]).min()
            if gap <= MARGIN:
                raise Marginal(f"{name}: {key} top-{k} gap {float(gap):.1e}")


def check_t5(name, h, T, decoder):
    """No relative distance whose logarithmic bucket sits within MARGIN of a bucket edge."""
    if h.get("position") != "t5":
        return
    t5 = dict(M.DEFAULTS["t5"], **h.get("t5", {}))
    buckets = t5["buckets"] // (1 if decoder else 2)
    exact = buckets // 2
    for r in range(exact, T):
        x = math.log(r / exact) / math.log(t5["max_distance"] / exact) * (buckets - exact)
        assert r == exact or abs(x - round(x)) > MARGIN, (name, r, x)


def check_training(config, seed):
    """Three Adam steps in float32 on one batch lower the loss; every gradient is finite."""
    torch.manual_seed(seed)
    model = M.HeadlightModel(config).float()
    ids = torch.randint(0, V, (4, 10))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(4):
        out = model(ids)
        loss = F.cross_entropy(out["logits"][:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))
        total = loss + 0.01 * sum(out["aux"].values())
        opt.zero_grad()
        total.backward()
        for n, p in model.named_parameters():
            assert p.grad is None or torch.isfinite(p.grad).all(), n
        opt.step()
        losses.append(float(total))
    assert losses[-1] < losses[0], losses
    if model.span_z is not None:
        assert model.span_z.grad is not None
    return losses


# ------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------

def run(folder, ids, dtype):
    model = M.load(folder, dtype)
    with torch.no_grad():
        out = model(torch.tensor(ids))
    return model, out


def golden_tensors(out):
    """attentions [L, H, T, T], or "layer{l}.attention" [H, T_q, T_k] per layer when the maps
    differ in shape (a funnel's pooled layers)."""
    tensors = {"last_hidden_state": out["last_hidden_state"], "logits": out["logits"]}
    if len({a.shape for a in out["attentions"]}) == 1:
        tensors["attentions"] = torch.stack(out["attentions"])
    else:
        tensors.update({f"layer{l}.attention": a for l, a in enumerate(out["attentions"])})
    for key, value in out["internals"].items():
        tensors[key] = value.double()
    return tensors


def dumps(golden):
    """JSON with one line per case, like the other golden.json files."""
    head = {k: v for k, v in golden.items() if k != "cases"}
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}," for k, v in sorted(head.items())]
    lines.append(' "cases": [')
    cs = [json.dumps(c, sort_keys=True) for c in golden["cases"]]
    lines += ["  " + c + ("," if i + 1 < len(cs) else "") for i, c in enumerate(cs)]
    lines += [" ]", "}"]
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == golden
    return text


def build(name, config, h, folder, seed, T, decoder, section):
    """Writes the checkpoint of one case with weights drawn from `seed` and runs it in float64
    (the f32 weights read back) and float32; -> ids, the float64 output, the golden tensors."""
    model = M.HeadlightModel(config).double()
    assert sorted(model.format_state_dict()) == M.expected_tensor_names(config), name
    randomize(model, seed, ACT_BIAS.get(name, 0.0))
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    M.save(model, folder, {"format": "pt", "case": name})
    rng = np.random.RandomState(seed)
    ids = [int(i) for i in rng.randint(0, V, size=T)]
    _, ref = run(folder, ids, torch.float64)
    _, f32 = run(folder, ids, torch.float32)
    if h["act"]["max_steps"]:
        check_act(name, ref["internals"], h)
        if name.endswith("early_stop") and not 2 < len(ref["attentions"]) < h["act"]["max_steps"]:
            raise Marginal(f"{name}: {len(ref['attentions'])} steps")
    if h["ffn"]["experts"] and h["ffn"]["routing"] != "hash":
        check_router(name, ref["internals"], 1 if h["ffn"]["routing"] == "switch" else h["ffn"]["k"])
    if "lsh_margin" in ref and float(ref["lsh_margin"]) <= MARGIN:
        raise Marginal(f"{name}: an LSH hash within {float(ref['lsh_margin']):.1e} (relative) of a tie")
    tensors = golden_tensors(ref)
    for key, value in golden_tensors(f32).items():
        diff = float((value.double() - tensors[key]).abs().max())
        assert diff < 2e-5, (name, key, diff)
    assert all(torch.isfinite(t).all() for t in tensors.values()), name
    if h["reversible"]:
        assert float(ref["internals"]["reconstruction_error"].max()) < 1e-10, name
    check_t5(name, section, T, decoder)
    return ids, ref, tensors


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    out_cases = []
    all_values = {"position": set(), "kind": set(), "placement": set(), "residual": set(), "order": set(),
                  "activation": set(), "routing": set(), "act": set(), "reversible": set()}
    for index, (name, decoder, layers, T, section) in enumerate(cases()):
        config = config_of(decoder, layers, section)
        h = M.resolve(config)
        folder = os.path.join(OUT, name)
        for attempt in range(20):
            seed = 1000 + 100 * attempt + index
            try:
                ids, ref, tensors = build(name, config, h, folder, seed, T, decoder, section)
                break
            except Marginal as why:
                print(f"  redraw: {why}")
        else:
            sys.exit(f"{name}: no weights without a marginal decision")
        losses = check_training(config, seed)
        M.safetensors_io.save(os.path.join(folder, "golden.safetensors"),
                              {k: (v.numpy(), "F32") for k, v in tensors.items()}, {"case": name})
        out_cases.append({"name": name, "folder": "zoo/" + name, "ids": ids, "tensors": sorted(tensors),
                          "layers": len(ref["attentions"])})
        for key, value in (("position", h["position"]), ("kind", h["norm"]["kind"]),
                           ("placement", h["norm"]["placement"]), ("residual", h["norm"]["residual"]),
                           ("order", h["order"]["kind"]), ("activation", h["ffn"]["activation"]),
                           ("act", h["act"]["max_steps"] > 0), ("reversible", h["reversible"])):
            all_values[key].add(value)
        if h["ffn"]["experts"]:
            all_values["routing"].add(h["ffn"]["routing"])
        extra = ""
        if "ponder" in ref["internals"]:
            extra = f"  ponder {[round(float(v), 2) for v in ref['internals']['ponder']]}"
        print(f"{name:34s} T = {T:2d}  steps/layers {len(ref['attentions'])}  "
              f"loss {losses[0]:.3f} -> {losses[-1]:.3f}{extra}")
    want = {"position": {"learned", "sinusoidal", "rope", "alibi", "t5", "none"},
            "kind": {"layer", "rms", "scale", "ada"}, "placement": {"post", "pre"},
            "residual": {"plain", "rezero", "gtrxl"}, "order": {"standard", "macaron", "sandwich"},
            "activation": {"relu", "gelu", "gelu_tanh", "swish", "glu", "geglu", "swiglu", "reglu"},
            "routing": {"top_k", "switch", "hash"}, "act": {False, True}, "reversible": {False, True}}
    for key, values in want.items():
        assert all_values[key] == values, (key, values - all_values[key])
    golden = {"generator": "tools/zoo/make_zoo_goldens.py", "format": "docs/zoo-format.md", "cases": out_cases}
    with open(os.path.join(OUT, "golden.json"), "w", newline="\n") as f:
        f.write(dumps(golden))
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(OUT) for f in fs)
    print(f"{len(out_cases)} cases, {size / 1e6:.2f} MB in {OUT}")
    if size > SIZE_BUDGET:
        sys.exit(f"over the {SIZE_BUDGET / 1e6:.0f} MB budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
