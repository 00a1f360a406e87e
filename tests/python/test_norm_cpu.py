"""CPU tests of the RMS norm op and its patch (no GPU): torch.ops.vaeconv.rms_norm's registration,
fake-tensor shapes and strides, refusals, the CPU reference against the formula of diffusers'
QwenImageRMS_norm / WanRMS_norm; vaeconv.torch.patch on a stand-in block tree (norms swapped, the
SiLU after a norm fused only where the owner's forward provably applies it right after the norm,
fallbacks bit-identical, unpatch restores every forward), torch.compile(fullgraph=True) tracing
through the patched norms, and the SiLU pairing rule read from diffusers' own source when a
checkout is present. Run by tests/python/run_cpu_tests.py (ctest python_torch_cpu)."""
import os
import sys
import types
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin_vae  # noqa: E402
from vaeconv_testutil import (DIFFUSERS_AE, CountVaeconvOps, channels_last, class_forward_source,  # noqa: E402
                              is_channels_last, recording_backend)
import vaeconv  # noqa: E402
import vaeconv.ops as ops  # noqa: E402
import vaeconv.torch as vt  # noqa: E402



# --- Stand-ins with diffusers' class names and the structure the patch relies on ----------------

# diffusers' RMS norms (channel_first=False among what the patch must refuse).
QwenImageRMS_norm = standin_vae.QwenImageRMS_norm
WanRMS_norm = standin_vae.WanRMS_norm


class ResBlock(nn.Module):
    """norm1 -> nonlinearity -> conv1 -> norm2 -> nonlinearity -> dropout -> conv2, + x."""

    def __init__(self, c, norm=QwenImageRMS_norm):
        super().__init__()
        self.nonlinearity = nn.SiLU()
        self.norm1 = norm(c, images=False, bias=True)
        self.conv1 = standin_vae.QwenImageCausalConv3d(c, c, 3, padding=1)
        self.norm2 = norm(c, images=False)
        self.dropout = nn.Dropout(0.0)
        self.conv2 = standin_vae.QwenImageCausalConv3d(c, c, 3, padding=1)

    def forward(self, x):
        h = x
        x = self.norm1(x)
        x = self.nonlinearity(x)
        x = self.conv1(x)
        # A comment between the pair is not a use.
        x = self.norm2(x)

        x = self.nonlinearity(x)
        x = self.dropout(x)
        x = self.conv2(x)
        return x + h


class OtherUseBlock(ResBlock):
    """The nonlinearity is used once more, not after a norm: nothing may be fused here."""

    def forward(self, x):
        x = self.norm1(x)
        x = self.nonlinearity(x)
        x = self.conv1(x)
        return self.nonlinearity(x) + self.norm2(x)


class Attention(nn.Module):
    """A 4D norm (images=True) with no SiLU after it."""

    def __init__(self, c):
        super().__init__()
        self.norm = QwenImageRMS_norm(c)

    def forward(self, x):
        b, c, t, h, w = x.shape
        y = x.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)
        y = self.norm(y)
        return y.reshape(b, t, c, h, w).permute(0, 2, 1, 3, 4) + x


class Tree(nn.Module):
    def __init__(self, c=16, norm=QwenImageRMS_norm):
        super().__init__()
        self.nonlinearity = nn.SiLU()
        self.conv_in = standin_vae.QwenImageCausalConv3d(8, c, 3, padding=1)
        self.block = ResBlock(c, norm)
        self.other = OtherUseBlock(c, norm)
        self.attn = Attention(c)
        self.odd = norm(12, images=False)          # C = 12: refused
        self.last = norm(c, channel_first=False)   # refused
        self.norm_out = norm(c, images=False)
        self.conv_out = standin_vae.QwenImageCausalConv3d(c, 8, 3, padding=1)

    def forward(self, x):
        x = self.conv_in(x)
        x = self.block(x)
        x = self.other(x)
        x = self.attn(x)
        x = self.norm_out(x)
        x = self.nonlinearity(x)
        return self.conv_out(x)


def tree(dtype=torch.bfloat16, norm=QwenImageRMS_norm):
    torch.manual_seed(3)
    m = Tree(norm=norm)
    with torch.no_grad():  # non-trivial gamma / bias
        for mod in m.modules():
            if isinstance(mod, QwenImageRMS_norm):
                mod.gamma.uniform_(0.5, 1.5)
                if isinstance(mod.bias, torch.Tensor):
                    mod.bias.uniform_(-0.3, 0.3)
    return m.to(dtype).eval()


def forwards(model):
    return {name: ("forward" in m.__dict__) for name, m in model.named_modules()}


# --- The op ------------------------------------------------------------------------------------

class Op(unittest.TestCase):
    def test_registered(self):
        self.assertTrue(hasattr(torch.ops.vaeconv, "rms_norm"))
        schema = str(torch.ops.vaeconv.rms_norm.default._schema)
        self.assertIn("Tensor x, Tensor gamma, Tensor? bias=None, bool silu=False", schema)

    def test_fake_shapes_and_strides(self):
        for device in ("cpu", "cuda"):
            for shape in ((2, 96, 3, 5, 7), (1, 8, 1, 1, 1), (3, 384, 9, 11), (1, 16, 1, 1)):
                for cl in (False, True):
                    with self.subTest(device=device, shape=shape, cl=cl), FakeTensorMode():
                        if cl:  # channels-last strides without a copy (no CUDA runtime needed)
                            perm = (0, 2, 3, 4, 1) if len(shape) == 5 else (0, 2, 3, 1)
                            inv = (0, 4, 1, 2, 3) if len(shape) == 5 else (0, 3, 1, 2)
                            x = torch.empty([shape[i] for i in perm], dtype=torch.bfloat16,
                                            device=device).permute(*inv)
                        else:
                            x = torch.empty(shape, dtype=torch.bfloat16, device=device)
                        g = torch.empty(shape[1], device=device)
                        y = torch.ops.vaeconv.rms_norm(x, g, g, True)
                        self.assertEqual(tuple(y.shape), shape)
                        self.assertEqual(y.dtype, torch.bfloat16)
                        self.assertTrue(is_channels_last(y), y.stride())

    def test_refusals_name_the_problem(self):
        x = torch.zeros(1, 12, 2, 3, 3, dtype=torch.bfloat16)
        with self.assertRaisesRegex(vaeconv.VaeconvError, "C = 12"):
            ops.rms_norm(x, torch.ones(12))
        with FakeTensorMode(), self.assertRaisesRegex(vaeconv.VaeconvError, "C = 12"):
            torch.ops.vaeconv.rms_norm(torch.empty(1, 12, 2, 3, 3, dtype=torch.bfloat16), torch.ones(12))
        x = torch.zeros(1, 16, 2, 3, 3)
        with self.assertRaisesRegex(vaeconv.VaeconvError, "bfloat16"):
            ops.rms_norm(x, torch.ones(16))
        x = x.bfloat16()
        with self.assertRaisesRegex(vaeconv.VaeconvError, "gamma must be .* C = 16"):
            ops.rms_norm(x, torch.ones(8))
        with self.assertRaisesRegex(vaeconv.VaeconvError, "bias must be .* C = 16"):
            ops.rms_norm(x, torch.ones(16), torch.ones(17))
        with self.assertRaisesRegex(vaeconv.VaeconvError, "4 or 5 dims"):
            ops.rms_norm(torch.zeros(16, 3, dtype=torch.bfloat16), torch.ones(16))

    def test_cpu_reference_against_the_formula(self):
        torch.manual_seed(0)
        for shape in ((2, 96, 3, 5, 7), (1, 8, 1, 4, 4), (3, 32, 9, 11)):
            for silu in (False, True):
                for with_bias in (False, True):
                    with self.subTest(shape=shape, silu=silu, bias=with_bias):
                        c = shape[1]
                        x = torch.randn(shape, dtype=torch.bfloat16) * 3
                        x.view(-1)[: c] = 0  # not a whole pixel in general; still finite
                        g = torch.rand(c) + 0.5
                        b = torch.rand(c) - 0.5 if with_bias else None
                        y = ops.rms_norm(x, g, b, silu)
                        self.assertTrue(is_channels_last(y))
                        # fp32 formula, rounded once, equals the op's CPU path bit for bit
                        bshape = (1, c) + (1,) * (x.dim() - 2)
                        ref = F.normalize(x.float(), dim=1) * c ** 0.5 * g.reshape(bshape)
                        if b is not None:
                            ref = ref + b.reshape(bshape)
                        if silu:
                            ref = F.silu(ref)
                        self.assertTrue(torch.equal(y, ref.bfloat16()))
                        # and diffusers' bf16 formula (several roundings) to within bf16 steps
                        m = QwenImageRMS_norm(c, images=x.dim() == 4, bias=with_bias)
                        with torch.no_grad():
                            m.gamma.copy_(g.reshape(m.gamma.shape))
                            if with_bias:
                                m.bias.copy_(b.reshape(m.bias.shape))
                        d = m.bfloat16()(x)
                        if silu:
                            d = F.silu(d)
                        torch.testing.assert_close(y.float(), d.float(), rtol=2e-2, atol=2e-2)
                        torch.library.opcheck(ops.rms_norm, (x, g, b, silu))

    def test_gamma_in_any_shape_and_dtype(self):
        x = channels_last(torch.randn(1, 16, 2, 3, 3, dtype=torch.bfloat16))
        g = torch.rand(16, 1, 1, 1, dtype=torch.bfloat16) + 0.5
        self.assertTrue(torch.equal(ops.rms_norm(x, g), ops.rms_norm(x, g.float().reshape(-1))))


# --- The patch ---------------------------------------------------------------------------------

class Patch(unittest.TestCase):
    def input(self, dtype=torch.bfloat16):
        torch.manual_seed(5)
        return channels_last(torch.randn(1, 8, 2, 6, 5, dtype=dtype))

    def test_report_and_fusion_decisions(self):
        for norm in (QwenImageRMS_norm, WanRMS_norm):
            m = tree(norm=norm)
            report = vt.patch(m, cpu_reference=True)
            norms = dict(report.norms)
            self.assertEqual(norms, {
                "block.norm1": "rms_norm+silu", "block.norm2": "rms_norm+silu",
                "other.norm1": "rms_norm", "other.norm2": "rms_norm",  # another use: no fusion
                "attn.norm": "rms_norm", "norm_out": "rms_norm+silu"})
            skipped = dict(report.skipped)
            self.assertIn("C = 12", skipped["odd"])
            self.assertIn("channel_first=False", skipped["last"])
            self.assertNotIn("block.norm1", [n for n, _ in report.patched])  # convs' list unchanged
            self.assertIn("forward", m.block.nonlinearity.__dict__)
            self.assertIn("forward", m.nonlinearity.__dict__)
            self.assertNotIn("forward", m.other.nonlinearity.__dict__)
            vt.unpatch(m)

    def test_patched_matches_and_runs_the_fused_ops(self):
        m = tree()
        x = self.input()
        with torch.no_grad():
            ref = m(x)
            vt.patch(m, cpu_reference=True)
            with CountVaeconvOps(silu_apart=True) as count:
                y = m(x)
        vt.unpatch(m)
        self.assertEqual(count.calls.get("vaeconv::rms_norm+silu"), 3, count.calls)
        self.assertEqual(count.calls.get("vaeconv::rms_norm"), 3, count.calls)
        torch.testing.assert_close(y.float(), ref.float(), rtol=5e-2, atol=5e-2)

    def test_patch_is_idempotent_and_unpatch_restores_everything(self):
        m = tree()
        x = self.input()
        before = forwards(m)
        with torch.no_grad():
            ref = m(x)
            n1 = len(vt.patch(m, cpu_reference=True).norms)
            self.assertEqual(len(vt.patch(m, cpu_reference=True).norms), 0)  # already patched
            restored = vt.unpatch(m)
            self.assertEqual(forwards(m), before)
            self.assertTrue(torch.equal(m(x), ref))
        self.assertEqual(n1, 6)
        self.assertGreaterEqual(restored, 6 + 2)  # six norms, two fused-away SiLUs (+ the convs)
        self.assertFalse(any(k.startswith("_vaeconv") for mod in m.modules() for k in mod.__dict__))

    def test_unpatch_restores_an_instance_forward(self):
        m = tree()
        m.block.nonlinearity.forward = types.MethodType(lambda self, x: x * 2, m.block.nonlinearity)
        m.block.norm2.forward = types.MethodType(lambda self, x: x + 1, m.block.norm2)
        own_act = m.block.nonlinearity.__dict__["forward"]
        own_norm = m.block.norm2.__dict__["forward"]
        report = vt.patch(m, cpu_reference=True)
        norms, skipped = dict(report.norms), dict(report.skipped)
        # A nonlinearity with a forward of its own is not fused away; a norm with one is kept.
        self.assertEqual(norms["block.norm1"], "rms_norm")
        self.assertNotIn("block.norm2", norms)
        self.assertIn("instance forward", skipped["block.norm2"])
        self.assertIs(m.block.nonlinearity.__dict__["forward"], own_act)
        vt.unpatch(m)
        self.assertIs(m.block.nonlinearity.__dict__["forward"], own_act)
        self.assertIs(m.block.norm2.__dict__["forward"], own_norm)

    def test_fallbacks_are_bit_identical(self):
        # fp32 modules without compute_dtype: every module keeps its computation.
        m = tree(torch.float32)
        x = self.input(torch.float32)
        with torch.no_grad():
            ref = m(x)
            vt.patch(m, cpu_reference=True)
            with CountVaeconvOps(silu_apart=True) as count:
                y = m(x)
        vt.unpatch(m)
        self.assertTrue(torch.equal(y, ref))
        self.assertEqual(count.calls, {})
        # NCDHW-contiguous (not channels-last) inputs: the norm's own forward, and where the SiLU
        # is fused, F.silu after it (the same values as the nonlinearity module gives).
        m = tree()
        x5 = torch.randn(1, 16, 2, 6, 5, dtype=torch.bfloat16)
        x4 = torch.randn(2, 16, 6, 5, dtype=torch.bfloat16)
        with torch.no_grad():
            want1 = m.block.nonlinearity(m.block.norm1(x5))
            want4 = m.attn.norm(x4)
            vt.patch(m, cpu_reference=True)
            with CountVaeconvOps(silu_apart=True) as count:
                got1 = m.block.nonlinearity(m.block.norm1(x5))
                got4 = m.attn.norm(x4)
        vt.unpatch(m)
        self.assertEqual(count.calls, {})
        self.assertTrue(torch.equal(got1, want1))
        self.assertTrue(torch.equal(got4, want4))

    def test_compute_dtype_bf16_runs_fp32_modules(self):
        m = tree(torch.float32)
        x = self.input(torch.float32)
        with torch.no_grad():
            ref = m(x)
            vt.patch(m, cpu_reference=True, compute_dtype=torch.bfloat16)
            with CountVaeconvOps(silu_apart=True) as count:
                y = m(x)
        vt.unpatch(m)
        self.assertEqual(y.dtype, torch.float32)
        self.assertEqual(count.calls.get("vaeconv::rms_norm+silu"), 3, count.calls)
        torch.testing.assert_close(y, ref, rtol=5e-2, atol=5e-2)

    def test_norms_false_keeps_them(self):
        m = tree()
        report = vt.patch(m, cpu_reference=True, norms=False)
        self.assertEqual(report.norms, [])
        self.assertNotIn("forward", m.block.norm1.__dict__)
        self.assertNotIn("forward", m.block.nonlinearity.__dict__)
        vt.unpatch(m)

    def test_autograd_falls_back(self):
        m = tree()
        vt.patch(m, cpu_reference=True)
        x = self.input().requires_grad_()
        with CountVaeconvOps(silu_apart=True) as count:
            y = m(x)
        y.float().sum().backward()
        self.assertNotIn("vaeconv::rms_norm", count.calls)
        self.assertNotIn("vaeconv::rms_norm+silu", count.calls)
        self.assertIsNotNone(x.grad)
        vt.unpatch(m)


class Compile(unittest.TestCase):
    def test_fullgraph_compile_traces_the_norm_ops(self):
        torch._dynamo.reset()
        m = tree()
        x = channels_last(torch.randn(1, 8, 1, 6, 5, dtype=torch.bfloat16))
        vt.patch(m, cpu_reference=True)
        graphs = []
        with torch.no_grad():
            eager = m(x)
            compiled = torch.compile(m, fullgraph=True, backend=recording_backend(graphs, aot=True))(x)
        vt.unpatch(m)
        torch.testing.assert_close(compiled.float(), eager.float(), rtol=0, atol=0)
        aot = graphs[-1]
        norms = [n for n in aot.graph.nodes if n.op == "call_function" and "rms_norm" in str(n.target)]
        self.assertEqual(len(norms), 6, aot.code)
        self.assertEqual(sum(1 for n in norms if (n.args[3] if len(n.args) > 3 else n.kwargs.get("silu"))), 3)
        for n in norms:
            self.assertTrue(is_channels_last(n.meta["val"]), n.meta["val"].stride())


class DiffusersSource(unittest.TestCase):
    """The pairing rule on diffusers' own forwards (read as text: diffusers need not import)."""

    def forward_source(self, path, cls):
        src = class_forward_source(path, cls)
        if src is None:
            self.fail(f"{cls}.forward not found in {path}")
        return src

    def test_pairs_in_qwen_image_and_wan(self):
        if not os.path.isdir(DIFFUSERS_AE):
            raise unittest.SkipTest(f"no diffusers checkout at {DIFFUSERS_AE}")
        cases = {
            "autoencoder_kl_qwenimage.py": {"QwenImageResidualBlock": ["norm1", "norm2"],
                                            "QwenImageEncoder3d": ["norm_out"],
                                            "QwenImageDecoder3d": ["norm_out"],
                                            "QwenImageAttentionBlock": []},
            "autoencoder_kl_wan.py": {"WanResidualBlock": ["norm1", "norm2"],
                                      "WanEncoder3d": ["norm_out"],
                                      "WanDecoder3d": ["norm_out"],
                                      "WanAttentionBlock": []},
        }
        for fname, classes in cases.items():
            for cls, want in classes.items():
                with self.subTest(cls=cls):
                    src = self.forward_source(os.path.join(DIFFUSERS_AE, fname), cls)
                    self.assertEqual(vt.silu_pairs_from_source(src), want)


if __name__ == "__main__":
    unittest.main()
