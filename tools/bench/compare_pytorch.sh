#!/usr/bin/env bash
# Runs Headlight's CPU forward benchmark and PyTorch's CPU forward of the same BERT-base-sized
# model on the same number of threads, and prints both times and their ratio per length; then the
# pass's f32 floor (its GEMM FLOP count over the best OpenBLAS sgemm rate bench_gemm_floor measures
# in this run: tools/bench/gemm_floor.py) as a share of PyTorch's time, and PyTorch's time with the
# reference BLAS (Debian's netlib libblas3, what python3-torch called before OpenBLAS served
# libblas.so.3; one run each, minutes; HEADLIGHT_BENCH_REFERENCE_BLAS=0 leaves it out).
# Usage: tools/bench/compare_pytorch.sh [build-dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build/release}
threads=${HEADLIGHT_BENCH_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads HEADLIGHT_BENCH_THREADS=$threads
source "$root/tools/bench/reference_blas.sh"

ours=$("$build/bench/bench_forward" --benchmark_filter='BertBaseForwardCpu|GemmPeak' --benchmark_format=json)
floor=$("$build/bench/bench_gemm_floor" --benchmark_format=json)
torch=$(/usr/bin/python3 "$root/tools/bench/torch_bert_forward.py")
reference=$(reference_blas_run "$root/tools/bench/torch_bert_forward.py")

/usr/bin/python3 - "$root" "$ours" "$torch" "$floor" "$reference" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1] + "/tools/bench")
from gemm_floor import floor_seconds, gemm_rates

ours = json.loads(sys.argv[2])["benchmarks"]
torch = {r["tokens"]: r for r in map(json.loads, sys.argv[3].splitlines())}
rates = gemm_rates(sys.argv[4])
reference = {r["tokens"]: r for r in map(json.loads, sys.argv[5].splitlines())}
# Google Benchmark's JSON holds rate counters in units per second: FLOP/s, not GFLOP/s.
peak = {int(b["name"].split("/")[1]): b["GFLOP/s"] / 1e9 for b in ours if b["name"].startswith("BM_EigenGemmPeak")}
for b in ours:
    if not b["name"].startswith("BM_BertBaseForwardCpu"):
        continue
    tokens = int(b["name"].split("/")[1])
    seconds, theirs = b["real_time"] / 1e3, torch[tokens]["seconds"]
    gflops = b["GFLOP/s"] / 1e9
    share = gflops / max(peak.values())
    print(f"T={tokens}: headlight {seconds:.3f} s, pytorch {theirs:.3f} s, "
          f"ratio {seconds / theirs:.2f}x, {gflops:.0f} GFLOP/s "
          f"({share:.0%} of the {max(peak.values()):.0f} GFLOP/s GEMM peak), capture {b['capture_MB']:.0f} MB")
    print(f"  PyTorch's BLAS: {torch[tokens]['blas']}")
    products = [(tokens, 768, 768), (tokens, 768, 3072), (tokens, 3072, 768)]
    floor, how = floor_seconds(b["GEMM_GFLOP"], products, rates)
    print(f"  {how}")
    print(f"  floor / PyTorch {floor / theirs:.2f}x (no f32 pass goes under it); "
          f"headlight / floor {seconds / floor:.2f}x")
    if tokens in reference:
        slow = reference[tokens]["seconds"]
        print(f"  PyTorch with the reference BLAS ({reference[tokens]['blas']}, one run): "
              f"{slow:.2f} s; headlight / it {seconds / slow:.3f}x")
PY
