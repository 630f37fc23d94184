"""f16 + - * / round every result onto f16's grid, as numpy's float16 does: an intermediate
that overflows f16 is inf, one that underflows is 0 or a subnormal.

NVIDIA's driver (580) kept an f16 quotient unrounded in its f32 register, so `h / 1e-3 / -2.5`
came out finite where `h / 1e-3` overflows (found by random kernels)."""

import numpy as np

import pykern as pk


@pk.kernel
def half_ops(x: pk.f16[:], y: pk.f16[:], out: pk.f16[:, :]):
    i = pk.global_id(0)
    out[0, i] = x[i] / 1e-3 / -2.5
    out[1, i] = x[i] + y[i]
    out[2, i] = x[i] - y[i]
    out[3, i] = x[i] * y[i]
    out[4, i] = x[i] / y[i]
    out[5, i] = (x[i] * y[i]) * 0.5
    out[6, i] = (x[i] + x[i]) - x[i]


def test_half_results_are_rounded_to_half_after_every_operation():
    rng = np.random.default_rng(0)
    edges = [65504, -65504, 6e-8, 0, -0.0, np.inf, np.nan, 1e-4, 40000, 3e-5]
    x = np.concatenate([rng.standard_normal(2000) * 300, edges]).astype(np.float16)
    y = np.concatenate([rng.standard_normal(2000) * 3,
                        [65504, 1.0, 0.5, 0, 3.0, 2.0, 1.0, 1e-4, 2.0, 1e-3]]).astype(np.float16)
    out = np.zeros((7, x.size), np.float16)
    half_ops[x.size](x, y, out)
    h = np.float16
    with np.errstate(all="ignore"):
        want = np.stack([x / h(1e-3) / h(-2.5), x + y, x - y, x * y, x / y, (x * y) * h(0.5),
                         (x + x) - x])
    np.testing.assert_array_equal(out, want)
