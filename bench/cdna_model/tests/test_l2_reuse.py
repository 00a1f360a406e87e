"""The L2 window model (l2_reuse.py, model step 12): the XCD tile order it evaluates, its
calibration on HipKittens' measured L2 hit rates, and how the MALL term uses it."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import l2_reuse  # noqa: E402
import machines  # noqa: E402
from model import KernelCounts, Launch, LoopCounts, Range, predict  # noqa: E402


class TileOrder(unittest.TestCase):
    def test_domain_contiguous_is_a_permutation_with_contiguous_shares(self):
        for blocks in (1, 7, 8, 9, 64, 513, 8192, 13778):
            for domains in (1, 6, 8):
                tiles = [l2_reuse.domain_contiguous(b, blocks, domains) for b in range(blocks)]
                self.assertEqual(sorted(tiles), list(range(blocks)), (blocks, domains))
                for d in range(domains):  # XCD d runs one run of consecutive tiles, in order
                    share = tiles[d::domains]
                    self.assertEqual(share, list(range(share[0], share[0] + len(share)))
                                     if share else [], (blocks, domains, d))

    def test_identity_for_one_domain(self):
        self.assertEqual([l2_reuse.domain_contiguous(b, 10, 1) for b in range(10)], list(range(10)))


class Calibration(unittest.TestCase):
    def test_predictions_of_the_measured_schedules(self):
        rows = l2_reuse.calibration()
        self.assertEqual(len(rows), 6)
        # five of six within 4 points; the 9216 row-major order over-predicted (73 vs 55 %)
        close = [r for r in rows if abs(r["predicted"] - r["l2_hit"]) <= 0.04]
        self.assertEqual(len(close), 5, rows)
        worst = min(rows, key=lambda r: r["ratio"])
        self.assertEqual((worst["n"], worst["schedule"]), (9216, "row"))
        self.assertAlmostEqual(worst["predicted"], 0.727, places=3)

    def test_machine_scale_is_the_calibration(self):
        pess, nom = l2_reuse.hit_scale()
        for t in ("mi300x", "mi355x"):
            r = machines.const(t, "l2_window_hit_scale")
            self.assertEqual((r.opt, r.pess, r.at("nom")), (1.0, pess, nom))
        self.assertLess(pess, nom)
        self.assertLessEqual(nom, 1.0)


class ConvHit(unittest.TestCase):
    A, B = 8192.0, 6144.0

    def test_one_cout_tile_shares_b_only(self):
        # every block of a window has its own pixel block: A never shared, B by all 64
        h = l2_reuse.conv_hit(4096, 1, 1, 8, 64, self.A, self.B)
        self.assertAlmostEqual(h, 1 - (64 * self.A + self.B) / (64 * (self.A + self.B)), places=9)

    def test_domain_order_shares_a_across_cout_tiles(self):
        # block order: the 4 Cout tiles of a pixel block on 4 XCDs; domain order: on one
        plain = l2_reuse.conv_hit(4096, 4, 1, 8, 64, self.A, self.B)
        ordered = l2_reuse.conv_hit(4096, 4, 8, 8, 64, self.A, self.B)
        self.assertAlmostEqual(ordered, 1 - (16 * self.A + 4 * self.B) / (64 * (self.A + self.B)),
                               places=9)
        self.assertGreater(ordered, plain + 0.3)


class MallTerm(unittest.TestCase):
    def launch(self, hit):
        return Launch(blocks=4096, waves_per_block=4, ktiles=100, blocks_per_unit=2,
                      unique_bytes=1e8, unique_read_bytes=5e7, l2_hit=hit)

    def test_hit_cuts_the_fetches_not_below_the_floor(self):
        m = machines.machine("mi355x")
        k = KernelCounts(name="t", loop=LoopCounts(mma_cycles=1.0, global_load_bytes=4096.0))
        mall = lambda hit, end: getattr(predict(k, self.launch(hit), m), end).bounds_us["MALL"]  # noqa: E731
        fetch = 4096 * 100 * 4 * 4096.0
        gbs = m.mall_gbs
        self.assertAlmostEqual(mall(None, "pess"), fetch / (gbs.pess * 1e9) * 1e6, places=6)
        self.assertAlmostEqual(mall(Range(0.9, 0.5, 0.7), "pess"),
                               0.5 * fetch / (gbs.pess * 1e9) * 1e6, places=6)
        self.assertAlmostEqual(mall(Range(0.9, 0.5, 0.7), "nom"),
                               0.3 * fetch / (gbs.at("nom") * 1e9) * 1e6, places=6)
        floor = 8 * 5e7 / (gbs.pess * 1e9) * 1e6  # every XCD reads every input byte once
        self.assertAlmostEqual(mall(Range(1.0, 1.0, 1.0), "pess"), floor, places=6)


if __name__ == "__main__":
    unittest.main()
