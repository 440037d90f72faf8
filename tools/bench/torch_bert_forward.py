#!/usr/bin/python3
"""PyTorch CPU reference timing: a BERT-base-sized encoder (12 layers, hidden 768, 12 heads, FFN
3072, random weights) forward with every attention map kept, as Hugging Face's BertModel does with
output_attentions=True. Prints one JSON line per length: {"tokens", "seconds", "threads", "blas"}
(the median of runs; blas: the libblas.so.3 this process loaded, resolved).

Run with Debian's python3-torch and libopenblas0-pthread installed (without OpenBLAS, PyTorch's
CPU GEMM is ten times slower and the comparison means nothing). Thread count follows
HEADLIGHT_BENCH_THREADS (default: all cores), the same as the C++ benchmark's OpenMP threads.
HEADLIGHT_BENCH_RUNS sets the timed runs (default 5); 1 also skips the warm-up run, for the
reference BLAS (Debian's netlib libblas3, through LD_LIBRARY_PATH), whose passes take minutes.
"""
import json
import math
import os
import statistics
import time

import torch

from blas_library import blas_library


def make_layer(d, f):
    layer = torch.nn.ModuleDict({
        "q": torch.nn.Linear(d, d), "k": torch.nn.Linear(d, d), "v": torch.nn.Linear(d, d),
        "o": torch.nn.Linear(d, d), "ln1": torch.nn.LayerNorm(d, eps=1e-12),
        "up": torch.nn.Linear(d, f), "down": torch.nn.Linear(f, d), "ln2": torch.nn.LayerNorm(d, eps=1e-12),
    })
    return layer


def forward(layers, x, heads):
    t, d = x.shape
    hd = d // heads
    attentions = []
    for layer in layers:
        q = layer["q"](x).view(t, heads, hd).transpose(0, 1)
        k = layer["k"](x).view(t, heads, hd).transpose(0, 1)
        v = layer["v"](x).view(t, heads, hd).transpose(0, 1)
        probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(hd), dim=-1)
        attentions.append(probs)
        context = (probs @ v).transpose(0, 1).reshape(t, d)
        x = layer["ln1"](x + layer["o"](context))
        x = layer["ln2"](x + layer["down"](torch.nn.functional.gelu(layer["up"](x))))
    return x, attentions


def main():
    torch.manual_seed(0)
    threads = int(os.environ.get("HEADLIGHT_BENCH_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    layers = [make_layer(768, 3072) for _ in range(12)]
    count = int(os.environ.get("HEADLIGHT_BENCH_RUNS", 5))
    with torch.no_grad():
        for tokens in (128, 512):
            x = torch.randn(tokens, 768)
            if count > 1:
                forward(layers, x, 12)  # warm-up
            runs = []
            for _ in range(count):
                start = time.perf_counter()
                forward(layers, x, 12)
                runs.append(time.perf_counter() - start)
            print(json.dumps({"tokens": tokens, "seconds": statistics.median(runs), "threads": threads,
                              "blas": blas_library()}), flush=True)


if __name__ == "__main__":
    main()
