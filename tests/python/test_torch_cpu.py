"""CPU tests of the vaeconv PyTorch package (no GPU): op registration, fake-tensor shapes and
strides, torch.compile(fullgraph=True) through a patched module stack, the fallback paths, and the
patch/unpatch round trip. Run by tests/python/run_cpu_tests.py (ctest python_torch_cpu)."""
import os
import subprocess
import sys
import unittest
import warnings

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin_vae  # noqa: E402
from vaeconv_testutil import (CountVaeconvOps, diffusers_or_skip, is_channels_last,  # noqa: E402
                              recording_backend)
import vaeconv  # noqa: E402
import vaeconv.ops as ops  # noqa: E402
import vaeconv.torch as vt  # noqa: E402

OPS = {"causal_conv3d": torch.ops.vaeconv.causal_conv3d,
       "downsample_conv2d": torch.ops.vaeconv.downsample_conv2d,
       "upsample_conv2d": torch.ops.vaeconv.upsample_conv2d}


def aten_shape(kind, x_shape, cout):
    """The output shape of the aten computation, on the meta device."""
    x = torch.empty(x_shape, device="meta", dtype=torch.float32)
    w = torch.empty((cout, x_shape[1]) + (3,) * (3 if kind == ops.CAUSAL else 2), device="meta")
    return tuple(ops.reference_conv(kind, x, w).shape)


SHAPES = [  # (kind, x shape, cout): the three kinds, T = 1 and video, odd sizes, 4D resample
    (ops.CAUSAL, (1, 3, 1, 17, 13), 8), (ops.CAUSAL, (2, 5, 4, 1, 1), 3), (ops.CAUSAL, (1, 16, 7, 9, 31), 33),
    (ops.CAUSAL, (3, 384, 1, 5, 6), 384),
    (ops.DOWNSAMPLE, (1, 8, 2, 2), 8), (ops.DOWNSAMPLE, (2, 7, 17, 9), 5), (ops.DOWNSAMPLE, (1, 6, 3, 5, 4), 6),
    (ops.DOWNSAMPLE, (1, 96, 1024, 1023), 96),
    (ops.UPSAMPLE, (1, 8, 1, 1), 4), (ops.UPSAMPLE, (2, 7, 9, 5), 3), (ops.UPSAMPLE, (1, 6, 2, 3, 5), 6),
    (ops.UPSAMPLE, (1, 384, 128, 128), 192),
]


class Registration(unittest.TestCase):
    def test_ops_registered_with_schema(self):
        for name, op in OPS.items():
            schema = str(op.default._schema)
            self.assertTrue(schema.startswith(f"vaeconv::{name}(Tensor x, Tensor weight, Tensor? bias=None, "
                                              "Tensor? residual=None, bool fp8=False) -> Tensor"), schema)

    def test_import_without_library_or_gpu(self):
        # The package imports and reports the library's absence instead of failing at import.
        code = ("import vaeconv, vaeconv.torch; print(vaeconv.available())")
        env = dict(os.environ, VAECONV_LIBRARY="/nonexistent/libvaeconv_kernels.so")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)


class FakeShapes(unittest.TestCase):
    def check(self, device):
        for kind, xs, cout in SHAPES:
            for fp8 in (False, True):
                with self.subTest(kind=kind, x=xs, cout=cout, device=device, fp8=fp8), FakeTensorMode():
                    x = torch.empty(xs, dtype=torch.bfloat16, device=device)
                    w = torch.empty((cout, xs[1]) + (3,) * (3 if kind == ops.CAUSAL else 2), device=device)
                    b = torch.empty(cout, device=device)
                    y = ops.OPS[kind](x, w, b, None, fp8)
                    self.assertEqual(tuple(y.shape), aten_shape(kind, xs, cout))
                    self.assertEqual(y.dtype, torch.bfloat16)
                    self.assertEqual(y.device.type, device)
                    self.assertTrue(is_channels_last(y), y.stride())

    def test_fake_cuda(self):  # fake CUDA tensors need no GPU
        self.check("cuda")

    def test_fake_cpu(self):
        self.check("cpu")

    def test_refusals_name_the_problem(self):
        with FakeTensorMode():
            def e(*shape, dtype=torch.bfloat16):
                return torch.empty(shape, dtype=dtype, device="cuda")
            x, w = e(1, 8, 1, 4, 4), e(8, 8, 3, 3, 3, dtype=torch.float32)
            cases = [
                (lambda: torch.ops.vaeconv.causal_conv3d(e(1, 8, 1, 4, 4, dtype=torch.float32), w),
                 "x must be bfloat16"),
                (lambda: torch.ops.vaeconv.causal_conv3d(x, e(8, 4, 3, 3, 3)), "weight must be [Cout, 8, 3, 3, 3]"),
                (lambda: torch.ops.vaeconv.causal_conv3d(e(1, 8, 4, 4), w), "x must have 5 dims"),
                (lambda: torch.ops.vaeconv.downsample_conv2d(e(1, 8, 4, 1), e(8, 8, 3, 3)), "H, W >= 2"),
                (lambda: torch.ops.vaeconv.causal_conv3d(x, w, None, e(1, 4, 1, 4, 4)), "residual must be bfloat16"),
                (lambda: torch.ops.vaeconv.causal_conv3d(x, w, e(3, dtype=torch.float32)), "bias must be"),
            ]
            for fn, text in cases:
                with self.subTest(text=text):
                    with self.assertRaises(vaeconv.VaeconvError) as cm:
                        fn()
                    self.assertIn(text, str(cm.exception))


class CpuReference(unittest.TestCase):
    """The ops' CPU path (the aten reference) against aten, and fake vs real consistency (opcheck)."""

    def test_against_aten_and_opcheck(self):
        torch.manual_seed(0)
        for kind, xs, cout in SHAPES:
            if kind == ops.CAUSAL and xs[1] * cout > 4096 or kind != ops.CAUSAL and xs[-1] > 100:
                continue  # keep the CPU test fast
            with self.subTest(kind=kind, x=xs):
                x = torch.randn(xs, dtype=torch.bfloat16)
                w = torch.randn((cout, xs[1]) + (3,) * (3 if kind == ops.CAUSAL else 2)) / 8
                b = torch.randn(cout)
                y = ops.OPS[kind](x, w, b)
                ref = ops.reference_conv(kind, x.float(), w, b)
                torch.testing.assert_close(y.float(), ref, rtol=1e-2, atol=1e-2)
                r = torch.randn(y.shape, dtype=torch.bfloat16)
                torch.testing.assert_close(ops.OPS[kind](x, w, b, r).float(), ref + r.float(), rtol=1e-2, atol=2e-2)
                torch.library.opcheck(ops.OPS[kind], (x, w, b))

    def test_channels_last_input_is_read_in_place(self):
        x = torch.randn(1, 8, 1, 6, 6, dtype=torch.bfloat16).contiguous(memory_format=torch.channels_last_3d)
        self.assertEqual(ops._channels_last_view(x).data_ptr(), x.data_ptr())
        y = torch.randn(1, 8, 1, 6, 6, dtype=torch.bfloat16)  # NCDHW: one copy
        self.assertNotEqual(ops._channels_last_view(y).data_ptr(), y.data_ptr())


def snapshot(model):
    return {name: dict(m.__dict__) for name, m in model.named_modules()}


class BiasCopy(unittest.TestCase):
    """The fp32 copy of a bias kept on a weights entry (what the device ops pass to the C ABI)."""

    def test_copy_follows_the_storage_and_its_version(self):
        entry = ops._PackedWeights(None, 0, None)
        a = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
        b = torch.tensor([3.0, 4.0], dtype=torch.bfloat16)
        fa = ops._bias_f32(entry, a)
        self.assertEqual(fa.dtype, torch.float32)
        self.assertEqual(fa.tolist(), [1.0, 2.0])
        self.assertIs(ops._bias_f32(entry, a), fa)  # kept while a is unchanged
        # Another storage under the same key (a new bias at a freed address, version 0): copied
        # again, not served a's values.
        entry.bias_key = (b.data_ptr(), ops._version_of(b), b.dtype)
        self.assertEqual(ops._bias_f32(entry, b).tolist(), [3.0, 4.0])
        a.add_(1)  # an in-place update moves the version counter
        self.assertEqual(ops._bias_f32(entry, a).tolist(), [2.0, 3.0])
        self.assertIsNone(ops._bias_f32(entry, None))


class Patch(unittest.TestCase):
    def model(self, dtype=torch.bfloat16, **kw):
        torch.manual_seed(1)
        return standin_vae.StandInVae(**kw).to(dtype).eval()

    def test_patch_counts_and_unpatch_round_trip(self):
        for causal, resample in ((standin_vae.QwenImageCausalConv3d, standin_vae.QwenImageResample),
                                 (standin_vae.WanCausalConv3d, standin_vae.WanResample)):
            m = self.model(causal=causal, resample=resample)
            before = snapshot(m)
            state = {k: v.clone() for k, v in m.state_dict().items()}
            report = vt.patch(m)
            self.assertEqual(sorted(n for n, _ in report.patched),
                             ["conv1", "conv_in", "conv_out", "down.resample", "up.resample"])
            self.assertEqual(sorted(n for n, _ in report.skipped), ["shortcut", "time_conv"])
            self.assertTrue(vt.is_patched(m.conv_in) and vt.is_patched(m.down.resample))
            self.assertEqual(len(vt.patch(m).patched), 0, "patching twice does nothing")
            self.assertEqual(vt.unpatch(m), 5)
            self.assertEqual(snapshot(m), before)
            for k, v in m.state_dict().items():
                self.assertTrue(torch.equal(v, state[k]), k)
            self.assertEqual(vt.unpatch(m), 0)

    def test_unpatch_restores_an_instance_forward(self):
        m = self.model()
        own = m.conv_in.forward
        m.conv_in.forward = own
        vt.patch(m)
        self.assertIsNot(m.conv_in.__dict__["forward"], own)
        vt.unpatch(m)
        self.assertIs(m.conv_in.__dict__["forward"], own)

    def run_counted(self, m, *args):
        with torch.no_grad(), CountVaeconvOps() as counter:
            y = m(*args)
        return y, counter.calls

    def test_patched_forward_runs_the_ops_and_matches(self):
        m = self.model()
        x = torch.randn(1, 3, 1, 12, 10, dtype=torch.bfloat16)
        with torch.no_grad():
            ref = m(x).float()
        vt.patch(m, cpu_reference=True)
        y, calls = self.run_counted(m, x)
        self.assertEqual(calls, {"vaeconv::causal_conv3d": 3, "vaeconv::downsample_conv2d": 1,
                                 "vaeconv::upsample_conv2d": 1})
        torch.testing.assert_close(y.float(), ref, rtol=0.05, atol=0.05)
        vt.unpatch(m)

    def test_fallbacks(self):
        x = torch.randn(1, 3, 2, 8, 8, dtype=torch.bfloat16)
        cache = torch.randn(1, 3, 2, 8, 8, dtype=torch.bfloat16)
        m = self.model()
        vt.patch(m)  # CPU tensors without cpu_reference: every conv keeps aten
        self.assertEqual(self.run_counted(m, x)[1], {})
        vt.unpatch(m)
        vt.patch(m, cpu_reference=True)
        _, calls = self.run_counted(m, x, cache)  # conv_in called with a cache tensor: aten there
        self.assertEqual(calls["vaeconv::causal_conv3d"], 2)
        with torch.enable_grad():  # autograd needed: aten
            xg = x.clone().requires_grad_()
            with CountVaeconvOps() as counter:
                m(xg).float().sum().backward()
            self.assertEqual(counter.calls, {})
        vt.unpatch(m)
        f32 = self.model(torch.float32)
        vt.patch(f32, cpu_reference=True)  # fp32 module, no opt-in: aten
        self.assertEqual(self.run_counted(f32, x.float())[1], {})
        vt.unpatch(f32)
        vt.patch(f32, cpu_reference=True, compute_dtype=torch.bfloat16)  # opted in: bf16 compute
        y, calls = self.run_counted(f32, x.float())
        self.assertEqual(sum(calls.values()), 5)
        self.assertEqual(y.dtype, torch.float32)
        vt.unpatch(f32)

    def test_device_without_library_falls_back_with_a_warning(self):
        vt._device_support.clear()
        env_lib = os.environ.get("VAECONV_LIBRARY")
        try:
            os.environ["VAECONV_LIBRARY"] = "/nonexistent/libvaeconv_kernels.so"
            saved = vaeconv._lib._lib
            vaeconv._lib._lib = None
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                ok = vt._device_supported(0, False)
            # Either the library is absent here, or it is a build for another runtime than this
            # CPU PyTorch, or no GPU answers: every case keeps aten and says why.
            self.assertFalse(ok)
            self.assertTrue(any("keeps the aten convs" in str(x.message) for x in w), [str(x.message) for x in w])
        finally:
            vaeconv._lib._lib = saved
            vt._device_support.clear()
            if env_lib is None:
                os.environ.pop("VAECONV_LIBRARY", None)
            else:
                os.environ["VAECONV_LIBRARY"] = env_lib


class Compile(unittest.TestCase):
    def test_fullgraph_compile_traces_the_ops(self):
        torch._dynamo.reset()
        m = standin_vae.StandInVae().to(torch.bfloat16).eval()
        x = torch.randn(1, 3, 1, 12, 10, dtype=torch.bfloat16)
        vt.patch(m, cpu_reference=True)
        graphs = []
        with torch.no_grad():
            eager = m(x)
            compiled = torch.compile(m, fullgraph=True, backend=recording_backend(graphs, aot=True))(x)
        torch.testing.assert_close(compiled.float(), eager.float(), rtol=0, atol=0)
        text = "\n".join(g.code for g in graphs)
        for name in ("causal_conv3d", "downsample_conv2d", "upsample_conv2d"):
            self.assertIn(f"vaeconv.{name}", text)
        aot = graphs[-1]
        fakes = [n.meta.get("val") for n in aot.graph.nodes if n.op == "call_function"
                 and "vaeconv" in str(n.target)]
        self.assertEqual(len(fakes), 5)
        for v in fakes:
            self.assertTrue(is_channels_last(v), v.stride())
        vt.unpatch(m)


class Discovery(unittest.TestCase):
    def test_build_copy_finds_its_library(self):
        build_python = os.environ.get("VAECONV_TEST_BUILD_PYTHON")
        if not build_python:
            self.skipTest("no GPU build of libvaeconv_kernels in this configuration")
        code = ("import vaeconv, os; p = vaeconv.library_path(); "
                "assert os.path.dirname(p) == os.path.dirname(vaeconv.__file__), p; print(vaeconv.backend())")
        env = {k: v for k, v in os.environ.items() if k not in ("VAECONV_LIBRARY", "LD_LIBRARY_PATH")}
        env["PYTHONPATH"] = build_python
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(out.stdout.strip(), ("hip", "cuda"))


class Diffusers(unittest.TestCase):
    def test_patch_real_vaes(self):
        qwen, wan = diffusers_or_skip()
        for cls in (qwen, wan):
            with self.subTest(cls=cls.__name__):
                torch.manual_seed(0)
                vae = cls(base_dim=8, z_dim=4, dim_mult=[1, 2], num_res_blocks=1,
                          temperal_downsample=[False]).to(torch.bfloat16).eval()
                before = snapshot(vae)
                report = vt.patch(vae, cpu_reference=True)
                self.assertGreater(len(report.patched), 0)
                x = torch.randn(1, 3, 1, 16, 16, dtype=torch.bfloat16)
                vt.unpatch(vae)
                with torch.no_grad():
                    ref = vae.decode(vae.encode(x).latent_dist.mode()).sample.float()
                vt.patch(vae, cpu_reference=True)
                with torch.no_grad(), CountVaeconvOps() as counter:
                    y = vae.decode(vae.encode(x).latent_dist.mode()).sample.float()
                self.assertGreater(sum(counter.calls.values()), 0)
                torch.testing.assert_close(y, ref, rtol=0.1, atol=0.1)
                vt.unpatch(vae)
                self.assertEqual(snapshot(vae), before)


if __name__ == "__main__":
    unittest.main()
