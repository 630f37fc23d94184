"""`interpret=True` / PYKERN_INTERPRET=1: the same kernel, run by the interpreter, gives the
device's results; errors surface as Python exceptions with the kernel's line."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


def collatz(start: pk.i32[:], steps: pk.i32[:]):
    i = pk.global_id(0)
    n = start[i]
    count = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        count += 1
    steps[i] = count


def test_interpreter_matches_device_on_numpy_and_tensors():
    start = np.arange(1, 300, dtype=np.int32)
    on_device, interpreted = np.empty_like(start), np.empty_like(start)
    pk.kernel(collatz)[start.size](start, on_device)
    pk.kernel(collatz, interpret=True)[start.size](start, interpreted)
    np.testing.assert_array_equal(on_device, interpreted)
    out = pk.zeros(start.size, pk.i32)
    pk.kernel(collatz, interpret=True)[start.size](pk.asarray(start), out)
    np.testing.assert_array_equal(out.numpy(), on_device)


def test_interpreter_writes_into_numpy_views_in_place():
    @pk.kernel(interpret=True)
    def double(x: pk.f32[:]):
        x[pk.global_id(0)] *= 2.0

    base = np.arange(10, dtype=np.float32)
    double[5](base[::2])
    np.testing.assert_array_equal(base, [0, 1, 4, 3, 8, 5, 12, 7, 16, 9])


def test_interpreter_reports_out_of_bounds_with_the_line():
    @pk.kernel(interpret=True)
    def off_by_one(x: pk.f32[:]):
        i = pk.global_id(0)
        x[i + 1] = 1.0

    where = r"test_interpret_mode.py:47:9: kernel .off_by_one.*index \(4,\) of .x."
    with pytest.raises(pk.KernelIndexError, match=where):
        off_by_one[4](np.zeros(4, np.float32))


def test_interpreter_runs_asserts_in_debug_mode():
    @pk.kernel(interpret=True, debug=True)
    def positive(x: pk.f32[:]):
        assert x[pk.global_id(0)] >= 0.0, "negative input"

    positive[3](np.ones(3, np.float32))
    with pytest.raises(pk.KernelAssertionError, match="negative input"):
        positive[3](np.array([1, -1, 1], np.float32))
