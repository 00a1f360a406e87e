#!/usr/bin/env bash
# Tile sweep (issue 5): builds vaeconv_bench once per candidate tile for NVIDIA into build/sweep-<n>/
# so that one device call can time them all:
#   bench/sweep.sh build                 # here (needs nvcc)
#   bench/sweep.sh pack DIR              # here: the binaries of build/cuda and of every candidate
#                                        # into DIR (a few MB, for the device's carry; DIR is
#                                        # relative to the repository root, e.g. build/pack)
#   bench/sweep.sh run [bench args...]   # on the GPU machine: one bench run per candidate
#                                        # (from the repository root, or from a packed DIR)
# A candidate is a type, not a rebuilt library: the build compiles bench/sweep_candidate.cpp with
# the candidate's definitions (that translation unit only; CMake cache variable
# VAECONV_SWEEP_CANDIDATE), which hands the library's dispatch the shipped tile tables with one
# entry replaced; the library and its headers stay the shipped ones. The bench checks every
# shape's output (sampled, against the reference) before timing it.
# Candidates are "BM,BN,BK,warpsM,warpsN,stages[,flag...]": flag "mbN" asks for N resident blocks
# per SM (__launch_bounds__' second argument); the entry it replaces is the wide BF16 tile unless
# a flag names another: "fp8" the wide FP8 tile (BK in fp8 elements; BK = 128 is a 128-byte row),
# "tr" the BF16 tap-reduce tile (BN = 32; the halo is BM / 16 rows of 16 pixels), "el" the BF16
# wide element-wise tile (Cin not a multiple of 8: enc_conv_in off sm_90a), "el8" the FP8 one,
# "halo" the bf16 halo kernel's tile (its patch is BM / 8 rows of 8 pixels; it then takes every
# T = 1 causal bf16 layer with Cin <= 96, or <= N with flag "hcN", the channels its halo holds),
# "hf8" the FP8 halo kernel's tile (patch as for "halo"), "trw" the bf16 tap-row kernel's tile
# (Cin = 3; patch as for "halo"). Flag "mma" builds a wide candidate on mma.sync instead of wgmma
# (then warpsM/warpsN count warps; with wgmma they count warpgroups). A wgmma candidate whose warp
# tile is not 96 wide needs its width generated first (scripts/gen_wgmma_asm.py).
# AMD (no GPU needed): the CDNA model ranks wide-tile candidates from their assembly:
#   bench/sweep.sh amd-model gfx950 "256,96,32,4,1,3" "256,96,64,4,1,3,fp8" ...
# compiles one translation unit of the candidates (the implicit-GEMM kernel on the causal,
# downsample and upsample-phase geometries, each candidate on arch::Cdna where its LDS fits
# 64 KiB, else on arch::CdnaGfx950Only) for that target with `--cuda-device-only -S`
# (build/amd-model/), then predicts the 58-call set with every wide vector row of the candidate's
# dtype and target moved to it (bench/cdna_model/predict.py's predict_all; the shipped kernels
# from build/hip-root, which must be built; bank ways from its lds-banks.json, else the model's
# assumption row). It prints the totals and, per candidate, scratch bytes, VGPRs, occupancy and
# the 96->96 1024² row's blocks per CU and bound: a candidate with scratch is not shippable.
# Flags that went with issue 24 (they reached into the library headers): "ca" (cp.async .ca),
# and, with the forms they built (docs/perf-notes.md), "rf", "trp"/"trnp", "bulk"/"nobulk"/"bulkw",
# "dup", "noepi"/"nomma"/"nocopy"; VAECONV_SWEEP_TESTS (the GPU tests run the shipped library).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CANDIDATES=(${VAECONV_SWEEP:-"128,96,64,2,1,4,mb2" "192,96,64,3,1,4" "64,96,128,1,1,3,fp8,mb3" "128,96,128,2,1,3,fp8,mb2"})
case "${1:-}" in
  build)
    # Numbered after any candidates already built, so that sweeps can be added to.
    i=$(find build -maxdepth 1 -name 'sweep-*' -type d 2>/dev/null | wc -l)
    for c in "${CANDIDATES[@]}"; do
      IFS=, read -r bm bn bk wm wn st extra <<<"$c"
      mb=1 role=0 mma=0 halo_cin=96
      for f in ${extra//,/ }; do
        case "$f" in
          fp8) role=1 ;;
          tr) role=2 ;;
          el) role=3 ;;
          el8) role=4 ;;
          halo) role=5 ;;
          hf8) role=6 ;;
          trw) role=7 ;;
          hc*) halo_cin=${f#hc} ;;
          mma) mma=1 ;;
          mb*) mb=${f#mb} ;;
          *) echo "unknown candidate flag: $f" >&2; exit 2 ;;
        esac
      done
      defs="VAECONV_CANDIDATE_BM=$bm;VAECONV_CANDIDATE_BN=$bn;VAECONV_CANDIDATE_BK=$bk"
      defs+=";VAECONV_CANDIDATE_WM=$wm;VAECONV_CANDIDATE_WN=$wn;VAECONV_CANDIDATE_ST=$st"
      defs+=";VAECONV_CANDIDATE_MB=$mb;VAECONV_CANDIDATE_ROLE=$role"
      defs+=";VAECONV_CANDIDATE_MMA=$mma;VAECONV_CANDIDATE_HALO_CIN=$halo_cin"
      cmake -S . -B "build/sweep-$i" -DVAECONV_BACKEND=CUDA -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90a-real -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
        -DVAECONV_BUILD_TESTS=OFF "-DVAECONV_SWEEP_CANDIDATE=$defs" \
        "-DCMAKE_CUDA_FLAGS=--resource-usage" >/dev/null
      cmake --build "build/sweep-$i" --target vaeconv_bench -j "$(nproc)" >"build/sweep-$i.log" 2>&1 || { tail -20 "build/sweep-$i.log" >&2; exit 1; }
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
      [ -f "$d/candidate.txt" ] && cp "$d/candidate.txt" "$t/"
    done
    mkdir -p "$out/bench" && cp bench/sweep.sh "$out/bench/sweep.sh"  # cwd: the repository root
    du -sh "$out" ;;
  run)
    shift
    for d in build/sweep-*/; do
      echo "=== candidate $(cat "$d/candidate.txt")"
      # A failed shape makes the bench exit 1: the other candidates still run.
      LD_LIBRARY_PATH="$d/kernels:${LD_LIBRARY_PATH:-}" "$d/bench/vaeconv_bench" "$@" ||
        { rc=$?; echo "=== candidate $(cat "$d/candidate.txt"): the bench exited with $rc"; }
    done ;;
  amd-model)
    target=${2:?usage: $0 amd-model gfx942|gfx950 CANDIDATE...}
    shift 2
    out=build/amd-model
    mkdir -p "$out"
    {
      echo '// generated by bench/sweep.sh amd-model: candidate wide tiles for the CDNA model'
      echo '#include <type_traits>'
      echo '#include "vaeconv/api/conv.hpp"'
      echo 'namespace vaeconv::kernel {'
      i=0
      for c in "$@"; do
        IFS=, read -r bm bn bk wm wn st extra <<<"$c"
        atom=AtomBf16 eb=2
        [ "$extra" = fp8 ] && atom=AtomFp8 eb=1
        arch=arch::Cdna
        [ $((st * (bm + bn) * bk * eb)) -gt 65536 ] && arch=arch::CdnaGfx950Only
        echo "using C$i = TilePolicy<TileShape<$bm, $bn, $bk, $wm, $wn, $st>, $arch, arch::Cdna::$atom>;"
        for g in CausalGeometry DownsampleGeometry UpsamplePhaseGeometry; do
          echo "template __global__ void conv_kernel<C$i, $g, true>(ConvParams);"
        done
        i=$((i + 1))
      done
      echo '}'
    } >"$out/candidates.cpp"
    scripts/in-root.sh clang++-22 -x hip --offload-arch="$target" --cuda-device-only -S -O3 \
      -std=c++17 -Iinclude -Ikernels "$out/candidates.cpp" -o "$out/candidates-$target.s"
    python3 - "$target" "$out/candidates-$target.s" "$@" <<'PY'
import copy, math, os, sys
sys.path.insert(0, "bench/cdna_model")
import cdna_asm, predict as P
target, asm, cands = sys.argv[1], sys.argv[2], sys.argv[3:]
build = "build/hip-root"
tname = {v: k for k, v in P.machines.TARGETS.items()}[target]
plan = P.load_plan(build, None)
lds_rows, _ = P.load_lds_ways(build)
shipped = os.path.join(build, "kernels", "asm", f"conv_instances-{target}.s")
new = cdna_asm.parse_file(asm, target)
P.predict_all(build, plan, lds_rows, targets=(tname,))  # parses the shipped assembly once
key = next(k for k in P._PARSED if k.startswith(shipped + ":"))
names = {k.name for k in new}
P._PARSED[key] = [k for k in P._PARSED[key] if k.name not in names] + new

def show(tag, plan, dt):
    rows = P.predict_all(build, plan, lds_rows, targets=(tname,))[tname]
    tot = P.totals(rows, dt, 1024)
    big = next(r for r in rows if r["plan"]["dtype"] == dt and r["plan"]["id"] == "enc_e0_res__dec_d3_res")
    m = big["kernel"].meta
    print(f"{tag:28} {tname} {dt}: 58-call {tot['nom'] / 1e3:.2f} [{tot['opt'] / 1e3:.2f}, "
          f"{tot['pess'] / 1e3:.2f}] ms; 96->96: {big['launch'].blocks_per_unit} blocks/CU, bound "
          f"{big['pred'].bound}/{big['pred'].pess.bound}; scratch {m.get('scratch')} B, "
          f"VGPR {m.get('vgpr')}, occupancy {m.get('occupancy')}")

for dt in ("bf16", "fp8"):
    show("shipped", plan, dt)
for c in cands:
    f = c.split(",")
    bm, bn, bk, wm, wn, st = map(int, f[:6])
    dt = "fp8" if "fp8" in f[6:] else "bf16"
    out = copy.deepcopy(plan)
    for p in out["plans"]:
        k = p["kernel"]
        if (p.get("target", target) != target or p["dtype"] != dt or k["family"] != "implicit_gemm"
                or not k["vector"] or k["bn"] != 96 or P.is_video(p)):
            continue
        fp = p["h"] * p["w"] if k["geometry"][3] == 2 else p["out_h"] * p["out_w"]
        m_old, nt = math.ceil(fp / k["bm"]), math.ceil(p["cout"] / k["bn"])
        frames = k["tiles"] // (m_old * nt)
        k["tiles"] = math.ceil(fp / bm) * nt * frames
        k["k_tiles"] = math.ceil(k["k_tiles"] * k["bk"] / bk)
        k.update(bm=bm, bn=bn, bk=bk, warps_m=wm, warps_n=wn, stages=st, min_blocks=1,
                 threads=wm * wn * 64, lds_bytes=st * (bm + bn) * bk * (1 if dt == "fp8" else 2))
    show(c, out, dt)
PY
    ;;
  *) echo "usage: $0 build | pack DIR | run [bench args] | amd-model TARGET CANDIDATE..." >&2; exit 2 ;;
esac
