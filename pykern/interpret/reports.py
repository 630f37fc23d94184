"""The errors a running kernel reports: the `_oob` and `_assert_failed` functions of a launch.

Messages start with the user's `file:line:col:`, name the kernel and the invocation (its
global id), and show the source line, as compile errors do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NoReturn

from pykern import ir
from pykern.errors import KernelAssertionError, KernelIndexError, outside_grid_hint
from pykern.ir.reports import with_source
from pykern.interpret import names
from pykern.interpret.names import AccessSite, AssertSite, row_major_strides
from pykern.lang.coop import TILE_ALIGNMENT


def _geometry(kernel: ir.Kernel, array: str, values: Mapping[str, object]
              ) -> tuple[int, tuple[int, ...], tuple[int, ...], int]:
    """(offset, shape, strides, buffer length) of `array` in this launch."""
    for d in kernel.arrays:
        if d.name == array:
            return 0, d.shape, row_major_strides(d.shape), math.prod(d.shape)
    ndim = kernel.param(array).type.ndim  # type: ignore[union-attr]
    get = values.__getitem__
    return (get(names.offset(array)),  # type: ignore[return-value]
            tuple(get(names.shape(array, k)) for k in range(ndim)),
            tuple(get(names.stride(array, k)) for k in range(ndim)),
            get(names.length(array)))


def out_of_bounds_reporter(kernel: ir.Kernel, sites: tuple[AccessSite, ...],
                           values: Mapping[str, object],
                           written_ndims: Mapping[str, int] | None = None
                           ) -> Callable[[int, tuple, tuple], NoReturn]:
    """The `_oob(site, index, invocation)` of one launch: raises KernelIndexError. An array
    with fewer dimensions in `written_ndims` (a complex array, run as the real array of its
    parts: one more axis of 2) is reported as written: its index, shape and elements."""
    def report(site: int, index: tuple[int, ...], invocation: tuple[int, ...],
               misaligned: tuple[int, int] | None = None) -> NoReturn:
        s = sites[site]
        offset, shape, strides, length = _geometry(kernel, s.array, values)
        nd = (written_ndims or {}).get(s.array, len(shape))
        if nd < len(shape):
            # the parts axis is the innermost: elements of the written array are whole pairs
            per = math.prod(shape[nd:])
            offset, length = offset // per, length // per
            strides = tuple(st // per for st in strides[:nd])
            index, shape = index[:nd], shape[:nd]
        if misaligned is not None:  # a tile's rows (first byte, row stride in bytes)
            raise KernelIndexError(with_source(
                f"{s.loc}: kernel '{kernel.name}', invocation {invocation}: the tile at index "
                f"{index} of '{s.array}' has rows that start at byte {misaligned[0]} and "
                f"{misaligned[1]} bytes apart: tiles' rows must start at multiples of "
                f"{TILE_ALIGNMENT} bytes (or of a row's size, where that is less)", s.loc))
        address = offset + sum(i * st for i, st in zip(index, strides, strict=True))
        outside = [k for k, (i, n) in enumerate(zip(index, shape, strict=True))
                   if not 0 <= i < n]
        why = (f"index {index} is out of bounds for '{s.array}' with shape {shape}" if outside
               and kernel.debug else
               f"index {index} of '{s.array}' (shape {shape}) is out of bounds: element "
               f"{address} is outside its buffer of {length} elements")
        if not kernel.masked:
            why += outside_grid_hint(invocation, tuple(values[g] for g in names.GRID))
        raise KernelIndexError(with_source(
            f"{s.loc}: kernel '{kernel.name}', invocation {invocation}: {why}", s.loc))
    return report


def assertion_reporter(kernel: ir.Kernel, sites: tuple[AssertSite, ...]
                       ) -> Callable[[int, tuple], NoReturn]:
    """The `_assert_failed(site, invocation)` of one launch: raises KernelAssertionError."""
    def report(site: int, invocation: tuple[int, ...]) -> NoReturn:
        s = sites[site]
        raise KernelAssertionError(with_source(
            f"{s.loc}: kernel '{kernel.name}', invocation {invocation}: assertion failed: "
            f"{s.message}", s.loc))
    return report
