"""Compile errors: the right message, line and column, the source line with a caret, and no
compiler-internal names. Each kernel marks the offending line with `# error` and the test finds
the column of the offending text on it."""

from __future__ import annotations

import inspect
import traceback

import numpy as np
import pytest

import pykern as pk

A = np.zeros(4, np.float32)
I = np.zeros(4, np.int32)


def expect_error(fn, args, snippet: str, words: str, cls=pk.CompileError):
    """Compiles `fn` for `args` and checks the error names `words` at the column of `snippet`
    on the line marked `# error`."""
    lines, first = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if "# error" in line)
    line_no = first + offset
    col = lines[offset].index(snippet) + 1
    with pytest.raises(cls) as info:
        pk.kernel(fn).ir(*args)
    err = info.value
    text = str(err)
    file = inspect.getsourcefile(fn)
    assert text.startswith(f"{file}:{line_no}:{col}: "), text
    assert words in text, text
    assert err.line == line_no and err.col == col
    # the source line and a caret under the column
    src_line, caret = text.splitlines()[1:3]
    assert src_line == "    " + lines[offset].rstrip()
    assert caret == "    " + " " * (col - 1) + "^"
    for internal in ("pykern/frontend", "translator.py", "exprs.py", "Traceback"):
        assert internal not in text
    return err


def test_unsupported_construct_names_it():
    def k(out: pk.f32[:]):
        v = [1.0]  # error

    expect_error(k, (A,), "[1.0]", "list is not supported")


def test_undefined_name():
    def k(out: pk.f32[:]):
        out[0] = undefined_thing  # error  # noqa: F821

    expect_error(k, (A,), "undefined_thing", "name 'undefined_thing' is not defined")


def test_reassignment_with_other_type_points_at_first_definition():
    def k(out: pk.f32[:]):
        s = 0
        s = 1.5 * out[0]  # error

    err = expect_error(k, (A,), "s = 1.5", "cannot assign a f32 value to 's'", pk.KernelTypeError)
    assert f":{err.line - 1}:9" in str(err)  # where s got its type


def test_augmented_assignment_changing_type():
    def k(out: pk.f32[:]):
        n = 1
        n += 0.5  # error

    expect_error(k, (A,), "n += 0.5", "'n' has type i32", pk.KernelTypeError)


def test_wrong_number_of_indices():
    def k(out: pk.f32[:]):
        out[0, 1] = 1.0  # error

    expect_error(k, (A,), "out[0, 1]", "has 1 dimension(s) but 2", pk.KernelTypeError)


def test_float_index():
    def k(out: pk.f32[:]):
        out[1.5] = 1.0  # error

    expect_error(k, (A,), "1.5", "index must be an integer", pk.KernelTypeError)


def test_bitwise_on_floats():
    def k(out: pk.f32[:]):
        out[0] = out[1] & 3  # error

    expect_error(k, (A,), "out[1] & 3", "needs integer or bool operands", pk.KernelTypeError)


def test_return_value():
    def k(out: pk.f32[:]):
        return 1  # error

    expect_error(k, (A,), "return 1", "cannot return a value")


def test_for_over_non_range():
    def k(out: pk.f32[:]):
        for x in out:  # error  # noqa: B007
            pass

    expect_error(k, (A,), "out:", "must iterate over range")


def test_calling_an_unknown_function():
    def k(out: pk.f32[:]):
        out[0] = print(1)  # error

    expect_error(k, (A,), "print(1)", "'print' cannot be called inside a kernel")


def test_global_id_dimension_must_be_constant():
    def k(out: pk.f32[:], d: pk.i32):
        out[0] = pk.global_id(d)  # error

    expect_error(k, (A, 0), "d)", "must be a constant 0, 1 or 2")


def test_use_before_assignment():
    def k(out: pk.i32[:]):
        out[0] = later  # error
        later = 1  # noqa: F841

    expect_error(k, (I,), "later", "used before it is assigned")


def test_array_as_value():
    def k(out: pk.f32[:]):
        x = out  # error  # noqa: F841

    expect_error(k, (A,), "out", "cannot be used as a value", pk.KernelTypeError)


def test_constant_out_of_range():
    def k(out: pk.u32[:]):
        out[0] = out[1] + -1  # error

    expect_error(k, (np.zeros(2, np.uint32),), "out[1] + -1", "does not fit in u32",
                 pk.KernelTypeError)


def test_missing_annotation():
    def k(out):  # error
        pass

    expect_error(k, (A,), "out", "parameter 'out' has no annotation", pk.KernelTypeError)


def test_capturing_an_unsupported_object():
    table = {"a": 1}

    def k(out: pk.f32[:]):
        out[0] = table  # error

    expect_error(k, (A,), "table", "kernel can only capture numbers", pk.KernelTypeError)


def test_while_else():
    def k(out: pk.f32[:]):
        while out[0] > 0:  # error
            pass
        else:
            pass

    expect_error(k, (A,), "while", "while ... else is not supported")


def test_error_is_raised_without_internal_frames():
    def k(out: pk.f32[:]):
        out[0] = {}  # error

    with pytest.raises(pk.CompileError) as info:
        pk.kernel(k).ir(A)
    frames = [f.filename for f in traceback.extract_tb(info.tb)]
    assert not any("/pykern/frontend/" in f for f in frames), frames
