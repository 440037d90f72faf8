"""Transformer-XL segment recurrence (Dai et al. 2019) with its relative positions, and the
Compressive Transformer's compressed memory (Rae et al. 2020), for tools/zoo/model.py.

The sequence runs in segments of S tokens.  Attention sub-layer n keeps, per sequence, the
inputs it saw in earlier segments (docs/variants.md, option 17: layer n−1's output, which is
this sub-layer's input, never the same layer's output), at most M rows, with no gradient.  Rows
pushed out of that memory are mean-pooled c at a time into a compressed memory of at most Mc
rows.  Keys and values read [compressed | memory | segment]; queries the segment only.

With "position": "xl" the scores are the four terms of Dai et al. 2019 §3.3,

    a_ij = ((q_i + u)·k_j + (q_i + v)·r_{δ}) / √d,   δ = distance from key slot j to query i,

r_δ = W_R R_δ split per head, R the sinusoid table, every slot of the extended sequence counting
as one position; keys with δ < 0 (the future) are masked.
"""
import math

import torch
from torch import nn


def recurrence_spec(h, T):
    """The `recurrence` section with defaults (one segment of T tokens, no memory); refuses
    shapes whose memory cannot be pooled."""
    spec = dict({"segment": T, "memory": 0, "compressed": 0, "rate": 2}, **h.get("recurrence", {}))
    S, M, Mc, c = spec["segment"], spec["memory"], spec["compressed"], spec["rate"]
    if S < 1:
        raise ValueError("recurrence.segment is at least 1")
    if M % S:
        raise ValueError("recurrence.memory is a multiple of recurrence.segment")
    if Mc and (c < 1 or S % c):
        raise ValueError("recurrence.rate divides recurrence.segment")
    return spec


class SegmentMemory:
    """Per attention sub-layer: the compressed and the recent memory, [B, rows, D] or None."""

    def __init__(self, spec):
        self.M, self.Mc, self.c = spec["memory"], spec["compressed"], spec["rate"]
        self.recent, self.compressed = {}, {}

    def extended(self, index, x):
        """[compressed | memory | x] and the number of compressed rows at its front."""
        parts = [p for p in (self.compressed.get(index), self.recent.get(index)) if p is not None]
        front = self.compressed[index].shape[-2] if index in self.compressed else 0
        return torch.cat(parts + [x], -2), front

    def push(self, index, x):
        """Appends the segment's inputs; rows beyond M leave, pooled into the compressed memory."""
        rows = torch.cat([p for p in (self.recent.get(index), x.detach()) if p is not None], -2)
        leaving = rows.shape[-2] - self.M
        if self.M:
            self.recent[index] = rows[..., -self.M:, :]
        if self.Mc and leaving > 0:
            old = rows[..., :leaving, :]
            pooled = old.reshape(*old.shape[:-2], leaving // self.c, self.c, old.shape[-1]).mean(-2)
            parts = [p for p in (self.compressed.get(index), pooled) if p is not None]
            self.compressed[index] = torch.cat(parts, -2)[..., -self.Mc:, :]


def relative_parameters(attention, D):
    """W_R, u and v of one attention sub-layer (trained; u = v = 0 at the start)."""
    attention.relative = nn.Linear(D, D, bias=False)
    attention.u = nn.Parameter(torch.zeros(D))
    attention.v = nn.Parameter(torch.zeros(D))


def distances(S, K):
    """δ[i, j] = (K − S + i) − j: how far key slot j lies before query i of the segment."""
    return (K - S + torch.arange(S)[:, None]) - torch.arange(K)[None, :]


def scores(attention, heads, q, k, table):
    """The xl scores [B, H, S, K] before masking; q [B, S, D] projected, k [B, H, K, d] split,
    table the sinusoid rows R_0 … R_{K−1}."""
    S, K = q.shape[-2], k.shape[-2]
    content = heads(q + attention.u) @ k.transpose(-1, -2)
    r = heads(attention.relative(table)[None])                     # [1, H, K, d], r[δ]
    position = heads(q + attention.v) @ r.transpose(-1, -2)        # [B, H, S, K] by δ
    index = distances(S, K).clamp_min(0).to(q.device)
    position = position.gather(-1, index.expand(*position.shape[:-2], S, K))
    return (content + position) / math.sqrt(k.shape[-1])
