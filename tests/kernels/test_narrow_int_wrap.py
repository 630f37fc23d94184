"""8- and 16-bit integer results wrap before anything else sees them.

Each row is an expression the random kernels caught NVIDIA's driver (580) computing on the
unwrapped 32-bit value: `min(0 - x, 0)` of an i8 -128 gave 0, a wrapped u8 difference was used
as 202, an i8 square was taken `% 9` before it wrapped, and a loop's bounds built from such
values ran the wrong number of times. The reference is numpy's wrapping arithmetic.
"""

import numpy as np
import pytest

import pykern as pk

NARROW = [pk.i8, pk.u8, pk.i16, pk.u16]


def _kernel(t):
    @pk.kernel
    def wraps(x: t[:], y: t[:], out: pk.i32[:, :]):
        i = pk.global_id(0)
        v = x[i]
        z = v ^ v
        out[0, i] = pk.i32(min(z - v, z * z))
        out[1, i] = pk.i32(v * v % t(9))
        out[2, i] = 1 if v * t(3) >= z - v else 0
        d = v - y[i]
        d -= min(t(64), d)
        out[3, i] = pk.i32(d)
        n = 0
        for _ in range(v % t(7) - t(3), v * v % t(9) - t(3)):
            n += 1
        out[4, i] = n
        out[5, i] = pk.i32((z - v) >> t(1))
        out[6, i] = pk.i32(abs(z - v) // t(3))
    return wraps


def _values(t) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(t.numpy)
    x = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 5, 100, 127, 128, 255,
         -1, -5, -100, -127, 200, 16, 60, 61, 94]
    y = [1, 0, info.max, 3, 7, info.min, 250, 65, 5, 3, 255, 1, 9, 2, 60, info.max, 4, 0, 17,
         128, 1, 90]
    wrap = lambda vs: np.array([v % (1 << info.bits) for v in vs], np.uint64).astype(t.numpy)
    return wrap(x), wrap(y)


def _reference(t, x: np.ndarray, y: np.ndarray) -> list[list[int]]:
    c = lambda v: np.array(v, t.numpy)
    with np.errstate(over="ignore"):
        z = x ^ x
        neg = z - x
        square = x * x
        d = x - y
        d = d - np.minimum(c(64), d)
        start, stop = x % c(7) - c(3), square % c(9) - c(3)
        rows = [np.minimum(neg, z * z), square % c(9), (x * c(3) >= neg).astype(np.int32), d,
                [len(range(int(a), int(b))) for a, b in zip(start, stop)],
                neg >> c(1), np.abs(neg) // c(3)]
    return [np.asarray(r).astype(np.int64).tolist() for r in rows]


@pytest.mark.parametrize("t", NARROW, ids=lambda d: d.name)
def test_narrow_results_wrap_before_they_are_used(t):
    x, y = _values(t)
    out = np.zeros((7, x.size), np.int32)
    _kernel(t)[x.size](x, y, out)
    assert out.tolist() == _reference(t, x, y)
