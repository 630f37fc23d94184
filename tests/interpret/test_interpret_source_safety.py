"""The generated Python never contains user text as it is: file names, function names, assert
messages and IR names with newlines, quotes or code in them run nothing and change nothing."""

from __future__ import annotations

import ast
import builtins
import importlib.util
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.lang import dtypes as dt
from pykern import ir
from pykern.interpret import compile_python, run

MARK = "pykern_injected"
# each line break Python's tokenizer knows, then code that leaves a mark if it ever runs
INJECTIONS = [f"{brk}__import__('builtins').{MARK} = 1{brk}#" for brk in ("\n", "\r", "\r\n")]


@pytest.fixture(autouse=True)
def no_mark():
    yield
    injected = hasattr(builtins, MARK)
    if injected:
        delattr(builtins, MARK)  # so the next test starts clean
    assert not injected, "text from the kernel ran as code"


def only_bind_and_constants(source: str) -> None:
    """The module defines `bind` and module constants, nothing else runs at its top level."""
    for node in ast.parse(source).body:
        assert isinstance(node, (ast.FunctionDef, ast.Assign)), ast.dump(node)[:200]
        if isinstance(node, ast.FunctionDef):
            assert node.name == "bind" or node.name.startswith("_atomic_")
        else:
            assert all(isinstance(t, ast.Name) and t.id.startswith("_k") for t in node.targets)


KERNEL_FILE = '''import pykern as pk


@pk.kernel(interpret=True)
def bump(x: pk.i32[:], by: pk.i32):
    i = pk.global_id(0)
    x[i] = x[i] + by
'''


@pytest.mark.parametrize("injection", INJECTIONS)
def test_file_in_a_directory_whose_name_is_code(tmp_path, injection):
    directory = tmp_path / f"kernels{injection}"
    directory.mkdir()
    path = directory / "bump_kernel.py"
    path.write_text(KERNEL_FILE)
    spec = importlib.util.spec_from_file_location("bump_kernel_in_odd_dir", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.arange(8, dtype=np.int32)
    module.bump[8](x, 5)
    np.testing.assert_array_equal(x, np.arange(8) + 5)
    generated = compile_python(module.bump.ir(x, 5))
    only_bind_and_constants(generated.source)
    assert repr(f"{path}:5:1") in generated.source.splitlines()[0]  # the header names the def
    sys.modules.pop("bump_kernel_in_odd_dir", None)


@pytest.mark.parametrize("injection", INJECTIONS)
def test_device_function_whose_name_is_code(injection):
    def plus_one(v):
        return v + 1

    plus_one.__name__ = f"plus_one(): pass{injection}def g"
    helper = pk.func(plus_one)

    @pk.kernel(interpret=True)
    def apply(x: pk.i32[:]):
        i = pk.global_id(0)
        x[i] = helper(x[i]) * 2

    x = np.arange(6, dtype=np.int32)
    apply[6](x)
    np.testing.assert_array_equal(x, (np.arange(6) + 1) * 2)
    only_bind_and_constants(compile_python(apply.ir(x)).source)


MESSAGE = "it's \"big\"\n__import__('builtins').pykern_injected = 1\n'''"


def test_assert_message_with_quotes_and_code_is_reported_verbatim():
    @pk.kernel(interpret=True, debug=True)
    def check(x: pk.i32[:]):
        i = pk.global_id(0)
        assert x[i] < 3, "it's \"big\"\n__import__('builtins').pykern_injected = 1\n'''"

    x = np.arange(4, dtype=np.int32)
    with pytest.raises(pk.KernelAssertionError) as info:
        check[4](x)
    assert MESSAGE in str(info.value)
    only_bind_and_constants(compile_python(check.ir(x)).source)
    check[3](x)  # the next launch works


# ---------------------------------------------------------------- IR built by hand

NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


def named_kernel(n: str, scale: str, acc: str, fn: str, tile: str, kernel: str) -> ir.Kernel:
    """`x[i] = f(x[i] * scale)` through a local, a pk.shared array and a device function,
    every name of them the caller's: `f(v) = v + 1`."""
    i32 = dt.i32
    gid = ir.Builtin(kind=ir.BuiltinKind.GLOBAL_ID, dim=0, type=i32)
    lid = ir.Builtin(kind=ir.BuiltinKind.LOCAL_ID, dim=0, type=i32)
    arg = ir.LocalRef(name=n, type=i32)
    f = ir.Function(name=fn, params=(ir.Local(name=n, type=i32),), locals=(), return_type=i32,
                    body=(ir.Return(value=ir.BinOp(op=ir.BinOpKind.ADD, lhs=arg, type=i32,
                                                   rhs=ir.Const(value=1, type=i32))),))
    product = ir.BinOp(op=ir.BinOpKind.MUL, type=i32,
                       lhs=ir.ArrayLoad(array=n, indices=(gid,), type=i32),
                       rhs=ir.ScalarParam(name=scale, type=i32))
    body = (
        ir.If(cond=ir.BinOp(op=ir.BinOpKind.GE, lhs=gid, type=dt.bool_,
                            rhs=ir.Builtin(kind=ir.BuiltinKind.GRID, dim=0, type=i32)),
              body=(ir.Return(),)),
        ir.Assign(name=acc, value=product),
        ir.Store(array=tile, indices=(lid,), value=ir.LocalRef(name=acc, type=i32)),
        ir.Store(array=n, indices=(gid,),
                 value=ir.Call(function=fn, type=i32,
                               args=(ir.ArrayLoad(array=tile, indices=(lid,), type=i32),))),
    )
    return ir.Kernel(name=kernel, workgroup=(4, 1, 1), body=body, functions=(f,),
                     params=(ir.Param(name=n, type=dt.i32[:], access=ir.Access.READ_WRITE),
                             ir.Param(name=scale, type=i32)),
                     locals=(ir.Local(name=acc, type=i32),),
                     arrays=(ir.ArrayDecl(name=tile, dtype=i32, shape=(4,),
                                          space=ir.MemorySpace.SHARED),))


@settings(max_examples=60, deadline=None)
@given(st.lists(NAMES, min_size=5, max_size=5, unique=True), NAMES)
def test_any_names_in_hand_built_ir(names, kernel_name):
    array, scale, acc, fn, tile = names
    kernel = named_kernel(array, scale, acc, fn, tile, kernel_name)
    x = np.arange(8, dtype=np.int32)
    run(kernel, (8, 1, 1), {array: x}, {scale: 3})
    np.testing.assert_array_equal(x, np.arange(8) * 3 + 1)
    only_bind_and_constants(compile_python(kernel).source)


@pytest.mark.parametrize("names", [
    ("a b", "a_b", "ab", "a\nb", "a'b"),  # spellings that differ only in what is escaped
    ("\ufb01", "fi", "x", "y", "z"),  # the ligature and its NFKC form are different names
    ("if", "None", "_t1", "np", "bind"),  # keywords and the generator's own names
])
def test_names_that_could_collide_stay_apart(names):
    test_any_names_in_hand_built_ir.hypothesis.inner_test(list(names), "k")
