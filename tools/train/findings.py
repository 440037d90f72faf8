#!/usr/bin/python3
"""docs/zoo.md, "Finding: Post-LN, Pre-LN and RealFormer": Post-LN, Pre-LN and RealFormer (trained identically on English) compared by
per-layer attention entropy and adjacent-layer Jensen-Shannon divergence on held-out text.

    /usr/bin/python3 tools/train/findings.py [model ...]      (default: post_ln pre_ln realformer)

For every held-out window (64 bytes; data.English) the attention maps of tools/zoo/model.py are
measured with the engine's definitions (tools/golden/analysis_ref.py): the entropy of each
(layer, head, query) row in nats, and the JSD in bits between the rows of (l, h, t) and
(l + 1, h, t).  Causal rows near the start have few keys and so a small entropy whatever the
model learned; only queries t >= 8 (9 or more keys) count.  Prints the medians per layer (and the
mean JSD) as a Markdown table.
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(REPO, "tools", "zoo"), os.path.join(REPO, "tools", "golden")]

import numpy as np  # noqa: E402
import torch  # noqa: E402

import analysis_ref as A  # noqa: E402
import data  # noqa: E402
import model as M  # noqa: E402

FIRST_QUERY = 8


def measure(name, windows):
    model = M.load(os.path.join(REPO, "resources", "models", name))
    with torch.no_grad():
        att = torch.stack(model(windows)["attentions"], 1).double().numpy()  # [N, L, H, T, T]
    rows = att[:, :, :, FIRST_QUERY:]
    entropy = A.entropy(rows)                           # [N, L, H, T']
    jsd = A.jsd_bits(rows[:, :-1], rows[:, 1:])         # [N, L-1, H, T']
    L = att.shape[1]
    return ([float(np.median(entropy[:, l])) for l in range(L)],
            [float(np.median(jsd[:, l])) for l in range(L - 1)],
            [float(np.mean(jsd[:, l])) for l in range(L - 1)])


def main():
    torch.set_num_threads(1)
    names = sys.argv[1:] or ["post_ln", "pre_ln", "realformer"]
    windows, _ = data.English(64).held_out(count=256)
    print(f"{len(windows)} held-out windows of {windows.shape[1]} bytes, queries t >= {FIRST_QUERY}\n")
    print("| model | median entropy per layer (nats) | median JSD l/l+1 (bits) | mean JSD l/l+1 (bits) |")
    print("|---|---|---|---|")
    for name in names:
        e, jm, ja = measure(name, windows)
        fmt = lambda v: ", ".join(f"{x:.3f}" for x in v)  # noqa: E731
        print(f"| {name} | {fmt(e)} | {fmt(jm)} | {fmt(ja)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
