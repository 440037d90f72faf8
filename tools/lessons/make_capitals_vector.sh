#!/usr/bin/env bash
# Regenerates resources/lessons/steering/capitals.safetensors, the steering vector of the built-in
# lesson "9-steering-vectors": the difference of the means of the English byte model's residual
# stream after block 1, at each line's last byte, between the first 60 lines of 40+ bytes of
# resources/texts/jargon-heldout.txt cut to 60 bytes in UPPERCASE and the same lines in lowercase.
#
#   tools/lessons/make_capitals_vector.sh [path/to/headlight]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
headlight=${1:-build/release/bin/headlight}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$work" <<'PY'
import sys
lines = [l.strip() for l in open("resources/texts/jargon-heldout.txt", encoding="utf-8")]
lines = [l[:60] for l in lines if len(l) > 40][:60]
open(f"{sys.argv[1]}/upper.txt", "w").write("\n".join(l.upper() for l in lines) + "\n")
open(f"{sys.argv[1]}/lower.txt", "w").write("\n".join(l.lower() for l in lines) + "\n")
PY
"$headlight" steer --model pre_ln --backend cpu --positive "$work/upper.txt" \
  --negative "$work/lower.txt" --hook blocks.1.hook_resid_post \
  --out resources/lessons/steering/capitals.safetensors
