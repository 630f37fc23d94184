"""The unary methods' and full reductions' fast path (pykern.tensor.core.fast_methods): a
repeated `x.relu()`, `-x`, `x.sum()` replays its op plan directly; its results, autograd
records and errors are those of the first call, which goes the long way."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

RNG = np.random.default_rng(11)
UNARY = {
    "neg": (lambda t: -t, np.negative), "abs": (abs, np.abs),
    "relu": (lambda t: t.relu(), lambda a: np.maximum(a, 0)),
    "exp": (lambda t: t.exp(), np.exp), "sqrt": (lambda t: t.abs().sqrt(), lambda a:
                                                 np.sqrt(np.abs(a))),
    "tanh": (lambda t: t.tanh(), np.tanh), "square": (lambda t: t.square(), np.square),
    "sigmoid": (lambda t: t.sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_repeated_unary_method_matches_numpy(name):
    ours, ref = UNARY[name]
    for _ in range(3):  # the first call makes the plan, the next ones replay it
        x = RNG.uniform(-2, 2, (3, 5)).astype(np.float32)
        t = pk.asarray(x)
        np.testing.assert_allclose(ours(t).numpy(), ref(x), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours(t[1:, 2:]).numpy(), ref(x[1:, 2:]), rtol=1e-5,
                                   atol=1e-6)  # a strided view with an offset


@pytest.mark.parametrize("name, ref", [("exp", np.exp), ("negative", np.negative),
                                       ("square", np.square), ("sin", np.sin)])
def test_repeated_unary_function_matches_numpy_and_records_autograd(name, ref):
    fn = getattr(pk, name)  # pk.exp(x) replays the plan x.exp() made, and the other way
    for _ in range(3):
        x = RNG.uniform(-2, 2, (3, 5)).astype(np.float32)
        w = pk.asarray(x).requires_grad_()
        np.testing.assert_allclose(fn(w[1:, 2:]).detach().numpy(), ref(x[1:, 2:]), rtol=1e-5,
                                   atol=1e-6)
        fn(w).sum().backward()
        eps = 1e-3  # the derivative, by central differences in float64
        slope = (ref(x.astype(np.float64) + eps) - ref(x.astype(np.float64) - eps)) / (2 * eps)
        np.testing.assert_allclose(w.grad.numpy(), slope, rtol=1e-3, atol=1e-4)
        out = pk.empty((3, 5))
        assert fn(pk.asarray(x), out=out) is out  # out= goes the long way
        np.testing.assert_allclose(out.numpy(), ref(x), rtol=1e-5, atol=1e-6)


def test_repeated_unary_method_of_integers_and_complex():
    for _ in range(3):
        x = RNG.integers(-9, 9, 8).astype(np.int32)
        got = -pk.asarray(x)
        assert got.dtype == pk.int32
        np.testing.assert_array_equal(got.numpy(), -x)
        z = (RNG.uniform(-1, 1, 4) + 1j * RNG.uniform(-1, 1, 4)).astype(np.complex64)
        np.testing.assert_allclose(abs(pk.asarray(z)).numpy(), np.abs(z), rtol=1e-6)


def test_repeated_unary_method_records_autograd():
    x = RNG.uniform(-1, 1, 16).astype(np.float32)
    for _ in range(3):
        w = pk.asarray(x).requires_grad_()
        y = w.relu()
        assert y.requires_grad and y.grad_fn is not None
        (y * w.exp()).sum().backward()
        expected = (x > 0) * np.exp(x) + np.maximum(x, 0) * np.exp(x)
        np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)
        with pk.no_grad():
            assert not w.relu().requires_grad


def test_repeated_unary_method_refuses_a_saved_tensor_written_in_place():
    for _ in range(3):
        w = pk.ones(4, requires_grad=True)
        h = w * 1.0
        y = h.exp()  # exp's backward reads its result
        y += 1.0
        with pytest.raises(RuntimeError, match="modified by an in-place operation"):
            y.sum().backward()


def test_repeated_full_reduction_matches_numpy():
    for _ in range(3):
        x = RNG.uniform(-1, 1, (4, 6)).astype(np.float32)
        t = pk.asarray(x)
        np.testing.assert_allclose(t.sum().numpy(), x.sum(), rtol=1e-5)
        np.testing.assert_allclose(t.mean().numpy(), x.mean(), rtol=1e-5)
        np.testing.assert_allclose(t.sum(0).numpy(), x.sum(0), rtol=1e-5)  # not the fast one
        np.testing.assert_allclose(t.sum(keepdims=True).numpy(), x.sum(keepdims=True),
                                   rtol=1e-5)
        i = RNG.integers(0, 9, 7).astype(np.int32)
        assert pk.asarray(i).mean().dtype == pk.float32
        np.testing.assert_allclose(pk.asarray(i).mean().numpy(), i.mean(), rtol=1e-6)


def test_repeated_full_reduction_records_autograd():
    x = RNG.uniform(-1, 1, 6).astype(np.float32)
    for _ in range(3):
        w = pk.asarray(x).requires_grad_()
        w.mean().backward()
        np.testing.assert_allclose(w.grad.numpy(), np.full(6, 1 / 6), rtol=1e-6)


def test_fast_methods_still_refuse_bad_arguments():
    t = pk.ones(4)
    for _ in range(3):
        t.sum()
        with pytest.raises((ValueError, IndexError)):
            t.sum(axis=3)
