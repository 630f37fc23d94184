"""A character-level GPT in pk.nn: token and position embeddings, pre-norm transformer blocks
of causal multi-head attention and a GELU MLP, a final layer norm and a linear head. The same
module names as the usual PyTorch GPT, so a state dict maps one to one.

Used by examples/train_gpt.py and by the training benchmark (python -m benchmarks --only train).
"""

from __future__ import annotations

from dataclasses import dataclass

import pykern as pk
import pykern.nn as nn


@dataclass(frozen=True)
class GPTConfig:
    vocab: int
    context: int = 64
    layers: int = 2
    d_model: int = 64
    heads: int = 4
    dropout: float = 0.0


class Block(nn.Module):
    """x + attention(ln_1(x)), then x + mlp(ln_2(x))."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        d = cfg.d_model
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, cfg.heads, dropout=cfg.dropout, batch_first=True)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d),
                                 nn.Dropout(cfg.dropout))

    def forward(self, x: pk.Tensor) -> pk.Tensor:
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, need_weights=False, is_causal=True)[0]
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """(batch, time) token ids -> (batch, time, vocab) logits of the next token."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.layers)])
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

    def forward(self, idx: pk.Tensor) -> pk.Tensor:
        t = idx.shape[1]
        if t > self.cfg.context:
            raise ValueError(f"GPT: {t} tokens, more than the context of {self.cfg.context}")
        x = self.tok_emb(idx) + self.pos_emb(pk.arange(t, dtype=pk.i32))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def loss_of(model: GPT, x: pk.Tensor, y: pk.Tensor) -> pk.Tensor:
    """The mean cross-entropy of the next-token predictions for x (batch, time) against y."""
    logits = model(x)
    b, t, v = logits.shape
    return pk.nn.functional.cross_entropy(logits.reshape(b * t, v), y.reshape(b * t))
