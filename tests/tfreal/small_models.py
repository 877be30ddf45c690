"""Zoo architectures at test size for tests/run-tfreal.sh, built by
tools/torch2gir's MODULE:FUNCTION path (run from the source tree:
tools/torch2gir tests.tfreal.small_models:transformer --batch 4).  The
zoo's own builders (tools/zoo_models.py) at sizes a 2-core test runs in
seconds: the same layers (embeddings, nn.Transformer with layer norm,
softmax attention and a causal mask; BERT's GELU, segment embeddings and
masked-LM head), small widths and vocabularies.  dropout 0 for the
equality checks; transformer_dropout keeps 0.5 for the check that the
rate is honoured."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools'))
import zoo_models  # noqa: E402


def transformer(batch=4, seq=8, vocab=64, dropout=0.0, **kw):
    m = zoo_models.Seq2Seq(vocab, 32, 2, 1, 64, seq, dropout=dropout)
    g = torch.Generator().manual_seed(0)
    return m, (torch.randint(0, vocab, (batch, seq), generator=g),
               torch.randint(0, vocab, (batch, seq), generator=g))


def transformer_dropout(batch=4, **kw):
    return transformer(batch, dropout=0.5)


def bert(batch=4, seq=8, vocab=64, **kw):
    m = zoo_models.EncoderLM(vocab, 32, 2, 1, 64, seq, act="gelu", segments=2,
                             mlm_head=True, dropout=0.0)
    m.out.weight = m.tok.weight
    g = torch.Generator().manual_seed(0)
    return m, (torch.randint(0, vocab, (batch, seq), generator=g),)
