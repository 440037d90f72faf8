"""HeadlightModel: the PyTorch side of the zoo checkpoint format (docs/zoo-format.md).

One nn.Module for every trained variant of the `headlight` architecture: the sizes come from
config.json's Hugging Face keys and the architecture from its `headlight` section.  It loads and
saves the exact tensor names of the format, returns the attention probabilities and the
internals the engine reports, and trains (float32, autograd; ACT's ponder cost, the MoE
load-balancing loss and the adaptive span's mean z come back as auxiliary losses).  Run in float64 it writes the goldens the
C++ engine is checked against (tools/zoo/make_zoo_goldens.py).

    model = load("resources/models/x")                 # or HeadlightModel(config_dict)
    out = model(ids)                                     # ids [T] or [B, T]
    out["logits"], out["attentions"], out["internals"], out["aux"]
    save(model, "folder")                                # config.json + model.safetensors

The attention-level options of the variant spec (docs/variants.md) that training needs run on
the softmax path in the documented order: `prior` (residual, residual_mean, share, gaussian),
`mask` (the sparse-mask code of tools/golden/variant_reference.py, imported), `span` (adaptive
span; z learnable, written back to config.json), `talking_heads` (the mixes learnable, written
back likewise), `drop_ffn`.  Besides softmax, two `attention.kernel`s train, ported from the
engine's (core/variants/linearized_attention.cpp, lsh_attention.cpp) with the same random numbers
(SplitMix64 streams of `seed`): `favor` (Performer) and `lsh` (Reformer); and `linformer`
(encoders) with learned projections E, F per layer (compressed_attention.cpp).  Other kernels,
`early_exit` and key padding are refused.
"""
import functools
import json
import math
import os
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden"))
_default_dtype = torch.get_default_dtype()
import safetensors_io  # noqa: E402
import variant_reference as VR  # noqa: E402  (sets float64 as the default dtype on import)
import transformer_xl as XL  # noqa: E402

torch.set_default_dtype(_default_dtype)

DEFAULTS = {
    "position": "learned",
    "norm": {"kind": "layer", "placement": "post", "residual": "plain"},
    "order": {"kind": "standard", "sandwich": 0},
    "ffn": {"activation": "gelu", "experts": 0, "routing": "top_k", "k": 2},
    "t5": {"buckets": 32, "max_distance": 128},
    "act": {"max_steps": 0, "threshold": 0.99},
    "reversible": False,
}
VARIANT_KEYS = {"attention", "seed", "mask", "prior", "span", "talking_heads", "drop_ffn", "recurrence"}
FUNNEL_DEFAULTS = {"blocks": [], "stride": 2}  # the optional `funnel` key (no default block list)
GLU_FAMILY = ("glu", "geglu", "swiglu", "reglu")
# Attention kernels that train, and the engine's defaults of their options (variant_spec.h).
TRAINED_KERNELS = ("softmax", "favor", "lsh", "linformer")
KERNEL_DEFAULTS = {"features": 64, "orthogonal": True,
                   "buckets": 8, "rounds": 1, "chunk": 32, "shared_qk": True, "projected": 32}
# Tensors that live in config.json (variant spec values), not in model.safetensors.
CONFIG_PARAMETERS = ("span_z", "talking_heads_logits", "talking_heads_weights")


def resolve(config):
    """The `headlight` section with every default filled in; refuses what the model cannot run."""
    section = config.get("headlight", {})
    h = {}
    for key, default in DEFAULTS.items():
        value = section.get(key, default)
        h[key] = dict(default, **value) if isinstance(default, dict) else value
    for key in section:
        if key not in DEFAULTS and key not in VARIANT_KEYS and key != "funnel":
            raise ValueError(f"headlight: unsupported key '{key}'")
        if key in VARIANT_KEYS:
            h[key] = section[key]
    kernel = h.get("attention", {}).get("kernel", "softmax")
    if kernel not in TRAINED_KERNELS:
        raise ValueError(f"headlight: the '{kernel}' attention kernel does not train here "
                         f"(one of {', '.join(TRAINED_KERNELS)})")
    if kernel != "softmax":
        unknown = set(h["attention"]) - set(KERNEL_DEFAULTS) - {"kernel"}
        if unknown:
            raise ValueError(f"headlight: attention keys {sorted(unknown)} do not apply to '{kernel}'")
        # the engine's kernels never form the score matrix these options act on
        if any(key in h for key in ("mask", "prior", "span", "talking_heads")) or \
                h["position"] in ("alibi", "t5"):
            raise ValueError(f"headlight: the '{kernel}' kernel takes no mask, prior, span, talking "
                             "heads, ALiBi or T5 bias")
    if kernel == "linformer" and config.get("is_decoder", False):
        raise ValueError("headlight: Linformer projects keys and values along the whole sequence, so "
                         "a query would see the future; it needs an encoder (no is_decoder)")
    if h["reversible"] and (h["norm"]["placement"] != "pre" or h["order"]["kind"] != "standard"
                            or h["norm"]["residual"] != "plain"):
        raise ValueError("reversible needs pre placement, plain residuals and the standard order")
    if h["norm"]["residual"] == "gtrxl" and h["norm"]["placement"] != "pre":
        raise ValueError("gtrxl needs pre placement")
    if h["act"]["max_steps"] and (config["num_hidden_layers"] != 1 or h["position"] != "sinusoidal"):
        raise ValueError("act needs num_hidden_layers = 1 and position sinusoidal")
    if h["ffn"]["experts"] == 1:
        raise ValueError("ffn.experts is 0 or at least 2")
    if h["position"] == "xl" or "recurrence" in h:
        check_recurrence(config, h)
    if "funnel" in section:
        h["funnel"] = dict(FUNNEL_DEFAULTS, **section["funnel"])
        check_funnel(config, h)
    return h


def check_funnel(config, h):
    """The Funnel Transformer pools an encoder's sequence between blocks; the attention maps are
    rectangular, so options that build a T × T map, positions applied inside attention and the
    other depth loops are refused (as core/variants/applicability.cpp does)."""
    funnel = h["funnel"]
    if set(funnel) - set(FUNNEL_DEFAULTS):
        raise ValueError(f"funnel: unknown keys {sorted(set(funnel) - set(FUNNEL_DEFAULTS))}")
    blocks, stride = funnel["blocks"], funnel["stride"]
    if not blocks or any(not isinstance(b, int) or b < 1 for b in blocks):
        raise ValueError("funnel.blocks lists the layers of each block (at least one, each ≥ 1)")
    if sum(blocks) != config["num_hidden_layers"]:
        raise ValueError(f"funnel: the blocks hold {sum(blocks)} layers but the model has "
                         f"{config['num_hidden_layers']}")
    if not isinstance(stride, int) or stride < 2:
        raise ValueError("funnel.stride is an integer ≥ 2")
    if config.get("is_decoder", False):
        raise ValueError("funnel: pooling averages neighbouring tokens, so a query would see the "
                         "future; the Funnel Transformer is an encoder (no is_decoder)")
    if h["position"] not in ("learned", "sinusoidal", "none"):
        raise ValueError("funnel runs with learned, sinusoidal or no positions (added at the input)")
    clash = [k for k in ("attention", "mask", "prior", "span", "talking_heads", "recurrence") if k in h]
    if clash or h["order"]["kind"] != "standard" or h["act"]["max_steps"] or h["reversible"] or \
            h["ffn"]["experts"]:
        raise ValueError("funnel runs softmax attention on rectangular maps with the standard order; it does "
                         "not combine with attention kernels, masks, priors, spans, talking heads, "
                         "recurrence, ACT, reversible layers or experts")


def funnel_pooling(T, stride, dtype):
    """P [⌈T/s⌉, T]: row i averages rows s·i … s·i + s − 1 (a trailing shorter group alone), so
    P x is Funnel's strided mean pooling (Dai et al. 2020, §2.2)."""
    rows = (T + stride - 1) // stride
    P = torch.zeros(rows, T, dtype=dtype)
    for i in range(rows):
        group = range(stride * i, min(stride * i + stride, T))
        P[i, group.start:group.stop] = 1.0 / len(group)
    return P


def funnel_internals(funnel, T, lengths):
    """funnel_length [L]: the rows each layer outputs (its map's query rows); funnel_merge
    [blocks, T]: the row of block b that input token t was pooled into, ⌊t / s^b⌋."""
    s, B = funnel["stride"], len(funnel["blocks"])
    merge = torch.stack([torch.div(torch.arange(T), s ** b, rounding_mode="floor") for b in range(B)])
    return {"funnel_length": torch.tensor(lengths, dtype=torch.float64), "funnel_merge": merge.double()}


def check_recurrence(config, h):
    """Transformer-XL runs a causal stack of softmax attention with xl, learned or sinusoidal
    positions; options acting on a T × T map or on whole-sequence internals are refused."""
    if not config.get("is_decoder", False):
        raise ValueError("recurrence and xl positions need a causal model (is_decoder)")
    if h["position"] not in ("xl", "learned", "sinusoidal"):
        raise ValueError("recurrence runs with xl, learned or sinusoidal positions")
    clash = [k for k in ("mask", "prior", "span", "talking_heads") if k in h]
    if h.get("attention", {}).get("kernel", "softmax") != "softmax":
        raise ValueError("recurrence runs softmax attention segment by segment, not another kernel")
    if clash or h["act"]["max_steps"] or h["reversible"] or h["ffn"]["experts"]:
        raise ValueError("recurrence does not combine with masks, priors, spans, talking heads, "
                         "ACT, reversible layers or experts")
    XL.recurrence_spec(h, 1 << 30)


# ------------------------------------------------------------------------------------------
# norms (catalogue N1, N2, N4, N5)
# ------------------------------------------------------------------------------------------

class LayerNorm(nn.Module):
    """(x − μ)/√(σ² + eps)·w + b (Ba et al. 2016)."""

    def __init__(self, D, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(D))
        self.bias = nn.Parameter(torch.zeros(D))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)


class RMSNorm(nn.Module):
    """x/√(mean(x²) + eps)·w (Zhang & Sennrich 2019)."""

    def __init__(self, D, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(D))

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.eps) * self.weight


class ScaleNorm(nn.Module):
    """g·x/√(‖x‖² + eps), one learned scalar g initialised to √D (Nguyen & Salazar 2019)."""

    def __init__(self, D, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.full((1,), math.sqrt(D)))

    def forward(self, x):
        return self.weight * x * torch.rsqrt((x * x).sum(-1, keepdim=True) + self.eps)


class AdaNorm(nn.Module):
    """C(1 − k·y)⊙y with y = (x − μ)/√(σ² + eps), k = 0.1, C = 1, no parameters (Xu et al. 2019);
    as in the paper, no gradient flows through the factor C(1 − k·y)."""

    K, C = 0.1, 1.0

    def __init__(self, D, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        y = F.layer_norm(x, x.shape[-1:], None, None, self.eps)
        return (self.C * (1.0 - self.K * y)).detach() * y


NORMS = {"layer": LayerNorm, "rms": RMSNorm, "scale": ScaleNorm, "ada": AdaNorm}


# ------------------------------------------------------------------------------------------
# feed-forward (F1) and mixture of experts (F3, F4, F6)
# ------------------------------------------------------------------------------------------

ACTIVATIONS = {
    "relu": F.relu,
    "gelu": F.gelu,                                          # erf form (Hendrycks & Gimpel 2016)
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "swish": F.silu,                                         # x·σ(x) (Ramachandran et al. 2018)
}
# GLU family: act(x W_gate) ⊙ (x W_up) (Dauphin et al. 2017; Shazeer 2020)
GATES = {"glu": torch.sigmoid, "geglu": F.gelu, "swiglu": F.silu, "reglu": F.relu}


class FeedForward(nn.Module):
    """down(act(up x)), or down(act(gate x) ⊙ up x) for the GLU family."""

    def __init__(self, D, I, activation):
        super().__init__()
        if activation not in ACTIVATIONS and activation not in GATES:
            raise ValueError(f"unknown ffn.activation '{activation}'")
        self.activation = activation
        self.up = nn.Linear(D, I)
        if activation in GATES:
            self.gate = nn.Linear(D, I)
        self.down = nn.Linear(I, D)

    def forward(self, x):
        if self.activation in GATES:
            return self.down(GATES[self.activation](self.gate(x)) * self.up(x))
        return self.down(ACTIVATIONS[self.activation](self.up(x)))


def route_top_k(logits, k):
    """GShard (Lepikhin et al. 2020): g = softmax(r), the k largest gates renormalised to sum 1
    (descending order)."""
    weight, choice = torch.softmax(logits, -1).topk(k, -1)
    return choice, weight / weight.sum(-1, keepdim=True)


def route_switch(logits):
    """Switch (Fedus et al. 2021): top-1, the output scaled by its gate probability."""
    weight, choice = torch.softmax(logits, -1).topk(1, -1)
    return choice, weight


def splitmix64(value):
    """The first draw of SeededRandom seeded with `value` (core/variants/seeded_random.h)."""
    return VR.SeededRandom(value).next()


def route_hash(ids, experts):
    """Hash layers (Roller et al. 2021): expert = SplitMix64(token id) mod E, weight 1."""
    table = {int(t): splitmix64(int(t)) % experts for t in torch.unique(ids)}
    choice = torch.tensor([[table[int(t)] for t in row] for row in ids.reshape(-1, ids.shape[-1])])
    choice = choice.reshape(*ids.shape, 1).to(ids.device)
    return choice, torch.ones(choice.shape, device=ids.device)


def load_balancing_loss(probabilities, choice, experts):
    """E·Σ_e f_e·P_e: f_e the share of routed slots sent to e, P_e the mean gate probability
    (Fedus et al. 2021, eq. 4; 1 when perfectly balanced)."""
    f = F.one_hot(choice, experts).to(probabilities.dtype).mean(dim=tuple(range(choice.dim())))
    P = probabilities.reshape(-1, experts).mean(0)
    return experts * (f * P).sum()


# ------------------------------------------------------------------------------------------
# positions (P1, P2, P7, P11, P15, P17)
# ------------------------------------------------------------------------------------------

def sinusoid(T, D, dtype):
    """PE[t, 2i] = sin(t/10000^(2i/D)), PE[t, 2i+1] = cos(…) (Vaswani et al. 2017)."""
    return VR.sinusoid(T, D).to(dtype)


def rope_tables(T, d, dtype):
    """cos, sin [T, d] of RoPE, θ = 10000, HF rotate-half layout (Su et al. 2021)."""
    inv = 1.0 / 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * inv[None]
    angle = torch.cat([angle, angle], -1)
    return angle.cos().to(dtype), angle.sin().to(dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


def alibi_bias(H, T, dtype):
    """−m_h·|i − j| with Press et al.'s slopes (ALiBi, Press et al. 2022)."""
    return VR.alibi_bias(H, T).to(dtype)


def t5_bucket(relative, bidirectional, buckets, max_distance):
    """HF's _relative_position_bucket (Raffel et al. 2020) of r = j − i: half the buckets for
    r > 0 when bidirectional, r ≤ 0 only when causal; exact below buckets/2 (of the half), then
    logarithmic up to max_distance."""
    bucket = torch.zeros_like(relative)
    if bidirectional:
        buckets //= 2
        bucket += (relative > 0).long() * buckets
        relative = relative.abs()
    else:
        relative = -relative.clamp_max(0)
    exact = buckets // 2
    # in float32, as HF computes it (the truncation follows float32 rounding)
    large = exact + (torch.log(relative.float() / exact) / math.log(max_distance / exact)
                     * (buckets - exact)).long()
    large = large.clamp_max(buckets - 1)
    return bucket + torch.where(relative < exact, relative, large)


# ------------------------------------------------------------------------------------------
# the other trained kernels (catalogue A2.2, A3): the engine's, with its random numbers
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


# ------------------------------------------------------------------------------------------
# attention: the softmax path of docs/variants.md, in its order of operations
# ------------------------------------------------------------------------------------------

class AttentionPath:
    """What the attention sub-layers of one forward pass share: the mask, the additive bias, the
    span ramps, the head mixes, the prior's score stream and Lazyformer's shared map.

        S = QKᵀ/√d;  S += prior(S_{l−1});  L = S + bias;  L = P_l ×_head L
        A = softmax(L | mask);  A = m_z ⊙ A / Σ m_z ⊙ A;  A = P_w ×_head A;  (share);  out = A V
    """

    def __init__(self, model, T, dtype, device):
        h, H = model.h, model.H
        self.T = T
        self.prior = dict({"kind": "none", "every": 2, "sigma": 4.0}, **h.get("prior", {}))
        allowed = torch.ones(1, T, T, dtype=torch.bool)
        if "mask" in h:  # sparse masks (catalogue A1), the code of variant_reference.py
            allowed = VR.sparse_mask(h["mask"], T, H) > 0
        if model.causal:
            allowed = allowed & torch.tril(torch.ones(T, T, dtype=torch.bool))
        self.allowed = allowed.to(device)
        self.bias = None
        if h["position"] == "alibi":
            self.bias = alibi_bias(H, T, dtype).to(device)
        elif h["position"] == "t5":  # bias[h, i, j] = relative_bias[bucket(j − i), h]
            r = torch.arange(T)[None, :] - torch.arange(T)[:, None]
            b = t5_bucket(r, not model.causal, h["t5"]["buckets"], h["t5"]["max_distance"]).to(device)
            self.bias = model.embeddings.relative_bias(b).permute(2, 0, 1)
        if self.prior["kind"] == "gaussian":  # −(i − j)²/(2σ²), centres p_i = i (Yang et al. 2018)
            g = VR.gaussian_prior(T, self.prior["sigma"]).to(dtype).to(device)
            self.bias = g if self.bias is None else self.bias + g
        self.span = None
        if model.span_z is not None:  # m_z(x) = clamp((R + z − x)/R, 0, 1), x = |i − j|
            R = float(h["span"].get("ramp", 32.0))
            x = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).abs().to(dtype).to(device)
            self.span = ((R + model.span_z[:, None, None] - x) / R).clamp(0.0, 1.0)
        self.mix_l, self.mix_w = model.talking_heads_logits, model.talking_heads_weights
        self.rope = rope_tables(T, model.D // H, dtype) if h["position"] == "rope" else None
        if self.rope is not None:
            self.rope = tuple(t.to(device) for t in self.rope)
        self.causal = model.causal
        self.kernel = dict(KERNEL_DEFAULTS, **h.get("attention", {"kernel": "softmax"}))
        self.seed = int(h.get("seed", 0))
        self.internals = {}       # "layer{index}.<name>" -> the kernels' internals [B, ...]
        self.features = {}        # "layer{index}.features" -> FAVOR+'s W (no batch dimension)
        self.margins = []         # LSH: relative gaps between the two largest hash entries
        self.stream = None        # the prior's running scores, unmasked and without biases
        self.incoming = {}        # index -> stream before it (replays for reversible layers)
        self.shared = {}          # index -> map (share)

    def scores_prior(self, index, scores):
        """RealFormer residual S_l = raw_l + S_{l−1} (He et al. 2020), or the running mean
        S_l = (raw_l + l·S_{l−1})/(l + 1) (RealFormer fn. 6)."""
        kind = self.prior["kind"]
        if kind not in ("residual", "residual_mean"):
            return scores
        replay = index in self.incoming  # a reversible layer recomputing its inputs
        if not replay:
            self.incoming[index] = self.stream
        before = self.incoming[index]
        if before is not None:
            scores = scores + before if kind == "residual" else (scores + index * before) / (index + 1)
        if not replay:
            self.stream = scores
        return scores

    def linformer(self, index, q, k, scale, E, F):
        """Linformer (Wang et al. 2020a): A = softmax(scale·Q (E_T K)ᵀ) [B, H, T, k] over k slots,
        each a learned mix of the T keys (E_T = E[:, :T], the columns of the positions present);
        out = A (F_T V), returned as the token-level map A·F_T [B, H, T, T] (its rows need not be
        positive nor sum to 1: F mixes values freely)."""
        T = k.shape[-2]
        E, F = E[:, :T], F[:, :T]
        weights = torch.softmax(q @ (E @ k).transpose(-1, -2) * scale, -1)
        self.internals[f"layer{index}.compressed_probabilities"] = weights
        self.features[f"layer{index}.projection"] = E.detach()
        self.features[f"layer{index}.value_projection"] = F.detach()
        return weights @ F

    def probabilities(self, index, q, k, *projections):
        """q, k [B, H, T, d] -> A [B, H, T, T] for attention sub-layer `index` (`projections`:
        Linformer's E, F)."""
        every = self.prior["every"]
        if self.prior["kind"] == "share" and index % every != 0:
            return self.shared[index - index % every]  # Lazyformer (Ying et al. 2021)
        if self.rope is not None:
            cos, sin = self.rope
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        kernel, scale = self.kernel["kernel"], 1.0 / math.sqrt(q.shape[-1])
        if kernel == "favor":
            w = favor_features(self.seed, index, self.kernel["features"], q.shape[-1],
                               bool(self.kernel["orthogonal"]))
            self.features[f"layer{index}.features"] = w.to(q.dtype)
            return favor_probabilities(q, k, w.to(q.dtype).to(q.device), scale, self.causal)
        if kernel == "linformer":
            return self.linformer(index, q, k, scale, *projections)
        if kernel == "lsh":
            rotations = lsh_rotations(self.seed, index, q.shape[-1], self.kernel["buckets"],
                                      self.kernel["rounds"])
            record = {}
            probs = lsh_probabilities(q, k, rotations, self.kernel["chunk"], bool(self.kernel["shared_qk"]),
                                      scale, self.causal, record, self.margins)
            self.internals.update({f"layer{index}.{name}": v for name, v in record.items()})
            return probs
        scores = self.scores_prior(index, q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]))
        if self.bias is not None:
            scores = scores + self.bias
        if self.mix_l is not None:  # talking heads, logits (Shazeer et al. 2020)
            scores = torch.einsum("ab,nbtk->natk", self.mix_l, scores)
        empty = ~self.allowed.any(-1, keepdim=True)
        scores = scores.masked_fill(~self.allowed, -math.inf).masked_fill(empty, 0.0)
        probs = torch.softmax(scores, -1)
        if self.span is not None:  # adaptive span (Sukhbaatar et al. 2019a)
            probs = probs * self.span
            probs = probs / probs.sum(-1, keepdim=True).clamp_min(1e-30)
        if self.mix_w is not None:  # talking heads, weights
            probs = torch.einsum("ab,nbtk->natk", self.mix_w, probs)
        if self.prior["kind"] == "share":
            self.shared.setdefault(index, probs)
        return probs


class SegmentPath:
    """What the attention sub-layers of one Transformer-XL segment share: the memories, whether
    this is the last segment (whose inputs no later segment reads) and the relative table."""

    def __init__(self, model, memory, last):
        self.memory, self.last, self.D = memory, last, model.D
        self.relative = model.h["position"] == "xl"
        self.fronts = {}  # attention index -> compressed rows in front of its keys

    def table(self, K):
        return sinusoid(K, self.D, torch.float64)


class FunnelPath:
    """The Funnel Transformer's attention: plain softmax(QKᵀ/√d) on maps of any shape (queries
    pooled, keys not, in the first layer of a pooled block)."""

    def __init__(self):
        self.internals, self.features, self.margins = {}, {}, []

    @staticmethod
    def probabilities(index, q, k):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1)


def segment_means(k, P):
    """[k, P]: row s averages positions ⌊s·P/k⌋ … ⌊(s+1)·P/k⌋ − 1, the Linformer paper's pooling
    projection.  Why start E, F there: with RoPE keys a pooled slot sits at a relative offset
    from each query, so slot choice is learnable at once; N(0, 1/P) projections left a masked-byte
    encoder at the unigram loss for 1500 steps (docs/zoo.md)."""
    E = torch.zeros(k, P)
    for s in range(k):
        lo, hi = s * P // k, (s + 1) * P // k
        E[s, lo:hi] = 1.0 / (hi - lo)
    return E


class Attention(nn.Module):
    """Multi-head self-attention, out = W_o concat_h(A_h V_h) (Vaswani et al. 2017); keys and
    values come from `source` when given (Funnel's pooled queries over the unpooled rows)."""

    def __init__(self, D, H, relative=False, compressed=None):
        super().__init__()
        self.H = H
        self.query, self.key, self.value, self.output = (nn.Linear(D, D) for _ in range(4))
        if relative:  # Transformer-XL's W_R, u, v (transformer_xl.py)
            XL.relative_parameters(self, D)
        self.projections = ()
        if compressed:  # Linformer's E, F [k, P], learned from the mean-pooling projection
            self.linformer_e, self.linformer_f = (nn.Parameter(segment_means(*compressed)) for _ in range(2))
            self.projections = (self.linformer_e, self.linformer_f)

    def heads(self, t):  # [.., T, H·d] -> [.., H, T, d]
        return t.reshape(*t.shape[:-1], self.H, -1).transpose(-3, -2)

    def forward(self, x, path, index, source=None):
        B, T, D = x.shape
        if isinstance(path, SegmentPath):
            probs, v = self.segment_probabilities(x, path, index)
        else:
            v = x if source is None else source
            probs = path.probabilities(index, self.heads(self.query(x)), self.heads(self.key(v)),
                                       *self.projections)
        context = (probs @ self.heads(self.value(v))).transpose(1, 2).reshape(B, T, D)
        return self.output(context), probs

    def segment_probabilities(self, x, path, index):
        """Transformer-XL: the segment's queries over [compressed | memory | segment]."""
        extended, front = path.memory.extended(index, x)
        S, K = x.shape[-2], extended.shape[-2]
        k = self.heads(self.key(extended))
        if path.relative:
            scores = XL.scores(self, self.heads, self.query(x), k, path.table(K).to(x.dtype))
        else:
            scores = self.heads(self.query(x)) @ k.transpose(-1, -2) / math.sqrt(k.shape[-1])
        probs = torch.softmax(scores.masked_fill(XL.distances(S, K) < 0, -math.inf), -1)
        if not path.last:
            path.memory.push(index, x)
        path.fronts[index] = front
        return probs, extended


# ------------------------------------------------------------------------------------------
# residual connections (N1, N2, N7, N8)
# ------------------------------------------------------------------------------------------

class GTrXLGate(nn.Module):
    """GRU-type gate (Parisotto et al. 2019): r = σ(W_r y + U_r x), z = σ(W_z y + U_z x − b_g),
    ĥ = tanh(W_g y + U_g(r ⊙ x)), x ← (1 − z) ⊙ x + z ⊙ ĥ; b_g initialised to 2."""

    def __init__(self, D):
        super().__init__()
        for name in ("wr", "ur", "wz", "uz", "wg", "ug"):
            setattr(self, name, nn.Linear(D, D, bias=False))
        self.bias_g = nn.Parameter(torch.full((D,), 2.0))

    def forward(self, x, y):
        r = torch.sigmoid(self.wr(y) + self.ur(x))
        z = torch.sigmoid(self.wz(y) + self.uz(x) - self.bias_g)
        candidate = torch.tanh(self.wg(y) + self.ug(r * x))
        return (1 - z) * x + z * candidate


# ------------------------------------------------------------------------------------------
# one layer: its sub-layers and their residuals
# ------------------------------------------------------------------------------------------

class Layer(nn.Module):
    """Holds the tensors of `layers.{l}`; `sublayer` applies one of them with its residual."""

    def __init__(self, config, h):
        super().__init__()
        D, H, I = config["hidden_size"], config["num_attention_heads"], config["intermediate_size"]
        eps = config.get("layer_norm_eps", 1e-5)
        self.residual, self.placement = h["norm"]["residual"], h["norm"]["placement"]
        self.ffn_config = h["ffn"]
        names = ["attention", "ffn"] + (["ffn_pre"] if h["order"]["kind"] == "macaron" else [])
        attention = dict(KERNEL_DEFAULTS, **h.get("attention", {"kernel": "softmax"}))
        compressed = None
        if attention["kernel"] == "linformer":
            compressed = (attention["projected"], config["max_position_embeddings"])
        self.attention = Attention(D, H, h["position"] == "xl", compressed)
        E = h["ffn"]["experts"]
        if E:
            self.experts = nn.ModuleList(FeedForward(D, I, h["ffn"]["activation"]) for _ in range(E))
            if h["ffn"]["routing"] != "hash":
                self.router = nn.Linear(D, E, bias=False)
        else:
            self.ffn = FeedForward(D, I, h["ffn"]["activation"])
        if "ffn_pre" in names:
            self.ffn_pre = FeedForward(D, I, h["ffn"]["activation"])
        if self.residual == "rezero":  # one α per sub-layer, initialised to 0, no norms
            self.rezero = nn.ParameterDict({n: nn.Parameter(torch.zeros(1)) for n in names})
        else:
            for n in names:
                setattr(self, n + "_norm", NORMS[h["norm"]["kind"]](D, eps))
        if self.residual == "gtrxl":
            for n in names:
                setattr(self, "gate_" + n, GTrXLGate(D))

    def feed_forward(self, x, ids, record):
        """The FFN, or the mixture of experts that replaces it (internals into `record`)."""
        if not hasattr(self, "experts"):
            return self.ffn(x)
        cfg, E = self.ffn_config, len(self.experts)
        if cfg["routing"] == "hash":
            choice, weight = route_hash(ids, E)
            weight = weight.to(x.dtype)
        else:
            logits = self.router(x)
            record["router_logits"] = logits
            if cfg["routing"] == "switch":
                choice, weight = route_switch(logits)
            else:
                choice, weight = route_top_k(logits, cfg["k"])
            record["load_balancing"] = load_balancing_loss(torch.softmax(logits, -1), choice, E)
        record["expert_choice"], record["expert_weight"] = choice, weight
        outputs = torch.stack([expert(x) for expert in self.experts], -2)  # [.., T, E, D]
        picked = outputs.gather(-2, choice[..., None].expand(*choice.shape, x.shape[-1]))
        return (weight[..., None] * picked).sum(-2)

    def reads_normed(self):
        """Whether F reads N(x) (pre placement, GTrXL) rather than x (post, ReZero)."""
        return self.residual != "rezero" and (self.residual == "gtrxl" or self.placement == "pre")

    def sublayer(self, name, x, f, scale=1.0):
        """x + F(N(x)) (pre), N(x + F(x)) (post), x + α·F(x) (rezero), gate(x, F(N(x))) (gtrxl);
        F's output is multiplied by `scale` (Macaron's ½)."""
        if self.residual == "rezero":
            return x + self.rezero[name] * (scale * f(x))
        norm = getattr(self, name + "_norm")
        if self.residual == "gtrxl":
            return getattr(self, "gate_" + name)(x, scale * f(norm(x)))
        if self.placement == "pre":
            return x + scale * f(norm(x))
        return norm(x + scale * f(x))


def sublayer_schedule(h, L):
    """(kind, layer) in execution order: 'a' attention, 'f' FFN, 'p' Macaron's first FFN.
    standard: (af)^L; macaron: (paf)^L (Lu et al. 2020); sandwich: a^k (af)^(L−k) f^k, the i-th
    a (f) using layer i's attention (FFN) tensors (Press et al. 2020)."""
    kind, k = h["order"]["kind"], h["order"]["sandwich"]
    if kind == "macaron":
        return [(s, l) for l in range(L) for s in "paf"]
    pattern = "af" * L if kind == "standard" else "a" * k + "af" * (L - k) + "f" * k
    if kind == "sandwich" and not 0 <= k <= L:
        raise ValueError("order.sandwich is between 0 and the number of layers")
    counters = {"a": 0, "f": 0}
    schedule = []
    for s in pattern:
        schedule.append((s, counters[s]))
        counters[s] += 1
    return schedule


# ------------------------------------------------------------------------------------------
# the model
# ------------------------------------------------------------------------------------------

class Embeddings(nn.Module):
    def __init__(self, config, h):
        super().__init__()
        V, D, H = config["vocab_size"], config["hidden_size"], config["num_attention_heads"]
        self.token = nn.Embedding(V, D)
        if h["position"] == "learned":
            self.position = nn.Embedding(config["max_position_embeddings"], D)
        if h["position"] == "t5":  # one bias per head and bucket, shared by all layers
            self.relative_bias = nn.Embedding(h["t5"]["buckets"], H)


class ACTHalting(nn.Module):
    def __init__(self, D, bias):
        super().__init__()
        self.halting = nn.Linear(D, 1)
        nn.init.constant_(self.halting.bias, bias)


class HeadlightModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        if config.get("model_type", "headlight") != "headlight":
            raise ValueError("model_type is not headlight")
        self.config = json.loads(json.dumps(config))
        self.h = h = resolve(config)
        self.D, self.H = config["hidden_size"], config["num_attention_heads"]
        if self.D % self.H:
            raise ValueError("hidden_size is not a multiple of num_attention_heads")
        self.causal = bool(config.get("is_decoder", False))
        self.steps = h["act"]["max_steps"]
        self.L = config["num_hidden_layers"]
        self.embeddings = Embeddings(config, h)
        self.layers = nn.ModuleList(Layer(config, h) for _ in range(self.L))
        if self.steps:
            self.act = ACTHalting(self.D, 1.0)  # t2t's act_halting_bias_init
        if h["norm"]["placement"] == "pre" and h["norm"]["residual"] != "rezero":
            self.final_norm = NORMS[h["norm"]["kind"]](self.D, config.get("layer_norm_eps", 1e-5))
        self.span_z = None
        if "span" in h:  # z per head (cycling through the list), learnable
            z = h["span"]["z"]
            self.span_z = nn.Parameter(torch.tensor([float(z[i % len(z)]) for i in range(self.H)]))
        th = h.get("talking_heads", {})
        self.talking_heads_logits = nn.Parameter(torch.tensor(th["logits"])) if "logits" in th else None
        self.talking_heads_weights = nn.Parameter(torch.tensor(th["weights"])) if "weights" in th else None
        self.reset_parameters()

    def reset_parameters(self, std=0.02):
        """Training initialisation: N(0, std) matrices, zero biases (GPT-2 / BERT); the norms,
        ReZero's α = 0, GTrXL's b_g = 2 and Linformer's E, F keep their constructors' values."""
        for name, module in self.named_modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, 0.0, std)
                if getattr(module, "bias", None) is not None and not name.startswith("act"):
                    nn.init.zeros_(module.bias)

    # ---- the pass -------------------------------------------------------------------------

    def embed(self, ids):
        """h = E[ids] (+ learned or sinusoidal positions; a Universal Transformer adds its signals
        in every step instead); no √D scaling."""
        x = self.embeddings.token(ids)
        T = ids.shape[-1]
        if self.h["position"] == "learned":
            x = x + self.embeddings.position.weight[:T]
        elif self.h["position"] == "sinusoidal" and not self.steps:
            x = x + sinusoid(T, self.D, x.dtype).to(x.device)
        return x

    def run_sublayer(self, kind, layer, x, ids, path, index, out):
        """One sub-layer; records probabilities (attention) and internals (MoE)."""
        block = self.layers[layer]
        if kind == "a":
            def f(y):
                a, probs = block.attention(y, path, index)
                out["attentions"].append(probs)
                return a
            return block.sublayer("attention", x, f)
        if self.h.get("drop_ffn", False):
            return x
        if kind == "p":  # Macaron's first half-step FFN′ (always dense)
            return block.sublayer("ffn_pre", x, block.ffn_pre, 0.5)
        record = {}
        y = block.sublayer("ffn", x, lambda y: block.feed_forward(y, ids, record),
                           0.5 if self.h["order"]["kind"] == "macaron" else 1.0)
        self.keep(record, index, out)
        return y

    @staticmethod
    def keep(record, index, out):
        if "load_balancing" in record:
            out["aux"].setdefault("load_balancing", []).append(record.pop("load_balancing"))
        for name, value in record.items():
            out["internals"][f"layer{index}.{name}"] = value

    def stack(self, x, ids, path, out, first_index=0):
        """The layers in sub-layer order (index: the attention's position in the pass)."""
        counts = {"a": first_index, "f": first_index, "p": first_index}
        for kind, layer in sublayer_schedule(self.h, self.L):
            x = self.run_sublayer(kind, layer, x, ids, path, counts[kind], out)
            counts[kind] += 1
        return x

    def segments(self, x, ids, out):
        """Transformer-XL: the stack over segments of S tokens (transformer_xl.py).  attentions
        [B, H, T, T] hold the weights on token keys (memory and segment); with a compressed
        memory, internals `layer{n}.compressed_attention` [B, H, T, Mc] hold those on its slots,
        oldest first, right-aligned."""
        T = x.shape[-2]
        spec = XL.recurrence_spec(self.h, T)
        S, Mc = spec["segment"], spec["compressed"]
        memory = XL.SegmentMemory(spec)
        maps, compressed, outputs = [], [], []
        for start in range(0, T, S):
            segment = {"attentions": [], "internals": {}, "aux": {}}
            path = SegmentPath(self, memory, start + S >= T)
            outputs.append(self.stack(x[:, start:start + S], ids[:, start:start + S], path, segment))
            if not maps:
                maps = [x.new_zeros(x.shape[0], self.H, T, T) for _ in segment["attentions"]]
                compressed = [x.new_zeros(x.shape[0], self.H, T, Mc) for _ in segment["attentions"]]
            for n, probs in enumerate(segment["attentions"]):
                front, (rows, K) = path.fronts[n], probs.shape[-2:]
                first = start + rows - (K - front)  # the position of the oldest memory row
                maps[n][..., start:start + rows, first:start + rows] = probs[..., front:]
                compressed[n][..., start:start + rows, Mc - front:] = probs[..., :front]
        out["attentions"] = maps
        if Mc:
            out["internals"].update({f"layer{n}.compressed_attention": c for n, c in enumerate(compressed)})
        return torch.cat(outputs, -2)

    def reversible(self, x, ids, path, out):
        """RevNet residuals (Gomez et al. 2017; Reformer, Kitaev et al. 2020): x₁ = x₂ = h,
        y₁ = x₁ + Attn(N₁(x₂)), y₂ = x₂ + FFN(N₂(y₁)); output (y₁ + y₂)/2.  The inputs are
        recomputed from the outputs for `reconstruction_error` [L]."""
        x1 = x2 = x
        drop_ffn = self.h.get("drop_ffn", False)
        errors = []
        for l, block in enumerate(self.layers):
            def attention(y):
                return block.attention(block.attention_norm(y), path, l)

            def ffn(y, record):
                return 0 if drop_ffn else block.feed_forward(block.ffn_norm(y), ids, record)

            record = {}
            a, probs = attention(x2)
            out["attentions"].append(probs)
            y1 = x1 + a
            y2 = x2 + ffn(y1, record)
            self.keep(record, l, out)
            with torch.no_grad():
                x2_hat = y2 - ffn(y1, {})
                x1_hat = y1 - attention(x2_hat)[0]
                errors.append(torch.maximum((x1 - x1_hat).abs().amax(), (x2 - x2_hat).abs().amax()))
            x1, x2 = y1, y2
        out["internals"]["reconstruction_error"] = torch.stack(errors)
        return (x1 + x2) / 2

    def funnel(self, x, ids, path, out):
        """Funnel Transformer (Dai et al. 2020): the blocks of `funnel.blocks` layers; before
        block b > 0 the sequence is mean-pooled by the stride (funnel_pooling), and that block's
        first attention takes its queries and residual from the pooled rows and its keys and
        values from the unpooled ones (normalised like the queries).  With more than one block,
        the last block's rows are up-sampled by repetition (token t reads row ⌊t / s^(B−1)⌋) and
        block 0's output is added (the paper's decoder residual, without decoder layers)."""
        funnel = self.h["funnel"]
        stride, blocks, T = funnel["stride"], funnel["blocks"], x.shape[-2]
        layer, lengths, full = 0, [], None
        for b, count in enumerate(blocks):
            for i in range(count):
                if b > 0 and i == 0:
                    x = self.pooled_attention(self.layers[layer], x, stride, path, layer, out)
                else:
                    x = self.run_sublayer("a", layer, x, ids, path, layer, out)
                x = self.run_sublayer("f", layer, x, ids, path, layer, out)
                lengths.append(x.shape[-2])
                layer += 1
            if b == 0:
                full = x
        out["funnel_lengths"] = lengths
        if len(blocks) == 1:
            return x
        rows = torch.div(torch.arange(T), stride ** (len(blocks) - 1), rounding_mode="floor")
        return x[..., rows.to(x.device), :] + full

    @staticmethod
    def pooled_attention(block, x, stride, path, index, out):
        """The first attention of a pooled block: the residual stream continues from P x."""
        pooled = funnel_pooling(x.shape[-2], stride, x.dtype).to(x.device) @ x
        source = block.attention_norm(x) if block.reads_normed() else x

        def f(y):
            a, probs = block.attention(y, path, index, source)
            out["attentions"].append(probs)
            return a
        return block.sublayer("attention", pooled, f)

    def universal(self, h, ids, path, out):
        """Universal Transformer with ACT (Dehghani et al. 2019; Graves 2016), the tensor2tensor
        loop with a forced stop at the last step (docs/zoo-format.md)."""
        threshold = self.h["act"]["threshold"]
        T = h.shape[-2]
        table = sinusoid(max(T, self.steps + 1), self.D, h.dtype).to(h.device)
        P = torch.zeros(h.shape[:-1], dtype=h.dtype, device=h.device)
        R, N, result, s = torch.zeros_like(P), torch.zeros_like(P), torch.zeros_like(h), h
        halting, weights = [], []
        for t in range(1, self.steps + 1):
            running = P < 1
            if not bool(running.any()):
                break
            s = s + table[:T] + table[t]                  # position + timestep signals
            p = torch.sigmoid(self.act.halting(s)).squeeze(-1)
            halts = running & ((P + p > threshold) | (t == self.steps))
            continues = running & ~halts
            P = P + p * continues
            R = R + halts * (1 - P)
            P = P + halts * R
            N = N + continues.to(h.dtype) + halts.to(h.dtype)
            w = p * continues + R * halts
            s = self.stack(s, ids, path, out, first_index=t - 1)
            result = w[..., None] * s + (1 - w[..., None]) * result
            halting.append(p * running)  # 0 once halted
            weights.append(w)
        out["internals"].update({"halting_probability": torch.stack(halting, -2),
                                 "update_weight": torch.stack(weights, -2),
                                 "ponder": N + R, "remainder": R})
        out["aux"]["ponder_cost"] = (N + R).mean()
        return result

    def forward(self, ids):
        """ids [T] or [B, T] -> {"logits", "last_hidden_state", "attentions" [L or steps] of
        [B, H, T, T] (funnel: [B, H, T_q, T_k], the pooled lengths), "internals" {name: tensor}, "aux" {"ponder_cost", "load_balancing", "span"}};
        the batch dimension is dropped again for 1-D ids."""
        single = ids.dim() == 1
        if single:
            ids = ids[None]
        x = self.embed(ids)
        funnel = "funnel" in self.h
        path = FunnelPath() if funnel else AttentionPath(self, ids.shape[-1], x.dtype, x.device)
        out = {"attentions": [], "internals": {}, "aux": {}}
        if funnel:
            x = self.funnel(x, ids, path, out)
        elif self.steps:
            x = self.universal(x, ids, path, out)
        elif self.h["reversible"]:
            x = self.reversible(x, ids, path, out)
        elif self.h["position"] == "xl" or "recurrence" in self.h:
            x = self.segments(x, ids, out)
        else:
            x = self.stack(x, ids, path, out)
        if hasattr(self, "final_norm"):
            x = self.final_norm(x)
        out["internals"].update(path.internals)
        if path.margins:
            out["lsh_margin"] = torch.stack(path.margins).min()
        out["last_hidden_state"] = x
        out["logits"] = x @ self.embeddings.token.weight.t()  # the LM head, tied
        if "load_balancing" in out["aux"]:
            out["aux"]["load_balancing"] = torch.stack(out["aux"]["load_balancing"]).mean()
        if self.span_z is not None:  # the span's L1 cost, mean z in tokens (Sukhbaatar et al. 2019a)
            out["aux"]["span"] = self.span_z.clamp_min(0.0).mean()
        if single:
            strip = lambda t: t[0] if t.dim() > 0 else t  # noqa: E731
            out["attentions"] = [strip(a) for a in out["attentions"]]
            out["last_hidden_state"], out["logits"] = strip(x), strip(out["logits"])
            out["internals"] = {k: (v if k == "reconstruction_error" else strip(v))
                                for k, v in out["internals"].items()}
        out["internals"].update(path.features)
        if funnel:
            out["internals"].update(funnel_internals(self.h["funnel"], ids.shape[-1], out.pop("funnel_lengths")))
        return out

    # ---- the format -----------------------------------------------------------------------

    def format_state_dict(self):
        """{name: tensor} under the format's names (what model.safetensors holds)."""
        return {k: v for k, v in self.state_dict().items() if k not in CONFIG_PARAMETERS}

    def export_config(self):
        """config.json, with learned span z and head mixes written back into the variant spec."""
        config = json.loads(json.dumps(self.config))
        section = config.setdefault("headlight", {})
        if self.span_z is not None:
            section["span"]["z"] = [float(v) for v in self.span_z.detach().cpu()]
        th = section.get("talking_heads")
        for key, p in (("logits", self.talking_heads_logits), ("weights", self.talking_heads_weights)):
            if p is not None:
                th[key] = p.detach().cpu().tolist()
        return config


def save(model, folder, metadata=None):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w", newline="\n") as f:
        json.dump(model.export_config(), f, indent=2, sort_keys=True)
        f.write("\n")
    tensors = {k: (v.detach().cpu().float().numpy(), "F32") for k, v in model.format_state_dict().items()}
    safetensors_io.save(os.path.join(folder, "model.safetensors"), tensors, metadata or {"format": "pt"})


def load(folder, dtype=torch.float32):
    """A checkpoint folder -> HeadlightModel (strict: every tensor of the format, no other)."""
    config = json.load(open(os.path.join(folder, "config.json")))
    model = HeadlightModel(config).to(dtype)
    tensors = safetensors_io.load(os.path.join(folder, "model.safetensors"))[0]
    state = {k: torch.from_numpy(np.asarray(v)).to(dtype) for k, v in tensors.items()}
    expected = set(model.format_state_dict())
    if set(state) != expected:
        raise ValueError(f"tensor names differ: missing {sorted(expected - set(state))}, "
                         f"unexpected {sorted(set(state) - expected)}")
    model.load_state_dict(state, strict=False)
    return model


def expected_tensor_names(config):
    """The names docs/zoo-format.md lists for a config, written from the table, not the module
    (a check that the module's names are the format's)."""
    h = resolve(config)
    kind, residual = h["norm"]["kind"], h["norm"]["residual"]
    glu = h["ffn"]["activation"] in GLU_FAMILY

    def norm(prefix):
        if residual == "rezero" or kind == "ada":
            return []
        return [prefix + ".weight"] + ([prefix + ".bias"] if kind == "layer" else [])

    def ffn(prefix):
        return [f"{prefix}.{m}.{p}" for m in (["up", "gate", "down"] if glu else ["up", "down"])
                for p in ("weight", "bias")]

    names = ["embeddings.token.weight"]
    names += {"learned": ["embeddings.position.weight"], "t5": ["embeddings.relative_bias.weight"]}.get(
        h["position"], [])
    subs = ["attention", "ffn"] + (["ffn_pre"] if h["order"]["kind"] == "macaron" else [])
    for l in range(config["num_hidden_layers"]):
        p = f"layers.{l}."
        names += [f"{p}attention.{m}.{q}" for m in ("query", "key", "value", "output") for q in ("weight", "bias")]
        if h["position"] == "xl":
            names += [f"{p}attention.relative.weight", f"{p}attention.u", f"{p}attention.v"]
        if h.get("attention", {}).get("kernel") == "linformer":
            names += [f"{p}attention.linformer_e", f"{p}attention.linformer_f"]
        E = h["ffn"]["experts"]
        if E:
            for e in range(E):
                names += ffn(f"{p}experts.{e}")
            if h["ffn"]["routing"] != "hash":
                names.append(p + "router.weight")
        else:
            names += ffn(p + "ffn")
        if "ffn_pre" in subs:
            names += ffn(p + "ffn_pre")
        for s in subs:
            names += norm(p + s + "_norm")
            if residual == "rezero":
                names.append(f"{p}rezero.{s}")
            if residual == "gtrxl":
                names += [f"{p}gate_{s}.{m}.weight" for m in ("wr", "ur", "wz", "uz", "wg", "ug")]
                names.append(f"{p}gate_{s}.bias_g")
    if h["act"]["max_steps"]:
        names += ["act.halting.weight", "act.halting.bias"]
    if h["norm"]["placement"] == "pre":
        names += norm("final_norm")
    return sorted(names)
