"""Autograd of `prod` and `sort` on complex tensors, in PyTorch's convention (z.grad = dL/dx +
i dL/dy for a real loss), against central differences of numpy on both parts."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import gradcheck
import pykern as pk

RNG = np.random.default_rng(4127)
check = functools.partial(gradcheck.check_complex_grad, rng=RNG)


def _c(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


@pytest.mark.parametrize("axis, keepdims", [(1, False), (0, True), (None, False)])
def test_complex_prod(axis, keepdims):
    check(lambda t: pk.prod(t, axis=axis, keepdims=keepdims),
          lambda a: np.prod(a, axis=axis, keepdims=keepdims), _c(3, 4))


@pytest.mark.parametrize("zeros", [1, 2], ids=["one zero", "two zeros"])
def test_complex_prod_with_zeros(zeros):
    """A slice with one zero: the zero element gets conj(product of the others)·g, the others
    0; with two zeros every element gets 0 — no division by zero anywhere."""
    a = _c(3, 4)
    a[1, 2] = 0
    a[2, 0] = 0
    if zeros == 2:
        a[1, 0] = 0j
        a[2, 3] = 0
    check(lambda t: pk.prod(t, axis=1), lambda x: x.prod(axis=1), a)


def test_complex_prod_single_precision():
    a = _c(2, 5)
    grads = []
    w = _c(2)
    for dtype in (pk.c128, pk.c64):
        t = pk.asarray(a).astype(dtype).requires_grad_()
        pk.prod(t, axis=1).backward(pk.asarray(w.astype(dtype.numpy)))
        assert t.grad.dtype == dtype
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)


def test_prod_of_a_real_tensor_into_a_complex_dtype_records():
    """prod(x, dtype=c128) of a real x: recorded (it returned the product unrecorded, cutting
    the graph), x.grad the real part."""
    x = RNG.standard_normal((3, 4))
    check(lambda t: pk.prod(t, axis=0, dtype=pk.c128) * (1 + 2j),
          lambda a: a.prod(axis=0) * (1 + 2j), x)
