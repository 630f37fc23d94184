"""`pk.static_range`: loops the compiler unrolls, with the loop variable a compile-time
constant in each copy, and tuples used as register arrays (`acc[i] = ...`). Every kernel runs
on the current device, and the tile kernel in the interpreter (and on a device with tiles);
each is compared with plain Python or numpy in float64."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import pykern as pk
from pykern.runtime.feature import Feature

STEPS = 3


@pk.kernel
def polynomial(x: pk.f32[:], out: pk.f32[:], n: pk.constexpr):
    i = pk.global_id(0)
    acc = (0.0, 0.0, 0.0, 0.0)
    for j in pk.static_range(n):
        acc[j] = x[i] * (j + 1)
        if j % 2 == 0:  # decided at compile time, per copy
            acc[j] += 100.0
    s = 0.0
    for j in pk.static_range(len(acc) - 1, -1, -1):
        s = s * 10.0 + acc[j]
    for j in pk.static_range(STEPS):  # a captured global as the bound
        for q in pk.static_range(j, 2 * j):  # bounds from the outer variable
            s += pk.f32(q)
    out[i] = s


def polynomial_reference(x: float, n: int) -> float:
    acc = [0.0] * 4
    for j in range(n):
        acc[j] = x * (j + 1) + (100.0 if j % 2 == 0 else 0.0)
    s = 0.0
    for j in range(3, -1, -1):
        s = s * 10.0 + acc[j]
    return s + sum(q for j in range(STEPS) for q in range(j, 2 * j))


@pytest.mark.parametrize("n", [0, 1, 4])
def test_unrolled_loops_index_tuples_and_decide_ifs(n):
    x = np.arange(-3, 5, dtype=np.float32)
    out = np.zeros_like(x)
    polynomial[x.size](x, out, n)
    expected = np.array([polynomial_reference(float(v), n) for v in x], np.float32)
    np.testing.assert_array_equal(out, expected)


def test_static_range_outside_a_kernel_is_range():
    assert list(pk.static_range(2, 9, 3)) == [2, 5, 8]


@pk.kernel
def shifted_sums(x: pk.i32[:], out: pk.i32[:, :], width: pk.constexpr):
    i = pk.global_id(0)
    for d in pk.static_range(width):
        total = 0
        for k in range(d + 1):  # a run-time loop inside the unrolled one
            total += x[(i + k) % len(x)]
        out[d, i] = total


def test_run_time_loops_and_locals_inside_an_unrolled_loop():
    x = np.arange(10, dtype=np.int32) * 3 - 7
    out = np.zeros((3, x.size), np.int32)
    shifted_sums[x.size](x, out, 3)
    for d in range(3):
        expected = [sum(int(x[(i + k) % x.size]) for k in range(d + 1)) for i in range(x.size)]
        assert out[d].tolist() == expected


def has_tiles() -> bool:
    return pk.get_device().info.features.has(Feature.COOPERATIVE_MATRIX)


@pk.kernel(workgroup=(32, 1))
def gemm_2x2_tiles(a: pk.f16[:, :], b: pk.f16[:, :], c: pk.f32[:, :]):
    """Each subgroup computes a 32 x 32 block as a tuple of 2 x 2 accumulator tiles."""
    row = pk.group_id(1) * 32
    col = pk.group_id(0) * 32
    zero = pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0)
    acc = (zero, zero, zero, zero)
    for k in range(0, a.shape[1], 16):
        for r in pk.static_range(2):
            ta = pk.coop_load(a, row + 16 * r, k, 16, 16, pk.MATRIX_A)
            for s in pk.static_range(2):
                tb = pk.coop_load(b, k, col + 16 * s, 16, 16, pk.MATRIX_B)
                acc[2 * r + s] = pk.coop_mma(ta, tb, acc[2 * r + s])
    for t in pk.static_range(4):
        pk.coop_store(c, row + 16 * (t // 2), col + 16 * (t % 2), acc[t])


@pytest.mark.parametrize("backend", ["interpret", pytest.param("device", marks=pytest.mark.skipif(
    not has_tiles(), reason="the device has no cooperative matrices"))])
def test_tuple_of_tiles_as_accumulators(backend):
    rng = np.random.default_rng(5)
    m, n, k = 64, 32, 48
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    kernel = pk.kernel(gemm_2x2_tiles.__wrapped__, interpret=True, workgroup=(32, 1)) \
        if backend == "interpret" else gemm_2x2_tiles
    kernel[(n // 32 * 32, m // 32)](a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = k * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(c - ref) <= bound + 1e-6)


def compile_error(source_kernel, *args) -> str:
    with pytest.raises(pk.CompileError) as info:
        source_kernel.compile(*args)
    return str(info.value)


def test_bounds_must_be_compile_time_integers():
    @pk.kernel
    def runtime_bound(x: pk.f32[:], n: pk.i32):
        for j in pk.static_range(n):
            x[j] = 0.0

    message = compile_error(runtime_bound, np.zeros(4, np.float32), 3)
    assert "compile-time integers" in message and "test_static_range.py:" in message


def test_break_cannot_leave_an_unrolled_loop():
    @pk.kernel
    def leaves(x: pk.f32[:]):
        for j in pk.static_range(3):
            for q in range(4):
                if q == 2:
                    break  # leaves the inner, run-time loop: fine
            if x[j] > 0.0:
                break

    message = compile_error(leaves, np.zeros(4, np.float32))
    assert "'break' cannot leave a pk.static_range loop" in message
    lines, first = inspect.getsourcelines(leaves.__wrapped__)
    outer_break = first + max(k for k, line in enumerate(lines) if line.strip() == "break")
    assert f"test_static_range.py:{outer_break}:" in message


def test_tuple_elements_keep_their_type_and_need_constant_indices():
    @pk.kernel
    def wrong_type(x: pk.f32[:]):
        acc = (0.0, 0.0)
        acc[0] = pk.i64(3)
        x[0] = acc[0]

    assert "element 0 of 'acc' has type f32" in compile_error(wrong_type, np.zeros(2, np.float32))

    @pk.kernel
    def runtime_index(x: pk.f32[:], k: pk.i32):
        acc = (0.0, 0.0)
        acc[k] = 1.0
        x[0] = acc[0]

    assert "constant index" in compile_error(runtime_index, np.zeros(2, np.float32), 1)

    @pk.kernel
    def out_of_range(x: pk.f32[:]):
        acc = (0.0, 0.0)
        for j in pk.static_range(3):
            acc[j] = 1.0
        x[0] = acc[0]

    assert "index 2 is out of range for 'acc'" in compile_error(out_of_range,
                                                               np.zeros(2, np.float32))


def test_the_loop_variable_cannot_be_a_kernel_variable():
    @pk.kernel
    def clash(x: pk.f32[:]):
        j = 1
        for j in pk.static_range(2):
            x[j] = 1.0

    assert "needs a name of its own" in compile_error(clash, np.zeros(2, np.float32))


def _power_of(k: int):
    @pk.func
    def power(v):
        acc = v
        for _ in pk.static_range(k - 1):
            acc = acc * v
        return acc
    return power


POWERS = (_power_of(1), _power_of(2), (_power_of(3), _power_of(4)))


@pk.kernel
def calls_from_a_tuple(x: pk.f32[:], out: pk.f32[:, :]):
    i = pk.global_id(0)
    for s in pk.static_range(2):
        out[s, i] = POWERS[s](x[i])
    for q in pk.static_range(2):
        out[2 + q, i] = POWERS[2][q](x[i])  # a tuple inside the tuple
    out[4, i] = POWERS[-1][-1](x[i]) - POWERS[1](x[i])


def test_functions_called_from_a_captured_tuple_at_constant_indices():
    x = np.array([0.5, -1.5, 2.0, 3.0], np.float32)
    out = np.zeros((5, x.size), np.float32)
    calls_from_a_tuple[x.size](x, out)
    x64 = x.astype(np.float64)
    want = np.stack([x64, x64 ** 2, x64 ** 3, x64 ** 4, x64 ** 4 - x64 ** 2])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_a_captured_tuple_of_functions_needs_constant_indices_in_range():
    @pk.kernel
    def runtime_index(x: pk.f32[:], k: pk.i32):
        x[0] = POWERS[k](x[0])

    assert "constant index" in compile_error(runtime_index, np.zeros(2, np.float32), 1)

    @pk.kernel
    def out_of_range(x: pk.f32[:]):
        x[0] = POWERS[3](x[0])

    assert "index 3 is out of range for a tuple of 3" in compile_error(
        out_of_range, np.zeros(2, np.float32))
