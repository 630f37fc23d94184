"""Array and scalar arguments of an interpreted launch, turned into the values the generated
`bind` takes.

What reaches here has been checked by the JIT layer (`pykern.jit.interpreted`), which raises
the user's `pk.LaunchError`; `view_problem` is the one limit of this backend it asks about. The
checks left here guard the interpreter's own API against internal callers (tests, the
differential oracle): a TypeError or ValueError from them is a bug in the caller."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.dtypes import ArrayType, DType
from pykern.interpret import names
from pykern.interpret.ops import int_range


@dataclass(frozen=True)
class ArrayArg:
    """An array argument as the GPU sees it: a whole flat buffer plus where the array lies in
    it. Element `index` is `data[offset + sum(index[k] * strides[k])]`; all in elements.

    >>> base = np.arange(10, dtype=np.float32)
    >>> ArrayArg(base, offset=1, shape=(5,), strides=(2,))  # base[1::2]
    ArrayArg(data=..., offset=1, shape=(5,), strides=(2,))
    """

    data: np.ndarray
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    def __repr__(self) -> str:
        return (f"ArrayArg(data=..., offset={self.offset}, shape={self.shape}, "
                f"strides={self.strides})")

    @classmethod
    def of(cls, array: np.ndarray) -> ArrayArg:
        """The argument for a numpy array or view: its buffer is the whole memory block the
        array (or the array it views) owns, so stores land in `array`.

        >>> x = np.zeros((4, 6), np.int32)
        >>> ArrayArg.of(x[1:, ::2])
        ArrayArg(data=..., offset=6, shape=(3, 3), strides=(6, 2))
        """
        problem = view_problem(array)
        if problem is not None:
            raise ValueError(problem)
        owner = memory_owner(array)
        item = array.dtype.itemsize
        raw = owner.reshape(-1, order="A").view(np.uint8)
        first = array.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
        start = first % item  # the buffer starts where whole elements of the array line up
        flat = raw[start:start + (raw.size - start) // item * item].view(array.dtype)
        first -= start
        return cls(flat, first // item, tuple(array.shape), tuple(s // item for s in
                                                                   array.strides))


def memory_owner(array: np.ndarray) -> np.ndarray:
    """The numpy array that owns the memory `array` views (`array` itself if it owns it or
    views memory of something that is not a numpy array)."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return owner


def view_problem(array: np.ndarray) -> str | None:
    """Why `ArrayArg.of(array)` cannot address `array` in place, or None if it can: the
    generated code indexes one flat buffer in whole elements, so the owner's memory must be one
    block and every stride a whole number of elements (a field of a structured array is not).

    >>> view_problem(np.zeros((3, 4), np.int32)[:, ::2]) is None
    True
    >>> view_problem(np.zeros(3, [("a", np.int32), ("b", np.int8)])["a"])
    "the array's strides are not whole elements"
    """
    owner = memory_owner(array)
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return "the array's memory is not one contiguous block"
    if any(s % array.dtype.itemsize for s in array.strides):
        return "the array's strides are not whole elements"
    return None


# How the generated code holds a buffer of each kind of dtype: a memoryview reads Python ints
# and bools directly (numpy would give np.int32, whose arithmetic we do not want); numpy
# indexing reads floats as numpy scalars of their type, which we do want.
BUFFER_VIEWS: dict[str, Callable[[np.ndarray], object]] = {
    dt.BOOL: memoryview,
    dt.INT: memoryview,
    dt.UINT: memoryview,
    dt.FLOAT: lambda data: data,
}


def array_values(param: ir.Param, arg: object) -> dict[str, object]:
    """The `bind` arguments of array parameter `param` for argument `arg`."""
    t: ArrayType = param.type  # type: ignore[assignment]
    name = param.name
    if isinstance(arg, np.ndarray):
        arg = ArrayArg.of(arg)
    if not isinstance(arg, ArrayArg):
        raise TypeError(f"argument '{name}' must be an ArrayArg or a numpy array, "
                        f"not {type(arg).__name__}")
    data = arg.data
    if not isinstance(data, np.ndarray) or data.ndim != 1:
        raise TypeError(f"argument '{name}': data must be a 1-D numpy array")
    if data.dtype != t.dtype.numpy or not data.dtype.isnative:
        raise ValueError(f"argument '{name}' must hold {t.dtype.name} (native byte order), "
                         f"not {data.dtype}")
    if len(arg.shape) != t.ndim or len(arg.strides) != t.ndim:
        raise ValueError(f"argument '{name}' must have {t.ndim} dimension(s) with as many "
                         f"strides, not shape {arg.shape} and strides {arg.strides}")
    if param.access & ir.Access.WRITE and not data.flags.writeable:
        raise ValueError(f"argument '{name}' is written by the kernel but is read-only")
    values: dict[str, object] = {
        names.buffer(name): BUFFER_VIEWS[t.dtype.kind](data),
        names.offset(name): int(arg.offset),
        names.length(name): len(data),
    }
    for k in range(t.ndim):
        values[names.shape(name, k)] = int(arg.shape[k])
        values[names.stride(name, k)] = int(arg.strides[k])
    return values


def scalar_value(param: ir.Param, value: object) -> object:
    """A scalar argument as the generated code holds values of its type."""
    t: DType = param.type  # type: ignore[assignment]
    if t.kind == dt.BOOL:
        return bool(value)
    if t.is_float:
        return t.numpy.type(value)
    if isinstance(value, (float, np.floating)) or isinstance(value, bool):
        raise TypeError(f"argument '{param.name}' must be an integer for {t.name}, "
                        f"not {value!r}")
    v = int(value)  # type: ignore[call-overload]
    lo, hi = int_range(t)
    if not lo <= v <= hi:
        raise ValueError(f"argument '{param.name}' = {v} does not fit in {t.name} "
                         f"({lo}..{hi})")
    return v


def parameter_values(kernel: ir.Kernel, arrays: Mapping[str, object],
                     scalars: Mapping[str, object]) -> dict[str, object]:
    """Every `bind` argument that comes from the kernel's parameters."""
    expected_arrays = {p.name for p in kernel.params if p.is_array}
    expected_scalars = {p.name for p in kernel.params if not p.is_array}
    for given, expected, what in ((arrays, expected_arrays, "array"),
                                  (scalars, expected_scalars, "scalar")):
        missing, extra = expected - set(given), set(given) - expected
        if missing or extra:
            raise TypeError(f"kernel '{kernel.name}': {what} arguments do not match its "
                            f"parameters (missing {sorted(missing)}, unexpected "
                            f"{sorted(extra)})")
    values: dict[str, object] = {}
    for p in kernel.params:
        if p.is_array:
            values.update(array_values(p, arrays[p.name]))
        else:
            values[names.scalar(p.name)] = scalar_value(p, scalars[p.name])
    return values
