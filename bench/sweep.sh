#!/usr/bin/env bash
# Tile sweep (issue 5): builds vaeconv_bench once per candidate tile for NVIDIA into build/sweep-<n>/
# so that one device call can time them all:
#   bench/sweep.sh build                 # here (needs nvcc)
#   bench/sweep.sh pack DIR [gz]         # here: the benches of build/sweep-base (the shipped
#                                        # tables) and of every candidate, with one copy of the
#                                        # library they link, into DIR (for the device's carry;
#                                        # DIR is relative to the repository root, e.g. build/pack);
#                                        # gz: each binary gzipped (a candidate's bench holds all
#                                        # its kernels, about 5 MB; gzip -9 keeps a quarter)
#   bench/sweep.sh run [bench args...]   # on the GPU machine: one bench run per candidate
#                                        # (from the repository root, or from a packed DIR)
# One build tree serves a sweep (build/sweep.tree): the library and the shipped-tables bench
# (build/sweep-base) are compiled once, then each candidate recompiles bench/sweep_candidate.cpp
# alone and relinks; its bench is copied to build/sweep-<n>/, ptxas's resource lines of its
# translation unit to build/sweep-<n>/resources.txt, the build's output to build/sweep-<n>.log.
# Every bench of one sweep links the same library (build/sweep.lib/). VAECONV_SWEEP_ROOT (default
# build) puts all of it under another folder, so that two sweeps of one checkout stay apart.
# A candidate is a type, not a rebuilt library: the build compiles bench/sweep_candidate.cpp with
# the candidate's definitions (that translation unit only; CMake cache variable
# VAECONV_SWEEP_CANDIDATE), which hands the library's dispatch the shipped tile tables with one
# entry replaced; the library and its headers stay the shipped ones. The bench checks every
# shape's output (sampled, against the reference) before timing it.
# Candidates are "BM,BN,BK,warpsM,warpsN,stages[,flag...]": flag "mbN" asks for N resident blocks
# per SM (__launch_bounds__' second argument); the entry it replaces is the wide BF16 tile unless
# a flag names another (a wide bf16 candidate takes every wide vector row: on sm_90a those of the
# 192-wide tile, kernel::takes_wide_cout192, and of the causal tile, kernel::takes_wide_causal,
# too; a wide fp8 candidate leaves the 192-wide rows to the shipped tile): "fp8" the wide FP8 tile
# (BK in fp8 elements; BK = 128 is a 128-byte row),
# "tr" the BF16 tap-reduce tile (BN = 32; the halo is BM / 16 rows of 16 pixels), "el" the BF16
# wide element-wise tile (Cin not a multiple of 8: enc_conv_in off sm_90a), "el8" the FP8 one,
# "halo" the bf16 halo kernel's tile (its patch is BM / 8 rows of 8 pixels; it then takes every
# T = 1 causal bf16 layer with Cin <= 96, or <= N with flag "hcN", the channels its halo holds),
# "hf8" the FP8 halo kernel's tile (patch as for "halo"), "trw" the bf16 tap-row kernel's tile
# (Cin = 3; patch as for "halo"). Flag "mma" builds a wide candidate on mma.sync instead of wgmma
# (then warpsM/warpsN count warps; with wgmma they count warpgroups). A wgmma candidate whose warp
# tile is not 96 wide needs its width generated first (scripts/gen_wgmma_asm.py). Flag "wsN" (a
# wgmma wide candidate) makes it warp-specialized (kernel::WarpSpecializedTileShape: warpsM x
# warpsN consumer warpgroups and a producer warpgroup, a persistent grid) with N bytes of
# epilogue staging after its kStages buffers; with "pwN" N producer warpgroups (1 or 2) and "prN"
# N registers a producer thread keeps (the consumers share the rest: kernel/register_split.hpp),
# e4m3 or not, e.g. "128,192,64,2,1,4,ws51200,c192,pw2,pr56". Flag "c192" (sm_90a) puts the
# candidate in place of the 192-wide tile of its dtype (kernel::takes_wide_cout192's rows)
# instead of the wide tile, e.g.
# the warp-specialized 192-wide tiles: "128,192,64,2,1,4,ws51200,c192"
# "128,192,128,2,1,4,ws51200,c192,fp8". Flag "nsN" (N >= 2) makes the candidate the narrow tile's
# sliced-K form (kernel::SlicedKTileShape, N groups of warps over K; the NVIDIA tables have none,
# so the candidate adds one) with "fp8" the e4m3 one: the narrow convs whose K tiles split evenly
# take it, e.g. enc_conv_out's "32,32,32,1,1,3,ns4" "32,32,64,1,1,3,ns6,fp8". Flag "nw" (sm_90a,
# bf16) makes the candidate the narrow tile on the wgmma atom (the shipped one is 128x32x64 in 8
# stages; a width other than scripts/gen_wgmma_asm.py's WIDTHS is generated first), e.g.
# "64,32,64,1,1,8,nw". Flag "tail" (sm_90a, bf16) makes the candidate the tail rule's tile of the
# 192-wide tile (kernel/tail_split.hpp: the 166² bottleneck's last round; the rule reads the
# candidate's BM, BN and min blocks, so mbN must be what fits), on the wgmma atom, or with nsN
# sliced over K on the mma.sync atom, e.g. "128,96,32,2,1,8,tail" "128,96,32,2,2,4,ns2,tail". A
# c192 candidate keeps the shipped tail tile behind it.
# AMD (no GPU needed): the CDNA model ranks wide-tile candidates from their assembly (flag
# "w192": the candidate takes the rows of the 192-wide tile instead of the 96-wide one's; flag
# "halo": the candidate is the halo kernel on fragment atoms, a (BM / 8) x 8 patch of up to 96
# channels, and takes the T = 1 causal rows with Cin <= 96 that the set gives its halo kernel or
# its 96-wide implicit GEMM; flag "sg": the candidate takes only the rows of gfx950's small-grid
# tile, the 128 x 96 one, not the 256 x 96 wide tile's):
#   bench/sweep.sh amd-model gfx950 "256,96,32,4,1,3" "256,96,64,4,1,3,fp8" ...
# compiles one translation unit of the candidates (the implicit-GEMM kernel on the causal,
# downsample and upsample-phase geometries, each candidate on arch::Cdna where its LDS fits
# 64 KiB, else on arch::CdnaGfx950Only) for that target with `--cuda-device-only -S`
# (build/amd-model/), then predicts the 58-call set with every wide vector row of the candidate's
# dtype and target moved to it (bench/cdna_model/predict.py's predict_all; the shipped kernels
# from build/hip-root, which must be built; bank ways from its lds-banks.json, the candidates'
# own from the same bank model: a host program built here, build/amd-model/banks.json). It
# prints the totals and, per candidate, scratch bytes, VGPRs, occupancy and the 96->96 1024²
# row's blocks per CU and bound: a candidate with scratch is not shippable.
# Flag "ob": a OneBufferTileShape (one LDS buffer, a barrier before each K tile's flush).
# Flag "tb": the candidate is a TwoBufferTileShape (kernel/tile_policy.hpp: two LDS buffers, the
# stages - 1 tiles ahead staged in registers); its LDS is two buffers (the kernel's own, from
# the assembly, where the epilogue's staging needs more).
# With --per-shape after the target (bench/sweep.sh amd-model gfx942 --per-shape C1 C2 ...) it
# also prints each wide row's pessimistic µs and blocks per CU under every candidate, the total
# of the best candidate per shape, and for each pair of candidates of one dtype with different
# residency the total of the round rule (kernel/tile_rounds.hpp: the tile with more blocks per CU
# only where its grid needs fewer rounds over the CUs).
# Flag "ca" (NVIDIA): the candidate's copies are cp.async.ca, cached in L1 as well as L2 (the
# library's are .cg), through an architecture overlay in bench/sweep_candidate.cpp; it applies to
# the wide, c192, nw and tail candidates, e.g. enc_conv_out's "128,32,64,2,1,4,nw,ca".
# Flags that went with issue 24 (they reached into the library headers), with the forms they
# built (docs/perf-notes.md): "rf", "trp"/"trnp", "bulk"/"nobulk"/"bulkw", "dup",
# "noepi"/"nomma"/"nocopy"; VAECONV_SWEEP_TESTS (the GPU tests run the shipped library).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CANDIDATES=(${VAECONV_SWEEP:-"128,96,64,2,1,4,mb2" "192,96,64,3,1,4" "64,96,128,1,1,3,fp8,mb3" "128,96,128,2,1,3,fp8,mb2"})
case "${1:-}" in
  build)
    root=${VAECONV_SWEEP_ROOT:-build}
    tree="$root/sweep.tree"
    mkdir -p "$root"
    configure() {  # $1: the candidate's definitions ("" for the shipped tables)
      cmake -S . -B "$tree" -DVAECONV_BACKEND=CUDA -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90a-real -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
        -DVAECONV_BUILD_TESTS=OFF "-DVAECONV_SWEEP_CANDIDATE=$1" \
        "-DCMAKE_CUDA_FLAGS=--resource-usage" >/dev/null
    }
    # The library and the bench over the shipped tables, once per sweep root.
    if [ ! -x "$root/sweep-base/bench/vaeconv_bench" ]; then
      configure ""
      cmake --build "$tree" --target vaeconv_bench -j "$(nproc)" >"$root/sweep-base.log" 2>&1 ||
        { tail -20 "$root/sweep-base.log" >&2; exit 1; }
      mkdir -p "$root/sweep-base/bench" "$root/sweep.lib"
      cp "$tree/bench/vaeconv_bench" "$root/sweep-base/bench/"
      cp "$tree/kernels/libvaeconv_kernels.so" "$root/sweep.lib/"
      echo "shipped tables" >"$root/sweep-base/candidate.txt"
      echo "built sweep-base (the shipped tables) and the library"
    fi
    # Numbered after any candidates already built, so that sweeps can be added to.
    i=$(find "$root" -maxdepth 1 -name 'sweep-[0-9]*' -type d 2>/dev/null | wc -l)
    for c in "${CANDIDATES[@]}"; do
      IFS=, read -r bm bn bk wm wn st extra <<<"$c"
      mb=1 role=0 mma=0 halo_cin=96 ws=0 c192=0 slices=1 tail=0 pw=1 pr=0 l1=0
      for f in ${extra//,/ }; do
        case "$f" in
          fp8) role=1 ;;
          tr) role=2 ;;
          el) role=3 ;;
          el8) role=4 ;;
          halo) role=5 ;;
          hf8) role=6 ;;
          trw) role=7 ;;
          c192) c192=1 ;;
          hc*) halo_cin=${f#hc} ;;
          mma) mma=1 ;;
          ws*) ws=${f#ws} ;;
          pw*) pw=${f#pw} ;;
          pr*) pr=${f#pr} ;;
          ns*) slices=${f#ns} ;;
          nw) role=12 ;;
          tail) tail=1 ;;
          ca) l1=1 ;;
          mb*) mb=${f#mb} ;;
          *) echo "unknown candidate flag: $f" >&2; exit 2 ;;
        esac
      done
      # c192: the 192-wide tile of the candidate's dtype (roles 8, 9), not the wide one.
      if [ "$c192" = 1 ]; then role=$((role == 1 ? 9 : 8)); fi
      # nsN: the narrow tile's sliced-K form in N groups of warps (roles 10, 11).
      if [ "$slices" != 1 ]; then
        [ "$c192" = 0 ] || { echo "c192 and nsN name different table entries: $c" >&2; exit 2; }
        role=$((role == 1 ? 11 : 10))
      fi
      # tail: the tail rule's tile of the bf16 192-wide tile (role 13; with nsN sliced over K).
      if [ "$tail" = 1 ]; then
        [ "$role" = 0 ] || [ "$role" = 10 ] || { echo "tail is a bf16 candidate of its own: $c" >&2; exit 2; }
        [ "$c192" = 0 ] || { echo "c192 and tail name different table entries: $c" >&2; exit 2; }
        role=13
      fi
      defs="VAECONV_CANDIDATE_BM=$bm;VAECONV_CANDIDATE_BN=$bn;VAECONV_CANDIDATE_BK=$bk"
      defs+=";VAECONV_CANDIDATE_WM=$wm;VAECONV_CANDIDATE_WN=$wn;VAECONV_CANDIDATE_ST=$st"
      defs+=";VAECONV_CANDIDATE_MB=$mb;VAECONV_CANDIDATE_ROLE=$role"
      defs+=";VAECONV_CANDIDATE_MMA=$mma;VAECONV_CANDIDATE_HALO_CIN=$halo_cin"
      defs+=";VAECONV_CANDIDATE_WS=$ws;VAECONV_CANDIDATE_SLICES=$slices"
      defs+=";VAECONV_CANDIDATE_PW=$pw;VAECONV_CANDIDATE_PR=$pr;VAECONV_CANDIDATE_L1=$l1"
      configure "$defs"
      log="$root/sweep-$i.log"
      cmake --build "$tree" --target vaeconv_bench -j "$(nproc)" >"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
      cmp -s "$tree/kernels/libvaeconv_kernels.so" "$root/sweep.lib/libvaeconv_kernels.so" ||
        { echo "the library changed since sweep-base was built: start a new sweep root" >&2; exit 1; }
      mkdir -p "$root/sweep-$i/bench"
      cp "$tree/bench/vaeconv_bench" "$root/sweep-$i/bench/"
      # ptxas's lines of the candidate's translation unit (the build log holds only what rebuilt).
      awk '/sweep_candidate/ {on = 1} on && /ptxas|Function properties|Used [0-9]+ registers|spill/' "$log" \
        >"$root/sweep-$i/resources.txt" || true
      echo "$c" > "$root/sweep-$i/candidate.txt"
      echo "built sweep-$i: $c"
      i=$((i + 1))
    done ;;
  pack)
    out=${2:?usage: $0 pack DIR}
    root=${VAECONV_SWEEP_ROOT:-build}
    # DIR is replaced: refuse anything that is not an earlier pack (a marker file says so).
    if [ -e "$out" ] && [ ! -f "$out/.sweep-pack" ]; then
      echo "$out exists and is not a sweep pack: not replacing it" >&2; exit 2
    fi
    rm -rf "$out"
    mkdir -p "$out/build/sweep.lib" && touch "$out/.sweep-pack"
    put() {  # $1 -> $2 (a folder), gzipped with "gz"
      if [ "${3:-}" = gz ]; then gzip -9 -c "$1" >"$2/$(basename "$1").gz"; else cp "$1" "$2/"; fi
    }
    put "$root/sweep.lib/libvaeconv_kernels.so" "$out/build/sweep.lib" "${3:-}"
    for d in "$root"/sweep-*; do
      [ -x "$d/bench/vaeconv_bench" ] || continue
      t="$out/build/$(basename "$d")"
      mkdir -p "$t/bench"
      put "$d/bench/vaeconv_bench" "$t/bench" "${3:-}"
      cp "$d/candidate.txt" "$t/"
      [ -f "$d/resources.txt" ] && cp "$d/resources.txt" "$t/"
    done
    mkdir -p "$out/bench" && cp bench/sweep.sh "$out/bench/sweep.sh"  # cwd: the repository root
    du -sh "$out" ;;
  run)
    shift
    root=${VAECONV_SWEEP_ROOT:-build}
    # A gzipped pack: its binaries unzipped in place once.
    for z in "$root"/sweep.lib/*.gz "$root"/sweep-*/bench/*.gz; do
      [ -f "$z" ] && [ ! -e "${z%.gz}" ] && gunzip -k "$z" && chmod +x "${z%.gz}"
    done
    for d in "$root"/sweep-*/; do
      [ -x "$d/bench/vaeconv_bench" ] || continue
      echo "=== candidate $(cat "$d/candidate.txt")"
      # A failed shape makes the bench exit 1: the other candidates still run.
      LD_LIBRARY_PATH="$root/sweep.lib:${LD_LIBRARY_PATH:-}" "$d/bench/vaeconv_bench" "$@" ||
        { rc=$?; echo "=== candidate $(cat "$d/candidate.txt"): the bench exited with $rc"; }
    done ;;
  amd-model)
    target=${2:?usage: $0 amd-model gfx942|gfx950 [--per-shape] CANDIDATE...}
    shift 2
    per_shape=0
    if [ "${1:-}" = --per-shape ]; then per_shape=1; shift; fi
    out=build/amd-model
    mkdir -p "$out"
    # Each candidate once, into two generated sources: its kernels for the target's assembly
    # (candidates.cpp) and its LDS accesses costed by the bank model the shipped tiles are costed
    # with (banks.cpp: tests/lds/shipped_accesses.hpp, bench/lds_bank_rows.hpp; a host program
    # that writes the report's rows, so that no candidate falls back to the assumption row).
    kernels="" banks="" i=0
    for c in "$@"; do
      IFS=, read -r bm bn bk wm wn st extra <<<"$c"
      atom=AtomBf16 lay=Mfma32x32x16Bf16 eb=2 shape=TileShape bufs=$st halo=0
      for f in ${extra//,/ }; do
        case "$f" in
          fp8) atom=AtomFp8 lay=Mfma32x32x64Fp8 eb=1 ;;
          k32) atom=k32 lay=Mfma32x32x32Fp8 eb=1 ;;  # fp8 on the sweep's 32x32x32 e4m3 atom (gfx942; sweep_atom_fp8_k32.hpp)
          tb) shape=TwoBufferTileShape bufs=2 ;;  # two LDS buffers, st - 1 tiles ahead in registers
          ob) shape=OneBufferTileShape bufs=1 ;;  # one LDS buffer, a barrier before each flush
          w192) ;;  # moves the rows of the 192-wide tile (the predictor below), not the 96-wide
          sg) ;;  # moves the rows of gfx950's small-grid tile only (the predictor below)
          halo) halo=1 ;;  # the halo kernel on fragment atoms: a (BM / 8) x 8 patch, 96 channels
          *) echo "unknown amd-model candidate flag: $f" >&2; exit 2 ;;
        esac
      done
      arch=arch::Cdna
      lds=$((bufs * (bm + bn) * bk * eb))
      # the halo kernel: its halo ((BM / 8 + 2) x 10 pixels of 96 channels) and B-only stages
      [ $halo = 1 ] && lds=$(((bm / 8 + 2) * 10 * 96 * eb + bufs * bn * bk * eb))
      [ $lds -gt 65536 ] && arch=arch::CdnaGfx950Only
      # gfx950's halo kernel is a gfx950-only entry, so a candidate replaces it by name
      [ $halo = 1 ] && [ "$target" = gfx950 ] && arch=arch::CdnaGfx950Only
      atom_t=arch::Cdna::$atom
      [ "$atom" = k32 ] && atom_t=sweep::AtomFp8K32
      policy="TilePolicy<$shape<$bm, $bn, $bk, $wm, $wn, $st>, $arch, $atom_t>"
      if [ $halo = 1 ]; then
        kernels+="using C$i = HaloPolicy<$policy, HaloTile<$((bm / 8)), 8, 96, $eb>>;"$'\n'
        kernels+="template __global__ void halo_fragment_conv_kernel<C$i>(ConvParams);"$'\n'
        banks+="  vaeconv::lds::detail::halo_tile<vaeconv::kernel::$shape<$bm, $bn, $bk, $wm, $wn, $st>, vaeconv::kernel::HaloTile<$((bm / 8)), 8, 96, $eb>, vaeconv::layout::$lay>(\"candidate_halo_$i\", out);"$'\n'
      else
        kernels+="using C$i = $policy;"$'\n'
        for g in CausalGeometry DownsampleGeometry UpsamplePhaseGeometry; do
          kernels+="template __global__ void conv_kernel<C$i, $g, true>(ConvParams);"$'\n'
        done
        banks+="  vaeconv::lds::detail::conv_tile<vaeconv::kernel::$shape<$bm, $bn, $bk, $wm, $wn, $st>, vaeconv::layout::$lay>(\"candidate_$i\", out);"$'\n'
      fi
      i=$((i + 1))
    done
    {
      echo '// generated by bench/sweep.sh amd-model: candidate wide tiles for the CDNA model'
      echo '#include <type_traits>'
      echo '#include "vaeconv/api/conv.hpp"'
      echo '#include "bench/sweep_atom_fp8_k32.hpp"  // flag k32'
      echo 'namespace vaeconv::kernel {'
      printf '%s' "$kernels"
      echo '}'
    } >"$out/candidates.cpp"
    scripts/in-root.sh clang++-22 -x hip --offload-arch="$target" --cuda-device-only -S -O3 \
      -std=c++17 -I. -Iinclude -Ikernels "$out/candidates.cpp" -o "$out/candidates-$target.s"
    {
      echo '// generated by bench/sweep.sh amd-model: the candidates'"'"' LDS accesses, costed'
      echo '#include <iostream>'
      echo '#include "lds_bank_rows.hpp"'
      echo 'int main() {'
      echo '  std::vector<vaeconv::lds::AccessSet> out;'
      printf '%s' "$banks"
      echo '  std::cout << vaeconv::lds_report::json(out);'
      echo '}'
    } >"$out/banks.cpp"
    c++ -std=c++17 -O1 -Iinclude -Itests -Ibench "$out/banks.cpp" -o "$out/banks"
    "$out/banks" >"$out/banks.json"
    python3 - "$target" "$out/candidates-$target.s" "$per_shape" "$@" <<'PY'
import copy, json, math, os, sys
sys.path.insert(0, "bench/cdna_model")
import cdna_asm, predict as P
target, asm, per_shape, cands = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
build = "build/hip-root"
tname = {v: k for k, v in P.machines.TARGETS.items()}[target]
plan = P.load_plan(build, None)
lds_rows, _ = P.load_lds_ways(build)
# Each candidate's own bank rows (banks.json, written above) replace the rows of its tile name
# (BM x BN x BK, element bytes, and whether it is a halo kernel's), which a shipped tile of other
# waves may share.
with open(os.path.join(os.path.dirname(asm), "banks.json")) as f:
    cand_rows = json.load(f)
def kind(r):  # a halo kernel's rows and an implicit GEMM's of one tile name stay apart
    return (r.get("tile"), int(r.get("elem_bytes", 2)), "halo" in r.get("layout", ""))
for tgt, rows in cand_rows.items():
    names = {kind(r) for r in rows}
    lds_rows[tgt] = [r for r in lds_rows.get(tgt, []) if kind(r) not in names] + rows
shipped = os.path.join(build, "kernels", "asm", f"conv_instances-{target}.s")
new = cdna_asm.parse_file(asm, target)
P.predict_all(build, plan, lds_rows, targets=(tname,))  # parses the shipped assembly once
key = next(k for k in P._PARSED if k.startswith(shipped + ":"))
names = {k.name for k in new}
P._PARSED[key] = [k for k in P._PARSED[key] if k.name not in names] + new
if target == "gfx942":  # a gfx950-only entry is a trap on gfx942: no plan of gfx942 names one
    P._PARSED[key] = [k for k in P._PARSED[key] if "CdnaGfx950Only" not in k.name]

def show(tag, plan, dt):
    rows = P.predict_all(build, plan, lds_rows, targets=(tname,))[tname]
    tot = P.totals(rows, dt, 1024)
    big = next(r for r in rows if r["plan"]["dtype"] == dt and r["plan"]["id"] == "enc_e0_res__dec_d3_res")
    m = big["kernel"].meta
    print(f"{tag:28} {tname} {dt}: 58-call {tot['nom'] / 1e3:.2f} [{tot['opt'] / 1e3:.2f}, "
          f"{tot['pess'] / 1e3:.2f}] ms; 96->96: {big['launch'].blocks_per_unit} blocks/CU, bound "
          f"{big['pred'].bound}/{big['pred'].pess.bound}; scratch {m.get('scratch')} B, "
          f"VGPR {m.get('vgpr')}, occupancy {m.get('occupancy')}")
    return rows

def wide_rows(rows, dt):
    """The 1024² image rows of dt on a 96- or 192-wide vector implicit GEMM or on the halo
    kernel, and every row a candidate took, by shape id."""
    def wide(k):
        return (k.get("swept") or k["family"] == "halo"
                or (k["family"] == "implicit_gemm" and k["vector"] and k["bn"] in (96, 192)))
    return {r["plan"]["id"]: r for r in rows
            if r["plan"]["dtype"] == dt and r["plan"]["resolution"] == 1024
            and not P.is_video(r["plan"]) and wide(r["plan"]["kernel"])}

def pess(r):
    return r["plan"]["calls"] * r["pred"].pess.time_us

def per_shape_tables(results):
    units = P.machines.machine(tname).units
    for dt in ("bf16", "fp8"):
        cs = [(c, wide_rows(rows, dt)) for c, rows in results if (c == "shipped" or
              bool({"fp8", "k32"} & set(c.split(",")[6:])) == (dt == "fp8"))]
        if len(cs) < 2:
            continue
        ids = list(cs[0][1])
        print(f"\n{tname} {dt}, per wide shape: pessimistic us per call (blocks/CU, rounds)")
        print("| shape | calls | blocks | " + " | ".join(c for c, _ in cs) + " |")
        for i in ids:
            r0 = cs[0][1][i]
            cells = []
            for _, rs in cs:
                L = rs[i]["launch"]
                cells.append(f"{rs[i]['pred'].pess.time_us:.0f} ({L.blocks_per_unit}, "
                             f"{L.blocks / (units * L.blocks_per_unit):.2f})")
            print(f"| {i} | {r0['plan']['calls']} | {r0['launch'].blocks} | " + " | ".join(cells) + " |")
        best = sum(min(pess(rs[i]) for _, rs in cs) for i in ids)
        print(f"best candidate per shape, wide rows: {best / 1e3:.2f} ms pessimistic")
        for a, ra in cs:
            for b, rb in cs:
                if a == b:
                    continue
                tot, took = 0.0, []
                for i in ids:
                    La, Lb = ra[i]["launch"], rb[i]["launch"]
                    if La.blocks_per_unit <= Lb.blocks_per_unit or La.blocks != Lb.blocks:
                        break  # the rule chooses between tiles of one grid
                    rounds = lambda L: math.ceil(L.blocks / (units * L.blocks_per_unit))
                    use_b = rounds(La) >= rounds(Lb)
                    tot += pess(rb[i] if use_b else ra[i])
                    took += [i] if use_b else []
                else:
                    print(f"round rule {a} | {b}: wide rows {tot / 1e3:.2f} ms pessimistic "
                          f"(against {sum(pess(ra[i]) for i in ids) / 1e3:.2f} all {a}); "
                          f"{b} on {', '.join(took) or 'none'}")

results = []
for dt in ("bf16", "fp8"):
    rows = show("shipped", plan, dt)
results.append(("shipped", rows))  # one plan: its rows hold both dtypes
for c in cands:
    f = c.split(",")
    bm, bn, bk, wm, wn, st = map(int, f[:6])
    dt = "fp8" if "fp8" in f[6:] or "k32" in f[6:] else "bf16"
    moves_bn = 192 if "w192" in f[6:] else 96  # the rows of which shipped tile width it takes
    out = copy.deepcopy(plan)
    for p in out["plans"]:
        k = p["kernel"]
        if "halo" in f[6:]:
            # a halo candidate takes the causal T = 1 rows (Cin <= 96 in 16-channel steps) that
            # the set runs on its halo kernel or on its wide implicit GEMM (gfx950: the 256 x 96
            # tile's rows only, as the set's kHaloOnWideTileOnly; not its small-grid tile's)
            wide = (k["family"] == "implicit_gemm" and k["vector"] and k["bn"] == 96
                    and k["loader"] == "" and k["geometry"] == [1, 1, 1, 3]
                    and (target != "gfx950" or k["bm"] == 256))
            if (p.get("target", target) != target or p["dtype"] != dt or P.is_video(p)
                    or not (k["family"] == "halo" or wide)
                    or p.get("t", 1) != 1 or p["cin"] > 96 or p["cin"] % 16 != 0):
                continue
            patch_rows = bm // 8
            k.update(family="halo", bm=bm, bn=bn, bk=bk, warps_m=wm, warps_n=wn, stages=st,
                     lds_stages=2 if "tb" in f[6:] else 1 if "ob" in f[6:] else st,
                     min_blocks=1, threads=wm * wn * 64,
                     patch=[patch_rows, 8],
                     tiles=math.ceil(p["out_h"] / patch_rows) * math.ceil(p["out_w"] / 8)
                     * math.ceil(p["cout"] / bn) * p.get("n", 1),
                     k_tiles=math.ceil(9 * p["cin"] / bk), lds_bytes=0, launches=1, swept=True)
            continue
        if (p.get("target", target) != target or p["dtype"] != dt or k["family"] != "implicit_gemm"
                or not k["vector"] or k["bn"] != moves_bn or P.is_video(p)):
            continue
        # "sg": only the small-grid tile's rows (gfx950's 128 x 96, cdna::Gfx950SmallGridShape),
        # not the 256 x 96 wide tile's
        if "sg" in f[6:] and not (target == "gfx950" and k["bm"] == 128):
            continue
        # the small-grid rule's sliced-K rows (slices_k > 1) stay on their tile unless "sg"
        if "sg" not in f[6:] and k.get("slices_k", 1) > 1:
            continue
        fp = p["h"] * p["w"] if k["geometry"][3] == 2 else p["out_h"] * p["out_w"]
        m_old, nt = math.ceil(fp / k["bm"]), math.ceil(p["cout"] / k["bn"])
        frames = k["tiles"] // (m_old * nt)
        k["tiles"] = math.ceil(fp / bm) * math.ceil(p["cout"] / bn) * frames  # BN may pad Cout
        k["k_tiles"] = math.ceil(k["k_tiles"] * k["bk"] / bk)
        bufs = 2 if "tb" in f[6:] else 1 if "ob" in f[6:] else st
        k.update(bm=bm, bn=bn, bk=bk, warps_m=wm, warps_n=wn, stages=st, lds_stages=bufs,
                 min_blocks=1, threads=wm * wn * 64, slices_k=1,
                 lds_bytes=bufs * (bm + bn) * bk * (1 if dt == "fp8" else 2),
                 swept=True)  # wide_rows' mark: the row moved to the candidate (any BN)
    results.append((c, show(c, out, dt)))
if per_shape:
    per_shape_tables(results)
PY
    ;;
  *) echo "usage: $0 build | pack DIR [gz] | run [bench args] | amd-model TARGET [--per-shape] CANDIDATE..." >&2; exit 2 ;;
esac
