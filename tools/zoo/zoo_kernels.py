"""The attention kernels other than softmax that train (docs/variants.md, options 3 and 4), ported
from the engine's (core/variants/linearized_attention.cpp, lsh_attention.cpp) with the same
random numbers: Performer's FAVOR+ and Reformer's LSH."""
import functools
import math

import numpy as np
import torch

from zoo_reference import VR


# ------------------------------------------------------------------------------------------
# the other trained kernels: the engine's, with its random numbers
# ------------------------------------------------------------------------------------------

FAVOR_PURPOSE, LSH_PURPOSE = 0x101, 0x100  # SeededRandom stream purposes (seeded_random.h)
FEATURE_EPS = 1e-30  # linearized_attention.cpp's kFeatureEps: only avoids 0/0


def _normals(random, count):
    return [random.normal() for _ in range(count)]


@functools.lru_cache(maxsize=64)
def favor_features(seed, layer, m, d, orthogonal):
    """FAVOR+'s W [m, d] as the engine draws it (f32 values): with `orthogonal`, ⌈m/d⌉ blocks of
    d × d normals made orthonormal row by row by classical Gram–Schmidt (in double), then m × d
    normals whose row norms scale the rows (chi-distributed lengths, Choromanski et al. 2020b
    §2.4); else m × d iid normals, row-major."""
    random = VR.SeededRandom(VR.stream_seed(seed, FAVOR_PURPOSE, layer))
    if not orthogonal:
        w = np.array(_normals(random, m * d)).reshape(m, d)
        return torch.from_numpy(w.astype(np.float32))
    rows = []
    for _ in range(0, m, d):
        block = np.array(_normals(random, d * d)).reshape(d, d)
        for r in range(d):  # in place and in order, as gramSchmidt() does
            for p in range(r):
                block[r] -= np.dot(block[r], block[p]) * block[p]
            block[r] /= math.sqrt(np.dot(block[r], block[r]))
        rows.append(block)
    rows = np.concatenate(rows)[:m]
    lengths = np.sqrt((np.array(_normals(random, m * d)).reshape(m, d) ** 2).sum(-1))
    return torch.from_numpy((rows * lengths[:, None]).astype(np.float32))


def favor_map(x, w, scale, per_row):
    """φ(x) = exp(W x' − ‖x'‖²/2 − c) / √m, x' = x·scale^½ (Performer's positive features,
    Choromanski et al. 2020b, eq. 5): E[φ(q)·φ(k)] ∝ exp(scale·q·k).  The stabiliser c, which
    cancels between numerator and denominator, is each query's row maximum and the maximum of a
    key head over every position and feature, as in the engine (no gradient flows through it)."""
    x = x * math.sqrt(scale)
    logits = x @ w.t() - 0.5 * (x * x).sum(-1, keepdim=True)
    c = logits.amax(-1, keepdim=True) if per_row else logits.amax((-2, -1), keepdim=True)
    return torch.exp(logits - c.detach() - 0.5 * math.log(w.shape[0]))


def favor_probabilities(q, k, w, scale, causal):
    """Linearized attention with FAVOR+ (Katharopoulos et al. 2020 eq. 4–6): A = φ(Q)φ(K)ᵀ ⊙ mask,
    row-normalised with ε = 1e-30, so that A V is the engine's prefix-sum context
    (φq_i · Σ_{j≤i} φk_j v_jᵀ)/(φq_i · Σ_{j≤i} φk_j + ε) and A its implied attention map."""
    phi_q, phi_k = favor_map(q, w, scale, True), favor_map(k, w, scale, False)
    a = phi_q @ phi_k.transpose(-1, -2)
    if causal:
        T = q.shape[-2]
        a = a * torch.tril(torch.ones(T, T, dtype=a.dtype, device=a.device))
    return a / (a.sum(-1, keepdim=True) + FEATURE_EPS)


@functools.lru_cache(maxsize=64)
def lsh_rotations(seed, layer, d, buckets, rounds):
    """R_r [d, b/2] for each round r as the engine draws them (f32 values): round after round,
    d × b/2 normals row-major -> [rounds, d, b/2]."""
    random = VR.SeededRandom(VR.stream_seed(seed, LSH_PURPOSE, layer))
    half = buckets // 2
    r = np.array(_normals(random, rounds * d * half)).reshape(rounds, d, half)
    return torch.from_numpy(r.astype(np.float32))


def lsh_buckets(x, rotation):
    """Angular LSH h(x) = argmax [xR; −xR] (Andoni et al. 2015; Kitaev et al. 2020 §2), ties to the
    first entry; -> buckets and the smallest gap between the two largest entries, relative to the
    largest (for golden margins)."""
    p = x @ rotation
    p = torch.cat([p, -p], -1)
    top = p.topk(2, -1).values
    return p.argmax(-1), ((top[..., 0] - top[..., 1]) / top[..., 0].clamp_min(1e-300)).min()


def lsh_probabilities(q, k, rotations, chunk, shared_qk, scale, causal, record, margins):
    """Reformer LSH attention (Kitaev et al. 2020) as the engine's lsh_attention.cpp computes it,
    as a dense [B, H, T, T] map: per round, positions sorted by (query bucket, position) and cut
    into chunks of c = min(chunk, T); query i sees the keys sorted into its chunk or the one
    before, in its bucket and not in its future.  Shared QK: keys k̂_j = q_j/‖q_j‖ and no query
    attends itself unless nothing else is allowed (then only itself); else the checkpoint's
    keys, hashed with the same R (a query left with no key attends its own).  Rounds are combined
    with weights exp(lse_r − log Σ_r exp lse_r), lse_r the round's log-normaliser (§2.3).
    The hashing and sort are discrete; gradients flow through the scores of the kept pairs."""
    T = q.shape[-2]
    c = min(chunk, T)
    chunks = (T + c - 1) // c
    keys = q / q.norm(dim=-1, keepdim=True) if shared_qk else k
    scores = scale * q @ keys.transpose(-1, -2)
    positions = torch.arange(T, device=q.device)
    allowed_base = torch.ones(T, T, dtype=torch.bool, device=q.device)
    if causal:
        allowed_base = positions[None, :] <= positions[:, None]
    self_pair = torch.eye(T, dtype=torch.bool, device=q.device)
    probs, lse = [], []
    for r in range(rotations.shape[0]):
        rotation = rotations[r].to(q.dtype).to(q.device)
        with torch.no_grad():
            qb, margin = lsh_buckets(q, rotation)
            margins.append(margin)
            kb = qb
            if not shared_qk:
                kb, margin = lsh_buckets(k, rotation)
                margins.append(margin)
            order = torch.argsort(qb * T + positions, -1)    # sorted by (bucket, position) [B, H, T]
            slot = torch.argsort(order, -1)                  # each position's sorted slot
            block = slot // c
            window = torch.ones_like(allowed_base)[None, None]
            if chunks > 1:  # its own chunk or the previous one
                gap = block[..., :, None] - block[..., None, :]
                window = (gap == 0) | (gap == 1)
            allowed = window & (kb[..., None, :] == qb[..., :, None]) & allowed_base
            if shared_qk:
                allowed = allowed & ~self_pair
            allowed = allowed | (self_pair & ~allowed.any(-1, keepdim=True))
        suffix = "" if r == 0 else f".{r}"
        record["lsh_buckets" + suffix] = qb.to(q.dtype)
        record["lsh_order" + suffix] = order.to(q.dtype)
        if not shared_qk:
            record["lsh_key_buckets" + suffix] = kb.to(q.dtype)
        masked = scores.masked_fill(~allowed, -math.inf)
        probs.append(torch.softmax(masked, -1))
        lse.append(torch.logsumexp(masked, -1))
    if len(probs) == 1:
        return probs[0]
    weights = torch.softmax(torch.stack(lse), 0)              # [rounds, B, H, T]
    return sum(w[..., None] * p for w, p in zip(weights, probs))
