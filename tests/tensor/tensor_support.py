"""Helpers for the tensor and op-library tests: hypothesis strategies for shapes, dtypes and
views (contiguous, transposed, strided with negative steps, broadcast), sample data per dtype,
and tolerance-aware comparison with numpy (tolerances from docs/testing.md)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pykern as pk

ALL = [pk.bool_, pk.i8, pk.i16, pk.i32, pk.i64, pk.u8, pk.u16, pk.u32, pk.u64, pk.f16, pk.f32,
       pk.f64]
FLOATS = [pk.f16, pk.f32, pk.f64]
INTS = [pk.i8, pk.i16, pk.i32, pk.i64, pk.u8, pk.u16, pk.u32, pk.u64]

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


def sample(rng: np.random.Generator, dtype: pk.DType, shape: tuple[int, ...],
           low: float = -10, high: float = 10) -> np.ndarray:
    """Random values of `dtype`: floats uniform in [low, high); ints over a range that fits
    the dtype (small, so products and sums do not all wrap); bools half true."""
    if dtype == pk.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.is_float:
        return rng.uniform(low, high, shape).astype(dtype.numpy)
    if dtype.is_complex:
        re, im = rng.uniform(low, high, shape), rng.uniform(low, high, shape)
        return (re + 1j * im).astype(dtype.numpy)
    info = np.iinfo(dtype.numpy)
    lo = max(int(low), int(info.min)) if dtype.kind == "i" else 0
    hi = min(int(high), int(info.max))
    return rng.integers(lo, hi + 1, shape).astype(dtype.numpy)


@st.composite
def views(draw: st.DrawFn, shape: tuple[int, ...], dtype: pk.DType, low: float = -10,
          high: float = 10) -> tuple[np.ndarray, pk.Tensor]:
    """A tensor of `shape` that is a view of some kind, and the numpy array it holds:
    'contiguous', 'transposed' (a permuted contiguous tensor), 'strided' (a slice of a larger
    tensor with steps, some negative, and an offset) or 'broadcast' (stride 0 along size-1
    source dimensions)."""
    kind = draw(st.sampled_from(["contiguous", "transposed", "strided", "broadcast"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ndim = len(shape)
    if kind == "transposed" and ndim >= 2:
        perm = draw(st.permutations(range(ndim)))
        inv = np.argsort(perm)
        base = sample(rng, dtype, tuple(shape[p] for p in inv), low, high)
        # base[perm-inverse] transposed by perm gives `shape`
        t = pk.asarray(base).permute(*[int(i) for i in np.argsort(inv)])
        a = base.transpose([int(i) for i in np.argsort(inv)])
        assert a.shape == tuple(shape)
        return a, t
    if kind == "strided" and ndim >= 1:
        steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in shape]
        big = tuple(max(s * abs(k) + 1, 1) for s, k in zip(shape, steps))
        base = sample(rng, dtype, big, low, high)
        key = tuple(_slice(s, k, b) for s, k, b in zip(shape, steps, big))
        a, t = base[key], pk.asarray(base)[key]
        assert a.shape == tuple(shape), (a.shape, shape)
        return a, t
    if kind == "broadcast" and ndim >= 1:
        src_shape = tuple(s if draw(st.booleans()) else 1 for s in shape)
        src = sample(rng, dtype, src_shape, low, high)
        lead = draw(st.integers(0, ndim))
        src2 = src.reshape(src_shape[lead:]) if all(s == 1 for s in src_shape[:lead]) else src
        a = np.broadcast_to(src2, shape)
        t = pk.asarray(src2).broadcast_to(shape)
        return np.ascontiguousarray(a), t
    a = sample(rng, dtype, tuple(shape), low, high)
    return a, pk.asarray(a)


def _slice(size: int, step: int, big: int) -> slice:
    """A slice of a dimension of length `big` giving `size` elements with `step`."""
    if step > 0:
        return slice(1, 1 + size * step, step) if size else slice(1, 1)
    start = big - 1
    return slice(start, start + size * step, step) if size else slice(0, 0)


def tolerance(dtype: pk.DType, kind: str = "exact") -> dict[str, float]:
    """rtol/atol for comparing a pykern result of `dtype` with numpy: 'exact' (+ - *, casts,
    integer ops, compares), 'div' (3 ULP), 'math' (exp/log-like and pykern's own sin, cos,
    tan, tanh: a few ULP in f32), 'loose' (atan-like and hyperbolics: 1e-6 + 4e-4 relative)."""
    if not dtype.is_float:
        return {"rtol": 0, "atol": 0}
    f16 = dtype == pk.f16
    table = {
        "exact": (1e-3, 0) if f16 else (0, 0),
        "div": (2e-3, 0) if f16 else (4e-7, 0) if dtype == pk.f32 else (1e-15, 0),
        "math": (3e-3, 1e-3) if f16 else (4e-6, 1e-6),
        "loose": (3e-3, 1e-3) if f16 else (4e-4, 1e-6),
    }
    rtol, atol = table[kind]
    return {"rtol": rtol, "atol": atol}


def assert_close(actual: pk.Tensor | np.ndarray, expected: np.ndarray, dtype: pk.DType,
                 kind: str = "exact") -> None:
    a = actual.numpy() if isinstance(actual, pk.Tensor) else np.asarray(actual)
    expected = np.asarray(expected)
    assert a.shape == expected.shape, (a.shape, expected.shape)
    tol = tolerance(dtype, kind)
    if dtype.is_float:
        np.testing.assert_allclose(a.astype(np.float64), expected.astype(np.float64),
                                   equal_nan=True, **tol)
    else:
        np.testing.assert_array_equal(a, expected)
