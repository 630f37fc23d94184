"""End to end on the Vulkan device (lavapipe in CI), against numpy on edge values: float // and %
(inf, nan, -0.0, large quotients, f16/f32/f64), f64 trunc/round, atan/atan2 of NaN, signed zeros
and subnormals, f16 literals beyond range."""


import math

import numpy as np
import pytest

import pykern as pk

DTYPES = {"f16": (pk.f16, np.float16), "f32": (pk.f32, np.float32), "f64": (pk.f64, np.float64)}


def key(values):
    """Comparable values: NaN equal to NaN, the sign of zero counted."""
    return [("nan",) if v != v else (v, str(v)) for v in np.asarray(values).tolist()]


@pytest.fixture(autouse=True)
def on_the_device(device):
    """Makes the Vulkan device current while a test runs: `run` launches on the current one,
    which by default is the host backend (these tests ran there only)."""
    previous = pk.get_device()
    pk.set_device(device.info.index)
    try:
        yield
    finally:
        pk.set_device(previous.info.index)


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



@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_atan2_of_zeros_and_subnormals_has_numpys_value_and_sign(device, dtype):
    # lavapipe's Atan2 gave atan2(-0.0, 1.0) = +0.0 and NaN for atan2(0, subnormal) and
    # atan2(subnormal, 0)
    pt, nt = DTYPES[dtype]

    def k(y: pt[:], x: pt[:], out: pt[:]):
        i = pk.global_id(0)
        out[i] = pk.atan2(y[i], x[i])

    tiny = float(np.finfo(nt).smallest_subnormal)
    y = np.array([-0.0, -0.0, 0.0, -0.0, 0.0, -0.0, tiny, -tiny, tiny, -1.0, 2.0, -0.0], nt)
    x = np.array([1.0, -1.0, tiny, -tiny, -0.0, 0.0, 0.0, -0.0, -0.0, 0.0, -0.0, np.inf], nt)
    out = run(k, len(x), y, x, np.zeros(len(x), nt))
    expected = np.arctan2(y, x)
    # a kernel that is not strict may see subnormal operands as zeros of their sign (NVIDIA
    # does in f32, docs/language.md): then numpy's value of the flushed operands is right too
    flushed = np.arctan2(_flushed(y), _flushed(x))
    assert all(got in (want, alt) for got, want, alt in
               zip(key(out), key(expected), key(flushed), strict=True)), (key(out), key(expected))


def _flushed(v: np.ndarray) -> np.ndarray:
    """`v` with its subnormals replaced by zeros of the same sign."""
    tiny = np.abs(v) < np.finfo(v.dtype).tiny
    return np.where(tiny, np.copysign(np.zeros_like(v), v), v)

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


def divmod_operands(nt, rng):
    """Every pair of edge values (inf, nan, +-0.0, subnormals, the largest and smallest
    values, large quotients), then random pairs over the whole exponent range."""
    info = np.finfo(nt)
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -1.5, 2.0, 3.0, -3.0, 5.0, -5.0, 7.5, 0.1, -0.1,
             1.6289477, 5.245318e19, 4000.0, 1000.0, 65504.0, 1e6, -1e6, 2.0**24, 2.0**24 + 2,
             3.0 * 2.0**60, 1e30, -1e30, 1e300, float(info.max), -float(info.max),
             float(info.tiny), float(info.smallest_subnormal), -float(info.smallest_subnormal),
             3 * float(info.smallest_subnormal), np.inf, -np.inf, np.nan]
    with np.errstate(all="ignore"):
        edges = np.unique(np.array(edges, np.float64).astype(nt))
    a, b = (v.ravel() for v in np.meshgrid(edges, edges))
    bits = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[nt]
    width = np.dtype(nt).itemsize * 8
    random = rng.integers(0, 2**width - 1, (2, 4000), dtype=np.uint64, endpoint=True)
    random = random.astype(bits).view(nt)
    # and quotients near an integer: b * k (rounded) for k of every size
    k = np.exp2(rng.uniform(0, 40 if nt == np.float64 else 20, 2000)).round()
    near_b = rng.uniform(-10, 10, 2000)
    with np.errstate(over="ignore"):
        near = [(near_b * k).astype(nt), near_b.astype(nt)]
    return (np.concatenate([a, random[0], near[0]]).astype(nt),
            np.concatenate([b, random[1], near[1]]).astype(nt))


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64"])
def test_float_floordiv_and_mod_match_numpy(device, dtype):
    pt, nt = DTYPES[dtype]

    def k(x: pt[:], y: pt[:], out: pt[:]):
        i = pk.global_id(0)
        out[2 * i] = x[i] // y[i]
        out[2 * i + 1] = x[i] % y[i]

    x, y = divmod_operands(nt, np.random.default_rng(0))
    if "llvmpipe" not in pk.get_device().info.name and dtype == "f32":
        # NVIDIA flushes f32 subnormals (pykern does not yet ask for DenormPreserve), in the
        # operands and in the reciprocal its division goes through, which also loses divisors
        # near the bottom of the range: leave those pairs out
        tiny = np.finfo(nt).tiny
        with np.errstate(all="ignore"):
            keep = ((np.abs(x) >= tiny) | (x == 0)) & ((np.abs(y) >= tiny) | (y == 0)) & \
                ~(np.abs(np.float64(1) / y.astype(np.float64)) < tiny)
            # and its division scales near the ends of the range: divisors below 2**-100 too
            keep &= (np.abs(y) >= 2.0**-100) | (y == 0)
        x, y = x[keep], y[keep]
    out = run(k, len(x), x, y, np.zeros(2 * len(x), nt))
    with np.errstate(all="ignore"):
        expected = np.stack([np.floor_divide(x, y), np.remainder(x, y)], 1).ravel()
    bad = [(float(x[i // 2]), float(y[i // 2]), "//%"[i % 2], g, e)
           for i, (g, e) in enumerate(zip(key(out), key(expected))) if g != e]
    if "llvmpipe" not in pk.get_device().info.name and dtype == "f32":
        # NVIDIA's f32 division is within Vulkan's 2.5 ULP, not correctly rounded as numpy's:
        # a floor quotient too large to be exact in f32 may then differ by a few ULP
        def close(g: tuple, e: tuple) -> bool:
            return abs(g[0] - e[0]) <= 3 * float(np.spacing(nt(abs(e[0]))))
        bad = [b for b in bad if not (b[2] == "/" and abs(b[4][0]) >= 2.0**23 and close(b[3],
                                                                                          b[4]))]
    assert not bad, f"{len(bad)} differ (a, b, op, device, numpy): {bad[:10]}"


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_sinh_cosh_finite_where_exp_overflows(device, dtype):
    # GLSL's Sinh/Cosh compute e^x first: lavapipe's cosh(f32 89.0) and cosh(f16 11.5) were inf
    pt, nt = DTYPES[dtype]

    def k(x: pt[:], out: pt[:]):
        i = pk.global_id(0)
        out[2 * i] = pk.cosh(x[i])
        out[2 * i + 1] = pk.sinh(x[i])

    big = [88.8, 89.0, 89.4, -89.2, 89.5, 10.0] if dtype == "f32" else [11.1, 11.5, -11.7, 11.8]
    x = np.array(big + [0.5, -2.0, np.inf, -np.inf, np.nan], nt)
    out = run(k, len(x), x, np.zeros(2 * len(x), nt))
    with np.errstate(over="ignore"):
        expected = np.stack([np.cosh(x.astype(np.float64)), np.sinh(x.astype(np.float64))], 1)
        expected = expected.ravel().astype(nt)
    assert [(v != v, abs(v) == np.inf) for v in out.tolist()] == \
        [(v != v, abs(v) == np.inf) for v in expected.tolist()]
    finite = np.isfinite(expected)
    np.testing.assert_allclose(out[finite], expected[finite], rtol=2e-5 if dtype == "f32" else 2e-3)


@pytest.mark.parametrize("name", ["f16", "f32"])
def test_small_integral_powers_are_products(name):
    """x ** y for integral |y| < 8 is a product of squares (Vulkan's Pow, exp2(y log2 x), gave
    -12.000002 for -12.0 ** 1.0 and 36.06 for f16 6.0 ** 2.0 on lavapipe): integer results
    that the dtype holds are exact, the others within 2 ULP of numpy (f16 computed in f32 and
    rounded once: within 1); larger exponents keep the special values."""
    pdt, ndt = DTYPES[name]

    def k(x: pk.Array, y: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[i] = x[i] ** y[i]

    rng = np.random.default_rng(5)
    xs = np.concatenate([np.arange(-12, 13), rng.standard_normal(20) * 3]).astype(ndt)
    x, y = (a.ravel() for a in np.meshgrid(xs, np.arange(-7, 8).astype(ndt)))
    out = run(k, x.size, x, y, np.zeros_like(x))
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(ndt)
    exact = np.isfinite(want) & (want == np.round(want)) & (np.abs(want) < 2.0 ** 11)
    np.testing.assert_array_equal(out[exact], want[exact])
    finite = np.isfinite(want) & (want != 0)
    ulps = np.abs(out[finite].astype(np.float64) - want[finite]) / np.spacing(
        np.abs(want[finite]))
    assert ulps.max() <= (1 if name == "f16" else 2)
    # the special values stay numpy's
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0], ndt)
    sx, sy = (a.ravel() for a in np.meshgrid(specials, np.array([-3, -2, 0, 2, 3, 9], ndt)))
    got = run(k, sx.size, sx, sy, np.zeros_like(sx))
    with np.errstate(all="ignore"):
        assert key(got) == key(np.power(sx, sy))


def test_f16_functions_of_computed_f16_values(device):
    """A known open NVIDIA (driver 580) bug: atan of an f16 computed in the kernel
    (`atan(sqrt(abs(x)))`) gave NaN or far-off values, though atan of a loaded f16 and the
    sqrt alone were right."""
    def k(x: pk.f16[:], out: pk.f16[:]):
        i = pk.global_id(0)
        out[2 * i] = math.atan(math.sqrt(abs(x[i])))
        out[2 * i + 1] = math.atan(x[i] * 0.5)

    x = np.array([3.0, 5.0, 10.0, 1.0, 0.5, 65504, -65504, 1000, -2.0, 0.0, 7.7], np.float16)
    out = run(k, len(x), x, np.zeros(2 * len(x), np.float16))
    wide = x.astype(np.float32)
    sqrt16 = np.sqrt(np.abs(wide)).astype(np.float16).astype(np.float32)
    half16 = (wide * np.float32(0.5)).astype(np.float16).astype(np.float32)
    expected = np.stack([np.arctan(sqrt16), np.arctan(half16)], 1).ravel()
    np.testing.assert_allclose(out.astype(np.float32), expected, rtol=2e-3, atol=1e-3)
