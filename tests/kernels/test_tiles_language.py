"""Cooperative-matrix tiles in the language (`pk.coop_*`): every kernel runs in the interpreter
(in CI) and, where the device multiplies tiles (an NVIDIA GPU), on the device too; both are
compared with numpy in float64. The SPIR-V of each kernel passes spirv-val where the installed
one knows SPV_KHR_cooperative_matrix. Compile and launch errors are located and leave the
arguments intact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.passes.decompose import decompose
from pykern.runtime.feature import Feature
from pykern.spirv.lower import lower
from pykern.spirv.target import Target

RNG = np.random.default_rng(7)


def has_tiles() -> bool:
    devices = pk.devices()
    return bool(devices) and pk.get_device().info.features.has(Feature.COOPERATIVE_MATRIX)


BACKENDS = ["interpret", pytest.param("device", marks=pytest.mark.skipif(
    not has_tiles(), reason="the device has no cooperative matrices (lavapipe has none)"))]


def run(kernel: pk.Kernel, backend: str, grid: object, *args: object) -> None:
    k = pk.kernel(kernel.__wrapped__, interpret=True, workgroup=kernel.workgroup) \
        if backend == "interpret" else kernel
    k[grid](*args)


@pk.kernel(workgroup=(32, 1))
def gemm(a: pk.f16[:, :], b: pk.f16[:, :], c: pk.f32[:, :]):
    row = pk.group_id(1) * 16
    col = pk.group_id(0) * 16
    acc = pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0)
    for k in range(0, a.shape[1], 16):
        ta = pk.coop_load(a, row, k, 16, 16, pk.MATRIX_A)
        tb = pk.coop_load(b, k, col, 16, 16, pk.MATRIX_B)
        acc = pk.coop_mma(ta, tb, acc)
    pk.coop_store(c, row, col, acc)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=6, deadline=None)
@given(mt=st.integers(1, 3), nt=st.integers(1, 3), kt=st.integers(1, 4))
def test_gemm_matches_float64(backend, mt, nt, kt):
    m, n, k = 16 * mt, 16 * nt, 16 * kt
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    run(gemm, backend, (nt * 32, mt), a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # f16 products are exact in f32; k of them summed in f32 round within k * 2^-24 of |a||b|
    bound = k * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(c - ref) <= bound + 1e-6)


@pk.kernel(workgroup=(32, 1))
def tile_algebra(a: pk.f16[:, :], out: pk.f16[:, :], s: pk.f16):
    buf = pk.shared(pk.f16, (16, 16))
    t = pk.coop_load(a, 0, 0, 16, 16, pk.ACCUMULATOR, transpose=True)   # a.T
    pk.coop_store(buf, 0, 0, t)
    pk.barrier()
    u = pk.coop_load(buf, 0, 0, 16, 16, pk.ACCUMULATOR)
    v = -(u * s) + u - u * u
    w = pk.coop_convert(pk.coop_convert(v, pk.f32) / 2.0, pk.f16)
    pk.coop_store(out, 0, 0, w, transpose=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_elementwise_scale_convert_shared_and_transposed_access(backend):
    a = (RNG.standard_normal((16, 16)) * 4).astype(np.float16)
    out = np.zeros((16, 16), np.float16)
    run(tile_algebra, backend, 32, a, out, np.float16(3.0))
    u = a.T
    v = -(u * np.float16(3)) + u - u * u  # each step rounded to f16, as on the device
    expect = ((v.astype(np.float32) / np.float32(2)).astype(np.float16)).T
    np.testing.assert_array_equal(out, expect)


@pk.kernel(workgroup=(32, 1))
def int_mma(a: pk.i8[:, :], b: pk.i8[:, :], c: pk.i32[:, :]):
    acc = pk.coop_fill(pk.i32, 16, 16, pk.ACCUMULATOR, 7)
    ta = pk.coop_load(a, 0, 0, 16, 32, pk.MATRIX_A)
    tb = pk.coop_load(b, 0, 0, 32, 16, pk.MATRIX_B)
    pk.coop_store(c, 0, 0, pk.coop_mma(ta, tb, acc))


@pytest.mark.parametrize("backend", BACKENDS)
def test_int8_products_accumulate_exactly_in_i32(backend):
    a = RNG.integers(-128, 128, (16, 32)).astype(np.int8)
    b = RNG.integers(-128, 128, (32, 16)).astype(np.int8)
    c = np.zeros((16, 16), np.int32)
    run(int_mma, backend, 32, a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64) + 7)


@pk.kernel(workgroup=(32, 1))
def batched_copy(x: pk.f32[:, :, :], y: pk.f32[:, :, :]):
    z = pk.group_id(2)
    t = pk.coop_load(x, (z, 16), 0, 16, 16, pk.ACCUMULATOR)
    pk.coop_store(y, (z, 0), 16, t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_leading_indices_of_a_3d_array(backend):
    if backend == "device" and not any(s[:2] == (16, 16) and s[4] == pk.f32
                                       for s in pk.get_device().info.coop_shapes):
        pytest.skip("no 16x16 f32 accumulator on this device")
    x = RNG.standard_normal((3, 32, 16)).astype(np.float32)
    y = np.zeros((3, 16, 32), np.float32)
    run(batched_copy, backend, (32, 1, 3), x, y)
    np.testing.assert_array_equal(y[:, :, 16:], x[:, 16:, :])
    assert not y[:, :, :16].any()


# ---------------------------------------------------------------- the SPIR-V


def generic_module(kernel: pk.Kernel, *args: object) -> bytes:
    """The module for a device with every optional feature, through spirv-val."""
    key = kernel._key(kernel._by_name(args, {}), 3)
    target = Target()
    return lower(decompose(kernel._translate(key), target), target).words


def test_modules_declare_the_extension_and_pass_spirv_val():
    a16 = np.zeros((32, 32), np.float16)
    words = generic_module(gemm, a16, a16, np.zeros((32, 32), np.float32))
    from pykern.spirv.encoding.validate import disassemble
    try:
        text = disassemble(words)
    except RuntimeError as e:  # a spirv-dis older than the extension
        pytest.skip(f"spirv-dis cannot read SPV_KHR_cooperative_matrix: {e}")
    assert "OpCapability CooperativeMatrixKHR" in text
    assert 'OpExtension "SPV_KHR_cooperative_matrix"' in text
    assert "OpMemoryModel Logical Vulkan" in text
    assert "OpCooperativeMatrixMulAddKHR" in text
    generic_module(tile_algebra, a16, a16, np.float16(1))
    generic_module(int_mma, np.zeros((16, 32), np.int8), np.zeros((32, 16), np.int8),
                   np.zeros((16, 16), np.int32))


def test_ir_shows_tiles_and_tile_access():
    a16 = np.zeros((32, 32), np.float16)
    text = str(gemm.ir(a16, a16, np.zeros((32, 32), np.float32)))
    assert "tile[f32 16x16 accumulator]" in text
    assert "a: f16[:, :] (read, tiles)" in text and "c: f32[:, :] (write, tiles)" in text


# ---------------------------------------------------------------- errors


@pytest.mark.skipif(has_tiles(), reason="the device has cooperative matrices")
def test_a_device_without_tiles_says_so_at_the_first_tile():
    a16 = np.ones((16, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    with pytest.raises(pk.CompileError, match="cooperative_matrix") as e:
        gemm[32](a16, a16, c)
    assert "test_tiles_language.py:" in str(e.value) and "coop_fill" in str(e.value)
    assert not c.any()
    pk.kernel(gemm.__wrapped__, interpret=True, workgroup=(32, 1))[32](a16, a16, c)
    assert (c == 16).all()  # the interpreter takes the same kernel


def _compile_error(src_fn, *args):
    with pytest.raises(pk.CompileError) as e:
        pk.kernel(src_fn, interpret=True, workgroup=(32, 1))[32](*args)
    return str(e.value)


def test_mismatched_operands_are_located_errors():
    def wrong_use(a: pk.f16[:, :], c: pk.f32[:, :]):
        t = pk.coop_load(a, 0, 0, 16, 16, pk.MATRIX_A)
        acc = pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0)
        pk.coop_store(c, 0, 0, pk.coop_mma(t, t, acc))

    def wrong_shape(a: pk.f16[:, :], c: pk.f32[:, :]):
        ta = pk.coop_load(a, 0, 0, 16, 16, pk.MATRIX_A)
        tb = pk.coop_load(a, 0, 0, 8, 16, pk.MATRIX_B)
        acc = pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0)
        pk.coop_store(c, 0, 0, pk.coop_mma(ta, tb, acc))

    def tile_plus_number(a: pk.f16[:, :], c: pk.f16[:, :]):
        t = pk.coop_load(a, 0, 0, 16, 16, pk.ACCUMULATOR)
        pk.coop_store(c, 0, 0, t + 1.0)

    def store_other_dtype(a: pk.f16[:, :], c: pk.f32[:, :]):
        pk.coop_store(c, 0, 0, pk.coop_load(a, 0, 0, 16, 16, pk.ACCUMULATOR))

    def tile_as_number(a: pk.f16[:, :], c: pk.f16[:, :]):
        t = pk.coop_load(a, 0, 0, 16, 16, pk.ACCUMULATOR)
        c[0, 0] = t

    def rows_not_constant(a: pk.f16[:, :], c: pk.f16[:, :], n: pk.i32):
        pk.coop_store(c, 0, 0, pk.coop_load(a, 0, 0, n, 16, pk.ACCUMULATOR))

    def unknown_keyword(a: pk.f16[:, :], c: pk.f16[:, :]):
        pk.coop_store(c, 0, 0, pk.coop_load(a, 0, 0, 16, 16, pk.ACCUMULATOR, layout=1))

    a16, c16, c32 = np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), \
        np.zeros((16, 16), np.float32)
    cases = [(wrong_use, (a16, c32), "needs a pk.MATRIX_B tile"),
             (wrong_shape, (a16, c32), "a is M x K, b K x N"),
             (tile_plus_number, (a16, c16), "a tile and a number combine only"),
             (store_other_dtype, (a16, c32), "convert the tile first"),
             (tile_as_number, (a16, c16), "tiles never convert implicitly"),
             (rows_not_constant, (a16, c16, 16), "must be a constant positive int"),
             (unknown_keyword, (a16, c16), "no keyword argument 'layout'")]
    for fn, args, message in cases:
        text = _compile_error(fn, *args)
        assert message in text, (fn.__name__, text)
        assert "test_tiles_language.py:" in text


@pytest.mark.skipif(not has_tiles(), reason="launch checks run on a device with tiles")
def test_tile_arrays_need_contiguous_aligned_rows():
    a = pk.asarray(np.ones((16, 32), np.float16))
    c = pk.zeros((16, 16), pk.f32)
    with pytest.raises(pk.LaunchError, match="contiguous last dimension"):
        gemm[32](a[:, ::2], pk.asarray(np.ones((16, 16), np.float16)), c)
    with pytest.raises(pk.LaunchError, match="multiples of 16 bytes"):
        gemm[32](a[:, 1:17], pk.asarray(np.ones((16, 16), np.float16)), c)
    assert not c.numpy().any()
    gemm[32](a[:, :16], pk.asarray(np.ones((16, 16), np.float16)), c)
    assert (c.numpy() == 16).all()


@pk.kernel(workgroup=(32, 1))
def packed_words(a: pk.u64[:, :], c: pk.f16[:, :]):
    buf = pk.shared(pk.u64, (16, 6))
    i = pk.local_id(0)
    for r in range(i, 16 * 6, 32):
        buf[r // 6, r % 6] = a[r // 6, r % 6]
    pk.barrier()
    pk.coop_store(c, 0, 0, pk.coop_load(buf, 0, 2, 16, 16, pk.ACCUMULATOR, dtype=pk.f16))
    t = pk.coop_load(buf, 0, 0, 16, 16, pk.ACCUMULATOR, dtype=pk.f16, transpose=True)
    pk.coop_store(c, 16, 0, t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiles_read_from_packed_words(backend):
    x = np.arange(16 * 24, dtype=np.float16).reshape(16, 24)
    c = np.zeros((32, 16), np.float16)
    run(packed_words, backend, 32, x.view(np.uint64), c)
    np.testing.assert_array_equal(c[:16], x[:, 8:24])   # word 2 holds elements 8..11
    np.testing.assert_array_equal(c[16:], x[:16, :16].T)  # packed along the tile's rows


def test_misaligned_shared_tiles_are_refused():
    """Tiles' rows start at multiples of 16 bytes (a GPU reads a misaligned one from the
    aligned address below it): a constant column or a shared array's row length that breaks
    this is a located compile error; a column computed at run time, an error in debug mode
    (the interpreter's)."""
    def constant_column(a: pk.u64[:, :], c: pk.f16[:, :]):
        buf = pk.shared(pk.u64, (16, 6))
        pk.coop_store(c, 0, 0, pk.coop_load(buf, 0, 1, 16, 16, pk.ACCUMULATOR, dtype=pk.f16))

    def short_rows(a: pk.f16[:, :], c: pk.f16[:, :]):
        buf = pk.shared(pk.f16, (16, 20))
        pk.coop_store(buf, 0, 0, pk.coop_load(a, 0, 0, 16, 16, pk.ACCUMULATOR))

    words, c16 = np.zeros((16, 6), np.uint64), np.zeros((16, 16), np.float16)
    message = _compile_error(constant_column, words, c16)
    assert "column 1 of 'buf'" in message and "byte 8" in message
    line = constant_column.__code__.co_firstlineno + 2
    assert message.startswith(f"{__file__}:{line}:")
    message = _compile_error(short_rows, c16, c16)
    assert "rows are 40 bytes long" in message and "a multiple of 8 elements" in message

    @pk.kernel(workgroup=(32, 1), interpret=True, debug=True)
    def run_time_column(a: pk.u64[:, :], c: pk.f16[:, :], col: int):
        buf = pk.shared(pk.u64, (16, 6))
        i = pk.local_id(0)
        for r in range(i, 16 * 6, 32):
            buf[r // 6, r % 6] = a[r // 6, r % 6]
        pk.barrier()
        pk.coop_store(c, 0, 0, pk.coop_load(buf, 0, col, 16, 16, pk.ACCUMULATOR, dtype=pk.f16))

    x = np.arange(16 * 24, dtype=np.float16).reshape(16, 24)
    with pytest.raises(pk.KernelIndexError, match="start at byte 8 .*multiples of 16 bytes"):
        run_time_column[32](x.view(np.uint64), c16, 1)
    run_time_column[32](x.view(np.uint64), c16, 2)  # and the next launch works
    np.testing.assert_array_equal(c16, x[:, 8:24])


def test_packed_reads_need_whole_words():
    def odd_cols(a: pk.u64[:, :], c: pk.f16[:, :]):
        pk.coop_store(c, 0, 0, pk.coop_load(a, 0, 0, 16, 6, pk.ACCUMULATOR, dtype=pk.f16))

    def float_words(a: pk.f32[:, :], c: pk.f16[:, :]):
        pk.coop_store(c, 0, 0, pk.coop_load(a, 0, 0, 16, 16, pk.ACCUMULATOR, dtype=pk.f16))

    words, c16 = np.zeros((16, 4), np.uint64), np.zeros((16, 16), np.float16)
    assert "a multiple of 4" in _compile_error(odd_cols, words, c16)
    assert "integer words" in _compile_error(float_words, np.zeros((16, 8), np.float32), c16)


@pk.func
def doubled(t):
    return t + t


@pk.func
def store_tile(c, t):
    pk.coop_store(c, 0, 0, t)


@pk.kernel(workgroup=(32, 1))
def tiles_through_functions(a: pk.f16[:, :], c: pk.f16[:, :]):
    t = pk.coop_load(a, 0, 0, 16, 16, pk.ACCUMULATOR)
    u = pk.coop_fill(pk.f16, 16, 16, pk.ACCUMULATOR, 1.0)
    t, u = u, t  # a tuple of tiles swaps them
    store_tile(c, doubled(u) - t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiles_pass_through_device_functions_and_tuples(backend):
    a = (RNG.standard_normal((16, 16)) * 8).astype(np.float16)
    c = np.zeros((16, 16), np.float16)
    run(tiles_through_functions, backend, 32, a, c)
    np.testing.assert_array_equal(c, (a + a) - np.float16(1))
    a16 = np.zeros((16, 16), np.float16)
    generic_module(tiles_through_functions, a16, a16)
