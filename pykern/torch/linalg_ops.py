"""Linear algebra: PyTorch's `torch.linalg` operators on pk.linalg (cholesky, eigh, svd, qr,
inv) and on pykern's LU factorization and triangular solves, which pk.linalg uses inside and
which the array API's `linalg` does not name (lu_factor, solve_triangular, swap_rows).

PyTorch's LU conventions are LAPACK's: `pivots` are 1-based row interchanges (row k swapped
with row pivots[k] - 1 at step k), `info` is 0 or 1 + the first zero pivot.
"""

from __future__ import annotations

import math

import torch

import pykern as pk
from pykern.linalg.lu import lu_factor
from pykern.linalg.pivots import swap_rows
from pykern.linalg.triangular_solve import solve_triangular
from pykern.torch.args import operand, write


def _stack(x: pk.Tensor) -> tuple[pk.Tensor, tuple[int, ...]]:
    """x as a fresh row-major (B, n, m) stack, and its batch shape."""
    batch = x.shape[:-2]
    n, m = x.shape[-2], x.shape[-1]
    b = 1
    for s in batch:
        b *= s
    return x.copy().reshape(b, n, m), batch


def _square(A: torch.Tensor, op: str) -> None:  # noqa: N803
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise NotImplementedError(f"the pykern device's {op} takes square matrices only "
                                  f"(aten::{op}), got shape {tuple(A.shape)}")


def _factor(A: torch.Tensor, op: str) -> tuple[pk.Tensor, pk.Tensor, pk.Tensor, tuple]:  # noqa: N803
    """(lu, 0-based pivots, info) of A as (B, n, n) stacks, and A's batch shape."""
    _square(A, op)
    a, batch = _stack(operand(A))  # type: ignore[arg-type]
    f = lu_factor(a)
    n = a.shape[1]
    lu = f.lu[:, :n, :].mT.copy()  # pk.linalg keeps the factors transposed
    return lu, f.pivots, f.info, batch


def lu_factor_ex_out(A: torch.Tensor, *, pivot: bool = True,  # noqa: N803
                     check_errors: bool = False, LU: torch.Tensor, pivots: torch.Tensor,  # noqa: N803
                     info: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """`linalg_lu_factor_ex.out`."""
    if not pivot:
        raise NotImplementedError("the pykern device has no LU without pivoting "
                                  "(aten::linalg_lu_factor_ex with pivot=False)")
    lu, piv, inf, batch = _factor(A, "linalg_lu_factor_ex")
    n = A.shape[-1]
    write(LU, lu.reshape(*batch, n, n))
    write(pivots, pk.add(piv, 1).reshape(*batch, n))
    write(info, inf.reshape(batch))
    _check(check_errors, inf, "linalg.lu_factor_ex")
    return LU, pivots, info


def _check(check_errors: bool, info: pk.Tensor, op: str) -> None:
    if check_errors and bool(pk.any(pk.not_equal(info, 0)).item()):
        raise RuntimeError(f"torch.{op}: The factorization could not be completed because the "
                           "input is not invertible.")


def _apply_pivots(y: pk.Tensor, piv: pk.Tensor, inverse: bool) -> None:
    """The row interchanges of `piv` (0-based) applied to the (B, n, k) stack y, or undone."""
    n = y.shape[1]
    if not inverse:
        swap_rows(y, piv, 0, n)
        return
    for k in reversed(range(n)):
        swap_rows(y, piv, k, 1)


def _lu_solve(lu: pk.Tensor, piv: pk.Tensor, y: pk.Tensor, adjoint: bool) -> pk.Tensor:
    """A⁻¹ y (or A⁻ᴴ y) for A = Pᵀ L U factored as (lu, piv); y a fresh (B, n, k) stack."""
    if not adjoint:
        _apply_pivots(y, piv, inverse=False)
        solve_triangular(lu, y, lower=True, unit=True)
        solve_triangular(lu, y, lower=False, unit=False)
        return y
    lu_h = _adjoint(lu).copy()  # its lower triangle is Uᴴ, its upper one Lᴴ
    solve_triangular(lu_h, y, lower=True, unit=False)
    solve_triangular(lu_h, y, lower=False, unit=True)
    _apply_pivots(y, piv, inverse=True)
    return y


def _adjoint(x: pk.Tensor) -> pk.Tensor:
    t = x.swapaxes(-1, -2)
    return pk.conj(t) if t.dtype.is_complex else t


def _broadcast_batch(lu: pk.Tensor, piv: pk.Tensor, b: pk.Tensor, batch_a: tuple,
                     batch_b: tuple) -> tuple[pk.Tensor, pk.Tensor, pk.Tensor, tuple]:
    """lu, pivots and the right-hand sides with a common batch shape, as (B, ...) stacks."""
    batch = tuple(torch.broadcast_shapes(batch_a, batch_b))
    n, k = b.shape[-2], b.shape[-1]
    lu = lu.reshape(*batch_a, n, n).broadcast_to((*batch, n, n))
    piv = piv.reshape(*batch_a, n).broadcast_to((*batch, n))
    bb = b.broadcast_to((*batch, n, k))
    count = 1
    for s in batch:
        count *= s
    return (lu.copy().reshape(count, n, n), piv.copy().reshape(count, n),
            bb.copy().reshape(count, n, k), batch)


def lu_solve_out(LU: torch.Tensor, pivots: torch.Tensor, B: torch.Tensor, *,  # noqa: N803
                 left: bool = True, adjoint: bool = False, out: torch.Tensor) -> torch.Tensor:
    """`linalg_lu_solve.out`: A X = B (or X A = B), A given by its LU factorization."""
    d = out.dtype
    lu, piv = operand(LU, d), pk.subtract(operand(pivots, torch.int32), 1)
    b = operand(B, d)
    if not left:  # X A = B  <=>  Aᴴ Xᴴ = Bᴴ
        b = _adjoint(b)  # type: ignore[arg-type]
        adjoint = not adjoint
    lu3, piv3, b3, batch = _broadcast_batch(lu, piv.astype(pk.i32), b,  # type: ignore
                                            tuple(LU.shape[:-2]), tuple(B.shape[:-2]))
    x = _lu_solve(lu3, piv3, b3, adjoint).reshape(*batch, *b.shape[-2:])  # type: ignore
    return write(out, _adjoint(x) if not left else x)


def solve_ex_out(A: torch.Tensor, B: torch.Tensor, *, left: bool = True,  # noqa: N803
                 check_errors: bool = False, result: torch.Tensor, LU: torch.Tensor,  # noqa: N803
                 pivots: torch.Tensor, info: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """`_linalg_solve_ex.result`: the solution of A X = B (X A = B), with A's LU factors."""
    lu_factor_ex_out(A, LU=LU, pivots=pivots, info=info)
    vector = B.dim() == 1 or (left and B.dim() == A.dim() - 1 and
                              B.shape == A.shape[:-1])
    rhs = B.unsqueeze(-1) if vector else B
    x = torch.empty(torch.broadcast_shapes(A.shape[:-2], rhs.shape[:-2]) + rhs.shape[-2:],
                    dtype=result.dtype, device=result.device)
    lu_solve_out(LU, pivots, rhs, left=left, out=x)
    write(result, operand(x.squeeze(-1) if vector else x))
    _check(check_errors, operand(info), "linalg.solve_ex")  # type: ignore[arg-type]
    return result, LU, pivots, info


def inv_ex_out(A: torch.Tensor, *, check_errors: bool = False, inverse: torch.Tensor,  # noqa: N803
               info: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`linalg_inv_ex.inverse`: A⁻¹ through A's LU factorization."""
    lu, piv, inf, batch = _factor(A, "linalg_inv_ex")
    n = A.shape[-1]
    eye = pk.eye(n, dtype=lu.dtype).broadcast_to(lu.shape).copy()
    write(inverse, _lu_solve(lu, piv, eye, False).reshape(*batch, n, n))
    write(info, inf.reshape(batch))
    _check(check_errors, inf, "linalg.inv_ex")
    return inverse, info


def _permutation_sign(piv: pk.Tensor) -> pk.Tensor:
    """(-1) ** (the number of actual interchanges), per matrix."""
    n = piv.shape[-1]
    swaps = pk.not_equal(piv, pk.arange(n, dtype=piv.dtype)).astype(pk.i32)
    odd = pk.remainder(pk.sum(swaps, axis=-1), 2)
    return pk.subtract(1, pk.multiply(odd, 2))


def _diagonal(lu: pk.Tensor) -> pk.Tensor:
    return pk.linalg.diagonal(lu)


def _as_saved(A: torch.Tensor) -> torch.Tensor:  # noqa: N803
    """The matrix whose LU PyTorch's det and slogdet save: Aᵀ for a real A, A itself for a
    complex one."""
    return A if A.is_complex() else A.mT


def det_out(A: torch.Tensor, *, result: torch.Tensor, LU: torch.Tensor,  # noqa: N803
            pivots: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """`_linalg_det.result`: the product of U's diagonal, signed by the interchanges. LU and
    pivots are those of Aᵀ for a real A, as PyTorch's (its backward solves with them as such)."""
    lu, piv, _, batch = _factor(_as_saved(A), "linalg_det")
    n = A.shape[-1]
    d = pk.multiply(pk.prod(_diagonal(lu), axis=-1),
                    _permutation_sign(piv).astype(lu.dtype))
    write(result, d.reshape(batch))
    write(LU, lu.reshape(*batch, n, n))
    write(pivots, pk.add(piv, 1).reshape(*batch, n))
    return result, LU, pivots


def slogdet_out(A: torch.Tensor, *, sign: torch.Tensor, logabsdet: torch.Tensor,  # noqa: N803
                LU: torch.Tensor, pivots: torch.Tensor) -> tuple[torch.Tensor, ...]:  # noqa: N803
    """`_linalg_slogdet.sign`: sign (or unit phase) and log |det|."""
    lu, piv, _, batch = _factor(_as_saved(A), "linalg_slogdet")
    n = A.shape[-1]
    diag = _diagonal(lu)
    mag = pk.abs(diag)
    logabs = pk.sum(pk.log(mag), axis=-1)
    perm = _permutation_sign(piv)
    if lu.dtype.is_complex:
        phase = pk.prod(pk.divide(diag, mag.astype(diag.dtype)), axis=-1)
        s = pk.multiply(phase, perm.astype(diag.dtype))
    else:
        s = pk.multiply(pk.prod(pk.sign(diag), axis=-1), perm.astype(diag.dtype))
    write(sign, s.reshape(batch))
    write(logabsdet, logabs.reshape(batch))
    write(LU, lu.reshape(*batch, n, n))
    write(pivots, pk.add(piv, 1).reshape(*batch, n))
    return sign, logabsdet, LU, pivots


def lu_out(A: torch.Tensor, *, pivot: bool = True, P: torch.Tensor, L: torch.Tensor,  # noqa: N803
           U: torch.Tensor) -> tuple[torch.Tensor, ...]:  # noqa: N803
    """`linalg_lu.out`: A = P L U."""
    if not pivot:
        raise NotImplementedError("the pykern device has no LU without pivoting "
                                  "(aten::linalg_lu with pivot=False)")
    lu, piv, _, batch = _factor(A, "linalg_lu")
    n = A.shape[-1]
    eye = pk.eye(n, dtype=lu.dtype)
    write(L, pk.add(pk.tril(lu, k=-1), eye).reshape(*batch, n, n))
    write(U, pk.triu(lu).reshape(*batch, n, n))
    perm = eye.broadcast_to(lu.shape).copy()
    _apply_pivots(perm, piv, inverse=False)  # P A = L U for this P: PyTorch's P is its inverse
    write(P, _adjoint(perm).reshape(*batch, n, n))
    return P, L, U


def cholesky_ex_out(self: torch.Tensor, *, upper: bool = False, check_errors: bool = False,
                    L: torch.Tensor, info: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # noqa: N803
    """`linalg_cholesky_ex.L` (a matrix that is not positive definite raises, where PyTorch
    would report it in `info` unless check_errors)."""
    write(L, pk.linalg.cholesky(operand(self), upper=upper))
    write(info, 0)
    return L, info


def cholesky(self: torch.Tensor, upper: bool = False) -> torch.Tensor:
    """`cholesky` (the deprecated spelling)."""
    out = torch.empty_like(self)
    return write(out, pk.linalg.cholesky(operand(self), upper=upper))


def cholesky_solve_helper(self: torch.Tensor, A: torch.Tensor,  # noqa: N803
                          upper: bool) -> torch.Tensor:
    """`_cholesky_solve_helper`: X with (L Lᴴ) X = B, A holding L (or U = Lᴴ)."""
    tri, y, batch = _triangle_and_rhs(A, self, upper)
    solve_triangular(tri, y, lower=True, unit=False)
    solve_triangular(_adjoint(tri).copy(), y, lower=False, unit=False)
    out = torch.empty(batch + tuple(self.shape[-2:]), dtype=self.dtype, device=self.device)
    return write(out, y.reshape(*batch, *self.shape[-2:]))


def _triangle_and_rhs(A: torch.Tensor, B: torch.Tensor, upper: bool  # noqa: N803
                      ) -> tuple[pk.Tensor, pk.Tensor, tuple]:
    """The lower Cholesky factor and the right-hand sides as (B, n, ...) stacks with a
    common batch."""
    a, b = operand(A, B.dtype), operand(B)
    if upper:
        a = _adjoint(a)  # type: ignore[arg-type]
    lu3, _, b3, batch = _broadcast_batch(a, pk.zeros(a.shape[:-1], dtype=pk.i32), b,  # type: ignore
                                         tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    return lu3, b3, batch


def cholesky_inverse(self: torch.Tensor, upper: bool = False) -> torch.Tensor:
    """`cholesky_inverse`: (L Lᴴ)⁻¹ from L (or from U)."""
    n = self.shape[-1]
    eye = torch.eye(n, dtype=self.dtype, device=self.device).expand(self.shape)
    return cholesky_solve_helper(eye, self, upper)


def solve_triangular_out(self: torch.Tensor, B: torch.Tensor, *, upper: bool,  # noqa: N803
                         left: bool = True, unitriangular: bool = False,
                         out: torch.Tensor) -> torch.Tensor:
    """`linalg_solve_triangular.out`: A X = B (X A = B) for triangular A."""
    a, b = operand(self, out.dtype), operand(B, out.dtype)
    lower = not upper
    if not left:  # X A = B  <=>  Aᵀ Xᵀ = Bᵀ
        a, b = a.swapaxes(-1, -2), b.swapaxes(-1, -2)  # type: ignore[union-attr]
        lower = not lower
    tri, _, y, batch = _broadcast_batch(a, pk.zeros(a.shape[:-1], dtype=pk.i32), b,  # type: ignore
                                        tuple(a.shape[:-2]), tuple(b.shape[:-2]))  # type: ignore
    solve_triangular(tri, y, lower=lower, unit=unitriangular)
    x = y.reshape(*batch, *b.shape[-2:])  # type: ignore[union-attr]
    return write(out, x.swapaxes(-1, -2) if not left else x)


def solve_triangular_functional(self: torch.Tensor, B: torch.Tensor, *,  # noqa: N803
                                upper: bool,
                     left: bool = True, unitriangular: bool = False) -> torch.Tensor:
    """`linalg_solve_triangular` (not structured)."""
    shape = torch.broadcast_shapes(self.shape[:-2], B.shape[:-2]) + B.shape[-2:]
    out = torch.empty(shape, dtype=torch.result_type(self, B), device=B.device)
    return solve_triangular_out(self, B, upper=upper, left=left, unitriangular=unitriangular,
                                out=out)


def triangular_solve_out(self: torch.Tensor, A: torch.Tensor, upper: bool = True,  # noqa: N803
                         transpose: bool = False, unitriangular: bool = False, *,
                         X: torch.Tensor, M: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # noqa: N803
    """`triangular_solve.X`: (the solution of op(A) X = b, a copy of A)."""
    a = A.transpose(-1, -2) if transpose else A
    solve_triangular_out(a, self, upper=upper != transpose, unitriangular=unitriangular,
                         out=X)
    write(M, operand(A))
    return X, M


def _hermitian(A: torch.Tensor, uplo: str) -> pk.Tensor:  # noqa: N803
    """The Hermitian matrix whose `uplo` triangle A holds (the other triangle is ignored, as
    LAPACK does)."""
    a = operand(A)
    if uplo.upper() == "U":
        tri, strict = pk.triu(a), pk.triu(a, k=1)
    else:
        tri, strict = pk.tril(a), pk.tril(a, k=-1)
    full = pk.add(tri, _adjoint(strict))
    if full.dtype.is_complex:  # the diagonal of a Hermitian matrix is real
        d = pk.linalg.diagonal(full)
        full = pk.subtract(full, pk.multiply(pk.eye(a.shape[-1], dtype=full.dtype),  # type: ignore
                                             pk.multiply(pk.imag(d)[..., None], 1j)))
    return full


def eigh_out(A: torch.Tensor, UPLO: str = "L", compute_v: bool = True, *,  # noqa: N803
             eigenvalues: torch.Tensor, eigenvectors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """`_linalg_eigh.eigenvalues`."""
    a = _hermitian(A, UPLO)
    if compute_v:
        values, vectors = pk.linalg.eigh(a)
        write(eigenvectors, vectors)
    else:
        values = pk.linalg.eigvalsh(a)
    write(eigenvalues, values)
    return eigenvalues, eigenvectors


def svd_out(A: torch.Tensor, full_matrices: bool = False, compute_uv: bool = True, *,  # noqa: N803
            driver: str | None = None, U: torch.Tensor, S: torch.Tensor,  # noqa: N803
            Vh: torch.Tensor) -> tuple[torch.Tensor, ...]:  # noqa: N803
    """`_linalg_svd.U`."""
    a = operand(A)
    if compute_uv:
        u, s, vh = pk.linalg.svd(a, full_matrices=full_matrices)
        write(U, u)
        write(Vh, vh)
    else:
        s = pk.linalg.svdvals(a)
    write(S, s)
    return U, S, Vh


def qr_out(A: torch.Tensor, mode: str = "reduced", *, Q: torch.Tensor,  # noqa: N803
           R: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # noqa: N803
    """`linalg_qr.out` (Householder QR: R's diagonal has LAPACK's signs)."""
    a = operand(A)
    q, r = pk.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode != "r":
        write(Q, q)
    write(R, r)
    return Q, R


def lu_unpack_out(LU_data: torch.Tensor, LU_pivots: torch.Tensor,  # noqa: N803
                  unpack_data: bool = True, unpack_pivots: bool = True, *,
                  P: torch.Tensor, L: torch.Tensor, U: torch.Tensor  # noqa: N803
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`lu_unpack.out`: P, L (unit lower, m × k) and U (upper, k × n) of an (m × n) LU
    factorization with LAPACK's 1-based pivots; an output not asked for is empty."""
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    batch = tuple(LU_data.shape[:-2])
    if unpack_data:
        lu = operand(LU_data)
        lower = pk.tril(lu, k=-1)[..., :, :k]  # type: ignore[index]
        write(L, pk.add(lower, pk.eye(m, k, dtype=lower.dtype)))
        write(U, pk.triu(lu)[..., :k, :])  # type: ignore[index]
    else:
        L.resize_(0)
        U.resize_(0)
    if unpack_pivots:
        b = 1
        for s in batch:
            b *= s
        piv = pk.subtract(operand(LU_pivots).astype(pk.i32).reshape(b, k), 1)  # type: ignore
        perm = pk.eye(m, dtype=pk.f32 if LU_data.dtype in (torch.float16, torch.bfloat16)
                      else operand(LU_data).dtype).broadcast_to((b, m, m)).copy()  # type: ignore
        swap_rows(perm, piv, 0, k)
        write(P, _adjoint(perm).reshape(*batch, m, m))
    else:
        P.resize_(0)
    return P, L, U


# Padé [13/13] approximant with scaling and squaring (Higham 2005): exp(A) = r(A / 2^s)^(2^s)
# with s chosen so that ‖A / 2^s‖₁ ≤ θ₁₃.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(self: torch.Tensor) -> torch.Tensor:
    """`linalg_matrix_exp`: by the Padé [13/13] approximant and squaring, computed in float32
    for 16-bit inputs; one number (the largest 1-norm of the batch) is read to pick the
    number of squarings."""
    if self.shape[-1] != self.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices")
    if self.numel() == 0:
        return torch.empty_like(self)
    low = self.dtype in (torch.float16, torch.bfloat16)
    a = self.float() if low else self
    norm = a.abs().sum(-2).amax().item()
    s = max(0, math.ceil(math.log2(norm / _THETA13))) if math.isfinite(norm) and norm > 0 \
        else 0
    a = a / 2.0 ** s if s else a
    b = _PADE13
    eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device).expand_as(a)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    r = torch.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r.to(self.dtype) if low else r
