"""Training and evaluation of one zoo model (tools/zoo/model.py's HeadlightModel, float32).

AdamW, linear warm-up then cosine decay to a tenth, gradient clipping at 1; the loss is the
cross-entropy of the scored next-byte predictions (of the masked bytes, for a masked-byte
dataset, whose batches carry their targets) plus ACT's ponder cost and the MoE
load-balancing loss at 0.01 each (t2t's act_loss_weight; Fedus et al.'s α).  The seed fixes the
initialisation (torch) and the batches (numpy), so a run is repeatable on the same machine.
"""
import math
import os
import sys
import time

import numpy as np
import torch
from torch.nn import functional as F

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "zoo"))
import model as M  # noqa: E402

AUX_WEIGHT = 0.01


def scored(logits, x, mask, targets=None):
    """(logits, targets) of the scored predictions, each [B, T′]: logits[:, i] predicts x[:, i + 1];
    with masked-byte targets, logits[:, i] predicts targets[:, i]."""
    if targets is None:
        return logits[:, :-1], x[:, 1:]
    return logits, targets


def masked_loss(logits, x, mask, targets=None):
    """Mean cross-entropy over the scored predictions."""
    logits, targets = scored(logits, x, mask, targets)
    return F.cross_entropy(logits[mask], targets[mask])


def evaluate(model, x, mask, targets=None, batch=64):
    """Held-out mean loss (nats per scored byte), accuracy per scored byte and per sample."""
    model.eval()
    losses, right, total, exact = 0.0, 0, 0, 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb, mb = x[i:i + batch], mask[i:i + batch]
            logits, tb = scored(model(xb)["logits"], xb, mb, None if targets is None else targets[i:i + batch])
            ok = (logits.argmax(-1) == tb) | ~mb
            losses += float(F.cross_entropy(logits[mb], tb[mb], reduction="sum"))
            right += int((ok & mb).sum())
            total += int(mb.sum())
            exact += int(ok.all(-1).sum())
    model.train()
    return {"loss": losses / total, "accuracy": right / total, "exact": exact / len(x)}


def check_size(folder, budget, what):
    """Prints what `folder` holds, in MB, and ends the program when that is over `budget` bytes
    (the shipped runs and SAEs each have one)."""
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(folder) for f in fs)
    print(f"{what}: {size / 1e6:.2f} MB in {folder}")
    if size > budget:
        sys.exit(f"the {what} are over their {budget / 1e6:.0f} MB budget")


def keep(checkpoint, step, model):
    """Hands the model to `checkpoint` in eval mode, then resumes training."""
    if checkpoint is not None:
        model.eval()
        checkpoint(step, model)
        model.train()


def train(config, dataset, steps, seed, batch, lr, warmup=100, log_every=10, quiet=False,
          aux_weight=AUX_WEIGHT, halting_bias=None, token_std=None, checkpoint=None):
    """-> model, {"curve": [[step, loss]], "seconds"}; dataset.batch(rng, size) -> (x, mask) or
    (x, mask, targets).
    `checkpoint(step, model)`, when given, is called before the first step (step 0) and after
    every step (the callee decides which to keep; tools/train/train_runs.py), in eval mode.
    `halting_bias` replaces ACT's initial halting bias (t2t's +1 makes every token halt at the
    first step long before the task rewards pondering; a negative one starts by pondering).
    `token_std` replaces the token embeddings' N(0, 0.02): with fixed sinusoids (entries ±1) added,
    0.02 leaves the first layers seeing positions and almost no tokens."""
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    model = M.HeadlightModel(config).float()
    if halting_bias is not None:
        torch.nn.init.constant_(model.act.halting.bias, halting_bias)
    if token_std is not None:
        torch.nn.init.normal_(model.embeddings.token.weight, 0.0, token_std)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.98))
    schedule = lambda s: min(1.0, (s + 1) / warmup) * (0.1 + 0.45 * (1 + math.cos(math.pi * s / steps)))  # noqa
    curve, start, running = [], time.time(), []
    keep(checkpoint, 0, model)
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr * schedule(step)
        x, *scoring = dataset.batch(rng, batch)
        out = model(x)
        loss = masked_loss(out["logits"], x, *scoring)
        total = loss + aux_weight * sum(out["aux"].values())
        opt.zero_grad()
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running.append(float(loss))
        keep(checkpoint, step + 1, model)
        if (step + 1) % log_every == 0 or step + 1 == steps:
            curve.append([step + 1, round(sum(running) / len(running), 4)])
            running = []
            if not quiet and (step + 1) % (log_every * 10) == 0:
                print(f"    step {step + 1:5d}  loss {curve[-1][1]:.4f}  {time.time() - start:6.1f} s", flush=True)
    return model.eval(), {"curve": curve, "seconds": round(time.time() - start, 1)}
