"""How much of a launch's L2 traffic an XCD's L2 serves: the window model of step 12.

CDNA hands workgroups to its XCDs round-robin (block b to XCD b % 8), and each XCD to its CUs in
order, so the blocks an XCD holds at once are a window of `resident` consecutive blocks of its
share (resident = CUs per XCD x blocks per CU). The model takes the blocks of one window to work
on the same K tile together: a byte several of them fetch comes from the Infinity Cache once and
from the XCD's L2 for the others. A block tile is (row tile, column tile): for a conv the pixel
block and the Cout tile (block_tiling.hpp numbers the Cout tiles of one pixel block adjacently),
for a GEMM its M and N tiles; two blocks of one window share their A tile when they have the same
row tile, their B tile when they have the same column tile. Blocks of different pixel blocks
share no A bytes at one K tile (each reads its own pixels at the tile's tap), so nothing else is
credited: not a tap's re-read of rows another block read at an earlier tap, not a halo patch.

    hit = 1 - sum over windows (row tiles x A + column tiles x B) / (blocks x (A + B))

Validated on the only measured L2 hit rates of a CDNA tiled kernel found (HipKittens' MI355X
GEMM schedules, data/hipkittens-l2.json): `calibration()` predicts each and returns the measured
/ predicted ratios; the machine row `l2_window_hit_scale` takes their smallest at the
pessimistic end and their median at the nominal one (machines.py).

The library runs block b on tile b (block order). `domain_contiguous` is the XCD order (each
XCD a contiguous share of the tiles, so the Cout tiles of one pixel block share its L2): the
calibration's whole-grid chunks, and an order evaluated for the library and not shipped
(docs/perf-notes.md, "The XCD tile order").
"""
from __future__ import annotations

import json
import os
import statistics
from typing import List, Sequence, Tuple

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "hipkittens-l2.json")


def domain_contiguous(block: int, blocks: int, domains: int) -> int:
    """Tile of `block` when each of `domains` XCDs (block b on XCD b % domains) takes one
    contiguous share of the tiles, the first blocks % domains shares one tile longer
    (identity for domains <= 1)."""
    if domains <= 1:
        return block
    per = -(-blocks // domains)
    tall = blocks % domains or domains
    d, local = block % domains, block // domains
    return d * per + local if d < tall else tall * per + (d - tall) * (per - 1) + local


def window_hit(tiles: Sequence[Tuple[int, int]], xcds: int, resident: int, a_bytes: float,
               b_bytes: float) -> float:
    """Share of the blocks' A + B fetches served by an XCD's L2 under the window model; tiles[b]
    is block b's (row tile, column tile)."""
    fetch = distinct = 0.0
    for x in range(xcds):
        share = tiles[x::xcds]
        for s in range(0, len(share), resident):
            w = share[s:s + resident]
            fetch += len(w) * (a_bytes + b_bytes)
            distinct += len({r for r, _ in w}) * a_bytes + len({c for _, c in w}) * b_bytes
    return 1.0 - distinct / fetch if fetch else 0.0


def conv_hit(blocks: int, n_tiles: int, l2_domains: int, xcds: int, resident: int,
             a_bytes: float, b_bytes: float) -> float:
    """A conv launch of `blocks` tiles, n_tiles Cout tiles per pixel block, run in the
    library's tile order for l2_domains."""
    order = [domain_contiguous(b, blocks, l2_domains) for b in range(blocks)]
    tiles = [(t // n_tiles, t % n_tiles) for t in order]
    return window_hit(tiles, xcds, resident, a_bytes, b_bytes)


# ---- validation: HipKittens' GEMM schedules (their Algorithm 1 as the paper states it)
def _hk_tile(xy: int, cols: int, rows: int, xcds: int, schedule) -> Tuple[int, int]:
    if schedule == "row":
        return xy // cols, xy % cols
    win_rows, chunk = schedule
    n = cols * rows
    if xcds * chunk >= n:  # one contiguous share of the grid per XCD
        xy = domain_contiguous(xy, n, xcds)
    else:
        limit = n // (xcds * chunk) * (xcds * chunk)
        if xy <= limit:
            local = xy // xcds
            new = (local // chunk) * xcds * chunk + (xy % xcds) * chunk + local % chunk
            xy = new if new < n else xy
    group = win_rows * cols  # then a window of win_rows rows, walked down each column
    first = (xy // group) * win_rows
    h = min(rows - first, win_rows)
    within = xy % group
    return first + within % h, within // h


def calibration(path: str = DATA) -> List[dict]:
    """Each measured schedule with the window model's prediction and measured / predicted."""
    d = json.load(open(path))
    bm, bn, bk = d["tile"]
    a, b = bm * bk * d["elem_bytes"], bn * bk * d["elem_bytes"]
    resident = d["blocks_per_cu"] * d["cus_per_xcd"]
    out = []
    for r in d["rows"]:
        rows, cols = r["n"] // bm, r["n"] // bn
        tiles = [_hk_tile(i, cols, rows, d["xcds"], r["schedule"]) for i in range(rows * cols)]
        if len(set(tiles)) != len(tiles):
            raise ValueError(f"schedule {r['schedule']} of n = {r['n']} is not a permutation")
        pred = window_hit(tiles, d["xcds"], resident, a, b)
        out.append({**r, "predicted": pred, "ratio": r["l2_hit"] / pred})
    return out


def hit_scale() -> Tuple[float, float]:
    """(pessimistic, nominal) scale of the window model's hit rate: the smallest and the median
    measured / predicted ratio of the calibration, capped at 1."""
    ratios = [r["ratio"] for r in calibration()]
    return min(min(ratios), 1.0), min(statistics.median(ratios), 1.0)
