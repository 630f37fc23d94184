"""Pairwise distances (`cdist`, `pdist`) and their backward, written as ATen operators that run
on pykern: the differences of every pair broadcast, a vector norm over them, and the
gradients by PyTorch's CPU formulas (zero where a distance or a difference is zero)."""

from __future__ import annotations

import math

import torch


def _use_mm(x1: torch.Tensor, x2: torch.Tensor, p: float, compute_mode: int | None) -> bool:
    """Whether PyTorch computes this p=2 distance by matrix products (its compute_mode rule)."""
    if p != 2:
        return False
    mode = 0 if compute_mode is None else compute_mode
    return mode == 1 or (mode == 0 and (x1.shape[-2] > 25 or x2.shape[-2] > 25))


def cdist_forward(x1: torch.Tensor, x2: torch.Tensor, p: float,
                  compute_mode: int | None = None) -> torch.Tensor:
    """`_cdist_forward`: the p-norm distances of x1's rows to x2's rows."""
    if _use_mm(x1, x2, p, compute_mode):
        return torch.ops.aten._euclidean_dist(x1, x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return torch.linalg.vector_norm(diff, ord=p, dim=-1)


def cdist_backward(grad: torch.Tensor, x1: torch.Tensor, x2: torch.Tensor, p: float,
                   cdist: torch.Tensor) -> torch.Tensor:
    """`_cdist_backward`: the gradient with respect to x1."""
    if p == 0 or x1.numel() == 0 or x2.numel() == 0:
        return torch.zeros_like(x1)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    dist = cdist.unsqueeze(-1)
    if p == 1:
        terms = diff.sign()
    elif math.isinf(p):
        terms = diff.sign() * (diff.abs() == dist)
    elif p == 2:
        terms = diff / dist
    elif p < 2:
        terms = diff.sign() * diff.abs().pow(p - 1) / dist.pow(p - 1)
        terms = terms.masked_fill(diff == 0, 0)
    else:
        terms = diff * diff.abs().pow(p - 2) / dist.pow(p - 1)
    terms = terms.masked_fill(dist == 0, 0)
    return (grad.unsqueeze(-1) * terms).sum(-2)


def pdist_forward(self: torch.Tensor, p: float = 2) -> torch.Tensor:
    """`_pdist_forward`: the distances of each pair of rows i < j, row-major."""
    n = self.shape[0]
    if n < 2:
        return self.new_zeros(0)
    rows, cols = torch.triu_indices(n, n, 1, device=self.device)
    return cdist_forward(self, self, p, 2)[rows, cols]


def pdist_backward(grad: torch.Tensor, self: torch.Tensor, p: float,
                   pdist: torch.Tensor) -> torch.Tensor:
    """`_pdist_backward`: a pair's gradient reaches both of its rows."""
    n = self.shape[0]
    if n < 2 or p == 0:
        return torch.zeros_like(self)
    rows, cols = torch.triu_indices(n, n, 1, device=self.device)
    full = self.new_zeros(n, n)
    full[rows, cols] = grad
    dist = self.new_zeros(n, n)
    dist[rows, cols] = pdist
    return cdist_backward(full + full.t(), self, self, p, dist + dist.t())
