"""GPU tests of torch.ops.vaeconv.rms_norm and the patched norms: the op against the fp32 formula
of diffusers' QwenImageRMS_norm / WanRMS_norm (F.normalize over the channels, times sqrt(C), gamma,
bias; then SiLU), every element, on the decoder's channel counts and odd sizes, 4D and 5D,
channels-last and NCDHW inputs, bias and SiLU on and off, the caching allocator poisoned with NaN
first; an in-place update of gamma is seen; a CUDA/HIP graph captured after the first call replays
on new input; and, when diffusers is importable, a patched Qwen-Image decode with the norms on
vaeconv (op calls counted: every norm, SiLU fused in the residual blocks and heads) against the
fp32 decode, within the quality bar of test_ops_gpu.PatchedVaes, and the same with norms=False.

Tolerance: the op computes in fp32 and rounds once to bf16, so |y - ref| <= 2^-8 |ref| (one bf16
rounding, with margin) + 1e-4 (fp32 noise where the bias cancels the normalised term)."""
import os
import sys
import unittest

import torch
import torch.nn.functional as F

import vaeconv.ops as ops
import vaeconv.torch as vt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from vaeconv_testutil import (CountVaeconvOps, channels_last, diffusers_or_skip,  # noqa: E402
                              fp32_and_bf16, is_channels_last, psnr)

DEV = "cuda"


def poison_allocator():
    """Fills the caching allocator's free blocks with NaN, so an unwritten output shows."""
    torch.cuda.synchronize()
    free = torch.cuda.mem_get_info()[0]
    n = min(free // 4, 1 << 28)
    t = torch.full((n // 2,), float("nan"), dtype=torch.bfloat16, device=DEV)
    del t


def formula(x, gamma, bias, silu):
    """diffusers' QwenImageRMS_norm forward in fp32 (channel_first), then SiLU."""
    c = x.shape[1]
    shape = (c,) + (1,) * (x.dim() - 2)
    y = F.normalize(x.float(), dim=1) * c ** 0.5 * gamma.float().reshape(shape)
    if bias is not None:
        y = y + bias.float().reshape(shape)
    return F.silu(y) if silu else y


SHAPES = [  # decoder channel counts at odd sizes, 4D (attention's norm) and 5D, C = 8
    (1, 96, 1, 67, 61), (2, 192, 3, 17, 9), (1, 384, 1, 33, 35), (1, 384, 5, 4, 3),
    (3, 96, 19, 23), (1, 8, 1, 1, 1), (1, 8, 2, 5, 7), (1, 1024, 1, 3, 5), (1, 2048, 1, 2, 3),
]


class RmsNormOp(unittest.TestCase):
    def check(self, x, gamma, bias, silu):
        poison_allocator()
        y = ops.rms_norm(x, gamma, bias, silu)
        torch.cuda.synchronize()
        self.assertTrue(is_channels_last(y), y.stride())
        self.assertEqual(y.dtype, torch.bfloat16)
        ref = formula(x, gamma, bias, silu)
        err = (y.float() - ref).abs()
        tol = 2 ** -8 * ref.abs() + 1e-4
        bad = (~(err <= tol)).sum().item()  # NaN (unwritten) counts as bad
        self.assertEqual(bad, 0, f"{bad} of {y.numel()} elements off; max err {err.max().item():.3g}")

    def test_against_the_formula(self):
        torch.manual_seed(0)
        for shape in SHAPES:
            c = shape[1]
            for layout in ("channels_last", "ncdhw"):
                for silu in (False, True):
                    for with_bias in (False, True):
                        with self.subTest(shape=shape, layout=layout, silu=silu, bias=with_bias):
                            x = torch.randn(shape, device=DEV).mul_(3).bfloat16()
                            x.view(-1)[:c] = 0
                            if layout == "channels_last":
                                x = channels_last(x)
                            gamma = torch.rand(c, device=DEV) + 0.5
                            bias = torch.rand(c, device=DEV) - 0.5 if with_bias else None
                            self.check(x, gamma, bias, silu)

    def test_module_parameters_in_bf16(self):
        # The patch passes the modules' own (C, 1, 1, 1) bf16 parameters.
        x = channels_last(torch.randn(1, 96, 2, 31, 29, device=DEV).bfloat16())
        g = (torch.rand(96, 1, 1, 1, device=DEV) + 0.5).bfloat16()
        b = (torch.rand(96, 1, 1, 1, device=DEV) - 0.5).bfloat16()
        self.check(x, g, b, True)

    def test_gamma_update_in_place_is_seen_and_graph_capture(self):
        x = channels_last(torch.randn(1, 192, 1, 40, 24, device=DEV).bfloat16())
        g = (torch.rand(192, device=DEV) + 0.5).bfloat16()
        y1 = ops.rms_norm(x, g, None, True)
        with torch.no_grad():
            g.mul_(2)
        y2 = ops.rms_norm(x, g, None, True)
        torch.testing.assert_close(y2.float(), formula(x, g, None, True), rtol=2 ** -8, atol=1e-4)
        self.assertFalse(torch.equal(y1, y2))
        # Graph capture after the warm-up call (gamma's fp32 copy is cached by then).
        xs = x.clone()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            ops.rms_norm(xs, g, None, True)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = ops.rms_norm(xs, g, None, True)
        xs.copy_(channels_last(torch.randn(x.shape, device=DEV).bfloat16()))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out.float(), formula(xs, g, None, True), rtol=2 ** -8, atol=1e-4)

    def test_refusal_carries_the_library_message(self):
        x = torch.zeros(1, 12, 1, 4, 4, device=DEV, dtype=torch.bfloat16)
        with self.assertRaisesRegex(Exception, "C = 12"):
            ops.rms_norm(x, torch.ones(12, device=DEV))


class PatchedNorms(unittest.TestCase):
    def test_diffusers_norm_module_fp32_formula(self):
        qwen, _ = diffusers_or_skip()
        from diffusers.models.autoencoders.autoencoder_kl_qwenimage import QwenImageRMS_norm
        torch.manual_seed(2)
        for images, shape in ((False, (1, 96, 2, 21, 17)), (True, (2, 384, 13, 11))):
            m = QwenImageRMS_norm(shape[1], images=images).to(DEV)
            with torch.no_grad():
                m.gamma.uniform_(0.5, 1.5)
            # The op reads bf16: diffusers' fp32 forward of the same bf16 values is the reference,
            # so only the output's rounding (half a bf16 ulp, 2^-9) separates the two.
            x = channels_last(torch.randn(shape, device=DEV)).bfloat16()
            with torch.no_grad():
                want = m(x.float())  # diffusers' fp32 forward
            y = ops.rms_norm(x, m.gamma, None, False)
            torch.testing.assert_close(y.float(), want, rtol=2 ** -8, atol=1e-4)

    def test_qwen_image_decode_with_and_without_norms(self):
        qwen, _ = diffusers_or_skip()
        torch.manual_seed(0)
        vae32, vae = fp32_and_bf16(qwen, DEV)
        g = torch.Generator(device=DEV).manual_seed(1)
        z = torch.randn(1, vae.config.z_dim, 1, 48, 40, device=DEV, generator=g)
        n_norms = sum(1 for m in vae.modules() if type(m).__name__ == "QwenImageRMS_norm")
        with torch.no_grad():
            dec32 = vae32.decode(z).sample
            del vae32
            dec_ref = vae.decode(z.bfloat16()).sample
            results = {}
            for norms in (True, False):
                report = vt.patch(vae, norms=norms)
                with CountVaeconvOps(silu_apart=True) as count:
                    dec = vae.decode(z.bfloat16()).sample
                vt.unpatch(vae)
                results[norms] = (psnr(dec, dec32), dict(count.calls), report)
        p_ref = psnr(dec_ref, dec32)
        p_on, calls_on, report_on = results[True]
        p_off, calls_off, _ = results[False]
        print(f"Qwen-Image decode 384x320: PSNR vs fp32 unpatched {p_ref:.2f} dB, patched with norms "
              f"{p_on:.2f} dB, without {p_off:.2f} dB; norm op calls {calls_on}")
        fused = sum(1 for _, k in report_on.norms if k == "rms_norm+silu")
        # Decoder: every norm patched (its first residual block's norms ... the head's norm_out).
        decoder_norms = sum(1 for n, _ in report_on.norms if n.startswith("decoder."))
        self.assertEqual(len(report_on.norms), n_norms, report_on.skipped)
        self.assertGreater(fused, 0)
        ran = calls_on.get("vaeconv::rms_norm", 0) + calls_on.get("vaeconv::rms_norm+silu", 0)
        # A one-frame decode calls each decoder norm once. One gets an NCDHW input and keeps its
        # own forward: the mid block's second residual block, after the attention block (whose
        # output is NCDHW-contiguous; a diffusers dry run on the CPU showed 29 of 30 on the op).
        attention_blocks = sum(1 for n, m in vae.named_modules()
                               if n.startswith("decoder.") and type(m).__name__ == "QwenImageAttentionBlock")
        self.assertTrue(decoder_norms - attention_blocks <= ran <= decoder_norms,
                        f"{ran} norm op calls for {decoder_norms} decoder norms: {calls_on}")
        self.assertNotIn("vaeconv::rms_norm", calls_off)
        self.assertNotIn("vaeconv::rms_norm+silu", calls_off)
        self.assertGreaterEqual(p_on, p_ref - 0.5)
        self.assertGreaterEqual(p_off, p_ref - 0.5)


if __name__ == "__main__":
    unittest.main()
