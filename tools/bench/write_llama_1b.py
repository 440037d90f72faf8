#!/usr/bin/python3
"""Write a Llama-3.2-1B-shaped checkpoint with random BF16 weights, for timing whole commands
(`headlight heads`, `inspect`) at the size researchers use:

    /usr/bin/python3 tools/bench/write_llama_1b.py OUT_FOLDER

16 layers, hidden 2048, 32 query and 8 key/value heads of 64, SwiGLU 8192, the real 128,256-entry
vocabulary, tied embeddings, RoPE theta 500,000: config.json and one model.safetensors of
2.47 GB.  Weights are uniform within +-1/sqrt(fan-in), norm gains 1; deterministic (seed 0).
Written a tensor at a time, so memory stays near the largest tensor.
"""
import json
import os
import struct
import sys

import numpy as np

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256,
    "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
    "hidden_act": "silu", "tie_word_embeddings": True, "torch_dtype": "bfloat16",
}


def shapes():
    c = CONFIG
    D, F, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    kv = c["num_key_value_heads"] * c["head_dim"]
    yield "model.embed_tokens.weight", (V, D)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", (D,)
        yield p + "self_attn.q_proj.weight", (D, D)
        yield p + "self_attn.k_proj.weight", (kv, D)
        yield p + "self_attn.v_proj.weight", (kv, D)
        yield p + "self_attn.o_proj.weight", (D, D)
        yield p + "post_attention_layernorm.weight", (D,)
        yield p + "mlp.gate_proj.weight", (F, D)
        yield p + "mlp.up_proj.weight", (F, D)
        yield p + "mlp.down_proj.weight", (D, F)
    yield "model.norm.weight", (D,)


def bf16_bits(rng, shape):
    if len(shape) == 1:
        values = np.ones(shape, dtype=np.float32)
    else:
        bound = 1.0 / np.sqrt(shape[1])
        values = rng.uniform(-bound, bound, size=shape).astype(np.float32)
    return (values.view(np.uint32) >> 16).astype(np.uint16)  # truncation is enough for timing


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=1)
    header, offset = {}, 0
    for name, shape in shapes():
        size = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(0)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, shape in shapes():
            f.write(bf16_bits(rng, shape).tobytes())


if __name__ == "__main__":
    main()
