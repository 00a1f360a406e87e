"""Machine constants of the NVIDIA Hopper cards the model's method is validated on (H100 SXM,
H200 SXM), one row each with its source, and the SASS cost table's ranged rows.

Used only by the NVIDIA validation (validate_nvidia.py): the same core (model.py) and the same
rules as for CDNA, fed with SASS counts (sass.py). A Range is [optimistic, pessimistic] (nominal
in the middle unless given). Rows whose source says ASSUMPTION are not published for this chip.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Union

from model import Machine, Range
from sass import NvidiaCosts

Num = Union[float, int, Range]

SRC_ANCHORS = ("shared/anchors/README.md: register-only mma.sync microbenchmark on the H200 "
               "(bf16 m16n8k16 ~645 TFLOP/s), device copy ~4.3 TB/s")
SRC_KINDS = ("device KINDS.md (this workplace): H100 80GB HBM3, 132 SMs, 50 MB L2, copy ~3.0 TB/s; "
             "H200, 132 SMs, 60 MB L2, copy ~4.3 TB/s, SM clock 1980 MHz after matrix products")
SRC_RUN = "bench/cdna_model/data/clocks-mma-h100.csv: nvidia-smi SM clock 1980 MHz through the measured bench"
SRC_WP = "NVIDIA H100 Tensor Core GPU Architecture whitepaper (4 SM sub-partitions; 256 KB L1/shared per SM, 228 KB shared; 33 TB/s L1/shared aggregate = 128 B/clk/SM)"
SRC_GUIDE = ("CUDA C++ Programming Guide, 'Arithmetic Instructions' throughput table, compute "
             "capability 9.0: 128 FP32, 64 int add/logic/shift/compare, 16 type conversions "
             "results per clock per SM")
SRC_LUO = ("Luo et al., 'Benchmarking and Dissecting the Nvidia Hopper GPU Architecture', "
           "arXiv 2402.13499 (shared-memory and global-memory latencies of Hopper)")
SRC_A100 = "NVIDIA A100 whitepaper (L2 read bandwidth 5120 B/clk)"
SRC_CC = "Chips and Cheese, 'Nvidia's H100: Funny L2, and Tons of Bandwidth' (H100 PCIe L2 measurements)"


@dataclass
class Row:
    key: str
    what: str
    h100: Num
    h200: Num
    unit: str
    source: str


CLOCK_GHZ = 1.98
# Measured mma.sync peak (TFLOP/s) -> cycles per FLOP on one scheduler at CLOCK_GHZ. Hopper runs
# f16 and bf16 HMMA.16816 at one rate; the e4m3 m16n8k32 of the cuda-mma build is lowered to two
# f16 HMMA.16816 after F2FP unpacks (its SASS), so the same row serves both.
MMA_SYNC_PEAK_TFLOPS = 645.0
SMS = 132
SCHEDULERS = 4


def mma_cycles_per_flop(peak_tflops: float = MMA_SYNC_PEAK_TFLOPS, clock_ghz: float = CLOCK_GHZ) -> float:
    flops_per_sched_clk = peak_tflops * 1e12 / (SMS * SCHEDULERS) / (clock_ghz * 1e9)
    return 1.0 / flops_per_sched_clk


ROWS: List[Row] = [
    Row("units", "SMs", SMS, SMS, "SM", SRC_KINDS),
    Row("schedulers_per_unit", "SM sub-partitions (warp schedulers)", SCHEDULERS, SCHEDULERS, "", SRC_WP),
    Row("clock_ghz", "SM clock under load", CLOCK_GHZ, CLOCK_GHZ, "GHz", SRC_RUN + "; " + SRC_KINDS),
    Row("mma_cycles_per_flop", "HMMA.16816 (bf16 / f16): scheduler cycles per FLOP "
        "(4096 FLOP = %.2f cycles)" % (4096 * mma_cycles_per_flop()),
        mma_cycles_per_flop(), mma_cycles_per_flop(), "cycles",
        SRC_ANCHORS + " (H200; ASSUMPTION: the H100 SXM's SMs and clock give the same rate, as "
        "their wgmma GEMM rates agree within 1 %, KINDS.md)"),
    Row("mma_overlap", "share of ALU issue hidden under a running HMMA", Range(1.0, 0.5, 1.0),
        Range(1.0, 0.5, 1.0), "", "the tensor pipe runs while the scheduler issues other "
        "instructions (" + SRC_WP + "); pessimistic 0.5: ASSUMPTION (3 warps per scheduler may "
        "not supply independent work)"),
    Row("valu_cycles", "core valu unit (per-class costs below are folded into the count)", 1, 1,
        "cycles", "sass.py counts ALU issue in cycles"),
    Row("valu_int_cycles", "integer / logic / compare / move instruction", Range(1.0, 2.0, 1.5),
        Range(1.0, 2.0, 1.5), "cycles", SRC_GUIDE + ": 16 integer lanes per scheduler = 2 cycles "
        "a warp (pessimistic); IMAD and IADD3/LOP3 use two pipes that alternate (1, optimistic)"),
    Row("conversion_cycles", "F2F / F2FP / I2F ... conversion", Range(4.0, 8.0, 8.0),
        Range(4.0, 8.0, 8.0), "cycles", SRC_GUIDE + ": 16 conversions/clk/SM = 4 per "
        "sub-partition = 8 cycles a warp instruction, the only published figure, so nominal and "
        "pessimistic; optimistic: ASSUMPTION a packed F2FP at twice that rate"),
    Row("salu_cycles", "uniform-datapath instruction", 1, 1, "cycles", "ASSUMPTION: one issue slot"),
    Row("other_issue_cycles", "memory / control / HMMA issue slot", 1, 1, "cycles",
        "one instruction per cycle per scheduler (" + SRC_WP + ")"),
    Row("lds_bytes_per_clk", "shared-memory bandwidth per SM (ldmatrix reads + cp.async fills)",
        128, 128, "B/clk", SRC_WP),
    Row("lds_latency_cycles", "shared load (LDSM) to use", Range(23, 40, 30), Range(23, 40, 30),
        "cycles", SRC_LUO + "; pessimistic under load: ASSUMPTION"),
    Row("barrier_cycles", "__syncthreads when the warps arrive together", Range(20, 60, 30),
        Range(20, 60, 30), "cycles", "ASSUMPTION: not published"),
    Row("l2_gbs", "L2 bandwidth serving the blocks' cp.async loads", Range(10100, 5500),
        Range(10100, 5500), "GB/s", "optimistic: " + SRC_A100 + " at the Hopper clock "
        "(ASSUMPTION: Hopper keeps at least Ampere's per-clock L2 bandwidth); pessimistic: the "
        "order of " + SRC_CC + " (ASSUMPTION: not read off for the SXM part)"),
    Row("hbm_gbs", "HBM bandwidth", Range(3350, 3000), Range(4800, 4300), "GB/s",
        "datasheets (H100 SXM 3.35 TB/s, H200 4.8 TB/s) and the copies measured here "
        "(" + SRC_KINDS + ")"),
    Row("global_latency_ns", "global load round trip under load (one K tile's exposed wait)",
        Range(150, 600, 300), Range(150, 600, 300), "ns",
        SRC_LUO + " (pointer-chase latencies of L2 and DRAM: a few hundred cycles); under load: "
        "ASSUMPTION"),
    Row("launch_overhead_us", "launch + event gap of one timed kernel", Range(2.0, 5.0, 3.0),
        Range(2.0, 5.0, 3.0), "us", "ASSUMPTION (CUDA launch gaps of a few microseconds)"),
]

# Occupancy limits per SM (compute capability 9.0): CUDA C++ Programming Guide, 'Technical
# Specifications per Compute Capability'.
REGS_PER_SM = 65536
REG_ALLOC_UNIT = 256        # registers, per warp
MAX_WARPS_PER_SM = 64
MAX_BLOCKS_PER_SM = 32
SMEM_PER_SM = 228 * 1024
SMEM_RESERVED_PER_BLOCK = 1024


def blocks_per_sm(regs_per_thread: int, threads: int, smem_bytes: int) -> int:
    warps = (threads + 31) // 32
    per_warp = -(-regs_per_thread * 32 // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    by_regs = (REGS_PER_SM // per_warp) // warps if per_warp else MAX_BLOCKS_PER_SM
    by_smem = SMEM_PER_SM // (smem_bytes + SMEM_RESERVED_PER_BLOCK)
    by_warps = MAX_WARPS_PER_SM // warps
    return max(0, min(by_regs, by_smem, by_warps, MAX_BLOCKS_PER_SM))


def _col(card: str, overrides: Optional[Dict[str, Num]] = None) -> Dict[str, Num]:
    c = {r.key: getattr(r, card) for r in ROWS}
    c.update(overrides or {})
    return c


def machine(card: str, overrides: Optional[Dict[str, Num]] = None) -> Machine:
    """The card's constants; overrides (row key -> value) for the sensitivity study only."""
    c = _col(card, overrides)
    return Machine(
        name={"h100": "H100 SXM (80GB HBM3)", "h200": "H200 SXM"}[card],
        units=c["units"], schedulers_per_unit=c["schedulers_per_unit"], clock_ghz=c["clock_ghz"],
        mma_overlap=c["mma_overlap"], valu_cycles=c["valu_cycles"], salu_cycles=c["salu_cycles"],
        other_issue_cycles=c["other_issue_cycles"], lds_bytes_per_clk=c["lds_bytes_per_clk"],
        lds_latency_cycles=c["lds_latency_cycles"], barrier_cycles=c["barrier_cycles"],
        l2_gbs=c["l2_gbs"], hbm_gbs=c["hbm_gbs"], global_latency_ns=c["global_latency_ns"],
        launch_overhead_us=c["launch_overhead_us"],
        peak_flops_dense=MMA_SYNC_PEAK_TFLOPS * 1e12)


def costs(card: str, overrides: Optional[Dict[str, Num]] = None) -> NvidiaCosts:
    c = _col(card, overrides)
    return NvidiaCosts(mma_cycles_per_flop=c["mma_cycles_per_flop"],
                       valu_int_cycles=c["valu_int_cycles"],
                       conversion_cycles=c["conversion_cycles"])
