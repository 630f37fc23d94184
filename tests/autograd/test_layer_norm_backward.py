"""layer_norm's backward kernel gives the gradients of the same formula as a composition of
ops (the differential check, in f64 to rounding), and numpy's closed form in f32 and f16."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


def _composed_layer_norm(x, normalized_shape, weight, bias, eps):
    """layer_norm as a composition of differentiable ops (mean, subtract, sqrt, divide)."""
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    d = x - pk.mean(x, axis=axes, keepdims=True)
    y = d / pk.sqrt(pk.mean(d * d, axis=axes, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _grads(fn, x, w, b, g, shape):
    ts = [pk.asarray(v).requires_grad_() if v is not None else None for v in (x, w, b)]
    (fn(ts[0], shape, ts[1], ts[2], 1e-5) * pk.asarray(g)).sum().backward()
    return [t.grad.numpy() if t is not None else None for t in ts]


@pytest.mark.parametrize("shape,norm", [((3, 5, 40), (40,)), ((4, 130), (130,)),
                                        ((2, 3, 4), (3, 4)), ((1, 1), (1,)), ((7, 200), (200,))])
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, True), (False, False)])
def test_the_kernel_matches_the_composition_in_f64(shape, norm, affine):
    rng = np.random.default_rng(len(shape) + sum(norm))
    x, g = rng.standard_normal(shape) * 3 + 1, rng.standard_normal(shape)
    w = rng.standard_normal(norm) if affine[0] else None
    b = rng.standard_normal(norm) if affine[1] else None
    got = _grads(pk.layer_norm, x, w, b, g, norm)
    want = _grads(_composed_layer_norm, x, w, b, g, norm)
    for a, e in zip(got, want):
        if e is not None:
            np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-11)


def test_a_transposed_input_and_its_gradient_shape():
    rng = np.random.default_rng(5)
    base = rng.standard_normal((24, 6))
    x = pk.asarray(base).requires_grad_()
    xt = x.mT  # (6, 24), not contiguous
    (pk.layer_norm(xt, 24) * 2.0).sum().backward()
    # the gradient of sum(2 * layer_norm) is 0 (rows sum to zero in x̂): rounding only
    assert x.grad.shape == (24, 6)
    assert np.abs(x.grad.numpy()).max() < 1e-12


@pytest.mark.parametrize("dtype,tol", [(pk.f32, 2e-6), (pk.f16, 4e-3)])
def test_f32_and_f16_against_the_closed_form(dtype, tol):
    rng = np.random.default_rng(9)
    x = pk.asarray(rng.standard_normal((6, 48)).astype(np.float32)).astype(dtype)
    g = pk.asarray(rng.standard_normal((6, 48)).astype(np.float32)).astype(dtype)
    w = pk.asarray(rng.standard_normal(48).astype(np.float32)).requires_grad_()
    x.requires_grad_()
    (pk.layer_norm(x, 48, w) * g).sum().backward()
    xd, gd = x.numpy().astype(np.float64), g.numpy().astype(np.float64)
    h = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-5)
    gw = gd * w.numpy()
    dx = (gw - gw.mean(-1, keepdims=True) - h * (gw * h).mean(-1, keepdims=True)) \
        / np.sqrt(xd.var(-1, keepdims=True) + 1e-5)
    assert x.grad.dtype == dtype
    np.testing.assert_allclose(x.grad.numpy().astype(np.float64), dx, atol=tol * 10, rtol=tol)
    np.testing.assert_allclose(w.grad.numpy(), (gd * h).sum(0), rtol=1e-4, atol=1e-3)
