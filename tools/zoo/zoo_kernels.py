"""The attention kernels other than softmax that train (docs/variants.md, options 3 and 4):
Performer's FAVOR+ and Reformer's LSH attention, written from the papers and from the semantics
of their authors' published code, not from Headlight's engine:

  FAVOR+  Choromanski et al., "Rethinking Attention with Performers", ICLR 2021 (§2: positive
          random features, Lemma 1, and orthogonal random features); the authors' code is
          google-research/google-research, performer/fast_attention/jax/fast_attention.py
          (nonnegative_softmax_kernel_feature_creator, GaussianOrthogonalRandomMatrix,
          FastAttentionviaLowRankDecomposition).
  LSH     Kitaev, Kaiser and Levskaya, "Reformer: The Efficient Transformer", ICLR 2020 (§2:
          angular LSH, sort, chunks with one chunk of look-back, shared QK, no attending to
          oneself, multi-round combination by the rounds' log-normalisers); the authors' code is
          google/trax, trax/layers/research/efficient_attention.py (hash_vecs, look_adjacent,
          mask_self_attention, attend, LSHSelfAttention.forward_unbatched), the same semantics as
          Hugging Face's LSHSelfAttention.

Both are computed here in the authors' order of operations (FAVOR+: feature maps, then the
normalised product; LSH: sort, chunk, attend within the window, unsort, combine rounds) and
returned as dense [B, H, T, T] attention maps, which is what HeadlightModel multiplies by V.

Where Headlight deliberately differs from the authors' code, each difference is a named field of
FavorSemantics / LshSemantics, and HEADLIGHT_FAVOR / HEADLIGHT_LSH (what the goldens and the zoo
use) differ from PERFORMER / TRAX (the authors' code) only in those fields; docs/variants.md says
why for each.  The random matrices are inputs of the algorithms (like weights) and come from the
engine's documented draw: SplitMix64 streams of `seed` (seeded_random.h), one per layer."""
import dataclasses
import functools
import math

import numpy as np
import torch

from zoo_reference import VR


FAVOR_PURPOSE, LSH_PURPOSE = 0x101, 0x100  # SeededRandom stream purposes (seeded_random.h)


def _normals(seed, purpose, layer, count):
    """`count` standard normals of the stream (seed, purpose, layer), in draw order (float64)."""
    random = VR.SeededRandom(VR.stream_seed(seed, purpose, layer))
    return np.array([random.normal() for _ in range(count)])


# ------------------------------------------------------------------------------------------
# FAVOR+ (Performer)
# ------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class FavorSemantics:
    """What FAVOR+'s feature map and normaliser do where implementations may differ.

    stabilizer  ε added to every positive feature, φ(x) = m^-½ (exp(·) + ε): the authors'
                numerical_stabilizer (1e-6); 0 keeps E[φ(q)·φ(k)] ∝ exp(q·k/√d) exact.
    shift       what the max-stabiliser c is taken of, per query row / per key head (positions and
                features): "projection" = max of ωᵢ·x' alone (the authors' data_dash), "exponent"
                = max of ωᵢ·x' − ‖x'‖²/2 (every row's largest feature is then exactly 1).  With
                ε = 0 c cancels between numerator and denominator, so only float rounding and
                underflow depend on it; with ε > 0 it sets ε's weight.
    guard       the denominator D = φ(q)·Σφ(k): "performer" adds 2ε only where |D| ≤ ε (the
                authors' renormalisation with their numerical_stabilizer ε); a float adds it to
                every D (only to avoid 0/0)."""
    stabilizer: float
    shift: str
    guard: object


PERFORMER = FavorSemantics(stabilizer=1e-6, shift="projection", guard="performer")
HEADLIGHT_FAVOR = FavorSemantics(stabilizer=0.0, shift="exponent", guard=1e-30)


@functools.lru_cache(maxsize=64)
def favor_features(seed, layer, m, d, orthogonal):
    """The random projection Ω [m, d] (f32 values), rows ωᵢ.

    iid: m × d normals of the stream, row-major (the authors' GaussianUnstructuredRandomMatrix).
    orthogonal (the authors' GaussianOrthogonalRandomMatrix, scaling = 0):
    ⌈m/d⌉ blocks of d × d normals; each block's rows are made orthonormal (Q of the QR
    factorisation of the block's transpose, signs fixed so that R has a positive diagonal: the
    rows' Gram–Schmidt basis, in order), the blocks stacked and cut to m rows; then row i is
    scaled by the norm of row i of a further m × d normals (so each ωᵢ has the length of a
    Gaussian d-vector).  Draw order: the blocks (row-major, one after another), then the m × d
    normals of the lengths."""
    if not orthogonal:
        w = _normals(seed, FAVOR_PURPOSE, layer, m * d).reshape(m, d)
        return torch.from_numpy(w.astype(np.float32))
    blocks = -(-m // d)
    draws = _normals(seed, FAVOR_PURPOSE, layer, blocks * d * d + m * d)
    gaussian = draws[:blocks * d * d].reshape(blocks, d, d)
    q, r = np.linalg.qr(np.swapaxes(gaussian, -1, -2))       # columns of q: the rows, orthonormal
    q = q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[:, None, :]
    rows = np.swapaxes(q, -1, -2).reshape(blocks * d, d)[:m]
    lengths = np.linalg.norm(draws[blocks * d * d:].reshape(m, d), axis=-1)
    return torch.from_numpy((lengths[:, None] * rows).astype(np.float32))


def favor_map(x, w, scale, query, semantics=HEADLIGHT_FAVOR):
    """Positive random features of q or k [B, H, T, d] (Performer Lemma 1, the authors'
    nonnegative_softmax_kernel_feature_creator):

        x' = x·scale^½ (the authors' data_normalizer d^-¼ when scale = 1/√d)
        φ(x) = m^-½ (exp(Ωx' − ‖x'‖²/2 − c) + ε)

    so that E[φ(q)·φ(k)] = e^{−c_q−c_k} exp(scale·q·k) when ε = 0.  c: each query row's maximum,
    each key head's maximum over positions and features (of what: semantics.shift)."""
    x = x * math.sqrt(scale)
    projection = x @ w.t()                                   # [B, H, T, m]
    exponent = projection - 0.5 * (x * x).sum(-1, keepdim=True)
    source = projection if semantics.shift == "projection" else exponent
    axes = (-1,) if query else (-2, -1)
    c = source.amax(axes, keepdim=True)
    if semantics.shift == "exponent":
        c = c.detach()  # a constant that cancels: no gradient through it
    return (torch.exp(exponent - c) + semantics.stabilizer) / math.sqrt(w.shape[0])


def favor_probabilities(q, k, w, scale, causal, semantics=HEADLIGHT_FAVOR):
    """FAVOR+ attention as its implied map A [B, H, T, T]: A = diag(D)⁻¹ (φ(Q)φ(K)ᵀ ⊙ M), D the
    row sums (after the guard), M = 1 or, with `causal`, the lower triangle.  A V is the authors'
    output: noncausal φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1), causal the prefix sums of φ(k_j)v_jᵀ and
    φ(k_j) (their _numerator and _denominator scans)."""
    phi_q = favor_map(q, w, scale, True, semantics)
    phi_k = favor_map(k, w, scale, False, semantics)
    kernel = phi_q @ phi_k.transpose(-1, -2)
    if causal:
        kernel = torch.tril(kernel)
    total = kernel.sum(-1, keepdim=True)
    if semantics.guard == "performer":
        eps = semantics.stabilizer
        total = total + 2 * eps * (total.abs() <= eps).to(total.dtype)
    else:
        total = total + semantics.guard
    return kernel / total


# ------------------------------------------------------------------------------------------
# LSH attention (Reformer)
# ------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class LshSemantics:
    """What LSH attention does where implementations may differ (Kitaev et al. 2020; trax).

    same_bucket   keys of another bucket that fall in a query's window are masked (the ideal
                  P_i = {j : h(q_i) = h(k_j)} of §2) or attended (trax, Hugging Face: only the
                  sort and the chunks select keys).
    wrap          the first chunk looks back at the last one, cyclically over the rounds' chunks
                  laid end to end (trax's look_adjacent on all rounds sorted together), or at
                  nothing.
    masked        the additive logit of a masked pair (causal, padding, and for same_bucket
                  another bucket): trax subtracts 1e9; math.inf removes the pair.
    self_penalty  subtracted from the logit of a query with its own key, so that a query attends
                  itself only when it has no other valid target (§2, causal masking for shared-QK
                  attention): trax subtracts 1e5 with shared QK (its self-mask value); the penalty
                  stays in the round's log-normaliser, so a round in which a query has only
                  itself weighs exp(−1e5) ≈ 0 beside a round that offers it other keys.
                  Separate keys: only the own key that a query falls back on is penalised.
    shared_logit  shared QK, the logit of a query with key k̂_j: "unit" = q_i·k_j/√(‖k_j‖² + d·1e-6)
                  (trax's length_normalized then ÷√d; HF's _len_and_dim_norm: unit keys, no
                  further scale), "scaled" = scale · q_i·k_j/‖k_j‖ (unit keys, then the layer's
                  1/√d like every other logit).

    Separate keys (shared_qk = False) are Headlight's extension (the authors' LSH attention always
    shares QK): keys are hashed with the queries' rotations and take the queries' sorted slots, so
    a query's own key is always in its chunk, and a query left with no key attends its own key
    (with masked = inf; a finite `masked` leaves such a row over its masked keys)."""
    same_bucket: bool
    wrap: bool
    masked: float
    self_penalty: float
    shared_logit: str


TRAX = LshSemantics(same_bucket=False, wrap=True, masked=1e9, self_penalty=1e5, shared_logit="unit")
HEADLIGHT_LSH = LshSemantics(same_bucket=True, wrap=False, masked=math.inf, self_penalty=1e5,
                             shared_logit="scaled")


@functools.lru_cache(maxsize=64)
def lsh_rotations(seed, layer, d, buckets, rounds):
    """The random rotations R [rounds, d, b/2] (f32 values; trax's random_rotations [d, rounds,
    b/2] with the rounds first): round after round, d × b/2 normals of the stream, row-major."""
    r = _normals(seed, LSH_PURPOSE, layer, rounds * d * (buckets // 2))
    return torch.from_numpy(r.reshape(rounds, d, buckets // 2).astype(np.float32))


def lsh_hash(x, rotations):
    """Angular LSH (Andoni et al. 2015; Reformer §2): h(x) = argmax [xR; −xR] per round, the
    first of equal entries.  x [B, H, T, d], rotations [rounds, d, b/2] -> buckets [rounds, B, H,
    T] and the smallest relative gap (top − second)/top over every hashed vector (how close any
    argmax came to a tie, for the goldens' margin check)."""
    projected = torch.einsum("bhtd,rdk->rbhtk", x, rotations.to(x.dtype).to(x.device))
    both = torch.cat([projected, -projected], -1)
    top = both.topk(2, -1).values
    gap = (top[..., 0] - top[..., 1]) / top[..., 0].clamp_min(1e-300)
    return both.argmax(-1), gap.min()


def _take(x, index):
    """x [B, H, T, ...] gathered along T by index [B, H, N] -> [B, H, N, ...]."""
    shape = index.shape + x.shape[3:]
    flat = index.reshape(index.shape + (1,) * (x.dim() - 3))
    return torch.gather(x, 2, flat.expand(shape))


def lsh_probabilities(q, k, rotations, chunk, shared_qk, scale, causal, record, margins,
                      semantics=HEADLIGHT_LSH):
    """LSH attention of q, k [B, H, T, d] as a dense map [B, H, T, T].

    Per round r (its own rotation): queries hashed; every position sorted by (bucket, position),
    i.e. by bucket·T + position (trax's buckets_and_t), and the sorted order cut into chunks of
    c = min(chunk, T) slots (the last padded with empty slots).  The rounds' chunks are laid end to
    end; each chunk's queries attend the keys of their own chunk and of the chunk before it (the
    authors' n_chunks_before = 1, n_chunks_after = 0), under the masks of `semantics`, with one
    softmax over that window and its log-normaliser lse_r(i).  Unsorted, the rounds combine as
    Σ_r softmax_r(lse_r(i)) · A_r(i, ·) (§2, multi-round LSH attention; trax's logsumexp over
    rounds); a key seen in several rounds counts in each.

    The discrete part (hashes, sort, windows, masks) carries no gradient; the logits of the window
    pairs do.  `record` receives the internals (per round r, names suffixed ".r" for r ≥ 1):
    lsh_buckets, lsh_order (the sorted positions) and, for separate keys, lsh_key_buckets;
    `margins` receives each hashing's smallest relative gap."""
    B, H, T, d = q.shape
    rounds = rotations.shape[0]
    c = min(chunk, T)
    n = -(-T // c)  # chunks per round
    device = q.device
    positions = torch.arange(T, device=device)

    with torch.no_grad():
        query_buckets, gap = lsh_hash(q, rotations)            # [R, B, H, T]
        margins.append(gap)
        key_buckets = query_buckets
        if not shared_qk:
            key_buckets, gap = lsh_hash(k, rotations)
            margins.append(gap)
        order = torch.argsort(query_buckets * T + positions, -1)  # sorted positions, [R, B, H, T]
        for r in range(rounds):
            suffix = "" if r == 0 else f".{r}"
            record["lsh_buckets" + suffix] = query_buckets[r].to(q.dtype)
            record["lsh_order" + suffix] = order[r].to(q.dtype)
            if not shared_qk:
                record["lsh_key_buckets" + suffix] = key_buckets[r].to(q.dtype)

        # slots: [B, H, R·n, c] positions (−1 = empty), laid out round after round; `row` is each
        # slot's (round, position) as round·T + position, an index into [B, H, R·T] tensors
        empty = torch.full((rounds, B, H, n * c - T), -1, dtype=order.dtype, device=device)
        slots = torch.cat([order, empty], -1).permute(1, 2, 0, 3).reshape(B, H, rounds * n, c)
        round_of = (torch.arange(rounds * n, device=device) // n)[:, None]
        row = (round_of * T + slots.clamp_min(0)).reshape(B, H, -1)

        def per_slot(x):
            """x [R, B, H, T] -> its value at each slot [B, H, R·n, c]."""
            return torch.gather(x.permute(1, 2, 0, 3).reshape(B, H, -1), -1, row).reshape(slots.shape)

        slot_query_buckets, slot_key_buckets = per_slot(query_buckets), per_slot(key_buckets)

        def with_previous(x, missing):
            """x [B, H, R·n, c] -> [B, H, R·n, 2c]: the previous chunk's entries, then its own."""
            previous = torch.roll(x, 1, dims=2)
            if not semantics.wrap:  # the first chunk of every round looks back at nothing
                first = (torch.arange(rounds * n, device=device) % n == 0)[:, None]
                previous = torch.where(first, torch.full_like(previous, missing), previous)
            return torch.cat([previous, x], -1)

        key_slots = with_previous(slots, -1)                     # [B, H, R·n, 2c]
        window_buckets = with_previous(slot_key_buckets, -1)
        query_pos, key_pos = slots[..., :, None], key_slots[..., None, :]
        valid_query, valid_key = query_pos >= 0, key_pos >= 0
        blocked = ~valid_key
        if causal:
            blocked = blocked | (key_pos > query_pos)
        if semantics.same_bucket:
            blocked = blocked | (window_buckets[..., None, :] != slot_query_buckets[..., :, None])
        itself = valid_key & (key_pos == query_pos)

    if shared_qk:
        norms = q.norm(dim=-1, keepdim=True) if semantics.shared_logit == "scaled" else \
            torch.sqrt((q * q).sum(-1, keepdim=True) + d * 1e-6)
        keys, logit_scale = q / norms, scale if semantics.shared_logit == "scaled" else 1.0
    else:
        keys, logit_scale = k, scale
    flat_slots, flat_keys = slots.clamp_min(0).reshape(B, H, -1), key_slots.clamp_min(0).reshape(B, H, -1)
    sorted_q = _take(q, flat_slots).reshape(B, H, rounds * n, c, d)
    window_k = _take(keys, flat_keys).reshape(B, H, rounds * n, 2 * c, d)
    logits = logit_scale * sorted_q @ window_k.transpose(-1, -2)   # [B, H, R·n, c, 2c]

    with torch.no_grad():
        removed, penalised = blocked, itself
        if not shared_qk:  # only the own key that a query falls back on
            penalised = itself & ~(~blocked).any(-1, keepdim=True)
            if semantics.masked == math.inf:
                removed = blocked & ~penalised
        penalty = torch.zeros_like(logits).masked_fill(removed, -semantics.masked)
        penalty = penalty - semantics.self_penalty * penalised.to(logits.dtype)
        penalty = penalty.masked_fill(~valid_query, 0.0)  # empty slots: any finite row, unused
    logits = logits + penalty
    probs = torch.softmax(logits, -1)
    lse = torch.logsumexp(logits, -1)                              # [B, H, R·n, c]

    # back to positions: each round's lse per query, the rounds' weights, the dense map
    valid = valid_query[..., 0].to(q.dtype)                        # [B, H, R·n, c]
    lse_rows = torch.zeros(B, H, rounds * T, dtype=q.dtype, device=device).scatter_add(
        -1, row, (lse * valid).reshape(B, H, -1))                  # each (round, query) once
    weights = torch.softmax(lse_rows.reshape(B, H, rounds, T), 2)  # [B, H, R, T]
    slot_weight = torch.gather(weights.reshape(B, H, rounds * T), -1, row).reshape(B, H, rounds * n, c)
    contribution = probs * (slot_weight * valid)[..., None]
    contribution = contribution * valid_key.to(q.dtype)
    cell = (slots.clamp_min(0)[..., :, None] * T + key_slots.clamp_min(0)[..., None, :])
    dense = torch.zeros(B, H, T * T, dtype=q.dtype, device=device).scatter_add(
        -1, cell.reshape(B, H, -1), contribution.reshape(B, H, -1))
    return dense.reshape(B, H, T, T)
