"""Unit tests of the NVIDIA SASS front-end (sass.py) and the NVIDIA validation (validate_nvidia.py):
synthetic SASS snippets with hand-counted answers, the occupancy rule, and one run over the
committed measurement of the cuda-mma build (bench/cdna_model/data)."""
import json
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import nvidia_machine as nm  # noqa: E402
import sass  # noqa: E402
import validate_nvidia as vn  # noqa: E402

# Control words (the high 64-bit word): write barrier bits 46-48, read barrier 49-51, wait mask
# 52-57; 7 = no barrier.
NONE = (7 << 46) | (7 << 49)


def ctrl(wbar=7, wait=0):
    return (wbar << 46) | (7 << 49) | (wait << 52)


def line(addr, text, hi=NONE, lo=0):
    return (f"        /*{addr:04x}*/                   {text} ;"
            f"   /* 0x{lo:016x} */\n"
            f"                                                   /* 0x{hi:016x} */\n")


def snippet(name="_Z4testv", loop_start=0x40, unroll=1, label=False):
    """A kernel: 4 prologue instructions, an outer (persistent) loop around an inner K loop with
    `unroll` copies of one K tile's body, and an epilogue with one 16-byte store."""
    out = [f"\t\tFunction : {name}\n", '\t.headerflags\t@"EF_CUDA_SM90"\n']
    a = 0
    for t in ("S2R R0, SR_TID.X", "IMAD R1, R0, 0x2, RZ", "ULDC UR4, c[0x0][0x210]",
              "LDG.E.128 R4, desc[UR4][R2.64]"):
        out.append(line(a, t))
        a += 0x10
    outer = a
    out.append(line(a, "IADD3 R8, R8, 0x1, RZ"))
    a += 0x10
    inner = a
    if label:
        out.append(".L_x_1:\n")
    for _ in range(unroll):
        body = [
            ("DEPBAR.LE SB0, 0x2", NONE),
            ("BAR.SYNC.DEFER_BLOCKING 0x0", NONE),
            ("LDGSTS.E.BYPASS.128 [R10], desc[UR4][R12.64]", NONE),
            ("LDGDEPBAR", NONE),
            ("LDSM.16.M88.4 R20, [R14]", ctrl(wbar=1)),
            ("LDSM.16.M88.4 R24, [R15]", ctrl(wbar=1)),
            ("LDS.64 R30, [R16]", ctrl(wbar=2)),
            ("HMMA.16816.F32.BF16 R40, R20, R24, R40", ctrl(wait=0b10)),
            ("HMMA.16816.F32.BF16 R44, R20, R26, R44", NONE),
            ("HMMA.16816.F32.BF16 R48, R22, R24, R48", NONE),
            ("HMMA.16816.F32.BF16 R52, R22, R26, R52", NONE),
            ("F2FP.BF16.F32.PACK_AB R60, R31, R30", ctrl(wait=0b100)),
            ("FFMA R61, R61, R62, R63", NONE),
            ("IMAD.MOV.U32 R9, RZ, RZ, R9", NONE),
            ("UIADD3 UR5, UR5, 0x1, URZ", NONE),
            ("STS.128 [R17], R60", NONE),
        ]
        for t, h in body:
            out.append(line(a, t, h))
            a += 0x10
    out.append(line(a, "ISETP.NE.AND P0, PT, R8, R9, PT"))
    a += 0x10
    target = "`(.L_x_1)" if label else f"0x{inner:x}"
    out.append(line(a, f"@P0 BRA {target}"))
    a += 0x10
    out.append(line(a, "ISETP.GE.AND P1, PT, R8, R7, PT"))
    a += 0x10
    out.append(line(a, f"@!P1 BRA 0x{outer:x}"))
    a += 0x10
    out.append(line(a, "STG.E.128 desc[UR4][R2.64], R60"))
    a += 0x10
    out.append(line(a, "EXIT"))
    return "".join(out)


class SassParsing(unittest.TestCase):
    def test_functions_instructions_and_control_words(self):
        fns = sass.parse_sass("\tcode for sm_90\n" + snippet("_Z1av") + snippet("_Z1bv"))
        self.assertEqual([f.name for f in fns], ["_Z1av", "_Z1bv"])
        ins = fns[0].instrs
        self.assertEqual(ins[0].opcode, "S2R")
        ldsm = [i for i in ins if i.base == "LDSM"][0]
        self.assertEqual(ldsm.write_barrier, 1)
        self.assertIsNone(ldsm.read_barrier)
        hmma = [i for i in ins if i.base == "HMMA"][0]
        self.assertEqual(hmma.wait_mask, 0b10)
        bra = [i for i in ins if i.base == "BRA"][0]
        self.assertEqual(bra.pred, "@P0")
        self.assertEqual(sass.branch_target(bra), 0x50)

    def test_real_control_word_fields(self):
        # From a cuobjdump dump: LDC R2 sets scoreboard 0 (0x000e22...), LOP3 waits on it
        # (0x001fda..., stall 13).
        ldc = sass.Instr(0, "", "LDC", "R2, c[0x0][0x210]", 0x000E220000000800)
        lop = sass.Instr(0x10, "", "LOP3.LUT", "P0, RZ, R2, 0xf, RZ, 0xc0, !PT", 0x001FDA000780C0FF)
        self.assertEqual(ldc.write_barrier, 0)
        self.assertEqual(lop.wait_mask, 1)
        self.assertEqual(lop.stall, 13)
        self.assertIsNone(lop.write_barrier)

    def test_label_targets_resolve(self):
        fn = sass.parse_sass(snippet(label=True))[0]
        lp = sass.find_main_loop(fn)
        self.assertIsNotNone(lp)
        self.assertEqual(fn.instrs[lp.start].opcode, "DEPBAR.LE")


class MainLoop(unittest.TestCase):
    def test_innermost_loop_with_mma_and_counts(self):
        fn = sass.parse_sass(snippet())[0]
        all_loops = sass.loops(fn)
        self.assertEqual(len(all_loops), 2)  # the persistent loop and the K loop
        k = sass.analyse(fn)
        self.assertEqual(fn.instrs[k.loop.start].opcode, "DEPBAR.LE")
        self.assertEqual(fn.instrs[k.loop.end].opcode, "BRA")
        self.assertEqual(k.k_tiles_per_trip, 1)
        b = k.body
        self.assertEqual(b.mma, {"HMMA.16816.F32.BF16": 4})
        self.assertEqual(b.mma_flops, 4 * 4096)
        self.assertEqual(b.lds_read_bytes, 2 * 512 + 32 * 8)       # two LDSM.x4 + LDS.64
        self.assertEqual(b.lds_write_bytes, 32 * 16 + 32 * 16)     # the cp.async fill + STS.128
        self.assertEqual(b.global_load_bytes, 32 * 16)
        self.assertEqual(b.barriers, 1)
        self.assertEqual(b.depbar, 1)
        self.assertEqual(b.conversions, 1)
        self.assertEqual(b.fp32, 1)
        self.assertEqual(b.uniform, 1)
        self.assertEqual(b.int_alu, 2)  # IMAD.MOV, ISETP
        # HMMA waits on SB1 (LDSM), F2FP on SB2 (LDS): two shared-load waits
        self.assertEqual(b.lgkm_waits, 2)
        # their distances: the HMMA two instructions after the second LDSM (itself, the LDS),
        # the F2FP the LDS and four HMMAs after the LDS
        self.assertEqual(b.lgkm_gaps, {(0.0, 2.0): 1.0, (4 * 4096.0, 1.0): 1.0})
        # outside the loop: 4 prologue + outer IADD3 before; ISETP, BRA, STG, EXIT after
        self.assertEqual(k.prologue.instructions, 5)
        self.assertEqual(k.epilogue.instructions, 4)
        self.assertEqual(k.epilogue.global_store_bytes, 512)
        self.assertEqual(k.prologue.global_load_bytes, 512)

    def test_unrolled_loop_is_normalised_per_k_tile(self):
        k1 = sass.analyse(sass.parse_sass(snippet(unroll=1))[0])
        k2 = sass.analyse(sass.parse_sass(snippet(unroll=2))[0])
        self.assertEqual(k2.k_tiles_per_trip, 2)
        c = nm.costs("h100")
        for end in ("opt", "nom", "pess"):
            a = sass.kernel_counts(k1, c, end, 3).loop
            b = sass.kernel_counts(k2, c, end, 3).loop
            self.assertAlmostEqual(a.mma_cycles, b.mma_cycles)
            self.assertAlmostEqual(a.lds_read_bytes, b.lds_read_bytes)
            self.assertAlmostEqual(a.global_load_bytes, b.global_load_bytes)
            # the loop test and branch are shared by the two tiles: fewer per tile
            self.assertLess(b.valu, a.valu)

    def test_costs_per_end(self):
        k = sass.analyse(sass.parse_sass(snippet())[0])
        c = nm.costs("h100")
        lo = sass.kernel_counts(k, c, "opt", 3).loop
        hi = sass.kernel_counts(k, c, "pess", 3).loop
        # HMMA cycles from the measured peak: 4096 FLOP at 645 TFLOP/s over 528 schedulers at 1.98 GHz
        per = 4096 * 528 * 1.98e9 / 645e12
        self.assertAlmostEqual(lo.mma_cycles, 4 * per, places=6)
        # valu cycles: 2 int x [1, 2] + 1 fp32 + 1 conversion x [4, 8]
        self.assertAlmostEqual(lo.valu, 2 * 1 + 1 + 4)
        self.assertAlmostEqual(hi.valu, 2 * 2 + 1 + 8)
        self.assertEqual(lo.other_issue, hi.other_issue)

    def test_no_mma_no_loop(self):
        text = ("\t\tFunction : _Z1cv\n" + line(0, "IADD3 R1, R1, 0x1, RZ")
                + line(0x10, "@P0 BRA 0x0") + line(0x20, "EXIT"))
        fn = sass.parse_sass(text)[0]
        self.assertEqual(len(sass.loops(fn)), 1)
        self.assertIsNone(sass.find_main_loop(fn))


class LoopPaths(unittest.TestCase):
    """sass.loop_paths: the steady trip (refill, same tap) and the longest one (tap change with its
    carry loop), and their weighting by the tap-change rate (SassKernel.with_tap_rate)."""

    @staticmethod
    def _kernel():
        t = [("S2R R0, SR_TID.X", None),                          # 0x00 prologue
             ("DEPBAR.LE SB0, 0x2", None),                        # 0x10 loop start
             ("BAR.SYNC.DEFER_BLOCKING 0x0", None),               # 0x20
             ("@!P0 BRA 0x60", None),                             # 0x30 past K: skip the refill
             ("LDGDEPBAR", None),                                 # 0x40
             ("BRA 0x80", None),                                  # 0x50
             ("LDGSTS.E.BYPASS.128 [R10], desc[UR4][R12.64]", None),  # 0x60 the refill
             ("LDGDEPBAR", None),                                 # 0x70
             ("@!P1 BRA 0xd0", None),                             # 0x80 same tap: skip the change
             ("IADD3 R8, R8, -R9, RZ", None),                     # 0x90 carry loop
             ("ISETP.GE.AND P2, PT, R8, R9, PT", None),           # 0xa0
             ("@P2 BRA 0x90", None),                              # 0xb0
             ("IMAD R12, R8, R11, R13", None),                    # 0xc0 refresh
             ("HMMA.16816.F32.BF16 R40, R20, R24, R40", None),    # 0xd0
             ("IADD3 R5, R5, 0x1, RZ", None),                     # 0xe0
             ("ISETP.GE.AND P3, PT, R5, R6, PT", None),           # 0xf0
             ("@!P3 BRA 0x10", None),                             # 0x100 back edge
             ("EXIT", None)]                                      # 0x110
        text = "\t\tFunction : _Z4testv\n" + "".join(line(i * 0x10, s) for i, (s, _) in enumerate(t))
        fn, = sass.parse_sass(text)
        return sass.analyse(fn)

    def test_paths(self):
        k = self._kernel()
        self.assertEqual((k.loop.start, k.loop.end), (1, 16))
        s, lg, b = k.steady, k.longest, k.body
        for c in (s, lg, b):
            self.assertEqual(sum(c.mma.values()), 1)
        self.assertEqual(s.global_load_bytes, lg.global_load_bytes)  # both refill
        self.assertGreater(s.global_load_bytes, 0)
        # steady: no carry, no refresh; longest: the carry's add and compare and the refresh
        self.assertEqual(lg.int_alu - s.int_alu, 3)
        self.assertEqual(b.int_alu, lg.int_alu)

    def test_weighting(self):
        k = self._kernel()
        self.assertIs(k.with_tap_rate(None), k)
        w = k.with_tap_rate(0.25).body
        self.assertAlmostEqual(w.int_alu, k.steady.int_alu + 0.25 * 3)
        self.assertEqual(k.with_tap_rate(1.0).body.int_alu, k.longest.int_alu)


class KernelIdentity(unittest.TestCase):
    NAME = ("_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi32ELi2ELi2"
            "ELi4ELi3EEENS_4arch6NvidiaENS6_8AtomBf16ELb0EEENS0_8GeometryILi2ELi0ELi1ELi3EEELb1EEEv"
            "NS0_10ConvParamsE")

    def test_mangled_name(self):
        self.assertEqual(vn.kernel_key(self.NAME),
                         ("implicit_gemm", "bf16", (128, 96, 32, 2, 2, 4, 3), (2, 0, 1, 3), True,
                          False))
        self.assertIsNone(vn.kernel_key("_Z3foov"))
        # an AMD table's twin (TwoBufferTileShape) is another kernel than the TileShape of the
        # same numbers; the halo family's kernel has its own name
        two = self.NAME.replace("9TileShape", "18TwoBufferTileShape")
        self.assertEqual(vn.kernel_key(two)[5], True)
        halo = ("_ZN7vaeconv6kernel25halo_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicyINS0_9"
                "TileShapeILi128ELi96ELi32ELi2ELi2ELi4ELi3EEENS_4arch6NvidiaENS7_8AtomBf16ELb0EEENS0_8"
                "HaloTileILi16ELi8ELi96ELi2EEEEEvNS0_10ConvParamsE")
        self.assertEqual(vn.kernel_key(halo),
                         ("halo", "bf16", (128, 96, 32, 2, 2, 4, 3), (), None, False))

    def test_filter_sass_keeps_the_plans_kernels(self):
        other = self.NAME.replace("ILi128ELi96ELi32E", "ILi64ELi96ELi32E")
        text = (f"\t\tFunction : {self.NAME}\n        /*0000*/ EXIT ;\n"
                f"\t\tFunction : {other}\n        /*0000*/ EXIT ;\n"
                "\t\tFunction : _Z3foov\n        /*0000*/ EXIT ;\n")
        plan = [{"dtype": "bf16", "kernel": {"family": "implicit_gemm", "bm": 128, "bn": 96,
                                             "bk": 32, "warps_m": 2, "warps_n": 2, "stages": 4,
                                             "min_blocks": 3, "geometry": [2, 0, 1, 3],
                                             "vector": True}},
                {"set": "video", "dtype": "bf16", "kernel": {"family": "implicit_gemm", "bm": 64,
                                                             "bn": 96, "bk": 32, "warps_m": 2,
                                                             "warps_n": 2, "stages": 4,
                                                             "min_blocks": 3,
                                                             "geometry": [2, 0, 1, 3],
                                                             "vector": True}}]
        kept = [f.name for f in sass.parse_sass(vn.filter_sass(text, plan))]
        self.assertEqual(kept, [self.NAME])  # not the video plan's, not a foreign function

    def test_plan_key_matches(self):
        p = {"dtype": "bf16", "kernel": {"family": "implicit_gemm", "bm": 128, "bn": 96, "bk": 32,
                                          "warps_m": 2, "warps_n": 2, "stages": 4, "min_blocks": 3,
                                          "geometry": [2, 0, 1, 3], "vector": True}}
        self.assertEqual(vn.plan_key(p), vn.kernel_key(self.NAME))

    def test_occupancy(self):
        # 168 registers x 128 threads = 21504 per block -> 3 blocks; LDS 56 KiB allows 3 too
        self.assertEqual(nm.blocks_per_sm(168, 128, 57344), 3)
        # 255 registers (-> 256 per thread, 8192 per warp) x 4 warps -> 2 blocks
        self.assertEqual(nm.blocks_per_sm(255, 128, 73728), 2)
        # LDS-limited: 100 KiB per block -> 2
        self.assertEqual(nm.blocks_per_sm(32, 128, 100 * 1024), 2)


DATA = os.path.join(os.path.dirname(HERE), "data")


@unittest.skipUnless(os.path.exists(os.path.join(DATA, "sass-mma-h100.txt.gz")),
                     "the committed cuda-mma measurement is absent")
class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.v = vn.run("h100", os.path.join(DATA, "sass-mma-h100.txt.gz"),
                       os.path.join(DATA, "res-mma-h100.txt"),
                       os.path.join(DATA, "dispatch-plan-mma.json"),
                       os.path.join(DATA, "bench-mma-h100.json"))

    def test_every_shape_predicted_and_measured(self):
        shapes = self.v["shapes"]
        self.assertEqual(len(shapes), 36)  # 18 seed shapes x bf16, fp8
        for s in shapes:
            self.assertTrue(math.isfinite(s["predicted_us"]) and s["predicted_us"] > 0, s["id"])
            lo, hi = s["predicted_range_us"]
            self.assertLessEqual(lo, s["predicted_us"])
            self.assertLessEqual(s["predicted_us"], hi)
            self.assertIsNotNone(s["measured_us"], s["id"])

    def test_loop_counts_match_the_tile(self):
        # The 96->96 bf16 row runs the halo kernel on the wide tile 128x96x32, 2x2 warps: a warp's
        # 64x48 = 4x3 m16n16 atoms, two K steps of 16, two HMMA.16816 per atom: 48 per K tile;
        # its K loop copies B alone (cp.async: 96 rows x 64 B over 4 warps; the halo once per
        # block). The 192->192 bf16 row runs the implicit GEMM on the same tile: (128 + 96) rows.
        # The fp8 tile 192x96x64: 6x3 atoms x 2 K steps x 2 mma.sync x 2 HMMA (sm_90 lowers e4m3
        # m16n8k32 to two f16 HMMA.16816) = 144.
        by = {(s["id"], s["dtype"]): s["loop_per_warp_ktile"] for s in self.v["shapes"]}
        w = by[("enc_e0_res__dec_d3_res", "bf16")]
        self.assertEqual(w["hmma"], 48)
        self.assertEqual(w["global_load_bytes"], 96 * 64 / 4)
        g = by[("enc_e1_res2__dec_d2_res", "bf16")]
        self.assertEqual(g["hmma"], 48)
        self.assertEqual(g["global_load_bytes"], (128 + 96) * 64 / 4)
        self.assertEqual(w["barriers"], 1)
        f = by[("enc_e0_res__dec_d3_res", "fp8")]
        self.assertEqual(f["hmma"], 144)
        self.assertEqual(f["conversions"], 144)
        self.assertEqual(f["global_load_bytes"], (192 + 96) * 64 / 4)

    def test_committed_validation_is_current(self):
        path = os.path.join(os.path.dirname(HERE), "validation.json")
        with open(path) as f:
            committed = json.load(f).get("nvidia_mma_sync")
        self.assertIsNotNone(committed, "validation.json has no nvidia_mma_sync object: run "
                             "python3 bench/cdna_model/validate_nvidia.py --write")
        fresh = json.loads(json.dumps(self.v))
        for dt in ("bf16", "fp8"):
            self.assertEqual(committed[dt], fresh[dt], "validation.json is stale: run "
                             "python3 bench/cdna_model/validate_nvidia.py --write")


if __name__ == "__main__":
    unittest.main()
