"""The AMDGPU assembly front-end: kernels, their metadata, the main K loop and its counts.

Reads the `clang --cuda-device-only -S` output of kernels/conv_instances.cpp for one target
(gfx942 / gfx950) and, per kernel:
  - metadata from the compiler's comments and the .amdhsa block: VGPR, AGPR, SGPR, LDS bytes,
    scratch, occupancy (waves per SIMD);
  - the basic blocks (`.LBB` labels, `; %bb.N:` comments) and the loop structure: LLVM's loop
    comments (`=>This Loop Header`, `in Loop: Header=`, `Parent Loop`) when present, otherwise
    merged backward-branch intervals;
  - the main loop: the loop that holds the matrix instructions (descending into the one child
    loop that holds all of them, so a persistent tile loop around a K loop picks the K loop);
  - counts of one trip of that loop per wave: MFMA by instruction, LDS bytes read / written by
    width, global bytes loaded, VALU, SALU, s_nop cycles, barriers, s_waitcnt points. A child
    loop inside the main loop (the gather's tap carry) counts one trip per outer trip; both
    sides of a branch are counted (exec-masked code issues for any active lane). Beside that
    union, one trip along the loop's steady path (`loop_steady_path`: every K tile inside its
    tap) and its longest path, which predict.py weighs by the launch's tap-change rate
    (tap_change.py) for the implicit GEMM's vector gather;
  - the prologue (entry to the loop) and epilogue (loop exit to s_endpgm) as the shortest and
    longest instruction paths outside the loop through the acyclic block graph (the epilogue
    also without the FP8-output store's blocks, `epilogue_bf16_out`, the path of a launch whose
    output is bf16: FP8_OUTPUT_MARK): the loops' back
    edges removed by loop structure (`back_edges`), not by block index, so a rotated loop (the
    epilogue's store loops) counts one trip; a branch to an empty label keeps its edge; a path
    follows the structurizer's flow bits (set by s_mov_b64 0 / -1, copied or negated; tested as
    exec & flag or exec & ~flag), so two regions exclusive at run time (packed / fp32 slabs, a
    slab's bf16 / FP8 output stores) are never summed;
  - the loads' waits (`loop_waits`): along the loop's longest path from its header (every load
    and refill issued, child loops once), run twice so the second trip sees the loads the first
    left in flight, each `s_waitcnt vmcnt(N)` requires every vector memory instruction but the N
    youngest (they retire in issue order; gfx9 counts stores too). For each wait that requires a
    load no earlier wait required: the barrier interval it sits in and how much matrix work
    lies between that load's issue and the wait (MFMAs). `prefetch_steps` turns that into the
    prefetch distance of each wait point of a trip (predict.py, model.py);
  - the LDS waits' distances (`lds_wait_gaps`, model step 11): along the steady and the longest
    path, twice, each `s_waitcnt lgkmcnt(N)` requires every LDS / scalar-memory operation but the
    N youngest; the wave's own issue cycles between the youngest it newly requires and the wait
    (`Counts.lgkm_gaps`), of which model.lds_wait charges the LDS latency's remainder.

Kernel names are decoded like cmake/resource_report.cmake does (TileShape, Atom, Geometry,
vector flag, tap-reduce HaloPatch), so a dispatch plan entry is matched by its fields.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

# MFMA issue cycles on one SIMD (the instruction's passes x 4). Sources: AMD matrix instruction
# calculator, CDNA3 (shared/notes/cdna.md: 32x32x8 bf16 32, 16x16x16 bf16 16, 32x32x16 fp8 32);
# CDNA4 from the published peaks (2.5 PFLOP/s bf16, 5 PFLOP/s fp8, 256 CUs x 4 SIMDs at 2.4 GHz:
# 1024 bf16 / 2048 fp8 FLOP per SIMD per cycle) and the note that gfx950 runs the gfx942 fp8
# instructions at half the K rate of f8f6f4.
MFMA_CYCLES = {
    "gfx942": {
        "v_mfma_f32_32x32x8_bf16": 32, "v_mfma_f32_16x16x16_bf16": 16,
        "v_mfma_f32_32x32x16_fp8_fp8": 32, "v_mfma_f32_16x16x32_fp8_fp8": 16,
        "v_mfma_f32_32x32x8bf16_1k": 32, "v_mfma_f32_16x16x16bf16_1k": 16,
    },
    "gfx950": {
        "v_mfma_f32_32x32x16_bf16": 32, "v_mfma_f32_16x16x32_bf16": 16,
        "v_mfma_f32_32x32x64_f8f6f4": 64, "v_mfma_f32_16x16x128_f8f6f4": 32,
        "v_mfma_f32_32x32x16_fp8_fp8": 32, "v_mfma_f32_16x16x32_fp8_fp8": 16,
        "v_mfma_f32_32x32x8_bf16": 32, "v_mfma_f32_16x16x16_bf16": 16,
    },
}

_MFMA_SHAPE = re.compile(r"v_mfma_(?:scale_)?f32_(\d+)x(\d+)x(\d+)")


def mfma_flops(mnemonic: str) -> int:
    m = _MFMA_SHAPE.match(mnemonic)
    if not m:
        raise ValueError(f"not an MFMA: {mnemonic}")
    a, b, c = map(int, m.groups())
    return 2 * a * b * c


def mfma_cycles(target: str, mnemonic: str) -> int:
    table = MFMA_CYCLES[target]
    if mnemonic in table:
        return table[mnemonic]
    raise KeyError(f"{target}: no issue-cycle entry for {mnemonic} (add it to MFMA_CYCLES with "
                   f"its source)")


_WIDTH = {"b32": 4, "b64": 8, "b96": 12, "b128": 16, "u8": 1, "i8": 1, "u16": 2, "i16": 2,
          "b8": 1, "b16": 2, "u8_d16": 1, "u8_d16_hi": 1, "i8_d16": 1, "b16_d16": 2,
          "b16_d16_hi": 2, "u16_d16": 2, "u16_d16_hi": 2}
_BUF_WIDTH = {"dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16, "ubyte": 1, "sbyte": 1,
              "ushort": 2, "sshort": 2, "short_d16": 2, "short_d16_hi": 2, "ubyte_d16": 1,
              "ubyte_d16_hi": 1, "sbyte_d16": 1, "sbyte_d16_hi": 1, "byte": 1, "short": 2,
              "b32": 4, "b64": 8, "b96": 12, "b128": 16}


def lds_bytes_per_lane(mn: str) -> Tuple[str, int]:
    """('read'|'write'|'other', bytes per lane) of a ds_* instruction."""
    m = re.match(r"ds_(read|write|load|store)(2st64|2)?_([a-z0-9_]+?)(?:_tr_b\d+)?$", mn)
    if m:
        kind = "read" if m.group(1) in ("read", "load") else "write"
        w = _WIDTH.get(m.group(3))
        if w is None:
            w = _WIDTH.get(m.group(3).split("_")[0], 4)
        return kind, w * (2 if m.group(2) else 1)
    m = re.match(r"ds_read_(b64|b96)_tr_b(4|6|8|16)$", mn)  # gfx950 transpose reads
    if m:
        return "read", _WIDTH[m.group(1)]
    if mn.startswith(("ds_bpermute", "ds_permute", "ds_swizzle")):
        return "other", 4
    return "other", 4  # atomics and the rest: one dword


def global_bytes_per_lane(mn: str) -> Tuple[str, int]:
    """('load'|'store', bytes per lane) of a buffer_/global_/flat_ memory instruction."""
    m = re.match(r"(buffer|global|flat)_(load|store|atomic)_(?:lds_)?([a-z0-9_]+)$", mn)
    if not m:
        return "other", 0
    kind = "load" if m.group(2) == "load" else "store"
    return kind, _BUF_WIDTH.get(m.group(3), 4)


@dataclass
class Inst:
    mnemonic: str
    operands: str
    line: int


@dataclass
class Block:
    label: str
    insts: List[Inst] = field(default_factory=list)
    loop_header: Optional[str] = None  # innermost loop header label this block belongs to
    parent_loop: Optional[str] = None  # a loop header block's enclosing loop (`Parent Loop BBx`)
    succ: List[str] = field(default_factory=list)
    index: int = 0


@dataclass
class Counts:
    """Instruction-class counts of a set of instructions, per wave (wave64)."""
    mfma: Dict[str, int] = field(default_factory=dict)
    mfma_cycles: float = 0.0
    mfma_flops: float = 0.0
    lds_read_bytes: float = 0.0     # per wave: lanes x width
    lds_write_bytes: float = 0.0
    lds_read: Dict[int, int] = field(default_factory=dict)   # width -> instructions
    lds_write: Dict[int, int] = field(default_factory=dict)
    global_load_bytes: float = 0.0
    global_store_bytes: float = 0.0
    global_load: Dict[int, int] = field(default_factory=dict)
    valu: int = 0
    salu: int = 0
    smem: int = 0
    branch: int = 0
    nop_cycles: int = 0
    barriers: int = 0
    waitcnt: int = 0
    lgkm_waits: int = 0
    vm_waits: int = 0
    memory: int = 0
    instructions: int = 0
    # the LDS waits whose distance from the reads they wait for is known (a path's, lds_wait_gaps):
    # issue cycles of the wave's own work between the youngest LDS / scalar-memory operation a
    # wait newly requires and the wait -> how many such waits (inf: it requires nothing new).
    # Waits of lgkm_waits not covered here are charged a whole LDS latency (model.py).
    lgkm_gaps: Dict[float, float] = field(default_factory=dict)

    def add(self, o: "Counts", times: float = 1.0) -> None:
        for k, v in o.mfma.items():
            self.mfma[k] = self.mfma.get(k, 0) + v * times
        for d, od in ((self.lds_read, o.lds_read), (self.lds_write, o.lds_write),
                      (self.global_load, o.global_load), (self.lgkm_gaps, o.lgkm_gaps)):
            for k, v in od.items():
                d[k] = d.get(k, 0) + v * times
        for name in ("mfma_cycles", "mfma_flops", "lds_read_bytes", "lds_write_bytes",
                     "global_load_bytes", "global_store_bytes", "valu", "salu", "smem", "branch",
                     "nop_cycles", "barriers", "waitcnt", "lgkm_waits", "vm_waits", "memory",
                     "instructions"):
            setattr(self, name, getattr(self, name) + getattr(o, name) * times)


def nop_cycles(ins: Inst) -> int:
    """The wait states of `s_nop n`: n + 1 cycles (n 0 when unreadable)."""
    try:
        return int(ins.operands.split()[0], 0) + 1
    except (ValueError, IndexError):
        return 1


def count_insts(insts: List[Inst], target: str, wave: int = 64) -> Counts:
    c = Counts()
    for ins in insts:
        mn = ins.mnemonic
        c.instructions += 1
        if mn.startswith("v_mfma"):
            c.mfma[mn] = c.mfma.get(mn, 0) + 1
            c.mfma_cycles += mfma_cycles(target, mn)
            c.mfma_flops += mfma_flops(mn)
        elif mn.startswith("ds_"):
            kind, w = lds_bytes_per_lane(mn)
            c.memory += 1
            if kind == "write":
                c.lds_write_bytes += w * wave
                c.lds_write[w] = c.lds_write.get(w, 0) + 1
            else:
                c.lds_read_bytes += w * wave
                c.lds_read[w] = c.lds_read.get(w, 0) + 1
        elif mn.startswith(("buffer_", "global_", "flat_", "scratch_")):
            kind, w = global_bytes_per_lane(mn)
            c.memory += 1
            if kind == "load":
                c.global_load_bytes += w * wave
                c.global_load[w] = c.global_load.get(w, 0) + 1
                if " lds" in " " + ins.operands or mn.startswith(("buffer_load_lds", "global_load_lds")):
                    c.lds_write_bytes += w * wave  # direct global -> LDS
            elif kind == "store":
                c.global_store_bytes += w * wave
        elif mn == "s_nop":
            c.nop_cycles += nop_cycles(ins)
        elif mn == "s_barrier":
            c.barriers += 1
        elif mn == "s_waitcnt":
            c.waitcnt += 1
            if "lgkmcnt" in ins.operands:
                c.lgkm_waits += 1
            if "vmcnt" in ins.operands:
                c.vm_waits += 1
        elif mn.startswith(("s_cbranch", "s_branch", "s_setpc", "s_swappc")):
            c.branch += 1
        elif mn.startswith(("s_load", "s_buffer_load", "s_store", "s_memtime", "s_dcache")):
            c.smem += 1
        elif mn.startswith("s_"):
            c.salu += 1
        elif mn.startswith("v_"):
            c.valu += 1
        else:
            c.instructions -= 0  # directives never reach here
    return c


# The FP8-output store's mark: the epilogue's IEEE division by y_scale (quantize_e4m3fn,
# conv/fp8_scale.hpp) is the only float division in a conv kernel, and a bf16-output launch never
# runs it. LLVM's f32 division ends in v_div_fixup_f32.
FP8_OUTPUT_MARK = ("v_div_fixup_f32",)


@dataclass
class Kernel:
    name: str
    target: str
    blocks: List[Block]
    meta: Dict[str, int]
    loop_blocks: List[str] = field(default_factory=list)   # the main loop's blocks
    loop_counts: Optional[Counts] = None                   # one trip of the main loop
    # one trip along its shortest path (every K tile inside its tap) and its longest one (every
    # K tile changing tap): predict.py weighs them by how often a K tile changes tap
    steady_counts: Optional[Counts] = None
    longest_counts: Optional[Counts] = None
    prologue: Tuple[Counts, Counts] = None                 # shortest, longest path
    epilogue: Tuple[Counts, Counts] = None
    # the epilogue of a launch with a bf16 output: its paths avoid the FP8-output store, the
    # blocks that divide by y_scale (FP8_OUTPUT_MARK); None where no such path reaches the end
    epilogue_bf16_out: Optional[Tuple[Counts, Counts]] = None
    decoded: Dict[str, object] = field(default_factory=dict)
    # the loads' waits of one steady trip: (barrier interval of the wait, MFMAs between the
    # youngest load it newly requires and the wait); MFMAs and barriers of one trip on that path
    loop_waits: List[Tuple[int, int]] = field(default_factory=list)
    loop_mfma: int = 0
    loop_barriers: int = 0

    @property
    def total_mfma(self) -> int:
        return sum(sum(count_insts(b.insts, self.target).mfma.values()) for b in self.blocks)


_LABEL = re.compile(r"^(\.LBB\d+_\d+|_Z[A-Za-z0-9_]+):")
_BB_COMMENT = re.compile(r"^; %bb\.(\d+):")
_LOOP_IN = re.compile(r"in Loop: Header=BB(\d+_\d+)|Parent Loop BB(\d+_\d+)")
_META = {
    "vgpr": re.compile(r"^; NumVgprs: (\d+)"),
    "agpr": re.compile(r"^; NumAgprs: (\d+)"),
    "sgpr": re.compile(r"^; TotalNumSgprs: (\d+)"),
    "scratch": re.compile(r"^; ScratchSize: (\d+)"),
    "occupancy": re.compile(r"^; Occupancy: (\d+)"),
    "lds": re.compile(r"^; LDSByteSize: (\d+)"),
}
_AMDHSA = re.compile(r"^\s*\.amdhsa_(next_free_vgpr|next_free_sgpr|accum_offset|"
                     r"group_segment_fixed_size|private_segment_fixed_size)\s+(\d+)")


def _parse_body(lines: List[Tuple[int, str]], name: str) -> List[Block]:
    """Blocks of one function body: (line number, text) pairs from its label to .Lfunc_end."""
    blocks: List[Block] = [Block(label=name)]
    header_of_current: Optional[str] = None
    for ln, raw in lines:
        text = raw.strip()
        lab = _LABEL.match(raw)
        bbc = _BB_COMMENT.match(text)
        if lab or bbc:
            label = lab.group(1) if lab else f"%bb.{bbc.group(1)}"
            if label != name:
                blocks.append(Block(label=label))
            header_of_current = None
            rest = raw[raw.index(":") + 1:]
            mp = re.search(r"Parent Loop BB(\d+_\d+)", rest)
            if mp:
                blocks[-1].parent_loop = "BB" + mp.group(1)
            if "=>This Loop Header" in rest or "=>  This Inner Loop Header" in rest \
                    or "This Inner Loop Header" in rest or "This Loop Header" in rest:
                blocks[-1].loop_header = label.replace(".LBB", "BB").lstrip(".")
            else:
                m = _LOOP_IN.search(rest)
                if m:
                    blocks[-1].loop_header = "BB" + (m.group(1) or m.group(2))
            continue
        if not text or text.startswith((";", ".", "//")):
            # comment-only continuation lines may carry loop info for the block just opened
            m = _LOOP_IN.search(text)
            if m and blocks[-1].loop_header is None and not blocks[-1].insts:
                blocks[-1].loop_header = "BB" + (m.group(1) or m.group(2))
            if "Inner Loop Header" in text and not blocks[-1].insts:
                blocks[-1].loop_header = blocks[-1].label.replace(".LBB", "BB")
            continue
        code = text.split(";")[0].strip()
        if not code:
            continue
        parts = code.split(None, 1)
        blocks[-1].insts.append(Inst(parts[0], parts[1] if len(parts) > 1 else "", ln))
    # A label with no instruction (LLVM leaves one where an empty block falls through, e.g.
    # `.LBB_x:` right above the `s_endpgm` block) names the next block that has one: a branch
    # to it must keep its edge, or the path that takes it never reaches the end.
    alias: Dict[str, str] = {}
    pending: List[str] = []
    for b in blocks:
        if b.insts or b.label == name:
            for lab in pending:
                alias[lab] = b.label
            pending = []
        else:
            pending.append(b.label)
    blocks = [b for b in blocks if b.insts or b.label == name]
    for i, b in enumerate(blocks):
        b.index = i
    # successors
    labels = {b.label: b for b in blocks}
    for lab, to in alias.items():
        labels[lab] = labels[to]
    for i, b in enumerate(blocks):
        last = b.insts[-1] if b.insts else None
        if last is not None and last.mnemonic.startswith(("s_branch", "s_cbranch")):
            tgt = last.operands.split()[0]
            if tgt in labels:
                b.succ.append(labels[tgt].label)
            if last.mnemonic.startswith("s_cbranch") and i + 1 < len(blocks):
                b.succ.append(blocks[i + 1].label)
        elif last is not None and last.mnemonic == "s_endpgm":
            pass
        elif i + 1 < len(blocks):
            b.succ.append(blocks[i + 1].label)
    return blocks


def _loops_from_comments(blocks: List[Block]) -> Dict[str, List[int]]:
    """header label (BBx_y) -> indices of the blocks in that loop, children included."""
    direct: Dict[str, List[int]] = {}
    for b in blocks:
        if b.loop_header:
            direct.setdefault(b.loop_header, []).append(b.index)
    return direct


def _loops_from_backedges(blocks: List[Block]) -> List[Tuple[int, int]]:
    """Merged [first, last] block-index intervals spanned by backward branches."""
    idx = {b.label: b.index for b in blocks}
    iv = []
    for b in blocks:
        for s in b.succ:
            if idx[s] <= b.index and b.insts and b.insts[-1].mnemonic.startswith(
                    ("s_branch", "s_cbranch")) and b.insts[-1].operands.split()[0] == s:
                iv.append((idx[s], b.index))
    iv.sort()
    merged: List[List[int]] = []
    for a, z in iv:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], z)
        else:
            merged.append([a, z])
    return [tuple(x) for x in merged]


def _has_mfma(blocks: List[Block], ids) -> int:
    return sum(1 for i in ids for ins in blocks[i].insts if ins.mnemonic.startswith("v_mfma"))


def find_main_loop(blocks: List[Block]) -> List[int]:
    """Indices of the blocks of the main (MFMA) loop; [] when the kernel has no MFMA loop."""
    comment_loops = _loops_from_comments(blocks)
    if comment_loops:
        # full membership: a loop's blocks plus those of loops whose blocks say Parent Loop
        # (the comments name the innermost header; nest by interval containment)
        spans = {h: (min(ix), max(ix)) for h, ix in comment_loops.items()}
        # a child loop's header names its parent (`Parent Loop BBx`): the child belongs to it
        # wherever it is placed (LLVM may lay a child loop out after the parent's last block)
        parent = {}
        for b in blocks:
            own = b.label.replace(".LBB", "BB").lstrip(".")
            if b.parent_loop and b.loop_header == own:
                parent[own] = b.parent_loop
        members = {}
        for h, (a, z) in spans.items():
            ids = set(comment_loops[h])
            for h2, (a2, z2) in spans.items():
                up = parent.get(h2)
                while up is not None and up != h:
                    up = parent.get(up)
                if h2 != h and (a <= a2 and z2 <= z or up == h):
                    ids |= set(comment_loops[h2])
            a, z = min(ids), max(ids)
            # every block inside the interval belongs to the loop (rotated loops keep a span)
            ids |= set(range(a, z + 1))
            members[h] = sorted(ids)
        cands = [(h, ids) for h, ids in members.items() if _has_mfma(blocks, ids)]
        if not cands:
            return []
        # outermost MFMA loops first: the one with the most MFMAs, then descend while one child
        # holds every MFMA of its parent
        best = max(cands, key=lambda c: (_has_mfma(blocks, c[1]), len(c[1])))
        while True:
            total = _has_mfma(blocks, best[1])
            inner = [c for c in cands if c[0] != best[0] and set(c[1]) < set(best[1])
                     and _has_mfma(blocks, c[1]) == total]
            if not inner:
                return best[1]
            best = min(inner, key=lambda c: len(c[1]))
    ivs = [iv for iv in _loops_from_backedges(blocks) if _has_mfma(blocks, range(iv[0], iv[1] + 1))]
    if not ivs:
        return []
    a, z = max(ivs, key=lambda iv: _has_mfma(blocks, range(iv[0], iv[1] + 1)))
    return list(range(a, z + 1))


def back_edges(blocks: List[Block]) -> set:
    """The loops' back edges (i, j) of the whole function: the edges a depth-first search from
    the entry block takes to a block still on its stack. In a reducible graph (what LLVM emits)
    these are the edges whose target dominates their source, whatever the search order and
    wherever LLVM lays the blocks out: a rotated loop, whose exiting block sits above its
    header, keeps its exit edge. Without them the graph is acyclic: every loop outside the main
    loop counts one trip."""
    idx = {b.label: b.index for b in blocks}
    succ = [[idx[s] for s in b.succ] for b in blocks]
    back = set()
    state: Dict[int, int] = {0: 1}   # 1: on the stack, 2: finished
    stack = [(0, iter(succ[0]))] if blocks else []
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[node] = 2
            stack.pop()
        elif state.get(nxt) == 1:
            back.add((node, nxt))
        elif nxt not in state:
            state[nxt] = 1
            stack.append((nxt, iter(succ[nxt])))
    return back


_PAIR = r"s\[\d+:\d+\]"
# The structurizer's uniform test of a flow bit before s_cbranch_vccz/vccnz, in the two forms
# LLVM emits: vcc = exec & flag (`s_and_b64`, either operand order) and vcc = exec & ~flag
# (`s_andn2_b64`, the other side of an if/else: zero where the flag is -1).
_FLOW_TEST = {
    "s_and_b64": (re.compile(rf"^vcc,\s*exec,\s*({_PAIR})$"),
                  re.compile(rf"^vcc,\s*({_PAIR}),\s*exec$")),
    "s_andn2_b64": (re.compile(rf"^vcc,\s*exec,\s*({_PAIR})$"),),
}


def _flow_test(ins: Inst) -> Optional[Tuple[str, bool]]:
    """(flow register, negated) when `ins` is a flow-bit test of vcc, else None."""
    for pat in _FLOW_TEST.get(ins.mnemonic, ()):
        m = pat.match(ins.operands.split(";")[0].strip())
        if m:
            return m.group(1), ins.mnemonic == "s_andn2_b64"
    return None


_SREG = re.compile(r"^s(?:(\d+)|\[(\d+):(\d+)\])$")
# Scalar instructions whose first operand is read, not written.
_READS_FIRST = ("s_cmp", "s_bitcmp", "s_store", "s_buffer_store", "s_scratch_store",
                "s_cbranch", "s_setpc", "s_set_gpr_idx", "s_setreg", "s_sendmsg", "s_waitcnt",
                "s_branch", "s_nop", "s_endpgm", "s_barrier", "s_dcache", "s_sleep")
# VOP3b instructions that also write an SGPR pair as their second operand (carry / scale flag).
_WRITES_SECOND = re.compile(r"^v_(?:add|sub|subrev|addc|subb|subbrev)_co_|^v_div_scale_|"
                            r"^v_mad_(?:u64_u32|i64_i32)")


def _sreg_span(op: str) -> Optional[Tuple[int, int]]:
    m = _SREG.match(op.strip())
    if not m:
        return None
    if m.group(1) is not None:
        return int(m.group(1)), int(m.group(1))
    return int(m.group(2)), int(m.group(3))


def _written_sregs(ins: Inst) -> List[Tuple[int, int]]:
    """The SGPR spans an instruction writes (first operand, and the carry-out of VOP3b)."""
    mn = ins.mnemonic
    if mn.startswith(_READS_FIRST):
        return []
    ops = [o.strip() for o in ins.operands.split(";")[0].split(",")]
    out = [_sreg_span(ops[0])] if ops and ops[0] else []
    if len(ops) > 1 and _WRITES_SECOND.match(mn):
        out.append(_sreg_span(ops[1]))
    return [sp for sp in out if sp is not None]


def _flow_registers(blocks: List[Block]) -> Tuple[str, ...]:
    """The SGPR pairs that AMDGPU's structurized control flow tests (`s_and_b64 vcc, exec,
    s[a:b]` or `s_andn2_b64 vcc, exec, s[a:b]`) before a uniform `s_cbranch_vccz/vccnz`: the
    flow bits that say which of two exclusive regions ran."""
    regs = set()
    for b in blocks:
        for ins in b.insts:
            t = _flow_test(ins)
            if t:
                regs.add(t[0])
    return tuple(sorted(regs))


def _flow_after(insts: List[Inst], regs: Tuple[str, ...], state: Tuple) -> Tuple:
    """The flow registers' known values (0, -1 or None) after `insts`: an s_mov_b64 of 0 or -1
    sets one; a copy (s_mov_b64) or a negation (s_not_b64, s_xor_b64 with -1) of a known flow
    register sets it to that value or its complement; any other write to any of its SGPRs (a
    32-bit half or a wider span included) forgets it."""
    if not regs:
        return state
    spans = [_sreg_span(r) for r in regs]
    vals = list(state)
    for ins in insts:
        written = _written_sregs(ins)
        if not written:
            continue
        ops = [o.strip() for o in ins.operands.split(";")[0].split(",")]
        dest = ops[0]
        new = None
        if dest in regs:
            src = [vals[regs.index(o)] if o in regs else (int(o) if o in ("0", "-1") else None)
                   for o in ops[1:]]
            if ins.mnemonic == "s_mov_b64" and len(src) == 1:
                new = src[0]
            elif ins.mnemonic == "s_not_b64" and len(src) == 1 and src[0] is not None:
                new = ~src[0]
            elif ins.mnemonic == "s_xor_b64" and len(src) == 2 and None not in src:
                new = src[0] ^ src[1]
        for k, (lo, hi) in enumerate(spans):
            if any(a <= hi and lo <= b for a, b in written):
                vals[k] = None
        if dest in regs:
            vals[regs.index(dest)] = new
    return tuple(vals)


def _flow_successors(blocks: List[Block], idx: Dict[str, int], i: int, succ: List[int],
                     regs: Tuple[str, ...], state: Tuple) -> List[int]:
    """The successors a path can take out of block i: where the block ends in a uniform
    vccz/vccnz branch on a flow register whose value the path set, only the side it selects."""
    insts = blocks[i].insts
    if not regs or not insts or insts[-1].mnemonic not in ("s_cbranch_vccz", "s_cbranch_vccnz"):
        return succ
    for ins in reversed(insts[:-1]):
        ops = [o.strip() for o in ins.operands.split(";")[0].split(",")]
        if not (ops[0] == "vcc" or (len(ops) > 1 and ops[1] == "vcc"
                                    and _WRITES_SECOND.match(ins.mnemonic))):
            continue
        t = _flow_test(ins)
        if not t or state[regs.index(t[0])] is None:
            return succ
        flag = state[regs.index(t[0])]
        # exec is not empty here: vcc is zero exactly where the (possibly negated) flag is 0
        vcc_zero = (flag == -1) if t[1] else (flag == 0)
        taken = vcc_zero if insts[-1].mnemonic == "s_cbranch_vccz" else not vcc_zero
        target = idx.get(blocks[i].succ[0]) if blocks[i].succ else None
        fall = i + 1 if i + 1 < len(blocks) else None
        pick = target if taken else fall
        return [j for j in succ if j == pick]
    return succ


def _path_counts(blocks: List[Block], start: int, stop: set, exclude: set, target: str,
                 longest: bool, back: Optional[set] = None) -> Counts:
    """Instruction counts along the shortest or longest path from block `start` to a block in
    `stop` (when `stop` is empty: to a block ending in s_endpgm), through blocks not in
    `exclude`, over the function's acyclic graph (`back_edges` removed: a loop outside the main
    loop, its store loops included, counts one trip; block order plays no part). A path is
    feasible for AMDGPU's structurized flow: a uniform vccz/vccnz test of a flow register the
    path itself set to 0 or -1 takes the side that value selects, so a launch's exclusive
    alternatives (the epilogue's packed staging and its fp32 slabs) are never summed. Paths that
    never reach the target do not count."""
    if back is None:
        back = back_edges(blocks)
    idx = {b.label: b.index for b in blocks}
    n = len(blocks)
    regs = _flow_registers(blocks)
    dag = [[j for j in (idx[s] for s in blocks[i].succ)
            if (i, j) not in back and (j not in exclude or j in stop)] for i in range(n)]

    def is_end(i: int) -> bool:
        return i in stop or (not stop and bool(blocks[i].insts)
                             and blocks[i].insts[-1].mnemonic == "s_endpgm")

    memo: Dict[Tuple, List[Tuple]] = {}

    def nexts(node):
        if node not in memo:
            i, st = node
            out = _flow_after(blocks[i].insts, regs, st)
            memo[node] = [] if is_end(i) else \
                [(j, out) for j in _flow_successors(blocks, idx, i, dag[i], regs, out)]
        return memo[node]

    # post-order of the (block, flow state) pairs reachable from start: successors first
    first = (start, tuple([None] * len(regs)))
    order = []
    seen = {first}
    walk = [(first, iter(nexts(first)))]
    while walk:
        node, it = walk[-1]
        nxt = next(it, None)
        if nxt is None:
            order.append(node)
            walk.pop()
        elif nxt not in seen:
            seen.add(nxt)
            walk.append((nxt, iter(nexts(nxt))))
    best: Dict[Tuple, int] = {}
    follow: Dict[Tuple, Tuple] = {}
    for node in order:
        i = node[0]
        if i in stop:
            best[node] = 0
            continue
        own = len(blocks[i].insts)
        if is_end(i):
            best[node] = own
            continue
        cand = [(best[m], m[0], m) for m in nexts(node) if m in best]
        if not cand:
            continue  # cannot reach the target
        pick = max(cand) if longest else min(cand)
        best[node] = own + pick[0]
        follow[node] = pick[2]
    c = Counts()
    node: Optional[Tuple] = first if first in best else None
    while node is not None and node[0] not in stop:
        c.add(count_insts(blocks[node[0]].insts, target))
        node = follow.get(node)
    return c


_VMEM = ("buffer_", "global_", "flat_", "scratch_")
_VMCNT = re.compile(r"vmcnt\((\d+)\)")
_LGKMCNT = re.compile(r"lgkmcnt\((\d+)\)")
_LGKM_OPS = ("ds_", "s_load", "s_buffer_load", "s_dcache")  # what lgkmcnt counts (gfx9)
VALU_ISSUE_CYCLES = 4  # a wave64 VALU instruction on a 16-lane SIMD


def issue_cycles(ins: Inst, target: str) -> int:
    """Cycles the wave's own instruction holds its SIMD's issue: an MFMA its passes, a wave64
    VALU instruction 4, s_nop n n + 1, anything else 1. What lies between an LDS read and the
    wait for it, to hide the read's latency."""
    mn = ins.mnemonic
    if mn.startswith("v_mfma"):
        return mfma_cycles(target, mn)
    if mn.startswith("v_"):
        return VALU_ISSUE_CYCLES
    if mn == "s_nop":
        return nop_cycles(ins)
    return 1


def lds_wait_gaps(path: List[Inst], target: str) -> Dict[float, float]:
    """The LDS waits of one trip along `path` (run twice, the second trip seeing what the first
    left in flight), each `s_waitcnt lgkmcnt(N)` requiring every LDS / scalar-memory operation
    but the N youngest: the issue cycles (issue_cycles) between the youngest operation it newly
    requires and the wait -> how many waits; a wait that requires nothing an earlier one did not
    at inf. The model charges each max(LDS latency - gap, 0) instead of a whole latency."""
    issued: List[int] = []   # cycle count at each lgkm operation's issue
    cyc = 0
    required = -1
    gaps: Dict[float, float] = {}
    for trip in range(2):
        for ins in path:
            mn = ins.mnemonic
            if mn == "s_waitcnt":
                m = _LGKMCNT.search(ins.operands)
                if m:
                    youngest = len(issued) - 1 - int(m.group(1))
                    gap = float("inf")
                    if youngest > required:
                        required = youngest
                        gap = float(cyc - issued[youngest])
                    if trip == 1:
                        gaps[gap] = gaps.get(gap, 0.0) + 1.0
            elif mn.startswith(_LGKM_OPS):
                issued.append(cyc)
            cyc += issue_cycles(ins, target)
    return gaps


def _header_index(blocks: List[Block], loop: List[int]) -> int:
    """The main loop's header: the loop block entered from outside the loop (a child loop's
    header is entered from inside); the first loop block when none is."""
    ids = set(loop)
    for i in loop:
        if any(j not in ids and blocks[i].label in blocks[j].succ for j in range(len(blocks))):
            return i
    return loop[0]


def _best_trip(blocks: List[Block], loop: List[int], succ, cost, better) -> Optional[List[Inst]]:
    """The best path through one trip of the loop from its header to a block that branches back
    to it, over `succ(i)` (loop blocks only), child loops' back edges dropped (a child loop counts
    one trip): path costs are sums of `cost(i)` (a tuple), `better(a, b)` says a beats b. None
    when no path reaches a latch."""
    head = _header_index(blocks, loop)
    # DFS from the header over loop edges; an edge to a block on the stack is a back edge
    back = set()
    state: Dict[int, int] = {head: 1}
    order: List[int] = []
    stack = [(head, iter(succ(head)))]
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[node] = 2
            order.append(node)
            stack.pop()
            continue
        if state.get(nxt) == 1:
            back.add((node, nxt))
        elif nxt not in state:
            state[nxt] = 1
            stack.append((nxt, iter(succ(nxt))))
    best: Dict[int, Tuple] = {head: cost(head)}
    prev: Dict[int, Optional[int]] = {head: None}
    for n in order[::-1]:
        if n not in best:
            continue
        for m in succ(n):
            if (n, m) in back:
                continue
            cand = tuple(x + y for x, y in zip(best[n], cost(m)))
            if best.get(m) is None or better(cand, best[m]):
                best[m] = cand
                prev[m] = n
    latches = [n for n in best if (n, head) in back]
    if not latches:
        return None
    end = latches[0]
    for n in latches[1:]:
        if better(best[n], best[end]):
            end = n
    path = []
    n: Optional[int] = end
    while n is not None:
        path.append(n)
        n = prev[n]
    return [ins for i in reversed(path) for ins in blocks[i].insts]


def loop_path(blocks: List[Block], loop: List[int]) -> List[Inst]:
    """Instructions of the longest path (by instruction count) through one trip of the loop:
    from its header to a block that branches back to it, back edges of child loops dropped
    (a child loop counts one trip), so every load and refill of the trip is on it."""
    ids = set(loop)
    idx = {b.label: b.index for b in blocks}
    succ = {i: [idx[s] for s in blocks[i].succ if idx[s] in ids] for i in loop}
    path = _best_trip(blocks, loop, lambda i: succ[i], lambda i: (len(blocks[i].insts),),
                      lambda a, b: a > b)
    return path if path is not None else [ins for i in loop for ins in blocks[i].insts]


def loop_steady_path(blocks: List[Block], loop: List[int]) -> Optional[List[Inst]]:
    """Instructions of the shortest path (by instruction count, among those with the trip's
    most MFMAs, then most global loads: a steady trip refills) through one trip of the loop,
    where only scalar (scc / vcc) branches choose: an exec-mask skip (s_cbranch_execz/execnz,
    taken only when no lane is active) always falls through into the block it guards. For the
    implicit GEMM's K loop this is the trip whose every K tile stays inside its tap: the tap
    change (the tile cursor's carry and refresh, conv_gather.hpp TileConvGather::advance, child
    loops included) lies off it. None when no trip reaches a latch."""
    ids = set(loop)
    idx = {b.label: b.index for b in blocks}

    def succ(i: int) -> List[int]:
        out = [idx[s] for s in blocks[i].succ if idx[s] in ids]
        last = blocks[i].insts[-1] if blocks[i].insts else None
        if last is not None and last.mnemonic in ("s_cbranch_execz", "s_cbranch_execnz") \
                and len(blocks[i].succ) == 2 and i + 1 in ids:
            out = [i + 1]
        return out

    # cost (-MFMAs, -global loads, instructions): a full trip's matrix work and refills first (a
    # trip that leaves the loop early, e.g. the steady test failing, or skips a refill past K is
    # no trip of the steady state), then the fewest instructions
    def cost(i: int) -> Tuple[int, int, int]:
        return (-sum(1 for x in blocks[i].insts if x.mnemonic.startswith("v_mfma")),
                -sum(1 for x in blocks[i].insts if x.mnemonic.startswith(_VMEM)
                     and "load" in x.mnemonic),
                len(blocks[i].insts))
    return _best_trip(blocks, loop, succ, cost, lambda a, b: a < b)


def loop_waits(path: List[Inst]) -> Tuple[List[Tuple[int, int]], int, int]:
    """The vmcnt waits of one steady trip along `path` (see the module docstring): for each
    wait that newly requires a load, (the barrier interval it sits in: barriers of the trip
    before it, modulo the trip's barriers; MFMAs between that load's issue and the wait); and
    the trip's MFMA and barrier counts."""
    issued: List[int] = []   # MFMA count (over both passes) at each vector memory instruction
    mfma = 0
    bars = 0
    required = -1            # index into `issued` of the youngest load required so far
    per_trip = sum(1 for ins in path if ins.mnemonic.startswith("v_mfma"))
    bars_per_trip = sum(1 for ins in path if ins.mnemonic == "s_barrier")
    waits: List[Tuple[int, int]] = []
    for trip in range(2):
        for ins in path:
            mn = ins.mnemonic
            if mn.startswith("v_mfma"):
                mfma += 1
            elif mn == "s_barrier":
                bars += 1
            elif mn.startswith(_VMEM):
                issued.append(mfma)
            elif mn == "s_waitcnt":
                m = _VMCNT.search(ins.operands)
                if not m:
                    continue
                youngest = len(issued) - 1 - int(m.group(1))
                if youngest > required:
                    required = youngest
                    if trip == 1:
                        waits.append((bars % max(bars_per_trip, 1), mfma - issued[youngest]))
    return waits, per_trip, bars_per_trip


def prefetch_steps(kern: "Kernel", tiles_per_trip: float) -> List[Optional[float]]:
    """Per wait point of the main loop's trip (the code up to one of its barriers: a K tile's
    flush and barrier in a staged loop), the prefetch distance of its global wait: the matrix
    work between the issue of the youngest load it newly requires and the wait, in K tiles
    (the strictest of the point's waits). None: the point requires no load that an earlier wait
    of the trip did not already require (it pays no global latency). One entry per barrier of
    the trip (one when it has none); [] without a main loop or without waits read (a public
    kernel's counts stored as JSON: the plan's stages - 1 stays)."""
    loop_mfma = getattr(kern, "loop_mfma", 0)  # counts stored without their waits: none
    if tiles_per_trip <= 0 or loop_mfma <= 0:
        return []
    per_tile = loop_mfma / tiles_per_trip
    steps: List[Optional[float]] = [None] * max(kern.loop_barriers, 1)
    for g, between in kern.loop_waits:
        d = between / per_tile
        steps[g] = d if steps[g] is None else min(steps[g], d)
    return steps


def split_at_barriers(blocks: List[Block]) -> List[Block]:
    """The blocks with each one cut after every s_barrier (the pieces chained by fall-through,
    the last keeping the block's successors): a kernel without a K loop (the tap-row kernel on
    fragment atoms) then has its matrix section, from the fill's barrier to the epilogue's, as
    blocks of its own."""
    out: List[Block] = []
    for b in blocks:
        parts: List[List[Inst]] = [[]]
        for ins in b.insts:
            parts[-1].append(ins)
            if ins.mnemonic == "s_barrier":
                parts.append([])
        if len(parts) > 1 and not parts[-1]:
            parts.pop()
        for j, insts in enumerate(parts):
            nb = Block(label=b.label if j == 0 else f"{b.label}.after_barrier{j}", insts=insts,
                       loop_header=b.loop_header, parent_loop=b.parent_loop)
            nb.succ = [f"{b.label}.after_barrier{j + 1}"] if j + 1 < len(parts) else list(b.succ)
            out.append(nb)
    for i, b in enumerate(out):
        b.index = i
    return out


def straight_matrix_section(blocks: List[Block]) -> List[int]:
    """A kernel without a K loop: the blocks from its first MFMA's to its last MFMA's (cut at
    barriers: split_at_barriers), one K tile of the model; [] when they are not one chain."""
    mf = [b.index for b in blocks if any(x.mnemonic.startswith("v_mfma") for x in b.insts)]
    if not mf:
        return []
    ids = list(range(min(mf), max(mf) + 1))
    for i in ids[:-1]:  # one chain: each block falls through to the next alone
        if blocks[i].succ != [blocks[i + 1].label]:
            return []
    # the section runs to the piece of the last MFMA: LLVM may sink MFMAs past the epilogue's
    # barrier (they touch no memory), and that piece's other instructions (a few of the
    # epilogue's first) are then charged to the trip with them
    return ids


def analyse(name: str, target: str, body: List[Tuple[int, str]], meta: Dict[str, int]) -> Kernel:
    blocks = _parse_body(body, name)
    k = Kernel(name=name, target=target, blocks=blocks, meta=meta)
    loop = find_main_loop(blocks)
    k.decoded = decode_name(name)
    straight = False
    if not loop and k.decoded.get("family") == "tap_row":
        # one K tile and no K loop: its matrix section is the model's one trip
        cut = split_at_barriers(blocks)
        loop = straight_matrix_section(cut)
        if loop:
            blocks = k.blocks = cut
            straight = True
    k.loop_blocks = [blocks[i].label for i in loop]
    if not loop:
        return k
    lc = Counts()
    for i in loop:
        lc.add(count_insts(blocks[i].insts, target))
    k.loop_counts = lc
    if straight:
        longest = [ins for i in loop for ins in blocks[i].insts]
    else:
        longest = loop_path(blocks, loop)
        steady = loop_steady_path(blocks, loop)
        if steady is not None:
            k.steady_counts = count_insts(steady, target)
            k.steady_counts.lgkm_gaps = lds_wait_gaps(steady, target)
            k.longest_counts = count_insts(longest, target)
            k.longest_counts.lgkm_gaps = lds_wait_gaps(longest, target)
    # the union of the loop's blocks: its longest path's waits (the rest charged whole)
    k.loop_counts.lgkm_gaps = lds_wait_gaps(longest, target)
    k.loop_waits, k.loop_mfma, k.loop_barriers = loop_waits(longest)
    loop_set = set(loop)
    back = back_edges(blocks)
    # prologue: entry -> the loop; epilogue: first block after the loop -> end
    k.prologue = (_path_counts(blocks, 0, loop_set, set(), target, False, back),
                  _path_counts(blocks, 0, loop_set, set(), target, True, back))
    idx = {b.label: b.index for b in blocks}
    exits = sorted({idx[s] for i in loop for s in blocks[i].succ if idx[s] not in loop_set})
    if exits:
        # the first exit from which the end is reached without a back edge (an exit into a
        # block that jumps back, e.g. to an enclosing loop's header, gives no path)
        fp8_out = {b.index for b in blocks if b.index not in loop_set
                   and any(i.mnemonic in FP8_OUTPUT_MARK for i in b.insts)}
        for e in exits:
            k.epilogue = (_path_counts(blocks, e, set(), loop_set, target, False, back),
                          _path_counts(blocks, e, set(), loop_set, target, True, back))
            if k.epilogue[1].instructions > 0:
                if fp8_out:
                    bf16 = (_path_counts(blocks, e, set(), loop_set | fp8_out, target, False, back),
                            _path_counts(blocks, e, set(), loop_set | fp8_out, target, True, back))
                    if bf16[1].instructions > 0:
                        k.epilogue_bf16_out = bf16
                else:
                    k.epilogue_bf16_out = k.epilogue
                break
    else:
        k.epilogue = (Counts(), Counts())
        k.epilogue_bf16_out = k.epilogue
    return k


def split_kernels(text: str) -> List[Tuple[str, List[Tuple[int, str]], Dict[str, int]]]:
    """(name, body lines, metadata) of every function with an .amdhsa_kernel descriptor."""
    lines = text.split("\n")
    out = []
    i = 0
    n = len(lines)
    bodies: Dict[str, List[Tuple[int, str]]] = {}
    metas: Dict[str, Dict[str, int]] = {}
    order: List[str] = []
    current = None
    while i < n:
        raw = lines[i]
        m = re.match(r"^(_Z[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*):\s*(;.*)?$", raw)
        if m and not raw.startswith("."):
            current = m.group(1)
            bodies[current] = []
            metas.setdefault(current, {})
            order.append(current)
            i += 1
            continue
        mk = re.match(r"^\s*\.amdhsa_kernel (\S+)", raw)
        if mk:
            kname = mk.group(1)
            metas.setdefault(kname, {})
            metas[kname]["is_kernel"] = 1
            j = i + 1
            while j < n and ".end_amdhsa_kernel" not in lines[j]:
                ma = _AMDHSA.match(lines[j])
                if ma:
                    metas[kname][ma.group(1)] = int(ma.group(2))
                j += 1
            i = j + 1
            continue
        if current is not None:
            if raw.startswith(".Lfunc_end"):
                current_done = current
                current = None
                # the compiler's comments after the body
                j = i + 1
                while j < n and not re.match(r"^(_Z[A-Za-z0-9_]+|\s*\.amdhsa_kernel )", lines[j]) \
                        and j < i + 200:
                    for key, rx in _META.items():
                        mm = rx.match(lines[j])
                        if mm:
                            metas[current_done][key] = int(mm.group(1))
                    j += 1
                i += 1
                continue
            bodies[current].append((i + 1, raw))
        i += 1
    for name in order:
        if metas.get(name, {}).get("is_kernel"):
            out.append((name, bodies[name], metas[name]))
    return out


def parse_file(path: str, target: str, only_vaeconv: bool = True) -> List[Kernel]:
    with open(path) as f:
        text = f.read()
    ks = []
    for name, body, meta in split_kernels(text):
        if only_vaeconv and not name.startswith("_ZN7vaeconv"):
            continue
        ks.append(analyse(name, target, body, meta))
    return ks


def decode_name(mangled: str) -> Dict[str, object]:
    """The fields resource_report.cmake reads from a mangled kernel name."""
    d: Dict[str, object] = {"family": None}
    if "tap_reduce_kernel" in mangled:
        d["family"] = "tap_reduce"
    elif "tap_row_conv_kernel" in mangled or "tap_row_fragment_conv_kernel" in mangled:
        d["family"] = "tap_row"  # the wgmma tap-row kernel and the one on fragment atoms
    elif "halo_conv_kernel" in mangled or "halo_fragment_conv_kernel" in mangled:
        d["family"] = "halo"  # the wgmma halo kernel and the one on fragment atoms
    elif "conv_kernel" in mangled:
        d["family"] = "implicit_gemm"
    d["dtype"] = "fp8" if "AtomFp8" in mangled else "bf16"
    m = re.search(r"TileShapeILi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)E(?:Li(\d+)E)?", mangled)
    if m:
        d["tile"] = tuple(int(x) for x in m.groups()[:6])
        d["min_blocks"] = int(m.group(7)) if m.group(7) else 1
        # TwoBufferTileShape / OneBufferTileShape (kernel/tile_policy.hpp): two / one LDS
        # buffers, stages - 1 slots ahead
        d["lds_stages"] = (2 if "TwoBufferTileShape" in mangled else
                           1 if "OneBufferTileShape" in mangled else d["tile"][5])
        # SlicedKTileShape<Shape, S>: S groups of the shape's warps split K (kernel/sliced_k.hpp)
        m = re.search(r"SlicedKTileShapeINS0_\d+\w*?TileShapeI(?:Li\d+E)+EELi(\d+)EE", mangled)
        d["slices_k"] = int(m.group(1)) if m else 1
    m = re.search(r"GeometryILi(\d)ELi(\d)ELi(\d)ELi(\d)EE", mangled)
    if m:
        d["geometry"] = tuple(int(x) for x in m.groups())
    # The implicit GEMM's other A loaders are named geometry structs, not Geometry<...>: the
    # cached causal conv (CachedCausalGeometry: the causal numbers, kernel/cached_frames.hpp) and
    # the (3,1,1) temporal conv (TemporalGeometry, kernel/temporal_gather.hpp). Their numbers are
    # the ones which_kernel's plan reports (Geo::kStride, kPad, kUp, kTaps).
    d["loader"] = ""
    if "20CachedCausalGeometryE" in mangled:
        d["loader"], d["geometry"] = "cached", (1, 1, 1, 3)
    elif "16TemporalGeometryE" in mangled:
        d["loader"], d["geometry"] = "temporal", (1, 0, 1, 1)
    m = re.search(r"HaloPatchILi(\d+)ELi(\d+)E", mangled)
    if m:
        d["halo"] = (int(m.group(1)), int(m.group(2)))
    if d["family"] == "implicit_gemm":
        if mangled.endswith("ELb1EEEvNS0_10ConvParamsE"):
            d["vector"] = True
        elif mangled.endswith("ELb0EEEvNS0_10ConvParamsE"):
            d["vector"] = False
    return d


def match_plan(kernels: List[Kernel], plan_kernel: dict, dtype: str) -> List[Kernel]:
    """The kernels whose decoded name fits a dispatch_plan entry ("kernel" object)."""
    pk = plan_kernel
    tile = (pk["bm"], pk["bn"], pk["bk"], pk["warps_m"], pk["warps_n"], pk["stages"])
    out = []
    for k in kernels:
        d = k.decoded
        if d.get("family") != pk["family"] or d.get("dtype") != dtype or d.get("tile") != tile:
            continue
        if d.get("min_blocks", 1) != pk.get("min_blocks", 1):
            continue
        if d.get("lds_stages", tile[5]) != pk.get("lds_stages", pk["stages"]):
            continue
        if d.get("slices_k", 1) != pk.get("slices_k", 1):
            continue
        if pk["family"] == "implicit_gemm":
            if d.get("geometry") != tuple(pk["geometry"]) or d.get("vector") != pk["vector"]:
                continue
            if d.get("loader", "") != pk.get("loader", ""):
                continue
        out.append(k)
    return out
