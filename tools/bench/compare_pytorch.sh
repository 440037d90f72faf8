#!/usr/bin/env bash
# Runs Headlight's CPU forward benchmark and PyTorch's CPU forward of the same BERT-base-sized
# model on the same number of threads, and prints both times and their ratio per length.
# Usage: tools/bench/compare_pytorch.sh [build-dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build/release}
threads=${HEADLIGHT_BENCH_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads HEADLIGHT_BENCH_THREADS=$threads

ours=$("$build/bench/bench_forward" --benchmark_filter='BertBaseForwardCpu|GemmPeak' --benchmark_format=json)
torch=$(/usr/bin/python3 "$root/tools/bench/torch_bert_forward.py")

/usr/bin/python3 - "$ours" "$torch" <<'PY'
import json, sys
ours = json.loads(sys.argv[1])["benchmarks"]
torch = {r["tokens"]: r["seconds"] for r in map(json.loads, sys.argv[2].splitlines())}
# Google Benchmark's JSON holds rate counters in units per second: FLOP/s, not GFLOP/s.
peak = {int(b["name"].split("/")[1]): b["GFLOP/s"] / 1e9 for b in ours if b["name"].startswith("BM_EigenGemmPeak")}
for b in ours:
    if not b["name"].startswith("BM_BertBaseForwardCpu"):
        continue
    tokens = int(b["name"].split("/")[1])
    seconds = b["real_time"] / 1e3
    gflops = b["GFLOP/s"] / 1e9
    share = gflops / max(peak.values())
    print(f"T={tokens}: headlight {seconds:.3f} s, pytorch {torch[tokens]:.3f} s, "
          f"ratio {seconds / torch[tokens]:.2f}x, {gflops:.0f} GFLOP/s "
          f"({share:.0%} of the {max(peak.values()):.0f} GFLOP/s GEMM peak), capture {b['capture_MB']:.0f} MB")
PY
