"""bench/profile_table.py on a hand-written sample of Nsight Compute's text output
(ncu_vendor_sample.txt: `ncu --profile-from-start off --section ... --metrics ...` over
`vaeconv_bench --profile --shape enc_e3_mid__dec_mid_d0`, five brackets, six kernels, ncu 2025's
print format, one duration in msecond, one raw-metric table printed before the sections).
Run by ctest (profile_table, label host) or `python3 -m unittest discover -s bench/tests`.
"""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import profile_table as pt  # noqa: E402

SAMPLE = os.path.join(HERE, "ncu_vendor_sample.txt")


def sample_text():
    with open(SAMPLE) as f:
        return f.read()


def run_main(text):
    """(exit status, stdout) of profile_table.main on a file holding text."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ncu-vendor-x.txt")
        with open(path, "w") as f:
            f.write(text)
        buf = io.StringIO()
        with redirect_stdout(buf):
            rc = pt.main([path])
    return rc, buf.getvalue()


class ParseSample(unittest.TestCase):
    def setUp(self):
        self.launches, self.kernels, self.notes = pt.parse(sample_text())
        self.unmatched = pt.assign(self.launches, self.kernels)

    def test_brackets_label_every_kernel_in_launch_order(self):
        self.assertEqual(self.unmatched, 0)
        self.assertEqual(self.notes, [])
        self.assertEqual([k.label for k in self.kernels],
                         ["vaeconv bf16", "vaeconv fp8", "cudnn legacy", "cudnn legacy", "cudnn graph",
                          "cudnn fp8 graph"])
        self.assertEqual({k.row for k in self.kernels}, {"enc_e3_mid__dec_mid_d0"})
        self.assertEqual(self.kernels[3].detail, "conv + bias: own bias kernel")

    def test_speed_of_light_and_units(self):
        bf16, legacy, bias = self.kernels[0], self.kernels[2], self.kernels[3]
        self.assertAlmostEqual(bf16.duration_us(), 125.44)
        self.assertAlmostEqual(legacy.duration_us(), 201.74)  # 0.20174 msecond
        self.assertAlmostEqual(bf16.value("Speed Of Light", "Compute (SM) Throughput"), 71.38)
        self.assertAlmostEqual(bf16.value("Speed Of Light", "DRAM Throughput"), 18.40)
        self.assertAlmostEqual(bias.value("Speed Of Light", "DRAM Throughput"), 84.02)
        self.assertAlmostEqual(bf16.value("Speed Of Light", "L2 Cache Throughput"), 47.93)
        # "Memory Throughput" is in two sections: the section asked for wins.
        self.assertAlmostEqual(bf16.value("Speed Of Light", "Memory Throughput"), 47.93)
        self.assertAlmostEqual(bf16.value("Memory Workload", "Memory Throughput"), 603.12)
        self.assertAlmostEqual(bias.value("Memory Workload", "Memory Throughput"), 2812.44)

    def test_launch_occupancy_cluster(self):
        bf16, graph = self.kernels[0], self.kernels[4]
        self.assertEqual(bf16.grid, (256, 1, 1))
        self.assertEqual(graph.block, (384, 1, 1))
        self.assertEqual(bf16.value("Launch Statistics", "Registers Per Thread"), 168)
        self.assertAlmostEqual(bf16.smem_kib(), 196610 / 1024)
        self.assertAlmostEqual(self.kernels[3].smem_kib(), 0.0)
        self.assertAlmostEqual(graph.value("Occupancy", "Achieved Occupancy"), 18.52)
        self.assertEqual(bf16.cluster(), "-")
        self.assertEqual(graph.cluster(), "2x1x1")
        self.assertEqual(bf16.metric("Launch Statistics", "Function Cache Configuration"), ("", "CachePreferNone"))

    def test_tensor_pipe_and_stalls(self):
        bf16, fp8, bias = self.kernels[0], self.kernels[1], self.kernels[3]
        self.assertEqual(bf16.tensor(), (61.20, "wgmma"))
        self.assertEqual(fp8.tensor(), (38.70, "wgmma"))  # its metrics table came before the sections
        self.assertEqual(bias.tensor(), (0.0, ""))
        # "selected" (1.00 a issue by definition) is no stall.
        self.assertEqual(bf16.stalls(), [(12.37, "gmma"), (10.41, "long_scoreboard"), (8.02, "barrier")])
        self.assertEqual(bias.stalls(2), [(18.02, "long_scoreboard"), (2.20, "lg_throttle")])
        self.assertNotIn("selected", [r for _, r in bf16.stalls(top=100)])
        self.assertIn("not_selected", [r for _, r in bf16.stalls(top=100)])
        self.assertAlmostEqual(bf16.value("Warp State", "Warp Cycles Per Issued Instruction"), 38.96)

    def test_short_names(self):
        self.assertEqual(pt.short_name(self.kernels[0].name), "conv_kernel 128x192x64 w2x1 s4 wgmma192 causal")
        self.assertEqual(pt.short_name(self.kernels[1].name),
                         "conv_kernel 128x192x128 w2x1 s3 wgmma192 e4m3 causal")
        self.assertEqual(pt.short_name(self.kernels[3].name), "bias_add_kernel")
        self.assertEqual(pt.short_name(self.kernels[4].name),
                         "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32… tile 256x128x64 wg 2x1x1")
        self.assertEqual(pt.short_name(
            "void vaeconv::kernel::conv_kernel<vaeconv::kernel::TilePolicy<vaeconv::kernel::TileShape<128, 96, 64, "
            "2, 1, 4, 2>, vaeconv::arch::Nvidia, vaeconv::arch::WgmmaAtom<96, false>, false>, "
            "vaeconv::kernel::CachedCausalGeometry, true>(vaeconv::kernel::ConvParams)"),
            "conv_kernel 128x96x64 w2x1 s4 wgmma96 cachedcausal")


class Markdown(unittest.TestCase):
    def test_sample_table_and_ratios(self):
        rc, out = run_main(sample_text())
        self.assertEqual(rc, 0, out)
        self.assertIn("### enc_e3_mid__dec_mid_d0 (ncu-vendor-x.txt)", out)
        lines = [l for l in out.splitlines() if l.startswith("| ")]
        self.assertEqual(len(lines), 7)  # the header and six kernels
        self.assertEqual(len({l.count("|") for l in lines}), 1)  # every line has the header's columns
        self.assertIn("| vaeconv bf16 | conv_kernel 128x192x64 w2x1 s4 wgmma192 causal [1] | 125.4 | 71.4 | "
                      "61.2 wgmma | 18.4 | 47.9 | 49.1 | 12.4 / 12.5 | 168 | 192.0 | 256x1x1 × 256 | - | 38.96 | "
                      "gmma 12.37, long_scoreboard 10.41, barrier 8.02 |", out)
        self.assertIn("cudnn legacy 211.6 µs (2 kernels)", out)
        # 125.44 / min(201.74 + 9.82, 108.31); 99.08 / 125.44; 99.08 / 71.19
        self.assertIn("vaeconv bf16 / the faster cuDNN bf16 engine 1.16", out)
        self.assertIn("vaeconv fp8 / vaeconv bf16 0.79", out)
        self.assertIn("vaeconv fp8 / cudnn fp8 graph 1.39", out)
        self.assertIn("6. `sm90_xmma_fprop_implicit_gemm_e4m3e4m3", out)

    def test_no_result_fails(self):
        text = ("==PROF== Connected to process 77 (/x/vaeconv_bench)\n"
                "vaeconv_bench on NVIDIA H100 80GB HBM3, median of 1 runs\n"
                "==ERROR== The application returned an error code (2).\n")
        rc, out = run_main(text)
        self.assertEqual(rc, 1)
        self.assertIn("no profile result", out)
        self.assertIn("returned an error code (2)", out)

    def test_failed_bracket_fails(self):
        text = sample_text().replace("end enc_e3_mid__dec_mid_d0 | cudnn graph | ok",
                                     "end enc_e3_mid__dec_mid_d0 | cudnn graph | FAILED: cudaProfilerStart: boom")
        rc, out = run_main(text)
        self.assertEqual(rc, 1)
        self.assertIn("**bracket enc_e3_mid__dec_mid_d0 / cudnn graph: FAILED: cudaProfilerStart: boom**", out)

    def test_a_result_without_profiling_line_fails_and_the_rest_keep_their_brackets(self):
        text = sample_text().replace('==PROF== Profiling "bias_add_kernel": 0%....50%....100% - 38 passes\n', "")
        launches, kernels, _ = pt.parse(text)
        self.assertEqual(len(launches), 5)
        self.assertEqual(pt.assign(launches, kernels), 1)
        self.assertEqual([k.label for k in kernels],
                         ["vaeconv bf16", "vaeconv fp8", "cudnn legacy", None, "cudnn graph", "cudnn fp8 graph"])
        rc, out = run_main(text)
        self.assertEqual(rc, 1)
        self.assertIn("not matched to a bracket", out)

    def test_a_profiling_line_without_result_is_skipped(self):
        # ncu failed on the bias kernel: its "Profiling" line stays, its result is missing.
        text = sample_text()
        start = text.index("  void vaeconv_bench::vendor::bias_add_kernel")
        end = text.index("  sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize256x128x64")
        launches, kernels, _ = pt.parse(text[:start] + text[end:])
        self.assertEqual((len(launches), len(kernels)), (6, 5))
        self.assertEqual(pt.assign(launches, kernels), 0)
        self.assertEqual([k.label for k in kernels],
                         ["vaeconv bf16", "vaeconv fp8", "cudnn legacy", "cudnn graph", "cudnn fp8 graph"])

    def test_truncated_profiling_names_as_ncu_2025_prints_them(self):
        # ncu 2025.3 (session 19, H100): `==PROF== Profiling "NAME..." - K: ...`, NAME cut short.
        import re
        k = iter(range(100))
        text = re.sub(r'==PROF== Profiling "([^"]*)":',
                      lambda m: '==PROF== Profiling "%s" - %d:' % (
                          m.group(1)[:30] + "..." if len(m.group(1)) > 30 else m.group(1), next(k)),
                      sample_text())
        self.assertIn('Profiling "sm90_xmma_fprop_implicit_gemm_..." - 2:', text)
        launches, kernels, _ = pt.parse(text)
        self.assertEqual(pt.assign(launches, kernels), 0)
        self.assertEqual([k.label for k in kernels],
                         ["vaeconv bf16", "vaeconv fp8", "cudnn legacy", "cudnn legacy", "cudnn graph",
                          "cudnn fp8 graph"])
        # a truncated name that is not the kernel's start does not match
        self.assertFalse(pt.names_match("cudnn_generated_fort_native_s...", "sm90_xmma_fprop"))


if __name__ == "__main__":
    unittest.main()
