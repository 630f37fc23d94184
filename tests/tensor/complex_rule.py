"""pykern's rules for the complex reciprocal and negative integer powers, computed here with
IEEE arithmetic on the parts (numpy float32 for c64, float64 for c128), so that the tests hold
pykern to its rule (signs of zero included) whatever numpy's own complex functions do in the
installed version.

The rules (pykern/tensor/complex/complex_funcs.py `z_reciprocal`, complex_elementwise.py
`_power_by_scalar`, passes/complex_functions.py `complex_divide` and `_mul`):

- reciprocal (and z ** -1): conj(z) / |z|**2 by Smith's scaling: with r = y/x, d = x + y·r,
  1/z = 1/d - i·r/d where |y| <= |x|, else with r = x/y, d = x·r + y, 1/z = r/d - i/d;
  so 1 / (x + 0j) has imaginary part -0.0 for x > 0, and 1 / 0 is nan + nan j;
- z ** n, n > 1: repeated squaring, square(x + iy) = (x·x - y·y) + i·(2x)·y, products
  (a + ib)(c + id) = (ac - bd) + i(ad + bc), the odd bits multiplied in from the lowest;
- z ** -n, n > 1: 1 / z**n by Smith's division (with 0 / 0 parts where z**n is 0), then
  nan + nan j where z == 0.
"""

from __future__ import annotations

import numpy as np

Parts = tuple[np.ndarray, np.ndarray]


def parts(z: np.ndarray) -> Parts:
    """The real and imaginary parts of a complex array, as arrays of its part dtype."""
    return np.ascontiguousarray(z.real), np.ascontiguousarray(z.imag)


def reciprocal(x: np.ndarray, y: np.ndarray) -> Parts:
    one = x.dtype.type(1.0)
    with np.errstate(all="ignore"):
        r1 = y / x
        d1 = x + y * r1
        r2 = x / y
        d2 = x * r2 + y
        small_imag = np.abs(y) <= np.abs(x)  # False where a part is nan, as in the kernel
        return (np.where(small_imag, one / d1, r2 / d2),
                np.where(small_imag, -r1 / d1, -one / d2))


def square(x: np.ndarray, y: np.ndarray) -> Parts:
    with np.errstate(all="ignore"):
        return x * x - y * y, x.dtype.type(2.0) * x * y


def multiply(a: Parts, b: Parts) -> Parts:
    (x, y), (u, v) = a, b
    with np.errstate(all="ignore"):
        return x * u - y * v, x * v + y * u


def divide(a: Parts, b: Parts) -> Parts:
    (xr, xi), (yr, yi) = a, b
    one = yr.dtype.type(1.0)
    with np.errstate(all="ignore"):
        ar, ai = np.abs(yr), np.abs(yi)
        rat1 = yi / yr
        scl1 = one / (yr + yi * rat1)
        rat2 = yr / yi
        scl2 = one / (yi + yr * rat2)
        zero = (ar == 0) & (ai == 0)
        first = ar >= ai
        re = np.where(first, np.where(zero, xr / ar, (xr + xi * rat1) * scl1),
                      (xr * rat2 + xi) * scl2)
        im = np.where(first, np.where(zero, xi / ar, (xi - xr * rat1) * scl1),
                      (xi * rat2 - xr) * scl2)
    return re, im


def power(z: Parts, n: int) -> Parts:
    """z ** n for n >= 1, by repeated squaring."""
    result, base = None, z
    while n:
        if n & 1:
            result = base if result is None else multiply(result, base)
        n >>= 1
        if n:
            base = square(*base)
    assert result is not None
    return result


def negative_power(z: Parts, n: int) -> Parts:
    """z ** -n for n >= 1."""
    if n == 1:
        return reciprocal(*z)
    x, y = z
    ones = (np.ones_like(x), np.zeros_like(x))
    re, im = divide(ones, power(z, n))
    at_zero = (x == 0) & (y == 0)
    return np.where(at_zero, np.nan, re).astype(x.dtype), np.where(at_zero, np.nan, im).astype(
        x.dtype)


def assert_parts_follow(got: np.ndarray, want: Parts, rtol: float, what: str) -> None:
    """Each part of `got` is nan where the rule's is, else within `rtol` of it with the same
    sign (of zero too)."""
    for name, g, w in zip(("real", "imag"), parts(got), want):
        nan = np.isnan(w)
        np.testing.assert_array_equal(np.isnan(g), nan, err_msg=f"{what}: nan {name} parts")
        np.testing.assert_allclose(g[~nan], w[~nan], rtol=rtol, atol=0,
                                   err_msg=f"{what}: {name} parts")
        np.testing.assert_array_equal(np.signbit(g[~nan]), np.signbit(w[~nan]),
                                      err_msg=f"{what}: signs of the {name} parts")
