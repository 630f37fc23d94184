"""Elementwise ops against numpy: every unary and binary op on f32 over hypothesis shapes and
views (contiguous, transposed, strided with negative steps, broadcast), the other dtypes,
broadcasting, type promotion with tensors and Python scalars, in-place operators, special
values, ranks above four, and errors. Tolerances follow docs/testing.md (tensor_support)."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_support import ALL, INTS, assert_close, sample, shapes, views

import pykern as pk
from pykern.lang import dtypes
from pykern.tensor.elementwise import functions as ew

rng = np.random.default_rng(3)
erf64 = np.vectorize(math.erf, otypes=[np.float64])
PI = float(np.pi)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# op: (numpy reference on f64, low, high, tolerance kind)
UNARY = {
    "negative": (np.negative, -10, 10, "exact"),
    "positive": (np.positive, -10, 10, "exact"),
    "abs": (np.abs, -10, 10, "exact"),
    "square": (np.square, -10, 10, "exact"),
    "sign": (np.sign, -3, 3, "exact"),
    "relu": (lambda x: np.maximum(x, 0), -10, 10, "exact"),
    "reciprocal": (np.reciprocal, 0.5, 10, "div"),
    "sqrt": (np.sqrt, 0, 100, "div"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 0.01, 100, "math"),
    "exp": (np.exp, -10, 10, "math"),
    "exp2": (np.exp2, -10, 10, "math"),
    "expm1": (np.expm1, -3, 3, "math"),
    "log": (np.log, 0.01, 100, "math"),
    "log2": (np.log2, 0.01, 100, "math"),
    "log10": (np.log10, 0.01, 100, "math"),
    "log1p": (np.log1p, -0.9, 10, "math"),
    "sin": (np.sin, -100, 100, "math"),
    "cos": (np.cos, -100, 100, "math"),
    "tan": (np.tan, -1.5, 1.5, "math"),
    "asin": (np.arcsin, -1, 1, "loose"),
    "acos": (np.arccos, -1, 1, "loose"),
    "atan": (np.arctan, -10, 10, "loose"),
    "sinh": (np.sinh, -5, 5, "loose"),
    "cosh": (np.cosh, -5, 5, "loose"),
    "tanh": (np.tanh, -10, 10, "math"),
    "asinh": (np.arcsinh, -100, 100, "loose"),
    "acosh": (np.arccosh, 1, 100, "loose"),
    "atanh": (np.arctanh, -0.99, 0.99, "loose"),
    "erf": (erf64, -3, 3, "loose"),
    "sigmoid": (_sigmoid, -20, 20, "math"),
    "silu": (lambda x: x * _sigmoid(x), -10, 10, "loose"),
    "gelu": (lambda x: 0.5 * x * (1 + erf64(x / np.sqrt(2))), -5, 5, "loose"),
    "floor": (np.floor, -10, 10, "exact"),
    "ceil": (np.ceil, -10, 10, "exact"),
    "trunc": (np.trunc, -10, 10, "exact"),
    "round": (np.round, -10, 10, "exact"),
    "isnan": (np.isnan, -10, 10, "exact"),
    "isinf": (np.isinf, -10, 10, "exact"),
    "isfinite": (np.isfinite, -10, 10, "exact"),
    "signbit": (np.signbit, -10, 10, "exact"),
}


def unary_fn(name):
    return getattr(pk, name) if name in ("gelu", "sigmoid", "relu", "silu") else \
        getattr(ew, name)


@pytest.mark.parametrize("name", list(UNARY))
@settings(max_examples=6, deadline=None)
@given(data=st.data(), shape=shapes)
def test_unary_f32_any_view(name, data, shape):
    ref, low, high, kind = UNARY[name]
    a, t = data.draw(views(shape, pk.f32, low, high))
    out = unary_fn(name)(t)
    # exact ops match numpy's own f32 results; the others an f64 reference
    expected = ref(a) if kind == "exact" else ref(a.astype(np.float64))
    if expected.dtype == bool:
        assert out.dtype == pk.bool_
        np.testing.assert_array_equal(out.numpy(), expected)
    else:
        assert out.dtype == pk.f32
        assert_close(out, expected, pk.f32, kind)


F16_F64_OPS = ["negative", "abs", "square", "sqrt", "exp", "log", "sin", "sigmoid", "floor",
               "isnan", "tanh"]


@pytest.mark.parametrize("dtype", [pk.f16, pk.f64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", F16_F64_OPS)
def test_unary_f16_and_f64(name, dtype):
    ref, low, high, kind = UNARY[name]
    a = sample(rng, dtype, (7, 9), low, high)
    out = unary_fn(name)(pk.asarray(a)[:, ::2])
    expected = ref(a[:, ::2]) if kind == "exact" else ref(a[:, ::2].astype(np.float64))
    if expected.dtype == bool:
        np.testing.assert_array_equal(out.numpy(), expected)
        return
    assert out.dtype == dtype
    exact64 = name in ("negative", "abs", "square", "sqrt", "floor")
    if dtype == pk.f64 and not exact64:  # f64 math in f64 (pykern.mathlib.prelude_f64)
        np.testing.assert_allclose(out.numpy(), expected, rtol=5e-15, atol=1e-300)
        return
    assert_close(out, expected, dtype, "div" if name == "sqrt" else kind)


F64_CASES = {  # f64 math (pykern.mathlib.prelude_f64): wide ranges and special values
    "exp": (-745, 709), "exp2": (-1074, 1023), "expm1": (-40, 40), "log": (0, 1e300),
    "log2": (1e-300, 10), "log10": (0, 1e5), "log1p": (-1, 5), "sinh": (-700, 700),
    "cosh": (-700, 700), "tanh": (-30, 30), "asinh": (-1e200, 1e200), "acosh": (1, 1e10),
    "atanh": (-1, 1), "sigmoid": (-50, 50), "silu": (-50, 50), "sin": (-1e5, 1e5),
    "cos": (-1e5, 1e5), "tan": (-100, 100), "asin": (-1, 1), "acos": (-1, 1),
    "atan": (-1e10, 1e10),
}


@pytest.mark.parametrize("name", list(F64_CASES))
def test_f64_exp_log_family_is_f64_accurate(name):
    low, high = F64_CASES[name]
    r = np.random.default_rng(8)
    x = np.concatenate([r.uniform(low, high, 300), r.uniform(-1e-3, 1e-3, 50),
                        [np.nan, np.inf, -np.inf, 0.0, low, high]])
    if name in ("log", "log2", "log10"):
        x[:300] = np.exp(r.uniform(-690, 690, 300)) if name == "log" else x[:300]
    ref = UNARY[name][0]
    with np.errstate(all="ignore"):
        expected = ref(x)
        got = getattr(ew, name)(pk.asarray(x)).numpy()
    assert got.dtype == np.float64
    # near the zeros of sin/cos/tan the relative error is measured against the reduced argument
    atol = 1e-300 if name not in ("sin", "cos", "tan") else 1e-15
    np.testing.assert_allclose(got, expected, rtol=2e-15, atol=atol, equal_nan=True)


def test_f64_pow_logaddexp_atan2():
    r = np.random.default_rng(9)
    b = np.concatenate([r.uniform(0, 5, 200), r.integers(-5, 5, 100).astype(np.float64),
                        [0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, -2.0, 1.0]])
    e = np.concatenate([r.uniform(-20, 20, 200), r.integers(-5, 5, 100).astype(np.float64),
                        [-1.0, -3.0, np.inf, 2.0, 0.0, 3.0, 0.5, np.nan]])
    with np.errstate(all="ignore"):
        got = (pk.asarray(b) ** pk.asarray(e)).numpy()
        np.testing.assert_allclose(got, b ** e, rtol=2e-14, equal_nan=True)
    x, y = r.uniform(-700, 700, 300), r.uniform(-700, 700, 300)
    np.testing.assert_allclose(pk.logaddexp(pk.asarray(x), pk.asarray(y)).numpy(),
                               np.logaddexp(x, y), rtol=2e-15)
    sy = np.array([0.0, -0.0, 0.0, -0.0, np.inf, -np.inf, np.inf, 1.0, -1.0, np.nan, 3.0])
    sx = np.array([0.0, 0.0, -0.0, -1.0, np.inf, -np.inf, 1.0, -np.inf, np.inf, 1.0, -4.0])
    y, x = np.concatenate([sy, y]), np.concatenate([sx, x])
    got = pk.atan2(pk.asarray(y), pk.asarray(x)).numpy()
    np.testing.assert_allclose(got, np.arctan2(y, x), rtol=2e-15, equal_nan=True)
    np.testing.assert_array_equal(np.signbit(got[:11]), np.signbit(np.arctan2(sy, sx)))


INT_UNARY = {"negative": np.negative, "abs": np.abs, "sign": np.sign, "square": np.square,
             "bitwise_invert": np.invert}


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
def test_unary_integers(dtype):
    a = sample(rng, dtype, (4, 6), -100, 100)
    t = pk.asarray(a).T
    with np.errstate(over="ignore"):
        for name, ref in INT_UNARY.items():
            out = getattr(ew, name)(t)
            assert out.dtype == dtype, name
            np.testing.assert_array_equal(out.numpy(), ref(a.T), err_msg=name)
    e = pk.sqrt(t)  # float math on integers gives the default float dtype
    assert e.dtype == pk.f32
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(e.numpy(), np.sqrt(a.T.astype(np.float64)), rtol=1e-6)
    np.testing.assert_array_equal(pk.floor(t).numpy(), a.T)
    assert pk.isnan(t).dtype == pk.bool_ and not pk.isnan(t).numpy().any()
    assert pk.isfinite(t).numpy().all()


def test_unary_bool():
    a = rng.integers(0, 2, (3, 5)).astype(bool)
    t = pk.asarray(a)
    np.testing.assert_array_equal((~t).numpy(), ~a)
    np.testing.assert_array_equal(pk.logical_not(t).numpy(), ~a)
    np.testing.assert_array_equal(abs(t).numpy(), a)
    np.testing.assert_array_equal(pk.square(t).numpy(), a)
    assert pk.exp(t).dtype == pk.f32
    np.testing.assert_allclose(pk.exp(t).numpy(), np.exp(a.astype(np.float64)), rtol=1e-6)
    with pytest.raises(TypeError, match="negative is not supported for bool"):
        _ = -t
    with pytest.raises(TypeError, match="bitwise_invert needs an integer or bool"):
        ~pk.asarray([1.0])


def test_gelu_tanh_approximation():
    a = sample(rng, pk.f32, (100,), -5, 5).astype(np.float64)
    out = pk.gelu(pk.asarray(a.astype(np.float32)), approximate="tanh")
    expected = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a**3)))
    np.testing.assert_allclose(out.numpy(), expected, rtol=4e-4, atol=1e-6)
    with pytest.raises(ValueError, match="approximate"):
        pk.gelu(pk.asarray(a), approximate="fast")


def test_special_values():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5, 0.5, 2.5, -0.5], np.float32)
    t = pk.asarray(x)
    for name in ("isnan", "isinf", "isfinite", "signbit", "round", "floor", "ceil", "trunc",
                 "abs", "negative", "sign", "square"):
        ref = UNARY[name][0]
        got, exp = getattr(ew, name)(t).numpy(), ref(x)
        np.testing.assert_array_equal(got, exp, err_msg=name)
        if exp.dtype.kind == "f":  # -0.0 kept where numpy keeps it (a nan's sign is not
            keep = ~np.isnan(exp)  # kept by every driver: NVIDIA's -nan has no sign bit)
            np.testing.assert_array_equal(np.signbit(got[keep]), np.signbit(exp[keep]),
                                          err_msg=name)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(pk.log(pk.asarray([0.0, -1.0, np.inf])).numpy(),
                                      np.log(np.array([0.0, -1.0, np.inf], np.float32)))
        np.testing.assert_array_equal(pk.sqrt(pk.asarray([-1.0, np.inf])).numpy(),
                                      [np.nan, np.inf])
        np.testing.assert_array_equal(pk.exp(pk.asarray([-np.inf, np.inf, 200.0])).numpy(),
                                      [0, np.inf, np.inf])
        np.testing.assert_array_equal(pk.sigmoid(pk.asarray([-np.inf, np.inf, -200.0])).numpy(),
                                      [0, 1, 0])
        np.testing.assert_array_equal(pk.relu(pk.asarray([np.nan, -1.0])).numpy(), [np.nan, 0])
        h = pk.hypot(pk.asarray([np.nan, np.inf, 3.0]), pk.asarray([1.0, np.nan, 4.0])).numpy()
        np.testing.assert_array_equal(h, [np.nan, np.inf, 5.0])
        np.testing.assert_array_equal(ew.tanh(pk.asarray([100.0, -np.inf])).numpy(), [1, -1])


def f32_ulps(got, x, ref):
    """|got - exact| in units of the f32 spacing at the correctly rounded result."""
    exact = ref(x.astype(np.float64))
    return np.abs(got.astype(np.float64) - exact) / np.spacing(
        np.abs(exact.astype(np.float32))).astype(np.float64)


def f32_whole_range(n):
    bits = rng.integers(0, 0x7F800000, n, dtype=np.int64).astype(np.uint32)
    bits[::2] |= np.uint32(0x80000000)
    edges = [0.0, -0.0, 1e-45, 1e-8, 1e-5, -1e-5, 0.7853982, 9.9e7, 16367173 * 2.0**72, 1e30,
             3.4028235e38]
    return np.concatenate([bits.view(np.float32), np.array(edges, np.float32)])


@pytest.mark.parametrize("name,bound", [("sin", 1.5), ("cos", 1.5), ("tan", 5.0),
                                        ("tanh", 3.0)])
def test_trig_and_tanh_match_numpy_over_the_whole_f32_range(name, bound):
    # the kernel math (huge arguments reduced exactly, tanh accurate near 0), not GLSL's
    x = f32_whole_range(1 << 15)
    got = getattr(ew, name)(pk.asarray(x)).numpy()
    ref = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh}[name]
    err = f32_ulps(got, x, ref)
    assert err.max() <= bound, (float(x[np.argmax(err)]), err.max())
    if name != "cos":  # odd functions keep the sign of zero
        assert np.signbit(got[-10]) and not np.signbit(got[-11])


def test_gelu_tanh_near_zero_is_relative_accurate():
    x = np.array([1e-5, -1e-5, 1e-8, 3e-3], np.float32)
    got = pk.gelu(pk.asarray(x), approximate="tanh").numpy()
    a = x.astype(np.float64)
    expected = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a**3)))
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_relu_is_numpy_maximum_with_zero():
    x = np.array([-np.inf, -1.0, -0.0, 0.0, np.nan, 2.0, np.inf, 1e-30, -1e-45], np.float32)
    got = pk.relu(pk.asarray(x)).numpy()
    expected = np.maximum(x, np.float32(0))
    # relu(-inf) was nan (x * 0) and relu(-1.0) -0.0 on lavapipe
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]), np.zeros(8, bool))
    for dtype in (pk.f16, pk.f64, pk.i8, pk.i32, pk.u16):
        a = sample(rng, dtype, (20,), -5, 5)
        np.testing.assert_array_equal(pk.relu(pk.asarray(a)).numpy(),
                                      np.maximum(a, a.dtype.type(0)), err_msg=dtype.name)
    r = pk.relu(-1.0)
    assert r.dtype == pk.f32 and r.shape == () and float(r) == 0 and not np.signbit(float(r))


def test_asinh_of_huge_values():
    x = np.array([1e18, 2e18, 1e20, 1e30, 3e38, -1e25, -3.4e38], np.float32)
    got = ew.asinh(pk.asarray(x)).numpy()  # was ln 2 above 1e18
    np.testing.assert_allclose(got, np.arcsinh(x.astype(np.float64)), rtol=1e-6)


def test_f64_pow_of_negative_infinity_and_expm1_of_minus_zero():
    base = np.array([-np.inf] * 6 + [-0.0] * 3, np.float64)
    exponent = np.array([0.5, -0.5, 3.5, 3.0, -3.0, 2.0, -0.5, -3.5, -3.0])
    got = (pk.asarray(base) ** pk.asarray(exponent)).numpy()
    with np.errstate(divide="ignore"):
        expected = base ** exponent
    np.testing.assert_array_equal(got, expected)  # -inf ** 0.5 was nan (numpy: inf)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    z = pk.expm1(pk.asarray(np.array([-0.0, 0.0])))
    np.testing.assert_array_equal(np.signbit(z.numpy()), [True, False])  # was +0.0
    z32 = pk.expm1(pk.asarray(np.array([-0.0, 0.0], np.float32)))
    np.testing.assert_array_equal(np.signbit(z32.numpy()), [True, False])


SCALAR_UNARY = [n for n in ew.UNARY if n not in ("bitwise_invert", "logical_not")]


@pytest.mark.parametrize("name", SCALAR_UNARY)
def test_every_unary_function_takes_python_and_numpy_scalars_alike(name):
    # pk.NAME (a kernel builtin or a tensor function), pk.array_api.NAME: a 0-d tensor each
    functions = {getattr(ew, name)}
    for namespace in (pk, pk.array_api):  # the array API lacks relu, sigmoid, ...
        if hasattr(namespace, name):
            functions.add(getattr(namespace, name))
    reference = ew.unary(name, pk.asarray(np.float32(0.75))).numpy()
    for fn in functions:
        for value, dtype in ((0.75, pk.f32), (np.float32(0.75), pk.f32),
                             (np.float64(0.75), pk.f64)):
            got = fn(value)
            assert isinstance(got, pk.Tensor) and got.shape == (), (name, fn, value)
            assert got.dtype == (dtype if reference.dtype != bool else pk.bool_), (name, value)
            if dtype == pk.f32:
                np.testing.assert_array_equal(got.numpy(), reference, err_msg=name)
    integer = getattr(ew, name)(3)  # an int scalar: an i32 0-d tensor's result
    assert integer.dtype == ew.unary(name, pk.asarray(np.int32(3))).dtype


def test_builtins_and_binary_functions_take_scalars_as_tensor_functions():
    e = pk.exp(2.0)  # was a numpy float64 from the host
    assert isinstance(e, pk.Tensor) and e.dtype == pk.f32 and e.shape == ()
    assert float(e) == float(pk.exp(pk.asarray(np.float32(2.0))))
    assert pk.clamp(math.nan, -1.0, 1.0).dtype == pk.f32
    assert math.isnan(float(pk.clamp(math.nan, -1.0, 1.0)))  # nan, as a kernel's clamp
    assert int(pk.pow(2, 3)) == 8 and pk.pow(2, 3).dtype == pk.i32
    assert math.isnan(float(pk.maximum(np.float32(1.0), math.nan)))
    assert bool(pk.isnan(math.nan)) and pk.isnan(1.0).dtype == pk.bool_
    a = pk.array_api.atan2(1.0, np.float32(1.0))
    assert a.dtype == pk.f32 and float(a) == pytest.approx(math.pi / 4, rel=1e-5)
    assert float(pk.select(True, 1.0, 2.0)) == 1.0
    z = pk.exp(1j)  # a Python complex is a c64 scalar, as a float is an f32 one
    assert z.dtype == pk.c64 and complex(z) == pytest.approx(cmath.exp(1j), rel=1e-6)


# ---------------------------------------------------------------- binary ops


def _nonzero(low, high):
    return lambda r, shape: np.where(r.integers(0, 2, shape) == 0, -1, 1) * r.uniform(low, high,
                                                                                    shape)


# op: (numpy reference, generator of operands or None for uniform [-10, 10), tolerance)
BINARY = {
    "add": (np.add, None, "exact"),
    "subtract": (np.subtract, None, "exact"),
    "multiply": (np.multiply, None, "exact"),
    "divide": (np.divide, _nonzero(0.5, 10), "div"),
    "floor_divide": (np.floor_divide, _nonzero(0.5, 10), "exact"),
    "remainder": (np.remainder, _nonzero(0.5, 10), "div"),
    "pow": (np.power, "pow", "math"),
    "maximum": (np.maximum, None, "exact"),
    "minimum": (np.minimum, None, "exact"),
    "atan2": (np.arctan2, None, "loose"),
    "hypot": (np.hypot, None, "div"),
    "copysign": (np.copysign, None, "exact"),
    "logaddexp": (np.logaddexp, None, "math"),
    "equal": (np.equal, "ints", "exact"),
    "not_equal": (np.not_equal, "ints", "exact"),
    "less": (np.less, "ints", "exact"),
    "less_equal": (np.less_equal, "ints", "exact"),
    "greater": (np.greater, "ints", "exact"),
    "greater_equal": (np.greater_equal, "ints", "exact"),
}


def _operands(data, name, shape_a, shape_b):
    gen = BINARY[name][1]
    a, ta = data.draw(views(shape_a, pk.f32))
    b, tb = data.draw(views(shape_b, pk.f32))
    r = np.random.default_rng(data.draw(st.integers(0, 1000)))
    if gen == "ints":  # small integers, so that equal values occur
        a = r.integers(-3, 3, shape_a).astype(np.float32)
        b = r.integers(-3, 3, shape_b).astype(np.float32)
        ta, tb = pk.asarray(a), pk.asarray(b).T.T
    elif gen == "pow":
        a = r.uniform(0.1, 3, shape_a).astype(np.float32)
        b = r.uniform(-3, 3, shape_b).astype(np.float32)
        ta, tb = pk.asarray(a), pk.asarray(b)
    elif gen is not None:
        b = gen(r, shape_b).astype(np.float32)
        tb = pk.asarray(b)
    return a, ta, b, tb


@pytest.mark.parametrize("name", list(BINARY))
@settings(max_examples=8, deadline=None)
@given(data=st.data(), shapes2=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4,
                                                                min_side=0, max_side=4))
def test_binary_f32_broadcasting_views(name, data, shapes2):
    sa, sb = shapes2.input_shapes
    a, ta, b, tb = _operands(data, name, sa, sb)
    ref, _, kind = BINARY[name]
    out = getattr(ew, name)(ta, tb)
    expected = ref(a, b) if kind == "exact" else ref(a.astype(np.float64), b.astype(np.float64))
    assert out.shape == shapes2.result_shape
    if expected.dtype == bool:
        assert out.dtype == pk.bool_
        np.testing.assert_array_equal(out.numpy(), expected)
    else:
        assert out.dtype == pk.f32
        assert_close(out, expected, pk.f32, kind)


INT_BINARY = ["add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum",
              "bitwise_and", "bitwise_or", "bitwise_xor", "less", "equal"]


@pytest.mark.parametrize("dtype", [pk.i32, pk.u8, pk.i64, pk.i8, pk.u32], ids=lambda d: d.name)
def test_binary_integers_wrap_and_floor_like_numpy(dtype):
    a = sample(rng, dtype, (5, 6), -100, 100)
    b = sample(rng, dtype, (6,), -100, 100)
    b[0] = 0  # numpy: x // 0 == x % 0 == 0 for integers
    ta, tb = pk.asarray(a), pk.asarray(b)
    with np.errstate(all="ignore"):
        for name in INT_BINARY:
            out = getattr(ew, name)(ta, tb)
            expected = getattr(np, {"bitwise_and": "bitwise_and"}.get(name, name))(a, b)
            assert out.dtype == dtypes.from_numpy(expected.dtype), name
            np.testing.assert_array_equal(out.numpy(), expected, err_msg=name)
    s = rng.integers(0, dtype.bits, (6,)).astype(dtype.numpy)
    np.testing.assert_array_equal((ta << pk.asarray(s)).numpy(), a << s)
    np.testing.assert_array_equal((ta >> pk.asarray(s)).numpy(), a >> s)
    np.testing.assert_array_equal((ta ** 2).numpy(), a ** 2)
    p = rng.integers(0, 4, (5, 6)).astype(dtype.numpy)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal((ta ** pk.asarray(p)).numpy(), a ** p)
    np.testing.assert_allclose((ta / tb[1:].reshape(1, 5)[:, :5].T.T[0][:1]).numpy(),
                               a / b[1], rtol=4e-7)


def test_logical_and_bool_arithmetic():
    a = rng.integers(0, 2, (4, 4)).astype(bool)
    b = rng.integers(0, 2, (4,)).astype(bool)
    ta, tb = pk.asarray(a), pk.asarray(b)
    for name in ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "equal", "less"):
        np.testing.assert_array_equal(getattr(ew, name)(ta, tb).numpy(), getattr(np, name)(a, b))
    np.testing.assert_array_equal((ta + tb).numpy(), a + b)  # numpy: or
    np.testing.assert_array_equal((ta * tb).numpy(), a * b)  # and
    np.testing.assert_array_equal(pk.logical_and(pk.asarray([0.0, 2.0]), 1).numpy(),
                                  [False, True])
    with pytest.raises(TypeError, match="subtract is not supported for bool"):
        ta - tb


# ---------------------------------------------------------------- promotion


def expected_promotion(x, y):
    """pykern's rule: numpy's within a kind, the float type for int with float, TypeError for
    u64 with a signed integer."""
    if x == y:
        return x
    if x == pk.bool_ or y == pk.bool_:
        return y if x == pk.bool_ else x
    if x.is_float != y.is_float:
        return x if x.is_float else y
    if x.kind != y.kind and "u64" in (x.name, y.name) and not (x.is_float or y.is_float):
        return None
    return dtypes.from_numpy(np.result_type(x.numpy, y.numpy))


@settings(max_examples=40, deadline=None)
@given(da=st.sampled_from(ALL), db=st.sampled_from(ALL), shape=st.sampled_from([(3,), (2, 3)]))
def test_promotion_of_tensor_pairs(da, db, shape):
    p = expected_promotion(da, db)
    a, b = sample(rng, da, shape, 0, 50), sample(rng, db, shape[-1:], 0, 50)
    if p is None:
        with pytest.raises(TypeError, match="no integer dtype holds both"):
            pk.asarray(a) + pk.asarray(b)
        return
    assert pk.result_type(da, db) == p
    out = pk.asarray(a) + pk.asarray(b)
    assert out.dtype == p
    if p == pk.bool_:
        expected = a | b
    else:
        with np.errstate(over="ignore"):
            expected = a.astype(p.numpy) + b.astype(p.numpy)
    assert_close(out, expected, p)


def test_python_scalars_are_weak():
    h = pk.asarray(np.array([1.5, 2.25], np.float16))
    assert (h * 2.0).dtype == pk.f16 and (2.0 * h).dtype == pk.f16
    np.testing.assert_array_equal((h * 0.1).numpy(), np.array([1.5, 2.25], np.float16) * 0.1)
    i8 = pk.asarray(np.array([100, -100], np.int8))
    assert (i8 + 1).dtype == pk.i8
    np.testing.assert_array_equal((i8 + 100).numpy(), np.array([-56, 0], np.int8))  # wraps
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for i8"):
        i8 + 300
    i = pk.asarray([1, 2])
    assert (i + 1.5).dtype == pk.f32 and (i / 2).dtype == pk.f32
    np.testing.assert_array_equal((i / 2).numpy(), [0.5, 1.0])
    b = pk.asarray([True, False])
    assert (b + 1).dtype == pk.i32 and (b & True).dtype == pk.bool_
    np.testing.assert_array_equal((10 - i).numpy(), [9, 8])
    np.testing.assert_array_equal((2.0 ** pk.asarray([1.0, 3.0])).numpy(), [2, 8])
    np.testing.assert_array_equal((7 // i).numpy(), [7, 3])
    np.testing.assert_array_equal((7 % pk.asarray([2, -3])).numpy(), [1, -2])
    f = pk.asarray(np.array([1.0], np.float32))
    assert (f + np.float64(1)).dtype == pk.f64  # numpy scalars are strong
    assert (f + pk.asarray(np.float64(1))).dtype == pk.f64  # so are 0-d tensors
    assert (f + 1j).dtype == pk.c64 and (f + 1j).item() == 1 + 1j  # weak, as a float
    # comparisons with an int beyond the dtype's range are allowed (numpy 2)
    np.testing.assert_array_equal((i8 < 1000).numpy(), [True, True])
    np.testing.assert_array_equal((-1000 >= i8).numpy(), [False, False])
    np.testing.assert_array_equal((i8 != 2**70).numpy(), [True, True])
    assert pk.asarray([1.25, -2.675]).round(2).tolist() == pytest.approx([1.25, -2.68])
    np.testing.assert_array_equal(np.round(pk.asarray([0.5, 1.5, 2.5])).numpy(), [0, 2, 2])


@pytest.mark.parametrize("dtype", [pk.f32, pk.f64, pk.i32, pk.u16])
def test_scalar_power_shortcuts(dtype):
    a = sample(rng, dtype, (10,), 0, 9)
    t = pk.asarray(a)
    for e in (0, 1, 2):
        np.testing.assert_array_equal((t ** e).numpy(), a ** e)
    if dtype.is_float:
        np.testing.assert_allclose((t ** 0.5).numpy(), np.sqrt(a.astype(np.float64)), rtol=4e-7)
        np.testing.assert_allclose((t ** -1).numpy(), 1 / a.astype(np.float64), rtol=4e-7)
        np.testing.assert_allclose((t ** 1.7).numpy(), a.astype(np.float64) ** 1.7, rtol=2e-5)
    else:
        with pytest.raises(ValueError, match="negative integer powers"):
            t ** -1


# ---------------------------------------------------------------- in place and out=


def test_inplace_operators_write_through_views():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = pk.asarray(a)
    a = a.copy()
    view = t[1:, ::2]
    view += 1
    a[1:, ::2] += 1
    view *= pk.asarray([1.0, 2.0, 3.0])
    a[1:, ::2] *= np.array([1.0, 2.0, 3.0], np.float32)
    t[0] -= 5
    a[0] -= 5
    t //= 2
    a //= 2
    np.testing.assert_array_equal(t.numpy(), a)
    i = pk.asarray(np.arange(6, dtype=np.int32))
    i <<= 2
    i |= 1
    i ^= pk.asarray(np.int32(3))
    np.testing.assert_array_equal(i.numpy(), ((np.arange(6) << 2) | 1) ^ 3)
    f = pk.zeros(3)
    f += pk.asarray([1, 2, 3])  # i32 into f32: same-kind cast allowed
    assert f.dtype == pk.f32 and f.tolist() == [1, 2, 3]


def test_inplace_aliasing_reads_before_writing():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    t = pk.asarray(a)
    t += t.T
    np.testing.assert_array_equal(t.numpy(), a + a.T)
    b = np.arange(10, dtype=np.int32)
    u = pk.asarray(b)
    u[1:] += u[:-1]
    b[1:] += b[:-1].copy()
    np.testing.assert_array_equal(u.numpy(), b)


def test_inplace_errors_leave_tensor_intact():
    t = pk.asarray(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="cannot store a f32 result into a i32"):
        t += 1.5
    with pytest.raises(ValueError, match=r"the result has shape \(2, 3\), out has \(3,\)"):
        t += pk.zeros((2, 3), pk.i32)
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2])
    out = pk.empty(3, pk.f32)
    r = pk.add(pk.asarray([1.0, 2.0, 3.0]), 1.0, out=out)
    assert r is out and out.tolist() == [2, 3, 4]


# ---------------------------------------------------------------- where, clip, maximum


@settings(max_examples=20, deadline=None)
@given(data=st.data(), shapes3=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4,
                                                                max_side=4))
def test_where_broadcasting(data, shapes3):
    sc, sx, sy = shapes3.input_shapes
    c, tc = data.draw(views(sc, pk.bool_))
    x, tx = data.draw(views(sx, pk.f32))
    y, ty = data.draw(views(sy, pk.i32))
    out = pk.where(tc, tx, ty)
    assert out.dtype == pk.f32
    np.testing.assert_array_equal(out.numpy(), np.where(c, x, y.astype(np.float32)))


def test_where_and_clip_with_scalars_and_nan():
    x = np.array([np.nan, -2.0, 0.5, 3.0, 10.0], np.float32)
    t = pk.asarray(x)
    np.testing.assert_array_equal(pk.where(t > 1, t, 0.0).numpy(), np.where(x > 1, x, 0))
    np.testing.assert_array_equal(pk.where(pk.asarray([1, 0, 2, 0, 0]), 1, 2).numpy(),
                                  [1, 2, 1, 2, 2])
    np.testing.assert_array_equal(pk.clip(t, 0.0, 5.0).numpy(), np.clip(x, 0, 5))
    np.testing.assert_array_equal(t.clip(max=1.0).numpy(), np.clip(x, None, 1))
    lo = pk.asarray([[0.0], [1.0]])
    np.testing.assert_array_equal(pk.clip(t, lo, 4.0).numpy(),
                                  np.clip(x, np.array([[0.0], [1.0]], np.float32), 4))
    i = pk.asarray(np.arange(-3, 4, dtype=np.int8))
    assert pk.clip(i, -1, 1).dtype == pk.i8
    np.testing.assert_array_equal(pk.clip(i, -1, 1).numpy(), np.clip(np.arange(-3, 4), -1, 1))
    y = np.array([1.0, np.nan, 0.0, -0.0, 2.0], np.float32)
    np.testing.assert_array_equal(pk.maximum(t, pk.asarray(y)).numpy(), np.maximum(x, y))
    np.testing.assert_array_equal(pk.minimum(t, pk.asarray(y)).numpy(), np.minimum(x, y))


# ---------------------------------------------------------------- layouts


def test_more_than_four_dimensions():
    a = rng.standard_normal((2, 3, 2, 3, 2, 2)).astype(np.float32)
    t = pk.asarray(a)
    perm = (5, 0, 3, 1, 4, 2)
    b = rng.standard_normal((3, 1, 2, 1)).astype(np.float32)  # broadcast against the view
    out = t.permute(*perm) + pk.asarray(b)
    np.testing.assert_array_equal(out.numpy(), a.transpose(perm) + b)
    np.testing.assert_array_equal(pk.exp(t[:, ::-1, :, ::2]).numpy().shape, (2, 3, 2, 2, 2, 2))
    c = t.permute(*perm).contiguous()
    np.testing.assert_array_equal(c.numpy(), a.transpose(perm))
    assert (t + 1).is_contiguous


def test_contiguous_same_shape_uses_the_flat_kernel():
    from pykern.tensor.core import strided
    t = pk.zeros((8, 16, 4))
    jobs = list(strided.plan(t.shape, [t, t]))
    assert len(jobs) == 1 and jobs[0].nd == 1 and jobs[0].n == t.size
    jobs = list(strided.plan((8, 16), [t[:, :, 0], t[:, :, 1]]))
    assert jobs[0].nd == 1  # same stride everywhere: still flat
    jobs = list(strided.plan((16, 8), [t[0].T, t[1]]))
    assert jobs[0].nd == 4


# ---------------------------------------------------------------- errors


def test_errors_name_what_is_wrong():
    a, b = pk.zeros((2, 3)), pk.zeros((4,))
    with pytest.raises(ValueError, match=r"shapes \(2, 3\), \(4,\) cannot be broadcast"):
        a + b
    with pytest.raises(TypeError, match="bitwise_and needs integer or bool operands, not f32"):
        a & a
    with pytest.raises(TypeError, match="bitwise_left_shift needs integer operands, not f32"):
        a << 1
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(TypeError, match="pk.Tensor, array or number"):
        pk.exp(object()) if False else ew.exp(object())
    np.testing.assert_array_equal(a.numpy(), np.zeros((2, 3)))


def test_signbit_of_integers_is_numpys():
    # numpy's signbit of a signed integer is x < 0 (it was False for every integer)
    for dtype in (np.int8, np.int32, np.int64, np.uint8, np.uint32, np.bool_):
        a = np.array([-3, 0, 5, -1, 1, -128]).astype(dtype)
        got = pk.signbit(pk.asarray(a)[::-1])
        assert got.dtype == pk.bool_
        np.testing.assert_array_equal(got.numpy(), np.signbit(a[::-1]))


def test_round_of_integers_with_decimals_keeps_the_dtype():
    # t.round(decimals) of an integer tensor was scaled in f32: an f32 result, and values
    # past 2**24 rounded (123456789 -> 123456792); numpy keeps the integer dtype
    for x in (np.array([123456789, 15, 25, -15, -25, 14, 0, 2**40 + 5], np.int64),
              np.array([123456789, 15, 25, -15, -25, 14, 0, -2**30 - 5], np.int32),
              np.array([15, 25, 65535, 14], np.uint16)):
        t = pk.asarray(x)
        for decimals in (2, -1, -2, -12):
            got = t.round(decimals)
            want = np.round(x, decimals)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want)
            np.testing.assert_array_equal(np.round(t, decimals).numpy(), want)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32])
def test_clip_bounds_beyond_an_integer_dtype(dtype):
    """As numpy: a Python int bound beyond the dtype on its own side clips nothing; one beyond
    on the other side is an OverflowError, and the tensor is intact."""
    info = np.iinfo(dtype)
    a = np.array([info.min, 0, 5, info.max], dtype)
    t = pk.asarray(a)
    low, high = int(info.min) - 1, int(info.max) + 1
    for lo, hi in ((low, high), (2, high), (low, 3), (None, high), (low, None)):
        got = pk.clip(t, lo, hi)
        assert got.dtype == t.dtype
        np.testing.assert_array_equal(got.numpy(), np.clip(a, lo, hi))
        np.testing.assert_array_equal(t.clip(lo, hi).numpy(), np.clip(a, lo, hi))
    for lo, hi in ((high, high + 5), (low - 5, low)):
        with pytest.raises(OverflowError):
            pk.clip(t, lo, hi)
    np.testing.assert_array_equal(t.numpy(), a)
