"""Kernel math that promises numpy's results: f32 sin, cos, tan and tanh within a few ULP of the
correctly rounded value over the whole f32 range (huge arguments, subnormals, signed zeros,
inf and NaN), f16 through them, and numpy's NaN rule for min, max and pk.clamp on both
backends. References are numpy's float64 functions of the f32 inputs."""

import math

import numpy as np
import pytest

import pykern as pk

rng = np.random.default_rng(2024)

# the closest an f32 comes to a multiple of pi/2 (about 1.6e-9 away)
WORST_CASE = 16367173 * 2.0**72
EDGES = np.array([
    0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38, 2.0**-12, 2.0**-13, 1e-8, -1e-8,
    1e-5, -1e-5, 0.78539813, 0.7853982, 0.7853983, 1.0, 1.5707963, 1.5707964, 3.1415927, -3.1415927,
    4.712389, 6.2831855, 100.0, 2.0**24, 9.9e7, -9.9e7, 1e10, WORST_CASE, -WORST_CASE, 1e30,
    3.4028235e38, -3.4028235e38, 0.999, 1.001, 9.0, 44.0, 89.0,
], np.float32)
SPECIALS = np.array([np.inf, -np.inf, np.nan], np.float32)


def whole_range(n: int) -> np.ndarray:
    """Random f32 bit patterns: every finite exponent, both signs, subnormals included."""
    bits = rng.integers(0, 0x7F800000, n, dtype=np.int64).astype(np.uint32)
    bits[::2] |= np.uint32(0x80000000)
    return np.concatenate([bits.view(np.float32), EDGES])


def ulps(got: np.ndarray, x: np.ndarray, ref) -> np.ndarray:
    """|got - exact| in units of the spacing of f32 at the correctly rounded result."""
    exact = ref(x.astype(np.float64))
    spacing = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


@pk.kernel
def trig(x: pk.f32[:], out: pk.f32[:, :]):
    i = pk.global_id(0)
    out[i, 0] = pk.sin(x[i])
    out[i, 1] = math.cos(x[i])
    out[i, 2] = pk.tan(x[i])
    out[i, 3] = pk.tanh(x[i])


# sin and cos within about one ULP; tan is sin/cos (two roundings more, and the device's
# division); tanh's far branch inherits part of the device's exp error
BOUNDS = {"sin": (np.sin, 1.5), "cos": (np.cos, 1.5), "tan": (np.tan, 5.0),
          "tanh": (np.tanh, 3.0)}


def run_trig(x: np.ndarray, kernel=trig) -> dict[str, np.ndarray]:
    out = np.zeros((x.size, 4), np.float32)
    kernel[x.size](x, out)
    return {name: out[:, j] for j, name in enumerate(BOUNDS)}


def test_sin_cos_tan_tanh_within_ulps_over_the_whole_range():
    x = np.concatenate([whole_range(1 << 17), rng.uniform(-10, 10, 1 << 15).astype(np.float32)])
    got = run_trig(x)
    for name, (ref, bound) in BOUNDS.items():
        err = ulps(got[name], x, ref)
        worst = int(np.argmax(err))
        assert err[worst] <= bound, (name, float(x[worst]), float(got[name][worst]),
                                     err[worst])


def test_huge_and_tiny_arguments_the_builtins_got_wrong():
    x = np.array([9.9e7, 1e-5, 1e-8, WORST_CASE], np.float32)
    got = run_trig(x)
    x64 = x.astype(np.float64)
    # GLSL's: sin(9.9e7) 0.0 (NVIDIA) or 0.74183 (lavapipe) for numpy's 0.74553; tanh(1e-5)
    # 1.00136e-05 and tanh(1e-8) 2.98e-08 on lavapipe; sin(1e-8) 0.0 on NVIDIA
    for name in BOUNDS:
        np.testing.assert_allclose(got[name], BOUNDS[name][0](x64), rtol=3e-7, err_msg=name)


def test_special_values_and_signed_zeros():
    tiny = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, -2.0**-13], np.float32)
    x = np.concatenate([tiny, SPECIALS])
    got = run_trig(x)
    n = tiny.size
    for name in ("sin", "tan", "tanh"):  # x itself: the sign of zero, subnormals unflushed
        np.testing.assert_array_equal(got[name][:n].view(np.uint32), tiny.view(np.uint32),
                                      err_msg=name)
    np.testing.assert_array_equal(got["cos"][:n], np.ones(n, np.float32))
    for name in ("sin", "cos", "tan"):
        assert np.isnan(got[name][n:]).all(), name
    np.testing.assert_array_equal(got["tanh"][n:n + 2], [1.0, -1.0])
    assert np.isnan(got["tanh"][-1])


def test_interpreter_agrees_within_the_same_bounds():
    x = whole_range(600)
    got = run_trig(x, pk.kernel(interpret=True)(trig.__wrapped__))
    for name, (ref, bound) in BOUNDS.items():
        assert ulps(got[name], x, ref).max() <= bound, name


def test_f16_goes_through_f32():
    @pk.kernel
    def k(x: pk.f16[:], out: pk.f16[:, :]):
        i = pk.global_id(0)
        out[i, 0] = pk.sin(x[i])
        out[i, 1] = pk.cos(x[i])
        out[i, 2] = pk.tan(x[i])
        out[i, 3] = pk.tanh(x[i])

    x = np.concatenate([rng.uniform(-60000, 60000, 3000), rng.uniform(-4, 4, 3000),
                        [0.0, -0.0, 6e-8, -6e-8]]).astype(np.float16)
    out = np.zeros((x.size, 4), np.float16)
    k[x.size](x, out)
    for j, ref in enumerate((np.sin, np.cos, np.tan, np.tanh)):
        expected = ref(x.astype(np.float64))
        spacing = np.spacing(np.abs(expected.astype(np.float16))).astype(np.float64)
        err = np.abs(out[:, j].astype(np.float64) - expected) / spacing
        assert err.max() <= 1.0, (ref.__name__, err.max())  # f32 accuracy, rounded once
    np.testing.assert_array_equal(np.signbit(out[-4:, 0]), np.signbit(x[-4:]))


def test_trig_is_straight_line_code():
    # no loop per element (lavapipe cuts loops at 65,535 iterations per invocation) and a
    # bounded size
    x = np.zeros(4, np.float32)
    asm = trig.asm(x, np.zeros((4, 4), np.float32))
    assert "OpLoopMerge" not in asm
    assert len([ln for ln in asm.splitlines() if "= Op" in ln]) < 1200


# ---------------------------------------------------------------- min, max, clamp: numpy's NaN


def min_max_body(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:, :]):
    i = pk.global_id(0)
    out[i, 0] = min(x[i], y[i])
    out[i, 1] = max(x[i], y[i])
    out[i, 2] = pk.clamp(x[i], -1.0, 1.0)
    out[i, 3] = min(x[i], 1.0, y[i])
    out[i, 4] = math.inf if pk.isnan(x[i]) else 0.0


min_max = pk.kernel(min_max_body)
min_max_interpreted = pk.kernel(interpret=True)(min_max_body)


@pytest.mark.parametrize("kernel", [min_max, min_max_interpreted], ids=["device", "interpret"])
def test_min_max_clamp_follow_numpy_nan_rule(kernel):
    # (no subnormals: NVIDIA compares them as zero unless a kernel asks to preserve them)
    v = np.array([np.nan, 1.0, -0.0, 0.0, 2.0, -3.0, np.inf, -np.inf, 1e-30], np.float32)
    x, y = (a.ravel() for a in np.meshgrid(v, v))
    out = np.zeros((x.size, 5), np.float32)
    kernel[x.size](x, y, out)
    one = np.float32(1)
    expected = np.stack([np.minimum(x, y), np.maximum(x, y), np.clip(x, -one, one),
                         np.minimum(np.minimum(x, one), y),
                         np.where(np.isnan(x), np.inf, 0).astype(np.float32)], 1)
    # bit for bit, -0.0 and 0.0 apart: of two equal values the second, as numpy
    same = (out.view(np.uint32) == expected.view(np.uint32)) | (np.isnan(out) & np.isnan(expected))
    assert same.all(), np.c_[x, y, out, expected][~same.all(1)][:5]


@pytest.mark.parametrize("dtype", [pk.f16, pk.f64], ids=lambda d: d.name)
def test_min_max_nan_rule_in_other_float_widths(dtype):
    if dtype == pk.f64 and not pk.get_device().info.features.fp64:
        pytest.skip("the device has no f64")
    nt = dtype.numpy

    @pk.kernel
    def k(x: dtype[:], y: dtype[:], out: dtype[:, :]):
        i = pk.global_id(0)
        out[i, 0] = min(x[i], y[i])
        out[i, 1] = max(x[i], y[i])

    v = np.array([np.nan, 1.0, -0.0, 0.0, -2.0, np.inf], nt)
    x, y = (a.ravel() for a in np.meshgrid(v, v))
    out = np.zeros((x.size, 2), nt)
    k[x.size](x, y, out)
    expected = np.stack([np.minimum(x, y), np.maximum(x, y)], 1)
    np.testing.assert_array_equal(out, expected)  # (numpy's f16 picks the first of two zeros)
    if dtype == pk.f64:
        keep = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(out[keep]), np.signbit(expected[keep]))


def test_constant_min_max_fold_with_numpy_rule():
    @pk.kernel
    def k(out: pk.f32[:]):
        out[0] = min(math.nan, 1.0)
        out[1] = max(1.0, math.nan)
        out[2] = pk.clamp(math.nan, -1.0, 1.0)

    out = np.zeros(3, np.float32)
    k[1](out)
    assert np.isnan(out).all()


def hyperbolic_inverses(x: pk.f16[:], out: pk.f16[:, :]):
    i = pk.global_id(0)
    out[i, 0] = pk.asinh(x[i])
    out[i, 1] = pk.acosh(x[i])


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_f16_asinh_acosh_of_large_and_negative_arguments(interpret):
    # x * x overflowed f16 above 256: asinh(700) was nan, acosh(700) inf; acosh(-88) was -inf
    x = np.array([300.0, -700.0, 65504.0, np.inf, -np.inf, 2.5, -88.0, -1.0, 0.5, np.nan],
                 np.float16)
    out = np.zeros((x.size, 2), np.float16)
    pk.kernel(hyperbolic_inverses, interpret=interpret)[x.size](x, out)
    with np.errstate(invalid="ignore"):
        expected = np.stack([np.arcsinh(x), np.arccosh(x)], 1)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    np.testing.assert_allclose(out, expected, rtol=4e-3)
