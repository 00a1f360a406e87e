"""GPU tests of the vaeconv PyTorch ops and patch: each op against aten on the 18 seed shapes
(include/vaeconv/conv/vae_shapes.hpp) and odd sizes, bf16 and fp8; channels-last and NCDHW inputs,
residuals, a side stream, graph capture; and, when diffusers is importable, patched Qwen-Image and
Wan VAE decodes and encodes against the unpatched model.

Tolerances. BF16: operands are the same bf16 values in both computations, products are exact in
fp32 and both accumulate in fp32, so the difference is the bf16 rounding of the output (relative
2^-9) plus accumulation-order noise: |y - ref| <= 2^-7 |ref| + 2^-7 rms(ref). FP8 (e4m3fn, 3
mantissa bits): each operand is rounded with relative error uniform in [-2^-4, 2^-4] (std
2^-4 / sqrt(3) = 0.036; x per tensor, w per output channel, so values far below the scale lose
more), i.e. about 0.051 per product; K independent products keep that relative size against the
output's rms. Bounds: relative L2 error <= 0.08 and every element within 8 x 0.051 x rms(ref) + 2^-7
|ref| (an 8-sigma bound: no false failure over 1e8 elements)."""
import math
import os
import re
import sys
import unittest

import torch
import torch.nn.functional as F

import vaeconv
import vaeconv.ops as ops
import vaeconv.torch as vt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from vaeconv_testutil import diffusers_or_skip, fp32_and_bf16, is_channels_last, psnr, rel_l2  # noqa: E402

SHAPES_HPP = os.path.join(HERE, "..", "..", "include", "vaeconv", "conv", "vae_shapes.hpp")
KINDS = {"kCausal3x3x3": ops.CAUSAL, "kDownsample": ops.DOWNSAMPLE, "kUpsample": ops.UPSAMPLE}
DEV = "cuda"


def seed_shapes():
    text = open(SHAPES_HPP).read()
    rows = re.findall(r'\{"(\w+)", ConvKind::(\w+), (\d+), (\d+), (\d+), (\d+), (\d+), (\d+)\}', text)
    assert len(rows) == 18, f"expected the 18 seed shapes in {SHAPES_HPP}, parsed {len(rows)}"
    return [(r[0], KINDS[r[1]], int(r[2]), int(r[3]), int(r[4]), int(r[5])) for r in rows]


ODD = [  # (name, kind, x shape, cout)
    ("causal_t1_odd", ops.CAUSAL, (2, 5, 1, 9, 13), 7),
    ("causal_video_t5", ops.CAUSAL, (1, 16, 5, 7, 11), 24),
    ("causal_video_t2_n2", ops.CAUSAL, (2, 32, 2, 6, 5), 40),
    ("causal_cout3", ops.CAUSAL, (1, 32, 1, 19, 17), 3),
    ("causal_cin3", ops.CAUSAL, (1, 3, 1, 21, 23), 16),
    ("causal_1x1", ops.CAUSAL, (1, 8, 3, 1, 1), 8),
    ("down_odd_4d", ops.DOWNSAMPLE, (3, 24, 7, 9), 24),
    ("down_2x2", ops.DOWNSAMPLE, (1, 16, 2, 2), 8),
    ("down_video_5d", ops.DOWNSAMPLE, (1, 16, 3, 10, 6), 16),
    ("up_odd_4d", ops.UPSAMPLE, (2, 24, 5, 7), 12),
    ("up_1x1", ops.UPSAMPLE, (1, 8, 1, 1), 8),
    ("up_video_5d", ops.UPSAMPLE, (1, 32, 2, 6, 9), 16),
]


def make(kind, xs, cout, seed):
    g = torch.Generator(device=DEV).manual_seed(seed)
    x = torch.randn(xs, generator=g, device=DEV).to(torch.bfloat16)
    k = 3 if kind == ops.CAUSAL else 2
    fan_in = xs[1] * 9  # the spatial taps; a video causal conv sums 3x that (a larger output)
    w = (torch.randn((cout, xs[1]) + (3,) * k, generator=g, device=DEV) / math.sqrt(fan_in)).to(torch.bfloat16)
    b = torch.randn(cout, generator=g, device=DEV)
    return x, w, b


def reference(kind, x, w, b, residual=None):
    y = ops.reference_conv(kind, x.float(), w.float(), b)
    return y if residual is None else y + residual.float()


def poison_allocator(numel):
    """Leave a NaN-filled block in the caching allocator, so an output element the op fails to
    write shows up as NaN."""
    t = torch.full((numel,), float("nan"), dtype=torch.bfloat16, device=DEV)
    del t


class OpsAgainstAten(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False

    def compare(self, y, ref, fp8, what):
        self.assertEqual(tuple(y.shape), tuple(ref.shape), what)
        self.assertEqual(y.dtype, torch.bfloat16, what)
        self.assertTrue(is_channels_last(y), f"{what}: output strides {y.stride()}")
        yf = y.float()
        self.assertFalse(torch.isnan(yf).any().item(), f"{what}: NaN in the output (unwritten elements)")
        err = (yf - ref).abs()
        rms = ref.pow(2).mean().sqrt().item()
        if fp8:
            rel = (err.pow(2).mean().sqrt() / max(rms, 1e-30)).item()
            bound = 8 * 0.051 * rms + ref.abs() / 128
            self.assertLessEqual(rel, 0.08, f"{what}: fp8 relative L2 error {rel:.4f}")
        else:
            bound = ref.abs() / 128 + rms / 128
        bad = (err > bound)
        if bad.any():
            i = bad.flatten().nonzero()[0].item()
            self.fail(f"{what}: {bad.sum().item()} of {err.numel()} elements out of tolerance; first at flat "
                      f"{i}: got {yf.flatten()[i].item()}, aten {ref.flatten()[i].item()}")

    def run_case(self, name, kind, xs, cout, fp8, seed=0):
        x, w, b = make(kind, xs, cout, seed)
        x = x.contiguous(memory_format=torch.channels_last_3d if x.dim() == 5 else torch.channels_last)
        ref = reference(kind, x, w, b)
        poison_allocator(ref.numel())
        with torch.no_grad():
            y = ops.OPS[kind](x, w, b, None, fp8)
        torch.cuda.synchronize()
        self.compare(y, ref, fp8, f"{name} {'fp8' if fp8 else 'bf16'} x{tuple(xs)} -> {cout}")

    def test_seed_shapes_bf16(self):
        for sid, kind, cin, cout, h, w in seed_shapes():
            with self.subTest(shape=sid):
                self.run_case(sid, kind, (1, cin, 1, h, w), cout, False)

    def test_seed_shapes_fp8(self):
        for sid, kind, cin, cout, h, w in seed_shapes():
            with self.subTest(shape=sid):
                self.run_case(sid, kind, (1, cin, 1, h, w), cout, True)

    def test_odd_sizes(self):
        for name, kind, xs, cout in ODD:
            for fp8 in (False, True):
                with self.subTest(case=name, fp8=fp8):
                    self.run_case(name, kind, xs, cout, fp8, seed=7)

    def test_ncdhw_input_residual_side_stream(self):
        kind, xs, cout = ops.CAUSAL, (1, 32, 1, 33, 20), 32
        x, w, b = make(kind, xs, cout, 3)  # NCDHW-contiguous: copied once inside the op
        r = torch.randn((1, cout, 1, 33, 20), device=DEV).to(torch.bfloat16)
        ref = reference(kind, x, w, b, r)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            y = ops.causal_conv3d(x, w, b, r)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        self.compare(y, ref, False, "NCDHW input + residual on a side stream")

    def test_repack_on_in_place_update_and_graph_capture(self):
        kind, xs, cout = ops.CAUSAL, (1, 16, 1, 16, 16), 16
        x, w, b = make(kind, xs, cout, 5)
        x = x.contiguous(memory_format=torch.channels_last_3d)
        p = torch.nn.Parameter(w.clone(), requires_grad=False)
        with torch.no_grad():
            y1 = ops.causal_conv3d(x, p, b)
            n = ops.weight_cache_size()
            y1b = ops.causal_conv3d(x, p, b)
            self.assertEqual(ops.weight_cache_size(), n, "same parameter: no repack")
            p.mul_(-1.0)  # in place: version counter moves, the op must see the new weights
            y2 = ops.causal_conv3d(x, p, b)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y1, y1b))
        self.compare(y2, reference(kind, x, -w, b), False, "after an in-place update")
        g = torch.cuda.CUDAGraph()  # packed already: capture needs no sync inside the op
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            ops.causal_conv3d(x, p, b)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g), torch.no_grad():
            yg = ops.causal_conv3d(x, p, b)
        x.copy_(-x)
        g.replay()
        torch.cuda.synchronize()
        self.compare(yg, reference(kind, x, -w, b), False, "CUDA graph replay on new input")

    def test_refusal_carries_the_library_message(self):
        x = torch.randn(1, 8, 1, 4, 4, device=DEV).to(torch.bfloat16)
        w = torch.randn(8, 8, 3, 3, 3, device=DEV)
        with self.assertRaises(vaeconv.VaeconvError) as cm:
            ops.causal_conv3d(x.float(), w)
        self.assertIn("bfloat16", str(cm.exception))


class PatchedVaes(unittest.TestCase):
    """A patched bf16 decode / encode against the unpatched bf16 one, both scored against fp32."""

    def check(self, cls, size, frames, expect_patched):
        torch.manual_seed(0)
        vae32, vae = fp32_and_bf16(cls, DEV)
        g = torch.Generator(device=DEV).manual_seed(1)
        lat_t = 1 + (frames - 1) // 4
        z = torch.randn(1, vae.config.z_dim, lat_t, size // 8, size // 8, device=DEV, generator=g)
        x = torch.rand(1, 3, frames, size, size, device=DEV, generator=g) * 2 - 1
        with torch.no_grad():
            dec32 = vae32.decode(z).sample
            enc32 = vae32.encode(x).latent_dist.mode()
            del vae32
            dec_ref = vae.decode(z.bfloat16()).sample
            enc_ref = vae.encode(x.bfloat16()).latent_dist.mode()
            report = vt.patch(vae)
            self.assertEqual(len(report.patched), expect_patched, str(report.patched))
            dec = vae.decode(z.bfloat16()).sample
            enc = vae.encode(x.bfloat16()).latent_dist.mode()
        vt.unpatch(vae)
        p_ref, p_new = psnr(dec_ref, dec32), psnr(dec, dec32)
        e_ref, e_new = rel_l2(enc_ref, enc32), rel_l2(enc, enc32)
        msg = (f"{cls.__name__} {size}^2 x{frames}: decode PSNR vs fp32 unpatched {p_ref:.2f} dB, patched "
               f"{p_new:.2f} dB; encode rel L2 vs fp32 unpatched {e_ref:.4f}, patched {e_new:.4f}; "
               f"patched vs unpatched decode PSNR {psnr(dec, dec_ref):.2f} dB")
        print(msg)
        self.assertGreaterEqual(p_new, p_ref - 0.5, msg)
        self.assertLessEqual(e_new, e_ref * 10 ** (0.5 / 20) + 1e-3, msg)

    def test_qwen_image_vae_512(self):
        qwen, _ = diffusers_or_skip()
        self.check(qwen, 512, 1, expect_patched=count_candidates(qwen))

    def test_wan_vae_video_128(self):
        _, wan = diffusers_or_skip()
        self.check(wan, 128, 5, expect_patched=count_candidates(wan))


def count_candidates(cls):
    """How many modules the patch should swap: every 3x3x3 causal conv, every resample with a
    2D resample Sequential, and every upsample3d / downsample3d resample (its time_conv), counted
    independently of vaeconv.torch."""
    m = cls()
    n = 0
    for mod in m.modules():
        name = type(mod).__name__
        if name.endswith("CausalConv3d") and tuple(mod.kernel_size) == (3, 3, 3):
            n += 1
        elif name.endswith("Resample"):
            n += isinstance(getattr(mod, "resample", None), torch.nn.Sequential)
            n += getattr(mod, "mode", None) in ("upsample3d", "downsample3d")
    return n


if __name__ == "__main__":
    unittest.main()
