"""GPU tests of torch.ops.vaeconv.causal_conv3d_cached (the chunked video path's cached causal
conv, read without a cat) against aten's cat + pad + conv3d, bf16 and fp8, 1 and 2 cached frames,
N = 1 and 2, odd sizes, residuals; the patch routing a causal conv's cache_x through it; and
torch.ops.vaeconv.temporal_conv3d (WanResample's time_conv, both strides) against aten.
Tolerances as in test_ops_gpu.py (its docstring derives them)."""
import math
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

import vaeconv.ops as ops
import vaeconv.torch as vt

DEV = "cuda"


def aten_cached(x, cache, w, b):
    xc = torch.cat([cache, x], dim=2).float()
    return F.conv3d(F.pad(xc, (1, 1, 1, 1, 2 - cache.shape[2], 0)), w.float(),
                    None if b is None else b.float())


def assert_close(tc, y, ref, fp8, what):
    y, ref = y.float(), ref.float()
    tc.assertFalse(torch.isnan(y).any().item(), f"{what}: NaN in the output")
    rms = ref.pow(2).mean().sqrt().item()
    err = (y - ref).abs()
    if fp8:
        rel = ((y - ref).pow(2).sum() / ref.pow(2).sum().clamp_min(1e-30)).sqrt().item()
        tc.assertLessEqual(rel, 0.08, f"{what}: relative L2 {rel}")
        bound = 8 * 0.051 * rms + ref.abs() * 2 ** -7
    else:
        bound = ref.abs() * 2 ** -7 + 2 ** -7 * rms
    bad = (err > bound).sum().item()
    tc.assertEqual(bad, 0, f"{what}: {bad} elements out of bounds, max err {err.max().item()}")


class CachedConvOp(unittest.TestCase):
    CASES = [  # (N, Cin, T, H, W, Cout, cached frames, residual)
        (1, 32, 1, 9, 13, 40, 2, False),   # 3 -> 1
        (2, 48, 2, 7, 11, 96, 2, True),    # 4 -> 2
        (1, 96, 4, 11, 9, 96, 2, False),   # 6 -> 4
        (2, 32, 4, 5, 17, 3, 2, True),     # 6 -> 4, the RGB layer
        (1, 16, 3, 6, 7, 24, 1, False),    # one cached frame
    ]

    def run_cases(self, fp8):
        for i, (n, cin, t, h, w, cout, frames, res) in enumerate(self.CASES):
            g = torch.Generator(device=DEV).manual_seed(40 + i)
            x = torch.randn((n, cin, t, h, w), generator=g, device=DEV).to(torch.bfloat16)
            cache = torch.randn((n, cin, frames, h, w), generator=g, device=DEV).to(torch.bfloat16)
            wt = (torch.randn((cout, cin, 3, 3, 3), generator=g, device=DEV)
                  / math.sqrt(cin * 27)).to(torch.bfloat16)
            b = torch.randn(cout, generator=g, device=DEV) * 0.1
            r = torch.randn((n, cout, t, h, w), generator=g, device=DEV).to(torch.bfloat16) if res else None
            x_cl = x.to(memory_format=torch.channels_last_3d)
            cache_cl = cache.to(memory_format=torch.channels_last_3d)
            y = torch.ops.vaeconv.causal_conv3d_cached(x_cl, cache_cl, wt, b, r, fp8)
            ref = aten_cached(x, cache, wt, b)
            if r is not None:
                ref = ref + r.float()
            self.assertEqual(tuple(y.shape), (n, cout, t, h, w))
            assert_close(self, y, ref, fp8, f"case {i} fp8={fp8}")

    def test_bf16(self):
        self.run_cases(False)

    def test_fp8(self):
        self.run_cases(True)

    def test_refuses_a_three_frame_cache(self):
        x = torch.zeros((1, 16, 2, 4, 4), device=DEV, dtype=torch.bfloat16)
        cache = torch.zeros((1, 16, 3, 4, 4), device=DEV, dtype=torch.bfloat16)
        w = torch.zeros((8, 16, 3, 3, 3), device=DEV, dtype=torch.bfloat16)
        with self.assertRaises(ops.VaeconvError):
            torch.ops.vaeconv.causal_conv3d_cached(x, cache, w)


class TemporalConvOp(unittest.TestCase):
    """WanResample's time_conv: torch.ops.vaeconv.temporal_conv3d against aten's cat + pad +
    conv3d (+ upsample3d's reshape and stack at stride 1), ops.reference_temporal."""
    CASES = [  # (N, Cin, T, H, W, Cout, stride, cached frames, residual)
        (1, 32, 1, 9, 13, 64, 1, 0, False),   # upsample3d's first chunk ("Rep": no cache)
        (2, 48, 3, 7, 11, 96, 1, 2, True),
        (1, 96, 4, 11, 9, 192, 1, 2, False),
        (1, 64, 4, 9, 13, 64, 2, 1, False),   # downsample3d: one cached frame
        (2, 32, 5, 7, 5, 48, 2, 1, True),
    ]

    def run_cases(self, fp8):
        for i, (n, cin, t, h, w, cout, stride, frames, res) in enumerate(self.CASES):
            g = torch.Generator(device=DEV).manual_seed(70 + i)
            x = torch.randn((n, cin, t, h, w), generator=g, device=DEV).to(torch.bfloat16)
            cache = (torch.randn((n, cin, frames, h, w), generator=g, device=DEV).to(torch.bfloat16)
                     if frames else None)
            wt = (torch.randn((cout, cin, 3, 1, 1), generator=g, device=DEV)
                  / math.sqrt(cin * 3)).to(torch.bfloat16)
            b = torch.randn(cout, generator=g, device=DEV) * 0.1
            ref = ops.reference_temporal(x.float(), None if cache is None else cache.float(),
                                         wt.float(), b, stride)
            r = torch.randn(ref.shape, generator=g, device=DEV).to(torch.bfloat16) if res else None
            if r is not None:
                ref = ref + r.float()
            y = torch.ops.vaeconv.temporal_conv3d(x.to(memory_format=torch.channels_last_3d),
                                                  cache, wt, b, r, stride, fp8)
            self.assertEqual(tuple(y.shape), tuple(ref.shape))
            assert_close(self, y, ref, fp8, f"temporal case {i} fp8={fp8}")

    def test_bf16(self):
        self.run_cases(False)

    def test_fp8(self):
        self.run_cases(True)


class WanCausalConv3d(nn.Conv3d):
    """diffusers' WanCausalConv3d forward (the fields the patch reads), for a test without diffusers."""

    def __init__(self, cin, cout):
        super().__init__(cin, cout, 3, padding=1)
        self._padding = (self.padding[2], self.padding[2], self.padding[1], self.padding[1],
                         2 * self.padding[0], 0)
        self.padding = (0, 0, 0)

    def forward(self, x, cache_x=None):
        padding = list(self._padding)
        if cache_x is not None and self._padding[4] > 0:
            x = torch.cat([cache_x.to(x.device), x], dim=2)
            padding[4] -= cache_x.shape[2]
        return super().forward(F.pad(x, padding))


class PatchRoutesTheCache(unittest.TestCase):
    def test_cache_x_runs_on_vaeconv(self):
        torch.manual_seed(3)
        m = WanCausalConv3d(32, 48).to(DEV, torch.bfloat16)
        x = torch.randn((2, 32, 4, 9, 10), device=DEV, dtype=torch.bfloat16)
        cache = torch.randn((2, 32, 2, 9, 10), device=DEV, dtype=torch.bfloat16)
        with torch.no_grad():
            ref = m(x, cache).float()
            report = vt.patch(m)
            self.assertTrue(report.patched, f"not patched: {report.skipped}")
            calls = []
            real = ops._run_cached
            ops._run_cached = lambda *a: calls.append(1) or real(*a)
            try:
                y = m(x, cache)
            finally:
                ops._run_cached = real
                vt.unpatch(m)
        self.assertEqual(len(calls), 1, "the cached conv did not run on vaeconv")
        assert_close(self, y, ref, False, "patched WanCausalConv3d with cache_x")


if __name__ == "__main__":
    unittest.main()
