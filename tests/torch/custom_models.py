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
