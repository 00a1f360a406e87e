"""A small module tree with the class names and attributes vaeconv.torch.patch looks for, standing
in for diffusers' Qwen-Image / Wan VAE where diffusers is not installed (CI). Written from the
behaviour the patch relies on: a causal Conv3d subclass whose `_padding` is the F.pad argument and
whose forward takes an optional cache tensor, and a resample module whose `resample` Sequential is
ZeroPad2d + stride-2 Conv2d or x2 nearest-exact Upsample + Conv2d, applied frame by frame."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class QwenImageCausalConv3d(nn.Conv3d):
    def __init__(self, cin, cout, kernel_size, stride=1, padding=0):
        super().__init__(cin, cout, kernel_size, stride=stride, padding=padding)
        p = self.padding
        self._padding = (p[2], p[2], p[1], p[1], 2 * p[0], 0)  # causal: all time padding in front
        self.padding = (0, 0, 0)

    def forward(self, x, cache_x=None):
        pad = list(self._padding)
        if cache_x is not None and pad[4] > 0:
            x = torch.cat([cache_x.to(x.device), x], dim=2)
            pad[4] -= cache_x.shape[2]
        return super().forward(F.pad(x, pad))


class WanCausalConv3d(QwenImageCausalConv3d):
    pass


class QwenImageUpsample(nn.Upsample):
    def forward(self, x):
        return super().forward(x.float()).type_as(x)


class QwenImageResample(nn.Module):
    def __init__(self, dim, mode):
        super().__init__()
        self.mode = mode
        if mode == "upsample2d":
            self.resample = nn.Sequential(QwenImageUpsample(scale_factor=(2.0, 2.0), mode="nearest-exact"),
                                          nn.Conv2d(dim, dim // 2, 3, padding=1))
        elif mode == "downsample2d":
            self.resample = nn.Sequential(nn.ZeroPad2d((0, 1, 0, 1)), nn.Conv2d(dim, dim, 3, stride=(2, 2)))
        else:
            self.resample = nn.Identity()

    def forward(self, x):
        b, c, t, h, w = x.shape
        x = x.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)
        x = self.resample(x)
        return x.view(b, t, x.shape[1], x.shape[2], x.shape[3]).permute(0, 2, 1, 3, 4)


class WanResample(QwenImageResample):
    pass


class StandInVae(nn.Module):
    """conv_in (3x3x3) -> residual-style pair with a 1x1x1 shortcut -> downsample -> (3,1,1) time
    conv -> upsample -> conv_out (3x3x3, Cout = 3). `cache` feeds the cache path to conv_in."""

    def __init__(self, cin=3, dim=16, causal=QwenImageCausalConv3d, resample=QwenImageResample):
        super().__init__()
        self.conv_in = causal(cin, dim, 3, padding=1)
        self.conv1 = causal(dim, 2 * dim, 3, padding=1)
        self.shortcut = causal(dim, 2 * dim, 1)
        self.down = resample(2 * dim, "downsample2d")
        self.time_conv = causal(2 * dim, 2 * dim, (3, 1, 1), padding=(1, 0, 0))
        self.up = resample(2 * dim, "upsample2d")
        self.ident = resample(dim, "none")
        self.conv_out = causal(dim, 3, 3, padding=1)

    def forward(self, x, cache=None):
        h = self.conv_in(x, cache)
        h = self.conv1(torch.nn.functional.silu(h)) + self.shortcut(h)
        h = self.time_conv(self.down(h))
        h = self.ident(self.up(h))
        return self.conv_out(h)
