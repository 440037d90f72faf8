#!/usr/bin/env bash
# Runs Headlight's CPU forward of a Llama-3.2-1B-shaped model at T = 128 (bench_llama_forward:
# weights stored in f32 and in BF16) and PyTorch's CPU forward of the same shapes in float32 and
# bfloat16 (torch_llama_forward.py) on the same number of threads, and prints each time and the
# ratios, of wall time and of CPU time (the one to read on a loaded machine).
# Usage: tools/bench/compare_llama.sh [build-dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build/release}
threads=${HEADLIGHT_BENCH_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads HEADLIGHT_BENCH_THREADS=$threads

ours=$("$build/bench/bench_llama_forward" --benchmark_format=json)
torch=$(/usr/bin/python3 "$root/tools/bench/torch_llama_forward.py")

/usr/bin/python3 - "$ours" "$torch" <<'PY'
import json, sys
ours = json.loads(sys.argv[1])["benchmarks"]
torch = {r["dtype"]: r for r in map(json.loads, sys.argv[2].splitlines())}
line = ", ".join(f"{name} {r['seconds']:.2f} s" for name, r in torch.items())
print(f"PyTorch, T={torch['float32']['tokens']}, {torch['float32']['threads']} threads: {line}")
cpu = ", ".join(f"{name} {r['cpu_seconds']:.2f} s" for name, r in torch.items())
print(f"  CPU time (all threads): {cpu}")
for b in ours:
    seconds, cpu_seconds = b["real_time"] / 1e3, b["cpu_time"] / 1e3
    ratios = ", ".join(f"{seconds / r['seconds']:.2f}x PyTorch {name}" for name, r in torch.items())
    print(f"headlight, {b['label']} weights: {seconds:.2f} s ({b['GFLOP/s'] / 1e9:.0f} GFLOP/s): {ratios}")
    ratios = ", ".join(f"{cpu_seconds / r['cpu_seconds']:.2f}x" for r in torch.values())
    print(f"  CPU time (all threads) {cpu_seconds:.2f} s: {ratios}")
PY
