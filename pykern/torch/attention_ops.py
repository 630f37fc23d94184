"""`scaled_dot_product_attention` on pykern's fused attention (`pk.attention`, tensor cores
where the device has them), forward and backward.

PyTorch decomposes attention on a PrivateUse1 device into matmuls and a softmax before any
backend kernel sees it (its fused-kernel choice is made for built-in devices only), so the
fused path is registered one level up, on the AutogradPrivateUse1 key, as an autograd function
of its own. What pykern's kernel does not cover (an attention mask, dropout, grouped-query
attention) takes PyTorch's decomposition, which runs on pykern op by op.
"""

from __future__ import annotations

import math

import torch

import pykern as pk
from pykern.torch.args import new, operand

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


class _FusedAttention(torch.autograd.Function):
    """softmax(q kᵀ · scale, causal mask) v, with pykern's backward."""

    @staticmethod
    def forward(ctx: object, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                is_causal: bool, scale: float | None) -> torch.Tensor:
        ctx.save_for_backward(q, k, v)  # type: ignore[attr-defined]
        ctx.is_causal, ctx.scale = is_causal, scale  # type: ignore[attr-defined]
        d = q.dtype
        return new(pk.attention(operand(q), operand(k), operand(v), is_causal, scale), d)

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        q, k, v = ctx.saved_tensors  # type: ignore[attr-defined]
        needs = ctx.needs_input_grad[:3]  # type: ignore[attr-defined]
        ps = [operand(t).detach() for t in (q, k, v)]  # type: ignore[union-attr]
        wanted = [p for p, n in zip(ps, needs) if n]
        for p in wanted:
            p.requires_grad_()
        y = pk.attention(*ps, ctx.is_causal, ctx.scale)  # type: ignore[attr-defined]
        grads = list(pk.autograd.grad([y], wanted, grad_outputs=[operand(grad.contiguous())]))
        out = [new(grads.pop(0), t.dtype) if n else None for t, n in zip((q, k, v), needs)]
        return (*out, None, None)


def _fusable(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: object,
             dropout_p: float, enable_gqa: bool) -> bool:
    return (attn_mask is None and dropout_p == 0.0 and q.dtype in _FLOATS
            and q.dtype == k.dtype == v.dtype and q.dim() >= 2
            and q.shape[:-2] == k.shape[:-2] == v.shape[:-2])


def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 attn_mask: torch.Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> torch.Tensor:
    """`scaled_dot_product_attention` (its AutogradPrivateUse1 kernel)."""
    if _fusable(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _FusedAttention.apply(query, key, value, is_causal, scale)
    if attn_mask is not None and attn_mask.dtype == torch.bool:  # True: attend (as PyTorch)
        attn_mask = torch.zeros(attn_mask.shape, dtype=query.dtype, device=query.device
                                ).masked_fill_(attn_mask.logical_not(), -math.inf)
    return torch.ops.aten._scaled_dot_product_attention_math(
        query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale,
        enable_gqa=enable_gqa)[0]
