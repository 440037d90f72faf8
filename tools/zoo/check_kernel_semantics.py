#!/usr/bin/python3
"""Check zoo_kernels.py's FAVOR+ and LSH against the authors' code, and measure what Headlight's
deliberate differences change on the golden inputs.

    /usr/bin/python3 tools/zoo/check_kernel_semantics.py

1. PERFORMER and TRAX (zoo_kernels.py's authors' semantics) against step-by-step numpy walks,
   one head at a time, through the order of operations of the authors' code:
   google-research performer/fast_attention/jax/fast_attention.py (feature creator, then the
   noncausal products or the causal prefix scans, then the guarded renormalisation) and trax
   efficient_attention.py's LSHSelfAttention.forward_unbatched (every round hashed and sorted
   together by bucket·T + position, chunks with a cyclic look-back, length-normalised keys ÷ √d,
   −1e9 causal and −1e5 self penalties, outputs unsorted and combined by the rounds'
   logsumexp).  They must agree to 1e-9.
2. For every favor and lsh model of the goldens (tests/data/zoo, resources/models): the largest
   change of the attentions and logits (float64) when Headlight's semantics (HEADLIGHT_FAVOR,
   HEADLIGHT_LSH, what the goldens store) are replaced by the authors', all at once and one
   field at a time (docs/variants.md says why each differs).

Needs python3-numpy and python3-torch.  Exits 1 when a check of part 1 fails.
"""
import dataclasses
import functools
import json
import math
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import model as M  # noqa: E402
import zoo_attention  # noqa: E402
import zoo_kernels as K  # noqa: E402

TOLERANCE = 1e-9


def performer_walk(q, k, v, w, causal, eps=1e-6):
    """One head, q, k, v [T, d], Ω [m, d]: FAVOR+ as fast_attention.py computes it."""
    normalizer = 1.0 / math.sqrt(math.sqrt(q.shape[-1]))
    ratio = 1.0 / math.sqrt(w.shape[0])

    def features(x, is_query):
        dash = (normalizer * x) @ w.T
        diag = (x * x).sum(-1, keepdims=True) / 2.0 * normalizer * normalizer
        stabiliser = dash.max(-1, keepdims=True) if is_query else dash.max()
        return ratio * (np.exp(dash - diag - stabiliser) + eps)

    qf, kf = features(q, True), features(k, False)
    if causal:
        state, sums, numerator, denominator = 0.0, 0.0, [], []
        for t in range(len(q)):
            state = state + np.outer(kf[t], v[t])
            sums = sums + kf[t]
            numerator.append(qf[t] @ state)
            denominator.append(qf[t] @ sums)
        numerator, denominator = np.array(numerator), np.array(denominator)
    else:
        numerator, denominator = qf @ (kf.T @ v), qf @ kf.sum(0)
    denominator = denominator + 2 * eps * (np.abs(denominator) <= eps)
    return numerator / denominator[:, None]


def trax_walk(q, v, rotations, chunk, causal):
    """One head, shared QK, q, v [T, ·], rotations [rounds, d, b/2]: LSH attention as trax's
    LSHSelfAttention computes it (T a multiple of `chunk`)."""
    T, d = q.shape
    rounds, _, half = rotations.shape
    projected = np.einsum("td,rdk->rtk", q, rotations)
    buckets = np.concatenate([projected, -projected], -1).argmax(-1) + 2 * half * np.arange(rounds)[:, None]
    ticker = np.arange(rounds * T)
    sticker = np.argsort(T * buckets.reshape(-1) + ticker % T, kind="stable")
    undo = np.argsort(sticker, kind="stable")
    position = sticker % T
    queries = q[position].reshape(-1, chunk, d)
    values = v[position].reshape(-1, chunk, v.shape[1])
    info = position.reshape(-1, chunk)
    keys = queries / np.sqrt((queries ** 2).mean(-1, keepdims=True) + 1e-6) / math.sqrt(d)

    def adjacent(x):  # the chunk before (cyclically), then the chunk itself
        return np.concatenate([np.roll(x, 1, axis=0), x], 1)

    keys, values, key_info = adjacent(keys), adjacent(values), adjacent(info)
    dots = queries @ np.swapaxes(keys, -1, -2)
    if causal:
        dots = dots - 1e9 * (info[:, :, None] < key_info[:, None, :])
    dots = dots - 1e5 * (info[:, :, None] == key_info[:, None, :])
    top = dots.max(-1, keepdims=True)
    lse = top + np.log(np.exp(dots - top).sum(-1, keepdims=True))
    out = (np.exp(dots - lse) @ values).reshape(-1, v.shape[1])[undo].reshape(rounds, T, -1)
    lse = lse.reshape(-1)[undo].reshape(rounds, T, 1)
    weights = np.exp(lse - lse.max(0))
    return (out * weights / weights.sum(0)).sum(0)


def check_authors(rng):
    worst = 0.0
    for m, d, orthogonal, causal in [(16, 8, False, False), (64, 32, True, True), (20, 8, True, False),
                                     (12, 8, True, True)]:
        w = K.favor_features(2, 0, m, d, orthogonal).double()
        q, k, v = (rng.standard_normal((2, 3, 9, d)) for _ in range(3))
        a = K.favor_probabilities(torch.tensor(q), torch.tensor(k), w, 1 / math.sqrt(d), causal, K.PERFORMER)
        ours = (a @ torch.tensor(v)).numpy()
        walk = np.stack([[performer_walk(q[b, h], k[b, h], v[b, h], w.numpy(), causal) for h in range(3)]
                         for b in range(2)])
        error = np.abs(ours - walk).max() / np.abs(walk).max()
        worst = max(worst, error)
        print(f"PERFORMER m={m:2d} d={d:2d} orthogonal={orthogonal!s:5} causal={causal!s:5}  {error:.1e}")
    for T, d, buckets, rounds, chunk, causal in [(12, 8, 4, 1, 4, False), (12, 8, 8, 2, 4, True),
                                                 (16, 8, 6, 3, 4, True), (8, 4, 4, 2, 8, False)]:
        q, v = rng.standard_normal((2, 3, T, d)), rng.standard_normal((2, 3, T, 5))
        rotations = K.lsh_rotations(3, 1, d, buckets, rounds).double()
        a = K.lsh_probabilities(torch.tensor(q), torch.tensor(q), rotations, chunk, True, 1 / math.sqrt(d),
                                causal, {}, [], K.TRAX)
        ours = (a @ torch.tensor(v)).numpy()
        walk = np.stack([[trax_walk(q[b, h], v[b, h], rotations.numpy(), chunk, causal) for h in range(3)]
                         for b in range(2)])
        error = np.abs(ours - walk).max() / np.abs(walk).max()
        worst = max(worst, error)
        print(f"TRAX      T={T:2d} buckets={buckets} rounds={rounds} chunk={chunk} causal={causal!s:5}  {error:.1e}")
    return worst <= TOLERANCE


def golden_models():
    for root, listing in (("tests/data", "tests/data/zoo/golden.json"),
                          ("resources/models", "resources/models/goldens.json")):
        with open(os.path.join(REPO, listing)) as f:
            for case in json.load(f)["cases"]:
                folder = os.path.join(REPO, root, case["folder"])
                with open(os.path.join(folder, "config.json")) as g:
                    kernel = json.load(g)["headlight"].get("attention", {}).get("kernel")
                if kernel in ("favor", "lsh"):
                    yield case["name"], folder, kernel, case["ids"]


def forward(folder, ids, favor, lsh):
    zoo_attention.favor_probabilities = functools.partial(K.favor_probabilities, semantics=favor)
    zoo_attention.lsh_probabilities = functools.partial(K.lsh_probabilities, semantics=lsh)
    model = M.load(folder, torch.float64)
    with torch.no_grad():
        out = model(torch.tensor(ids))
    return torch.stack([a.reshape(a.shape[-3:]) for a in out["attentions"]]), out["logits"]


def differences():
    print(f"\n{'golden input':18s} {'authors semantics':32s} {'attentions':>10s} {'logits':>10s}")
    for name, folder, kernel, ids in golden_models():
        ours, authors = ((K.HEADLIGHT_FAVOR, K.PERFORMER) if kernel == "favor" else (K.HEADLIGHT_LSH, K.TRAX))
        changes = [("all", authors)] + [
            (f"{f.name} = {getattr(authors, f.name)!r}", dataclasses.replace(ours, **{f.name: getattr(authors, f.name)}))
            for f in dataclasses.fields(ours) if getattr(ours, f.name) != getattr(authors, f.name)]
        base = forward(folder, ids, K.HEADLIGHT_FAVOR, K.HEADLIGHT_LSH)
        for label, semantics in changes:
            attentions, logits = forward(folder, ids, *((semantics, K.HEADLIGHT_LSH) if kernel == "favor"
                                                         else (K.HEADLIGHT_FAVOR, semantics)))
            print(f"{name:18s} {label:32s} {float((attentions - base[0]).abs().max()):10.2e} "
                  f"{float((logits - base[1]).abs().max()):10.2e}")


def main():
    ok = check_authors(np.random.default_rng(0))
    differences()
    print("\nauthors' semantics reproduced" if ok else f"\nFAILED: a walk differs by more than {TOLERANCE}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
