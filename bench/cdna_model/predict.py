#!/usr/bin/env python3
"""Predicts every seed conv's time on MI300X and MI355X from the build's AMD assembly.

    python3 bench/cdna_model/predict.py --build build/hip-root
        writes docs/amd-performance.md and docs/amd-performance.json
    python3 bench/cdna_model/predict.py --build build/hip-root --resource-report
        also writes the predicted-time section into <build>/resource-report.md

Inputs: <build>/kernels/asm/conv_instances-gfx942.s and -gfx950.s (the hip-root build), the
dispatch plan (<build>/dispatch-plan.json, written by the build's dispatch_plan tool, or --plan),
the LDS bank model's ways (<build>/lds-banks.json when the lds_bank_report test has run, else
docs/lds-banks.md, else the assumption row), bench/cdna_model/validation.json (merged as is).
Standard library only (it runs under ctest inside the toolchain root).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cdna_asm  # noqa: E402
import machines  # noqa: E402
from model import (KernelCounts, Launch, LoopCounts, PhaseCounts, Prediction, Range,  # noqa: E402
                   combine, predict)

ROOT = os.path.dirname(os.path.dirname(HERE))
LDS_PER_CU = {"gfx942": 64 * 1024, "gfx950": 160 * 1024}
ANCHORS = {"flydsl_58_ms_mi355x": 12.59, "miopen_58_ms_mi355x": 18.77,
           "roofline_58_ms_mi355x_bf16": 2.7}


class ModelError(RuntimeError):
    pass


# ------------------------------------------------------------------ inputs
def load_plan(build: str, plan_path: Optional[str]) -> dict:
    if plan_path:
        with open(plan_path) as f:
            return json.load(f)
    cached = os.path.join(build, "dispatch-plan.json")
    if os.path.exists(cached):
        with open(cached) as f:
            return json.load(f)
    exe = os.path.join(build, "bench", "dispatch_plan")
    if os.path.exists(exe):
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
        return json.loads(out)
    raise ModelError(f"no dispatch plan: build the dispatch_plan target ({cached} or {exe}), "
                     f"or pass --plan")


def load_lds_ways(build: str) -> Tuple[Dict[str, List[dict]], str]:
    """target -> rows {tile, elem_bytes, access, path, layout, ways}; and where they came from."""
    js = os.path.join(build, "lds-banks.json")
    if os.path.exists(js):
        with open(js) as f:
            return json.load(f), js
    md = os.path.join(ROOT, "docs", "lds-banks.md")
    if os.path.exists(md):
        rows: Dict[str, List[dict]] = {}
        target = None
        with open(md) as f:
            for line in f:
                m = re.match(r"^## (gfx9\d\d)", line)
                if m:
                    target = m.group(1)
                    rows[target] = []
                    continue
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if target and len(cells) == 8 and re.match(r"\d+x\d+x\d+", cells[1]):
                    layout = cells[0]
                    rows[target].append({
                        "layout": layout, "tile": cells[1], "access": cells[2], "path": cells[3],
                        "instr": cells[4], "ways": float(cells[5]),
                        "elem_bytes": 1 if "fp8" in layout else 2,
                        "instrs_per_wave": float(cells[7])})
        if rows:
            return rows, "docs/lds-banks.md"
    return {}, ""


def lds_ways_for(rows: Dict[str, List[dict]], target: str, k: dict, dtype: str,
                 fallback: Range) -> Tuple[object, object, str]:
    """(read ways, write ways, note) of a kernel's main loop from the bank model's rows."""
    tile = f"{k['bm']}x{k['bn']}x{k['bk']}"
    eb = 1 if dtype == "fp8" else 2
    want_layout = "tap_reduce" if k["family"] == "tap_reduce" else None
    cand = [r for r in rows.get(target, []) if r.get("tile") == tile and
            int(r.get("elem_bytes", eb)) == eb and r.get("path") == "mainloop"]
    if want_layout:
        cand = [r for r in cand if want_layout in r["layout"]] or cand
    elif not k.get("vector", True):
        cand = [r for r in cand if "elementwise" in r["layout"]] or cand
    else:
        cand = [r for r in cand if "elementwise" not in r["layout"] and
                "tap_reduce" not in r["layout"]] or cand
    reads = [r for r in cand if r["access"].endswith("_read")]
    writes = [r for r in cand if r["access"].endswith("_write")]
    if not reads or not writes:
        return fallback, fallback, "assumption row (no bank-model row)"

    def mean(rs):
        w = sum(r.get("instrs_per_wave", 1.0) for r in rs)
        return sum(r["ways"] * r.get("instrs_per_wave", 1.0) for r in rs) / max(w, 1e-9)
    return mean(reads), mean(writes), "bank model"


# ------------------------------------------------------------------ counts
def per_ktile_counts(kern: cdna_asm.Kernel, plan_k: dict, read_ways, write_ways,
                     write_rate) -> Tuple[KernelCounts, float]:
    lc = kern.loop_counts
    wtm = plan_k["bm"] // plan_k["warps_m"]
    wtn = plan_k["bn"] // plan_k["warps_n"]
    flops_per_ktile = 2.0 * wtm * wtn * plan_k["bk"]
    if plan_k["family"] == "tap_reduce" or plan_k["family"] == "implicit_gemm":
        trips_per_ktile = flops_per_ktile / lc.mfma_flops if lc.mfma_flops else 1.0
    else:
        trips_per_ktile = 1.0
    if abs(trips_per_ktile - round(trips_per_ktile)) > 1e-6 and abs(1 / trips_per_ktile -
                                                                     round(1 / trips_per_ktile)) > 1e-6:
        raise ModelError(f"{kern.name}: the loop's MFMA FLOPs ({lc.mfma_flops}) are not a whole "
                         f"number of K tiles ({flops_per_ktile} per wave)")
    s = trips_per_ktile  # loop trips per K tile (1/unroll)

    def wr(x):
        if isinstance(x, Range):
            return Range(x.opt / write_rate.opt if isinstance(write_rate, Range) else x.opt / write_rate,
                         x.pess / (write_rate.pess if isinstance(write_rate, Range) else write_rate),
                         x.at("nom") / (write_rate.at("nom") if isinstance(write_rate, Range) else write_rate))
        if isinstance(write_rate, Range):
            return Range(x / write_rate.opt, x / write_rate.pess, x / write_rate.at("nom"))
        return x / write_rate
    loop = LoopCounts(
        mma_cycles=lc.mfma_cycles * s, mma_instructions=sum(lc.mfma.values()) * s,
        mma_flops=lc.mfma_flops * s, lds_read_bytes=lc.lds_read_bytes * s,
        lds_write_bytes=lc.lds_write_bytes * s, lds_read_ways=read_ways,
        lds_write_ways=wr(write_ways), global_load_bytes=lc.global_load_bytes * s,
        valu=lc.valu * s, salu=(lc.salu + lc.smem) * s, nop_cycles=lc.nop_cycles * s,
        other_issue=(lc.memory + lc.branch + lc.waitcnt) * s, barriers=lc.barriers * s,
        lgkm_waits=lc.lgkm_waits * s, vm_waits=lc.vm_waits * s)

    def phase(c_short: cdna_asm.Counts, c_long: cdna_asm.Counts, exposures: float) -> PhaseCounts:
        # the longest path is the one that stores (the shortest skips every exec-masked store)
        return PhaseCounts(instructions=c_long.instructions, valu=c_long.valu,
                           mma_cycles=c_long.mfma_cycles, nop_cycles=c_long.nop_cycles,
                           global_load_bytes=c_long.global_load_bytes,
                           global_store_bytes=c_long.global_store_bytes,
                           lds_bytes=c_long.lds_read_bytes + c_long.lds_write_bytes,
                           barriers=c_long.barriers, latency_exposures=exposures)
    pro = phase(*kern.prologue, exposures=1.0)
    epi = phase(*kern.epilogue, exposures=1.0)
    kc = KernelCounts(name=kern.name, loop=loop, prologue=pro, epilogue=epi,
                      prefetch_distance=max(plan_k["stages"] - 1, 1))
    return kc, s


def blocks_per_cu(kern: cdna_asm.Kernel, plan_k: dict, target: str) -> int:
    waves = plan_k["threads"] // 64
    occ = kern.meta.get("occupancy")
    if not occ:
        raise ModelError(f"{kern.name}: no occupancy comment in the assembly")
    by_waves = (occ * 4) // waves
    lds = max(plan_k["lds_bytes"], kern.meta.get("lds", 0), 1)
    by_lds = LDS_PER_CU[target] // lds
    return max(min(by_waves, by_lds), 1)


def unique_bytes(p: dict) -> float:
    eb = 1 if p["dtype"] == "fp8" else 2
    k = p["kernel"]
    x = p["h"] * p["w"] * p["cin"] * eb
    taps = 4 if k["geometry"][3] == 2 else 9
    kk = taps * p["cin"] * eb
    k_pad = math.ceil(kk / 128) * 128
    w = p["cout"] * k_pad * (4 if k["geometry"][3] == 2 else 1)
    y = p["out_h"] * p["out_w"] * p["cout"] * 2  # bf16 output
    return float(x + w + y)


# ------------------------------------------------------------------ prediction
def predict_all(build: str, plan: dict, lds_rows, targets=("mi300x", "mi355x")) -> dict:
    res = {}
    for tname in targets:
        arch = machines.TARGETS[tname]
        asm = os.path.join(build, "kernels", "asm", f"conv_instances-{arch}.s")
        if not os.path.exists(asm):
            raise ModelError(f"missing {asm}: build the hip-root preset first")
        kernels = cdna_asm.parse_file(asm, arch)
        m = machines.machine(tname)
        fallback = machines.const(tname, "lds_ways_assumed")
        write_rate = machines.const(tname, "lds_write_rate")
        rows = []
        for p in plan["plans"]:
            k = p["kernel"]
            found = cdna_asm.match_plan(kernels, k, p["dtype"])
            if len(found) != 1:
                raise ModelError(f"{arch}: {p['id']} {p['dtype']} ({k['name']}) matches "
                                 f"{len(found)} kernels in the assembly, want exactly 1")
            kern = found[0]
            if kern.loop_counts is None:
                raise ModelError(f"{arch}: {kern.name}: no MFMA loop found")
            rw, ww, lds_src = lds_ways_for(lds_rows, arch, k, p["dtype"], fallback)
            kc, trips = per_ktile_counts(kern, k, rw, ww, write_rate)
            L = Launch(blocks=int(k["tiles"]), waves_per_block=k["threads"] // 64,
                       ktiles=int(k["k_tiles"]), blocks_per_unit=blocks_per_cu(kern, k, arch),
                       unique_bytes=unique_bytes(p) / k["launches"], flops=p["flops"])
            one = predict(kc, L, m, name=p["id"])
            pred = combine([one] * k["launches"], p["id"]) if k["launches"] > 1 else one
            rows.append({"plan": p, "kernel": kern, "counts": kc, "launch": L, "pred": pred,
                         "lds_source": lds_src, "trips_per_ktile": trips})
        res[tname] = rows
    return res


def totals(rows: List[dict], dtype: str, resolution: int) -> Dict[str, float]:
    t = {"opt": 0.0, "nom": 0.0, "pess": 0.0, "calls": 0}
    for r in rows:
        p = r["plan"]
        if p["dtype"] != dtype or p["resolution"] != resolution:
            continue
        t["calls"] += p["calls"]
        for end in ("opt", "nom", "pess"):
            t[end] += p["calls"] * getattr(r["pred"], end).time_us
    return t


def shape_json(r: dict) -> dict:
    p, pred = r["plan"], r["pred"]
    return {"id": p["id"], "dtype": p["dtype"], "calls": p["calls"], "resolution": p["resolution"],
            "kernel": p["kernel"]["name"], "us": round(pred.time_us, 2),
            "us_range": [round(pred.opt.time_us, 2), round(pred.pess.time_us, 2)],
            "bound": pred.bound, "bound_pess": pred.pess.bound,
            "tflops": round(p["flops"] / (pred.time_us * 1e-6) / 1e12, 1),
            "bounds_us": {k: round(v, 2) for k, v in pred.nom.bounds_us.items()}}


def build_json(res: dict, lds_src: str) -> dict:
    out = {}
    for tname, rows in res.items():
        b58, f58 = totals(rows, "bf16", 1024), totals(rows, "fp8", 1024)
        b1328 = totals(rows, "bf16", 1328)
        f1328 = totals(rows, "fp8", 1328)
        if b58["calls"] != 58 or b1328["calls"] != 28:
            raise ModelError(f"call counts {b58['calls']} / {b1328['calls']}, want 58 / 28")
        ms = lambda t, e: round(t[e] / 1e3, 3)  # noqa: E731
        out[tname] = {
            "bf16_58_ms": ms(b58, "nom"), "bf16_58_ms_range": [ms(b58, "opt"), ms(b58, "pess")],
            "fp8_58_ms": ms(f58, "nom"), "fp8_58_ms_range": [ms(f58, "opt"), ms(f58, "pess")],
            "bf16_hot1328_ms": ms(b1328, "nom"),
            "bf16_hot1328_ms_range": [ms(b1328, "opt"), ms(b1328, "pess")],
            "fp8_hot1328_ms": ms(f1328, "nom"),
            "shapes": [shape_json(r) for r in rows],
        }
    vpath = os.path.join(HERE, "validation.json")
    validation = {}
    if os.path.exists(vpath):
        with open(vpath) as f:
            validation = json.load(f)
    out["validation"] = validation
    out["anchors"] = ANCHORS
    out["lds_bank_source"] = lds_src or "assumption row"
    return out


# ------------------------------------------------------------------ documents
def render_md(res: dict, js: dict, lds_src: str) -> str:
    L = []
    a = L.append
    a("# Predicted AMD performance (static CDNA model)\n")
    a("Regenerate: `python3 bench/cdna_model/predict.py --build build/hip-root` (after building the "
      "hip-root preset: it reads `kernels/asm/conv_instances-gfx9{42,50}.s` and `dispatch-plan.json`). "
      "No AMD GPU was used: every number below is a prediction from the compiled assembly, the "
      "dispatch plan (`vaeconv::which_kernel`) and the constants table, not a measurement. "
      "The model: `bench/cdna_model/model.py` (its docstring states every formula).\n")
    a("Each time is the nominal value with its range [optimistic, pessimistic]; the bound is the "
      "term that sets the nominal time (MFMA issue, issue = the SIMD's single issue port, LDS, L1 = "
      "the CU's global-load path, latency = the exposed global-load wait of a K tile given the "
      "resident blocks, L2, HBM, tail = a partial last round of blocks, prologue/epilogue, launch).\n")
    a("## Totals\n")
    a("| target | bf16 58-call 1024² (ms) | fp8 58-call 1024² (ms) | bf16 28-call hot 1328² (ms) |")
    a("|---|---|---|---|")
    for t in ("mi300x", "mi355x"):
        j = js[t]
        a(f"| {t.upper()} | {j['bf16_58_ms']:.2f} [{j['bf16_58_ms_range'][0]:.2f}, "
          f"{j['bf16_58_ms_range'][1]:.2f}] | {j['fp8_58_ms']:.2f} [{j['fp8_58_ms_range'][0]:.2f}, "
          f"{j['fp8_58_ms_range'][1]:.2f}] | {j['bf16_hot1328_ms']:.2f} "
          f"[{j['bf16_hot1328_ms_range'][0]:.2f}, {j['bf16_hot1328_ms_range'][1]:.2f}] |")
    a("")
    a("Anchors (their own published MI355X runs of the 58-call set): FlyDSL 12.59 ms, MIOpen "
      "18.77 ms; the bf16 roofline at 2.5 PFLOP/s is 2.7 ms. "
      f"Predicted MI355X bf16: {js['mi355x']['bf16_58_ms']:.2f} ms = "
      f"{js['mi355x']['bf16_58_ms'] / 12.59:.2f} x FlyDSL, "
      f"{js['mi355x']['bf16_58_ms'] / 18.77:.2f} x MIOpen, "
      f"{js['mi355x']['bf16_58_ms'] / 2.7:.1f} x the roofline.\n")
    for t in ("mi300x", "mi355x"):
        arch = machines.TARGETS[t]
        a(f"## {t.upper()} ({arch}) per shape\n")
        a("| shape | dtype | calls | kernel | blocks x K tiles | blocks/CU | µs | range µs | bound | "
          "TFLOP/s | MFMA µs | LDS µs | L1 µs | latency µs | L2 µs | HBM µs |")
        a("|---|---|---:|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in res[t]:
            p, pred, Lh = r["plan"], r["pred"], r["launch"]
            b = pred.nom.bounds_us
            k = p["kernel"]
            blk = f"{k['launches']}x{Lh.blocks}x{Lh.ktiles}" if k["launches"] > 1 else \
                f"{Lh.blocks}x{Lh.ktiles}"
            a(f"| {p['id']} | {p['dtype']} | {p['calls']} | {k['name']} | {blk} | "
              f"{Lh.blocks_per_unit} | {pred.time_us:.1f} | {pred.opt.time_us:.1f}-"
              f"{pred.pess.time_us:.1f} | {pred.bound} | "
              f"{p['flops'] / (pred.time_us * 1e-6) / 1e12:.0f} | {b['MFMA']:.1f} | {b['LDS']:.1f} | "
              f"{b.get('L1', 0):.1f} | {b['latency']:.1f} | {b['L2']:.1f} | {b['HBM']:.1f} |")
        a("")
        a(f"Per K tile and wave, main loop ({arch}):\n")
        a("| kernel | MFMA (per K tile) | MFMA cycles | LDS read / write B | LDS ways r / w | "
          "global B | VALU | SALU | s_nop cyc | barriers | lgkm waits | prologue / epilogue instr |")
        a("|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
        seen = set()
        for r in res[t]:
            kern, kc = r["kernel"], r["counts"]
            if kern.name in seen:
                continue
            seen.add(kern.name)
            c = kc.loop
            mf = ", ".join(f"{n.replace('v_mfma_f32_', '')} x{v * r['trips_per_ktile']:g}"
                           for n, v in kern.loop_counts.mfma.items())
            fw = lambda x: machines.fmt(x) if isinstance(x, Range) else f"{x:.2f}"  # noqa: E731
            a(f"| {r['plan']['kernel']['name']} | {mf} | {c.mma_cycles:g} | "
              f"{c.lds_read_bytes:g} / {c.lds_write_bytes:g} | {fw(c.lds_read_ways)} / "
              f"{fw(c.lds_write_ways)} | {c.global_load_bytes:g} | {c.valu:g} | {c.salu:g} | "
              f"{c.nop_cycles:g} | {c.barriers:g} | {c.lgkm_waits:g} | "
              f"{kc.prologue.instructions:g} / {kc.epilogue.instructions:g} |")
        a("")
    a("## Machine constants and assumptions\n")
    a("Ranges are `nominal [optimistic, pessimistic]`. Rows marked ASSUMPTION are not published "
      "for this hardware.\n")
    a(machines.markdown_table())
    a("")
    a(f"LDS bank-conflict ways: {lds_src or 'the assumption row (no bank model output found)'} "
      "(main-loop reads: the instruction-weighted mean of the MFMA A and B reads; writes: the "
      "stage writes; divided by `lds_write_rate` for the write bandwidth).\n")
    a("Model assumptions (beyond the table):\n")
    a("- Counts of one main-loop trip include both sides of every branch inside it (exec-masked "
      "code issues whenever any lane is active); the gather's tap-carry inner loop counts one trip "
      "per K tile. For the element-wise gather (Cin = 3) that is most of the loop.")
    a("- The prologue and epilogue are the longest instruction path outside the loop (the path "
      "that stores the whole tile); each waits for one global round trip. Optimistic: they overlap "
      "other blocks' main loops except in the first and last round; pessimistic and nominal: "
      "every round pays them in series.")
    a("- A K tile's global loads are issued `stages - 1` tiles ahead (2 stages: one tile), so a "
      "block's K tile takes at least the global latency over that distance; resident blocks hide "
      "each other's wait (blocks/CU from the compiler's occupancy and the LDS per CU).")
    a("- L2 traffic is the bytes every block's loads request; HBM traffic is input + weights + "
      "output once (optimistically from the Infinity Cache when they fit it).")
    a("- Launch overhead is charged per launch (the upsample convs run four phase launches).\n")
    a("## Validation\n")
    v = js.get("validation") or {}
    if v:
        a("Filled from `bench/cdna_model/validation.json`:\n")
        a("```json")
        a(json.dumps(v, indent=2))
        a("```\n")
    else:
        a("Not yet filled: `bench/cdna_model/validation.json` is a stub (the H200 check of the "
          "method on NVIDIA SASS and the public-kernel comparisons are separate work).\n")
    a("## Weakest assumptions and the measurement that settles each\n")
    a("1. The exposed global-load latency of a K tile under load (`global_latency_ns`, 300-800 ns) "
      "with the shipped 2-stage pipeline and 1-2 blocks per CU: it is the bound of most shapes. "
      "Settle: time the 96→96 1024² conv with `ktiles` forced small vs large on one MI300X/MI355X, "
      "or rocprof's `MemUnitStalled` / wave wait cycles on one conv.")
    a("2. Whether prologue and epilogue overlap other workgroups' main loops: one rocprof "
      "timeline (SQ_BUSY_CYCLES vs SQ_WAVE_CYCLES) of the 192→192 512² conv.")
    a("3. VALU/MFMA co-issue at one wave per SIMD (`mma_overlap`): the MFMA busy counter "
      "(SQ_VALU_MFMA_BUSY_CYCLES) of the 384→384 128² conv.")
    a("4. The L2 vs Infinity Cache split of the blocks' re-reads (`l2_gbs`): TCC hit rate of the "
      "96→96 1024² conv.")
    a("5. LDS write bandwidth on gfx950 and the assumed write phases: one LDS microbenchmark.\n")
    return "\n".join(L) + "\n"


def render_resource_section(res: dict) -> str:
    L = ["", "## Predicted time per kernel and shape (bench/cdna_model, static model)", "",
         "| target | shape | dtype | kernel | µs [range] | bound |", "|---|---|---|---|---|---|"]
    for t, rows in res.items():
        for r in rows:
            p, pred = r["plan"], r["pred"]
            L.append(f"| {machines.TARGETS[t]} | {p['id']} | {p['dtype']} | {p['kernel']['name']} | "
                     f"{pred.time_us:.1f} [{pred.opt.time_us:.1f}, {pred.pess.time_us:.1f}] | "
                     f"{pred.bound} |")
    return "\n".join(L) + "\n"


MARK = "\n## Predicted time per kernel and shape (bench/cdna_model, static model)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "hip-root"))
    ap.add_argument("--plan", default=None, help="dispatch_plan JSON (default: <build>/dispatch-plan.json)")
    ap.add_argument("--md", default=os.path.join(ROOT, "docs", "amd-performance.md"))
    ap.add_argument("--json", default=os.path.join(ROOT, "docs", "amd-performance.json"))
    ap.add_argument("--resource-report", action="store_true",
                    help="also write the predicted-time section into <build>/resource-report.md")
    ap.add_argument("--no-docs", action="store_true", help="print the totals only")
    args = ap.parse_args(argv)
    try:
        plan = load_plan(args.build, args.plan)
        lds_rows, lds_src = load_lds_ways(args.build)
        res = predict_all(args.build, plan, lds_rows)
        js = build_json(res, lds_src)
    except ModelError as e:
        print(f"cdna_model: {e}", file=sys.stderr)
        return 1
    for t in ("mi300x", "mi355x"):
        j = js[t]
        print(f"{t}: bf16 58 calls {j['bf16_58_ms']:.2f} ms {j['bf16_58_ms_range']}, fp8 "
              f"{j['fp8_58_ms']:.2f} ms {j['fp8_58_ms_range']}, bf16 hot 1328 "
              f"{j['bf16_hot1328_ms']:.2f} ms")
    if not args.no_docs:
        with open(args.json, "w") as f:
            json.dump(js, f, indent=1)
            f.write("\n")
        with open(args.md, "w") as f:
            f.write(render_md(res, js, lds_src))
    if args.resource_report:
        rr = os.path.join(args.build, "resource-report.md")
        text = open(rr).read() if os.path.exists(rr) else "# vaeconv kernel resource report\n"
        if MARK in text:
            text = text[:text.index(MARK)]
        with open(rr, "w") as f:
            f.write(text.rstrip("\n") + "\n" + render_resource_section(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
