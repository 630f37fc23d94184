"""Norms: `vector_norm` and `matrix_norm` of the array API's `linalg` extension, and numpy's
`norm`, which chooses between them from `axis` and `ord`.

The 2-norm and the p-norms divide by the largest magnitude before summing powers, so that
neither huge nor tiny elements overflow or underflow where the norm itself does not.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence

from pykern.autograd.graph import needs_grad
from pykern.linalg.gradients import differentiable
from pykern.linalg.svd import svdvals
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.reduce import reduction as red
from pykern.tensor.create.creation import zeros_like
from pykern.tensor.index.manipulation import moveaxis
from pykern.tensor.core.promotion import DEFAULT_FLOAT
from pykern.tensor.core.tensor import Tensor, normalize_axis
from pykern.tensor.create.creation import zeros
from pykern.tensor.create.creation import full

MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def vector_norm(x: object, /, *, axis: int | Sequence[int] | None = None,
                keepdims: bool = False, ord: float = 2) -> Tensor:  # noqa: A002
    """The `ord`-norm of `x` over `axis` (None: all elements; an int or a tuple of ints):
    ord = 2 (default), 1, inf (largest |x|), -inf (smallest |x|), 0 (count of nonzeros), or
    any other real p: (Σ|x|^p)^(1/p). Float results (the input's float dtype, the default
    float for integers).

        pk.linalg.vector_norm(t, axis=-1)
    """
    t = ew.as_tensor(x, "linalg.vector_norm: x")
    p = _vector_ord(ord, "vector_norm")
    axes = _axes(axis, t.ndim, "vector_norm")
    mag = _magnitude(t)
    if mag.size == 0 or not axes:
        if p != 0 and not axes:  # each |x| itself: mag carries the graph
            return _degenerate(mag, axes, keepdims, p)
        # a count, or a constant over empty axes: made afresh, not from mag, so recorded
        return _zero_gradient("linalg.vector_norm", t, lambda a: _degenerate(
            _magnitude(a), axes, keepdims, p))
    if p == math.inf:
        return red.max(mag, axis=axes, keepdims=keepdims)
    if p == -math.inf:
        return red.min(mag, axis=axes, keepdims=keepdims)
    if p == 0:
        return _zero_gradient("linalg.vector_norm", t, lambda a: red.sum(
            ew.not_equal(a, 0), axis=axes, keepdims=keepdims).astype(mag.dtype))
    if p == 1:
        return red.sum(mag, axis=axes, keepdims=keepdims)
    if needs_grad(t, complex_ok=True):  # PyTorch's backward: 0, not nan, at a zero vector
        return differentiable("linalg.vector_norm", (t,),  # or element (complex: sign = z/|z|)
                              lambda a: _scaled_p_norm(_magnitude(a), axes, keepdims, p),
                              lambda a, out: [_p_norm_backward(a, out, axes, keepdims, p)],
                              complex_ok=True)
    return _scaled_p_norm(mag, axes, keepdims, p)


def matrix_norm(x: object, /, *, keepdims: bool = False,
                ord: str | float = "fro") -> Tensor:  # noqa: A002
    """The `ord`-norm of each matrix of the (..., M, N) stack `x`: "fro" (Frobenius,
    default), "nuc" (sum of singular values), 1 / -1 (largest / smallest column sum of
    |x|), 2 / -2 (largest / smallest singular value), inf / -inf (largest / smallest row sum).
    With `keepdims` the result keeps the two axes as size 1.

        pk.linalg.matrix_norm(a, ord=2)
    """
    t = ew.as_tensor(x, "linalg.matrix_norm: x")
    if t.ndim < 2:
        raise ValueError(f"linalg.matrix_norm: x must have at least 2 dimensions, got shape "
                         f"{t.shape}")
    kind = _matrix_ord(ord, "matrix_norm")
    out = _matrix_norm(t, kind)
    return out.reshape(out.shape + (1, 1)) if keepdims else out


def norm(x: object, ord: str | float | None = None,  # noqa: A002
         axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """numpy's `linalg.norm`: with `axis` None, the 2-norm of all elements when `ord` is None,
    else the vector norm of a 1-d `x` or the matrix norm of a 2-d one; with an int `axis` a
    vector norm, with a pair of axes a matrix norm over them. `ord` as in `vector_norm` and
    `matrix_norm` (None: 2, or "fro" for matrices).

        pk.linalg.norm(a)                  # like np.linalg.norm(a)
    """
    t = ew.as_tensor(x, "linalg.norm: x")
    if axis is None:
        if ord is None:
            out = vector_norm(t, keepdims=keepdims)
            return out
        if t.ndim == 1:
            return vector_norm(t, ord=ord, keepdims=keepdims)  # type: ignore[arg-type]
        if t.ndim == 2:
            return matrix_norm(t, ord=ord, keepdims=keepdims)
        raise ValueError(f"linalg.norm: ord={ord!r} with axis=None needs a 1-d or 2-d x, got "
                         f"shape {t.shape}")
    axes = _axes(axis, t.ndim, "norm", keep_order=True)
    if hasattr(axis, "__index__") or len(axes) == 1:
        return vector_norm(t, axis=axes, keepdims=keepdims, ord=2 if ord is None else ord)  # type: ignore[arg-type]
    if len(axes) != 2:
        raise ValueError(f"linalg.norm: axis must be an int or a pair of ints, got {axis!r}")
    moved = moveaxis(t, axes, (-2, -1))
    out = matrix_norm(moved, ord="fro" if ord is None else ord)
    if keepdims:
        shape = list(t.shape)
        for a in axes:
            shape[a] = 1
        out = out.reshape(tuple(shape))
    return out


def _matrix_norm(t: Tensor, kind: str | float) -> Tensor:
    if kind == "fro":
        return vector_norm(t, axis=(-2, -1))
    if kind == "nuc":
        return red.sum(svdvals(t), axis=-1)
    m, n = t.shape[-2:]
    if kind in (2, -2):
        s = svdvals(t)
        if min(m, n) == 0:
            return _zero_gradient("linalg.matrix_norm", t,
                                  lambda a: _empty_matrix_norm(s, kind, t.shape))
        return s[..., 0] if kind == 2 else s[..., -1]
    sums = red.sum(_magnitude(t), axis=-2 if kind in (1, -1) else -1)  # column sums, or row sums
    if sums.shape[-1] == 0:
        return _zero_gradient("linalg.matrix_norm", t,
                              lambda a: _empty_matrix_norm(sums, kind, t.shape))
    return red.max(sums, axis=-1) if kind in (1, math.inf) else red.min(sums, axis=-1)


def _empty_matrix_norm(values: Tensor, kind: str | float, shape: tuple[int, ...]) -> Tensor:
    """The largest of no singular values or sums (a matrix with no columns for ord 1, no rows
    for inf, either for 2) is 0, the norm of the zero map (numpy's); the smallest has none."""
    if kind in (-1, -2, -math.inf):
        raise ValueError(f"linalg.matrix_norm: ord={kind!r} is the smallest of no values for "
                         f"the empty matrices of shape {shape}")

    return zeros(values.shape[:-1], dtype=values.dtype)


def _zero_gradient(name: str, t: Tensor, forward: Callable[[Tensor], Tensor]) -> Tensor:
    """`forward(t)` for a result made afresh rather than from t's values (a count of
    nonzeros; the 0 or inf of norms over empty axes): its gradient is zero (PyTorch's),
    recorded so that backward() runs through it instead of finding nothing that requires
    grad."""
    return differentiable(name, (t,), forward, lambda a, out: [lambda g: (zeros_like(a),)],
                          complex_ok=True)


def _magnitude(t: Tensor) -> Tensor:
    mag = ew.abs(t)
    return mag if mag.dtype.is_float else mag.astype(DEFAULT_FLOAT)


def _p_norm_backward(a: Tensor, out: Tensor, axes: tuple[int, ...], keepdims: bool,
                     p: float) -> Callable[[Tensor], tuple[Tensor]]:
    """d‖a‖_p / da = sign(a) (|a| / ‖a‖)^(p-1) (sign(z) = z/|z| for complex a: the gradient
    of |z| in PyTorch's convention), taken as 0 where a is 0 or ‖a‖ is 0 (as
    PyTorch: a zero vector has a zero gradient, not the nan of the composition's 0/0, and a
    zero element of a p < 1 norm a zero one, not inf)."""
    kept = tuple(1 if i in axes else n for i, n in enumerate(a.shape))

    def back(g: Tensor) -> tuple[Tensor]:
        norm = out.reshape(kept)
        mag = _magnitude(a)
        zero = ew.logical_or(ew.equal(mag, 0), ew.equal(norm, 0))
        ratio = ew.divide(mag, ew.where(ew.equal(norm, 0), 1, norm))
        slope = ratio if p == 2 else ew.pow(ew.where(zero, 1, ratio), p - 1)
        grad = ew.multiply(ew.where(zero, 0, ew.multiply(ew.sign(a), slope)), g.reshape(kept))
        return (grad.astype(a.dtype, copy=False),)

    return back


def _scaled_p_norm(mag: Tensor, axes: tuple[int, ...], keepdims: bool, p: float) -> Tensor:
    """(Σ (|x|/big)^p)^(1/p) · big with big the largest |x|: no overflow or underflow."""
    big = red.max(mag, axis=axes, keepdims=True)
    safe = ew.where(ew.logical_or(ew.equal(big, 0), ew.isinf(big)), 1, big)
    scaled = ew.divide(mag, safe)
    if p == 2:
        total = ew.sqrt(red.sum(ew.multiply(scaled, scaled), axis=axes, keepdims=True))
    else:
        total = ew.pow(red.sum(ew.pow(scaled, p), axis=axes, keepdims=True), 1.0 / p)
    out = ew.where(ew.isinf(big), big, ew.multiply(total, safe))
    if p < 0:
        out = ew.where(ew.equal(big, 0), 0, out)
    return out if keepdims else out.squeeze(axes)


def _degenerate(mag: Tensor, axes: tuple[int, ...], keepdims: bool, p: float) -> Tensor:
    """Norms over no axes (each |x| itself, as numpy) or over empty axes (0; inf for -inf and
    negative p, as the empty minimum)."""
    if not axes:
        return mag.copy() if p != 0 else ew.not_equal(mag, 0).astype(mag.dtype)
    value = math.inf if p < 0 else 0.0
    shape = tuple(1 if i in axes else n for i, n in enumerate(mag.shape)) if keepdims else \
        tuple(n for i, n in enumerate(mag.shape) if i not in axes)

    return full(shape, value, dtype=mag.dtype)


def _axes(axis: object, ndim: int, op: str, keep_order: bool = False) -> tuple[int, ...]:
    """`axis` (None, an int or a sequence of ints) as non-negative axes, sorted unless
    `keep_order` (a matrix norm's pair: rows, then columns); ValueError for an axis out of
    range or repeated."""
    if axis is None:
        return tuple(range(ndim))
    items = [axis] if hasattr(axis, "__index__") else list(axis)  # type: ignore[call-overload]
    out = []
    for a in items:
        if not hasattr(a, "__index__"):
            raise TypeError(f"linalg.{op}: axis must be an int or a tuple of ints, got {axis!r}")
        out.append(normalize_axis(operator.index(a), ndim, op=f"linalg.{op}"))
    if len(set(out)) != len(out):
        raise ValueError(f"linalg.{op}: axis {axis!r} repeats an axis")
    return tuple(out) if keep_order else tuple(sorted(out))


def _vector_ord(ord: object, op: str) -> float:  # noqa: A002
    if isinstance(ord, bool) or not isinstance(ord, (int, float)) or math.isnan(ord):
        raise ValueError(f"linalg.{op}: ord must be a real number (2, 1, inf, -inf, 0 or any "
                         f"other p), got {ord!r}")
    return float(ord)


def _matrix_ord(ord: object, op: str) -> str | float:  # noqa: A002
    if isinstance(ord, str) and ord in ("fro", "nuc"):
        return ord
    if not isinstance(ord, bool) and isinstance(ord, (int, float)) and ord in MATRIX_ORDS:
        return float(ord) if math.isinf(ord) else int(ord)
    raise ValueError(f"linalg.{op}: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf, "
                     f"got {ord!r}")


