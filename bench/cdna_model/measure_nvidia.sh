#!/usr/bin/env bash
# Measures the portable mma.sync build (preset cuda-mma: fragment atoms, no wgmma) on an NVIDIA GPU,
# for the validation of the performance model's method on NVIDIA (sass.py predicts the same build
# from its SASS; validate_nvidia.py compares):
#   here (nvcc):        cmake --preset cuda-mma && cmake --build --preset cuda-mma -j 2
#   on the GPU machine: bench/cdna_model/measure_nvidia.sh [BUILD_DIR] [OUT_DIR]
# BUILD_DIR defaults to build/cuda-mma (its bench/vaeconv_bench, kernels/libvaeconv_kernels.so and,
# when built, tests/vaeconv_gpu_tests are what a device call carries); OUT_DIR to $OUT. Writes:
#   gpu.txt           the card, its clocks and driver (nvidia-smi), and the binaries' build ids
#   bench-mma.json    vaeconv_bench --no-vendor --json: BF16 and FP8 medians of the 18 seed shapes
#   bench-mma.txt     its table
#   sass-mma.txt.gz   cuobjdump -sass of the kernels library (the model's input, where this
#                     machine has no cuobjdump; the committed data file keeps the plan's kernels:
#                     validate_nvidia.py --filter-sass sass-mma.txt.gz data/sass-mma-<card>.txt.gz)
#   clocks-mma.csv    nvidia-smi samples of the SM clock during the bench
#   res-mma.txt       cuobjdump -res-usage (registers, shared memory, spills per kernel)
#   gpu-tests-mma.txt the build's GPU test suite (when built), run last with a time limit
# Every step runs even when an earlier one failed; the exit status is the first failure's.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=${1:-build/cuda-mma}
out=${2:-${OUT:?set OUT or pass OUT_DIR}}
mkdir -p "$out"
lib=$build/kernels
rc=0
step() { local r; "$@"; r=$?; [ $r = 0 ] || { echo "step failed ($r): $*"; [ $rc != 0 ] || rc=$r; }; }
{
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,temperature.gpu --format=csv
  sha256sum "$build/bench/vaeconv_bench" "$lib/libvaeconv_kernels.so"
} >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
if command -v cuobjdump >/dev/null; then
  step bash -c "cuobjdump -sass '$lib/libvaeconv_kernels.so' | gzip -9 > '$out/sass-mma.txt.gz'"
  step bash -c "cuobjdump -res-usage '$lib/libvaeconv_kernels.so' > '$out/res-mma.txt' 2>&1"
else
  echo "cuobjdump not found: no SASS dump"
fi
# The SM clock while the bench runs (the model's clock under load), sampled every 250 ms.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 250 >"$out/clocks-mma.csv" 2>&1 &
sampler=$!
t0=$(date +%s)
step env LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}" "$build/bench/vaeconv_bench" --no-vendor \
  --json "$out/bench-mma.json" >"$out/bench-mma.txt" 2>&1
echo "bench took $(( $(date +%s) - t0 )) s"
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
awk -F', ' 'NR > 1 && $6 + 0 > 50 { n++; s += $2 } END { if (n) printf "SM clock while busy: %.0f MHz mean of %d samples\n", s / n, n }' "$out/clocks-mma.csv"
grep -E "^(id|weighted)|us" "$out/bench-mma.txt" | tail -30
if [ -x "$build/tests/vaeconv_gpu_tests" ]; then
  t0=$(date +%s)
  step env LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}" timeout "${VAECONV_GPU_TESTS_LIMIT:-150}" \
    "$build/tests/vaeconv_gpu_tests" --gtest_brief=1 >"$out/gpu-tests-mma.txt" 2>&1
  echo "gpu tests took $(( $(date +%s) - t0 )) s"
  grep -E "tests ran|PASSED|FAILED" "$out/gpu-tests-mma.txt" | tail -15
fi
exit $rc
