"""The array API namespace's 2024.12 additions (diff, nextafter, reciprocal, take_along_axis,
count_nonzero, cumulative_prod, scalar operands, the inspection API, fft's two-dimensional
transforms) against array-api-strict at 2024.12 and numpy, and the 2023.12 namespace beside
it."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

xs = pytest.importorskip("array_api_strict")
xp = pk.array_api

rng = np.random.default_rng(2024)
F = rng.uniform(-3, 3, (3, 5)).astype(np.float32)
D = rng.uniform(-3, 3, (4, 3)).astype(np.float64)
I = rng.integers(-5, 6, (3, 5)).astype(np.int32)
B = rng.integers(0, 2, (3, 5)).astype(bool)


@pytest.fixture(autouse=True, scope="module")
def strict_2024_12():
    xs.set_array_api_strict_flags(api_version="2024.12")
    yield
    xs.reset_array_api_strict_flags()


def check(ours, theirs, exact=False):
    a, b = ours.numpy(), np.from_dlpack(theirs)
    if a.dtype == np.int32 and b.dtype == np.int64:  # pykern's default integer dtype is int32
        b = b.astype(np.int32)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


CASES = [
    ("diff", (F,), {}), ("diff", (I,), {"axis": 0}), ("diff", (F,), {"n": 3}),
    ("diff", (D,), {"n": 0}),
    ("cumulative_prod", (I,), {"axis": 1}), ("cumulative_prod", (F[0],), {}),
    ("cumulative_prod", (D,), {"axis": 0, "include_initial": True}),
    ("count_nonzero", (I,), {}), ("count_nonzero", (B,), {"axis": 1, "keepdims": True}),
    ("reciprocal", (F,), {}), ("reciprocal", (D,), {}),
]


@pytest.mark.parametrize("name, args, kwargs", CASES)
def test_new_functions_match_array_api_strict(name, args, kwargs):
    ours = getattr(xp, name)(*[xp.asarray(a) for a in args], **kwargs)
    theirs = getattr(xs, name)(*[xs.asarray(a) for a in args], **kwargs)
    check(ours, theirs, exact=name not in ("reciprocal", "cumulative_prod"))


def test_diff_with_prepend_and_append():
    pre, app = F[:, :1] * 2, F[:, :2] - 1
    ours = xp.diff(xp.asarray(F), prepend=xp.asarray(pre), append=xp.asarray(app), n=2)
    check(ours, xs.diff(xs.asarray(F), prepend=xs.asarray(pre), append=xs.asarray(app), n=2))


def test_take_along_axis_with_argsort_indices():
    idx = np.argsort(F, axis=1)
    ours = xp.take_along_axis(xp.asarray(F), xp.asarray(idx), axis=1)
    check(ours, xs.take_along_axis(xs.asarray(F), xs.asarray(idx), axis=1), exact=True)
    check(xp.take_along_axis(xp.asarray(F), xp.asarray(idx[:1]), axis=-1),
          xs.take_along_axis(xs.asarray(F), xs.asarray(idx[:1]), axis=-1), exact=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter_matches_numpy_bit_for_bit(dtype):
    x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1.0, 3.0, 1e-30,
                  np.finfo(dtype).max, 0.0, -0.0, 2.5], dtype)
    y = np.array([1.0, -1.0, 2.0, 0.0, 0.0, 0.0, 1.0, np.nan, 3.0, -1.0, np.inf, -0.0, 0.0,
                  -np.inf], dtype)
    got = xp.nextafter(xp.asarray(x), xp.asarray(y)).numpy()
    with np.errstate(over="ignore"):
        ref = np.nextafter(x, y)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}")[~np.isnan(ref)],
                                  ref.view(f"u{ref.itemsize}")[~np.isnan(ref)])
    assert np.isnan(got[np.isnan(ref)]).all()


def test_floor_divide_of_infinities_follows_the_standard():
    """floor(x1 / x2) where an operand is infinite, the standard's preferred values (Python's
    // gives nan or -1.0 there); elsewhere Python's //."""
    a = np.array([np.inf, np.inf, -np.inf, -np.inf, 1.0, -1.0, 1.0, -1.0, 7.0, -7.0])
    b = np.array([2.0, -2.0, 2.0, -2.0, np.inf, np.inf, -np.inf, -np.inf, 2.0, 2.0])
    got = (xp.asarray(a) // xp.asarray(b)).numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(np.isinf(a) | np.isinf(b), np.floor(a / b), a // b)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def test_scalar_operands_of_elementwise_functions():
    f, i = xp.asarray(F), xp.asarray(I)
    sf, si = xs.asarray(F), xs.asarray(I)
    for name, ours, theirs in [
            ("add", xp.add(f, 2.5), xs.add(sf, 2.5)), ("add", xp.add(1, i), xs.add(1, si)),
            ("atan2", xp.atan2(f, 1.0), xs.atan2(sf, 1.0)),
            ("maximum", xp.maximum(f, 0.5), xs.maximum(sf, 0.5)),
            ("where", xp.where(f > 0, f, 0.0), xs.where(sf > 0, sf, 0.0)),
            ("nextafter", xp.nextafter(f, 10.0), xs.nextafter(sf, 10.0)),
            ("copysign", xp.copysign(2.0, f), xs.copysign(2.0, sf)),
            ("clip", xp.clip(i, 0, 3), xs.clip(si, 0, 3))]:
        check(ours, theirs, exact=name not in ("atan2",))
    assert xp.result_type(xp.float32, 1.0) == xp.float32


def test_fft_two_dimensional_transforms_match_numpy():
    x = rng.standard_normal((2, 4, 6))
    t = pk.asarray(x)
    for name in ("fft2", "ifft2", "rfft2"):
        np.testing.assert_allclose(getattr(pk.fft, name)(t).numpy(),
                                   getattr(np.fft, name)(x), atol=1e-4)
    spectrum = np.fft.rfft2(x, axes=(0, 2))
    np.testing.assert_allclose(pk.fft.irfft2(pk.asarray(spectrum), None, (0, 2)).numpy(),
                               np.fft.irfft2(spectrum, None, (0, 2)), atol=1e-4)
    assert xp.fft.fftfreq(4, dtype=xp.float64).dtype == pk.f64


def test_namespaces_by_version():
    t = pk.zeros(2)
    old = t.__array_namespace__(api_version="2023.12")
    assert t.__array_namespace__() is xp and xp.__array_api_version__ == "2024.12"
    assert old.__array_api_version__ == "2023.12" and not hasattr(old, "diff")
    assert t.__array_namespace__(api_version="2022.12") is old
    with pytest.raises(ValueError, match="2023.12, 2024.12"):
        t.__array_namespace__(api_version="2025.12")
    info = xp.__array_namespace_info__()
    assert info.devices()[0] is info.default_device() is pk.get_device()
    assert info.default_dtypes(device=pk.get_device())["indexing"] == xp.int64
