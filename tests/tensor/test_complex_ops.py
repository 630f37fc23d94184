"""Complex elementwise ops against numpy: arithmetic and == != with broadcasting, promotion
with real and Python operands, every unary function numpy defines on complex numbers, the
parts (real, imag, conj, angle), where, round, special values, and the TypeErrors of the
ops complex numbers lack (ordering, floor division, ...).

Tolerances, |result - numpy| <= atol + rtol * |numpy| on the complex values: arithmetic and
abs are a few rounding steps (c64: rtol 3e-6; divisions per TESTING.md's 3 ULP); functions
built on sin/cos/exp/log inherit Vulkan's bounds for them (absolute 2^-11 for sin and cos on
[-pi, pi], 4096 ULP for atan2), so c64 allows 5e-4 absolute and relative there; c128 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_support import sample, small_shapes, views

import complex_rule
import pykern as pk

SETTINGS = settings(max_examples=10, deadline=None)
rng = np.random.default_rng(14)

ARITH_TOL = {pk.c64: 3e-6, pk.c128: 1e-13}
MATH_TOL = {pk.c64: 5e-4, pk.c128: 1e-9}

# numpy's name -> pykern's function (via the array API names where numpy's differ)
FUNCTIONS = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
             "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
             "arctanh", "square", "reciprocal", "sign", "negative", "positive", "conj"]
PK_NAMES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
            "arccosh": "acosh", "arctanh": "atanh"}


_PARTS = (0.0, -0.0, 0.5, -2.0, np.inf, -np.inf, np.nan)
SPECIAL = np.array([complex(x, y) for x in _PARTS for y in _PARTS], np.complex64)


def complex_sample(dtype, shape, low=-2.0, high=2.0):
    return sample(rng, dtype, shape, low, high)


def assert_close(result, expected, tol, atol=None):
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol if atol is None else atol)


def pk_function(name):
    name = PK_NAMES.get(name, name)
    return getattr(pk, name, None) or getattr(pk.array_api, name)


def standard_expm1(z):
    """expm1 with the array API's special values, which are exp's minus one (numpy's expm1
    computes its formula at inf and nan parts too, and differs there); +0 for ±0 + 0j."""
    with np.errstate(all="ignore"):
        ref = np.where(np.isfinite(z), np.expm1(z) + 0.0, np.exp(z) - 1)
        # on the real axis: the real expm1 and the zero imaginary part kept
        axis = np.isfinite(z) & (z.imag == 0)
        ref.real[axis] = np.expm1(z.real[axis]) + 0.0
        ref.imag[axis] = z.imag[axis]
    return ref


@pytest.mark.parametrize("name", FUNCTIONS)
def test_unary_functions_of_c64_match_numpy(name):
    a = complex_sample(pk.c64, (3, 5))
    result = pk_function(name)(pk.asarray(a).T)
    assert result.dtype == pk.c64
    expected = getattr(np, name)(a.astype(np.complex128)).T
    tol = ARITH_TOL[pk.c64] if name in ("square", "negative", "positive", "conj") else \
        MATH_TOL[pk.c64]
    assert_close(result.numpy(), expected, tol)
    # the special values (C99 Annex G, the array API's special cases): numpy's, part by part
    with np.errstate(all="ignore"):
        expected = standard_expm1(SPECIAL) if name == "expm1" else getattr(np, name)(SPECIAL)
    got = pk_function(name)(pk.asarray(SPECIAL)).numpy()
    for part in ("real", "imag"):
        np.testing.assert_allclose(getattr(got, part), getattr(expected, part), rtol=tol,
                                   atol=tol, err_msg=f"{name} {part} parts of {SPECIAL}")


@pytest.mark.parametrize("name", ["exp", "sqrt", "log", "arctanh"])
def test_unary_functions_of_c128_match_numpy(name):
    a = complex_sample(pk.c128, (7,))
    result = pk_function(name)(pk.asarray(a))
    assert result.dtype == pk.c128
    assert_close(result.numpy(), getattr(np, name)(a), MATH_TOL[pk.c128])


@SETTINGS
@given(st.data(), small_shapes, st.sampled_from([pk.c64, pk.c128]))
def test_real_results_and_predicates_on_any_layout(data, shape, dtype):
    a, t = data.draw(views(shape, dtype, -3, 3))
    assert pk.abs(t).dtype == dtype.real_dtype
    assert_close(pk.abs(t).numpy(), np.abs(a), ARITH_TOL[dtype])
    assert_close(pk.angle(t).numpy(), np.angle(a), MATH_TOL[dtype])
    np.testing.assert_array_equal(t.real.numpy(), a.real)
    np.testing.assert_array_equal(t.imag.numpy(), a.imag)
    np.testing.assert_array_equal(pk.conj(t).numpy(), np.conj(a))


@SETTINGS
@given(st.data(), small_shapes, st.sampled_from([pk.c64, pk.c128]),
       st.sampled_from(["add", "subtract", "multiply", "divide", "equal", "not_equal"]))
def test_binary_ops_broadcast_over_any_layout(data, shape, dtype, name):
    a, ta = data.draw(views(shape, dtype, -3, 3))
    b = np.array(complex_sample(dtype, shape[-1:], -3, 3))
    if name in ("equal", "not_equal") and a.ndim and a.size:
        b[::2] = a.reshape(-1, a.shape[-1])[0][::2]  # some equal elements
    result = getattr(pk, name)(ta, pk.asarray(b))
    expected = getattr(np, name)(a, b)
    if name in ("equal", "not_equal"):
        assert result.dtype == pk.bool_
        np.testing.assert_array_equal(result.numpy(), expected)
    else:
        assert result.dtype == dtype
        assert_close(result.numpy(), expected, ARITH_TOL[dtype])


def test_mixed_promotion_with_real_tensors_and_python_scalars():
    z = pk.asarray(complex_sample(pk.c64, (4,)))
    f64 = pk.asarray(np.linspace(-1, 1, 4))
    assert (z * f64).dtype == pk.c128  # c64 with f64: c128, as numpy
    assert_close((z * f64).numpy(), z.numpy().astype(np.complex128) * f64.numpy(), 1e-6)
    assert (z + 1).dtype == pk.c64 and (z * 2.5).dtype == pk.c64
    assert (pk.asarray([1, 2]) * 1j).dtype == pk.c64
    assert (f64 * 2j).dtype == pk.c128 and (f64 * 2j).numpy().tolist() == \
        (f64.numpy() * 2j).tolist()
    assert (pk.asarray([1.0], dtype=pk.f16) + 1j).dtype == pk.c64
    assert_close((2 - 1j) / z, (2 - 1j) / z.numpy(), 3e-6)
    assert pk.result_type(pk.c64, pk.f64) == pk.c128 and pk.result_type(pk.i8, 1j) == pk.c64
    assert pk.result_type(pk.c128, pk.f32) == pk.c128 and pk.result_type(1j, 2.0) == pk.c64
    assert pk.can_cast(pk.f32, pk.c64) and pk.can_cast(pk.f64, pk.c128)
    assert not pk.can_cast(pk.c64, pk.f64) and not pk.can_cast(pk.f64, pk.c64)
    w = pk.zeros(2, pk.c128)
    w += z[:2]
    w *= 1j
    assert_close(w.numpy(), z.numpy()[:2] * 1j, 1e-6)
    with pytest.raises(TypeError, match="cannot store a c64 result into a f32"):
        f32 = pk.zeros(2)
        f32 += z[:2]
    np.testing.assert_array_equal(f32.numpy(), [0, 0])  # left as it was


def test_powers_as_numpy():
    a = complex_sample(pk.c64, (6,))
    t = pk.asarray(a)
    for n in (0, 1, 2, 3, 7, -2):
        assert_close((t ** n).numpy(), a.astype(np.complex128) ** n, 3e-5)
    assert_close((t ** 0.5).numpy(), np.sqrt(a.astype(np.complex128)), 3e-6)
    assert_close((t ** 1.7).numpy(), a.astype(np.complex128) ** 1.7, MATH_TOL[pk.c64])
    assert_close((t ** (0.5 - 1j)).numpy(), a.astype(np.complex128) ** (0.5 - 1j),
                 MATH_TOL[pk.c64])
    assert_close((2.0 ** t).numpy(), 2.0 ** a.astype(np.complex128), MATH_TOL[pk.c64])
    assert_close(pk.pow(t, t[::-1]).numpy(), a.astype(np.complex128) ** a[::-1],
                 MATH_TOL[pk.c64])


def test_special_values():
    z = pk.asarray(np.array([np.inf + 1j, 1 + np.nan * 1j, -0.0 - 4j, 3 + 0j, complex(-4, -0.0)],
                            np.complex64))
    a = z.numpy()
    for name in ("isnan", "isinf", "isfinite"):
        np.testing.assert_array_equal(getattr(pk, name)(z).numpy(), getattr(np, name)(a))
    with np.errstate(all="ignore"):
        quotient = np.complex64(1) / np.array([0j], np.complex64)
    np.testing.assert_array_equal((1 / pk.asarray([0j])).numpy(), quotient)
    s = pk.sqrt(z[3:]).numpy()
    assert_close(s, np.sqrt(a[3:].astype(np.complex128)), 3e-6)  # -2j: -0.0's sign kept
    assert np.signbit(s[1].imag)
    np.testing.assert_array_equal(pk.exp(pk.asarray([1.5 + 0j])).imag.numpy(), [0.0])
    assert_close(pk.sign(pk.asarray([0j, 3 - 4j])).numpy(), [0, 0.6 - 0.8j], 3e-6)


def test_logical_ops_take_z_not_equal_to_0():
    a = np.array([0j, 1j, 2, 0j], np.complex64)
    b = np.array([0j, 0j, 1 + 1j, -1j], np.complex128)
    ta, tb = pk.asarray(a), pk.asarray(b)
    np.testing.assert_array_equal(pk.logical_not(ta).numpy(), np.logical_not(a))
    for name in ("logical_and", "logical_or", "logical_xor"):
        np.testing.assert_array_equal(getattr(pk, name)(ta, tb).numpy(),
                                      getattr(np, name)(a, b))
    np.testing.assert_array_equal(pk.logical_and(ta, pk.asarray([True] * 4)).numpy(),
                                  a != 0)
    np.testing.assert_array_equal(pk.count_nonzero(ta).item(), 2)
    np.testing.assert_array_equal(pk.array_api.nonzero(tb)[0].numpy(), [2, 3])


def test_where_and_round():
    a = complex_sample(pk.c64, (2, 3), -5, 5)
    t = pk.asarray(a)
    cond = np.array([True, False, True])
    np.testing.assert_array_equal(pk.where(pk.asarray(cond), t, 0).numpy(),
                                  np.where(cond, a, 0))
    np.testing.assert_array_equal(pk.where(pk.asarray(cond), 1.5, t).numpy(),
                                  np.where(cond, 1.5, a))
    np.testing.assert_array_equal(pk.round(t).numpy(), np.round(a))


def test_parts_are_views_as_in_numpy():
    t = pk.asarray(np.array([1 + 2j, 3 - 4j], np.complex64))
    t.imag[0] = 9.0
    t.real[...] = pk.asarray([5.0, 6.0])
    assert t.numpy().tolist() == [5 + 9j, 6 - 4j]
    r = pk.asarray([1.5, -2.0])
    assert r.real is r and r.imag.numpy().tolist() == [0, 0]
    assert pk.real(r) is r and pk.conj(r).numpy().tolist() == [1.5, -2.0]
    np.testing.assert_allclose(pk.angle(pk.asarray([-1.0, 2.0])).numpy(), [np.pi, 0])
    np.testing.assert_allclose(pk.angle(t, deg=True).numpy(), np.angle(t.numpy(), deg=True),
                               rtol=1e-5)
    xp = pk.array_api
    assert xp.real(t).buffer is not t.buffer  # the namespace returns new arrays


@pytest.mark.parametrize("op, name", [
    (lambda z: z < z, "less"), (lambda z: z >= 1, "greater_equal"),
    (lambda z: pk.maximum(z, z), "maximum"), (lambda z: z // 2, "floor_divide"),
    (lambda z: z % 2, "remainder"), (lambda z: pk.floor(z), "floor"),
    (lambda z: pk.topk(z, 1), "topk"), (lambda z: pk.max(z), "max"),
    (lambda z: pk.argmin(z), "argmin"), (lambda z: pk.clip(z, 0, 1), "clip"),
    (lambda z: z & z, "bitwise_and"), (lambda z: pk.sigmoid(z), "sigmoid"),
])
def test_ops_without_complex_meaning_raise_naming_the_op(op, name):
    z = pk.asarray(np.array([1 + 1j, 2 - 1j], np.complex64))
    with pytest.raises(TypeError, match=f"^{name} is not defined for complex tensors \\(c64\\)"):
        op(z)
    assert z.numpy().tolist() == [1 + 1j, 2 - 1j]


@pk.fuse
def _axpy(a, x, y):
    return a * x + y


def test_fused_functions_of_complex_tensors_run_op_by_op():
    x = np.array([1 + 2j, -3j], np.complex64)
    y = np.array([0.5, 2 - 1j], np.complex64)
    result = _axpy(2.0, pk.asarray(x), pk.asarray(y))
    assert result.dtype == pk.c64
    assert_close(result.numpy(), 2.0 * x + y, ARITH_TOL[pk.c64])


def test_reciprocal_and_negative_powers_follow_pykerns_rule_with_signed_zeros():
    # the rule (complex_rule: numpy's reciprocal as conj(z) / |z|**2 scaled, so 1 / (x + 0j)
    # has imaginary part -0.0 and a later sqrt or log lands on numpy's side of the cut; other
    # negative integer powers 1 / z**n, nan + nan j at 0), computed on the parts with IEEE
    # arithmetic: values, nan parts and signs of zero
    for dtype in (np.complex64, np.complex128):
        with np.errstate(over="ignore"):  # 1e300 is inf in c64
            a = np.array([-1 + 0j, 2 + 0j, complex(-3, -0.0), 0j, 2 - 1j, 1e300 + 1e300j,
                          complex(np.inf, 0), complex(-0.0, 0.5), complex(0.0, -4.0)], dtype)
        z = pk.asarray(a)
        parts = complex_rule.parts(a)
        inverse = complex_rule.reciprocal(*parts)
        for _ in range(2):  # the first call and a replayed one
            for got, want, what in ((pk.reciprocal(z), inverse, "reciprocal"),
                                    (z ** -1, inverse, "z ** -1"),
                                    (z ** -2, complex_rule.negative_power(parts, 2), "z ** -2"),
                                    (z ** -3, complex_rule.negative_power(parts, 3), "z ** -3")):
                complex_rule.assert_parts_follow(got.numpy(), want, 1e-6, f"{dtype} {what}")
            # C99's sqrt (numpy's): real part >= +0, imaginary part of the argument's sign
            root = pk.sqrt(pk.reciprocal(z)).numpy()
            argument = np.empty_like(a)
            argument.real, argument.imag = inverse
            with np.errstate(all="ignore"):
                magnitude = np.sqrt(argument)  # its magnitudes only; the signs from C99's rule
            want = (np.abs(magnitude.real), np.copysign(np.abs(magnitude.imag), inverse[1]))
            complex_rule.assert_parts_follow(root, want, 1e-6, f"{dtype} sqrt(reciprocal)")


def test_small_parts_of_sin_and_sinh_keep_their_precision():
    # sin(x + iy) = sin x cosh y + i cos x sinh y: sinh of a small part was GLSL's
    # (e^y - e^-y) / 2 on Vulkan, so sin(1e-30j) was 3e-8j and sinh(-0.0 + 0j) lost its sign
    a = np.array([1e-30j, 1e-3 + 1e-5j, complex(-0.0, 0.0), 1e-6 - 0.5j], np.complex64)
    z = pk.asarray(a)
    for got, want in ((pk.sin(z), np.sin(a)), (pk.sinh(z), np.sinh(a)), (pk.tan(z), np.tan(a))):
        got = got.numpy()
        np.testing.assert_allclose(got.real, want.real, rtol=2e-6, atol=0)
        np.testing.assert_allclose(got.imag, want.imag, rtol=2e-6, atol=0)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
