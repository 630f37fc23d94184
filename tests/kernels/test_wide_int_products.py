"""64-bit integer products wrap like numpy's, whatever the operands' values.

NVIDIA's driver (580) gave u64 `q * (q % 2)` and `q * (q & 1)` as `q` for an even `q` (found
by random kernels), so products are checked by a factor of 0 or 1 next to general ones."""

import numpy as np
import pytest

import pykern as pk


@pytest.mark.parametrize("t", [pk.u64, pk.i64], ids=lambda d: d.name)
def test_64_bit_products_by_parity_and_in_general(t):
    @pk.kernel
    def products(x: pk.i32[:], a: t[:], b: t[:], out: t[:, :]):
        i = pk.global_id(0)
        q: t = pk.i16(x[i]) // (2 + t(x[i]) | 1)
        out[0, i] = q * (q % 2)
        out[1, i] = q * (q & t(1))
        out[2, i] = a[i] * b[i]
        out[3, i] = a[i] ** 3

    rng = np.random.default_rng(5)
    x = np.array([5, -7, -2**31, 1946502966, 2**30 - 1, -4, 2**31 - 1, -2, 1226631872, 0, 3,
                  214736883], np.int32)
    info = np.iinfo(t.numpy)
    a = rng.integers(info.min, info.max, x.size, dtype=t.numpy, endpoint=True)
    b = rng.integers(info.min, info.max, x.size, dtype=t.numpy, endpoint=True)
    a[:3] = [0, 1, info.max]
    out = np.zeros((4, x.size), t.numpy)
    products[x.size](x, a, b, out)

    m = 1 << 64
    wrap = (lambda v: v % m) if t == pk.u64 else (lambda v: (v + m // 2) % m - m // 2)
    want = []
    for xi, ai, bi in zip(x.tolist(), a.tolist(), b.tolist()):
        s = (xi + 2**15) % 2**16 - 2**15
        q = wrap(wrap(s) // wrap((2 + xi) | 1))
        want.append([wrap(q * (q % 2)), wrap(q * (q & 1)), wrap(ai * bi), wrap(ai ** 3)])
    assert out.T.tolist() == want
