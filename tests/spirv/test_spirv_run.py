"""End to end: hand-built IR, lowered here, run by `pykern.runtime` (lavapipe in CI), compared
with numpy / plain Python (see spirv_device.py for the runner and the validation layer)."""

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
    U,
    array,
    assign,
    binop,
    builtin,
    cast,
    const,
    gid,
    kernel,
    load,
    local,
    param,
    scalar,
    store,
    unop,
)

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.spirv import lower

INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def elementwise(expr_of, dtypes_in: dict[str, dt.DType], out_dtype: dt.DType,
                locals_=None, prelude=()) -> ir.Kernel:
    """`out[i] = expr(a[i], b[i], ...)` over 1-D arrays."""
    loads = {n: load(n, d, gid()) for n, d in dtypes_in.items()}
    params = [array(n, d, access=ir.Access.READ) for n, d in dtypes_in.items()]
    return kernel([*prelude, store("out", expr_of(**loads))],
                  params=[*params, array("out", out_dtype, access=ir.Access.WRITE)],
                  locals=locals_)


def wrap32(values) -> np.ndarray:
    return np.array([(v + 2**31) % 2**32 - 2**31 for v in values], dtype=np.int64).astype(np.int32)


# ---------------------------------------------------------------- // % **


def test_signed_floordiv_and_mod_follow_python(device):
    pairs = [(a, b) for a in (-7, 7, -6, 6, 0, -1, 1, 13, -13, INT_MIN, INT_MAX, INT_MIN + 1)
             for b in (2, -2, 3, -3, 1, -1, 7, -7, INT_MIN, INT_MAX)]
    a = np.array([p[0] for p in pairs], np.int32)
    b = np.array([p[1] for p in pairs], np.int32)
    k = elementwise(lambda a, b: binop(B.FLOORDIV, a, b), {"a": I32, "b": I32}, I32)
    q = run(device, k, a.size, {"a": a, "b": b, "out": np.zeros_like(a)})["out"]
    k = elementwise(lambda a, b: binop(B.MOD, a, b), {"a": I32, "b": I32}, I32)
    r = run(device, k, a.size, {"a": a, "b": b, "out": np.zeros_like(a)})["out"]
    np.testing.assert_array_equal(q, wrap32([x // y for x, y in pairs]))
    np.testing.assert_array_equal(r, wrap32([x % y for x, y in pairs]))


def test_unsigned_floordiv_and_mod(device):
    a = np.array([0, 7, 2**32 - 1, 2**31, 12345], np.uint32)
    b = np.array([3, 7, 2, 2**32 - 1, 10], np.uint32)
    for op, ref in ((B.FLOORDIV, a // b), (B.MOD, a % b)):
        k = elementwise(lambda a, b, op=op: binop(op, a, b), {"a": U32, "b": U32}, U32)
        np.testing.assert_array_equal(
            run(device, k, a.size, {"a": a, "b": b, "out": np.zeros_like(a)})["out"], ref)


def test_float_floordiv_and_mod_follow_numpy(device):
    # exactly representable quotients and remainders, where Python's answer is unambiguous
    values = [-7.5, 7.5, -6.0, 6.0, 0.0, 1.0, -1.0, 5.25, -0.5, 1e6, 9.0, 0.3]
    divisors = [2.0, -2.0, 3.0, -3.0, 0.5, -0.25, 1.0, 4.5, 0.1]
    a = np.array([x for x in values for _ in divisors], np.float32)
    b = np.array([y for _ in values for y in divisors], np.float32)
    k = elementwise(lambda a, b: binop(B.FLOORDIV, a, b), {"a": F32, "b": F32}, F32)
    q = run(device, k, a.size, {"a": a, "b": b, "out": np.zeros_like(a)})["out"]
    k = elementwise(lambda a, b: binop(B.MOD, a, b), {"a": F32, "b": F32}, F32)
    r = run(device, k, a.size, {"a": a, "b": b, "out": np.zeros_like(a)})["out"]
    np.testing.assert_array_equal(q, np.floor_divide(a, b))
    np.testing.assert_allclose(r, np.remainder(a, b), rtol=0, atol=1e-6)
    assert np.all((r == 0) | (np.sign(r) == np.sign(b)))  # the sign of the divisor


def test_float_pow_has_python_semantics(device):
    bases = [-2.0, -0.5, -1.0, 0.0, -0.0, 0.5, 1.0, 2.0, 3.0, float("inf"), float("-inf"),
             float("nan")]
    exponents = [3.0, 2.0, -1.0, -2.0, 0.5, 0.0, 1.0, 10.0, -3.0, float("inf"),
                 float("-inf"), float("nan"), 1 / 3]
    x = np.array([v for v in bases for _ in exponents], np.float32)
    y = np.array([e for _ in bases for e in exponents], np.float32)
    k = elementwise(lambda a, b: binop(B.POW, a, b), {"a": F32, "b": F32}, F32)
    got = run(device, k, x.size, {"a": x, "b": y, "out": np.zeros_like(x)})["out"]
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{x}\n{y}")
    np.testing.assert_allclose(got, want, rtol=2e-6)  # exp2/log2 precision
    finite = np.isfinite(want) & (want != 0)
    np.testing.assert_array_equal(np.sign(got[finite]), np.sign(want[finite]))


def test_math_pow_matches_binop_pow(device):
    x = np.array([-2.0, -8.0, 4.0, 0.0], np.float32)
    y = np.array([3.0, 1 / 3, 0.5, -1.0], np.float32)
    k = elementwise(lambda a, b: ir.MathCall(fn=ir.MathFn.POW, args=(a, b), type=F32),
                    {"a": F32, "b": F32}, F32)
    got = run(device, k, x.size, {"a": x, "b": y, "out": np.zeros_like(x)})["out"]
    np.testing.assert_allclose(got, [-8.0, np.nan, 2.0, np.inf], rtol=2e-6)


def test_int_pow_wraps_and_handles_negative_exponents(device):
    cases = [(b, e) for b in (0, 1, -1, 2, -2, 3, -3, 7, 10, INT_MIN)
             for e in (0, 1, 2, 3, 5, 10, 31, 32, 40, -1, -2, -3)]
    base = np.array([c[0] for c in cases], np.int32)
    exp = np.array([c[1] for c in cases], np.int32)

    def python(b: int, e: int) -> int:
        if e >= 0:
            return b**e
        return 1 if b == 1 else ((-1) ** e if b == -1 else 0)

    k = elementwise(lambda a, b: binop(B.POW, a, b), {"a": I32, "b": I32}, I32)
    got = run(device, k, base.size, {"a": base, "b": exp, "out": np.zeros_like(base)})["out"]
    np.testing.assert_array_equal(got, wrap32([python(b, e) for b, e in cases]))


def test_unsigned_pow(device):
    base = np.array([2, 3, 0, 1, 2**31], np.uint32)
    exp = np.array([31, 20, 0, 99, 2], np.uint32)
    k = elementwise(lambda a, b: binop(B.POW, a, b), {"a": U32, "b": U32}, U32)
    got = run(device, k, base.size, {"a": base, "b": exp, "out": np.zeros_like(base)})["out"]
    want = [pow(int(b), int(e), 2**32) for b, e in zip(base, exp, strict=True)]
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- arithmetic, shifts, casts


def test_float_multiply_add_is_not_fused(device):
    # values for which fma(a, b, c) differs from round(round(a * b) + c)
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(256).astype(np.float32) for _ in range(2))
    c = -(a.astype(np.float64) * b).astype(np.float32)
    k = elementwise(lambda a, b, c: binop(B.ADD, binop(B.MUL, a, b), c),
                    {"a": F32, "b": F32, "c": F32}, F32)
    got = run(device, k, a.size, {"a": a, "b": b, "c": c, "out": np.zeros_like(a)})["out"]
    np.testing.assert_array_equal(got, a * b + c)  # numpy rounds the product first
    assert np.count_nonzero(got) < a.size // 4  # mostly exact zeros; an FMA leaves residues


@pytest.mark.parametrize("dtype", [I32, U32], ids=lambda d: d.name)
def test_shifts_past_the_width(dtype, device):
    counts = np.array(list(range(0, 40)) * 2, dtype.numpy)
    values = np.array([-5 if dtype == I32 else 0xF000000F] * 40 + [12345] * 40, dtype.numpy)
    for op in (B.LSHIFT, B.RSHIFT):
        k = elementwise(lambda a, b, op=op: binop(op, a, b), {"a": dtype, "b": dtype}, dtype)
        got = run(device, k, counts.size, {"a": values, "b": counts,
                                           "out": np.zeros_like(values)})["out"]
        bits = 32
        if op == B.LSHIFT:
            want = [(int(v) << int(c)) % 2**bits for v, c in zip(values, counts, strict=True)]
        else:
            want = [int(v) >> int(c) for v, c in zip(values, counts, strict=True)]
        want = np.array(want, np.int64)
        want = want.astype(np.uint32).astype(dtype.numpy) if dtype == I32 else want
        np.testing.assert_array_equal(got, np.array(want).astype(dtype.numpy))


def test_casts(device):
    f = np.array([-2.7, -0.5, 0.0, -0.0, 0.5, 2.7, 1e9, float("nan")], np.float32)
    i = np.array([-3, -1, 0, 0, 1, 3, INT_MAX, INT_MIN], np.int32)
    k = kernel([
        store("to_i", cast(load("f", F32, gid()), I32)),
        store("to_b", cast(load("f", F32, gid()), BOOL)),
        store("i_to_u", cast(load("i", I32, gid()), U32)),
        store("i_to_f", cast(load("i", I32, gid()), F32)),
        store("i_to_b", cast(load("i", I32, gid()), BOOL)),
        store("b_to_f", cast(cast(load("i", I32, gid()), BOOL), F32)),
        store("u_to_f", cast(cast(load("i", I32, gid()), U32), F32)),
    ], params=[array("f", F32, access=ir.Access.READ), array("i", I32, access=ir.Access.READ),
               *(array(n, t, access=ir.Access.WRITE) for n, t in [
                   ("to_i", I32), ("to_b", BOOL), ("i_to_u", U32), ("i_to_f", F32),
                   ("i_to_b", BOOL), ("b_to_f", F32), ("u_to_f", F32)])])
    out = run(device, k, 8, {"f": f, "i": i, "to_i": np.zeros(8, np.int32),
                             "to_b": np.zeros(8, bool), "i_to_u": np.zeros(8, np.uint32),
                             "i_to_f": np.zeros(8, np.float32), "i_to_b": np.zeros(8, bool),
                             "b_to_f": np.zeros(8, np.float32), "u_to_f": np.zeros(8, np.float32)})
    np.testing.assert_array_equal(out["to_i"][:7], [-2, 0, 0, 0, 0, 2, 1000000000])
    np.testing.assert_array_equal(out["to_b"], [bool(x) for x in f])  # NaN is True
    np.testing.assert_array_equal(out["i_to_u"], i.astype(np.uint32))
    np.testing.assert_array_equal(out["i_to_f"], i.astype(np.float32))
    np.testing.assert_array_equal(out["i_to_b"], i != 0)
    np.testing.assert_array_equal(out["b_to_f"], (i != 0).astype(np.float32))
    np.testing.assert_array_equal(out["u_to_f"], i.astype(np.uint32).astype(np.float32))


def test_bool_arrays_and_logic(device):
    m = np.array([True, False, True, False, True], bool)
    n = np.array([True, True, False, False, True], bool)
    k = elementwise(lambda a, b: binop(B.BIT_XOR, unop(U.NOT, a), binop(B.LT, a, b)),
                    {"a": BOOL, "b": BOOL}, BOOL)
    got = run(device, k, m.size, {"a": m, "b": n, "out": np.zeros_like(m)})["out"]
    np.testing.assert_array_equal(got, (~m) ^ (m < n))
    assert got.view(np.uint8).max() == 1  # stored as 0/1 bytes


@pytest.mark.parametrize(("fn", "ref", "tol"), [
    (ir.MathFn.SQRT, np.sqrt, 1e-6), (ir.MathFn.EXP, np.exp, 2e-6), (ir.MathFn.LOG, np.log, 1e-6),
    (ir.MathFn.SIN, np.sin, 5e-4), (ir.MathFn.COS, np.cos, 5e-4), (ir.MathFn.TANH, np.tanh, 1e-5),
    (ir.MathFn.FLOOR, np.floor, 0), (ir.MathFn.CEIL, np.ceil, 0),
], ids=lambda v: getattr(v, "name", ""))
def test_math_functions(device, fn, ref, tol):
    x = np.linspace(0.1, 3.0, 50, dtype=np.float32)
    x = np.concatenate([x, -x]) if fn in (ir.MathFn.SIN, ir.MathFn.COS, ir.MathFn.TANH,
                                          ir.MathFn.FLOOR, ir.MathFn.CEIL) else x
    k = elementwise(lambda a: ir.MathCall(fn=fn, args=(a,), type=F32), {"a": F32}, F32)
    got = run(device, k, x.size, {"a": x, "out": np.zeros_like(x)})["out"]
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=tol, atol=tol)


def test_min_max(device):
    a = np.array([1.0, -2.0, 3.5, -0.5], np.float32)
    b = np.array([2.0, -3.0, 3.5, 0.5], np.float32)
    for op, ref in ((B.MIN, np.minimum), (B.MAX, np.maximum)):
        k = elementwise(lambda a, b, op=op: binop(op, a, b), {"a": F32, "b": F32}, F32)
        got = run(device, k, a.size, {"a": a, "b": b, "out": np.zeros_like(a)})["out"]
        np.testing.assert_array_equal(got, ref(a, b))
    ia, ib = np.array([-1, 5], np.int32), np.array([1, -5], np.int32)
    k = elementwise(lambda a, b: binop(B.MIN, a, b), {"a": I32, "b": I32}, I32)
    got = run(device, k, 2, {"a": ia, "b": ib, "out": np.zeros_like(ia)})["out"]
    np.testing.assert_array_equal(got, [-1, -5])


# ---------------------------------------------------------------- control flow


RANGES = [(0, 10, 1), (10, 0, -1), (10, -3, -2), (0, 10, 3), (5, 5, 1), (5, 0, 1), (0, 5, -1),
          (-5, 5, 4), (INT_MAX - 5, INT_MAX, 2), (INT_MIN + 5, INT_MIN, -2), (100, -100, -7),
          (INT_MIN, INT_MIN + 3, 1), (3, 4, 1000)]


def range_kernel(step: ir.Expr) -> ir.Kernel:
    """count, wrapping sum and last value of `for v in range(start[i], stop[i], step)`, with
    the body reassigning `v` (which must not disturb the iteration)."""
    i = gid()
    loop = ir.ForRange(var="v", start=load("start", I32, i), stop=load("stop", I32, i),
                       step=step, body=(
                           assign("n", binop(B.ADD, local("n"), const(1))),
                           assign("s", binop(B.ADD, local("s"), local("v"))),
                           assign("v", binop(B.MUL, local("v"), const(3))),
                       ))
    body = [assign("n", const(0)), assign("s", const(0)), assign("v", const(-999)), loop,
            store("count", local("n")), store("total", local("s")), store("last", local("v"))]
    params = [array("start", I32, access=ir.Access.READ), array("stop", I32, access=ir.Access.READ),
              array("step", I32, access=ir.Access.READ),
              *(array(n, I32, access=ir.Access.WRITE) for n in ("count", "total", "last"))]
    return kernel(body, params=params, locals={"n": I32, "s": I32, "v": I32})


def python_range(start: int, stop: int, step: int) -> tuple[int, int, int]:
    values = range(start, stop, step)
    last = values[-1] * 3 if values else -999
    return len(values), sum(values), last


def check_ranges(device, k: ir.Kernel, ranges) -> None:
    arrays = {name: np.array([r[j] for r in ranges], np.int32)
              for j, name in enumerate(("start", "stop", "step"))}
    for name in ("count", "total", "last"):
        arrays[name] = np.zeros(len(ranges), np.int32)
    out = run(device, k, len(ranges), arrays)
    want = [python_range(*r) for r in ranges]
    np.testing.assert_array_equal(out["count"], [w[0] for w in want])
    np.testing.assert_array_equal(out["total"], wrap32([w[1] for w in want]))
    np.testing.assert_array_equal(out["last"], wrap32([w[2] for w in want]))


def test_for_range_with_runtime_steps_of_either_sign(device):
    check_ranges(device, range_kernel(load("step", I32, gid())), RANGES)


@pytest.mark.parametrize("step", [1, -1, 3, -2, -7])
def test_for_range_with_constant_step(device, step):
    ranges = [(a, b, step) for a, b, _ in RANGES]
    check_ranges(device, range_kernel(const(step)), ranges)


def test_break_continue_and_return_in_loops(device):
    # for i in range(20): if i % 2: continue; if i > lim: break; if i == ret: return; t += i
    i = local("i")
    body = (
        ir.If(cond=binop(B.EQ, binop(B.MOD, i, const(2)), const(1)), body=(ir.Continue(),)),
        ir.If(cond=binop(B.GT, i, load("lim", I32, gid())), body=(ir.Break(),)),
        ir.If(cond=binop(B.EQ, i, load("ret", I32, gid())), body=(ir.Return(),)),
        assign("t", binop(B.ADD, local("t"), i)),
    )
    k = kernel([assign("t", const(0)),
                ir.ForRange(var="i", start=const(0), stop=const(20), step=const(1), body=body),
                store("out", local("t"))],
               params=[array("lim", I32, access=ir.Access.READ),
                       array("ret", I32, access=ir.Access.READ),
                       array("out", I32, access=ir.Access.WRITE)],
               locals={"t": I32, "i": I32})
    lim = np.array([100, 7, 0, 12, -1], np.int32)
    ret = np.array([-1, -1, -1, 10, 0], np.int32)

    def python(lim: int, ret: int) -> int:
        t = 0
        for v in range(20):
            if v % 2:
                continue
            if v > lim:
                break
            if v == ret:
                return -7  # the store never happens
            t += v
        return t

    out = run(device, k, lim.size, {"lim": lim, "ret": ret, "out": np.full(5, -7, np.int32)})
    np.testing.assert_array_equal(out["out"], [python(a, b) for a, b in zip(lim, ret, strict=True)])


def test_while_with_short_circuit_guard(device):
    # j = 0; while j < n and x[j] > 0: j += 1   (x[j] must not be read when j == n)
    x = np.array([3.0, 1.0, 2.0, -1.0, 5.0], np.float32)
    guard = ir.Logical(op=ir.LogicalKind.AND, type=BOOL,
                       lhs=binop(B.LT, local("j"), param("n", I32)),
                       rhs=binop(B.GT, load("x", F32, local("j")), const(0.0, F32)))
    k = kernel([assign("j", const(0)),
                ir.While(cond=guard, body=(assign("j", binop(B.ADD, local("j"), const(1))),)),
                store("out", local("j"))],
               params=[scalar("n", I32), array("x", F32, access=ir.Access.READ),
                       array("out", I32, access=ir.Access.WRITE)], locals={"j": I32})
    for n, want in ((5, 3), (2, 2), (0, 0)):
        out = run(device, k, 1, {"x": x, "out": np.zeros(1, np.int32)}, {"n": n})["out"]
        assert out[0] == want


def test_ifexp_and_or(device):
    # out = (a / b if b != 0 else -1.0) if (a > 0 or b > 0) else 0.0
    a = np.array([1.0, -1.0, 0.0, 3.0, -2.0], np.float32)
    b = np.array([2.0, 4.0, 0.0, 0.0, -1.0], np.float32)
    x, y, zero = load("a", F32, gid()), load("b", F32, gid()), const(0.0, F32)
    inner = ir.IfExp(cond=binop(B.NE, y, zero), then=binop(B.DIV, x, y),
                     orelse=const(-1.0, F32), type=F32)
    cond = ir.Logical(op=ir.LogicalKind.OR, type=BOOL, lhs=binop(B.GT, x, zero),
                      rhs=binop(B.GT, y, zero))
    k = kernel([store("out", ir.IfExp(cond=cond, then=inner, orelse=zero, type=F32))],
               params=[array("a", F32, access=ir.Access.READ),
                       array("b", F32, access=ir.Access.READ),
                       array("out", F32, access=ir.Access.WRITE)])
    got = run(device, k, a.size, {"a": a, "b": b, "out": np.zeros_like(a)})["out"]
    want = [(p / q if q != 0 else -1.0) if (p > 0 or q > 0) else 0.0
            for p, q in zip(a, b, strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_grid_mask_skips_the_tail(device):
    k = kernel([store("out", const(1))], params=[array("out", I32, access=ir.Access.WRITE)])
    out = run(device, k, 70, {"out": np.zeros(128, np.int32)})["out"]
    assert out[:70].all() and not out[70:].any()


# ---------------------------------------------------------------- builtins and the block


def test_builtins_across_split_dispatches(device):
    # 2 * 70,000 invocations need more than lavapipe's 65,535 workgroups: the runtime splits
    # the launch and passes each dispatch's base, which ids must include
    n, wg = 140_003, 2
    kinds = [ir.BuiltinKind.GLOBAL_ID, ir.BuiltinKind.LOCAL_ID, ir.BuiltinKind.GROUP_ID,
             ir.BuiltinKind.GROUP_SIZE, ir.BuiltinKind.NUM_GROUPS, ir.BuiltinKind.GRID]
    body = [store(kd.value, builtin(kd, 0)) for kd in kinds]
    k = kernel(body, workgroup=(wg, 1, 1),
               params=[array(kd.value, I32, access=ir.Access.WRITE) for kd in kinds])
    out = run(device, k, n, {kd.value: np.full(n + 4, -1, np.int32) for kd in kinds})
    ids = np.arange(n)
    np.testing.assert_array_equal(out["global_id"][:n], ids)
    np.testing.assert_array_equal(out["local_id"][:n], ids % wg)
    np.testing.assert_array_equal(out["group_id"][:n], ids // wg)
    assert (out["group_size"][:n] == wg).all()
    assert (out["num_groups"][:n] == math.ceil(n / wg)).all()
    assert (out["grid"][:n] == n).all()
    assert (out["global_id"][n:] == -1).all()


def test_2d_grid_and_strided_arrays(device):
    x = np.arange(6 * 5, dtype=np.float32).reshape(6, 5)
    k = kernel([store("y", binop(B.ADD, load("x", F32, gid(1), gid(0)),
                                 cast(ir.ArrayDim(array="x", axis=1, type=I32), F32)),
                      gid(0), gid(1))],
               workgroup=(4, 4, 1),
               params=[array("x", F32, 2, ir.Access.READ), array("y", F32, 2, ir.Access.WRITE)])
    out = run(device, k, (5, 6), {"x": x, "y": np.zeros((5, 6), np.float32)})
    np.testing.assert_array_equal(out["y"], x.T + 5)


def test_uniform_argument_block(device):
    # three 4-D arrays make the block 144 bytes: too big for 128 bytes of push constants
    params = [array(f"a{j}", F32, 4, ir.Access.READ) for j in range(3)]
    z = const(0)
    value = binop(B.ADD, load("a2", F32, gid(), z, z, z), param("bias", F32))
    k = kernel([store("out", value)],
               params=[*params, scalar("bias", F32), array("out", F32, access=ir.Access.WRITE)])
    module = lower(k)
    assert module.layout.block == "uniform"
    arrays = {f"a{j}": np.full((4, 1, 1, 1), j, np.float32) for j in range(3)}
    arrays["a2"] = np.arange(4, dtype=np.float32).reshape(4, 1, 1, 1)
    out = run(device, k, 4, {**arrays, "out": np.zeros(4, np.float32)}, {"bias": 0.5})["out"]
    np.testing.assert_array_equal(out, np.arange(4) + 0.5)


def test_scalar_parameters_of_every_32_bit_kind(device):
    expr = binop(B.ADD, cast(param("i", I32), F32),
                 binop(B.ADD, cast(param("u", U32), F32),
                       binop(B.ADD, param("f", F32), cast(param("b", BOOL), F32))))
    k = kernel([store("out", expr)], params=[
        scalar("i", I32), scalar("u", U32), scalar("f", F32), scalar("b", BOOL),
        array("out", F32, access=ir.Access.WRITE)])
    out = run(device, k, 1, {"out": np.zeros(1, np.float32)},
              {"i": -5, "u": 7, "f": 0.25, "b": True})["out"]
    assert out[0] == -5 + 7 + 0.25 + 1
