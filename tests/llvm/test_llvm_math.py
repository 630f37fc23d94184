"""Math functions on the host backend (LLVM intrinsics and the C library) against the
interpreter (numpy's): correctly rounded ones exactly, the others within a few ULP (both are
CPU math libraries of at most a few ULP error; Vulkan's bounds, docs/testing.md, are far looser)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from differential import check

import pykern as pk
import pykern.llvm

rng = np.random.default_rng(5)

# (name, the kernel expression's function, the domain of its inputs)
APPROX = [
    ("exp", pk.exp, (-20, 20)), ("exp2", pk.exp2, (-20, 20)), ("log", pk.log, (1e-3, 1e3)),
    ("log2", pk.log2, (1e-3, 1e3)), ("sin", pk.sin, (-10, 10)), ("cos", pk.cos, (-10, 10)),
    ("tan", pk.tan, (-1.5, 1.5)), ("asin", pk.asin, (-1, 1)), ("acos", pk.acos, (-1, 1)),
    ("atan", pk.atan, (-50, 50)), ("sinh", pk.sinh, (-5, 5)), ("cosh", pk.cosh, (-5, 5)),
    ("tanh", pk.tanh, (-5, 5)), ("erf", pk.erf, (-3, 3)), ("rsqrt", pk.rsqrt, (1e-3, 1e3)),
]
EXACT = [("sqrt", pk.sqrt), ("floor", pk.floor), ("ceil", pk.ceil), ("trunc", pk.trunc),
         ("round", pk.round), ("abs", abs)]
RTOL = {pk.f16: 2e-3, pk.f32: 2e-6, pk.f64: 1e-14}


def one_argument_kernel(fn):
    @pk.kernel
    def apply(x: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[i] = fn(x[i])
    return apply


@pytest.mark.parametrize("t", [pk.f16, pk.f32, pk.f64], ids=lambda t: t.name)
@pytest.mark.parametrize("name, fn, domain", APPROX, ids=[a[0] for a in APPROX])
def test_transcendental_functions_within_a_few_ulp(name, fn, domain, t):
    x = rng.uniform(*domain, 400).astype(t.numpy)
    check(one_argument_kernel(fn), x.size, x, np.zeros_like(x), rtol=RTOL[t], atol=1e-30)


@pytest.mark.parametrize("t", [pk.f16, pk.f32, pk.f64], ids=lambda t: t.name)
@pytest.mark.parametrize("name, fn", EXACT, ids=[e[0] for e in EXACT])
def test_correctly_rounded_functions_exactly(name, fn, t):
    x = np.concatenate([rng.uniform(-50, 50, 300), [0.5, 1.5, 2.5, -0.5, -2.5, -0.0, np.inf,
                                                    -np.inf, np.nan, 1e-300]]).astype(t.numpy)
    if name == "sqrt":
        x = np.abs(x)
    check(one_argument_kernel(fn), x.size, x, np.zeros_like(x))


def test_two_and_three_argument_functions_and_predicates():
    @pk.kernel
    def many(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:, :], flags: pk.bool_[:, :]):
        i = pk.global_id(0)
        out[i, 0] = math.atan2(x[i], y[i])
        out[i, 1] = abs(x[i]) ** y[i]
        out[i, 2] = pk.fma(x[i], y[i], 1.0)
        out[i, 3] = math.copysign(x[i], y[i])
        out[i, 4] = pk.clamp(x[i], -1.0, 1.0)
        flags[i, 0] = pk.isnan(x[i] * y[i])
        flags[i, 1] = pk.isinf(x[i] * y[i])

    x = np.concatenate([rng.uniform(-5, 5, 200), [np.inf, np.nan, 0.0, 1e30]]).astype(np.float32)
    y = np.concatenate([rng.uniform(-5, 5, 200), [0.0, 1.0, np.inf, 1e30]]).astype(np.float32)
    check(many, x.size, x, y, np.zeros((x.size, 5), np.float32),
          np.zeros((x.size, 2), bool), rtol=2e-6, atol=1e-30)


# f32 tanh from the host's f32 prelude (pykern/mathlib/prelude_f32.py): over the whole f32
# range, within 1 ULP of the exact value (numpy's f64 tanh rounded to f32), with every special
# value (0, -0, +-inf, NaN, tiny arguments, where it rounds to +-1) exact
def test_f32_tanh_within_one_ulp_of_exact_everywhere():
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45, 9.0, 9.1, 10.0,
                -10.5, 0.5, -0.49999]
    body = [rng.uniform(-12.0, 12.0, 100_000), rng.uniform(-1e-3, 1e-3, 100_000)]
    x = np.concatenate([*body, specials]).astype(np.float32)
    got = np.zeros_like(x)  # on the host only: numpy's own f32 tanh is 1 ULP off at times
    pykern.llvm.launch(one_argument_kernel(pk.tanh), x.size, x, got)
    exact = np.tanh(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
    numbers = ~np.isnan(exact)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(exact[numbers]))  # -0.0
    ulps = np.abs(got[numbers].view(np.int32).astype(np.int64)
                  - exact[numbers].view(np.int32))
    assert ulps.max() <= 1
    assert np.count_nonzero(ulps) <= x.size // 10_000  # off by one only next to a tie
