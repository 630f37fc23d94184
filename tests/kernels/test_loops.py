"""Loops over `pk.local` arrays with run-time bounds, on the device and in the interpreter.

lavapipe (Mesa 22.3) once lost stores to a local array in a `for ... in range(n)` loop that
wrote `buf[b]` and then `buf[b + 1]` (a bubble sort of [4, 3, 2, 1] gave [4, 4, 4, 4]); these
kernels keep that shape and its relatives (while loops, negative and run-time steps, nested
loops, several arrays, other index types) on every device.
"""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

N = 8  # the size of the local arrays; rows are sorted in place, one per invocation


def run_both(kernel_fn, grid, *args):
    """Runs `kernel_fn` on the device and in the interpreter with copies of `args`; returns
    the copies each run left, device first."""
    results = []
    for interpret in (False, True):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        pk.kernel(kernel_fn, interpret=interpret)[grid](*copies)
        results.append(copies)
    return results


def rows(n_rows=6, seed=3):
    """Rows of N values with a length each (the run-time trip count), the first one the
    reproducer's [4, 3, 2, 1]."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, (n_rows, N)).astype(np.int32)
    x[0, :4] = [4, 3, 2, 1]
    lengths = np.array([4] + [int(v) for v in rng.integers(0, N + 1, n_rows - 1)], np.int32)
    return x, lengths


def sorted_rows(x, lengths):
    expected = x.copy()
    for r, n in enumerate(lengths):
        expected[r, :n] = np.sort(x[r, :n])
    return expected


def bubble_for(x: pk.i32[:, :], lengths: pk.i32[:], perm: pk.i32[:, :]):
    r = pk.global_id(0)
    n = lengths[r]
    buf = pk.local(pk.i32, 8)
    for j in range(n):
        buf[j] = x[r, j]
    for a in range(n):
        for b in range(n - 1 - a):
            if buf[b] > buf[b + 1]:
                t = buf[b]
                buf[b] = buf[b + 1]
                buf[b + 1] = t
    for j in range(n):
        x[r, j] = buf[j]


def bubble_while(x: pk.i32[:, :], lengths: pk.i32[:], perm: pk.i32[:, :]):
    r = pk.global_id(0)
    n = lengths[r]
    buf = pk.local(pk.i32, 8)
    j = 0
    while j < n:
        buf[j] = x[r, j]
        j += 1
    a = 0
    while a < n:
        b = 0
        while b < n - 1 - a:
            if buf[b] > buf[b + 1]:
                t = buf[b]
                buf[b] = buf[b + 1]
                buf[b + 1] = t
            b += 1
        a += 1
    j = 0
    while j < n:
        x[r, j] = buf[j]
        j += 1


def bubble_downward(x: pk.i32[:, :], lengths: pk.i32[:], perm: pk.i32[:, :]):
    # negative steps, writing buf[b] and then buf[b - 1]
    r = pk.global_id(0)
    n = lengths[r]
    buf = pk.local(pk.i32, 8)
    for j in range(n - 1, -1, -1):
        buf[j] = x[r, j]
    for a in range(n):
        for b in range(n - 1, a, -1):
            if buf[b - 1] > buf[b]:
                t = buf[b]
                buf[b] = buf[b - 1]
                buf[b - 1] = t
    for j in range(n):
        x[r, j] = buf[j]


def bubble_runtime_step(x: pk.i32[:, :], lengths: pk.i32[:], perm: pk.i32[:, :]):
    # a step known only at run time (1), and 64-bit and 8-bit loop variables
    r = pk.global_id(0)
    n = lengths[r]
    one = lengths[0] - 3
    buf = pk.local(pk.i32, 8)
    for j in range(0, n, one):
        buf[j] = x[r, j]
    for a in range(pk.i64(n)):
        for b in range(0, pk.u8(n) - 1 - pk.u8(a), pk.u8(one)):
            if buf[b] > buf[b + 1]:
                t = buf[b]
                buf[b] = buf[b + 1]
                buf[b + 1] = t
    for j in range(n):
        x[r, j] = buf[j]


def insertion_two_arrays(x: pk.i32[:, :], lengths: pk.i32[:], perm: pk.i32[:, :]):
    # keys and their original positions sorted together (`perm` receives the positions): two
    # local arrays, a while loop inside a for loop, stores at b + 1 before b
    r = pk.global_id(0)
    n = lengths[r]
    keys = pk.local(pk.i32, 8)
    where = pk.local(pk.i32, 8)
    for j in range(n):
        keys[j] = x[r, j]
        where[j] = j
    for a in range(1, n):
        key = keys[a]
        pos = where[a]
        b = a - 1
        while b >= 0 and keys[b] > key:
            keys[b + 1] = keys[b]
            where[b + 1] = where[b]
            b -= 1
        keys[b + 1] = key
        where[b + 1] = pos
    for j in range(n):
        x[r, j] = keys[j]
        perm[r, j] = where[j]


def bubble_early_exit(x: pk.i32[:, :], lengths: pk.i32[:], perm: pk.i32[:, :]):
    # the classic bubble sort: a pass without swaps ends it (a `break`); the passes are a
    # while loop with a break in a for loop that may break too
    r = pk.global_id(0)
    n = lengths[r]
    buf = pk.local(pk.i32, 8)
    for j in range(n):
        buf[j] = x[r, j]
    a = 0
    while True:
        swapped = False
        for b in range(n - 1 - a):
            if b == 100:
                break
            if buf[b] > buf[b + 1]:
                t = buf[b]
                buf[b] = buf[b + 1]
                buf[b + 1] = t
                swapped = True
        a += 1
        if not swapped:
            break
    for j in range(n):
        x[r, j] = buf[j]
    perm[r, 0] = a  # the number of passes


def bubble_returns(x: pk.i32[:, :], lengths: pk.i32[:], perm: pk.i32[:, :]):
    # `return` from inside the loops once sorted: a loop with a second exit
    r = pk.global_id(0)
    n = lengths[r]
    buf = pk.local(pk.i32, 8)
    for j in range(n):
        buf[j] = x[r, j]
    for _a in range(n + 1):
        swaps = 0
        for b in range(n - 1):
            if buf[b] > buf[b + 1]:
                t = buf[b]
                buf[b] = buf[b + 1]
                buf[b + 1] = t
                swaps += 1
        if swaps == 0:
            for j in range(n):
                x[r, j] = buf[j]
            return


@pytest.mark.parametrize("kernel_fn", [bubble_for, bubble_while, bubble_downward,
                                       bubble_runtime_step, insertion_two_arrays,
                                       bubble_early_exit, bubble_returns],
                         ids=lambda f: f.__name__)
def test_local_array_sorts_with_runtime_trip_counts(kernel_fn):
    x, lengths = rows()
    perm = np.full_like(x, -1)
    device, interpreter = run_both(kernel_fn, len(lengths), x, lengths, perm)
    expected = sorted_rows(x, lengths)
    np.testing.assert_array_equal(interpreter[0], expected)
    np.testing.assert_array_equal(device[0], expected)
    assert device[0][0, :4].tolist() == [1, 2, 3, 4]  # lavapipe gave [4, 4, 4, 4]
    np.testing.assert_array_equal(device[2], interpreter[2])
    if kernel_fn is insertion_two_arrays:  # the positions moved with their keys
        for r, n in enumerate(lengths):
            np.testing.assert_array_equal(x[r, device[2][r, :n]], expected[r, :n])


# One bubble pass over a local array with another loop inside the pass, one that leaves on a
# flag: an integer `**` (square-and-multiply), a float `%` (a remainder loop) or a `while`.
# lavapipe lost the store that moves a value down (found by random kernels: the reduced kernel
# put x in buf[4] where the pass leaves 0).
def pass_beside_power(x: pk.f32[:], out: pk.f32[:, :], side: pk.i32[:]):
    i = pk.global_id(0)
    v = i * 7
    buf = pk.local(pk.f32, 8)
    buf[1] = x[i]
    for j in range(5):
        v **= 3
        if buf[j] > buf[j + 1]:
            t = buf[j]
            buf[j] = buf[j + 1]
            buf[j + 1] = t
    for k in range(8):
        out[i, k] = buf[k]
    side[i] = v


def pass_beside_float_mod(x: pk.f32[:], out: pk.f32[:, :], side: pk.i32[:]):
    i = pk.global_id(0)
    w = x[i]
    buf = pk.local(pk.f32, 8)
    buf[1] = x[i]
    for j in range(5):
        w = w % 0.75 + 1.0
        if buf[j] > buf[j + 1]:
            t = buf[j]
            buf[j] = buf[j + 1]
            buf[j + 1] = t
    for k in range(8):
        out[i, k] = buf[k]
    side[i] = pk.i32(w * 1000.0)


def pass_beside_while(x: pk.f32[:], out: pk.f32[:, :], side: pk.i32[:]):
    i = pk.global_id(0)
    buf = pk.local(pk.f32, 8)
    buf[1] = x[i]
    steps = 0
    for j in range(5):
        c = i
        while c > 0:
            c //= 2
            steps += 1
        if buf[j] > buf[j + 1]:
            t = buf[j]
            buf[j] = buf[j + 1]
            buf[j + 1] = t
    for k in range(8):
        out[i, k] = buf[k]
    side[i] = steps


@pk.func
def cubed(v):
    return v ** 3


def pass_beside_function(x: pk.f32[:], out: pk.f32[:, :], side: pk.i32[:]):
    # the inner loop inside a device function the pass calls
    i = pk.global_id(0)
    v = i * 7
    buf = pk.local(pk.f32, 8)
    buf[1] = x[i]
    for j in range(5):
        v = cubed(v)
        if buf[j] > buf[j + 1]:
            t = buf[j]
            buf[j] = buf[j + 1]
            buf[j + 1] = t
    for k in range(8):
        out[i, k] = buf[k]
    side[i] = v


@pytest.mark.parametrize("kernel_fn", [pass_beside_power, pass_beside_float_mod,
                                       pass_beside_while, pass_beside_function],
                         ids=lambda f: f.__name__)
def test_a_bubble_pass_beside_an_inner_loop_keeps_its_stores(kernel_fn):
    x = np.array([1.5, -77.25, 0.0, 64.75, -1.0, 16.0, 2.125, 95.5, -3.0, 0.125, 13.5, 1.0],
                 np.float32)
    n = len(x)
    out, side = np.zeros((n, 8), np.float32), np.zeros(n, np.int32)
    device, interpreter = run_both(kernel_fn, n, x, out, side)
    expected = np.zeros((n, 8), np.float32)
    for i, value in enumerate(x):  # [0, x, 0, ...] after one pass over its first six
        row = [0.0, float(value), 0.0, 0.0, 0.0, 0.0]
        for j in range(5):
            if row[j] > row[j + 1]:
                row[j], row[j + 1] = row[j + 1], row[j]
        expected[i, :6] = row
    np.testing.assert_array_equal(interpreter[1], expected)
    np.testing.assert_array_equal(device[1], expected)
    np.testing.assert_array_equal(device[2], interpreter[2])
