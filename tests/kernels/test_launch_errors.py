"""Bad launches raise pk.LaunchError naming the parameter, before anything runs; afterwards
existing tensors are intact and the next launch works."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


@pk.kernel
def scale(a: pk.f32, x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i]


@pk.kernel
def fill_u32(v: pk.u32, out: pk.u32[:]):
    out[pk.global_id(0)] = v


@pytest.fixture
def tensors():
    x = np.arange(100, dtype=np.float32)
    X, O = pk.asarray(x), pk.asarray(np.full(100, -1.0, np.float32))
    return x, X, O


def assert_intact_and_working(x, X, O):
    np.testing.assert_array_equal(X.numpy(), x)
    np.testing.assert_array_equal(O.numpy(), np.full(100, -1.0, np.float32))
    scale[100](2.0, X, O)
    np.testing.assert_array_equal(O.numpy(), 2 * x)


@pytest.mark.parametrize("args, words", [
    ((2.0, "X"), "takes 3 argument(s) (a, x, out), 2 given"),
    ((2.0, "X", "O", "O"), "takes 3 argument(s)"),
    (("X", "X", "O"), "parameter 'a' (f32) expects a number, got a pk.Tensor"),
    ((2.0, 3.0, "O"), "parameter 'x' expects pk.f32[:], got a float"),
    ((2.0, np.zeros(100, np.float64), "O"), "parameter 'x' expects pk.f32[:], got a numpy array of "
                                            "dtype float64"),
    ((2.0, np.zeros((10, 10), np.float32), "O"), "with 2 dimension(s)"),
    ((2.0, "X", pk.zeros(100, pk.i32)), "parameter 'out' expects pk.f32[:], got a pk.Tensor of "
                                        "dtype i32"),
    ((2.0, "X", [1.0, 2.0]), "parameter 'out' expects pk.f32[:], got a list"),
])
def test_bad_arguments(tensors, args, words):
    x, X, O = tensors
    args = tuple({"X": X, "O": O}.get(a, a) if isinstance(a, str) else a for a in args)
    with pytest.raises(pk.LaunchError) as info:
        scale[100](*args)
    assert words in str(info.value)
    assert str(info.value).startswith("scale")
    assert_intact_and_working(x, X, O)


@pytest.mark.parametrize("value, words", [
    (-1, "-1 is out of range 0..4294967295"),
    (2**32, "out of range"),
    (1.5, "expects an integer, got 1.5"),
    ("3", "expects a number"),
])
def test_scalar_range_and_kind(value, words):
    out = pk.zeros(4, pk.u32)
    with pytest.raises(pk.LaunchError, match="parameter 'v' \\(u32\\)") as info:
        fill_u32[4](value, out)
    assert words in str(info.value)
    fill_u32[4](np.uint32(7), out)
    np.testing.assert_array_equal(out.numpy(), [7, 7, 7, 7])


@pytest.mark.parametrize("grid", [(-1,), (1, 2, 3, 4), 2.5, (2**31,), "8", ()])
def test_bad_grid(tensors, grid):
    x, X, O = tensors
    with pytest.raises(pk.LaunchError, match="grid"):
        scale[grid if grid != (-1,) else -1](2.0, X, O)
    assert_intact_and_working(x, X, O)


def test_compile_error_then_next_launch_works(tensors):
    x, X, O = tensors

    @pk.kernel
    def broken(x: pk.f32[:]):
        x[0] = x  # an array used as a value

    with pytest.raises(pk.CompileError):
        broken[1](X)
    assert_intact_and_working(x, X, O)


def test_calling_without_grid_is_a_clear_error():
    with pytest.raises(TypeError, match=r"scale\[n\]"):
        scale(2.0, None, None)
