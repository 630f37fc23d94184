"""Interpreted launches (`interpret=True`, PYKERN_INTERPRET=1): a launch's arguments checked
and marshalled for `pykern.interpret.run`, and its results written back.

The interpreter backend raises no user-facing error: every argument is checked here, each
mistake a `pk.LaunchError` naming the parameter, before any tensor is read or anything runs.
"""

from __future__ import annotations

import numpy as np

from pykern import ir
from pykern.errors import LaunchError
from pykern.interpret import ArrayArg
from pykern.interpret import run as interpret_run
from pykern.interpret.arrays import view_problem
from pykern.jit.arguments import check_tensor, check_writable, scalar_value
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import ArrayType
from pykern.passes import lower_bf16, lower_complex
from pykern.passes.complex import lowered_arguments
from pykern.jit.arrays import DeviceArray, is_device_array


def interpret_launch(kernel_name: str, kernel_ir: ir.Kernel, grid: tuple[int, int, int],
                     runtime_args: tuple) -> None:
    """Runs `kernel_ir` in the interpreter: numpy arrays in place; tensors are read, run on
    and written back. `runtime_args` are the launch's arguments, constexpr ones removed, whose
    count, dtypes and ndims the launch has checked."""
    params = kernel_ir.params
    for param, value in zip(params, runtime_args, strict=True):
        check_interpreted_arg(kernel_name, param, value)
    arrays: dict[str, ArrayArg] = {}
    scalars: dict[str, object] = {}
    written: list[tuple[DeviceArray, np.ndarray]] = []
    for param, value in zip(params, runtime_args, strict=True):
        if not isinstance(param.type, ArrayType):
            scalars[param.name] = scalar_value(kernel_name, param.name, param.type, value)
        elif is_device_array(value):
            arrays[param.name], flat = _tensor_arg(value)
            if param.access & ir.Access.WRITE:
                written.append((value, flat))
        else:
            arrays[param.name] = ArrayArg.of(_as_stored(value))  # type: ignore[arg-type]
    arrays, scalars = _lowered(params, arrays, scalars)
    # the interpreter runs bf16 as its words and f32 values, and complex values as pairs, as
    # the SPIR-V backend does
    ndims = {p.name: p.type.ndim for p in params if isinstance(p.type, ArrayType)}
    ndims.update({a.name: len(a.shape) for a in kernel_ir.arrays})
    interpret_run(lower_bf16(lower_complex(kernel_ir)), grid, arrays,  # type: ignore[arg-type]
                  scalars, written_ndims=ndims)
    for tensor, flat in written:
        tensor.buffer.upload(flat)


def check_interpreted_arg(kernel_name: str, param: ir.Param, value: object) -> None:
    """Raises LaunchError naming `param` for an argument the interpreter cannot take: a scalar
    its type cannot hold, a freed tensor, a read-only numpy array the kernel writes, or a numpy
    array the interpreter cannot work on in place (it writes into the caller's memory)."""
    if not isinstance(param.type, ArrayType):
        scalar_value(kernel_name, param.name, param.type, value)
    elif is_device_array(value):
        check_tensor(kernel_name, param.name, value, None)
    else:
        check_writable(kernel_name, param, value)
        problem = view_problem(value)  # type: ignore[arg-type]
        if problem is not None:
            raise LaunchError(f"{kernel_name}(): parameter '{param.name}': {problem}, and the "
                              "interpreter works on numpy arrays in place (np.ascontiguousarray "
                              "makes a copy it can take)")


def _lowered(params: tuple[ir.Param, ...], arrays: dict[str, ArrayArg],
             scalars: dict[str, object]) -> tuple[dict[str, ArrayArg], dict[str, object]]:
    """The arguments by the lowered kernel's parameters (`pykern.passes.complex`): complex
    arrays as real ones of one more axis, complex scalars as two parts."""
    complex_arrays = {p.name: a for p in params if p.is_array and p.type.dtype.is_complex
                      for a in (arrays[p.name],)}
    if not complex_arrays and not any(not p.is_array and p.type.is_complex for p in params):
        return arrays, scalars
    real_arrays = {name: ArrayArg(a.data.view(a.data.real.dtype), 2 * a.offset, a.shape + (2,),
                                  tuple(2 * s for s in a.strides) + (1,))
                   for name, a in complex_arrays.items()}
    _, parts = lowered_arguments(tuple(p for p in params if not p.is_array), {}, scalars)
    return {**arrays, **real_arrays}, parts


def _as_stored(array: np.ndarray) -> np.ndarray:
    """A numpy array as the interpreted kernel sees its elements: a bf16 one as a uint16 view
    of its words (stores go into the caller's memory all the same)."""
    if dt.from_numpy(array.dtype) == dt.bf16:
        return array.view(np.uint16)
    return array


def _tensor_arg(tensor: DeviceArray) -> tuple[ArrayArg, np.ndarray]:
    """A tensor's whole buffer read to the host, and the view of it the kernel sees."""
    flat = np.empty(tensor.buffer.nbytes // tensor.dtype.itemsize, tensor.dtype.storage)
    tensor.buffer.read_into(flat)
    return ArrayArg(flat, tensor.offset, tensor.shape, tensor.element_strides), flat
