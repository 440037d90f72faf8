"""Forward passes of the supported Hugging Face architectures in float64 numpy.

Each forward takes the checkpoint's tensors exactly as stored (HF names, already rounded to
the stored dtype and widened to float64), the HF config dict, input_ids, attention_mask and
(BERT) token_type_ids, and returns a dict with
    attentions         [L, H, T, T]   post-softmax probabilities (output_attentions)
    hidden_states      [L+1, T, D]    output_hidden_states: embeddings output, then each layer's
                                      output; for GPT-2 and the Llama family the last entry is
                                      after the final norm (ln_f / model.norm), as in HF
    last_hidden_state  [T, D]
    position_ids       [T]

Conventions (cross-checked against transformers' modeling_*.py, see docs/golden-references.md):
  * masked keys get probability exactly 0 (HF adds finfo.min; we use -inf, same softmax);
  * BERT/RoBERTa/DistilBERT: key padding mask only; GPT-2/Llama family: causal AND key padding;
  * Mistral: causal AND sliding window, query i sees key j iff i - window < j <= i
    (masking_utils.sliding_window_overlay: kv_idx > q_idx - sliding_window);
  * RoBERTa position ids: cumsum(input_ids != pad) * (input_ids != pad) + pad_token_id;
  * gelu = exact erf form, gelu_new = tanh form, silu = x * sigmoid(x);
  * LayerNorm uses the biased variance; RMSNorm x / sqrt(mean(x^2) + eps) * weight;
  * RoPE: HF "rotate_half" layout (first half / second half of head_dim, not interleaved),
    inv_freq = theta^(-2i/d), positions 0..T-1 (no position_ids given, right padding);
  * GQA: query head h uses key/value head h // (heads / kv_heads) (repeat_kv).
"""
import math

import numpy as np
from scipy_free import erf  # vectorised math.erf (no scipy on the machines)

NEG_INF = -np.inf


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1.0 + np.exp(-x))


ACT = {"gelu": gelu, "gelu_new": gelu_new, "gelu_pytorch_tanh": gelu_new, "silu": silu,
       "relu": lambda x: np.maximum(x, 0.0)}


def softmax_masked(scores, allowed):
    """scores [H,T,T]; allowed [T,T] bool (query, key)."""
    s = np.where(allowed[None], scores, NEG_INF)
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def linear(x, w, b=None):  # nn.Linear: weight [out, in]
    y = x @ w.T
    return y if b is None else y + b


def mha(x, wq, bq, wk, bk, wv, bv, heads, allowed):
    T, D = x.shape
    d = D // heads
    q = linear(x, wq, bq).reshape(T, heads, d).transpose(1, 0, 2)
    k = linear(x, wk, bk).reshape(T, heads, d).transpose(1, 0, 2)
    v = linear(x, wv, bv).reshape(T, heads, d).transpose(1, 0, 2)
    p = softmax_masked(q @ k.transpose(0, 2, 1) / math.sqrt(d), allowed)
    ctx = (p @ v).transpose(1, 0, 2).reshape(T, D)
    return ctx, p


def _key_mask(attention_mask, T):
    m = np.asarray(attention_mask, dtype=bool)
    return np.broadcast_to(m[None, :], (T, T))


def causal_mask(attention_mask, T, window=None):
    """[T, T] bool (query i, key j): causal AND key padding; with a window also
    i - window < j (masking_utils.sliding_window_overlay: kv_idx > q_idx - sliding_window)."""
    qi, kj = np.arange(T)[:, None], np.arange(T)[None, :]
    allowed = (kj <= qi) & _key_mask(attention_mask, T)
    return allowed if window is None else allowed & (kj > qi - window)


# ------------------------------------------------------------------------------------------
# BERT / RoBERTa  (modeling_bert.py BertEmbeddings, BertSelfAttention, BertLayer;
#                  modeling_roberta.py RobertaEmbeddings, create_position_ids_from_input_ids)
# ------------------------------------------------------------------------------------------


def bert_forward(W, cfg, input_ids, attention_mask, token_type_ids, prefix=""):
    ids = np.asarray(input_ids)
    T = len(ids)
    g = lambda n: W[prefix + n]  # noqa: E731
    if cfg["model_type"] == "roberta":
        pad = cfg["pad_token_id"]
        nonpad = (ids != pad).astype(np.int64)
        pos = np.cumsum(nonpad) * nonpad + pad
    else:
        pos = np.arange(T)
    x = (g("embeddings.word_embeddings.weight")[ids]
         + g("embeddings.position_embeddings.weight")[pos]
         + g("embeddings.token_type_embeddings.weight")[np.asarray(token_type_ids)])
    eps = cfg["layer_norm_eps"]
    x = layer_norm(x, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"), eps)
    allowed = _key_mask(attention_mask, T)
    act = ACT[cfg["hidden_act"]]
    hs, atts = [x], []
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        ctx, probs = mha(x, g(a + "query.weight"), g(a + "query.bias"), g(a + "key.weight"),
                         g(a + "key.bias"), g(a + "value.weight"), g(a + "value.bias"),
                         cfg["num_attention_heads"], allowed)
        o = p + "attention.output."
        x = layer_norm(linear(ctx, g(o + "dense.weight"), g(o + "dense.bias")) + x,
                       g(o + "LayerNorm.weight"), g(o + "LayerNorm.bias"), eps)
        h = act(linear(x, g(p + "intermediate.dense.weight"), g(p + "intermediate.dense.bias")))
        x = layer_norm(linear(h, g(p + "output.dense.weight"), g(p + "output.dense.bias")) + x,
                       g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias"), eps)
        hs.append(x)
        atts.append(probs)
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=pos)


# ------------------------------------------------------------------------------------------
# DistilBERT (modeling_distilbert.py Embeddings, MultiHeadSelfAttention, TransformerBlock)
# ------------------------------------------------------------------------------------------


def distilbert_forward(W, cfg, input_ids, attention_mask):
    ids = np.asarray(input_ids)
    T = len(ids)
    pos = np.arange(T)
    eps = 1e-12  # hard-coded nn.LayerNorm(config.dim, eps=1e-12) in modeling_distilbert.py
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][pos]
    x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
    allowed = _key_mask(attention_mask, T)
    act = ACT[cfg["activation"]]
    hs, atts = [x], []
    for i in range(cfg["n_layers"]):
        p = f"transformer.layer.{i}."
        a = p + "attention."
        ctx, probs = mha(x, W[a + "q_lin.weight"], W[a + "q_lin.bias"], W[a + "k_lin.weight"],
                         W[a + "k_lin.bias"], W[a + "v_lin.weight"], W[a + "v_lin.bias"],
                         cfg["n_heads"], allowed)
        sa = linear(ctx, W[a + "out_lin.weight"], W[a + "out_lin.bias"])
        x = layer_norm(sa + x, W[p + "sa_layer_norm.weight"], W[p + "sa_layer_norm.bias"], eps)
        h = act(linear(x, W[p + "ffn.lin1.weight"], W[p + "ffn.lin1.bias"]))
        x = layer_norm(linear(h, W[p + "ffn.lin2.weight"], W[p + "ffn.lin2.bias"]) + x,
                       W[p + "output_layer_norm.weight"], W[p + "output_layer_norm.bias"], eps)
        hs.append(x)
        atts.append(probs)
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=pos)


# ------------------------------------------------------------------------------------------
# GPT-2 (modeling_gpt2.py GPT2Model, GPT2Block, GPT2Attention, GPT2MLP; Conv1D: x @ W + b)
# ------------------------------------------------------------------------------------------


def gpt2_forward(W, cfg, input_ids, attention_mask, prefix=""):
    ids = np.asarray(input_ids)
    T = len(ids)
    g = lambda n: W[prefix + n]  # noqa: E731
    D, H = cfg["n_embd"], cfg["n_head"]
    d = D // H
    eps = cfg["layer_norm_epsilon"]
    pos = np.arange(T)
    x = g("wte.weight")[ids] + g("wpe.weight")[pos]
    allowed = causal_mask(attention_mask, T)
    act = ACT[cfg["activation_function"]]
    hs, atts = [], []
    for i in range(cfg["n_layer"]):
        hs.append(x)
        p = f"h.{i}."
        h = layer_norm(x, g(p + "ln_1.weight"), g(p + "ln_1.bias"), eps)
        qkv = h @ g(p + "attn.c_attn.weight") + g(p + "attn.c_attn.bias")
        q, k, v = (qkv[:, j * D:(j + 1) * D].reshape(T, H, d).transpose(1, 0, 2) for j in range(3))
        scores = q @ k.transpose(0, 2, 1)
        if cfg.get("scale_attn_weights", True):
            scores = scores / math.sqrt(d)
        probs = softmax_masked(scores, allowed)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(T, D)
        x = x + ctx @ g(p + "attn.c_proj.weight") + g(p + "attn.c_proj.bias")
        h = layer_norm(x, g(p + "ln_2.weight"), g(p + "ln_2.bias"), eps)
        h = act(h @ g(p + "mlp.c_fc.weight") + g(p + "mlp.c_fc.bias"))
        x = x + h @ g(p + "mlp.c_proj.weight") + g(p + "mlp.c_proj.bias")
        atts.append(probs)
    x = layer_norm(x, g("ln_f.weight"), g("ln_f.bias"), eps)
    hs.append(x)
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=pos)


# ------------------------------------------------------------------------------------------
# Llama / Qwen2 / Mistral / Qwen3 (modeling_llama.py LlamaRMSNorm, LlamaRotaryEmbedding (default
# rope), rotate_half, apply_rotary_pos_emb, repeat_kv, LlamaAttention, LlamaMLP;
# modeling_qwen3.py Qwen3Attention: q_norm / k_norm, RMSNorm over head_dim, before RoPE)
# ------------------------------------------------------------------------------------------


def rope_angles(T, d, theta):
    """[T, d / 2] position * inv_freq, inv_freq = theta^(-2i/d) over the d rotated features."""
    inv_freq = 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    return np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]


def rope_cos_sin(T, d, theta):
    freqs = rope_angles(T, d, theta)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def apply_rope(t, cos, sin, rotate=rotate_half):
    """t * cos + rotate(t) * sin on the first cos.shape[-1] features of t; the rest pass.
    cos and sin must broadcast against t's rotated part (cos[None] for t [heads, T, d])."""
    rd = cos.shape[-1]
    r = t[..., :rd]
    return np.concatenate([r * cos + rotate(r) * sin, t[..., rd:]], axis=-1)


def llama_forward(W, cfg, input_ids, attention_mask):
    ids = np.asarray(input_ids)
    T = len(ids)
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    KV = cfg.get("num_key_value_heads", H)
    d = cfg.get("head_dim") or D // H
    eps = cfg["rms_norm_eps"]
    bias = cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)
    qk_norm = cfg["model_type"] == "qwen3"
    pos = np.arange(T)
    cos, sin = rope_cos_sin(T, d, cfg["rope_theta"])
    window = None
    if cfg["model_type"] == "mistral":
        window = cfg.get("sliding_window")  # null = full causal attention
    elif cfg["model_type"] == "qwen2" and cfg.get("use_sliding_window"):
        # Qwen2Config keeps sliding_window only when use_sliding_window is true, and then only
        # for layers >= max_window_layers; the goldens never enable it.
        raise NotImplementedError("Qwen2 use_sliding_window=true")
    allowed = causal_mask(attention_mask, T, window)
    act = ACT[cfg["hidden_act"]]
    x = W["model.embed_tokens.weight"][ids]
    hs, atts = [], []
    for i in range(cfg["num_hidden_layers"]):
        hs.append(x)
        p = f"model.layers.{i}."
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        a = p + "self_attn."
        bq = W[a + "q_proj.bias"] if bias else None
        bk = W[a + "k_proj.bias"] if bias else None
        bv = W[a + "v_proj.bias"] if bias else None
        q = linear(h, W[a + "q_proj.weight"], bq).reshape(T, H, d)
        k = linear(h, W[a + "k_proj.weight"], bk).reshape(T, KV, d)
        if qk_norm:  # Qwen3: self.q_norm(q_proj(x).view(hidden_shape)), per head, then RoPE
            q = rms_norm(q, W[a + "q_norm.weight"], eps)
            k = rms_norm(k, W[a + "k_norm.weight"], eps)
        q, k = q.transpose(1, 0, 2), k.transpose(1, 0, 2)
        v = linear(h, W[a + "v_proj.weight"], bv).reshape(T, KV, d).transpose(1, 0, 2)
        q, k = apply_rope(q, cos[None], sin[None]), apply_rope(k, cos[None], sin[None])
        rep = H // KV
        k = np.repeat(k, rep, axis=0)  # repeat_kv == repeat_interleave on the head axis
        v = np.repeat(v, rep, axis=0)
        probs = softmax_masked(q @ k.transpose(0, 2, 1) * d ** -0.5, allowed)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(T, H * d)
        o_bias = W.get(a + "o_proj.bias")
        x = x + linear(ctx, W[a + "o_proj.weight"], o_bias)
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        m = p + "mlp."
        h = act(linear(h, W[m + "gate_proj.weight"])) * linear(h, W[m + "up_proj.weight"])
        x = x + linear(h, W[m + "down_proj.weight"])
        atts.append(probs)
    x = rms_norm(x, W["model.norm.weight"], eps)
    hs.append(x)
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=pos)


# ------------------------------------------------------------------------------------------
# OPT (modeling_opt.py OPTLearnedPositionalEmbedding (offset 2), OPTAttention, OPTDecoderLayer,
# OPTDecoder): learned positions cumsum(mask) * mask - 1 + 2, so padding sits at row 1;
# do_layer_norm_before picks pre- or post-LN; the final LayerNorm exists only with pre-LN;
# nn.LayerNorm's default eps 1e-5; q is scaled by head_dim^-0.5 before q k^T.
# ------------------------------------------------------------------------------------------


def opt_forward(W, cfg, input_ids, attention_mask, prefix="model.decoder."):
    ids = np.asarray(input_ids)
    T = len(ids)
    g = lambda n: W[prefix + n]  # noqa: E731
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    d = D // H
    eps = 1e-5
    pre = cfg.get("do_layer_norm_before", True)
    mask = np.asarray(attention_mask, dtype=np.int64)
    pos = np.cumsum(mask) * mask - 1 + 2
    x = g("embed_tokens.weight")[ids] + g("embed_positions.weight")[pos]
    allowed = causal_mask(attention_mask, T)
    act = ACT[cfg["activation_function"]]
    ln = lambda v, n: layer_norm(v, g(n + ".weight"), g(n + ".bias"), eps)  # noqa: E731
    hs, atts = [], []
    for i in range(cfg["num_hidden_layers"]):
        hs.append(x)
        p = f"layers.{i}."
        a = p + "self_attn."
        h = ln(x, p + "self_attn_layer_norm") if pre else x
        q = linear(h, g(a + "q_proj.weight"), g(a + "q_proj.bias")) * d ** -0.5
        k = linear(h, g(a + "k_proj.weight"), g(a + "k_proj.bias"))
        v = linear(h, g(a + "v_proj.weight"), g(a + "v_proj.bias"))
        q, k, v = (t.reshape(T, H, d).transpose(1, 0, 2) for t in (q, k, v))
        probs = softmax_masked(q @ k.transpose(0, 2, 1), allowed)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(T, D)
        x = x + linear(ctx, g(a + "out_proj.weight"), g(a + "out_proj.bias"))
        if not pre:
            x = ln(x, p + "self_attn_layer_norm")
        h = ln(x, p + "final_layer_norm") if pre else x
        h = linear(act(linear(h, g(p + "fc1.weight"), g(p + "fc1.bias"))), g(p + "fc2.weight"),
                   g(p + "fc2.bias"))
        x = x + h
        if not pre:
            x = ln(x, p + "final_layer_norm")
        atts.append(probs)
    if pre:
        x = ln(x, "final_layer_norm")
    hs.append(x)
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=pos)


# ------------------------------------------------------------------------------------------
# GPT-NeoX / Pythia (modeling_gpt_neox.py GPTNeoXAttention._attn_projections_and_rope, _attn,
# GPTNeoXRotaryEmbedding, GPTNeoXLayer, GPTNeoXMLP): qkv viewed [T, heads, 3 * head_size] (per
# head q | k | v); rotate_half RoPE on the first rotary_ndims = int(head_size * rotary_pct)
# features with inv_freq over rotary_ndims; use_parallel_residual: x + attn(ln1(x)) + mlp(ln2(x)),
# else x' = x + attn(ln1(x)), x' + mlp(ln2(x')); final_layer_norm; positions 0..T-1.
# ------------------------------------------------------------------------------------------


def gpt_neox_forward(W, cfg, input_ids, attention_mask, prefix="gpt_neox."):
    ids = np.asarray(input_ids)
    T = len(ids)
    g = lambda n: W[prefix + n]  # noqa: E731
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    d = D // H
    rd = int(d * cfg["rotary_pct"])
    eps = cfg["layer_norm_eps"]
    bias = cfg.get("attention_bias", True)
    pos = np.arange(T)
    cos, sin = rope_cos_sin(T, rd, cfg["rotary_emb_base"])
    allowed = causal_mask(attention_mask, T)
    act = ACT[cfg["hidden_act"]]
    ln = lambda v, n: layer_norm(v, g(n + ".weight"), g(n + ".bias"), eps)  # noqa: E731

    def mlp(v, p):
        h = act(linear(v, g(p + "mlp.dense_h_to_4h.weight"), g(p + "mlp.dense_h_to_4h.bias")))
        return linear(h, g(p + "mlp.dense_4h_to_h.weight"), g(p + "mlp.dense_4h_to_h.bias"))

    x = g("embed_in.weight")[ids]
    hs, atts = [], []
    for i in range(cfg["num_hidden_layers"]):
        hs.append(x)
        p = f"layers.{i}."
        a = p + "attention."
        qkv = linear(ln(x, p + "input_layernorm"), g(a + "query_key_value.weight"),
                     g(a + "query_key_value.bias") if bias else None).reshape(T, H, 3 * d)
        q, k, v = (qkv[..., j * d:(j + 1) * d].transpose(1, 0, 2) for j in range(3))
        q, k = apply_rope(q, cos[None], sin[None]), apply_rope(k, cos[None], sin[None])
        probs = softmax_masked(q @ k.transpose(0, 2, 1) * d ** -0.5, allowed)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(T, D)
        attn = linear(ctx, g(a + "dense.weight"), g(a + "dense.bias") if bias else None)
        if cfg.get("use_parallel_residual", True):
            x = mlp(ln(x, p + "post_attention_layernorm"), p) + attn + x
        else:
            attn = attn + x
            x = mlp(ln(attn, p + "post_attention_layernorm"), p) + attn
        atts.append(probs)
    x = ln(x, "final_layer_norm")
    hs.append(x)
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=pos)


# ------------------------------------------------------------------------------------------
# GPT-J (modeling_gptj.py create_sinusoidal_positions, rotate_every_two, apply_rotary_pos_emb,
# GPTJAttention, GPTJMLP, GPTJBlock): q, k, v, out_proj without bias; RoPE on the first
# rotary_dim features with pairs (2i, 2i + 1) (sin/cos repeat_interleave'd), base 10000 over
# rotary_dim; scores / sqrt(head_dim); block x + attn(ln_1(x)) + mlp(ln_1(x)); ln_f.
# ------------------------------------------------------------------------------------------


def rotate_every_two(x):
    return np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)


def gptj_forward(W, cfg, input_ids, attention_mask, prefix="transformer."):
    ids = np.asarray(input_ids)
    T = len(ids)
    g = lambda n: W[prefix + n]  # noqa: E731
    D, H = cfg["n_embd"], cfg["n_head"]
    d = D // H
    rd = cfg["rotary_dim"]
    eps = cfg["layer_norm_epsilon"]
    pos = np.arange(T)
    angle = rope_angles(T, rd, 10000)
    sin = np.repeat(np.sin(angle), 2, axis=-1)  # repeat_interleave(sin, 2)
    cos = np.repeat(np.cos(angle), 2, axis=-1)
    allowed = causal_mask(attention_mask, T)
    act = ACT[cfg["activation_function"]]
    x = g("wte.weight")[ids]
    hs, atts = [], []
    for i in range(cfg["n_layer"]):
        hs.append(x)
        p = f"h.{i}."
        h = layer_norm(x, g(p + "ln_1.weight"), g(p + "ln_1.bias"), eps)
        q, k, v = (linear(h, g(p + f"attn.{n}_proj.weight")).reshape(T, H, d).transpose(1, 0, 2)
                   for n in ("q", "k", "v"))
        q = apply_rope(q, cos[None], sin[None], rotate_every_two)
        k = apply_rope(k, cos[None], sin[None], rotate_every_two)
        probs = softmax_masked(q @ k.transpose(0, 2, 1) / math.sqrt(d), allowed)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(T, D)
        attn = linear(ctx, g(p + "attn.out_proj.weight"))
        ff = linear(act(linear(h, g(p + "mlp.fc_in.weight"), g(p + "mlp.fc_in.bias"))),
                    g(p + "mlp.fc_out.weight"), g(p + "mlp.fc_out.bias"))
        x = attn + ff + x
        atts.append(probs)
    x = layer_norm(x, g("ln_f.weight"), g("ln_f.bias"), eps)
    hs.append(x)
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=pos)


# ------------------------------------------------------------------------------------------
# Phi-3 (modeling_phi3.py Phi3Attention, Phi3MLP, Phi3RotaryEmbedding, apply_rotary_pos_emb,
# Phi3DecoderLayer): qkv_proj rows q | k | v (query_pos = heads * head_dim), gate_up_proj rows
# gate | up (chunk(2)), up * act(gate); rotate_half RoPE on the first
# int(head_dim * partial_rotary_factor) features; sliding_window (when set) on every layer with
# the rule kv_idx > q_idx - sliding_window; RMSNorm pre-norm, final model.norm.
# ------------------------------------------------------------------------------------------


def phi3_forward(W, cfg, input_ids, attention_mask):
    ids = np.asarray(input_ids)
    T = len(ids)
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    KV = cfg.get("num_key_value_heads") or H
    d = cfg.get("head_dim") or D // H
    rd = int(d * cfg.get("partial_rotary_factor", 1.0))
    I = cfg["intermediate_size"]
    eps = cfg["rms_norm_eps"]
    pos = np.arange(T)
    cos, sin = rope_cos_sin(T, rd, cfg["rope_theta"])
    allowed = causal_mask(attention_mask, T, cfg.get("sliding_window"))
    act = ACT[cfg["hidden_act"]]
    x = W["model.embed_tokens.weight"][ids]
    hs, atts = [], []
    for i in range(cfg["num_hidden_layers"]):
        hs.append(x)
        p = f"model.layers.{i}."
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        qkv = linear(h, W[p + "self_attn.qkv_proj.weight"])
        q = qkv[:, :H * d].reshape(T, H, d).transpose(1, 0, 2)
        k = qkv[:, H * d:(H + KV) * d].reshape(T, KV, d).transpose(1, 0, 2)
        v = qkv[:, (H + KV) * d:].reshape(T, KV, d).transpose(1, 0, 2)
        q, k = apply_rope(q, cos[None], sin[None]), apply_rope(k, cos[None], sin[None])
        k, v = np.repeat(k, H // KV, axis=0), np.repeat(v, H // KV, axis=0)
        probs = softmax_masked(q @ k.transpose(0, 2, 1) * d ** -0.5, allowed)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(T, H * d)
        x = x + linear(ctx, W[p + "self_attn.o_proj.weight"])
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate_up = linear(h, W[p + "mlp.gate_up_proj.weight"])
        x = x + linear(gate_up[:, I:] * act(gate_up[:, :I]), W[p + "mlp.down_proj.weight"])
        atts.append(probs)
    x = rms_norm(x, W["model.norm.weight"], eps)
    hs.append(x)
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=pos)


# Gemma 2 / Gemma 3 text (modeling_gemma2.py, modeling_gemma3.py): Gemma2RMSNorm scales by
# (1 + weight); embeddings times sqrt(hidden_size) cast to the hidden dtype (float32 here);
# input_layernorm, post_attention_layernorm (on the attention output), pre_ and
# post_feedforward_layernorm around the MLP act(gate) * up with gelu_pytorch_tanh; scores
# q k^T * query_pre_attn_scalar^-0.5, then softcap * tanh(s / softcap) (attn_logit_softcapping),
# then the mask; sliding layers (layer_types, else Gemma 2 layer_idx % 2 == 0, Gemma 3
# (layer_idx + 1) % sliding_window_pattern != 0) see keys i - window < j <= i; Gemma 3 norms
# q and k per head before RoPE and its sliding layers use rope_local_base_freq; logits are the
# tied embedding times the final state, soft-capped by final_logit_softcapping.
# ------------------------------------------------------------------------------------------


def gemma_rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * (1.0 + w)


def gemma_sliding_layers(cfg):
    L = cfg["num_hidden_layers"]
    if cfg.get("layer_types"):
        return [t == "sliding_attention" for t in cfg["layer_types"]]
    if cfg["model_type"] == "gemma2":
        return [i % 2 == 0 for i in range(L)]
    return [(i + 1) % cfg.get("sliding_window_pattern", 6) != 0 for i in range(L)]


def gemma_forward(W, cfg, input_ids, attention_mask, taps=None):
    """taps, when a dict, receives each layer's sub-layer tensors by (layer, name): hook_z (the
    heads before o_proj), attn_out (after post_attention_layernorm), resid_mid, mlp_in (after
    pre_feedforward_layernorm), mlp_out (after post_feedforward_layernorm) and resid_post."""
    tap = (lambda i, name, t: taps.__setitem__((i, name), t)) if taps is not None else (
        lambda i, name, t: None)
    ids = np.asarray(input_ids)
    T = len(ids)
    D, H, KV, d = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
                   cfg["head_dim"])
    eps = cfg["rms_norm_eps"]
    gemma3 = cfg["model_type"] == "gemma3_text"
    soft = cfg.get("attn_logit_softcapping")
    final_soft = cfg.get("final_logit_softcapping")
    full = causal_mask(attention_mask, T)
    windowed = causal_mask(attention_mask, T, cfg["sliding_window"])
    rope_global = rope_cos_sin(T, d, cfg["rope_theta"])
    rope_local = rope_cos_sin(T, d, cfg.get("rope_local_base_freq", cfg["rope_theta"]))
    act = ACT[cfg["hidden_activation"]]
    x = W["model.embed_tokens.weight"][ids] * float(np.float32(D ** 0.5))
    hs, atts = [], []
    for i, sliding in enumerate(gemma_sliding_layers(cfg)):
        hs.append(x)
        p = f"model.layers.{i}."
        a = p + "self_attn."
        h = gemma_rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = linear(h, W[a + "q_proj.weight"]).reshape(T, H, d)
        k = linear(h, W[a + "k_proj.weight"]).reshape(T, KV, d)
        v = linear(h, W[a + "v_proj.weight"]).reshape(T, KV, d).transpose(1, 0, 2)
        if gemma3:
            q = gemma_rms_norm(q, W[a + "q_norm.weight"], eps)
            k = gemma_rms_norm(k, W[a + "k_norm.weight"], eps)
        q, k = q.transpose(1, 0, 2), k.transpose(1, 0, 2)
        cos, sin = rope_local if (gemma3 and sliding) else rope_global
        q, k = apply_rope(q, cos[None], sin[None]), apply_rope(k, cos[None], sin[None])
        k = np.repeat(k, H // KV, axis=0)
        v = np.repeat(v, H // KV, axis=0)
        s = q @ k.transpose(0, 2, 1) * cfg["query_pre_attn_scalar"] ** -0.5
        if soft:
            s = np.tanh(s / soft) * soft
        probs = softmax_masked(s, windowed if sliding else full)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(T, H * d)
        tap(i, "hook_z", ctx)
        h = linear(ctx, W[a + "o_proj.weight"])
        h = gemma_rms_norm(h, W[p + "post_attention_layernorm.weight"], eps)
        tap(i, "attn_out", h)
        x = x + h
        tap(i, "resid_mid", x)
        h = gemma_rms_norm(x, W[p + "pre_feedforward_layernorm.weight"], eps)
        tap(i, "mlp_in", h)
        m = p + "mlp."
        h = act(linear(h, W[m + "gate_proj.weight"])) * linear(h, W[m + "up_proj.weight"])
        h = linear(h, W[m + "down_proj.weight"])
        h = gemma_rms_norm(h, W[p + "post_feedforward_layernorm.weight"], eps)
        tap(i, "mlp_out", h)
        x = x + h
        tap(i, "resid_post", x)
        atts.append(probs)
    x = gemma_rms_norm(x, W["model.norm.weight"], eps)
    hs.append(x)
    logits = x @ W["model.embed_tokens.weight"].T
    if final_soft:
        logits = np.tanh(logits / final_soft) * final_soft
    return dict(attentions=np.stack(atts), hidden_states=np.stack(hs), last_hidden_state=x,
                position_ids=np.arange(T), logits=logits)
