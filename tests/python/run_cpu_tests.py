"""ctest python_torch_cpu: the package's CPU tests. Exit 77 (ctest: skipped) with a message when
PyTorch is not importable by this interpreter; never a pass without running them."""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
try:
    import torch  # noqa: F401
except Exception as e:
    print(f"python_torch_cpu: PyTorch is not importable by {sys.executable} ({e}); "
          "the vaeconv PyTorch package is not tested here (the toolchain root has python3-torch)")
    sys.exit(77)
package_dir = os.path.join(os.path.dirname(os.path.dirname(here)), "python")
sys.path.insert(0, package_dir)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (package_dir, os.environ.get("PYTHONPATH")) if p)
suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py")
result = unittest.TextTestRunner(verbosity=2).run(suite)
print(f"python_torch_cpu: {result.testsRun} run, {len(result.failures) + len(result.errors)} failed, "
      f"{len(result.skipped)} skipped")
sys.exit(0 if result.wasSuccessful() else 1)
