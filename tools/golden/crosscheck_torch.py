#!/usr/bin/python3
"""Optional second opinion on the goldens, from PyTorch's own modules (Debian python3-torch).

Rebuilds the BERT, DistilBERT, RoBERTa and GPT-2 goldens with torch.nn.MultiheadAttention,
nn.LayerNorm and nn.functional.gelu, reading the checkpoints back from disk, and compares
attentions and hidden states with the stored goldens.  (torch 1.13 has no RoPE or GQA
building blocks; the Llama family is recomputed with a transcription written the way
modeling_llama.py / modeling_mistral.py (4.4x) write it: rotate_half, repeat_kv by expand +
reshape, an additive finfo.min 4D mask built as in _prepare_4d_causal_attention_mask_with_
cache_position, softmax in float32 semantics; OPT, GPT-NeoX, GPT-J and Phi-3 the same way, from
modeling_opt.py, modeling_gpt_neox.py, modeling_gptj.py and modeling_phi3.py.)

    /usr/bin/python3 tools/golden/crosscheck_torch.py [DIR]
"""
import json
import os
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io as S  # noqa: E402

torch.set_default_dtype(torch.float64)


def _load(folder):
    return {k: torch.from_numpy(v) for k, v in S.load_folder_f64(folder).items()}


def _mha(D, H, wq, bq, wk, bk, wv, bv, wo, bo):
    m = nn.MultiheadAttention(D, H, batch_first=True)
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([wq, wk, wv], 0))
        m.in_proj_bias.copy_(torch.cat([bq, bk, bv], 0))
        m.out_proj.weight.copy_(wo)
        m.out_proj.bias.copy_(bo)
    return m.eval()


def _ln(x, w, b, eps):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def encoder(W, cfg, ids, mask, tt):
    mt = cfg["model_type"]
    p = "bert." if any(k.startswith("bert.") for k in W) else ""
    ids_t = torch.tensor(ids)
    if mt == "distilbert":
        D, H, L, eps = cfg["dim"], cfg["n_heads"], cfg["n_layers"], 1e-12
        x = W["embeddings.word_embeddings.weight"][ids_t] + W["embeddings.position_embeddings.weight"][:len(ids)]
        x = _ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
    else:
        D, H, L, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], cfg["layer_norm_eps"]
        if mt == "roberta":
            m = (ids_t != cfg["pad_token_id"]).long()
            pos = torch.cumsum(m, 0) * m + cfg["pad_token_id"]
        else:
            pos = torch.arange(len(ids))
        x = (W[p + "embeddings.word_embeddings.weight"][ids_t] + W[p + "embeddings.position_embeddings.weight"][pos]
             + W[p + "embeddings.token_type_embeddings.weight"][torch.tensor(tt)])
        x = _ln(x, W[p + "embeddings.LayerNorm.weight"], W[p + "embeddings.LayerNorm.bias"], eps)
    kpm = torch.tensor(mask)[None] == 0
    x = x[None]
    hs, atts = [x[0]], []
    for i in range(L):
        if mt == "distilbert":
            q = f"transformer.layer.{i}."
            a = q + "attention."
            mha = _mha(D, H, *(W[a + n] for n in ("q_lin.weight", "q_lin.bias", "k_lin.weight", "k_lin.bias",
                                                  "v_lin.weight", "v_lin.bias", "out_lin.weight", "out_lin.bias")))
            names = (q + "sa_layer_norm.", q + "ffn.lin1.", q + "ffn.lin2.", q + "output_layer_norm.")
        else:
            q = f"{p}encoder.layer.{i}."
            a = q + "attention.self."
            mha = _mha(D, H, *(W[a + n] for n in ("query.weight", "query.bias", "key.weight", "key.bias",
                                                  "value.weight", "value.bias")),
                       W[q + "attention.output.dense.weight"], W[q + "attention.output.dense.bias"])
            names = (q + "attention.output.LayerNorm.", q + "intermediate.dense.", q + "output.dense.",
                     q + "output.LayerNorm.")
        sa, probs = mha(x, x, x, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
        x = _ln(x + sa, W[names[0] + "weight"], W[names[0] + "bias"], eps)
        h = F.gelu(F.linear(x, W[names[1] + "weight"], W[names[1] + "bias"]))
        x = _ln(x + F.linear(h, W[names[2] + "weight"], W[names[2] + "bias"]), W[names[3] + "weight"],
                W[names[3] + "bias"], eps)
        hs.append(x[0])
        atts.append(probs[0])
    return torch.stack(atts), torch.stack(hs)


def gpt2(W, cfg, ids, mask, tt):
    p = "transformer." if "transformer.wte.weight" in W else ""
    D, H, L, eps = cfg["n_embd"], cfg["n_head"], cfg["n_layer"], cfg["layer_norm_epsilon"]
    T = len(ids)
    x = (W[p + "wte.weight"][torch.tensor(ids)] + W[p + "wpe.weight"][:T])[None]
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    kpm = torch.tensor(mask)[None] == 0
    hs, atts = [], []
    for i in range(L):
        hs.append(x[0])
        q = f"{p}h.{i}."
        wqkv, bqkv = W[q + "attn.c_attn.weight"].T, W[q + "attn.c_attn.bias"]
        mha = _mha(D, H, wqkv[:D], bqkv[:D], wqkv[D:2 * D], bqkv[D:2 * D], wqkv[2 * D:], bqkv[2 * D:],
                   W[q + "attn.c_proj.weight"].T, W[q + "attn.c_proj.bias"])
        h = _ln(x, W[q + "ln_1.weight"], W[q + "ln_1.bias"], eps)
        sa, probs = mha(h, h, h, attn_mask=causal, key_padding_mask=kpm, need_weights=True,
                        average_attn_weights=False)
        x = x + sa
        h = _ln(x, W[q + "ln_2.weight"], W[q + "ln_2.bias"], eps)
        h = F.gelu(h @ W[q + "mlp.c_fc.weight"] + W[q + "mlp.c_fc.bias"], approximate="tanh")
        x = x + h @ W[q + "mlp.c_proj.weight"] + W[q + "mlp.c_proj.bias"]
        atts.append(probs[0])
    hs.append(_ln(x, W[p + "ln_f.weight"], W[p + "ln_f.bias"], eps)[0])
    return torch.stack(atts), torch.stack(hs)


def _rms(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def _repeat_kv(h, n_rep):
    b, kvh, slen, hd = h.shape
    return h[:, :, None, :, :].expand(b, kvh, n_rep, slen, hd).reshape(b, kvh * n_rep, slen, hd)


def llama(W, cfg, ids, mask, tt):
    D, H, KV, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"]
    hd = cfg.get("head_dim") or D // H
    eps, T = cfg["rms_norm_eps"], len(ids)
    # causal mask (+ Mistral sliding window) as an additive 4D mask
    min_dtype = torch.finfo(torch.float64).min
    cache_position = torch.arange(T)
    causal = torch.full((T, T), min_dtype)
    attend_not = torch.arange(T) > cache_position.reshape(-1, 1)
    if cfg["model_type"] == "mistral" and cfg.get("sliding_window") is not None:
        attend_not |= torch.arange(T) <= (cache_position.reshape(-1, 1) - cfg["sliding_window"])
    causal = causal * attend_not
    causal = causal.masked_fill(torch.tensor(mask)[None, :] == 0, min_dtype)[None, None]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).double() / hd))
    freqs = (inv_freq[:, None] @ cache_position[None, :].double()).T
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]
    x = W["model.embed_tokens.weight"][torch.tensor(ids)][None]
    hs, atts = [], []
    for i in range(L):
        hs.append(x[0])
        p = f"model.layers.{i}."
        h = _rms(x, W[p + "input_layernorm.weight"], eps)
        a = p + "self_attn."
        q = F.linear(h, W[a + "q_proj.weight"], W.get(a + "q_proj.bias")).view(1, T, H, hd)
        k = F.linear(h, W[a + "k_proj.weight"], W.get(a + "k_proj.bias")).view(1, T, KV, hd)
        if cfg["model_type"] == "qwen3":  # Qwen3Attention: q_norm(q_proj(x).view(hidden_shape))
            q, k = _rms(q, W[a + "q_norm.weight"], eps), _rms(k, W[a + "k_norm.weight"], eps)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = F.linear(h, W[a + "v_proj.weight"], W.get(a + "v_proj.bias")).view(1, T, KV, hd).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        k, v = _repeat_kv(k, H // KV), _repeat_kv(v, H // KV)
        w = torch.matmul(q, k.transpose(2, 3)) / hd ** 0.5 + causal
        w = F.softmax(w, dim=-1)
        o = torch.matmul(w, v).transpose(1, 2).reshape(1, T, H * hd)
        x = x + F.linear(o, W[a + "o_proj.weight"], W.get(a + "o_proj.bias"))
        h = _rms(x, W[p + "post_attention_layernorm.weight"], eps)
        m = p + "mlp."
        x = x + F.linear(F.silu(F.linear(h, W[m + "gate_proj.weight"])) * F.linear(h, W[m + "up_proj.weight"]),
                         W[m + "down_proj.weight"])
        atts.append(w[0])
    hs.append(_rms(x, W["model.norm.weight"], eps)[0])
    return torch.stack(atts), torch.stack(hs)


def opt(W, cfg, ids, mask, tt):
    """Transcribed the way modeling_opt.py writes OPTDecoder: positions cumsum(mask) * mask - 1
    plus the offset 2, q_proj(x) * scaling, an additive causal + padding mask, and the LayerNorms
    before (do_layer_norm_before) or after each sub-layer."""
    p = "model.decoder."
    D, H, L, T = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], len(ids)
    hd, pre = D // H, cfg["do_layer_norm_before"]
    m = torch.tensor(mask)
    pos = (torch.cumsum(m, 0) * m - 1).long() + 2
    x = (W[p + "embed_tokens.weight"][torch.tensor(ids)] + W[p + "embed_positions.weight"][pos])[None]
    min_dtype = torch.finfo(torch.float64).min
    add = torch.triu(torch.full((T, T), min_dtype), 1).masked_fill(m[None, :] == 0, min_dtype)
    ln = lambda v, n: F.layer_norm(v, (D,), W[n + ".weight"], W[n + ".bias"])  # noqa: E731
    hs, atts = [], []
    for i in range(L):
        hs.append(x[0])
        q = f"{p}layers.{i}."
        a = q + "self_attn."
        h = ln(x, q + "self_attn_layer_norm") if pre else x
        proj = lambda n: F.linear(h, W[a + n + ".weight"], W[a + n + ".bias"]).view(1, T, H, hd).transpose(1, 2)  # noqa: E731,E501
        qs = (F.linear(h, W[a + "q_proj.weight"], W[a + "q_proj.bias"]) * hd ** -0.5).view(1, T, H, hd).transpose(1, 2)
        w = F.softmax(torch.matmul(qs, proj("k_proj").transpose(-1, -2)) + add, dim=-1)
        o = torch.matmul(w, proj("v_proj")).transpose(1, 2).reshape(1, T, D)
        x = x + F.linear(o, W[a + "out_proj.weight"], W[a + "out_proj.bias"])
        if not pre:
            x = ln(x, q + "self_attn_layer_norm")
        h = ln(x, q + "final_layer_norm") if pre else x
        x = x + F.linear(F.relu(F.linear(h, W[q + "fc1.weight"], W[q + "fc1.bias"])), W[q + "fc2.weight"],
                         W[q + "fc2.bias"])
        if not pre:
            x = ln(x, q + "final_layer_norm")
        atts.append(w[0])
    hs.append((ln(x, p + "final_layer_norm") if pre else x)[0])
    return torch.stack(atts), torch.stack(hs)


def _causal_padding_mask(T, mask):
    """The additive [1, 1, T, T] mask: finfo.min where a key is in the future or padding."""
    min_dtype = torch.finfo(torch.float64).min
    add = torch.triu(torch.full((T, T), min_dtype), 1)
    return add.masked_fill(torch.tensor(mask)[None, :] == 0, min_dtype)[None, None]


def gpt_neox(W, cfg, ids, mask, tt):
    """Transcribed the way modeling_gpt_neox.py (4.4x) writes it: qkv.view(..., heads,
    3 * head_size) split per head, GPTNeoXRotaryEmbedding over rotary_ndims with rotate_half on
    query[..., :rotary_ndims], baddbmm with alpha = norm_factor, and GPTNeoXLayer's
    use_parallel_residual branches (mlp_output + attn_output + hidden_states)."""
    p = "gpt_neox." if "gpt_neox.embed_in.weight" in W else ""
    D, H, L, T = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], len(ids)
    hd = D // H
    rd = int(hd * cfg["rotary_pct"])
    ln = lambda v, n: F.layer_norm(v, (D,), W[n + ".weight"], W[n + ".bias"], cfg["layer_norm_eps"])  # noqa: E731
    inv_freq = 1.0 / (cfg["rotary_emb_base"] ** (torch.arange(0, rd, 2, dtype=torch.int64).double() / rd))
    freqs = torch.outer(torch.arange(T).double(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]
    add = _causal_padding_mask(T, mask)
    x = W[p + "embed_in.weight"][torch.tensor(ids)][None]
    hs, atts = [], []
    for i in range(L):
        hs.append(x[0])
        q = f"{p}layers.{i}."
        a = q + "attention."
        qkv = F.linear(ln(x, q + "input_layernorm"), W[a + "query_key_value.weight"],
                       W[a + "query_key_value.bias"]).view(1, T, H, 3 * hd)
        query = qkv[..., :hd].permute(0, 2, 1, 3)
        key = qkv[..., hd:2 * hd].permute(0, 2, 1, 3)
        value = qkv[..., 2 * hd:].permute(0, 2, 1, 3)
        q_rot, q_pass = query[..., :rd], query[..., rd:]
        k_rot, k_pass = key[..., :rd], key[..., rd:]
        query = torch.cat((q_rot * cos + _rotate_half(q_rot) * sin, q_pass), dim=-1)
        key = torch.cat((k_rot * cos + _rotate_half(k_rot) * sin, k_pass), dim=-1)
        scores = torch.baddbmm(torch.zeros(H, T, T), query.view(H, T, hd), key.view(H, T, hd).transpose(1, 2),
                               beta=1.0, alpha=hd ** -0.5).view(1, H, T, T)
        w = F.softmax(scores + add, dim=-1)
        attn = F.linear(torch.matmul(w, value).permute(0, 2, 1, 3).reshape(1, T, D), W[a + "dense.weight"],
                        W[a + "dense.bias"])
        mlp = lambda v: F.linear(F.gelu(F.linear(v, W[q + "mlp.dense_h_to_4h.weight"], W[q + "mlp.dense_h_to_4h.bias"])),  # noqa: E731,E501
                                 W[q + "mlp.dense_4h_to_h.weight"], W[q + "mlp.dense_4h_to_h.bias"])
        if cfg["use_parallel_residual"]:
            x = mlp(ln(x, q + "post_attention_layernorm")) + attn + x
        else:
            attn = attn + x
            x = mlp(ln(attn, q + "post_attention_layernorm")) + attn
        atts.append(w[0])
    hs.append(ln(x, p + "final_layer_norm")[0])
    return torch.stack(atts), torch.stack(hs)


def _rotate_every_two(x):
    x1, x2 = x[:, :, :, ::2], x[:, :, :, 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def gptj(W, cfg, ids, mask, tt):
    """Transcribed the way modeling_gptj.py writes it: create_sinusoidal_positions over
    rotary_dim, sin/cos repeat_interleave'd and rotate_every_two on [..., :rotary_dim] of
    [batch, seq, heads, head_dim], scores / sqrt(head_dim), and GPTJBlock's
    attn_output + feed_forward_hidden_states + residual from one ln_1."""
    p = "transformer."
    D, H, L, T, rd = cfg["n_embd"], cfg["n_head"], cfg["n_layer"], len(ids), cfg["rotary_dim"]
    hd = D // H
    ln = lambda v, n: F.layer_norm(v, (D,), W[n + ".weight"], W[n + ".bias"], cfg["layer_norm_epsilon"])  # noqa: E731
    inv_freq = 1.0 / (10000 ** (torch.arange(0, rd, 2, dtype=torch.int64) / rd))
    sinusoid = torch.einsum("i , j -> i j", torch.arange(T, dtype=torch.int64).double(), inv_freq)
    sin = torch.repeat_interleave(torch.sin(sinusoid)[None, :, None, :], 2, 3)
    cos = torch.repeat_interleave(torch.cos(sinusoid)[None, :, None, :], 2, 3)
    add = _causal_padding_mask(T, mask)
    x = W[p + "wte.weight"][torch.tensor(ids)][None]
    hs, atts = [], []
    for i in range(L):
        hs.append(x[0])
        q = f"{p}h.{i}."
        h = ln(x, q + "ln_1")
        query, key, value = (F.linear(h, W[q + f"attn.{n}_proj.weight"]).view(1, T, H, hd) for n in ("q", "k", "v"))
        rot = lambda t: torch.cat([t[..., :rd] * cos + _rotate_every_two(t[..., :rd]) * sin, t[..., rd:]], -1)  # noqa: E731,E501
        query, key, value = rot(query).permute(0, 2, 1, 3), rot(key).permute(0, 2, 1, 3), value.permute(0, 2, 1, 3)
        w = F.softmax(torch.matmul(query, key.transpose(-1, -2)) / torch.sqrt(torch.tensor(float(hd))) + add, dim=-1)
        attn = F.linear(torch.matmul(w, value).permute(0, 2, 1, 3).reshape(1, T, D), W[q + "attn.out_proj.weight"])
        ff = F.linear(F.gelu(F.linear(h, W[q + "mlp.fc_in.weight"], W[q + "mlp.fc_in.bias"]), approximate="tanh"),
                      W[q + "mlp.fc_out.weight"], W[q + "mlp.fc_out.bias"])
        x = attn + ff + x
        atts.append(w[0])
    hs.append(ln(x, p + "ln_f")[0])
    return torch.stack(atts), torch.stack(hs)


def phi3(W, cfg, ids, mask, tt):
    """Transcribed the way modeling_phi3.py writes it: qkv[..., :query_pos] and the two key/value
    slices, Phi3RotaryEmbedding over int(head_dim * partial_rotary_factor) with
    apply_rotary_pos_emb's q_rot / q_pass, repeat_kv, the sliding-window causal mask
    (kv_idx > q_idx - sliding_window) and Phi3MLP's gate_up_proj.chunk(2)."""
    D, H, KV, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"]
    hd, eps, T = D // H, cfg["rms_norm_eps"], len(ids)
    rd = int(hd * cfg["partial_rotary_factor"])
    min_dtype = torch.finfo(torch.float64).min
    q_idx, kv_idx = torch.arange(T)[:, None], torch.arange(T)[None, :]
    allowed = (kv_idx <= q_idx) & (kv_idx > q_idx - cfg["sliding_window"]) & (torch.tensor(mask)[None, :] != 0)
    add = torch.where(allowed, torch.tensor(0.0), torch.tensor(min_dtype))[None, None]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, rd, 2, dtype=torch.int64).double() / rd))
    freqs = (inv_freq[:, None] @ torch.arange(T).double()[None, :]).T
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]
    x = W["model.embed_tokens.weight"][torch.tensor(ids)][None]
    hs, atts = [], []
    for i in range(L):
        hs.append(x[0])
        p = f"model.layers.{i}."
        qkv = F.linear(_rms(x, W[p + "input_layernorm.weight"], eps), W[p + "self_attn.qkv_proj.weight"])
        query_pos = H * hd
        q = qkv[..., :query_pos].view(1, T, -1, hd).transpose(1, 2)
        k = qkv[..., query_pos:query_pos + KV * hd].view(1, T, -1, hd).transpose(1, 2)
        v = qkv[..., query_pos + KV * hd:].view(1, T, -1, hd).transpose(1, 2)
        q = torch.cat([q[..., :rd] * cos + _rotate_half(q[..., :rd]) * sin, q[..., rd:]], dim=-1)
        k = torch.cat([k[..., :rd] * cos + _rotate_half(k[..., :rd]) * sin, k[..., rd:]], dim=-1)
        k, v = _repeat_kv(k, H // KV), _repeat_kv(v, H // KV)
        w = F.softmax(torch.matmul(q, k.transpose(2, 3)) * hd ** -0.5 + add, dim=-1)
        x = x + F.linear(torch.matmul(w, v).transpose(1, 2).reshape(1, T, -1), W[p + "self_attn.o_proj.weight"])
        up_states = F.linear(_rms(x, W[p + "post_attention_layernorm.weight"], eps), W[p + "mlp.gate_up_proj.weight"])
        gate, up_states = up_states.chunk(2, dim=-1)
        x = x + F.linear(up_states * F.silu(gate), W[p + "mlp.down_proj.weight"])
        atts.append(w[0])
    hs.append(_rms(x, W["model.norm.weight"], eps)[0])
    return torch.stack(atts), torch.stack(hs)


class _GemmaRMSNorm(nn.Module):
    """Gemma2RMSNorm / Gemma3RMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + weight), in float32
    semantics (float64 here)."""

    def __init__(self, weight, eps):
        super().__init__()
        self.eps, self.weight = eps, weight

    def forward(self, x):
        output = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return (output * (1.0 + self.weight.float())).type_as(x)


def _gemma_rope(theta, hd, position_ids):
    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.int64).double() / hd))
    freqs = (inv_freq[None, :, None] @ position_ids[:, None, :].double()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[:, None], emb.sin()[:, None]


def gemma(W, cfg, ids, mask, tt):
    """Transcribed the way modeling_gemma2.py / modeling_gemma3.py write Gemma2Model and
    Gemma3TextModel with eager attention: the normalizer cast to the hidden dtype, the sliding
    layers' mask torch.tril(ones, diagonal=-sliding_window) turned to finfo.min, scores *
    scaling, tanh soft-capping before the mask, q_norm / k_norm (Gemma 3) before RoPE, the
    local rotary base on Gemma 3's sliding layers, and the final logit soft-capping."""
    D, H, KV, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"]
    hd, eps, T = cfg["head_dim"], cfg["rms_norm_eps"], len(ids)
    gemma3 = cfg["model_type"] == "gemma3_text"
    norm = lambda n: _GemmaRMSNorm(W[n + ".weight"], eps)  # noqa: E731
    min_dtype = torch.finfo(torch.float64).min
    cache_position = torch.arange(T)
    position_ids = cache_position.unsqueeze(0)
    causal = torch.triu(torch.full((T, T), min_dtype), 1)
    causal = causal.masked_fill(torch.tensor(mask)[None, :] == 0, min_dtype)[None, None]
    inputs_embeds = W["model.embed_tokens.weight"][torch.tensor(ids)][None]
    normalizer = torch.tensor(D ** 0.5, dtype=torch.float32).double()  # cast to the hidden dtype
    hidden_states = inputs_embeds * normalizer
    if cfg.get("layer_types"):
        sliding_layers = [t == "sliding_attention" for t in cfg["layer_types"]]
    elif gemma3:
        sliding_layers = [bool((i + 1) % cfg["sliding_window_pattern"]) for i in range(L)]
    else:
        sliding_layers = [not bool(i % 2) for i in range(L)]
    cos_g, sin_g = _gemma_rope(cfg["rope_theta"], hd, position_ids)
    cos_l, sin_l = _gemma_rope(cfg.get("rope_local_base_freq", cfg["rope_theta"]), hd, position_ids)
    scaling = cfg["query_pre_attn_scalar"] ** -0.5
    softcap = cfg.get("attn_logit_softcapping")
    hs, atts = [], []
    for i in range(L):
        hs.append(hidden_states[0])
        p = f"model.layers.{i}."
        a = p + "self_attn."
        attention_mask = causal
        if sliding_layers[i]:
            sliding_window_mask = torch.tril(torch.ones_like(attention_mask, dtype=torch.bool),
                                             diagonal=-cfg["sliding_window"])
            attention_mask = torch.where(sliding_window_mask, min_dtype, attention_mask)
        residual = hidden_states
        h = norm(p + "input_layernorm")(hidden_states)
        q = F.linear(h, W[a + "q_proj.weight"]).view(1, T, -1, hd).transpose(1, 2)
        k = F.linear(h, W[a + "k_proj.weight"]).view(1, T, -1, hd).transpose(1, 2)
        v = F.linear(h, W[a + "v_proj.weight"]).view(1, T, -1, hd).transpose(1, 2)
        if gemma3:
            q, k = norm(a + "q_norm")(q), norm(a + "k_norm")(k)
        cos, sin = (cos_l, sin_l) if gemma3 and sliding_layers[i] else (cos_g, sin_g)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        k, v = _repeat_kv(k, H // KV), _repeat_kv(v, H // KV)
        w = torch.matmul(q, k.transpose(2, 3)) * scaling
        if softcap is not None:
            w = torch.tanh(w / softcap) * softcap
        w = F.softmax(w + attention_mask, dim=-1)
        o = torch.matmul(w, v).transpose(1, 2).reshape(1, T, -1)
        h = norm(p + "post_attention_layernorm")(F.linear(o, W[a + "o_proj.weight"]))
        hidden_states = residual + h
        residual = hidden_states
        h = norm(p + "pre_feedforward_layernorm")(hidden_states)
        m = p + "mlp."
        h = F.linear(F.gelu(F.linear(h, W[m + "gate_proj.weight"]), approximate="tanh") *
                     F.linear(h, W[m + "up_proj.weight"]), W[m + "down_proj.weight"])
        hidden_states = residual + norm(p + "post_feedforward_layernorm")(h)
        atts.append(w[0])
    hidden_states = norm("model.norm")(hidden_states)
    hs.append(hidden_states[0])
    logits = F.linear(hidden_states, W["model.embed_tokens.weight"])
    if cfg.get("final_logit_softcapping") is not None:
        logits = torch.tanh(logits / cfg["final_logit_softcapping"]) * cfg["final_logit_softcapping"]
    return torch.stack(atts), torch.stack(hs), logits[0]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "data", "models")
    worst_all = 0.0
    for name in ("bert", "bert_mlm", "roberta", "distilbert", "gpt2", "gpt2_plain", "llama", "qwen2",
                 "mistral", "qwen3", "opt", "opt_post_ln", "gpt_neox", "gpt_neox_sequential", "gptj",
                 "phi3", "gemma2", "gemma3"):
        d = os.path.join(root, name)
        cfg = json.load(open(os.path.join(d, "config.json")))
        W = _load(d)
        fn = {"gpt2": gpt2, "llama": llama, "qwen2": llama, "mistral": llama, "qwen3": llama, "opt": opt,
              "gpt_neox": gpt_neox, "gptj": gptj, "phi3": phi3,
              "gemma2": gemma, "gemma3_text": gemma}.get(cfg["model_type"], encoder)
        worst = 0.0
        for case in json.load(open(os.path.join(d, "golden.json"), encoding="utf-8"))["cases"]:
            g = S.load(os.path.join(d, "golden", case["name"] + ".safetensors"))[0]
            with torch.no_grad():
                att, hs, *logits = fn(W, cfg, case["ids"], case["attention_mask"], case["token_type_ids"])
            worst = max(worst, float((att - torch.from_numpy(g["attentions"].astype(np.float64))).abs().max()),
                        float((hs - torch.from_numpy(g["hidden_states"].astype(np.float64))).abs().max()))
            if logits:  # Gemma's goldens carry the soft-capped logits too
                worst = max(worst, float((logits[0] - torch.from_numpy(g["logits"].astype(np.float64))).abs().max()))
        print(f"{name:19s} torch.nn max |diff| vs golden: {worst:.2e}")
        worst_all = max(worst_all, worst)
    if worst_all > 1e-5:
        sys.exit("MISMATCH")
    return 0


if __name__ == "__main__":
    sys.exit(main())
