"""What the host backend does not lower yet is a located pk.CompileError naming the feature;
wrong arguments are a pk.LaunchError naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
import pykern.llvm


@pk.func
def waits():
    pk.barrier()


@pk.func
def shared_sum(v, buf):
    buf[pk.local_id(0)] = v
    pk.barrier()
    if pk.local_id(0) < 2:
        return 0  # a return before the end
    return buf[0] + buf[1]


@pk.func
def early_sum(v):
    if v < 0:
        return 0  # a return before the end
    return pk.subgroup_add(v)


def located(excinfo: pytest.ExceptionInfo, text: str, source: str) -> None:
    message = str(excinfo.value)
    assert __file__ in message.splitlines()[0], message
    assert text in message, message
    assert source in message, message  # the source line is shown
    assert "pykern/llvm" not in message


@pk.func
def pair_sum(v, buf):
    buf[pk.local_id(0)] = v
    pk.barrier()
    total = buf[0] + buf[1]
    pk.barrier()  # every invocation has read before the next call writes
    return total


def test_a_barrier_function_inside_expressions_runs_as_in_the_interpreter():
    def k(out: pk.i32[:]):
        buf = pk.shared(pk.i32, 4)
        i = pk.global_id(0)
        out[i] = 1 + pair_sum(i, buf) * pair_sum(pair_sum(2 * i, buf), buf)
        if pair_sum(i, buf) > 1:
            out[i] += 100
        for j in range(pair_sum(0, buf), pair_sum(3, buf)):
            out[i] += j

    host, reference = np.zeros(8, np.int32), np.zeros(8, np.int32)
    pykern.llvm.launch(pk.kernel(k, workgroup=(4,)), 8, host)
    pk.kernel(k, workgroup=(4,), interpret=True)[8](reference)
    np.testing.assert_array_equal(host, reference)
    assert reference.any()


@pytest.mark.parametrize("expression, where", [
    ("1 if i > 2 else pair_sum(i, buf)", "a conditional expression"),
    ("i > 2 or pair_sum(i, buf) > 0", "the right operand of 'and'/'or'"),
])
def test_a_barrier_function_that_runs_only_sometimes_is_refused(tmp_path, expression, where):
    source = tmp_path / "sometimes.py"
    source.write_text(f"""
import pykern as pk
from tests.llvm.test_llvm_errors import pair_sum

@pk.kernel(workgroup=(4,))
def k(out: pk.i32[:]):
    buf = pk.shared(pk.i32, 4)
    i = pk.global_id(0)
    out[i] = pk.i32({expression})
""")
    import importlib.util

    spec = importlib.util.spec_from_file_location("sometimes", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(pk.CompileError) as e:
        pykern.llvm.launch(module.k, 4, np.zeros(4, np.int32))
    message = str(e.value)
    assert str(source) in message.splitlines()[0] and "pair_sum(" in message, message
    assert f"a call of a @pk.func with pk.barrier() in {where}" in message, message


def test_an_early_return_in_a_barrier_function_is_refused():
    @pk.kernel(workgroup=(4,))
    def k(out: pk.i32[:]):
        buf = pk.shared(pk.i32, 4)
        total = shared_sum(pk.global_id(0), buf)
        out[pk.global_id(0)] = total

    with pytest.raises(pk.CompileError) as e:
        pykern.llvm.launch(k, 4, np.zeros(4, np.int32))
    located(e, "a 'return' before the end of a @pk.func with pk.barrier()", "return 0")


def test_an_early_return_in_a_subgroup_function_is_refused():
    @pk.kernel
    def k(x: pk.i32[:], out: pk.i32[:]):
        out[pk.global_id(0)] = early_sum(x[pk.global_id(0)])

    x = np.ones(8, np.int32)
    with pytest.raises(pk.CompileError) as e:
        pykern.llvm.launch(k, 8, x, x.copy())
    located(e, "a 'return' before the end of a @pk.func with pk.barrier() or a subgroup "
               "operation", "return 0")


def test_break_out_of_a_loop_with_a_barrier_is_refused():
    @pk.kernel(workgroup=(4,))
    def k(out: pk.i32[:]):
        for r in range(3):
            pk.barrier()
            if pk.local_id(0) == r:
                break
        out[pk.global_id(0)] = 1

    with pytest.raises(pk.CompileError) as e:
        pykern.llvm.launch(k, 4, np.zeros(4, np.int32))
    located(e, "'break' out of a loop that contains pk.barrier()", "break")


def test_wrong_arguments_name_the_parameter():
    @pk.kernel
    def copy(x: pk.f32[:], out: pk.f32[:]):
        out[pk.global_id(0)] = x[pk.global_id(0)]

    x = np.ones(4, np.float32)
    with pytest.raises(pk.LaunchError, match="'out'"):
        pykern.llvm.launch(copy, 4, x, [0.0] * 4)
    frozen = x.copy()
    frozen.flags.writeable = False
    with pytest.raises(pk.LaunchError, match="'out'.*read-only"):
        pykern.llvm.launch(copy, 4, x, frozen)
    with pytest.raises(pk.LaunchError):
        pykern.llvm.launch(copy, -1, x, x.copy())


def test_scalars_that_do_not_fit_and_foreign_byte_order_are_refused():
    @pk.kernel
    def fill(v: pk.i8, out: pk.f32[:]):
        out[pk.global_id(0)] = pk.f32(v)

    out = np.zeros(4, np.float32)
    with pytest.raises(pk.LaunchError, match="'v'"):
        pykern.llvm.launch(fill, 4, 300, out)
    with pytest.raises(pk.LaunchError, match="'out'"):
        pykern.llvm.launch(fill, 4, 3, out.astype(">f4"))
