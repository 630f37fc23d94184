"""A bad argument of an interpreted launch (`@pk.kernel(interpret=True)`) is a `pk.LaunchError`
naming the parameter, raised by the JIT layer before anything runs: the arrays and tensors
given are left as they were, and the next launch works. (The interpreter backend itself raises
no user-facing error; tests/test_layering.py checks that from the source.)"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

import pykern as pk


@pk.kernel(interpret=True)
def scale_and_shift(out: pk.f32[:], t: pk.f32[:], x: pk.f32[:], a: pk.i32):
    i = pk.global_id(0)
    out[i] = x[i] * a
    t[i] = x[i] + a


N = 4
PARAMS = ("out", "t", "x", "a")


def read_only(n: int) -> np.ndarray:
    array = np.zeros(n, np.float32)
    array.flags.writeable = False
    return array


def struct_field(n: int) -> np.ndarray:
    """Float32 elements 8 bytes apart: a stride that is no whole number of elements."""
    return np.zeros(n, [("v", np.float32), ("pad", np.int16)])["v"]


def over_strided(n: int) -> np.ndarray:
    """A view whose owner's memory is not one block (as_strided makes such an owner)."""
    return np.lib.stride_tricks.as_strided(np.zeros(2 * n, np.float32), (n,), (8,))


def freed_tensor(n: int) -> pk.Tensor:
    tensor = pk.zeros(n, pk.f32)
    tensor.buffer.free()
    return tensor


# (parameter, its bad value, what the message says after naming it, as plain text)
BAD_ARGUMENTS: dict[str, tuple[str, Callable[[], object], str]] = {
    "dtype": ("x", lambda: np.zeros(N, np.float64), "expects pk.f32[:], got a numpy array of "
              "dtype float64"),
    "ndim": ("x", lambda: np.zeros((2, 2), np.float32), "expects pk.f32[:], got a numpy array "
             "of dtype float32 with 2 dimension"),
    "not an array": ("x", lambda: [0.0] * N, "expects pk.f32[:], got a list"),
    "byte order": ("x", lambda: np.zeros(N, ">f4"), "expects pk.f32[:], got a numpy array of "
                   "dtype >f4"),
    "strides not whole elements": ("x", lambda: struct_field(N),
                                   "the array's strides are not whole elements"),
    "memory not one block": ("x", lambda: over_strided(N),
                             "the array's memory is not one contiguous block"),
    "written but read-only": ("out", lambda: read_only(N), "is written by the kernel, but the "
                              "numpy array given for it is read-only"),
    "written view not whole elements": ("out", lambda: struct_field(N),
                                        "the array's strides are not whole elements"),
    "freed tensor": ("t", lambda: freed_tensor(N), "was given a tensor whose device memory "
                     "was freed"),
    "scalar out of range": ("a", lambda: 2**31, "(i32): 2147483648 is out of range"),
    "scalar not an integer": ("a", lambda: 1.5, "(i32) expects an integer, got 1.5"),
    "scalar not a number": ("a", lambda: "2", "(i32) expects a number, got a str"),
}


def good_arguments() -> list[object]:
    return [np.full(N, 7.0, np.float32), pk.full(N, 9.0, pk.f32),
            np.arange(N, dtype=np.float32), 3]


def assert_untouched(out: np.ndarray, t: pk.Tensor) -> None:
    np.testing.assert_array_equal(out, np.full(N, 7.0, np.float32))
    np.testing.assert_array_equal(t.numpy(), np.full(N, 9.0, np.float32))


def assert_the_next_launch_works() -> None:
    out, t, x, a = good_arguments()
    scale_and_shift[N](out, t, x, a)
    np.testing.assert_array_equal(out, np.arange(N) * 3.0)
    np.testing.assert_array_equal(t.numpy(), np.arange(N) + 3.0)  # type: ignore[union-attr]


@pytest.mark.parametrize("case", BAD_ARGUMENTS)
def test_a_bad_argument_names_its_parameter_and_changes_nothing(case):
    param, bad_value, says = BAD_ARGUMENTS[case]
    args = good_arguments()
    out, t = args[0], args[1]
    args[PARAMS.index(param)] = bad_value()
    named = f"scale_and_shift(): parameter '{param}'"
    with pytest.raises(pk.LaunchError,
                       match=f"^{re.escape(named)}.*{re.escape(says)}"):
        scale_and_shift[N](*args)
    assert_untouched(out, t)  # type: ignore[arg-type]
    assert_the_next_launch_works()


@pytest.mark.parametrize("call, says", [
    (lambda k, args: k(*args[:3]), "takes 4 argument(s) (out, t, x, a), 3 given"),
    (lambda k, args: k(*args[:2], a=1), "missing argument(s) for 'x'"),
    (lambda k, args: k(*args[:3], a=1, b=2), "unexpected keyword argument 'b'"),
    (lambda k, args: k(*args, 5), "takes 4 argument(s) (out, t, x, a), 5 given"),
    (lambda k, args: k(*args, out=args[0]), "multiple values for parameter 'out'"),
], ids=["too few", "missing", "unexpected keyword", "too many", "given twice"])
def test_a_bad_argument_list_names_the_parameters_and_changes_nothing(call, says):
    args = good_arguments()
    with pytest.raises(pk.LaunchError, match=re.escape(says)):
        call(scale_and_shift[N], args)
    assert_untouched(args[0], args[1])  # type: ignore[arg-type]
    assert_the_next_launch_works()


def test_a_good_launch_writes_numpy_views_and_tensors():
    """The arrays the cases above pass are valid in other shapes: a strided view and a tensor
    view are written in place."""
    base = np.zeros(2 * N, np.float32)
    t = pk.zeros(2 * N, pk.f32)
    scale_and_shift[N](base[::2], t[1::2], np.arange(N, dtype=np.float32), 2)
    np.testing.assert_array_equal(base, [0, 0, 2, 0, 4, 0, 6, 0])
    np.testing.assert_array_equal(t.numpy(), [0, 2, 0, 3, 0, 4, 0, 5])
