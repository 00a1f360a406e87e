#!/usr/bin/env python3
"""Markdown tables of a vaeconv_bench --json run, as docs/performance.md shows them.

    python3 scripts/bench_table.py docs/bench-h200.json

Standard library only (runs where the plot script's matplotlib is missing)."""
import json
import sys


def main(path):
    d = json.load(open(path))
    print("| id | Cin→Cout | H×W | calls | vaeconv | TFLOP/s | % peak | floor / time | cuDNN conv+bias "
          "| cuDNN engine | ratio (engine) | FP8 | FP8 / BF16 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in d["rows"]:
        v, ven, f8 = r["vaeconv"], r["vendor"], r.get("fp8", {})
        hw = f"{r['h']}²" if r["h"] == r["w"] else f"{r['h']}×{r['w']}"
        if r["kind"] == "upsample":
            hw += " (src)"
        fp8 = f"{f8['us']:.1f} | {f8['vs_bf16']:.2f}" if f8.get("ok") else "— | —"
        # The strongest cuDNN where the JSON has it (legacy / graph API, PyTorch: issue 28).
        conv_us = r.get("vendor_best_conv_us", ven["conv_us"])
        eng = f"{r.get('vendor_best_us', ven['pipeline_us']):.1f}"
        if r.get("vendor_best"):
            eng += f" ({r['vendor_best']})"
        print(f"| {r['id']} | {r['cin']}→{r['cout']} | {hw} | {r['calls']} | {v['us']:.1f} | "
              f"{v['tflops']:.1f} | {100 * v['frac_peak']:.0f} % | {100 * v['frac_mem_floor']:.0f} % | "
              f"{conv_us:.1f} | {eng} | {r['ratio_vs_pipeline']:.2f} | {fp8} |")
    print()
    print("| set | vaeconv BF16 | cuDNN engine | ratio | vaeconv FP8 | FP8 / BF16 |")
    print("|---|---|---|---|---|---|")
    names = {"set_1024_58_calls": "one 1024² encode+decode (58 calls)",
             "hot_1328_28_calls": "the hot 1328² rows (28 calls)"}
    for key, t in d["totals"].items():
        print(f"| {names.get(key, key)} | {t['vaeconv_ms']:.2f} ms | {t['vendor_pipeline_ms']:.2f} ms | "
              f"{t['ratio_vs_pipeline']:.2f} | {t['vaeconv_fp8_ms']:.2f} ms | {t['fp8_vs_bf16']:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
