"""The Python array API namespace for pykern tensors (standard version 2024.12), available as
`pykern.array_api` and from `t.__array_namespace__()`; `t.__array_namespace__(api_version=
"2023.12")` gives the 2023.12 namespace (`pykern.tensor.api.namespace_versions`).

    xp = t.__array_namespace__()
    y = xp.sum(xp.exp(t), axis=-1, keepdims=True)

Everything here runs pykern kernels, on every dtype including complex64/complex128. Deviations from
the standard (docs/tensor.md lists them): mixed int/float promotion gives the float dtype; unique_*,
nonzero and repeat with array repeats have data-dependent shapes and read a count back;
`float16` is provided as an extension.
"""

# ruff: noqa: F401  (this module re-exports the op library's functions under the standard's names)
from __future__ import annotations

import math
import operator
import sys as _sys
from collections.abc import Callable as _Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pykern.autograd.graph import refuse_grad as _refuse_grad
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.runtime.selection import opened_devices
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.complex import complex_elementwise as _complex
from pykern.tensor.core import operand_device as _edge
from pykern.tensor.core.interchange import import_dlpack as _import_dlpack
from pykern.tensor.core.tensor import asarray as _asarray
from pykern.tensor.core.tensor import empty as _empty
from pykern.tensor.core.tensor import empty_like as _empty_like
from pykern.tensor.elementwise.functions import as_tensor as _as_tensor
from pykern.tensor.index.indexing import concat as _concat
from pykern.tensor.index.indexing import stack as _stack
from pykern.tensor.index.indexing import take as _take
from pykern.tensor.index.indexing import take_along_axis as _take_along_axis
from pykern.tensor.gemm.matmul import matmul as _matmul
from pykern.tensor.reduce.scan import cumprod as _cumprod
from pykern.tensor.reduce.scan import cumsum as _cumsum
from pykern.tensor.reduce.sort import argsort as _argsort
from pykern.tensor.reduce.sort import sort as _sort
from pykern.tensor.elementwise.functions import astype as _astype
from pykern.tensor.core.promotion import can_cast as _can_cast
from pykern.tensor.core.strided import prod as _prod
from pykern.tensor.core.promotion import result_type as _result_type
from pykern.ops.registry import exported as _exported
from pykern.tensor import library as _library  # noqa: F401  (every op module declares its ops)

# Every op the namespace exports, from the registry (pykern.ops), by its standard name; the
# functions defined below give those whose standard signature differs from pykern's their own
# (concat, take, sort, matmul, astype, cumulative_sum, ...), and the rest of the standard.
globals().update(_exported("array_api"))
any, multiply, not_equal, ones, subtract, sum, zeros, zeros_like = (  # (used below)
    globals()[n] for n in ("any", "multiply", "not_equal", "ones", "subtract", "sum", "zeros",
                           "zeros_like"))

__array_api_version__ = "2024.12"

# the extensions, as `xp.linalg` and `xp.fft`
from pykern import fft, linalg  # noqa: E402

# importable as `pykern.array_api` too (`import pykern.array_api as xp`)
_sys.modules.setdefault("pykern.array_api", _sys.modules[__name__])

# ---------------------------------------------------------------- constants and dtypes

e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None

bool = dt.bool_  # noqa: A001
int8, int16, int32, int64 = dt.i8, dt.i16, dt.i32, dt.i64
uint8, uint16, uint32, uint64 = dt.u8, dt.u16, dt.u32, dt.u64
float16, float32, float64 = dt.f16, dt.f32, dt.f64  # float16: an extension
complex64, complex128 = dt.c64, dt.c128


# ---------------------------------------------------------------- creation


def asarray(obj: object, /, *, dtype: object = None, device: object = None,
            copy: builtins_bool | None = None) -> Tensor:  # type: ignore[name-defined]  # noqa: F821
    """A tensor from a tensor, array, (nested) sequence or scalar: on `device` (default: a
    tensor's own device, else the current one)."""
    if isinstance(obj, Tensor) and device is not None:
        obj = obj.to(device)
    return _asarray(obj, dtype, copy=copy)


def empty(shape: int | Sequence[int], *, dtype: object = None, device: object = None) -> Tensor:
    """An uninitialised tensor on `device` (default: the current device)."""
    return _empty(shape, dt.f32 if dtype is None else dtype)


def empty_like(x: Tensor, /, *, dtype: object = None, device: object = None) -> Tensor:
    """An uninitialised tensor of x's shape (and dtype, unless given), on `device` (default:
    x's device)."""
    return _empty_like(x, dtype)


def from_dlpack(x: object, /, *, device: object = None,
                copy: builtins_bool | None = None) -> Tensor:  # type: ignore[name-defined]  # noqa: F821
    """A tensor from any DLPack-exporting array: a pk.Tensor is returned as it is (copied for
    `copy=True`, moved for another `device`); another library's host array is copied, or with
    `copy=False` shared where the device is the host and the array is writable and
    C-contiguous (else BufferError, as the standard asks)."""
    if not isinstance(x, Tensor):
        _refuse_grad("array_api.from_dlpack", x)  # a copy made through the host cuts the graph
    elif device is not None:
        moved = x.to(device)
        if moved is not x:
            return moved
    return _import_dlpack(x, copy)


# ---------------------------------------------------------------- data types


def astype(x: Tensor, dtype: object, /, *, copy: builtins_bool = True,  # type: ignore  # noqa
           device: object = None) -> Tensor:
    """x's values converted to `dtype` (a new tensor; with copy=False, x itself where nothing
    changes), on `device` (default: x's)."""
    if device is not None and isinstance(x, Tensor):
        moved = x.to(device)
        if moved is not x:
            return _astype(moved, dtype, copy=False)
    return _astype(x, dtype, copy=copy)


def result_type(*arrays_and_dtypes: object) -> DType:
    """The dtype the standard's promotion gives these tensors, dtypes and Python scalars."""
    return _result_type(*arrays_and_dtypes)


def can_cast(from_: object, to: object, /) -> builtins_bool:  # type: ignore  # noqa: F821
    """Whether `from_` (a dtype or a tensor's) casts to `to` by the promotion rules."""
    src = from_.dtype if isinstance(from_, Tensor) else dt.as_dtype(from_)
    return _can_cast(src, dt.as_dtype(to))


@dataclass(frozen=True)
class finfo_object:  # noqa: N801
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801
    bits: int
    max: int
    min: int
    dtype: DType


def _dtype_of(x: object) -> DType:
    return x.dtype if isinstance(x, Tensor) else dt.as_dtype(x)


def finfo(type: object, /) -> finfo_object:  # noqa: A002
    """Machine limits of a float dtype; of a complex one, those of its parts (dtype f32 for
    c64, as the standard says)."""
    d = _dtype_of(type)
    if not (d.is_float or d.is_complex):
        raise ValueError(f"finfo takes a float or complex dtype, not {d.name}")
    d = d.real_dtype
    f = np.finfo(d.numpy)
    return finfo_object(d.bits, float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), d)


def iinfo(type: object, /) -> iinfo_object:  # noqa: A002
    """Limits of an integer dtype."""
    d = _dtype_of(type)
    if not d.is_int:
        raise ValueError(f"iinfo takes an integer dtype, not {d.name}")
    i = np.iinfo(d.numpy)
    return iinfo_object(d.bits, int(i.max), int(i.min), d)


_KINDS = {
    "bool": lambda d: d == dt.bool_,
    "signed integer": lambda d: d.kind == dt.INT,
    "unsigned integer": lambda d: d.kind == dt.UINT,
    "integral": lambda d: d.is_int,
    "real floating": lambda d: d.is_float,
    "complex floating": lambda d: d.is_complex,
    "numeric": lambda d: d != dt.bool_,
}


def isdtype(dtype: object, kind: object) -> builtins_bool:  # type: ignore  # noqa: F821
    """Whether `dtype` is of `kind`: a dtype, a kind name ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric') or a
    tuple of these."""
    d = dt.as_dtype(dtype)
    if isinstance(kind, tuple):
        return builtins_any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}")
        return _KINDS[kind](d)
    return d == dt.as_dtype(kind)


import builtins as _builtins  # noqa: E402

builtins_bool = _builtins.bool
builtins_any = _builtins.any


# ---------------------------------------------------------------- elementwise extras


def conj(x: Tensor, /) -> Tensor:
    """The complex conjugate (a copy of a real tensor)."""
    return _complex.conj(x)


def real(x: Tensor, /) -> Tensor:
    """The real part (a new tensor: a copy of a real tensor)."""
    return _complex.real(x).copy()


def imag(x: Tensor, /) -> Tensor:
    """The imaginary part (a new tensor: zeros for a real tensor)."""
    t = _as_tensor(x)
    return _complex.imag(t).copy() if t.dtype.is_complex else zeros_like(t)


# ---------------------------------------------------------------- linear algebra


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The matrix product, batched over leading dimensions (numpy's matmul)."""
    return _matmul(x1, x2)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along `axis` (broadcasting the other dimensions), in the
    operands' promoted dtype as the standard says (integers wrap there, as matmul's do; bool
    is any-of-ands)."""
    a, b = _as_tensor(x1), _as_tensor(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("vecdot needs tensors of at least one dimension")
    if axis >= 0:
        raise ValueError("vecdot: axis must be negative (it counts from the end of the "
                         "broadcast shape)")
    if -axis > a.ndim or -axis > b.ndim or a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} of shapes {a.shape} and {b.shape} must exist "
                         "and have one size")
    products = multiply(conj(a) if a.dtype.is_complex else a, b)  # conj(x1), as the standard
    if products.dtype == dt.bool_:
        return any(products, axis=axis)
    return sum(products, axis=axis, dtype=products.dtype)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: int | tuple = 2) -> Tensor:
    """Sum of products over the given axes (the last `axes` of x1 with the first of x2, or two
    sequences of axes), through one matmul."""
    a, b = _as_tensor(x1), _as_tensor(x2)
    if hasattr(axes, "__index__"):
        n = operator.index(axes)  # type: ignore[arg-type]
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: axes={n} does not fit shapes {a.shape}, {b.shape}")
        ax_a = list(range(a.ndim - n, a.ndim))
        ax_b = list(range(n))
    else:
        ax_a = [operator.index(i) % a.ndim for i in axes[0]]  # type: ignore[index]
        ax_b = [operator.index(i) % b.ndim for i in axes[1]]  # type: ignore[index]
        if len(ax_a) != len(ax_b):
            raise ValueError("tensordot: the two axes sequences differ in length")
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: axis {i} of x1 ({a.shape[i]}) and axis {j} of x2 "
                             f"({b.shape[j]}) differ")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    k = _prod([a.shape[i] for i in ax_a])
    m = _prod([a.shape[i] for i in free_a])
    n_ = _prod([b.shape[j] for j in free_b])
    am = a.permute(*free_a, *ax_a).reshape(m, k)
    bm = b.permute(*ax_b, *free_b).reshape(k, n_)
    out = matmul(am, bm)
    return out.reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


# ---------------------------------------------------------------- from the other op modules


def concat(arrays: Sequence[Tensor], /, *, axis: int | None = 0) -> Tensor:
    """The tensors joined along `axis` (flattened first for None)."""
    if axis is None:
        return _concat([_as_tensor(a).reshape(-1) for a in arrays], axis=0)
    return _concat(list(arrays), axis=axis)


def stack(arrays: Sequence[Tensor], /, *, axis: int = 0) -> Tensor:
    """The tensors (of one shape) joined along a new dimension `axis`."""
    return _stack(list(arrays), axis=axis)


def take(x: Tensor, indices: Tensor, /, *, axis: int | None = None) -> Tensor:
    """The elements at the 1-D `indices` along `axis` (negative ones count from the end)."""
    return _take(x, indices, axis=axis)


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """Elements of `x` at `indices` along `axis` (both of one number of dimensions, the other
    dimensions broadcasting), as numpy's `take_along_axis`."""
    return _take_along_axis(x, indices, axis)


def diff(x: Tensor, /, *, axis: int = -1, n: int = 1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along `axis` (`x[1:] - x[:-1]`, n times), after `prepend`
    and `append` are joined to `x` along it (bool: `!=`, as numpy)."""
    x = _as_tensor(x)
    if x.ndim == 0:
        raise ValueError("diff needs a tensor of at least one dimension")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"diff: axis {axis} is out of range for {x.ndim} dimensions")
    axis %= x.ndim
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: n must be at least 0, not {n}")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _concat([_as_tensor(p) for p in parts], axis=axis)
    for _ in range(n):
        if x.shape[axis] == 0:
            break
        head = tuple(slice(None) if i != axis else slice(1, None) for i in range(x.ndim))
        tail = tuple(slice(None) if i != axis else slice(None, -1) for i in range(x.ndim))
        x = not_equal(x[head], x[tail]) if x.dtype == dt.bool_ else subtract(x[head], x[tail])
    return x


def sort(x: Tensor, /, *, axis: int = -1, descending: builtins_bool = False,  # type: ignore
         stable: builtins_bool = True) -> Tensor:  # type: ignore  # noqa: F821
    """Sorted along `axis` (always stable)."""
    return _sort(x, axis=axis, descending=descending)


def argsort(x: Tensor, /, *, axis: int = -1, descending: builtins_bool = False,  # type: ignore
            stable: builtins_bool = True) -> Tensor:  # type: ignore  # noqa: F821
    """Indices that sort `x` along `axis` (always stable: ties keep their order)."""
    return _argsort(x, axis=axis, descending=descending)


def cumulative_sum(x: Tensor, /, *, axis: int | None = None, dtype: object = None,
                   include_initial: builtins_bool = False) -> Tensor:  # type: ignore  # noqa
    """The cumulative sum along `axis` (required past one dimension), in `dtype` (as
    `sum`'s); `include_initial` puts the empty sum, 0, first."""
    return _cumulative("cumulative_sum", _cumsum, zeros, x, axis, dtype, include_initial)


def cumulative_prod(x: Tensor, /, *, axis: int | None = None, dtype: object = None,
                    include_initial: builtins_bool = False) -> Tensor:  # type: ignore  # noqa
    """The cumulative product along `axis` (required past one dimension), in `dtype` (as
    `prod`'s); `include_initial` puts the empty product, 1, first."""
    return _cumulative("cumulative_prod", _cumprod, ones, x, axis, dtype, include_initial)


def _cumulative(op: str, scan: _Callable[..., Tensor], empty_result: _Callable[..., Tensor],
                x: object, axis: int | None, dtype: object, include_initial: bool) -> Tensor:
    """`scan` of `x` along `axis`, led by `empty_result`'s value (the scan of nothing) where
    `include_initial`."""
    x = _as_tensor(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{op}: axis is required for tensors of more than one dimension")
        axis = 0
    result = scan(x, axis=axis, dtype=dtype)
    if include_initial:
        axis = axis % x.ndim
        shape = list(result.shape)
        shape[axis] = 1
        return _concat([empty_result(tuple(shape), result.dtype), result], axis=axis)
    return result


# ---------------------------------------------------------------- inspection


class Info:
    """`__array_namespace_info__()`: what the namespace of `api_version` supports."""

    def __init__(self, api_version: str = __array_api_version__) -> None:
        self.api_version = api_version

    def capabilities(self) -> dict[str, object]:
        """Boolean indexing and data-dependent shapes (unique_*, nonzero) are supported; from
        2024.12 on, "max dimensions" too: None, no limit."""
        found: dict[str, object] = {"boolean indexing": True, "data-dependent shapes": True}
        if self.api_version >= "2024.12":
            found["max dimensions"] = None
        return found

    def default_device(self) -> object:
        """The current device (`pk.get_device()`): where creation functions put tensors."""
        return get_device()

    def devices(self) -> list[object]:
        """The current device first, then every other device this process has opened (a
        tensor moves to any device of `pk.devices()` with `t.to(device)`)."""
        return opened_devices()

    def default_dtypes(self, *, device: object = None) -> dict[str, DType | None]:
        """float32, complex64, int32 and int64 (indexing), on every device."""
        return {"real floating": float32, "complex floating": complex64, "integral": int32,
                "indexing": int64}

    def dtypes(self, *, device: object = None, kind: object = None) -> dict[str, DType]:
        """The standard's dtypes pykern has, by name; of one `kind` (as `isdtype` takes)."""
        names = {"bool": bool, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
                 "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
                 "float32": float32, "float64": float64, "complex64": complex64,
                 "complex128": complex128}
        if kind is None:
            return names
        return {k: v for k, v in names.items() if isdtype(v, kind)}


def __array_namespace_info__() -> Info:  # noqa: N807
    """What this namespace supports: devices, dtypes, capabilities (the standard's inspection
    API)."""
    return Info()


__all__ = [name for name in dir() if not name.startswith("_") and name not in (
    "annotations", "Sequence", "dataclass", "Any", "DType", "Tensor", "math", "np", "operator",
    "dt", "builtins_bool", "builtins_any", "finfo_object", "iinfo_object", "Info",
    "opened_devices")]

# each function runs on its tensors' device (or on `device=`'s): pykern.tensor.core.operand_device
_edge.wrap_functions(globals(), __all__)
