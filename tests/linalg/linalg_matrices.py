"""Test matrices for pk.linalg: random matrices of a chosen condition number, and the
backward errors the factorization tests bound.

Bounds: a backward-stable factorization in precision ε gives residuals of a modest multiple
of n·ε relative to the data (LAPACK's own tests accept ratios up to 30); the tests require
the ratios below BACKWARD_BOUND, whatever the condition number.
"""

from __future__ import annotations

import numpy as np

BACKWARD_BOUND = 30.0


def with_condition(rng: np.random.Generator, batch: tuple[int, ...], n: int, cond: float,
                   dtype: type = np.float64) -> np.ndarray:
    """Random (batch..., n, n) matrices U diag(s) Vᵀ with singular values spread
    logarithmically from 1 to 1/cond."""
    u, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    v, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    s = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    return ((u * s[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(dtype)


def spd(rng: np.random.Generator, batch: tuple[int, ...], n: int, cond: float,
        dtype: type = np.float64) -> np.ndarray:
    """Random symmetric positive-definite matrices with eigenvalues from 1 to 1/cond."""
    u, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    s = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    a = (u * s[..., None, :]) @ np.swapaxes(u, -1, -2)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


def eps(dtype: object) -> float:
    return float(np.finfo(np.dtype(dtype)).eps)


def norm(x: np.ndarray) -> np.ndarray:
    """The Frobenius norm of each matrix of a stack (float64)."""
    return np.sqrt((x.astype(np.float64) ** 2).sum(axis=(-2, -1)))


def ratio(residual: np.ndarray, scale: np.ndarray, n: int, dtype: object) -> float:
    """max over the batch of ‖residual‖ / (scale · max(n, 1) · ε)."""
    return float(np.max(norm(residual) / (np.maximum(scale, 1e-300) * max(n, 1) * eps(dtype)),
                        initial=0.0))
