"""Complex math in kernels against numpy: every function over hypothesis-drawn values whose
parts include +-0, +-inf, nan, huge and tiny numbers; the special values (C99 Annex G, as
numpy gives them) exactly, the rest within these bounds, relative to |result|:

- host and interpreter, c64 and c128: 64 units of the part type's epsilon (measured: at most
  30, most functions below 3; z**w grows with |w log z|, so 64 (1 + |w log z|) there), plus
  the smallest normal number absolutely (results that underflow);
- lavapipe c64: 5e-4 relative plus 1e-6 absolute: its f32 asin/acos/atan and sinh are only
  that accurate (Vulkan promises 4096 ULP for the inverse functions, exp formulas for sinh),
  and its f32 sin/cos are only promised on [-pi, pi]: there, finite parts beyond 20 in
  magnitude are not compared for the functions built on them;
- z**w: only for finite z (C99 leaves cpow's special values open; numpy's come from libm);
- lavapipe c128 (pykern's f64 prelude): as the host.

numpy's complex log1p is log|1 + z| (inaccurate near 0): the reference for it is
0.5 log1p(2x + x^2 + y^2) + i atan2(y, 1 + x) in float64. Products may differ from numpy's
where its build fuses them into FMAs: square's results past overflow are only checked to be
non-finite."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk

NAMES = ("exp", "log", "log2", "log10", "sqrt", "log1p", "expm1", "sin", "cos", "tan", "sinh",
         "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "square", "abs",
         "angle", "reciprocal", "power")
# built on the device's sin, cos, exp of the real part (see the module docstring)
PERIODIC = {"exp", "expm1", "sin", "cos", "tan", "sinh", "cosh", "tanh", "power"}
C128_NAMES = ("exp", "log", "sqrt", "atanh")
EXPONENT = 0.5 + 0.25j


def every_function(x: pk.Array, y: pk.Array):
    i = pk.global_id(0)
    z = x[i]
    y[i, 0] = pk.exp(z)
    y[i, 1] = pk.log(z)
    y[i, 2] = pk.log2(z)
    y[i, 3] = pk.log10(z)
    y[i, 4] = pk.sqrt(z)
    y[i, 5] = pk.log1p(z)
    y[i, 6] = pk.expm1(z)
    y[i, 7] = pk.sin(z)
    y[i, 8] = pk.cos(z)
    y[i, 9] = pk.tan(z)
    y[i, 10] = pk.sinh(z)
    y[i, 11] = pk.cosh(z)
    y[i, 12] = pk.tanh(z)
    y[i, 13] = pk.asin(z)
    y[i, 14] = pk.acos(z)
    y[i, 15] = pk.atan(z)
    y[i, 16] = pk.asinh(z)
    y[i, 17] = pk.acosh(z)
    y[i, 18] = pk.atanh(z)
    y[i, 19] = pk.square(z)
    y[i, 20] = abs(z)
    y[i, 21] = pk.angle(z)
    y[i, 22] = 1 / z
    y[i, 23] = z ** EXPONENT


def some_functions(x: pk.Array, y: pk.Array):
    """The c128 selection (compiling every f64 function costs more than it tells)."""
    i = pk.global_id(0)
    z = x[i]
    y[i, 0] = pk.exp(z)
    y[i, 1] = pk.log(z)
    y[i, 2] = pk.sqrt(z)
    y[i, 3] = pk.atanh(z)


def numpy_reference(name: str, z: np.ndarray) -> np.ndarray:
    z = z.astype(np.complex128)
    if name == "log1p":
        x, y = z.real, z.imag
        with np.errstate(all="ignore"):
            accurate = 0.5 * np.log1p(x * (2 + x) + y * y) + 1j * np.arctan2(y, 1 + x)
            return np.where(np.isfinite(z) & (np.abs(z) < 0.5), accurate, np.log1p(z))
    if name == "expm1":  # the array API's special values: exp's minus one (numpy differs)
        with np.errstate(all="ignore"):
            ref = np.where(np.isfinite(z), np.expm1(z) + 0.0, np.exp(z) - 1)
            # on the real axis: the real expm1 and the zero imaginary part kept
            axis = np.isfinite(z) & (z.imag == 0)
            ref.real[axis] = np.expm1(z.real[axis]) + 0.0
            ref.imag[axis] = z.imag[axis]
        return ref
    functions = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
                 "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
                 "reciprocal": lambda v: 1 / v, "power": lambda v: v ** EXPONENT}
    return functions.get(name, getattr(np, name, None))(z)


def bounds(dtype) -> tuple[float, float]:
    """(relative, absolute) error allowed (see the module docstring)."""
    if pk.get_device().info.kind != "host" and dtype == np.complex64:
        return 5e-4, 1e-6
    # results below the smallest normal number have an absolute error of it at worst
    return 64 * float(np.finfo(dtype).eps), float(np.finfo(dtype).tiny)


def check(name: str, z: np.ndarray, ours: np.ndarray, dtype) -> None:
    if name == "power":  # C99 leaves cpow's special values open: finite bases only
        z, ours = z[np.isfinite(z)], ours[np.isfinite(z)]
    if name == "reciprocal" and pk.get_device().info.kind != "host":
        # 1 / 0j is inf + nan j from 0 / 0 in the imaginary part, which lavapipe folds to 0
        # (its literal-zero folding: TESTING.md)
        z, ours = z[z != 0], ours[z != 0]
    ref = numpy_reference(name, z)
    ref = ref.astype(np.complex128) if np.iscomplexobj(ref) else ref + 0j
    ours = ours.astype(np.complex128)
    for part in (np.real, np.imag):
        r, o = part(ref), part(ours)
        assert np.array_equal(np.isnan(o), np.isnan(r)) or name == "square", \
            (name, "nan", z[np.isnan(o) != np.isnan(r)])
        inf = np.isinf(r)
        assert np.array_equal(o[inf], r[inf]) or name == "square", (name, "inf", z[inf])
    finite = np.isfinite(ref) & (np.abs(ref) < np.finfo(dtype).max / 16)
    if name in PERIODIC and bounds(dtype)[1] > 1e-30:  # lavapipe's f32 sin/cos: [-pi, pi]
        finite &= (np.abs(z.real) < 20) & (np.abs(z.imag) < 20)
    rtol, atol = bounds(dtype)
    if name == "power":
        with np.errstate(all="ignore"):
            rtol = rtol * (1 + np.abs(EXPONENT * np.log(z.astype(np.complex128))))[finite]
    error = np.abs(ours[finite] - ref[finite])
    allowed = rtol * np.abs(ref[finite]) + atol
    bad = error > allowed
    assert not bad.any(), (name, z[finite][bad], ours[finite][bad], ref[finite][bad])


SPECIAL = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 1e-30, -3e-25,
                           2e20, -1e30])


def parts(dtype) -> st.SearchStrategy[float]:
    width = 32 if dtype == np.complex64 else 64
    # no subnormal parts: Vulkan devices may flush them to zero (lavapipe's f32 does)
    return st.one_of(SPECIAL, st.floats(-4.0, 4.0, width=width, allow_subnormal=False),
                     st.floats(width=width, allow_nan=False, allow_infinity=False,
                               allow_subnormal=False))


def values(dtype) -> st.SearchStrategy[np.ndarray]:
    numbers = st.builds(complex, parts(dtype), parts(dtype))
    return st.lists(numbers, min_size=1, max_size=32).map(lambda v: np.array(v, dtype))


def run(kernel, z: np.ndarray, count: int, backend: str) -> np.ndarray:
    out = np.zeros((z.size, count), z.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pk.kernel(kernel, interpret=backend == "interpreter")[z.size](z, out)
    return out


@settings(max_examples=15, deadline=None)
@given(values(np.complex64))
def test_c64_functions_match_numpy(z):
    out = run(every_function, z, len(NAMES), "device")
    for k, name in enumerate(NAMES):
        check(name, z, out[:, k], np.complex64)


@settings(max_examples=6, deadline=None)
@given(values(np.complex128))
def test_c128_functions_match_numpy(z):
    out = run(some_functions, z, len(C128_NAMES), "device")
    for k, name in enumerate(C128_NAMES):
        check(name, z, out[:, k], np.complex128)


def test_special_values_in_the_interpreter():
    grid = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan]
    z = np.array([complex(a, b) for a in grid for b in grid], np.complex64)
    out = run(every_function, z, len(NAMES), "interpreter")
    for k, name in enumerate(NAMES):
        check(name, z, out[:, k], np.complex64)


def integer_powers(x: pk.c64[:], out: pk.c64[:, :]):
    i = pk.global_id(0)
    z = x[i]
    out[i, 0] = z ** 0
    out[i, 1] = z ** 1
    out[i, 2] = z ** 3
    out[i, 3] = z ** 7
    out[i, 4] = z ** -2
    out[i, 5] = z ** 0.5
    out[i, 6] = z ** (1 + 1j)


@pytest.mark.parametrize("backend", ("device", "interpreter"))
def test_integer_powers_are_numpy_products(backend):
    x = np.array([1 + 2j, -0.5 + 0.25j, 3j, 0j, -1.5], np.complex64)
    out = np.zeros((5, 7), np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pk.kernel(integer_powers, interpret=backend == "interpreter")[5](x, out)
        expected = [x ** 0, x, x ** 3, x ** 7, x ** -2, x ** 0.5,
                    x ** np.complex64(1 + 1j)]
    eps = float(np.finfo(np.float32).eps)
    for k, e in enumerate(expected):
        finite = np.isfinite(e)
        assert np.array_equal(np.isnan(out[:, k]), np.isnan(e)), k
        np.testing.assert_allclose(out[finite, k], e[finite], rtol=16 * eps, atol=1e-30,
                                   err_msg=f"column {k}")


def divide(x: pk.c128[:], y: pk.c128[:], out: pk.c128[:]):
    i = pk.global_id(0)
    out[i] = x[i] / y[i]


def test_division_scales_huge_and_tiny_parts():
    x = np.array([1e300 + 1e300j, 1e-300 + 1e-300j, 1 + 1j, 3 + 4j, 1 + 0j])
    y = np.array([1e300 - 1e300j, 1e-300 - 2e-300j, 1e-310 + 1e-310j, 0j, np.inf + 0j])
    out = np.zeros(5, np.complex128)
    pk.kernel(divide)[5](x, y, out)
    with np.errstate(all="ignore"):
        expected = x / y  # numpy's Smith division: no overflow in the naive |y|^2
    np.testing.assert_allclose(out[:3], expected[:3], rtol=1e-14)
    assert np.isinf(out[3].real) and np.isinf(out[3].imag) == np.isinf(expected[3].imag)
    assert out[4] == 0
