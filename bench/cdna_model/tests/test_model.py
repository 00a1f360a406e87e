"""Unit tests of the CDNA model: the asm front-end on synthetic snippets, the bound logic on
hand-computed cases, and one end-to-end run over a real build ($VAECONV_BUILD)."""
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import cdna_asm  # noqa: E402
import halo_patch  # noqa: E402
import machines  # noqa: E402
import predict  # noqa: E402
import model  # noqa: E402
from model import KernelCounts, Launch, LoopCounts, Machine, Range, combine, predict as run  # noqa: E402

NAME = ("_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi32ELi4ELi1E"
        "Li2ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1E"
        "EEvNS0_10ConvParamsE")

# A kernel in the shape clang emits: a prologue, a rotated K loop (body blocks before the
# header) with a child loop, an epilogue with a skip branch, metadata after .Lfunc_end.
SNIPPET = f"""
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
{NAME}:                  ; @x
; %bb.0:
\ts_load_dword s3, s[0:1], 0xb4
\ts_waitcnt lgkmcnt(0)
\tv_mov_b32_e32 v1, 0
\tbuffer_load_dwordx4 v[4:7], v1, s[8:11], 0 offen
\ts_branch .LBB0_3
.LBB0_2:                                ;   in Loop: Header=BB0_3 Depth=1
\tds_read_b128 v[10:13], v2
\tds_read_b64 v[14:15], v2 offset:64
\ts_waitcnt lgkmcnt(0)
\tv_mfma_f32_32x32x16_bf16 v[16:31], v[10:13], v[10:13], v[16:31]
\ts_nop 3
\tv_mfma_f32_32x32x16_bf16 v[16:31], v[10:13], v[10:13], v[16:31]
\ts_cbranch_scc0 .LBB0_6
.LBB0_3:                                ; =>This Loop Header: Depth=1
                                        ;     Child Loop BB0_4 Depth 2
\ts_waitcnt vmcnt(0)
\tds_write_b128 v3, v[4:7]
\ts_add_i32 s4, s4, 1
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\tbuffer_load_dwordx4 v[4:7], v1, s[8:11], 0 offen
\tbuffer_load_dword v8, v1, s[8:11], 0 offen
.LBB0_4:                                ;   Parent Loop BB0_3 Depth=1
                                        ; =>  This Inner Loop Header: Depth=2
\tv_add_u32_e32 v9, 1, v9
\tv_cmp_eq_u32_e64 s[8:9], 3, v9
\ts_cbranch_execz .LBB0_4
; %bb.5:                                ;   in Loop: Header=BB0_3 Depth=1
\tv_add_u32_e32 v2, 32, v2
\ts_branch .LBB0_2
.LBB0_6:
\ts_cbranch_execz .LBB0_8
; %bb.7:
\tv_cvt_pk_bf16_f32 v0, v16, v17
\tglobal_store_dwordx4 v[0:1], v[16:19], off
.LBB0_8:
\ts_endpgm
\t.section\t.rodata,"a",@progbits
\t.amdhsa_kernel {NAME}
\t\t.amdhsa_group_segment_fixed_size 28672
\t.end_amdhsa_kernel
\t.text
.Lfunc_end0:
\t.size x, .Lfunc_end0-x
; Kernel info:
; TotalNumSgprs: 40
; NumVgprs: 100
; NumAgprs: 0
; ScratchSize: 0
; LDSByteSize: 28672 bytes/workgroup (compile time only)
; Occupancy: 4
"""


def kernel_of(text):
    (name, body, meta), = cdna_asm.split_kernels(text)
    return cdna_asm.analyse(name, "gfx950", body, meta)


class AsmFrontEnd(unittest.TestCase):
    def test_metadata_and_name(self):
        k = kernel_of(SNIPPET)
        self.assertEqual(k.meta["occupancy"], 4)
        self.assertEqual(k.meta["lds"], 28672)
        self.assertEqual(k.meta["vgpr"], 100)
        self.assertEqual(k.meta["scratch"], 0)
        self.assertEqual(k.decoded["tile"], (128, 96, 32, 4, 1, 2))
        self.assertEqual(k.decoded["geometry"], (1, 1, 1, 3))
        self.assertEqual(k.decoded["dtype"], "bf16")
        self.assertTrue(k.decoded["vector"])

    def test_loop_and_counts(self):
        k = kernel_of(SNIPPET)
        self.assertEqual(k.loop_blocks, [".LBB0_2", ".LBB0_3", ".LBB0_4", "%bb.5"])
        c = k.loop_counts
        self.assertEqual(c.mfma, {"v_mfma_f32_32x32x16_bf16": 2})
        self.assertEqual(c.mfma_cycles, 64)
        self.assertEqual(c.mfma_flops, 2 * 2 * 32 * 32 * 16)
        self.assertEqual(c.lds_read_bytes, 64 * (16 + 8))
        self.assertEqual(c.lds_read, {16: 1, 8: 1})
        self.assertEqual(c.lds_write_bytes, 64 * 16)
        self.assertEqual(c.global_load_bytes, 64 * (16 + 4))
        self.assertEqual(c.nop_cycles, 4)
        self.assertEqual(c.barriers, 1)
        self.assertEqual(c.lgkm_waits, 2)
        self.assertEqual(c.vm_waits, 1)
        self.assertEqual(c.valu, 3)  # two adds, one compare (not the MFMAs)
        self.assertEqual(c.salu, 1)

    def test_lds_wait_gaps(self):
        # two reads, an MFMA (32 cycles on gfx950), a wait for the first read, another MFMA, a
        # wait for the second, and a wait that requires nothing new
        path = [cdna_asm.Inst(mn, ops, 0) for mn, ops in (
            ("ds_read_b128", "v[10:13], v2"), ("ds_read_b128", "v[14:17], v2 offset:64"),
            ("v_mfma_f32_32x32x16_bf16", "v[20:35], v[10:13], v[10:13], v[20:35]"),
            ("s_waitcnt", "lgkmcnt(1)"),
            ("v_mfma_f32_32x32x16_bf16", "v[20:35], v[14:17], v[14:17], v[20:35]"),
            ("s_waitcnt", "lgkmcnt(0)"), ("v_add_u32_e32", "v2, 32, v2"),
            ("s_waitcnt", "lgkmcnt(0)"))]
        gaps = cdna_asm.lds_wait_gaps(path, "gfx950")
        # first wait: read 0, read 1, MFMA = 1 + 1 + 32; second: read 1, MFMA, wait, MFMA
        self.assertEqual(gaps, {34.0: 1.0, 66.0: 1.0, math.inf: 1.0})
        # the SNIPPET's loop: its longest path's waits (flush: ds_write then s_add; the reads)
        k = kernel_of(SNIPPET)
        self.assertEqual(sum(k.loop_counts.lgkm_gaps.values()), k.loop_counts.lgkm_waits)

    def test_prologue_epilogue_paths(self):
        k = kernel_of(SNIPPET)
        self.assertEqual(k.prologue[1].instructions, 5)
        short, long_ = k.epilogue
        self.assertEqual(short.instructions, 2)      # skip branch + s_endpgm
        self.assertEqual(long_.instructions, 4)      # the storing path
        self.assertEqual(long_.global_store_bytes, 64 * 16)

    def test_epilogue_paths_of_a_structurized_staging(self):
        # The shape of the shipped epilogues (gfx950 256x96 kernels): two exclusive stagings
        # chosen at run time, laid out in sequence by AMDGPU's structurizer behind a flow bit
        # s[0:1]. The packed one stores and sets the bit to 0; the flow block then branches to an
        # empty label that falls through to s_endpgm. The fp32 slab one stages through LDS and
        # stores in a rotated row loop (its exiting block above its header).
        mf = "\tv_mfma_f32_32x32x16_bf16 v[32:47], v[16:19], v[20:23], v[32:47]"
        lines = [f"{NAME}:", "; %bb.0:", "\tv_mov_b32_e32 v1, 0",
                 ".LBB0_1:                                ; =>This Loop Header: Depth=1",
                 "\ts_barrier", mf, "\ts_cbranch_scc1 .LBB0_1",
                 "; %bb.2:", "\ts_mov_b64 s[0:1], -1", "\ts_and_b64 vcc, exec, s[4:5]",
                 "\ts_cbranch_vccnz .LBB0_4",
                 "; %bb.3:", "\tv_cvt_pk_bf16_f32 v0, v16, v17",
                 "\tglobal_store_dwordx4 v[0:1], v[16:19], off", "\ts_mov_b64 s[0:1], 0",
                 ".LBB0_4:", "\ts_and_b64 vcc, exec, s[0:1]", "\ts_cbranch_vccz .LBB0_8",
                 "; %bb.5:", "\tds_write_b32 v2, v16", "\ts_branch .LBB0_7",
                 ".LBB0_6:                                ;   in Loop: Header=BB0_7 Depth=1",
                 "\ts_cbranch_execz .LBB0_9",
                 ".LBB0_7:                                ; =>This Loop Header: Depth=1",
                 "\tglobal_store_dword v[0:1], v3, off", "\tv_add_u32_e32 v3, 1, v3",
                 "\ts_branch .LBB0_6",
                 ".LBB0_8:", ".LBB0_9:", "\ts_endpgm"]
        body = [(i + 1, t) for i, t in enumerate(lines[1:])]
        k = cdna_asm.analyse(NAME, "gfx950", body, {})
        self.assertEqual(k.loop_blocks, [".LBB0_1"])
        short, long_ = k.epilogue
        # longest: the slab staging and one trip of its rotated store loop (a walk forward by
        # block index never gets out of that loop)
        self.assertEqual(long_.instructions, 3 + 2 + 2 + 3 + 1 + 1)
        self.assertEqual(long_.lds_write_bytes, 64 * 4)
        self.assertEqual(long_.global_store_bytes, 64 * 4)
        # shortest: the packed staging, which reaches the end only through the empty label
        self.assertEqual(short.instructions, 3 + 3 + 2 + 1)
        self.assertEqual(short.global_store_bytes, 64 * 16)
        self.assertEqual(short.lds_write_bytes, 0)
        # never both: the flow bit the packed staging cleared sends it to the end

    @staticmethod
    def _output_branches(slab2: list) -> "cdna_asm.Kernel":
        # The shape of the fp32 slab store's output step (gfx942 128x96 kernels): a uniform
        # if/else sets the flow bit s[4:5] (0: bf16 output, -1: FP8 output) once; each slab then
        # skips the bf16 store behind `s_and_b64 vcc, exec, s[4:5]` + vccnz and the FP8 store
        # behind the negated test `s_andn2_b64 vcc, exec, s[4:5]` + vccnz (vcc zero where the
        # flag is -1). `slab2` is the second test's block (its instructions before the branch).
        mf = "\tv_mfma_f32_32x32x8_bf16 v[32:47], v[16:17], v[20:21], v[32:47]"
        lines = [f"{NAME}:", "; %bb.0:", "\tv_mov_b32_e32 v1, 0",
                 ".LBB0_1:                                ; =>This Loop Header: Depth=1",
                 "\ts_barrier", mf, "\ts_cbranch_scc1 .LBB0_1",
                 "; %bb.2:", "\ts_cmp_eq_u32 s8, 0", "\ts_cbranch_scc0 .LBB0_4",
                 "; %bb.3:", "\ts_mov_b64 s[4:5], 0", "\ts_branch .LBB0_5",
                 ".LBB0_4:", "\ts_mov_b64 s[4:5], -1",
                 ".LBB0_5:", "\ts_and_b64 vcc, exec, s[4:5]", "\ts_cbranch_vccnz .LBB0_7",
                 "; %bb.6:", "\tv_cvt_pk_bf16_f32 v0, v16, v17", "\tv_cvt_pk_bf16_f32 v1, v18, v19",
                 "\tglobal_store_dwordx2 v[2:3], v[0:1], off",
                 ".LBB0_7:", *slab2, "\ts_cbranch_vccnz .LBB0_9",
                 "; %bb.8:", "\tv_cvt_pk_fp8_f32 v0, v16, v17",
                 "\tv_cvt_pk_fp8_f32 v0, v18, v19 op_sel:[0,0,1]",
                 "\tv_cvt_pk_fp8_f32 v4, v20, v21", "\tv_perm_b32 v0, v0, v4, s9",
                 "\tglobal_store_dword v[2:3], v0, off",
                 ".LBB0_9:", "\ts_endpgm"]
        body = [(i + 1, t) for i, t in enumerate(lines[1:])]
        k = cdna_asm.analyse(NAME, "gfx942", body, {})
        assert k.loop_blocks == [".LBB0_1"], k.loop_blocks
        return k

    def test_epilogue_follows_the_negated_flow_bit(self):
        k = self._output_branches(["\ts_andn2_b64 vcc, exec, s[4:5]"])
        short, long_ = k.epilogue
        # FP8 (flag -1): 2 + 1 + 2 + 2 + 5 + 1; bf16 (flag 0): 2 + 2 + 2 + 3 + 2 + 1. The old
        # front-end read only s_and_b64 and summed both stores on the bf16 path: 17.
        self.assertEqual(long_.instructions, 13)
        self.assertEqual(long_.global_store_bytes, 64 * 4)
        self.assertEqual(short.instructions, 12)
        self.assertEqual(short.global_store_bytes, 64 * 8)

    def test_epilogue_flow_bit_negated_copy_and_clobbered_half(self):
        # the same test through a negated copy (s_xor_b64 with -1, then the plain s_and_b64)
        k = self._output_branches(["\ts_xor_b64 s[6:7], s[4:5], -1",
                                   "\ts_and_b64 vcc, exec, s[6:7]"])
        self.assertEqual(k.epilogue[1].instructions, 14)
        self.assertEqual(k.epilogue[0].instructions, 13)
        # a write to one 32-bit half of the flow register makes its value unknown: both sides
        # of the second test stay on the longest path (2 + 2 + 2 + 3 + 3 + 5 + 1)
        k = self._output_branches(["\tv_readfirstlane_b32 s5, v7",
                                   "\ts_andn2_b64 vcc, exec, s[4:5]"])
        self.assertEqual(k.epilogue[1].instructions, 18)
        self.assertEqual(k.epilogue[1].global_store_bytes, 64 * (8 + 4))
        # s_cmp reads its first operand: the flag stays known
        k = self._output_branches(["\ts_cmp_lg_u64 s[4:5], 0",
                                   "\ts_andn2_b64 vcc, exec, s[4:5]"])
        self.assertEqual(k.epilogue[1].instructions, 14)

    def test_epilogue_of_a_bf16_output_skips_the_fp8_store(self):
        # A uniform branch between the bf16 store and the FP8-output store, whose division by
        # y_scale (v_div_fixup_f32, cdna_asm.FP8_OUTPUT_MARK) a bf16-output launch never runs:
        # the longest path takes the FP8 store, the bf16-output epilogue the other.
        mf = "\tv_mfma_f32_32x32x16_bf16 v[32:47], v[16:19], v[20:23], v[32:47]"
        fp8 = ["\tv_div_scale_f32 v5, s[0:1], s9, s9, v16", "\tv_rcp_f32_e32 v6, v5",
               "\tv_fma_f32 v7, -v5, v6, 1.0", "\tv_div_fmas_f32 v7, v7, v6, v5",
               "\tv_div_fixup_f32 v7, v7, s9, v16", "\tv_bfe_u32 v8, v7, 20, 3",
               "\tglobal_store_byte v[2:3], v8, off"]
        lines = [f"{NAME}:", "; %bb.0:", "\tv_mov_b32_e32 v1, 0",
                 ".LBB0_1:                                ; =>This Loop Header: Depth=1",
                 "\ts_barrier", mf, "\ts_cbranch_scc1 .LBB0_1",
                 "; %bb.2:", "\ts_bitcmp1_b32 s8, 0", "\ts_cbranch_scc1 .LBB0_4",
                 "; %bb.3:", "\tv_cvt_pk_bf16_f32 v0, v16, v17",
                 "\tglobal_store_dword v[2:3], v0, off", "\ts_branch .LBB0_5",
                 ".LBB0_4:", *fp8,
                 ".LBB0_5:", "\ts_endpgm"]
        body = [(i + 1, t) for i, t in enumerate(lines[1:])]
        k = cdna_asm.analyse(NAME, "gfx950", body, {})
        self.assertEqual(k.loop_blocks, [".LBB0_1"])
        self.assertEqual(k.epilogue[1].instructions, 2 + 7 + 1)
        self.assertEqual(k.epilogue[1].global_store_bytes, 64 * 1)
        self.assertEqual(k.epilogue_bf16_out[1].instructions, 2 + 3 + 1)
        self.assertEqual(k.epilogue_bf16_out[1].global_store_bytes, 64 * 4)
        # without an FP8 store the two are the same paths
        k = kernel_of(SNIPPET)
        self.assertEqual(k.epilogue_bf16_out, k.epilogue)

    def test_backedge_fallback_without_comments(self):
        text = "\n".join(l.split(";")[0].rstrip() if l.startswith((".LBB", ";")) else l
                         for l in SNIPPET.split("\n") if not l.strip().startswith("; =>")
                         and not l.strip().startswith(";     Child"))
        text = text.replace("; Kernel info:", "; Kernel info:")
        k = kernel_of(text)
        c = k.loop_counts
        self.assertEqual(c.mfma, {"v_mfma_f32_32x32x16_bf16": 2})
        self.assertEqual(c.barriers, 1)

    def test_no_mfma_loop(self):
        k = kernel_of(SNIPPET.replace("v_mfma_f32_32x32x16_bf16", "v_add_f32"))
        self.assertIsNone(k.loop_counts)

    def test_unknown_mfma_is_an_error(self):
        with self.assertRaises(KeyError):
            cdna_asm.mfma_cycles("gfx942", "v_mfma_f32_32x32x16_bf16")

    def test_video_loaders_decode_and_match_apart(self):
        # the same tile as the plain causal gather, told apart by the loader (issue 27)
        pre = ("_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi16ELi4"
               "ELi1ELi3ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_")
        post = "ELb1EEEvNS0_10ConvParamsE"
        names = {"": pre + "8GeometryILi1ELi1ELi1ELi3EEE" + post,
                 "cached": pre + "20CachedCausalGeometryE" + post,
                 "temporal": pre + "16TemporalGeometryE" + post}
        geos = {"": (1, 1, 1, 3), "cached": (1, 1, 1, 3), "temporal": (1, 0, 1, 1)}
        ks = []
        for loader, name in names.items():
            d = cdna_asm.decode_name(name)
            self.assertEqual((d["family"], d["loader"], d["geometry"], d["vector"]),
                             ("implicit_gemm", loader, geos[loader], True), loader)
            ks.append(type("K", (), {"decoded": d, "name": name})())
        for loader in names:
            plan_k = {"family": "implicit_gemm", "bm": 128, "bn": 96, "bk": 16, "warps_m": 4,
                      "warps_n": 1, "stages": 3, "geometry": list(geos[loader]), "vector": True,
                      "loader": loader}
            found = cdna_asm.match_plan(ks, plan_k, "bf16")
            self.assertEqual([k.name for k in found], [names[loader]], loader)


    def test_sliced_k_decodes_and_matches_apart(self):
        # SlicedKTileShape<Shape, 2> (W22): Shape's numbers, the slices from the wrapper; the
        # unsliced kernel of the same Shape is another kernel
        inner = "TwoBufferTileShapeILi128ELi96ELi32ELi2ELi1ELi4ELi2EEE"
        post = ("NS_4arch14CdnaGfx950OnlyENS7_4Cdna8AtomBf16ELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEE"
                "ELb1EEEvNS0_10ConvParamsE")
        sliced = ("_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_16SlicedKTileShapeINS0_18"
                  + inner + "Li2EEE" + post)
        plain = "_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_18" + inner + post
        ds, dp = cdna_asm.decode_name(sliced), cdna_asm.decode_name(plain)
        self.assertEqual((ds["tile"], ds["lds_stages"], ds["min_blocks"], ds["slices_k"]),
                         ((128, 96, 32, 2, 1, 4), 2, 2, 2))
        self.assertEqual(dp["slices_k"], 1)
        ks = [type("K", (), {"decoded": d, "name": n})() for d, n in ((ds, sliced), (dp, plain))]
        plan_k = {"family": "implicit_gemm", "bm": 128, "bn": 96, "bk": 32, "warps_m": 2,
                  "warps_n": 1, "stages": 4, "lds_stages": 2, "min_blocks": 2,
                  "geometry": [1, 1, 1, 3], "vector": True, "loader": ""}
        found = cdna_asm.match_plan(ks, dict(plan_k, slices_k=2), "bf16")
        self.assertEqual([k.name for k in found], [sliced])
        self.assertEqual([k.name for k in cdna_asm.match_plan(ks, plan_k, "bf16")], [plain])
        # the block's distinct bytes per K tile: both groups' tiles
        kern = type("K", (), {"loop_counts": cdna_asm.Counts()})()
        one = predict.block_tile_bytes(kern, dict(plan_k, threads=128))
        two = predict.block_tile_bytes(kern, dict(plan_k, threads=256, slices_k=2))
        self.assertEqual((one, two), ((128 + 96) * 32 * 2.0, 2 * (128 + 96) * 32 * 2.0))

    def test_kernel_without_a_k_loop(self):
        # the tap-row kernel on fragment atoms (W25): fill, barrier, three MFMA steps, barrier,
        # epilogue in one block; its matrix section is the model's one trip
        name = ("_ZN7vaeconv6kernel28tap_row_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicy"
                "INS0_18OneBufferTileShapeILi128ELi96ELi64ELi2ELi1ELi2ELi1EEENS_4arch4CdnaENS7_10"
                "AtomBf16OfILi32EEELb0EEENS0_10TapRowHaloILi16ELi2EEEEEEEvNS0_10ConvParamsE")
        text = "\n".join([
            f"{name}:", "; %bb.0:",
            "\tglobal_load_ushort v1, v[2:3], off", "\ts_waitcnt vmcnt(0)",
            "\tds_write_b128 v4, v[8:11]", "\ts_waitcnt lgkmcnt(0)", "\ts_barrier",
            "\tds_read_b128 v[12:15], v5", "\tds_read_b128 v[16:19], v6", "\ts_waitcnt lgkmcnt(0)",
            "\tv_mfma_f32_32x32x16_bf16 v[20:35], v[12:15], v[16:19], 0",
            "\tv_mfma_f32_32x32x16_bf16 v[20:35], v[12:15], v[16:19], v[20:35]",
            "\tv_mfma_f32_32x32x16_bf16 v[20:35], v[12:15], v[16:19], v[20:35]",
            "\ts_barrier", "\tv_cvt_pk_bf16_f32 v0, v20, v21",
            "\tglobal_store_dwordx4 v[2:3], v[20:23], off", "\ts_endpgm",
            f"\t.amdhsa_kernel {name}", "\t.end_amdhsa_kernel", ".Lfunc_end0:",
            "; Occupancy: 3", ""])
        k = kernel_of(text)
        self.assertEqual(k.decoded["family"], "tap_row")
        c = k.loop_counts
        self.assertEqual((c.mfma, c.barriers), ({"v_mfma_f32_32x32x16_bf16": 3}, 1))
        self.assertEqual(c.global_load_bytes, 0)  # the fill's loads are the prologue's
        self.assertGreater(k.prologue[1].global_load_bytes, 0)
        self.assertGreater(k.epilogue[1].global_store_bytes, 0)
        # its K tile's distinct bytes: 18 x 10 input pixels of 3 channels, 4 chunks per B row
        plan_k = {"family": "tap_row", "bm": 128, "bn": 96, "bk": 64, "threads": 128}
        self.assertEqual(predict.block_tile_bytes(k, plan_k), 18 * 10 * 3 * 2 + 96 * 64.0)
        # another family without a K loop stays an error for predict_all (no loop counts)
        self.assertIsNone(kernel_of(text.replace("tap_row_fragment_conv_kernel",
                                                 "halo_fragment_conv_kernel")).loop_counts)

    def test_issue_start_tiles(self):
        # issue_start.py: every conv on the starting tiles; tap-reduce as today
        import issue_start
        p = {"dtype": "bf16", "cin": 3, "cout": 96, "h": 64, "w": 64, "out_h": 64, "out_w": 64,
             "n": 1, "out_t": 1, "kernel": {"family": "tap_row", "bm": 128, "bn": 96, "bk": 64,
                                            "k_tiles": 1, "geometry": [0, 0, 0, 0]}}
        k = issue_start.start_kernel(p)
        self.assertEqual((k["family"], k["bm"], k["bn"], k["bk"], k["warps_m"], k["stages"],
                          k["vector"], k["geometry"], k["tiles"], k["k_tiles"]),
                         ("implicit_gemm", 128, 96, 32, 4, 2, False, [1, 1, 1, 3], 32, 1))
        up = dict(p, cin=384, cout=192, h=32, w=32, out_h=64, out_w=64,
                  kernel={"family": "implicit_gemm", "bm": 128, "bn": 96, "bk": 32, "k_tiles": 48,
                          "slices_k": 1, "geometry": [1, 1, 1, 2]})
        k = issue_start.start_kernel(up)  # an upsample phase: the input grid, 4 x Cin of K
        self.assertEqual((k["tiles"], k["k_tiles"], k["vector"]), (8 * 2, 48, True))
        tr = dict(p, cout=3, kernel={"family": "tap_reduce", "bm": 128})
        self.assertEqual(issue_start.start_kernel(tr), tr["kernel"])

    def test_slower_than_flydsl(self):
        # issue 25's per-shape target: the pessimistic end against FlyDSL's published time
        def row(i, dt, pess_us, video=False):
            end = type("E", (), {"time_us": pess_us})()
            plan = {"id": i, "dtype": dt}
            if video:
                plan["set"] = "video"
            return {"plan": plan, "pred": type("P", (), {"pess": end})()}
        fly = predict.FLYDSL_SHAPE_US_MI355X
        res = {"mi355x": [row("enc_conv_out", "bf16", fly["enc_conv_out"] + 1),
                          row("enc_conv_out", "fp8", 1e9),
                          row("dec_conv_in", "bf16", fly["dec_conv_in"] - 1),
                          row("enc_conv_out", "bf16", 1e9, video=True)]}
        self.assertEqual(predict.slower_than_flydsl(res), ["enc_conv_out"])
        self.assertEqual(len(fly), 18)

def flat_machine(**kw):
    base = dict(name="t", units=2, schedulers_per_unit=4, clock_ghz=1.0, mma_overlap=1.0,
                valu_cycles=4, salu_cycles=1, other_issue_cycles=1, lds_bytes_per_clk=128,
                lds_latency_cycles=0, barrier_cycles=0, l2_gbs=1e9, hbm_gbs=1e9,
                global_latency_ns=0, launch_overhead_us=0)
    base.update(kw)
    return Machine(**base)


def _staged_trip(first_flush, second_flush, refill_wait=None):
    """A three-stage staged K loop as clang lays it out (two tiles per trip, two loads per tile
    and wave, two MFMAs per tile): the prologue loads slots 0 and 1; each tile waits
    (vmcnt(a), vmcnt(b)) before its slot's two ds_writes, passes the barrier, reloads the slot
    and computes; refill_wait: a vmcnt wait right after the second tile's refill (a copy that
    uses its loads in issue())."""
    mf = "\tv_mfma_f32_32x32x16_bf16 v[32:47], v[16:19], v[20:23], v[32:47]"
    ld = "\tbuffer_load_dwordx4 v[{0}:{1}], v30, s[8:11], 0 offen"
    lines = [f"{NAME}:", "; %bb.0:", ld.format(0, 3), ld.format(4, 7), ld.format(8, 11),
             ld.format(12, 15),
             ".LBB0_1:                                ; =>This Inner Loop Header: Depth=1",
             f"\ts_waitcnt vmcnt({first_flush[0]})", "\tds_write_b128 v31, v[0:3]",
             f"\ts_waitcnt vmcnt({first_flush[1]})", "\tds_write_b128 v31, v[4:7]",
             "\ts_waitcnt lgkmcnt(0)", "\ts_barrier", ld.format(0, 3), ld.format(4, 7), mf, mf,
             f"\ts_waitcnt vmcnt({second_flush[0]})", "\tds_write_b128 v31, v[8:11]",
             f"\ts_waitcnt vmcnt({second_flush[1]})", "\tds_write_b128 v31, v[12:15]",
             "\ts_waitcnt lgkmcnt(0)", "\ts_barrier", ld.format(8, 11), ld.format(12, 15)] + (
                 [] if refill_wait is None else [f"\ts_waitcnt vmcnt({refill_wait})"]) + [mf, mf,
             "\ts_cbranch_scc1 .LBB0_1", "; %bb.2:", "\ts_endpgm"]
    body = [(i + 1, t) for i, t in enumerate(lines[1:])]
    return cdna_asm.analyse(NAME, "gfx950", body, {})


class PrefetchDistance(unittest.TestCase):
    """The prefetch distance read off the loop's vmcnt waits (cdna_asm.loop_waits /
    prefetch_steps) and the chain it gives (model.global_wait)."""

    def test_two_tiles_in_flight(self):
        # each flush leaves the younger slot's two loads pending: both tiles have 2 tiles' work
        k = _staged_trip((3, 2), (3, 2))
        self.assertEqual(k.loop_barriers, 2)
        self.assertEqual(cdna_asm.prefetch_steps(k, 2), [2.0, 2.0])

    def test_first_flush_drains_the_tile_ahead(self):
        # vmcnt(0) before the first slot's flush also waits for the second slot's loads (issued
        # one tile earlier); the second flush then requires nothing new
        k = _staged_trip((1, 0), (2, 2))
        self.assertEqual(cdna_asm.prefetch_steps(k, 2), [1.0, None])

    def test_second_flush_drains(self):
        # vmcnt(0) before the second slot's flush waits for the first slot's refill too (issued
        # one tile back); the next trip's first flush then requires nothing new
        k = _staged_trip((3, 2), (1, 0))
        self.assertEqual(cdna_asm.prefetch_steps(k, 2), [None, 1.0])

    def test_own_loads_waited_in_their_tile(self):
        # the second tile waits for the loads its own refill just issued, before its MFMAs
        k = _staged_trip((3, 2), (3, 2), refill_wait=0)
        self.assertEqual(cdna_asm.prefetch_steps(k, 2), [0.0, None])

    def test_child_loop_laid_out_after_the_parent(self):
        # LLVM may place a child loop (the gather's tap carry) after the parent's last block,
        # returning into the parent by a branch: it still belongs to the main loop
        mf = "\tv_mfma_f32_32x32x16_bf16 v[32:47], v[16:19], v[20:23], v[32:47]"
        lines = [f"{NAME}:", "; %bb.0:", "\tv_mov_b32_e32 v1, 0",
                 ".LBB0_1:                                ; =>This Loop Header: Depth=1",
                 "\ts_barrier", mf, "\ts_cbranch_scc1 .LBB0_3",
                 ".LBB0_2:                                ;   in Loop: Header=BB0_1 Depth=1",
                 mf, "\ts_cbranch_scc1 .LBB0_1",
                 "; %bb.5:", "\ts_endpgm",
                 ".LBB0_3:                                ;   Parent Loop BB0_1 Depth=1",
                 "                                        ; =>  This Inner Loop Header: Depth=2",
                 "\tv_add_u32_e32 v2, 1, v2", "\tv_add_u32_e32 v3, 1, v3",
                 "\ts_cbranch_scc1 .LBB0_3",
                 "\ts_branch .LBB0_2"]
        body = [(i + 1, t) for i, t in enumerate(lines[1:])]
        k = cdna_asm.analyse(NAME, "gfx950", body, {})
        self.assertEqual(sum(k.loop_counts.mfma.values()), 2)
        self.assertEqual(k.loop_counts.valu, 2)  # the child loop's two adds, one trip

    def test_chain(self):
        from model import global_wait
        loop = LoopCounts()
        glat, own = 1000.0, 100.0
        kc = KernelCounts(name="k", loop=loop, prefetch_distance=2)
        self.assertEqual(global_wait(kc, glat, own), 500.0)  # no steps: stages - 1
        kc.prefetch_steps = [2.0, 2.0]
        self.assertEqual(global_wait(kc, glat, own), 500.0)
        kc.prefetch_steps = [1.0, None]  # per two tiles own + max(own, glat)
        self.assertEqual(global_wait(kc, glat, own), (own + glat) / 2)
        kc.prefetch_steps = [0.0]  # waited before any of its own work: in series
        self.assertEqual(global_wait(kc, glat, own), own + glat)
        kc.prefetch_steps = [0.5]
        self.assertEqual(global_wait(kc, glat, own), own + glat - 0.5 * own)
        kc.prefetch_steps = [4.0]  # latency hidden: the work bounds it
        self.assertEqual(global_wait(kc, 200.0, own), own)


class TapChange(unittest.TestCase):
    """The K loop's steady trip (cdna_asm.loop_steady_path) against its longest one, and their
    weighting by the launch's tap-change rate (predict.tap_change_rate / loop_trip_counts)."""

    @staticmethod
    def _kernel():
        # one K tile per trip: an exec-guarded LDS write (the B tile's partial rows), the refill,
        # then the tile cursor's test: same tap (one VALU add) or a tap change (a carry child loop
        # and a refresh), then the MFMA
        lines = [f"{NAME}:", "; %bb.0:", "\ts_mov_b32 s4, 0",
                 ".LBB1_1:                                ; =>This Loop Header: Depth=1",
                 "\ts_waitcnt vmcnt(0)", "\tds_write_b128 v3, v[4:7]",
                 "\ts_and_saveexec_b64 s[8:9], s[2:3]", "\ts_cbranch_execz .LBB1_3",
                 "; %bb.2:                                ;   in Loop: Header=BB1_1 Depth=1",
                 "\tds_write_b128 v3, v[8:11] offset:2048",
                 ".LBB1_3:                                ;   in Loop: Header=BB1_1 Depth=1",
                 "\ts_or_b64 exec, exec, s[8:9]", "\ts_barrier",
                 "\tbuffer_load_dwordx4 v[4:7], v1, s[8:11], 0 offen",
                 "\ts_add_i32 s5, s5, 32", "\ts_cmp_gt_i32 s5, s6", "\ts_cbranch_scc1 .LBB1_5",
                 "; %bb.4:                                ;   in Loop: Header=BB1_1 Depth=1",
                 "\tv_add_u32_e32 v1, 32, v1", "\ts_branch .LBB1_7",
                 ".LBB1_5:                                ;   Parent Loop BB1_1 Depth=1",
                 "                                        ; =>  This Inner Loop Header: Depth=2",
                 "\ts_sub_i32 s5, s5, s6", "\ts_add_i32 s7, s7, 1", "\ts_cmp_ge_i32 s5, s6",
                 "\ts_cbranch_scc1 .LBB1_5",
                 "; %bb.6:                                ;   in Loop: Header=BB1_1 Depth=1",
                 "\ts_mul_i32 s9, s7, s10", "\tv_mov_b32_e32 v1, s9",
                 ".LBB1_7:                                ;   in Loop: Header=BB1_1 Depth=1",
                 "\tds_read_b128 v[10:13], v2", "\ts_waitcnt lgkmcnt(0)",
                 "\tv_mfma_f32_32x32x16_bf16 v[16:31], v[10:13], v[10:13], v[16:31]",
                 "\ts_add_i32 s4, s4, 1", "\ts_cmp_lt_i32 s4, s12", "\ts_cbranch_scc1 .LBB1_1",
                 "; %bb.8:", "\ts_endpgm"]
        body = [(i + 1, t) for i, t in enumerate(lines[1:])]
        return cdna_asm.analyse(NAME, "gfx950", body, {})

    def test_steady_and_longest_trips(self):
        k = self._kernel()
        s, lg, u = k.steady_counts, k.longest_counts, k.loop_counts
        for c in (s, lg, u):
            self.assertEqual(c.mfma, {"v_mfma_f32_32x32x16_bf16": 1})
            self.assertEqual(c.lds_write_bytes, 2 * 64 * 16)  # the guarded write is never skipped
            self.assertEqual(c.global_load_bytes, 64 * 16)
        # steady: saveexec, or, add, cmp (the test), add, cmp (the loop)
        self.assertEqual((s.salu, s.valu), (6, 1))
        # longest: the carry (one trip of the child loop) and the refresh instead of the add
        self.assertEqual((lg.salu, lg.valu), (10, 1))
        self.assertEqual((u.salu, u.valu), (10, 2))  # the union: both sides of the test

    def test_weighting(self):
        k = self._kernel()
        self.assertIs(predict.loop_trip_counts(k, None), k.loop_counts)
        c = predict.loop_trip_counts(k, 0.25)
        self.assertAlmostEqual(c.salu, 6 + 0.25 * 4)
        self.assertAlmostEqual(c.valu, 1)
        self.assertEqual(c.mfma, {"v_mfma_f32_32x32x16_bf16": 1})
        self.assertEqual(predict.loop_trip_counts(k, 1.0).salu, k.longest_counts.salu)

    def test_rate(self):
        def plan(cin, bk, tiles, vector=True, family="implicit_gemm"):
            return {"cin": cin, "kernel": {"family": family, "vector": vector, "bk": bk,
                                           "k_tiles": tiles}}
        # Cin 96, BK 32: the third advance of every tap carries (27 taps x 3 tiles)
        self.assertAlmostEqual(predict.tap_change_rate(plan(96, 32, 81)), 26 / 80)
        # Cin 384, BK 16: one in 24
        self.assertAlmostEqual(predict.tap_change_rate(plan(384, 16, 216)), 8 / 215)
        # BK above Cin: every K tile reaches another tap
        self.assertEqual(predict.tap_change_rate(plan(16, 32, 9)), 1.0)
        # Cin 96, BK 64: every next tile reaches past its tap's end, so every advance refreshes
        self.assertEqual(predict.tap_change_rate(plan(96, 64, 13)), 1.0)
        # Cin 192, BK 64: two of every three tiles stay inside the tap
        self.assertAlmostEqual(predict.tap_change_rate(plan(192, 64, 27)), 8 / 26)
        self.assertIsNone(predict.tap_change_rate(plan(3, 32, 4, vector=False)))
        self.assertIsNone(predict.tap_change_rate(plan(96, 32, 9, family="tap_reduce")))


class Bounds(unittest.TestCase):
    def test_mfma_bound(self):
        # 4 waves x 100 MFMA cycles / 4 SIMDs = 100 cycles per block K tile; 2 blocks per unit,
        # 2 units, 8 blocks: 2 rounds x 10 K tiles x 2 x 100 = 4000 cycles = 4 us at 1 GHz.
        k = KernelCounts("k", LoopCounts(mma_cycles=100))
        p = run(k, Launch(blocks=8, waves_per_block=4, ktiles=10, blocks_per_unit=2,
                          unique_bytes=0), flat_machine())
        self.assertAlmostEqual(p.time_us, 4.0)
        self.assertEqual(p.bound, "MFMA")

    def test_lds_bound_with_ways(self):
        # 4 waves x 1024 B x 2 ways / 128 B/clk = 64 cycles > MFMA 40.
        k = KernelCounts("k", LoopCounts(mma_cycles=40, lds_read_bytes=1024, lds_read_ways=2))
        p = run(k, Launch(blocks=2, waves_per_block=4, ktiles=1, blocks_per_unit=1,
                          unique_bytes=0), flat_machine())
        self.assertAlmostEqual(p.time_us, 0.064)
        self.assertEqual(p.bound, "LDS")

    def test_latency_and_tail(self):
        # 1000 ns latency, prefetch distance 1, one block per unit: each K tile waits 1000 cycles;
        # 3 blocks on 2 units = 2 rounds (the second partial): 2 x 5 x 1000 cycles = 10 us, plus
        # per round a prologue and an epilogue that each wait one round trip: 2 x 2 x 1 us.
        k = KernelCounts("k", LoopCounts(mma_cycles=4))
        p = run(k, Launch(blocks=3, waves_per_block=4, ktiles=5, blocks_per_unit=1,
                          unique_bytes=0), flat_machine(global_latency_ns=1000))
        self.assertAlmostEqual(p.time_us, 14.0)
        self.assertAlmostEqual(p.nom.bounds_us["tail"], 10.0 - 7.5)
        self.assertAlmostEqual(p.nom.bounds_us["prologue/epilogue"], 4.0)
        self.assertEqual(p.bound, "tail")

    def test_hbm_and_range(self):
        k = KernelCounts("k", LoopCounts(mma_cycles=1))
        m = flat_machine(hbm_gbs=Range(1000, 500))
        p = run(k, Launch(blocks=1, waves_per_block=4, ktiles=1, blocks_per_unit=1,
                          unique_bytes=1e6), m)
        self.assertAlmostEqual(p.opt.time_us, 1.0)
        self.assertAlmostEqual(p.pess.time_us, 2.0)
        self.assertAlmostEqual(p.time_us, 1e6 / 750e9 * 1e6)
        self.assertEqual(p.bound, "HBM")

    def test_issue_overlap(self):
        # 100 MFMA cycles and 50 VALU x 4 cycles: overlapped 200 (issue) vs serial 300.
        k = KernelCounts("k", LoopCounts(mma_cycles=100, valu=50))
        L = Launch(blocks=2, waves_per_block=4, ktiles=1, blocks_per_unit=1, unique_bytes=0)
        p = run(k, L, flat_machine(mma_overlap=Range(1.0, 0.0)))
        self.assertAlmostEqual(p.opt.time_us, 0.2)
        self.assertAlmostEqual(p.pess.time_us, 0.3)
        self.assertEqual(p.pess.bound, "issue")

    def test_chain_holds_own_work(self):
        # one block per unit: 400 MFMA cycles of own work (4 waves x 400 / 4 SIMDs) exceed the
        # 100-cycle global wait, then 2 LDS waits x 50 and a 30-cycle barrier follow in series:
        # 530 cycles per K tile (the max of the throughput terms alone would say 400).
        k = KernelCounts("k", LoopCounts(mma_cycles=400, lgkm_waits=2, barriers=1))
        L = Launch(blocks=2, waves_per_block=4, ktiles=10, blocks_per_unit=1, unique_bytes=0)
        p = run(k, L, flat_machine(global_latency_ns=100, lds_latency_cycles=50, barrier_cycles=30))
        self.assertAlmostEqual(p.nom.bounds_us["latency"], 5.3)
        self.assertEqual(p.bound, "latency")
        # two blocks per unit: 2 x 400 = 800 > 530, the MFMA term sets the time again
        L2 = Launch(blocks=4, waves_per_block=4, ktiles=10, blocks_per_unit=2, unique_bytes=0)
        self.assertEqual(run(k, L2, flat_machine(global_latency_ns=100, lds_latency_cycles=50,
                                                 barrier_cycles=30)).bound, "MFMA")

    def test_lds_waits_by_distance(self):
        # three LDS waits per K tile: one right after its read (gap 0: a whole 50-cycle latency),
        # one 30 cycles of own work after it (20 exposed), one requiring nothing new (inf: 0),
        # and a fourth without a known distance (a whole latency): 50 + 20 + 0 + 50
        c = LoopCounts(mma_cycles=400, lgkm_waits=4, barriers=1,
                       lgkm_gaps={0.0: 1.0, 30.0: 1.0, math.inf: 1.0})
        self.assertAlmostEqual(model.lds_wait(c, 50.0), 120.0)
        k = KernelCounts("k", c)
        L = Launch(blocks=2, waves_per_block=4, ktiles=10, blocks_per_unit=1, unique_bytes=0)
        p = run(k, L, flat_machine(global_latency_ns=100, lds_latency_cycles=50, barrier_cycles=30))
        self.assertAlmostEqual(p.nom.bounds_us["latency"], 5.5)  # (400 + 120 + 30) x 10 cycles

    def test_block_tile_fetch_and_mall_split(self):
        # 4 waves request 1000 B each per K tile but the block's tile is 2000 B: L2 fetches
        # 2000 B per block-K-tile at the optimistic and nominal ends, 4000 B at the pessimistic.
        k = KernelCounts("k", LoopCounts(mma_cycles=1, global_load_bytes=1000,
                                         block_tile_bytes=2000))
        L = Launch(blocks=100, waves_per_block=4, ktiles=10, blocks_per_unit=1,
                   unique_bytes=1e5, unique_read_bytes=1e5)
        m = flat_machine(l2_gbs=1.0, mall_gbs=Range(1.0, 0.5), l2_domains=8, hbm_gbs=1e9)
        p = run(k, L, m)
        self.assertAlmostEqual(p.opt.bounds_us["L2"], 2e6 / 1e9 * 1e6)
        self.assertAlmostEqual(p.pess.bounds_us["L2"], 4e6 / 1e9 * 1e6)
        # MALL: floor 8 x 1e5 = 8e5 B (optimistic), every fetch (pessimistic), midpoint nominal
        self.assertAlmostEqual(p.opt.bounds_us["MALL"], 8e5 / 1e9 * 1e6)
        self.assertAlmostEqual(p.pess.bounds_us["MALL"], 4e6 / 0.5e9 * 1e6)
        self.assertAlmostEqual(p.nom.bounds_us["MALL"], 0.5 * (8e5 + 2e6) / 0.75e9 * 1e6)
        # one L2 (NVIDIA): no MALL term
        self.assertNotIn("MALL", run(k, L, flat_machine(l2_gbs=1.0)).nom.bounds_us)

    def test_halo_patch_fetched_once_per_block(self):
        # a halo-kernel block fetches its patch once besides its K tiles: 100 blocks x (10 K
        # tiles x 2000 B + 5000 B) at the optimistic end
        k = KernelCounts("k", LoopCounts(mma_cycles=1, global_load_bytes=500,
                                         block_tile_bytes=2000))
        L = Launch(blocks=100, waves_per_block=4, ktiles=10, blocks_per_unit=1,
                   unique_bytes=1e5, block_extra_fetch_bytes=5000)
        p = run(k, L, flat_machine(l2_gbs=1.0, hbm_gbs=1e9))
        self.assertAlmostEqual(p.opt.bounds_us["L2"], 100 * (10 * 2000 + 5000) / 1e9 * 1e6)
        # the patch of an entry: (16 + 2) x (8 + 2) pixels x 96 bf16 channels; other families none
        plan = {"cin": 96, "dtype": "bf16", "kernel": {"family": "halo", "patch": [16, 8]}}
        self.assertEqual(halo_patch.halo_patch_bytes(plan), 18 * 10 * 96 * 2)
        plan["kernel"]["family"] = "implicit_gemm"
        self.assertEqual(halo_patch.halo_patch_bytes(plan), 0.0)

    def test_combine_adds(self):
        k = KernelCounts("k", LoopCounts(mma_cycles=100))
        L = Launch(blocks=8, waves_per_block=4, ktiles=10, blocks_per_unit=2, unique_bytes=0)
        one = run(k, L, flat_machine())
        four = combine([one] * 4, "x")
        self.assertAlmostEqual(four.time_us, 4 * one.time_us)
        self.assertEqual(four.bound, "MFMA")


class EndToEnd(unittest.TestCase):
    """Every seed shape, both targets, both dtypes: one kernel, a finite prediction."""

    def test_real_build(self):
        build = os.environ.get("VAECONV_BUILD")
        if not build:
            self.skipTest("VAECONV_BUILD not set (ctest sets it)")
        plan = predict.load_plan(build, None)
        lds_rows, _ = predict.load_lds_ways(build)
        res = predict.predict_all(build, plan, lds_rows)
        js = predict.build_json(res, "")
        # issue 25's target rows: the pessimistic total, split by bound without loss
        trs = predict.target_rows(res)
        self.assertEqual(len(trs), 4)
        for tr in trs:
            self.assertAlmostEqual(sum(tr["by_bound_ms"].values()), tr["pess_ms"], places=9)
            self.assertAlmostEqual(tr["pess_ms"], js[tr["target"]][f"{tr['dtype']}_58_ms_range"][1],
                                   delta=0.01)
            self.assertEqual(tr["met"], tr["pess_ms"] <= tr["goal_ms"])
        for t in ("mi300x", "mi355x"):
            rows = res[t]
            # 18 seed shapes and 7 video convs (issue 27), bf16 and fp8 each
            self.assertEqual(len([r for r in rows if not predict.is_video(r["plan"])]), 36)
            self.assertEqual(len([r for r in rows if predict.is_video(r["plan"])]), 14)
            self.assertEqual(len(js[t]["video_shapes"]), 14)
            for r in rows:
                for end in ("opt", "nom", "pess"):
                    v = getattr(r["pred"], end).time_us
                    self.assertTrue(math.isfinite(v) and v > 0, (t, r["plan"]["id"], end, v))
                self.assertLessEqual(r["pred"].opt.time_us, r["pred"].time_us + 1e-9)
                self.assertLessEqual(r["pred"].time_us, r["pred"].pess.time_us + 1e-9)
                # no prediction beats the MFMA roofline of its dtype, counting the FLOPs the
                # kernel executes (the upsample phases do 4/9 of the direct form's)
                k = r["plan"]["kernel"]
                executed = (2.0 * k["bm"] * k["bn"] * k["bk"] * k["tiles"] * k["k_tiles"] *
                            k["launches"])
                peak = machines.const(t, "peak_flops_fp8" if r["plan"]["dtype"] == "fp8"
                                      else "peak_flops_bf16")
                self.assertLess(executed / (r["pred"].opt.time_us * 1e-6), peak, r["plan"]["id"])
                # every planned kernel's epilogue is read: a path from the loop's exit to the
                # end that stores the tile
                epi = r["kernel"].epilogue[1]
                self.assertGreater(epi.global_store_bytes, 0, (t, r["plan"]["id"]))
            for key in ("bf16_58_ms", "fp8_58_ms", "bf16_hot1328_ms"):
                self.assertTrue(math.isfinite(js[t][key]))
        # each video conv paired with the instance of its own A loader in that target's
        # assembly (cached causal / temporal), whose loop the counts came from
        for t in ("mi300x", "mi355x"):
            for r in (r for r in res[t] if predict.is_video(r["plan"])):
                p = r["plan"]
                want = "cached" if p["kind"] == "causal" else "temporal"
                self.assertEqual(p["kernel"]["loader"], want, p["id"])
                self.assertEqual(r["kernel"].decoded.get("loader"), want, p["id"])
                self.assertIn(f" {want} ", p["kernel"]["name"], p["id"])
                self.assertEqual(p["kernel"]["launches"], 2 if p["stride_t"] == 1 and
                                 want == "temporal" else 1, p["id"])
        # the portable kernels cannot beat the 2.5 PFLOP/s roofline of the 58-call set
        self.assertGreater(js["mi355x"]["bf16_58_ms_range"][0], 2.7)


if __name__ == "__main__":
    unittest.main()
