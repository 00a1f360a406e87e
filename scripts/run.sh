#!/usr/bin/env bash
# The main job: make the machine ready, build, then
#   with a GPU:    run the VAE-shape benchmark (bench/vaeconv_bench) on it;
#   without one:   print the per-kernel resource report for gfx942 and gfx950, and say so.
# The AMD build needs an installed ROCm 6.4+ or the toolchain root (built from Debian's registry);
# where neither can be had (a GPU machine with no network, say) the CUDA build still runs.
# Environment: VAECONV_JOBS (build parallelism); extra arguments go to vaeconv_bench.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
JOBS=${VAECONV_JOBS:-$(nproc)}
say() { echo "[run] $*"; }

"$REPO/scripts/install-deps.sh" || say "installing host packages failed; continuing with what is here"

hip_preset=""
if setup=$("$REPO/scripts/setup-toolchain.sh" | tail -1); then
  case "$setup" in
    *VAECONV_HIP=native*) export ROCM_PATH=${setup#*ROCM_PATH=}; hip_preset=hip; hip_prefix=() ;;
    *VAECONV_HIP=root*) hip_preset=hip-root; hip_prefix=("$REPO/scripts/in-root.sh") ;;
  esac
else
  say "no AMD toolchain could be set up here: the gfx942/gfx950 build is skipped"
fi
if [ -n "$hip_preset" ]; then
  say "building the AMD configuration ($hip_preset: gfx942;gfx950)"
  if ! { "${hip_prefix[@]}" cmake --preset "$hip_preset" >/dev/null &&
         "${hip_prefix[@]}" cmake --build --preset "$hip_preset" -j "$JOBS" >/dev/null; }; then
    say "the AMD build FAILED"; exit 1
  fi
fi
have_cuda=0
if [ -x /usr/local/cuda/bin/nvcc ]; then
  say "building the NVIDIA configuration (cuda: sm_90a)"
  if ! { cmake --preset cuda >/dev/null && cmake --build --preset cuda -j "$JOBS" >/dev/null; }; then
    say "the NVIDIA build FAILED"; exit 1
  fi
  have_cuda=1
fi
[ -n "$hip_preset" ] || [ "$have_cuda" = 1 ] || { say "nothing could be built"; exit 1; }

# An AMD GPU: rocminfo where the toolchain is (the host's ROCm, or inside the toolchain root), or
# the kernel driver's topology (gfx_target_version 9.4.x / 9.5.x) where no rocminfo is at hand.
amd_gpu_found() {
  "${hip_prefix[@]}" sh -c 'command -v rocminfo >/dev/null && rocminfo 2>/dev/null' | grep -qE "gfx94|gfx95" && return 0
  grep -qsE "^gfx_target_version 9(04|05)[0-9][0-9]$" /sys/class/kfd/kfd/topology/nodes/*/properties
}
if [ -n "$hip_preset" ] && amd_gpu_found; then
  # The first-contact suite (tests/first_contact) first: the matrix atoms against the CPU, the
  # buffer loads' zero fill, FP8 accumulation and -0/NaN inputs. A benchmark of kernels that are
  # wrong on this machine would be worse than none, so any failure stops here.
  fc="$REPO/build/$hip_preset/tests/first_contact/vaeconv_first_contact"
  if [ ! -x "$fc" ]; then
    say "AMD GPU found, but the first-contact suite was not built ($fc; GoogleTest missing?):"
    say "not benchmarking kernels that were never checked on this machine"; exit 1
  fi
  say "AMD GPU found: running the first-contact suite before the benchmark"
  if ! "${hip_prefix[@]}" "$fc"; then
    say "the first-contact suite FAILED on this AMD GPU (log above): the kernels are wrong here,"
    say "so the benchmark is not run. Rerun one check with --gtest_filter=<name>."
    exit 1
  fi
  say "first-contact suite passed: running the benchmark"
  exec "${hip_prefix[@]}" "$REPO/build/$hip_preset/bench/vaeconv_bench" "$@"
fi
if [ "$have_cuda" = 1 ] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  say "NVIDIA GPU found: running the benchmark"
  exec "$REPO/build/cuda/bench/vaeconv_bench" "$@"
fi

say "no GPU found on this machine: nothing can run here."
if [ -n "$hip_preset" ]; then
  say "The AMD kernels were compiled for gfx942 and gfx950; their resource report (from the"
  say "compiler's own assembly output) follows."
  cat "$REPO/build/$hip_preset/resource-report.md"
fi
