"""Interpreted launches (`interpret=True`, PYKERN_INTERPRET=1): a launch's arguments marshalled
for `pykern.interpret.run`, and its results written back."""

from __future__ import annotations

import numpy as np

from pykern import ir
from pykern.interpret import ArrayArg
from pykern.interpret import run as interpret_run
from pykern.jit.arguments import check_tensor, check_writable, scalar_value
from pykern.lang.dtypes import ArrayType
from pykern.tensor.tensor import Tensor


def interpret_launch(kernel_name: str, kernel_ir: ir.Kernel, grid: tuple[int, int, int],
                     runtime_args: tuple) -> None:
    """Runs `kernel_ir` in the interpreter: numpy arrays in place; tensors are read, run on
    and written back. `runtime_args` are the launch's arguments, constexpr ones removed."""
    arrays: dict[str, ArrayArg] = {}
    scalars: dict[str, object] = {}
    written: list[tuple[Tensor, np.ndarray]] = []
    for param, value in zip(kernel_ir.params, runtime_args):
        if not isinstance(param.type, ArrayType):
            scalars[param.name] = scalar_value(kernel_name, param.name, param.type, value)
        elif isinstance(value, Tensor):
            arrays[param.name], flat = _tensor_arg(kernel_name, param, value)
            if param.access & ir.Access.WRITE:
                written.append((value, flat))
        else:
            check_writable(kernel_name, param, value)
            arrays[param.name] = ArrayArg.of(value)  # type: ignore[arg-type]
    interpret_run(kernel_ir, grid, arrays, scalars)  # type: ignore[arg-type]
    for tensor, flat in written:
        tensor.buffer.upload(flat)


def _tensor_arg(kernel_name: str, param: ir.Param, tensor: Tensor
                ) -> tuple[ArrayArg, np.ndarray]:
    """A tensor's whole buffer read to the host, and the view of it the kernel sees."""
    check_tensor(kernel_name, param.name, tensor, None)
    flat = np.empty(tensor.buffer.nbytes // tensor.dtype.itemsize, tensor.dtype.numpy)
    tensor.buffer.read_into(flat)
    return ArrayArg(flat, tensor.offset, tensor.shape, tensor.element_strides), flat
