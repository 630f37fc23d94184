"""pk.fft.fftfreq / rfftfreq / fftshift / ifftshift against numpy, and the transforms'
argument errors (each names the function and the argument; the input is left intact)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


@pytest.mark.parametrize("n,d", [(1, 1.0), (8, 0.1), (7, 2.5)])
def test_fftfreq_and_rfftfreq(n, d):
    got = pk.fft.fftfreq(n, d=d)
    assert got.dtype == pk.f32
    np.testing.assert_allclose(got.numpy(), np.fft.fftfreq(n, d), rtol=2e-7, atol=0)
    got64 = pk.fft.rfftfreq(n, d=d, dtype=pk.f64)
    np.testing.assert_allclose(got64.numpy(), np.fft.rfftfreq(n, d), rtol=1e-15, atol=0)


@pytest.mark.parametrize("axes", [None, 0, (1,), (-1, 0)])
def test_fftshift_and_ifftshift(axes):
    x = (np.arange(15).reshape(3, 5) + 1j * np.arange(15).reshape(3, 5)[::-1]).astype(np.complex64)
    assert np.array_equal(pk.fft.fftshift(pk.asarray(x), axes=axes).numpy(),
                          np.fft.fftshift(x, axes=axes))
    assert np.array_equal(pk.fft.ifftshift(pk.asarray(x.real), axes=axes).numpy(),
                          np.fft.ifftshift(x.real, axes=axes))


def test_frequency_errors():
    with pytest.raises(ValueError, match="fftfreq: n must be >= 1"):
        pk.fft.fftfreq(0)
    with pytest.raises(TypeError, match="rfftfreq: n must be an int"):
        pk.fft.rfftfreq(2.5)
    with pytest.raises(ValueError, match="fftfreq: d must not be 0"):
        pk.fft.fftfreq(4, d=0)
    with pytest.raises(TypeError, match="fftfreq: dtype must be f32 or f64"):
        pk.fft.fftfreq(4, dtype=pk.i32)


def test_norm_none_is_backward_as_in_numpy():
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    for f in (pk.fft.fft, pk.fft.irfft, pk.fft.fftn):
        np.testing.assert_allclose(f(pk.asarray(x), norm=None).numpy(),
                                   f(pk.asarray(x)).numpy(), rtol=0, atol=0)
        np.testing.assert_allclose(f(pk.asarray(x), norm=None).numpy(),
                                   getattr(np.fft, f.__name__)(x, norm=None), atol=1e-5)


@pytest.mark.parametrize("call,error,match", [
    (lambda t: pk.fft.fft(t, n=0), ValueError, "fft: n must be >= 1"),
    (lambda t: pk.fft.ifft(t, n=-3), ValueError, "ifft: n must be >= 1"),
    (lambda t: pk.fft.fft(t, n=2.0), TypeError, "fft: n must be an int"),
    (lambda t: pk.fft.rfft(t.real if False else t, axis=2), Exception, "axis"),
    (lambda t: pk.fft.fft(t, norm="none"), ValueError, "fft: norm must be one of"),
    (lambda t: pk.fft.irfft(t, norm=1), TypeError, "irfft: norm must be a str"),
    (lambda t: pk.fft.fftn(t, s=(4, 4), axes=(0,)), ValueError, "fftn: s and axes"),
    (lambda t: pk.fft.fftn(t, axes=(0, 5)), Exception, "axis"),
    (lambda t: pk.fft.fftn(t, s=(2, 0)), ValueError, r"fftn: s\[1\] must be >= 1"),
    (lambda t: pk.fft.irfft(t[:, :1]), ValueError, "irfft: x has length 1 along axis 1"),
    (lambda t: pk.fft.fftshift(t, axes=3), Exception, "axis"),
])
def test_argument_errors(call, error, match):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    t = pk.asarray(x)
    with pytest.raises(error, match=match):
        call(t)
    assert np.array_equal(t.numpy(), x)


def test_zero_dimensional_input_is_refused():
    with pytest.raises(ValueError, match="fft: x must have at least one dimension"):
        pk.fft.fft(pk.asarray(1.0))
