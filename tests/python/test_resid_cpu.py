"""CPU tests of the residual-block swap of vaeconv.torch.patch (no GPU): QwenImageResidualBlock /
WanResidualBlock (standin_vae's, written to the behaviour the patch relies on) run with the
shortcut h passed to conv2's op as `residual`, patched against unpatched, without and with the
feat_cache protocol (first chunk: the uncached op; later chunks: the cached op), a conv_shortcut
and an identity shortcut; the fallbacks (fp32 modules, NCDHW shortcut, autograd) bit-identical to
conv2 then aten's add; the norms' SiLU fusion kept; unpatch restoring every forward;
torch.compile(fullgraph=True) tracing the residual into the op; the source check on diffusers' own
residual block forwards when a checkout is present. With cpu_reference the ops run their aten
reference (fp32, rounded once), so this checks routing, protocol and rounding, not the kernels.
Run by tests/python/run_cpu_tests.py (ctest python_torch_cpu)."""
import os
import sys
import types
import unittest

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin_vae  # noqa: E402
from vaeconv_testutil import (DIFFUSERS_AE, CountVaeconvOps, channels_last, class_forward_source,  # noqa: E402
                              is_channels_last, recording_backend)
import vaeconv.torch as vt  # noqa: E402

BLOCKS = (standin_vae.QwenImageResidualBlock, standin_vae.WanResidualBlock)


def block(cls, cin, cout, dtype=torch.bfloat16, seed=0):
    torch.manual_seed(seed)
    m = cls(cin, cout)
    with torch.no_grad():  # non-trivial gamma / bias, weights that make every path matter
        for mod in m.modules():
            if isinstance(mod, standin_vae.QwenImageRMS_norm):
                mod.gamma.uniform_(0.5, 1.5)
        for p in m.parameters():
            p.mul_(1.5)
    return m.to(dtype).eval()


def fp32_copy(m):
    c = type(m)(m.norm1.gamma.shape[0], m.conv2.out_channels)
    c.load_state_dict({k: v.float() for k, v in m.state_dict().items()})
    return c.eval()


def frames(n, cin, t, seed, dtype=torch.bfloat16):
    g = torch.Generator().manual_seed(seed)
    return channels_last(torch.randn((n, cin, t, 6, 5), generator=g).to(dtype))


def forwards(model):
    return {name: m.__dict__.get("forward") for name, m in model.named_modules()}


def run_chunks(m, xs):
    """The block over consecutive chunks with one feat_cache list (2 slots: conv1, conv2)."""
    cache, outs = [None, None], []
    for x in xs:
        idx = [0]
        outs.append(m(x, cache, idx))
        assert idx == [2]
    return outs, cache


CHUNKS = (1, 1, 2, 3)  # first chunk, a one-frame chunk after it, longer ones


class Patch(unittest.TestCase):
    def test_report_names_the_blocks_and_keeps_the_silu_fusion(self):
        for cls in BLOCKS:
            with self.subTest(cls=cls.__name__):
                m = nn.ModuleDict({"short": block(cls, 16, 32), "ident": block(cls, 32, 32)})
                report = vt.patch(m, cpu_reference=True)
                self.assertEqual(report.residuals, [("short.conv2", "causal_conv3d+residual"),
                                                    ("ident.conv2", "causal_conv3d+residual")])
                norms = dict(report.norms)
                for b in ("short", "ident"):
                    self.assertEqual(norms[f"{b}.norm1"], "rms_norm+silu")
                    self.assertEqual(norms[f"{b}.norm2"], "rms_norm+silu")
                    self.assertIn("forward", m[b].__dict__)
                self.assertIn("short.conv_shortcut", dict(report.skipped))  # 1x1x1: aten
                vt.unpatch(m)

    def test_patched_matches_fp32_and_passes_the_residual(self):
        for cls in BLOCKS:
            for cin, cout in ((16, 32), (32, 32)):
                with self.subTest(cls=cls.__name__, cin=cin, cout=cout):
                    m = block(cls, cin, cout)
                    ref32 = fp32_copy(m)
                    x = frames(2, cin, 3, seed=cin)
                    with torch.no_grad():
                        want = ref32(x.float())
                        unpatched = m(x)
                        vt.patch(m, cpu_reference=True)
                        with CountVaeconvOps(silu_apart=True, residual_apart=True) as count:
                            y = m(x)
                    vt.unpatch(m)
                    self.assertEqual(count.calls.get("vaeconv::causal_conv3d+residual"), 1, count.calls)
                    self.assertEqual(count.calls.get("vaeconv::causal_conv3d"), 1, count.calls)  # conv1
                    self.assertEqual(count.calls.get("vaeconv::rms_norm+silu"), 2, count.calls)
                    self.assertEqual(y.dtype, torch.bfloat16)
                    self.assertTrue(is_channels_last(y))
                    self.assertTrue(torch.isfinite(y).all())
                    torch.testing.assert_close(y.float(), want, rtol=5e-2, atol=5e-2)
                    # Not farther from fp32 than diffusers' bf16 forward (one rounding less).
                    err = (y.float() - want).norm() / want.norm()
                    err_unpatched = (unpatched.float() - want).norm() / want.norm()
                    self.assertLessEqual(err.item(), err_unpatched.item() * 1.25 + 1e-4)

    def test_residual_is_added_once_in_fp32(self):
        # conv2's op output with the residual equals fp32 conv2(x) + h rounded once, every element.
        m = block(standin_vae.QwenImageResidualBlock, 32, 32)
        vt.patch(m, cpu_reference=True)
        x = frames(1, 32, 2, seed=9)
        h = frames(1, 32, 2, seed=10) * 50  # large: a double rounding would show
        with torch.no_grad():
            y = vt._conv2_plus(m, x, h)
            conv = m.conv2
            want = nn.functional.conv3d(nn.functional.pad(x.float(), conv._padding), conv.weight.float(),
                                        conv.bias.float()) + h.float()
        vt.unpatch(m)
        self.assertTrue(torch.equal(y, want.bfloat16()))

    def test_chunks_match_and_store_the_same_caches(self):
        for cls in BLOCKS:
            for cin, cout in ((16, 32), (32, 32)):
                with self.subTest(cls=cls.__name__, cin=cin, cout=cout):
                    m = block(cls, cin, cout)
                    ref32 = fp32_copy(m)
                    xs = [frames(2, cin, t, seed=40 + i) for i, t in enumerate(CHUNKS)]
                    with torch.no_grad():
                        want, want_cache = run_chunks(ref32, [x.float() for x in xs])
                        vt.patch(m, cpu_reference=True)
                        with CountVaeconvOps(silu_apart=True, residual_apart=True) as count:
                            got, got_cache = run_chunks(m, xs)
                    vt.unpatch(m)
                    # First chunk: both convs without a cache; the three after it: cached.
                    self.assertEqual(count.calls.get("vaeconv::causal_conv3d+residual"), 1, count.calls)
                    self.assertEqual(count.calls.get("vaeconv::causal_conv3d_cached+residual"), 3, count.calls)
                    self.assertEqual(count.calls.get("vaeconv::causal_conv3d"), 1, count.calls)
                    self.assertEqual(count.calls.get("vaeconv::causal_conv3d_cached"), 3, count.calls)
                    for i, (g, w) in enumerate(zip(got, want)):
                        self.assertEqual(tuple(g.shape), tuple(w.shape), f"chunk {i}")
                        torch.testing.assert_close(g.float(), w, rtol=5e-2, atol=5e-2, msg=f"chunk {i}")
                    for i, (g, w) in enumerate(zip(got_cache, want_cache)):
                        self.assertEqual(tuple(g.shape), tuple(w.shape), f"slot {i}")  # 2 frames each
                        self.assertEqual(g.dtype, torch.bfloat16)
                        torch.testing.assert_close(g.float(), w, rtol=5e-2, atol=5e-2, msg=f"slot {i}")

    def test_same_bits_as_the_unfused_patch_but_the_add(self):
        # residuals=False runs conv2's op then aten's add (two roundings); the fused output differs
        # from it by at most one bf16 rounding step of the sum, and the caches are bit-identical.
        for cls in BLOCKS:
            with self.subTest(cls=cls.__name__):
                m = block(cls, 16, 32)
                xs = [frames(1, 16, t, seed=70 + i) for i, t in enumerate(CHUNKS)]
                with torch.no_grad():
                    vt.patch(m, cpu_reference=True, residuals=False)
                    ref, ref_cache = run_chunks(m, xs)
                    vt.unpatch(m)
                    vt.patch(m, cpu_reference=True)
                    got, got_cache = run_chunks(m, xs)
                    vt.unpatch(m)
                for g, r in zip(got_cache, ref_cache):
                    self.assertTrue(torch.equal(g, r))
                for x, g, r in zip(xs, got, ref):
                    # conv2's own rounding (half a bf16 step of |conv2| <= |sum| + |h|) and the
                    # sum's: within a bf16 step of |sum| + |h|, and not all equal (the test can fail).
                    h = m.conv_shortcut(x).float()
                    step = (r.float().abs() + h.abs()) * 2 ** -7 + 1e-6
                    self.assertTrue(((g.float() - r.float()).abs() <= step).all())
                self.assertFalse(all(torch.equal(g, r) for g, r in zip(got, ref)))

    def test_fallbacks_are_bit_identical(self):
        for cls in BLOCKS:
            for cin, cout in ((16, 32), (32, 32)):
                with self.subTest(cls=cls.__name__, cin=cin, cout=cout):
                    # fp32 modules without compute_dtype: vaeconv runs nothing; the block's forward
                    # is diffusers' computation bit for bit, output and caches.
                    m = block(cls, cin, cout, torch.float32)
                    xs = [frames(1, cin, t, seed=90 + i, dtype=torch.float32) for i, t in enumerate(CHUNKS)]
                    with torch.no_grad():
                        ref_plain = m(xs[2])
                        ref, ref_cache = run_chunks(m, xs)
                        vt.patch(m, cpu_reference=True)
                        with CountVaeconvOps(silu_apart=True, residual_apart=True) as count:
                            got_plain = m(xs[2])
                            got, got_cache = run_chunks(m, xs)
                    vt.unpatch(m)
                    self.assertEqual(count.calls, {})
                    self.assertTrue(torch.equal(got_plain, ref_plain))
                    for g, r in zip(got + got_cache, ref + ref_cache):
                        self.assertTrue(torch.equal(g, r))

    def test_dropout_in_training_draws_the_same_mask(self):
        # Dropout p = 0.5 in training mode (no autograd): the patched forward calls it where
        # diffusers does, so the same seed gives the same mask: bit-identical where vaeconv does
        # not run (fp32), within the fused rounding where it does.
        for dtype in (torch.float32, torch.bfloat16):
            with self.subTest(dtype=dtype):
                m = block(standin_vae.QwenImageResidualBlock, 16, 32, dtype)
                m.dropout.p = 0.5
                m.train()
                x = frames(1, 16, 2, seed=8, dtype=dtype)
                with torch.no_grad():
                    vt.patch(m, cpu_reference=True, residuals=False)
                    torch.manual_seed(11)
                    ref = m(x)
                    vt.unpatch(m)
                    vt.patch(m, cpu_reference=True)
                    torch.manual_seed(11)
                    got = m(x)
                    torch.manual_seed(12)
                    other = m(x)
                    vt.unpatch(m)
                    h = m.conv_shortcut(x).float()
                self.assertFalse(torch.equal(got, other))  # the mask matters
                if dtype == torch.float32:
                    self.assertTrue(torch.equal(got, ref))
                else:
                    step = (ref.float().abs() + h.abs()) * 2 ** -7 + 1e-6
                    self.assertTrue(((got.float() - ref.float()).abs() <= step).all())

    def test_ncdhw_shortcut_keeps_aten_add(self):
        # An identity shortcut of an NCDHW input: passing it would need a copy, so conv2's op
        # runs without it and aten adds h: bit-identical to residuals=False.
        m = block(standin_vae.WanResidualBlock, 32, 32)
        x = frames(1, 32, 2, seed=3).contiguous()
        self.assertFalse(is_channels_last(x))
        with torch.no_grad():
            vt.patch(m, cpu_reference=True, residuals=False)
            ref = m(x)
            vt.unpatch(m)
            vt.patch(m, cpu_reference=True)
            with CountVaeconvOps(silu_apart=True, residual_apart=True) as count:
                y = m(x)
            vt.unpatch(m)
        self.assertNotIn("vaeconv::causal_conv3d+residual", count.calls)
        self.assertEqual(count.calls.get("vaeconv::causal_conv3d"), 2, count.calls)
        self.assertTrue(torch.equal(y, ref))

    def test_fp32_module_in_bf16_keeps_aten_add(self):
        # compute_dtype=bf16 on an fp32 module: the convs run in bf16, h is fp32 (the op would
        # round it): aten's add in fp32, as residuals=False gives.
        m = block(standin_vae.QwenImageResidualBlock, 16, 32, torch.float32)
        x = frames(1, 16, 2, seed=4, dtype=torch.float32)
        with torch.no_grad():
            vt.patch(m, cpu_reference=True, compute_dtype=torch.bfloat16, residuals=False)
            ref = m(x)
            vt.unpatch(m)
            vt.patch(m, cpu_reference=True, compute_dtype=torch.bfloat16)
            with CountVaeconvOps(silu_apart=True, residual_apart=True) as count:
                y = m(x)
            vt.unpatch(m)
        self.assertEqual(y.dtype, torch.float32)
        self.assertNotIn("vaeconv::causal_conv3d+residual", count.calls)
        self.assertEqual(count.calls.get("vaeconv::causal_conv3d"), 2, count.calls)
        self.assertTrue(torch.equal(y, ref))

    def test_autograd_falls_back(self):
        m = block(standin_vae.QwenImageResidualBlock, 16, 32)
        vt.patch(m, cpu_reference=True)
        x = frames(1, 16, 2, seed=5).requires_grad_()
        with CountVaeconvOps(silu_apart=True, residual_apart=True) as count:
            y = m(x)
        y.float().sum().backward()
        vt.unpatch(m)
        self.assertFalse(any(k.startswith("vaeconv::causal") for k in count.calls), count.calls)
        self.assertIsNotNone(x.grad)

    def test_default_feat_idx_runs_the_original(self):
        # feat_cache without feat_idx: the class forward with its own default list (which each
        # call advances, as diffusers' does), as unpatched.
        m = block(standin_vae.QwenImageResidualBlock, 32, 32)
        default = standin_vae.QwenImageResidualBlock.forward.__defaults__[1]
        saved = default[0]
        default[0] = 0
        x = frames(1, 32, 2, seed=6)
        try:
            with torch.no_grad():
                ref_cache = [None] * 4
                ref = m(x, ref_cache)
                self.assertEqual(default, [2])
                vt.patch(m, cpu_reference=True)
                got_cache = [None] * 4
                with CountVaeconvOps(silu_apart=True, residual_apart=True) as count:
                    got = m(x, got_cache)
                vt.unpatch(m)
            self.assertEqual(default, [4])
        finally:
            default[0] = saved
        self.assertNotIn("vaeconv::causal_conv3d+residual", count.calls)
        self.assertEqual(count.calls.get("vaeconv::causal_conv3d"), 2, count.calls)
        self.assertEqual([c is None for c in ref_cache], [False, False, True, True])
        self.assertEqual([c is None for c in got_cache], [True, True, False, False])
        torch.testing.assert_close(got.float(), ref.float(), rtol=5e-2, atol=5e-2)

    def test_unpatch_restores_and_patch_is_idempotent(self):
        m = nn.ModuleDict({"a": block(standin_vae.QwenImageResidualBlock, 16, 32),
                           "b": block(standin_vae.WanResidualBlock, 32, 32)})
        before = forwards(m)
        x = frames(1, 16, 2, seed=7)
        with torch.no_grad():
            ref = m["b"](m["a"](x))
            r1 = vt.patch(m, cpu_reference=True)
            r2 = vt.patch(m, cpu_reference=True)
            self.assertEqual(len(r1.residuals), 2)
            self.assertEqual(r2.residuals, [])
            restored = vt.unpatch(m)
            self.assertEqual(forwards(m), before)
            self.assertTrue(torch.equal(m["b"](m["a"](x)), ref))
        self.assertEqual(restored, 2 + 4 + 2 + 4)  # blocks, norms, fused SiLUs, conv1 / conv2
        self.assertFalse(any(k.startswith("_vaeconv") for mod in m.modules() for k in mod.__dict__))

    def test_norms_then_residuals_in_two_patches_keep_the_fusion(self):
        m = block(standin_vae.QwenImageResidualBlock, 32, 32)
        r1 = vt.patch(m, cpu_reference=True, norms=False)
        self.assertEqual(len(r1.residuals), 1)
        r2 = vt.patch(m, cpu_reference=True)  # the block already has our forward
        self.assertEqual(dict(r2.norms), {"norm1": "rms_norm+silu", "norm2": "rms_norm+silu"})
        vt.unpatch(m)
        self.assertNotIn("forward", m.__dict__)

    def test_refusals_are_reported(self):
        def other_forward(self, x, feat_cache=None, feat_idx=[0]):
            h = self.conv_shortcut(x)
            x = self.conv2(self.conv1(x))
            return x + 2 * h
        # The class name the patch looks for, with a forward that is not diffusers' one.
        OtherForward = type("QwenImageResidualBlock", (standin_vae.QwenImageResidualBlock,),
                            {"forward": other_forward, "__module__": standin_vae.__name__})

        own = block(standin_vae.QwenImageResidualBlock, 32, 32)
        own_forward = types.MethodType(lambda self, x, *a: x, own)
        own.forward = own_forward
        no_feat = block(standin_vae.WanResidualBlock, 32, 32)
        no_feat.forward = types.MethodType(standin_vae.WanResidualBlock.forward, no_feat)
        odd_conv2 = block(standin_vae.QwenImageResidualBlock, 32, 32)
        odd_conv2.conv2 = standin_vae.QwenImageCausalConv3d(32, 32, 1).bfloat16()
        m = nn.ModuleDict({"own": own, "other": OtherForward(32, 32).bfloat16(), "odd": odd_conv2})
        report = vt.patch(m, cpu_reference=True)
        skipped = dict(report.skipped)
        self.assertEqual(report.residuals, [])
        self.assertIn("instance forward", skipped["own"])
        self.assertIn("not diffusers' residual block forward", skipped["other"])
        self.assertIn("conv2 is not a causal conv on vaeconv", skipped["odd"])
        self.assertIs(own.__dict__["forward"], own_forward)
        vt.unpatch(m)
        self.assertIs(own.__dict__["forward"], own_forward)
        self.assertEqual(vt.patch(block(standin_vae.WanResidualBlock, 32, 32), cpu_reference=True,
                                  residuals=False).residuals, [])


class Compile(unittest.TestCase):
    def test_fullgraph_traces_the_residual_into_conv2(self):
        for chunked in (False, True):
            with self.subTest(chunked=chunked):
                torch._dynamo.reset()
                m = block(standin_vae.WanResidualBlock, 32, 32)
                vt.patch(m, cpu_reference=True)
                xs = [frames(1, 32, t, seed=20 + i) for i, t in enumerate((1, 2))]
                graphs = []
                backend = recording_backend(graphs)

                def step(x, cache):
                    return m(x, cache, [0]) if chunked else m(x)

                compiled = torch.compile(step, fullgraph=True, backend=backend)
                eager_cache, compiled_cache = [None, None], [None, None]
                with torch.no_grad():
                    for i, x in enumerate(xs):
                        ye = step(x, eager_cache)
                        yc = compiled(x, compiled_cache)
                        self.assertTrue(torch.equal(ye, yc), f"chunk {i}")
                        for a, b in zip(compiled_cache, eager_cache):
                            self.assertTrue((a is None and b is None) or torch.equal(a, b))
                vt.unpatch(m)
                # One graph per chunk shape; in each, conv2's op and only it takes the residual
                # (the uncached op on the first chunk, the cached one after it when chunked).
                self.assertEqual(len(graphs), 2)
                for i, g in enumerate(graphs):
                    convs = [n for n in g.graph.nodes if n.op == "call_function"
                             and "vaeconv.causal_conv3d" in str(n.target)]
                    cached = chunked and i == 1
                    residual_at = 4 if cached else 3
                    self.assertEqual(len(convs), 2, g.code)
                    self.assertIsNone(convs[0].args[residual_at], g.code)
                    self.assertIsNotNone(convs[1].args[residual_at], g.code)
                    self.assertEqual("cached" in str(convs[1].target), cached, g.code)


class DiffusersSource(unittest.TestCase):
    """The source check on diffusers' own residual block forwards (read as text)."""

    def forward_source(self, path, cls):
        src = class_forward_source(path, cls)
        if src is None:
            self.fail(f"{cls}.forward not found in {path}")
        return src

    def test_diffusers_blocks_match(self):
        if not os.path.isdir(DIFFUSERS_AE):
            raise unittest.SkipTest(f"no diffusers checkout at {DIFFUSERS_AE}")
        for fname, cls in (("autoencoder_kl_qwenimage.py", "QwenImageResidualBlock"),
                           ("autoencoder_kl_wan.py", "WanResidualBlock")):
            with self.subTest(cls=cls):
                src = self.forward_source(os.path.join(DIFFUSERS_AE, fname), cls)
                self.assertTrue(vt.residual_forward_matches_source(src))
                # The check can fail: another return, another call, another cache length.
                for old, new in (("return x + h", "return x - h"),
                                 ("x = self.dropout(x)", "x = self.dropout(self.norm2(x))"),
                                 ("h = self.conv_shortcut(x)", "h = x")):
                    self.assertIn(old, src)
                    self.assertFalse(vt.residual_forward_matches_source(src.replace(old, new)), new)

    def test_standin_matches(self):
        import inspect
        for cls in BLOCKS:
            self.assertTrue(vt.residual_forward_matches_source(inspect.getsource(cls.forward)))


if __name__ == "__main__":
    unittest.main()
