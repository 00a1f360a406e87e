"""How often the implicit GEMM's K loop changes tap: the one fact about the conv, not the
target, that both front-ends (cdna_asm for AMDGPU, sass for NVIDIA) weigh their loop paths by.

The vector gather's block-uniform tile cursor (kernel/conv_gather.hpp TileConvGather::advance)
adds BK to its row offsets while the next K tile stays inside its tap and carries into the next
tap and refreshes them otherwise; the compiled loop holds both paths. A trip of the loop is its
steady path (every K tile inside its tap) plus this rate times the extra of the path on which
every K tile changes tap.
"""
from __future__ import annotations

from typing import Optional


def tap_change_rate(p: dict) -> Optional[float]:
    """The share of K tiles whose issue moves the tile cursor to another tap, advance()
    replayed over the launch's K tiles (a dispatch-plan entry: cin and the kernel's bk, k_tiles);
    None for the kernels without that cursor (the element-wise gather, the tap-reduce, halo and
    tap-row kernels), whose loop counts stay the loop's whole body."""
    k = p["kernel"]
    if k.get("family") != "implicit_gemm" or not k.get("vector"):
        return None
    cin, bk, tiles = int(p["cin"]), int(k["bk"]), int(k["k_tiles"])
    if tiles <= 1:
        return 1.0
    c = changes = 0
    for _ in range(tiles - 1):
        c += bk
        if c + bk <= cin:
            continue
        changes += 1
        while c >= cin:
            c -= cin
    return changes / (tiles - 1)
