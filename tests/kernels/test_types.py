"""Every dtype as scalar and array; n-d arrays and views; generic and constexpr parameters;
types a device lacks are refused at the line that uses them."""


import dataclasses
import inspect

import numpy as np
import pytest

import pykern as pk
import pykern.jit.kernel as jit

rng = np.random.default_rng(7)
ALL = [pk.bool_, pk.i8, pk.i16, pk.i32, pk.i64, pk.u8, pk.u16, pk.u32, pk.u64, pk.f16, pk.f32,
       pk.f64]


def sample(dtype, n=257):
    if dtype == pk.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.is_float:
        return rng.uniform(-100, 100, n).astype(dtype.numpy)
    info = np.iinfo(dtype.numpy)
    return rng.integers(info.min, info.max, n, dtype=dtype.numpy, endpoint=True)


@pk.kernel
def copy_add(a: pk.Array, b: pk.Array, out: pk.Array):
    i = pk.global_id(0)
    out[i] = a[i] + b[i]


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
def test_generic_kernel_per_dtype(dtype):
    a, b = sample(dtype), sample(dtype)
    out = np.empty_like(a)
    copy_add[a.size](a, b, out)
    with np.errstate(over="ignore"):
        expected = (a | b) if dtype == pk.bool_ else (a + b)
    if dtype == pk.f16:
        np.testing.assert_allclose(out.astype(np.float32), expected.astype(np.float32), rtol=1e-3)
    else:
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [pk.i8, pk.u16, pk.i64, pk.u64, pk.f16, pk.f64, pk.bool_],
                         ids=lambda d: d.name)
def test_scalar_parameters_of_narrow_and_wide_types(dtype):
    @pk.kernel
    def fill(v: dtype, out: dtype[:]):
        out[pk.global_id(0)] = v

    value = sample(dtype, 1)[0]
    out = np.zeros(5, dtype.numpy)
    fill[5](value, out)
    np.testing.assert_array_equal(out, np.full(5, value, dtype.numpy))


def test_64_bit_integer_arithmetic_wraps():
    @pk.kernel
    def mix(a: pk.u64[:], out: pk.u64[:]):
        i = pk.global_id(0)
        h = a[i] * 6364136223846793005 + 1442695040888963407
        out[i] = h ^ (h >> 33)

    a = sample(pk.u64)
    out = np.empty_like(a)
    mix[a.size](a, out)
    with np.errstate(over="ignore"):
        h = a * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
    np.testing.assert_array_equal(out, h ^ (h >> np.uint64(33)))


def test_f64_precision_is_kept():
    @pk.kernel
    def tiny_steps(x: pk.f64[:]):
        i = pk.global_id(0)
        s: pk.f64 = 1.0
        for _ in range(100):
            s += 1e-12
        x[i] = pk.sqrt(s)

    x = np.zeros(3, np.float64)
    tiny_steps[3](x)
    expected = 1.0
    for _ in range(100):
        expected += 1e-12
    np.testing.assert_allclose(x, np.sqrt(expected), rtol=1e-15)


def test_two_and_three_dimensional_arrays():
    @pk.kernel
    def transpose(a: pk.f32[:, :], out: pk.f32[:, :]):
        i = pk.global_id(0)
        j = pk.global_id(1)
        out[j, i] = a[i, j] * 2.0 + a.shape[1]

    a = rng.standard_normal((37, 23)).astype(np.float32)
    out = np.empty((23, 37), np.float32)
    transpose[37, 23](a, out)
    np.testing.assert_array_equal(out, (a * 2 + 23).T)

    @pk.kernel
    def plane_sum(v: pk.i32[:, :, :], out: pk.i32[:]):
        k = pk.global_id(0)
        s = 0
        for i in range(v.shape[0]):
            for j in range(v.shape[1]):
                s += v[i, j, k]
        out[k] = s

    v = rng.integers(-50, 50, (4, 5, 6), dtype=np.int32)
    out3 = np.empty(6, np.int32)
    plane_sum[6](v, out3)
    np.testing.assert_array_equal(out3, v.sum(axis=(0, 1)))


def test_four_dimensional_array():
    @pk.kernel
    def bump(a: pk.i32[:, :, :, :]):
        i = pk.global_id(0)
        a[i % 2, i // 2 % 3, i // 6 % 4, i // 24] += i

    a = np.zeros((2, 3, 4, 5), np.int32)
    bump[a.size](a)
    expected = np.zeros_like(a)
    for i in range(a.size):
        expected[i % 2, i // 2 % 3, i // 6 % 4, i // 24] += i
    np.testing.assert_array_equal(a, expected)


def test_numpy_views_with_steps_and_negative_strides():
    @pk.kernel
    def scale(x: pk.f32[:, :], out: pk.f32[:, :]):
        i = pk.global_id(0)
        j = pk.global_id(1)
        out[i, j] = x[i, j] * 10.0

    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    view = base[::2, ::-3]
    target = np.zeros((6, 10), np.float32)
    out_view = target[1::2, 2:6]
    scale[3, 4](view, out_view)
    np.testing.assert_array_equal(out_view, view * 10)
    assert target[0].sum() == 0 and target[1::2, :2].sum() == 0  # only the view was written


def test_constexpr_parameter_compiles_one_variant_per_value():
    @pk.kernel
    def unrolled(x: pk.i32[:], n: pk.constexpr):
        i = pk.global_id(0)
        for k in range(n):
            x[i] += k

    x = np.zeros(4, np.int32)
    unrolled[4](x, 3)
    unrolled[4](x, 5)
    np.testing.assert_array_equal(x, np.full(4, 3 + 10))
    assert len(unrolled._variants) == 2


def test_constexpr_global():
    BLOCK = pk.constexpr(16)

    @pk.kernel
    def block_id(x: pk.i32[:]):
        x[pk.global_id(0)] = pk.global_id(0) // BLOCK

    x = np.empty(40, np.int32)
    block_id[40](x)
    np.testing.assert_array_equal(x, np.arange(40) // 16)


@pytest.mark.usefixtures("on_vulkan")  # of SPIR-V and the Vulkan driver
def test_missing_device_feature_names_type_feature_and_line(monkeypatch):
    target = jit.target_for(pk.get_device())
    restricted = dataclasses.replace(target, features=target.features - {"fp64"})
    monkeypatch.setattr(jit, "target_for", lambda device: restricted)

    def wide(x: pk.f32[:]):
        i = pk.global_id(0)
        y = pk.f64(x[i])  # needs fp64
        x[i] = pk.f32(y * 2.0)

    lines, first = inspect.getsourcelines(wide)
    line = first + next(i for i, s in enumerate(lines) if "needs fp64" in s)
    with pytest.raises(pk.CompileError, match=rf":{line}:\d+: type f64 needs the device "
                                              "feature 'fp64'"):
        pk.kernel(wide)[1](np.zeros(1, np.float32))


def test_f64_transcendentals_run_in_user_kernels():
    # Vulkan has none in 64 bits: pykern.passes.decompose puts the prelude's in their place
    if not pk.get_device().info.features.fp64:
        pytest.skip("the device has no f64")

    @pk.kernel
    def exp64(x: pk.f64[:]):
        x[0] = pk.exp(x[0]) + x[1] ** x[2]

    x = np.array([1.0, 3.0, 0.5])
    exp64[1](x)
    np.testing.assert_allclose(x[0], np.e + np.sqrt(3.0), rtol=1e-15)


INTS = [pk.i8, pk.i16, pk.i32, pk.i64, pk.u8, pk.u16, pk.u32, pk.u64]


def int_edges(dtype):
    """Small values of both signs and the type's limits."""
    info = np.iinfo(dtype.numpy)
    values = [0, 1, 3, 7, 100, info.max, info.max - 1, info.min]
    values += [-1, -4, -7, -100, info.min + 1] if info.min < 0 else [250 % (info.max + 1)]
    return np.array(values, dtype.numpy)


@pytest.mark.parametrize("dst", INTS, ids=lambda d: d.name)
def test_integer_conversions_then_compare_and_divide(dst):
    """Every int -> int conversion (sign extension from signed sources, zero extension from
    unsigned ones, truncation), its result compared with constants and divided: lavapipe got
    an i32 sign-extended to i64 and compared wrong (3 < 5 was False)."""
    @pk.kernel
    def convert(x: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        a = dst(x[i])
        out[6 * i] = a
        out[6 * i + 1] = 1 if a < 5 else 0
        out[6 * i + 2] = 1 if a >= 2 else 0
        out[6 * i + 3] = 1 if a == 3 else 0
        out[6 * i + 4] = a // 3
        out[6 * i + 5] = a % 7

    for src in INTS:
        x = int_edges(src)
        out = np.zeros(6 * x.size, dst.numpy)
        convert[x.size](x, out)
        expected = []
        for v in x.astype(dst.numpy).tolist():  # numpy's conversion: wraps, sign-extends
            expected += [v, int(v < 5), int(v >= 2), int(v == 3), v // 3, v % 7]
        np.testing.assert_array_equal(out, np.array(expected, dtype=object).astype(dst.numpy),
                                      err_msg=f"{src.name} -> {dst.name}")


SIGNED = [pk.i8, pk.i16, pk.i32, pk.i64]


@pytest.mark.parametrize("dtype", SIGNED, ids=lambda d: d.name)
def test_abs_wraps_and_its_result_can_be_negative(dtype):
    """`abs(INT_MIN)` is INT_MIN, as numpy, and what follows sees a negative number: NVIDIA
    takes GLSL's SAbs (and the common abs idioms) to be non-negative; `abs(INT_MIN) % 24` gave
    8 instead of 16 there."""
    @pk.kernel
    def absolute(x: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        a = abs(x[i])
        out[4 * i] = a
        out[4 * i + 1] = a % 24
        out[4 * i + 2] = 1 if a < 0 else 0
        out[4 * i + 3] = a // 5

    x = int_edges(dtype)
    out = np.zeros(4 * x.size, dtype.numpy)
    absolute[x.size](x, out)
    expected = []
    for v in np.abs(x).tolist():  # numpy's abs wraps
        expected += [v, v % 24, int(v < 0), v // 5]
    np.testing.assert_array_equal(out, np.array(expected, dtype=object).astype(dtype.numpy))


# Integer min/max nested with a shared operand: NVIDIA (driver 580) folded each of these into
# its first operand (found by a random kernel; each was wrong there as its own kernel). `x` is
# -b, computed so that the driver sees through it.
@pk.kernel
def max_of_mod(b: pk.i32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    x = b[i] * 3 - 1
    x -= ((x + (1 >> 2)) + 0)
    x -= b[i]
    out[i] = max(x % -5, max(b[i], x)) - 6


@pk.kernel
def max_of_positive_mod(b: pk.i32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    x = b[i] * 3 - 1
    x -= ((x + (1 >> 2)) + 0)
    x -= b[i]
    out[i] = max(x % 5, max(b[i], x))


@pk.kernel
def min_of_mod(b: pk.i32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    x = b[i] * 3 - 1
    x -= ((x + (1 >> 2)) + 0)
    x -= b[i]
    out[i] = min(x % -5, min(b[i], x))


@pk.kernel
def max_of_negation(b: pk.i32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    x = b[i] * 3 - 1
    x -= ((x + (1 >> 2)) + 0)
    x -= b[i]
    out[i] = max(-x, max(b[i], x))


@pk.kernel
def max_of_floordiv(b: pk.i32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    x = b[i] * 3 - 1
    x -= ((x + (1 >> 2)) + 0)
    x -= b[i]
    out[i] = max(x // -5, max(b[i], x))


@pytest.mark.parametrize("kernel, reference", [
    (max_of_mod, lambda v, x: max(x % -5, max(v, x)) - 6),
    (max_of_positive_mod, lambda v, x: max(x % 5, max(v, x))),
    (min_of_mod, lambda v, x: min(x % -5, min(v, x))),
    (max_of_negation, lambda v, x: max(-x, max(v, x))),
    (max_of_floordiv, lambda v, x: max(x // -5, max(v, x))),
], ids=lambda k: getattr(k, "__name__", ""))
def test_nested_integer_min_max_with_a_shared_operand(kernel, reference):
    b = np.arange(-40, 41, dtype=np.int32)
    out = np.zeros_like(b)
    kernel[b.size](b, out)
    np.testing.assert_array_equal(out, [reference(v, -v) for v in b.tolist()])


@pk.kernel
def f16_round_trip(x: pk.f32[:], d: pk.f64[:], out: pk.f32[:, :]):
    i = pk.global_id(0)
    out[0, i] = float(pk.f16(x[i]))
    out[1, i] = float(pk.f16(d[i]))
    out[2, i] = float(pk.f16(x[i]) * pk.f16(2.0))


def test_conversions_to_f16_round_even_when_converted_back():
    """NVIDIA (driver 580) dropped a conversion to f16 whose result went back to f32: the f32
    value came out unrounded. f64 -> f16 rounds once (not through f32)."""
    rng = np.random.default_rng(12)
    x = np.concatenate([[78.312775, 65519.0, 65520.0, 1e-6, 2.98e-8, 2.9802322e-08, -0.0, np.inf,
                         np.nan, 1.00048828125, 1.00146484375],
                        rng.standard_normal(500) * np.exp2(rng.integers(-26, 17, 500))])
    x = x.astype(np.float32)
    d = np.concatenate([x.astype(np.float64), [1 + 2.0 ** -11 + 2.0 ** -40, 2.0 ** -25 + 2.0 ** -60,
                                               2.0 ** -25, 65519.999999]])
    x = np.resize(x, d.size)
    out = np.zeros((3, d.size), np.float32)
    f16_round_trip[d.size](x, d, out)
    with np.errstate(all="ignore"):
        expected = np.stack([x.astype(np.float16), d.astype(np.float16),
                             x.astype(np.float16) * np.float16(2.0)]).astype(np.float32)
    np.testing.assert_array_equal(out, expected)


@pk.kernel
def trips_from_64_bit_remainders(b: pk.i64[:], a: pk.u64[:], out: pk.i32[:, :]):
    i = pk.global_id(0)
    count = 0
    for _j in range(1, (b[i] % 10) % 8 - 4, -1):
        count += 1
        if count > 100:
            break
    out[0, i] = count
    count = 0
    for _k in range(a[i] % 4, pk.u64(b[i]) % 6):
        count += 1
        if count > 100:
            break
    out[1, i] = count


def test_loops_bounded_by_64_bit_remainders():
    """A known open NVIDIA (driver 580) bug: these loops never ended there (the count reached
    the guard's 101), though each remainder alone and a 64-bit loop alone are right."""
    b = np.array([15, 6652078620, 5352009260481, 0, -845547413, -9, 4, -5706011683783979187],
                 np.int64)
    a = np.array([0, 1, 2, 3, 7, 2**64 - 1, 5, 6], np.uint64)
    out = np.zeros((2, b.size), np.int32)
    trips_from_64_bit_remainders[b.size](b, a, out)
    assert out[0].tolist() == [len(range(1, (v % 10) % 8 - 4, -1)) for v in b.tolist()]
    assert out[1].tolist() == [len(range(int(u) % 4, (v % 2**64) % 6))
                               for u, v in zip(a.tolist(), b.tolist())]


@pk.kernel
def ranges_64(b: pk.i64[:], a: pk.u64[:], s: pk.i64[:], out: pk.i64[:, :]):
    i = pk.global_id(0)
    c = 0
    for _v1 in range(1, (b[i] % 10) % 8 - 4, -1):
        c += 1
        if c > 100:
            break
    out[0, i] = c
    c = 0
    for _v2 in range(a[i] % 4, pk.u64(b[i]) % 6):
        c += 1
        if c > 100:
            break
    out[1, i] = c
    c = 0
    for _v3 in range(a[i], pk.u64(b[i])):
        c += 1
        if c > 100:
            break
    out[2, i] = c
    c = 0
    t = pk.i64(0)
    for v4 in range(b[i] % 50, s[i] % 50, s[i] % 7 - 3):
        c += 1
        t += v4
        if c > 100:
            break
    out[3, i] = c
    out[4, i] = t
    c = 0
    for _v5 in range(b[i] % 13, b[i] % 17 + s[i] % 5):
        c += 1
        if c > 100:
            break
    out[5, i] = c
    x = b[i] % 13
    y = s[i] % 17
    out[6, i] = y - x if x < y else 0
    ua = a[i] % 9
    ub = pk.u64(s[i]) % 11
    out[7, i] = pk.i64(ub - ua if ua < ub else pk.u64(0))


def test_64_bit_ranges_and_guarded_differences():
    """A known open NVIDIA (driver 580) bug, this kernel as found: rows 0-2 (64-bit ranges with
    run-time bounds) ran past their end, and row 7 (`ub - ua if ua < ub else 0` on u64) gave
    the right low word with an all-ones high word (3 - 2**32), as if the comparison's borrow
    were the subtraction's. The same difference alone in a kernel came out right there."""
    b = np.array([15, 6652078620, 5352009260481, 0, -845547413, -9, 4, -5706011683783979187],
                 np.int64)
    a = np.array([0, 1, 2, 3, 7, 2**64 - 1, 5, 6], np.uint64)
    s = np.array([3, -40, 77, 12, 5, -1, 2**40 + 3, -2**62], np.int64)
    out = np.zeros((8, b.size), np.int64)
    ranges_64[b.size](b, a, s, out)
    bs, us, ss = b.tolist(), a.tolist(), s.tolist()

    def trips(r: range) -> int:  # the guard's count: at most 101
        return min(101, max(0, -(-(r.stop - r.start) // r.step)))

    def step(w: int) -> int:
        return w % 7 - 3

    def stepped(v: int, w: int) -> range:
        return range(v % 50, w % 50, step(w)) if step(w) else range(0)

    assert out.tolist() == [
        [trips(range(1, (v % 10) % 8 - 4, -1)) for v in bs],
        [trips(range(u % 4, (v % 2**64) % 6)) for u, v in zip(us, bs)],
        [trips(range(u, v % 2**64)) for u, v in zip(us, bs)],
        [trips(stepped(v, w)) for v, w in zip(bs, ss)],
        [sum(list(stepped(v, w))[:101]) for v, w in zip(bs, ss)],
        [trips(range(v % 13, v % 17 + w % 5)) for v, w in zip(bs, ss)],
        [max(w % 17 - v % 13, 0) for v, w in zip(bs, ss)],
        [max((w % 2**64) % 11 - u % 9, 0) for u, w in zip(us, ss)],
    ]


@pytest.mark.parametrize("t", [pk.i8, pk.u8, pk.i16, pk.u16], ids=lambda d: d.name)
def test_loops_over_narrow_ranges_with_run_time_bounds(t):
    """NVIDIA (driver 580) ran loops over 16-bit ranges with run-time bounds past their end;
    they are counted in 32 bits. Steps up and down, the type's extremes, empty ranges."""
    @pk.kernel
    def narrow_trips(a: t[:], b: t[:], c: t[:], out: pk.i32[:, :]):
        i = pk.global_id(0)
        n = 0
        total = 0
        for j in range(a[i], b[i], c[i]):
            n += 1
            total += pk.i32(j)
            if n > 300:
                break
        out[0, i] = n
        out[1, i] = total

    info = np.iinfo(t.numpy)
    triples = [(0, 5, 1), (3, 3, 1), (info.max - 6, info.max, 2), (info.min, info.min + 20, 7),
               (10, 100, 9), (100, 10, 1)]
    if info.min < 0:
        triples += [(-5, 5, 1), (3, -3, -1), (info.max, info.min + 1, -1), (7, -7, -3),
                    (-3, 100, 50)]
    a, b, c = (np.array(col, t.numpy) for col in zip(*triples))
    out = np.zeros((2, a.size), np.int32)
    narrow_trips[a.size](a, b, c, out)
    ranges = [list(range(x, y, z))[:301] for x, y, z in triples]
    assert out[0].tolist() == [len(r) for r in ranges]
    assert out[1].tolist() == [sum(r) for r in ranges]


# (wider, narrower): the narrower operand converts to the wider type; both fit in it, so
# Python's // and % on the values are the answer
MIXED_WIDTHS = [(pk.i64, pk.i32), (pk.i64, pk.i16), (pk.i64, pk.i8), (pk.i64, pk.u32),
                (pk.i32, pk.i16), (pk.i32, pk.i8), (pk.i32, pk.u16), (pk.i16, pk.i8),
                (pk.u64, pk.u32), (pk.u32, pk.u8)]


@pytest.mark.parametrize("wide, narrow", MIXED_WIDTHS, ids=lambda d: d.name)
def test_mixed_width_floordiv_and_mod(wide, narrow):
    """`a // b`, `a % b` and comparisons of a wide `a` with a narrower `b`, either way round:
    i64 // i32 gave 1 // -1 == 0 and 7 % -2 == 7 on lavapipe (the divisor's sign lost)."""
    @pk.kernel
    def mixed(a: wide[:], b: narrow[:], out: wide[:]):
        i = pk.global_id(0)
        out[5 * i] = a[i] // b[i]
        out[5 * i + 1] = a[i] % b[i]
        out[5 * i + 2] = b[i] // a[i]
        out[5 * i + 3] = b[i] % a[i]
        out[5 * i + 4] = (1 if a[i] < b[i] else 0) + (2 if b[i] < 0 else 0)

    signed = np.iinfo(narrow.numpy).min < 0
    pairs = [(1, 1), (7, 2), (-7, 2), (7, 3), (5, 3), (100, 7), (-100, 7), (3, 100)]
    if signed:
        pairs += [(1, -1), (7, -2), (-7, -2), (5, -3), (-5, -3), (0, -4)]
    pairs += [(int(np.iinfo(wide.numpy).max), int(np.iinfo(narrow.numpy).max)),
              (int(np.iinfo(narrow.numpy).min) or 9, int(np.iinfo(narrow.numpy).min) or 4)]
    if np.iinfo(wide.numpy).min == 0:
        pairs = [(a, b) for a, b in pairs if a >= 0]
    a = np.array([p[0] for p in pairs], wide.numpy)
    b = np.array([p[1] for p in pairs], narrow.numpy)
    out = np.zeros(5 * a.size, wide.numpy)
    mixed[a.size](a, b, out)
    expected = []
    for x, y in zip(a.tolist(), b.tolist()):
        expected += [x // y, x % y, y // x if x else 0, y % x if x else 0,
                     (x < y) + 2 * (y < 0)]
    np.testing.assert_array_equal(out, np.array(expected, dtype=object).astype(wide.numpy))


@pytest.mark.parametrize("src", [np.float32, np.float64, np.float16])
def test_float_to_64_bit_conversions_past_2_to_the_32(src):
    """Converted to 64 bits, also after a write and a read back in the same invocation, and
    narrowed to 32 bits after: NVIDIA's driver (580, H200) made `pk.i32(pk.u64(x))` one
    saturating 32-bit conversion (all ones past 2**32), and read the written element's old
    contents while all storage buffers shared one block type."""
    if src is np.float64 and not pk.get_device().info.features.fp64:
        pytest.skip("no fp64")
    if src is np.float16 and not pk.get_device().info.features.fp16:
        pytest.skip("no fp16")
    if not pk.get_device().info.features.int64:
        pytest.skip("no int64")

    @pk.kernel
    def convert(x: pk.Array, kept: pk.Array, u: pk.u64[:], s: pk.i64[:], w: pk.i32[:]):
        i = pk.global_id(0)
        kept[i] = min(max(x[i], 0.0), 1.8e19)
        u[i] = pk.u64(kept[i])
        s[i] = pk.i64(x[i])
        w[i] = pk.i32(pk.u64(min(max(x[i], 0.0), 1.8e19)))

    big = [1e10, 2.0**32, 2.0**32 + 2**12, 2.0**40 + 2**20, 2.0**63, 1.5 * 2**63, 1.7e19]
    values = big + [-1e10, -(2.0**62), 3.0, 0.0, -0.0, 65504.0, np.inf, -np.inf, np.nan]
    x = np.array(values, np.float64)
    x = x.astype(src) if src is not np.float16 else np.clip(x, -65504, 65504).astype(src)
    n = x.size
    u, s, w = np.zeros(n, np.uint64), np.zeros(n, np.int64), np.zeros(n, np.int32)
    convert[n](x, np.zeros(n, src), u, s, w)
    wide = x.astype(np.float64)
    with np.errstate(over="ignore"):  # 1.8e19 is inf in f16, as the kernel's literal is
        top = float(src(1.8e19))
    clamped = np.nan_to_num(np.minimum(np.maximum(wide, 0.0), top), nan=0.0)
    expected_u = [min(int(v), 2**64 - 1) for v in clamped]
    expected_s = [0 if np.isnan(v) else max(min(int(v) if np.isfinite(v) else
                                               (2**63 - 1 if v > 0 else -2**63), 2**63 - 1),
                                           -2**63) for v in wide]
    assert u.tolist() == expected_u
    assert s.tolist() == expected_s
    assert w.tolist() == [int(np.array(v, np.uint64).astype(np.uint32).view(np.int32))
                          for v in expected_u]


# A zero test kept in a variable, branched on and stored: NVIDIA (580) gave the value computed
# from x on the test's False side as if x were all ones (found by random kernels; the variants
# below are the ones that went wrong there). Integer ==, != and truthiness are lowered as sign
# tests since (docs/testing.md).
@pk.kernel
def replace_if_set(x: pk.Array, out: pk.u32[:], flags: pk.bool_[:]):
    i = pk.global_id(0)
    v0 = pk.bool_(x[i])
    v1 = 4294967295 ^ pk.u32(x[i])
    if v0:
        v1 = pk.u32(x[i]) * 3 + 1
    flags[i] = v0
    out[i] = v1


@pk.kernel
def pick_unless_zero(x: pk.Array, out: pk.u32[:], flags: pk.bool_[:]):
    i = pk.global_id(0)
    v = x[i]
    flags[i] = v != 0
    out[i] = pk.u32((7 if pk.bool_(v) else pk.u32(v)) % 4) + 10 * pk.u32(not (v == 0))


@pytest.mark.parametrize("dtype", [pk.i32, pk.u32, pk.i64, pk.u64, pk.i16, pk.u8],
                         ids=lambda d: d.name)
def test_zero_tests_kept_in_a_variable(dtype):
    x = int_edges(dtype)
    ones = (1 << 32) - 1

    def replaced(v):
        return (v * 3 + 1) % (1 << 32) if v else ones ^ (v % (1 << 32))

    for kernel, expect in ((replace_if_set, replaced),
                           (pick_unless_zero, lambda v: (3 if v else 0) + (10 if v else 0))):
        out, flags = np.zeros(x.size, np.uint32), np.zeros(x.size, np.bool_)
        kernel[x.size](x, out, flags)
        np.testing.assert_array_equal(out, [expect(v) for v in x.tolist()],
                                      err_msg=kernel.__name__)
        np.testing.assert_array_equal(flags, x != 0)
