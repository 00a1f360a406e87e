#!/usr/bin/env python3
"""Markdown tables of Nsight Compute's text output of `vaeconv_bench --profile`.

    python3 bench/profile_table.py OUTDIR/ncu-vendor-*.txt > profile-tables.md   (stdlib only)

bench/profile.sh (VAECONV_PROFILE_VENDOR=1) writes one text file per bench row: the bench's own
output, in which bench/profile_bracket.hpp wraps each profiled call in the lines

    vaeconv_bench --profile: begin ROW | LABEL | DETAIL
    vaeconv_bench --profile: end ROW | LABEL | ok            (or "FAILED: ...")

with ncu's `==PROF== Profiling "NAME" ...` line for each kernel launched between them, and at the
end ncu's report: per kernel a header line `NAME (gx, gy, gz)x(bx, by, bz), Context c, Stream s,
Device d, CC 9.0` and its sections, each a table under `Section: TITLE` (the raw --metrics under
`Section: Command line profiler metrics`). The report lists the kernels in launch order, so the
k-th result is the k-th "Profiling" line's kernel and takes that line's bracket (its name is
checked against the result's).

Per row, one table line per kernel: the bracket (vaeconv bf16, cudnn graph, ...), the kernel's short
name (vaeconv: tile, warps, stages, atom, geometry; a vendor kernel: its name with its tile), ncu's
duration, SM / tensor pipe / DRAM / L2 / L1 throughput in % of peak, achieved / theoretical
occupancy, registers per thread, shared memory per block (static + dynamic), grid x block, the
cluster, warp cycles per issued instruction and the three largest stall reasons (warps stalled per
issued instruction, smsp__average_warps_issue_stalled_*_per_issue_active.ratio); then each bracket's
total and the ratios vaeconv bf16 / the faster cuDNN bf16 engine and vaeconv fp8 / vaeconv bf16, and
the kernels' full names.

Exit status 1 when a file holds no profile result, a bracket failed, or a result cannot be matched
to a bracket; else 0.
"""
import os
import re
import sys

BRACKET = re.compile(r"^vaeconv_bench --profile: (begin|end) (\S+) \| (.*?) \| (.*?)\s*$")
PROFILING = re.compile(r'^==PROF== Profiling "(.*?)"')
HEADER = re.compile(
    r"^\s*(?P<name>\S.*?) \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\), "
    r"Context \d+, Stream \d+, Device \d+, CC (?P<cc>\d+\.\d+)")
SECTION = re.compile(r"^\s*Section: (.+?)\s*$")
DASHES = re.compile(r"^\s*-+(?: +-+)+\s*$")
RAW_LINE = re.compile(r"^\s*([a-z0-9_]+__[A-Za-z0-9_.]+)(?:\s+(\S+))?\s+(\S+)\s*$")
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(.+)_per_issue_active\.ratio$")
TENSOR = re.compile(r"^sm__pipe_tensor(?:_op_(.+?))?_cycles_active\.avg\.pct_of_peak_sustained_active$")

TIME_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3,
           "s": 1e6, "second": 1e6}
BYTES = {"byte": 1, "B": 1, "Kbyte": 1e3, "KB": 1e3, "Mbyte": 1e6, "MB": 1e6, "KiB": 1024.0,
         "MiB": 1024.0 ** 2}
BF16_VENDOR = ("cudnn legacy", "cudnn graph")


def number(text):
    """The float in ncu's value text ("75,032,607", "41.2"), or None ("n/a", "all", ...)."""
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


class Kernel:
    """One profile result: the header's name and launch shape, every section's table."""

    def __init__(self, name, grid, block, cc):
        self.name, self.grid, self.block, self.cc = name, grid, block, cc
        self.sections = {}  # title -> {display name: (unit, value text)}
        self.raw = {}       # raw metric name -> (unit, value text)
        self.label = self.row = self.detail = None

    def metric(self, section_words, display):
        """A section metric's (unit, value text): the first section whose title holds
        section_words, then any section."""
        for title, table in self.sections.items():
            if section_words in title and display in table:
                return table[display]
        for table in self.sections.values():
            if display in table:
                return table[display]
        return None

    def value(self, section_words, display, raw=None):
        m = self.metric(section_words, display)
        if m is None and raw is not None:
            m = self.raw.get(raw)
        return None if m is None else number(m[1])

    def duration_us(self):
        m = self.metric("Speed Of Light", "Duration") or self.raw.get("gpu__time_duration.sum")
        if m is None or number(m[1]) is None:
            return None
        return number(m[1]) * TIME_US.get(m[0], 1.0)

    def smem_kib(self):
        total, seen = 0.0, False
        for display, raw in (("Static Shared Memory Per Block", "launch__shared_mem_per_block_static"),
                             ("Dynamic Shared Memory Per Block", "launch__shared_mem_per_block_dynamic")):
            m = self.metric("Launch Statistics", display) or self.raw.get(raw)
            if m is None or number(m[1]) is None:
                continue
            seen = True
            total += number(m[1]) * BYTES.get(m[0].split("/")[0], 1.0)
        return total / 1024.0 if seen else None

    def cluster(self):
        dims = [number(self.raw.get("launch__cluster_dim_" + a, ("", ""))[1]) for a in "xyz"]
        if all(d is not None for d in dims):
            return "-" if max(dims) <= 1 else "x".join(str(int(d)) for d in dims)
        size = self.value("Launch Statistics", "Cluster Size", "launch__cluster_size")
        if size is None:
            return "n/a"
        return "-" if size <= 1 else str(int(size))

    def tensor(self):
        """(% of the tensor pipe's peak active cycles, the instruction class) or (None, "")."""
        pipes = {}
        for name, (_, text) in self.raw.items():
            m = TENSOR.match(name)
            if m and number(text) is not None:
                pipes[m.group(1) or "all"] = number(text)
        if not pipes:
            return None, ""
        pct = pipes["all"] if "all" in pipes else max(pipes.values())
        insts = {k: number(self.raw.get("sm__inst_executed_pipe_tensor_op_%s.sum" % k, ("", ""))[1]) or 0
                 for k in ("gmma", "hmma")}
        kind = "wgmma" if insts["gmma"] > 0 else "mma" if insts["hmma"] > 0 else ""
        if not kind:
            busy = {k: v for k, v in pipes.items() if k != "all" and v > 0}
            kind = max(busy, key=busy.get) if busy else ""
        return pct, kind

    def stalls(self, top=3):
        reasons = []
        for name, (_, text) in self.raw.items():
            m = STALL.match(name)
            if not m or number(text) is None:
                continue
            reason = m.group(1)
            if reason == "selected" or reason.endswith("_not_issued"):
                continue
            reasons.append((number(text), reason))
        reasons.sort(key=lambda r: (-r[0], r[1]))
        return reasons[:top]


def parse_table(lines, i, table, raw):
    """Reads the table whose first dashed line is lines[i] into table (and raw, for raw metric
    names); returns the index after it."""
    spans = [m.start() for m in re.finditer(r"-+", lines[i])]
    i += 1
    if i < len(lines) and not DASHES.match(lines[i]):  # the column titles
        i += 1
    if i < len(lines) and DASHES.match(lines[i]):
        i += 1
    while i < len(lines) and not DASHES.match(lines[i]) and lines[i].strip():
        line = lines[i]
        if len(spans) >= 3:
            name = line[:spans[1]].strip()
            unit = line[spans[1]:spans[2]].strip()
            value = line[spans[-1]:].strip() if len(spans) > 3 else line[spans[2]:].strip()
        else:
            parts = line.split()
            name, unit, value = " ".join(parts[:-1]), "", parts[-1] if parts else ""
        table[name] = (unit, value)
        if "__" in name and " " not in name:
            raw[name] = (unit, value)
        i += 1
    return i + 1 if i < len(lines) and DASHES.match(lines[i]) else i


def parse(text):
    """(launches, kernels, notes): the "Profiling" lines with their brackets, the report's results,
    and what went wrong (failed brackets, ncu errors)."""
    lines = text.splitlines()
    launches, kernels, notes = [], [], []
    bracket = None
    i = 0
    while i < len(lines):
        line = lines[i]
        b = BRACKET.match(line)
        if b:
            kind, row, label, detail = b.groups()
            if kind == "begin":
                bracket = (row, label, detail)
            else:
                if detail != "ok":
                    notes.append("bracket %s / %s: %s" % (row, label, detail))
                bracket = None
            i += 1
            continue
        p = PROFILING.match(line)
        if p:
            row, label, detail = bracket if bracket else (None, None, None)
            launches.append({"name": p.group(1), "row": row, "label": label, "detail": detail})
            i += 1
            continue
        if line.startswith("==ERROR=="):
            notes.append(line.strip())
            i += 1
            continue
        h = HEADER.match(line)
        if h:
            grid = tuple(int(v) for v in h.group("grid").split(", "))
            block = tuple(int(v) for v in h.group("block").split(", "))
            kernels.append(Kernel(h.group("name").strip(), grid, block, h.group("cc")))
            i += 1
            continue
        s = SECTION.match(line)
        if s and kernels:
            table = kernels[-1].sections.setdefault(s.group(1), {})
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            if i < len(lines) and DASHES.match(lines[i]):
                i = parse_table(lines, i, table, kernels[-1].raw)
            continue
        r = RAW_LINE.match(line)
        if r and kernels:  # a raw metric printed without a section table (older ncu)
            kernels[-1].raw[r.group(1)] = (r.group(2) or "", r.group(3))
        i += 1
    return launches, kernels, notes


def names_match(launch_name, kernel_name):
    """ncu's "Profiling" line names the kernel as launched, cut to about 30 characters with "..."
    (2025.3: `==PROF== Profiling "sm90_xmma_fprop_implicit_gemm..." - 2: ...`)."""
    if launch_name.endswith("..."):
        launch_name = launch_name[:-3]
    return not launch_name or launch_name in kernel_name


def assign(launches, kernels):
    """Gives each result the bracket of its "Profiling" line; returns the number it could not."""
    if len(launches) == len(kernels) and all(names_match(l["name"], k.name) for l, k in zip(launches, kernels)):
        pairs = list(zip(launches, kernels))
    else:  # a launch without a result (ncu failed on it), or the reverse: align by name, in order
        pairs, j = [], 0
        for k in kernels:
            m = next((i for i in range(j, len(launches)) if names_match(launches[i]["name"], k.name)), None)
            if m is not None:
                pairs.append((launches[m], k))
                j = m + 1
    for l, k in pairs:
        k.row, k.label, k.detail = l["row"], l["label"], l["detail"]
    return sum(1 for k in kernels if k.label is None)


GEOMETRY = {"1, 1, 1, 3": "causal", "2, 0, 1, 3": "downsample", "1, 1, 2, 3": "upsample",
            "1, 1, 1, 2": "upsample_phase"}


def short_name(full):
    """vaeconv's kernels: family, tile, warps, stages, atom, geometry; others: the identifier, cut
    around its tile when long."""
    n = full[5:] if full.startswith("void ") else full
    cut = min([i for i in (n.find("<"), n.find("(")) if i >= 0] or [len(n)])
    base = n[:cut].split("::")[-1]
    tile = re.search(r"TileShape<(\d+), (\d+), (\d+), (\d+), (\d+), (\d+)", n)
    if tile:
        bm, bn, bk, wm, wn, st = tile.groups()
        s = "%s %sx%sx%s w%sx%s s%s" % (base, bm, bn, bk, wm, wn, st)
        atom = re.search(r"WgmmaAtom<(\d+), (true|false)>", n)
        if atom:
            s += " wgmma%s%s" % (atom.group(1), " e4m3" if atom.group(2) == "true" else "")
        else:
            atom = re.search(r"::(Atom\w+)", n)
            if atom:
                s += " " + atom.group(1)
        geo = re.search(r"Geometry<([\d, ]+)>", n)
        if geo:
            s += " " + GEOMETRY.get(geo.group(1), "geometry<%s>" % geo.group(1))
        else:
            geo = re.search(r"::(\w+)Geometry\b", n)
            if geo:
                s += " " + geo.group(1).lower()
        return s
    if len(base) > 48:  # cuDNN's xmma kernels: sm90_xmma_fprop_..._tilesize128x128x64_warpgroupsize1x1x1_...
        tile = re.search(r"tilesize(\d+x\d+(?:x\d+)?)", base)
        wg = re.search(r"warpgroupsize(\d+x\d+(?:x\d+)?)", base)
        if tile:  # the name up to its layout / tile tokens, then the tile and warpgroups
            head = []
            for tok in base.split("_"):
                if tok.startswith(("nhwc", "ndhwc", "tilesize")) or len("_".join(head + [tok])) > 52:
                    break
                head.append(tok)
            return "_".join(head) + "… tile " + tile.group(1) + (" wg " + wg.group(1) if wg else "")
        dims = re.findall(r"\d+x\d+(?:x\d+)?", base)
        return base[:32] + "…" + (" " + " ".join(dims[:2]) if dims else base[-14:])
    return base


def fmt(v, digits=1):
    return "n/a" if v is None else "%.*f" % (digits, v)


def row_table(row, kernels, out):
    out.append("| bracket | kernel | µs | SM % | tensor % | DRAM % | L2 % | L1 % | occupancy % (ach. / theor.) "
               "| regs | smem KiB | grid × block | cluster | cycles / issue | top stalls (warps / issue) |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|")
    totals, names = {}, []
    for k in kernels:
        names.append(k.name)
        d = k.duration_us()
        if k.label is not None and d is not None:
            totals.setdefault(k.label, [0.0, 0])
            totals[k.label][0] += d
            totals[k.label][1] += 1
        t_pct, t_kind = k.tensor()
        ach = k.value("Occupancy", "Achieved Occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active")
        theo = k.value("Occupancy", "Theoretical Occupancy")
        regs = k.value("Launch Statistics", "Registers Per Thread", "launch__registers_per_thread")
        grid = "x".join(str(g) for g in k.grid)
        block = k.block[0] * k.block[1] * k.block[2]
        stalls = ", ".join("%s %.2f" % (r, v) for v, r in k.stalls()) or "n/a"
        out.append("| %s | %s [%d] | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s × %d | %s | %s | %s |" % (
            k.label or "(no bracket)", short_name(k.name), len(names), fmt(k.duration_us()),
            fmt(k.value("Speed Of Light", "Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed")),
            fmt(t_pct) + (" " + t_kind if t_kind else ""),
            fmt(k.value("Speed Of Light", "DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")),
            fmt(k.value("Speed Of Light", "L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed")),
            fmt(k.value("Speed Of Light", "L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active")),
            fmt(ach), fmt(theo), fmt(regs, 0), fmt(k.smem_kib()), grid, block, k.cluster(),
            fmt(k.value("Warp State", "Warp Cycles Per Issued Instruction"), 2), stalls))
    out.append("")
    if totals:
        parts = ["%s %.1f µs%s" % (label, us, "" if n == 1 else " (%d kernels)" % n) for label, (us, n) in totals.items()]
        out.append("Per bracket (ncu's kernel durations summed; clocks not locked, caches flushed between "
                   "replay passes): " + "; ".join(parts) + ".")
        ratios = []
        vendor = [totals[v][0] for v in BF16_VENDOR if v in totals]
        if "vaeconv bf16" in totals and vendor:
            ratios.append("vaeconv bf16 / the faster cuDNN bf16 engine %.2f" % (totals["vaeconv bf16"][0] / min(vendor)))
        if "vaeconv fp8" in totals and "vaeconv bf16" in totals:
            ratios.append("vaeconv fp8 / vaeconv bf16 %.2f" % (totals["vaeconv fp8"][0] / totals["vaeconv bf16"][0]))
        if "vaeconv fp8" in totals and "cudnn fp8 graph" in totals:
            ratios.append("vaeconv fp8 / cudnn fp8 graph %.2f" % (totals["vaeconv fp8"][0] / totals["cudnn fp8 graph"][0]))
        if ratios:
            out.append("Ratios under ncu: " + "; ".join(ratios) + ".")
        out.append("")
    details = []
    for k in kernels:
        if k.label and k.detail and (k.label, k.detail) not in details:
            details.append((k.label, k.detail))
    if details:
        out.append("Brackets: " + "; ".join("%s = %s" % d for d in details) + ".")
        out.append("")
    out.append("Kernels:")
    for i, n in enumerate(names, 1):
        out.append("%d. `%s`" % (i, n))
    out.append("")


def summarize(path, out):
    """Appends path's tables to out; returns the number of problems found."""
    with open(path, errors="replace") as f:
        text = f.read()
    launches, kernels, notes = parse(text)
    base = os.path.basename(path)
    problems = 0
    if not kernels:
        tail = [l for l in text.splitlines() if l.strip()][-5:]
        out.append("### %s: no profile result" % base)
        out.append("")
        out.append("```")
        out.extend(tail or ["(empty file)"])
        out.append("```")
        out.append("")
        return 1
    unmatched = assign(launches, kernels)
    rows = []
    for k in kernels:
        if k.row not in rows:
            rows.append(k.row)
    for row in rows:
        out.append("### %s (%s)" % (row or "kernels outside every bracket", base))
        out.append("")
        row_table(row, [k for k in kernels if k.row == row], out)
    if unmatched:
        out.append("**%d result(s) not matched to a bracket** (%d \"Profiling\" lines, %d results)." % (
            unmatched, len(launches), len(kernels)))
        out.append("")
        problems += 1
    for n in notes:
        out.append("**%s**" % n)
        problems += 1
    if notes:
        out.append("")
    return problems


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    out, problems = [], 0
    for path in argv:
        problems += summarize(path, out)
    sys.stdout.write("\n".join(out) + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
