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
               atol: float = 1e-6, skip_jumps: bool = False) -> None:
    """d sum(w * f(x...)) / dx for a random weight w (from `rng`), pykern's against central
    differences. With `skip_jumps`, elements where the reference is not smooth at the step's
    scale (a step of floor_divide or remainder within the step: central differences with the
    step and half of it disagree) are left out; everywhere else the check is as strict."""
    ts = [pk.asarray(a).requires_grad_() for a in arrays]
    out = pk_fn(*ts)
    w = rng.standard_normal(out.shape)
    (out * pk.asarray(w)).sum().backward()
    for i, (t, a) in enumerate(zip(ts, arrays)):
        def f(x, i=i):
            args = list(arrays)
            args[i] = x
            return float(np.sum(w * np_fn(*args)))
        want, got = numeric_grad(f, a), t.grad.numpy()
        if skip_jumps:
            smooth = np.isclose(want, numeric_grad(f, a, eps=0.5e-6), rtol=1e-3, atol=1e-4)
            want, got = want[smooth], got[smooth]
        np.testing.assert_allclose(got, want, atol=atol, rtol=1e-5)


def check_complex_grad(pk_fn, np_fn, *arrays: np.ndarray, rng: np.random.Generator,
                       atol: float = 1e-6) -> None:
    """pykern's gradient convention for complex inputs (PyTorch's): for a real loss L of
    z = x + iy, z.grad = dL/dx + i dL/dy. L = sum(Re(conj(w) * f(z...))) for a random weight
    w (complex where f's result is), against central differences of both parts; real
    arrays among `arrays` get the real gradient."""
    ts = [pk.asarray(a).requires_grad_() for a in arrays]
    out = pk_fn(*ts)
    w = rng.standard_normal(out.shape)
    if out.dtype.is_complex:
        w = w + 1j * rng.standard_normal(out.shape)
    out.backward(pk.asarray(w.astype(out.dtype.numpy)))
    for i, (t, a) in enumerate(zip(ts, arrays)):
        def f(x, i=i):
            args = list(arrays)
            args[i] = x
            return float(np.sum(np.real(np.conj(w) * np_fn(*args))))
        if np.iscomplexobj(a):
            expected = (numeric_grad(lambda x, f=f, a=a: f(x + 1j * a.imag), a.real.copy())
                        + 1j * numeric_grad(lambda y, f=f, a=a: f(a.real + 1j * y),
                                            a.imag.copy())).astype(a.dtype)
        else:
            expected = numeric_grad(f, a)
        assert t.grad is not None, f"input {i} got no gradient"
        np.testing.assert_allclose(t.grad.numpy(), expected, atol=atol, rtol=1e-5)
