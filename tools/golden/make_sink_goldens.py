#!/usr/bin/python3
"""Goldens for attention sinks and massive activations (docs/sinks.md), from PyTorch hooks.

    /usr/bin/python3 tools/golden/make_sink_goldens.py

Independent of the engine.  The golden GPT-2 and Qwen2 (Llama family) checkpoints run as the
float64 torch modules of make_intervention_goldens.py (written the way transformers writes
them), with make_steering_goldens.py's forward hooks on the blocks; the attention maps come from
models_ref.py's numpy passes.  From the definitions:

  residual stream leaving layer l   block l's output (a forward hook), before the final norm
  largest activations               the K entries of largest |x| over [T, D], ties by token then
                                    dimension; median |x| as numpy.median (the mean of the two
                                    middle values for an even count); ratio = largest / median
  arise layer                       the first layer whose largest |x| is at least half the
                                    largest of any layer
  sink share                        per head the mean over queries of A[i, 0] / sum_j A[i, j]
  zero-massive                      the K largest entries of the arise layer set to 0 in block
                                    l's output (a forward hook), then the rest of the pass
  drop-first                        the ids without the first; clean positions 1..T-1 against
                                    the dropped pass's 0..T-2 (and its sink shares)
  mean KL                           mean over the compared positions of KL(p_clean || p_ablated)
                                    of softmax(logits), nats; top-1 changes counted

Writes tests/data/sinks/golden.json.  Deterministic; the file is rewritten.  Before writing, the
torch modules' block outputs are checked against models_ref.py's hidden states.
"""
import json
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_intervention_goldens as I  # noqa: E402
import make_steering_goldens as STEER  # noqa: E402
import models_ref as M  # noqa: E402
import safetensors_io as S  # noqa: E402

torch.set_default_dtype(torch.float64)
OUT = os.path.join(I.REPO, "tests", "data", "sinks")
TOP = 4
CASES = [("gpt2", [57, 88, 89, 549, 85, 301, 343, 64, 379, 455]),
         ("qwen2", [57, 88, 89, 549, 85, 301, 343, 64, 379, 455, 253])]


def run(model, ids, zero=None):
    """Logits [T, V] and each block's output [L, T, D]; zero = (layer, [(token, dim)])."""
    outputs = []

    def at_block(layer):
        def edit(x):
            x = x.clone()
            if zero is not None and zero[0] == layer:
                for t, d in zero[1]:
                    x[t, d] = 0.0
            outputs.append(x.clone())
            return x
        return edit

    edits = [(f"blocks.{l}.hook_resid_post", at_block(l)) for l in range(len(model.layers))]
    _, logits = STEER.run_with(model, ids, edits)
    return logits, outputs


def largest(stream):
    """The TOP entries of largest |x| (ties: token, then dimension) and numpy's median |x|."""
    x = stream.numpy()
    T, D = x.shape
    order = sorted(((-abs(x[t, d]), t, d) for t in range(T) for d in range(D)))
    magnitudes = sorted(abs(v) for v in x.ravel())
    gap = magnitudes[-TOP] - magnitudes[-TOP - 1]
    assert gap > 1e-3, f"the {TOP}th and next magnitudes are {gap:.2g} apart: pick other ids"
    top = [{"token": t, "dim": d, "value": float(x[t, d])} for _, t, d in order[:TOP]]
    return {"top": top, "median": float(np.median(np.abs(x)))}


def sink_shares(cfg, W, ids):
    forward = M.gpt2_forward if cfg["model_type"] == "gpt2" else M.llama_forward
    kwargs = {"prefix": "transformer."} if cfg["model_type"] == "gpt2" and any(
        k.startswith("transformer.") for k in W) else {}
    A = np.asarray(forward(W, cfg, ids, [1] * len(ids), **kwargs)["attentions"])
    return (A[..., :, 0] / A.sum(-1)).mean(-1).tolist(), forward, kwargs


def top1_margin(logits):
    two = torch.topk(logits, 2).values
    return float(two[0] - two[1])


def compare(clean, ablated, first):
    kls, changes = [], 0
    for i in range(ablated.shape[0]):
        # a top-1 decided by less than float32 can tell would not be a fair test of the engine
        assert min(top1_margin(clean[first + i]), top1_margin(ablated[i])) > 1e-3, i
        p = torch.log_softmax(clean[first + i], -1)
        q = torch.log_softmax(ablated[i], -1)
        kls.append(float((p.exp() * (p - q)).sum()))
        changes += int(clean[first + i].argmax() != ablated[i].argmax())
    return {"positions": len(kls), "mean_kl": float(np.mean(kls)), "top1_changes": changes}


def check_against_numpy(outputs, forward, kwargs, cfg, W, ids):
    hidden = forward(W, cfg, ids, [1] * len(ids), **kwargs)["hidden_states"]
    for l in range(len(outputs) - 1):  # the last entry of hidden_states is after the final norm
        assert np.abs(outputs[l].numpy() - hidden[l + 1]).max() < 1e-9, l


def case(name, ids):
    model, cfg = I.build(name)
    W = S.load_folder_f64(os.path.join(I.MODELS, name))
    shares, forward, kwargs = sink_shares(cfg, W, ids)
    logits, outputs = run(model, ids)
    check_against_numpy(outputs, forward, kwargs, cfg, W, ids)
    layers = [largest(o) for o in outputs]
    peaks = [abs(l["top"][0]["value"]) for l in layers]
    arise = next(l for l, p in enumerate(peaks) if p >= max(peaks) / 2)
    zeroed = [(e["token"], e["dim"]) for e in layers[arise]["top"]]
    zero_logits, _ = run(model, ids, zero=(arise, zeroed))
    drop_logits, _ = run(model, ids[1:])
    drop = compare(logits, drop_logits, 1)
    drop["sink_share"] = sink_shares(cfg, W, ids[1:])[0]
    return {"model": name, "ids": ids, "top": TOP, "layers": layers, "arise_layer": arise,
            "sink_share": shares, "zero_massive": compare(logits, zero_logits, 0),
            "drop_first": drop}


def main():
    os.makedirs(OUT, exist_ok=True)
    golden = {"generator": "tools/golden/make_sink_goldens.py",
              "cases": [case(name, ids) for name, ids in CASES]}
    with open(os.path.join(OUT, "golden.json"), "w") as fh:
        json.dump(golden, fh, indent=1)
        fh.write("\n")
    for c in golden["cases"]:
        print(f'{c["model"]}: arise layer {c["arise_layer"]}, '
              f'zero-massive KL {c["zero_massive"]["mean_kl"]:.4g}, '
              f'drop-first KL {c["drop_first"]["mean_kl"]:.4g}')


if __name__ == "__main__":
    main()
