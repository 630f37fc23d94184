"""Helpers shared by the linear-algebra, neural-network, indexing, sorting and scan ops:
argument checks, views, dtype rules for accumulators, and cutting a strided n-d problem into
launches of kernels that take 4-D arrays.

The kernels of these ops index every operand through its own strides and offset (`a[i, j]` on
a `pk.Tensor` view), so transposes, slices and broadcast (stride-0) operands need no copies.
Dimensions that the kernels iterate over together ("batch" dimensions) are merged where every
operand allows it and padded to the count the kernel takes; when more remain, the leading ones
are walked on the host, one launch each, with the operands' offsets moved along.
"""

import functools
import itertools
import operator
from collections.abc import Iterator, Sequence

import numpy as np

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.tensor import Tensor

# some drivers stop an invocation after a number of loop iterations in total (lavapipe:
# 65,535; `DeviceLimits.loop_iteration_cap`); ops split work so that each invocation stays
# this far below the cap (loops with a constant trip count are unrolled and do not count)
LOOP_BUDGET_MARGIN = 5_535


def as_tensor(x: object, what: str) -> Tensor:
    """`x` as a Tensor: tensors pass through; numpy arrays, lists and scalars are uploaded."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic, list, tuple, int, float, bool)):
        from pykern.tensor.tensor import asarray
        return asarray(x)
    raise TypeError(f"{what} must be a pk.Tensor or array-like, not {type(x).__name__}")


def normalize_axis(axis: object, ndim: int, op: str, what: str = "axis") -> int:
    """A non-negative axis; TypeError for a non-integer, ValueError when out of range."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: {what} must be an int, not {type(axis).__name__}")
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: {what} {axis} is out of range for a tensor of {ndim} "
                         f"dimension(s)")
    return axis + ndim if axis < 0 else axis


def check_int(value: object, op: str, what: str, minimum: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {what} must be an int, not {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{op}: {what} must be >= {minimum}, got {value}")
    return int(value)


def check_dtype_in(t: Tensor, allowed: Sequence[DType], op: str, what: str = "input") -> None:
    if t.dtype not in allowed:
        raise TypeError(f"{op}: {what} has dtype {t.dtype.name}; supported: "
                        f"{', '.join(d.name for d in allowed)}")


FLOATS = (dt.f16, dt.f32, dt.f64)
INTS = (dt.i8, dt.i16, dt.i32, dt.i64, dt.u8, dt.u16, dt.u32, dt.u64)
NUMERIC = INTS + FLOATS
INDEX_DTYPES = INTS


def promote(*dtypes: DType) -> DType:
    """The dtype of an op over operands of `dtypes`, by the tensor library's promotion rules
    (pykern.tensor.promotion; int with float gives the float, as PyTorch and JAX)."""
    try:
        from pykern.tensor.promotion import promote_types
    except ImportError:  # pragma: no cover - the promotion module is the other half's
        promote_types = _promote_pair
    return _reduce(promote_types, dtypes)


def _reduce(fn: object, items: Sequence[DType]) -> DType:
    result = items[0]
    for d in items[1:]:
        result = fn(result, d)  # type: ignore[operator]
    return result


def _promote_pair(a: DType, b: DType) -> DType:
    if a == b or b == dt.bool_:
        return a
    if a == dt.bool_:
        return b
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    unsigned, signed = (a, b) if a.kind == dt.UINT else (b, a)
    if signed.bits > unsigned.bits:
        return signed
    if unsigned.bits == 64:
        raise TypeError(f"no integer dtype holds both {a.name} and {b.name} values")
    return dt.BY_NAME[f"i{unsigned.bits * 2}"]


def accumulator(d: DType) -> DType:
    """The type sums of `d` values are kept in: f32 for f16, 32 bits for narrow integers and
    bool (integer sums wrap, so narrowing at the end gives numpy's wrapped result)."""
    if d == dt.f16:
        return dt.f32
    if d in (dt.bool_, dt.i8, dt.i16):
        return dt.i32
    if d in (dt.u8, dt.u16):
        return dt.u32
    return d


def compute_float(d: DType) -> DType:
    """The float type that transcendental math on `d` runs in: f32 for f16 and f32 (Vulkan's
    f16 math is too coarse for softmax sums), f64 for f64."""
    return dt.f64 if d == dt.f64 else dt.f32


def loop_budget() -> int | None:
    """The per-invocation loop-iteration budget of the current device (None: unlimited)."""
    cap = get_device().info.limits.loop_iteration_cap
    return None if cap is None else cap - LOOP_BUDGET_MARGIN


def is_cpu_device() -> bool:
    return get_device().info.kind == "cpu"


def subgroup_size() -> int:
    return int(get_device().info.features.subgroup_size)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def prod(xs: Sequence[int]) -> int:
    return int(np.prod(xs, dtype=np.int64)) if len(xs) else 1


def view(t: Tensor, shape: Sequence[int], strides: Sequence[int], offset: int | None = None
         ) -> Tensor:
    """A view of `t`'s buffer (strides and offset in elements)."""
    return Tensor(t.buffer, tuple(int(s) for s in shape), t.dtype,
                  tuple(int(s) for s in strides), t.offset if offset is None else int(offset))


def broadcast_shapes(*shapes: Sequence[int], op: str = "") -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, s in enumerate(shape, ndim - len(shape)):
            if s == out[i] or s == 1:
                continue
            if out[i] == 1:
                out[i] = s
            else:
                raise ValueError(f"{op}: shapes " + ", ".join(str(tuple(s)) for s in shapes)
                                 + " cannot be broadcast together")
    return tuple(out)


def broadcast_strides(shape: Sequence[int], t_shape: Sequence[int], t_strides: Sequence[int]
                      ) -> tuple[int, ...]:
    """Strides of a tensor of `t_shape` broadcast to `shape` (0 where it is repeated)."""
    lead = len(shape) - len(t_shape)
    out = [0] * lead
    for s, ts, st in zip(shape[lead:], t_shape, t_strides):
        out.append(0 if ts == 1 and s != 1 else st)
    return tuple(out)


def collapse(shape: Sequence[int], strides: Sequence[Sequence[int]]
             ) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Drops size-1 dimensions and merges dimension k into k+1 wherever every operand has
    stride[k] == stride[k+1] * shape[k+1]; the element order is unchanged."""
    new_shape: list[int] = []
    new_strides: list[list[int]] = [[] for _ in strides]
    for i, s in enumerate(shape):
        if s == 1:
            continue
        if new_shape and all(ns[-1] == st[i] * s for ns, st in zip(new_strides, strides)):
            new_shape[-1] *= s
            for ns, st in zip(new_strides, strides):
                ns[-1] = st[i]
        else:
            new_shape.append(s)
            for ns, st in zip(new_strides, strides):
                ns.append(st[i])
    return tuple(new_shape), [tuple(ns) for ns in new_strides]


def batch_pieces(shape: Sequence[int], strides: Sequence[Sequence[int]], keep: int
                 ) -> Iterator[tuple[list[int], tuple[int, ...], list[tuple[int, ...]]]]:
    """Cuts iteration over `shape` (every operand's strides for it given) into pieces of exactly
    `keep` dimensions: yields (offset delta per operand, shape, strides per operand). Merges
    dimensions first; leading ones that still do not fit are walked one index at a time."""
    if prod(shape) == 0:
        return
    cshape, cstrides = collapse(shape, strides)
    extra = max(len(cshape) - keep, 0)
    pad = keep - (len(cshape) - extra)
    inner_shape = (1,) * pad + cshape[extra:]
    inner_strides = [(0,) * pad + st[extra:] for st in cstrides]
    for idx in itertools.product(*(range(s) for s in cshape[:extra])):
        deltas = [sum(map(operator.mul, idx, st[:extra])) for st in cstrides]
        yield deltas, inner_shape, inner_strides


def row_layout(t: Tensor, axis: int) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """(shape, strides) of `t` without `axis`, plus that axis's length and stride."""
    shape = t.shape[:axis] + t.shape[axis + 1:]
    strides = t.element_strides[:axis] + t.element_strides[axis + 1:]
    return shape, strides, t.shape[axis], t.element_strides[axis]


# ---------------------------------------------------------------- small utility kernels

def copy_into(dst: Tensor, src: Tensor) -> None:
    """dst[...] = src, converting the dtype as numpy's assignment does (shapes equal, or src
    broadcastable to dst). Any strides on either side."""
    if dst.size == 0:
        return
    src_strides = broadcast_strides(dst.shape, src.shape, src.element_strides)
    for deltas, shape, (sd, ss) in batch_pieces(dst.shape, [dst.element_strides, src_strides], 4):
        _copy4_kernel()[prod(shape)](view(src, shape, ss, src.offset + deltas[1]),
                                      view(dst, shape, sd, dst.offset + deltas[0]))


def fill(dst: Tensor, value: object) -> None:
    """dst[...] = value (a Python number)."""
    if dst.size == 0:
        return
    for deltas, shape, (sd,) in batch_pieces(dst.shape, [dst.element_strides], 4):
        _fill4_kernel(dst.dtype)[prod(shape)](view(dst, shape, sd, dst.offset + deltas[0]),
                                               value)


def contiguous(t: Tensor) -> Tensor:
    """`t` itself when row-major, else a row-major copy."""
    if t.is_contiguous:
        return t
    from pykern.tensor.tensor import empty
    out = empty(t.shape, t.dtype)
    copy_into(out, t)
    return out


@functools.lru_cache(maxsize=None)
def _copy4_kernel() -> object:
    import pykern as pk

    @pk.kernel
    def copy4(src: pk.Array, dst: pk.Array):
        i = pk.global_id(0)
        n3 = dst.shape[3]
        n2 = dst.shape[2]
        n1 = dst.shape[1]
        i3 = i % n3
        t = i // n3
        i2 = t % n2
        t = t // n2
        i1 = t % n1
        i0 = t // n1
        dst[i0, i1, i2, i3] = src[i0, i1, i2, i3]

    return copy4


@functools.lru_cache(maxsize=None)
def _fill4_kernel(d: DType) -> object:
    import pykern as pk

    @pk.kernel
    def fill4(dst: d[:, :, :, :], value: d):
        i = pk.global_id(0)
        n3 = dst.shape[3]
        n2 = dst.shape[2]
        n1 = dst.shape[1]
        i3 = i % n3
        t = i // n3
        i2 = t % n2
        t = t // n2
        i1 = t % n1
        i0 = t // n1
        dst[i0, i1, i2, i3] = value

    return fill4
