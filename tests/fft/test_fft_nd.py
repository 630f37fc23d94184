"""pk.fft.fftn / ifftn / rfftn / irfftn against numpy.fft: `s` and `axes` (defaults, subsets,
-1 sizes, negative axes), norms."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

from fft_support import assert_close, random_complex, random_real

CASES = [  # (s, axes, norm)
    (None, None, "backward"),
    ((4, 8), None, "ortho"),
    (None, (0, 2), "forward"),
    ((5, -1), (-1, 0), "backward"),
    ((16,), (1,), "ortho"),
]


@pytest.mark.parametrize("s,axes,norm", CASES)
def test_fftn_and_ifftn(s, axes, norm):
    x = random_complex((3, 4, 8), np.complex64, 7)
    for f, ref in ((pk.fft.fftn, np.fft.fftn), (pk.fft.ifftn, np.fft.ifftn)):
        got = f(pk.asarray(x), s=s, axes=axes, norm=norm)
        want = ref(x.astype(np.complex128), s=_numpy_s(s, axes, x.shape),
                   axes=_numpy_axes(s, axes, x.ndim), norm=norm)
        assert_close(got, want, x, np.complex64, 64, _factor(want, axes, s, f, norm),
                     axis=None)


@pytest.mark.parametrize("s,axes", [(None, None), ((4, 6), (0, 2)), ((8,), None)])
def test_rfftn_and_irfftn(s, axes):
    x = random_real((3, 4, 8), np.float64, 8)
    got = pk.fft.rfftn(pk.asarray(x), s=s, axes=axes)
    want = np.fft.rfftn(x, s=s, axes=axes if axes is not None or s is None else
                        list(range(3 - len(s), 3)))
    assert_close(got, want, x, np.complex128, 64, axis=None)
    back = pk.fft.irfftn(got, s=s if s is not None else None, axes=axes)
    want_back = np.fft.irfftn(want, s=s, axes=axes if axes is not None or s is None else
                              list(range(3 - len(s), 3)))
    assert_close(back, want_back, want, np.complex128, 64, 1 / 96, axis=None)


def test_fft2_style_over_leading_axes_of_a_batch():
    x = random_complex((8, 4, 3), np.complex128, 9)
    got = pk.fft.fftn(pk.asarray(x), axes=(0, 1))
    assert_close(got, np.fft.fftn(x, axes=(0, 1)), x, np.complex128, 32, axis=None)


def _numpy_axes(s, axes, ndim):
    """The array API's default axes, spelled out for numpy (which deprecates leaving them)."""
    if axes is not None or s is None:
        return axes
    return list(range(ndim - len(s), ndim))


def _numpy_s(s, axes, shape):
    """numpy's own `s` for the array API's (-1 keeps the length)."""
    if s is None:
        return None
    ax = axes if axes is not None else range(len(shape) - len(s), len(shape))
    return [shape[a] if v == -1 else v for v, a in zip(s, ax)]


def _factor(want, axes, s, f, norm):
    """The norm's factor of the whole n-D transform: 1 unscaled, 1/N scaled (N the product of
    the transformed lengths); ortho's 1/√N is bounded by 1."""
    if norm == "ortho":
        return 1.0
    if (f is pk.fft.fftn) == (norm == "backward"):
        return 1.0
    ax = range(want.ndim) if axes is None and s is None else (
        axes if axes is not None else range(want.ndim - len(s), want.ndim))
    return 1.0 / float(np.prod([want.shape[a] for a in ax]))
