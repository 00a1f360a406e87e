"""What a halo-kernel block fetches besides its K tiles: its input patch (halo_tile.hpp), read
from a dispatch-plan entry. Both front-ends' launches add it to the L2 / MALL traffic (model.py,
Launch.block_extra_fetch_bytes)."""
from __future__ import annotations


def halo_patch_bytes(p: dict) -> float:
    """(a + 2) x (b + 2) input pixels of every input channel for a halo-kernel entry whose output
    patch (its kernel's `patch`) is a x b pixels (the 3 x 3 taps' one-pixel border on each side);
    0 for the other families."""
    k = p["kernel"]
    if k["family"] != "halo":
        return 0.0
    a, b = k["patch"]
    return float((a + 2) * (b + 2) * p["cin"] * (1 if p["dtype"] == "fp8" else 2))
