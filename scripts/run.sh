#!/usr/bin/env bash
# The main job: make the machine ready, build, then
#   with a GPU:    run the VAE-shape benchmark (bench/vaeconv_bench) on it;
#   without one:   print the per-kernel resource report for gfx942 and gfx950, and say so.
# Environment: VAECONV_JOBS (build parallelism).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
JOBS=${VAECONV_JOBS:-$(nproc)}
say() { echo "[run] $*"; }

"$REPO/scripts/install-deps.sh"
setup=$("$REPO/scripts/setup-toolchain.sh" | tail -1)
case "$setup" in
  *VAECONV_HIP=native*) export ROCM_PATH=${setup#*ROCM_PATH=}; hip_preset=hip; hip_prefix=() ;;
  *) hip_preset=hip-root; hip_prefix=("$REPO/scripts/in-root.sh") ;;
esac
say "building the AMD configuration ($hip_preset: gfx942;gfx950)"
"${hip_prefix[@]}" cmake --preset "$hip_preset" >/dev/null
"${hip_prefix[@]}" cmake --build --preset "$hip_preset" -j "$JOBS" >/dev/null
have_nvcc=0
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
  have_nvcc=1
  say "building the NVIDIA configuration (cuda: sm_90)"
  cmake --preset cuda >/dev/null
  cmake --build --preset cuda -j "$JOBS" >/dev/null
fi

if command -v rocminfo >/dev/null && rocminfo 2>/dev/null | grep -qE "gfx94|gfx95"; then
  say "AMD GPU found: running the benchmark"
  exec "$REPO/build/$hip_preset/bench/vaeconv_bench" "$@"
fi
if [ "$have_nvcc" = 1 ] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  say "NVIDIA GPU found: running the benchmark"
  exec "$REPO/build/cuda/bench/vaeconv_bench" "$@"
fi

say "no GPU found on this machine: nothing can run here. The AMD kernels were compiled for"
say "gfx942 and gfx950; their resource report (from the compiler's own assembly output) follows."
cat "$REPO/build/$hip_preset/resource-report.md"
