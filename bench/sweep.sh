#!/usr/bin/env bash
# Tile sweep (issue 5): builds vaeconv_bench once per candidate wide tile (bf16 or fp8) for
# NVIDIA into build/sweep-<n>/ so that one device call can time them all:
#   bench/sweep.sh build                 # here (needs nvcc); VAECONV_SWEEP_TESTS=1 also builds
#                                        # each candidate's GPU tests, which run then runs first
#   bench/sweep.sh pack DIR              # here: the binaries of build/cuda and of every candidate
#                                        # into DIR (a few MB, for the device's carry; DIR is
#                                        # relative to the repository root, e.g. build/pack)
#   bench/sweep.sh run [bench args...]   # on the GPU machine: one bench run per candidate
#                                        # (from the repository root, or from a packed DIR)
# Candidates are "BM,BN,BK,warpsM,warpsN,stages[,flag...]": flag "mbN" asks for N resident blocks
# per SM (__launch_bounds__' second argument); flag "ca" builds the cp.async copies as
# .ca (cached in L1 as well as L2) instead of .cg; flag "fp8" makes the candidate the wide FP8 tile
# instead of the wide BF16 one (BK in fp8 elements; BK = 128 is a 128-byte row); flag "tr" makes it the BF16 tap-reduce tile
# (BN = 32; the halo is BM / 16 rows of 16 pixels); flag "halo" the halo kernel's tile (its patch
# is BM / 8 rows of 8 pixels; it then takes every T = 1 causal bf16 layer with Cin <= 96, or <= N
# with flag "hcN", the channels its halo holds); flag "hf8" the FP8 halo kernel's tile (BK in fp8
# elements, 128 = one 128-byte row; patch as for "halo"; it then takes every T = 1 causal fp8 layer
# with Cin a multiple of 32 up to 96); flag "trw" the bf16 tap-row kernel's tile (Cin = 3,
# tap_row_conv_kernel.hpp; patch as for "halo"); flag "el" the BF16 wide element-wise tile
# (Cin not a multiple of 8: enc_conv_in), "el8" the FP8 one (Cin not a multiple of 16; mma.sync); flag "mma" builds the wide tiles on mma.sync instead of
# wgmma (then warpsM/warpsN count warps; with wgmma they count warpgroups). A wgmma candidate
# whose warp tile is not 96 wide needs its width generated first (scripts/gen_wgmma_asm.py).
# The forms measured and removed (the refill-first schedule "rf", the persistent tap-reduce
# "trp", the copy-engine store "bulk"/"bulkw" beyond the bf16 halo kernel, the direct-form upsample
# "dup", the timing experiments "noepi"/"nomma"/"nocopy") are in docs/perf-notes.md and git.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CANDIDATES=(${VAECONV_SWEEP:-"128,96,64,2,1,4,mb2" "192,96,64,3,1,4" "64,96,128,1,1,3,fp8,mb3" "128,96,128,2,1,3,fp8,mb2"})
case "${1:-}" in
  build)
    # Numbered after any candidates already built, so that sweeps can be added to.
    i=$(find build -maxdepth 1 -name 'sweep-*' -type d 2>/dev/null | wc -l)
    for c in "${CANDIDATES[@]}"; do
      IFS=, read -r bm bn bk wm wn st extra <<<"$c"
      flags="--resource-usage -DVAECONV_SWEEP_BM=$bm -DVAECONV_SWEEP_BN=$bn -DVAECONV_SWEEP_BK=$bk"
      flags+=" -DVAECONV_SWEEP_WM=$wm -DVAECONV_SWEEP_WN=$wn -DVAECONV_SWEEP_ST=$st"
      for f in ${extra//,/ }; do
        case "$f" in
          ca) flags+=" -DVAECONV_SWEEP_CA=1" ;;
          fp8) flags+=" -DVAECONV_SWEEP_FP8=1" ;;
          tr) flags+=" -DVAECONV_SWEEP_TR=1" ;;
          el) flags+=" -DVAECONV_SWEEP_EL=1" ;;
          el8) flags+=" -DVAECONV_SWEEP_EL8=1" ;;
          halo) flags+=" -DVAECONV_SWEEP_HALO=1" ;;
          hf8) flags+=" -DVAECONV_SWEEP_HALO_FP8=1" ;;
          trw) flags+=" -DVAECONV_SWEEP_TAPROW=1" ;;
          hc*) flags+=" -DVAECONV_SWEEP_HALO_CIN=${f#hc}" ;;
          mma) flags+=" -DVAECONV_SWEEP_MMA=1" ;;
          mb*) flags+=" -DVAECONV_SWEEP_MB=${f#mb}" ;;
          *) echo "unknown candidate flag: $f" >&2; exit 2 ;;
        esac
      done
      tests=OFF targets=(vaeconv_bench)
      if [ "${VAECONV_SWEEP_TESTS:-0}" = 1 ]; then tests=ON targets+=(vaeconv_gpu_tests); fi
      cmake -S . -B "build/sweep-$i" -DVAECONV_BACKEND=CUDA -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90a-real -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
        -DVAECONV_BUILD_TESTS=$tests "-DCMAKE_CUDA_FLAGS=$flags" >/dev/null
      cmake --build "build/sweep-$i" --target "${targets[@]}" -j "$(nproc)" >"build/sweep-$i.log" 2>&1 || { tail -20 "build/sweep-$i.log" >&2; exit 1; }
      echo "$c" > "build/sweep-$i/candidate.txt"
      echo "built sweep-$i: $c"
      i=$((i + 1))
    done ;;
  pack)
    out=${2:?usage: $0 pack DIR}
    # DIR is replaced: refuse anything that is not an earlier pack (a marker file says so).
    if [ -e "$out" ] && [ ! -f "$out/.sweep-pack" ]; then
      echo "$out exists and is not a sweep pack: not replacing it" >&2; exit 2
    fi
    rm -rf "$out"
    mkdir -p "$out" && touch "$out/.sweep-pack"
    for d in build/cuda build/sweep-*; do
      [ -x "$d/bench/vaeconv_bench" ] || continue
      t="$out/build/$(basename "$d")"
      mkdir -p "$t/bench" "$t/kernels"
      cp "$d/bench/vaeconv_bench" "$t/bench/"
      cp "$d/kernels/libvaeconv_kernels.so" "$t/kernels/"
      if [ -x "$d/tests/vaeconv_gpu_tests" ]; then mkdir -p "$t/tests" && cp "$d/tests/vaeconv_gpu_tests" "$t/tests/"; fi
      [ -f "$d/candidate.txt" ] && cp "$d/candidate.txt" "$t/"
    done
    mkdir -p "$out/bench" && cp bench/sweep.sh "$out/bench/sweep.sh"  # cwd: the repository root
    du -sh "$out" ;;
  run)
    shift
    for d in build/sweep-*/; do
      echo "=== candidate $(cat "$d/candidate.txt")"
      if [ -x "$d/tests/vaeconv_gpu_tests" ]; then  # built with VAECONV_SWEEP_TESTS=1
        if LD_LIBRARY_PATH="$d/kernels:${LD_LIBRARY_PATH:-}" "$d/tests/vaeconv_gpu_tests" \
             --gtest_brief=1 >"$d/gpu-tests.log" 2>&1; then
          echo "GPU tests passed"
        else  # a failure or a crash: report it and go on with the next candidate's timing
          echo "GPU TESTS FAILED (log: $d/gpu-tests.log)"
          grep -E "FAILED|Failure" "$d/gpu-tests.log" | head -20 || tail -5 "$d/gpu-tests.log" || true
        fi
      fi
      # A failed shape makes the bench exit 1: the other candidates still run.
      LD_LIBRARY_PATH="$d/kernels:${LD_LIBRARY_PATH:-}" "$d/bench/vaeconv_bench" "$@" ||
        { rc=$?; echo "=== candidate $(cat "$d/candidate.txt"): the bench exited with $rc"; }
    done ;;
  *) echo "usage: $0 build | pack DIR | run [bench args]" >&2; exit 2 ;;
esac
