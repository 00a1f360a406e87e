#!/usr/bin/env python3
"""PyTorch's cuDNN on the bench's seed shapes, merged into vaeconv_bench's JSON as a third baseline.

    bench/torch_conv_crosscheck.py --bench build/cuda/bench/vaeconv_bench [--merge BENCH.json]
                                   [--out MERGED.json] [--iters N]

Shapes: `vaeconv_bench --list` (the library's table, vaeconv/conv/vae_shapes.hpp), or the rows of
--merge when --bench is not given. Per shape, what a PyTorch user runs: F.conv2d on channels_last
bf16 tensors with a bf16 bias, torch.backends.cudnn.benchmark = True (PyTorch tunes cuDNN's
engine configurations on the first call of each shape), TF32 off:
  torch_us       what an engine runs: causal conv2d(pad 1); downsample F.pad(0,1,0,1) + conv2d
                 (stride 2); upsample F.interpolate(x2, nearest-exact) + conv2d(pad 1) -- the
                 bench's "pipeline" (engine) figure;
  torch_conv_us  the conv + bias alone on a pre-padded / pre-upsampled input (the bench's "conv").
A row with t > 1 runs the conv3d form (causal pad of 2 frames in front, channels_last_3d).
--video takes the video rows (`vaeconv_bench --video --list`): a row with cache_frames runs what
diffusers' WanCausalConv3d runs with a cache, F.conv3d(F.pad(torch.cat([cache, x], 2),
(1, 1, 1, 1, 2 - cache_frames, 0)), w, b) on channels_last_3d tensors (torch_us), and the conv3d
alone on a ready padded input (torch_conv_us); merge its JSON (vaeconv_bench --video --json).
Timing as the bench: 3 warm-up runs, then the median of --iters CUDA-event-timed runs, inputs
rotated over >= 256 MB of copies. Before a shape is timed its output is compared with an fp32
F.conv2d/F.conv3d of the same bf16 values (rel L2 <= 1e-2): a wrong result reports no time.

With --merge, each bench row gains torch_us / torch_conv_us, and vendor_best_us (the engine
figure) / vendor_best_conv_us / vendor_best become the minimum over cuDNN's legacy API, its graph
API and PyTorch; the ratios and the weighted totals are recomputed against that minimum (the
bench's own pre-merge minimum is kept as bench_vendor_best_us). Writes --out (default: the merge
file with .torch.json) and prints the per-shape table.
"""
import argparse
import json
import os
import subprocess
import sys

SETS = (("set_1024_58_calls", 1024), ("hot_1328_28_calls", 1328))
COPY_BYTES = 256 << 20
REL_L2_TOL = 1e-2
DEVICE = "cuda"


def shapes_from_bench(binary, video=False):
    env = dict(os.environ)
    kernels = os.path.join(os.path.dirname(os.path.abspath(binary)), "..", "kernels")
    env["LD_LIBRARY_PATH"] = kernels + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    out = subprocess.run([binary] + (["--video"] if video else []) + ["--list"], check=True, capture_output=True,
                         text=True, env=env).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def median_us(fn, iters, torch):
    for _ in range(3):
        fn(0)
    torch.cuda.synchronize()
    ts = []
    for i in range(iters):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn(i)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def gemm_ceiling(torch, n=8192, iters=20):
    """The card's dense matrix-product ceiling in TFLOP/s, measured as the bench's conv times are:
    an n x n x n product (bf16 torch.matmul; e4m3 torch._scaled_mm with unit scales, bf16 out).
    The speed no conv of the same FLOPs can beat on this card: issue 28's targets are checked
    against it (docs/performance.md)."""
    a = torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)
    flop = 2.0 * n * n * n
    res = dict(n=n, bf16=flop / median_us(lambda i: torch.matmul(a, b), iters, torch) / 1e6)
    try:
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        one = torch.ones((), device=DEVICE, dtype=torch.float32)
        res["fp8"] = flop / median_us(
            lambda i: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
            iters, torch) / 1e6
    except (RuntimeError, AttributeError, TypeError) as ex:
        res["fp8_error"] = str(ex)
    return res


def run_shape(sh, iters, torch, F):
    kind, ci, co, h, w, t = sh["kind"], sh["cin"], sh["cout"], sh["h"], sh["w"], sh.get("t", 1)
    cf = sh.get("cache_frames", 0)
    dev, bf16 = DEVICE, torch.bfloat16
    g = torch.Generator(device=dev).manual_seed(42)
    three_d = t > 1 or cf > 0
    if three_d and kind != "causal3x3x3":
        raise ValueError("t > 1 is run only for the causal conv (no %s form in the bench)" % kind)
    fmt = torch.channels_last_3d if three_d else torch.channels_last
    xshape = (1, ci, t, h, w) if three_d else (1, ci, h, w)
    oh, ow = sh["out_h"], sh["out_w"]
    x_bytes = 2 * ci * (t + cf) * h * w
    y_bytes = 2 * co * t * oh * ow
    copies = max(1, min(16, COPY_BYTES // (x_bytes + y_bytes)))

    def rand(shape):
        return (torch.rand(shape, device=dev, generator=g) * 2 - 1).to(bf16).contiguous(memory_format=fmt)
    if cf:  # the video rows: xs[i] is the index of the pair (caches[i], cached_x[i])
        caches = [rand((1, ci, cf, h, w)) for _ in range(copies)]
        cached_x = [rand(xshape) for _ in range(copies)]
        xs = list(range(copies))
    else:
        xs = [rand(xshape) for _ in range(copies)]
    wshape = (co, ci, 3, 3, 3) if three_d else (co, ci, 3, 3)
    wt = ((torch.rand(wshape, device=dev, generator=g) * 2 - 1) * (1.7 / (ci * (27 if three_d else 9)) ** 0.5))
    wt = wt.to(bf16).contiguous(memory_format=fmt)
    b = ((torch.rand(co, device=dev, generator=g) - 0.5)).to(bf16)

    if cf:
        def prep(i):  # diffusers' WanCausalConv3d with a cache: cat, then the causal + spatial pad
            cx = torch.cat([caches[i], cached_x[i]], 2)
            return F.pad(cx, (1, 1, 1, 1, 2 - cf, 0))

        def conv(x, wt_, b_):
            return F.conv3d(x, wt_, b_)
    elif three_d:
        def prep(x):
            return F.pad(x, (1, 1, 1, 1, 2, 0))

        def conv(x, wt_, b_):
            return F.conv3d(x, wt_, b_)
    elif kind == "causal3x3x3":
        def prep(x):
            return x

        def conv(x, wt_, b_):
            return F.conv2d(x, wt_, b_, stride=1, padding=1)
    elif kind == "downsample":
        def prep(x):
            return F.pad(x, (0, 1, 0, 1))

        def conv(x, wt_, b_):
            return F.conv2d(x, wt_, b_, stride=2, padding=0)
    elif kind == "upsample":
        def prep(x):
            return F.interpolate(x, scale_factor=2.0, mode="nearest-exact")

        def conv(x, wt_, b_):
            return F.conv2d(x, wt_, b_, stride=1, padding=1)
    else:
        raise ValueError("unknown kind %s" % kind)

    # Correctness first: the bf16 pipeline against fp32 arithmetic on the same bf16 values.
    y = conv(prep(xs[0]), wt, b)
    ref = conv(prep(xs[0]).float(), wt.float(), b.float())
    if tuple(y.shape[-2:]) != (oh, ow) or (three_d and y.shape[2] != t):
        raise RuntimeError("output %s, the bench's %dx%d (T %d)" % (tuple(y.shape), oh, ow, t))
    yf = y.float()
    if not torch.isfinite(yf).all():
        raise RuntimeError("non-finite output")
    rel = float((yf - ref).norm() / ref.norm().clamp_min(1e-30))
    if rel > REL_L2_TOL:
        raise RuntimeError("output differs from the fp32 conv: rel L2 %.3g" % rel)
    del y, yf, ref

    pipe_us = median_us(lambda i: conv(prep(xs[i % copies]), wt, b), iters, torch)
    if kind == "causal3x3x3" and not three_d and not cf:
        conv_us = pipe_us  # nothing to prepare: the same call
    else:
        xp = [prep(x).contiguous(memory_format=fmt) for x in xs]
        conv_us = median_us(lambda i: conv(xp[i % copies], wt, b), iters, torch)
        del xp
    return dict(torch_us=pipe_us, torch_conv_us=conv_us, torch_rel_l2=rel)


def merge(data, results, meta):
    for r in data["rows"]:
        t = results.get(r["id"])
        bench_best = r.get("vendor_best_us", r["vendor"]["pipeline_us"] if r["vendor"]["ran"] else 0.0)
        bench_conv = r.get("vendor_best_conv_us", r["vendor"]["conv_us"] if r["vendor"]["ran"] else 0.0)
        r["bench_vendor_best_us"] = bench_best
        r["torch_us"] = t["torch_us"] if t and "torch_us" in t else 0.0
        r["torch_conv_us"] = t["torch_conv_us"] if t and "torch_conv_us" in t else 0.0
        r["torch_error"] = t.get("error", "") if t else "not run"
        cands = [(r.get("legacy_us", 0.0), "legacy"), (r.get("graph_us", 0.0), "graph"), (r["torch_us"], "torch")]
        if not r.get("legacy_us") and not r.get("graph_us") and bench_best:
            cands[0] = (bench_best, r.get("vendor_best") or "bench")  # a bench without the path fields
        cands = [c for c in cands if c[0] > 0]
        best = min(cands) if cands else (0.0, "")
        r["vendor_best_us"], r["vendor_best"] = best
        convs = [c for c in (bench_conv, r["torch_conv_us"]) if c > 0]
        r["vendor_best_conv_us"] = min(convs) if convs else 0.0
        ok = r["vaeconv"]["ok"]
        r["ratio_vs_pipeline"] = r["vaeconv"]["us"] / r["vendor_best_us"] if ok and r["vendor_best_us"] else 0.0
        r["ratio_vs_conv"] = r["vaeconv"]["us"] / r["vendor_best_conv_us"] if ok and r["vendor_best_conv_us"] else 0.0
    for key, res in SETS:
        tot = data.get("totals", {}).get(key)
        if tot is None:
            continue
        rows = [r for r in data["rows"] if r["resolution"] == res]
        v = sum(r["calls"] * r["vaeconv"]["us"] for r in rows if r["vaeconv"]["ok"])
        pipe = sum(r["calls"] * r["vendor_best_us"] for r in rows)
        conv = sum(r["calls"] * r["vendor_best_conv_us"] for r in rows)
        tot["torch_pipeline_ms"] = sum(r["calls"] * r["torch_us"] for r in rows) / 1e3
        tot["torch_complete"] = all(r["torch_us"] > 0 for r in rows)
        tot["bench_vendor_pipeline_ms"] = tot.get("vendor_pipeline_ms", 0.0)
        tot["vendor_pipeline_ms"] = pipe / 1e3
        tot["vendor_conv_ms"] = conv / 1e3
        tot["ratio_vs_pipeline"] = v / pipe if pipe else 0.0
        tot["ratio_vs_conv"] = v / conv if conv else 0.0
        tot["complete"] = bool(tot.get("complete")) and all(r["vendor_best_us"] > 0 for r in rows)
    data["torch"] = meta
    data["vendor_baseline"] = ("per shape the fastest of cuDNN's legacy API, cuDNN's graph API (autotuned) "
                               "and PyTorch F.conv2d (cudnn.benchmark)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", help="vaeconv_bench binary (its --list gives the shapes)")
    ap.add_argument("--merge", help="vaeconv_bench --json output to add PyTorch's times to")
    ap.add_argument("--out", help="merged JSON (default: MERGE with .torch.json; without --merge: torch.json)")
    ap.add_argument("--iters", type=int, default=20, help="timed runs per shape (default %(default)s)")
    ap.add_argument("--shape", help="one shape id")
    ap.add_argument("--video", action="store_true", help="the video rows (vaeconv_bench --video --list)")
    a = ap.parse_args(argv)
    if not a.bench and not a.merge:
        ap.error("give --bench (shapes from vaeconv_bench --list) and/or --merge (shapes from its JSON)")
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as ex:
        sys.exit("torch_conv_crosscheck: PyTorch is not importable here (%s)" % ex)
    if not torch.cuda.is_available():
        sys.exit("torch_conv_crosscheck: PyTorch sees no CUDA device")
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

    data = None
    if a.merge:
        with open(a.merge) as fh:
            data = json.load(fh)
    if a.bench:
        shapes = shapes_from_bench(a.bench, a.video)
    else:
        shapes = [dict(id=r["id"], kind=r["kind"], cin=r["cin"], cout=r["cout"], h=r["h"], w=r["w"], t=r.get("t", 1),
                       cache_frames=r.get("cache_frames", 0), out_h=r["out_h"], out_w=r["out_w"],
                       calls=r["calls"], resolution=r["resolution"])
                  for r in data["rows"]]
    if a.shape:
        shapes = [s for s in shapes if s["id"] == a.shape]
        if not shapes:
            sys.exit("no shape named %s" % a.shape)

    meta = dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                cudnn=torch.backends.cudnn.version(), iters=a.iters, benchmark=True, tf32=False,
                form="F.conv2d channels_last bf16, bf16 bias (F.conv3d channels_last_3d where t > 1)")
    print("PyTorch %s, cuDNN %s, %s; median of %d runs" % (meta["torch"], meta["cudnn"], meta["device"], a.iters))
    meta["gemm_tflops"] = gemm_ceiling(torch)
    print("dense product ceiling (%d^3): bf16 %.0f TFLOP/s, fp8 %s" % (
        meta["gemm_tflops"]["n"], meta["gemm_tflops"]["bf16"],
        "%.0f TFLOP/s" % meta["gemm_tflops"]["fp8"] if "fp8" in meta["gemm_tflops"]
        else "not run (%s)" % meta["gemm_tflops"].get("fp8_error")), flush=True)
    results, failed = {}, 0
    for sh in shapes:
        try:
            res = run_shape(sh, a.iters, torch, F)
        except (RuntimeError, ValueError) as ex:
            res = dict(error=str(ex))
            failed += 1
        torch.cuda.empty_cache()
        results[sh["id"]] = res
        if "error" in res:
            print("%-28s FAILED: %s" % (sh["id"], res["error"]), flush=True)
        else:
            print("%-28s %-11s %4d->%-4d %4dx%-4d engine %9.1f us  conv %9.1f us  (rel L2 vs fp32 %.1e)"
                  % (sh["id"], sh["kind"], sh["cin"], sh["cout"], sh["h"], sh["w"], res["torch_us"],
                     res["torch_conv_us"], res["torch_rel_l2"]), flush=True)

    if data is None:
        out = a.out or "torch.json"
        with open(out, "w") as fh:
            json.dump(dict(torch=meta, rows=[dict(id=k, **v) for k, v in results.items()]), fh, indent=1)
        print("wrote", out)
        return 1 if failed else 0

    merge(data, results, meta)
    print("\n%-28s %9s %9s %9s %9s %7s | %9s %6s" % ("id (engine us)", "legacy", "graph", "torch", "best", "which",
                                                    "vaeconv", "ratio"))
    for r in data["rows"]:
        print("%-28s %9.1f %9.1f %9.1f %9.1f %7s | %9.1f %6.2f"
              % (r["id"], r.get("legacy_us", 0.0), r.get("graph_us", 0.0), r["torch_us"], r["vendor_best_us"],
                 r["vendor_best"], r["vaeconv"]["us"], r["ratio_vs_pipeline"]))
    for key, _ in SETS:
        t = data.get("totals", {}).get(key)
        if t:
            print("%s: vaeconv %.2f ms; legacy %.2f, graph %.2f, torch %.2f ms; fastest per shape %.2f ms -> "
                  "%.3f x%s" % (key, t["vaeconv_ms"], t.get("legacy_pipeline_ms", 0.0), t.get("graph_pipeline_ms", 0.0),
                                t["torch_pipeline_ms"], t["vendor_pipeline_ms"], t["ratio_vs_pipeline"],
                                "" if t["complete"] and t["torch_complete"] else "  [INCOMPLETE]"))
    out = a.out or (os.path.splitext(a.merge)[0] + ".torch.json")
    with open(out, "w") as fh:
        json.dump(data, fh, indent=1)
    print("wrote", out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
