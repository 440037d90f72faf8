#!/usr/bin/env bash
# Runs Headlight's CPU forward of a Llama-3.2-1B-shaped model at T = 128 (bench_llama_forward:
# weights stored in f32 and in BF16) and PyTorch's CPU forward of the same shapes in float32 and
# bfloat16 (torch_llama_forward.py) on the same number of threads, and prints each time and the
# ratios, of wall time and of CPU time (the one to read on a loaded machine); then the pass's f32
# floor (its GEMM FLOP count over the best OpenBLAS sgemm rate bench_gemm_floor measures in this
# run: tools/bench/gemm_floor.py) as a share of PyTorch float32's time, and PyTorch float32's time
# with the reference BLAS (Debian's netlib libblas3, what python3-torch called before OpenBLAS
# served libblas.so.3; one run, minutes; HEADLIGHT_BENCH_REFERENCE_BLAS=0 leaves it out).
# Usage: tools/bench/compare_llama.sh [build-dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build/release}
threads=${HEADLIGHT_BENCH_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads HEADLIGHT_BENCH_THREADS=$threads
source "$root/tools/bench/reference_blas.sh"

ours=$("$build/bench/bench_llama_forward" --benchmark_format=json)
floor=$("$build/bench/bench_gemm_floor" --benchmark_format=json)
torch=$(/usr/bin/python3 "$root/tools/bench/torch_llama_forward.py")
reference=$(reference_blas_run "$root/tools/bench/torch_llama_forward.py" HEADLIGHT_BENCH_DTYPES=float32)

/usr/bin/python3 - "$root" "$ours" "$torch" "$floor" "$reference" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1] + "/tools/bench")
from gemm_floor import floor_seconds, gemm_rates

ours = json.loads(sys.argv[2])["benchmarks"]
torch = {r["dtype"]: r for r in map(json.loads, sys.argv[3].splitlines())}
rates = gemm_rates(sys.argv[4])
reference = [json.loads(line) for line in sys.argv[5].splitlines()]
line = ", ".join(f"{name} {r['seconds']:.2f} s" for name, r in torch.items())
print(f"PyTorch, T={torch['float32']['tokens']}, {torch['float32']['threads']} threads: {line}")
print(f"  PyTorch's BLAS: {torch['float32']['blas']}")
cpu = ", ".join(f"{name} {r['cpu_seconds']:.2f} s" for name, r in torch.items())
print(f"  CPU time (all threads): {cpu}")
for b in ours:
    seconds, cpu_seconds = b["real_time"] / 1e3, b["cpu_time"] / 1e3
    ratios = ", ".join(f"{seconds / r['seconds']:.2f}x PyTorch {name}" for name, r in torch.items())
    print(f"headlight, {b['label']} weights: {seconds:.2f} s ({b['GFLOP/s'] / 1e9:.0f} GFLOP/s): {ratios}")
    ratios = ", ".join(f"{cpu_seconds / r['cpu_seconds']:.2f}x" for r in torch.values())
    print(f"  CPU time (all threads) {cpu_seconds:.2f} s: {ratios}")
products = [(128, 2048, 2048), (128, 2048, 512), (128, 2048, 8192), (128, 8192, 2048)]
floor, how = floor_seconds(ours[0]["GEMM_GFLOP"], products, rates)
print(how)
mine = ", ".join(f"{b['label']} weights {b['real_time'] / 1e3 / floor:.2f}x" for b in ours)
print(f"  floor / PyTorch float32 {floor / torch['float32']['seconds']:.2f}x (no f32 pass goes under "
      f"it); headlight / floor: {mine}")
for r in reference:
    mine = ", ".join(f"{b['label']} weights {b['real_time'] / 1e3 / r['seconds']:.3f}x" for b in ours)
    print(f"PyTorch float32 with the reference BLAS ({r['blas']}, one run): {r['seconds']:.2f} s "
          f"(CPU {r['cpu_seconds']:.2f} s); headlight / it: {mine}")
PY
