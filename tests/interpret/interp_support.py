"""Helpers for the interpreter tests: real kernels (Python functions) through the frontend, then
run by `pykern.interpret`."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

import numpy as np

from pykern import frontend, ir
from pykern.lang.dtypes import ArrayType, DType
from pykern.interpret import ArrayArg, InterpretedKernel, compile_python


def kernel_ir(fn: Callable, workgroup: tuple[int, int, int] = (64, 1, 1),
              params: Mapping[str, DType | ArrayType] | None = None,
              debug: bool = False) -> ir.Kernel:
    """The typed IR of `fn`, a function written as a `@pk.kernel` body (not decorated), for
    its annotated parameter types or `params` (to specialise `pk.Array` parameters)."""
    src = frontend.load_source(fn)
    return frontend.translate(src, params or frontend.signature(fn), workgroup, debug=debug)


def interpret(fn: Callable, grid: int | tuple[int, ...], *args: object,
              workgroup: tuple[int, int, int] = (64, 1, 1), debug: bool = False,
              subgroup_size: int = 32) -> InterpretedKernel:
    """Translates `fn` and runs it over `grid` with positional `args` as a launch would take
    them: numpy arrays (views too) for array parameters, numbers for scalars. Returns the
    interpreted kernel (its `.source` helps when a test fails)."""
    kernel = kernel_ir(fn, workgroup, debug=debug)
    names = list(inspect.signature(fn).parameters)
    assert len(names) == len(args), "one argument per parameter"
    arrays: dict[str, ArrayArg] = {}
    scalars: dict[str, object] = {}
    for name, arg in zip(names, args, strict=True):
        if kernel.param(name).is_array:
            arrays[name] = ArrayArg.of(np.asarray(arg)) if isinstance(arg, np.ndarray) else arg
        else:
            scalars[name] = arg
    compiled = compile_python(kernel)
    compiled.run(grid, arrays, scalars, subgroup_size)
    return compiled
