#!/usr/bin/python3
"""Train Headlight's checkpointed runs (resources/runs): one command, deterministic seeds, CPU.

    /usr/bin/python3 tools/train/train_runs.py                 # every run, in RUNS order
    /usr/bin/python3 tools/train/train_runs.py --only induction

A run is a zoo model trained as tools/train/train_zoo.py trains one, keeping its weights every
`every` steps so that the window's scrubber (docs/scrubber.md) can replay how it learned.  The
task is the zoo's copy (4-12 letters, '>', the letters again): each answer letter is predicted by
an induction head (find the earlier copy of the current letter, predict what followed it;
Olsson et al. 2022, "In-context Learning and Induction Heads"), which needs two layers: a
previous-token head whose output the induction head's keys read (K-composition).  Hence the two
runs: two layers, where the loss sits at the letters' entropy and then drops suddenly as the
heads form, and one layer, the control, where they cannot (docs/zoo.md, "Finding: an induction
head forms").

Layout (docs/scrubber.md): <run>/run.json lists the checkpoints with their held-out loss, and each
<run>/step_NNNNNN/ is a complete zoo model folder (docs/zoo-format.md) with its own zoo.json.
"""
import argparse
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(REPO, "tools", "zoo")]

import torch  # noqa: E402

import byte_tokenizer as B  # noqa: E402
import data  # noqa: E402
import model as M  # noqa: E402
import train  # noqa: E402

OUT = os.path.join(REPO, "resources", "runs")
SIZE_BUDGET = 16 * 1000 * 1000  # both runs together


def config(layers):
    """The zoo's copy model (train_zoo.py: Post-LN, RoPE, D 64, 4 heads) with a narrower FFN
    (I = 64, so that 31 checkpoints of a run stay near 8 MB)."""
    return {"model_type": "headlight", "vocab_size": B.VOCAB_SIZE, "hidden_size": 64,
            "num_hidden_layers": layers, "num_attention_heads": 4, "intermediate_size": 64,
            "max_position_embeddings": 64, "layer_norm_eps": 1e-5, "is_decoder": True,
            "headlight": {"position": "rope"}}


# The zoo's copy recipe (train_zoo.py TASK): 4-12 letters, '>', the letters again, only the
# answer scored.  Why copy and not repeated random tokens: with a fixed repeat distance a
# single layer learns the offset instead (both runs reached the same loss); with a varying one
# neither run left the plateau within 2,000 steps on this machine's budget.
RECIPE = dict(steps=1500, every=50, batch=32, lr=2e-3, low=4, high=12, seed=1234)
TEXT = "jumpingfox>jumpingfox"  # ten distinct letters: one induction target per answer
RUNS = [
    ("induction", 2, "Two layers (Post-LN, RoPE) on copy: the loss sits at the letters' entropy, then drops "
     "suddenly as layer 1's heads become induction heads (Olsson et al. 2022)"),
    ("induction_1layer", 1, "One layer, trained as the induction run: the control, where no induction head can "
     "form (it needs a previous-token head in an earlier layer)"),
]


def step_folder(step):
    return f"step_{step:06d}"


def train_run(name, layers, description):
    folder = os.path.join(OUT, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    ds = data.Synthetic("copy", RECIPE["low"], RECIPE["high"])
    held = ds.held_out()
    checkpoints = []

    def checkpoint(step, model):
        if step % RECIPE["every"]:
            return
        loss = round(train.evaluate(model, *held)["loss"], 4)
        sub = os.path.join(folder, step_folder(step))
        M.save(model, sub, {"format": "pt", "run": name, "step": str(step)})
        B.write(sub)
        meta = {"name": f"{name} @ step {step}", "task": "copy", "description": description,
                "training": {"step": step, "of": RECIPE["steps"], **RECIPE}, "result": {"heldout_loss": loss},
                "example_text": TEXT}
        with open(os.path.join(sub, "zoo.json"), "w", newline="\n") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        checkpoints.append({"step": step, "folder": step_folder(step), "loss": loss})
        print(f"  {name} step {step:5d}  held-out loss {loss:.4f}", flush=True)

    print(f"{name}: {layers} layer(s), {RECIPE['steps']} steps", flush=True)
    _, log = train.train(config(layers), ds, RECIPE["steps"], RECIPE["seed"], RECIPE["batch"], RECIPE["lr"],
                         quiet=True, checkpoint=checkpoint)
    run = {"format": "headlight-run", "name": name, "description": description, "text": TEXT,
           "task": "copy: 4-12 letters, '>', the same letters again; only the answer scored",
           "training": {**RECIPE, "optimizer": "AdamW (0.9, 0.98), wd 0.01, warm-up 100, cosine to 0.1, clip 1",
                        "seconds": log["seconds"], "threads": torch.get_num_threads()},
           "checkpoints": checkpoints}
    with open(os.path.join(folder, "run.json"), "w", newline="\n") as f:
        json.dump(run, f, indent=1)
        f.write("\n")


def main():
    global OUT
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="runs to retrain (the others are kept)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--out", default=OUT, help="the runs folder (default resources/runs)")
    args = parser.parse_args()
    OUT = args.out
    torch.set_num_threads(args.threads)
    names = [r[0] for r in RUNS]
    for name in args.only or []:
        if name not in names:
            sys.exit(f"unknown run '{name}' (one of {', '.join(names)})")
    for name, layers, description in RUNS:
        if not args.only or name in args.only:
            train_run(name, layers, description)
    train.check_size(OUT, SIZE_BUDGET, "runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
