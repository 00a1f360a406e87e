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
    """Modes upsample2d / downsample2d / none, and upsample3d / downsample3d with a (3,1,1)
    `time_conv` and the chunked-video cache protocol: forward(x, feat_cache, feat_idx) reads and
    advances slot feat_idx[0]. upsample3d: the first chunk only leaves the sentinel "Rep" (no time
    conv); later chunks run time_conv (zero front pad after "Rep", else the 2 stored frames in
    front), store their last 2 input frames (a zero frame / the stored last frame in front of a
    one-frame chunk), and split the 2 C output channels into two frames per input frame.
    downsample3d (after the spatial conv): the first chunk is stored whole, later chunks run the
    stride-2 time_conv on (the stored last frame, the chunk) and store their last frame."""

    def __init__(self, dim, mode):
        super().__init__()
        self.mode = mode
        if mode in ("upsample2d", "upsample3d"):
            self.resample = nn.Sequential(QwenImageUpsample(scale_factor=(2.0, 2.0), mode="nearest-exact"),
                                          nn.Conv2d(dim, dim // 2, 3, padding=1))
        elif mode in ("downsample2d", "downsample3d"):
            self.resample = nn.Sequential(nn.ZeroPad2d((0, 1, 0, 1)), nn.Conv2d(dim, dim, 3, stride=(2, 2)))
        else:
            self.resample = nn.Identity()
        causal = WanCausalConv3d if type(self).__name__.startswith("Wan") else QwenImageCausalConv3d
        if mode == "upsample3d":
            self.time_conv = causal(dim, 2 * dim, (3, 1, 1), padding=(1, 0, 0))
        elif mode == "downsample3d":
            self.time_conv = causal(dim, dim, (3, 1, 1), stride=(2, 1, 1), padding=(0, 0, 0))

    def forward(self, x, feat_cache=None, feat_idx=[0]):
        b, c, t, h, w = x.shape
        if self.mode == "upsample3d" and feat_cache is not None:
            slot = feat_idx[0]
            stored = feat_cache[slot]
            feat_idx[0] += 1
            if stored is None:
                feat_cache[slot] = "Rep"
            else:
                first = isinstance(stored, str)
                keep = x[:, :, -2:].clone()
                if keep.shape[2] == 1:
                    keep = torch.cat([torch.zeros_like(keep) if first else stored[:, :, -1:], keep], 2)
                y = self.time_conv(x) if first else self.time_conv(x, stored)
                feat_cache[slot] = keep
                y = y.reshape(b, 2, c, t, h, w)
                x = torch.stack((y[:, 0], y[:, 1]), 3).reshape(b, c, 2 * t, h, w)
        t = x.shape[2]
        x = x.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)
        x = self.resample(x)
        x = x.view(b, t, x.shape[1], x.shape[2], x.shape[3]).permute(0, 2, 1, 3, 4)
        if self.mode == "downsample3d" and feat_cache is not None:
            slot = feat_idx[0]
            stored = feat_cache[slot]
            feat_idx[0] += 1
            if stored is None:
                feat_cache[slot] = x.clone()
            else:
                keep = x[:, :, -1:].clone()
                x = self.time_conv(torch.cat([stored[:, :, -1:], x], 2))
                feat_cache[slot] = keep
        return x


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


# --- A Wan-like chunked video VAE --------------------------------------------------------------

def cached_conv(conv, x, feat_cache, feat_idx):
    """A causal conv under the cache protocol of the residual blocks / conv_in / conv_out: slot
    feat_idx[0] holds the frames the previous chunk left (None on the first chunk); this chunk
    leaves its last 2 input frames (the stored last frame in front of a one-frame chunk)."""
    if feat_cache is None:
        return conv(x)
    slot = feat_idx[0]
    stored = feat_cache[slot]
    keep = x[:, :, -2:].clone()
    if keep.shape[2] == 1 and stored is not None:
        keep = torch.cat([stored[:, :, -1:], keep], 2)
    y = conv(x, stored)
    feat_cache[slot] = keep
    feat_idx[0] += 1
    return y


class ResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = WanCausalConv3d(cin, cout, 3, padding=1)
        self.conv2 = WanCausalConv3d(cout, cout, 3, padding=1)
        self.shortcut = WanCausalConv3d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, feat_cache=None, feat_idx=[0]):
        h = self.shortcut(x)
        x = cached_conv(self.conv1, F.silu(x), feat_cache, feat_idx)
        x = cached_conv(self.conv2, F.silu(x), feat_cache, feat_idx)
        return x + h


class WanLikeVae(nn.Module):
    """Encoder: conv_in (RGB) -> res -> downsample3d -> res -> downsample3d -> res -> conv_out
    (2 z channels); decoder: conv_in -> res -> upsample3d -> res -> upsample3d -> res -> conv_out
    (RGB). Time x4 and space x4 down / up, chunked as diffusers' AutoencoderKLWan runs it: encode
    in chunks of 1, 4, 4, ... frames, decode one latent frame at a time, each with its own
    feat_cache list that lives across the chunks (kept afterwards in enc_cache / dec_cache)."""

    def __init__(self, dim=16, z_dim=8):
        super().__init__()
        d2 = 2 * dim
        self.enc = nn.ModuleList([WanCausalConv3d(3, dim, 3, padding=1), ResBlock(dim, dim),
                                  WanResample(dim, "downsample3d"), ResBlock(dim, d2),
                                  WanResample(d2, "downsample3d"), ResBlock(d2, d2),
                                  WanCausalConv3d(d2, 2 * z_dim, 3, padding=1)])
        self.dec = nn.ModuleList([WanCausalConv3d(z_dim, 2 * d2, 3, padding=1), ResBlock(2 * d2, 2 * d2),
                                  WanResample(2 * d2, "upsample3d"), ResBlock(d2, d2),
                                  WanResample(d2, "upsample3d"), ResBlock(dim, dim),
                                  WanCausalConv3d(dim, 3, 3, padding=1)])
        self.enc_cache = self.dec_cache = None

    @staticmethod
    def run(layers, x, feat_cache, feat_idx):
        for layer in layers:
            if isinstance(layer, WanCausalConv3d):
                x = cached_conv(layer, x, feat_cache, feat_idx)
            else:
                x = layer(x, feat_cache, feat_idx)
        return x

    def encode(self, x):
        self.enc_cache = [None] * 32
        bounds = [(0, 1)] + [(s, s + 4) for s in range(1, x.shape[2], 4)]
        return torch.cat([self.run(self.enc, x[:, :, a:b], self.enc_cache, [0]) for a, b in bounds], 2)

    def decode(self, z):
        self.dec_cache = [None] * 32
        return torch.cat([self.run(self.dec, z[:, :, i:i + 1], self.dec_cache, [0])
                          for i in range(z.shape[2])], 2)


# --- Residual blocks with norms, as vaeconv.torch.patch's residual-block swap expects ------------

CACHE_T = 2  # the module constant the residual-block patch checks (diffusers' CACHE_T)


class QwenImageRMS_norm(nn.Module):
    """diffusers' RMS norm (its constructor's signature): F.normalize over dim 1 (channel_first) or
    the last dim (fp32 for bf16 inputs, rounded back), times sqrt(C), gamma and bias."""

    def __init__(self, dim, channel_first=True, images=True, bias=False):
        super().__init__()
        shape = (dim, 1, 1) if images else (dim, 1, 1, 1)
        if not channel_first:
            shape = (dim,)
        self.channel_first = channel_first
        self.scale = dim ** 0.5
        self.gamma = nn.Parameter(torch.ones(shape))
        self.bias = nn.Parameter(torch.zeros(shape)) if bias else 0.0

    def forward(self, x):
        low = x.dtype in (torch.float16, torch.bfloat16)
        n = F.normalize(x.float() if low else x, dim=1 if self.channel_first else -1).to(x.dtype)
        return n * self.scale * self.gamma + self.bias


class WanRMS_norm(QwenImageRMS_norm):
    pass


class QwenImageResidualBlock(nn.Module):
    """shortcut h; norm1, SiLU, conv1; norm2, SiLU, dropout, conv2; + h. With feat_cache each conv
    reads its slot (None on the first chunk) and leaves its input's last CACHE_T frames there (the
    slot's last frame in front of a one-frame chunk), then the slot index advances."""

    norm_class, conv_class = QwenImageRMS_norm, QwenImageCausalConv3d

    def __init__(self, in_dim, out_dim, dropout=0.0):
        super().__init__()
        self.nonlinearity = nn.SiLU()
        self.norm1 = self.norm_class(in_dim, images=False)
        self.conv1 = self.conv_class(in_dim, out_dim, 3, padding=1)
        self.norm2 = self.norm_class(out_dim, images=False)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = self.conv_class(out_dim, out_dim, 3, padding=1)
        self.conv_shortcut = self.conv_class(in_dim, out_dim, 1) if in_dim != out_dim else nn.Identity()

    def forward(self, x, feat_cache=None, feat_idx=[0]):
        h = self.conv_shortcut(x)
        x = self.norm1(x)
        x = self.nonlinearity(x)
        if feat_cache is None:
            x = self.conv1(x)
        else:
            slot = feat_idx[0]
            keep = x[:, :, -CACHE_T:].clone()
            if keep.shape[2] == 1 and feat_cache[slot] is not None:
                keep = torch.cat([feat_cache[slot][:, :, -1:], keep], 2)
            x = self.conv1(x, feat_cache[slot])
            feat_cache[slot] = keep
            feat_idx[0] += 1
        x = self.norm2(x)
        x = self.nonlinearity(x)
        x = self.dropout(x)
        if feat_cache is None:
            x = self.conv2(x)
        else:
            slot = feat_idx[0]
            keep = x[:, :, -CACHE_T:].clone()
            if keep.shape[2] == 1 and feat_cache[slot] is not None:
                keep = torch.cat([feat_cache[slot][:, :, -1:], keep], 2)
            x = self.conv2(x, feat_cache[slot])
            feat_cache[slot] = keep
            feat_idx[0] += 1
        return x + h


class WanResidualBlock(QwenImageResidualBlock):
    norm_class, conv_class = WanRMS_norm, WanCausalConv3d
