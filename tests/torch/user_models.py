"""Models a user brings that are not in the zoo (issue 12), for
tests/torch/test_torch2gir.py: attention with a boolean mask, a small
GPT-style decoder, recurrent networks, a model returning a dict, and
modules torch2gir refuses on purpose."""

import torch
import torch.nn as nn


class MHA(nn.Module):
    """nn.MultiheadAttention (batch first) with a boolean causal attn_mask:
    True = masked, filled with -inf before the softmax."""

    def __init__(self, seq=6, dim=8, heads=2, classes=3, mask=True):
        super().__init__()
        self.emb = nn.Linear(4, dim)
        self.att = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.head = nn.Linear(dim, classes)
        m = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", m if mask else None)

    def forward(self, x):
        h = self.emb(x)
        a, _ = self.att(h, h, h, attn_mask=self.mask, need_weights=False)
        return self.head(a.mean(dim=1))


def mha(batch=4, **kw):
    return MHA(), (torch.randn(batch, 6, 4),)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.att = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.att(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """A GPT-style decoder: token and position embeddings, causal
    self-attention blocks, a tied-free LM head; labels are next tokens."""

    def __init__(self, vocab=32, seq=8, dim=16, heads=2, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, seq, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self.register_buffer(
            "mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

    def forward(self, idx):
        x = self.tok(idx) + self.pos
        for b in self.blocks:
            x = b(x, self.mask)
        return self.head(self.ln(x))


def gpt(batch=4, **kw):
    idx = torch.randint(0, 32, (batch, 8))
    return GPT(), (idx,), torch.randint(0, 32, (batch, 8))


class RNN(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(4, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


def lstm(batch=4, **kw):
    return RNN(nn.LSTM), (torch.randn(batch, 5, 4),)


def gru(batch=4, **kw):
    return RNN(nn.GRU), (torch.randn(batch, 5, 4),)


class DictOut(nn.Module):
    """Returns {"out": logits, "aux": logits} as torchvision's segmentation
    models do."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 8)
        self.out = nn.Linear(8, 3)
        self.aux = nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return {"out": self.out(h), "aux": self.aux(h)}


def dict_out(batch=4, **kw):
    return DictOut(), (torch.randn(batch, 6),)


class InfConst(nn.Module):
    """A -inf constant in the graph: max(h, -inf) = h (a buffer)."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(6, 3)
        self.register_buffer("floor", torch.tensor(float("-inf")))

    def forward(self, x):
        return torch.maximum(self.l(x), self.floor)


def inf_const(batch=4, **kw):
    return InfConst(), (torch.randn(batch, 6),)


# torch 2's attention (F.scaled_dot_product_attention; nn.MultiheadAttention
# runs on it): torch2gir takes its math form (tools/torch2gir, math_attention).

class Sdpa(nn.Module):
    """Causal self-attention written with F.scaled_dot_product_attention
    (is_causal=True: the math form builds the mask with ones(L, L).tril())."""

    def __init__(self, seq, dim=8, heads=2, classes=3):
        super().__init__()
        self.seq, self.dim, self.heads = seq, dim, heads
        self.qkv = nn.Linear(4, 3 * dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        import torch.nn.functional as F
        b, t, d, h = x.shape[0], self.seq, self.dim, self.heads
        q, k, v = self.qkv(x).view(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.head(y.transpose(1, 2).reshape(b, t, d).mean(dim=1))


def sdpa(batch=4, **kw):
    """8 positions: the causal mask's 64 values are known (one Const)."""
    return Sdpa(8), (torch.randn(batch, 8, 4),)


def sdpa_long(batch=4, **kw):
    """260 positions: a mask of 67,600 values, more than torch2gir writes
    out, so it is made from the row and column numbers."""
    return Sdpa(260), (torch.randn(batch, 260, 4),)


class PaddedMHA(nn.Module):
    """nn.MultiheadAttention with a key padding mask: the first sample's
    every key is padding, so its queries attend to nothing (torch 2 gives
    them 0, not NaN: _safe_softmax); the second's last two are."""

    def __init__(self, batch, seq=5, dim=8, heads=2, classes=3):
        super().__init__()
        self.emb = nn.Linear(4, dim)
        self.att = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.head = nn.Linear(dim, classes)
        kpm = torch.zeros(batch, seq, dtype=torch.bool)
        kpm[0, :] = True
        kpm[1:, 3:] = True
        self.register_buffer("kpm", kpm)

    def forward(self, x):
        h = self.emb(x)
        a, _ = self.att(h, h, h, key_padding_mask=self.kpm, need_weights=False)
        return self.head(a.mean(dim=1))


def padded_mha(batch=4, **kw):
    return PaddedMHA(batch), (torch.randn(batch, 5, 4),)


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · w, as LLaMA writes it (x.pow(2))."""

    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w


def rotary(x, cos, sin):
    """Rotary position embedding on interleaved pairs of features."""
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).flatten(-2)


class LlamaBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = RMSNorm(dim), RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.gate = nn.Linear(dim, 4 * dim, bias=False)
        self.up = nn.Linear(dim, 4 * dim, bias=False)
        self.down = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x, cos, sin):
        import torch.nn.functional as F
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(y.transpose(1, 2).reshape(b, t, d))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    """A LLaMA-style decoder: RMSNorm, rotary positions, causal
    scaled_dot_product_attention, a SwiGLU MLP, the LM head tied to the
    token embedding."""

    def __init__(self, vocab=32, seq=8, dim=16, heads=2, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(LlamaBlock(dim, heads) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight
        hd = dim // heads
        ang = torch.arange(seq).float()[:, None] * \
            (1.0 / 10000 ** (torch.arange(0, hd, 2).float() / hd))[None]
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())

    def forward(self, idx):
        x = self.tok(idx)
        for b in self.blocks:
            x = b(x, self.cos, self.sin)
        return self.head(self.norm(x))


def llama(batch=4, **kw):
    return Llama(), (torch.randint(0, 32, (batch, 8)),), torch.randint(0, 32, (batch, 8))


class UpBlock(nn.Module):
    """A diffusion U-Net's decoder block in small: convolution, GroupNorm
    (4 groups of 2 channels), SiLU, nearest upsampling by 2 (and by 3 x 1),
    convolution, a class head."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.gn = nn.GroupNorm(4, 8)
        self.c2 = nn.Conv2d(8, 4, 3, padding=1)
        self.gn2 = nn.GroupNorm(2, 4, affine=False)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        import torch.nn.functional as F
        y = F.silu(self.gn(self.c1(x)))
        y = F.interpolate(y, scale_factor=2, mode="nearest")
        y = self.gn2(self.c2(y))
        y = F.interpolate(y, scale_factor=(3, 1), mode="nearest")
        return self.head(y.mean(dim=(2, 3)))


def up_block(batch=4, **kw):
    return UpBlock(), (torch.randn(batch, 3, 6, 5),)


class BilinearSeg(nn.Module):
    """A segmentation head's resizing in small: bilinear to a given size
    (align_corners=False, FCN's and DeepLab's), then by a scale factor of
    1.5 with align_corners=True, and down to a smaller size."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 4, 1)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        import torch.nn.functional as F
        y = F.interpolate(self.c1(x), size=(13, 11), mode="bilinear",
                          align_corners=False)
        y = F.interpolate(F.relu(self.c2(y)), scale_factor=1.5, mode="bilinear",
                          align_corners=True)
        y = F.interpolate(y, size=(7, 5), mode="bilinear", align_corners=False)
        return self.head(y.mean(dim=(2, 3)))


def bilinear_seg(batch=4, **kw):
    return BilinearSeg(), (torch.randn(batch, 3, 6, 5),)


class PaddedEncoder(nn.Module):
    """A pre-norm GELU nn.TransformerEncoder whose key padding mask comes
    from the ids themselves (ids == 3, the embedding's padding_idx): an
    integer comparison in the graph, and a table row with no gradient.
    A table of 4 rows, so that hashed ids hit the padding id often."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(4, 16, padding_idx=3)
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True,
                                           norm_first=True, activation="gelu")
        try:
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        except TypeError:           # torch 1.13 has no enable_nested_tensor
            self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 3)

    def forward(self, ids):
        h = self.enc(self.emb(ids), src_key_padding_mask=ids == 3)
        return self.head(h.mean(dim=1))


def padded_encoder(batch=4, **kw):
    ids = torch.randint(0, 4, (batch, 7))
    ids[:, -2:] = 3
    return PaddedEncoder(), (ids,)


class Audio1d(nn.Module):
    """A keyword-spotting or TCN-style network over a sequence [N, C, L]:
    Conv1d (padded, strided, dilated, asymmetrically padded by stride),
    BatchNorm1d on [N, C, L], a depthwise Conv1d, max and average pooling
    over time, adaptive average pooling, and BatchNorm1d on [N, C] in
    a residual head (a bias just before a batch norm has no gradient
    but float noise)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(3, 8, 5, stride=2, padding=2, bias=False)
        self.bn1 = nn.BatchNorm1d(8)
        self.dw = nn.Conv1d(8, 8, 3, padding=2, dilation=2, groups=8)
        self.c2 = nn.Conv1d(8, 6, 1, bias=False)
        self.pool = nn.MaxPool1d(2)
        self.c3 = nn.Conv1d(6, 6, 3, stride=2)
        self.avg = nn.AvgPool1d(3, stride=1, padding=1)
        self.gap = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(6, 6, bias=False)
        self.bn2 = nn.BatchNorm1d(6)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        y = torch.relu(self.bn1(self.c1(x)))
        y = self.pool(self.c2(torch.relu(self.dw(y))))
        y = self.avg(torch.relu(self.c3(y)))
        y = self.gap(y).flatten(1)
        return self.head(y + torch.relu(self.bn2(self.fc(y))))


def audio1d(batch=4, **kw):
    return Audio1d(), (torch.randn(batch, 3, 29),)


class TConv(nn.Module):
    """Transposed convolutions, as a U-Net's or a GAN generator's decoder
    uses them: ConvTranspose2d with stride 2, padding 1 and
    output_padding 1; DCGAN's kernel 4, stride 2, padding 1 without bias;
    a dilated one; and ConvTranspose1d with stride 3 and padding 2."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 6, 3, padding=1)
        self.t1 = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1)
        self.t2 = nn.ConvTranspose2d(4, 4, 4, stride=2, padding=1, bias=False)
        self.t3 = nn.ConvTranspose2d(4, 3, 3, dilation=2)
        self.t1d = nn.ConvTranspose1d(3, 2, 5, stride=3, padding=2)
        self.head = nn.Linear(2, 3)

    def forward(self, x):
        y = torch.relu(self.t1(torch.relu(self.c(x))))
        y = self.t3(torch.relu(self.t2(y)))
        s = self.t1d(y.mean(dim=2))                 # [N, 3, W] -> [N, 2, W']
        return self.head(torch.tanh(s).mean(dim=2))


def tconv(batch=4, **kw):
    return TConv(), (torch.randn(batch, 3, 4, 5),)


class WeightNormConv(nn.Module):
    """wav2vec2's positional convolution in small: a grouped Conv1d under
    weight normalisation along dimension 2 (nn.utils.weight_norm), and a
    Linear normalised along its default dimension 0."""

    def __init__(self):
        super().__init__()
        wn = nn.utils.weight_norm
        self.pos = wn(nn.Conv1d(8, 8, 5, padding=2, groups=4), name="weight", dim=2)
        self.fc = wn(nn.Linear(8, 3))

    def forward(self, x):
        y = x + torch.nn.functional.gelu(self.pos(x))
        return self.fc(y.mean(dim=2))


def weight_norm(batch=4, **kw):
    return WeightNormConv(), (torch.randn(batch, 8, 11),)


class DropPathNet(nn.Module):
    """Stochastic depth as timm and Hugging Face write it: a residual
    branch kept per sample when keep_prob + torch.rand(...), floored, is
    1, and scaled by 1 / keep_prob."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(8, 8), nn.Tanh())
                                    for _ in range(2))
        self.head = nn.Linear(8, 3)

    def drop_path(self, x):
        keep = 1 - self.p
        r = keep + torch.rand((x.shape[0],) + (1,) * (x.dim() - 1), dtype=x.dtype)
        r.floor_()
        return x.div(keep) * r

    def forward(self, x):
        for b in self.blocks:
            x = x + self.drop_path(b(x))
        return self.head(x)


def drop_path(batch=8, **kw):
    return DropPathNet(), (torch.randn(batch, 8),)
