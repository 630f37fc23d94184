"""Matrix products (mm, bmm, addmm, baddbmm, addmv, mv, dot, ...) on `pk.matmul`, which
picks tensor-core tiles where the device has them."""

from __future__ import annotations

import torch

import pykern as pk
from pykern.torch.args import new, operand, write


def _scaled(p: pk.Tensor, factor: object) -> pk.Tensor:
    return p if factor == 1 else pk.multiply(p, factor)


def _plus_scaled(acc: pk.Tensor, self: torch.Tensor, beta: object, dtype: torch.dtype
                 ) -> pk.Tensor:
    """alpha-scaled product plus beta * self (self ignored, NaN included, when beta is 0)."""
    if beta == 0:
        return acc
    return pk.add(acc, _scaled(operand(self, dtype), beta))  # type: ignore[arg-type]


def mm_out(self: torch.Tensor, mat2: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    """`mm.out`: self @ mat2."""
    return write(out, pk.matmul(operand(self, out.dtype), operand(mat2, out.dtype)))


def bmm_out(self: torch.Tensor, mat2: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    """`bmm.out`: batched self @ mat2."""
    return write(out, pk.matmul(operand(self, out.dtype), operand(mat2, out.dtype)))


def addmm_out(self: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor, *,
              beta: object = 1, alpha: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`addmm.out`: beta * self + alpha * (mat1 @ mat2)."""
    d = out.dtype
    prod = _scaled(pk.matmul(operand(mat1, d), operand(mat2, d)), alpha)
    return write(out, _plus_scaled(prod, self, beta, d))


def baddbmm_out(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *,
                beta: object = 1, alpha: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`baddbmm.out`: beta * self + alpha * (batch1 @ batch2)."""
    return addmm_out(self, batch1, batch2, beta=beta, alpha=alpha, out=out)


def addbmm_out(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *,
               beta: object = 1, alpha: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`addbmm.out`: beta * self + alpha * sum_b(batch1[b] @ batch2[b])."""
    d = out.dtype
    prod = pk.sum(pk.matmul(operand(batch1, d), operand(batch2, d)), axis=0)
    return write(out, _plus_scaled(_scaled(prod, alpha), self, beta, d))


def addbmm(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *,
           beta: object = 1, alpha: object = 1) -> torch.Tensor:
    """`addbmm` (not structured)."""
    d = torch.result_type(batch1, batch2)
    out = torch.empty((batch1.shape[1], batch2.shape[2]), dtype=d, device=batch1.device)
    return addbmm_out(self.expand(out.shape), batch1, batch2, beta=beta, alpha=alpha, out=out)


def addbmm_(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *,
            beta: object = 1, alpha: object = 1) -> torch.Tensor:
    """`addbmm_`."""
    return addbmm_out(self, batch1, batch2, beta=beta, alpha=alpha, out=self)


def addmv_out(self: torch.Tensor, mat: torch.Tensor, vec: torch.Tensor, *,
              beta: object = 1, alpha: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`addmv.out`: beta * self + alpha * (mat @ vec)."""
    d = out.dtype
    prod = _scaled(pk.matmul(operand(mat, d), operand(vec, d)), alpha)
    return write(out, _plus_scaled(prod, self, beta, d))


def dot(self: torch.Tensor, tensor: torch.Tensor) -> torch.Tensor:
    """`dot`: the inner product of two vectors."""
    if self.dtype != tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{self.dtype} and {tensor.dtype}")
    a, b = operand(self), operand(tensor)
    return new(pk.sum(pk.multiply(a, b), dtype=a.dtype), self.dtype)  # type: ignore[union-attr]


def vdot(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """`vdot`: conj(self) . other."""
    a, b = operand(self), operand(other)
    if a.dtype.is_complex:  # type: ignore[union-attr]
        a = pk.conj(a)
    return new(pk.sum(pk.multiply(a, b), dtype=b.dtype), self.dtype)  # type: ignore[union-attr]
