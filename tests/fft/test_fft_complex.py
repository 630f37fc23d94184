"""pk.fft.fft / ifft against numpy.fft (float64 reference) within fft_support's bound: sizes
that are powers of two and composites (mixed radix), the multi-pass plans (four-step,
Bluestein), batches, axes, n, norms, dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.fft import engine

from fft_support import assert_close, factor, random_complex, random_real

# powers of two and composites (one launch each, mixed radix)
SIZES = [1, 4, 16, 3, 5, 12]
DTYPES = [np.complex64, np.complex128]
NORMS = ["backward", "ortho", "forward"]


@settings(max_examples=12, deadline=None)
@given(n=st.sampled_from(SIZES), batch=st.sampled_from([(), (3,), (2, 2)]),
       dtype=st.sampled_from(DTYPES), norm=st.sampled_from(NORMS), inverse=st.booleans(),
       seed=st.integers(0, 2**16))
def test_fft_matches_numpy(n, batch, dtype, norm, inverse, seed):
    x = random_complex(batch + (n,), dtype, seed)
    f, ref = (pk.fft.ifft, np.fft.ifft) if inverse else (pk.fft.fft, np.fft.fft)
    got = f(pk.asarray(x), norm=norm)
    assert got.dtype == (pk.c64 if dtype is np.complex64 else pk.c128)
    assert_close(got, ref(x.astype(np.complex128), norm=norm), x, dtype, n,
                 factor(norm, n, inverse))


@settings(max_examples=10, deadline=None)
@given(length=st.sampled_from([4, 5, 8]), n=st.sampled_from([3, 4, 8, 16]),
       axis=st.sampled_from([0, 1, -1]), seed=st.integers(0, 2**16))
def test_fft_n_pads_or_crops_along_any_axis(length, n, axis, seed):
    shape = [3, 4, 2]
    shape[axis] = length
    x = random_complex(tuple(shape), np.complex64, seed)
    got = pk.fft.fft(pk.asarray(x), n=n, axis=axis)
    want = np.fft.fft(x.astype(np.complex128), n=n, axis=axis)
    assert_close(got, want, x, np.complex64, n, axis=axis)


@pytest.mark.parametrize("dtype,out", [(np.float32, pk.c64), (np.float64, pk.c128),
                                       (np.int32, pk.c64)])
def test_real_input_is_promoted(dtype, out):
    x = (random_real((8,), np.float64, 1) * 4).astype(dtype)
    got = pk.fft.fft(pk.asarray(x))
    assert got.dtype == out
    assert_close(got, np.fft.fft(x.astype(np.float64)), x, np.complex64, 8)


@pytest.mark.parametrize("n,dtype,shape,axis", [
    (1, np.complex64, (3, 1), -1), (2, np.complex64, (3, 2), -1),
    (8, np.complex64, (3, 8), -1), (32, np.complex64, (3, 32), -1),
    (128, np.complex64, (3, 128), -1), (512, np.complex64, (3, 512), -1),
    (4096, np.complex64, (3, 4096), -1),
    (4, np.complex64, (4, 5), 0), (64, np.complex64, (64, 5), 0),
    (1024, np.complex64, (1024, 5), 0),
    (16, np.complex128, (2, 16), -1), (256, np.complex128, (2, 256), -1),
    (2048, np.complex128, (2, 2048), -1)])
def test_every_stage_plan_of_the_shared_kernel(n, dtype, shape, axis):
    """Powers of two up to 4096 run one shared-memory launch of radix-8, 4 and 2 stages (one to
    four of them): along rows (each invocation's values a stride apart in one transform), along
    columns (consecutive invocations across adjacent transforms), c64 and c128, forward and
    inverse."""
    x = random_complex(shape, dtype, n + len(shape))
    for f, ref in ((pk.fft.fft, np.fft.fft), (pk.fft.ifft, np.fft.ifft)):
        got = f(pk.asarray(x), axis=axis)
        assert_close(got, ref(x.astype(np.complex128), axis=axis), x, dtype, n,
                     1.0 if f is pk.fft.fft else 1.0 / n, axis=axis)


@pytest.mark.parametrize("shape,cap", [((2, 96), 8), ((1, 512), 16), ((3, 512), 256)])
def test_multi_pass_plans(monkeypatch, shape, cap):
    """With a small shared-memory capacity: 512 (cap 256) runs the two-pass four-step (columns
    of 16, 16 per workgroup, loaded and stored across them; then rows of 32, 16 per workgroup,
    stored across them into the transposed output); 512 (cap 16) a four-step whose rows
    recurse (columns of 2 each time, down to rows of 8) straight into the output; 96 (cap 8,
    smooth: 2^5·3) a four-step down to rows of 3, for two rows through a copy."""
    monkeypatch.setattr(engine, "shared_capacity", lambda real: cap)
    n = shape[-1]
    x = random_complex(shape, np.complex64, n)
    for f, ref in ((pk.fft.fft, np.fft.fft), (pk.fft.ifft, np.fft.ifft)):
        got = f(pk.asarray(x), norm="ortho")
        assert_close(got, ref(x.astype(np.complex128), norm="ortho"), x, np.complex64, n,
                     n ** -0.5)


def test_roundtrip_and_input_intact():
    x = random_complex((4, 12), np.complex128, 3)
    t = pk.asarray(x)
    back = pk.fft.ifft(pk.fft.fft(t))
    assert np.max(np.abs(back.numpy() - x)) < 1e-13
    assert np.array_equal(t.numpy(), x)


def test_non_contiguous_input():
    x = random_complex((8, 5), np.complex64, 4)
    t = pk.asarray(x).T  # a transposed view
    got = pk.fft.fft(t, axis=0)
    assert_close(got, np.fft.fft(x.T.astype(np.complex128), axis=0), x.T, np.complex64, 5, axis=0)
