"""Builders for tests/torch/test_torch2gir.py's MODULE:FUNCTION tests."""

import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    """Returns a tuple: the first element is the logits; a frozen layer."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 16)
        self.frozen = nn.Linear(16, 16)
        self.frozen.requires_grad_(False)
        self.head = nn.Linear(16, 5)
        self.aux = nn.Linear(16, 2)

    def forward(self, x, scale):
        h = torch.relu(self.frozen(torch.relu(self.body(x)))) * scale
        return self.head(h), self.aux(h)


def two_heads(batch=4, **kw):
    """(model, inputs, labels): two inputs, given labels."""
    return (TwoHeads(), (torch.randn(batch, 6), torch.randn(batch, 1)),
            torch.randint(0, 5, (batch,)))


def not_a_model(batch=4, **kw):
    return 42


ACTS = {"gelu": lambda: nn.GELU(), "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
        "silu": lambda: nn.SiLU(), "hardswish": lambda: nn.Hardswish(),
        "hardsigmoid": lambda: nn.Hardsigmoid()}


class Lowered(nn.Module):
    """Every composition torch2gir lowers to core ops: layer norm, an
    activation, dropout, attention (batched matmuls, softmax along the
    last dimension and its backward), softmax and log-softmax along
    dimension 1."""

    def __init__(self, act):
        super().__init__()
        self.l1 = nn.Linear(6, 16)
        self.ln = nn.LayerNorm(16)
        self.act = ACTS[act]()
        self.drop = nn.Dropout(0.25)
        self.l2 = nn.Linear(16, 5)

    def forward(self, x):
        h = self.drop(self.act(self.ln(self.l1(x))))
        q = h.view(-1, 4, 4)
        att = torch.softmax(torch.bmm(q, q.transpose(1, 2)), dim=-1)
        h = torch.bmm(att, q)
        h = torch.softmax(h, dim=1) + torch.log_softmax(h, dim=1)
        return self.l2(h.reshape(-1, 16))


def lowered(batch=2, act="gelu", **kw):
    return Lowered(act), (torch.randn(batch, 6),)


def lowered_gelu_tanh(batch=4, **kw):
    return lowered(batch, "gelu_tanh")


def lowered_silu(batch=4, **kw):
    return lowered(batch, "silu")


def lowered_hardswish(batch=4, **kw):
    return lowered(batch, "hardswish")


def lowered_hardsigmoid(batch=4, **kw):
    return lowered(batch, "hardsigmoid")


class Adaptive(nn.Module):
    """Adaptive average pooling from 7x5 to 3x2: windows of uneven size."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3, padding=1)
        self.p = nn.AdaptiveAvgPool2d((3, 2))
        self.l = nn.Linear(24, 5)

    def forward(self, x):
        return self.l(torch.flatten(self.p(torch.relu(self.c(x))), 1))


def adaptive(batch=2, **kw):
    return Adaptive(), (torch.randn(batch, 3, 7, 5),)


class Pools(nn.Module):
    """Padding that TensorFlow's SAME does not express: a 3x3 stride-2
    convolution with padding 1 on an even size (PyTorch pads both sides),
    max pooling likewise, average pooling that counts the padding
    (PyTorch's default; stride 1, and stride 2 whose last window stops
    short of the padding after) and one that does not (TensorFlow's
    SAME)."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4)
        self.l = nn.Linear(4 * 2 * 2 * 3, 5)

    def forward(self, x):
        h = torch.relu(self.c(x))                           # 16 -> 8
        h = nn.functional.max_pool2d(h, 3, 2, 1)            # 8 -> 4
        a = nn.functional.avg_pool2d(h, 3, 1, 1)            # counts padding
        c = nn.functional.avg_pool2d(h, 3, 2, 1)            # 4 -> 2, pads 1, 0
        b = nn.functional.avg_pool2d(h, 3, 1, 1, count_include_pad=False)
        h = self.dw(a * b)                                  # 4 -> 2
        return self.l(torch.cat([h, h * h, c], 1).flatten(1))


def pools(batch=2, **kw):
    return Pools(), (torch.randn(batch, 3, 16, 16),)


class NativeDropout(nn.Module):
    """ATen's native_dropout, called directly (fused dropout's op)."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(6, 16)
        self.l2 = nn.Linear(16, 5)

    def forward(self, x):
        h, _ = torch.native_dropout(torch.tanh(self.l1(x)), 0.25, True)
        return self.l2(h)


def native_dropout(batch=2, **kw):
    return NativeDropout(), (torch.randn(batch, 6),)


class RelBias(nn.Module):
    """A relative-position-bias lookup (Swin, MaxViT): a parameter table
    indexed by a constant integer buffer, with a 2-D and a 1-D index; its
    gradient is an index_put that accumulates into zeros."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(7, 3))
        self.register_buffer("index", torch.tensor(
            [(i * 3 + j) % 7 for i in range(4) for j in range(4)]).view(4, 4))
        self.l = nn.Linear(6, 5)

    def forward(self, x):
        b2 = self.table[self.index].reshape(16, 3)          # [4, 4, 3]
        b1 = self.table[self.index.view(-1)]                # [16, 3]
        return self.l(torch.tanh(torch.cat([x @ b2, x @ (b1 * b1)], 1)))


def relbias(batch=2, **kw):
    return RelBias(), (torch.randn(batch, 16),)


def swin_tiny(batch=2, **kw):
    """torchvision's Swin Transformer at toy size: 20x20 images, 2x2
    patches, 3x3 windows over 10x10, 5x5 and 3x3 maps, so that windows pad
    (constant_pad_nd, and its negative-pad gradient), shifted windows roll
    (roll) with their attention mask (ne, eq, masked_fill), patch merging
    takes every other row and column (slice with step 2, an odd map padded
    first), relative position bias indexes its table, and stochastic depth
    draws keep masks."""
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(0)
    m = SwinTransformer(patch_size=[2, 2], embed_dim=8, depths=[2, 2, 2],
                        num_heads=[1, 2, 2], window_size=[3, 3], num_classes=5,
                        stochastic_depth_prob=0.2)
    return m, (torch.randn(batch, 3, 20, 20),)


def swin_v2_tiny(batch=2, **kw):
    """torchvision's Swin Transformer v2 at the same toy size: its cosine
    attention (the 2-norm of queries and keys, clamped below, and a
    learned logit scale clamped above: norm, clamp_min, clamp, and where
    in their gradients), a continuous position bias from a small MLP, and
    v2's patch merging; its backward takes rows of a flattened tensor
    through as_strided."""
    from torchvision.models.swin_transformer import (
        PatchMergingV2, SwinTransformer, SwinTransformerBlockV2)
    torch.manual_seed(0)
    m = SwinTransformer(patch_size=[2, 2], embed_dim=8, depths=[2, 2, 2],
                        num_heads=[1, 2, 2], window_size=[3, 3], num_classes=5,
                        stochastic_depth_prob=0.2, block=SwinTransformerBlockV2,
                        downsample_layer=PatchMergingV2)
    return m, (torch.randn(batch, 3, 20, 20),)
