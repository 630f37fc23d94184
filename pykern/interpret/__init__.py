"""The interpreter backend: runs a typed `ir.Kernel` on the host, invocation by invocation, with
exactly the semantics of `pykern.ir`, for debugging and as a test oracle for the GPU backends.

It is a code generator: the kernel becomes the source of a Python module whose `invocation`
function runs one invocation (`compile_python(kernel).source` shows it, and tracebacks show its
lines), executed once and then called for every point of the grid, workgroup by workgroup.

    >>> from pykern.interpret import ArrayArg, run
    >>> run(kernel, (n, 1, 1), {"x": ArrayArg(x, 0, (n,), (1,))}, {"a": 2.0})  # doctest: +SKIP

Values: integers are Python ints wrapped to their type after every operation that can
overflow; floats are numpy scalars of their type, so every operation rounds as the GPU's
(`+ - *` bit for bit; `//` and `%` are Python's, as numpy computes them). Where the GPU's
result is undefined the interpreter defines one (see `helpers` and `subgroups`): integer
division by zero is 0, out-of-range shifts shift everything out, float to int saturates (NaN
gives 0), a zero range step runs no iterations, locals and pk.shared/pk.local arrays start at
0, a shuffle from an inactive lane gives the invocation's own value.

An access whose element address is outside the array's buffer (in debug mode: any index
outside its dimension) raises `pk.KernelIndexError`; in debug mode a failed assert raises
`pk.KernelAssertionError`; both name the kernel, the source line and the invocation.

Kernels with `pk.barrier()` or subgroup operations run each workgroup in lockstep (see
`runner`); `subgroup_size` (default 32) is the subgroup size they see.

Cooperative-matrix tiles (`tiles`, `tile_codegen`) are numpy arrays, one whole copy per
invocation (every invocation of a subgroup executes the same tile operations on the same
operands, so the copies agree); the invocations of a subgroup meet before each tile load and
store, as the GPU's subgroup loads and stores a tile together, so kernels with tiles run in
lockstep too. A float `coop_mma` sums exact products in float64 and rounds once to the
accumulator's dtype; the GPU accumulates in the accumulator's precision in an order of its
own, so the two agree within that accumulation's error bound, not bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping

from pykern import ir
from pykern.interpret.arrays import ArrayArg
from pykern.interpret.compiled import DEFAULT_SUBGROUP_SIZE, InterpretedKernel, compile_python

__all__ = ["ArrayArg", "InterpretedKernel", "compile_python", "run"]


def run(kernel: ir.Kernel, grid: tuple[int, int, int], arrays: Mapping[str, ArrayArg],
        scalars: Mapping[str, bool | int | float],
        subgroup_size: int = DEFAULT_SUBGROUP_SIZE,
        written_ndims: Mapping[str, int] | None = None) -> None:
    """Runs `kernel` over `grid` on the host. `arrays` maps each array parameter to an
    `ArrayArg` (a numpy array is accepted too, see `ArrayArg.of`); stores go into the arrays'
    data in place. `scalars` maps each scalar parameter to its value. `subgroup_size` is the
    size the subgroup builtins see (pass the device's to compare with it). `written_ndims`:
    the dimensions of arrays as the user wrote them, where a pass gave them more (a complex
    array is a real one with an axis of parts), so that reports name the user's indices."""
    compile_python(kernel).run(grid, arrays, scalars, subgroup_size, written_ndims)
