#!/usr/bin/env python3
"""The before/after record of the model's structural changes: after each change, the three
validations re-run UNCALIBRATED (the NVIDIA method check, the public AMD kernels) and the conv
totals, one row per change in model_changes.json (rendered into docs/amd-performance.md).

    python3 bench/cdna_model/model_changes.py record --step "name" --why "reason and source" \
        [--build build/hip-root]
    python3 bench/cdna_model/model_changes.py show

`record` replaces a row of the same step name, so a step can be re-measured; rows keep their order.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
PATH = os.path.join(HERE, "model_changes.json")


def measure(build: str) -> Dict:
    import predict
    import public_kernels
    import validate_nvidia as vn
    card = "h100"
    d = vn.DATA
    nv = vn.run(card, os.path.join(d, f"sass-mma-{card}.txt.gz"), os.path.join(d, f"res-mma-{card}.txt"),
                os.path.join(d, "dispatch-plan-mma.json"), os.path.join(d, f"bench-mma-{card}.json"))
    with open(public_kernels.DEFAULT_JSON) as f:
        pk = public_kernels.predict_all(json.load(f)["kernels"])
    row = {"nvidia_bf16_median_abs_pct": nv["bf16"]["median_abs_error_pct"],
           "nvidia_fp8_median_abs_pct": nv["fp8"]["median_abs_error_pct"],
           "nvidia_bf16_58_pct": nv["bf16"]["set_1024_58_calls"]["error_pct"],
           "nvidia_fp8_58_pct": nv["fp8"]["set_1024_58_calls"]["error_pct"],
           "nvidia_inside_range": nv["bf16"]["measured_inside_range"] + nv["fp8"]["measured_inside_range"],
           "public_median_abs_pct": pk["median_abs_error_pct"],
           "public_inside_range": pk["published_within_range"]}
    if os.path.exists(os.path.join(build, "kernels", "asm", "conv_instances-gfx950.s")):
        plan = predict.load_plan(build, None)
        lds_rows, src = predict.load_lds_ways(build)
        js = predict.build_json(predict.predict_all(build, plan, lds_rows), src)
        for t in ("mi300x", "mi355x"):
            row[f"{t}_bf16_58_ms"] = [js[t]["bf16_58_ms"]] + js[t]["bf16_58_ms_range"]
            row[f"{t}_fp8_58_ms"] = [js[t]["fp8_58_ms"]] + js[t]["fp8_58_ms_range"]
    return row


def load() -> List[Dict]:
    if os.path.exists(PATH):
        with open(PATH) as f:
            return json.load(f)["steps"]
    return []


def markdown(steps: List[Dict]) -> str:
    L = ["| step | why (source / reasoning) | NVIDIA median abs error bf16 / fp8 | NVIDIA 58-call "
         "bf16 / fp8 | NVIDIA measured inside range (of 36) | public kernels median abs error "
         "(inside range of 8) | MI300X bf16 / fp8 58-call ms | MI355X bf16 / fp8 58-call ms |",
         "|---|---|---|---|---|---|---|---|"]
    for s in steps:
        def tot(key):
            v = s.get(key)
            return f"{v[0]:.2f} [{v[1]:.2f}, {v[2]:.2f}]" if v else "-"
        L.append(f"| {s['step']} | {s['why']} | {s['nvidia_bf16_median_abs_pct']} % / "
                 f"{s['nvidia_fp8_median_abs_pct']} % | {s['nvidia_bf16_58_pct']:+} % / "
                 f"{s['nvidia_fp8_58_pct']:+} % | {s['nvidia_inside_range']} | "
                 f"{s['public_median_abs_pct']} % ({s['public_inside_range']}) | "
                 f"{tot('mi300x_bf16_58_ms')} / {tot('mi300x_fp8_58_ms')} | "
                 f"{tot('mi355x_bf16_58_ms')} / {tot('mi355x_fp8_58_ms')} |")
    return "\n".join(L) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--step", required=True)
    r.add_argument("--why", required=True)
    r.add_argument("--build", default=os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                   "build", "hip-root"))
    sub.add_parser("show")
    a = ap.parse_args(argv)
    steps = load()
    if a.cmd == "record":
        row = {"step": a.step, "why": a.why, **measure(a.build)}
        idx = [i for i, s in enumerate(steps) if s["step"] == a.step]
        if idx:
            steps[idx[0]] = row
        else:
            steps.append(row)
        with open(PATH, "w") as f:
            json.dump({"about": "uncalibrated validation errors and conv totals after each "
                                "structural change of the model (model_changes.py)",
                       "steps": steps}, f, indent=1)
            f.write("\n")
    print(markdown(steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
