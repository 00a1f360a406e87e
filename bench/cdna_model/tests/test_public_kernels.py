"""The model's validation on public AMD kernels (bench/cdna_model/public_kernels.py): the committed
facts are complete and consistent, the predictions are finite and ordered, and the
"public_kernels" object of validation.json is what the current model and constants give (so the
docs cannot show stale errors)."""
import copy
import json
import math
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import public_kernels as pk  # noqa: E402


def load_records():
    with open(pk.DEFAULT_JSON) as f:
        return json.load(f)["kernels"]


class FactsTest(unittest.TestCase):
    def test_every_kernel_has_its_citation_and_provenance(self):
        recs = load_records()
        self.assertGreaterEqual(len(recs), 2, "the issue asks for at least two public kernels")
        self.assertEqual(sorted(r["id"] for r in recs), sorted(e["id"] for e in pk.KERNELS),
                         "public_kernels.json is out of date with KERNELS: rerun extract")
        for r in recs:
            pub, src = r["published"], r["source"]
            for key in ("ms", "url", "date", "hardware"):
                self.assertTrue(pub.get(key), f"{r['id']}: published figure lacks {key}")
            self.assertTrue(pub.get("title"), f"{r['id']}: published figure lacks a title")
            for key in ("repo", "commit"):
                self.assertTrue(src.get(key), f"{r['id']}: source lacks {key}")
            self.assertTrue(r.get("compiler"), f"{r['id']}: no compiler recorded")
            self.assertIn(r["target"], ("gfx942", "gfx950"))
            self.assertIn(r["machine"], ("mi300x", "mi355x"))

    def test_published_tflops_matches_the_published_time(self):
        for r in load_records():
            pub = r["published"]
            tflops = pk.problem_flops(r["problem"]) / (pub["ms"] * 1e-3) / 1e12
            self.assertAlmostEqual(tflops / pub["tflops"], 1.0, delta=0.01, msg=r["id"])

    def test_geometry_accounts_for_every_flop(self):
        for r in load_records():
            g = pk.check_geometry(r)
            self.assertGreater(g["loop_share_of_flops"], 0.5, r["id"])

    def test_a_wrong_trip_count_is_refused(self):
        r = copy.deepcopy(load_records()[0])
        r["trips"] += 1
        with self.assertRaises(ValueError):
            pk.check_geometry(r)
        r = copy.deepcopy(load_records()[0])
        r["grid"] = [r["grid"][0] // 2] + r["grid"][1:]
        with self.assertRaises(ValueError):
            pk.check_geometry(r)

    def test_only_facts_are_committed(self):
        # counts and citations, not assembly or source: a few tens of kilobytes at most
        self.assertLess(os.path.getsize(pk.DEFAULT_JSON), 200_000)
        with open(pk.DEFAULT_JSON) as f:
            text = f.read()
        # an instruction with operands, a source line: the signs of pasted assembly or code
        for pattern in (r"\b(v_mfma\w*|ds_read\w*|buffer_load\w*|s_waitcnt)\s+[vs]\[?\d",
                        r"__global__", r"#include", r"\.amdhsa_"):
            found = re.search(pattern, text)
            self.assertFalse(found, f"public_kernels.json holds code or assembly "
                                    f"({found.group(0) if found else ''}): counts only")


class PredictionTest(unittest.TestCase):
    def test_predictions_are_finite_and_ordered(self):
        part = pk.predict_all(load_records())
        self.assertEqual(part["count"], len(load_records()))
        for row in part["kernels"]:
            lo, hi = row["predicted_range_us"]
            self.assertTrue(all(math.isfinite(x) and x > 0 for x in (lo, hi, row["predicted_us"])),
                            row["id"])
            self.assertLessEqual(lo, row["predicted_us"] + 1e-6, row["id"])
            self.assertLessEqual(row["predicted_us"], hi + 1e-6, row["id"])
            want = 100.0 * (row["predicted_us"] - row["published"]["us"]) / row["published"]["us"]
            self.assertAlmostEqual(row["error_pct"], want, delta=0.06, msg=row["id"])
            self.assertEqual(row["published_within_range"],
                             lo <= row["published"]["us"] <= hi, row["id"])

    def test_markdown_section_lists_every_kernel(self):
        part = pk.predict_all(load_records())
        md = pk.markdown_section(part)
        for row in part["kernels"]:
            self.assertIn(row["name"], md)
        self.assertIn(f"over {part['count']} kernels", md)

    def test_validation_file_holds_the_current_prediction(self):
        path = os.path.join(os.path.dirname(HERE), "validation.json")
        with open(path) as f:
            stored = json.load(f).get("public_kernels")
        self.assertIsNotNone(stored, "validation.json has no public_kernels object: run "
                             "python3 bench/cdna_model/public_kernels.py predict --validation "
                             "bench/cdna_model/validation.json")
        fresh = json.loads(json.dumps(pk.predict_all(load_records())))
        self.assertEqual(stored, fresh, "validation.json's public_kernels object is stale (the "
                         "model or its constants changed): rerun python3 bench/cdna_model/"
                         "public_kernels.py predict --validation bench/cdna_model/validation.json")


if __name__ == "__main__":
    unittest.main()
