# Sourced by compare_pytorch.sh and compare_llama.sh. reference_blas_run SCRIPT [VAR=VALUE...]
# prints what the PyTorch timing script SCRIPT prints when run once with Debian's reference netlib
# BLAS (libblas3, what python3-torch called before OpenBLAS served libblas.so.3; minutes) and the
# extra environment given; nothing when HEADLIGHT_BENCH_REFERENCE_BLAS=0, or when libblas3 is
# missing (it says so on stderr).
reference_blas_run() {
  local script=$1
  shift
  local blas
  blas=/usr/lib/$(gcc -dumpmachine)/blas
  [[ ${HEADLIGHT_BENCH_REFERENCE_BLAS:-1} == 1 ]] || return 0
  if [[ ! -e $blas/libblas.so.3 ]]; then
    echo "no reference BLAS at $blas (Debian's libblas3): its line is left out" >&2
    return 0
  fi
  env LD_LIBRARY_PATH="$blas" HEADLIGHT_BENCH_RUNS=1 "$@" /usr/bin/python3 "$script"
}
