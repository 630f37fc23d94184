"""Shape manipulation beyond the Tensor methods: `expand_dims`, `broadcast_arrays`, `moveaxis`,
`roll`, `tile`, `repeat`, `unstack`, `meshgrid`, ... Views where the result is a view; copies go
through the elementwise copy kernel (strided assignment), so nothing is computed on the host."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from pykern.lang import dtypes as dt
from pykern.tensor.core.tensor import Tensor, normalize_axis
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.core import strided
from pykern.tensor.index.indexing import concat, take
from pykern.ops.public import declare, torch_names
from pykern.tensor.reduce.searching import repeat_indices


def _axes(axis: int | Sequence[int] | None, ndim: int) -> list[int]:
    if axis is None:
        return list(range(ndim))
    axes = [axis] if hasattr(axis, "__index__") else list(axis)  # type: ignore[arg-type]
    norm = [normalize_axis(a, ndim) for a in axes]
    if len(set(norm)) != len(norm):
        raise ValueError(f"repeated axis in {axis!r}")
    return norm


def reshape(x: object, /, shape: Sequence[int], *, copy: bool | None = None) -> Tensor:
    """`x` in a new shape: a view when the strides allow it; `copy=True` always copies,
    `copy=False` raises ValueError instead of copying."""
    x = ew.as_tensor(x)
    if copy:
        return x.copy().reshape(shape)
    result = x.reshape(shape)
    if copy is False and result.buffer is not x.buffer:
        raise ValueError(f"reshape(copy=False): a tensor of shape {x.shape} and strides "
                         f"{x.strides} cannot be viewed as {tuple(shape)} without a copy")
    return result


def permute_dims(x: object, /, axes: Sequence[int]) -> Tensor:
    """A view with the dimensions in the order `axes` (the array API's transpose)."""
    return ew.as_tensor(x).permute(*axes)


def expand_dims(x: object, /, axis: int = 0) -> Tensor:
    """A size-1 dimension inserted at `axis` (a view; negative counts from the end of the
    result). IndexError for an axis outside [-ndim - 1, ndim], as the standard says."""
    x = ew.as_tensor(x)
    try:
        axis = normalize_axis(axis, x.ndim + 1, op="expand_dims")
    except ValueError:
        raise IndexError(f"expand_dims: axis {axis} is outside [{-x.ndim - 1}, {x.ndim}] for a "
                         f"tensor of {x.ndim} dimension(s)") from None
    return x.unsqueeze(axis)


def squeeze(x: object, /, axis: int | Sequence[int] | None = None) -> Tensor:
    """A view without the size-1 dimensions `axis` (all of them for None)."""
    return ew.as_tensor(x).squeeze(axis)


def flip(x: object, /, *, axis: int | Sequence[int] | None = None) -> Tensor:
    """Elements reversed along `axis` (all axes when None): a view with negative strides."""
    return ew.as_tensor(x).flip(axis)


def broadcast_to(x: object, /, shape: Sequence[int]) -> Tensor:
    """A view of x broadcast to `shape` (numpy's rules; no copy)."""
    return ew.as_tensor(x).broadcast_to(shape)


def broadcast_arrays(*arrays: object) -> list[Tensor]:
    """Views of all `arrays` broadcast to their common shape."""
    tensors = [ew.as_tensor(a) for a in arrays]
    shape = strided.broadcast_shapes(*(t.shape for t in tensors))
    return [t.broadcast_to(shape) for t in tensors]


def moveaxis(x: object, source: int | Sequence[int], destination: int | Sequence[int], /
             ) -> Tensor:
    """Axes moved to new positions, the others keeping their order (a view)."""
    x = ew.as_tensor(x)
    src = _axes(source, x.ndim)
    dst = _axes(destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.permute(*order)


def matrix_transpose(x: object, /) -> Tensor:
    """The last two axes swapped (a view)."""
    return ew.as_tensor(x).mT


def unstack(x: object, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """Views of `x` split along `axis`."""
    x = ew.as_tensor(x)
    axis = normalize_axis(axis, x.ndim)
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))


def roll(x: object, /, shift: int | Sequence[int], *, axis: int | Sequence[int] | None = None
         ) -> Tensor:
    """Elements shifted along `axis` (wrapping around); with axis None, of the flattened
    tensor, reshaped back."""
    x = ew.as_tensor(x)
    if axis is None:
        s = operator.index(shift) if hasattr(shift, "__index__") else None
        if s is None:
            raise ValueError("roll: with axis=None, shift must be an int")
        return roll(x.reshape(-1), s, axis=0).reshape(x.shape)
    shifts = [shift] if hasattr(shift, "__index__") else list(shift)  # type: ignore[arg-type]
    axes = [axis] if hasattr(axis, "__index__") else list(axis)  # type: ignore[arg-type]
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    total = {}
    for s, a in zip(shifts, axes):
        a = normalize_axis(a, x.ndim)
        total[a] = total.get(a, 0) + operator.index(s)
    src = x
    for a, s in total.items():
        n = x.shape[a]
        s = s % n if n else 0
        if s:
            # the last s elements, then the others: a concat of two views (differentiable)
            lead = (slice(None),) * a
            src = concat([src[lead + (slice(n - s, None),)], src[lead + (slice(None, n - s),)]],
                         axis=a)
    return src if src is not x else x.copy()


def tile(x: object, repetitions: Sequence[int], /) -> Tensor:
    """`x` repeated `repetitions[k]` times along dimension k (as numpy's tile)."""
    x = ew.as_tensor(x)
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions {reps}")
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + x.shape
    base = x.reshape(shape)
    # view (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...), copied, then merged
    inter = base.reshape(tuple(v for s in shape for v in (1, s)))
    expanded = inter.broadcast_to(tuple(v for r, s in zip(reps, shape) for v in (r, s)))
    return expanded.copy().reshape(tuple(r * s for r, s in zip(reps, shape)))


def repeat(x: object, repeats: int | Tensor | Sequence[int], /, *, axis: int | None = None
           ) -> Tensor:
    """Each element repeated `repeats` times along `axis` (the flattened tensor when None). An
    int repeats every element equally (a broadcast copy); per-element repeats (a tensor or
    list) gather with `pk.take`."""
    x = ew.as_tensor(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = normalize_axis(axis, x.ndim)
    if hasattr(repeats, "__index__") and not isinstance(repeats, Tensor):
        r = operator.index(repeats)
        if r < 0:
            raise ValueError("repeat: repeats must be >= 0")
        shape = x.shape
        inter = x.unsqueeze(axis + 1).broadcast_to(shape[:axis + 1] + (r,) + shape[axis + 1:])
        return inter.copy().reshape(shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])
    reps = ew.as_tensor(repeats)
    if reps.ndim != 1 or reps.shape[0] not in (1, x.shape[axis]):
        raise ValueError(f"repeat: repeats has shape {reps.shape}, expected ({x.shape[axis]},) "
                         "or (1,)")
    if reps.dtype.is_float or reps.dtype == dt.bool_:
        raise TypeError(f"repeat: repeats must be integers, not {reps.dtype.name}")
    if reps.shape[0] == 1 and x.shape[axis] != 1:  # broadcast: one count for every element
        return repeat(x, int(reps.item()), axis=axis)
    index = repeat_indices(reps)
    return take(x, index, axis=axis)


def meshgrid(*arrays: object, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids from 1-D tensors (copies; 'xy' swaps the first two axes, as numpy)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    tensors = [ew.as_tensor(a) for a in arrays]
    for t in tensors:
        if t.ndim != 1:
            raise ValueError("meshgrid takes 1-D tensors")
    n = len(tensors)
    shape = [t.shape[0] for t in tensors]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(tensors):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        view_shape = [1] * n
        view_shape[pos] = t.shape[0]
        out.append(t.reshape(view_shape).broadcast_to(tuple(shape)).copy())
    return out


def _shape_op(fn: Callable[..., Any], torch: str | None, *aten: str, grad: str = "linear",
              numpy: str | None = None, shape: tuple[int, ...] = (2, 3, 4),
              **calls: Any) -> Callable[..., Any]:
    """A shape op declared: a view or a composition of ops that record themselves. The test
    matrix calls it on an operand of `shape` with each of `calls`' values (numpy's function
    of the same name its reference)."""
    name = fn.__name__
    return declare(fn, "shape", grad=grad, exports=("array_api",), aliases=torch_names(
        torch, *aten, numpy=numpy or name, array_api=name),
        samples={"shapes": (shape,), "calls": tuple(calls.values()) or ({},)})


reshape = _shape_op(reshape, "reshape", "aten::reshape", "aten::view", flat={"args": ((6, 4),)})
permute_dims = _shape_op(permute_dims, "permute", "aten::permute", numpy="transpose",
                         swap={"axes": (2, 0, 1)})
expand_dims = _shape_op(expand_dims, "unsqueeze", "aten::unsqueeze", middle={"axis": 1})
squeeze = _shape_op(squeeze, "squeeze", "aten::squeeze.dims", shape=(3, 1, 4),
                    middle={"axis": 1})
flip = _shape_op(flip, "flip", "aten::flip", every={}, one={"axis": 1})
broadcast_to = _shape_op(broadcast_to, "broadcast_to", "aten::expand", shape=(3, 1),
                         wider={"shape": (2, 3, 4)})
broadcast_arrays = _shape_op(broadcast_arrays, "broadcast_tensors", "aten::broadcast_tensors")
moveaxis = _shape_op(moveaxis, "movedim", "aten::movedim.int", first_last={"args": (0, 2)})
matrix_transpose = _shape_op(matrix_transpose, None, numpy="matrix_transpose")
unstack = _shape_op(unstack, "unbind", "aten::unbind.int", middle={"axis": 1})
roll = _shape_op(roll, "roll", "aten::roll", grad="composite",
                 along={"shift": 2, "axis": 1}, flat={"shift": -3})
tile = _shape_op(tile, "tile", "aten::tile", grad="composite", twice={"args": ((2, 1, 1),)})
repeat = _shape_op(repeat, "repeat_interleave", "aten::repeat_interleave.self_Tensor",
                   grad="composite", along={"args": (2,), "axis": 1})
meshgrid = _shape_op(meshgrid, "meshgrid", "aten::meshgrid.indexing", grad="composite",
                     shape=(3,))
