"""The `headlight` section of a zoo config.json (docs/zoo-format.md) as HeadlightModel reads it:
every default filled in, and what the PyTorch model cannot run refused; the funnel's pooling and
the recurrence's spec."""
import torch

import transformer_xl as XL


DEFAULTS = {
    "position": "learned",
    "norm": {"kind": "layer", "placement": "post", "residual": "plain"},
    "order": {"kind": "standard", "sandwich": 0},
    "ffn": {"activation": "gelu", "experts": 0, "routing": "top_k", "k": 2},
    "t5": {"buckets": 32, "max_distance": 128},
    "act": {"max_steps": 0, "threshold": 0.99},
    "reversible": False,
}
VARIANT_KEYS = {"attention", "seed", "mask", "prior", "span", "talking_heads", "drop_ffn", "recurrence",
                "attention_rule"}
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
        if any(key in h for key in ("mask", "prior", "span", "talking_heads", "attention_rule")) or \
                h["position"] in ("alibi", "t5"):
            raise ValueError(f"headlight: the '{kernel}' kernel takes no mask, prior, span, talking "
                             "heads, attention rule, ALiBi or T5 bias")
    if "attention_rule" in h and "span" in h:  # the span renormalises rows to 1, undoing the rule
        raise ValueError("headlight: an adaptive span does not combine with an attention rule")
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
    clash = [k for k in ("attention", "mask", "prior", "span", "talking_heads", "recurrence",
                         "attention_rule") if k in h]
    if clash or h["order"]["kind"] != "standard" or h["act"]["max_steps"] or h["reversible"] or \
            h["ffn"]["experts"]:
        raise ValueError("funnel runs softmax attention on rectangular maps with the standard order; it does "
                         "not combine with attention kernels, masks, priors, spans, talking heads, "
                         "attention rules, recurrence, ACT, reversible layers or experts")


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
    clash = [k for k in ("mask", "prior", "span", "talking_heads", "attention_rule") if k in h]
    if h.get("attention", {}).get("kernel", "softmax") != "softmax":
        raise ValueError("recurrence runs softmax attention segment by segment, not another kernel")
    if clash or h["act"]["max_steps"] or h["reversible"] or h["ffn"]["experts"]:
        raise ValueError("recurrence does not combine with masks, priors, spans, talking heads, "
                         "attention rules, ACT, reversible layers or experts")
    XL.recurrence_spec(h, 1 << 30)
