"""The collectives of pykern.distributed against numpy, on every rank: each rank makes every
rank's input from a seed of (case, rank), so it can compute the expected result itself.

Values are small integers (exactly representable in every dtype, so sums and products are
exact in any order) except for MIN and MAX, which are exact on any floats. float16 and
bfloat16 are reduced in float32 and rounded once, so their expected AVG is computed so too.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import pykern as pk

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - a dependency of pykern
    ml_dtypes = None

DTYPES = ["bool_", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32",
          "f64", "c64", "c128"]
OPS = ["SUM", "AVG", "MIN", "MAX", "PRODUCT"]


def _values(case: str, rank: int, shape: tuple[int, ...], dtype: pk.DType,
            floats: bool = False) -> np.ndarray:
    """Rank `rank`'s input of `case`, as a numpy array of `dtype`'s numpy type."""
    rng = np.random.default_rng(zlib.crc32(f"{case}/{rank}".encode()))
    if dtype.name == "bool_":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.is_complex:
        return (rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)).astype(dtype.numpy)
    if floats and dtype.is_float:
        return rng.standard_normal(shape).astype(np.float32).astype(dtype.numpy)
    low = 0 if dtype.name.startswith("u") else -3
    return rng.integers(low, 4, shape).astype(dtype.numpy)


def _expected(arrays: list[np.ndarray], op: str, dtype: pk.DType) -> np.ndarray:
    """numpy's reduction of the ranks' arrays, in the wire precision (f32 for 16-bit
    floats, rounded once at the end)."""
    wide = np.float32 if dtype.name in ("f16", "bf16") else None
    stack = np.stack([a.astype(wide) if wide else a for a in arrays])
    if dtype.name == "bool_":
        result = stack.any(0) if op in ("SUM", "MAX") else stack.all(0)
    elif op in ("SUM", "AVG"):
        result = stack.sum(0, dtype=stack.dtype)
        if op == "AVG":
            result = (result / np.asarray(len(arrays), stack.dtype)).astype(stack.dtype)
    elif op == "PRODUCT":
        result = stack.prod(0, dtype=stack.dtype)
    else:
        result = stack.min(0) if op == "MIN" else stack.max(0)
    return result.astype(dtype.numpy)


def _valid(op: str, dtype: pk.DType) -> bool:
    if op == "AVG":
        return dtype.is_float or dtype.is_complex
    if op in ("MIN", "MAX"):
        return not dtype.is_complex
    return True


def _same(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("op_name", OPS)
def test_all_reduce_every_op_and_dtype(dist, op_name, dtype_name):
    dtype, op = getattr(pk, dtype_name), dist.ReduceOp[op_name]
    case = f"all_reduce/{op_name}/{dtype_name}"
    floats = op_name in ("MIN", "MAX")
    arrays = [_values(case, r, (5, 7), dtype, floats) for r in range(dist.get_world_size())]
    t = pk.asarray(arrays[dist.get_rank()], dtype=dtype)
    if not _valid(op_name, dtype):
        with pytest.raises(TypeError, match=op_name):
            dist.all_reduce(t, op)
        return
    dist.all_reduce(t, op)
    _same(t.numpy(), _expected(arrays, op_name, dtype))


@pytest.mark.parametrize("layout", ["transposed", "strided slice"])
def test_all_reduce_of_a_view_leaves_the_rest_alone(dist, layout):
    world = dist.get_world_size()
    arrays = [_values(f"view/{layout}", r, (6, 8), pk.f32) for r in range(world)]
    base = pk.asarray(arrays[dist.get_rank()])
    view, key = (base.T, np.s_[...]) if layout == "transposed" else (base[1::2, ::3],
                                                                     np.s_[1::2, ::3])
    before = base._version
    dist.all_reduce(view, dist.ReduceOp.SUM)
    expected = arrays[dist.get_rank()].copy()
    expected[key] = np.sum(arrays, axis=0)[key]
    _same(base.numpy(), expected)
    assert base._version > before


def test_all_reduce_of_a_large_tensor_in_pieces(dist):
    """Larger than a staging piece: several pieces in flight on a GPU (or lavapipe)."""
    world = dist.get_world_size()
    n = 3_000_000
    arrays = [_values("large", r, (n,), pk.f32) for r in range(world)]
    t = pk.asarray(arrays[dist.get_rank()])
    dist.all_reduce(t)
    _same(t.numpy(), np.sum(arrays, axis=0, dtype=np.float32))
    h = pk.asarray(arrays[dist.get_rank()].astype(np.float16))
    dist.all_reduce(h, dist.ReduceOp.MAX)
    _same(h.numpy(), np.max(arrays, axis=0).astype(np.float16))


@pytest.mark.parametrize("dtype_name", ["bool_", "i64", "u16", "bf16", "f32", "c128"])
def test_broadcast_from_every_rank(dist, dtype_name):
    dtype = getattr(pk, dtype_name)
    for src in range(dist.get_world_size()):
        arrays = [_values(f"bcast/{dtype_name}/{src}", r, (4, 3), dtype, floats=True)
                  for r in range(dist.get_world_size())]
        t = pk.asarray(arrays[dist.get_rank()], dtype=dtype)
        dist.broadcast(t, src=src)
        _same(t.numpy(), arrays[src])
        view = pk.asarray(arrays[dist.get_rank()], dtype=dtype)
        dist.broadcast(view.T, src=src)
        _same(view.numpy(), arrays[src])


def test_all_gather(dist):
    world, rank = dist.get_world_size(), dist.get_rank()
    arrays = [_values("gather", r, (3, 2), pk.i32) for r in range(world)]
    out = [pk.zeros((3, 2), pk.i32) for _ in range(world)]
    dist.all_gather(out, pk.asarray(arrays[rank]))
    for r in range(world):
        _same(out[r].numpy(), arrays[r])
    flat = pk.zeros((world * 3, 2), pk.i32)
    dist.all_gather_into_tensor(flat, pk.asarray(arrays[rank]))
    _same(flat.numpy(), np.concatenate(arrays))
    halves = [pk.zeros((2, 3), pk.f16).T for _ in range(world)]  # views
    dist.all_gather(halves, pk.asarray(arrays[rank].astype(np.float16)))
    for r in range(world):
        _same(halves[r].numpy(), arrays[r].astype(np.float16))


@pytest.mark.parametrize("op_name", OPS)
def test_reduce_scatter(dist, op_name):
    world, rank = dist.get_world_size(), dist.get_rank()
    op = dist.ReduceOp[op_name]
    inputs = [[_values(f"rs/{op_name}/{r}", j, (4,), pk.f64, op_name in ("MIN", "MAX"))
               for j in range(world)] for r in range(world)]
    out = pk.zeros((4,), pk.f64)
    dist.reduce_scatter(out, [pk.asarray(a) for a in inputs[rank]], op)
    _same(out.numpy(), _expected([inputs[r][rank] for r in range(world)], op_name, pk.f64))
    whole = pk.asarray(np.concatenate(inputs[rank]))
    out2 = pk.zeros((2, 2), pk.f64)
    dist.reduce_scatter_tensor(out2, whole, op)
    _same(out2.numpy().reshape(-1),
          _expected([inputs[r][rank] for r in range(world)], op_name, pk.f64))


def test_barrier_and_the_group(dist):
    dist.barrier()
    assert dist.is_initialized()
    assert 0 <= dist.get_rank() < dist.get_world_size()
    assert 0 <= dist.get_local_rank() < dist.get_world_size()


def test_mismatched_shapes_dtypes_and_collectives_raise_on_every_rank(dist):
    rank = dist.get_rank()
    with pytest.raises(pk.DistributedError, match=r"rank 0: .*shape \(3,\)") as caught:
        dist.all_reduce(pk.ones(3 + (rank == 1)))
    assert "rank 1:" in str(caught.value) and "(4,)" in str(caught.value)
    with pytest.raises(pk.DistributedError, match="f64"):
        dist.all_reduce(pk.ones(3, dtype=pk.f64 if rank == 0 else pk.f32))
    with pytest.raises(pk.DistributedError, match="broadcast"):
        if rank == 0:
            dist.broadcast(pk.ones(2), src=0)
        else:
            dist.all_reduce(pk.ones(2))
    t = pk.ones(2)  # and the group still works
    dist.all_reduce(t)
    _same(t.numpy(), np.full(2, dist.get_world_size(), np.float32))


def test_argument_errors(dist):
    with pytest.raises(TypeError, match="AVG"):
        dist.all_reduce(pk.ones(2, dtype=pk.i32), dist.ReduceOp.AVG)
    with pytest.raises(TypeError, match="ReduceOp"):
        dist.all_reduce(pk.ones(2), "sum")
    with pytest.raises(ValueError, match="src"):
        dist.broadcast(pk.ones(2), src=dist.get_world_size())
    with pytest.raises(ValueError, match="tensor_list"):
        dist.all_gather([pk.ones(2)], pk.ones(2))
    with pytest.raises(TypeError, match="pk.Tensor"):
        dist.all_reduce(np.ones(2))
    with pytest.raises(NotImplementedError, match="async_op"):
        dist.all_reduce(pk.ones(2), async_op=True)
    dist.barrier()  # none of the above reached the others: they are still in step
