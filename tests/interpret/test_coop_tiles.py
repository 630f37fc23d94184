"""Cooperative-matrix tiles in the interpreter: loads and stores (plain, transposed, views,
batched 3-D arrays, pk.shared through a barrier), mma, elementwise ops, scaling, conversion,
and out-of-bounds tile accesses. The kernels are IR built by hand (tile_ir), run on the host and
compared with numpy; every invocation of a launch executes the same tile operations, as a
subgroup does, so each launch also checks that their copies agree."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tile_ir import (I32, LOC, RW, R, W, array_param, assign, binop, builtin, const, kernel,
                     launch, load, ref, scalar, scalar_params, store)

import pykern as pk
from pykern import ir
from pykern.interpret import ArrayArg, compile_python, run, tiles
from pykern.interpret.helpers import float_to_int
from pykern.lang.coop import ACCUMULATOR, MATRIX_A, MATRIX_B, CoopType
from pykern.lang.dtypes import DType, from_numpy, void

B = ir.BinOpKind
RNG = np.random.default_rng(10)


def tile(dtype: DType, rows: int, cols: int, use=ACCUMULATOR) -> CoopType:
    return CoopType(dtype, rows, cols, use)


def random_array(dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
    """Values spread over the dtype: normal * 100 for floats, the whole range for integers."""
    if dtype.is_float:
        return (RNG.standard_normal(shape) * 100).astype(dtype.numpy)
    info = np.iinfo(dtype.numpy)
    return RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype.numpy)


# ---------------------------------------------------------------- loads and stores


def copy_kernel(dtype, t: CoopType, ndim: int, load_t: bool, store_t: bool,
                debug: bool = False) -> ir.Kernel:
    """`m = coop_load(src, [b,] r, c, transpose=load_t); coop_store(dst, [b,] r2, c2, m,
    transpose=store_t)`; r, c, r2, c2 (and b) are scalar parameters."""
    lead = (scalar("b"),) if ndim == 3 else ()
    body = (assign("m", load("src", lead + (scalar("r"), scalar("c")), t, load_t)),
            store("dst", lead + (scalar("r2"), scalar("c2")), ref("m", t), store_t))
    params = (array_param("src", dtype, ndim, R), array_param("dst", dtype, ndim, W),
              *scalar_params("r", "c", "r2", "c2", *(("b",) if ndim == 3 else ())))
    return kernel("tile_copy", params, body, debug=debug)


def numpy_tile(a: np.ndarray, r: int, c: int, rows: int, cols: int, transpose: bool):
    """The tile whose first element is a[r, c], as the IR defines it."""
    return a[r:r + cols, c:c + rows].T if transpose else a[r:r + rows, c:c + cols]


@pytest.mark.parametrize("load_t", [False, True])
@pytest.mark.parametrize("store_t", [False, True])
@pytest.mark.parametrize("dtype", [pk.f16, pk.f32, pk.i8, pk.u32])
def test_load_store_round_trip(dtype, load_t, store_t):
    rows, cols = 4, 8
    src = random_array(dtype, (12, 12))
    dst = np.zeros((12, 12), dtype.numpy)
    launch(copy_kernel(dtype, tile(dtype, rows, cols), 2, load_t, store_t), (4, 1, 1),
           {"src": src, "dst": dst}, r=3, c=1, r2=2, c2=3)
    expected = np.zeros_like(dst)
    m = numpy_tile(src, 3, 1, rows, cols, load_t)
    if store_t:
        expected[2:2 + cols, 3:3 + rows] = m.T
    else:
        expected[2:2 + rows, 3:3 + cols] = m
    np.testing.assert_array_equal(dst, expected)


def test_load_store_through_offset_and_reversed_views():
    base = np.arange(20 * 16, dtype=np.float32).reshape(20, 16)
    src = base[3:, 2:]  # an offset view: offset 50, strides (16, 1)
    out_base = np.zeros((20, 16), np.float32)
    dst = out_base[::-1, 4:]  # rows reversed: a negative row stride
    t = tile(pk.f32, 8, 8)
    launch(copy_kernel(pk.f32, t, 2, True, False), (1, 1, 1), {"src": src, "dst": dst},
           r=1, c=2, r2=5, c2=0)
    expected = np.zeros_like(out_base)
    expected[::-1, 4:][5:13, 0:8] = src[1:9, 2:10].T
    np.testing.assert_array_equal(out_base, expected)


def test_batched_3d_arrays_take_the_leading_index():
    src = RNG.integers(-100, 100, (3, 10, 9)).astype(np.int32)
    dst = np.zeros((3, 10, 9), np.int32)
    launch(copy_kernel(pk.i32, tile(pk.i32, 4, 5), 3, False, True), (2, 1, 1),
           {"src": src, "dst": dst}, b=2, r=5, c=3, r2=1, c2=4)
    expected = np.zeros_like(dst)
    expected[2, 1:6, 4:8] = src[2, 5:9, 3:8].T
    np.testing.assert_array_equal(dst, expected)


def shared_kernel(t: CoopType) -> ir.Kernel:
    """Invocation l copies row l of src into a pk.shared array; after a barrier every
    invocation loads the shared tile transposed, stores it transposed back into shared memory
    at (0, 8), and after a second barrier invocation l copies row l of that to out."""
    lid = builtin(ir.BuiltinKind.LOCAL_ID, 0)
    j = ref("j", I32)
    n = t.rows
    row_in = ir.ForRange(var="j", start=const(0), stop=const(n), step=const(1), loc=LOC, body=(
        ir.Store(array="s", indices=(lid, j), loc=LOC,
                 value=ir.ArrayLoad(array="src", indices=(lid, j), type=pk.f32, loc=LOC)),))
    row_out = ir.ForRange(var="j", start=const(0), stop=const(n), step=const(1), loc=LOC, body=(
        ir.Store(array="out", indices=(lid, j), loc=LOC,
                 value=ir.ArrayLoad(array="s", indices=(lid, binop(B.ADD, j, const(n))),
                                    type=pk.f32, loc=LOC)),))
    body = (row_in, ir.Barrier(loc=LOC),
            assign("m", load("s", (const(0), const(0)), t, transpose=True)),
            store("s", (const(0), const(n)), ref("m", t), transpose=True),
            ir.Barrier(loc=LOC), row_out)
    shared = ir.ArrayDecl(name="s", dtype=pk.f32, shape=(n, 2 * n),
                          space=ir.MemorySpace.SHARED, loc=LOC)
    return kernel("tile_shared", (array_param("src", pk.f32, 2, R),
                                  array_param("out", pk.f32, 2, W)),
                  body, workgroup=(n, 1, 1), arrays=(shared,))


def test_shared_arrays_through_a_barrier():
    src = RNG.standard_normal((8, 8)).astype(np.float32)
    out = np.zeros((8, 8), np.float32)
    launch(shared_kernel(tile(pk.f32, 8, 8)), (8, 1, 1), {"src": src, "out": out})
    np.testing.assert_array_equal(out, src)  # transposed twice


def test_integer_tiles_in_shared_memory_keep_python_ints():
    # a shared buffer of ints holds Python ints: what a tile stores there must stay usable by
    # the scalar code that reads it
    t = tile(pk.i32, 2, 2)
    shared = ir.ArrayDecl(name="s", dtype=I32, shape=(2, 2), space=ir.MemorySpace.SHARED,
                          loc=LOC)
    lid = builtin(ir.BuiltinKind.LOCAL_ID, 0)
    read = ir.ArrayLoad(array="s", indices=(lid, const(1)), type=I32, loc=LOC)
    body = (store("s", (const(0), const(0)), ir.CoopFill(value=scalar("v"), type=t, loc=LOC)),
            ir.Barrier(loc=LOC),
            ir.Store(array="out", indices=(lid,), loc=LOC,
                     value=binop(B.ADD, read, const(2**31 - 1))))
    k = kernel("tile_shared_int", (array_param("out", I32, 1, W), *scalar_params("v")), body,
               workgroup=(2, 1, 1), arrays=(shared,))
    out = np.zeros(2, np.int32)
    launch(k, (2, 1, 1), {"out": out}, v=5)
    assert out.tolist() == [-2**31 + 4] * 2  # wrapped as an i32 add


def test_fill_and_tile_locals_start_at_zero():
    t = tile(pk.f16, 4, 4)
    body = (store("a", (const(0), const(0)), ir.CoopFill(value=scalar("v", pk.f16), type=t,
                                                         loc=LOC)),
            store("z", (const(0), const(0)), ref("never", t)))
    params = (array_param("a", pk.f16, 2, W), array_param("z", pk.f16, 2, W),
              *scalar_params("v", t=pk.f16))
    k = kernel("tile_fill", params, body, extra_locals=(ir.Local(name="never", type=t),))
    a, z = np.zeros((4, 4), np.float16), np.full((4, 4), 7, np.float16)
    launch(k, (4, 1, 1), {"a": a, "z": z}, v=1.5)
    assert (a == np.float16(1.5)).all() and not z.any()


# ---------------------------------------------------------------- mma


def gemm_kernel(ab, acc, m: int, n: int, k: int) -> ir.Kernel:
    """C[row:row+m, col:col+n] += A[row:row+m, :] @ B[:, col:col+n], K in steps of k, with
    row = group_id(0) * m and col = group_id(1) * n: one tile of C per workgroup of 2."""
    ta, tb, tc = tile(ab, m, k, MATRIX_A), tile(ab, k, n, MATRIX_B), tile(acc, m, n)
    row = binop(B.MUL, builtin(ir.BuiltinKind.GROUP_ID, 0), const(m))
    col = binop(B.MUL, builtin(ir.BuiltinKind.GROUP_ID, 1), const(n))
    kk = ref("kk", I32)
    step = ir.CoopMma(a=load("a", (row, kk), ta), b=load("b", (kk, col), tb),
                      c=ref("acc", tc), type=tc, loc=LOC)
    body = (assign("acc", load("c", (row, col), tc)),
            ir.ForRange(var="kk", start=const(0), stop=ir.ArrayDim(array="a", axis=1, type=I32),
                        step=const(k), body=(assign("acc", step),), loc=LOC),
            store("c", (row, col), ref("acc", tc)))
    params = (array_param("a", ab, 2, R), array_param("b", ab, 2, R),
              array_param("c", acc, 2, RW))
    return kernel("tile_gemm", params, body, workgroup=(2, 1, 1))


def run_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray, m: int, n: int, k: int) -> None:
    ab, acc = from_numpy(a.dtype), from_numpy(c.dtype)
    grid = (2 * (a.shape[0] // m), b.shape[1] // n, 1)
    launch(gemm_kernel(ab, acc, m, n, k), grid, {"a": a, "b": b, "c": c})


def test_one_float_mma_is_rounded_once_from_float64():
    a = RNG.standard_normal((16, 16)).astype(np.float16)
    b = RNG.standard_normal((16, 16)).astype(np.float16)
    c = RNG.standard_normal((16, 16)).astype(np.float32)
    expected = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    run_gemm(a, b, c, 16, 16, 16)
    np.testing.assert_array_equal(c, expected)


@pytest.mark.parametrize("ab, acc", [(np.float16, np.float32), (np.float32, np.float32),
                                     (np.float16, np.float16)])
def test_float_gemm_within_the_accumulation_bound(ab, acc):
    m, n, k, depth = 16, 8, 8, 64
    a = RNG.standard_normal((2 * m, depth)).astype(ab)
    b = RNG.standard_normal((depth, 3 * n)).astype(ab)
    c = RNG.standard_normal((2 * m, 3 * n)).astype(acc)
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    exact = a64 @ b64 + c64
    run_gemm(a, b, c, m, n, k)
    # each of the depth / k steps rounds the running sum once to the accumulator's precision
    # (eps is twice the unit roundoff: room for the GPU's own order within one step)
    steps = depth // k
    bound = steps * np.finfo(acc).eps * (np.abs(a64) @ np.abs(b64) + np.abs(c64))
    assert (np.abs(c - exact) <= bound).all()
    assert (np.abs(c - c64) > bound).any()  # every tile of c was written, not left as it was


def test_int8_mma_is_exact_and_wraps_to_i32():
    a = RNG.integers(-128, 128, (16, 64)).astype(np.int8)
    b = RNG.integers(-128, 128, (64, 16)).astype(np.int8)
    c = RNG.integers(-1000, 1000, (16, 16)).astype(np.int32)
    c[0, :] = 2**31 - 5  # the sum overflows i32 where a[0] @ b > 4
    exact = a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
    run_gemm(a, b, c, 16, 16, 32)
    wrapped = ((exact + 2**31) % 2**32) - 2**31
    np.testing.assert_array_equal(c, wrapped.astype(np.int32))
    assert (exact[0] > 2**31 - 1).any()  # the test does overflow


def increment_kernel() -> ir.Kernel:
    """Each subgroup adds 1 to its own 2 x 4 tile of c: c[:, 4 * s:4 * s + 4] with s the
    subgroup's index in the workgroup, by loading, adding and storing the tile."""
    t = tile(I32, 2, 4)
    size = ir.Subgroup(op=ir.SubgroupOp.SIZE, type=I32, loc=LOC)
    sg = binop(B.FLOORDIV, builtin(ir.BuiltinKind.LOCAL_ID, 0), size)
    at = (const(0), binop(B.MUL, sg, const(4)))
    one = ir.CoopFill(value=const(1), type=t, loc=LOC)
    body = (assign("m", load("c", at, t)),
            store("c", at, ir.BinOp(op=B.ADD, lhs=ref("m", t), rhs=one, type=t, loc=LOC)))
    return kernel("tile_increment", (array_param("c", I32, 2, RW),), body, workgroup=(8, 1, 1))


@pytest.mark.parametrize("subgroup_size", [2, 4, 8])
def test_a_subgroup_reads_a_tile_before_any_of_it_writes_it_back(subgroup_size):
    # the invocations of a subgroup load and store together: each tile gets 1 added once, not
    # once per invocation of the subgroup
    c = np.arange(2 * 16, dtype=np.int32).reshape(2, 16)
    expected = c.copy()
    expected[:, :4 * (8 // subgroup_size)] += 1
    run(increment_kernel(), (8, 1, 1), {"c": c}, {}, subgroup_size=subgroup_size)
    np.testing.assert_array_equal(c, expected)


def test_tile_accesses_in_a_device_function():
    t = tile(pk.f32, 4, 4)
    copy = ir.Function(name="copy_tile", params=(), locals=(ir.Local(name="m", type=t),),
                       return_type=None, loc=LOC,
                       body=(assign("m", load("src", (const(0), const(0)), t, True)),
                             store("dst", (const(0), const(0)), ref("m", t))))
    body = (ir.Eval(value=ir.Call(function="copy_tile", args=(), type=void,
                                  loc=LOC), loc=LOC),)
    k = kernel("tile_in_function", (array_param("src", pk.f32, 2, R),
                                    array_param("dst", pk.f32, 2, W)), body,
               functions=(copy,))
    src, dst = RNG.standard_normal((4, 4)).astype(np.float32), np.zeros((4, 4), np.float32)
    compiled = compile_python(k)
    compiled.run((4, 1, 1), {"src": src, "dst": dst}, {})
    np.testing.assert_array_equal(dst, src.T)
    assert re.search(r"yield from _call_at\(_path, \d+, f_copy_tile\(\)\)", compiled.source)


def test_uint8_mma_multiplies_unsigned():
    a = RNG.integers(128, 256, (16, 32)).astype(np.uint8)  # negative if read as i8
    b = RNG.integers(0, 256, (32, 16)).astype(np.uint8)
    c = np.zeros((16, 16), np.uint32)
    expected = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.uint32)
    run_gemm(a, b, c, 16, 16, 32)
    np.testing.assert_array_equal(c, expected)


# ---------------------------------------------------------------- elementwise, scale, convert


def elementwise_kernel(dtype, ops: tuple[str, ...]) -> ir.Kernel:
    """out_<op> = x <op> y for each op (and out_neg = -x), tiles of 4 x 8 at (0, 0)."""
    t = tile(dtype, 4, 8)
    x, y = load("x", (const(0), const(0)), t), load("y", (const(0), const(0)), t)
    kinds = {"add": B.ADD, "sub": B.SUB, "mul": B.MUL, "div": B.DIV}
    body = tuple(store(f"out_{op}", (const(0), const(0)),
                       ir.UnaryOp(op=ir.UnaryOpKind.NEG, operand=x, type=t, loc=LOC)
                       if op == "neg" else ir.BinOp(op=kinds[op], lhs=x, rhs=y, type=t, loc=LOC))
                 for op in ops)
    params = (array_param("x", dtype, 2, R), array_param("y", dtype, 2, R),
              *(array_param(f"out_{op}", dtype, 2, W) for op in ops))
    return kernel("tile_elementwise", params, body)


NUMPY_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
             "neg": lambda x, y: -x}


@pytest.mark.parametrize("dtype", [pk.f16, pk.f32])
def test_float_elementwise_rounds_in_the_tile_dtype(dtype):
    ops = ("add", "sub", "mul", "div", "neg")
    x = (RNG.standard_normal((4, 8)) * 100).astype(dtype.numpy)
    y = RNG.standard_normal((4, 8)).astype(dtype.numpy)
    y[0, 0], x[1, 1], y[1, 1] = 0.0, np.finfo(dtype.numpy).max, np.finfo(dtype.numpy).max
    outs = {f"out_{op}": np.zeros((4, 8), dtype.numpy) for op in ops}
    launch(elementwise_kernel(dtype, ops), (4, 1, 1), {"x": x, "y": y, **outs})
    with np.errstate(all="ignore"):  # x / 0 is inf, max + max overflows: as on the GPU
        for op in ops:
            np.testing.assert_array_equal(outs[f"out_{op}"], NUMPY_OPS[op](x, y), err_msg=op)
    assert np.isinf(outs["out_add"][1, 1]) and np.isinf(outs["out_div"][0, 0])


@pytest.mark.parametrize("dtype", [pk.i32, pk.u8])
def test_integer_elementwise_wraps(dtype):
    ops = ("add", "sub", "mul", "neg")
    info = np.iinfo(dtype.numpy)
    x, y = random_array(dtype, (4, 8)), random_array(dtype, (4, 8))
    x[0, 0] = info.min  # -INT_MIN wraps to itself
    outs = {f"out_{op}": np.zeros((4, 8), dtype.numpy) for op in ops}
    launch(elementwise_kernel(dtype, ops), (4, 1, 1), {"x": x, "y": y, **outs})
    big = {k: v.astype(object) for k, v in (("x", x), ("y", y))}  # Python ints: exact
    exact = {"add": big["x"] + big["y"], "sub": big["x"] - big["y"],
             "mul": big["x"] * big["y"], "neg": -big["x"]}
    for op in ops:
        wrapped = [(int(v) - info.min) % 2**dtype.bits + info.min for v in exact[op].ravel()]
        assert outs[f"out_{op}"].ravel().tolist() == wrapped, op


def test_integer_tile_division_is_not_interpreted():
    # DIV is for float tiles only (the frontend never makes it for integers)
    with pytest.raises(AssertionError, match="no interpretation of DIV"):
        compile_python(elementwise_kernel(pk.i32, ("div",)))


@pytest.mark.parametrize("dtype, value", [(pk.f16, 0.5), (pk.f32, -3.25), (pk.i32, 2**30),
                                          (pk.u8, 3)])
def test_scale_multiplies_in_the_tile_dtype(dtype, value):
    t = tile(dtype, 8, 4)
    scaled = ir.CoopScale(matrix=load("x", (const(0), const(0)), t),
                          scalar=scalar("s", dtype), type=t, loc=LOC)
    k = kernel("tile_scale", (array_param("x", dtype, 2, R), array_param("out", dtype, 2, W),
                              *scalar_params("s", t=dtype)),
               (store("out", (const(0), const(0)), scaled),))
    x = random_array(dtype, (8, 4))
    out = np.zeros((8, 4), dtype.numpy)
    launch(k, (4, 1, 1), {"x": x, "out": out}, s=value)
    if dtype.is_float:
        np.testing.assert_array_equal(out, x * dtype.numpy.type(value))
    else:
        info = np.iinfo(dtype.numpy)
        wrapped = [(int(v) * value - info.min) % 2**dtype.bits + info.min for v in x.ravel()]
        assert out.ravel().tolist() == wrapped


def convert_kernel(src, dst, use=ACCUMULATOR) -> ir.Kernel:
    t = tile(src, 4, 4, use)
    converted = ir.Cast(value=load("x", (const(0), const(0)), t), type=t.with_dtype(dst),
                        loc=LOC)
    return kernel("tile_convert", (array_param("x", src, 2, R), array_param("out", dst, 2, W)),
                  (store("out", (const(0), const(0)), converted),))


def run_convert(x: np.ndarray, dst, use=ACCUMULATOR) -> np.ndarray:
    out = np.zeros(x.shape, dst.numpy)
    launch(convert_kernel(from_numpy(x.dtype), dst, use), (4, 1, 1),
           {"x": x, "out": out})
    return out


@pytest.mark.parametrize("dst", [pk.i32, pk.u8, pk.i8])
def test_float_to_int_conversion_truncates_and_saturates_as_scalar_casts(dst):
    x = np.array([[1.9, -1.9, 0.5, -0.5], [np.nan, np.inf, -np.inf, 3e9],
                  [-3e9, 255.5, 256.0, -129.0], [127.9, -128.9, 2.0**31, -2.0**31]], np.float32)
    lo, hi = int(np.iinfo(dst.numpy).min), int(np.iinfo(dst.numpy).max)
    expected = [float_to_int(v, lo, hi) for v in x.ravel()]  # the scalar Cast's rule
    out = run_convert(x, dst)
    assert out.ravel().tolist() == expected
    assert expected[4] == 0 and expected[5] == hi and expected[6] == lo  # NaN, inf, -inf


def test_other_conversions_round_or_wrap():
    x = np.array([[1.0, 1e-8, 65520.0, -70000.0], [0.1, 3.14159, -2.5, 2049.0]] * 2, np.float32)
    with np.errstate(over="ignore"):  # 65520 and -70000 overflow to +-inf, as on the GPU
        expected = x.astype(np.float16)
    np.testing.assert_array_equal(run_convert(x, pk.f16, MATRIX_A), expected)
    ints = np.array([[-1, 255, 256, 2**31 - 1]] * 4, np.int32)
    assert run_convert(ints, pk.u8).tolist() == [[255, 255, 0, 255]] * 4
    np.testing.assert_array_equal(run_convert(ints, pk.f32, MATRIX_B), ints.astype(np.float32))


# ---------------------------------------------------------------- out of bounds


def oob_kernel(debug: bool, write: bool) -> ir.Kernel:
    t = tile(pk.f32, 4, 4)
    body = (assign("m", ir.CoopFill(value=const(1.0, pk.f32), type=t, loc=LOC))
            if write else assign("m", load("a", (scalar("r"), scalar("c")), t)),
            store("a" if write else "out", (scalar("r"), scalar("c")) if write else
                  (const(0), const(0)), ref("m", t)))
    params = (array_param("a", pk.f32, 2, RW if write else R),
              array_param("out", pk.f32, 2, W), *scalar_params("r", "c"))
    return kernel("tile_oob", params, body, debug=debug)


@pytest.mark.parametrize("write", [False, True])
def test_tile_past_the_buffer_raises_naming_kernel_line_array_and_element(write):
    a, out = np.zeros((6, 6), np.float32), np.zeros((4, 4), np.float32)
    with pytest.raises(pk.KernelIndexError) as info:
        launch(oob_kernel(False, write), (1, 1, 1), {"a": a, "out": out}, r=4, c=1)
    text = str(info.value)
    assert text.startswith(f"{LOC}: kernel 'tile_oob', invocation (0, 0, 0):")
    # the first element past the buffer of 36 is a[6, 1]
    assert "index (6, 1) of 'a' (shape (6, 6)) is out of bounds: element 37" in text
    assert not a.any() and not out.any()  # nothing was stored


@pytest.mark.parametrize("write", [False, True])
def test_debug_mode_checks_every_index_against_its_dimension(write):
    a, out = np.zeros((6, 6), np.float32), np.zeros((4, 4), np.float32)
    # columns 4..7 of rows 0..3: inside the buffer, outside the row
    launch(oob_kernel(False, write), (1, 1, 1), {"a": a, "out": out}, r=0, c=4)
    with pytest.raises(pk.KernelIndexError, match=r"index \(0, 6\) is out of bounds for 'a' "
                                                  r"with shape \(6, 6\)") as info:
        launch(oob_kernel(True, write), (1, 1, 1), {"a": a, "out": out}, r=0, c=4)
    assert str(info.value).startswith(f"{LOC}: kernel 'tile_oob'")


def test_debug_mode_checks_the_batch_index():
    src, dst = np.zeros((2, 4, 4), np.int32), np.zeros((3, 4, 4), np.int32)
    args = {"r": 0, "c": 0, "r2": 0, "c2": 0}
    for debug in (False, True):  # b = 2 is past the buffer, b = -1 before it
        for b in (2, -1):
            with pytest.raises(pk.KernelIndexError, match=rf"index \({b}, 0, 0\)"):
                launch(copy_kernel(I32, tile(I32, 4, 4), 3, False, False, debug), (1, 1, 1),
                       {"src": src, "dst": dst}, b=b, **args)
    # a leading index outside its dimension but inside the buffer: only debug mode says so
    view = ArrayArg(np.zeros(3 * 16, np.int32), 0, (2, 4, 4), (16, 4, 1))
    launch(copy_kernel(I32, tile(I32, 4, 4), 3, False, False), (1, 1, 1),
           {"src": view, "dst": dst}, b=2, **args)
    with pytest.raises(pk.KernelIndexError, match=r"index \(2, 0, 0\) is out of bounds for "
                                                  r"'src' with shape \(2, 4, 4\)"):
        launch(copy_kernel(I32, tile(I32, 4, 4), 3, False, False, True), (1, 1, 1),
               {"src": view, "dst": dst}, b=2, **args)


def test_transposed_tile_reports_the_array_element():
    t = tile(pk.f32, 2, 8)  # spans 8 rows of the array when transposed
    k = kernel("tile_oob_t", (array_param("a", pk.f32, 2, R), array_param("out", pk.f32, 2, W)),
               (store("out", (const(0), const(0)), load("a", (const(0), const(0)), t, True)),),
               debug=True)
    a = np.zeros((6, 2), np.float32)
    with pytest.raises(pk.KernelIndexError, match=r"index \(6, 0\) is out of bounds for 'a'"):
        launch(k, (1, 1, 1), {"a": a, "out": ArrayArg(np.zeros(16, np.float32), 0, (2, 8),
                                                      (8, 1))})


def test_generated_source_shows_tile_calls():
    source = compile_python(copy_kernel(pk.f16, tile(pk.f16, 4, 4), 2, True, False)).source
    assert "_tile_load(a_src, _tile_addresses(" in source and "_tile_store(a_dst" in source
    assert "_dt_f16 = _tile_dtype('f16')" in source


class Outside(Exception):
    """What the reporter given to `tile_addresses` raises in the property test below."""


def refuse(site: int, index: tuple[int, ...], invocation: tuple[int, ...],
           misaligned: tuple[int, int] | None = None) -> None:
    raise Outside(index, misaligned)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 40), st.integers(-12, 12), st.integers(-12, 12), st.integers(1, 6),
       st.integers(1, 6), st.integers(-3, 8), st.integers(-3, 8), st.integers(1, 5),
       st.integers(1, 5), st.booleans(), st.booleans(), st.integers(0, 80),
       st.sampled_from([1, 2, 4, 8]))
def test_tile_addresses_match_element_by_element_checks(offset, s0, s1, n0, n1, r, c, rows,
                                                        cols, transpose, debug, length, item):
    # the extremes of the addresses decide for the whole tile: the same verdict, the same
    # first offending element and the same addresses as checking element by element; then,
    # in debug mode, rows must start at multiples of min(16 bytes, a row's bytes)
    elements = [[(r + j, c + i) if transpose else (r + i, c + j) for j in range(cols)]
                for i in range(rows)]
    address = [[offset + a * s0 + b * s1 for a, b in row] for row in elements]
    bad = [e for row_e, row_a in zip(elements, address, strict=True)
           for e, a in zip(row_e, row_a, strict=True)
           if not 0 <= a < length or (debug and not (0 <= e[0] < n0 and 0 <= e[1] < n1))]
    down, across = (cols, rows) if transpose else (rows, cols)
    align = min(16, across * item)
    first = address[0][0] * item
    misaligned = debug and (first % align != 0 or (down > 1 and (s0 * item) % align != 0))
    args = (offset, length, (s0, s1), (n0, n1), (r, c), (rows, cols), transpose, item, debug)
    if bad:
        with pytest.raises(Outside) as info:
            tiles.tile_addresses(*args, refuse, 0, (0, 0, 0))
        assert info.value.args == (bad[0], None)
    elif misaligned:
        with pytest.raises(Outside) as info:
            tiles.tile_addresses(*args, refuse, 0, (0, 0, 0))
        assert info.value.args == ((r, c), (first, s0 * item))
    else:
        assert tiles.tile_addresses(*args, refuse, 0, (0, 0, 0)).tolist() == address
