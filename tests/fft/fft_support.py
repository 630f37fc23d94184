"""Helpers of the FFT tests: random inputs and the error bound.

The bound: every output value is within BOUND_ULPS · ε · log2(L) · ‖x‖₂ · |factor| of numpy's
float64 transform of the same input, where ε is the working precision's machine epsilon, L the
length of the transforms that compute it (the length itself where its prime factors are at most
13, a bound on Bluestein's convolution length for other lengths), ‖x‖₂ the largest 2-norm of a
transformed row (of the whole input for n-D transforms), and factor the norm's scale (1, 1/√n
or 1/n; their product for n-D transforms).
"""

from __future__ import annotations

import math

import numpy as np

import pykern as pk

BOUND_ULPS = 5.0
EPS = {np.complex64: float(np.finfo(np.float32).eps),
       np.complex128: float(np.finfo(np.float64).eps),
       np.float32: float(np.finfo(np.float32).eps), np.float64: float(np.finfo(np.float64).eps)}


def random_complex(shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def random_real(shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def compute_length(n: int) -> int:
    """The length the transforms of length n run at: n itself where its prime factors are
    all at most 13 (mixed radix), else a bound on Bluestein's convolution length."""
    rest = n
    for p in (2, 3, 5, 7, 11, 13):
        while rest % p == 0:
            rest //= p
    if rest == 1:
        return n
    return 1 << (2 * n - 2).bit_length()


def factor(norm: str, n: int, inverse: bool) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "backward") == inverse else 1.0


def assert_close(got: pk.Tensor, want: np.ndarray, x: np.ndarray, dtype: type, n: int,
                 scale: float = 1.0, axis: int | None = -1) -> None:
    """got (a pk tensor) against numpy's f64 result `want`, within the documented bound; the
    rows of x run along `axis` (None: x is one n-D signal)."""
    got_np = got.numpy()
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    x64 = np.asarray(x, dtype=np.complex128)
    if axis is None or x64.ndim == 0 or x64.size == 0:
        norm2 = float(np.linalg.norm(x64.ravel()))
    else:
        norm2 = float(np.max(np.linalg.norm(x64, axis=axis)))
    bound = BOUND_ULPS * EPS[dtype] * max(1.0, math.log2(compute_length(n))) * norm2 * scale
    err = float(np.max(np.abs(got_np - want))) if want.size else 0.0
    assert err <= bound + 1e-300, f"error {err:.3g} above the bound {bound:.3g}"
