#!/usr/bin/env python3
"""Validation of the CDNA model on public AMD kernels with a published throughput (issue 23 §1).

The model (model.py + the AMD asm front-end + the machine table) predicts public GEMM kernels
whose authors published a measured MI355X time for a stated problem, with the same constants as
the conv predictions (no per-kernel tuning), and the error against the published figure is
reported as it comes out.

Nothing fetched is in this repository: not the kernels' source, not their assembly, not the steps
that build them. The developer compiles the public source elsewhere (the toolchain root's clang,
device only, -O3, the target named per kernel below) into one assembly file per kernel, and this
script keeps only FACTS derived from it:

  extract --asm-dir DIR   runs the model's AMD front-end on DIR/<asm> for the named kernel symbol
                          and writes public_kernels.json: per kernel the per-wave counts (main
                          loop per trip, prologue, epilogue), the resources the compiler reports,
                          the launch geometry of the published problem, the published figure with
                          its citation, and the compiler that produced the assembly.
  predict [--validation F]  reads public_kernels.json (committed, so CI needs no fetch), predicts
                          each kernel on its published machine and prints the comparison; with
                          --validation it writes the "public_kernels" object of that file (the docs
                          generator merges it into docs/amd-performance.*).

Launch geometry per kernel (grid, threads, trips of the main loop) is read from the public source
and its launch code for the published problem; `check_geometry` asserts that the main loop's
matrix FLOPs times its trips, plus the FLOPs outside the loop, equal the problem's 2*M*N*K.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import asdict
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import model  # noqa: E402  (the architecture-neutral core)

DEFAULT_JSON = os.path.join(HERE, "public_kernels.json")

ROCM_BLOG = {
    "title": "FP8 GEMM Optimization on AMD CDNA(TM)4 Architecture (ROCm Blogs; Jiahui Cao, "
             "Amanzhol Salykov, Andy Luo), Table 5",
    "url": "https://rocm.blogs.amd.com/software-tools-optimization/cdna4-gemm-kernels/README.html",
    "date": "2026-03-10",
    "hardware": "AMD Instinct MI355X (gfx950), ROCm 7.1.0",
    "method": "average of timed launches after warm-up; TFLOP/s = 2MNK/t",
}
ROCM_NOTEBOOK = {
    "repo": "ROCm/gpuaidev",
    "path": "docs/notebooks/gpu_dev_optimize/fp8_gemm_hip_cdna4.ipynb",
    "commit": "da0b2b5ea0c690e6577f76004fead940114cbd00",
    "url": "https://rocm.docs.amd.com/projects/ai-developer-hub/en/latest/notebooks/"
           "gpu_dev_optimize/fp8_gemm_hip_cdna4.html",
    "note": "the tutorial the blog's kernels come from; its stored output cell (section 15, "
            "ROCm 7.1.1, MI355X, 50 timed launches) is a second published figure",
}
HIPKITTENS_SRC = {
    "repo": "HazyResearch/HipKittens",
    "commit": "55b9a0ae06837088bce5554720dd71c0ff65b75f",
    "url": "https://github.com/HazyResearch/HipKittens",
}
HIPKITTENS = {
    "title": "HipKittens: Fast and Furious AMD Kernels (Hu et al., arXiv:2511.08083); the "
             "repository's BF16 GEMM benchmark data behind its MI355X plot",
    "url": "https://github.com/HazyResearch/HipKittens/tree/main/analysis/bf16_gemm",
    "data_path": "analysis/bf16_gemm/mi350x/mi355x_bf16_gemm.json",
    "data_commit": "55b9a0ae06837088bce5554720dd71c0ff65b75f",
    "date": "2025-11-10",
    "hardware": "AMD Instinct MI355X (gfx950)",
    "method": "average of 100 timed launches (torch.cuda events, fresh random inputs each) after "
              "500 warm-up launches",
}


def _fp8_gemm(mnk):
    # A, B e4m3 (1 byte), C bf16 (2 bytes)
    return {"m": mnk, "n": mnk, "k": mnk, "a_bytes": 1, "b_bytes": 1, "c_bytes": 2}


def _bf16_gemm(mnk):
    return {"m": mnk, "n": mnk, "k": mnk, "a_bytes": 2, "b_bytes": 2, "c_bytes": 2}


# One entry per (kernel, published problem). Geometry from the public source's launch code:
#   tile: the block's output tile; trips: trips of the main loop the front-end finds, for this
#   problem; lds_bytes: the block's LDS (dynamic LDS is not in the assembly: from the source).
KERNELS: List[Dict] = [
    {
        "id": "rocm_fp8_single_buffer",
        "name": "ROCm blog FP8 GEMM, MFMA + direct global-to-LDS load (single buffer)",
        "asm": "fp8_gemm_bufferload-gfx950.s",
        "symbol": "_Z31mfma_gemm_fp8_bufferload_kernelPK14__hip_fp8_e4m3S1_P14__hip_bfloat16iiiiiiff",
        "source": dict(ROCM_NOTEBOOK, cell="section 8, mfma_gemm_fp8_bufferload_kernel"),
        "target": "gfx950", "machine": "mi355x",
        "problem": _fp8_gemm(4096),
        "tile": [32, 32], "threads": 256, "grid": [128, 128], "trips": 32, "stages": 1,
        "published": dict(ROCM_BLOG, ms=0.27125, tflops=506.70,
                          row="Direct global-to-LDS ingress", notebook_ms=0.274217),
    },
    {
        "id": "rocm_fp8_double_buffer",
        "name": "ROCm blog FP8 GEMM, double-buffered 64x64x128 tile, 4 waves",
        "asm": "fp8_gemm_double_bufferload-gfx950.s",
        "symbol": "_Z38mfma_gemm_fp8_double_bufferload_kernelPK14__hip_fp8_e4m3S1_P14__hip_bfloat16iiiiiiff",
        "source": dict(ROCM_NOTEBOOK, cell="section 10, mfma_gemm_fp8_double_bufferload_kernel"),
        "target": "gfx950", "machine": "mi355x",
        "problem": _fp8_gemm(4096),
        "tile": [64, 64], "threads": 256, "grid": [64, 64], "trips": 32, "stages": 2,
        "published": dict(ROCM_BLOG, ms=0.11783, tflops=1166.41, row="Double buffering",
                          notebook_ms=0.119517),
    },
    {
        "id": "rocm_fp8_mw128_t512",
        "name": "ROCm blog FP8 GEMM, 128x128x128 tile, 8 waves (multi-wave option A)",
        "asm": "fp8_gemm_mw_128x128_t512-gfx950.s",
        "symbol": "_Z75mfma_gemm_fp8_double_bufferload_multiwave_128x128x128_t512_wave64x32_kernelPK14__hip_fp8_e4m3S1_P14__hip_bfloat16iiiiiiff",
        "source": dict(ROCM_NOTEBOOK, cell="section 11"),
        "target": "gfx950", "machine": "mi355x",
        "problem": _fp8_gemm(4096),
        "tile": [128, 128], "threads": 512, "grid": [32, 32], "trips": 32, "stages": 2,
        "published": dict(ROCM_BLOG, ms=0.07516, tflops=1828.74, row="Multi-wave option A",
                          notebook_ms=0.076007),
    },
    {
        "id": "rocm_fp8_mw256_t512",
        "name": "ROCm blog FP8 GEMM, 256x256x128 tile, 8 waves (multi-wave option B)",
        "asm": "fp8_gemm_mw_256x256_t512-gfx950.s",
        # beta = 0 and a shape other than the static 256x256x512: the <-1,-1,-1,true,false> form
        "symbol": "_Z75mfma_gemm_fp8_double_bufferload_multiwave_256x256x128_t512_wave64x32_kernelILin1ELin1ELin1ELb1ELb0EEvPK14__hip_fp8_e4m3S2_P14__hip_bfloat16iiiiiiff",
        "source": dict(ROCM_NOTEBOOK, cell="section 12"),
        "target": "gfx950", "machine": "mi355x",
        "problem": _fp8_gemm(4096),
        "tile": [256, 256], "threads": 512, "grid": [16, 16], "trips": 32, "stages": 2,
        "published": dict(ROCM_BLOG, ms=0.06007, tflops=2288.16, row="Multi-wave option B",
                          notebook_ms=0.068622),
    },
    {
        "id": "rocm_fp8_pingpong_4096",
        "name": "ROCm blog FP8 GEMM, 8-wave ping-pong 256x256x128, M=N=K=4096",
        "asm": "fp8_gemm_pingpong-gfx950.s",
        "symbol": "_Z20fp8_gemm_256x256x128ILi4096ELi4096ELi4096EEvP14__hip_fp8_e4m3S1_P14__hip_bfloat16",
        "source": dict(ROCM_NOTEBOOK, cell="section 14, fp8_gemm_256x256x128<4096,4096,4096>"),
        "target": "gfx950", "machine": "mi355x",
        "problem": _fp8_gemm(4096),
        # K/128 - 2 = 30 K tiles in the loop, unrolled by 2 (#pragma unroll 2): 15 trips
        "tile": [256, 256], "threads": 512, "grid": [256], "trips": 15, "stages": 2,
        "published": dict(ROCM_BLOG, ms=0.0512, tflops=2680.33, row="8-Wave Ping-Pong Scheduling",
                          notebook_ms=0.051861),
    },
    {
        "id": "rocm_fp8_pingpong_8192",
        "name": "ROCm blog FP8 GEMM, 8-wave ping-pong 256x256x128, M=N=K=8192",
        "asm": "fp8_gemm_pingpong-gfx950.s",
        "symbol": "_Z20fp8_gemm_256x256x128ILi8192ELi8192ELi8192EEvP14__hip_fp8_e4m3S1_P14__hip_bfloat16",
        "source": dict(ROCM_NOTEBOOK, cell="section 14, fp8_gemm_256x256x128<8192,8192,8192>"),
        "target": "gfx950", "machine": "mi355x",
        "problem": _fp8_gemm(8192),
        "tile": [256, 256], "threads": 512, "grid": [1024], "trips": 31, "stages": 2,
        "published": dict(ROCM_BLOG, ms=0.343, tflops=3204.15, row="8-Wave Ping-Pong Scheduling"),
    },
    {
        "id": "hipkittens_bf16_4096",
        "name": "HipKittens BF16 GEMM 256x256x64, 8 waves, M=N=K=4096 (MI355X)",
        "asm": "hk_bf16_gemm_4096-gfx950.s",
        "symbol": "_Z8micro_tk13micro_globals",
        "source": dict(HIPKITTENS_SRC, path="analysis/bf16_gemm/mi350x/kernel_4096.cpp"),
        "target": "gfx950", "machine": "mi355x",
        "problem": _bf16_gemm(4096),
        # (K/64 - 2) / 2 = 31 trips of two K steps; the last two K steps are peeled
        "tile": [256, 256], "threads": 512, "grid": [256], "trips": 31, "stages": 2,
        # dynamic LDS: A and B, 2 stages x 2 halves x 128x64 bf16 = 128 KiB
        "lds_bytes": 131072,
        "published": dict(HIPKITTENS, ms=0.0972776997834444, tflops=1412.851596799276),
    },
    {
        "id": "hipkittens_bf16_8192",
        "name": "HipKittens BF16 GEMM 256x256x64, 8 waves, M=N=K=8192 (MI355X)",
        "asm": "hk_bf16_gemm_8192-gfx950.s",
        "symbol": "_Z8micro_tk13micro_globals",
        "source": dict(HIPKITTENS_SRC, path="analysis/bf16_gemm/mi350x/kernel_8192.cpp"),
        "target": "gfx950", "machine": "mi355x",
        "problem": _bf16_gemm(8192),
        # 63 source trips of two K steps; the compiler unrolls the loop 9 times: 7 trips
        "tile": [256, 256], "threads": 512, "grid": [1024], "trips": 7, "stages": 2,
        "lds_bytes": 131072,
        "published": dict(HIPKITTENS, ms=0.682717708349228, tflops=1610.4923225655825),
    },
]


def problem_flops(p: Dict) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]


def problem_unique_bytes(p: Dict) -> float:
    """A and B read once, C written once: what must cross HBM at least once."""
    return (p["m"] * p["k"] * p["a_bytes"] + p["n"] * p["k"] * p["b_bytes"]
            + p["m"] * p["n"] * p["c_bytes"])


def check_geometry(entry: Dict) -> Dict:
    """The launch the published problem makes, checked against the counts: the main loop's FLOPs
    times its trips plus the FLOPs outside the loop must be the problem's 2*M*N*K."""
    p = entry["problem"]
    waves = entry["threads"] // 64
    blocks = math.prod(entry["grid"])
    bm, bn = entry["tile"]
    if blocks * bm * bn != p["m"] * p["n"]:
        raise ValueError(f"{entry['id']}: grid {entry['grid']} x tile {entry['tile']} does not cover "
                         f"{p['m']}x{p['n']}")
    c = entry["counts"]
    loop_flops = c["loop"]["mfma_flops"] * entry["trips"] * waves * blocks
    rest_flops = c["outside_loop_mfma_flops"] * waves * blocks
    want = problem_flops(p)
    if abs(loop_flops + rest_flops - want) > 1e-6 * want:
        raise ValueError(f"{entry['id']}: main loop {loop_flops:.4g} + outside {rest_flops:.4g} "
                         f"FLOPs != 2MNK = {want:.4g}: trips ({entry['trips']}) or counts wrong")
    return {"blocks": blocks, "waves_per_block": waves,
            "loop_share_of_flops": round(loop_flops / want, 4)}


# ---------------------------------------------------------------------------------------------
# extract: assembly -> facts (run by a developer who compiled the public source; not in CI)

def _counts_dict(c) -> Dict:
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in asdict(c).items()}


def front_end_counts(asm_path: str, symbol: str, target: str) -> Dict:
    """The model's AMD front-end (cdna_asm) on one kernel of one assembly file: its counts of one
    main-loop trip, of the prologue and epilogue paths (shortest, longest), the MFMA FLOPs
    outside the loop, and the compiler's resource comments. Raw front-end counts are stored so
    that `predict` converts them with the model's current constants, as for the convs."""
    import cdna_asm
    found = [k for k in cdna_asm.parse_file(asm_path, target, only_vaeconv=False)
             if k.name == symbol]
    if len(found) != 1:
        raise ValueError(f"{asm_path}: {len(found)} kernels named {symbol}, want 1")
    k = found[0]
    if k.loop_counts is None:
        raise ValueError(f"{asm_path}: {symbol}: the front-end finds no MFMA loop")
    loop_set = set(k.loop_blocks)
    outside = cdna_asm.Counts()
    for b in k.blocks:
        if b.label not in loop_set:
            outside.add(cdna_asm.count_insts(b.insts, target))
    return {
        "loop": _counts_dict(k.loop_counts),
        "loop_blocks": len(k.loop_blocks),
        "prologue": [_counts_dict(c) for c in k.prologue],
        "epilogue": [_counts_dict(c) for c in k.epilogue],
        "outside_loop_mfma_flops": outside.mfma_flops,
        "resources": {key: k.meta[key] for key in ("vgpr", "agpr", "sgpr", "scratch", "lds",
                                                   "occupancy") if key in k.meta},
    }


def extract(asm_dir: str, out_path: str, compiler: str) -> List[Dict]:
    out = []
    for e in KERNELS:
        path = os.path.join(asm_dir, e["asm"])
        if not os.path.exists(path):
            raise FileNotFoundError(f"{e['id']}: no assembly at {path} (compile the public source "
                                    f"named in its 'source' entry first)")
        rec = dict(e)
        rec["counts"] = front_end_counts(path, e["symbol"], e["target"])
        rec["compiler"] = compiler
        rec["geometry_check"] = check_geometry(rec)
        out.append(rec)
    with open(out_path, "w") as f:
        json.dump({"about": "Facts derived from public AMD kernels compiled outside this "
                            "repository (bench/cdna_model/public_kernels.py); no fetched code.",
                   "kernels": out}, f, indent=1, sort_keys=True)
        f.write("\n")
    return out


# ---------------------------------------------------------------------------------------------
# predict: facts -> model -> comparison (CI: needs only the committed JSON)

class _Kernel:
    """The part of cdna_asm.Kernel the model's conversion reads, rebuilt from the JSON."""

    def __init__(self, rec: Dict):
        import cdna_asm
        c = rec["counts"]
        def mk(d):  # JSON keeps the LDS-wait gaps' keys as strings
            gaps = {float(g): w for g, w in d.get("lgkm_gaps", {}).items()}
            return cdna_asm.Counts(**{**d, "lgkm_gaps": gaps})
        self.name = rec["id"]
        self.loop_counts = mk(c["loop"])
        self.prologue = tuple(mk(d) for d in c["prologue"])
        self.epilogue = tuple(mk(d) for d in c["epilogue"])
        self.meta = dict(c["resources"])


def model_inputs(rec: Dict):
    """KernelCounts and Launch of one public kernel, converted exactly as predict.py converts a
    conv kernel (predict.per_ktile_counts / predict.blocks_per_cu), with the machine table's
    constants; LDS bank-conflict ways: the table's assumption row (the bank model covers only
    vaeconv's own layouts)."""
    import machines
    import predict as conv_predict
    g = check_geometry(rec)
    kern = _Kernel(rec)
    tname = rec["machine"]
    bm, bn = rec["tile"]
    plan_k = {"family": "public_gemm", "bm": bm, "bn": bn, "warps_m": 1, "warps_n": 1,
              "bk": rec["problem"]["k"], "stages": rec["stages"], "threads": rec["threads"],
              "lds_bytes": rec.get("lds_bytes", 0), "a_bytes": rec["problem"]["a_bytes"],
              "b_bytes": rec["problem"]["b_bytes"]}
    ways = machines.const(tname, "lds_ways_assumed")
    kc, _ = conv_predict.per_ktile_counts(kern, plan_k, ways, ways,
                                          machines.const(tname, "lds_write_rate"))
    p = rec["problem"]
    L = model.Launch(blocks=g["blocks"], waves_per_block=g["waves_per_block"],
                     ktiles=rec["trips"],
                     blocks_per_unit=conv_predict.blocks_per_cu(kern, plan_k, rec["target"]),
                     unique_bytes=problem_unique_bytes(p), flops=problem_flops(p),
                     unique_read_bytes=problem_unique_bytes(p) - p["m"] * p["n"] * p["c_bytes"])
    return kc, L, machines.machine(tname)


def problem_text(p: Dict) -> str:
    dt = "FP8 e4m3 -> bf16" if p["a_bytes"] == 1 else "BF16 -> bf16"
    if p["m"] == p["n"] == p["k"]:
        return f"GEMM M=N=K={p['m']}, {dt}"
    return f"GEMM M={p['m']} N={p['n']} K={p['k']}, {dt}"


def predict_all(records: List[Dict]) -> Dict:
    rows = []
    for rec in records:
        kc, L, m = model_inputs(rec)
        pred = model.predict(kc, L, m, name=rec["id"])
        pub_us = rec["published"]["ms"] * 1e3
        lo, hi = pred.range_us
        src = rec["source"]
        pub = rec["published"]
        rows.append({
            "id": rec["id"],
            "name": rec["name"],
            "target": rec["target"],
            "machine": rec["machine"],
            "problem": problem_text(rec["problem"]),
            "launch": {"blocks": L.blocks, "threads": rec["threads"], "waves_per_block":
                       L.waves_per_block, "main_loop_trips": L.ktiles,
                       "blocks_per_cu": L.blocks_per_unit},
            "source": {k: src[k] for k in ("repo", "path", "commit", "cell", "url") if k in src},
            "compiler": rec.get("compiler", ""),
            "published": {"us": round(pub_us, 3), "tflops": pub.get("tflops"),
                          "citation": pub.get("title"), "url": pub.get("url"),
                          "date": pub.get("date"), "hardware": pub.get("hardware"),
                          **({"second_figure_us": round(pub["notebook_ms"] * 1e3, 3)}
                             if "notebook_ms" in pub else {})},
            "predicted_us": round(pred.time_us, 3),
            "predicted_range_us": [round(lo, 3), round(hi, 3)],
            "bound": pred.bound,
            "bounds_us_nominal": {k: round(v, 2) for k, v in pred.nom.bounds_us.items()},
            "error_pct": round(100.0 * (pred.time_us - pub_us) / pub_us, 1),
            "published_within_range": lo <= pub_us <= hi,
        })
    errs = sorted(abs(r["error_pct"]) for r in rows)
    med = (errs[len(errs) // 2] if len(errs) % 2 else 0.5 * (errs[len(errs) // 2 - 1]
                                                              + errs[len(errs) // 2]))
    return {
        "method": "public GEMM kernels compiled here from their published source (clang, device "
                  "only, -O3), counted by the model's AMD front-end, predicted with the same "
                  "machine constants as the conv predictions; error = (predicted - published) / "
                  "published",
        "kernels": rows,
        "median_abs_error_pct": round(med, 1),
        "published_within_range": sum(r["published_within_range"] for r in rows),
        "count": len(rows),
        "observations": observations(records),
    }


def write_validation(path: str, part: Dict) -> None:
    """Sets the "public_kernels" object of the validation file, keeping every other key."""
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data["public_kernels"] = part
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def observations(records: List[Dict]) -> List[str]:
    """Facts the published figures state about the machine constants, computed, not tuned:
    the share of the dense peak the fastest kernels reach against what the clock range allows,
    and the global-load rate a kernel must have drawn to run in its published time."""
    import machines
    out = []
    best: Dict[str, Dict] = {}
    for rec in records:
        p = rec["problem"]
        kind = "fp8" if p["a_bytes"] == 1 else "bf16"
        eff = problem_flops(p) / (rec["published"]["ms"] * 1e-3)
        key = (rec["machine"], kind)
        if key not in best or eff > best[key]["eff"]:
            best[key] = {"eff": eff, "id": rec["id"]}
    for (tname, kind), b in sorted(best.items()):
        peak = machines.const(tname, f"peak_flops_{kind}")
        clk = machines.const(tname, "clock_ghz")
        allow = clk.pess / clk.opt if isinstance(clk, model.Range) else 1.0
        reached = b['eff'] / peak
        verdict = ("so the model is optimistic for kernels near the MFMA bound" if allow > reached + 0.02
                   else "the pessimistic clock row is set from this share (machines.py), so the "
                        "pessimistic end covers them")
        out.append(f"The fastest published {kind} kernel on {tname} ({b['id']}) reaches "
                   f"{100 * reached:.0f} % of the {peak / 1e15:.2f} PFLOP/s peak; the "
                   f"model's MFMA pipe at the pessimistic clock allows {100 * allow:.0f} %: "
                   f"{verdict}.")
    for rec in records:
        kc, L, m = model_inputs(rec)
        l2_bytes = L.blocks * L.ktiles * L.waves_per_block * kc.loop.global_load_bytes
        rate = l2_bytes / (rec["published"]["ms"] * 1e-3) / 1e12
        l2 = machines.const(rec["machine"], "l2_gbs")
        nom = (l2.at("nom") if isinstance(l2, model.Range) else l2) / 1e3
        if rate > nom:
            out.append(f"{rec['id']} draws {rate:.1f} TB/s of main-loop global loads in its "
                       f"published time, above the table's nominal {nom:.1f} TB/s (`l2_gbs`): "
                       f"the model counts one fetch of the block's tile per K tile at the "
                       f"nominal end (duplicate wave requests served by the CU's L1), "
                       f"{kc.loop.block_tile_bytes * L.blocks * L.ktiles / (rec['published']['ms'] * 1e-3) / 1e12:.1f} TB/s "
                       f"here.")
    return out


def markdown_section(part: Dict) -> str:
    """The public-kernel part of docs/amd-performance.md (predict.py may include it)."""
    L = ["| kernel | problem | published us | predicted us | range us | error | bound |",
         "|---|---|---|---|---|---|---|"]
    for r in part["kernels"]:
        lo, hi = r["predicted_range_us"]
        L.append(f"| {r['name']} | {r['problem']} | {r['published']['us']:.1f} | "
                 f"{r['predicted_us']:.1f} | {lo:.1f}-{hi:.1f} | {r['error_pct']:+.1f} % | "
                 f"{r['bound']} |")
    L.append("")
    L.append(f"Median absolute error {part['median_abs_error_pct']} % over {part['count']} "
             f"kernels; the published figure lies inside the predicted range for "
             f"{part['published_within_range']} of {part['count']}.")
    srcs = {}
    for r in part["kernels"]:
        srcs.setdefault(r["published"]["url"], r["published"])
    for url, pub in srcs.items():
        L.append(f"- {pub['citation']} ({pub['date']}, {pub['hardware']}): {url}")
    L.append("- Assembly: " + part["kernels"][0]["compiler"] + "; counts in "
             "bench/cdna_model/public_kernels.json, regenerated by public_kernels.py.")
    for o in part["observations"]:
        L.append(f"- {o}")
    return "\n".join(L) + "\n"


def print_table(part: Dict) -> None:
    print(f"{'kernel':28} {'target':6} {'published us':>12} {'predicted us':>12} "
          f"{'range us':>19} {'error':>7}  bound")
    for r in part["kernels"]:
        lo, hi = r["predicted_range_us"]
        print(f"{r['id']:28} {r['target']:6} {r['published']['us']:12.1f} {r['predicted_us']:12.1f} "
              f"{lo:9.1f}-{hi:<9.1f} {r['error_pct']:+6.1f}%  {r['bound']}")
    print(f"median |error| {part['median_abs_error_pct']} %; published figure inside the "
          f"predicted range for {part['published_within_range']} of {part['count']}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("extract", help="assembly of the public kernels -> public_kernels.json")
    ex.add_argument("--asm-dir", required=True)
    ex.add_argument("--compiler", required=True,
                    help="the compiler that produced the assembly (recorded as a fact)")
    ex.add_argument("--out", default=DEFAULT_JSON)
    pr = sub.add_parser("predict", help="public_kernels.json -> predictions and errors")
    pr.add_argument("--json", default=DEFAULT_JSON)
    pr.add_argument("--validation", help="write the 'public_kernels' object of this file")
    a = ap.parse_args(argv)
    if a.cmd == "extract":
        extract(a.asm_dir, a.out, a.compiler)
        print(f"wrote {a.out}")
        return 0
    with open(a.json) as f:
        records = json.load(f)["kernels"]
    part = predict_all(records)
    print_table(part)
    for o in part["observations"]:
        print("-", o)
    if a.validation:
        write_validation(a.validation, part)
        print(f"wrote the public_kernels part of {a.validation}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
