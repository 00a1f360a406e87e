#!/usr/bin/env bash
# Nsight Compute profiles, as text (on the GPU machine, after a CUDA build). Two modes:
#
#   bench/profile.sh OUTDIR [shape ids...]
#     vaeconv's own kernel (issue 5's tuning loop): for each shape the speed-of-light, memory,
#     warp-state and source-counter sections of the first timed vaeconv BF16 launch (the bench's
#     warm-up and check launches are skipped), into OUTDIR/ncu-ID.txt (ncu-fp8-ID.txt).
#     VAECONV_PROFILE_FP8=1 profiles the shape's FP8 kernel instead.
#
#   VAECONV_PROFILE_VENDOR=1 bench/profile.sh OUTDIR [ids...]
#     vaeconv beside cuDNN (issue 28: a target missed is explained with a profile of both). One
#     `ncu --profile-from-start off` process per id, over `vaeconv_bench --profile --shape ID
#     --iters 1` (a video row's id selects the video rows, bench/video_shapes.hpp): the bench runs
#     the row as always (checks, timing, cuDNN's algorithm search and plan tuning), then exactly one
#     more call of each conv it timed between cudaProfilerStart/Stop (bench/profile_bracket.hpp):
#     "vaeconv bf16", "vaeconv fp8", "cudnn legacy", "cudnn graph" (each path's engine: pad or
#     cat + pad kernel, conv, bias) and, on image rows, "cudnn fp8 graph". ncu profiles every kernel
#     of those calls and nothing else: sections SpeedOfLight, ComputeWorkloadAnalysis,
#     MemoryWorkloadAnalysis, Occupancy, LaunchStats, WarpStateStats, and the raw metrics of the
#     stall reasons (warps per issued instruction), the tensor pipes' active cycles, the tensor
#     instructions and the cluster shape. Output: OUTDIR/ncu-vendor-ID.txt per id (the bench's own
#     output with its "vaeconv_bench --profile: begin/end" lines, ncu's "==PROF== Profiling" lines
#     between them, then ncu's report), and OUTDIR/profile-tables.md: bench/profile_table.py's
#     table per row (kernel, duration, SM / tensor pipe / DRAM / L2 / L1 throughput, occupancy,
#     registers, shared memory, grid, cluster, top stall reasons) when python3 is there.
#     VAECONV_PROFILE_FP8=0 leaves vaeconv's FP8 conv out (--no-fp8).
#     Time: per id the bench's own run (cuDNN's search and tuning: ~5-10 s an image row, ~10-20 s a
#     video row, ~2 s of ncu start) plus ~1-2 s per profiled kernel (~40 replay passes each;
#     5-9 kernels a row). VAECONV_PROFILE_BUDGET=S (seconds, default 0 = none) stops starting ids
#     once S would be passed, and cuts the last one's limit to what is left; VAECONV_PROFILE_LIMIT
#     (default 120) bounds each id (SIGINT, then SIGKILL 10 s later: ncu prints its report only
#     when the bench exits, so an id cut short has none).
#
# Both modes leave clocks alone (--clock-control none), as the device notes ask. VAECONV_BENCH
# names the bench binary (default build/cuda/bench/vaeconv_bench; its kernels library is looked for
# in ../kernels beside it), NCU the ncu binary (default: ncu on PATH, else the newest
# /opt/nvidia/nsight-compute/*/ncu, else /usr/local/cuda/bin/ncu).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:?usage: [VAECONV_PROFILE_VENDOR=1] bench/profile.sh OUTDIR [shape ids...]}; shift
bin=${VAECONV_BENCH:-build/cuda/bench/vaeconv_bench}
mkdir -p "$out"
ncu=${NCU:-}
if [[ -z "$ncu" ]]; then
  if command -v ncu >/dev/null; then ncu=ncu
  else
    for c in $(ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V -r) /usr/local/cuda/bin/ncu; do
      [[ -x "$c" ]] && { ncu=$c; break; }
    done
  fi
fi
[[ -n "$ncu" ]] || { echo "profile.sh: no ncu found (set NCU)"; exit 2; }
kernels_dir=$(cd "$(dirname "$bin")/../kernels" 2>/dev/null && pwd || true)
export LD_LIBRARY_PATH="${kernels_dir:+$kernels_dir:}${LD_LIBRARY_PATH:-}"

if [[ "${VAECONV_PROFILE_VENDOR:-0}" == 1 ]]; then
  ids=("$@")
  [[ ${#ids[@]} -gt 0 ]] || { echo "profile.sh: the vendor mode takes the ids to profile"; exit 2; }
  fp8=(); [[ "${VAECONV_PROFILE_FP8:-1}" == 0 ]] && fp8=(--no-fp8)
  budget=${VAECONV_PROFILE_BUDGET:-0} limit=${VAECONV_PROFILE_LIMIT:-120}
  # Partial-match regexes, anchored at the end. ncu refuses the whole run when a regex matches no
  # metric of its own (2025.3 on an H100 had no launch__cluster_* metric: LaunchStats prints the
  # cluster size instead), so a run refused that way is repeated with the stall ratios alone, the
  # regex the default mode has always used.
  stalls="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio$"
  metrics="$stalls"
  metrics+=",regex:sm__pipe_tensor.*_cycles_active\\.avg\\.pct_of_peak_sustained_active$"
  metrics+=",regex:sm__inst_executed_pipe_tensor_op_(gmma|hmma)\\.sum$"
  echo "profile.sh (vendor mode): ${#ids[@]} ids, $("$ncu" --version | tail -1), budget ${budget} s, limit ${limit} s an id"
  t_start=$(date +%s) rc=0
  for s in "${ids[@]}"; do
    lim=$limit
    if (( budget > 0 )); then
      left=$(( budget - ($(date +%s) - t_start) ))
      if (( left < 20 )); then echo "profile.sh: budget spent, $s not profiled"; rc=3; continue; fi
      (( left < lim )) && lim=$left
    fi
    t0=$(date +%s) r=0
    for m in "$metrics" "$stalls"; do
      r=0
      timeout -s INT -k 10 "$lim" "$ncu" --clock-control none --profile-from-start off \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats --section WarpStateStats --metrics "$m" \
        "$bin" --profile --shape "$s" --iters 1 "${fp8[@]}" >"$out/ncu-vendor-$s.txt" 2>&1 || r=$?
      grep -q "Failed to find metric" "$out/ncu-vendor-$s.txt" || break
      echo "profile.sh: $s: ncu lacks a metric of the list; again with the stall ratios alone"
    done
    (( r == 0 )) || rc=1
    echo "profiled $s in $(( $(date +%s) - t0 )) s (exit $r) -> $out/ncu-vendor-$s.txt"
  done
  echo "profile.sh: ${#ids[@]} ids in $(( $(date +%s) - t_start )) s"
  if command -v python3 >/dev/null; then
    python3 bench/profile_table.py "$out"/ncu-vendor-*.txt >"$out/profile-tables.md" || rc=1
    echo "tables -> $out/profile-tables.md"
  fi
  exit $rc
fi

shapes=("${@:-enc_e0_res__dec_d3_res}")
if [[ "${VAECONV_PROFILE_FP8:-0}" == 1 ]]; then
  # The e4m3 kernels' atoms: mma.sync AtomFp8*, wgmma WgmmaAtom<N, true> (the wide and halo tiles).
  kernel=(--kernel-name-base demangled
          -k regex:'(conv|tap_reduce)_kernel.*(AtomFp8|WgmmaAtom<[0-9]+, true>)'); dtype=(); tag=fp8-
else
  kernel=(-k regex:'(conv|tap_reduce)_kernel'); dtype=(--no-fp8); tag=
fi
for s in "${shapes[@]}"; do
  "$ncu" --clock-control none "${kernel[@]}" --launch-skip 4 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SourceCounters --section Occupancy --section LaunchStats \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio" \
    "$bin" --shape "$s" --iters 1 --no-vendor "${dtype[@]}" >"$out/ncu-$tag$s.txt" 2>&1 || true
  echo "profiled $s -> $out/ncu-$tag$s.txt"
done
