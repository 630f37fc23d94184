"""Binding launch arguments to a compiled kernel's parameters.

Checks every argument against its parameter before anything is uploaded or run, so a bad launch
raises `pk.LaunchError` naming the parameter and leaves every tensor and the device untouched.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.coop import TILE_ALIGNMENT
from pykern.lang.dtypes import ArrayType, DType
from pykern.errors import LaunchError
from pykern.frontend.typerules import float_overflow, int_range
from pykern.passes.complex import real_view
from pykern.runtime.grid import GridError, grid_dims
from pykern.jit.arrays import (DeviceArray, from_host, is_device_array, type_name,
                               wrap_host)


def describe_arg(value: object) -> str:
    if is_device_array(value):
        return (f"a {type_name(value)} of dtype {value.dtype.name} "  # type: ignore[attr-defined]
                f"with {len(value.shape)} dimension(s)")  # type: ignore[attr-defined]
    if isinstance(value, np.ndarray):
        return f"a numpy array of dtype {value.dtype} with {value.ndim} dimension(s)"
    return f"a {type(value).__name__} ({value!r:.40})"


def kernel_grid(kernel_name: str, grid: object) -> tuple[tuple[int, int, int], int]:
    """`grid` padded to three dimensions (see `pykern.runtime.grid`), and how many it named;
    a bad grid is a LaunchError naming the kernel."""
    try:
        dims = grid_dims(grid)
    except GridError as e:
        raise LaunchError(f"{kernel_name}[{grid!r}]: {e}") from None
    return dims + (1,) * (3 - len(dims)), len(dims)  # type: ignore[return-value]


def scalar_value(kernel_name: str, param: str, t: DType, value: object) -> bool | int | float:
    """A Python/numpy scalar checked and converted for a scalar parameter of type `t`."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):
        value = value.item()
    where = f"{kernel_name}(): parameter '{param}' ({t.name})"
    if t.is_complex and isinstance(value, numbers.Number):
        return complex_value(where, t, value)
    if not isinstance(value, numbers.Number) or isinstance(value, complex):
        raise LaunchError(f"{where} expects a number, got {describe_arg(value)}")
    if t == dt.bool_:
        return 1 if value else 0
    if t.is_float:
        return float_value(where, t, value)  # type: ignore[arg-type]
    if isinstance(value, float) and not value.is_integer():
        raise LaunchError(f"{where} expects an integer, got {value!r}")
    lo, hi = int_range(t)
    if not lo <= int(value) <= hi:  # type: ignore[call-overload]
        raise LaunchError(f"{where}: {value!r} is out of range {lo}..{hi}")
    return int(value)  # type: ignore[call-overload]


def float_value(where: str, t: DType, value: numbers.Real) -> float:
    """`value` for a float parameter of type `t`. A finite value that would round to infinity
    in `t` (1e39 for an f32) is refused; inf and nan pass as they are."""
    try:
        v = float(value)
    except OverflowError:  # an int beyond any float
        v = math.inf
    if abs(v) >= float_overflow(t) and not (isinstance(value, float) and math.isinf(value)):
        largest = dt.BF16_MAX if t == dt.bf16 else float(np.finfo(t.numpy).max)
        raise LaunchError(f"{where}: {value!r} is out of range: the largest finite {t.name} is "
                          f"{largest:.9g} (inf and nan are accepted)")
    # a bf16 parameter is an f32 in the kernel that holds a bf16 value (pykern.passes.bf16)
    return dt.round_to_bf16(v) if t == dt.bf16 else v


def complex_value(where: str, t: DType, value: numbers.Number) -> complex:
    """`value` (any number) for a complex parameter of type `t`, each part checked as a float
    of the part type is."""
    z = complex(value)  # type: ignore[arg-type]
    part = t.real_dtype
    return complex(float_value(f"{where} (real part)", part, z.real),
                   float_value(f"{where} (imaginary part)", part, z.imag))


def bind_keywords(kernel_name: str, names: list[str], args: tuple, kwargs: dict,
                  defaults: Mapping[str, object]) -> tuple:
    """The arguments of a call as one positional tuple, as Python binds them: each keyword
    names a parameter not given positionally; a parameter given neither way takes its default
    value (`def k(..., block: pk.constexpr = 128)`), and without one it is an error."""
    if len(args) > len(names):
        return args  # the count error is reported by `specialize`
    bound: list[object] = list(args) + [_MISSING] * (len(names) - len(args))
    for key, value in kwargs.items():
        if key not in names:
            raise LaunchError(f"{kernel_name}() got an unexpected keyword argument '{key}' "
                              f"(parameters: {', '.join(names)})")
        k = names.index(key)
        if bound[k] is not _MISSING:
            raise LaunchError(f"{kernel_name}() got multiple values for parameter '{key}'")
        bound[k] = value
    for k, name in enumerate(names):
        if bound[k] is _MISSING and name in defaults:
            bound[k] = defaults[name]
    missing = [n for n, v in zip(names, bound) if v is _MISSING]
    if missing:
        raise LaunchError(f"{kernel_name}() is missing argument(s) for "
                          f"{', '.join(repr(m) for m in missing)}")
    return tuple(bound)


_MISSING = object()


def check_tensor(kernel_name: str, param: str, tensor: DeviceArray, device: object | None) -> None:
    """Raises LaunchError unless `tensor`'s memory exists and (when `device` is given) belongs
    to the device the kernel runs on."""
    buffer = tensor.buffer
    if getattr(buffer, "freed", False):
        raise LaunchError(f"{kernel_name}(): parameter '{param}' was given a tensor whose "
                          "device memory was freed")
    if device is not None and getattr(buffer, "device", None) is not device:
        raise LaunchError(f"{kernel_name}(): parameter '{param}' was given a tensor of another "
                          f"device ({_device_name(buffer)}) than the one the kernel runs on "
                          f"({_device_name(device)}); move it with t.to(device)")


def _device_name(obj: object) -> str:
    device = getattr(obj, "device", obj)
    info = getattr(device, "info", None)
    return getattr(info, "name", None) or repr(device)


def diagnose_buffers(kernel_name: str, params: tuple[ir.Param, ...], args: tuple,
                     device: object) -> None:
    """After the runtime refused a launch's buffers: the LaunchError naming the parameter whose
    tensor was freed or belongs to another device (returns if none is)."""
    for param, value in zip(params, args):
        if param.is_array and is_device_array(value):
            check_tensor(kernel_name, param.name, value, device)


def check_writable(kernel_name: str, param: ir.Param, value: object) -> None:
    """A numpy array the kernel writes must be writable (the results are copied into it)."""
    if param.access & ir.Access.WRITE and isinstance(value, np.ndarray) and \
            not value.flags.writeable:
        raise LaunchError(f"{kernel_name}(): parameter '{param.name}' is written by the kernel, "
                          "but the numpy array given for it is read-only")


@dataclass
class BoundArray:
    """An array argument as the kernel sees it, and where to copy results back to."""

    tensor: DeviceArray
    copy_back_to: np.ndarray | None = None


def array_kind(value: object) -> tuple[DType, int] | None:
    """The dtype and ndim of a tensor or numpy argument; None for anything else (a numpy dtype
    without a pykern equivalent too)."""
    if is_device_array(value):
        return value.dtype, value.ndim
    if isinstance(value, np.ndarray):
        try:
            return dt.from_numpy(value.dtype), value.ndim
        except KeyError:
            return None
    return None


def check_array(kernel_name: str, param: str, t: ArrayType, value: object) -> None:
    if array_kind(value) != (t.dtype, t.ndim):
        raise LaunchError(f"{kernel_name}(): parameter '{param}' expects {t!r}, got "
                          f"{describe_arg(value)}")




def complex_fields(t: DeviceArray) -> list[int]:
    """The offset, shape and strides a complex array parameter's real array (one more axis,
    the parts: `pykern.passes.complex`) has over tensor `t`: `t` itself when it is that real
    view already (how numpy arguments bind), else the view of complex tensor `t`."""
    if not t.dtype.is_complex:
        return [t.offset, *t.shape, *t.element_strides]
    return [2 * t.offset, *t.shape, 2, *(2 * s for s in t.element_strides), 1]


def check_tiles(kernel_name: str, param: str, t: DeviceArray) -> None:
    """An array that a kernel reads or writes as cooperative-matrix tiles: its last dimension
    contiguous and its rows (first element and row stride) 16-byte aligned."""
    strides, item = t.element_strides, t.dtype.itemsize
    if t.shape[-1] > 1 and strides[-1] != 1:
        raise LaunchError(f"{kernel_name}(): '{param}' is loaded or stored as tiles, which "
                          f"needs a contiguous last dimension; its strides are {strides} "
                          "(elements): pass a contiguous copy (t.copy()) or load the "
                          "transposed tiles with transpose=True")
    if (t.offset * item) % TILE_ALIGNMENT or (t.shape[-2] > 1
                                               and (strides[-2] * item) % TILE_ALIGNMENT):
        raise LaunchError(f"{kernel_name}(): '{param}' is loaded or stored as tiles, whose rows "
                          f"must start at multiples of {TILE_ALIGNMENT} bytes; its first element "
                          f"is at byte {t.offset * item} of its buffer and its rows are "
                          f"{strides[-2] * item} bytes apart (make the last dimension a multiple "
                          f"of {TILE_ALIGNMENT // item} elements, e.g. by padding)")


def bind_array(kernel_name: str, param: ir.Param, value: DeviceArray | np.ndarray) -> BoundArray:
    """A numpy argument is copied to a new tensor (on the host device, where its layout allows,
    wrapped instead); if the kernel writes a copy, it is copied back afterwards."""
    if is_device_array(value):
        return BoundArray(value)
    check_writable(kernel_name, param, value)
    if isinstance(param.type, ArrayType) and param.type.dtype.is_complex:
        # the lowered kernel's real array (pykern.passes.complex) over the same memory
        value = real_view(value)
    in_place = wrap_host(value)  # the host device: the kernel works on the array itself
    if in_place is not None:
        return BoundArray(in_place)
    written = bool(param.access & ir.Access.WRITE)
    return BoundArray(from_host(value), value if written else None)


def array_type_of(kernel_name: str, param: str, value: object) -> ArrayType:
    """The ArrayType a `pk.Array` parameter takes from its argument."""
    kind = array_kind(value)
    if kind is None:
        what = "an array of a pykern dtype" if isinstance(value, np.ndarray) else "an array"
        raise LaunchError(f"{kernel_name}(): parameter '{param}' expects {what}, got "
                          f"{describe_arg(value)}")
    if not 1 <= kind[1] <= 4:
        raise LaunchError(f"{kernel_name}(): parameter '{param}' expects 1 to 4 dimensions, got "
                          f"{describe_arg(value)}")
    return ArrayType(*kind)


def constexpr_value(kernel_name: str, param: str, value: object) -> object:
    """The compile-time value of a constexpr argument: a number, bool, str, dtype or
    `@pk.func`."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (tuple, list)):  # a shape: numpy ints become Python ints
        value = tuple(v.item() if isinstance(v, np.generic) else v for v in value)
    if not dt.is_constexpr_value(value):
        raise LaunchError(f"{kernel_name}(): constexpr parameter '{param}' expects a number, "
                          f"bool, str, tuple of numbers, pykern dtype or @pk.func, got "
                          f"{describe_arg(value)}")
    return value


def constexpr_kind(value: object) -> str:
    """The type part of a constexpr's variant key: 1, 1.0 and True are equal in Python but
    compile differently, in a tuple too."""
    if isinstance(value, tuple):
        return "tuple:" + ",".join(type(v).__name__ for v in value)
    return type(value).__name__


def specialize(kernel_name: str, specs: dict[str, object], args: tuple
               ) -> tuple[dict[str, DType | ArrayType], dict[str, object]]:
    """Checks count, dtype and ndim of every argument (LaunchError before anything runs) and
    returns the concrete parameter types and the constexpr values these arguments select."""
    if len(args) != len(specs):
        names = ", ".join(specs)
        raise LaunchError(f"{kernel_name}() takes {len(specs)} argument(s) ({names}), "
                          f"{len(args)} given")
    types: dict[str, DType | ArrayType] = {}
    constants: dict[str, object] = {}
    for (name, spec), value in zip(specs.items(), args):
        if spec is dt.constexpr:
            constants[name] = constexpr_value(kernel_name, name, value)
        elif spec is dt.Array:
            types[name] = array_type_of(kernel_name, name, value)
        elif isinstance(spec, ArrayType):
            check_array(kernel_name, name, spec, value)
            types[name] = spec
        else:
            scalar_value(kernel_name, name, spec, value)  # type: ignore[arg-type]
            types[name] = spec  # type: ignore[assignment]
    return types, constants
