"""The mixed-radix transforms against numpy.fft (float64 reference) within fft_support's bound:
lengths whose prime factors are 2, 3, 5, 7, 11 and 13 in one shared-memory launch (every
radix, stages whose last invocations idle), batched along every axis, Bluestein at a smooth
convolution length, the four-step over mixed lengths, and the real transforms in one launch
(rfft/irfft with the post- and pre-processing fused, odd lengths and inner axes through the full
length), rfft2/irfft2 of odd and even shapes."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.fft import engine, radix_plan

from fft_support import assert_close, random_complex, random_real

DTYPES = [np.complex64, np.complex128]
REAL = {np.complex64: pk.f32, np.complex128: pk.f64}


@pytest.mark.parametrize("n,dtype,axis", [
    (1000, np.complex64, -1),    # 8·5·5·5: the radix-5 stages have idle invocations
    (1000, np.complex128, -1),
    (840, np.complex64, -1),     # 7·6·5·4
    (143, np.complex64, 0),      # 13·11, along a strided axis
    (96, np.complex128, 1),      # 6·4·4, the middle axis of three
])
def test_one_pass_lengths(n, dtype, axis):
    assert radix_plan.radices_for(n) is not None and engine.one_pass(n, REAL[dtype])
    shape = [2, 3, 2]
    shape[axis] = n
    x = random_complex(tuple(shape), dtype, n)
    for f, ref, scale in ((pk.fft.fft, np.fft.fft, 1.0), (pk.fft.ifft, np.fft.ifft, 1.0 / n)):
        got = f(pk.asarray(x), axis=axis)
        assert_close(got, ref(x.astype(np.complex128), axis=axis), x, dtype, n, scale,
                     axis=axis)


def test_every_radix_has_a_butterfly(monkeypatch):
    """Every radix's butterfly: the primes 11 and 13 alone (one stage, one butterfly per
    invocation) and the composite radices above 8, which plans take up to MAX_RADIX."""
    monkeypatch.setattr(radix_plan, "MAX_RADIX", 16)
    for r in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16):
        assert radix_plan.radices_for(r, 16) == (r,)
    x = random_complex((5, 9), np.complex64, 2)
    for n in (11, 13, 12, 16, 10 * 9):  # (2..8 run in the other tests' plans)
        got = pk.fft.fft(pk.asarray(x), n=n)  # cropped or zero padded to n
        assert_close(got, np.fft.fft(x.astype(np.complex128), n=n), x, np.complex64, n)


@pytest.mark.parametrize("n", [17])
def test_bluestein_at_a_smooth_length(n):
    m = engine.bluestein_length(n, pk.f32)
    assert m >= 2 * n - 1 and radix_plan.smooth(m) and m < 1 << (2 * n - 2).bit_length()
    x = random_complex((3, n), np.complex64, n)
    assert_close(pk.fft.ifft(pk.asarray(x), norm="forward"),
                 np.fft.ifft(x.astype(np.complex128), norm="forward"), x, np.complex64, n)


@pytest.mark.parametrize("n,cap", [(1000, 64)])
def test_four_step_over_mixed_lengths(monkeypatch, n, cap):
    monkeypatch.setattr(engine, "shared_capacity", lambda real: cap)
    x = random_complex((2, n), np.complex64, n)
    for f, ref in ((pk.fft.fft, np.fft.fft), (pk.fft.ifft, np.fft.ifft)):
        got = f(pk.asarray(x), norm="ortho")
        assert_close(got, ref(x.astype(np.complex128), norm="ortho"), x, np.complex64, n,
                     n ** -0.5)


def test_a_long_power_of_two():
    n = 1 << 16
    x = random_complex((n,), np.complex64, 16)
    assert_close(pk.fft.fft(pk.asarray(x)), np.fft.fft(x.astype(np.complex128)), x,
                 np.complex64, n)


@pytest.mark.parametrize("n,axis,dtype", [
    (200, -1, np.float32),    # 100 pairs: the post-processing in the same launch
    (30, -1, np.float64),
    (15, -1, np.float32),     # odd: the full length, real loads, half the outputs stored
    (12, 0, np.float64),      # an inner axis
])
def test_rfft_irfft_hfft_ihfft(n, axis, dtype):
    shape = [3, 4]
    shape[axis] = n
    x = random_real(tuple(shape), dtype, n)
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    spectrum = pk.fft.rfft(pk.asarray(x), axis=axis)
    assert_close(spectrum, np.fft.rfft(x.astype(np.float64), axis=axis), x, cdt, n, axis=axis)
    assert_close(pk.fft.ihfft(pk.asarray(x), axis=axis),
                 np.fft.ihfft(x.astype(np.float64), axis=axis), x, cdt, n, 1.0 / n, axis=axis)
    half = np.fft.rfft(x.astype(np.float64), axis=axis).astype(cdt)
    assert_close(pk.fft.irfft(pk.asarray(half), n=n, axis=axis),
                 np.fft.irfft(half.astype(np.complex128), n=n, axis=axis), half, cdt, n,
                 2.0 / n, axis=axis)
    assert_close(pk.fft.hfft(pk.asarray(half), n=n, axis=axis),
                 np.fft.hfft(half.astype(np.complex128), n=n, axis=axis), half, cdt, n, 2.0,
                 axis=axis)


@pytest.mark.parametrize("shape,dtype", [((6, 10), np.float32), ((7, 9), np.float64),
                                         ((8, 5), np.float32)])
def test_rfft2_irfft2_odd_and_even_shapes(shape, dtype):
    x = random_real((2,) + shape, dtype, sum(shape))
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    got = pk.fft.rfft2(pk.asarray(x))
    want = np.fft.rfft2(x.astype(np.float64))
    assert_close(got, want, x, cdt, shape[0] * shape[1], axis=None)
    back = pk.fft.irfft2(got, s=shape)
    assert_close(back, np.fft.irfft2(want, s=shape), want, cdt, shape[0] * shape[1],
                 2.0 / (shape[0] * shape[1]), axis=None)
