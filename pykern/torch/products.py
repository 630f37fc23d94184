"""Matrix products (mm, bmm, addmm, baddbmm, addmv, mv, dot, ...) on `pk.matmul`, which
picks tensor-core tiles where the device has them."""

from __future__ import annotations

import torch

import pykern as pk
from pykern.torch.args import new, operand, write


_LOW = (torch.float16, torch.bfloat16)


def _acc(dtype: torch.dtype) -> torch.dtype:
    """The dtype products are accumulated and combined in before the one final rounding
    (float32 for 16-bit floats, as PyTorch's kernels do)."""
    return torch.float32 if dtype in _LOW else dtype


def _product(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype) -> pk.Tensor:
    """a @ b with the inputs in `dtype`, the result in its accumulation dtype."""
    acc = _acc(dtype)
    pa, pb = operand(a, dtype), operand(b, dtype)
    if acc == dtype:
        return pk.matmul(pa, pb)
    return pk.matmul(pa, pb, dtype=pk.f32)


def _scaled(p: pk.Tensor, factor: object, dtype: torch.dtype) -> pk.Tensor:
    """p * factor, the factor converted to the operator's dtype first (as ATen converts
    Scalars: an integer operator's 0.6 is 0)."""
    factor = operand(factor, dtype)
    return p if factor == 1 else pk.multiply(p, factor)


def _plus_scaled(acc: pk.Tensor, self: torch.Tensor, beta: object, dtype: torch.dtype
                 ) -> pk.Tensor:
    """alpha-scaled product plus beta * self (self ignored, NaN included, when beta is 0)."""
    if beta == 0:
        return acc
    return pk.add(acc, _scaled(operand(self, _acc(dtype)), beta, dtype))  # type: ignore


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
    prod = _scaled(_product(mat1, mat2, d), alpha, d)
    return write(out, _plus_scaled(prod, self, beta, d))


def baddbmm_out(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *,
                beta: object = 1, alpha: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`baddbmm.out`: beta * self + alpha * (batch1 @ batch2)."""
    return addmm_out(self, batch1, batch2, beta=beta, alpha=alpha, out=out)


def addbmm_out(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *,
               beta: object = 1, alpha: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`addbmm.out`: beta * self + alpha * sum_b(batch1[b] @ batch2[b])."""
    d = out.dtype
    if d in _LOW:  # PyTorch adds the products one by one, rounding each sum: so do we
        acc = _plus_scaled(pk.zeros(tuple(out.shape), dtype=pk.f32), self, beta, d)
        for i in range(batch1.shape[0]):
            if i:
                acc = operand(new(acc, d), torch.float32)
            acc = pk.add(acc, _scaled(_product(batch1[i], batch2[i], d), alpha, d))
        return write(out, acc)
    b, n, k = batch1.shape
    a2 = batch1.permute(1, 0, 2).reshape(n, b * k)  # sum over b of products: one product
    b2 = batch2.reshape(b * k, batch2.shape[2])
    prod = _scaled(_product(a2, b2, d), alpha, d)
    return write(out, _plus_scaled(prod, self, beta, d))


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
    prod = _scaled(_product(mat, vec, d), alpha, d)
    return write(out, _plus_scaled(prod, self, beta, d))


def dot(self: torch.Tensor, tensor: torch.Tensor) -> torch.Tensor:
    """`dot`: the inner product of two vectors."""
    if self.dtype != tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{self.dtype} and {tensor.dtype}")
    acc = _acc(self.dtype)
    a, b = operand(self, acc), operand(tensor, acc)
    return new(pk.sum(pk.multiply(a, b), dtype=a.dtype), self.dtype)  # type: ignore[union-attr]


def vdot(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """`vdot`: conj(self) . other."""
    acc = _acc(self.dtype)
    a, b = operand(self, acc), operand(other, acc)
    if a.dtype.is_complex:  # type: ignore[union-attr]
        a = pk.conj(a)
    return new(pk.sum(pk.multiply(a, b), dtype=b.dtype), self.dtype)  # type: ignore[union-attr]


def addr_out(self: torch.Tensor, vec1: torch.Tensor, vec2: torch.Tensor, *,
             beta: object = 1, alpha: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`addr.out`: beta * self + alpha * vec1 * vec2 (outer), each step in out's dtype in
    the order PyTorch's CPU kernel takes them."""
    d = out.dtype
    a = _scaled(operand(vec1, d), alpha, d).reshape(-1, 1)  # type: ignore[arg-type]
    outer = pk.multiply(a, operand(vec2, d).reshape(1, -1))  # type: ignore[union-attr]
    if beta == 0:
        return write(out, outer)
    return write(out, pk.add(_scaled(operand(self, d), beta, d), outer))  # type: ignore


def addr(self: torch.Tensor, vec1: torch.Tensor, vec2: torch.Tensor, *,
         beta: object = 1, alpha: object = 1) -> torch.Tensor:
    """`addr`."""
    d = torch.promote_types(self.dtype, torch.promote_types(vec1.dtype, vec2.dtype))
    out = torch.empty((vec1.shape[0], vec2.shape[0]), dtype=d, device=vec1.device)
    return addr_out(self, vec1, vec2, beta=beta, alpha=alpha, out=out)
