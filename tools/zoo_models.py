"""Model builders for tools/torch2gir's MODULE:FUNCTION path (the model zoo).

Contract (docs/models.md): FUNCTION(batch=N[, image_size=S]) returns
(model, inputs) or (model, inputs, labels).  Everything here is built from
torch.nn with random weights; nothing is downloaded.

    tools/torch2gir zoo_models:transformer_base --batch 480 -o transformer.gir
    tools/torch2gir zoo_models:bert_large --batch 16 -o bert_large.gir
"""

import math

import torch
import torch.nn as nn


class EncoderLM(nn.Module):
    """BERT's shape: token + position (+ segment) embeddings, an
    nn.TransformerEncoder and a token-level classifier over the vocabulary
    (masked-LM style head)."""

    def __init__(self, vocab, d_model, heads, layers, ffn, seq, act="relu",
                 segments=0, mlm_head=False, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq, d_model)
        self.seg = nn.Embedding(segments, d_model) if segments else None
        self.norm = nn.LayerNorm(d_model) if segments else None
        self.drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(d_model, heads, ffn, dropout,
                                           activation=act, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers,
                                             enable_nested_tensor=False)
        if mlm_head:
            self.head = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(),
                                      nn.LayerNorm(d_model))
        else:
            self.head = None
        self.out = nn.Linear(d_model, vocab)
        self.register_buffer("positions", torch.arange(seq).unsqueeze(0),
                             persistent=False)

    def forward(self, tokens):
        h = self.tok(tokens) + self.pos(self.positions)
        if self.seg is not None:
            h = h + self.seg(torch.zeros_like(tokens))
        if self.norm is not None:
            h = self.norm(h)
        h = self.encoder(self.drop(h))
        if self.head is not None:
            h = self.head(h)
        return self.out(h)


class Seq2Seq(nn.Module):
    """The Transformer of Vaswani et al. (2017): source and target token
    embeddings scaled by sqrt(d_model) plus fixed sinusoidal positions, an
    nn.Transformer encoder-decoder (post-norm, ReLU, dropout 0.1), a causal
    mask on the target, and a linear layer over the target vocabulary."""

    def __init__(self, vocab, d_model, heads, layers, ffn, seq, dropout=0.1):
        super().__init__()
        self.scale = d_model ** 0.5
        self.src_emb = nn.Embedding(vocab, d_model)
        self.tgt_emb = nn.Embedding(vocab, d_model)
        pos = torch.arange(seq).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(seq, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("causal", mask, persistent=False)
        self.drop = nn.Dropout(dropout)
        self.transformer = nn.Transformer(d_model, heads, layers, layers, ffn,
                                          dropout, batch_first=True)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, source, target):
        s = self.drop(self.src_emb(source) * self.scale + self.pe)
        t = self.drop(self.tgt_emb(target) * self.scale + self.pe)
        return self.out(self.transformer(s, t, tgt_mask=self.causal))


def transformer_base(batch=480, seq=128, vocab=37000, **kw):
    """Transformer base (Vaswani et al. 2017, the model TAG Table 3 and
    FastT train): 6 encoder and 6 decoder layers, d_model 512, 8 heads,
    FFN 2048, source and target sequences of 128 tokens, a 37000-token
    vocabulary (WMT'14 En-De BPE), embeddings not shared: about 101 M
    parameters."""
    m = Seq2Seq(vocab, 512, 8, 6, 2048, seq)
    return m, (torch.randint(0, vocab, (batch, seq)),
               torch.randint(0, vocab, (batch, seq)))


def bert_large(batch=16, seq=128, vocab=30522, **kw):
    """BERT-large: 24 layers, hidden 1024, 16 heads, FFN 4096, GELU,
    sequence 128, token/position/segment embeddings and the masked-LM head
    (dense + GELU + LayerNorm + vocabulary projection tied to the token
    embedding): about 335 M parameters."""
    m = EncoderLM(vocab, 1024, 16, 24, 4096, seq, act="gelu", segments=2,
                  mlm_head=True)
    m.out.weight = m.tok.weight         # BERT ties the decoder to the embedding
    return m, (torch.randint(0, vocab, (batch, seq)),)


def tiny(batch=4, **kw):
    """A small CNN + MLP for tests."""
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 8 * 8, 10))
    return m, (torch.randn(batch, 3, 16, 16),)


def bert_tiny(batch=4, seq=8, vocab=50, **kw):
    """BERT's architecture at toy size, for the C runtime's end-to-end
    tests: 2 layers, hidden 16, 2 heads, FFN 32, GELU, dropout 0.1,
    segment embeddings, the masked-LM head, the tied decoder."""
    m = EncoderLM(vocab, 16, 2, 2, 32, seq, act="gelu", segments=2, mlm_head=True)
    m.out.weight = m.tok.weight
    return m, (torch.randint(0, vocab, (batch, seq)),)


def transformer_tiny(batch=4, seq=8, vocab=40, **kw):
    """The Transformer's architecture at toy size (C runtime tests): one
    encoder and one decoder layer, d_model 16, 2 heads, FFN 32, dropout
    0.1, the causal mask."""
    m = Seq2Seq(vocab, 16, 2, 1, 32, seq)
    return m, (torch.randint(0, vocab, (batch, seq)),
               torch.randint(0, vocab, (batch, seq)))
