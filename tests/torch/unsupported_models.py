"""Modules torch2gir refuses on purpose (tests/torch/test_user_models.py):
each must end in one line naming the module or the choice to make."""

import torch
import torch.nn as nn


class Packed(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.rnn = nn.LSTM(4, 8, batch_first=True, **kw)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        p = nn.utils.rnn.pack_padded_sequence(x, [x.shape[1]] * x.shape[0],
                                              batch_first=True)
        _, (h, _) = self.rnn(p)
        return self.head(h[-1])


def packed_lstm(batch=2, **kw):
    return Packed(), (torch.randn(batch, 5, 4),)


class Proj(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 8, proj_size=2, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0][:, -1]


def lstm_proj(batch=2, **kw):
    return Proj(), (torch.randn(batch, 5, 4),)


class IntOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 3)

    def forward(self, x):
        return self.l(x).argmax(1, keepdim=True).expand(-1, 3)


def int_output(batch=2, **kw):
    return IntOut(), (torch.randn(batch, 4),)


class NoneOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 3)

    def forward(self, x):
        self.l(x)
        return None


def none_output(batch=2, **kw):
    return NoneOut(), (torch.randn(batch, 4),)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Linear(4, 3)
        self.scale = torch.ones(3)      # not a buffer

    def forward(self, x):
        return self.w(x) * self.scale


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = Scaled()

    def forward(self, x):
        return self.l(x)


def plain_tensor(batch=2, **kw):
    return Holder(), (torch.randn(batch, 4),)


class DataDependent(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 3)

    def forward(self, x):
        if x.sum() > 0:             # a branch on the data
            return self.l(x)
        return -self.l(x)


def data_dependent(batch=2, **kw):
    return DataDependent(), (torch.randn(batch, 4),)


class LayerDrop(nn.Module):
    """Hugging Face's LayerDrop: in training, each layer is skipped when a
    fresh random number falls below its probability."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        for layer in self.layers:
            if self.training and torch.rand([]) < 0.1:
                continue
            x = x + layer(x)
        return self.head(x)


def layerdrop(batch=2, **kw):
    return LayerDrop(), (torch.randn(batch, 4),)


class Raiser(nn.Module):
    def forward(self, x):
        raise ValueError("this module refuses")


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Raiser()

    def forward(self, x):
        return self.inner(x)


def raises(batch=2, **kw):
    return Outer(), (torch.randn(batch, 4),)
