"""The device agrees with the interpreter backend (`pykern.interpret`), the test oracle: on
the results Python leaves undefined as well (division by zero, out-of-range conversions, zero
range steps, locals read before written), and on random expression trees (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spirv_device import run
from spirv_irkit import (
    BOOL,
    F32,
    I32,
    U32,
    B,
    U,
    array,
    assign,
    binop,
    cast,
    const,
    declared,
    gid,
    kernel,
    load,
    local,
    store,
    unop,
    with_extras,
)

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.ir.verify import verify

interpret = pytest.importorskip("pykern.interpret", reason="the interpreter is not available")


def both(device, k: ir.Kernel, n: int, arrays: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """Runs `k` on the device and in the interpreter over `n` invocations; both results."""
    on_device = run(device, k, n, {name: a.copy() for name, a in arrays.items()})
    on_host = {name: a.copy() for name, a in arrays.items()}
    interpret.run(k, (n, 1, 1), on_host, {})
    return on_device, on_host


def assert_same(on_device: dict, on_host: dict, names) -> None:
    for name in names:
        np.testing.assert_array_equal(on_device[name], on_host[name], err_msg=name)


def elementwise(expr, ins: dict[str, dt.DType], out: dt.DType, **extra) -> ir.Kernel:
    return kernel([store("out", expr)], params=[
        *(array(n, d, access=ir.Access.READ) for n, d in ins.items()),
        array("out", out, access=ir.Access.WRITE)], **extra)


# ---------------------------------------------------------------- defined edge cases


@pytest.mark.parametrize("dtype", [I32, U32], ids=lambda d: d.name)
@pytest.mark.parametrize("op", [B.FLOORDIV, B.MOD], ids=lambda o: o.name)
def test_integer_division_by_zero_gives_zero(device, op, dtype):
    a = np.array([7, 0, 5, 2**31 - 1, 3], dtype.numpy)
    b = np.array([0, 0, 2, 0, 0], dtype.numpy)
    k = elementwise(binop(op, load("a", dtype, gid()), load("b", dtype, gid())),
                    {"a": dtype, "b": dtype}, dtype)
    dev, host = both(device, k, a.size, {"a": a, "b": b, "out": np.full(5, 9, dtype.numpy)})
    assert_same(dev, host, ["out"])
    assert (dev["out"][b == 0] == 0).all()


@pytest.mark.parametrize("target", [I32, U32, dt.i8, dt.u8, dt.i64], ids=lambda d: d.name)
def test_float_to_int_saturates_and_nan_gives_zero(device, target):
    x = np.array([1e20, -1e20, np.nan, np.inf, -np.inf, 3.9, -3.9, 2.0**31, -(2.0**31),
                  255.5, -0.5, 127.9], np.float32)
    k = elementwise(cast(load("x", F32, gid()), target), {"x": F32}, target)
    dev, host = both(device, k, x.size, {"x": x, "out": np.zeros(x.size, target.numpy)})
    assert_same(dev, host, ["out"])


def test_range_with_a_zero_step_runs_nothing(device):
    loop = ir.ForRange(var="i", start=const(0), stop=load("n", I32, gid()),
                       step=load("s", I32, gid()),
                       body=(assign("t", binop(B.ADD, local("t"), const(1))),))
    k = kernel([assign("t", const(0)), loop, store("out", local("t"))], locals={"t": I32, "i": I32},
               params=[array("n", I32, access=ir.Access.READ),
                       array("s", I32, access=ir.Access.READ),
                       array("out", I32, access=ir.Access.WRITE)])
    n = np.array([5, 5, -5, 0], np.int32)
    s = np.array([0, 1, -2, 0], np.int32)
    dev, host = both(device, k, 4, {"n": n, "s": s, "out": np.full(4, -1, np.int32)})
    assert_same(dev, host, ["out"])
    np.testing.assert_array_equal(dev["out"], [0, 5, 3, 0])


def test_locals_and_local_arrays_start_at_zero(device):
    # reads before any write (the frontend would refuse the local; the IR allows it)
    body = [store("out", binop(B.ADD, local("never"),
                               ir.ArrayLoad(array="scratch", indices=(const(2),), type=I32)))]
    k = with_extras(kernel(body, locals={"never": I32},
                           params=[array("out", I32, access=ir.Access.WRITE)]),
                    arrays=[declared("scratch", I32, (4,), ir.MemorySpace.LOCAL)])
    dev, host = both(device, k, 8, {"out": np.full(8, 7, np.int32)})
    assert_same(dev, host, ["out"])
    assert (dev["out"] == 0).all()


# ---------------------------------------------------------------- random expressions

# f32 operators whose results are exact (correctly rounded), so device and host agree bit for
# bit; division, pow and the transcendental functions have looser Vulkan bounds. Drivers may
# treat inf, NaN and -0.0 loosely (lavapipe folds x / 0.0 to 0 even with
# SignedZeroInfNanPreserve), so the trees keep floats finite: float leaves are small, ints are
# cast to f32 after `% 1024`, and float // and % divide by nonzero constants only.
EXACT_FLOAT = [B.ADD, B.SUB, B.MUL, B.MIN, B.MAX]
FLOAT_DIVISIONS = [B.FLOORDIV, B.MOD]
INT_OPS = [B.ADD, B.SUB, B.MUL, B.FLOORDIV, B.MOD, B.BIT_AND, B.BIT_OR, B.BIT_XOR, B.LSHIFT,
           B.RSHIFT, B.MIN, B.MAX, B.POW]
COMPARISONS = [B.EQ, B.NE, B.LT, B.LE, B.GT, B.GE]
LEAVES = {I32: "xi", U32: "xu", F32: "xf", BOOL: "xb"}
FLOAT_CONSTANTS = [0.0, -0.0, 1.0, -1.5, 2.0, 3.0, 0.25, 7.0, -8.0, 1e-3, 0.1]
DIVISORS = [1.0, -1.5, 2.0, 3.0, 0.25, -8.0, 0.1, 7.0]


def expressions(dtype: dt.DType, depth: int) -> st.SearchStrategy[ir.Expr]:
    """Random typed expressions of `dtype` over the leaves x* (one array per type)."""
    leaf = st.one_of(st.just(load(LEAVES[dtype], dtype, gid())), _constants(dtype))
    if depth == 0:
        return leaf

    def sub(d: dt.DType) -> st.SearchStrategy[ir.Expr]:
        return expressions(d, depth - 1)

    def two(ops: list, a: st.SearchStrategy, b: st.SearchStrategy) -> st.SearchStrategy:
        return st.builds(binop, st.sampled_from(ops), a, b)

    options = [leaf, st.builds(lambda c, a, b: ir.IfExp(cond=c, then=a, orelse=b, type=dtype),
                               sub(BOOL), sub(dtype), sub(dtype))]
    if dtype in (I32, U32):
        options += [two(INT_OPS, sub(dtype), sub(dtype)),
                    st.builds(unop, st.sampled_from([U.NEG, U.INVERT, U.ABS]), sub(dtype)),
                    st.sampled_from([F32, BOOL, I32 if dtype == U32 else U32]).flatmap(
                        lambda source: sub(source).map(lambda v: cast(v, dtype)))]
    if dtype == F32:
        options += [two(EXACT_FLOAT, sub(F32), sub(F32)),
                    two(FLOAT_DIVISIONS, sub(F32),
                        st.sampled_from(DIVISORS).map(lambda v: const(v, F32))),
                    st.builds(unop, st.sampled_from([U.NEG, U.ABS]), sub(F32)),
                    st.sampled_from([I32, U32]).flatmap(lambda source: sub(source).map(
                        lambda v: cast(binop(B.MOD, v, const(1024, v.type)), F32))),
                    sub(BOOL).map(lambda v: cast(v, F32))]
    if dtype == BOOL:
        options += [two(COMPARISONS, sub(I32), sub(I32)), two(COMPARISONS, sub(F32), sub(F32)),
                    st.builds(lambda op, a, b: ir.Logical(op=op, lhs=a, rhs=b, type=BOOL),
                              st.sampled_from(list(ir.LogicalKind)), sub(BOOL), sub(BOOL)),
                    sub(I32).map(lambda v: cast(v, BOOL)), sub(F32).map(lambda v: cast(v, BOOL))]
    return st.one_of(options)


def _constants(dtype: dt.DType) -> st.SearchStrategy[ir.Expr]:
    if dtype == BOOL:
        values = st.booleans()
    elif dtype == F32:
        values = st.sampled_from(FLOAT_CONSTANTS)
    elif dtype == U32:
        values = st.sampled_from([0, 1, 2, 3, 31, 32, 7, 2**32 - 1, 2**31])
    else:
        values = st.sampled_from([0, 1, -1, 2, 3, -7, 31, 33, 2**31 - 1, -(2**31)])
    return values.map(lambda v: const(v, dtype))


INPUTS = {
    "xi": np.array([0, 1, -1, 7, -7, 2**31 - 1, -(2**31), 12345, -3, 40], np.int32),
    "xu": np.array([0, 1, 2**32 - 1, 7, 2**31, 12345, 3, 40, 5, 100], np.uint32),
    "xf": np.array([0.0, -0.0, 1.5, -2.25, 3.0, -7.0, 0.1, 1e3, -1e-3, 8.0], np.float32),
    "xb": np.array([True, False, True, True, False, False, True, False, True, False]),
}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.sampled_from([I32, U32, F32, BOOL]).flatmap(lambda t: expressions(t, 3)))
def test_random_expressions_agree_with_the_interpreter(device, expr):
    k = kernel([store("out", expr)], params=[
        *(array(n, t, access=ir.Access.READ) for t, n in LEAVES.items()),
        array("out", expr.type, access=ir.Access.WRITE)])
    verify(k)
    n = INPUTS["xi"].size
    arrays = {**INPUTS, "out": np.zeros(n, expr.type.numpy)}
    with np.errstate(all="ignore"):
        dev, host = both(device, k, n, arrays)
    got, want = dev["out"], host["out"]
    # (-0.0 == 0.0 here: the sign of a zero is not compared)
    np.testing.assert_array_equal(got, want, err_msg=str(k))
