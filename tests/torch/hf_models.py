"""Hugging Face transformers models as users bring them (small configs,
random weights, nothing downloaded), for tests/torch/test_user_models.py:
GPT-2, LLaMA with grouped-query attention, BERT, RoBERTa, ViT, T5,
wav2vec 2.0, Whisper, BLOOM and Swin.  Each
returns (model, inputs) with a wrapper whose forward returns the logits
tensor torch2gir's cross-entropy reads."""

import torch
import torch.nn as nn


def _t():
    import transformers
    return transformers


class Logits(nn.Module):
    def __init__(self, model, **fixed):
        super().__init__()
        self.m = model
        self.fixed = fixed

    def forward(self, x):
        if x.is_floating_point() and self.fixed.get("audio"):
            return self.m(input_values=x).logits
        if x.is_floating_point() and self.fixed.get("features"):
            return self.m(input_features=x).logits
        if x.is_floating_point():
            return self.m(pixel_values=x).logits
        if self.fixed.get("decoder"):
            return self.m(input_ids=x, decoder_input_ids=x).logits
        return self.m(input_ids=x).logits


def _ids(batch, vocab=100, seq=16):
    return torch.randint(0, vocab, (batch, seq))


def gpt2(batch=2, **kw):
    """GPT-2: learned positions (an arange), causal attention by a
    registered mask, Conv1D layers, the LM head tied to the tokens."""
    T = _t()
    c = T.GPT2Config(vocab_size=100, n_positions=32, n_embd=32, n_layer=2,
                     n_head=4, bos_token_id=0, eos_token_id=0)
    return Logits(T.GPT2LMHeadModel(c)), (_ids(batch),)


def llama(batch=2, **kw):
    """LLaMA: RMSNorm, rotary positions computed from inv_freq and an
    arange in the forward (their cos and sin fold to constants),
    grouped-query attention (4 query heads over 2 key-value heads),
    SwiGLU."""
    T = _t()
    c = T.LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=32,
                      bos_token_id=0, eos_token_id=0, pad_token_id=0)
    return Logits(T.LlamaForCausalLM(c)), (_ids(batch),)


def bert(batch=2, **kw):
    """BERT for sequence classification: the token table's padding_idx 0
    gets no gradient, token types gathered from a buffer by position."""
    T = _t()
    c = T.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=64,
                     max_position_embeddings=32, num_labels=3)
    return Logits(T.BertForSequenceClassification(c)), (_ids(batch),)


def vit(batch=2, **kw):
    T = _t()
    c = T.ViTConfig(image_size=32, patch_size=8, hidden_size=32,
                    num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=64, num_labels=5)
    return Logits(T.ViTForImageClassification(c)), (torch.randn(batch, 3, 32, 32),)


def t5(batch=2, **kw):
    """T5: relative position buckets (integer arithmetic on an arange,
    folded at import), RMS layer norm, encoder and decoder."""
    T = _t()
    c = T.T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                   num_heads=4, decoder_start_token_id=0, pad_token_id=0,
                   eos_token_id=1)
    return Logits(T.T5ForConditionalGeneration(c), decoder=True), (_ids(batch),)


def wav2vec2(batch=2, **kw):
    """wav2vec 2.0 for audio classification: a Conv1d feature encoder
    (GroupNorm on the first), a positional grouped Conv1d under weight
    normalisation (dimension 2), a Transformer encoder, mean pooling.
    LayerDrop off: it skips layers by a random draw each step, which no
    static graph can."""
    T = _t()
    c = T.Wav2Vec2Config(vocab_size=32, hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=4, intermediate_size=64,
                         conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                         num_labels=3, mask_time_prob=0.0, layerdrop=0.0,
                         feat_extract_norm="group")
    return Logits(T.Wav2Vec2ForSequenceClassification(c), audio=True), \
        (torch.randn(batch, 400),)


def whisper(batch=2, **kw):
    """Whisper's encoder for audio classification: two Conv1d over log-mel
    features (the second strided), GELU, frozen sinusoidal positions (a
    parameter with requires_grad off: a Const), pre-norm attention blocks,
    a weighted mean over time."""
    T = _t()
    c = T.WhisperConfig(vocab_size=64, num_mel_bins=8, encoder_layers=2,
                        decoder_layers=1, d_model=32, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=64,
                        decoder_ffn_dim=64, max_source_positions=16,
                        max_target_positions=16, num_labels=3, pad_token_id=0,
                        bos_token_id=0, eos_token_id=0, decoder_start_token_id=0)
    return Logits(T.WhisperForAudioClassification(c), features=True), \
        (torch.randn(batch, 8, 32),)


def bloom(batch=2, **kw):
    """BLOOM: ALiBi position biases added to the scores by baddbmm with
    beta 1 and alpha 1/sqrt(head size)."""
    T = _t()
    c = T.BloomConfig(vocab_size=100, hidden_size=32, n_layer=2, n_head=4)
    return Logits(T.BloomForCausalLM(c)), (_ids(batch),)


def swin(batch=2, **kw):
    """Hugging Face's Swin with stochastic depth on (drop_path_rate 0.5):
    keep_prob + torch.rand per sample, floored."""
    T = _t()
    c = T.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                     num_heads=[2, 2], window_size=4, num_labels=3,
                     drop_path_rate=0.5)
    return Logits(T.SwinForImageClassification(c)), (torch.randn(batch, 3, 32, 32),)


def roberta(batch=2, **kw):
    """RoBERTa: position ids counted from the ids themselves
    (cumsum(ids != padding_idx) + padding_idx), token types gathered from
    a buffer of zeros by those positions.  A table of 4 rows, so that
    hashed ids hit the padding id 1 often."""
    T = _t()
    c = T.RobertaConfig(vocab_size=4, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=40, num_labels=3, pad_token_id=1)
    return Logits(T.RobertaForSequenceClassification(c)), (_ids(batch, vocab=4, seq=12),)
