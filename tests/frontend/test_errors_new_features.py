"""Located errors for misuse of tuples, pk.unravel, and compile-time dtypes and functions."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from tests.frontend.test_errors import A, expect_error


@pk.func
def square(v):
    return v * v


F32_TYPE = pk.f32


def test_dtype_constexpr_used_as_a_value():
    def k(out: pk.f32[:], t: pk.constexpr):
        out[0] = t + 1.0  # error

    expect_error(k, (A, pk.f32), "t + 1.0", "'t' is the type f32, not a value",
                 pk.KernelTypeError)


def test_func_constexpr_used_as_a_value():
    def k(out: pk.f32[:], op: pk.constexpr):
        out[0] = op  # error

    expect_error(k, (A, square), "op", "'op' is a device function, not a value: call it",
                 pk.KernelTypeError)


def test_global_dtype_used_as_a_value():
    def k(out: pk.f32[:]):
        out[0] = F32_TYPE * 2.0  # error

    expect_error(k, (A,), "F32_TYPE", "'F32_TYPE' is the type f32", pk.KernelTypeError)


def test_dtype_attribute_used_as_a_value():
    def k(out: pk.f32[:]):
        t = out.dtype  # error

    expect_error(k, (A,), "out.dtype", "'out.dtype' is a type, not a value", pk.KernelTypeError)


def test_constexpr_of_an_unsupported_object_is_a_launch_error():
    @pk.kernel
    def k(out: pk.f32[:], op: pk.constexpr):
        out[0] = op(1.0)

    with pytest.raises(pk.LaunchError, match="constexpr parameter 'op' expects a number, bool, "
                                             "str, pykern dtype or @pk.func"):
        k[1](np.zeros(1, np.float32), np.sqrt)
    with pytest.raises(TypeError, match="pk.constexpr takes"):
        pk.constexpr([1, 2])
