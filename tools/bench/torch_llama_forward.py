#!/usr/bin/python3
"""PyTorch CPU reference timing: a Llama-3.2-1B-shaped decoder (16 layers, hidden 2048, 32 query
and 8 key/value heads of 64, SwiGLU FFN 8192, RoPE θ = 500,000, RMSNorm; random weights) forward
at T = 128 in float32 and in bfloat16, as Hugging Face's LlamaModel runs it (no attention maps
kept; scaled_dot_product_attention where this PyTorch has it, else HF's eager attention). Both sides start from the embeddings and stop at the final
norm: the 128k-entry LM head is left out, as bench_llama_forward leaves it out. Prints one JSON
line per dtype: {"dtype", "tokens", "seconds", "cpu_seconds", "threads", "blas"} (medians of runs;
CPU time of all threads, the measure to compare on a loaded machine, with one thread; blas: the
libblas.so.3 this process loaded, resolved).

Thread count follows HEADLIGHT_BENCH_THREADS (default: all cores), the same as the C++
benchmark's OpenMP threads. HEADLIGHT_BENCH_DTYPES picks the dtypes (default "float32,bfloat16").
HEADLIGHT_BENCH_RUNS sets the timed runs (default 3); 1 also skips the warm-up run, for the
reference BLAS (Debian's netlib libblas3, through LD_LIBRARY_PATH), whose passes take minutes.
"""
import json
import os
import statistics
import time

import torch

from blas_library import blas_library

HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN = 2048, 16, 32, 8, 64, 8192
THETA, EPS, TOKENS = 500000.0, 1e-5, 128


def make_layer():
    linear = lambda n, k: torch.nn.Linear(k, n, bias=False)
    return torch.nn.ModuleDict({
        "q": linear(HEADS * HEAD_DIM, HIDDEN), "k": linear(KV_HEADS * HEAD_DIM, HIDDEN),
        "v": linear(KV_HEADS * HEAD_DIM, HIDDEN), "o": linear(HIDDEN, HEADS * HEAD_DIM),
        "gate": linear(FFN, HIDDEN), "up": linear(FFN, HIDDEN), "down": linear(HIDDEN, FFN),
    })


def rms_norm(x, eps=EPS):
    # HF LlamaRMSNorm: the variance in float32, the result back in the input's dtype (unit gamma).
    h = x.to(torch.float32)
    return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def rotary(tokens, dtype):
    inv_freq = 1.0 / THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM)
    angles = torch.outer(torch.arange(tokens, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + turned * sin


def causal_attention(q, k, v):
    if hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[1]
    scores = q @ k.transpose(1, 2) / HEAD_DIM ** 0.5
    future = torch.ones(t, t, dtype=torch.bool).triu(1)
    scores = scores.masked_fill(future, torch.finfo(scores.dtype).min)
    # HF's eager path: the softmax in float32, back to the activations' dtype.
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
    return probs @ v


def forward(layers, x, cos, sin):
    t = x.shape[0]
    for layer in layers:
        h = rms_norm(x)
        q = layer["q"](h).view(t, HEADS, HEAD_DIM).transpose(0, 1)
        k = layer["k"](h).view(t, KV_HEADS, HEAD_DIM).transpose(0, 1)
        v = layer["v"](h).view(t, KV_HEADS, HEAD_DIM).transpose(0, 1)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        group = HEADS // KV_HEADS
        k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
        context = causal_attention(q, k, v)
        x = x + layer["o"](context.transpose(0, 1).reshape(t, HEADS * HEAD_DIM))
        h = rms_norm(x)
        x = x + layer["down"](torch.nn.functional.silu(layer["gate"](h)) * layer["up"](h))
    return rms_norm(x)


def time_dtype(dtype, runs):
    torch.manual_seed(0)
    layers = [make_layer().to(dtype) for _ in range(LAYERS)]
    x = torch.randn(TOKENS, HIDDEN).to(dtype)
    cos, sin = rotary(TOKENS, dtype)
    if runs > 1:
        forward(layers, x, cos, sin)  # warm-up
    seconds, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        forward(layers, x, cos, sin)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(seconds), statistics.median(cpu)


def main():
    threads = int(os.environ.get("HEADLIGHT_BENCH_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    dtypes = os.environ.get("HEADLIGHT_BENCH_DTYPES", "float32,bfloat16").split(",")
    with torch.no_grad():
        for name in dtypes:
            seconds, cpu_seconds = time_dtype(getattr(torch, name),
                                              runs=int(os.environ.get("HEADLIGHT_BENCH_RUNS", 3)))
            print(json.dumps({"dtype": name, "tokens": TOKENS, "seconds": seconds,
                              "cpu_seconds": cpu_seconds, "threads": threads,
                              "blas": blas_library()}), flush=True)


if __name__ == "__main__":
    main()
