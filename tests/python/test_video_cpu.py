"""CPU tests of the chunked video path of vaeconv.torch.patch (no GPU): a Wan-like VAE
(standin_vae.WanLikeVae: cached causal convs, upsample3d / downsample3d resamples with their
time_conv) encoding and decoding video chunk by chunk through the feat_cache protocol, patched
against unpatched. With cpu_reference the patched convs run the ops' CPU path (the aten reference
of each op), so this checks the routing and the protocol, not the kernels (tests/python_gpu does).
Run by tests/python/run_cpu_tests.py (ctest python_torch_cpu)."""
import os
import sys
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin_vae  # noqa: E402
from vaeconv_testutil import CountVaeconvOps, recording_backend, rel_l2  # noqa: E402
import vaeconv  # noqa: E402
import vaeconv.ops as ops  # noqa: E402
import vaeconv.torch as vt  # noqa: E402


def snapshot(model):
    return {name: dict(m.__dict__) for name, m in model.named_modules()}


def vae(dtype=torch.bfloat16):
    torch.manual_seed(5)
    m = standin_vae.WanLikeVae(dim=16, z_dim=8)
    with torch.no_grad():  # weights large enough that every layer matters in the output
        for p in m.parameters():
            p.mul_(1.5)
    return m.to(dtype).eval()


def video(frames, dtype=torch.bfloat16, n=2, h=20, w=12):
    g = torch.Generator().manual_seed(frames)
    return (torch.rand((n, 3, frames, h, w), generator=g) * 2 - 1).to(dtype)


def latents(frames, dtype=torch.bfloat16, n=2, h=5, w=3):
    g = torch.Generator().manual_seed(100 + frames)
    return torch.randn((n, 8, frames, h, w), generator=g).to(dtype)


def assert_caches(tc, got, ref, exact, what):
    """The feat_cache lists after the last chunk: the same slots empty, the same "Rep" sentinels,
    tensors of the same shape and (to tolerance, or exactly) value."""
    tc.assertEqual(len(got), len(ref))
    for i, (g, r) in enumerate(zip(got, ref)):
        if r is None or isinstance(r, str):
            tc.assertEqual(g, r, f"{what}: slot {i}")
            continue
        tc.assertIsInstance(g, torch.Tensor, f"{what}: slot {i}")
        tc.assertEqual(tuple(g.shape), tuple(r.shape), f"{what}: slot {i}")
        tc.assertEqual(g.dtype, r.dtype, f"{what}: slot {i}")
        if exact:
            tc.assertTrue(torch.equal(g, r), f"{what}: slot {i}")
        else:
            torch.testing.assert_close(g.float(), r.float(), rtol=0.05, atol=0.05, msg=f"{what}: slot {i}")


class WanLikeChunkedVideo(unittest.TestCase):
    # 9 frames: encoder chunks of 1, 4, 4 frames -> 3 latent frames; the decoder runs 3 chunks of
    # one latent frame -> 1 + 4 + 4 frames. Each 3d resample runs its time conv on the chunks after
    # the first: 2 per resample, 2 resamples each side.
    FRAMES, LATENT = 9, 3

    def test_patch_report_and_round_trip(self):
        m = vae()
        before = snapshot(m)
        state = {k: v.clone() for k, v in m.state_dict().items()}
        report = vt.patch(m)
        temporal = sorted(n for n, op in report.patched if op == "temporal_conv3d")
        self.assertEqual(temporal, ["dec.2.time_conv", "dec.4.time_conv", "enc.2.time_conv", "enc.4.time_conv"])
        self.assertEqual(sum(op == "causal_conv3d" for _, op in report.patched), 16)
        self.assertEqual(sum(op == "downsample_conv2d" for _, op in report.patched), 2)
        self.assertEqual(sum(op == "upsample_conv2d" for _, op in report.patched), 2)
        # Only the 1x1x1 shortcut is left; the time_convs are not reported as refused causal convs.
        self.assertEqual(sorted(n for n, _ in report.skipped), ["enc.3.shortcut"])
        self.assertTrue(vt.is_patched(m.dec[2]) and vt.is_patched(m.dec[2].resample))
        self.assertEqual(len(vt.patch(m).patched), 0, "patching twice does nothing")
        self.assertEqual(vt.unpatch(m), len(report.patched))
        self.assertEqual(snapshot(m), before)
        for k, v in m.state_dict().items():
            self.assertTrue(torch.equal(v, state[k]), k)

    def test_fallback_is_bit_identical(self):
        # CPU tensors without cpu_reference: no vaeconv op runs, and the replaced resample forward
        # must compute exactly what diffusers' does, caches included.
        m = vae()
        x, z = video(self.FRAMES), latents(self.LATENT)
        with torch.no_grad():
            enc_ref, dec_ref = m.encode(x), m.decode(z)
            enc_cache, dec_cache = m.enc_cache, m.dec_cache
            vt.patch(m)
            with CountVaeconvOps() as counter:
                enc, dec = m.encode(x), m.decode(z)
        vt.unpatch(m)
        self.assertEqual(counter.calls, {})
        self.assertTrue(torch.equal(enc, enc_ref))
        self.assertTrue(torch.equal(dec, dec_ref))
        assert_caches(self, m.enc_cache, enc_cache, True, "encode")
        assert_caches(self, m.dec_cache, dec_cache, True, "decode")

    def run_both(self, m, fn, inp, **options):
        with torch.no_grad():
            ref = fn(inp)
            ref_cache = list(m.enc_cache if fn == m.encode else m.dec_cache)
            vt.patch(m, cpu_reference=True, **options)
            try:
                with CountVaeconvOps() as counter:
                    y = fn(inp)
            finally:
                vt.unpatch(m)
        cache = m.enc_cache if fn == m.encode else m.dec_cache
        return y, ref, cache, ref_cache, counter.calls

    def test_chunked_decode_matches_unpatched(self):
        m = vae()
        z = latents(self.LATENT)
        y, ref, cache, ref_cache, calls = self.run_both(m, m.decode, z)
        self.assertEqual(tuple(y.shape), (2, 3, self.FRAMES, 20, 12))
        # 8 causal convs per chunk, cached from the second chunk on (conv_in's Cin = 8 included).
        self.assertEqual(calls, {"vaeconv::causal_conv3d": 8, "vaeconv::causal_conv3d_cached": 16,
                                 "vaeconv::temporal_conv3d": 4, "vaeconv::upsample_conv2d": 6})
        self.assertLess(rel_l2(y, ref), 0.02)
        torch.testing.assert_close(y.float(), ref.float(), rtol=0.05, atol=0.05)
        assert_caches(self, cache, ref_cache, False, "decode")
        self.assertEqual(sum(isinstance(c, str) for c in cache), 0, "every Rep replaced after 3 chunks")

    def test_chunked_encode_matches_unpatched(self):
        m = vae()
        x = video(self.FRAMES)
        y, ref, cache, ref_cache, calls = self.run_both(m, m.encode, x)
        self.assertEqual(tuple(y.shape), (2, 16, self.LATENT, 5, 3))
        # 8 causal convs per chunk; conv_in (Cin = 3) keeps aten on the chunks with a cache.
        self.assertEqual(calls, {"vaeconv::causal_conv3d": 8, "vaeconv::causal_conv3d_cached": 14,
                                 "vaeconv::temporal_conv3d": 4, "vaeconv::downsample_conv2d": 6})
        self.assertLess(rel_l2(y, ref), 0.02)
        torch.testing.assert_close(y.float(), ref.float(), rtol=0.05, atol=0.05)
        assert_caches(self, cache, ref_cache, False, "encode")

    def test_fp32_module_computes_in_bf16_when_asked(self):
        m = vae(torch.float32)
        z = latents(self.LATENT, torch.float32)
        y, ref, cache, ref_cache, calls = self.run_both(m, m.decode, z, compute_dtype=torch.bfloat16)
        self.assertEqual(calls["vaeconv::temporal_conv3d"], 4)
        self.assertEqual(y.dtype, torch.float32)
        self.assertLess(rel_l2(y, ref), 0.03)
        assert_caches(self, cache, ref_cache, False, "decode fp32")


class Resample3dSteps(unittest.TestCase):
    """One 3d resample module, chunk by chunk, patched (cpu_reference) against unpatched: every
    branch of the protocol (first chunk, "Rep" with one and two frames, a stored cache with one
    and two frames, N = 1 and 2)."""

    def steps(self, mode, dim, chunks, n):
        torch.manual_seed(11)
        ref_m = standin_vae.WanResample(dim, mode).to(torch.bfloat16).eval()
        m = standin_vae.WanResample(dim, mode).to(torch.bfloat16).eval()
        m.load_state_dict(ref_m.state_dict())
        vt.patch(m, cpu_reference=True)
        ref_cache, cache = [None], [None]
        g = torch.Generator().manual_seed(len(chunks))
        temporal = 0
        with torch.no_grad():
            for i, t in enumerate(chunks):
                x = torch.randn((n, dim, t, 7, 5), generator=g).to(torch.bfloat16)
                ref_idx, idx = [0], [0]
                ref = ref_m(x, ref_cache, ref_idx)
                with CountVaeconvOps() as counter:
                    y = m(x, cache, idx)
                temporal += counter.calls.get("vaeconv::temporal_conv3d", 0)
                what = f"{mode} chunk {i} ({t} frames)"
                self.assertEqual(idx, ref_idx, what)
                self.assertEqual(tuple(y.shape), tuple(ref.shape), what)
                torch.testing.assert_close(y.float(), ref.float(), rtol=0.03, atol=0.03, msg=what)
                assert_caches(self, cache, ref_cache, False, what)
        vt.unpatch(m)
        return temporal

    def test_upsample3d(self):
        for n in (1, 2):
            # first chunk; "Rep" + 1 frame (zero in front); stored + 1 frame; stored + 3 frames.
            self.assertEqual(self.steps("upsample3d", 16, [1, 1, 1, 3], n), 3)
            # "Rep" + 2 frames; stored + 2 frames.
            self.assertEqual(self.steps("upsample3d", 8, [2, 2, 2], n), 2)

    def test_downsample3d(self):
        for n in (1, 2):
            self.assertEqual(self.steps("downsample3d", 16, [1, 4, 4, 2], n), 3)  # 5, 5, 3 frames in
            self.assertEqual(self.steps("downsample3d", 8, [3, 5], n), 1)          # odd T

    def test_without_feat_cache_runs_the_original(self):
        torch.manual_seed(2)
        m = standin_vae.WanResample(16, "upsample3d").to(torch.bfloat16).eval()
        x = torch.randn((1, 16, 2, 6, 4), dtype=torch.bfloat16)
        with torch.no_grad():
            ref = m(x)
            vt.patch(m, cpu_reference=True)
            with CountVaeconvOps() as counter:
                y = m(x)
        vt.unpatch(m)
        self.assertEqual(counter.calls, {"vaeconv::upsample_conv2d": 1})  # no time conv without a cache
        torch.testing.assert_close(y.float(), ref.float(), rtol=0.03, atol=0.03)

    def test_unsupported_channels_keep_aten(self):
        # Cin = 12 is not whole 16-byte chunks: the time conv keeps diffusers' computation.
        torch.manual_seed(4)
        m = standin_vae.WanResample(12, "upsample3d").to(torch.bfloat16).eval()
        vt.patch(m, cpu_reference=True)
        cache = [None]
        with torch.no_grad(), CountVaeconvOps() as counter:
            for t in (1, 2, 2):
                m(torch.randn((1, 12, t, 6, 4), dtype=torch.bfloat16), cache, [0])
        vt.unpatch(m)
        self.assertNotIn("vaeconv::temporal_conv3d", counter.calls)
        self.assertEqual(counter.calls["vaeconv::upsample_conv2d"], 3)

    def test_refusals_are_reported(self):
        m = standin_vae.WanResample(8, "upsample3d")
        m.time_conv = standin_vae.WanCausalConv3d(8, 12, (3, 1, 1), padding=(1, 0, 0))
        report = vt.patch(m)
        vt.unpatch(m)
        self.assertEqual([n for n, _ in report.skipped], ["time_conv"])
        self.assertIn("interleaves", report.skipped[0][1])
        self.assertEqual([op for _, op in report.patched], ["upsample_conv2d"])


class TemporalChecks(unittest.TestCase):
    def test_operands_on_another_device_are_refused(self):
        # A bias or residual elsewhere than x would hand the kernel a pointer of another device.
        x = torch.zeros(1, 8, 4, 3, 3, dtype=torch.bfloat16)
        w = torch.zeros(8, 8, 3, 1, 1)
        y = torch.ops.vaeconv.temporal_conv3d(x, None, w, None, None, 2, False)
        with self.assertRaisesRegex(vaeconv.VaeconvError, "bias is on meta"):
            torch.ops.vaeconv.temporal_conv3d(x, None, w, torch.zeros(8, device="meta"), None, 2, False)
        with self.assertRaisesRegex(vaeconv.VaeconvError, "weight is on meta"):
            torch.ops.vaeconv.temporal_conv3d(x, None, w.to("meta"), None, None, 2, False)
        with self.assertRaisesRegex(vaeconv.VaeconvError, "residual is on meta"):
            torch.ops.vaeconv.temporal_conv3d(x, None, w, None, torch.zeros(y.shape, dtype=torch.bfloat16,
                                                                            device="meta"), 2, False)
        with self.assertRaisesRegex(vaeconv.VaeconvError, "bias must be a float"):
            torch.ops.vaeconv.temporal_conv3d(x, None, w, torch.zeros(8, dtype=torch.int32), None, 2, False)

    def test_refusals_name_the_op_and_what_they_got(self):
        x = torch.zeros(1, 8, 4, 3, 3, dtype=torch.bfloat16)
        w = torch.zeros(8, 8, 3, 1, 1)
        with self.assertRaisesRegex(vaeconv.VaeconvError, r"^vaeconv: temporal_conv3d: weight must be floating"):
            torch.ops.vaeconv.temporal_conv3d(x, None, w.to(torch.int32), None, None, 2, False)
        with self.assertRaisesRegex(vaeconv.VaeconvError,
                                    r"temporal_conv3d: residual must be bfloat16 .*got \(1, 8, 1, 3, 3\) torch.float32"):
            torch.ops.vaeconv.temporal_conv3d(x, None, w, None, torch.zeros(1, 8, 1, 3, 3), 2, False)
        with self.assertRaisesRegex(vaeconv.VaeconvError, r"^vaeconv: temporal_conv3d: cache must be"):
            torch.ops.vaeconv.temporal_conv3d(x, torch.zeros(1, 8, 2, 3, 3, dtype=torch.bfloat16), w, None,
                                              None, 2, False)
        xc = torch.zeros(1, 16, 2, 4, 4, dtype=torch.bfloat16)
        wc = torch.zeros(16, 16, 3, 3, 3, dtype=torch.bfloat16)
        with self.assertRaisesRegex(vaeconv.VaeconvError, r"^vaeconv: causal_conv3d_cached: cache must be bfloat16"):
            torch.ops.vaeconv.causal_conv3d_cached(xc, torch.zeros(1, 16, 2, 4, 4), wc)


class NormParamCopies(unittest.TestCase):
    def test_fp32_copy_is_kept_per_version(self):
        # The fp32 copy of a bf16 gamma is made once per parameter version; an inference tensor
        # (no version counter) keeps its copy too, with one finalizer, not one per call.
        with torch.inference_mode():
            g = torch.ones(16, dtype=torch.bfloat16)
            a = ops._param_f32(g)
            self.assertIs(ops._param_f32(g), a)
        p = torch.nn.Parameter(torch.ones(16, dtype=torch.bfloat16), requires_grad=False)
        a = ops._param_f32(p)
        self.assertIs(ops._param_f32(p), a)
        with torch.no_grad():
            p.mul_(2)
        b = ops._param_f32(p)
        self.assertIsNot(b, a)
        self.assertEqual(b.tolist(), [2.0] * 16)


class TemporalFakes(unittest.TestCase):
    def test_fake_shapes_match_the_reference(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        cases = [(1, 8, 1, 0, 16), (2, 16, 3, 2, 32), (1, 8, 4, 1, 16), (2, 16, 4, 1, 8), (1, 16, 5, 1, 16)]
        for n, c, t, frames, cout in cases:
            stride = 1 if cout == 2 * c else 2
            for device in ("cpu", "cuda"):
                with self.subTest(n=n, c=c, t=t, frames=frames, stride=stride, device=device):
                    meta = torch.empty((n, c, t, 5, 3), device="meta")
                    mc = torch.empty((n, c, frames, 5, 3), device="meta") if frames else None
                    mw = torch.empty((cout, c, 3, 1, 1), device="meta")
                    want = tuple(ops.reference_temporal(meta, mc, mw, None, stride).shape)
                    with FakeTensorMode():
                        x = torch.empty((n, c, t, 5, 3), dtype=torch.bfloat16, device=device)
                        cache = torch.empty((n, c, frames, 5, 3), dtype=torch.bfloat16, device=device) if frames else None
                        w = torch.empty((cout, c, 3, 1, 1), device=device)
                        y = torch.ops.vaeconv.temporal_conv3d(x, cache, w, None, None, stride, False)
                        self.assertEqual(tuple(y.shape), want)
                        self.assertTrue(y.permute(0, 2, 3, 4, 1).is_contiguous(), y.stride())


class Compile(unittest.TestCase):
    def test_fullgraph_traces_the_resample_time_conv(self):
        for mode, chunk, cache_frames in (("upsample3d", 2, 2), ("downsample3d", 4, 1)):
            with self.subTest(mode=mode):
                torch._dynamo.reset()
                torch.manual_seed(6)
                m = standin_vae.WanResample(16, mode).to(torch.bfloat16).eval()
                vt.patch(m, cpu_reference=True)
                x = torch.randn((1, 16, chunk, 6, 4), dtype=torch.bfloat16)
                c = torch.randn((1, 16, cache_frames, 6 // (2 if mode == "downsample3d" else 1),
                                 4 // (2 if mode == "downsample3d" else 1)), dtype=torch.bfloat16)
                graphs = []

                def step(x, c):
                    cache = [c]
                    y = m(x, cache, [0])
                    return y, cache[0]

                with torch.no_grad():
                    eager = step(x, c)
                    compiled = torch.compile(step, fullgraph=True, backend=recording_backend(graphs))(x, c)
                for a, b in zip(compiled, eager):
                    torch.testing.assert_close(a.float(), b.float(), rtol=0, atol=0)
                text = "\n".join(g.code for g in graphs)
                self.assertIn("vaeconv.temporal_conv3d", text)
                vt.unpatch(m)

    def test_fullgraph_decoder_chunks(self):
        # The whole decoder on one latent frame per call, as diffusers' decode loop runs it: the
        # feat_cache list (None, "Rep", tensors) is guarded per chunk state, the cached causal and
        # temporal ops traced through their fakes; eager and compiled give the same bits and caches.
        torch._dynamo.reset()
        m = vae()
        vt.patch(m, cpu_reference=True)
        z = latents(3)
        graphs = []

        def chunk(zc, cache):
            return m.run(m.dec, zc, cache, [0])

        compiled = torch.compile(chunk, fullgraph=True, backend=recording_backend(graphs))
        eager_cache, compiled_cache = [None] * 32, [None] * 32
        with torch.no_grad():
            for i in range(z.shape[2]):
                ye = chunk(z[:, :, i:i + 1], eager_cache)
                yc = compiled(z[:, :, i:i + 1], compiled_cache)
                self.assertTrue(torch.equal(ye, yc), f"chunk {i}")
                assert_caches(self, compiled_cache, eager_cache, True, f"chunk {i}")
        vt.unpatch(m)
        text = "\n".join(g.code for g in graphs)
        self.assertEqual(text.count("vaeconv.temporal_conv3d"), 4)
        self.assertEqual(text.count("vaeconv.causal_conv3d_cached"), 16)


if __name__ == "__main__":
    unittest.main()
