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
