"""End to end: diffusers' Qwen-Image VAE (AutoencoderKLQwenImage, default config, random weights,
seed 0, bf16) decode and encode at 1024^2 and 1328^2, eager PyTorch against vaeconv.torch.patch,
in one process on one GPU.

Per size and mode: the median of N timed calls (CUDA events, after a warm-up that also packs the
weights), the peak allocated memory, the GPU time of one profiled call split by kernel class
(conv, layout copies, normalisation/activation, other), and quality against an fp32 decode /
encode of the same weights (PSNR of the [-1, 1] image; relative L2 of the latents).

    PYTHONPATH=build/cuda/python:<diffusers>/src python3 bench/vae_e2e.py --out DIR
    python3 bench/vae_e2e.py --svg DIR/vae_e2e.json DIR/vae_e2e.svg   # the plot again, no GPU

Writes DIR/vae_e2e.json and DIR/vae_e2e.svg (no plotting library needed)."""
import argparse
import json
import math
import os
import sys
import time

CLASSES = ("conv", "layout", "norm_act", "other")
CLASS_NAMES = {"conv": "conv", "layout": "layout copies (pad, cat, upsample, NCHW<->NHWC)",
               "norm_act": "normalisation / activation / residual add", "other": "other (attention, ...)"}


def kernel_class(name):
    n = name.lower()
    if "nchwtonhwc" in n or "nhwctonchw" in n:
        return "layout"
    if "rms_norm_kernel" in n:  # vaeconv's RMS norm (+ SiLU), before the vaeconv test below
        return "norm_act"
    if "vaeconv" in n:  # before the substrings below: its template arguments name upsample etc.
        return "conv"
    if any(s in n for s in ("fmha", "flash", "attention", "softmax", "sdpa")):
        return "other"
    if any(s in n for s in ("nchwtonhwc", "nhwctonchw", "transpose", "copy", "pad", "cat", "upsample",
                            "im2col", "col2im", "permute")):
        return "layout"
    if any(s in n for s in ("vaeconv", "conv", "implicit", "xmma", "cutlass", "gemm", "sm90_", "cudnn",
                            "wgrad", "dgrad", "fprop", "nvjet", "halo", "tap_re", "tap_row")):
        return "conv"
    if any(s in n for s in ("norm", "reduce", "silu", "sigmoid", "mul", "add", "div", "sqrt", "clamp",
                            "elementwise", "vectorized", "sum", "mean", "pow", "rsqrt")):
        return "norm_act"
    return "other"


def profile_split(fn):
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    split = {c: 0.0 for c in CLASSES}
    top = []
    for ev in prof.key_averages():
        if ev.device_type is None or not str(ev.device_type).endswith("CUDA"):
            continue
        t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0.0)
        if t <= 0:
            continue
        c = kernel_class(ev.key)
        split[c] += t / 1e3
        top.append((t / 1e3, ev.count, c, ev.key[:120]))
    top.sort(reverse=True)
    return {k: round(v, 3) for k, v in split.items()}, [
        {"ms": round(t, 3), "count": n, "class": c, "kernel": k} for t, n, c, k in top[:15]]


def median_ms(fn, n):
    import torch
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2], ts


def peak_gib(fn):
    import torch
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2**30, (torch.cuda.max_memory_allocated() - base) / 2**30


def psnr(a, b):
    mse = (a.float() - b.float()).pow(2).mean().item()
    return float("inf") if mse == 0 else 10 * math.log10(4.0 / mse)


def rel_l2(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def run(args):
    import torch
    from diffusers import AutoencoderKLQwenImage
    import vaeconv
    import vaeconv.torch as vt

    torch.backends.cudnn.benchmark = True
    dev = "cuda"
    torch.manual_seed(0)
    vae = AutoencoderKLQwenImage().to(dev).eval()
    state32 = {k: v.detach().clone() for k, v in vae.state_dict().items()}
    vae = vae.to(torch.bfloat16)
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "vaeconv_library": vaeconv.library_path(), "fp8": args.fp8, "iters": args.iters, "sizes": {}}
    for S in args.sizes:
        g = torch.Generator(device=dev).manual_seed(S)
        x = (torch.rand(1, 3, 1, S, S, device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
        z = torch.randn(1, 16, 1, S // 8, S // 8, device=dev, generator=g).to(torch.bfloat16)
        row = {}
        outs = {}
        for mode in ("eager", "patched"):
            if mode == "patched":
                rep = vt.patch(vae, fp8=args.fp8)
                row["patched_modules"] = len(rep.patched)
            with torch.no_grad():
                dec = lambda: vae.decode(z).sample  # noqa: E731
                enc = lambda: vae.encode(x).latent_dist.mode()  # noqa: E731
                r = {}
                r["decode_ms"], r["decode_all_ms"] = median_ms(dec, args.iters)
                r["encode_ms"], r["encode_all_ms"] = median_ms(enc, args.iters)
                r["decode_peak_gib"], r["decode_peak_above_weights_gib"] = peak_gib(dec)
                r["encode_peak_gib"], r["encode_peak_above_weights_gib"] = peak_gib(enc)
                r["decode_gpu_ms"], r["decode_top"] = profile_split(dec)
                r["encode_gpu_ms"], r["encode_top"] = profile_split(enc)
                outs[mode] = (dec().float(), enc().float())
            if mode == "patched":
                vt.unpatch(vae)
            row[mode] = r
            print(f"{S}^2 {mode}: decode {r['decode_ms']:.2f} ms (peak {r['decode_peak_gib']:.2f} GiB), "
                  f"encode {r['encode_ms']:.2f} ms (peak {r['encode_peak_gib']:.2f} GiB); decode GPU split "
                  f"{r['decode_gpu_ms']}", flush=True)
        # Quality against fp32 (the same weights, fp32 modules, fp32 inputs).
        vae32 = AutoencoderKLQwenImage().to(dev).eval()
        vae32.load_state_dict(state32)
        with torch.no_grad():
            dec32 = vae32.decode(z.float()).sample.float()
            enc32 = vae32.encode(x.float()).latent_dist.mode().float()
        del vae32
        torch.cuda.empty_cache()
        row["quality"] = {
            "decode_psnr_db_eager_bf16_vs_fp32": psnr(outs["eager"][0], dec32),
            "decode_psnr_db_patched_bf16_vs_fp32": psnr(outs["patched"][0], dec32),
            "decode_psnr_db_patched_vs_eager_bf16": psnr(outs["patched"][0], outs["eager"][0]),
            "encode_rel_l2_eager_bf16_vs_fp32": rel_l2(outs["eager"][1], enc32),
            "encode_rel_l2_patched_bf16_vs_fp32": rel_l2(outs["patched"][1], enc32),
        }
        e, p = row["eager"], row["patched"]
        row["ratios"] = {"decode": p["decode_ms"] / e["decode_ms"], "encode": p["encode_ms"] / e["encode_ms"],
                         "decode_peak": p["decode_peak_gib"] / e["decode_peak_gib"],
                         "encode_peak": p["encode_peak_gib"] / e["encode_peak_gib"]}
        print(f"{S}^2: patched/eager decode {row['ratios']['decode']:.3f}, encode {row['ratios']['encode']:.3f}; "
              f"quality {row['quality']}", flush=True)
        res["sizes"][str(S)] = row
        del outs, dec32, enc32
        torch.cuda.empty_cache()
    q = res["sizes"].get("1024")
    if q:
        res["targets_1024"] = {
            "decode_ratio_le_0.45": q["ratios"]["decode"] <= 0.45,
            "encode_ratio_le_0.5": q["ratios"]["encode"] <= 0.5,
            "peak_not_above_eager": q["ratios"]["decode_peak"] <= 1.0 and q["ratios"]["encode_peak"] <= 1.0,
            "decode_psnr_within_0.5_db": q["quality"]["decode_psnr_db_patched_bf16_vs_fp32"]
            >= q["quality"]["decode_psnr_db_eager_bf16_vs_fp32"] - 0.5,
            "encode_rel_l2_within_0.5_db": q["quality"]["encode_rel_l2_patched_bf16_vs_fp32"]
            <= q["quality"]["encode_rel_l2_eager_bf16_vs_fp32"] * 10 ** (0.5 / 20),
        }
    return res


COLORS = {"conv": "#4e79a7", "layout": "#f28e2b", "norm_act": "#59a14f", "other": "#bab0ac"}


def write_svg(res, path):
    """Stacked bars: the profiled GPU time of each (size, op, mode) split by kernel class, with
    the timed wall (median) as a tick."""
    bars = []
    for S, row in res["sizes"].items():
        for op in ("decode", "encode"):
            for mode in ("eager", "patched"):
                r = row[mode]
                bars.append((f"{S}² {op} {mode}", r[f"{op}_gpu_ms"], r[f"{op}_ms"]))
    top = max(max(sum(s.values()), t) for _, s, t in bars) * 1.1
    W, H, left, bar_h, gap = 900, 60 + len(bars) * 34, 190, 22, 12
    sx = (W - left - 30) / top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + 40}" font-family="sans-serif" '
           f'font-size="12">', f'<text x="10" y="20" font-size="14">Qwen-Image VAE on {res["device"]}: '
           f'GPU time by kernel class (bars) and median wall time (black tick), ms</text>']
    y = 40
    for label, split, t in bars:
        out.append(f'<text x="10" y="{y + 15}">{label}</text>')
        x = left
        for c in CLASSES:
            w = split.get(c, 0.0) * sx
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{COLORS[c]}"/>')
            x += w
        tx = left + t * sx
        out.append(f'<line x1="{tx:.1f}" y1="{y - 3}" x2="{tx:.1f}" y2="{y + bar_h + 3}" stroke="black" '
                   f'stroke-width="2"/><text x="{tx + 4:.1f}" y="{y + 15}">{t:.1f}</text>')
        y += bar_h + gap
    x = 10
    for c in CLASSES:
        out.append(f'<rect x="{x}" y="{y + 5}" width="12" height="12" fill="{COLORS[c]}"/>'
                   f'<text x="{x + 16}" y="{y + 15}">{CLASS_NAMES[c]}</text>')
        x += 16 + 7 * len(CLASS_NAMES[c]) + 20
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 1328])
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--fp8", action="store_true", help="patched convs with e4m3fn operands")
    ap.add_argument("--svg", nargs=2, metavar=("JSON", "SVG"), help="only draw the plot of a result")
    args = ap.parse_args()
    if args.svg:
        write_svg(json.load(open(args.svg[0])), args.svg[1])
        return 0
    t0 = time.time()
    res = run(args)
    res["wall_s"] = round(time.time() - t0, 1)
    os.makedirs(args.out, exist_ok=True)
    name = "vae_e2e_fp8" if args.fp8 else "vae_e2e"
    with open(os.path.join(args.out, name + ".json"), "w") as f:
        json.dump(res, f, indent=1)
    write_svg(res, os.path.join(args.out, name + ".svg"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
