"""Array arguments (offsets, strides, views, bools), out-of-bounds reports, launch checks."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from interp_support import interpret, kernel_ir

import pykern as pk
from pykern import ir
from pykern.frontend.translator import grid_mask
from pykern.interpret import ArrayArg, compile_python, run


def line_of(fn, text: str) -> int:
    """The file line of the first line of `fn` containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def copy_scaled(x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = x[i] * 2.0


def test_strided_views_read_and_write_in_place():
    base = np.arange(20, dtype=np.float32)
    out_base = np.zeros(20, np.float32)
    interpret(copy_scaled, 10, base[::2], out_base[1::2])
    np.testing.assert_array_equal(out_base[1::2], base[::2] * 2)
    assert not out_base[::2].any()  # the elements between were not touched


def test_explicit_array_arg_offset_and_negative_stride():
    data = np.arange(10, dtype=np.float32)
    out = np.zeros(10, np.float32)
    k = kernel_ir(copy_scaled)
    run(k, (4, 1, 1), {"x": ArrayArg(data, offset=9, shape=(4,), strides=(-3,)),
                       "out": ArrayArg(out, offset=2, shape=(4,), strides=(1,))}, {})
    assert list(out) == [0, 0, 18, 12, 6, 0, 0, 0, 0, 0]


def transpose(a: pk.i32[:, :], out: pk.i32[:, :]):
    i = pk.global_id(0)
    j = pk.global_id(1)
    out[j, i] = a[i, j] + a.shape[0] * 1000 + out.shape[1] * 100000


def test_2d_views_with_shape():
    a = np.arange(6 * 8, dtype=np.int32).reshape(6, 8)[1:, ::2]  # (5, 4), strides (8, 2)
    out = np.zeros((4, 5), np.int32)
    interpret(transpose, (5, 4), a, out, workgroup=(4, 4, 1))
    np.testing.assert_array_equal(out, a.T + 5 * 1000 + 5 * 100000)


def bools(x: pk.bool_[:], y: pk.bool_[:], out: pk.bool_[:], n: pk.i32[:]):
    i = pk.global_id(0)
    out[i] = (x[i] and not y[i]) or (x[i] ^ y[i])
    n[i] = int(x[i]) + int(y[i]) + int(min(x[i], y[i])) * 10 + int(max(x[i], y[i])) * 100


def test_bool_arrays():
    x = np.array([False, False, True, True])
    y = np.array([False, True, False, True])
    out, n = np.zeros(4, bool), np.zeros(4, np.int32)
    interpret(bools, 4, x, y, out, n)
    assert list(out) == list((x & ~y) | (x ^ y))
    assert list(n) == [0, 101, 101, 112]


def reads_past(x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    v = x[i + 1]
    out[i] = v


def test_out_of_bounds_load_names_kernel_line_array_index_shape():
    x, out = np.zeros(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(pk.KernelIndexError) as info:
        interpret(reads_past, 4, x, out)
    message = str(info.value)
    line = line_of(reads_past, "x[i + 1]")
    assert f"{__file__}:{line}:" in message
    assert "'reads_past'" in message and "'x'" in message
    assert "(4,)" in message and "shape (4,)" in message
    assert "v = x[i + 1]" in message  # the source line
    assert isinstance(info.value, IndexError)
    assert list(out[:3]) == [0, 0, 0]  # invocations before the failing one ran


def writes_past(out: pk.i32[:, :], k: pk.i32):
    i = pk.global_id(0)
    out[i, k] = 1


def test_out_of_bounds_store_and_negative_index():
    out = np.zeros((3, 4), np.int32)
    with pytest.raises(pk.KernelIndexError) as info:
        interpret(writes_past, 3, out, 5)  # (0, 5), (1, 5) are inside the buffer, (2, 5) not
    message = str(info.value)
    assert f":{line_of(writes_past, 'out[i, k] = 1')}:" in message
    assert "index (2, 5) of 'out' (shape (3, 4))" in message
    with pytest.raises(pk.KernelIndexError, match=r"index \(0, -1\)"):
        interpret(writes_past, 3, np.zeros((3, 4), np.int32), -1)  # never wraps around


def test_the_index_is_checked_against_the_buffer_not_the_shape():
    # as on the GPU, only an address outside the buffer is caught: a view's neighbours are
    # in the buffer (this is what the GPU reads, too)
    base = np.arange(8, dtype=np.float32)
    out = np.zeros(3, np.float32)
    interpret(reads_past, 3, base[2:5], out)
    assert list(out) == [3, 4, 5]  # x[3] is base[5]


def test_launch_errors():
    """The interpreter's own API refuses bad arguments of internal callers with TypeError or
    ValueError (a user's launch is checked before, see test_interpret_launch_errors.py)."""
    k = kernel_ir(copy_scaled)
    x = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="missing \\['out'\\]"):
        run(k, (4, 1, 1), {"x": x}, {})
    with pytest.raises(ValueError, match="'out' must hold f32"):
        run(k, (4, 1, 1), {"x": x, "out": np.zeros(4, np.float64)}, {})
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(4, np.float32)
        ro.flags.writeable = False
        run(k, (4, 1, 1), {"x": x, "out": ro}, {})
    with pytest.raises(ValueError, match="grid"):
        run(k, (4, -1, 1), {"x": x, "out": x}, {})
    scalar = kernel_ir(writes_past)
    with pytest.raises(ValueError, match="does not fit in i32"):
        run(scalar, (1, 1, 1), {"out": np.zeros((1, 1), np.int32)}, {"k": 2**31})


def maybe_assigned_ir() -> ir.Kernel:
    """`i = global_id(0); if flag[i] > 0: y = 2.5; out[i] = y` as IR: the frontend refuses
    this source (y may be unassigned), so it is built by hand."""
    i32, f32, b = pk.i32, pk.f32, pk.bool_
    i = ir.LocalRef(name="i", type=i32)
    flag_i = ir.ArrayLoad(array="flag", indices=(i,), type=i32)
    body = (grid_mask(ir.UNKNOWN_LOC, (0,)),
            ir.Assign(name="i", value=ir.Builtin(kind=ir.BuiltinKind.GLOBAL_ID, dim=0, type=i32)),
            ir.If(cond=ir.BinOp(op=ir.BinOpKind.GT, lhs=flag_i, rhs=ir.Const(value=0, type=i32),
                                type=b),
                  body=(ir.Assign(name="y", value=ir.Const(value=2.5, type=f32)),)),
            ir.Store(array="out", indices=(i,), value=ir.LocalRef(name="y", type=f32)))
    return ir.Kernel(name="maybe_assigned",
                     params=(ir.Param(name="flag", type=pk.i32[:], access=ir.Access.READ),
                             ir.Param(name="out", type=pk.f32[:], access=ir.Access.WRITE)),
                     locals=(ir.Local(name="i", type=i32), ir.Local(name="y", type=f32)),
                     body=body, workgroup=(64, 1, 1))


def test_a_local_read_before_assignment_is_zero():
    # the frontend makes such a read a compile error; locals still start at zero, so IR that
    # reaches the interpreter another way runs deterministically
    out = np.full(2, 7, np.float32)
    run(maybe_assigned_ir(), (2, 1, 1), {"flag": np.array([1, 0], np.int32), "out": out}, {})
    assert list(out) == [2.5, 0.0]


def test_source_is_readable_python_and_cached_per_kernel_object():
    k = kernel_ir(copy_scaled)
    compiled = compile_python(k)
    assert compiled is compile_python(k)
    assert compile_python(kernel_ir(copy_scaled)) is not compiled  # by identity
    src = compiled.source
    assert "def invocation(" in src and "a_out[" in src and "# line" in src
    compile(src, "<check>", "exec")
