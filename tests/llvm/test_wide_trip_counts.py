"""A 64-bit `range` with a run-time negative step on the host device.

LLVM computed the loop's trip count in 128 bits there and called the compiler runtime's 128-bit
division, which the JIT could not find: linking failed ("Symbols not found: __udivti3", found
by random kernels). The host device loads the compiler runtime for its JIT."""

import numpy as np

import pykern as pk


@pk.kernel
def stepped_down(x: pk.i32[:], y: pk.u32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    start = pk.i16(x[i])
    w = ~(y[i] * pk.u32(x[i]))
    n = 0
    for _ in range(pk.i64(start) % 9 - 2, 1, -((pk.i64(w) if bool(w) else -2) % 3) - 1):
        n += 1
    out[i] = n


def test_64_bit_range_with_a_run_time_negative_step():
    x = np.array([5, -7, 100, 3, 8, 0, 2**31 - 1, -2**31, 17, -1], np.int32)
    y = np.array([1, 2, 3, 4, 5, 7, 9, 2**32 - 1, 0, 6], np.uint32)
    out = np.zeros(x.size, np.int32)
    stepped_down[x.size](x, y, out)
    want = []
    for a, b in zip(x.tolist(), y.tolist()):
        start = (a + 2**15) % 2**16 - 2**15
        w = ~(b * a) % 2**32
        step = -((w if w else -2) % 3) - 1
        want.append(len(range(start % 9 - 2, 1, step)))
    assert out.tolist() == want
