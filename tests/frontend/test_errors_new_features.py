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


def test_dtype_compared_with_a_number():
    def k(out: pk.f32[:], t: pk.constexpr):
        if t == 3:  # error
            out[0] = 1.0

    expect_error(k, (A, pk.f32), "t == 3", "a dtype or device function compares only with "
                 "another one", pk.KernelTypeError)


def test_constexpr_of_an_unsupported_object_is_a_launch_error():
    @pk.kernel
    def k(out: pk.f32[:], op: pk.constexpr):
        out[0] = op(1.0)

    with pytest.raises(pk.LaunchError, match="constexpr parameter 'op' expects a number, bool, "
                                             "str, tuple of numbers, pykern dtype or @pk.func"):
        k[1](np.zeros(1, np.float32), np.sqrt)
    with pytest.raises(TypeError, match="pk.constexpr takes"):
        pk.constexpr([1, 2])


# ---------------------------------------------------------------- tuples

I4 = np.zeros(4, np.int32)


@pk.func
def two(a):
    return a, a + 1


@pk.func
def lengths_differ(a):
    if a > 0:
        return a, a
    return a, a, a  # error


@pk.func
def types_differ(a):
    if a > 0:
        return a, 1.5
    return a, a  # error


@pk.func
def scalar_then_tuple(a):
    if a > 0:
        return a
    return a, a  # error


@pk.func
def tuple_then_bare(a):
    if a > 0:
        return a, a
    return  # error


def expect_func_error(fn, line_marker: str, words: str, cls=pk.CompileError):
    """A kernel calling `fn` fails at the line of `fn` holding `line_marker`, and the error
    names the call too."""
    import inspect

    @pk.kernel
    def k(out: pk.i32[:]):
        out[0], out[1] = fn(out[2])

    with pytest.raises(cls) as info:
        k.ir(I4)
    text = str(info.value)
    lines, first = inspect.getsourcelines(fn.__wrapped__)
    line_no = first + next(i for i, line in enumerate(lines) if line_marker in line)
    assert text.startswith(f"{inspect.getsourcefile(fn.__wrapped__)}:{line_no}:"), text
    assert words in text and "called from" in text, text


def test_tuple_returns_of_different_lengths():
    expect_func_error(lengths_differ, "# error", "returns a tuple of 2 elsewhere, of 3 here",
                      pk.KernelTypeError)


def test_tuple_returns_of_different_element_types():
    expect_func_error(types_differ, "# error", "returns f32 as element 1 of its tuple elsewhere, "
                                               "i32 here", pk.KernelTypeError)


def test_scalar_and_tuple_returns_mixed():
    expect_func_error(scalar_then_tuple, "# error", "returns i32 elsewhere, a tuple here",
                      pk.KernelTypeError)


def test_bare_return_in_a_function_returning_a_tuple():
    expect_func_error(tuple_then_bare, "# error", "returns a tuple elsewhere: every return needs "
                                                  "a value")


def test_unpacking_the_wrong_number_of_values():
    def k(out: pk.i32[:]):
        a, b, c = two(out[0])  # error

    expect_error(k, (I4,), "a, b, c", "cannot unpack a tuple of 2 into 3 target(s)",
                 pk.KernelTypeError)


def test_unpacking_a_single_value():
    def k(out: pk.i32[:]):
        a, b = out[0]  # error

    expect_error(k, (I4,), "a, b", "cannot unpack a single value into 2 targets",
                 pk.KernelTypeError)


def test_tuple_used_as_a_scalar():
    def k(out: pk.i32[:]):
        out[0] = two(out[1]) + 1  # error

    expect_error(k, (I4,), "two(out[1]) + 1", "a tuple of 2 cannot be used as a value here",
                 pk.KernelTypeError)


def test_tuple_stored_in_an_array():
    def k(out: pk.i32[:]):
        out[0] = (1, 2)  # error

    expect_error(k, (I4,), "out[0] = (1, 2)", "a tuple of 2 cannot be stored in an array element",
                 pk.KernelTypeError)


def test_tuple_variable_keeps_its_length():
    def k(out: pk.i32[:]):
        t = two(out[0])
        t = (1, 2, 3)  # error

    expect_error(k, (I4,), "t = (1, 2, 3)", "'t' holds a tuple of 2 since", pk.KernelTypeError)


def test_tuple_variable_keeps_its_element_types():
    def k(out: pk.i32[:], x: pk.f32[:]):
        t = (out[0], x[0])
        t = (x[1], x[0])  # error

    expect_error(k, (I4, A), "t = (x[1]", "element 0 of 't' has type i32 since",
                 pk.KernelTypeError)


def test_tuple_variable_cannot_take_a_scalar_and_back():
    def k(out: pk.i32[:]):
        t = out.shape
        t = 3  # error

    expect_error(k, (I4,), "t = 3", "'t' holds a tuple since", pk.KernelTypeError)

    def k2(out: pk.i32[:]):
        t = 3
        t = out.shape  # error

    expect_error(k2, (I4,), "t = out.shape", "'t' has type i32 since", pk.KernelTypeError)


def test_tuple_variable_cannot_become_a_loop_variable_or_be_declared():
    def k(out: pk.i32[:]):
        t = out.shape
        for t in range(3):  # error  # noqa: B007
            pass

    expect_error(k, (I4,), "t in", "'t' holds a tuple since", pk.KernelTypeError)

    def k2(out: pk.i32[:]):
        t = out.shape
        t: pk.i32  # error

    expect_error(k2, (I4,), "t: pk.i32", "'t' holds a tuple since", pk.KernelTypeError)


def test_tuple_variable_assigned_on_one_path_only():
    def k(out: pk.i32[:]):
        if out[0] > 0:
            s = (1, 2)
        a, b = s  # error

    expect_error(k, (I4,), "s  #", "'s' may be unassigned here: it is only assigned in the "
                                   "if-branch")


def test_indexing_a_called_tuple_needs_unpacking_first():
    def k(out: pk.i32[:]):
        out[0] = two(out[1])[0]  # error

    expect_error(k, (I4,), "two(out[1])", "unpack the tuple this call returns first")


def test_tuple_index_out_of_range():
    def k(out: pk.i32[:]):
        out[0] = out.shape[0] + pk.unravel(3, (2, 2))[2]  # error

    expect_error(k, (I4,), "2]", "index 2 is out of range for a tuple of 2")


def test_nested_unpacking_is_refused():
    def k(out: pk.i32[:]):
        (a, b), c = (1, 2), 3  # error

    expect_error(k, (I4,), "(1, 2)", "nested tuples are not supported")


def test_kernel_cannot_return_a_tuple():
    def k(out: pk.i32[:]):
        return 1, 2  # error

    expect_error(k, (I4,), "return", "a kernel cannot return a value")


def test_unravel_of_a_float():
    def k(out: pk.f32[:]):
        a, b = pk.unravel(out[0], (2, 2))  # error

    expect_error(k, (A,), "pk.unravel", "pk.unravel() takes integers", pk.KernelTypeError)


def test_unravel_of_a_float_shape():
    def k(out: pk.i32[:]):
        a, b = pk.unravel(out[0], (2, 2.5))  # error

    expect_error(k, (I4,), "(2, 2.5)", "the shape of pk.unravel() must be integers",
                 pk.KernelTypeError)


def test_ravel_of_mismatched_lengths():
    def k(out: pk.i32[:]):
        out[0] = pk.ravel((1, 2, 3), out.shape)  # error

    expect_error(k, (I4,), "pk.ravel", "pk.ravel() got an index of 3 for a shape of 1",
                 pk.KernelTypeError)


def test_array_indexed_by_a_tuple_of_the_wrong_length():
    def k(out: pk.i32[:, :]):
        out[pk.unravel(3, (2, 2, 2))] = 1  # error

    expect_error(k, (np.zeros((2, 2), np.int32),), "out[", "'out' has 2 dimension(s) but 3 "
                 "index(es) were given", pk.KernelTypeError)


def test_tuple_sliced_with_a_run_time_bound():
    def k(out: pk.i32[:]):
        a = out.shape[:out[0]]  # error

    expect_error(k, (I4,), "out[0]]", "a tuple is sliced with constant integers")


def test_tuple_plus_a_number():
    def k(out: pk.i32[:]):
        a = out.shape + 1  # error

    expect_error(k, (I4,), "out.shape + 1", "a tuple of 1 cannot be used as a value here",
                 pk.KernelTypeError)
