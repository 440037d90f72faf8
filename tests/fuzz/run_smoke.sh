#!/usr/bin/env bash
# One short fuzzing run of a target, as the test command runs it:
#   run_smoke.sh FUZZER SEEDS SECONDS WORK_DIR [REGRESSIONS_DIR] [-- libFuzzer options]
# First replays every saved regression input (each once), then fuzzes from the seeds for
# SECONDS into a fresh WORK_DIR, so that repeated runs start from the same corpus. libFuzzer
# exits non-zero on a crash, a leak, a timeout or running out of memory.
set -euo pipefail
fuzzer=$1 seeds=$2 seconds=$3 work=$4
shift 4
regressions=
if [[ $# -gt 0 && $1 != -- ]]; then regressions=$1; shift; fi
[[ ${1:-} == -- ]] && shift
if [[ -n $regressions && -d $regressions ]] && compgen -G "$regressions/*" > /dev/null; then
  "$fuzzer" -rss_limit_mb=2048 -timeout=10 "$@" "$regressions"/*
fi
rm -rf "$work"
mkdir -p "$work"
exec "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  "$@" "$work" "$seeds"
