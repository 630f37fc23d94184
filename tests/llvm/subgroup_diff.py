"""Subgroup kernels on the host backend against the interpreter run with the host's subgroup
size, and against the Vulkan device where its subgroup size is the host's (lavapipe's)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
import pykern.llvm
from pykern.interpret import run as interpret
from pykern.lang import dtypes as dt
from pykern.llvm.lanes import SUBGROUP_SIZE
from pykern.passes import lower_bf16
from pykern.runtime.grid import grid_dims

from differential import assert_same, copies


def interpreted(kernel: pk.Kernel, grid: int | tuple[int, ...], *args: object) -> list:
    """The arguments after an interpreter run of `kernel[grid](*args)` (on copies) whose
    subgroups have the host's size."""
    dims = grid_dims(grid)
    kernel_ir = kernel._translate(kernel._key(args, len(dims)))  # type: ignore[attr-defined]
    ref = copies(args)
    values = kernel._runtime_args(tuple(ref))  # type: ignore[attr-defined]
    arrays, scalars = {}, {}
    for param, value in zip(kernel_ir.params, values, strict=True):
        if not param.is_array:
            scalars[param.name] = value
        elif dt.from_numpy(value.dtype) == dt.bf16:  # the interpreter takes bf16's words
            arrays[param.name] = value.view(np.uint16)
        else:
            arrays[param.name] = value
    with np.errstate(all="ignore"):
        interpret(lower_bf16(kernel_ir), dims + (1,) * (3 - len(dims)), arrays, scalars,
                  subgroup_size=SUBGROUP_SIZE)
    return ref


def on_host(kernel: pk.Kernel, grid: int | tuple[int, ...], *args: object) -> list:
    host = copies(args)
    pykern.llvm.launch(kernel, grid, *host)
    return host


def on_device(kernel: pk.Kernel, grid: int | tuple[int, ...], *args: object) -> list:
    """The arguments after a launch on the Vulkan device (on copies); the test is skipped
    where that device's subgroups are not the host's size."""
    if pk.get_device().info.features.subgroup_size != SUBGROUP_SIZE:
        pytest.skip(f"the device's subgroup size is not the host's {SUBGROUP_SIZE}")
    out = copies(args)
    kernel[grid](*out)
    return out


def compare(got: list, want: list, what: str) -> None:
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(g, np.ndarray):
            assert_same(g, w, what=f"{what}, argument {k}")


def check(kernel: pk.Kernel, grid: int | tuple[int, ...], *args: object,
          device: bool = False) -> list:
    """Runs `kernel` on the host and in the interpreter (and, with `device`, on the Vulkan
    device) and compares every array argument bit for bit; the host's arguments after."""
    host = on_host(kernel, grid, *args)
    compare(host, interpreted(kernel, grid, *args), "host vs interpreter")
    if device:
        compare(host, on_device(kernel, grid, *args), "host vs device")
    return host
