"""Machine constants of MI300X (gfx942) and MI355X (gfx950), one row each with its source.

Every number the model uses lives here (rendered into docs/amd-performance.md by predict.py).
A Range is [optimistic, pessimistic] (nominal in the middle unless given); the pessimistic end
takes the unfavourable published or measured value. Rows whose source says ASSUMPTION are not
published for this hardware: they are the model's weakest points (docs: "Weakest assumptions").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Union

import l2_reuse
from model import Machine, Range

Num = Union[float, int, Range]

SRC_SPECS = "ROCm docs, AMD GPU specifications (rocm.docs.amd.com/en/latest/reference/gpu-specs.html)"
SRC_NOTES = "shared/notes/cdna.md (AMD matrix instruction calculator, CDNA3; CK lds_bank_conflicts.rst; ROCm blog FP8 GEMM on CDNA4)"
SRC_CDNA3_WP = "AMD CDNA 3 architecture white paper (MI300X: 2.1 GHz peak engine clock, 5.3 TB/s HBM3, 256 MB Infinity Cache)"
SRC_IC = "AMD MI300X launch: Infinity Cache 17 TB/s peak (servethehome.com/amd-instinct-mi300x-gpu-and-mi300a-apus-launched-for-ai-era/3)"
SRC_CDNA4 = "AMD CDNA 4 / MI350 at Hot Chips 2025 (2.4 GHz peak, 8 XCDs x 4 MB L2, LDS doubled) and ISSCC 2026 (32 CUs per XCD)"
SRC_PUBLIC = "bench/cdna_model/public_kernels.py (published MI355X GEMM times, cited there)"
SRC_HK_L2 = ("HipKittens (arXiv 2511.08083) Table 4: measured MI355X L2 hit rates of six GEMM grid "
             "schedules (bench/cdna_model/data/hipkittens-l2.json)")
_HIT_PESS, _HIT_NOM = l2_reuse.hit_scale()
SRC_CC = "Chips and Cheese, 'Testing AMD's Giant MI300X' (chipsandcheese.com/p/testing-amds-giant-mi300x): pointer-chase latencies of L2 / Infinity Cache / HBM"


@dataclass
class Row:
    key: str
    what: str
    mi300x: Num
    mi355x: Num
    unit: str
    source: str


ROWS: List[Row] = [
    Row("units", "compute units", 304, 256, "CU", SRC_SPECS),
    Row("schedulers_per_unit", "SIMDs per CU", 4, 4, "", SRC_NOTES),
    Row("clock_ghz", "engine clock under MFMA load", Range(2.1, 1.34), Range(2.4, 1.54),
        "GHz", "optimistic: the peak engine clocks (" + SRC_CDNA3_WP + "; " + SRC_CDNA4 + "). "
        "Pessimistic: no sustained MFMA clock is published, so the end is the best published "
        "achieved share of the dense peak: HipKittens BF16 8192^3 1610 TFLOP/s = 64 % of 2.5 PF, "
        "ROCm blog FP8 8192^3 3204 TFLOP/s = 64 % of 5 PF on MI355X (" + SRC_PUBLIC + "): "
        "0.64 x 2.4 GHz; MI300X: ASSUMPTION the same 64 % of 2.1 GHz (AMD's 'Measuring "
        "Max-Achievable FLOPs, part 2' ROCm blog publishes MI300X's achieved GEMM rate and median "
        "clock: the figure that would replace it). Nominal: the midpoint"),
    Row("mma_overlap", "share of VALU/SALU issue hidden under a running MFMA", Range(1.0, 0.0, 0.5),
        Range(1.0, 0.0, 0.5), "", SRC_NOTES + " (VALU co-issues for 28 of 32 cycles of a "
        "32x32x8 MFMA, from other waves); pessimistic: no overlap (ASSUMPTION: one wave per SIMD "
        "at the shipped occupancy may not supply the independent VALU work)"),
    Row("valu_cycles", "SIMD cycles per wave64 VALU instruction", 4, 4, "cycles",
        "16-lane SIMD, wave64 = 4 passes (AMD CDNA 3 ISA reference guide, 'wavefront executes "
        "over 4 cycles'; " + SRC_NOTES + ")"),
    Row("salu_cycles", "cycles per SALU instruction", 1, 1, "cycles", "CDNA3 ISA: scalar unit issues one per cycle"),
    Row("other_issue_cycles", "issue cycles of a memory / branch instruction", Range(1, 4, 2),
        Range(1, 4, 2), "cycles", "ASSUMPTION: 1 issue slot; pessimistic 4 (a wave64 vector memory "
        "instruction's address processing, 16 lanes per cycle)"),
    Row("lds_bytes_per_clk", "LDS bandwidth per CU", 128, 256, "B/clk", SRC_NOTES),
    Row("lds_latency_cycles", "LDS load-to-use latency", Range(64, 128, 96), Range(64, 128, 96),
        "cycles", "ASSUMPTION: CDNA LDS latency is 64+ cycles (AMD GCN/CDNA optimization guides); "
        "pessimistic doubled under bank conflicts and load"),
    Row("barrier_cycles", "s_barrier cost when the waves arrive together", Range(16, 64, 32),
        Range(16, 64, 32), "cycles", "ASSUMPTION: not published"),
    Row("l1_bytes_per_clk", "vector L1 / texture-address bandwidth per CU (global loads)",
        Range(128, 64, 64), Range(128, 64, 128), "B/clk",
        SRC_CDNA3_WP + " (vector L1 64 B/clk/CU, 128 B cache line); CDNA4 doubles the L1 read "
        "path for some loads: ASSUMPTION for gfx950 nominal"),
    Row("l2_gbs", "L2 bandwidth: the 8 per-XCD L2s together (the blocks' tile fetches)",
        Range(34400, 17200, 25800), Range(39300, 19700, 29500), "GB/s",
        "optimistic: L2 peak 128 B/clk x 16 channels = 2 KB/clk per XCD x 8 XCDs x the peak clock ("
        + SRC_CDNA3_WP + "; CDNA4 keeps 4 MB L2 per XCD, " + SRC_CDNA4 + ": the same per-clock "
        "width ASSUMED); pessimistic: ASSUMPTION half of that peak (the MALL's figure); nominal: "
        "the midpoint. What misses every XCD's L2 is the `MALL` bound, not this row"),
    Row("l2_domains", "separate L2s the CUs are spread over (XCDs; workgroups round-robin)", 8, 8,
        "", SRC_CDNA3_WP + "; " + SRC_CDNA4 + " (8 XCDs). Used for the MALL traffic floor: every "
        "XCD reads every distinct input and weight byte once"),
    Row("hbm_gbs", "HBM bandwidth", Range(5300, 4000, 4300), Range(8000, 6000, 6400), "GB/s",
        SRC_CDNA3_WP + "; " + SRC_CDNA4 + " (8 TB/s HBM3E). Nominal/pessimistic: ASSUMPTION 80 % / "
        "75 % of peak achievable by a streaming kernel"),
    Row("mall_gbs", "Infinity Cache (MALL) bandwidth: the XCDs' L2 misses",
        Range(17200, 12000, 14600), Range(17200, 12000, 14600), "GB/s",
        SRC_IC + " (CDNA4: ASSUMPTION, the same); pessimistic: ASSUMPTION 70 % of the peak"),
    Row("l2_window_hit_scale", "measured / modelled L2 hit rate (l2_reuse.py's window model)",
        Range(1.0, _HIT_PESS, _HIT_NOM), Range(1.0, _HIT_PESS, _HIT_NOM), "x",
        SRC_HK_L2 + ", each predicted by the window model (l2_reuse.calibration): pessimistic the "
        "smallest ratio, nominal the median; CDNA3 keeps 4 MB of L2 per XCD too (" + SRC_CDNA3_WP
        + "), the same scale ASSUMED for MI300X (38 CUs per XCD)"),
    Row("mall_bytes", "Infinity Cache capacity", 256 * 2**20, 256 * 2**20, "bytes", SRC_SPECS),
    Row("global_latency_ns", "global load round trip under load (one K tile's exposed wait)",
        Range(300, 800, 500), Range(300, 800, 500), "ns",
        SRC_CC + ": hits in L2 / Infinity Cache a few hundred ns, HBM several hundred more; "
        "under load: ASSUMPTION (the issue's first weakest point)"),
    Row("launch_overhead_us", "gap between back-to-back launches on one stream",
        Range(1.5, 5.0, 3.0), Range(1.5, 5.0, 3.0), "us", "ASSUMPTION (HIP back-to-back kernel "
        "launch gaps of a few microseconds are commonly reported; not measured here)"),
    Row("peak_flops_bf16", "dense bf16 MFMA peak", 1.307e15, 2.5e15, "FLOP/s",
        SRC_NOTES + " (MI300X 1.3 PF, MI355X 2.5 PF)"),
    Row("peak_flops_fp8", "dense fp8 MFMA peak", 2.615e15, 5.0e15, "FLOP/s", SRC_NOTES),
    Row("lds_ways_assumed", "LDS bank-conflict factor when the bank model has no row",
        Range(1.0, 2.0, 1.0), Range(1.0, 2.0, 1.0), "x",
        "ASSUMPTION row (range 1..2), replaced per layout by build/*/lds-banks.json when present"),
    Row("lds_write_rate", "LDS write bandwidth relative to read", Range(1.0, 0.5, 1.0),
        Range(0.5, 0.5, 0.5), "x",
        "gfx942: writes 8 lanes x 16 B per phase = the 128 B/clk read rate (" + SRC_NOTES + "), "
        "pessimistic half (ASSUMPTION); gfx950: writes in 128 B phases against 256 B/clk reads "
        "(HipKittens' measured ds_write_b64 phases, arXiv 2511.08083)"),
]

TARGETS = {"mi300x": "gfx942", "mi355x": "gfx950"}


def row(key: str) -> Row:
    for r in ROWS:
        if r.key == key:
            return r
    raise KeyError(key)


def const(target: str, key: str, overrides: Dict[str, Num] = None) -> Num:
    if overrides and key in overrides:
        return overrides[key]
    return getattr(row(key), target)


def machine(target: str, overrides: Dict[str, Num] = None) -> Machine:
    """The model's Machine for 'mi300x' or 'mi355x' (overrides: row key -> value, for the
    sensitivity study only)."""
    c = lambda k: const(target, k, overrides)  # noqa: E731
    return Machine(
        name=target, units=int(c("units")), schedulers_per_unit=int(c("schedulers_per_unit")),
        clock_ghz=c("clock_ghz"), mma_overlap=c("mma_overlap"), valu_cycles=c("valu_cycles"),
        salu_cycles=c("salu_cycles"), other_issue_cycles=c("other_issue_cycles"),
        lds_bytes_per_clk=c("lds_bytes_per_clk"), lds_latency_cycles=c("lds_latency_cycles"),
        barrier_cycles=c("barrier_cycles"), l2_gbs=c("l2_gbs"), hbm_gbs=c("hbm_gbs"),
        global_latency_ns=c("global_latency_ns"), launch_overhead_us=c("launch_overhead_us"),
        mall_gbs=c("mall_gbs"), mall_bytes=float(c("mall_bytes")),
        peak_flops_dense=c("peak_flops_bf16"), l1_bytes_per_clk=c("l1_bytes_per_clk"),
        l2_domains=int(c("l2_domains")))


def fmt(v: Num) -> str:
    def f(x):
        return f"{x:.4g}"
    if isinstance(v, Range):
        nom = v.at("nom")
        return f"{f(nom)} [{f(v.opt)}, {f(v.pess)}]"
    return f(v)


def markdown_table() -> str:
    out = ["| constant | MI300X (gfx942) | MI355X (gfx950) | unit | source |", "|---|---|---|---|---|"]
    for r in ROWS:
        out.append(f"| {r.what} (`{r.key}`) | {fmt(r.mi300x)} | {fmt(r.mi355x)} | {r.unit} | {r.source} |")
    return "\n".join(out)
