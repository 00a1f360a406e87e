#!/usr/bin/env bash
# The test command: builds every configuration this machine can build and runs ctest on each.
#   AMD (gfx942;gfx950): an installed ROCm 6.4+, or the toolchain root that setup-toolchain.sh makes;
#   NVIDIA (sm_90a, the cuda preset, and sm_90 without wgmma, the cuda-mma preset): when nvcc is found.
# GPU tests (label gpu) run where a GPU is present and are reported as skipped elsewhere.
# Prints one summary line last: "vaeconv tests: P passed, F failed, S skipped".
# Environment: VAECONV_JOBS (build parallelism), VAECONV_SKIP_HIP=1 / VAECONV_SKIP_CUDA=1.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
JOBS=${VAECONV_JOBS:-$(nproc)}
say() { echo "[test] $*"; }
LOGDIR=$REPO/build/logs
mkdir -p "$LOGDIR"

"$REPO/scripts/install-deps.sh" || { say "installing host dependencies failed"; exit 1; }

passed=0 failed=0 skipped=0 broken=0
# Runs one configuration: preset name, then the command prefix (empty or scripts/in-root.sh).
run_config() {
  local preset=$1; shift
  local log="$LOGDIR/ctest-$preset.log"
  say "configure + build: $preset"
  if ! "$@" cmake --preset "$preset" >"$LOGDIR/configure-$preset.log" 2>&1; then
    tail -40 "$LOGDIR/configure-$preset.log"; say "configure FAILED: $preset"; broken=1; return
  fi
  if ! "$@" cmake --build --preset "$preset" -j "$JOBS" >"$LOGDIR/build-$preset.log" 2>&1; then
    grep -E "error|Error" "$LOGDIR/build-$preset.log" | head -40; say "build FAILED: $preset"; broken=1; return
  fi
  say "ctest: $preset"
  "$@" ctest --preset "$preset" -j "$JOBS" 2>&1 | tee "$log"
  local line total f s
  # CMake 3.x: "100% tests passed, 0 tests failed out of N"; 4.x drops the failed part at 0.
  line=$(grep -E "tests passed.* out of [0-9]+" "$log" | tail -1)
  if [ -z "$line" ]; then say "ctest printed no summary: $preset"; broken=1; return; fi
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  f=0
  if grep -qE "[0-9]+ tests? failed" <<<"$line"; then f=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line"); fi
  s=$(grep -cE "\(Skipped\)$" "$log" || true)
  passed=$((passed + total - f - s)); failed=$((failed + f)); skipped=$((skipped + s))
}

if [ "${VAECONV_SKIP_HIP:-0}" != 1 ]; then
  setup=$("$REPO/scripts/setup-toolchain.sh" | tail -1) || { say "toolchain setup FAILED"; broken=1; }
  case "$setup" in
    *VAECONV_HIP=native*) export ROCM_PATH=${setup#*ROCM_PATH=}; run_config hip ;;
    *VAECONV_HIP=root*) run_config hip-root "$REPO/scripts/in-root.sh" ;;
  esac
fi
if [ "${VAECONV_SKIP_CUDA:-0}" != 1 ]; then
  if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
    run_config cuda
    # The portable twin: the same sources on the mma.sync fragment atoms (no wgmma), the NVIDIA
    # build closest to the AMD kernels (its host tests here; its kernels on a GPU where present).
    run_config cuda-mma
  else
    say "nvcc not found: the CUDA configuration is not built"
  fi
fi

[ "$broken" = 0 ] || failed=$((failed + 1))
echo "vaeconv tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
