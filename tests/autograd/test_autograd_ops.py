"""Backward of the ops beyond elementwise, matmul, sum/mean and views, against central
differences in float64 (more ops: test_autograd_ops_more.py)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

from test_autograd_core import RNG, check_grad


def np_softmax(a, axis=-1):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_and_log_softmax(axis):
    x = RNG.standard_normal((3, 5))
    check_grad(lambda t: pk.softmax(t, axis=axis), lambda a: np_softmax(a, axis), x)
    check_grad(lambda t: pk.log_softmax(t, axis=axis), lambda a: np.log(np_softmax(a, axis)), x)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (0, True)])
def test_max_min_var_std(axis, keepdims):
    x = RNG.standard_normal((4, 5))
    check_grad(lambda t: pk.max(t, axis=axis, keepdims=keepdims),
               lambda a: np.max(a, axis=axis, keepdims=keepdims), x)
    check_grad(lambda t: t.min(axis=axis, keepdims=keepdims),
               lambda a: np.min(a, axis=axis, keepdims=keepdims), x)
    check_grad(lambda t: pk.var(t, axis=axis, keepdims=keepdims, correction=1),
               lambda a: np.var(a, axis=axis, keepdims=keepdims, ddof=1), x)
    check_grad(lambda t: pk.std(t, axis=axis, keepdims=keepdims),
               lambda a: np.std(a, axis=axis, keepdims=keepdims), x)


def test_max_ties_share_the_gradient():
    x = pk.asarray(np.array([1.0, 3.0, 3.0])).requires_grad_()
    pk.max(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5])


def test_where_clip_concat_stack_cumsum_take():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4,))
    cond = RNG.standard_normal((3, 4)) > 0
    check_grad(lambda s, t: pk.where(pk.asarray(cond), s, t), lambda s, t: np.where(cond, s, t),
               a, b)
    check_grad(lambda t: pk.clip(t, -0.5, 0.7), lambda s: np.clip(s, -0.5, 0.7), a)
    c = RNG.standard_normal((2, 4))
    check_grad(lambda s, t: pk.concat([s, t], axis=0), lambda s, t: np.concatenate([s, t]), a, c)
    check_grad(lambda s, t: pk.concat([s, t], axis=None),
               lambda s, t: np.concatenate([s.ravel(), t.ravel()]), a, c)
    check_grad(lambda s, t: pk.stack([s, t], axis=1), lambda s, t: np.stack([s, t], 1),
               a[:2], c)
    check_grad(lambda t: pk.cumsum(t, axis=1), lambda s: np.cumsum(s, axis=1), a)
    check_grad(lambda t: pk.cumsum(t), lambda s: np.cumsum(s), a)
    idx = np.array([[2, 0], [2, 1]])  # repeated indices accumulate
    check_grad(lambda t: pk.take(t, pk.asarray(idx), axis=1), lambda s: np.take(s, idx, axis=1),
               a)
    check_grad(lambda t: pk.take(t, pk.asarray(idx)), lambda s: np.take(s, idx), a)


def np_layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def test_layer_norm_and_attention():
    x, w, b = RNG.standard_normal((3, 6)), RNG.standard_normal(6), RNG.standard_normal(6)
    check_grad(lambda t, u, v: pk.layer_norm(t, 6, u, v), np_layer_norm, x, w, b, atol=1e-5)
    q, k, v = (RNG.standard_normal((2, 4, 3)) for _ in range(3))

    def np_attention(q, k, v, causal):
        s = q @ k.swapaxes(-1, -2) / np.sqrt(3)
        if causal:
            s = np.where(np.tril(np.ones((4, 4), bool)), s, -np.inf)
        return np_softmax(s) @ v

    for causal in (False, True):
        check_grad(lambda a, c, d, m=causal: pk.attention(a, c, d, causal=m),
                   lambda a, c, d, m=causal: np_attention(a, c, d, m), q, k, v, atol=1e-5)


def np_conv2d(x, w, b, s, p, d):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd + 2 * p[1] - d[1] * (kw - 1) - 1) // s[1] + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                       j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out + b[None, :, None, None]


@pytest.mark.parametrize("s, p, d", [((1, 1), (0, 0), (1, 1)), ((2, 2), (1, 1), (1, 1)),
                                     ((1, 2), (1, 0), (2, 1)), ((2, 1), (2, 1), (1, 2))])
def test_conv2d_gradients(s, p, d):
    x, w, b = RNG.standard_normal((2, 3, 7, 6)), RNG.standard_normal((4, 3, 3, 2)), \
        RNG.standard_normal(4)
    check_grad(lambda t, u, v: pk.conv2d(t, u, v, stride=s, padding=p, dilation=d),
               lambda t, u, v: np_conv2d(t, u, v, s, p, d), x, w, b, atol=1e-5)


def test_conv2d_records_nothing_under_no_grad_or_on_detached_inputs():
    x = pk.asarray(RNG.standard_normal((1, 2, 5, 5))).requires_grad_()
    w = pk.asarray(RNG.standard_normal((3, 2, 3, 3)))
    with pk.no_grad():
        assert pk.conv2d(x, w).grad_fn is None
    y = pk.conv2d(x.detach(), w)
    assert y.shape == (1, 3, 3, 3) and not y.requires_grad
