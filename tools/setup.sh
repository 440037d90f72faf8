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
# glslc, Mesa's lavapipe CPU driver, validation layers), Dear ImGui, Google Benchmark, and Xvfb +
# fonts for the headless window test. docs/dependencies.md says why each is there.
packages=(
  cmake ninja-build g++ pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev qt6-qpa-plugins libgl1-mesa-dri
  libeigen3-dev
  libvulkan-dev glslc glslang-tools spirv-tools mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  libimgui-dev libbenchmark-dev
  xvfb xauth fonts-dejavu-core
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

[[ -f build/release/build.ninja ]] || cmake --preset release
cmake --build --preset release

if [[ $mode == run ]]; then
  exec build/release/bin/headlight
fi
ctest --preset release -j "$(nproc)"
