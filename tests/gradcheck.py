"""Central-difference gradient checks in float64, shared by the autograd and pk.nn tests."""

from __future__ import annotations

import numpy as np

import pykern as pk


def numeric_grad(fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (fn(up) - fn(down)) / (2 * eps)
    return g


def check_grad(pk_fn, np_fn, *arrays: np.ndarray, rng: np.random.Generator,
               atol: float = 1e-6) -> None:
    """d sum(w * f(x...)) / dx for a random weight w (from `rng`), pykern's against central
    differences."""
    ts = [pk.asarray(a).requires_grad_() for a in arrays]
    out = pk_fn(*ts)
    w = rng.standard_normal(out.shape)
    (out * pk.asarray(w)).sum().backward()
    for i, (t, a) in enumerate(zip(ts, arrays)):
        def f(x, i=i):
            args = list(arrays)
            args[i] = x
            return float(np.sum(w * np_fn(*args)))
        np.testing.assert_allclose(t.grad.numpy(), numeric_grad(f, a), atol=atol, rtol=1e-5)
