#!/usr/bin/python3
"""Regenerate the head-role goldens under tests/data/head_roles/.

    /usr/bin/python3 tools/golden/make_head_role_goldens.py

Needs python3-numpy and python3-torch (Debian).  Independent of the engine: the attention maps
come from the float64 reference forward passes of models_ref.py on the golden checkpoints of
tests/data/models, and the scores are computed here from the definitions (docs/head-roles.md):

  previous_token, duplicate_token, induction
      TransformerLens's head detector (transformer_lens/head_detector.py, detect_head) with its
      defaults: error_measure "mul", exclude_bos and exclude_current_token false.  A 0/1
      detection pattern D [T, T] per sequence:
        previous token   D[i, i-1] = 1
        duplicate token  D[i, j] = 1 where j < i and ids[j] == ids[i]
        induction        D[i, j] = 1 where 1 <= j <= i and ids[j-1] == ids[i] with j-1 < i
                         (the duplicate pattern shifted one key to the right, key 0 cleared)
      and the head's score on it sum(A * D) / sum(A) over the whole map A [T, T].
  positional      for each offset k in 1..min(8, shortest probe - 1): the mean over queries
                  i >= k of A[i, i-k]; averaged over the sequences, the largest k's value and k
                  (the smallest k on a tie).
  sink            the mean over queries of A[i, 0] / sum_j A[i, j].

Each sequence is scored on its own and the scores are averaged over the sequences.

Writes tests/data/head_roles/probes.json (the fixed probe set: a JSON list of id lists) and
tests/data/head_roles/golden.json (every head's scores per model).  Deterministic; the files are
rewritten.  See docs/head-roles.md and docs/golden-references.md.
"""
import json
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models_ref as M  # noqa: E402
import safetensors_io as S  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "tests", "data", "models")
OUT = os.path.join(REPO, "tests", "data", "head_roles")
CHECKPOINTS = ["gpt2", "llama", "bert"]
MAX_OFFSET = 8


def make_probes():
    """Four sequences: two repeated random halves, one with scattered repeats of few ids, and one
    hand-written with a token repeated next to itself (the induction pattern's diagonal).  Ids 5..379 lie in every checkpoint's vocabulary (BERT's is the
    smallest, 387) and avoid the special ids below 5."""
    rng = np.random.RandomState(33)
    probes = []
    for n in (7, 10):
        half = [int(x) for x in rng.choice(np.arange(5, 380), size=n, replace=False)]
        probes.append(half + half)
    probes.append([int(x) for x in rng.randint(5, 12, size=15)])
    probes.append([17, 17, 23, 17, 23, 40, 41, 17, 40, 23])
    return probes


def load(model):
    folder = os.path.join(MODELS, model)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    return cfg, S.load_folder_f64(folder)


def attentions(cfg, W, ids):
    """[L, H, T, T] from the reference forward pass, no padding."""
    mask = [1] * len(ids)
    mt = cfg["model_type"]
    if mt == "gpt2":
        p = "transformer." if any(k.startswith("transformer.") for k in W) else ""
        out = M.gpt2_forward(W, cfg, ids, mask, prefix=p)
    elif mt == "llama":
        out = M.llama_forward(W, cfg, ids, mask)
    elif mt == "bert":
        p = "bert." if any(k.startswith("bert.") for k in W) else ""
        out = M.bert_forward(W, cfg, ids, mask, [0] * len(ids), prefix=p)
    else:
        raise ValueError(mt)
    return torch.from_numpy(np.asarray(out["attentions"], dtype=np.float64))


def detection_patterns(ids):
    """The three 0/1 patterns [T, T] of the definitions above, built with torch."""
    t = torch.tensor(ids)
    T = len(ids)
    rows = torch.arange(T).unsqueeze(1)
    cols = torch.arange(T).unsqueeze(0)
    previous = (cols == rows - 1).double()
    same = t.unsqueeze(1) == t.unsqueeze(0)           # same[i, j]: ids[i] == ids[j]
    duplicate = (same & (cols < rows)).double()
    # induction[i, j] = duplicate[i, j-1] for j >= 1
    induction = torch.zeros(T, T, dtype=torch.float64)
    induction[:, 1:] = duplicate[:, :-1]
    induction = induction * (cols <= rows).double()
    return {"previous_token": previous, "duplicate_token": duplicate, "induction": induction}


def mul_score(A, D):
    return float((A * D).sum() / A.sum())


def positional_means(A, T):
    """[MAX_OFFSET] the mean weight at each offset this sequence has (NaN beyond)."""
    means = [float("nan")] * MAX_OFFSET
    for k in range(1, min(MAX_OFFSET, T - 1) + 1):
        means[k - 1] = float(torch.diagonal(A, offset=-k).mean())
    return means


def sink(A):
    return float((A[:, 0] / A.sum(dim=1)).mean())


def score_model(model, probes):
    cfg, W = load(model)
    maps = [attentions(cfg, W, ids) for ids in probes]
    L, H = maps[0].shape[:2]
    shortest = min(len(ids) for ids in probes)
    heads = []
    for layer in range(L):
        for head in range(H):
            per = {"previous_token": [], "duplicate_token": [], "induction": [], "sink": []}
            offsets = []
            for ids, A in zip(probes, maps):
                a = A[layer, head]
                for name, D in detection_patterns(ids).items():
                    per[name].append(mul_score(a, D))
                per["sink"].append(sink(a))
                offsets.append(positional_means(a, len(ids)))
            scores = {name: float(np.mean(values)) for name, values in per.items()}
            best_k, best = 1, None
            for k in range(1, min(MAX_OFFSET, shortest - 1) + 1):
                mean = float(np.mean([o[k - 1] for o in offsets]))
                if best is None or mean > best:
                    best_k, best = k, mean
            scores["positional"] = best
            scores["positional_offset"] = best_k
            heads.append({"layer": layer, "head": head, "scores": scores})
    return heads


def main():
    os.makedirs(OUT, exist_ok=True)
    probes = make_probes()
    with open(os.path.join(OUT, "probes.json"), "w") as f:
        f.write(json.dumps(probes) + "\n")
    golden = {"probe_file": "probes.json",
              "models": {m: {"heads": score_model(m, probes)} for m in CHECKPOINTS}}
    with open(os.path.join(OUT, "golden.json"), "w") as f:
        f.write(json.dumps(golden, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
