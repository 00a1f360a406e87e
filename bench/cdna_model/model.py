"""The architecture-neutral core of the static performance model: counts -> time.

Nothing in this module knows about AMD or NVIDIA. A front-end (cdna_asm.py for the AMDGPU
assembly; another one may read SASS) turns a compiled kernel into `KernelCounts`, a dispatch plan
turns a conv into `Launch`, and a `Machine` holds the hardware constants. `predict()` combines
them into a time range and names the bound.

Vocabulary (the same on every target):
  unit      a CU (AMD) or an SM (NVIDIA): what a workgroup / block runs on.
  scheduler a SIMD (AMD, 4 per CU) or an SM sub-partition (NVIDIA, 4 per SM): issues one
            instruction per cycle from one of its waves.
  wave      the thread group that issues one instruction (AMD wave64, NVIDIA warp32).
  K tile    one trip of the main loop (BK of the GEMM's K per block).

Counts are PER WAVE and PER K TILE for the main loop (`LoopCounts`), and per wave for the code
before and after it (`PhaseCounts`). Global bytes are what the wave's loads request (the L2 /
L1 traffic); unique bytes of the whole conv (the HBM traffic) are in `Launch`.

The model, per unit (all waves of one block spread evenly over the schedulers):
  throughput bounds, cycles per block-K-tile on one unit (and L1 = waves * global_load_bytes /
  l1_bytes_per_clk where the machine sets it):
    mfma    = waves * mma_cycles / schedulers
    issue   = waves * (mma_cycles*(1-overlap) + valu*valu_cycles + salu*salu_cycles + nop_cycles
                       + other_issue) / schedulers   (the scheduler's single issue port; `overlap`
                       is the share of VALU/SALU cycles hidden under a running matrix instruction;
                       the max with mfma is taken too)
    lds     = waves * (read_bytes*read_ways + write_bytes*write_ways) / lds_bytes_per_clk
  the latency chain, cycles per K tile of ONE block (it does not shrink with more blocks, it
  is hidden by them). A pipelined K loop (`stages` buffers, one barrier per K tile) issues the
  loads of a later tile before it works on the current one, so the global wait overlaps the
  block's OWN work on the tile, and the rest of the tile's chain (LDS waits, the barrier) comes
  after both, in series:
    own     = max(throughput terms) for this block alone on the unit
    latency = max(global_latency / prefetch_distance, own) + lds_waits + barriers*barrier_cycles
    lds_waits = the sum over the K tile's LDS waits (s_waitcnt lgkmcnt / NVIDIA scoreboard waits
              on shared loads) of max(lds_latency - gap, 0), gap = the issue cycles of the
              wave's own work between the youngest read the wait newly requires and the wait
              (front-ends read it off the loop's path; a wait without one costs lds_latency)
  where the front-end reads the loop's waits (`prefetch_steps`: one distance d per wait point
  of a trip, i.e. per K tile, the matrix work in K tiles between the issue of the youngest load
  the point's wait newly requires and the wait), the global part is their mean of
    max(global_latency / d, own)            d >= 1 (d tiles' work to land under)
    own + max(global_latency - d * own, 0)  d < 1 (waited in the tile that issued it)
    own                                     None (no load newly required: no global wait)
  e.g. a three-stage loop whose first flush also waits for the tile ahead is [1, None]: per two
  tiles own + max(own, global_latency), not 2 * max(own, global_latency / 2).
  A unit holding b blocks runs a K tile of each of them in max(b * max(throughput), latency):
  with one block per unit the chain, not the max of the throughput terms, sets the time.
  Rounds: the grid's blocks fill units*blocks_per_unit slots per round; the last round holds the
  remainder, spread over the units (ceil), so a partial round costs a full latency chain: that
  is the tail.
  Chip-wide bounds over the whole launch:
    L2   = bytes the blocks fetch / l2_gbs (their K tiles', plus what a block fetches once
           besides them: the halo kernel's input patch). The bytes a block fetches per K tile are its waves'
           requests, or, where the front-end knows the block's distinct tile bytes
           (`block_tile_bytes`), those at the optimistic and nominal ends: waves of one block that
           request the same bytes at the same time are served by the unit's L1 once (pessimistic:
           every request reaches L2).
    MALL = (machines with `l2_domains` > 1: AMD's per-XCD L2s in front of the Infinity Cache)
           bytes that miss every XCD's L2 / mall_gbs. Workgroups are dispatched round-robin over
           the XCDs, so every XCD reads (nearly) every distinct input and weight byte once:
           at least l2_domains x unique read bytes, at most every L2 fetch. Optimistic: the
           floor; nominal and pessimistic: the fetches the XCD's L2 does not serve, by the
           launch's `l2_hit` (l2_reuse.py: the blocks an XCD holds at once share the A tile of
           one pixel block and the B tile of one Cout tile; calibrated on measured L2 hit rates)
           applied to the K tiles' fetches, never below the floor; a launch without `l2_hit`:
           every fetch (pessimistic), the midpoint (nominal).
    HBM  = unique bytes / HBM bandwidth (the MALL's at the optimistic end when the footprint
           fits it).
  Prologue and epilogue per block (issue cycles, its store bytes over the unit's L2 share, plus one
  global latency each): optimistic, they overlap other blocks' main loops except in the first
  and last round; pessimistic, every round pays them in series.
  time = max(main loop, L2, MALL, HBM) + prologue/epilogue + launch overhead.

Every uncertain constant is a `Range(opt, pess, nom)`. `predict` evaluates the model three times
(optimistic, nominal, pessimistic ends of every range at once) and returns all three, the
bound at the nominal point, and each bound's time, so a reader can see how far the runner-up is.

API (stable; other front-ends code against it):
  Range, LoopCounts, PhaseCounts, KernelCounts, Launch, Machine, Prediction, predict(),
  combine(predictions) for a conv made of several launches.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Dict, Iterable, List, Optional, Union

ENDS = ("opt", "nom", "pess")


@dataclass(frozen=True)
class Range:
    """An uncertain quantity: the optimistic end, the pessimistic end, and a nominal value
    (defaults to the arithmetic midpoint). 'Optimistic' means 'makes the kernel faster': for a
    bandwidth that is the larger value, for a latency the smaller."""
    opt: float
    pess: float
    nom: Optional[float] = None

    def at(self, end: str) -> float:
        if end == "opt":
            return self.opt
        if end == "pess":
            return self.pess
        if end == "nom":
            return self.nom if self.nom is not None else 0.5 * (self.opt + self.pess)
        raise ValueError(f"unknown end {end!r} (want one of {ENDS})")


Num = Union[float, int, Range]


def value(x: Num, end: str) -> float:
    """A plain number, or a Range's value at `end`."""
    return x.at(end) if isinstance(x, Range) else float(x)


@dataclass
class LoopCounts:
    """One K tile of the main loop, for ONE wave (all waves of a block assumed alike).

    mma_cycles: issue cycles of the matrix instructions on the wave's scheduler (sum over the
      instructions of their table cycles); mma_flops: their FLOPs (2*M*N*K each), for checks.
    lds_read_bytes / lds_write_bytes: bytes the wave moves through LDS / shared memory;
      *_ways: the bank-conflict factor (1 = conflict-free), a Range where not known.
    global_load_bytes: bytes the wave's global loads request (L2 traffic).
    valu / salu: vector / scalar ALU instructions (not matrix, not memory).
    nop_cycles: cycles of explicit wait states (s_nop n = n+1 cycles).
    other_issue: other instructions that occupy an issue slot (memory instructions, branches).
    barriers: workgroup barriers; lgkm_waits: waits on LDS (s_waitcnt lgkmcnt / NVIDIA
      scoreboard waits on shared loads); vm_waits: waits on global loads.
    """
    mma_cycles: float = 0.0
    mma_instructions: float = 0.0
    mma_flops: float = 0.0
    lds_read_bytes: float = 0.0
    lds_write_bytes: float = 0.0
    lds_read_ways: Num = 1.0
    lds_write_ways: Num = 1.0
    global_load_bytes: float = 0.0
    valu: float = 0.0
    salu: float = 0.0
    nop_cycles: float = 0.0
    other_issue: float = 0.0
    barriers: float = 0.0
    lgkm_waits: float = 0.0
    vm_waits: float = 0.0
    block_tile_bytes: float = 0.0  # distinct global bytes one BLOCK needs per K tile (0: unknown)
    # the LDS waits whose distance is known: cycles of the wave's own issue between the youngest
    # LDS read a wait newly requires and the wait -> waits per K tile (inf: nothing new). Each
    # exposes max(lds_latency - gap, 0); the rest of lgkm_waits a whole latency.
    lgkm_gaps: Dict[float, float] = field(default_factory=dict)


@dataclass
class PhaseCounts:
    """The code of one wave outside the main loop (prologue: before it; epilogue: after it),
    executed once per block (per tile for a persistent kernel). Fields may be Ranges."""
    instructions: Num = 0.0      # every instruction issued (issue cycles: see Machine)
    valu: Num = 0.0
    mma_cycles: Num = 0.0
    nop_cycles: Num = 0.0
    global_load_bytes: Num = 0.0
    global_store_bytes: Num = 0.0
    lds_bytes: Num = 0.0
    barriers: Num = 0.0
    latency_exposures: Num = 1.0  # global round trips it waits for in series


@dataclass
class KernelCounts:
    name: str
    loop: LoopCounts
    prologue: PhaseCounts = field(default_factory=PhaseCounts)
    epilogue: PhaseCounts = field(default_factory=PhaseCounts)
    prefetch_distance: float = 1.0  # K tiles a global load has to land before it is waited for
    # per wait point of a trip (one per K tile): that point's distance, None for no global wait;
    # when set it replaces prefetch_distance (see the module docstring)
    prefetch_steps: Optional[List[Optional[float]]] = None


@dataclass
class Launch:
    """One kernel launch of one conv.

    blocks: grid size; waves_per_block; ktiles: main-loop trips per block; blocks_per_unit: how
    many blocks a unit holds at once (occupancy: registers, LDS, wave slots);
    unique_bytes: bytes that must come from DRAM at least once (inputs, weights, output written);
    footprint_bytes: what must stay cached for the L2/MALL to serve the re-reads (defaults to
    unique_bytes)."""
    blocks: int
    waves_per_block: int
    ktiles: int
    blocks_per_unit: int
    unique_bytes: float
    footprint_bytes: Optional[float] = None
    flops: float = 0.0
    unique_read_bytes: Optional[float] = None  # inputs + weights read once (default: unique_bytes)
    # bytes each block fetches once besides its K tiles' (the halo kernel's input patch, copied
    # with its first K tile): L2 / MALL traffic like the K tiles'
    block_extra_fetch_bytes: float = 0.0
    # the share of the blocks' K-tile fetches an XCD's L2 serves, per end (l2_reuse.py's window
    # model; None: unknown, the MALL's nominal end the midpoint of floor and every fetch)
    l2_hit: Optional[Range] = None


@dataclass
class Machine:
    """Hardware constants. Each may be a Range. Bandwidths in GB/s (1e9 B/s), clock in GHz."""
    name: str
    units: int
    schedulers_per_unit: int
    clock_ghz: Num
    mma_overlap: Num            # share of VALU/SALU issue hidden under a running MFMA (0..1)
    valu_cycles: Num            # scheduler cycles one wave-wide VALU instruction takes
    salu_cycles: Num
    other_issue_cycles: Num     # memory / branch instruction issue cycles
    lds_bytes_per_clk: Num      # per unit
    lds_latency_cycles: Num
    barrier_cycles: Num
    l2_gbs: Num                 # chip-wide L2 bandwidth (what the units' loads can draw)
    hbm_gbs: Num
    global_latency_ns: Num      # a global load's round trip under load
    launch_overhead_us: Num
    mall_gbs: Num = 0.0         # last-level cache behind L2 (AMD Infinity Cache); 0 = none
    mall_bytes: float = 0.0
    peak_flops_dense: Num = 0.0  # for the roofline line only
    l1_bytes_per_clk: Num = 0.0  # per unit: the global-load path into a unit (L1 / TA); 0 = none
    l2_domains: int = 0          # separate L2s the units are spread over (AMD XCDs); <= 1: one L2


@dataclass
class EndResult:
    time_us: float
    bound: str
    bounds_us: Dict[str, float]  # each bound's time for the whole launch, microseconds


@dataclass
class Prediction:
    name: str
    opt: EndResult
    nom: EndResult
    pess: EndResult

    @property
    def time_us(self) -> float:
        return self.nom.time_us

    @property
    def range_us(self):
        return (self.opt.time_us, self.pess.time_us)

    @property
    def bound(self) -> str:
        return self.nom.bound


def _scale(ways: Num, end: str) -> float:
    return value(ways, end)


def global_wait(k: KernelCounts, glat: float, own: float) -> float:
    """Cycles per K tile of the chain's global part: the global wait overlapped with the
    block's own work (module docstring)."""
    if not k.prefetch_steps:
        return max(glat / max(k.prefetch_distance, 1e-9), own)

    def step(d: Optional[float]) -> float:
        if d is None:
            return own
        if d >= 1.0:
            return max(glat / d, own)
        return own + max(glat - d * own, 0.0)
    return sum(step(d) for d in k.prefetch_steps) / len(k.prefetch_steps)


def lds_wait(c: LoopCounts, lds_latency: float) -> float:
    """Cycles per K tile the chain waits for LDS: each wait of known distance its latency less
    the wave's own work since the read (lgkm_gaps), every other wait a whole latency."""
    known = sum(c.lgkm_gaps.values())
    hidden = sum(w * max(lds_latency - g, 0.0) for g, w in c.lgkm_gaps.items())
    return hidden + max(c.lgkm_waits - known, 0.0) * lds_latency


def _evaluate(k: KernelCounts, L: Launch, m: Machine, end: str) -> EndResult:
    v = lambda x: value(x, end)  # noqa: E731
    clk_hz = v(m.clock_ghz) * 1e9
    sched = m.schedulers_per_unit
    W = L.waves_per_block
    c = k.loop

    # --- throughput bounds, unit cycles per block-K-tile
    mfma = W * c.mma_cycles / sched
    alu = c.valu * v(m.valu_cycles) + c.salu * v(m.salu_cycles)
    hidden = min(alu, c.mma_cycles) * v(m.mma_overlap)
    issue = W * (c.mma_cycles + alu - hidden + c.nop_cycles
                 + c.other_issue * v(m.other_issue_cycles)) / sched
    lds = W * (c.lds_read_bytes * _scale(c.lds_read_ways, end)
               + c.lds_write_bytes * _scale(c.lds_write_ways, end)) / v(m.lds_bytes_per_clk)
    thru = {"MFMA": mfma, "issue": issue, "LDS": lds}
    if v(m.l1_bytes_per_clk) > 0:
        thru["L1"] = W * c.global_load_bytes / v(m.l1_bytes_per_clk)
    per_block = max(thru.values())
    # --- the latency chain of one block's K tile
    glat = v(m.global_latency_ns) * 1e-9 * clk_hz
    latency = (global_wait(k, glat, per_block) + lds_wait(c, v(m.lds_latency_cycles))
               + c.barriers * v(m.barrier_cycles))

    # --- rounds of blocks over the units
    slots = m.units * max(L.blocks_per_unit, 1)
    full_rounds = L.blocks // slots
    rem = L.blocks - full_rounds * slots
    b_full = max(L.blocks_per_unit, 1)
    b_last = math.ceil(rem / m.units) if rem else 0
    kt = L.ktiles

    def round_cycles(b):
        return kt * max(b * per_block, latency) if b else 0.0

    loop_cycles = full_rounds * round_cycles(b_full) + round_cycles(b_last)
    rounds = full_rounds + (1 if rem else 0)
    # the same work with the blocks spread perfectly (no tail): the tail is the difference
    ideal_cycles = (L.blocks / slots) * kt * max(b_full * per_block, latency)
    # each throughput bound and the latency as if it alone limited the loop (whole launch, cycles)
    comp_cycles = {name: (L.blocks / slots) * kt * b_full * t for name, t in thru.items()}
    comp_cycles["latency"] = (L.blocks / slots) * kt * latency

    # --- prologue / epilogue per block
    def phase_cycles(p: PhaseCounts):
        iss = W * (v(p.instructions) + v(p.valu) * (v(m.valu_cycles) - 1) + v(p.mma_cycles)
                   + v(p.nop_cycles)) / sched
        l2_per_unit = v(m.l2_gbs) * 1e9 / m.units / clk_hz  # bytes per cycle per unit
        mem = W * (v(p.global_load_bytes) + v(p.global_store_bytes)) / l2_per_unit
        return (max(iss, mem) + v(p.latency_exposures) * glat
                + v(p.barriers) * v(m.barrier_cycles))

    pe = phase_cycles(k.prologue) + phase_cycles(k.epilogue)
    if end == "opt":
        pe_total = pe * min(rounds, 2)  # hidden behind other blocks' loops but in first/last
    else:
        pe_total = pe * rounds

    # --- chip-wide memory bounds (seconds)
    requested = W * c.global_load_bytes
    per_block_fetch = requested
    if c.block_tile_bytes > 0 and end != "pess":
        per_block_fetch = min(requested, c.block_tile_bytes)
    l2_bytes = float(L.blocks) * (kt * per_block_fetch + L.block_extra_fetch_bytes)
    l2_s = l2_bytes / (v(m.l2_gbs) * 1e9)
    mall_s = 0.0
    if m.l2_domains > 1 and v(m.mall_gbs) > 0:
        reads = L.unique_read_bytes if L.unique_read_bytes is not None else L.unique_bytes
        floor = min(l2_bytes, m.l2_domains * reads)
        if L.l2_hit is None:
            ends = {"opt": floor, "pess": l2_bytes, "nom": 0.5 * (floor + l2_bytes)}
        else:  # the K tiles' fetches the XCD's L2 does not serve, every halo patch
            k_bytes = float(L.blocks) * kt * per_block_fetch
            missed = max(floor, l2_bytes - k_bytes * value(L.l2_hit, end))
            ends = {"opt": floor, "pess": missed, "nom": missed}
        mall_s = ends[end] / (v(m.mall_gbs) * 1e9)
    footprint = L.footprint_bytes if L.footprint_bytes is not None else L.unique_bytes
    mem_bw = v(m.hbm_gbs)
    if end == "opt" and m.mall_bytes and footprint <= m.mall_bytes and v(m.mall_gbs) > mem_bw:
        mem_bw = v(m.mall_gbs)
    hbm_s = L.unique_bytes / (mem_bw * 1e9)

    loop_s = loop_cycles / clk_hz
    body_s = max(loop_s, l2_s, mall_s, hbm_s)
    launch_s = v(m.launch_overhead_us) * 1e-6
    total_s = body_s + pe_total / clk_hz + launch_s

    bounds_us = {name: cyc / clk_hz * 1e6 for name, cyc in comp_cycles.items()}
    bounds_us["L2"] = l2_s * 1e6
    if m.l2_domains > 1:
        bounds_us["MALL"] = mall_s * 1e6
    bounds_us["HBM"] = hbm_s * 1e6
    bounds_us["tail"] = (loop_cycles - ideal_cycles) / clk_hz * 1e6
    bounds_us["prologue/epilogue"] = pe_total / clk_hz * 1e6
    bounds_us["launch"] = launch_s * 1e6
    # The bound: the largest single term of the body; tail or prologue/epilogue when they cost
    # more than the largest steady-state term.
    core = {n: bounds_us[n] for n in ("MFMA", "issue", "LDS", "L1", "latency", "L2", "MALL",
                                       "HBM") if n in bounds_us}
    bound = max(core, key=core.get)
    ideal_us = ideal_cycles / clk_hz * 1e6
    if loop_s >= max(l2_s, mall_s, hbm_s) and bounds_us["tail"] >= 0.25 * ideal_us and bounds_us["tail"] > 0:
        bound = "tail"  # partial last round: a quarter or more on top of the steady state
    for extra in ("prologue/epilogue", "launch"):
        if bounds_us[extra] > max(core.values()):
            bound = extra
    return EndResult(time_us=total_s * 1e6, bound=bound, bounds_us=bounds_us)


def predict(k: KernelCounts, L: Launch, m: Machine, name: str = "") -> Prediction:
    """Time of one launch at the optimistic, nominal and pessimistic ends of every range."""
    res = {end: _evaluate(k, L, m, end) for end in ENDS}
    return Prediction(name=name or k.name, **res)


def combine(preds: Iterable[Prediction], name: str) -> Prediction:
    """Several launches run back to back (e.g. the four phases of an upsample conv): times add;
    the bound is the one that carries the most time."""
    preds = list(preds)
    out = {}
    for end in ENDS:
        rs = [getattr(p, end) for p in preds]
        bounds: Dict[str, float] = {}
        for r in rs:
            for n, t in r.bounds_us.items():
                bounds[n] = bounds.get(n, 0.0) + t
        weight: Dict[str, float] = {}
        for r in rs:
            weight[r.bound] = weight.get(r.bound, 0.0) + r.time_us
        out[end] = EndResult(time_us=sum(r.time_us for r in rs),
                             bound=max(weight, key=weight.get), bounds_us=bounds)
    return Prediction(name=name, **out)
