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


def _np_sort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """numpy's order (real part, then imaginary part), reversed for descending."""
    s = np.sort(a, axis=axis)
    return np.flip(s, axis=axis) if descending else s


@pytest.mark.parametrize("axis, descending", [(0, False), (1, False), (-1, True), (0, True)])
def test_complex_sort(axis, descending):
    """The gradient goes back to where each value came from, in numpy's order."""
    check(lambda t: pk.sort(t, axis=axis, descending=descending),
          lambda a: _np_sort(a, axis, descending), _c(3, 5))


def test_complex_sort_orders_by_real_then_imaginary_part():
    """Equal real parts (not perturbed: only the imaginary parts are checked here, which
    decide their order): each gradient lands on its own element."""
    a = np.array([[1 + 2j, 1 - 1j, -1 + 0.5j, 1 + 0.2j]])
    t = pk.asarray(a).requires_grad_()
    out = pk.sort(t, axis=1)
    np.testing.assert_array_equal(out.numpy(), np.sort(a, axis=1))
    w = np.array([[1 + 1j, 2 - 1j, 3 + 0.5j, 4j]])
    out.backward(pk.asarray(w))
    order = np.argsort(a[0], kind="stable")
    expected = np.zeros_like(a)
    expected[0, order] = w[0]
    np.testing.assert_array_equal(t.grad.numpy(), expected)


def test_array_api_sort_of_complex():
    xp = pk.array_api
    check(lambda t: xp.sort(t, axis=0, descending=True),
          lambda a: _np_sort(a, 0, True), _c(4, 3))
    t = pk.asarray(_c(5).astype(np.complex64)).requires_grad_()
    pk.sum(pk.abs(xp.sort(t)) ** 2).backward()
    np.testing.assert_allclose(t.grad.numpy(), 2 * t.detach().numpy(), rtol=1e-6)
    assert t.grad.dtype == pk.c64
