"""f64 math in user kernels: the prelude functions the decomposition puts in place of the math
calls Vulkan lacks in 64 bits, against numpy over wide ranges and at the special values, on the
device and in the interpreter (the decomposed IR, run as Python)."""

from __future__ import annotations

import numpy as np
import pytest
from prelude_cases import BINARY, UNARY, Case, samples, ulp_errors

import pykern as pk
from pykern import frontend, ir
from pykern.interpret import ArrayArg
from pykern.interpret import run as interpret_run
from pykern.passes import decompose
from pykern.spirv import Target

needs_fp64 = pytest.mark.skipif(not pk.get_device().info.features.fp64,
                                reason="the device has no f64")


def unary_kernel(fn: object):
    def apply(x: pk.f64[:], y: pk.f64[:]):
        i = pk.global_id(0)
        y[i] = fn(x[i])  # type: ignore[operator]
    return apply


def binary_kernel(fn: object):
    def apply(x: pk.f64[:], z: pk.f64[:], y: pk.f64[:]):
        i = pk.global_id(0)
        y[i] = fn(x[i], z[i])  # type: ignore[operator]
    return apply


def interpreted(body, *arrays: np.ndarray) -> None:
    """Runs `body` decomposed for Vulkan in the interpreter: the prelude code itself, in
    Python over numpy (the interpreter alone would compute numpy's own f64 math)."""
    src = frontend.load_source(body)
    kernel = decompose(frontend.translate(src, frontend.signature(body), (64, 1, 1)), Target())
    assert any(isinstance(n, ir.Call) for n in ir.walk(kernel))  # the prelude is what runs
    names = list(frontend.signature(body))
    interpret_run(kernel, (arrays[0].size, 1, 1),
                  {n: ArrayArg.of(a) for n, a in zip(names, arrays)}, {})


def check(case: Case, got: np.ndarray, *args: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        want = case.reference(*args)
    err = ulp_errors(got, want)
    worst = int(np.argmax(err))
    assert err[worst] <= case.ulps, (f"{err[worst]} ULP at {[a[worst] for a in args]}: "
                                     f"{got[worst]!r}, numpy {want[worst]!r}")


@needs_fp64
@pytest.mark.parametrize("name", list(UNARY))
def test_f64_math_on_the_device(name):
    case = UNARY[name]
    x = samples(case)
    y = np.zeros_like(x)
    pk.kernel(unary_kernel(case.function))[x.size](x, y)
    check(case, y, x)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "tan", "atan", "tanh", "erf"])
def test_f64_math_in_the_interpreter(name):
    case = UNARY[name]
    x = samples(case, n=60)
    y = np.zeros_like(x)
    interpreted(unary_kernel(case.function), x, y)
    check(case, y, x)


def two_operands(case: Case, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    a = samples(case._replace(ranges=case.ranges[:1]), 1, n)
    b = samples(case._replace(ranges=case.ranges[1:]), 2, n)
    return a, b


@needs_fp64
@pytest.mark.parametrize("name", list(BINARY))
def test_f64_pow_and_atan2_on_the_device(name):
    case = BINARY[name]
    a, b = two_operands(case)
    y = np.zeros_like(a)
    pk.kernel(binary_kernel(case.function))[a.size](a, b, y)
    check(case, y, a, b)


@needs_fp64
def test_f64_power_operator_and_special_bases():
    @pk.kernel
    def power(x: pk.f64[:], e: pk.f64[:], y: pk.f64[:]):
        i = pk.global_id(0)
        y[i] = x[i] ** e[i]

    x = np.array([0.0, -0.0, -0.0, -2.0, -2.0, -8.0, -np.inf, np.inf, 1.0, np.nan, 3.0, 1e-3])
    e = np.array([-1.0, -1.0, 3.0, 3.0, 2.0, 1 / 3, 0.5, -2.0, np.nan, 0.0, 2.0, 2.0])
    y = np.zeros_like(x)
    power[x.size](x, e, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(y, x ** e)  # signs, infinities, nan; x ** 2 exactly


def test_f64_pow_in_the_interpreter():
    case = BINARY["pow"]
    a, b = two_operands(case, 60)
    y = np.zeros_like(a)
    interpreted(binary_kernel(case.function), a, b, y)
    check(case, y, a, b)


@needs_fp64
def test_f64_math_in_a_users_device_function():
    @pk.func
    def softplus(x):
        return pk.log(1.0 + pk.exp(x))

    @pk.kernel
    def apply(x: pk.f64[:], y: pk.f64[:]):
        i = pk.global_id(0)
        y[i] = softplus(x[i]) + pk.cos(x[i])

    x = np.linspace(-30.0, 30.0, 301)
    y = np.zeros_like(x)
    apply[x.size](x, y)
    np.testing.assert_allclose(y, np.log1p(np.exp(x)) + np.cos(x), rtol=4e-16 * 8, atol=1e-15)


@needs_fp64
def test_f64_copysign_keeps_the_signs_of_zeros_and_nans():
    # the prelude relies on it; on Vulkan it works on the high words (no 64-bit integers)
    @pk.kernel
    def signs(x: pk.f64[:], y: pk.f64[:], out: pk.f64[:]):
        i = pk.global_id(0)
        out[i] = pk.copysign(x[i], y[i])

    x = np.array([np.nan, -np.nan, 0.0, -0.0, 3.0, -np.inf, 1e-310])
    y = np.array([-1.0, 1.0, -0.0, 2.0, -0.0, 1.0, -5.0])
    out = np.zeros_like(x)
    signs[x.size](x, y, out)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(np.copysign(x, y)))
    np.testing.assert_array_equal(np.abs(out), np.abs(x))


@needs_fp64
def test_f64_trigonometry_at_the_hardest_argument():
    # of all f64, x = 6381956970095103 * 2**797 comes closest to a multiple of pi/2 (Muller,
    # Elementary Functions): x - n pi/2 = 4.6871659242546276e-19, with n = 1 mod 4. The
    # reduction must keep 53 bits below its 61 cancelled ones (numpy's value, and this
    # machine's libm's, is 8 ULP off here, so the result is checked against the exact one).
    r = 4.6871659242546276e-19
    x = np.array([6381956970095103.0 * 2.0**797, -6381956970095103.0 * 2.0**797])
    out = np.zeros((3, 2))

    @pk.kernel
    def trig(x: pk.f64[:], out: pk.f64[:, :]):
        i = pk.global_id(0)
        out[0, i] = pk.sin(x[i])
        out[1, i] = pk.cos(x[i])
        out[2, i] = pk.tan(x[i])

    trig[2](x, out)
    np.testing.assert_array_equal(out[0], [1.0, -1.0])  # cos(r) rounds to 1
    assert ulp_errors(out[1], np.array([-r, -r]))[0] <= 1 and out[1, 1] == out[1, 0]
    assert ulp_errors(out[2], np.array([-1 / r, 1 / r])).max() <= 2
