"""GPU tests of the chunked video path. torch.ops.vaeconv.causal_conv3d_cached (the cached causal
conv, read without a cat) against aten's cat + pad + conv3d, bf16 and fp8: T_in -> T_out of
1 -> 1 (the first chunk, no cache: causal_conv3d), 2 -> 1, 3 -> 1, 3 -> 2, 4 -> 2, 6 -> 4, N = 1
and 2, odd sizes, residuals, and a stream of chunks whose caches are slices of the previous
call's input / of a previous vaeconv op's output, against the conv of the whole video.
torch.ops.vaeconv.temporal_conv3d (WanResample's time_conv) for both strides, odd T, 0 / 1 / 2
cached frames. The patch: a causal conv's cache_x, and a Wan-like VAE (tests/python/standin_vae.py)
and, where diffusers is importable, AutoencoderKLWan encoding and decoding a video chunk by chunk
with every time_conv on vaeconv. Tolerances as in test_ops_gpu.py (its docstring derives them).
Without a GPU the module is skipped."""
import math
import os
import sys
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

import vaeconv.ops as ops
import vaeconv.torch as vt

DEV = "cuda"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))  # standin_vae, vaeconv_testutil
import standin_vae  # noqa: E402
from vaeconv_testutil import CountVaeconvOps, diffusers_or_skip, fp32_and_bf16, rel_l2  # noqa: E402


def setUpModule():
    if not torch.cuda.is_available():
        raise unittest.SkipTest("no GPU visible to PyTorch")


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
        (2, 96, 1, 15, 9, 96, 2, True),    # 3 -> 1, N = 2, the decoder's steady state per latent frame
        (2, 64, 1, 5, 7, 64, 1, True),     # 2 -> 1
        (1, 48, 2, 13, 7, 40, 1, True),    # 3 -> 2, one cached frame
        (2, 96, 4, 17, 31, 96, 2, True),   # 6 -> 4, N = 2, residual
        (1, 192, 4, 9, 15, 192, 2, False),  # 6 -> 4, the 192 -> 192 layer's channels
        (1, 384, 2, 7, 9, 384, 2, True),   # 4 -> 2, the 384 -> 384 layer's channels
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

    def test_first_chunk_without_cache(self):
        # 1 -> 1: the first chunk has no cache; the patch sends it to causal_conv3d (time pad 2).
        for i, (n, cin, h, w, cout, res) in enumerate([(1, 96, 15, 13, 96, False), (2, 32, 7, 9, 48, True),
                                                     (2, 16, 5, 3, 3, True)]):
            for fp8 in (False, True):
                g = torch.Generator(device=DEV).manual_seed(90 + i)
                x = torch.randn((n, cin, 1, h, w), generator=g, device=DEV).to(torch.bfloat16)
                wt = (torch.randn((cout, cin, 3, 3, 3), generator=g, device=DEV) / math.sqrt(cin * 9)).to(torch.bfloat16)
                b = torch.randn(cout, generator=g, device=DEV) * 0.1
                r = torch.randn((n, cout, 1, h, w), generator=g, device=DEV).to(torch.bfloat16) if res else None
                ref = F.conv3d(F.pad(x.float(), (1, 1, 1, 1, 2, 0)), wt.float(), b)
                if r is not None:
                    ref = ref + r.float()
                y = torch.ops.vaeconv.causal_conv3d(x.to(memory_format=torch.channels_last_3d), wt, b, r, fp8)
                self.assertEqual(tuple(y.shape), (n, cout, 1, h, w))
                assert_close(self, y, ref, fp8, f"first chunk {i} fp8={fp8}")

    def stream(self, x, wt, b, chunks, fp8):
        """The conv of video x chunk by chunk: the first chunk without a cache, each later one with
        the cache diffusers keeps (the last 2 frames before it, as slices of the earlier inputs)."""
        outs, prev, start = [], None, 0
        for t in chunks:
            xc = x[:, :, start:start + t]
            if prev is None:
                y = torch.ops.vaeconv.causal_conv3d(xc, wt, b, None, fp8)
            else:
                y = torch.ops.vaeconv.causal_conv3d_cached(xc, prev, wt, b, None, fp8)
            keep = xc[:, :, -2:]
            if keep.shape[2] < 2 and prev is not None:
                keep = torch.cat([prev[:, :, -1:], keep], 2)
            prev, start = keep, start + t
            outs.append(y)
        return torch.cat(outs, 2)

    def test_stream_of_chunks_is_the_conv_of_the_video(self):
        for i, (n, c1, c2, h, w, chunks) in enumerate([(1, 32, 48, 11, 9, [1, 4, 4]), (2, 16, 32, 7, 13, [1, 1, 2, 1, 3])]):
            for fp8 in (False, True):
                what = f"stream {i} chunks {chunks} fp8={fp8}"
                g = torch.Generator(device=DEV).manual_seed(110 + i)
                x = torch.randn((n, c1, sum(chunks), h, w), generator=g, device=DEV).to(torch.bfloat16)
                x = x.to(memory_format=torch.channels_last_3d)
                w1 = (torch.randn((c2, c1, 3, 3, 3), generator=g, device=DEV) / math.sqrt(c1 * 27)).to(torch.bfloat16)
                w2 = (torch.randn((c2, c2, 3, 3, 3), generator=g, device=DEV) / math.sqrt(c2 * 27)).to(torch.bfloat16)
                b1 = torch.randn(c2, generator=g, device=DEV) * 0.1
                b2 = torch.randn(c2, generator=g, device=DEV) * 0.1
                y1 = self.stream(x, w1, b1, chunks, fp8)
                ref1 = F.conv3d(F.pad(x.float(), (1, 1, 1, 1, 2, 0)), w1.float(), b1)
                assert_close(self, y1, ref1, fp8, what + " layer 1")
                # Layer 2 reads vaeconv's own channels-last outputs, its caches slices of them.
                y2 = self.stream(y1, w2, b2, chunks, fp8)
                ref2 = F.conv3d(F.pad(y1.float(), (1, 1, 1, 1, 2, 0)), w2.float(), b2)
                assert_close(self, y2, ref2, fp8, what + " layer 2")

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
        (2, 64, 1, 15, 9, 128, 1, 2, True),   # upsample3d, one latent frame after the first chunk, N = 2
        (1, 16, 2, 5, 7, 32, 1, 1, False),    # stride 1, one cached frame
        (1, 32, 3, 7, 9, 32, 2, 1, False),    # stride 2, odd T: 4 frames in -> 1
        (1, 48, 6, 9, 11, 48, 2, 1, True),    # stride 2, 7 frames in -> 3
        (2, 384, 2, 5, 7, 768, 1, 2, False),  # upsample3d at 384 channels
        (1, 96, 4, 11, 13, 96, 2, 1, True),   # downsample3d at 96 channels: 5 frames in -> 2
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

    def test_refusals(self):
        x = torch.zeros((1, 16, 2, 4, 4), device=DEV, dtype=torch.bfloat16)
        w1 = torch.zeros((32, 16, 3, 1, 1), device=DEV, dtype=torch.bfloat16)
        w2 = torch.zeros((16, 16, 3, 1, 1), device=DEV, dtype=torch.bfloat16)
        two = torch.zeros((1, 16, 2, 4, 4), device=DEV, dtype=torch.bfloat16)
        for what, fn in (("stride 2 takes one cached frame", lambda: torch.ops.vaeconv.temporal_conv3d(x, two, w2, None, None, 2)),
                         ("stride 1 needs an even Cout", lambda: torch.ops.vaeconv.temporal_conv3d(x, None, w1[:31], None, None, 1)),
                         ("stride 3", lambda: torch.ops.vaeconv.temporal_conv3d(x, None, w2, None, None, 3))):
            with self.subTest(what=what), self.assertRaises(ops.VaeconvError):
                fn()


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




class PatchedChunkedVideo(unittest.TestCase):
    """vaeconv.torch.patch on a chunked video encode and decode: every cached causal conv and
    time_conv on vaeconv (counted), patched bf16 against unpatched bf16, both against fp32."""

    def compare(self, patched, eager, fp32, what):
        e_p, e_e = rel_l2(patched, fp32), rel_l2(eager, fp32)
        msg = (f"{what}: rel L2 vs fp32 patched {e_p:.4f}, unpatched {e_e:.4f}; "
               f"patched vs unpatched {rel_l2(patched, eager):.4f}")
        print(msg)
        self.assertFalse(torch.isnan(patched.float()).any().item(), msg)
        # bf16 against bf16: both round each layer's output to bf16; within 0.5 dB of unpatched's
        # error against fp32 (a factor 10^(0.5/20) on the L2 error), plus accumulation-order noise.
        self.assertLessEqual(e_p, e_e * 10 ** (0.5 / 20) + 2e-3, msg)

    def test_wan_like_standin(self):
        torch.manual_seed(8)
        m32, m = fp32_and_bf16(lambda: standin_vae.WanLikeVae(dim=32, z_dim=16), DEV)
        g = torch.Generator(device=DEV).manual_seed(9)
        x = torch.rand((2, 3, 9, 44, 36), generator=g, device=DEV) * 2 - 1
        z = torch.randn((2, 16, 3, 11, 9), generator=g, device=DEV)
        with torch.no_grad():
            enc32, dec32 = m32.encode(x), m32.decode(z)
            enc_ref, dec_ref = m.encode(x.bfloat16()), m.decode(z.bfloat16())
            report = vt.patch(m)
            self.assertEqual(sum(op == "temporal_conv3d" for _, op in report.patched), 4, str(report))
            try:
                with CountVaeconvOps() as counter:
                    enc, dec = m.encode(x.bfloat16()), m.decode(z.bfloat16())
            finally:
                vt.unpatch(m)
        # As tests/python/test_video_cpu.py derives them: encode 8 plain + 14 cached causal convs
        # (conv_in's Cin = 3 keeps aten with a cache), decode 8 + 16, 4 time convs each side.
        self.assertEqual(counter.calls, {"vaeconv::causal_conv3d": 16, "vaeconv::causal_conv3d_cached": 30,
                                         "vaeconv::temporal_conv3d": 8, "vaeconv::downsample_conv2d": 6,
                                         "vaeconv::upsample_conv2d": 6})
        self.compare(enc, enc_ref, enc32, "standin encode 9 frames")
        self.compare(dec, dec_ref, dec32, "standin decode 3 latent frames")

    def test_wan_like_standin_fp8_runs(self):
        torch.manual_seed(8)
        m32, m = fp32_and_bf16(lambda: standin_vae.WanLikeVae(dim=32, z_dim=16), DEV)
        z = torch.randn((1, 16, 3, 11, 9), generator=torch.Generator(device=DEV).manual_seed(10), device=DEV)
        with torch.no_grad():
            dec32 = m32.decode(z)
            vt.patch(m, fp8=True)
            try:
                with CountVaeconvOps() as counter:
                    dec = m.decode(z.bfloat16())
            finally:
                vt.unpatch(m)
        self.assertEqual(counter.calls.get("vaeconv::temporal_conv3d"), 4)
        err = rel_l2(dec, dec32)
        print(f"standin decode fp8: rel L2 vs fp32 {err:.4f}")
        # e4m3 operands in 9 chained convs: ~0.05 per conv, not all of it compounding.
        self.assertLess(err, 0.25)

    def test_diffusers_wan_chunked_video(self):
        (AutoencoderKLWan,) = diffusers_or_skip(("AutoencoderKLWan",))
        torch.manual_seed(0)
        cfg = dict(base_dim=32, z_dim=16, dim_mult=[1, 2, 4, 4], num_res_blocks=1)
        vae32, vae = fp32_and_bf16(lambda: AutoencoderKLWan(**cfg), DEV)
        g = torch.Generator(device=DEV).manual_seed(1)
        x = torch.rand((1, 3, 9, 72, 56), generator=g, device=DEV) * 2 - 1
        z = torch.randn((1, 16, 3, 9, 7), generator=g, device=DEV)
        with torch.no_grad():
            enc32, dec32 = vae32.encode(x).latent_dist.mode(), vae32.decode(z).sample
            del vae32
            enc_ref = vae.encode(x.bfloat16()).latent_dist.mode()
            dec_ref = vae.decode(z.bfloat16()).sample
            report = vt.patch(vae)
            try:
                with CountVaeconvOps() as counter:
                    enc = vae.encode(x.bfloat16()).latent_dist.mode()
                    dec = vae.decode(z.bfloat16()).sample
            finally:
                vt.unpatch(vae)
        self.assertEqual(sum(op == "temporal_conv3d" for _, op in report.patched), 4, str(report))
        # 2 downsample3d x 2 chunks after the first + 2 upsample3d x 2 latent frames after the first.
        self.assertEqual(counter.calls.get("vaeconv::temporal_conv3d"), 8, str(counter.calls))
        self.assertGreater(counter.calls.get("vaeconv::causal_conv3d_cached", 0), 0, str(counter.calls))
        self.compare(enc, enc_ref, enc32, "AutoencoderKLWan encode 9 frames")
        self.compare(dec, dec_ref, dec32, "AutoencoderKLWan decode 3 latent frames")


if __name__ == "__main__":
    unittest.main()
