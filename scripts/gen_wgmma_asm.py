#!/usr/bin/env python3
"""Prints the VAECONV_WGMMA_N<N> macros of include/vaeconv/arch/nvidia_wgmma.hpp.

An inline-asm statement needs its operand list written out literally: one "+f" accumulator per
register (N/2 of them for wgmma m64nN with fp32 D), then the two descriptors and the scale-d
flag. This script writes those lists for the instantiated widths, so that they are generated
rather than typed; paste its output between the markers in nvidia_wgmma.hpp.
  scripts/gen_wgmma_asm.py [N ...]     (default: 64 96 128 192)
"""
import sys


def macro(n: int) -> str:
    regs = n // 2
    lines = [f"#define VAECONV_WGMMA_N{n}(INSTR, TAIL)"]
    body = ["asm volatile(",
            f'    "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{regs + 2}, 0;\\n" INSTR " {{"']
    groups = [",".join(f"%{j}" for j in range(i, min(regs, i + 16))) for i in range(0, regs, 16)]
    body += [f'    "{g},"' for g in groups[:-1]] + [f'    "{groups[-1]}"']
    body.append(f'    "}}, %{regs}, %{regs + 1}, p" TAIL ";\\n}}\\n"')
    ops = [f'"+f"(c.v[{i}])' for i in range(regs)]
    rows = [", ".join(ops[i:i + 6]) for i in range(0, regs, 6)]
    body.append("    : " + rows[0] + ("," if len(rows) > 1 else ""))
    body += ["      " + r + ("," if k < len(rows) - 2 else "") for k, r in enumerate(rows[1:])]
    body.append('    : "l"(desc_a), "l"(desc_b), "r"(scale_d))')
    out = [lines[0].ljust(98) + " \\"] + ["  " + b.ljust(96) + " \\" for b in body]
    out[-1] = out[-1].rstrip(" \\")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    widths = [int(a) for a in sys.argv[1:]] or [64, 96, 128, 192]
    print("\n".join(macro(n) for n in widths), end="")
