"""Gradients through pk.fft: every transform is a linear map whose backward is its adjoint,
checked against central differences of numpy's transform (both parts of complex inputs, in
pykern's and PyTorch's convention z.grad = dL/dx + i dL/dy), with lengths that pad and crop,
every norm, odd and even lengths, other axes, and real inputs to the complex transforms."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcheck
import pykern as pk

RNG = np.random.default_rng(4242)
check = functools.partial(gradcheck.check_complex_grad, rng=RNG)
F = pk.fft

# name -> (pykern call, numpy call, whether the input is complex)
CASES = {
    "fft": (F.fft, np.fft.fft, True),
    "fft n pads, ortho": (lambda t: F.fft(t, n=9, norm="ortho"),
                          lambda a: np.fft.fft(a, n=9, norm="ortho"), True),
    "fft n crops, axis 0, forward": (lambda t: F.fft(t, n=2, axis=0, norm="forward"),
                                     lambda a: np.fft.fft(a, n=2, axis=0, norm="forward"), True),
    "fft of a real input": (F.fft, np.fft.fft, False),
    "ifft n=7": (lambda t: F.ifft(t, n=7), lambda a: np.fft.ifft(a, n=7), True),
    "fftn s": (lambda t: F.fftn(t, s=(4, 3), axes=(0, 1)),
               lambda a: np.fft.fftn(a, s=(4, 3), axes=(0, 1)), True),
    "ifftn ortho": (lambda t: F.ifftn(t, norm="ortho"),
                    lambda a: np.fft.ifftn(a, norm="ortho"), True),
    "rfft": (F.rfft, np.fft.rfft, False),
    "rfft odd n, axis 0": (lambda t: F.rfft(t, n=7, axis=0),
                           lambda a: np.fft.rfft(a, n=7, axis=0), False),
    "rfft ortho": (lambda t: F.rfft(t, norm="ortho"),
                   lambda a: np.fft.rfft(a, norm="ortho"), False),
    "ihfft n=6": (lambda t: F.ihfft(t, n=6), lambda a: np.fft.ihfft(a, n=6), False),
    "irfft": (F.irfft, np.fft.irfft, True),
    "irfft odd n, forward": (lambda t: F.irfft(t, n=7, norm="forward"),
                             lambda a: np.fft.irfft(a, n=7, norm="forward"), True),
    "irfft axis 0": (lambda t: F.irfft(t, n=4, axis=0),
                     lambda a: np.fft.irfft(a, n=4, axis=0), True),
    "irfft of a real input": (F.irfft, np.fft.irfft, False),
    "hfft": (F.hfft, np.fft.hfft, True),
    "hfft n=5, ortho": (lambda t: F.hfft(t, n=5, norm="ortho"),
                        lambda a: np.fft.hfft(a, n=5, norm="ortho"), True),
    "rfftn": (F.rfftn, np.fft.rfftn, False),
    "rfftn s, ortho": (lambda t: F.rfftn(t, s=(5, 4), axes=(0, 1), norm="ortho"),
                       lambda a: np.fft.rfftn(a, s=(5, 4), axes=(0, 1), norm="ortho"), False),
    "irfftn": (F.irfftn, np.fft.irfftn, True),
    "irfftn s, axes reversed": (lambda t: F.irfftn(t, s=(2, 5), axes=(1, 0)),
                                lambda a: np.fft.irfftn(a, s=(2, 5), axes=(1, 0)), True),
}


def _input(shape, complex_input, dtype=np.float64):
    a = RNG.standard_normal(shape)
    if complex_input:
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(np.result_type(dtype, a.dtype))


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_gradient(name):
    call, reference, complex_input = CASES[name]
    check(call, reference, _input((3, 4), complex_input), atol=1e-6)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft"])
def test_single_precision_gradient(name):
    """c64/f32: the gradient of the c128/f64 computation, to single precision."""
    call, _, complex_input = CASES[name]
    a = _input((2, 8), complex_input)
    w = None
    grads = []
    for dtype in ((np.complex64, np.complex128) if complex_input else (np.float32, np.float64)):
        t = pk.asarray(a.astype(dtype)).requires_grad_()
        out = call(t)
        parts = pk.view_as_real(out) if out.dtype.is_complex else out
        w = RNG.standard_normal(parts.shape) if w is None else w
        (parts * pk.asarray(w.astype(parts.dtype.numpy))).sum().backward()
        grads.append(t.grad.numpy())
    assert grads[0].dtype == np.dtype(np.complex64 if complex_input else np.float32)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-4)


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_gradients_over_shapes_lengths_and_norms(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.none() | st.integers(1, 9))
    norm = data.draw(st.sampled_from(["backward", "ortho", "forward"]))
    name = data.draw(st.sampled_from(["fft", "ifft", "rfft", "ihfft", "irfft", "hfft"]))
    if name in ("irfft", "hfft") and n is None and shape[axis] < 2:
        n = 2  # the default output length 2·(m - 1) would be 0
    complex_input = name not in ("rfft", "ihfft")
    check(lambda t: getattr(F, name)(t, n=n, axis=axis, norm=norm),
          lambda a: getattr(np.fft, name)(a, n=n, axis=axis, norm=norm),
          _input(tuple(shape), complex_input), atol=1e-6)


def test_a_spectral_loss_trains_a_real_signal():
    """Fitting a signal's magnitude spectrum by gradient descent through rfft and abs: the
    loss falls, as it does in PyTorch."""
    target = np.abs(np.fft.rfft(np.sin(np.linspace(0, 8 * np.pi, 64))))
    x = pk.asarray(RNG.standard_normal(64) * 0.1).requires_grad_()
    losses = []
    for _ in range(30):
        loss = ((pk.abs(F.rfft(x)) - pk.asarray(target)) ** 2).mean()
        losses.append(loss.item())
        x.grad = None
        loss.backward()
        with pk.no_grad():
            x -= 0.05 * x.grad
    assert losses[-1] < 0.2 * losses[0]


def test_a_repeated_axis_is_refused_only_with_grad():
    t = pk.asarray(RNG.standard_normal((4, 4))).requires_grad_()
    with pytest.raises(NotImplementedError, match="repeated axis"):
        F.fftn(t, axes=(0, 0))
    with pk.no_grad():
        np.testing.assert_allclose(F.fftn(t, axes=(0, 0)).numpy(),
                                   np.fft.fftn(t.detach().numpy(), axes=(0, 0)), atol=1e-10)


def test_backward_of_a_complex_result_needs_a_gradient():
    z = F.fft(pk.asarray(RNG.standard_normal(4)).requires_grad_()).sum()
    with pytest.raises(RuntimeError, match="complex result needs a gradient"):
        z.backward()
