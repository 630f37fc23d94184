"""Strict floating point (`@pk.kernel(strict_float=True)`, `pk.strict_float()`): the device's
`+ - * / sqrt fma` and conversions against numpy bit for bit (NaN against NaN), over special
values (+-0, +-inf, NaN, subnormals, the extremes, neighbours of 1), values near rounding
boundaries and random bit patterns, for every float type the device has. The fma reference is
exact (fractions), as numpy has no fma.

lavapipe already rounds `/` and `sqrt` correctly, so one test replaces the device's first
approximation by one deliberately a few ULP off (as Vulkan allows) to show the correction; and
one compiles for a device that cannot ask for round-to-nearest, to run the conversions that
round in code.

    PYKERN_STRICT_SAMPLES=200000 pytest tests/kernels/test_strict_float.py   # more random values
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import threading
import warnings
from fractions import Fraction

import numpy as np
import pytest

import pykern as pk
import pykern.jit.kernel as jit
from pykern.config import CompilerConfig
from pykern.spirv.numerics import strict
from pykern.spirv.encoding.types import IntType

FEATURES = pk.get_device().info.features
FLOATS = [np.float32] + ([np.float16] if FEATURES.fp16 else []) + \
    ([np.float64] if FEATURES.fp64 and FEATURES.int64 else [])
INTS = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32] + \
    ([np.int64, np.uint64] if FEATURES.int64 else [])
# significand bits (the implicit one included) and largest exponent
FORMATS = {np.float16: (11, 15), np.float32: (24, 127), np.float64: (53, 1023)}
UINTS = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
SAMPLES = int(os.environ.get("PYKERN_STRICT_SAMPLES", "6000"))
rng = np.random.default_rng(20240813)


@pytest.fixture(autouse=True)
def quiet_shortfall():
    """Devices that cannot keep subnormals in strict mode say so (tested below); lavapipe says
    so although it keeps them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.StrictFloatWarning)
        yield


# ---------------------------------------------------------------- references and inputs


def round_exact(v: Fraction, dtype: type) -> float:
    """`v` rounded to nearest even in `dtype` (subnormals and overflow included)."""
    p, emax = FORMATS[dtype]
    if v == 0:
        return 0.0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    place = max(e, 1 - emax) - (p - 1)  # the exponent of the last significand bit
    units = a / Fraction(2) ** place
    whole = units.numerator // units.denominator
    rest = units - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    r = Fraction(whole) * Fraction(2) ** place
    if r > (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax:
        return math.inf if v > 0 else -math.inf
    return float(r) if v > 0 else -float(r)


def fma_reference(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once, elementwise (IEEE 754 fusedMultiplyAdd)."""
    dtype = a.dtype.type
    out = np.empty(len(a), dtype)
    for i, (x, y, z) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
        if not (math.isfinite(x) and math.isfinite(y)):
            with np.errstate(all="ignore"):
                out[i] = np.float64(x) * np.float64(y) + np.float64(z)  # inf * y exactly
        elif not math.isfinite(z):
            out[i] = z  # a finite product does not overflow before the sum
        else:
            exact = Fraction(x) * Fraction(y) + Fraction(z)
            if exact != 0:
                out[i] = round_exact(exact, dtype)
            elif x * y == 0 and z == 0:  # signed zeros: -0 only for -0 + -0
                out[i] = -0.0 if math.copysign(1, x) * math.copysign(1, y) < 0 and \
                    math.copysign(1, z) < 0 else 0.0
            else:
                out[i] = 0.0  # an exact cancellation is +0
    return out


@functools.lru_cache(maxsize=None)
def subnormals_survive(dtype: type) -> bool:
    """Whether the device keeps a subnormal of `dtype` through a multiplication by one. Where it
    flushes them and cannot be asked not to (NVIDIA's f32: its driver offers no DenormPreserve),
    strict mode warns and runs without (docs/language.md), so the comparisons
    leave out what involves a subnormal there."""
    @pk.kernel
    def times_one(x: pk.Array, one: pk.Array, out: pk.Array):
        out[0] = x[0] * one[0]

    x = np.array([np.finfo(dtype).smallest_subnormal * 3], dtype)
    out = np.zeros(1, dtype)
    times_one[1](x, np.ones(1, dtype), out)
    return bool(out[0] == x[0])


def is_subnormal(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return np.zeros(a.shape, bool)
    with np.errstate(invalid="ignore"):
        return (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny)


def assert_same_bits(got: np.ndarray, expected: np.ndarray, *inputs: np.ndarray) -> None:
    """Equal bits, or both NaN (NaN's sign and payload bits are not promised). On a device that
    flushes subnormals of a type in use, what has a subnormal operand or result is left out."""
    ut = UINTS.get(expected.dtype.type)
    if ut is None:
        same = got == expected
    else:
        same = (got.view(ut) == expected.view(ut)) | (np.isnan(got) & np.isnan(expected))
    for a in (expected, *inputs):
        if np.asarray(a).dtype.kind == "f" and not subnormals_survive(np.asarray(a).dtype.type):
            same |= is_subnormal(a)
            if a is not expected:  # a flushed operand can make a subnormal result zero too
                same |= is_subnormal(expected)
    bad = np.flatnonzero(~same)
    rows = [(tuple(x[i] for x in inputs), got[i], expected[i]) for i in bad[:5]]
    assert bad.size == 0, f"{bad.size} of {got.size} differ: (inputs, device, numpy) {rows}"


def special_values(dtype: type) -> np.ndarray:
    fi = np.finfo(dtype)
    tiny, sub, eps = float(fi.tiny), float(fi.smallest_subnormal), float(fi.eps)
    values = [0.0, 1.0, 2.0, 3.0, 0.5, 1.5, 7.0, 10.0, 0.1, 1 / 3, 1e-3, float(fi.max),
              float(fi.max) / 2, tiny, 2 * tiny, tiny - sub, sub, 3 * sub, 1 + eps, 2 - eps,
              1 - eps / 2, math.inf, math.nan]
    values = np.array(values, dtype)
    return np.concatenate([values, -values])


def random_bits(dtype: type, n: int) -> np.ndarray:
    ut = UINTS[dtype]
    return rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True).view(dtype)


def short_values(dtype: type, n: int, exponents: tuple[int, int] = (-8, 8)) -> np.ndarray:
    """Floats of about half the precision: their products and quotients are often exact or
    exactly halfway between two floats, where the rounding is hardest to get right."""
    p = FORMATS[dtype][0]
    significands = rng.integers(1, 2 ** (p // 2 + 1), n) * rng.choice([-1.0, 1.0], n)
    with np.errstate(over="ignore"):
        return (significands * 2.0 ** rng.integers(*exponents, n)).astype(dtype)


def operands(dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, y, z for binary and ternary ops: every pair of special values, random bits, short
    values, products in the subnormal range, and z cancelling x * y or nudging a tie."""
    p, emax = FORMATS[dtype]
    special = special_values(dtype)
    pairs = np.array(np.meshgrid(special, special)).reshape(2, -1).astype(dtype)
    n = SAMPLES
    x = np.concatenate([pairs[0], random_bits(dtype, n), short_values(dtype, n),
                        short_values(dtype, n // 4, (-emax // 2 - p, -emax // 2))])
    y = np.concatenate([pairs[1], random_bits(dtype, n), short_values(dtype, n),
                        short_values(dtype, n // 4, (-emax // 2 - p, -emax // 2))])
    z = np.concatenate([rng.permutation(np.resize(special, pairs.shape[1])), random_bits(dtype, n),
                        short_values(dtype, n, (-3 * p, 4)), random_bits(dtype, n // 4)])
    with np.errstate(all="ignore"):
        cancel = slice(pairs.shape[1] + n // 2, pairs.shape[1] + n)
        z[cancel] = -(x[cancel].astype(np.float64) * y[cancel]).astype(dtype)
    return x, y, z


# ---------------------------------------------------------------- the promise


@pk.kernel(strict_float=True)
def arithmetic(x: pk.Array, y: pk.Array, z: pk.Array, out: pk.Array):
    i = pk.global_id(0)
    n = len(x)
    out[i] = x[i] + y[i]
    out[n + i] = x[i] - y[i]
    out[2 * n + i] = x[i] * y[i]
    out[3 * n + i] = x[i] / y[i]
    out[4 * n + i] = pk.sqrt(x[i])
    out[5 * n + i] = pk.fma(x[i], y[i], z[i])


def run_arithmetic(x, y, z):
    out = np.zeros(6 * x.size, x.dtype)
    arithmetic[x.size](x, y, z, out)
    return dict(zip(("add", "sub", "mul", "div", "sqrt", "fma"), out.reshape(6, -1)))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_strict_arithmetic_gives_numpys_bits(dtype):
    x, y, z = operands(dtype)
    got = run_arithmetic(x, y, z)
    with np.errstate(all="ignore"):
        expected = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "sqrt": np.sqrt(x),
                    "fma": fma_reference(x, y, z)}
    for op, values in expected.items():
        assert_same_bits(got[op], values, x, y, z)


def boundary_ints(dtype: type, float_type: type) -> np.ndarray:
    """Integers around the places where conversion to `float_type` rounds: k * 2**s + {0,
    half - 1, half, half + 1} with k of exactly the float's precision, for every shift s
    that drops bits, plus the type's extremes."""
    info, p = np.iinfo(dtype), FORMATS[float_type][0]
    values = [info.min, info.min + 1, info.max, info.max - 1, 0, 1]
    for s in range(1, info.bits - p + 1):
        for k in rng.integers(2 ** (p - 1), 2 ** p, 6).tolist() + [2 ** (p - 1), 2 ** p - 1]:
            for offset in (0, (1 << (s - 1)) - 1, 1 << (s - 1), (1 << (s - 1)) + 1):
                for v in (k * 2 ** s + offset, -(k * 2 ** s + offset)):
                    if info.min <= v <= info.max:
                        values.append(v)
    return np.array(values, dtype)


def near_narrower(src: type, dst: type, n: int) -> np.ndarray:
    """`src` values within a few of dst's ULPs of a finite `dst` value, halfway points included:
    where narrowing rounds."""
    drop = FORMATS[src][0] - FORMATS[dst][0]
    values = random_bits(dst, n)
    values = values[np.isfinite(values)].astype(src)
    offsets = rng.integers(-(2 ** drop), 2 ** drop, values.size)
    offsets[::4] = 2 ** (drop - 1)  # exactly halfway
    ut = UINTS[src]
    shifted = (values.view(ut).astype(np.int64) + offsets).astype(ut)
    return shifted.view(src)


@pk.kernel(strict_float=True)
def convert(x: pk.Array, out: pk.Array):
    i = pk.global_id(0)
    out[i] = x[i]


def check_conversions() -> None:
    for dst in FLOATS:
        for src in INTS:
            x = np.concatenate([boundary_ints(src, dst),
                                rng.integers(np.iinfo(src).min, np.iinfo(src).max, 2000,
                                             dtype=src, endpoint=True)])
            out = np.zeros(x.size, dst)
            convert[x.size](x, out)
            with np.errstate(over="ignore"):
                assert_same_bits(out, x.astype(dst), x)
        for src in FLOATS:
            x = np.concatenate([special_values(src), random_bits(src, 4000)] +
                               ([near_narrower(src, dst, 4000)] if src().itemsize > dst().itemsize
                                else []))
            out = np.zeros(x.size, dst)
            convert[x.size](x, out)
            with np.errstate(all="ignore"):
                assert_same_bits(out, x.astype(dst), x)


def test_strict_conversions_round_to_nearest_even():
    check_conversions()


def no_rounding_mode(monkeypatch) -> None:
    """Compile as for a device that cannot ask for RoundingModeRTE on any width."""
    target = jit.target_for(pk.get_device())
    controls = dataclasses.replace(target.float_controls, round_to_nearest=frozenset())
    restricted = dataclasses.replace(target, float_controls=controls)
    monkeypatch.setattr(jit, "target_for", lambda device: restricted)


@pytest.mark.usefixtures("on_vulkan")  # of SPIR-V and the Vulkan driver
def test_strict_conversions_round_in_code_where_the_device_cannot_ask_for_it(monkeypatch):
    no_rounding_mode(monkeypatch)
    convert._variants.clear()
    convert._fast.clear()
    try:
        asm = convert.asm(np.zeros(1, np.int32), np.zeros(1, np.float32))
        assert "RoundingModeRTE" not in asm and "FindUMsb" in asm  # rounded in integers
        check_conversions()
    finally:
        convert._variants.clear()
        convert._fast.clear()


def test_strict_division_and_sqrt_correct_a_first_approximation_that_is_ulps_off(monkeypatch):
    """Vulkan allows OpFDiv 2.5 ULP and Sqrt more: make the first approximation up to 4 ULP off
    (by an amount from the operands' bits) and the results must still be numpy's."""
    def worse(approximate):
        def perturbed(fn, ty, *args):
            bits = IntType(ty.bits, False)
            mix = fn.bitcast(bits, args[0])
            for a in args[1:]:
                mix = fn.bitwise_xor(bits, mix, fn.bitcast(bits, a))
            off = fn.i_sub(bits, fn.u_mod(bits, mix, fn.module.constant(bits, 9)),
                           fn.module.constant(bits, 4))
            guess = fn.bitcast(bits, approximate(fn, ty, *args))
            return fn.bitcast(ty, fn.i_add(bits, guess, off))
        return perturbed

    monkeypatch.setattr(strict, "approximate_quotient", worse(strict.approximate_quotient))
    monkeypatch.setattr(strict, "approximate_sqrt", worse(strict.approximate_sqrt))

    @pk.kernel(strict_float=True)
    def divide_and_root(x: pk.Array, y: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[2 * i] = x[i] / y[i]
        out[2 * i + 1] = pk.sqrt(x[i])

    for dtype in FLOATS:
        x, y, _ = operands(dtype)
        x[:2000] = np.abs(short_values(dtype, 2000))
        y[:2000] = rng.integers(1, 64, 2000).astype(dtype)  # exact quotients
        assert "OpUMod" in divide_and_root.asm(x, y, np.zeros(2 * x.size, dtype))
        out = np.zeros(2 * x.size, dtype)
        divide_and_root[x.size](x, y, out)
        with np.errstate(all="ignore"):
            assert_same_bits(out[0::2], x / y, x, y)
            assert_same_bits(out[1::2], np.sqrt(x), x)


def test_strict_float_literals_are_not_folded_by_the_driver():
    """lavapipe folds x * 0.0, x + 0.0 and x / 0.0 with a zero it can see
    (test_known_bug_lavapipe_folds_float_zero_constants); strict kernels hide their literals."""
    @pk.kernel(strict_float=True)
    def zeros(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        c = 2.0
        out[7 * i] = x[i] * 0.0
        out[7 * i + 1] = x[i] + 0.0
        out[7 * i + 2] = x[i] / 0.0
        out[7 * i + 3] = 0.0 / x[i]
        out[7 * i + 4] = x[i] * -0.0
        out[7 * i + 5] = -0.0 + x[i]
        out[7 * i + 6] = x[i] * (c - 2.0)

    x = np.array([math.inf, -0.0, 0.0, -2.0, math.nan, -math.inf], np.float32)
    out = np.zeros(7 * x.size, np.float32)
    zeros[x.size](x, out)
    zero = np.float32(0.0)
    with np.errstate(all="ignore"):
        expected = np.stack([x * zero, x + zero, x / zero, zero / x, x * -zero, -zero + x,
                             x * zero], 1).ravel()
    assert_same_bits(out, expected, np.repeat(x, 7))


# ---------------------------------------------------------------- strict against default


@pk.kernel
def default_arithmetic(x: pk.Array, y: pk.Array, z: pk.Array, out: pk.Array):
    i = pk.global_id(0)
    n = len(x)
    out[i] = x[i] + y[i]
    out[n + i] = x[i] - y[i]
    out[2 * n + i] = x[i] * y[i]
    out[3 * n + i] = x[i] / y[i]
    out[4 * n + i] = pk.sqrt(x[i])
    out[5 * n + i] = pk.fma(x[i], y[i], z[i])


def ulps_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The distance in floats between finite a and b of one sign."""
    ut = UINTS[a.dtype.type]
    return np.abs(a.view(ut).astype(np.int64) - b.view(ut).astype(np.int64))


def test_strict_and_default_differ_only_where_vulkan_allows_the_default_to():
    """+ - * are numpy's in both modes; / and sqrt only within Vulkan's bounds by default
    (2.5 and ~4 ULP: NVIDIA uses them) and exactly in strict mode, which also asks for
    round-to-nearest and subnormals where the device allows them."""
    x = np.abs(rng.uniform(0.01, 100, 4000)).astype(np.float32)
    y = rng.uniform(0.01, 100, 4000).astype(np.float32)
    z = rng.uniform(-100, 100, 4000).astype(np.float32)
    strict_out = run_arithmetic(x, y, z)
    out = np.zeros(6 * x.size, np.float32)
    default_arithmetic[x.size](x, y, z, out)
    default_out = dict(zip(("add", "sub", "mul", "div", "sqrt", "fma"), out.reshape(6, -1)))
    for op in ("add", "sub", "mul"):
        assert_same_bits(default_out[op], strict_out[op], x, y)
    assert_same_bits(strict_out["div"], x / y, x, y)
    assert_same_bits(strict_out["sqrt"], np.sqrt(x), x)
    assert ulps_apart(default_out["div"], x / y).max() <= 3
    assert ulps_apart(default_out["sqrt"], np.sqrt(x)).max() <= 5

    target = jit.target_for(pk.get_device())
    strict_asm = arithmetic.asm(x, y, z, out)
    default_asm = default_arithmetic.asm(x, y, z, out)
    assert "RoundingModeRTE" not in default_asm and "DenormPreserve" not in default_asm
    assert ("OpExecutionMode %arithmetic RoundingModeRTE 32" in strict_asm) == \
        target.rounds_to_nearest(32)
    assert ("OpExecutionMode %arithmetic DenormPreserve 32" in strict_asm) == \
        target.keeps_denormals(32)
    assert default_asm.count("OpFDiv") == 1 and strict_asm.count("OpFDiv") > 1


def test_one_kernel_keeps_a_strict_and_a_default_variant():
    @pk.kernel
    def quotient(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        out[i] = x[i] / y[i]

    x, y, out = np.ones(4, np.float32), np.full(4, 3.0, np.float32), np.zeros(4, np.float32)
    default_words = quotient.spirv(x, y, out)
    quotient[4](x, y, out)
    with pk.strict_float():
        strict_words = quotient.spirv(x, y, out)
        quotient[4](x, y, out)  # through the launch fast path too
    quotient[4](x, y, out)
    assert strict_words != default_words
    assert sorted(key[-1] for _, key in quotient._variants) == [False, True]
    assert sorted(key[-1] for key in quotient._fast) == [False, True]
    assert quotient.spirv(x, y, out) == default_words  # the block is over


def test_strict_float_context_belongs_to_its_thread():
    @pk.kernel
    def copy(x: pk.f32[:], out: pk.f32[:]):
        out[pk.global_id(0)] = x[pk.global_id(0)]

    x, out = np.ones(2, np.float32), np.zeros(2, np.float32)
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def strict_thread():
        with pk.strict_float():
            inside.set()
            outside.wait(10)
            seen["thread"] = copy._strict()

    thread = threading.Thread(target=strict_thread)
    thread.start()
    inside.wait(10)
    seen["main"] = copy._strict()
    copy[2](x, out)
    outside.set()
    thread.join(10)
    assert seen == {"thread": True, "main": False}
    assert [key[-1] for _, key in copy._variants] == [False]


def test_strict_float_from_the_environment():
    assert CompilerConfig.from_env({"PYKERN_STRICT_FLOAT": "1"}).strict_float
    assert not CompilerConfig.from_env({}).strict_float
    assert not CompilerConfig.from_env({"PYKERN_STRICT_FLOAT": "0"}).strict_float


@pytest.mark.usefixtures("on_vulkan")  # of SPIR-V and the Vulkan driver
def test_strict_variants_have_their_own_disk_cache_entries(monkeypatch, tmp_path):
    from pykern.jit.cache import DiskCache

    monkeypatch.setattr(jit, "disk_cache", lambda: DiskCache(tmp_path))

    @pk.kernel
    def scaled(x: pk.f32[:], out: pk.f32[:]):
        out[pk.global_id(0)] = x[pk.global_id(0)] / 3.0

    x, out = np.ones(2, np.float32), np.zeros(2, np.float32)
    scaled[2](x, out)
    with pk.strict_float():
        scaled[2](x, out)
    entries = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix == ".spv"]
    assert len(entries) == 2


@pytest.mark.usefixtures("on_vulkan")  # of SPIR-V and the Vulkan driver
def test_strict_mode_warns_once_per_variant_naming_what_the_device_cannot(monkeypatch):
    target = jit.target_for(pk.get_device())
    controls = dataclasses.replace(target.float_controls, denorm_preserve=frozenset({64}),
                                   denorm_independence="all")
    monkeypatch.setattr(jit, "target_for",
                        lambda device: dataclasses.replace(target, float_controls=controls))

    @pk.kernel(strict_float=True)
    def half(x: pk.f32[:]):
        x[pk.global_id(0)] = x[pk.global_id(0)] * 0.5

    x = np.ones(2, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        half[2](x)
        half[2](x)
    messages = [str(w.message) for w in caught if issubclass(w.category, pk.StrictFloatWarning)]
    assert len(messages) == 1 and "'half'" in messages[0]
    assert "denormals (f32)" in messages[0] and "f64" not in messages[0]
    np.testing.assert_array_equal(x, [0.25, 0.25])  # it still runs
    assert "DenormPreserve" not in half.asm(x)


def test_devices_report_their_float_controls():
    info = pk.devices()[0]
    controls = info.features.float_controls
    for widths in (controls.signed_zero_inf_nan_preserve, controls.denorm_preserve,
                   controls.rounding_mode_rte):
        assert widths <= {16, 32, 64}
    assert controls.denorm_behavior_independence in ("all", "32_bit_only", "none")
    assert "float controls:" in str(info) and "denormals preserved:" in str(info)


def test_the_interpreter_fuses_fma_too():
    @pk.kernel(strict_float=True, interpret=True)
    def fused(x: pk.Array, y: pk.Array, z: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[i] = pk.fma(x[i], y[i], z[i])

    for dtype in FLOATS:
        x, y = short_values(dtype, 400), short_values(dtype, 400)
        z = short_values(dtype, 400, (-3 * FORMATS[dtype][0], 4))
        out = np.zeros(400, dtype)
        fused[400](x, y, z, out)
        assert_same_bits(out, fma_reference(x, y, z), x, y, z)
