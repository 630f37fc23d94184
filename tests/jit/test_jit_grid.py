"""One set of grid rules (pykern.runtime.grid) for the runtime, the JIT layer and the
interpreter, each raising its own kind of error."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern import ir
from pykern.interpret import run as interpret_run
from pykern.runtime import grid as rgrid

BAD_GRIDS = [(-1,), -1, (1, 2, 3, 4), (), 2.5, (2.0, 1), True, (4, False), "8", None,
             (2**31,), (1, 2**31, 1), [1, 1, 1, 1],
             # each dimension in range, but more than 2**40 invocations in all
             (2**30, 2**30), (2**31 - 1,) * 3, (2**20, 2**20, 2)]


@pytest.mark.parametrize("grid, dims", [
    (5, (5, 1, 1)), ((5,), (5, 1, 1)), ((3, 4), (3, 4, 1)), ((2, 3, 4), (2, 3, 4)),
    ([7, 2], (7, 2, 1)), (np.int64(9), (9, 1, 1)), ((np.int32(2), 3), (2, 3, 1)),
    (0, (0, 1, 1)), ((2**31 - 1, 1, 1), (2**31 - 1, 1, 1)),
    ((2**20, 2**20), (2**20, 2**20, 1)), ((2**31 - 1, 512, 0), (2**31 - 1, 512, 0)),
])
def test_good_grids_are_padded_to_three_plain_ints(grid, dims):
    got = rgrid.normalize_grid(grid)
    assert got == dims and all(type(d) is int for d in got)
    assert rgrid.grid_dims(grid) == dims[:len(rgrid.grid_dims(grid))]


@pytest.mark.parametrize("grid", BAD_GRIDS)
def test_bad_grids_raise_grid_error_saying_grid(grid):
    with pytest.raises(rgrid.GridError, match="grid"):
        rgrid.normalize_grid(grid)
    assert issubclass(rgrid.GridError, ValueError)  # what Device.launch has always raised


def test_the_grid_module_needs_no_vulkan():
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(rgrid))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                for a in n.names}
    imported |= {("." * n.level) + n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", ".errors"}  # the runtime's errors leaf imports nothing


@pk.kernel
def fill(out: pk.i32[:, :]):
    out[pk.global_id(0), pk.global_id(1)] = pk.global_id(0) * 10 + pk.global_id(1)


@pytest.mark.parametrize("grid", BAD_GRIDS)
def test_a_kernel_turns_a_bad_grid_into_a_launch_error_naming_it(grid):
    with pytest.raises(pk.LaunchError, match=r"^fill\[.*grid"):
        fill[grid]
    out = pk.zeros((3, 4), pk.i32)
    fill[3, 4](out)  # and the next launch works
    np.testing.assert_array_equal(out.numpy(), np.add.outer(np.arange(3) * 10, np.arange(4)))


def test_a_list_grid_launches_like_the_tuple():
    out = pk.zeros((3, 4), pk.i32)
    fill[[3, 4]](out)
    np.testing.assert_array_equal(out.numpy(), np.add.outer(np.arange(3) * 10, np.arange(4)))


@pytest.mark.parametrize("grid", BAD_GRIDS)
def test_the_interpreter_applies_the_same_rules(grid):
    kernel_ir = fill.ir(np.zeros((3, 4), np.int32))
    out = np.zeros((3, 4), np.int32)
    with pytest.raises(ValueError, match="grid"):  # the backend's; a launch's is a LaunchError
        interpret_run(kernel_ir, grid, {"out": out}, {})
    interpret_run(kernel_ir, (3, 4), {"out": out}, {})
    np.testing.assert_array_equal(out, np.add.outer(np.arange(3) * 10, np.arange(4)))
    assert isinstance(kernel_ir, ir.Kernel)


def test_the_runtime_refuses_bad_grids_before_recording():
    import pykern.runtime as rt
    out = pk.zeros((3, 4), pk.i32)
    variant = fill.compile(out, grid=(3, 4))
    block, buffers, _ = variant.binder.bind([out])
    with pytest.raises(ValueError, match="grid"):
        rt.get_device().launch(variant.program, (2**31, 1, 1), buffers, block)
    with pytest.raises(ValueError, match=r"grid \(1073741824, 1073741824, 1\) names "
                                         r"1152921504606846976 invocations.*2\*\*40"):
        rt.get_device().launch(variant.program, (2**30, 2**30, 1), buffers, block)
    rt.get_device().launch(variant.program, (3, 4, 1), buffers, block)  # the next one runs
    np.testing.assert_array_equal(out.numpy(), np.add.outer(np.arange(3) * 10, np.arange(4)))
