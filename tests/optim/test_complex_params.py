"""Complex parameters in pk.optim, as PyTorch's optimizers take them: each complex number is
its (real, imaginary) pair (`view_as_real`), so SGD is the complex update itself and AdamW's
moments are per part. Checked against numpy reimplementations of PyTorch's update formulas on
the pairs, and by training a complex parameter."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

RNG = np.random.default_rng(5150)


def _c(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1)


def np_adamw(p, grads, lr, betas, eps, wd):
    """torch.optim.AdamW (no amsgrad) on the real array p, one step per gradient."""
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        p = p * (1 - lr * wd)
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        step = lr / (1 - betas[0] ** t)
        p = p - step * m / (np.sqrt(v) / np.sqrt(1 - betas[1] ** t) + eps)
    return p, m, v


def np_sgd(p, grads, lr, momentum, wd):
    b = None
    for g in grads:
        d = g + wd * p
        if momentum:
            b = d if b is None else momentum * b + d
            d = b
        p = p - lr * d
    return p, b


@pytest.mark.parametrize("dtype, rtol", [(pk.c128, 1e-12), (pk.c64, 1e-5)])
def test_adamw_on_complex_parameters_is_adamw_on_their_pairs(dtype, rtol):
    """Adam's second moment of a complex parameter is per part (g_re², g_im²), not |g|²: the
    update of view_as_real(p), as PyTorch's."""
    start = _c(3, 5)
    grads = [_c(3, 5) for _ in range(4)]
    p = pk.asarray(start.astype(dtype.numpy)).requires_grad_()
    real = pk.asarray(RNG.standard_normal(7).astype(dtype.real_dtype.numpy)).requires_grad_()
    opt = pk.optim.AdamW([p, real], lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)
    for g in grads:
        p.grad = pk.asarray(g.astype(dtype.numpy))
        real.grad = None
        opt.step()
    want, m, v = np_adamw(_pairs(start), [_pairs(g) for g in grads], 0.05, (0.8, 0.9), 1e-6,
                          0.1)
    assert p.dtype == dtype
    np.testing.assert_allclose(_pairs(p.detach().numpy()), want, rtol=rtol, atol=rtol)
    state = opt.state_dict()["state"][0]
    assert state["exp_avg"].dtype == dtype and state["exp_avg"].shape == (3, 5)
    np.testing.assert_allclose(_pairs(state["exp_avg"].numpy()), m, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(_pairs(state["exp_avg_sq"].numpy()), v, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("momentum, wd", [(0.0, 0.0), (0.9, 0.01)])
def test_sgd_on_complex_parameters(momentum, wd):
    start = _c(4, 3)
    grads = [_c(4, 3) for _ in range(3)]
    p = pk.asarray(start).requires_grad_()
    opt = pk.optim.SGD([p], lr=0.1, momentum=momentum, weight_decay=wd)
    for g in grads:
        p.grad = pk.asarray(g)
        opt.step()
    want, b = np_sgd(start, grads, 0.1, momentum, wd)
    np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    if momentum:
        np.testing.assert_allclose(opt.state_dict()["state"][0]["momentum_buffer"].numpy(), b,
                                   rtol=1e-12)


def test_training_a_complex_parameter():
    """A complex filter fitted by AdamW through pk.fft: y = ifft(fft(x) * h) matches a
    target filter's output; the loss falls and h approaches the target."""
    n = 16
    x = pk.asarray(RNG.standard_normal((8, n)))
    target_h = _c(n) * 0.5
    y = pk.asarray(np.fft.ifft(np.fft.fft(x.numpy()) * target_h))
    h = pk.zeros(n, pk.c128, requires_grad=True)
    opt = pk.optim.AdamW([h], lr=0.05, weight_decay=0.0)
    losses = []
    for _ in range(300):
        out = pk.fft.ifft(pk.fft.fft(x) * h)
        loss = pk.mean(pk.abs(out - y) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-4 * losses[0]
    np.testing.assert_allclose(h.detach().numpy(), target_h, atol=1e-2)


def test_complex_and_real_parameters_state_dict_round_trip():
    p = pk.asarray(_c(2, 3)).requires_grad_()
    opt = pk.optim.AdamW([p], lr=0.01)
    p.grad = pk.asarray(_c(2, 3))
    opt.step()
    saved = {k: v.copy() for k, v in opt.state_dict()["state"][0].items()
             if isinstance(v, pk.Tensor)}
    q = pk.asarray(p.detach().numpy()).requires_grad_()
    opt2 = pk.optim.AdamW([q], lr=0.01)
    opt2.load_state_dict(opt.state_dict())
    g = pk.asarray(_c(2, 3))
    p.grad, q.grad = g, g.copy()
    opt.step()
    opt2.step()
    np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
    assert saved["exp_avg"].dtype == pk.c128


def test_integer_parameters_are_still_refused():
    with pytest.raises(TypeError, match="floating-point and complex"):
        pk.optim.SGD([pk.zeros(3, pk.i32)], lr=0.1)
