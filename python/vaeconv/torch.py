"""vaeconv.torch.patch(vae): run diffusers' Qwen-Image / Wan VAE convs on vaeconv.

    import vaeconv.torch
    report = vaeconv.torch.patch(vae)          # AutoencoderKLQwenImage or AutoencoderKLWan
    ...                                         # vae.decode / vae.encode as before
    vaeconv.torch.unpatch(vae)                 # the modules are exactly as they were

What is swapped (an instance-level `forward`; no diffusers source, class or parameter changes):
  - QwenImageCausalConv3d / WanCausalConv3d with a 3x3x3 kernel, stride 1, padding 1
    -> torch.ops.vaeconv.causal_conv3d, and with a cache tensor of 1 or 2 frames (the chunked
    video path's cache_x) -> torch.ops.vaeconv.causal_conv3d_cached (no cat);
  - the `resample` Sequential of QwenImageResample / WanResample:
    ZeroPad2d((0, 1, 0, 1)) + Conv2d(3, stride 2)        -> torch.ops.vaeconv.downsample_conv2d,
    Upsample(x2, nearest-exact) + Conv2d(3, padding 1)   -> torch.ops.vaeconv.upsample_conv2d.
Every other module is untouched, and a swapped one keeps its original forward, per call, for what
vaeconv does not run: a cache other than 1 or 2 bf16 frames of x's size, tensors
that are not on a CUDA/HIP device, dtypes other than bf16 (fp32 / fp16 modules compute in bf16
only with compute_dtype=torch.bfloat16), a call that needs autograd, and a device this build of
the library has no kernels for (decided once per device, with a warning).
"""
import types
import warnings
from dataclasses import dataclass, field

import torch
import torch.nn as nn

from . import _lib
from . import ops

__all__ = ["patch", "unpatch", "is_patched", "patched", "PatchReport"]

CAUSAL_CLASSES = ("QwenImageCausalConv3d", "WanCausalConv3d")
RESAMPLE_CLASSES = ("QwenImageResample", "WanResample")
_STATE = "_vaeconv_patch"


@dataclass
class PatchReport:
    patched: list = field(default_factory=list)   # (module name, op name)
    skipped: list = field(default_factory=list)   # (module name, reason)

    def __str__(self):
        kinds = {}
        for _, op in self.patched:
            kinds[op] = kinds.get(op, 0) + 1
        head = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "nothing"
        return f"vaeconv patched {head}; kept {len(self.skipped)} candidate modules as they are"


class _State:
    """What patch() changed on one module, so that unpatch() can undo exactly that."""

    def __init__(self, module, kind, conv, fp8, compute_dtype, cpu_reference):
        self.kind = kind
        self.op = ops.OPS[kind]
        self.conv = conv
        self.fp8 = fp8
        self.compute_dtype = compute_dtype
        self.cpu_reference = cpu_reference
        self.had_instance_forward = "forward" in module.__dict__
        self.instance_forward = module.__dict__.get("forward")

    def original(self, module, *args):
        if self.had_instance_forward:
            return self.instance_forward(*args)
        return type(module).forward(module, *args)


_device_support = {}


@torch.compiler.assume_constant_result
def _device_supported(index: int, fp8: bool) -> bool:
    """Whether the library runs on CUDA/HIP device `index` (decided once; a constant for
    torch.compile)."""
    key = (index, fp8)
    if key in _device_support:
        return _device_support[key]
    why = None
    if not _lib.available():
        why = "libvaeconv_kernels was not found"
    else:
        torch_backend = "hip" if getattr(torch.version, "hip", None) else "cuda"
        if _lib.backend() != torch_backend:
            why = f"the library is a {_lib.backend()} build and PyTorch a {torch_backend} one"
        else:
            with torch.cuda.device(index):
                why = _lib.check_device(fp8)
    if why is not None:
        warnings.warn(f"vaeconv: device cuda:{index} keeps the aten convs: {why}")
    _device_support[key] = why is None
    return why is None


def _usable(st, x, weight):
    if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad):
        return False
    if x.dtype == torch.bfloat16:
        if weight.dtype != torch.bfloat16 and st.compute_dtype != torch.bfloat16:
            return False
    elif st.compute_dtype != torch.bfloat16 or x.dtype not in (torch.float32, torch.float16):
        return False
    if x.device.type == "cpu":
        return st.cpu_reference
    if x.device.type != "cuda":
        return False
    return _device_supported(x.device.index if x.device.index is not None else 0, st.fp8)


def _call(st, x):
    xin = x if x.dtype == torch.bfloat16 else x.to(torch.bfloat16)
    y = st.op(xin, st.conv.weight, st.conv.bias, None, st.fp8)
    return y if y.dtype == x.dtype else y.to(x.dtype)


def _cache_usable(x, cache_x):
    return (cache_x.dim() == 5 and cache_x.shape[2] in (1, 2) and cache_x.device == x.device
            and cache_x.shape[:2] == x.shape[:2] and cache_x.shape[3:] == x.shape[3:])


def _causal_forward(self, x, cache_x=None):
    st = self.__dict__[_STATE]
    if x.dim() == 5 and _usable(st, x, self.weight):
        if cache_x is None:
            return _call(st, x)
        if _cache_usable(x, cache_x):
            xin = x if x.dtype == torch.bfloat16 else x.to(torch.bfloat16)
            cin = cache_x if cache_x.dtype == torch.bfloat16 else cache_x.to(torch.bfloat16)
            y = ops.causal_conv3d_cached(xin, cin, self.weight, self.bias, None, st.fp8)
            return y if y.dtype == x.dtype else y.to(x.dtype)
    return st.original(self, x, cache_x)


def _resample_forward(self, x):
    st = self.__dict__[_STATE]
    if x.dim() == 4 and _usable(st, x, st.conv.weight):
        return _call(st, x)
    return st.original(self, x)


def _causal_refusal(m):
    if tuple(m.kernel_size) != (3, 3, 3):
        return f"kernel {tuple(m.kernel_size)} (vaeconv runs 3x3x3)"
    if tuple(m.stride) != (1, 1, 1) or tuple(m.dilation) != (1, 1, 1) or m.groups != 1:
        return "stride, dilation or groups other than 1"
    if tuple(getattr(m, "_padding", ())) != (1, 1, 1, 1, 2, 0) or tuple(m.padding) != (0, 0, 0):
        return f"padding {getattr(m, '_padding', m.padding)} (vaeconv runs the causal pad 1,1,1,1,2,0)"
    if m.padding_mode != "zeros":
        return f"padding_mode {m.padding_mode}"
    return None


def _conv2d_is(c, stride, padding):
    return (isinstance(c, nn.Conv2d) and tuple(c.kernel_size) == (3, 3) and tuple(c.stride) == stride
            and tuple(c.padding) == padding and tuple(c.dilation) == (1, 1) and c.groups == 1
            and c.padding_mode == "zeros")


def _resample_kind(seq):
    """(kind, conv) for a supported `resample` Sequential, else (None, reason)."""
    if not isinstance(seq, nn.Sequential) or len(seq) != 2:
        return None, "not a two-module Sequential"
    first, conv = seq[0], seq[1]
    if isinstance(first, nn.ZeroPad2d) and tuple(first.padding) == (0, 1, 0, 1) \
            and _conv2d_is(conv, (2, 2), (0, 0)):
        return ops.DOWNSAMPLE, conv
    if isinstance(first, nn.Upsample) and first.mode in ("nearest-exact", "nearest") \
            and first.size is None and _is_two(first.scale_factor) and _conv2d_is(conv, (1, 1), (1, 1)):
        return ops.UPSAMPLE, conv
    return None, f"{type(first).__name__} + {type(conv).__name__} is not a vaeconv resample"


def _is_two(s):
    s = tuple(s) if isinstance(s, (tuple, list)) else (s, s)
    return len(s) == 2 and all(float(v) == 2.0 for v in s)


def _install(module, kind, conv, forward, options):
    st = _State(module, kind, conv, **options)
    module.__dict__[_STATE] = st
    module.forward = types.MethodType(forward, module)
    return st


def patch(model, *, compute_dtype=None, fp8=False, cpu_reference=False):
    """Swaps the convs of `model` (any module tree: a whole VAE, its encoder, ...) that vaeconv
    runs. compute_dtype=torch.bfloat16 lets fp32 / fp16 modules compute their swapped convs in
    bf16 (inputs cast to bf16, outputs back); fp8=True runs them with e4m3fn operands (activation
    scale per tensor, weight scales per output channel); cpu_reference=True sends CPU tensors to
    the ops' aten reference (tests, tracing without a GPU). Returns a PatchReport. Patching a
    patched module does nothing."""
    if compute_dtype not in (None, torch.bfloat16):
        raise ValueError(f"compute_dtype must be None or torch.bfloat16, got {compute_dtype}")
    options = dict(fp8=bool(fp8), compute_dtype=compute_dtype, cpu_reference=bool(cpu_reference))
    report = PatchReport()
    for name, m in model.named_modules():
        cls = type(m).__name__
        if cls in CAUSAL_CLASSES:
            why = _causal_refusal(m)
            if why is not None:
                report.skipped.append((name, why))
            elif _STATE not in m.__dict__:
                _install(m, ops.CAUSAL, m, _causal_forward, options)
                report.patched.append((name, "causal_conv3d"))
        elif cls in RESAMPLE_CLASSES:
            seq = getattr(m, "resample", None)
            if seq is None:
                report.skipped.append((name, "no resample module"))
                continue
            if isinstance(seq, nn.Identity):
                continue
            kind, conv = _resample_kind(seq)
            if kind is None:
                report.skipped.append((name + ".resample", conv))
            elif _STATE not in seq.__dict__:
                _install(seq, kind, conv, _resample_forward, options)
                report.patched.append((name + ".resample", ops._KIND_NAMES[kind]))
    return report


def unpatch(model):
    """Undoes patch(): each swapped module gets back exactly the forward it had (none of its own,
    as diffusers builds them, or the one it had before), and its packed weights are released.
    Returns how many modules were restored."""
    restored = 0
    for m in model.modules():
        st = m.__dict__.pop(_STATE, None)
        if st is None:
            continue
        if st.had_instance_forward:
            m.__dict__["forward"] = st.instance_forward
        else:
            m.__dict__.pop("forward", None)
        ops.release_weights(st.conv.weight)
        restored += 1
    return restored


def is_patched(module):
    return _STATE in module.__dict__


class patched:
    """with vaeconv.torch.patched(vae, ...): patch on entry, unpatch on exit."""

    def __init__(self, model, **options):
        self.model, self.options = model, options

    def __enter__(self):
        self.report = patch(self.model, **self.options)
        return self.report

    def __exit__(self, *exc):
        unpatch(self.model)
        return False
