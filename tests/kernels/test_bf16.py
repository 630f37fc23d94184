"""`pk.bf16` in kernels: conversions round to nearest even from the exact source value, and
arithmetic is the f32 operation rounded once to bf16, bit for bit, on the device and in the
interpreter; bf16 scalars, shared/local arrays, device functions; typing and bad uses.

Expected bf16 values come from the rule (`bf16_rule`, exact arithmetic) and numpy's IEEE f32
arithmetic, not from a library's bf16 conversions: those are not a spec, and they have changed
between ml_dtypes versions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from bf16_rule import BF16, rounded_bf16, to_f32
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.lang import dtypes

BACKENDS = ("device", "interpreter")

# f32 bit patterns that exercise the rounding: any word, and words whose low half sits at or
# next to the halfway point (ties to even, both ways), or at the edges of the high half
_LOW_HALVES = st.sampled_from([0x0000, 0x7FFF, 0x8000, 0x8001, 0xFFFF])
_TIE_WORDS = st.builds(lambda high, low: high << 16 | low, st.integers(0, 0xFFFF), _LOW_HALVES)
_SPECIAL = st.sampled_from([
    0x00000000, 0x80000000,  # +-0
    0x00000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x807F8000,  # subnormals, ties among them
    0x7F800000, 0xFF800000,  # +-inf
    0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF,  # near the largest finite: rounds to inf, ties, not
    0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x7F80FFFF,  # quiet and signalling NaNs
])
F32_WORDS = st.lists(st.one_of(st.integers(0, 2**32 - 1), _TIE_WORDS, _SPECIAL),
                     min_size=1, max_size=64)


def kernel_on(backend: str, fn):
    return pk.kernel(fn, interpret=backend == "interpreter")


def f32_of(words: list[int]) -> np.ndarray:
    return np.array(words, np.uint32).view(np.float32)


def assert_same_bf16(actual: np.ndarray, expected: np.ndarray) -> None:
    """The same bits, but any NaN for a NaN (its payload is not promised)."""
    assert actual.dtype == expected.dtype == BF16
    nan = np.isnan(expected.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(actual.astype(np.float32)), nan)
    np.testing.assert_array_equal(actual.view(np.uint16)[~nan], expected.view(np.uint16)[~nan])


def to_bf16(x: pk.f32[:], out: pk.bf16[:]):
    i = pk.global_id(0)
    out[i] = pk.bf16(x[i])


def from_bf16(x: pk.bf16[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = pk.f32(x[i])


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=30, deadline=None)
@given(words=F32_WORDS)
def test_f32_to_bf16_rounds_to_nearest_even_and_back_is_exact(backend, words):
    x = f32_of(words)
    out = np.zeros(x.size, BF16)
    expected = rounded_bf16(x)
    kernel_on(backend, to_bf16)[x.size](x, out)
    assert_same_bf16(out, expected)
    back = np.zeros(x.size, np.float32)
    kernel_on(backend, from_bf16)[x.size](out, back)
    widened = out.astype(np.float32)  # exact: the bf16 bits in the high half
    np.testing.assert_array_equal(back.view(np.uint32)[~np.isnan(widened)],
                                  widened.view(np.uint32)[~np.isnan(widened)])
    assert np.isnan(back[np.isnan(widened)]).all()


def conversions(i: pk.i32[:], d: pk.f64[:], h: pk.f16[:], out: pk.bf16[:, :],
                back: pk.i32[:]):
    k = pk.global_id(0)
    out[0, k] = pk.bf16(i[k])
    out[1, k] = pk.bf16(d[k])
    out[2, k] = pk.bf16(h[k])
    back[k] = int(out[0, k])


@pytest.mark.parametrize("backend", BACKENDS)
def test_conversions_from_ints_f64_and_f16_round_to_nearest_even(backend):
    rng = np.random.default_rng(3)
    i = np.concatenate([rng.integers(-2**31, 2**31, 200), [0, 1, 255, 257, 16777217,
                                                            -16809985, 2**31 - 1]]).astype(np.int32)
    d = np.concatenate([rng.standard_normal(200) * 1e3, [1 + 2**-8, 1 + 2**-8 + 2**-30,
                                                         1e300, -1e-300, 0.0, math.inf, -2.5]])
    h = rng.standard_normal(i.size).astype(np.float16)
    out = np.zeros((3, i.size), BF16)
    back = np.zeros(i.size, np.int32)
    kernel_on(backend, conversions)[i.size](i, d, h, out, back)
    assert_same_bf16(out[0], rounded_bf16(i))
    assert_same_bf16(out[1], rounded_bf16(d))  # 1 + 2**-8 + 2**-30: above the tie, so up
    assert_same_bf16(out[2], rounded_bf16(h))
    finite = np.abs(out[0].astype(np.float64)) < 2**31
    np.testing.assert_array_equal(back[finite], out[0].astype(np.float64)[finite].astype(np.int32))


def wide_ints(u: pk.u32[:], q: pk.i64[:], uq: pk.u64[:], out: pk.bf16[:, :]):
    k = pk.global_id(0)
    out[0, k] = pk.bf16(u[k])
    out[1, k] = pk.bf16(q[k])
    out[2, k] = pk.bf16(uq[k])


@pytest.mark.parametrize("backend", BACKENDS)
def test_wide_integers_round_once_to_bf16(backend):
    """Through f32 rounded to odd: 16842753 (just above a bf16 halfway point, and an f32 tie)
    is 16908288, where two roundings to nearest would give 2**24."""
    rng = np.random.default_rng(5)
    edges = [0, 1, 16842753, 2**24 + 2**16, 2**32 - 1, 2**31 + 2**23 + 1]
    u = np.concatenate([rng.integers(0, 2**32, 100), edges]).astype(np.uint32)
    q = np.concatenate([rng.integers(-2**63, 2**63, 100, dtype=np.int64),
                        [-2**63, 2**63 - 1, -16842753, 16842753, 0, 2**40 + 2**32 + 1]])
    uq = np.concatenate([rng.integers(0, 2**64, 100, dtype=np.uint64),
                         np.array([2**64 - 1, 2**63, 1, 16842753, 0, 2**56 + 2**48 + 1],
                                  np.uint64)])
    out = np.zeros((3, u.size), BF16)
    kernel_on(backend, wide_ints)[u.size](u, q, uq, out)
    for row, source in zip(out, (u, q, uq)):
        assert_same_bf16(row, rounded_bf16(source))  # exact: i64/u64 beyond float64's 53 bits


def arithmetic(a: pk.bf16[:], b: pk.bf16[:], out: pk.bf16[:, :]):
    i = pk.global_id(0)
    out[0, i] = a[i] + b[i]
    out[1, i] = a[i] - b[i]
    out[2, i] = a[i] * b[i]
    out[3, i] = a[i] / b[i]
    out[4, i] = -a[i]
    out[5, i] = max(a[i], b[i])
    out[6, i] = a[i] * 3.0 + 0.1  # Python floats take the bf16 type: rounded after each op


def bf16_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random normal-range bf16 values of mixed magnitudes (no subnormal results: devices may
    flush f32 subnormals in arithmetic)."""
    scale = np.exp2(rng.integers(-20, 20, n)).astype(np.float32)
    return (rng.standard_normal(n).astype(np.float32) * scale).astype(BF16)


def expected_arithmetic(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    """What `arithmetic` writes, by the rule: each operation in f32 (numpy's IEEE arithmetic,
    exact operands), its result rounded once to bf16."""
    x, y = to_f32(a), to_f32(b)
    with np.errstate(all="ignore"):
        tripled = rounded_bf16(x * np.float32(3.0))
        return [rounded_bf16(v) for v in (x + y, x - y, x * y, x / y, -x, np.maximum(x, y),
                                          to_f32(tripled) + to_f32(rounded_bf16([0.1])))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_arithmetic_is_f32_arithmetic_rounded_once(backend):
    rng = np.random.default_rng(11)
    a, b = bf16_values(rng, 500), bf16_values(rng, 500)
    a[:4] = [np.inf, 1.0, 0.0, np.nan]
    b[:4] = [1.0, np.inf, 0.0, 2.0]
    out = np.zeros((7, a.size), BF16)
    kernel_on(backend, arithmetic)[a.size](a, b, out)
    for row, want in zip(out, expected_arithmetic(a, b)):
        assert_same_bf16(row, want)


BF16_WORDS = st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=64)


def flushable(*values: np.ndarray) -> np.ndarray:
    """Where any of `values` is an f32 subnormal, which a device may flush to zero in f32
    arithmetic (docs/testing.md: lavapipe and NVIDIA keep no denormals unless asked)."""
    out = np.zeros(values[0].shape, bool)
    for v in values:
        f = np.abs(np.asarray(v, np.float32))
        out |= (f > 0) & (f < np.finfo(np.float32).tiny)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=20, deadline=None)
@given(words_a=BF16_WORDS, words_b=BF16_WORDS)
def test_arithmetic_on_any_bf16_bits_is_f32_arithmetic_rounded_once(backend, words_a, words_b):
    n = min(len(words_a), len(words_b))
    a = np.array(words_a[:n], np.uint16).view(BF16)
    b = np.array(words_b[:n], np.uint16).view(BF16)
    out = np.zeros((7, n), BF16)
    kernel_on(backend, arithmetic)[n](a, b, out)
    with np.errstate(all="ignore"):  # inf * 3 and the like
        tripled = rounded_bf16(to_f32(a) * np.float32(3.0))
    for row, want in zip(out, expected_arithmetic(a, b)):
        exact = ~flushable(to_f32(a), to_f32(b), to_f32(want), to_f32(tripled))
        assert_same_bf16(row[exact], want[exact])


def math_and_compare(x: pk.bf16[:], out: pk.bf16[:, :], flags: pk.bool_[:]):
    i = pk.global_id(0)
    out[0, i] = pk.sqrt(x[i])
    out[1, i] = pk.exp(x[i])
    out[2, i] = abs(x[i])
    out[3, i] = pk.floor(x[i])
    flags[i] = x[i] > 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_math_rounds_the_f32_result_to_bf16(backend):
    x = np.linspace(0.01, 20, 300, dtype=np.float32).astype(BF16)
    out = np.zeros((4, x.size), BF16)
    flags = np.zeros(x.size, bool)
    kernel_on(backend, math_and_compare)[x.size](x, out, flags)
    xf = x.astype(np.float64)
    # the f32 math is within a few f32 ULPs (docs/testing.md); one bf16 rounding on top
    np.testing.assert_allclose(out[0].astype(np.float64), np.sqrt(xf), rtol=2**-8)
    np.testing.assert_allclose(out[1].astype(np.float64), np.exp(xf), rtol=2**-8 + 1e-5)
    assert_same_bf16(out[2], np.abs(x))
    assert_same_bf16(out[3], np.floor(x))
    np.testing.assert_array_equal(flags, xf > 1.0)


def scalar_param(x: pk.bf16[:], s: pk.bf16, out: pk.bf16[:]):
    i = pk.global_id(0)
    out[i] = x[i] + s


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_arguments_are_rounded_to_bf16(backend):
    x = np.zeros(3, BF16)
    out = np.zeros(3, BF16)
    kernel_on(backend, scalar_param)[3](x, 1.00390625, out)  # a tie: rounds to even, 1.0
    assert out.astype(np.float32).tolist() == [1.0] * 3
    kernel_on(backend, scalar_param)[3](x, BF16(2.5), out)
    assert out.astype(np.float32).tolist() == [2.5] * 3
    with pytest.raises(pk.LaunchError, match=r"parameter 's' \(bf16\).*largest finite bf16"):
        kernel_on(backend, scalar_param)[3](x, 3.4e38, out)


@pk.func
def fused(a, b):
    return a * b + b


def memories(x: pk.bf16[:], out: pk.bf16[:], total: pk.f32[:]):
    tile = pk.shared(pk.bf16, (64,))
    acc = pk.local(pk.bf16, (2,))
    i = pk.global_id(0)
    t = pk.local_id(0)
    tile[t] = x[i]
    pk.barrier()
    acc[0] = tile[63 - t]
    acc[1] = fused(acc[0], pk.bf16(0.5))
    if i < pk.grid(0):
        out[i] = acc[1]
        total[i] = acc[0] + pk.f32(1.0)  # bf16 + f32 is f32


@pytest.mark.parametrize("backend", BACKENDS)
def test_shared_local_arrays_and_device_functions(backend):
    x = np.linspace(-4, 4, 64, dtype=np.float32).astype(BF16)
    out = np.zeros(64, BF16)
    total = np.zeros(64, np.float32)
    k = pk.kernel(memories, workgroup=(64,), interpret=backend == "interpreter")
    k[64](x, out, total)
    rev = x[::-1]
    assert_same_bf16(out, (rev * BF16(0.5)) + BF16(0.5))
    np.testing.assert_array_equal(total, rev.astype(np.float32) + 1.0)


def test_interpreter_and_device_agree_on_a_chain_of_operations():
    def chain(a: pk.bf16[:], out: pk.bf16[:]):
        i = pk.global_id(0)
        v = a[i]
        for _ in range(8):
            v = v * v * 0.75 + a[i] / 3.0 - 0.125
        out[i] = v

    a = np.linspace(-1.5, 1.5, 257, dtype=np.float32).astype(BF16)
    on_device, interpreted = np.zeros_like(a), np.zeros_like(a)
    pk.kernel(chain)[a.size](a, on_device)
    pk.kernel(chain, interpret=True)[a.size](a, interpreted)
    np.testing.assert_array_equal(on_device.view(np.uint16), interpreted.view(np.uint16))


def test_kernel_typing_follows_torch_promotion():
    def mixed(a: pk.bf16[:], h: pk.f16[:], f: pk.f32[:], o1: pk.f32[:], o2: pk.bf16[:]):
        i = pk.global_id(0)
        x = a[i] + h[i]
        y = a[i] + f[i]
        z = a[i] * 2.5
        o1[i] = x + y
        o2[i] = z

    a, h, f = np.ones(2, BF16), np.ones(2, np.float16), np.ones(2, np.float32)
    text = str(pk.kernel(mixed).ir(a, h, f, np.zeros(2, np.float32), np.zeros(2, BF16)))
    assert "x: f32 = " in text and "y: f32 = " in text and "z: bf16 = " in text


def test_atomics_on_bf16_are_a_located_error():
    def bad(x: pk.bf16[:]):
        pk.atomic_add(x, 0, 1.0)

    with pytest.raises(pk.KernelTypeError,
                       match=r"test_bf16.py:\d+:\d+: .*atomic_add\(\) is not supported on bf16"):
        pk.kernel(bad).compile(np.zeros(1, BF16))


def test_spirv_needs_no_bfloat16_extension():
    k = pk.kernel(arithmetic)
    text = k.asm(np.zeros(2, BF16), np.zeros(2, BF16), np.zeros((7, 2), BF16))
    assert "BFloat16" not in text and "bfloat16" not in text
    assert "OpBitcast" in text


def test_host_scalar_and_dtype_attributes():
    assert isinstance(pk.bf16(1.5), BF16) and float(pk.bf16(1.5)) == 1.5
    assert pk.bf16.name == "bf16" and pk.bf16.kind == "f" and pk.bf16.bits == 16
    assert pk.bf16.itemsize == 2 and pk.bf16.numpy == np.dtype(BF16)
    assert pk.bf16 is dtypes.bf16 and dtypes.as_dtype(BF16) is pk.bf16
    assert repr(pk.bf16[:, :]) == "pk.bf16[:, :]"


def test_interpreter_reads_and_writes_bf16_tensors():
    x = pk.asarray(np.array([1.5, -2.0, 3.0], np.float32), dtype=pk.bf16)
    out = pk.zeros(3, pk.bf16)
    pk.kernel(scalar_param, interpret=True)[3](x, 0.25, out)
    assert out.numpy().astype(np.float32).tolist() == [1.75, -1.75, 3.25]
