"""Control flow: short-circuit, loops, early return, and the id builtins over 2-D grids."""

from __future__ import annotations

import numpy as np
from interp_support import interpret

import pykern as pk


def guarded(x: pk.f32[:], n: pk.i32, out: pk.i32[:], pick: pk.f32[:]):
    i = pk.global_id(0)
    # x has n elements, the grid is larger: the right operands must not run past n
    ok = i < n and x[i] > 0.0
    bad = i >= n or x[i] < 0.0
    out[i] = int(ok) + 2 * int(bad)
    pick[i] = x[i] if i < n else -1.0


def test_and_or_ifexp_short_circuit():
    x = np.array([1, -2, 3, 0], np.float32)
    out, pick = np.zeros(8, np.int32), np.zeros(8, np.float32)
    interpret(guarded, 8, x, 4, out, pick)
    assert list(out) == [1, 2, 1, 0, 2, 2, 2, 2]
    assert list(pick) == [1, -2, 3, 0, -1, -1, -1, -1]


def loops(starts: pk.i32[:], stops: pk.i32[:], steps: pk.i32[:], total: pk.i32[:],
          last: pk.i32[:], count: pk.i32[:]):
    i = pk.global_id(0)
    s = 0
    c = 0
    j = -100
    for j in range(starts[i], stops[i], steps[i]):
        s += j
        c += 1
        j = 1000  # does not change the iteration
    total[i] = s
    last[i] = j
    count[i] = c


def test_for_range_python_semantics_with_runtime_steps():
    cases = [(0, 10, 1), (10, 0, -1), (10, 0, -3), (0, 10, 3), (5, 5, 1), (5, 0, 1),
             (-5, 5, 4), (2**31 - 10, 2**31 - 1, 4), (-2**31, -2**31 + 7, 3), (3, 9, 0)]
    starts, stops, steps = (np.array(c, np.int32) for c in zip(*cases, strict=True))
    total, last, count = (np.zeros(len(cases), np.int32) for _ in range(3))
    interpret(loops, len(cases), starts, stops, steps, total, last, count)
    for k, (a, b, c) in enumerate(cases):
        r = range(a, b, c) if c else range(0)  # a zero step (undefined) runs nothing
        values = list(r)
        assert count[k] == len(values), (a, b, c)
        assert total[k] == np.int32(np.int64(sum(values)).astype(np.int32)), (a, b, c)
        # the variable holds the last value taken, and is untouched by an empty loop
        assert last[k] == (1000 if values else -100), (a, b, c)


def constant_steps(out: pk.i32[:]):
    k = 0
    for i in range(10, -10, -4):
        out[k] = i
        k += 1
    for i in range(3):
        out[k] = i
        k += 1
    out[k] = i


def test_for_range_constant_negative_step():
    out = np.full(10, 99, np.int32)
    interpret(constant_steps, 1, out)
    assert list(out) == [10, 6, 2, -2, -6, 0, 1, 2, 2, 99]


def collatz(start: pk.i32[:], steps: pk.i32[:], odd_seen: pk.i32[:]):
    i = pk.global_id(0)
    if start[i] <= 0:
        steps[i] = -1
        return
    n = start[i]
    k = 0
    odd = 0
    while True:
        if n == 1:
            break
        k += 1
        if n % 2 == 0:
            n = n // 2
            continue
        odd += 1
        n = 3 * n + 1
    steps[i] = k
    odd_seen[i] = odd


def test_while_break_continue_return():
    start = np.array([1, 2, 3, 6, 7, 27, 0, -5], np.int32)
    steps, odd = np.zeros(8, np.int32), np.zeros(8, np.int32)
    interpret(collatz, 8, start, steps, odd)

    def reference(n: int) -> tuple[int, int]:
        k = o = 0
        while n != 1:
            k += 1
            if n % 2:
                o += 1
                n = 3 * n + 1
            else:
                n //= 2
        return k, o

    want = [reference(int(n)) if n > 0 else (-1, 0) for n in start]
    assert list(steps) == [w[0] for w in want]
    assert list(odd) == [w[1] for w in want]


def nested_loops(out: pk.i32[:]):
    i = pk.global_id(0)
    total = 0
    for a in range(i + 1):
        for b in range(10):
            if b > a:
                break
            if (a + b) % 2 == 1:
                continue
            total += a * b
    out[i] = total


def test_break_and_continue_leave_only_the_inner_loop():
    out = np.zeros(6, np.int32)
    interpret(nested_loops, 6, out)
    want = [sum(a * b for a in range(i + 1) for b in range(min(a, 9) + 1) if (a + b) % 2 == 0)
            for i in range(6)]
    assert list(out) == want


def ids(gid: pk.i32[:, :, :], lid: pk.i32[:, :, :], grp: pk.i32[:, :, :],
        size: pk.i32[:, :, :], ngroups: pk.i32[:, :, :], grid: pk.i32[:, :, :]):
    x = pk.global_id(0)
    y = pk.global_id(1)
    gid[y, x, 0] = pk.global_id(0)
    gid[y, x, 1] = pk.global_id(1)
    gid[y, x, 2] = pk.global_id(2)
    lid[y, x, 0] = pk.local_id(0)
    lid[y, x, 1] = pk.local_id(1)
    lid[y, x, 2] = pk.local_id(2)
    grp[y, x, 0] = pk.group_id(0)
    grp[y, x, 1] = pk.group_id(1)
    grp[y, x, 2] = pk.group_id(2)
    size[y, x, 0] = pk.group_size(0)
    size[y, x, 1] = pk.group_size(1)
    size[y, x, 2] = pk.group_size(2)
    ngroups[y, x, 0] = pk.num_groups(0)
    ngroups[y, x, 1] = pk.num_groups(1)
    ngroups[y, x, 2] = pk.num_groups(2)
    grid[y, x, 0] = pk.grid(0)
    grid[y, x, 1] = pk.grid(1)
    grid[y, x, 2] = pk.grid(2)


def test_2d_grid_and_id_builtins():
    gx, gy, wg = 10, 7, (4, 3, 1)
    outs = [np.full((gy, gx, 3), -9, np.int32) for _ in range(6)]
    interpret(ids, (gx, gy), *outs, workgroup=wg)
    gid, lid, grp, size, ngroups, grid = outs
    y, x = np.mgrid[0:gy, 0:gx]
    np.testing.assert_array_equal(gid, np.stack([x, y, 0 * x], -1))
    np.testing.assert_array_equal(lid, np.stack([x % 4, y % 3, 0 * x], -1))
    np.testing.assert_array_equal(grp, np.stack([x // 4, y // 3, 0 * x], -1))
    np.testing.assert_array_equal(size, np.broadcast_to([4, 3, 1], (gy, gx, 3)))
    np.testing.assert_array_equal(ngroups, np.broadcast_to([3, 3, 1], (gy, gx, 3)))
    np.testing.assert_array_equal(grid, np.broadcast_to([gx, gy, 1], (gy, gx, 3)))


def order(log: pk.i32[:], counter: pk.i32[:]):
    # invocations run one after the other: each appends its id to a log
    k = counter[0]
    counter[0] = k + 1
    log[k] = pk.global_id(0) + 100 * pk.global_id(1)


def test_workgroups_in_order_then_invocations_inside_each():
    log, counter = np.full(12, -1, np.int32), np.zeros(1, np.int32)
    interpret(order, (4, 3), log, counter, workgroup=(2, 2, 1))
    assert counter[0] == 12  # the 4 invocations past the grid (y = 3) returned at the mask
    want = []
    for grp_y in range(2):
        for grp_x in range(2):
            for ly in range(2):
                for lx in range(2):
                    x, y = 2 * grp_x + lx, 2 * grp_y + ly
                    if y < 3:
                        want.append(x + 100 * y)
    assert list(log) == want


def scalar_reassigned(n: pk.i32, x: pk.f32, out: pk.f32[:]):
    i = pk.global_id(0)
    while n > 0:
        x = x * 2.0
        n -= 1
    out[i] = x


def test_scalar_parameters_and_reassignment():
    out = np.zeros(3, np.float32)
    interpret(scalar_reassigned, 3, 5, 0.1, out)
    want = np.float32(0.1)
    for _ in range(5):
        want = want * np.float32(2)
    assert (out == want).all()
