#!/usr/bin/env python3
"""Bar chart of vaeconv_bench's JSON (vaeconv_bench --json FILE): per shape, vaeconv against the
vendor library (cuDNN), with the ratio vaeconv time / vendor time annotated.

    scripts/plot_bench.py BENCH.json [OUT.png]        (default OUT: docs/performance.png)
    scripts/plot_bench.py BENCH.json OUT.png --metric time|tflops

The vendor bar is the engine's cost: conv + bias (the fastest way the bench found) + the separate
pad/upsample kernel; for the causal rows there is nothing to add. The hatched bar behind it, on
down/up rows, is the vendor conv + bias on a pre-padded / pre-upsampled input.
The vendor is, per shape, the fastest of cuDNN's legacy API and its autotuned graph API (the
bench's vendor_best_us) and, in a JSON merged by bench/torch_conv_crosscheck.py, PyTorch's
F.conv2d with cudnn.benchmark (torch_us); the letter under each ratio says which (L, G, T).
A JSON from before those fields plots the bench's single vendor figure, as before.
Needs matplotlib.
"""
import argparse
import json
import os
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="vaeconv_bench --json output")
    ap.add_argument("png", nargs="?", default="docs/performance.png", help="output PNG (default %(default)s)")
    ap.add_argument("--metric", choices=["time", "tflops"], default="tflops",
                    help="bar height: TFLOP/s (default) or time in microseconds")
    a = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(a.json) as fh:
        data = json.load(fh)
    rows = [r for r in data["rows"] if r["vaeconv"]["ok"]]
    if not rows:
        sys.exit("no successful rows in %s" % a.json)
    vendor_on = data.get("vendor_enabled", False)
    vendor = data.get("vendor", "vendor").split(" (")[0]
    if data.get("torch"):
        vendor = "fastest of cuDNN legacy/graph API, PyTorch"
    elif any("vendor_best" in r for r in rows):
        vendor = "fastest of %s legacy/graph API" % vendor

    def val(us, gflop):
        if not us:
            return 0.0
        return us if a.metric == "time" else gflop * 1e3 / us  # GFLOP / us * 1e3 = TFLOP/s

    labels, v_vals, e_vals, c_vals, ratios, whos = [], [], [], [], [], []
    for r in rows:
        labels.append("%s\n%s %d→%d @%dx%d ×%d" % (r["id"], r["kind"], r["cin"], r["cout"], r["h"], r["w"],
                                                  r["calls"]))
        v_vals.append(val(r["vaeconv"]["us"], r["gflop"]))
        vd = r["vendor"]
        best_us = r.get("vendor_best_us", vd["pipeline_us"] if vd["ran"] else 0.0)
        best_conv_us = r.get("vendor_best_conv_us", vd["conv_us"] if vd["ran"] else 0.0)
        ran = vendor_on and best_us > 0
        e_vals.append(val(best_us, r["gflop"]) if ran else 0.0)
        c_vals.append(val(best_conv_us, r["gflop"]) if ran and r["kind"] not in ("causal", "causal3x3x3") else 0.0)
        ratios.append(r["ratio_vs_pipeline"] if ran else None)
        whos.append({"legacy": "L", "graph": "G", "torch": "T"}.get(r.get("vendor_best", ""), ""))

    n = len(rows)
    fig, ax = plt.subplots(figsize=(max(12, 0.85 * n + 4), 7.5))
    xs = list(range(n))
    wd = 0.38
    ax.bar([x - wd / 2 for x in xs], v_vals, wd, label="vaeconv (pad/upsample, bias folded in)", color="#1f77b4")
    if vendor_on:
        ax.bar([x + wd / 2 for x in xs], c_vals, wd, label="%s conv + bias on a pre-padded/upsampled input" % vendor,
               color="none", edgecolor="#ff7f0e", hatch="//", linewidth=0.8)
        ax.bar([x + wd / 2 for x in xs], e_vals, wd, label="%s conv + bias + separate pad/upsample" % vendor,
               color="#ff7f0e", alpha=0.85)
    top = max(v_vals + e_vals + c_vals + [1e-9])
    for x, v, e, rt, who in zip(xs, v_vals, e_vals, ratios, whos):
        if rt is None:
            continue
        ax.annotate("%.2f×%s" % (rt, "\n" + who if who else ""), (x, max(v, e) + 0.02 * top), ha="center",
                    va="bottom", fontsize=8, color="green" if rt < 1 else "red", fontweight="bold")
    if a.metric == "tflops":
        peak = data.get("peak_tflops")
        if peak:
            ax.axhline(peak, color="gray", linestyle="--", linewidth=0.8)
            ax.text(n - 0.5, peak, "mma.sync bf16 peak %.0f TFLOP/s" % peak, ha="right", va="bottom",
                    fontsize=8, color="gray")
        ax.set_ylabel("TFLOP/s (useful work, higher is better)")
    else:
        ax.set_ylabel("median time, µs (lower is better)")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_xlim(-0.6, n - 0.4)

    tot = data.get("totals", {})
    sub = []
    for key, name in (("set_1024_58_calls", "1024² set, 58 calls"), ("hot_1328_28_calls", "1328² hot rows, 28 calls")):
        t = tot.get(key)
        if not t or not t.get("vaeconv_ms"):
            continue
        s = "%s: vaeconv %.2f ms" % (name, t["vaeconv_ms"])
        if vendor_on and t.get("vendor_pipeline_ms"):
            s += ", %s %.2f ms (conv %.2f) → %.2f×" % (vendor, t["vendor_pipeline_ms"], t["vendor_conv_ms"],
                                                        t["ratio_vs_pipeline"])
        sub.append(s)
    ax.set_title("vaeconv vs %s on %s — Qwen-Image VAE convs, bf16 NHWC (annotation: vaeconv time / %s time)\n%s"
                 % (vendor, data.get("device", "?"), vendor, "\n".join(sub)), fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    d = os.path.dirname(a.png)
    if d:
        os.makedirs(d, exist_ok=True)
    fig.savefig(a.png, dpi=120)
    print("wrote", a.png)


if __name__ == "__main__":
    main()
