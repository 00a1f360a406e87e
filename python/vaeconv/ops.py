"""torch.library custom ops over libvaeconv_kernels: the three conv kinds of the Qwen-Image / Wan VAE.

  torch.ops.vaeconv.causal_conv3d(x, weight, bias=None, residual=None, fp8=False)
      x [N, Cin, T, H, W], weight [Cout, Cin, 3, 3, 3]: F.pad(x, (1, 1, 1, 1, 2, 0)) then conv3d
      (QwenImageCausalConv3d / WanCausalConv3d without a cache); T = 1 uses weight[:, :, 2].
  torch.ops.vaeconv.causal_conv3d_cached(x, cache, weight, bias=None, residual=None, fp8=False)
      the same conv of a video chunk with cache [N, Cin, 1 or 2, H, W] (the frames before x: Wan's
      / Qwen-Image's cache_x) read in place: torch.cat([cache, x], 2), F.pad(..., 2 - frames in
      front) then conv3d, without the cat (bf16; fp8 quantizes cat(cache, x) with one scale).
  torch.ops.vaeconv.temporal_conv3d(x, cache, weight, bias=None, residual=None, stride=1, fp8=False)
      WanResample's time_conv, weight [Cout, Cin, 3, 1, 1], cache None or [N, Cin, frames, H, W]:
      stride 1 (upsample3d) returns [N, Cout / 2, 2 T, H, W], the two channel halves already
      interleaved into frames as upsample3d's reshape + stack leaves them; stride 2
      (downsample3d, one cached frame) returns [N, Cout, T_out, H, W]. reference_temporal is the
      aten computation.
  torch.ops.vaeconv.downsample_conv2d(x, weight, bias=None, residual=None, fp8=False)
      x [N, Cin, H, W] or [N, Cin, T, H, W] (frame by frame), weight [Cout, Cin, 3, 3]:
      ZeroPad2d((0, 1, 0, 1)) then a 3x3 conv with stride 2.
  torch.ops.vaeconv.upsample_conv2d(x, weight, bias=None, residual=None, fp8=False)
      the same ranks: nearest-exact x2 then a 3x3 conv with padding 1.

x is bf16, NCDHW-contiguous or channels_last_3d (channels_last for 4D); a channels-last input is
read in place, any other layout is copied once. The output is bf16 in channels-last memory (NDHWC;
NHWC for 4D), so the next op takes it without a copy. `residual` (bf16, the output's shape) is
added in the epilogue. `fp8` quantizes x per tensor and the weights per output channel (e4m3fn)
with the library's quantizer. Weights are packed and uploaded once per parameter and re-packed
only when the parameter's storage or version counter changes; the first call per parameter
therefore synchronizes (a device-to-host copy): warm up before capturing a CUDA/HIP graph.

On CUDA/HIP tensors the ops run the library on the current PyTorch stream; anything the library
refuses raises vaeconv.VaeconvError with the library's message. On CPU tensors they compute the
same result with aten (a reference, used by the tests; vaeconv.torch.patch never sends CPU tensors
here unless asked to). The fake (meta) implementations give torch.compile the output's shape and
channels-last strides.
"""
import ctypes
import threading
import weakref
from typing import Optional

import torch
import torch.nn.functional as F

from . import _lib
from ._lib import VaeconvError

__all__ = ["causal_conv3d", "causal_conv3d_cached", "temporal_conv3d", "downsample_conv2d", "upsample_conv2d", "output_size",
           "clear_weight_cache", "release_weights", "weight_cache_size", "VaeconvError"]

CAUSAL, DOWNSAMPLE, UPSAMPLE = _lib.CAUSAL_3X3X3, _lib.DOWNSAMPLE, _lib.UPSAMPLE
_KIND_NAMES = {CAUSAL: "causal_conv3d", DOWNSAMPLE: "downsample_conv2d", UPSAMPLE: "upsample_conv2d",
               _lib.TEMPORAL_3X1X1: "temporal_conv3d"}


def output_size(kind, t, h, w):
    """(T_out, H_out, W_out) of a conv of `kind` on an input of T x H x W frames."""
    if kind == CAUSAL:
        return t, h, w
    if kind == DOWNSAMPLE:  # (H + 1 - 3) // 2 + 1 after ZeroPad2d((0, 1, 0, 1))
        return t, (h - 2) // 2 + 1, (w - 2) // 2 + 1
    return t, 2 * h, 2 * w


_TEMPORAL = _lib.TEMPORAL_3X1X1
_CACHED = "causal_conv3d_cached"  # the op name of the cached causal conv's refusals


def _fail(code, kind, text):
    """Raises the refusal of the op `kind` names (a conv kind, or an op name such as _CACHED)."""
    name = kind if isinstance(kind, str) else _KIND_NAMES[kind]
    raise VaeconvError(code, f"vaeconv: {name}: {text}")


def _check(kind, x, weight, bias, residual):
    """Shape and dtype checks shared by the real and fake implementations."""
    bad = _lib.INVALID_ARGUMENT
    ranks = (5,) if kind == CAUSAL else (4, 5)
    if x.dim() not in ranks:
        _fail(bad, kind, f"x must have {' or '.join(map(str, ranks))} dims, got {tuple(x.shape)}")
    if x.dtype != torch.bfloat16:
        _fail(_lib.UNSUPPORTED, kind, f"x must be bfloat16, got {x.dtype}")
    wdims = 5 if kind == CAUSAL else 4
    cin = x.shape[1]
    if weight.dim() != wdims or weight.shape[1] != cin or tuple(weight.shape[2:]) != (3,) * (wdims - 2):
        _fail(bad, kind, f"weight must be [Cout, {cin}{', 3' * (wdims - 2)}], got {tuple(weight.shape)}")
    if not weight.is_floating_point():
        _fail(_lib.UNSUPPORTED, kind, f"weight must be floating point, got {weight.dtype}")
    cout = weight.shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != cout or not bias.is_floating_point()):
        _fail(bad, kind, f"bias must be a float [{cout}], got {tuple(bias.shape)} {bias.dtype}")
    for name, t in (("weight", weight), ("bias", bias), ("residual", residual)):
        if t is not None and t.device != x.device:
            _fail(bad, kind, f"{name} is on {t.device}, x on {x.device}")
    h, w = x.shape[-2], x.shape[-1]
    if kind == DOWNSAMPLE and (h < 2 or w < 2):
        _fail(bad, kind, f"the downsample conv needs H, W >= 2, got {h} x {w}")
    t = x.shape[2] if x.dim() == 5 else 1
    if min(x.shape[0], t, h, w, cin, cout) < 1:
        _fail(bad, kind, f"empty tensor: x {tuple(x.shape)}, weight {tuple(weight.shape)}")
    out = _out_shape(kind, x, cout)
    if residual is not None and (tuple(residual.shape) != out or residual.dtype != torch.bfloat16):
        _fail(bad, kind, f"residual must be bfloat16 {out}, got {tuple(residual.shape)} {residual.dtype}")
    return out


def _out_shape(kind, x, cout):
    t = x.shape[2] if x.dim() == 5 else 1
    to, ho, wo = output_size(kind, t, x.shape[-2], x.shape[-1])
    return (x.shape[0], cout, to, ho, wo) if x.dim() == 5 else (x.shape[0], cout, ho, wo)


def _empty_channels_last(shape, like):
    """bf16 tensor of logical `shape` (NC[T]HW) in channels-last memory."""
    if len(shape) == 5:
        n, c, t, h, w = shape
        return torch.empty((n, t, h, w, c), dtype=torch.bfloat16, device=like.device).permute(0, 4, 1, 2, 3)
    n, c, h, w = shape
    return torch.empty((n, h, w, c), dtype=torch.bfloat16, device=like.device).permute(0, 3, 1, 2)


def _channels_last_view(x):
    """x as a dense N[T]HWC tensor with a 16-byte-aligned start: a view where x already is one,
    else one copy."""
    perm = (0, 2, 3, 4, 1) if x.dim() == 5 else (0, 2, 3, 1)
    v = x.permute(*perm)
    if v.is_contiguous() and v.data_ptr() % 16 == 0:
        return v
    return v.clone(memory_format=torch.contiguous_format)


# --- Packed weights, once per parameter --------------------------------------------------------

class _PackedWeights:
    """One parameter's packed weights on the device (a vaeconv_weights handle) and its fp32 bias."""

    def __init__(self, handle, version, storage_ref):
        self.handle = handle
        self.version = version
        self.storage_ref = storage_ref
        self.bias_key = None
        self.bias_f32 = None
        self.bias_ref = lambda: None  # the bias storage bias_f32 was made from (a weak reference)

    def destroy(self):
        if self.handle:
            lib = _lib.load()
            lib.vaeconv_weights_destroy(self.handle)
            self.handle = None


_cache = {}
_cache_lock = threading.Lock()


def _version_of(t):
    try:
        return t._version
    except RuntimeError:  # inference tensors keep no version counter
        return None


def _drop(key):
    with _cache_lock:
        entry = _cache.pop(key, None)
    if entry is not None:
        entry.destroy()


def clear_weight_cache():
    """Destroys every packed weight (they are packed again on their next use)."""
    with _cache_lock:
        entries = list(_cache.values())
        _cache.clear()
    for e in entries:
        e.destroy()


def release_weights(weight):
    """Destroys the packed copies of `weight` (vaeconv.torch.unpatch calls it)."""
    ptr = weight.untyped_storage().data_ptr()
    with _cache_lock:
        keys = [k for k in _cache if k[0] == ptr]
    for k in keys:
        _drop(k)


def weight_cache_size():
    return len(_cache)


def _stream_of(device):
    """The current PyTorch stream of `device` as a cudaStream_t / hipStream_t (ROCm builds of
    PyTorch name theirs cuda_stream too)."""
    return ctypes.c_void_p(torch.cuda.current_stream(device).cuda_stream)


def _packed(kind, weight, shape, fp8):
    """The packed-weights entry of `weight` for this kind / T = 1 or video / dtype. The key holds
    the storage's address and the view's offset and geometry; an entry is valid while the same
    storage object lives (a weak reference: a new parameter at a freed address is not mistaken for
    the old one) and its version counter has not moved (in-place updates)."""
    storage = weight.untyped_storage()
    key = (storage.data_ptr(), weight.storage_offset(), tuple(weight.shape), tuple(weight.stride()),
           kind, shape.t == 1, bool(fp8), weight.device.index)
    version = _version_of(weight)
    entry = _cache.get(key)
    if entry is not None and entry.storage_ref() is storage and entry.version == version:
        return entry
    if entry is not None:
        _drop(key)
    lib = _lib.load()
    host = weight.detach().to(device="cpu", dtype=torch.bfloat16).contiguous()
    handle = ctypes.c_void_p()
    buf = _lib.message_buffer()
    create = lib.vaeconv_weights_create_fp8 if fp8 else lib.vaeconv_weights_create_bf16
    code = create(ctypes.byref(shape), ctypes.c_void_p(host.data_ptr()), host.numel(),
                  _stream_of(weight.device), ctypes.byref(handle), buf, len(buf))
    _lib.check(code, buf, f"{_KIND_NAMES[kind]}: packing weights {tuple(weight.shape)}")
    entry = _PackedWeights(handle, version, weakref.ref(storage))
    with _cache_lock:
        _cache[key] = entry
    weakref.finalize(storage, _drop, key)
    return entry


def _bias_f32(entry, bias):
    """The bias as the dense fp32 vector the C ABI takes, kept on the weights' entry while the
    same storage object lives (a weak reference, as for the weights: a new bias at a freed
    address, with the same version counter, is not mistaken for the old one) and unchanged."""
    if bias is None:
        return None
    storage = bias.untyped_storage()
    key = (bias.data_ptr(), _version_of(bias), bias.dtype)
    if entry.bias_key != key or entry.bias_f32 is None or entry.bias_ref() is not storage:
        entry.bias_f32 = bias.detach().to(torch.float32).contiguous()
        entry.bias_key = key
        entry.bias_ref = weakref.ref(storage)
    return entry.bias_f32


def _run(kind, x, weight, bias, residual, fp8):
    out_shape = _check(kind, x, weight, bias, residual)
    if x.device.type == "cpu":
        return _reference(kind, x, weight, bias, residual)
    if x.device.type != "cuda":
        _fail(_lib.UNSUPPORTED, kind, f"tensors on {x.device}: vaeconv runs on CUDA or HIP devices")
    lib = _lib.load()
    with torch.cuda.device(x.device):
        xv = _channels_last_view(x)
        n = x.shape[0]
        t = x.shape[2] if x.dim() == 5 else 1
        shape = _lib.ConvShape(kind, n, t, x.shape[-2], x.shape[-1], x.shape[1], weight.shape[0])
        entry = _packed(kind, weight, shape, fp8)
        b = _bias_f32(entry, bias)
        y = _empty_channels_last(out_shape, x)
        r = _channels_last_view(residual) if residual is not None else None
        stream = _stream_of(x.device)
        vp = ctypes.c_void_p
        bptr = vp(b.data_ptr()) if b is not None else None
        rptr = vp(r.data_ptr()) if r is not None else None
        buf = _lib.message_buffer()
        if not fp8:
            code = lib.vaeconv_conv_bf16(ctypes.byref(shape), vp(xv.data_ptr()), entry.handle, bptr,
                                         rptr, vp(y.data_ptr()), stream, buf, len(buf))
            _lib.check(code, buf, f"{_KIND_NAMES[kind]} {tuple(x.shape)} -> {out_shape}")
            return y
        count = xv.numel()
        ws = lib.vaeconv_quantize_fp8_workspace_bytes(count)
        if ws == 0:
            _fail(_lib.INVALID_ARGUMENT, kind, f"no fp8 quantize workspace for {count} elements")
        xq = torch.empty(count, dtype=torch.uint8, device=x.device)
        scale = torch.empty(1, dtype=torch.float32, device=x.device)
        work = torch.empty(ws, dtype=torch.uint8, device=x.device)
        code = lib.vaeconv_quantize_fp8(vp(xv.data_ptr()), count, vp(xq.data_ptr()),
                                        vp(scale.data_ptr()), vp(work.data_ptr()), ws, stream, buf,
                                        len(buf))
        _lib.check(code, buf, f"{_KIND_NAMES[kind]}: quantizing x {tuple(x.shape)} to fp8")
        code = lib.vaeconv_conv_fp8(ctypes.byref(shape), vp(xq.data_ptr()), vp(scale.data_ptr()),
                                    entry.handle, bptr, rptr, vp(y.data_ptr()), None, stream, buf,
                                    len(buf))
        _lib.check(code, buf, f"{_KIND_NAMES[kind]} fp8 {tuple(x.shape)} -> {out_shape}")
        return y


def reference_conv(kind, x, weight, bias=None):
    """The aten computation each op replaces (fp32 accumulation where the inputs are bf16 on CPU,
    the input dtype otherwise); the tests compare against it."""
    if kind == CAUSAL:
        return F.conv3d(F.pad(x, (1, 1, 1, 1, 2, 0)), weight.to(x.dtype),
                        None if bias is None else bias.to(x.dtype))
    five = x.dim() == 5
    if five:
        n, c, t, h, w = x.shape
        x = x.permute(0, 2, 1, 3, 4).reshape(n * t, c, h, w)
    wt = weight.to(x.dtype)
    bt = None if bias is None else bias.to(x.dtype)
    if kind == DOWNSAMPLE:
        y = F.conv2d(F.pad(x, (0, 1, 0, 1)), wt, bt, stride=2)
    else:
        up = F.interpolate(x.float(), scale_factor=(2.0, 2.0), mode="nearest-exact").to(x.dtype)
        y = F.conv2d(up, wt, bt, padding=1)
    if five:
        y = y.reshape(n, t, *y.shape[1:]).permute(0, 2, 1, 3, 4)
    return y


def _check_cache(x, cache, most=2, op=_CACHED):
    bad = _lib.INVALID_ARGUMENT
    if cache.dim() != 5 or not 1 <= cache.shape[2] <= most or cache.shape[0] != x.shape[0] \
            or cache.shape[1] != x.shape[1] or tuple(cache.shape[3:]) != tuple(x.shape[3:]):
        _fail(bad, op, f"cache must be [{x.shape[0]}, {x.shape[1]}, 1..{most}, {x.shape[3]}, "
                           f"{x.shape[4]}] for x {tuple(x.shape)}, got {tuple(cache.shape)}")
    if cache.dtype != torch.bfloat16:
        _fail(_lib.UNSUPPORTED, op, f"cache must be bfloat16, got {cache.dtype}")
    if cache.device != x.device:
        _fail(bad, op, f"cache is on {cache.device}, x on {x.device}")


def reference_conv_cached(x, cache, weight, bias=None):
    """What causal_conv3d_cached replaces: diffusers' cat + pad + conv3d."""
    xc = torch.cat([cache.to(x.dtype), x], dim=2)
    return F.conv3d(F.pad(xc, (1, 1, 1, 1, 2 - cache.shape[2], 0)), weight.to(x.dtype),
                    None if bias is None else bias.to(x.dtype))


def reference_temporal(x, cache, weight, bias=None, stride=1):
    """What temporal_conv3d replaces: WanResample's time_conv on cat(cache, x) (front pad
    2 - frames at stride 1, 1 - frames at stride 2), then at stride 1 upsample3d's reshape + stack
    of the two channel halves into frames."""
    frames = 0 if cache is None else cache.shape[2]
    xc = x if cache is None else torch.cat([cache.to(x.dtype), x], dim=2)
    pad = (2 if stride == 1 else 1) - frames
    y = F.conv3d(F.pad(xc, (0, 0, 0, 0, pad, 0)), weight.to(x.dtype),
                 None if bias is None else bias.to(x.dtype), stride=(stride, 1, 1))
    if stride == 1:
        b, c2, t, h, w = y.shape
        y = y.reshape(b, 2, c2 // 2, t, h, w)
        y = torch.stack((y[:, 0], y[:, 1]), 3).reshape(b, c2 // 2, 2 * t, h, w)
    return y


def _check_temporal(x, cache, weight, bias, stride, residual=None):
    bad = _lib.INVALID_ARGUMENT
    if x.dim() != 5 or x.dtype != torch.bfloat16:
        _fail(bad, _TEMPORAL, f"x must be a bfloat16 [N, C, T, H, W], got {tuple(x.shape)} {x.dtype}")
    if stride not in (1, 2):
        _fail(bad, _TEMPORAL, f"temporal conv stride must be 1 or 2, got {stride}")
    cin = x.shape[1]
    if weight.dim() != 5 or weight.shape[1] != cin or tuple(weight.shape[2:]) != (3, 1, 1):
        _fail(bad, _TEMPORAL, f"weight must be [Cout, {cin}, 3, 1, 1], got {tuple(weight.shape)}")
    if not weight.is_floating_point():
        _fail(bad, _TEMPORAL, f"weight must be floating point, got {weight.dtype}")
    cout = weight.shape[0]
    if stride == 1 and cout % 2:
        _fail(bad, _TEMPORAL, f"stride 1 (upsample3d) needs an even Cout, got {cout}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != cout or not bias.is_floating_point()):
        _fail(bad, _TEMPORAL, f"bias must be a float [{cout}], got {tuple(bias.shape)} {bias.dtype}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.device != x.device:
            _fail(bad, _TEMPORAL, f"{name} is on {t.device}, x on {x.device}")
    frames = 0
    if cache is not None:
        _check_cache(x, cache, 2 if stride == 1 else 1, _TEMPORAL)
        frames = cache.shape[2]
    t_out = x.shape[2] if stride == 1 else (frames + x.shape[2] + (1 - frames) - 3) // 2 + 1
    if t_out < 1:
        _fail(bad, _TEMPORAL, f"stride 2 needs at least 3 frames with the cache, got {frames} + {x.shape[2]}")
    n, _, t, h, w = x.shape
    out_shape = (n, cout // 2, 2 * t, h, w) if stride == 1 else (n, cout, t_out, h, w)
    if residual is not None and (tuple(residual.shape) != out_shape or residual.dtype != torch.bfloat16):
        _fail(bad, _TEMPORAL, f"residual must be bfloat16 {out_shape}, got {tuple(residual.shape)} "
                             f"{residual.dtype}")
    if residual is not None and residual.device != x.device:
        _fail(bad, _TEMPORAL, f"residual is on {residual.device}, x on {x.device}")
    return out_shape


def _run_window(x, cache, weight, bias, residual, fp8, stride):
    """The cached causal conv (stride None) or the temporal conv (stride 1 or 2) on the device:
    the cache and x read in place (bf16), or quantized together with one scale (fp8)."""
    temporal = stride is not None
    if temporal:
        out_shape = _check_temporal(x, cache, weight, bias, stride, residual)
    else:
        out_shape = _check(CAUSAL, x, weight, bias, residual)
        _check_cache(x, cache)
    frames = 0 if cache is None else cache.shape[2]
    what = f"{'temporal_conv3d' if temporal else 'causal_conv3d_cached'} {tuple(x.shape)} + {frames} cached"
    if x.device.type == "cpu":
        if temporal:
            y = reference_temporal(x.float(), None if cache is None else cache.float(), weight.float(),
                                   None if bias is None else bias.float(), stride)
        else:
            y = reference_conv_cached(x.float(), cache.float(), weight.float(),
                                      None if bias is None else bias.float())
        if residual is not None:
            y = y + residual.float()
        out = _empty_channels_last(tuple(y.shape), x)
        out.copy_(y)
        return out
    op = _TEMPORAL if temporal else _CACHED
    if x.device.type != "cuda":
        _fail(_lib.UNSUPPORTED, op, f"tensors on {x.device}: vaeconv runs on CUDA or HIP devices")
    lib = _lib.load()
    kind = _lib.TEMPORAL_3X1X1 if temporal else CAUSAL
    with torch.cuda.device(x.device):
        n, t = x.shape[0], x.shape[2]
        cout = weight.shape[0]
        # Packing: every time tap (a causal shape with T >= 2; the temporal shape packs all three).
        pack_shape = _lib.ConvShape(kind, n, max(t, 2), x.shape[-2], x.shape[-1], x.shape[1], cout)
        entry = _packed(kind, weight, pack_shape, fp8)
        b = _bias_f32(entry, bias)
        y = _empty_channels_last(out_shape, x)
        r = _channels_last_view(residual) if residual is not None else None
        stream = _stream_of(x.device)
        vp = ctypes.c_void_p
        bptr = vp(b.data_ptr()) if b is not None else None
        buf = _lib.message_buffer()

        def conv(batch, c_ptr, x_ptr, scale_ptr, y_ptr, r_ptr):
            shape = _lib.ConvShape(kind, batch, t, x.shape[-2], x.shape[-1], x.shape[1], cout)
            if temporal:
                code = lib.vaeconv_conv_temporal(ctypes.byref(shape), stride, frames, c_ptr, x_ptr,
                                                 scale_ptr, entry.handle, bptr, r_ptr, y_ptr, stream,
                                                 buf, len(buf))
            else:
                code = lib.vaeconv_conv_cached(ctypes.byref(shape), frames, c_ptr, x_ptr, scale_ptr,
                                               entry.handle, bptr, r_ptr, y_ptr, stream, buf, len(buf))
            _lib.check(code, buf, what)

        if not fp8:
            xv = _channels_last_view(x)
            cv = _channels_last_view(cache) if cache is not None else None
            conv(n, vp(cv.data_ptr()) if cv is not None else None, vp(xv.data_ptr()), None,
                 vp(y.data_ptr()), vp(r.data_ptr()) if r is not None else None)
            return y
        # fp8: x and the cache share one scale, so they are quantized together (one cat).
        xc = _channels_last_view(x if cache is None else torch.cat([cache, x], dim=2))
        count = xc.numel()
        ws = lib.vaeconv_quantize_fp8_workspace_bytes(count)
        if ws == 0:
            _fail(_lib.INVALID_ARGUMENT, op, f"no fp8 quantize workspace for {count} elements")
        xq = torch.empty(xc.shape, dtype=torch.uint8, device=x.device)
        scale = torch.empty(1, dtype=torch.float32, device=x.device)
        work = torch.empty(ws, dtype=torch.uint8, device=x.device)
        code = lib.vaeconv_quantize_fp8(vp(xc.data_ptr()), count, vp(xq.data_ptr()),
                                        vp(scale.data_ptr()), vp(work.data_ptr()), ws, stream, buf,
                                        len(buf))
        _lib.check(code, buf, f"{what}: quantizing {tuple(xc.shape)} to fp8")
        # xq is [N, frames + T, H, W, C]; the C ABI takes the cached frames and x as two dense
        # tensors, so the two runs are split off (bytes, a fraction of the conv's traffic). One
        # call for the whole batch: per-element pointers into y or the residual would lose the
        # 16-byte alignment the kernels need whenever T*H*W*Cout is odd.
        cq = xq[:, :frames].contiguous() if frames else None
        xs = xq[:, frames:].contiguous()
        conv(n, vp(cq.data_ptr()) if cq is not None else None, vp(xs.data_ptr()),
             vp(scale.data_ptr()), vp(y.data_ptr()), vp(r.data_ptr()) if r is not None else None)
        return y


def _run_cached(x, cache, weight, bias, residual, fp8):
    return _run_window(x, cache, weight, bias, residual, fp8, None)


def _reference(kind, x, weight, bias, residual):
    y = reference_conv(kind, x.float(), weight.float(), None if bias is None else bias.float())
    if residual is not None:
        y = y + residual.float()
    out = _empty_channels_last(tuple(y.shape), x)
    out.copy_(y)
    return out


def _fake(kind, x, weight, bias, residual):
    return _empty_channels_last(_check(kind, x, weight, bias, residual), x)


# --- The registered ops ------------------------------------------------------------------------

@torch.library.custom_op("vaeconv::causal_conv3d", mutates_args=())
def causal_conv3d(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
                  residual: Optional[torch.Tensor] = None, fp8: bool = False) -> torch.Tensor:
    return _run(CAUSAL, x, weight, bias, residual, fp8)


@torch.library.custom_op("vaeconv::downsample_conv2d", mutates_args=())
def downsample_conv2d(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
                      residual: Optional[torch.Tensor] = None, fp8: bool = False) -> torch.Tensor:
    return _run(DOWNSAMPLE, x, weight, bias, residual, fp8)


@torch.library.custom_op("vaeconv::upsample_conv2d", mutates_args=())
def upsample_conv2d(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
                    residual: Optional[torch.Tensor] = None, fp8: bool = False) -> torch.Tensor:
    return _run(UPSAMPLE, x, weight, bias, residual, fp8)


@torch.library.custom_op("vaeconv::causal_conv3d_cached", mutates_args=())
def causal_conv3d_cached(x: torch.Tensor, cache: torch.Tensor, weight: torch.Tensor,
                         bias: Optional[torch.Tensor] = None,
                         residual: Optional[torch.Tensor] = None, fp8: bool = False) -> torch.Tensor:
    return _run_cached(x, cache, weight, bias, residual, fp8)


@causal_conv3d_cached.register_fake
def _(x, cache, weight, bias=None, residual=None, fp8=False):
    out = _check(CAUSAL, x, weight, bias, residual)
    _check_cache(x, cache)
    return _empty_channels_last(out, x)


@torch.library.custom_op("vaeconv::temporal_conv3d", mutates_args=())
def temporal_conv3d(x: torch.Tensor, cache: Optional[torch.Tensor], weight: torch.Tensor,
                    bias: Optional[torch.Tensor] = None, residual: Optional[torch.Tensor] = None,
                    stride: int = 1, fp8: bool = False) -> torch.Tensor:
    return _run_window(x, cache, weight, bias, residual, fp8, stride)


@temporal_conv3d.register_fake
def _(x, cache, weight, bias=None, residual=None, stride=1, fp8=False):
    return _empty_channels_last(_check_temporal(x, cache, weight, bias, stride, residual), x)


@causal_conv3d.register_fake
def _(x, weight, bias=None, residual=None, fp8=False):
    return _fake(CAUSAL, x, weight, bias, residual)


@downsample_conv2d.register_fake
def _(x, weight, bias=None, residual=None, fp8=False):
    return _fake(DOWNSAMPLE, x, weight, bias, residual)


@upsample_conv2d.register_fake
def _(x, weight, bias=None, residual=None, fp8=False):
    return _fake(UPSAMPLE, x, weight, bias, residual)


OPS = {CAUSAL: causal_conv3d, DOWNSAMPLE: downsample_conv2d, UPSAMPLE: upsample_conv2d}


# --- RMS norm ------------------------------------------------------------------------------------
#   torch.ops.vaeconv.rms_norm(x, gamma, bias=None, silu=False)
#       diffusers' QwenImageRMS_norm / WanRMS_norm with channel_first=True over x [N, C, H, W] or
#       [N, C, T, H, W] (bf16): F.normalize(x, dim=1) * sqrt(C) * gamma + bias, computed in fp32 and
#       rounded once, then (silu=True) v * sigmoid(v) of that fp32 value; one pass of the library's
#       kernel (kernel/rms_norm_kernel.hpp). gamma and bias (any float dtype, C elements in any
#       shape, e.g. the module's (C, 1, 1, 1) parameters) are converted to fp32 once per parameter
#       version. C must be a multiple of 8. x channels-last is read in place (any other layout is
#       copied once); the output is channels-last. reference_rms_norm is the aten computation.

__all__ += ["rms_norm", "reference_rms_norm"]


def _norm_fail(code, text):
    raise VaeconvError(code, f"vaeconv: rms_norm: {text}")


def _check_rms_norm(x, gamma, bias):
    bad = _lib.INVALID_ARGUMENT
    if x.dim() not in (4, 5):
        _norm_fail(bad, f"x must have 4 or 5 dims (N, C, [T,] H, W), got {tuple(x.shape)}")
    if x.dtype != torch.bfloat16:
        _norm_fail(_lib.UNSUPPORTED, f"x must be bfloat16, got {x.dtype}")
    c = x.shape[1]
    for name, t in (("gamma", gamma), ("bias", bias)):
        if t is None:
            continue
        if t.numel() != c or not t.is_floating_point():
            _norm_fail(bad, f"{name} must be a float tensor of C = {c} elements, got "
                            f"{tuple(t.shape)} {t.dtype}")
        if t.device != x.device:
            _norm_fail(bad, f"{name} is on {t.device}, x on {x.device}")
    if c % 8 != 0:
        _norm_fail(_lib.UNSUPPORTED, f"channels C = {c} is not a multiple of 8 (the kernel reads "
                                     f"16-byte vectors of 8 bf16)")
    if x.numel() == 0:
        _norm_fail(bad, f"empty tensor: x {tuple(x.shape)}")


def reference_rms_norm(x, gamma, bias=None, silu=False):
    """What rms_norm computes, in aten at fp32: F.normalize over the channels (dim 1), times
    sqrt(C), gamma and bias, then SiLU (silu=True)."""
    c = x.shape[1]
    bshape = (1, c) + (1,) * (x.dim() - 2)
    y = F.normalize(x.float(), dim=1) * (c ** 0.5) * gamma.float().reshape(bshape)
    if bias is not None:
        y = y + bias.float().reshape(bshape)
    return F.silu(y) if silu else y


_norm_params = {}
_norm_params_lock = threading.Lock()


def _param_f32(t):
    """t as a dense, 16-byte-aligned fp32 vector: t itself where it already is one, else a copy
    kept per parameter (its storage and version counter: an in-place update is seen)."""
    flat = t.detach().reshape(-1)
    if flat.dtype == torch.float32 and flat.is_contiguous() and flat.data_ptr() % 16 == 0:
        return flat
    storage = t.untyped_storage()
    key = (storage.data_ptr(), t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype,
           t.device.index)
    version = _version_of(t)  # None for an inference tensor: no counter, taken as unchanged
    hit = _norm_params.get(key)
    if hit is not None and hit[0]() is storage and hit[1] == version:
        return hit[2]
    f32 = flat.to(torch.float32).clone()
    if f32.is_cuda and not torch.cuda.is_current_stream_capturing():
        # Once per parameter version: a later call on another stream must not read the copy
        # before this stream has written it.
        torch.cuda.current_stream(f32.device).synchronize()
    with _norm_params_lock:
        new_key = key not in _norm_params
        _norm_params[key] = (weakref.ref(storage), version, f32)
    if new_key:
        weakref.finalize(storage, _norm_params.pop, key, None)
    return f32


def _run_rms_norm(x, gamma, bias, silu):
    _check_rms_norm(x, gamma, bias)
    if x.device.type == "cpu":
        out = _empty_channels_last(tuple(x.shape), x)
        out.copy_(reference_rms_norm(x, gamma, bias, silu))
        return out
    if x.device.type != "cuda":
        _norm_fail(_lib.UNSUPPORTED, f"tensors on {x.device}: vaeconv runs on CUDA or HIP devices")
    lib = _lib.load()
    with torch.cuda.device(x.device):
        xv = _channels_last_view(x)
        g = _param_f32(gamma)
        b = _param_f32(bias) if bias is not None else None
        y = _empty_channels_last(tuple(x.shape), x)
        c = x.shape[1]
        vp = ctypes.c_void_p
        buf = _lib.message_buffer()
        code = lib.vaeconv_rms_norm(vp(xv.data_ptr()), x.numel() // c, c, vp(g.data_ptr()),
                                    vp(b.data_ptr()) if b is not None else None, 1 if silu else 0,
                                    vp(y.data_ptr()), _stream_of(x.device), buf, len(buf))
        _lib.check(code, buf, f"rms_norm {tuple(x.shape)}")
        return y


@torch.library.custom_op("vaeconv::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, gamma: torch.Tensor, bias: Optional[torch.Tensor] = None,
             silu: bool = False) -> torch.Tensor:
    return _run_rms_norm(x, gamma, bias, silu)


@rms_norm.register_fake
def _(x, gamma, bias=None, silu=False):
    _check_rms_norm(x, gamma, bias)
    return _empty_channels_last(tuple(x.shape), x)
