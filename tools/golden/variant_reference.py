"""Independent PyTorch (float64) reference of Headlight's softmax-path X-former variants.

Written from the formulas of docs/variants.md ("option N" below is its section N) and the
documented semantics of a variant spec (core/variants/variant_spec.h, the `--variant` JSON), not from the C++ code.
It runs BERT (post-LN), GPT-2 (pre-LN) and Llama (pre-RMSNorm, RoPE, GQA) from the stored
safetensors (as make_goldens.py / crosscheck_torch.py read them) with eager attention
re-implemented so that every variant hook sits where the spec says:

    S_l  = QKᵀ/√d                                   raw scores of layer l
    Ŝ_l  = S_l + Ŝ_{l-1}        (prior residual, RealFormer, option 8; Ŝ_{-1} = 0)
         = mean(S_0 .. S_l)      (prior residual_mean, RealFormer fn. 6: running mean, not sum)
    L    = P_l ×_head (Ŝ_l + B)  B = ALiBi −m_h|i−j| (option 11) + Gaussian −(i−j)²/2σ² (option 8, p_i = i)
    A    = softmax(L) over the allowed keys (sparse mask ∧ causality ∧ key padding; option 2), or
           the attention rule (option 21):
             sink_softmax  softmax of [L, b] with the appended sink logit b dropped (as gpt-oss's
                           sdpa appends its sinks; b = 0: Miller 2023's softmax off by one)
             sigmoid       σ(L + b), b = −ln T unless given (Ramapuram et al. 2024), masked keys 0
    A    = m_z ⊙ A / Σ m_z ⊙ A   (adaptive span, option 9: m_z(x) = clip((R + z − x)/R, 0, 1))
    U    = P_w ×_head A          (talking heads, option 10)
    U    = U of the group's first layer for the other layers of a group (prior share, option 8)
    out  = U V

The residual stream Ŝ carries unmasked scores without the biases.
Positions: "checkpoint" (learned table / RoPE), "none" (NoPE), "sinusoidal" (added to
the token embeddings) and "alibi" (replaces the learned table / RoPE), option 11. drop_ffn (option 13) removes
each FFN sub-layer whole: pre-LN x + FFN(LN(x)) -> x; post-LN LN(x + FFN(x)) -> x.

Random mask parts draw from SeededRandom, a port of core/variants/seeded_random.h (SplitMix64),
so that they pick exactly the keys the engine picks.
"""
import json
import math
import os

import numpy as np
import torch
from torch.nn import functional as F

import safetensors_io as S

torch.set_default_dtype(torch.float64)

MASK64 = (1 << 64) - 1


# ------------------------------------------------------------------------------------------
# SeededRandom (SplitMix64, Steele, Lea & Flood 2014) and the per-purpose stream seeds
# ------------------------------------------------------------------------------------------

class SeededRandom:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):
        u1, u2 = self.uniform(), self.uniform()
        return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)

    def below(self, n):
        return self.next() % n


def stream_seed(seed, purpose, layer):
    """seed ⊕ (purpose · 2³²) ⊕ layer, mixed by one SplitMix64 step."""
    return SeededRandom((seed ^ (purpose << 32) ^ layer) & MASK64).next()


# ------------------------------------------------------------------------------------------
# sparse masks (option 2): presets as unions of atomic parts
# ------------------------------------------------------------------------------------------

PRESET_DEFAULTS = {"window": 2, "dilation": 1, "block": 4, "random": 1, "stride": 4, "summary": 1,
                   "memory": 4, "global": [0], "windows": [1, 2, 4, 8]}
PART_DEFAULTS = {"kind": "band", "window": 0, "dilation": 1, "count": 0, "size": 1, "stride": 1,
                 "tokens": [], "windows": []}


def _part(**kw):
    p = dict(PART_DEFAULTS)
    p.update(kw)
    return p


def preset_parts(name, o):
    """The atomic parts of a named model, in the order the spec documents (the order fixes which
    random stream a random part draws from)."""
    if name == "star":  # band of width 3 + one global relay (Guo et al. 2019a)
        return [_part(kind="band", window=1), _part(kind="global", tokens=[0])]
    if name == "longformer":  # sliding window, dilated when d > 1, + global tokens (Beltagy et al. 2020)
        local = (_part(kind="dilated", window=o["window"], dilation=o["dilation"])
                 if o["dilation"] > 1 else _part(kind="band", window=o["window"]))
        return [local, _part(kind="global", tokens=o["global"])]
    if name == "bigbird":  # blocked BigBird: ±1 block window + r random blocks + globals (Zaheer et al. 2020)
        return [_part(kind="block", size=o["block"], window=1),
                _part(kind="random_block", size=o["block"], count=o["random"], window=1),
                _part(kind="global", tokens=o["global"])]
    if name == "sparse_strided":
        # Child et al.: A1 = {max(0, i − ℓ) .. i}, A2 = {j : (i − j) mod ℓ = 0}.  The
        # spec writes the band as ℓ − 1; the union is the same since distance ℓ is in A2.
        return [_part(kind="band", window=o["stride"]), _part(kind="strided", stride=o["stride"])]
    if name == "sparse_fixed":  # same block + the last c columns of every block (Child et al. 2019)
        return [_part(kind="block", size=o["block"], window=0),
                _part(kind="summary", size=o["block"], count=o["summary"])]
    if name == "image_local":  # 1D local: own query block + m earlier tokens (Parmar et al. 2018)
        return [_part(kind="local", size=o["block"], window=o["memory"])]
    if name == "blockwise":  # identity permutation: block-diagonal (Qiu et al. 2019)
        return [_part(kind="block", size=o["block"], window=0)]
    if name == "multiscale":  # a fixed span per head
        return [_part(kind="band", windows=o["windows"])]
    raise ValueError(f"unknown preset {name}")


def mask_parts(mask_spec):
    if "parts" in mask_spec:
        return [_part(**p) for p in mask_spec["parts"]]
    o = dict(PRESET_DEFAULTS)
    o.update({k: v for k, v in mask_spec.items() if k not in ("preset", "seed")})
    return preset_parts(mask_spec["preset"], o)


def _draw_distinct(rng, candidates, count):
    """`count` distinct items of `candidates` by a partial Fisher-Yates shuffle (the engine's
    order: position c swaps with c + below(n - c))."""
    pool = list(candidates)
    for c in range(min(count, len(pool))):
        j = c + rng.below(len(pool) - c)
        pool[c], pool[j] = pool[j], pool[c]
    return pool[:min(count, len(pool))]


def _random_keys(part, T, seed):
    """[T, T] bool: `count` distinct keys per query, or per query block `count` distinct
    key blocks outside the block window (BigBird), drawn in query order from one SeededRandom."""
    m = torch.zeros(T, T, dtype=torch.bool)
    rng = SeededRandom(seed)
    if part["kind"] == "random":
        for i in range(T):
            for j in _draw_distinct(rng, range(T), part["count"]):
                m[i, j] = True
        return m
    b = part["size"]
    nblocks = -(-T // b)
    for qb in range(nblocks):
        outside = [kb for kb in range(nblocks) if abs(kb - qb) > part["window"]]
        for kb in _draw_distinct(rng, outside, part["count"]):
            m[qb * b:(qb + 1) * b, kb * b:(kb + 1) * b] = True
    return m


def sparse_mask(mask_spec, T, H):
    """Nominal pattern [Hm, T, T] (1 = allowed): one plane, or one per head when a band has
    several per-head windows."""
    parts = mask_parts(mask_spec)
    seed = mask_spec.get("seed", 0)
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    dist = (i - j).abs()
    Hm = H if any(len(p["windows"]) > 1 for p in parts) else 1
    planes = []
    for h in range(Hm):
        m = torch.zeros(T, T, dtype=torch.bool)
        for index, p in enumerate(parts):
            k = p["kind"]
            if k == "band":
                w = p["windows"][h % len(p["windows"])] if p["windows"] else p["window"]
                m |= dist <= w
            elif k == "dilated":
                m |= (dist <= p["window"] * p["dilation"]) & (dist % p["dilation"] == 0)
            elif k == "block":
                m |= (i // p["size"] - j // p["size"]).abs() <= p["window"]
            elif k == "strided":
                m |= dist % p["stride"] == 0
            elif k == "summary":
                m |= (j % p["size"] >= p["size"] - p["count"]).expand(T, T)
            elif k == "local":
                start = (i // p["size"]) * p["size"]
                m |= (j >= start - p["window"]) & (j < start + p["size"])
            elif k == "global":
                for g in p["tokens"]:
                    g = g + T if g < 0 else g
                    if 0 <= g < T:  # a text shorter than the named position
                        m[g, :] = True
                        m[:, g] = True
            elif k in ("random", "random_block"):
                m |= _random_keys(p, T, stream_seed(seed, 1 + index, 0))
            else:
                raise ValueError(k)
        planes.append(m)
    return torch.stack(planes).double()


# ------------------------------------------------------------------------------------------
# positions and priors
# ------------------------------------------------------------------------------------------

def sinusoid(T, D):
    """PE[t, 2i] = sin(t / 10000^(2i/D)), PE[t, 2i+1] = cos(same) (P1; S3's sin-only is wrong)."""
    t = torch.arange(T, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, D, 2, dtype=torch.float64)[None, :]
    angle = t / 10000.0 ** (two_i / D)
    pe = torch.zeros(T, D)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)[:, :D // 2]
    return pe


def alibi_slopes(n):
    """Press et al.'s get_slopes (the ALiBi repository): 2^(−8k/n) for n a power of two; else
    the slopes of the largest power of two p < n, then every other slope of 2p."""
    def pow2(m):
        start = 2.0 ** (-(2.0 ** -(math.log2(m) - 3)))
        return [start * start ** k for k in range(m)]
    if math.log2(n).is_integer():
        return pow2(n)
    p = 2 ** math.floor(math.log2(n))
    return pow2(p) + alibi_slopes(2 * p)[0::2][:n - p]


def alibi_bias(H, T):
    """−m_h · |i − j| (P17; symmetric so that an encoder gets the same recency bias)."""
    d = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).abs().double()
    return -torch.tensor(alibi_slopes(H))[:, None, None] * d


def gaussian_prior(T, sigma):
    """G_ij = −(j − p_i)² / (2σ²) with p_i = i (Yang et al. 2018)."""
    d = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).double()
    return (-(d * d) / (2.0 * sigma * sigma))[None]


def span_ramp(spec_span, H, T):
    """m_z(x) = clip((R + z_h − x) / R, 0, 1), x = |i − j| (option 9); z cycles over the heads."""
    z = spec_span["z"]
    R = spec_span.get("ramp", 32.0)
    x = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).abs().double()
    zs = torch.tensor([float(z[h % len(z)]) for h in range(H)])[:, None, None]
    return ((R + zs - x) / R).clamp(0.0, 1.0)


# ------------------------------------------------------------------------------------------
# the attention of one pass
# ------------------------------------------------------------------------------------------

def rule_weights(rule, scores, allowed):
    """scores [.., T, T] -> weights over the allowed keys by the attention rule (option 21):
    softmax, sink_softmax or sigmoid; `allowed` broadcasts against scores."""
    if rule["kind"] == "sink_softmax":
        # gpt-oss sdpa: append the sink logit to every row, softmax, drop it; a masked key is
        # −inf, so a row with no allowed key gives everything to the sink (a zero row)
        masked = scores.masked_fill(~allowed, -math.inf)
        sink = torch.full(masked.shape[:-1] + (1,), float(rule.get("sink", 0.0)), dtype=scores.dtype)
        return torch.softmax(torch.cat([masked, sink.to(scores.device)], -1), -1)[..., :-1]
    if rule["kind"] == "sigmoid":
        # ml-sigmoid-attention: σ(logits + attn_bias), attn_bias = −ln(sequence length) by
        # default; masked keys get 0
        bias = float(rule.get("bias", -math.log(scores.shape[-1])))
        return torch.sigmoid(scores + bias).masked_fill(~allowed, 0.0)
    # A query with no allowed key at all (a padded query whose block is all padding) gets a
    # uniform row, as in Hugging Face, where every score of the row becomes finfo.min.
    empty = ~allowed.any(-1, keepdim=True)
    return torch.softmax(scores.masked_fill(~allowed, -math.inf).masked_fill(empty, 0.0), -1)


def composed(spec):
    """Whether the spec routes attention through the composed path (which is what makes the
    engine report its pass-wide internals)."""
    return ("mask" in spec or spec.get("prior", {}).get("kind", "none") != "none" or "span" in spec
            or "talking_heads" in spec or spec.get("position") == "alibi"
            or spec.get("attention_rule", {}).get("kind", "softmax") != "softmax")


class Attention:
    """What every layer of one forward pass shares: the effective mask, the additive bias, the
    span ramps, the residual score stream and the shared map."""

    def __init__(self, spec, H, T, causal, key_valid):
        self.spec = spec
        self.prior = dict({"kind": "none", "every": 2, "sigma": 4.0}, **spec.get("prior", {}))
        self.internals = {}
        allowed = torch.ones(1, T, T, dtype=torch.bool)
        self.nominal = None
        if "mask" in spec:
            self.nominal = sparse_mask(spec["mask"], T, H)
            allowed = self.nominal > 0
        if causal:
            allowed = allowed & torch.tril(torch.ones(T, T, dtype=torch.bool))
        allowed = allowed & torch.as_tensor(key_valid, dtype=torch.bool)[None, None, :]
        self.allowed = allowed
        self.bias = None
        if spec.get("position") == "alibi":
            self.bias = alibi_bias(H, T)
        if self.prior["kind"] == "gaussian":
            g = gaussian_prior(T, self.prior["sigma"])
            self.bias = g if self.bias is None else self.bias + g
        self.span = span_ramp(spec["span"], H, T) if "span" in spec else None
        self.rule = spec.get("attention_rule", {"kind": "softmax"})
        th = spec.get("talking_heads")
        self.mix_l = torch.tensor(th["logits"]) if th and "logits" in th else None
        self.mix_w = torch.tensor(th["weights"]) if th and "weights" in th else None
        self.raw = []  # S_0 .. S_l (residual priors)
        self.shared = None
        if composed(spec):
            if self.nominal is not None:
                self.internals["nominal_mask"] = self.nominal
            if self.nominal is not None or causal or not all(key_valid):
                self.internals["mask"] = allowed.double()
            if self.bias is not None:
                self.internals["bias"] = self.bias
            if self.span is not None:
                self.internals["span_mask"] = self.span

    def __call__(self, layer, q, k, v):
        """q [H, T, d], k and v [H, T, d] (KV heads already repeated) -> context, probs."""
        out = self.internals
        kind, every = self.prior["kind"], self.prior["every"]
        if kind == "share" and layer % every != 0:
            probs = self.shared  # Lazyformer: the group's first map, with this layer's values
            return probs @ v, probs
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if kind in ("residual", "residual_mean"):
            self.raw.append(scores)
            total = torch.stack(self.raw).sum(0)
            scores = total if kind == "residual" else total / len(self.raw)
            out[f"layer{layer}.residual_scores"] = scores
        if self.bias is not None:
            scores = scores + self.bias
        if self.mix_l is not None:
            out[f"layer{layer}.premix_logits"] = scores
            scores = torch.einsum("ab,btk->atk", self.mix_l, scores)
        probs = rule_weights(self.rule, scores, self.allowed)
        if self.span is not None:
            probs = probs * self.span
            # a row with no mass left inside the span (only a padded query can lose its own
            # key) stays zero instead of 0/0, as the spec documents
            total = probs.sum(-1, keepdim=True)
            probs = torch.where(total > 0, probs / total.clamp_min(1e-300), probs)
        if self.mix_w is not None:
            out[f"layer{layer}.premix_probabilities"] = probs
            probs = torch.einsum("ab,btk->atk", self.mix_w, probs)
        if kind == "share":
            self.shared = probs
        return probs @ v, probs


# ------------------------------------------------------------------------------------------
# models
# ------------------------------------------------------------------------------------------

def load(folder):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    return cfg, {k: torch.from_numpy(v) for k, v in S.load_folder_f64(folder).items()}


def _heads(x, H):  # [T, H·d] -> [H, T, d]
    return x.reshape(x.shape[0], H, -1).transpose(0, 1)


def _merge(x):  # [H, T, d] -> [T, H·d]
    return x.transpose(0, 1).reshape(x.shape[1], -1)


def bert(cfg, W, ids, mask, types, spec):
    T = len(ids)
    D, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    p = "bert." if any(k.startswith("bert.") for k in W) else ""
    g = lambda n: W[p + n]  # noqa: E731
    lin = lambda x, n: F.linear(x, g(n + ".weight"), g(n + ".bias"))  # noqa: E731
    ln = lambda x, n: F.layer_norm(x, (D,), g(n + ".weight"), g(n + ".bias"), eps)  # noqa: E731
    ids_t = torch.tensor(ids)
    x = g("embeddings.word_embeddings.weight")[ids_t]
    x = x + _position_rows(cfg, spec, g("embeddings.position_embeddings.weight"), T, D)
    x = x + g("embeddings.token_type_embeddings.weight")[torch.tensor(types)]
    x = ln(x, "embeddings.LayerNorm")
    att = Attention(spec, H, T, False, mask)
    probs = []
    for l in range(cfg["num_hidden_layers"]):
        a = f"encoder.layer.{l}."
        q, k, v = (_heads(lin(x, a + "attention.self." + n), H) for n in ("query", "key", "value"))
        ctx, pr = att(l, q, k, v)
        probs.append(pr)
        x = ln(x + lin(_merge(ctx), a + "attention.output.dense"), a + "attention.output.LayerNorm")
        if not spec.get("drop_ffn", False):
            h = F.gelu(lin(x, a + "intermediate.dense"))  # hidden_act "gelu": the erf form
            x = ln(x + lin(h, a + "output.dense"), a + "output.LayerNorm")
    return torch.stack(probs), x, att.internals


def _position_rows(cfg, spec, table, T, D):
    pos = spec.get("position", "checkpoint")
    if pos == "checkpoint":
        return table[:T]
    if pos == "sinusoidal":
        return sinusoid(T, D)
    return torch.zeros(T, D)  # none, alibi: no absolute positions


def gpt2(cfg, W, ids, mask, spec):
    T = len(ids)
    D, H, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    p = "transformer." if any(k.startswith("transformer.") for k in W) else ""
    g = lambda n: W[p + n]  # noqa: E731
    conv = lambda x, n: x @ g(n + ".weight") + g(n + ".bias")  # noqa: E731  Conv1D: [in, out]
    ln = lambda x, n: F.layer_norm(x, (D,), g(n + ".weight"), g(n + ".bias"), eps)  # noqa: E731
    x = g("wte.weight")[torch.tensor(ids)] + _position_rows(cfg, spec, g("wpe.weight"), T, D)
    att = Attention(spec, H, T, True, mask)
    probs = []
    for l in range(cfg["n_layer"]):
        a = f"h.{l}."
        qkv = conv(ln(x, a + "ln_1"), a + "attn.c_attn")
        q, k, v = (_heads(t, H) for t in qkv.split(D, -1))
        ctx, pr = att(l, q, k, v)
        probs.append(pr)
        x = x + conv(_merge(ctx), a + "attn.c_proj")
        if not spec.get("drop_ffn", False):
            h = F.gelu(conv(ln(x, a + "ln_2"), a + "mlp.c_fc"), approximate="tanh")  # gelu_new
            x = x + conv(h, a + "mlp.c_proj")
    return torch.stack(probs), ln(x, "ln_f"), att.internals


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


def llama(cfg, W, ids, mask, spec):
    T = len(ids)
    H, KV = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    d = cfg.get("head_dim") or cfg["hidden_size"] // H
    eps = cfg["rms_norm_eps"]
    rms = lambda x, w: x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w  # noqa: E731
    pos = spec.get("position", "checkpoint")
    inv = 1.0 / cfg["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None]
    cos, sin = torch.cat([ang, ang], -1).cos(), torch.cat([ang, ang], -1).sin()
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]
    if pos == "sinusoidal":
        x = x + sinusoid(T, cfg["hidden_size"])
    att = Attention(spec, H, T, True, mask)
    probs = []
    for l in range(cfg["num_hidden_layers"]):
        a = f"model.layers.{l}."
        h = rms(x, W[a + "input_layernorm.weight"])
        q, k, v = (_heads(F.linear(h, W[a + f"self_attn.{n}_proj.weight"]), m)
                   for n, m in (("q", H), ("k", KV), ("v", KV)))
        if pos == "checkpoint":  # RoPE only with the checkpoint's own positions
            q, k = q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
        k, v = k.repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)
        ctx, pr = att(l, q, k, v)
        probs.append(pr)
        x = x + F.linear(_merge(ctx), W[a + "self_attn.o_proj.weight"])
        if not spec.get("drop_ffn", False):
            h = rms(x, W[a + "post_attention_layernorm.weight"])
            m = a + "mlp."
            h = F.silu(F.linear(h, W[m + "gate_proj.weight"])) * F.linear(h, W[m + "up_proj.weight"])
            x = x + F.linear(h, W[m + "down_proj.weight"])
    return torch.stack(probs), rms(x, W["model.norm.weight"]), att.internals


def forward(folder, ids, spec, attention_mask=None, token_type_ids=None):
    """-> (attentions [L, H, T, T], last_hidden_state [T, D], internals {name: tensor})."""
    cfg, W = load(folder)
    mask = attention_mask if attention_mask is not None else [1] * len(ids)
    types = token_type_ids if token_type_ids is not None else [0] * len(ids)
    mt = cfg["model_type"]
    if mt == "bert":
        return bert(cfg, W, ids, mask, types, spec)
    if mt == "gpt2":
        return gpt2(cfg, W, ids, mask, spec)
    if mt == "llama":
        return llama(cfg, W, ids, mask, spec)
    raise ValueError(f"no variant reference for model_type {mt}")
