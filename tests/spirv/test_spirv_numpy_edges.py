"""End to end on the device, against numpy on edge values: float // and % (inf, nan, -0.0,
large quotients, f16/f32/f64), f64 trunc/round, atan/atan2 of NaN, f16 literals beyond range."""


import numpy as np
import pytest

import pykern as pk

DTYPES = {"f16": (pk.f16, np.float16), "f32": (pk.f32, np.float32), "f64": (pk.f64, np.float64)}


def key(values):
    """Comparable values: NaN equal to NaN, the sign of zero counted."""
    return [("nan",) if v != v else (v, str(v)) for v in np.asarray(values).tolist()]


def run(fn, n, *args):
    args = [a.copy() for a in args]
    with np.errstate(all="ignore"):
        pk.kernel(fn)[n](*args)
    return args[-1]


def test_f64_trunc_and_round_match_numpy(device):
    def k(x: pk.f64[:], out: pk.f64[:]):
        i = pk.global_id(0)
        out[2 * i] = pk.round(x[i])
        out[2 * i + 1] = pk.trunc(x[i])

    x = np.array([1.5, 2.5, -1.5, -2.5, 0.5, -0.5, -0.4, 0.4, -0.0, 0.0, 0.49999999999999994,
                  -1931503091.5, 1931503092.5, 2.0**52 - 0.5, 2.0**52 + 1, -(2.0**53), 1e300,
                  4503599627370495.5, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 7.7, -7.7],
                 np.float64)
    out = run(k, len(x), x, np.zeros(2 * len(x)))
    expected = np.stack([np.round(x), np.trunc(x)], 1).ravel()
    assert key(out) == key(expected)


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_atan_and_atan2_propagate_nan(device, dtype):
    pt, nt = DTYPES[dtype]

    def k(y: pt[:], x: pt[:], out: pt[:]):
        i = pk.global_id(0)
        out[2 * i] = pk.atan(y[i])
        out[2 * i + 1] = pk.atan2(y[i], x[i])

    nan = np.nan
    y = np.array([nan, nan, 1.0, nan, 0.0, -0.0, 1.0], nt)
    x = np.array([1.0, nan, nan, 0.0, nan, -1.0, 2.0], nt)
    out = run(k, len(x), y, x, np.zeros(2 * len(x), nt))
    expected = np.stack([np.arctan(y), np.arctan2(y, x)], 1).ravel()
    assert [v != v for v in out.tolist()] == [v != v for v in expected.tolist()]
    np.testing.assert_allclose(out, expected, rtol=2e-3 if dtype == "f16" else 2e-5)


def test_f16_literals_beyond_range_are_inf(device):
    def k(x: pk.f16[:], out: pk.f16[:]):
        i = pk.global_id(0)
        out[3 * i] = min(x[i], 1e6)
        out[3 * i + 1] = max(x[i], -1e6)
        out[3 * i + 2] = x[i] * 65519.0  # rounds to 65504, not inf

    x = np.array([1.0, np.inf, -np.inf, -2.0], np.float16)
    out = run(k, len(x), x, np.zeros(3 * len(x), np.float16))
    with np.errstate(all="ignore"):
        expected = np.stack([np.minimum(x, np.float16(1e6)), np.maximum(x, np.float16(-1e6)),
                             x * np.float16(65519.0)], 1).ravel()
    assert key(out) == key(expected)
