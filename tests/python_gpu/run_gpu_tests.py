"""ctest python_torch_gpu: the package's GPU tests. Exit 77 (ctest: skipped) with the reason when
PyTorch or a GPU is missing; never a pass without running them. PYTHONPATH must reach the build's
copy of the package (<build>/python) and, for the VAE tests, diffusers' src/ (else those skip)."""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
try:
    import torch
    gpu = torch.cuda.is_available()
except Exception as e:
    print(f"python_torch_gpu: PyTorch is not importable ({e}): not run")
    sys.exit(77)
if not gpu:
    print("python_torch_gpu: no GPU visible to PyTorch: not run")
    sys.exit(77)
suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py")
result = unittest.TextTestRunner(verbosity=2).run(suite)
print(f"python_torch_gpu: {result.testsRun} run, {len(result.failures) + len(result.errors)} failed, "
      f"{len(result.skipped)} skipped")
sys.exit(0 if result.wasSuccessful() else 1)
