"""Video end to end (issue 27): diffusers' AutoencoderKLWan (Wan 2.1 default config, random weights,
seed 0) decoding 5 latent frames into 17 frames of 480x832 and encoding those 17 frames, chunk by
chunk as diffusers runs it (feat_cache), in one process on one GPU:

  - fp32 eager (the reference), bf16 eager, bf16 patched (vaeconv.torch.patch: every cached causal
    conv, time_conv and resample conv on vaeconv), optionally fp8 patched: median of N CUDA-event
    timings after a warm-up (which also packs the weights), peak allocated memory, the GPU time of
    one profiled call split by kernel class (bench/vae_e2e.py's classes), how many times each vaeconv
    op ran in one call, and quality against fp32: PSNR of the [-1, 1] video, and the latents'
    relative L2 error (and its SNR in dB);
  - the dominant chunked-decode conv shapes, 96->96 at 480x832 and 192->192 at 240x416 with
    T_in 6 -> T_out 4, 384->384 at 120x208 with T_in 4 -> T_out 2 (two cached frames in front of
    the chunk), and the upsample3d time_convs 384->768 at 60x104 / 120x208: the vaeconv op (cache
    read in place) against PyTorch's cuDNN conv3d on channels_last_3d tensors, once as the engine
    runs it (torch.cat + F.pad + F.conv3d, + upsample3d's reshape/stack for the time conv) and once
    the conv alone on a ready padded input; CUDA-event medians, TFLOP/s and the fraction of
    --peak-tflops.

    PYTHONPATH=build/cuda/python:<diffusers checkout>/src python3 bench/wan_video_e2e.py --out DIR
    (or --diffusers <diffusers checkout>/src instead of the PYTHONPATH entry)

Writes DIR/wan_video_e2e.json (the issue's targets evaluated under "targets")."""
import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vae_e2e import median_ms, peak_gib, profile_split, psnr, rel_l2  # noqa: E402

# The bf16 matrix ceiling the fractions are taken of: vaeconv_bench's default, the measured
# warp-level mma.sync bf16 peak (shared/anchors/README.md); wgmma reaches about 790 on the same card.
DEFAULT_PEAK_TFLOPS = 645.0
DEV = "cuda"

CONV_SHAPES = [  # (name, C, H, W, T_out, cached frames)
    ("96@480x832 T6->4", 96, 480, 832, 4, 2),
    ("192@240x416 T6->4", 192, 240, 416, 4, 2),
    ("384@120x208 T4->2", 384, 120, 208, 2, 2),
]
TIME_SHAPES = [  # upsample3d time_conv (C -> 2C, stride 1): (name, C, H, W, T, cached frames)
    ("time_conv 384->768@60x104 T1+2", 384, 60, 104, 1, 2),
    ("time_conv 384->768@120x208 T2+2", 384, 120, 208, 2, 2),
]


class OpCounter:
    """Counts the vaeconv ops of one call (a TorchDispatchMode; not used while timing)."""

    def __init__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        calls = self.calls = {}

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = str(func.name())
                if name.startswith("vaeconv::"):
                    calls[name] = calls.get(name, 0) + 1
                return func(*args, **(kwargs or {}))
        self.mode = Mode()


def snr_db(a, ref):
    e = rel_l2(a, ref)
    return float("inf") if e == 0 else -20 * math.log10(e)


def run_model(args, res):
    import torch
    from diffusers import AutoencoderKLWan
    import vaeconv.torch as vt

    dev = DEV
    torch.manual_seed(0)
    vae = AutoencoderKLWan().to(dev).eval()
    g = torch.Generator(device=dev).manual_seed(1)
    z = torch.randn(1, vae.config.z_dim, args.latent_frames, args.height // 8, args.width // 8,
                    device=dev, generator=g)
    frames = 1 + 4 * (args.latent_frames - 1)
    x = torch.rand(1, 3, frames, args.height, args.width, device=dev, generator=g) * 2 - 1
    out = {"config": "AutoencoderKLWan() (Wan 2.1 defaults), random weights, seed 0",
           "latent": list(z.shape), "video": list(x.shape), "modes": {}}
    with torch.no_grad():
        dec32 = vae.decode(z).sample.float()
        enc32 = vae.encode(x).latent_dist.mode().float()
        t = {}
        t["decode_ms"], t["decode_all_ms"] = median_ms(lambda: vae.decode(z).sample, args.iters)
        t["encode_ms"], t["encode_all_ms"] = median_ms(lambda: vae.encode(x).latent_dist.mode(), args.iters)
        out["modes"]["fp32_eager"] = t
        print(f"fp32 eager: decode {t['decode_ms']:.1f} ms, encode {t['encode_ms']:.1f} ms", flush=True)
    vae = vae.to(torch.bfloat16)
    zb, xb = z.bfloat16(), x.bfloat16()
    modes = [("bf16_eager", None), ("bf16_patched", dict(fp8=False))]
    if args.fp8:
        modes.append(("fp8_patched", dict(fp8=True)))
    outs = {}
    for mode, options in modes:
        if options is not None:
            report = vt.patch(vae, **options)
        with torch.no_grad():
            dec = lambda: vae.decode(zb).sample  # noqa: E731
            enc = lambda: vae.encode(xb).latent_dist.mode()  # noqa: E731
            r = {}
            if options is not None:
                r["patched"] = str(report)
                r["kept"] = [f"{n}: {why}" for n, why in report.skipped]
                counter = OpCounter()
                with counter.mode:
                    dec()
                r["decode_op_calls"] = dict(counter.calls)
                counter = OpCounter()
                with counter.mode:
                    enc()
                r["encode_op_calls"] = dict(counter.calls)
            r["decode_ms"], r["decode_all_ms"] = median_ms(dec, args.iters)
            r["encode_ms"], r["encode_all_ms"] = median_ms(enc, args.iters)
            r["decode_peak_gib"], r["decode_peak_above_weights_gib"] = peak_gib(dec)
            r["encode_peak_gib"], r["encode_peak_above_weights_gib"] = peak_gib(enc)
            r["decode_gpu_ms"], r["decode_top"] = profile_split(dec)
            r["encode_gpu_ms"], r["encode_top"] = profile_split(enc)
            d, e = dec().float(), enc().float()
            r["decode_psnr_db_vs_fp32"] = psnr(d, dec32)
            r["encode_rel_l2_vs_fp32"] = rel_l2(e, enc32)
            r["encode_snr_db_vs_fp32"] = snr_db(e, enc32)
            outs[mode] = (d, e)
        if options is not None:
            vt.unpatch(vae)
        out["modes"][mode] = r
        print(f"{mode}: decode {r['decode_ms']:.1f} ms (peak {r['decode_peak_gib']:.2f} GiB, "
              f"PSNR vs fp32 {r['decode_psnr_db_vs_fp32']:.2f} dB), encode {r['encode_ms']:.1f} ms "
              f"(peak {r['encode_peak_gib']:.2f} GiB, latents rel L2 vs fp32 {r['encode_rel_l2_vs_fp32']:.5f}); "
              f"decode GPU split {r['decode_gpu_ms']}", flush=True)
        torch.cuda.empty_cache()
    e, p = out["modes"]["bf16_eager"], out["modes"]["bf16_patched"]
    out["patched_vs_eager_bf16"] = {
        "decode_ratio": p["decode_ms"] / e["decode_ms"], "encode_ratio": p["encode_ms"] / e["encode_ms"],
        "decode_peak_ratio": p["decode_peak_gib"] / e["decode_peak_gib"],
        "encode_peak_ratio": p["encode_peak_gib"] / e["encode_peak_gib"],
        "decode_psnr_db_patched_vs_eager": psnr(outs["bf16_patched"][0], outs["bf16_eager"][0]),
    }
    res["wan"] = out
    res["targets"]["decode_ratio_le_0.5"] = out["patched_vs_eager_bf16"]["decode_ratio"] <= 0.5
    res["targets"]["decode_psnr_within_0.5_db_of_eager_bf16"] = (
        p["decode_psnr_db_vs_fp32"] >= e["decode_psnr_db_vs_fp32"] - 0.5)
    res["targets"]["encode_snr_within_0.5_db_of_eager_bf16"] = (
        p["encode_snr_db_vs_fp32"] >= e["encode_snr_db_vs_fp32"] - 0.5)
    res["targets"]["patched_ran_temporal_and_cached_ops"] = all(
        p[k].get("vaeconv::temporal_conv3d", 0) > 0 and p[k].get("vaeconv::causal_conv3d_cached", 0) > 0
        for k in ("decode_op_calls", "encode_op_calls"))
    del vae
    torch.cuda.empty_cache()


def run_convs(args, res):
    import torch
    import torch.nn.functional as F
    import vaeconv.ops as ops  # noqa: F401  (registers torch.ops.vaeconv)

    dev = DEV
    cl = torch.channels_last_3d
    rows = []

    def row_common(name, flop, fns, check):
        r = {"layer": name, "gflop": flop / 1e9}
        for key, fn in fns:
            r[key + "_ms"], _ = median_ms(fn, args.conv_iters)
        r["vaeconv_tflops"] = flop / r["vaeconv_ms"] / 1e9
        r["vaeconv_frac_peak"] = r["vaeconv_tflops"] / args.peak_tflops
        r["cudnn_conv_tflops"] = flop / r["cudnn_conv_ms"] / 1e9
        r["ratio_vs_engine"] = r["vaeconv_ms"] / r["cudnn_engine_ms"]
        r["ratio_vs_conv_alone"] = r["vaeconv_ms"] / r["cudnn_conv_ms"]
        r["rel_l2_vs_cudnn"] = check()
        rows.append(r)
        print(f"{name}: vaeconv {r['vaeconv_ms']:.3f} ms ({r['vaeconv_tflops']:.0f} TFLOP/s, "
              f"{100 * r['vaeconv_frac_peak']:.0f} % of {args.peak_tflops:.0f}), cuDNN cat+pad+conv3d "
              f"{r['cudnn_engine_ms']:.3f} ms, conv3d alone {r['cudnn_conv_ms']:.3f} ms; ratio "
              f"{r['ratio_vs_engine']:.3f} / {r['ratio_vs_conv_alone']:.3f}; rel L2 {r['rel_l2_vs_cudnn']:.2e}",
              flush=True)
        return r

    with torch.no_grad():
        for name, c, h, w, t, frames in CONV_SHAPES:
            g = torch.Generator(device=dev).manual_seed(c)
            x = torch.randn(1, c, t, h, w, device=dev, generator=g).to(torch.bfloat16).contiguous(memory_format=cl)
            cache = torch.randn(1, c, frames, h, w, device=dev, generator=g).to(torch.bfloat16).contiguous(memory_format=cl)
            wt = (torch.randn(c, c, 3, 3, 3, device=dev, generator=g) / math.sqrt(27 * c)).to(torch.bfloat16)
            wt = wt.contiguous(memory_format=cl)
            b = (torch.randn(c, device=dev, generator=g) * 0.1).to(torch.bfloat16)
            pad = (1, 1, 1, 1, 2 - frames, 0)

            def engine():  # what diffusers' WanCausalConv3d runs with a cache
                return F.conv3d(F.pad(torch.cat([cache, x], 2), pad), wt, b)
            xp = F.pad(torch.cat([cache, x], 2), pad).contiguous(memory_format=cl)

            def conv():
                return F.conv3d(xp, wt, b)

            def vc():
                return torch.ops.vaeconv.causal_conv3d_cached(x, cache, wt, b)
            r = row_common(name, 2 * t * h * w * c * c * 27, [("vaeconv", vc), ("cudnn_engine", engine),
                                                              ("cudnn_conv", conv)],
                           lambda: rel_l2(vc(), conv()))
            r["engine_padded_input_channels_last"] = F.pad(torch.cat([cache, x], 2), pad).is_contiguous(memory_format=cl)
            del x, cache, xp
            torch.cuda.empty_cache()
        for name, c, h, w, t, frames in TIME_SHAPES:
            g = torch.Generator(device=dev).manual_seed(c + t)
            x = torch.randn(1, c, t, h, w, device=dev, generator=g).to(torch.bfloat16).contiguous(memory_format=cl)
            cache = torch.randn(1, c, frames, h, w, device=dev, generator=g).to(torch.bfloat16).contiguous(memory_format=cl)
            wt = (torch.randn(2 * c, c, 3, 1, 1, device=dev, generator=g) / math.sqrt(3 * c)).to(torch.bfloat16)
            wt = wt.contiguous(memory_format=cl)
            b = (torch.randn(2 * c, device=dev, generator=g) * 0.1).to(torch.bfloat16)
            pad = (0, 0, 0, 0, 2 - frames, 0)

            def interleave(y):  # upsample3d's reshape + stack of the two channel halves
                return torch.stack((y[:, :c], y[:, c:]), 3).reshape(1, c, 2 * t, h, w)

            def engine():
                return interleave(F.conv3d(F.pad(torch.cat([cache, x], 2), pad), wt, b))
            xp = F.pad(torch.cat([cache, x], 2), pad).contiguous(memory_format=cl)

            def conv():
                return F.conv3d(xp, wt, b)

            def vc():
                return torch.ops.vaeconv.temporal_conv3d(x, cache, wt, b, None, 1)
            row_common(name, 2 * t * h * w * 2 * c * c * 3, [("vaeconv", vc), ("cudnn_engine", engine),
                                                             ("cudnn_conv", conv)],
                       lambda: rel_l2(vc(), engine()))
            del x, cache, xp
            torch.cuda.empty_cache()
    res["convs"] = rows
    res["targets"]["conv_ratio_vs_engine_le_0.6"] = {r["layer"]: r["ratio_vs_engine"] <= 0.6
                                                     for r in rows if not r["layer"].startswith("time_conv")}
    res["targets"]["conv_frac_peak_ge_0.7"] = {r["layer"]: r["vaeconv_frac_peak"] >= 0.7
                                               for r in rows if not r["layer"].startswith("time_conv")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--diffusers", help="diffusers' src/ directory (else diffusers must be importable)")
    ap.add_argument("--latent-frames", type=int, default=5)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--width", type=int, default=832)
    ap.add_argument("--iters", type=int, default=3, help="timed calls per VAE decode / encode")
    ap.add_argument("--conv-iters", type=int, default=20, help="timed calls per conv shape")
    ap.add_argument("--peak-tflops", type=float, default=DEFAULT_PEAK_TFLOPS)
    ap.add_argument("--fp8", action="store_true", help="also time an fp8 patched decode / encode")
    ap.add_argument("--skip-model", action="store_true", help="only the conv shapes")
    ap.add_argument("--skip-convs", action="store_true", help="only the VAE")
    args = ap.parse_args()
    if args.diffusers:
        sys.path.insert(0, os.path.abspath(args.diffusers))
    import torch
    import vaeconv

    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False  # the fp32 reference stays fp32
    torch.backends.cuda.matmul.allow_tf32 = False
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(), "vaeconv_library": vaeconv.library_path(),
           "peak_tflops": args.peak_tflops, "iters": args.iters, "conv_iters": args.conv_iters, "targets": {}}
    t0 = time.time()
    if not args.skip_convs:
        run_convs(args, res)
    if not args.skip_model:
        try:
            import diffusers
            res["diffusers"] = getattr(diffusers, "__version__", "?")
        except Exception as e:
            print(f"diffusers is not importable ({e}): pass --diffusers <checkout>/src", file=sys.stderr)
            return 2
        run_model(args, res)
    res["wall_s"] = round(time.time() - t0, 1)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "wan_video_e2e.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(f"targets: {json.dumps(res['targets'])}\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
