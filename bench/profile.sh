#!/usr/bin/env bash
# Nsight Compute profile of one vaeconv kernel launch per shape (issue 5's tuning loop):
#   bench/profile.sh OUTDIR [shape ids...]    (on the GPU machine, after a CUDA build)
# For each shape: the speed-of-light, memory, warp-state and source-counter sections of the
# first timed vaeconv BF16 launch (the bench's warm-up and check launches are skipped), as text.
# VAECONV_PROFILE_FP8=1 profiles the shape's FP8 kernel instead.
# Clocks are left alone (--clock-control none), as the device notes ask.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:?usage: bench/profile.sh OUTDIR [shape ids...]}; shift
bin=${VAECONV_BENCH:-build/cuda/bench/vaeconv_bench}
shapes=("${@:-enc_e0_res__dec_d3_res}")
mkdir -p "$out"
if [[ "${VAECONV_PROFILE_FP8:-0}" == 1 ]]; then
  # The e4m3 kernels' atoms: mma.sync AtomFp8*, wgmma WgmmaAtom<N, true> (the wide and halo tiles).
  kernel=(--kernel-name-base demangled
          -k regex:'(conv|tap_reduce)_kernel.*(AtomFp8|WgmmaAtom<[0-9]+, true>)'); dtype=(); tag=fp8-
else
  kernel=(-k regex:'(conv|tap_reduce)_kernel'); dtype=(--no-fp8); tag=
fi
for s in "${shapes[@]}"; do
  ncu --clock-control none "${kernel[@]}" --launch-skip 4 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SourceCounters --section Occupancy --section LaunchStats \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio" \
    "$bin" --shape "$s" --iters 1 --no-vendor "${dtype[@]}" >"$out/ncu-$tag$s.txt" 2>&1 || true
  echo "profiled $s -> $out/ncu-$tag$s.txt"
done
