"""NVIDIA SASS front-end of the performance model: `cuobjdump -sass` text -> KernelCounts.

The same method as the AMD front-end (cdna_asm.py), applied to the portable mma.sync build
(preset cuda-mma) so that the model can be checked against a GPU that can be measured here.

  parse_sass(text)          -> [SassFunction]: the kernels of a dump, each a list of instructions
                               (address, guard predicate, opcode, operands, control word)
  find_main_loop(fn)        -> the main K loop: the innermost backward branch whose body holds
                               matrix instructions (HMMA), the one with the most of them
  count_kernel(fn, costs, end) -> model.KernelCounts at one end of the cost ranges: per warp and
                               K tile in the loop (divided by the loop's barriers: one
                               __syncthreads per K tile, block_gemm.hpp, so an unrolled loop is
                               normalised), and per warp before (prologue) and after (epilogue)

Counting rules (per warp-instruction; NVIDIA issues one instruction per cycle per scheduler):
  HMMA.<shape>          matrix issue cycles from MMA_TABLE (FLOPs / the measured peak per
                        scheduler), and one issue slot (other_issue)
  LDSM.16.M88.<n>       n 8x8 b16 matrices = 128 n bytes read from shared memory
  LDS<.w> / STS<.w>     32 lanes x width bytes read / written
  LDGSTS<.w>            cp.async: 32 x width bytes loaded from global (L2) AND written to shared
                        memory (the fill goes through the SM's shared-memory datapath)
  LDG<.w>               32 x width bytes loaded from global; STG<.w> stored
  LDL / STL             register spills: L1 hits, counted on the shared-memory datapath (one
                        SRAM and datapath for L1 and shared memory on Hopper)
  BAR.*                 barriers; DEPBAR (cp.async group waits) vm_waits
  U* (uniform datapath) salu; conversions (F2F, F2FP, I2F, F2I, ...), MUFU: their own cost
                        rows; every other compute instruction valu
  memory / control (LD*, ST*, BRA, BSSY, S2R, ...): other_issue
  lgkm_waits            instructions whose scoreboard wait mask names a barrier last set by a
                        shared-memory load (LDSM / LDS), from the control word (the Volta-era
                        layout: stall bits 105-108, yield 109, write barrier 110-112, read
                        barrier 113-115, wait mask 116-121; Jia et al., 'Dissecting the NVIDIA
                        Volta GPU Architecture via Microbenchmarking', 2018); for each, the warp's
                        own issue between the youngest such load and the waiter (lgkm_gaps: HMMA
                        FLOPs and other instructions, costed in kernel_counts), which the model
                        subtracts from the LDS latency the wait exposes
Static counts: `body` is the loop's whole span (both sides of each branch once per trip);
`steady` / `longest` are one trip along its steady and longest paths (loop_paths), which the NVIDIA
check weighs by the launch's tap-change rate (tap_change.py) for the implicit GEMM's tile cursor.
Bank conflicts: none assumed. ldmatrix and cp.async on the XOR-swizzled tiles
(kernel/smem_layout.hpp) are conflict-free by construction (test_smem_layout's NVIDIA bank check).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import Dict, List, Optional, Tuple

from model import KernelCounts, LoopCounts, PhaseCounts, Range, value

# --------------------------------------------------------------------------------------------
# Parsing


@dataclass
class Instr:
    addr: int
    pred: str          # "" or the guard, e.g. "@!P0"
    opcode: str        # e.g. "HMMA.16816.F32.BF16"
    operands: str
    ctrl: int = 0      # the instruction's high 64-bit word (control bits 41..61 of it)

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]

    # Control word fields (bit offsets in the high 64-bit word = instruction bit - 64).
    @property
    def write_barrier(self) -> Optional[int]:
        b = (self.ctrl >> 46) & 7
        return None if b == 7 else b

    @property
    def read_barrier(self) -> Optional[int]:
        b = (self.ctrl >> 49) & 7
        return None if b == 7 else b

    @property
    def wait_mask(self) -> int:
        return (self.ctrl >> 52) & 0x3F

    @property
    def stall(self) -> int:
        return (self.ctrl >> 41) & 0xF


@dataclass
class SassFunction:
    name: str
    instrs: List[Instr] = field(default_factory=list)


_FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
_INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);"
                    r"\s*(?:/\*\s*(0x[0-9a-fA-F]+)\s*\*/)?")
_WORD = re.compile(r"^\s*/\*\s*(0x[0-9a-fA-F]+)\s*\*/\s*$")
_BRA_TARGET = re.compile(r"(0x[0-9a-fA-F]+)|`\(\.L_x_(\d+)\)")
_LABEL = re.compile(r"^\s*\.L_x_(\d+):")


def parse_sass(text: str) -> List[SassFunction]:
    """Splits a `cuobjdump -sass` (or `nvdisasm`) listing into functions and instructions.
    Branch targets given as labels (.L_x_N) are resolved to addresses."""
    funcs: List[SassFunction] = []
    cur: Optional[SassFunction] = None
    pending_hi = False
    labels: Dict[str, int] = {}
    pending_labels: List[str] = []
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m:
            cur = SassFunction(m.group(1))
            funcs.append(cur)
            pending_hi = False
            continue
        if cur is None:
            continue
        m = _LABEL.match(line)
        if m:
            pending_labels.append(m.group(1))
            continue
        m = _INSTR.match(line)
        if m:
            ins = Instr(int(m.group(1), 16), (m.group(2) or "").strip(), m.group(3),
                        m.group(4).strip())
            cur.instrs.append(ins)
            for lab in pending_labels:
                labels[(cur.name, lab)] = ins.addr
            pending_labels = []
            pending_hi = True
            continue
        m = _WORD.match(line)
        if m and pending_hi and cur.instrs:
            cur.instrs[-1].ctrl = int(m.group(1), 16)
            pending_hi = False
    # resolve label targets into the operand text (0x... form)
    for f in funcs:
        for ins in f.instrs:
            if ins.base == "BRA" and "`(.L_x_" in ins.operands:
                ins.operands = re.sub(r"`\(\.L_x_(\d+)\)",
                                      lambda mm: hex(labels.get((f.name, mm.group(1)), -1)),
                                      ins.operands)
    return funcs


def branch_target(ins: Instr) -> Optional[int]:
    if ins.base not in ("BRA", "JMP", "BRX"):
        return None
    m = re.search(r"0x([0-9a-fA-F]+)", ins.operands)
    return int(m.group(1), 16) if m else None


# --------------------------------------------------------------------------------------------
# The main loop

MMA_OPS = ("HMMA", "QMMA", "IMMA", "HGMMA")
GLOBAL_LOADS = ("LDGSTS", "LDG", "UTMALDG", "UBLKCP")


@dataclass
class Loop:
    start: int   # index of the first instruction (the back edge's target)
    end: int     # index of the back-edge branch (inclusive)
    mma: int


def loops(fn: SassFunction) -> List[Loop]:
    index = {ins.addr: i for i, ins in enumerate(fn.instrs)}
    out = []
    for i, ins in enumerate(fn.instrs):
        t = branch_target(ins)
        if t is None or t > ins.addr or t not in index:
            continue
        s = index[t]
        mma = sum(1 for x in fn.instrs[s:i + 1] if x.base in MMA_OPS)
        out.append(Loop(s, i, mma))
    return out


def find_main_loop(fn: SassFunction) -> Optional[Loop]:
    """The innermost loop holding matrix instructions (no other loop with them nested inside),
    the one with the most of them where several are (an unrolled body and its remainder)."""
    with_mma = [l for l in loops(fn) if l.mma > 0]
    inner = [l for l in with_mma
             if not any(o is not l and l.start <= o.start and o.end <= l.end for o in with_mma)]
    if not inner:
        return None
    return max(inner, key=lambda l: (l.mma, -(l.end - l.start)))


# --------------------------------------------------------------------------------------------
# Instruction costs


@dataclass(frozen=True)
class MmaRow:
    flops: int
    what: str


# Matrix instructions: FLOPs per warp instruction. Their issue cycles come from the measured
# peak (NvidiaCosts.mma_cycles): the same tensor rate for f16 and bf16 HMMA.16816 on Hopper.
MMA_TABLE: Dict[str, MmaRow] = {
    "HMMA.16816.F32.BF16": MmaRow(2 * 16 * 8 * 16, "mma.sync m16n8k16 bf16, fp32 accumulate"),
    "HMMA.16816.F32": MmaRow(2 * 16 * 8 * 16, "mma.sync m16n8k16 f16, fp32 accumulate (sm_90 "
                             "lowers e4m3 m16n8k32 to two of these after F2FP unpacks)"),
    "HMMA.16816.F16": MmaRow(2 * 16 * 8 * 16, "m16n8k16 f16, f16 accumulate"),
    "HMMA.1688.F32.BF16": MmaRow(2 * 16 * 8 * 8, "m16n8k8 bf16"),
    "HMMA.1688.F32": MmaRow(2 * 16 * 8 * 8, "m16n8k8 f16"),
}

CONVERSIONS = ("F2F", "F2FP", "I2F", "F2I", "I2FP", "F2IP", "FRND", "I2I")
MUFU_OPS = ("MUFU",)
FP32_OPS = ("FADD", "FMUL", "FFMA", "FMNMX", "FSEL", "FSETP", "FSET", "FCHK", "HADD2", "HMUL2",
            "HFMA2", "HSETP2", "HMNMX2")
MEMORY_CONTROL = ("LDSM", "LDS", "STS", "LDGSTS", "LDG", "STG", "LDL", "STL", "LD", "ST", "LDC",
                  "ATOM", "ATOMS", "ATOMG", "RED", "BAR", "DEPBAR", "LDGDEPBAR", "MEMBAR", "FENCE",
                  "BRA", "BRX", "JMP", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "BPT",
                  "S2R", "S2UR", "CS2R", "NOP", "YIELD", "UBLKCP", "UBLKRED", "SYNCS", "UTMALDG",
                  "UTMASTG", "ERRBAR", "CCTL", "VOTE", "VOTEU", "SHFL", "MATCH", "REDUX", "ELECT")


@dataclass
class NvidiaCosts:
    """Cycles one warp instruction occupies its scheduler's pipe (Ranges: [opt, pess])."""
    mma_cycles_per_flop: float          # from the measured mma.sync peak and the clock
    valu_int_cycles: Range              # integer / logic / compare / move
    valu_fp32_cycles: float = 1.0       # 32 FP32 lanes per scheduler
    conversion_cycles: Range = Range(4.0, 8.0, 8.0)
    mufu_cycles: float = 8.0


def _width_bytes(opcode: str, default: int = 4) -> int:
    parts = opcode.split(".")
    for p in parts[1:]:
        if p in ("128",):
            return 16
        if p in ("64",):
            return 8
        if p in ("32",):
            return 4
        if p in ("U16", "S16"):
            return 2
        if p in ("U8", "S8"):
            return 1
    return default


def _ldsm_bytes(opcode: str) -> int:
    # LDSM.16.M88.4 / .M88.2 / .M88 / .MT88.4: 1, 2 or 4 8x8 matrices of 16-bit = 128 B each
    m = re.match(r"LDSM\.16\.MT?88(?:\.(\d))?", opcode)
    n = int(m.group(1)) if m and m.group(1) else 1
    return 128 * n


@dataclass
class RawCounts:
    """Instruction-class totals over a span (per warp), before normalisation."""
    instructions: int = 0
    mma: Dict[str, int] = field(default_factory=dict)
    mma_flops: float = 0.0
    unknown_mma: List[str] = field(default_factory=list)
    int_alu: int = 0
    fp32: int = 0
    conversions: int = 0
    mufu: int = 0
    uniform: int = 0
    memory_control: int = 0
    lds_read_bytes: int = 0
    lds_write_bytes: int = 0
    global_load_bytes: int = 0
    global_store_bytes: int = 0
    local_bytes: int = 0
    barriers: int = 0
    depbar: int = 0
    lgkm_waits: int = 0
    # the waits above by their distance from the load: (HMMA FLOPs, other instructions) the warp
    # issued between the youngest shared load the waiter names and the waiter -> waits
    lgkm_gaps: Dict[Tuple[float, float], float] = field(default_factory=dict)


def classify(instrs: List[Instr], wrap: bool = False) -> RawCounts:
    """Counts one span. wrap: the span is a loop body, so barrier setters at its end reach the
    waits at its start (the previous trip)."""
    r = RawCounts()
    setter: Dict[int, str] = {}
    # where each barrier's setter was issued: (HMMA FLOPs, other instructions) so far in the span
    set_at: Dict[int, Tuple[float, float]] = {}

    def issue_of(ins: Instr) -> Tuple[float, float]:
        row = MMA_TABLE.get(ins.opcode) if ins.base in MMA_OPS else None
        return (row.flops, 0.0) if row is not None else (0.0, 1.0)
    if wrap:  # the barriers the body's tail leaves set for the next trip, a trip earlier
        pf, pi = 0.0, 0.0
        for ins in instrs:
            if ins.write_barrier is not None:
                setter[ins.write_barrier] = ins.base
                set_at[ins.write_barrier] = (pf, pi)
            f, i = issue_of(ins)
            pf, pi = pf + f, pi + i
        set_at = {b: (f - pf, i - pi) for b, (f, i) in set_at.items()}  # pf, pi: the whole trip
    pos_f, pos_i = 0.0, 0.0
    for ins in instrs:
        b = ins.base
        r.instructions += 1
        mask = ins.wait_mask
        named = [k for k in range(6) if mask and (mask >> k) & 1 and setter.get(k) in ("LDSM", "LDS")]
        if named:
            r.lgkm_waits += 1
            youngest = max(set_at[k] for k in named)
            gap = (pos_f - youngest[0], pos_i - youngest[1])
            r.lgkm_gaps[gap] = r.lgkm_gaps.get(gap, 0.0) + 1.0
        if b in MMA_OPS:
            row = MMA_TABLE.get(ins.opcode)
            r.mma[ins.opcode] = r.mma.get(ins.opcode, 0) + 1
            if row is None:
                r.unknown_mma.append(ins.opcode)
            else:
                r.mma_flops += row.flops
        elif b == "LDSM":
            r.lds_read_bytes += _ldsm_bytes(ins.opcode)
            r.memory_control += 1
        elif b == "LDS":
            r.lds_read_bytes += 32 * _width_bytes(ins.opcode)
            r.memory_control += 1
        elif b == "STS":
            r.lds_write_bytes += 32 * _width_bytes(ins.opcode)
            r.memory_control += 1
        elif b == "LDGSTS":
            w = 32 * _width_bytes(ins.opcode)
            r.global_load_bytes += w
            r.lds_write_bytes += w
            r.memory_control += 1
        elif b == "LDG":
            r.global_load_bytes += 32 * _width_bytes(ins.opcode)
            r.memory_control += 1
        elif b == "STG":
            r.global_store_bytes += 32 * _width_bytes(ins.opcode)
            r.memory_control += 1
        elif b in ("LDL", "STL"):
            # Spills: L1 hits, and Hopper's L1 and shared memory are one SRAM behind one
            # datapath (H100 whitepaper), so their bytes load the shared-memory term too.
            w = 32 * _width_bytes(ins.opcode)
            r.local_bytes += w
            if b == "LDL":
                r.lds_read_bytes += w
            else:
                r.lds_write_bytes += w
            r.memory_control += 1
        elif b == "BAR":
            r.barriers += 1
            r.memory_control += 1
        elif b == "DEPBAR":
            r.depbar += 1
            r.memory_control += 1
        elif b in MEMORY_CONTROL:
            r.memory_control += 1
        elif b in CONVERSIONS:
            r.conversions += 1
        elif b in MUFU_OPS:
            r.mufu += 1
        elif b in FP32_OPS:
            r.fp32 += 1
        elif b.startswith("U") and b not in ("UBLKCP", "UBLKRED", "UTMALDG", "UTMASTG"):
            r.uniform += 1
        else:
            r.int_alu += 1
        if ins.write_barrier is not None:
            setter[ins.write_barrier] = b
            set_at[ins.write_barrier] = (pos_f, pos_i)
        f, i = issue_of(ins)
        pos_f, pos_i = pos_f + f, pos_i + i
    return r


def _alu_cycles(r: RawCounts, c: NvidiaCosts, end: str) -> float:
    """The ALU issue of a span in units of one cycle per instruction (valu with valu_cycles 1)."""
    return (r.int_alu * value(c.valu_int_cycles, end) + r.fp32 * c.valu_fp32_cycles
            + r.conversions * value(c.conversion_cycles, end) + r.mufu * c.mufu_cycles)


def mma_cycles(r: RawCounts, c: NvidiaCosts) -> float:
    return r.mma_flops * c.mma_cycles_per_flop


@dataclass
class SassKernel:
    """One kernel's counts, kept raw so that they can be re-costed at each end of a range.
    body: the loop's whole span; steady / longest: one trip along its steady path and its longest
    one (loop_paths), which with_tap_rate weighs."""
    name: str
    loop: Optional[Loop]
    k_tiles_per_trip: int
    body: RawCounts
    prologue: RawCounts
    epilogue: RawCounts
    steady: Optional[RawCounts] = None
    longest: Optional[RawCounts] = None

    def with_tap_rate(self, rate: Optional[float]) -> "SassKernel":
        """The kernel with its loop body one trip of the steady path plus `rate` times the
        longest path's extra (tap_change.py); itself when rate is None or the loop has no paths."""
        if rate is None or self.steady is None or self.longest is None:
            return self
        return replace(self, body=blend(self.steady, self.longest, rate))

    def per_tile(self, x: float) -> float:
        return x / self.k_tiles_per_trip


def analyse(fn: SassFunction) -> SassKernel:
    lp = find_main_loop(fn)
    if lp is None:
        # no loop: everything is "prologue" (one pass); the model then sees zero K tiles of work
        return SassKernel(fn.name, None, 1, RawCounts(), classify(fn.instrs), RawCounts())
    body = classify(fn.instrs[lp.start:lp.end + 1], wrap=True)
    trips = max(body.barriers, 1)  # one __syncthreads per K tile (block_gemm.hpp mainloop)
    paths = loop_paths(fn, lp)
    steady, longest = (None, None) if paths is None else \
        (classify(paths[0], wrap=True), classify(paths[1], wrap=True))
    return SassKernel(fn.name, lp, trips, body, classify(fn.instrs[:lp.start]),
                      classify(fn.instrs[lp.end + 1:]), steady, longest)


def loop_paths(fn: SassFunction, lp: Loop) -> Optional[Tuple[List[Instr], List[Instr]]]:
    """One trip of the loop along its steady path and its longest one: over the span's blocks
    (split at branches and their targets), from the loop's first instruction to its back-edge
    branch, among the paths with the trip's most matrix instructions and then most global loads (a
    steady trip refills; the last tiles' paths skip the copies past K), the fewest and the most
    instructions (a loop inside the span counts one trip; exits leave the trip). Every predicated
    branch chooses: the loop's branches test block-uniform values (the K loop's steady test, the
    tile cursor's tap change; zero fill is predicated copies, not branches). None when no path
    reaches the back edge."""
    span = fn.instrs[lp.start:lp.end + 1]
    start_addr = span[0].addr
    index = {ins.addr: i for i, ins in enumerate(span)}
    leaders = {0}
    for i, ins in enumerate(span):
        t = branch_target(ins)
        if t is not None:
            if i + 1 < len(span):
                leaders.add(i + 1)
            if t in index:
                leaders.add(index[t])
    starts = sorted(leaders)
    blocks = [(a, (starts[j + 1] if j + 1 < len(starts) else len(span)))
              for j, a in enumerate(starts)]
    of = {a: j for j, (a, _) in enumerate(blocks)}
    last = len(blocks) - 1

    def succ(j: int) -> List[int]:
        a, b = blocks[j]
        ins = span[b - 1]
        t = branch_target(ins)
        out = []
        if t is not None and t != start_addr and t in index:
            out.append(of[index[t]])
        if (t is None or ins.pred) and ins.base != "EXIT" and j < last:
            out.append(j + 1)
        return out

    def cost(j: int) -> Tuple[int, int, int]:
        a, b = blocks[j]
        return (-sum(1 for x in span[a:b] if x.base in MMA_OPS),
                -sum(1 for x in span[a:b] if x.base in GLOBAL_LOADS), b - a)
    # acyclic: drop edges to a block at or before the source (a child loop's back edge)
    best_lo: Dict[int, Tuple[int, int, int]] = {0: cost(0)}
    best_hi: Dict[int, Tuple[int, int, int]] = {0: cost(0)}
    prev_lo: Dict[int, Optional[int]] = {0: None}
    prev_hi: Dict[int, Optional[int]] = {0: None}
    for j in range(len(blocks)):
        for best, prev, better in ((best_lo, prev_lo, lambda c, o: c < o),
                                   (best_hi, prev_hi,
                                    lambda c, o: (c[0], c[1], -c[2]) < (o[0], o[1], -o[2]))):
            if j not in best:
                continue
            for m in succ(j):
                if m <= j:
                    continue
                c = cost(m)
                cand = (best[j][0] + c[0], best[j][1] + c[1], best[j][2] + c[2])
                if m not in best or better(cand, best[m]):
                    best[m] = cand
                    prev[m] = j
    if last not in best_lo or branch_target(span[-1]) != start_addr:
        return None

    def walk(prev) -> List[Instr]:
        path, j = [], last
        while j is not None:
            path.append(j)
            j = prev[j]
        return [x for j in reversed(path) for x in span[blocks[j][0]:blocks[j][1]]]
    return walk(prev_lo), walk(prev_hi)


def blend(steady: RawCounts, longest: RawCounts, rate: float) -> RawCounts:
    """(1 - rate) x steady + rate x longest, field by field."""
    out = RawCounts()
    for f in fields(RawCounts):
        s, lg = getattr(steady, f.name), getattr(longest, f.name)
        if isinstance(s, dict):
            setattr(out, f.name, {k: (1 - rate) * s.get(k, 0) + rate * lg.get(k, 0)
                                  for k in set(s) | set(lg)})
        elif isinstance(s, list):
            setattr(out, f.name, list(s))
        else:
            setattr(out, f.name, (1 - rate) * s + rate * lg)
    return out


def lds_wait_gaps(r: RawCounts, c: NvidiaCosts, per_trip: int) -> Dict[float, float]:
    """The shared-load waits' gaps in issue cycles (HMMA FLOPs at the measured rate, one cycle
    per other instruction) -> waits per K tile."""
    out: Dict[float, float] = {}
    for (f, i), w in r.lgkm_gaps.items():
        g = f * c.mma_cycles_per_flop + i
        out[g] = out.get(g, 0.0) + w / per_trip
    return out


def kernel_counts(k: SassKernel, c: NvidiaCosts, end: str, prefetch_distance: float) -> KernelCounts:
    """model.KernelCounts at one end of the cost ranges (the core's valu is counted in cycles of
    1: Machine.valu_cycles = 1 for NVIDIA, the per-class costs are applied here)."""
    b, t = k.body, k.per_tile
    loop = LoopCounts(
        mma_cycles=t(mma_cycles(b, c)),
        mma_instructions=t(sum(b.mma.values())),
        mma_flops=t(b.mma_flops),
        lds_read_bytes=t(b.lds_read_bytes),
        lds_write_bytes=t(b.lds_write_bytes),
        global_load_bytes=t(b.global_load_bytes),
        valu=t(_alu_cycles(b, c, end)),
        salu=t(b.uniform),
        other_issue=t(b.memory_control + sum(b.mma.values())),
        barriers=t(b.barriers),
        lgkm_waits=t(b.lgkm_waits),
        vm_waits=t(b.depbar),
        lgkm_gaps=lds_wait_gaps(b, c, k.k_tiles_per_trip),
    )

    def phase(r: RawCounts) -> PhaseCounts:
        alu = _alu_cycles(r, c, end)
        plain = r.int_alu + r.fp32 + r.conversions + r.mufu
        return PhaseCounts(instructions=r.instructions + (alu - plain),
                           mma_cycles=mma_cycles(r, c), global_load_bytes=r.global_load_bytes,
                           global_store_bytes=r.global_store_bytes,
                           lds_bytes=r.lds_read_bytes + r.lds_write_bytes, barriers=r.barriers,
                           latency_exposures=1.0)

    return KernelCounts(name=k.name, loop=loop, prologue=phase(k.prologue),
                        epilogue=phase(k.epilogue), prefetch_distance=prefetch_distance)
