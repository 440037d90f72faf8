"""The building blocks of HeadlightModel (docs/zoo-format.md) below attention: norms, the
feed-forward sub-layer with its mixture-of-experts routing, and the position encodings."""
import math

import torch
from torch import nn
from torch.nn import functional as F

from zoo_reference import VR


# ------------------------------------------------------------------------------------------
# norms (docs/zoo-format.md, `norm`)
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
# feed-forward and mixture of experts (docs/zoo-format.md, `ffn`)
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
# positions (docs/zoo-format.md, `position`)
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
