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


# ---------------------------------------------------------------- no raw Python error escapes


def test_string_arithmetic_is_a_located_error():
    def plus(out: pk.f32[:]):
        out[0] = "a" + 1  # error

    def negate(out: pk.f32[:]):
        out[0] = -"a"  # error

    def absolute(out: pk.f32[:]):
        out[0] = abs("s")  # error

    expect_error(plus, (A,), '"a" + 1', "can only concatenate str")
    expect_error(negate, (A,), '-"a"', "bad operand type for unary -")
    expect_error(absolute, (A,), 'abs("s")', "bad operand type for abs()")


def test_an_unexpected_exception_becomes_an_error_at_the_innermost_node(monkeypatch):
    # fault injection: a translation step that fails in a way no check foresaw
    from pykern.frontend.exprs import ExprTranslator

    def broken(self, node):
        raise ZeroDivisionError("injected")

    monkeypatch.setattr(ExprTranslator, "visit_Compare", broken)

    def k(out: pk.f32[:]):
        out[0] = 1.0 if out[1] < 2.0 else 0.0  # error

    err = expect_error(k, (A,), "out[1] < 2.0", "ZeroDivisionError: injected")
    assert "comparison" in str(err)


@pk.func
def takes_a_string_sum(x):
    return x + "s"  # error


@pk.func
def passes_it_on(x):
    return takes_a_string_sum(x) * 2.0  # caller


def test_an_error_inside_a_device_function_names_its_call_sites():
    def k(out: pk.f32[:]):
        out[0] = passes_it_on(out[1])  # kernel call

    with pytest.raises(pk.KernelTypeError) as info:
        pk.kernel(k).ir(A)
    err, text = info.value, str(info.value)
    file = inspect.getsourcefile(k)

    def where(fn, marker, snippet):
        lines, first = inspect.getsourcelines(fn)
        k = next(i for i, line in enumerate(lines) if marker in line)
        return first + k, lines[k].index(snippet) + 1

    inner = where(takes_a_string_sum, "# error", 'x + "s"')
    middle = where(passes_it_on, "# caller", "takes_a_string_sum(x)")
    outer = where(k, "# kernel call", "passes_it_on(out[1])")
    assert (err.line, err.col) == inner
    assert text.startswith(f"{file}:{inner[0]}:{inner[1]}: the string 's'")
    assert err.call_sites == ((file, *middle), (file, *outer))
    assert f"\ncalled from {file}:{middle[0]}:{middle[1]}\n" in text
    assert f"\ncalled from {file}:{outer[0]}:{outer[1]}\n" in text
    assert text.index(f":{middle[0]}:") < text.index(f":{outer[0]}:")  # innermost first
    assert "passes_it_on(out[1])" in text and "^" in text.splitlines()[-1]


def test_reassigning_an_array_parameter_points_at_the_assignment():
    def k(out: pk.f32[:], x: pk.f32[:]):
        i = pk.global_id(0)
        out[i] = 1.0
        x = out  # error  # noqa: F841

    expect_error(k, (A, A), "x = out", "array parameter 'x' cannot be re-assigned")


def test_reassigning_a_constexpr_parameter_points_at_the_assignment():
    def k(out: pk.f32[:], n: pk.constexpr):
        out[0] = 1.0
        n += 1  # error

    expect_error(k, (A, 3), "n += 1", "constexpr parameter 'n' cannot be re-assigned")


# ---------------------------------------------------------------- pk.kernel of a non-function


class Holder:
    def method(self, out: pk.f32[:]):
        out[0] = 1.0


@pytest.mark.parametrize("obj, words", [
    (5, "got int 5"),
    (len, "got the builtin len"),
    (Holder, "got the class Holder"),
    (Holder().method, "got the bound method Holder.method"),
    (pk.kernel(Holder.method), "got Kernel"),
])
def test_kernel_of_something_that_is_not_a_function(obj, words):
    with pytest.raises(TypeError) as info:
        pk.kernel(obj)
    assert str(info.value).startswith("@pk.kernel needs a function defined with def, ")
    assert words in str(info.value)
    with pytest.raises(TypeError, match="needs a function defined with def"):
        pk.kernel(workgroup=(64,))(obj)


def test_kernel_of_a_lambda_is_a_located_error():
    line = inspect.currentframe().f_lineno + 1
    fn = lambda out: None  # noqa: E731
    with pytest.raises(pk.CompileError) as info:
        pk.kernel(fn)
    text = str(info.value)
    col = inspect.getsource(fn).index("lambda out") + 1
    assert text.startswith(f"{__file__}:{line}:{col}: @pk.kernel needs a function defined "
                           "with def, not a lambda"), text
    assert text.splitlines()[2] == "    " + " " * (col - 1) + "^"


# ---------------------------------------------------------------- private memory


def test_private_memory_beyond_the_limit_is_refused_at_the_declaration():
    def k(out: pk.f32[:]):
        a = pk.local(pk.f32, (2**12,))  # 16 KiB: exactly the limit
        a[0] = 1.0
        b = pk.local(pk.u8, 1)  # error
        b[0] = 2
        out[0] = a[0] + b[0]

    err = expect_error(k, (A,), "b = pk.local", "pk.local arrays would take 16,385 bytes per "
                                                "invocation here, more than the limit of 16,384")

    def huge(out: pk.f32[:]):
        buf = pk.local(pk.f32, (2**30,))  # error
        out[0] = buf[0]

    expect_error(huge, (A,), "buf = pk.local", "4,294,967,296 bytes per invocation")
    assert err.line


def test_private_memory_up_to_the_limit_runs():
    @pk.kernel
    def k(out: pk.f32[:], n: pk.i32):
        i = pk.global_id(0)
        a = pk.local(pk.f32, (32, 64))  # 8 KiB
        b = pk.local(pk.i32, 2048)  # 8 KiB: 16 KiB together
        a[n, n] = 1.5 * i
        b[n] = i
        out[i] = a[n, n] + b[n]

    out = np.zeros(8, np.float32)
    k[8](out, 31)
    np.testing.assert_array_equal(out, 2.5 * np.arange(8, dtype=np.float32))
