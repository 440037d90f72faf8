#!/usr/bin/env bash
# The CPU backend's GEMM against Eigen's (measured in the same run by bench_gemm) and against
# PyTorch's float32 matmul on the same shapes and threads; prints GFLOP/s and the ratios per shape.
# Usage: tools/bench/compare_gemm.sh [build-dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build/release}
threads=${HEADLIGHT_BENCH_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads

ours=$("$build/bench/bench_gemm" --benchmark_format=json --benchmark_min_time=1)
/usr/bin/python3 - "$ours" "$threads" <<'PY'
import json, sys, time
import torch

torch.set_num_threads(int(sys.argv[2]))
rows = {}
for b in json.loads(sys.argv[1])["benchmarks"]:
    name, *shape = b["name"].split("/")[:4]
    rows.setdefault(tuple(map(int, shape)), {})[name] = (b["GFLOP/s"] / 1e9, b.get("label", ""))

def torch_gflops(t, k, n):
    x, w = torch.randn(t, k), torch.randn(n, k)
    x @ w.T
    runs, start = 0, time.perf_counter()
    while time.perf_counter() - start < 1.0:
        x @ w.T
        runs += 1
    return 2.0 * t * k * n * runs / (time.perf_counter() - start) / 1e9

for (t, k, n), r in rows.items():
    ours, library = r["BM_HeadlightGemm"]
    eigen = r["BM_EigenGemm"][0]
    torch_rate = torch_gflops(t, k, n)
    print(f"{t}x{k} · {k}x{n}: headlight ({library}) {ours:.0f} GFLOP/s, Eigen {eigen:.0f} "
          f"({ours / eigen:.2f}x), PyTorch float32 {torch_rate:.0f} ({ours / torch_rate:.2f}x)")
PY
