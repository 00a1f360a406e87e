#!/usr/bin/env python3
"""Prints the SASS of the kernels whose mangled name contains every given substring.

    cuobjdump -sass libvaeconv_kernels.so | bench/sass_of.py 'TileShapeILi192ELi96E' AtomBf16 'Lb1E'

(issue 5's tuning loop: read the main loop of one kernel instead of the whole library)."""
import sys

keys = sys.argv[1:]
keep = False
for line in sys.stdin:
    if "Function :" in line:
        keep = all(k in line for k in keys)
    if keep:
        sys.stdout.write(line)
