"""The torch twins of the training benchmark's models: examples/gpt_model.py's GPT (the same
layers, the same parameter names and shapes, so pykern's initial weights are loaded into it and
both start from the same loss; attention through torch's fused scaled_dot_product_attention)
and the MLP."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .ops_torch import like_for_like


def torch_gpt(torch: Any, cfg: Any) -> Any:
    """A torch.nn.Module of `cfg` (a GPTConfig)."""
    nn, functional = torch.nn, torch.nn.functional
    d, heads = cfg.d_model, cfg.heads

    class Attention(nn.Module):  # torch.nn.MultiheadAttention's parameters, causal sdpa
        def __init__(self) -> None:
            super().__init__()
            self.in_proj_weight = nn.Parameter(torch.empty(3 * d, d))
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * d))
            self.out_proj = nn.Linear(d, d)

        def forward(self, x: Any) -> Any:
            b, t, _ = x.shape
            qkv = functional.linear(x, self.in_proj_weight, self.in_proj_bias)
            q, k, v = (part.reshape(b, t, heads, d // heads).transpose(1, 2)
                       for part in qkv.split(d, dim=-1))
            y = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.out_proj(y.transpose(1, 2).reshape(b, t, d))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(d), Attention(), nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d),
                                     nn.Dropout(cfg.dropout))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok_emb = nn.Embedding(cfg.vocab, d)
            self.pos_emb = nn.Embedding(cfg.context, d)
            self.blocks = nn.ModuleList([Block() for _ in range(cfg.layers)])
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, cfg.vocab, bias=False)

        def forward(self, idx: Any) -> Any:
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.tok_emb(idx) + self.pos_emb(pos)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return GPT()


def torch_loss(torch: Any, model: Any, x: Any, y: Any) -> Any:
    logits = model(x)
    b, t, v = logits.shape
    return torch.nn.functional.cross_entropy(logits.reshape(b * t, v), y.reshape(b * t))


def torch_mlp(torch: Any, n_in: int, hidden: int, classes: int) -> Any:
    """The MLP of the training benchmark: pk.nn.Sequential's parameter names."""
    nn = torch.nn
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, classes))


def timed_steps(torch: Any, step: Callable[[], None], sync: Callable[[], None], warmup: int,
                steps: int) -> float:
    """Milliseconds per call of `step`: `warmup` untimed calls, then `steps` timed ones, the
    device drained (`sync`) before the clock starts and before it stops, with torch set up as
    the other side (`like_for_like`)."""
    with like_for_like(torch):
        for _ in range(warmup):
            step()
        sync()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        return (time.perf_counter() - start) / steps * 1e3
