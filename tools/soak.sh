#!/usr/bin/env bash
# The full soak of the window (tests/gui/test_soak.cpp): 1,000 rounds of variant toggles, view and
# head changes, switches between the zoo's pre_ln and a Llama-3.2-1B-shaped sparse checkpoint
# (2.5 GB, written to a temporary folder and removed after), and built-in lessons. CI runs the
# same test with 60 rounds and the golden Llama. Pass `asan` to run it from the asan preset's
# build (build it first: cmake --build --preset asan --target suite_gui).
# Usage: tools/soak.sh [release|asan] [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset=${1:-release}
rounds=${2:-1000}
[[ $preset == release || $preset == asan ]] || { echo "usage: tools/soak.sh [release|asan] [ROUNDS]" >&2; exit 2; }
# QTEST_FUNCTION_TIMEOUT: Qt Test ends a test function after 5 minutes by default.
HEADLIGHT_SOAK_ROUNDS=$rounds HEADLIGHT_SOAK_LARGE_MODEL=1b QTEST_FUNCTION_TIMEOUT=14400000 \
  ctest --preset "$preset" -R '^test_soak$' --timeout 14400 --output-on-failure -V | grep --line-buffered -E 'soak:|PASS|FAIL|Totals'
