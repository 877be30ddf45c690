"""Models of `make bench-real` (bench/real.sh) that torch2gir builds:
    cd bench && ../tools/torch2gir real_models:small_transformer --batch 8
Contract: tools/zoo_models.py's (FUNCTION(batch=N) -> (model, inputs))."""
import torch

from zoo_models import EncoderLM


def small_transformer(batch=8, seq=32, vocab=512, **kw):
    """A small BERT-shaped encoder: 2 layers, d_model 64, 4 heads, FFN
    256, sequence 32, vocabulary 512, ReLU, dropout 0.1: about 0.17 M
    parameters.  Small enough to train on one CPU thread in milliseconds."""
    m = EncoderLM(vocab, 64, 4, 2, 256, seq)
    return m, (torch.randint(0, vocab, (batch, seq)),)
