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
back likewise), `drop_ffn`.  Besides softmax, two `attention.kernel`s train, written in
zoo_kernels.py from the papers and their authors' code (Performer's fast_attention.py, trax's
LSHSelfAttention), not from the engine, with Headlight's documented differences as explicit
options and the engine's documented random draws (SplitMix64 streams of `seed`): `favor`
(Performer) and `lsh` (Reformer); and `linformer` (encoders) with learned projections E, F per
layer (compressed_attention.cpp).  Other kernels,
`early_exit` and key padding are refused.

The parts live beside it: zoo_config.py (the `headlight` section), zoo_layers.py (norms, FFN
and experts, positions), zoo_kernels.py (FAVOR+, LSH), zoo_attention.py (the attention path).
"""
import json
import os
import sys

import numpy as np
import torch
from torch import nn

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
# zoo_reference first: it imports tools/golden's modules without changing the default dtype.
# VR is used as M.VR by the training scripts.
from zoo_reference import VR, safetensors_io  # noqa: E402,F401
import transformer_xl as XL  # noqa: E402
# DEFAULTS too is used as M.DEFAULTS by the training scripts.
from zoo_config import (  # noqa: E402,F401
    CONFIG_PARAMETERS,
    DEFAULTS,
    GLU_FAMILY,
    KERNEL_DEFAULTS,
    funnel_internals,
    funnel_pooling,
    resolve,
)
from zoo_layers import (  # noqa: E402
    FeedForward,
    NORMS,
    load_balancing_loss,
    route_hash,
    route_switch,
    route_top_k,
    sinusoid,
)
from zoo_attention import Attention, AttentionPath, FunnelPath, SegmentPath  # noqa: E402


# ------------------------------------------------------------------------------------------
# residual connections (docs/zoo-format.md, `norm.residual`)
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
