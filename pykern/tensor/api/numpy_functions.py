"""numpy's functions on tensors (`Tensor.__array_function__`): `np.sum(t)`, `np.concatenate`,
`np.where`, `np.reshape`, ... run pykern's ops and return tensors. Each entry of `FUNCTIONS`
takes numpy's own signature (positions, names, `out=`, `dtype=`) and hands the work to the
op library. Every other numpy function given a tensor (and an entry given an option it does
not take) runs numpy's own on host copies and returns numpy's result, as for a torch CPU
tensor (`pykern.tensor.api.numpy_fallback`; an implicit copy, which `pk.transfer_guard` can
forbid).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pykern.tensor.create import creation
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.index import indexing, manipulation
from pykern.tensor.reduce import reduction
from pykern.tensor.reduce import scan, searching, sort
from pykern.tensor.gemm.matmul import matmul
from pykern.tensor.api.numpy_fallback import Unsupported, on_host
from pykern.tensor.api.numpy_ufuncs import into, refused, single_out
from pykern.tensor.core.promotion import result_type
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.api.namespace import tensordot


def array_function(func: Any, args: tuple, kwargs: dict) -> Any:
    """`Tensor.__array_function__`: the entry of `FUNCTIONS` for `func`, else (or where the
    entry does not take an option given) numpy's `func` on host copies."""
    name = getattr(func, "__name__", "")
    impl = FUNCTIONS.get(name)
    if impl is not None and getattr(np, name, None) is func:
        try:
            return impl(*args, **kwargs)
        except Unsupported:
            pass
    module = getattr(func, "__module__", "numpy") or "numpy"
    return on_host(func, f"{module}.{name}", args, kwargs)


def _may_share_memory(a: object, b: object, max_work: object = None) -> bool:
    """Whether two arrays may share memory: for tensors, whether they view one buffer over
    overlapping element ranges (a tensor and a numpy array: only a host tensor wrapping
    that array's memory can)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a.buffer is not b.buffer or a.size == 0 or b.size == 0:
            return False
        (lo_a, hi_a), (lo_b, hi_b) = a._extent(), b._extent()
        return lo_a <= hi_b and lo_b <= hi_a
    tensor, other = (a, b) if isinstance(a, Tensor) else (b, a)
    buffer = tensor.buffer  # type: ignore[union-attr]
    if getattr(buffer, "_owned", True) or not isinstance(other, np.ndarray):
        return False  # device memory, or the host device's own: no numpy array holds it
    return bool(np.may_share_memory(buffer.memory, other))


def _shares_memory(a: object, b: object, max_work: object = None) -> bool:
    """Whether two tensors share an element: exactly, as numpy decides for strided views of
    one buffer (over the views' element offsets, without reading them)."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return _may_share_memory(a, b)
    if not _may_share_memory(a, b):
        return False
    return bool(np.intersect1d(_offsets(a), _offsets(b)).size)


def _offsets(t: Tensor) -> np.ndarray:
    """The element offsets a tensor view covers in its buffer."""
    grids = np.indices(t.shape, dtype=np.int64).reshape(t.ndim, -1) if t.ndim else \
        np.zeros((0, 1), np.int64)
    strides = np.asarray(t.element_strides, np.int64).reshape(-1, 1)
    return t.offset + (grids * strides).sum(axis=0)


def _no_value(value: object) -> bool:
    """numpy's "not given" default (`np._NoValue`) or None."""
    return value is None or type(value).__name__ == "_NoValueType"


def _refuse(name: str, **options: object) -> None:
    """A TypeError for the first of numpy's `options` given a value pykern does not take."""
    for key, value in options.items():
        if not _no_value(value) and not (key == "where" and value is True):
            raise refused(f"numpy.{name}", f"{key}={value!r}")


# ---------------------------------------------------------------- reductions


def _sum_like(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def numpy_sum(a: object, axis: object = None, dtype: object = None, out: object = None,
                  keepdims: bool = False, initial: object = None, where: object = None
                  ) -> Tensor:
        _refuse(name, initial=initial, where=where)
        result = fn(a, axis, keepdims=bool(keepdims), dtype=dtype)
        return into(single_out(f"numpy.{name}", out), result)
    numpy_sum.__name__ = name
    return numpy_sum


def _extremum(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def numpy_extremum(a: object, axis: object = None, out: object = None,
                       keepdims: bool = False, initial: object = None, where: object = None
                       ) -> Tensor:
        _refuse(name, initial=initial, where=where)
        return into(single_out(f"numpy.{name}", out), fn(a, axis, keepdims=bool(keepdims)))
    numpy_extremum.__name__ = name
    return numpy_extremum


def _mean(a: object, axis: object = None, dtype: object = None, out: object = None,
          keepdims: bool = False, *, where: object = None) -> Tensor:
    _refuse("mean", where=where)
    x = ew.as_tensor(a)
    result = reduction.mean(x if dtype is None else x.astype(dtype), axis,
                            keepdims=bool(keepdims))
    return into(single_out("numpy.mean", out), result)


def _spread(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def numpy_spread(a: object, axis: object = None, dtype: object = None, out: object = None,
                     ddof: float = 0, keepdims: bool = False, *, where: object = None,
                     mean: object = None, correction: object = None) -> Tensor:
        _refuse(name, where=where, mean=mean)
        x = ew.as_tensor(a)
        result = fn(x if dtype is None else x.astype(dtype), axis, keepdims=bool(keepdims),
                    correction=ddof if correction is None else correction)
        return into(single_out(f"numpy.{name}", out), result)
    numpy_spread.__name__ = name
    return numpy_spread


def _arg(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def numpy_arg(a: object, axis: int | None = None, out: object = None, *,
                  keepdims: bool = False) -> Tensor:
        return into(single_out(f"numpy.{name}", out), fn(a, axis, keepdims=bool(keepdims)))
    numpy_arg.__name__ = name
    return numpy_arg


def _logical(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def numpy_logical(a: object, axis: object = None, out: object = None,
                      keepdims: bool = False, *, where: object = None) -> Tensor:
        _refuse(name, where=where)
        return into(single_out(f"numpy.{name}", out), fn(a, axis, keepdims=bool(keepdims)))
    numpy_logical.__name__ = name
    return numpy_logical


def _cumsum(a: object, axis: int | None = None, dtype: object = None, out: object = None
            ) -> Tensor:
    return into(single_out("numpy.cumsum", out), scan.cumsum(a, axis, dtype))


def _count_nonzero(a: object, axis: object = None, *, keepdims: bool = False) -> Tensor:
    return searching.count_nonzero(a, axis, keepdims=keepdims)


# ---------------------------------------------------------------- shapes and joins


def _concatenate(arrays: Sequence[object], axis: int | None = 0, out: object = None,
                 dtype: object = None, casting: object = None) -> Tensor:
    _refuse("concatenate", casting=casting)
    result = indexing.concat(list(arrays), axis=axis)
    result = result if dtype is None else result.astype(dtype)
    return into(single_out("numpy.concatenate", out), result)


def _stack(arrays: Sequence[object], axis: int = 0, out: object = None, *,
           dtype: object = None, casting: object = None) -> Tensor:
    _refuse("stack", casting=casting)
    result = indexing.stack(list(arrays), axis=axis)
    result = result if dtype is None else result.astype(dtype)
    return into(single_out("numpy.stack", out), result)


def _reshape(a: object, /, shape: object = None, order: str = "C", *, newshape: object = None,
             copy: bool | None = None) -> Tensor:
    if order != "C":
        raise refused("numpy.reshape", f"order={order!r}")
    shape = newshape if shape is None else shape
    shape = (shape,) if hasattr(shape, "__index__") else tuple(shape)  # type: ignore[arg-type]
    return manipulation.reshape(a, shape, copy=copy)


def _transpose(a: object, axes: Sequence[int] | None = None) -> Tensor:
    x = ew.as_tensor(a)
    return x.transpose() if axes is None else x.permute(*axes)


def _where(condition: object, x: object = None, y: object = None) -> Any:
    if x is None and y is None:
        return searching.nonzero(condition)
    if x is None or y is None:
        raise ValueError("numpy.where: give both x and y, or neither")
    return ew.where(condition, x, y)


def _clip(a: object, a_min: object = None, a_max: object = None, out: object = None, *,
          min: object = None, max: object = None, **options: object) -> Tensor:  # noqa: A002
    _refuse("clip", **options)
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    return into(single_out("numpy.clip", out), ew.clip(a, lo, hi))


def _expand_dims(a: object, axis: int | Sequence[int]) -> Tensor:
    x = ew.as_tensor(a)
    if hasattr(axis, "__index__"):
        return manipulation.expand_dims(x, operator.index(axis))  # type: ignore[arg-type]
    for ax in sorted(manipulation._axes(axis, x.ndim + len(axis))):  # type: ignore[arg-type]
        x = manipulation.expand_dims(x, ax)
    return x


def _squeeze(a: object, axis: object = None) -> Tensor:
    return ew.as_tensor(a).squeeze(axis)  # type: ignore[arg-type]


def _repeat(a: object, repeats: object, axis: int | None = None) -> Tensor:
    return manipulation.repeat(a, repeats, axis=axis)  # type: ignore[arg-type]


# ---------------------------------------------------------------- sorting, products, misc


def _sort(a: object, axis: int | None = -1, kind: object = None, order: object = None, *,
          stable: object = None) -> Tensor:
    _refuse("sort", order=order)
    x = ew.as_tensor(a)
    return sort.sort(x.reshape(-1) if axis is None else x, -1 if axis is None else axis)


def _argsort(a: object, axis: int | None = -1, kind: object = None, order: object = None, *,
             stable: object = None) -> Tensor:
    _refuse("argsort", order=order)
    x = ew.as_tensor(a)
    return sort.argsort(x.reshape(-1) if axis is None else x, -1 if axis is None else axis)


def _dot(a: object, b: object, out: object = None) -> Tensor:
    ta, tb = ew.as_tensor(a), ew.as_tensor(b)
    if ta.ndim == 0 or tb.ndim == 0:
        result = ew.multiply(ta, tb)
    elif ta.ndim <= 2 and tb.ndim <= 2:
        result = matmul(ta, tb)
    else:  # numpy's dot of stacks pairs every matrix of one with every one of the other
        raise refused("numpy.dot", f"operands of {ta.ndim} and {tb.ndim} dimensions (use "
                      "np.matmul for stacks of matrices)")
    return into(single_out("numpy.dot", out), result)


def _tensordot(a: object, b: object, axes: object = 2) -> Tensor:
    return tensordot(a, b, axes=axes)  # type: ignore[arg-type]


def _round(a: object, decimals: int = 0, out: object = None) -> Tensor:
    return ew.as_tensor(a).round(decimals, out=single_out("numpy.round", out))


def _like(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def numpy_like(a: object, *values: object, dtype: object = None, order: str = "K",
                   subok: bool = True, shape: object = None, device: object = None) -> Tensor:
        _refuse(name, shape=shape, device=device)
        return fn(a, *values, dtype)
    numpy_like.__name__ = name
    return numpy_like


def _take(a: object, indices: object, axis: int | None = None, out: object = None,
          mode: str = "raise") -> Tensor:
    if mode != "raise":
        raise refused("numpy.take", f"mode={mode!r}")
    return into(single_out("numpy.take", out), indexing.take(a, indices, axis=axis))


def _attribute(name: str) -> Callable[..., Any]:
    def numpy_attribute(a: object) -> Any:
        return getattr(a, name)
    numpy_attribute.__name__ = name
    return numpy_attribute


def _ravel(a: object, order: str = "C") -> Tensor:
    """numpy's `ravel`: the elements in row-major ("C"), column-major ("F") order, "A" (F
    where `a` is column-major and not row-major) or "K" (numpy's memory order: dimensions by
    decreasing stride, as numpy's iterator orders them; negative strides keep their order)."""
    t = ew.as_tensor(a)
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"numpy.ravel: order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    if order in ("A", "K") and not t.is_contiguous and t.T.is_contiguous:
        order = "F"
    if order == "F":
        return t.T.ravel()
    if order == "K" and not t.is_contiguous:
        return t.permute(_memory_order(t.element_strides)).ravel()
    return t.ravel()


def _memory_order(strides: Sequence[int]) -> list[int]:
    """The dimensions from outermost to innermost as numpy's iterator orders them for "K":
    an insertion sort from the innermost by |stride|, where a stride of 0 orders nothing."""
    perm = list(range(len(strides)))[::-1]  # innermost first
    for i0 in range(1, len(perm)):
        j0, pos = perm[i0], i0
        for i1 in range(i0 - 1, -1, -1):
            s0, s1 = strides[j0], strides[perm[i1]]
            if s0 != 0 and s1 != 0:
                if abs(s1) <= abs(s0):
                    break
                pos = i1
        del perm[i0]
        perm.insert(pos, j0)
    return perm[::-1]


def _copy(a: object, order: str = "K", subok: bool = False) -> Tensor:
    return ew.as_tensor(a).copy()


# numpy's function name -> its pykern implementation, with numpy's signature
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sum": _sum_like(reduction.sum, "sum"), "prod": _sum_like(reduction.prod, "prod"),
    "max": _extremum(reduction.max, "max"), "amax": _extremum(reduction.max, "amax"),
    "min": _extremum(reduction.min, "min"), "amin": _extremum(reduction.min, "amin"),
    "mean": _mean, "var": _spread(reduction.var, "var"), "std": _spread(reduction.std, "std"),
    "argmax": _arg(reduction.argmax, "argmax"), "argmin": _arg(reduction.argmin, "argmin"),
    "any": _logical(reduction.any, "any"), "all": _logical(reduction.all, "all"),
    "cumsum": _cumsum, "count_nonzero": _count_nonzero,
    "concatenate": _concatenate, "concat": _concatenate, "stack": _stack,
    "reshape": _reshape, "transpose": _transpose, "where": _where, "clip": _clip,
    "expand_dims": _expand_dims, "squeeze": _squeeze, "repeat": _repeat,
    "broadcast_to": lambda array, shape, subok=False: ew.as_tensor(array).broadcast_to(shape),
    "broadcast_arrays": lambda *args, subok=False: manipulation.broadcast_arrays(*args),
    "moveaxis": lambda a, source, destination: manipulation.moveaxis(a, source, destination),
    "swapaxes": lambda a, axis1, axis2: ew.as_tensor(a).swapaxes(axis1, axis2),
    "flip": lambda m, axis=None: manipulation.flip(m, axis=axis),
    "roll": lambda a, shift, axis=None: manipulation.roll(a, shift, axis=axis),
    "tile": lambda A, reps: manipulation.tile(
        A, (reps,) if hasattr(reps, "__index__") else tuple(reps)),  # type: ignore[arg-type]
    "ravel": _ravel,
    "sort": _sort, "argsort": _argsort, "searchsorted": lambda a, v, side="left", sorter=None:
        searching.searchsorted(a, v, side=side, sorter=sorter),
    "nonzero": lambda a: searching.nonzero(a),
    "dot": _dot, "tensordot": _tensordot, "round": _round, "around": _round,
    "take": _take, "take_along_axis": lambda arr, indices, axis=-1:
        indexing.take_along_axis(arr, indices, axis),
    "tril": lambda m, k=0: creation.tril(m, k=k), "triu": lambda m, k=0: creation.triu(m, k=k),
    "zeros_like": _like(creation.zeros_like, "zeros_like"),
    "ones_like": _like(creation.ones_like, "ones_like"),
    "full_like": _like(creation.full_like, "full_like"),
    "empty_like": _like(lambda a, dtype: creation.zeros_like(a, dtype), "empty_like"),
    "copy": _copy, "shape": _attribute("shape"), "ndim": _attribute("ndim"),
    "size": lambda a, axis=None: a.size if axis is None else a.shape[axis],
    "result_type": result_type,
    "may_share_memory": _may_share_memory, "shares_memory": _shares_memory,
    "cumprod": lambda a, axis=None, dtype=None, out=None: into(
        single_out("numpy.cumprod", out), scan.cumprod(a, axis, dtype)),
}
