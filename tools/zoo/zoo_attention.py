"""Attention of HeadlightModel: the softmax path of docs/variants.md in its order of operations,
the paths of a forward pass (plain, segments, funnel) and the attention sub-layer."""
import math

import torch
from torch import nn

from zoo_reference import VR
import transformer_xl as XL
from zoo_config import KERNEL_DEFAULTS
from zoo_layers import alibi_bias, rope_tables, rotate_half, sinusoid, t5_bucket
from zoo_kernels import (
    favor_features,
    favor_probabilities,
    lsh_probabilities,
    lsh_rotations,
)


# ------------------------------------------------------------------------------------------
# attention: the softmax path of docs/variants.md, in its order of operations
# ------------------------------------------------------------------------------------------

class AttentionPath:
    """What the attention sub-layers of one forward pass share: the mask, the additive bias, the
    span ramps, the head mixes, the prior's score stream and Lazyformer's shared map.

        S = QKᵀ/√d;  S += prior(S_{l−1});  L = S + bias;  L = P_l ×_head L
        A = softmax(L | mask) (or the attention rule: sink softmax, sigmoid);
        A = m_z ⊙ A / Σ m_z ⊙ A;  A = P_w ×_head A;  (share);  out = A V
    """

    def __init__(self, model, T, dtype, device):
        h, H = model.h, model.H
        self.T = T
        self.prior = dict({"kind": "none", "every": 2, "sigma": 4.0}, **h.get("prior", {}))
        allowed = torch.ones(1, T, T, dtype=torch.bool)
        if "mask" in h:  # sparse masks (docs/variants.md, option 2), the code of variant_reference.py
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
        self.rule = h.get("attention_rule", {"kind": "softmax"})  # docs/variants.md, option 21
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
        probs = VR.rule_weights(self.rule, scores, self.allowed)  # softmax, sink softmax, sigmoid
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
