"""End to end on the device: atomics, shared memory and barriers, local arrays, subgroups,
device functions and the full math list, compared with numpy / Python."""

from __future__ import annotations

import math

import numpy as np
import pytest
from spirv_device import run
from spirv_irkit import (
    BOOL,
    F32,
    I32,
    U32,
    B,
    array,
    assign,
    atomic,
    binop,
    builtin,
    call,
    cast,
    const,
    declared,
    function,
    gid,
    kernel,
    load,
    local,
    store,
    subgroup,
    with_extras,
)

from pykern import ir
from pykern.spirv import Target, disassemble, lower
from pykern.runtime.feature import Feature
from pykern.spirv.target import ALL_FEATURES

FLOAT32_ATOMIC_ADD = Feature.FLOAT32_ATOMIC_ADD

A, S = ir.AtomicOp, ir.SubgroupOp
LID = builtin(ir.BuiltinKind.LOCAL_ID)


# ---------------------------------------------------------------- atomics


@pytest.mark.parametrize(("op", "dtype", "reduce"), [
    (A.ADD, I32, np.sum), (A.SUB, I32, lambda v: -np.sum(v)), (A.MIN, I32, np.min),
    (A.MAX, I32, np.max), (A.MIN, U32, np.min), (A.MAX, U32, np.max),
    (A.AND, U32, np.bitwise_and.reduce), (A.OR, U32, np.bitwise_or.reduce),
    (A.XOR, I32, np.bitwise_xor.reduce),
], ids=lambda v: getattr(v, "name", ""))
def test_int_atomics_from_every_invocation(device, op, dtype, reduce):
    n = 1000
    rng = np.random.default_rng(0)
    values = rng.integers(0, 2**20, n).astype(dtype.numpy)
    start = {A.MIN: np.iinfo(dtype.numpy).max, A.AND: np.iinfo(dtype.numpy).max}.get(op, 0)
    k = kernel([ir.Eval(value=atomic(op, "acc", dtype, const(0), load("v", dtype, gid())))],
               params=[array("v", dtype, access=ir.Access.READ), array("acc", dtype)])
    acc = np.array([start], dtype.numpy)
    got = run(device, k, n, {"v": values, "acc": acc})["acc"][0]
    want = reduce(np.concatenate([values, acc])) if op != A.SUB else -np.sum(values)
    assert got == np.array(want).astype(dtype.numpy)


def test_atomic_returns_the_old_value(device):
    # every invocation takes a distinct ticket
    n = 500
    k = kernel([store("ticket", atomic(A.ADD, "counter", I32, const(0), const(1)))],
               params=[array("counter", I32), array("ticket", I32, access=ir.Access.WRITE)])
    out = run(device, k, n, {"counter": np.zeros(1, np.int32), "ticket": np.zeros(n, np.int32)})
    assert out["counter"][0] == n
    np.testing.assert_array_equal(np.sort(out["ticket"]), np.arange(n))


def test_atomic_cas_and_exchange(device):
    # only the first CAS from 0 succeeds; exchange leaves the last value written
    k = kernel([store("won", atomic(A.CAS, "slot", I32, const(0), binop(B.ADD, gid(), const(1)),
                                    comparator=const(0))),
                ir.Eval(value=atomic(A.EXCHANGE, "last", I32, const(0), gid()))],
               params=[array("slot", I32), array("last", I32),
                       array("won", I32, access=ir.Access.WRITE)])
    out = run(device, k, 64, {"slot": np.zeros(1, np.int32), "last": np.full(1, -1, np.int32),
                              "won": np.zeros(64, np.int32)})
    assert np.count_nonzero(out["won"] == 0) == 1  # one winner saw the 0
    assert out["slot"][0] - 1 == np.flatnonzero(out["won"] == 0)[0]
    assert 0 <= out["last"][0] < 64


@pytest.mark.parametrize("native", [True, False], ids=["native", "cas-loop"])
def test_float_atomic_add(device, native):
    n = 2000
    v = np.full(n, 0.5, np.float32)  # sums exactly in any order
    k = kernel([ir.Eval(value=atomic(A.ADD, "acc", F32, const(0), load("v", F32, gid())))],
               params=[array("v", F32, access=ir.Access.READ), array("acc", F32)])
    target = Target() if native else Target(features=ALL_FEATURES - {FLOAT32_ATOMIC_ADD})
    assert ("OpAtomicFAddEXT" in disassemble(lower(k, target).words)) == native
    out = run(device, k, n, {"v": v, "acc": np.zeros(1, np.float32)}, target=target)
    assert out["acc"][0] == n * 0.5


def test_float_atomic_max_through_cas_loop(device):
    v = np.random.default_rng(2).standard_normal(300).astype(np.float32)
    k = kernel([ir.Eval(value=atomic(A.MAX, "acc", F32, const(0), load("v", F32, gid())))],
               params=[array("v", F32, access=ir.Access.READ), array("acc", F32)])
    out = run(device, k, v.size, {"v": v, "acc": np.full(1, -np.inf, np.float32)})
    assert out["acc"][0] == v.max()


# ---------------------------------------------------------------- shared memory, local arrays


def test_shared_memory_tree_reduction_with_barriers(device):
    # per workgroup of 64: tile[lid] = x[gid]; halve the active range log2(64) times
    wg = 64
    steps = []
    width = wg // 2
    while width:
        steps += [ir.If(cond=binop(B.LT, LID, const(width)), body=(
            ir.Store(array="tile", indices=(LID,), value=binop(
                B.ADD, ir.ArrayLoad(array="tile", indices=(LID,), type=F32),
                ir.ArrayLoad(array="tile", indices=(binop(B.ADD, LID, const(width)),),
                             type=F32))),)),
            ir.Barrier()]
        width //= 2
    body = [ir.Store(array="tile", indices=(LID,), value=load("x", F32, gid())), ir.Barrier(),
            *steps,
            ir.If(cond=binop(B.EQ, LID, const(0)), body=(
                ir.Store(array="sums", indices=(builtin(ir.BuiltinKind.GROUP_ID),),
                         value=ir.ArrayLoad(array="tile", indices=(const(0),), type=F32)),))]
    k = with_extras(kernel(body, workgroup=(wg, 1, 1), mask=False,
                           params=[array("x", F32, access=ir.Access.READ),
                                   array("sums", F32, access=ir.Access.WRITE)]),
                    arrays=[declared("tile", F32, (wg,))])
    x = np.arange(wg * 8, dtype=np.float32)
    out = run(device, k, x.size, {"x": x, "sums": np.zeros(8, np.float32)})["sums"]
    np.testing.assert_array_equal(out, x.reshape(8, wg).sum(axis=1))


def test_local_array_per_invocation(device):
    # acc[k] = x[i] * k for k < 4, then out[i] = acc[3] - acc[1] (= 2 x[i])
    k_var = local("k")
    fill = ir.ForRange(var="k", start=const(0), stop=const(4), step=const(1), body=(
        ir.Store(array="acc", indices=(k_var,),
                 value=binop(B.MUL, load("x", F32, gid()), cast(k_var, F32))),))
    acc3 = ir.ArrayLoad(array="acc", indices=(const(3),), type=F32)
    acc1 = ir.ArrayLoad(array="acc", indices=(const(1),), type=F32)
    body = [fill, store("out", binop(B.SUB, acc3, acc1))]
    k = with_extras(kernel(body, locals={"k": I32},
                           params=[array("x", F32, access=ir.Access.READ),
                                   array("out", F32, access=ir.Access.WRITE)]),
                    arrays=[declared("acc", F32, (4,), ir.MemorySpace.LOCAL)])
    x = np.arange(100, dtype=np.float32)
    np.testing.assert_array_equal(run(device, k, 100, {"x": x, "out": np.zeros_like(x)})["out"],
                                  2 * x)


def test_shared_float_atomics(device):
    # every invocation adds 1.0 to tile[0] (zeroed by lane 0 before a barrier)
    wg = 32
    body = [ir.If(cond=binop(B.EQ, LID, const(0)),
                  body=(ir.Store(array="tile", indices=(const(0),), value=const(0.0, F32)),)),
            ir.Barrier(),
            ir.Eval(value=atomic(A.ADD, "tile", F32, const(0), const(1.0, F32))),
            ir.Barrier(),
            store("out", ir.ArrayLoad(array="tile", indices=(const(0),), type=F32))]
    k = with_extras(kernel(body, workgroup=(wg, 1, 1), mask=False,
                           params=[array("out", F32, access=ir.Access.WRITE)]),
                    arrays=[declared("tile", F32, (1,))])
    out = run(device, k, 2 * wg, {"out": np.zeros(2 * wg, np.float32)})["out"]
    assert (out == wg).all()


# ---------------------------------------------------------------- subgroups


def test_subgroup_operations(device):
    sg = device.features.subgroup_size
    n = 4 * sg
    x = np.arange(n, dtype=np.int32) * 3 - 20
    ops = {
        "size": subgroup(S.SIZE), "lane": subgroup(S.LANE),
        "sum": subgroup(S.ADD, load("x", I32, gid())),
        "min": subgroup(S.MIN, load("x", I32, gid())),
        "prefix": subgroup(S.PREFIX_ADD, load("x", I32, gid())),
        "bcast": subgroup(S.BROADCAST, load("x", I32, gid()), const(1)),
        "shuf": subgroup(S.SHUFFLE, load("x", I32, gid()),
                         binop(B.SUB, const(sg - 1), subgroup(S.LANE))),
        "xor": subgroup(S.SHUFFLE_XOR, load("x", I32, gid()), const(1)),
        "any": cast(subgroup(S.ANY, binop(B.GT, load("x", I32, gid()), const(60))), I32),
    }
    k = kernel([store(name, e) for name, e in ops.items()], workgroup=(sg, 1, 1),
               params=[array("x", I32, access=ir.Access.READ),
                       *(array(name, I32, access=ir.Access.WRITE) for name in ops)])
    out = run(device, k, n, {"x": x, **{name: np.zeros(n, np.int32) for name in ops}})
    groups = x.reshape(-1, sg)
    lane = np.arange(n) % sg
    assert (out["size"] == sg).all()
    np.testing.assert_array_equal(out["lane"], lane)
    np.testing.assert_array_equal(out["sum"], np.repeat(groups.sum(1), sg))
    np.testing.assert_array_equal(out["min"], np.repeat(groups.min(1), sg))
    np.testing.assert_array_equal(out["prefix"], (np.cumsum(groups, 1) - groups).ravel())
    np.testing.assert_array_equal(out["bcast"], np.repeat(groups[:, 1], sg))
    np.testing.assert_array_equal(out["shuf"], groups[:, ::-1].ravel())
    np.testing.assert_array_equal(out["xor"], x[np.arange(n) ^ 1])
    np.testing.assert_array_equal(out["any"], np.repeat((groups > 60).any(1), sg))


# ---------------------------------------------------------------- device functions


def test_device_functions(device):
    # def fib(n) -> i32: a, b = 0, 1; for _ in range(n): a, b = b, a + b; return a
    fib = function("fib", {"n": I32}, [
        assign("a", const(0)), assign("b", const(1)),
        ir.ForRange(var="j", start=const(0), stop=local("n"), step=const(1), body=(
            assign("t", binop(B.ADD, local("a"), local("b"))),
            assign("a", local("b")), assign("b", local("t")))),
        ir.Return(value=local("a")),
    ], return_type=I32, locals={"a": I32, "b": I32, "t": I32, "j": I32})
    # def mark(i): out2[i] = fib(i) % 7        (the caller's array, by name)
    mark = function("mark", {"i": I32}, [
        store("out2", binop(B.MOD, call(fib, local("i")), const(7)), local("i"))])
    k = with_extras(kernel([store("out", call(fib, gid())), ir.Eval(value=call(mark, gid()))],
                           params=[array("out", I32, access=ir.Access.WRITE),
                                   array("out2", I32, access=ir.Access.WRITE)]),
                    functions=[fib, mark])
    out = run(device, k, 30, {"out": np.zeros(30, np.int32), "out2": np.zeros(30, np.int32)})
    fibs = [0, 1]
    while len(fibs) < 30:
        fibs.append(fibs[-1] + fibs[-2])
    np.testing.assert_array_equal(out["out"], fibs)
    np.testing.assert_array_equal(out["out2"], np.array(fibs) % 7)


# ---------------------------------------------------------------- more math


UNARY = [
    (ir.MathFn.RSQRT, lambda x: 1 / np.sqrt(x), (0.1, 10), 3e-6),
    (ir.MathFn.EXP2, np.exp2, (-5, 5), 2e-6),
    (ir.MathFn.LOG2, np.log2, (0.1, 10), 2e-6),
    (ir.MathFn.TAN, np.tan, (-1.2, 1.2), 5e-4),
    (ir.MathFn.ASIN, np.arcsin, (-0.99, 0.99), 4e-4),
    (ir.MathFn.ACOS, np.arccos, (-0.99, 0.99), 4e-4),
    (ir.MathFn.ATAN, np.arctan, (-10, 10), 4e-4),
    (ir.MathFn.SINH, np.sinh, (-3, 3), 4e-4),
    (ir.MathFn.COSH, np.cosh, (-3, 3), 4e-4),
    (ir.MathFn.ERF, np.vectorize(math.erf), (-4, 4), 4e-4),
    (ir.MathFn.TRUNC, np.trunc, (-5, 5), 0),
]


@pytest.mark.parametrize(("fn", "ref", "domain", "tol"), UNARY, ids=[u[0].name for u in UNARY])
def test_more_math(device, fn, ref, domain, tol):
    x = np.linspace(*domain, 101, dtype=np.float32)
    k = kernel([store("out", ir.MathCall(fn=fn, args=(load("x", F32, gid()),), type=F32))],
               params=[array("x", F32, access=ir.Access.READ),
                       array("out", F32, access=ir.Access.WRITE)])
    got = run(device, k, x.size, {"x": x, "out": np.zeros_like(x)})["out"]
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=tol, atol=max(tol, 1e-6))


def test_sinh_is_accurate_near_zero(device):
    # GLSL's sinh, (e^x - e^-x) / 2, cancels near 0 (lavapipe: sinh(1e-30) = 3e-8, sinh(1e-5)
    # 1.4e-4 off, sinh(-0.0) = +0.0); pykern's is the Taylor series below |x| = 1
    x = np.array([1e-30, -1e-30, 0.0, -0.0, 1e-5, -3e-3, 0.1, 0.5, -0.99, 0.999, 1.0, -1.5,
                  20.0, np.inf, -np.inf, np.nan], np.float32)
    k = kernel([store("out", ir.MathCall(fn=ir.MathFn.SINH, args=(load("x", F32, gid()),),
                                         type=F32))],
               params=[array("x", F32, access=ir.Access.READ),
                       array("out", F32, access=ir.Access.WRITE)])
    got = run(device, k, x.size, {"x": x, "out": np.zeros_like(x)})["out"]
    np.testing.assert_allclose(got, np.sinh(x.astype(np.float64)), rtol=5e-7, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(x))


def test_round_copysign_fma_atan2_and_predicates(device):
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.7, -0.0, np.inf, np.nan, -np.inf], np.float32)
    y = np.array([1.0, -1.0, -0.0, 2.0, np.nan, -3.0, -1.0, 1.0, -2.0, 0.5], np.float32)

    def fn(f, *args, dtype=F32):
        return ir.MathCall(fn=f, args=args, type=dtype)

    xs, ys = load("x", F32, gid()), load("y", F32, gid())
    exprs = {
        "round": fn(ir.MathFn.ROUND, xs), "copysign": fn(ir.MathFn.COPYSIGN, xs, ys),
        "fma": fn(ir.MathFn.FMA, xs, ys, const(1.0, F32)),
        "atan2": fn(ir.MathFn.ATAN2, ys, xs),
        "isnan": fn(ir.MathFn.ISNAN, xs, dtype=BOOL), "isinf": fn(ir.MathFn.ISINF, xs, dtype=BOOL),
    }
    k = kernel([store(n, e) for n, e in exprs.items()],
               params=[array("x", F32, access=ir.Access.READ),
                       array("y", F32, access=ir.Access.READ),
                       *(array(n, e.type, access=ir.Access.WRITE) for n, e in exprs.items())])
    arrays = {n: np.zeros(x.size, e.type.numpy) for n, e in exprs.items()}
    out = run(device, k, x.size, {"x": x, "y": y, **arrays})
    finite = np.isfinite(x)
    np.testing.assert_array_equal(out["round"][finite], np.round(x[finite]))  # halves to even
    np.testing.assert_array_equal(np.signbit(out["copysign"]), np.signbit(y))
    np.testing.assert_array_equal(np.abs(out["copysign"][~np.isnan(x)]),
                                  np.abs(x[~np.isnan(x)]))
    ok = np.isfinite(x) & np.isfinite(y)
    np.testing.assert_allclose(out["fma"][ok], (x * y + 1)[ok], rtol=1e-6)
    np.testing.assert_allclose(out["atan2"][ok], np.arctan2(y, x)[ok], rtol=4e-4, atol=1e-6)
    np.testing.assert_array_equal(out["isnan"], np.isnan(x))
    np.testing.assert_array_equal(out["isinf"], np.isinf(x))


# ---------------------------------------------------------------- debug mode


def debug_failure(out, k):
    from pykern.jit.debug_launch import failure
    from pykern.spirv.debug import DEBUG_BUFFER
    module = out["module"]
    ndims = {p.name: p.type.ndim for p in k.params if p.is_array}
    ndims.update({a.name: len(a.shape) for a in k.arrays})
    return failure(k.name, module.debug_sites, out[DEBUG_BUFFER], ndims.__getitem__)


def test_debug_mode_reports_an_out_of_bounds_read(device):
    from dataclasses import replace

    from pykern.errors import KernelIndexError
    # out[i] = x[i + 3] over 2-D views: the last rows read past x's shape
    k = kernel([ir.Store(array="out", indices=(gid(0), gid(1)),
                         value=ir.ArrayLoad(array="x", type=F32, indices=(
                             binop(B.ADD, gid(0), const(3)), gid(1))))],
               workgroup=(4, 4, 1),
               params=[array("x", F32, 2, ir.Access.READ), array("out", F32, 2)], name="shift")
    k = replace(k, debug=True)
    x = np.arange(6 * 5, dtype=np.float32).reshape(6, 5)
    out = run(device, k, (6, 5), {"x": x, "out": np.full((6, 5), -1.0, np.float32)})
    error = debug_failure(out, k)
    assert isinstance(error, KernelIndexError)
    text = str(error)
    assert "kernel 'shift', invocation (" in text
    assert "is out of bounds for 'x' with shape (6, 5)" in text
    index = tuple(int(v) for v in text.split("index (")[1].split(")")[0].split(","))
    assert index[0] >= 6 and 0 <= index[1] < 5
    np.testing.assert_array_equal(out["out"][:3], x[3:])  # in-bounds reads went through
    assert (out["out"][3:] == 0).all()  # failed reads give 0


def test_debug_mode_reports_a_failed_assert_and_nothing_when_all_is_well(device):
    from dataclasses import replace

    from pykern.errors import KernelAssertionError
    k = replace(kernel([ir.Assert(cond=binop(B.LT, load("x", I32, gid()), const(10)),
                                  message="x < 10")],
                       params=[array("x", I32, access=ir.Access.READ)], name="check"),
                debug=True)
    fine = run(device, k, 4, {"x": np.arange(4, dtype=np.int32)})
    assert debug_failure(fine, k) is None
    bad = run(device, k, 4, {"x": np.array([1, 2, 30, 4], np.int32)})
    error = debug_failure(bad, k)
    assert isinstance(error, KernelAssertionError)
    assert "kernel 'check', invocation (2, 0, 0): assertion failed: x < 10" in str(error)
