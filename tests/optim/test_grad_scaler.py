"""pk.amp.GradScaler: the scaled loss keeps f16 gradients from underflowing, step() unscales
them and skips a step whose gradients are not finite, update() follows PyTorch's rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk


def _tiny_gradient_case():
    """p (f32) under an f16 autocast matmul, with a loss whose gradient (1e-8 on each product)
    is below f16's smallest subnormal (6e-8) unless the loss is scaled."""
    rng = np.random.default_rng(0)
    x = (rng.random((16, 8)) * 1e-3).astype(np.float32)
    p = pk.asarray(rng.standard_normal((4, 16)).astype(np.float32)).requires_grad_()
    return p, x, np.full((4, 8), 1e-8) @ x.astype(np.float64).T  # d loss / d p


def _backward(p, x, scaler=None):
    with pk.autocast(dtype=pk.f16):
        loss = (p @ pk.asarray(x)).sum() * 1e-8
    (scaler.scale(loss) if scaler is not None else loss).backward()


def test_scaling_keeps_the_f16_gradient_that_would_underflow():
    p, x, want = _tiny_gradient_case()
    _backward(p, x)
    assert np.abs(p.grad.numpy()).max() == 0.0  # lost in f16 without scaling
    p.grad = None
    scaler = pk.amp.GradScaler()
    opt = pk.optim.SGD([p], lr=0.0)
    _backward(p, x, scaler)
    scaler.unscale_(opt)
    np.testing.assert_allclose(p.grad.numpy(), want, rtol=2e-2)


def test_a_step_with_inf_is_skipped_and_the_scale_backs_off():
    p = pk.asarray(np.ones(4, np.float32)).requires_grad_()
    opt = pk.optim.SGD([p], lr=0.5)
    scaler = pk.amp.GradScaler(init_scale=1024.0)
    (scaler.scale((p * pk.asarray(np.array([1, 2, math.inf, 4], np.float32))).sum())).backward()
    assert scaler.step(opt) is None
    scaler.update()
    np.testing.assert_array_equal(p.numpy(), np.ones(4))  # untouched
    assert scaler.get_scale() == 512.0
    p.grad = None
    scaler.scale((p * 2.0).sum()).backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(p.numpy(), np.ones(4) - 0.5 * 2.0)  # unscaled gradient 2


def test_the_scale_grows_after_growth_interval_finite_steps():
    p = pk.asarray(np.ones(2, np.float32)).requires_grad_()
    opt = pk.optim.SGD([p], lr=0.0)
    scaler = pk.amp.GradScaler(init_scale=4.0, growth_interval=3)
    for _ in range(3):
        opt.zero_grad()
        scaler.scale(p.sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 8.0
    scaler.update(new_scale=100.0)
    assert scaler.get_scale() == 100.0
    state = scaler.state_dict()
    other = pk.amp.GradScaler()
    other.load_state_dict(state)
    assert other.state_dict() == state


def test_disabled_passes_through_and_misuse_is_named():
    p = pk.asarray(np.ones(2, np.float32)).requires_grad_()
    opt = pk.optim.SGD([p], lr=1.0)
    off = pk.amp.GradScaler(enabled=False)
    loss = p.sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0
    loss.backward()
    off.step(opt)
    np.testing.assert_array_equal(p.numpy(), np.zeros(2))
    assert off.state_dict() == {}
    scaler = pk.amp.GradScaler()
    p.grad = None
    scaler.scale(p.sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already called"):
        scaler.unscale_(opt)
    for bad in ({"growth_factor": 1.0}, {"backoff_factor": 1.5}, {"growth_interval": 0},
                {"init_scale": 0.0}):
        with pytest.raises(ValueError):
            pk.amp.GradScaler(**bad)
    assert pk.amp.autocast is pk.autocast
