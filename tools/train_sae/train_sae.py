#!/usr/bin/python3
"""Train sparse autoencoders on zoo models' residual streams (resources/saes): one command,
deterministic seeds, CPU only.

    /usr/bin/python3 tools/train_sae/train_sae.py            # every SAE of SAES, then goldens
    /usr/bin/python3 tools/train_sae/train_sae.py --goldens  # rewrite tests/data/zoo_sae only

Each SAE reads one hook of one zoo model (resources/models) over that model's own training data
(tools/train/data.py: English windows for the English models, task samples for the task models)
and is written in SAELens's 6.x folder layout (cfg.json + sae_weights.safetensors), which
`headlight features --sae` and the window read like any published release (docs/features.md,
"The zoo's SAEs").  Two architectures, as SAELens trains them:

  standard  f = ReLU((x − b_dec) W_enc + b_enc), loss ‖x − x̂‖² + λ Σ_i f_i ‖W_dec,i‖
            (Anthropic's April 2024 update; SAELens's "standard" training SAE)
  topk      the k largest pre-activations kept, ReLU'd, the rest 0; loss ‖x − x̂‖² alone
            (Gao et al. 2024)

with x̂ = f W_dec + b_dec, b_dec initialised to the data's mean, decoder rows unit-norm at the
start, Adam.  The goldens (tests/data/zoo_sae) are the float64 activations of
tools/zoo/model.py at the hook and the SAE encoded with tools/golden/make_sae_goldens.py's
SAELens-semantics functions, never Headlight's own output.
"""
import argparse
import json
import os
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(REPO, "tools", "train"), os.path.join(REPO, "tools", "zoo"),
                os.path.join(REPO, "tools", "golden")]

import numpy as np  # noqa: E402
import torch  # noqa: E402

import byte_tokenizer as B  # noqa: E402
import data  # noqa: E402
import make_sae_goldens as SG  # noqa: E402
import model as Z  # noqa: E402
import safetensors_io as S  # noqa: E402
import train  # noqa: E402

OUT = os.path.join(REPO, "resources", "saes")
GOLDEN = os.path.join(REPO, "tests", "data", "zoo_sae")
MODELS = os.path.join(REPO, "resources", "models")
SIZE_BUDGET = 2 * 1000 * 1000

# name, zoo model, hook, architecture, width, (λ for standard | k for topk), golden text candidates
SAES = [
    ("pre_ln", "pre_ln", "blocks.1.hook_resid_post", "standard", 512, 0.3,
     ["The hacker found 42 bugs in the kernel at 3:15 in the morning.", "A kludge is a clever but ugly fix.",
      "RTFM: read the manual first!", "The kernel at three.", "A bug in 1984."]),
    ("copy", "copy", "blocks.0.hook_resid_post", "topk", 256, 8,
     ["jumpingfox>jumpingfox", "attention>attention", "kernel>kernel", "qwzxv>qwzxv"]),
]
# A golden text is used only when no firing decision lies within this of flipping: 30 times the
# largest error of a hook's activations measured on either backend (3.3e-6, docs/features.md).
MARGIN = 1e-4
# Activations are computed once into a buffer (BUFFER_TOKENS at the real tokens of batches of
# BATCH samples) and each step draws TOKENS_PER_STEP of them.
STEPS, BATCH, LR, SEED = 3000, 32, 1e-3, 1234
BUFFER_TOKENS, TOKENS_PER_STEP = 200_000, 1024


def activations(model, ids, layer):
    """The residual stream after block `layer` (before any final norm): TransformerLens's
    blocks.L.hook_resid_post, read by wrapping the model's sub-layer runner."""
    seen = {}
    run = model.run_sublayer

    def capture(kind, index, x, *rest):
        y = run(kind, index, x, *rest)
        if kind == "f":
            seen[index] = y
        return y

    model.run_sublayer = capture
    try:
        with torch.no_grad():
            model(ids)
    finally:
        del model.run_sublayer
    return seen[layer]


def samples(model_name, rng, batch):
    """Ids [B, T] and the mask of real tokens [B, T] from the model's own training data."""
    zoo = json.load(open(os.path.join(MODELS, model_name, "zoo.json")))
    if zoo["task"] == "english":
        x, _ = data.English(64).batch(rng, batch)
        return x, torch.ones_like(x, dtype=torch.bool)
    x, _ = data.Synthetic(zoo["task"], 4, 12).batch(rng, batch)
    return x, x != B.PAD


def activation_buffer(model, model_name, layer, rng):
    """BUFFER_TOKENS activations of the hook at the real tokens of the model's training data,
    [N, d_in], computed once: the SAE's steps draw from it."""
    parts, count = [], 0
    while count < BUFFER_TOKENS:
        parts.append(batch_acts(model, model_name, rng, layer))
        count += len(parts[-1])
    return torch.cat(parts)[:BUFFER_TOKENS]


def train_sae(name, model_name, hook, architecture, width, knob):
    model = Z.load(os.path.join(MODELS, model_name)).eval()
    layer = int(hook.split(".")[1])
    rng = np.random.RandomState(SEED)
    torch.manual_seed(SEED)
    start = time.time()
    buffer = activation_buffer(model, model_name, layer, rng)
    d_in = buffer.shape[-1]
    W_dec = torch.randn(width, d_in)
    W_dec = (W_dec / W_dec.norm(dim=-1, keepdim=True)).requires_grad_()
    W_enc = W_dec.detach().t().clone().requires_grad_()
    b_enc = torch.zeros(width, requires_grad=True)
    b_dec = buffer.mean(0).clone().requires_grad_()
    params = {"W_enc": W_enc, "W_dec": W_dec, "b_enc": b_enc, "b_dec": b_dec}
    opt = torch.optim.Adam(params.values(), lr=LR)
    case = {"architecture": architecture, "k": knob, "rescale": False, "b_dec_in": True, "norm": "none"}
    for step in range(STEPS):
        x = buffer[torch.from_numpy(rng.randint(0, len(buffer), TOKENS_PER_STEP))]
        f = SG.encode(case, params, x - b_dec)
        x_hat = f @ W_dec + b_dec
        mse = (x - x_hat).pow(2).sum(-1).mean()
        loss = mse + (knob * (f * W_dec.norm(dim=-1)).sum(-1).mean() if architecture == "standard" else 0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if (step + 1) % 500 == 0:
            l0 = float((f > 0).float().sum(-1).mean())
            explained = 1 - float((x - x_hat).pow(2).sum() / (x - x.mean(0)).pow(2).sum())
            print(f"  {name} step {step + 1}: mse {float(mse):.4f}, L0 {l0:.1f}, "
                  f"variance explained {explained:.3f}", flush=True)
    seconds = round(time.time() - start, 1)
    P = {k: v.detach() for k, v in params.items()}
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    saelens = {"architecture": architecture, "d_sae": width, "b_dec_in": True, "norm": "none",
               "model": model_name, "hook": hook, "layout": "6", "k": knob, "rescale": False}
    SG.write_saelens(saelens, P, folder, d_in)
    cfg_path = os.path.join(folder, "cfg.json")
    cfg = json.load(open(cfg_path))
    cfg["metadata"]["dataset_path"] = f"resources/models/{model_name}'s training data (tools/train/data.py)"
    cfg["metadata"]["context_size"] = 64
    cfg["metadata"]["prepend_bos"] = False
    cfg["metadata"]["headlight_training"] = {
        "steps": STEPS, "tokens_per_step": TOKENS_PER_STEP, "buffer_tokens": BUFFER_TOKENS, "lr": LR,
        "seed": SEED, ("l1_coefficient" if architecture == "standard" else "k"): knob, "seconds": seconds,
        "script": "tools/train_sae/train_sae.py"}
    with open(cfg_path, "w", newline="\n") as fh:
        json.dump(cfg, fh, indent=2)
        fh.write("\n")
    print(f"  {name}: {seconds} s", flush=True)


def batch_acts(model, model_name, rng, layer):
    """The hook's activations at every real token of one batch, [N, d_in]."""
    ids, real = samples(model_name, rng, BATCH)
    return activations(model, ids, layer)[real]


def decision_margin(p, architecture, k):
    """How far the closest firing decision is from flipping (float32 could flip a closer one):
    standard, every pre-activation from 0; topk, the k-th from the (k+1)-th largest and the kept
    ones from 0."""
    if architecture == "standard":
        return float(p.abs().min())
    top = p.sort(dim=-1, descending=True).values
    return min(float((top[:, k - 1] - top[:, k]).min()), float(top[:, :k].abs().min()))


def quality(x, y, f):
    """As make_sae_goldens.py and docs/features.md: variance explained, MSE, mean L0."""
    resid = ((x - y) ** 2).sum()
    total = ((x - x.mean(dim=0)) ** 2).sum()
    return {"variance_explained": float(1 - resid / total), "mse": float(resid / x.numel()),
            "l0": int((f != 0).sum()) / int(x.shape[0])}


def write_goldens():
    """tests/data/zoo_sae: per SAE its text's activations in float64 (tools/zoo/model.py) and
    the SAE's features, reconstruction and quality from SAELens's semantics."""
    os.makedirs(os.path.join(GOLDEN, "expected"), exist_ok=True)
    cases = []
    for name, model_name, hook, architecture, width, knob, texts in SAES:
        model = Z.load(os.path.join(MODELS, model_name), torch.float64).eval()
        P = {k: torch.from_numpy(np.asarray(v, dtype=np.float64))
             for k, v in S.load(os.path.join(OUT, name, "sae_weights.safetensors"))[0].items()}
        case = {"architecture": architecture, "k": knob, "rescale": False, "b_dec_in": True, "norm": "none"}
        for text in texts:
            ids = B.encode(text)
            x = activations(model, torch.tensor([ids]), int(hook.split(".")[1]))[0]
            n, sae_in = SG.sae_in_of(case, P, x)
            margin = decision_margin(SG.pre_activations(case, P, sae_in)[0], architecture, knob)
            if margin > MARGIN:
                break
            print(f"  {name}: '{text}' skipped, a firing decision {margin:.1e} from its boundary")
        else:
            sys.exit(f"{name}: every golden text has a firing decision within {MARGIN} of its boundary")
        f = SG.encode(case, P, sae_in)
        y = SG.decode(case, P, n, f, x)
        expected = {"sae_in": (x.float().numpy(), "F32"), "feature_acts": (f.float().numpy(), "F32"),
                    "sae_out": (y.float().numpy(), "F32")}
        S.save(os.path.join(GOLDEN, "expected", name + ".safetensors"), expected)
        cases.append({"name": name, "model": f"resources/models/{model_name}", "sae": f"resources/saes/{name}",
                      "hook": hook, "architecture": architecture, "layout": "saelens-6", "hook_out": "",
                      "text": text, "ids": ids, "firing": int((f != 0).sum()), **quality(x, y, f)})
        print(f"  golden {name}: {cases[-1]['firing']} features fire, "
              f"variance explained {cases[-1]['variance_explained']:.4f}")
    golden = {"generator": "tools/train_sae/train_sae.py", "cases": cases}
    with open(os.path.join(GOLDEN, "golden.json"), "w", newline="\n") as fh:
        json.dump(golden, fh, indent=1)
        fh.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--goldens", action="store_true", help="only rewrite the goldens")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if not args.goldens:
        for name, model_name, hook, architecture, width, knob, _ in SAES:
            print(f"{name}: {architecture} SAE of {width} at {model_name}'s {hook}", flush=True)
            train_sae(name, model_name, hook, architecture, width, knob)
    write_goldens()
    train.check_size(OUT, SIZE_BUDGET, "SAEs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
