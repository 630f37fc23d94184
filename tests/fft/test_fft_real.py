"""pk.fft.rfft / irfft / hfft / ihfft against numpy.fft within fft_support's bound: even
lengths along the last axis (the half-length path), odd lengths and other axes (the full
complex path), n padding and cropping, norms, dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk

from fft_support import assert_close, factor, random_complex, random_real

NORMS = ["backward", "ortho", "forward"]


@settings(max_examples=12, deadline=None)
@given(length=st.sampled_from([8, 16, 5]), n=st.sampled_from([None, 8, 16, 7, 12]),
       axis=st.sampled_from([-1, 0]), norm=st.sampled_from(NORMS),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_rfft_and_ihfft(length, n, axis, norm, dtype, seed):
    shape = [3, length] if axis == -1 else [length, 3]
    x = random_real(tuple(shape), dtype, seed)
    size = length if n is None else n
    cdtype = np.complex64 if dtype == np.float32 else np.complex128
    got = pk.fft.rfft(pk.asarray(x), n=n, axis=axis, norm=norm)
    assert got.dtype == (pk.c64 if dtype == np.float32 else pk.c128)
    want = np.fft.rfft(x.astype(np.float64), n=n, axis=axis, norm=norm)
    assert_close(got, want, x, cdtype, size, factor(norm, size, False), axis=axis)
    got = pk.fft.ihfft(pk.asarray(x), n=n, axis=axis, norm=norm)
    want = np.fft.ihfft(x.astype(np.float64), n=n, axis=axis, norm=norm)
    assert_close(got, want, x, cdtype, size, factor(norm, size, True), axis=axis)


@settings(max_examples=12, deadline=None)
@given(m=st.sampled_from([5, 9, 3]), n=st.sampled_from([None, 8, 16, 7, 5]),
       axis=st.sampled_from([-1, 0]), norm=st.sampled_from(NORMS),
       dtype=st.sampled_from([np.complex64, np.complex128]), seed=st.integers(0, 2**16))
def test_irfft_and_hfft(m, n, axis, norm, dtype, seed):
    shape = [2, m] if axis == -1 else [m, 2]
    x = random_complex(tuple(shape), dtype, seed)
    size = 2 * (m - 1) if n is None else n
    got = pk.fft.irfft(pk.asarray(x), n=n, axis=axis, norm=norm)
    assert got.dtype == (pk.f32 if dtype == np.complex64 else pk.f64)
    want = np.fft.irfft(x.astype(np.complex128), n=n, axis=axis, norm=norm)
    # the half spectrum stands for a full one of about twice its norm
    assert_close(got, want, 2 * x, dtype, size, factor(norm, size, True), axis=axis)
    got = pk.fft.hfft(pk.asarray(x), n=n, axis=axis, norm=norm)
    want = np.fft.hfft(x.astype(np.complex128), n=n, axis=axis, norm=norm)
    assert_close(got, want, 2 * x, dtype, size, factor(norm, size, False), axis=axis)


@pytest.mark.parametrize("n", [8, 7])
def test_irfft_inverts_rfft(n):
    x = random_real((4, n), np.float64, n)
    back = pk.fft.irfft(pk.fft.rfft(pk.asarray(x)), n=n)
    assert np.max(np.abs(back.numpy() - x)) < 1e-13


def test_rfft_of_complex_input_is_refused():
    with pytest.raises(TypeError, match="rfft: x must be real"):
        pk.fft.rfft(pk.asarray(np.ones(4, np.complex64)))
