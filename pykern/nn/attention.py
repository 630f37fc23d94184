"""`pk.nn.MultiheadAttention` with PyTorch's parameters and state_dict keys (batch_first)."""

from __future__ import annotations

import math

import pykern as pk
from pykern.nn import functional as F
from pykern.nn.linear import Linear
from pykern.nn.module import Module
from pykern.nn.parameter import Parameter
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor


class MultiheadAttention(Module):
    """Attention of `num_heads` heads of embed_dim // num_heads each over (N, L, E) queries and
    (N, S, E) keys and values. Parameters as PyTorch: in_proj_weight (3E, E) (xavier uniform),
    in_proj_bias (3E,) (zeros), out_proj (a Linear whose bias starts at zero). Only
    batch_first=True is supported: pass it, so that a port from PyTorch's sequence-first
    default cannot silently mix up its axes."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 batch_first: bool = False, dtype: object = pk.f32) -> None:
        super().__init__()
        if not batch_first:
            raise ValueError("MultiheadAttention: only batch_first=True is supported (inputs "
                             "(batch, sequence, embed_dim)); pass batch_first=True")
        if num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible "
                             f"by num_heads ({num_heads})")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.head_dim = self.embed_dim // self.num_heads
        self.dropout, self.batch_first = float(dropout), True
        e = self.embed_dim
        bound = math.sqrt(6.0 / (e + 3 * e))  # xavier uniform of a (3E, E) weight
        self.in_proj_weight = Parameter(pk.random.uniform(-bound, bound, (3 * e, e), dtype))
        if bias:
            self.in_proj_bias = Parameter(pk.zeros((3 * e,), dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(e, e, bias=bias, dtype=dtype)
        if bias:
            self.out_proj.bias = Parameter(pk.zeros((e,), dtype=dtype))

    def _heads(self, x: Tensor, part: int) -> Tensor:
        """Projection `part` (0 q, 1 k, 2 v) of x (N, L, E) as (N, H, L, head_dim)."""
        e = self.embed_dim
        w = self.in_proj_weight[part * e:(part + 1) * e]
        b = None if self.in_proj_bias is None else self.in_proj_bias[part * e:(part + 1) * e]
        y = F.linear(x, w, b)
        n, length = y.shape[:2]
        return y.reshape(n, length, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """(output (N, L, E), weights) as PyTorch: bool masks are True where attention is NOT
        allowed, float masks are added to the scores; attn_mask is (L, S) or (N*H, L, S),
        key_padding_mask (N, S). is_causal without attn_mask masks the keys j > i. The
        weights are (N, L, S) averaged over heads, (N, H, L, S) otherwise, None unless
        need_weights."""
        query = as_tensor(query, "MultiheadAttention: query")
        if query.ndim != 3 or query.shape[-1] != self.embed_dim:
            raise ValueError(f"MultiheadAttention: query must be (batch, length, "
                             f"{self.embed_dim}), got shape {query.shape}")
        q, k, v = self._heads(query, 0), self._heads(key, 1), self._heads(value, 2)
        # causal alone, without weights, runs pk.attention's fused causal kernel
        fused_causal = is_causal and attn_mask is None and key_padding_mask is None \
            and not need_weights
        mask = None if fused_causal else \
            self._additive_mask(q, k, attn_mask, key_padding_mask, is_causal)
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights:
            scores = pk.matmul(q, k.mT) * (self.head_dim ** -0.5)
            probs = pk.softmax(scores if mask is None else scores + mask, axis=-1)
            weights = probs.mean(axis=1) if average_attn_weights else probs
            out = pk.matmul(F.dropout(probs, p, self.training), v)
        else:
            out = F.scaled_dot_product_attention(q, k, v, mask, p, fused_causal)
        n, length = query.shape[:2]
        out = out.permute(0, 2, 1, 3).reshape(n, length, self.embed_dim)
        return self.out_proj(out), weights

    def _additive_mask(self, q: Tensor, k: Tensor, attn_mask: object, key_padding_mask: object,
                       is_causal: bool) -> Tensor | None:
        """One float mask (N or 1, H or 1, L, S) of 0 and -inf (or the user's additive
        values), or None when nothing is masked."""
        n, h, lq, _ = q.shape
        lk = k.shape[2]
        if attn_mask is None and is_causal:
            attn_mask = pk.logical_not(pk.tril(pk.ones((lq, lk), dtype=pk.bool_)))
        parts = []
        if attn_mask is not None:
            m = as_tensor(attn_mask, "MultiheadAttention: attn_mask")
            if m.shape == (n * h, lq, lk):
                m = m.reshape(n, h, lq, lk)
            elif m.shape != (lq, lk):
                raise ValueError(f"MultiheadAttention: attn_mask must be {(lq, lk)} or "
                                 f"{(n * h, lq, lk)}, got {m.shape}")
            parts.append(m)
        if key_padding_mask is not None:
            m = as_tensor(key_padding_mask, "MultiheadAttention: key_padding_mask")
            if m.shape != (n, lk):
                raise ValueError(f"MultiheadAttention: key_padding_mask must be {(n, lk)}, got "
                                 f"{m.shape}")
            parts.append(m.reshape(n, 1, 1, lk))
        if not parts:
            return None
        total = None
        for m in parts:
            add = pk.where(m, pk.full(m.shape, float("-inf"), dtype=q.dtype),
                           pk.zeros(m.shape, dtype=q.dtype)) if m.dtype == pk.bool_ else m
            total = add if total is None else total + add
        return total

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
