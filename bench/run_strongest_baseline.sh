#!/usr/bin/env bash
# vaeconv against the strongest cuDNN, in one device call (issue 28):
#   here (nvcc):        cmake --preset cuda && cmake --build --preset cuda -j 2 --target vaeconv_bench
#   on the GPU machine: bench/run_strongest_baseline.sh [BUILD_DIR] [OUT_DIR]
# BUILD_DIR defaults to build/cuda (its bench/vaeconv_bench and kernels/libvaeconv_kernels.so are
# what the call carries); OUT_DIR to $OUT. Runs vaeconv_bench (BF16 and FP8, cuDNN's legacy API
# and its autotuned graph API in the same process), then bench/torch_conv_crosscheck.py (PyTorch
# F.conv2d, cudnn.benchmark) merging its times into the bench's JSON. Writes four files:
#   run.txt             the card (nvidia-smi), the binaries' hashes, both programs' output
#   bench.json          vaeconv_bench --json (legacy_us, graph_us, vendor_best_us per shape)
#   bench.torch.json    the same with torch_us and vendor_best_us = min of legacy, graph, PyTorch,
#                       ratios and weighted totals recomputed against it (what docs/performance.md
#                       and scripts/plot_bench.py read)
#   performance.png     scripts/plot_bench.py of bench.torch.json (where matplotlib is installed)
# Every step runs even when an earlier one failed; the exit status is the first failure's.
# Time: the bench about doubles its cuDNN time (each graph is tuned per shape, bounded in
# cudnn_graph_baseline.cpp); VAECONV_BENCH_LIMIT / VAECONV_TORCH_LIMIT (seconds) bound each step.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build/cuda}
out=${2:-${OUT:?set OUT or pass OUT_DIR}}
mkdir -p "$out"
rc=0
step() { local r; "$@"; r=$?; [ $r = 0 ] || { echo "step failed ($r): $*"; [ $rc != 0 ] || rc=$r; }; }
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv
sha256sum "$build/bench/vaeconv_bench" "$build/kernels/libvaeconv_kernels.so"
git log -1 --format='commit %h %s' 2>/dev/null | cut -c1-160
t0=$(date +%s)
step env LD_LIBRARY_PATH="$build/kernels:${LD_LIBRARY_PATH:-}" timeout "${VAECONV_BENCH_LIMIT:-450}" \
  "$build/bench/vaeconv_bench" --json "$out/bench.json"
echo "bench took $(( $(date +%s) - t0 )) s"
if [ -f "$out/bench.json" ]; then
  t0=$(date +%s)
  step timeout "${VAECONV_TORCH_LIMIT:-120}" python3 bench/torch_conv_crosscheck.py \
    --bench "$build/bench/vaeconv_bench" --merge "$out/bench.json" --out "$out/bench.torch.json"
  echo "torch cross-check took $(( $(date +%s) - t0 )) s"
  if [ -f "$out/bench.torch.json" ] && python3 -c "import matplotlib" 2>/dev/null; then
    step python3 scripts/plot_bench.py "$out/bench.torch.json" "$out/performance.png"
  else
    echo "no plot (no merged JSON, or no matplotlib here): scripts/plot_bench.py bench.torch.json later"
  fi
else
  echo "no bench.json: the PyTorch cross-check has nothing to merge into"
fi
exit $rc
} 2>&1 | tee "$out/run.txt"
exit "${PIPESTATUS[0]}"
