"""pk.local, pk.shared and storage arrays as @pk.func arguments, passed by reference: a write in
the function is seen by the caller, a read sees the caller's data. Each kernel runs on the
device and in the interpreter and is compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

BACKENDS = [pytest.param(False, id="vulkan"), pytest.param(True, id="interpreter")]


@pk.func
def fill_squares(buf, n, base):
    for k in range(n):
        buf[k] = (base + k) * (base + k)


@pk.func
def total(buf, n):
    s = 0
    for k in range(n):
        s += buf[k]
    return s


@pk.func
def scale_row(m, row, factor):
    for c in range(m.shape[1]):
        m[row, c] = m[row, c] * factor


@pytest.mark.parametrize("interpret", BACKENDS)
def test_local_array_written_and_read_by_funcs(interpret):
    @pk.kernel(interpret=interpret)
    def k(out: pk.i32[:]):
        i = pk.global_id(0)
        buf = pk.local(pk.i32, 4)
        fill_squares(buf, 4, i)
        buf[0] = buf[0] + 1  # the caller sees the function's writes ...
        out[i] = total(buf, 4)  # ... and the function sees the caller's

    n = 37
    out = np.zeros(n, np.int32)
    k[n](out)
    i = np.arange(n)
    expected = sum((i + j) ** 2 for j in range(4)) + 1
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("interpret", BACKENDS)
def test_two_dimensional_local_and_shared_arrays_in_funcs(interpret):
    @pk.kernel(interpret=interpret, workgroup=(8, 1, 1))
    def k(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        lid = pk.local_id(0)
        m = pk.local(pk.f32, (2, 3))
        for c in range(3):
            m[0, c] = x[i] + c
            m[1, c] = x[i] - c
        scale_row(m, 1, 2.0)
        tile = pk.shared(pk.f32, (8, 3))
        for c in range(3):
            tile[lid, c] = m[0, c] + m[1, c]
        scale_row(tile, lid, 0.5)
        pk.barrier()
        other = (lid + 1) % 8
        out[i] = tile[other, 0] + tile[other, 1] + tile[other, 2]

    n = 32
    x = np.arange(n, dtype=np.float32) * 0.25
    out = np.zeros(n, np.float32)
    k[n](x, out)
    c = np.arange(3, dtype=np.float32)
    row = 0.5 * ((x[:, None] + c) + 2.0 * (x[:, None] - c))  # per invocation, summed below
    sums = row.sum(axis=1)
    other = (np.arange(n) // 8) * 8 + (np.arange(n) % 8 + 1) % 8
    np.testing.assert_allclose(out, sums[other], rtol=1e-6)


@pytest.mark.parametrize("interpret", BACKENDS)
def test_storage_array_argument_is_by_reference(interpret):
    @pk.kernel(interpret=interpret)
    def k(m: pk.f32[:, :]):
        r = pk.global_id(0)
        scale_row(m, r, 3.0)

    m = np.arange(12, dtype=np.float32).reshape(4, 3)
    expected = m * 3.0
    k[4](m)
    np.testing.assert_array_equal(m, expected)
