"""One generic kernel specialised to every integer and float dtype, compared with numpy's
wrapping (integers) and rounding (floats) arithmetic on random and edge values."""

from __future__ import annotations

import numpy as np
import pytest
from interp_support import kernel_ir

import pykern as pk
from pykern.lang import dtypes as dt
from pykern.interpret import compile_python

rng = np.random.default_rng(3)
N = 400


def ops(a: pk.Array, b: pk.Array, add: pk.Array, sub: pk.Array, mul: pk.Array, fdiv: pk.Array,
        mod: pk.Array, lo: pk.Array, hi: pk.Array, neg: pk.Array):
    i = pk.global_id(0)
    add[i] = a[i] + b[i]
    sub[i] = a[i] - b[i]
    mul[i] = a[i] * b[i]
    fdiv[i] = a[i] // b[i]
    mod[i] = a[i] % b[i]
    lo[i] = min(a[i], b[i])
    hi[i] = max(a[i], b[i])
    neg[i] = -a[i]


def run_ops(dtype: dt.DType, a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    names = ["a", "b", "add", "sub", "mul", "fdiv", "mod", "lo", "hi", "neg"]
    kernel = kernel_ir(ops, params={n: dtype[:] for n in names})
    outs = [np.zeros_like(a) for _ in names[2:]]
    compile_python(kernel).run(a.size, dict(zip(names, [a, b, *outs], strict=True)), {})
    return outs


def int_values(dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    edges = np.array([0, 1, 2, 3, info.max, info.max - 1, info.min, info.min + 1]
                     + ([-1, -2, -3] if info.min else []), dtype)
    return np.concatenate([edges, rng.integers(info.min, info.max, N, dtype, endpoint=True)])


@pytest.mark.parametrize("dtype", [dt.i8, dt.i16, dt.i32, dt.i64, dt.u8, dt.u16, dt.u32, dt.u64],
                         ids=lambda d: d.name)
def test_integer_ops_match_numpy(dtype):
    a = int_values(dtype.numpy)
    b = np.concatenate([np.roll(a[:11], 3), a[11:][::-1]])
    got = run_ops(dtype, a, b)
    with np.errstate(all="ignore"):  # numpy's // and % by zero give 0, as we define them
        want = [a + b, a - b, a * b, a // b, a % b, np.minimum(a, b), np.maximum(a, b), -a]
    for g, w, name in zip(got, want, ["+", "-", "*", "//", "%", "min", "max", "neg"],
                          strict=True):
        np.testing.assert_array_equal(g, w, err_msg=f"{dtype.name} {name}")


@pytest.mark.parametrize("dtype", [dt.f16, dt.f32, dt.f64], ids=lambda d: d.name)
def test_float_ops_match_numpy(dtype):
    t = dtype.numpy
    special = np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, 7, -7, 0.5], t)
    a = np.concatenate([special, rng.uniform(-1e3, 1e3, N).astype(t)])
    b = np.concatenate([np.roll(special, 4), rng.uniform(-50, 50, N).astype(t)])
    got = run_ops(dtype, a, b)
    with np.errstate(all="ignore"):  # // and % are Python's, as numpy computes them
        want = [a + b, a - b, a * b, a // b, a % b, np.minimum(a, b), np.maximum(a, b), -a]
    for g, w, name in zip(got, want, ["+", "-", "*", "//", "%", "min", "max", "neg"],
                          strict=True):
        np.testing.assert_array_equal(g, w, err_msg=f"{dtype.name} {name}")
