"""The interpreter backend: runs a typed `ir.Kernel` on the host, invocation by invocation, with
exactly the semantics of `pykern.ir`, for debugging and as a test oracle for the GPU backends.

It is a code generator: the kernel becomes the source of a Python function that runs one
invocation (`compile_python(kernel).source` shows it), executed once and then called for every
point of the grid.

    >>> from pykern.interpret import ArrayArg, run
    >>> run(kernel, (n, 1, 1), {"x": ArrayArg(x, 0, (n,), (1,))}, {"a": 2.0})  # doctest: +SKIP

Values: integers are Python ints wrapped to their type after every operation that can
overflow; floats are numpy scalars of their type, so every operation rounds as the GPU's
(`+ - *` bit for bit). Where the GPU's result is undefined the interpreter defines one (see
`pykern.interpret.helpers`): integer division by zero is 0, out-of-range shifts shift
everything out, float to int saturates (NaN gives 0), a zero range step runs no iterations, a
local read before any assignment is 0. An access whose element address is outside the array's
buffer raises `pk.KernelIndexError` naming the kernel, the source line, the array, the index
and the shape.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import ir
from .arrays import ArrayArg
from .compiled import InterpretedKernel, compile_python

__all__ = ["ArrayArg", "InterpretedKernel", "compile_python", "run"]


def run(kernel: ir.Kernel, grid: tuple[int, int, int], arrays: Mapping[str, ArrayArg],
        scalars: Mapping[str, bool | int | float]) -> None:
    """Runs `kernel` over `grid` on the host. `arrays` maps each array parameter to an
    `ArrayArg` (a numpy array is accepted too, see `ArrayArg.of`); stores go into the arrays'
    data in place. `scalars` maps each scalar parameter to its value."""
    compile_python(kernel).run(grid, arrays, scalars)
