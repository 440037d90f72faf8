#!/usr/bin/env bash
# Breaks the engine on purpose and reports which tests catch each breakage (issue: "tests that
# can fail"). Each tools/mutations/NAME.patch is one deliberate bug: a NaN written into one
# captured attention row, a wrong norm epsilon, a dropped layer. The script copies the working
# tree (tracked and untracked files, not build/) to a scratch folder, and for each patch: applies
# it, builds the release preset's engine suites there (incrementally after the first), runs them
# (labels unit and vulkan: the goldens and the CPU-Vulkan parity on lavapipe), lists the tests that
# failed, and takes the patch back out. The breakages never reach the product's tree.
#
# Usage: tools/mutation_check.sh [NAME ...]   (default: every tools/mutations/*.patch)
# Scratch folder: $HEADLIGHT_MUTANT_DIR (default /tmp/headlight-mutants); kept between runs so
# that a second run builds only what a patch touches.
# Exit status: 0 when every breakage failed at least one test, 1 when one went unnoticed, 2 when
# a patch no longer applies or a mutant does not build.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=${HEADLIGHT_MUTANT_DIR:-/tmp/headlight-mutants}
labels=${HEADLIGHT_MUTANT_LABELS:-unit|vulkan}

if (( $# )); then
  patches=()
  for name in "$@"; do patches+=("$root/tools/mutations/$name.patch"); done
else
  patches=("$root"/tools/mutations/*.patch)
fi

# The scratch copy follows the working tree. tar keeps each file's time, so the build there stays
# incremental: ninja rebuilds only what changed since the last run.
mkdir -p "$scratch/src"
# A run killed before it took its patch back out left the mutant's objects newer than the
# restored sources: take the patch out first, so ninja sees the file change again.
if [[ -f $scratch/applied ]]; then
  (cd "$scratch/src" && patch -p1 -R --silent < "$(cat "$scratch/applied")") || true
  rm -f "$scratch/applied"
fi
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  tar --null --ignore-failed-read -T - -cf - 2> /dev/null) | tar -xf - -C "$scratch/src"
cd "$scratch/src"
[[ -f build/release/build.ninja ]] || cmake --preset release > /dev/null
# The Hub tokenizers' reference that tools/setup.sh installs into build/ (test_hub_tokenizers):
# the scratch copy reads the tree's own, or that test would fail for want of it, not of a catch.
if [[ -d $root/build/tokenizers-reference ]]; then
  ln -sfn "$root/build/tokenizers-reference" build/tokenizers-reference
fi

unnoticed=0
for patch in "${patches[@]}"; do
  name=$(basename "$patch" .patch)
  if ! patch -p1 --forward --silent < "$patch"; then
    echo "mutation $name: the patch no longer applies to this tree" >&2
    exit 2
  fi
  # Taken back out whatever happens next, so the scratch copy is clean for the next patch.
  echo "$patch" > "$scratch/applied"
  trap 'patch -p1 -R --silent < "$patch" && rm -f "$scratch/applied"' EXIT
  if ! cmake --build --preset release --target headlight suite_unit suite_backends suite_vulkan \
       > "$scratch/$name.build.log" 2>&1; then
    echo "mutation $name: does not build (see $scratch/$name.build.log)" >&2
    exit 2
  fi
  log="$scratch/$name.ctest.log"
  ctest --preset release -L "$labels" -j "$(nproc)" > "$log" 2>&1 || true
  failed=$(awk '/The following tests FAILED:/ { listed = 1; next }
                listed && $2 == "-" { printf "%s ", $3 }' "$log")
  if [[ -z $failed ]]; then
    echo "mutation $name: NOT CAUGHT: every test passed"
    unnoticed=1
  else
    echo "mutation $name: caught by $(wc -w <<< "$failed") tests: $failed"
  fi
  patch -p1 -R --silent < "$patch"
  rm -f "$scratch/applied"
  trap - EXIT
done
exit $unnoticed
