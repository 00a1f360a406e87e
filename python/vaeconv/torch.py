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
    Upsample(x2, nearest-exact) + Conv2d(3, padding 1)   -> torch.ops.vaeconv.upsample_conv2d;
  - the forward of a QwenImageResample / WanResample in mode upsample3d or downsample3d, whose
    (3,1,1) `time_conv` then runs as torch.ops.vaeconv.temporal_conv3d: stride 1 with its output
    already in upsample3d's interleaved frame order (no reshape + stack), stride 2 with
    downsample3d's one cached frame read in place (no cat). The replacement forward keeps
    diffusers' chunked-video protocol as it is: the feat_cache / feat_idx slots it reads and
    advances, the "Rep" sentinel an upsample3d stores on the first chunk (where it runs no time
    conv), and the tensors it stores for the next chunk (the last two input frames, a zero or the
    previous chunk's last frame in front of a one-frame chunk; downsample3d: the whole first chunk,
    then the last output frame). A call without feat_cache runs the original forward.
  - QwenImageRMS_norm / WanRMS_norm (channel_first, C a multiple of 8) -> torch.ops.vaeconv.rms_norm
    on channels-last inputs, with the SiLU that follows it fused where the owner's forward provably
    applies its nonlinearity right after the norm (norms=False keeps them; see _patch_norms).
  - the forward of QwenImageResidualBlock / WanResidualBlock (the same steps and feat_cache
    protocol), with the shortcut h passed to conv2's op as its `residual` where conv2 runs on
    vaeconv and h is bf16 and channels-last; else conv2 then `x + h` as diffusers does
    (residuals=False keeps them; see _patch_residuals).
Every other module is untouched, and a swapped one keeps its original computation, per call, for
what vaeconv does not run: a cache other than 1 or 2 frames of x's size (1 for downsample3d), Cin
not a multiple of 8 (bf16) / 16 (fp8) channels with a cache (the cached and temporal kernels read
whole 16-byte channel chunks; e.g. the encoder's RGB conv_in after the first chunk), tensors that
are not on a CUDA/HIP device, dtypes other than bf16 (fp32 / fp16 modules compute in bf16 only
with compute_dtype=torch.bfloat16), a call that needs autograd, and a device this build of the
library has no kernels for (decided once per device, with a warning).
"""
import inspect
import re
import textwrap
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
CACHE_T = 2                                   # frames a chunk leaves for the next (diffusers' CACHE_T)
TIME_STRIDES = {"upsample3d": 1, "downsample3d": 2}   # time_conv's stride per resample mode
TEMPORAL = _lib.TEMPORAL_3X1X1


@dataclass
class PatchReport:
    patched: list = field(default_factory=list)   # (module name, op name)
    skipped: list = field(default_factory=list)   # (module name, reason)
    norms: list = field(default_factory=list)     # (module name, "rms_norm" or "rms_norm+silu")
    residuals: list = field(default_factory=list)  # (block's conv2 name, "causal_conv3d+residual")

    def __str__(self):
        kinds = {}
        for _, op in self.patched:
            kinds[op] = kinds.get(op, 0) + 1
        head = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "nothing"
        return f"vaeconv patched {head}; kept {len(self.skipped)} candidate modules as they are"


class _SavedForward:
    """The forward a module had before patch() gave it an instance forward (none of its own, as
    diffusers builds them, or the one it had): original() calls it, restore() puts it back."""

    def __init__(self, module):
        self.had_instance_forward = "forward" in module.__dict__
        self.instance_forward = module.__dict__.get("forward")

    def original(self, module, *args):
        if self.had_instance_forward:
            return self.instance_forward(*args)
        return type(module).forward(module, *args)

    def restore(self, module):
        if self.had_instance_forward:
            module.__dict__["forward"] = self.instance_forward
        else:
            module.__dict__.pop("forward", None)


class _State(_SavedForward):
    """What patch() changed on one module, so that unpatch() can undo exactly that."""

    def __init__(self, module, kind, conv, fp8, compute_dtype, cpu_reference):
        self.kind = kind
        self.op = ops.OPS.get(kind)  # None for the temporal conv (its forward calls it directly)
        self.conv = conv
        self.fp8 = fp8
        self.compute_dtype = compute_dtype
        self.cpu_reference = cpu_reference
        super().__init__(module)



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


def _whole_chunks(st, cin):
    """The cached and temporal kernels read channels in 16-byte chunks only."""
    return cin % (16 if st.fp8 else 8) == 0


def _cache_usable(st, x, cache_x, frames=(1, 2)):
    return (isinstance(cache_x, torch.Tensor) and cache_x.dim() == 5 and cache_x.shape[2] in frames
            and cache_x.device == x.device and cache_x.shape[:2] == x.shape[:2]
            and cache_x.shape[3:] == x.shape[3:] and _whole_chunks(st, x.shape[1]))


def _bf16(t):
    return t if t is None or t.dtype == torch.bfloat16 else t.to(torch.bfloat16)


def _causal_forward(self, x, cache_x=None):
    st = self.__dict__[_STATE]
    if x.dim() == 5 and _usable(st, x, self.weight):
        if cache_x is None:
            return _call(st, x)
        if _cache_usable(st, x, cache_x):
            y = ops.causal_conv3d_cached(_bf16(x), _bf16(cache_x), self.weight, self.bias, None, st.fp8)
            return y if y.dtype == x.dtype else y.to(x.dtype)
    return st.original(self, x, cache_x)


def _time_conv(st, x, cache, stride):
    """One time_conv step of a 3d resample forward: on vaeconv where it runs it, else diffusers'
    computation of the same step. Stride 1 (upsample3d, cache None after "Rep" or the 2 frames the
    previous chunk stored) returns [N, C, 2T, H, W] in upsample3d's interleaved order; stride 2
    (downsample3d, cache the previous chunk's last frame) returns the strided conv of cat(cache, x)."""
    tc = st.conv
    usable = (_usable(st, x, tc.weight) and _whole_chunks(st, x.shape[1])
              and (cache is None or _cache_usable(st, x, cache, (1, 2) if stride == 1 else (1,))))
    if usable and stride == 2 and (0 if cache is None else cache.shape[2]) + x.shape[2] < 3:
        usable = False  # aten refuses it too (input shorter than the kernel); let it say so
    if usable:
        y = ops.temporal_conv3d(_bf16(x), _bf16(cache), tc.weight, tc.bias, None, stride, st.fp8)
        return y if y.dtype == x.dtype else y.to(x.dtype)
    if stride == 2:
        return tc(torch.cat([cache, x], 2))
    b, c, t, h, w = x.shape
    y = tc(x) if cache is None else tc(x, cache)
    y = y.reshape(b, 2, c, t, h, w)
    return torch.stack((y[:, 0], y[:, 1]), 3).reshape(b, c, 2 * t, h, w)


_NO_ARG = object()


def _resample3d_forward(self, x, feat_cache=None, feat_idx=_NO_ARG):
    """WanResample / QwenImageResample forward in mode upsample3d / downsample3d with time_conv
    on vaeconv; the feat_cache protocol step for step as diffusers' forward runs it."""
    st = self.__dict__[_STATE]
    if feat_cache is None or feat_idx is _NO_ARG or x.dim() != 5:
        args = (x, feat_cache) if feat_idx is _NO_ARG else (x, feat_cache, feat_idx)
        return st.original(self, *args)
    b, c, t, h, w = x.shape
    if self.mode == "upsample3d":
        idx = feat_idx[0]
        prev = feat_cache[idx]
        if prev is None:  # the first chunk: no time conv, only the sentinel
            feat_cache[idx] = "Rep"
            feat_idx[0] += 1
        else:
            rep = isinstance(prev, str) and prev == "Rep"
            cache_x = x[:, :, -CACHE_T:, :, :].clone()
            if cache_x.shape[2] < 2:  # a one-frame chunk: zero, or the previous chunk's last frame
                front = torch.zeros_like(cache_x) if rep else prev[:, :, -1:, :, :].to(cache_x.device)
                cache_x = torch.cat([front, cache_x], dim=2)
            x = _time_conv(st, x, None if rep else prev, 1)
            feat_cache[idx] = cache_x
            feat_idx[0] += 1
    t = x.shape[2]
    x = x.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)
    x = self.resample(x)
    x = x.view(b, t, x.size(1), x.size(2), x.size(3)).permute(0, 2, 1, 3, 4)
    if self.mode == "downsample3d":
        idx = feat_idx[0]
        prev = feat_cache[idx]
        if prev is None:  # the first chunk is stored whole, with no time conv
            feat_cache[idx] = x.clone()
            feat_idx[0] += 1
        else:
            cache_x = x[:, :, -1:, :, :].clone()
            x = _time_conv(st, x, prev[:, :, -1:, :, :], 2)
            feat_cache[idx] = cache_x
            feat_idx[0] += 1
    return x


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


def _time_conv_refusal(m):
    """None where the resample's time_conv and forward are the ones _resample3d_forward stands
    for, else why not."""
    mode = m.mode
    tc = getattr(m, "time_conv", None)
    if type(tc).__name__ not in CAUSAL_CLASSES:
        return f"{mode} without a causal time_conv ({type(tc).__name__})"
    if "forward" in m.__dict__:
        return "the module has an instance forward of its own"
    params = inspect.signature(type(m).forward).parameters
    if "feat_cache" not in params or "feat_idx" not in params:
        return "its forward has no feat_cache / feat_idx (not the chunked-video protocol this patch keeps)"
    stride = TIME_STRIDES[mode]
    pad = (0, 0, 0, 0, 2, 0) if stride == 1 else (0,) * 6
    if tuple(tc.kernel_size) != (3, 1, 1) or tuple(tc.stride) != (stride, 1, 1) \
            or tuple(tc.dilation) != (1, 1, 1) or tc.groups != 1 or tc.padding_mode != "zeros" \
            or tuple(tc.padding) != (0, 0, 0) or tuple(getattr(tc, "_padding", ())) != pad:
        return (f"time_conv kernel {tuple(tc.kernel_size)} stride {tuple(tc.stride)} padding "
                f"{getattr(tc, '_padding', tc.padding)} (vaeconv runs (3,1,1), stride {stride}, pad {pad})")
    if stride == 1 and tc.out_channels != 2 * tc.in_channels:
        return f"upsample3d time_conv {tc.in_channels} -> {tc.out_channels} channels (vaeconv interleaves 2 C)"
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


def _child(name, attr):
    return f"{name}.{attr}" if name else attr


def _install(module, kind, conv, forward, options):
    st = _State(module, kind, conv, **options)
    module.__dict__[_STATE] = st
    module.forward = types.MethodType(forward, module)
    return st


def patch(model, *, compute_dtype=None, fp8=False, cpu_reference=False, norms=True, residuals=True):
    """Swaps the convs of `model` (any module tree: a whole VAE, its encoder, ...) that vaeconv
    runs. compute_dtype=torch.bfloat16 lets fp32 / fp16 modules compute their swapped convs in
    bf16 (inputs cast to bf16, outputs back); fp8=True runs them with e4m3fn operands (activation
    scale per tensor, weight scales per output channel); cpu_reference=True sends CPU tensors to
    the ops' aten reference (tests, tracing without a GPU). norms=False keeps the RMS norms;
    residuals=False keeps the residual blocks' `x + h` (see _patch_residuals). Returns a
    PatchReport. Patching a patched module does nothing."""
    if compute_dtype not in (None, torch.bfloat16):
        raise ValueError(f"compute_dtype must be None or torch.bfloat16, got {compute_dtype}")
    options = dict(fp8=bool(fp8), compute_dtype=compute_dtype, cpu_reference=bool(cpu_reference))
    report = PatchReport()
    covered = set()  # time_convs a resample forward runs (reported there, not as causal convs)
    for name, m in model.named_modules():
        cls = type(m).__name__
        if cls in CAUSAL_CLASSES:
            if id(m) in covered:
                continue
            why = _causal_refusal(m)
            if why is not None:
                report.skipped.append((name, why))
            elif _STATE not in m.__dict__:
                _install(m, ops.CAUSAL, m, _causal_forward, options)
                report.patched.append((name, "causal_conv3d"))
        elif cls in RESAMPLE_CLASSES:
            if getattr(m, "mode", None) in TIME_STRIDES:
                tc_name = _child(name, "time_conv")
                covered.add(id(getattr(m, "time_conv", None)))
                why = _time_conv_refusal(m)
                if why is not None:
                    report.skipped.append((tc_name, why))
                elif _STATE not in m.__dict__:
                    _install(m, TEMPORAL, m.time_conv, _resample3d_forward, options)
                    report.patched.append((tc_name, "temporal_conv3d"))
            seq = getattr(m, "resample", None)
            if seq is None:
                report.skipped.append((name, "no resample module"))
                continue
            if isinstance(seq, nn.Identity):
                continue
            kind, conv = _resample_kind(seq)
            if kind is None:
                report.skipped.append((_child(name, "resample"), conv))
            elif _STATE not in seq.__dict__:
                _install(seq, kind, conv, _resample_forward, options)
                report.patched.append((_child(name, "resample"), ops._KIND_NAMES[kind]))
    if norms:
        _patch_norms(model, options, report)
    if residuals:  # after the norms: their SiLU pairing reads the blocks' class forward
        _patch_residuals(model, report)
    return report


def unpatch(model):
    """Undoes patch(): each swapped module gets back exactly the forward it had (none of its own,
    as diffusers builds them, or the one it had before), and its packed weights are released.
    Returns how many modules were restored."""
    restored = _unpatch_norms(model) + _unpatch_residuals(model)
    for m in model.modules():
        st = m.__dict__.pop(_STATE, None)
        if st is None:
            continue
        st.restore(m)
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


# --- RMS norms (and the SiLU after them) -----------------------------------------------------------
# QwenImageRMS_norm / WanRMS_norm with channel_first=True (gamma (C, 1, 1) for 4D inputs,
# (C, 1, 1, 1) for 5D), C a multiple of 8, run as torch.ops.vaeconv.rms_norm when x is bf16 (or
# fp32 / fp16 with compute_dtype=torch.bfloat16), on a CUDA/HIP device the library serves (or the
# CPU with cpu_reference), stored channels-last (what the patched convs output), and no autograd
# is needed; otherwise the module's own forward. Where the forward of the module that owns a norm
# provably feeds that norm's output straight into its `nonlinearity`, an nn.SiLU used nowhere else
# (diffusers' residual blocks: norm1 / norm2; the encoder / decoder heads: norm_out; read from
# the owner's forward source, lines `x = self.<norm>(x)` then `x = self.nonlinearity(x)`, and no
# other use of either), the norm computes the SiLU too (the op's silu=True; its fallback applies
# F.silu after the original forward) and that nonlinearity's instance forward returns its input.
# The owner's forward, and with it the feat_cache protocol, is untouched.

NORM_CLASSES = ("QwenImageRMS_norm", "WanRMS_norm")
_NORM_STATE = "_vaeconv_norm_patch"
_ACT_STATE = "_vaeconv_fused_act"


class _NormState(_SavedForward):
    """What patch() changed on a norm (or a fused-away activation), for _unpatch_norms."""

    def __init__(self, module, compute_dtype=None, cpu_reference=False, rank=5):
        self.silu = False
        self.fp8 = False  # the device check of _usable: the norm runs bf16 whatever the convs run
        self.compute_dtype = compute_dtype
        self.cpu_reference = cpu_reference
        self.rank = rank
        super().__init__(module)



def _norm_refusal(m):
    """None where `m` computes F.normalize(x, dim=1) * sqrt(C) * gamma + bias as vaeconv's op
    does, else why not."""
    if "forward" in m.__dict__:
        return "the module has an instance forward of its own"
    if not getattr(m, "channel_first", False):
        return "channel_first=False (vaeconv normalises dim 1 of a channels-first tensor)"
    g = getattr(m, "gamma", None)
    if not isinstance(g, torch.Tensor) or g.dim() not in (3, 4) or any(s != 1 for s in g.shape[1:]):
        return f"gamma {tuple(g.shape) if isinstance(g, torch.Tensor) else g!r} is not (C, 1, 1[, 1])"
    c = g.shape[0]
    if c % 8:
        return f"C = {c} channels (the kernel reads 16-byte vectors of 8 bf16)"
    if abs(float(getattr(m, "scale", 0.0)) - c ** 0.5) > 1e-6 * c ** 0.5:
        return f"scale {getattr(m, 'scale', None)!r} is not sqrt(C) = {c ** 0.5}"
    b = getattr(m, "bias", None)
    if isinstance(b, torch.Tensor):
        if tuple(b.shape) != tuple(g.shape):
            return f"bias {tuple(b.shape)} is not gamma's shape {tuple(g.shape)}"
    elif not (isinstance(b, (int, float)) and float(b) == 0.0):
        return f"bias {b!r} is neither a tensor nor 0"
    return None


def _norm_bias(m):
    return m.bias if isinstance(m.bias, torch.Tensor) else None


def _rms_norm_forward(self, x):
    st = self.__dict__[_NORM_STATE]
    if x.dim() == st.rank and x.shape[1] == self.gamma.shape[0] and _usable(st, x, self.gamma):
        perm = (0, 2, 3, 4, 1) if x.dim() == 5 else (0, 2, 3, 1)
        if x.permute(*perm).is_contiguous():  # channels-last: read in place
            bias = _norm_bias(self)
            out_dtype = torch.promote_types(x.dtype, self.gamma.dtype)
            if bias is not None:
                out_dtype = torch.promote_types(out_dtype, bias.dtype)
            xin = x if x.dtype == torch.bfloat16 else x.to(torch.bfloat16)
            y = ops.rms_norm(xin, self.gamma, bias, st.silu)
            return y if y.dtype == out_dtype else y.to(out_dtype)
    y = st.original(self, x)
    return torch.nn.functional.silu(y) if st.silu else y


def _fused_away_forward(self, x):
    """The nonlinearity whose SiLU the preceding norm already applied."""
    return x


_PAIR_ACT = re.compile(r"(\w+) = self\.nonlinearity\((\w+)\)")
_PAIR_NORM = re.compile(r"(\w+) = self\.(\w+)\((\w+)\)")


def silu_pairs_from_source(source):
    """The attribute names of the norms whose output a forward's source passes straight to
    self.nonlinearity: every use of self.nonlinearity must be a line `v = self.nonlinearity(v)`
    right after `v = self.<norm>(v)` (comments and blank lines aside), each such norm called once;
    else (any other use) an empty list."""
    lines = [ln.strip() for ln in source.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    uses = sum(ln.count("self.nonlinearity") for ln in lines)
    pairs = []
    for i, ln in enumerate(lines):
        act = _PAIR_ACT.fullmatch(ln)
        if not act or act.group(1) != act.group(2) or i == 0:
            continue
        norm = _PAIR_NORM.fullmatch(lines[i - 1])
        if norm and norm.group(1) == norm.group(3) == act.group(1) and norm.group(2) != "nonlinearity":
            pairs.append(norm.group(2))
    if not pairs or len(pairs) != uses:
        return []
    text = "\n".join(lines)
    if any(text.count(f"self.{n}(") != 1 or text.count(f"self.{n}") != 1 for n in pairs):
        return []
    return pairs


def _silu_pairs(owner):
    act = getattr(owner, "nonlinearity", None)
    own_forward = "forward" in owner.__dict__ and _RES_STATE not in owner.__dict__  # ours stands for the class's
    if type(act) is not nn.SiLU or "forward" in act.__dict__ or own_forward:
        return []  # an instance forward of its own (either): not the computation the source shows
    try:
        source = inspect.getsource(type(owner).forward)
    except (OSError, TypeError):
        return []
    return [n for n in silu_pairs_from_source(source)
            if type(getattr(owner, n, None)).__name__ in NORM_CLASSES]


def _patch_norms(model, options, report):
    index = {}
    for name, m in model.named_modules():
        if type(m).__name__ not in NORM_CLASSES or _NORM_STATE in m.__dict__:
            continue
        why = _norm_refusal(m)
        if why is not None:
            report.skipped.append((name, why))
            continue
        m.__dict__[_NORM_STATE] = _NormState(m, options["compute_dtype"], options["cpu_reference"],
                                             5 if m.gamma.dim() == 4 else 4)
        m.forward = types.MethodType(_rms_norm_forward, m)
        index[id(m)] = len(report.norms)
        report.norms.append((name, "rms_norm"))
    # The SiLU after a norm: only where the module and its nonlinearity appear once in the tree.
    seen = {}
    for _, m in model.named_modules(remove_duplicate=False):
        seen[id(m)] = seen.get(id(m), 0) + 1
    for name, owner in model.named_modules():
        act = getattr(owner, "nonlinearity", None)
        if not isinstance(act, nn.Module) or _ACT_STATE in act.__dict__ or seen.get(id(act)) != 1:
            continue
        names = _silu_pairs(owner)
        norms = [getattr(owner, n) for n in names]
        if not norms or any(id(n) not in index or seen.get(id(n)) != 1 for n in norms):
            continue
        for n in norms:
            n.__dict__[_NORM_STATE].silu = True
            i = index[id(n)]
            report.norms[i] = (report.norms[i][0], "rms_norm+silu")
        act.__dict__[_ACT_STATE] = _NormState(act)
        act.forward = types.MethodType(_fused_away_forward, act)


def _unpatch_norms(model):
    restored = 0
    for m in model.modules():
        for key in (_NORM_STATE, _ACT_STATE):
            st = m.__dict__.pop(key, None)
            if st is None:
                continue
            st.restore(m)
            restored += 1
    return restored


# --- Residual blocks: the shortcut added in conv2's epilogue ----------------------------------------
# QwenImageResidualBlock / WanResidualBlock end with `return x + h`, h = conv_shortcut(x) (a 1x1x1
# causal conv where in_dim != out_dim, else the block's input). Their instance forward here is the
# same computation step for step (conv_shortcut, norm1, nonlinearity, conv1 under the feat_cache
# protocol, norm2, nonlinearity, dropout, conv2 under the protocol; the cache_x each conv stores),
# except that where conv2 runs on vaeconv (patched, and its call usable as _causal_forward decides)
# and h is bf16, x's shape, stored channels-last with a 16-byte-aligned start (a vaeconv output, or
# an aten conv's channels-last output), h goes to conv2's op as `residual`: added to the fp32
# accumulator and rounded once, where diffusers rounds conv2's output and then the sum. Any other h
# (NCDHW, another dtype: the op would copy or refuse it) keeps aten's add after conv2, and a conv2
# that vaeconv does not run keeps conv2's own forward then the add, bit for bit diffusers' result.
# The block is patched only where its class forward is the one this stands for: no instance
# forward, the feat_cache / feat_idx signature, the module calls in diffusers' order and
# `return x + h` (read from the forward's source), CACHE_T = 2 in its module, and conv2 patched.
# The norms' SiLU fusion reads the class forward's source and so is unaffected.

RESIDUAL_CLASSES = ("QwenImageResidualBlock", "WanResidualBlock")
_RES_STATE = "_vaeconv_residual_patch"
_RES_CALLS = ["conv_shortcut", "norm1", "nonlinearity", "conv1", "conv1", "norm2", "nonlinearity",
              "dropout", "conv2", "conv2"]
_SELF_CALL = re.compile(r"self\.(\w+)\(")


class _ResidualState(_SavedForward):
    """What patch() changed on a residual block, for _unpatch_residuals."""



def residual_forward_matches_source(source):
    """Whether a residual block forward's source is the computation _residual_forward stands for:
    the module calls self.conv_shortcut, norm1, nonlinearity, conv1 (cached and uncached), norm2,
    nonlinearity, dropout, conv2 (cached and uncached) in that order and nothing else of self,
    the cache slices by CACHE_T, and its last statement is `return x + h`."""
    lines = [ln.strip() for ln in source.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    if not lines or not lines[0].startswith("def forward(") or lines[-1] != "return x + h":
        return False
    body = "\n".join(lines[1:])
    if _SELF_CALL.findall(body) != _RES_CALLS or len(re.findall(r"self\.\w+", body)) != len(_RES_CALLS):
        return False
    return (body.count("CACHE_T") == 2 and body.count("h = self.conv_shortcut(x)") == 1
            and len(re.findall(r"x = self\.conv2\(x, feat_cache\[\w+\]\)", body)) == 1
            and body.count("x = self.conv2(x)") == 1 and body.count("x = self.dropout(x)") == 1)


def _residual_refusal(m):
    if "forward" in m.__dict__:
        return "the module has an instance forward of its own"
    for attr in ("conv_shortcut", "norm1", "nonlinearity", "conv1", "norm2", "dropout", "conv2"):
        if not isinstance(getattr(m, attr, None), nn.Module):
            return f"no {attr} module"
    if type(m.conv2).__name__ not in CAUSAL_CLASSES or _STATE not in m.conv2.__dict__:
        return "conv2 is not a causal conv on vaeconv"
    params = inspect.signature(type(m).forward).parameters
    if "feat_cache" not in params or "feat_idx" not in params:
        return "its forward has no feat_cache / feat_idx (not the chunked-video protocol this patch keeps)"
    try:
        source = inspect.getsource(type(m).forward)
        home = inspect.getmodule(type(m))
    except (OSError, TypeError):
        return "the source of its forward is not readable"
    if getattr(home, "CACHE_T", None) != CACHE_T:
        return f"CACHE_T = {getattr(home, 'CACHE_T', None)!r} in {getattr(home, '__name__', '?')} (this patch keeps {CACHE_T})"
    if not residual_forward_matches_source(textwrap.dedent(source)):
        return "its forward is not diffusers' residual block forward (module calls or return differ)"
    return None


def _residual_usable(x, h):
    """Whether h can be conv2's residual as it is (no copy, no conversion)."""
    if not isinstance(h, torch.Tensor) or h.dtype != torch.bfloat16 or x.dtype != torch.bfloat16:
        return False
    if h.dim() != 5 or h.device != x.device or (torch.is_grad_enabled() and h.requires_grad):
        return False
    if not h.permute(0, 2, 3, 4, 1).is_contiguous():
        return False
    # The kernels read 16-byte-aligned rows (the op copies a view that starts elsewhere). Traced
    # by torch.compile the offset is not readable; the allocator's tensors (every op's output)
    # start aligned, so only a view of one could be copied there.
    return torch.compiler.is_compiling() or (h.storage_offset() * h.element_size()) % 16 == 0


def _conv2_plus(self, x, h, cache=_NO_ARG):
    """conv2(x[, cache]) + h: one op with h as its residual where vaeconv runs conv2 and h fits,
    else the block's own computation."""
    conv = self.conv2
    st = conv.__dict__.get(_STATE)
    if st is not None and st.kind == ops.CAUSAL and x.dim() == 5 and _residual_usable(x, h) \
            and tuple(h.shape) == (x.shape[0], conv.out_channels) + tuple(x.shape[2:]) \
            and _usable(st, x, conv.weight):
        if cache is _NO_ARG or cache is None:
            return st.op(x, conv.weight, conv.bias, h, st.fp8)
        if _cache_usable(st, x, cache):
            return ops.causal_conv3d_cached(x, _bf16(cache), conv.weight, conv.bias, h, st.fp8)
    y = conv(x) if cache is _NO_ARG else conv(x, cache)
    return y + h


def _residual_forward(self, x, feat_cache=None, feat_idx=_NO_ARG):
    """QwenImageResidualBlock / WanResidualBlock forward with the shortcut added in conv2's op."""
    if feat_cache is not None and feat_idx is _NO_ARG:  # diffusers' default list: its own forward
        return self.__dict__[_RES_STATE].original(self, x, feat_cache)
    h = self.conv_shortcut(x)
    x = self.nonlinearity(self.norm1(x))
    if feat_cache is None:
        x = self.conv1(x)
    else:
        x = _cached_step(x, feat_cache, feat_idx, lambda v, c: self.conv1(v, c))
    x = self.dropout(self.nonlinearity(self.norm2(x)))
    if feat_cache is None:
        return _conv2_plus(self, x, h)
    return _cached_step(x, feat_cache, feat_idx, lambda v, c: _conv2_plus(self, v, h, c))


def _cached_step(x, feat_cache, feat_idx, conv):
    """One causal conv of a residual block under the feat_cache protocol: conv(x, the slot's
    cache), and the slot then holds x's last CACHE_T frames (the stored last frame in front of a
    one-frame chunk)."""
    idx = feat_idx[0]
    prev = feat_cache[idx]
    cache_x = x[:, :, -CACHE_T:, :, :].clone()
    if cache_x.shape[2] < 2 and prev is not None:
        cache_x = torch.cat([prev[:, :, -1, :, :].unsqueeze(2).to(cache_x.device), cache_x], dim=2)
    y = conv(x, prev)
    feat_cache[idx] = cache_x
    feat_idx[0] += 1
    return y


def _patch_residuals(model, report):
    for name, m in model.named_modules():
        if type(m).__name__ not in RESIDUAL_CLASSES or _RES_STATE in m.__dict__:
            continue
        why = _residual_refusal(m)
        if why is not None:
            report.skipped.append((name, why))
            continue
        m.__dict__[_RES_STATE] = _ResidualState(m)
        m.forward = types.MethodType(_residual_forward, m)
        report.residuals.append((_child(name, "conv2"), "causal_conv3d+residual"))


def _unpatch_residuals(model):
    restored = 0
    for m in model.modules():
        st = m.__dict__.pop(_RES_STATE, None)
        if st is None:
            continue
        st.restore(m)
        restored += 1
    return restored
