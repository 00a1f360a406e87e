"""vaeconv: the Qwen-Image / Wan VAE conv kernels (libvaeconv_kernels) for PyTorch.

    import vaeconv.torch
    vaeconv.torch.patch(vae)        # diffusers AutoencoderKLQwenImage / AutoencoderKLWan
    vaeconv.torch.unpatch(vae)

The ops themselves are torch.ops.vaeconv.{causal_conv3d, causal_conv3d_cached, temporal_conv3d,
downsample_conv2d, upsample_conv2d} (vaeconv.ops). `import vaeconv` needs neither PyTorch nor the library; the library is loaded on
first use (vaeconv._lib says where it is looked for).
"""
from ._lib import VaeconvError, LibraryNotFound, available, backend, check_device, version

__all__ = ["VaeconvError", "LibraryNotFound", "available", "backend", "check_device", "version",
           "library_path"]
__version__ = "0.1.0"


def library_path():
    """The file the library was (or would be) loaded from."""
    from . import _lib
    lib = _lib.load()
    return lib._name
