"""Helpers shared by the PyTorch package's tests, CPU (tests/python) and GPU (tests/python_gpu,
which puts this folder on sys.path): the vaeconv op counter, the channels-last layout helpers, the
error measures, a graph-recording torch.compile backend, the fp32 / bf16 model pair and the
diffusers import. Not a test module (unittest discovery loads test_*.py)."""
import ast
import math
import os
import unittest

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class CountVaeconvOps(TorchDispatchMode):
    """Counts the vaeconv:: ops dispatched while active, by name, in .calls. With silu_apart, a
    vaeconv::rms_norm call with silu=True counts as "vaeconv::rms_norm+silu", so a test can tell
    the fused norm + SiLU from the plain norm; with residual_apart, a causal conv given a residual
    tensor counts as "<name>+residual"."""

    RESIDUAL_ARG = {"vaeconv::causal_conv3d": 3, "vaeconv::causal_conv3d_cached": 4}

    def __init__(self, silu_apart=False, residual_apart=False):
        super().__init__()
        self.silu_apart = silu_apart
        self.residual_apart = residual_apart
        self.calls = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func.name())
        if name.startswith("vaeconv::"):
            key = name
            if self.residual_apart and name in self.RESIDUAL_ARG:
                i = self.RESIDUAL_ARG[name]
                if kwargs.get("residual", args[i] if len(args) > i else None) is not None:
                    key += "+residual"
            if self.silu_apart and name == "vaeconv::rms_norm" and \
                    kwargs.get("silu", args[3] if len(args) > 3 else False):
                key += "+silu"
            self.calls[key] = self.calls.get(key, 0) + 1
        return func(*args, **kwargs)


def channels_last(t):
    return t.contiguous(memory_format=torch.channels_last_3d if t.dim() == 5 else torch.channels_last)


def is_channels_last(t):
    perm = (0, 2, 3, 4, 1) if t.dim() == 5 else (0, 2, 3, 1)
    return t.permute(*perm).is_contiguous()


def recording_backend(graphs, aot=False):
    """A torch.compile backend that appends each graph Dynamo captures to graphs and runs it as
    captured; with aot, it runs AOT autograd on it instead (which traces the ops through their
    fake impls) and appends the forward graph that gives too, so the ops' traced strides show."""
    def backend(gm, example_inputs):
        graphs.append(gm)
        if not aot:
            return gm.forward
        from functorch.compile import make_boxed_func
        from torch._dynamo.backends.common import aot_autograd

        def fw(g, inputs):
            graphs.append(g)
            return make_boxed_func(g.forward)
        return aot_autograd(fw_compiler=fw)(gm, example_inputs)
    return backend


def rel_l2(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def psnr(a, b):
    """PSNR in dB of a against b, for images in [-1, 1] (peak-to-peak 2, so peak^2 = 4)."""
    mse = (a.float() - b.float()).pow(2).mean().item()
    return float("inf") if mse == 0 else 10 * math.log10(4.0 / mse)


def fp32_and_bf16(make, device):
    """Two models from make(), in eval mode on device, with the same weights (the first one
    made's): the fp32 one, the reference, and a bf16 copy, the one a test patches."""
    m32 = make().to(device).eval()
    m = make().to(device).eval()
    m.load_state_dict(m32.state_dict())
    return m32, m.to(torch.bfloat16)


def diffusers_or_skip(names=("AutoencoderKLQwenImage", "AutoencoderKLWan")):
    """The named diffusers classes, as a tuple, or a SkipTest naming why not (a test that needs
    only one VAE asks only for it, so an older diffusers without the other still runs it)."""
    try:
        import diffusers
        return tuple(getattr(diffusers, name) for name in names)
    except Exception as e:  # absent, or an incompatible install
        raise unittest.SkipTest(f"diffusers not importable ({e.__class__.__name__}: {e}); "
                                "put diffusers' src/ on PYTHONPATH to run the VAE tests")


# diffusers' autoencoder sources in the checkout the tests read as text (may be absent).
DIFFUSERS_AE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            ".diffusers", "src", "diffusers", "models", "autoencoders")


def class_forward_source(path, cls):
    """The source text of class cls's forward in the Python file at path, None if there is none."""
    with open(path) as f:
        text = f.read()
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name == "forward":
                    return ast.get_source_segment(text, f)
    return None
