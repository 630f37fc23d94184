"""The frontend's IR for the constructs beyond the basics (device functions, shared and local
arrays, atomics, subgroups, asserts): checked structurally here, by running kernels elsewhere."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk
from pykern import ir
from pykern.frontend import load_source, signature, translate, verify

F = np.zeros(4, np.float32)
I = np.zeros(4, np.int32)


def ir_of(fn, *args, debug=False):
    k = pk.kernel(fn, debug=debug) if debug else pk.kernel(fn)
    kernel_ir = k.ir(*args)
    verify(kernel_ir)
    return kernel_ir


walk = ir.walk


@pk.func
def sq(x):
    return x * x


@pk.func
def hyp(a, b):
    return pk.sqrt(sq(a) + sq(b))


@pk.func
def clamp_store(out, i, v):
    if v < 0.0:
        out[i] = 0.0
        return
    out[i] = v


def test_device_functions_are_specialised_per_argument_types():
    def k(x: pk.f32[:], n: pk.i32[:]):
        i = pk.global_id(0)
        x[i] = hyp(x[i], 2.0)
        n[i] = sq(n[i])

    kir = ir_of(k, F, I)
    names = [f.name for f in kir.functions]
    assert len(names) == 3  # sq for f32, hyp, sq for i32; callees first
    assert [f.return_type for f in kir.functions] == [pk.f32, pk.f32, pk.i32]
    assert kir.functions.index(next(f for f in kir.functions if f.name.startswith("hyp"))) == 1


def test_device_function_writing_a_callers_array():
    def k(x: pk.f32[:]):
        i = pk.global_id(0)
        clamp_store(x, i, x[i] - 1.0)

    kir = ir_of(k, F)
    (f,) = kir.functions
    assert f.return_type is None
    stores = [n for n in walk(f) if isinstance(n, ir.Store)]
    assert {s.array for s in stores} == {"x"}
    assert kir.param("x").access == ir.Access.READ_WRITE


@pk.func
def ping(n):
    return pong(n - 1) if n > 0 else 0


@pk.func
def pong(n):
    return ping(n - 1)


def test_recursion_is_an_error_naming_the_cycle():
    def k(x: pk.i32[:]):
        x[0] = ping(x[0])

    with pytest.raises(pk.CompileError, match="recursion.*ping -> .*pong -> .*ping"):
        pk.kernel(k).ir(I)


def test_function_with_inconsistent_return_types():
    @pk.func
    def bad(x):
        if x > 0:
            return 1
        return 1.5 * x

    def k(x: pk.f32[:]):
        x[0] = bad(x[0])

    with pytest.raises(pk.KernelTypeError, match="returns i32 elsewhere, f32 here"):
        pk.kernel(k).ir(F)


def test_shared_and_local_arrays_and_barrier():
    def k(x: pk.f32[:]):
        tile = pk.shared(pk.f32, (8, 8))
        acc = pk.local(pk.i32, 4)
        i = pk.local_id(0)
        tile[i, 0] = x[pk.global_id(0)]
        acc[0] = len(acc) + tile.shape[1]
        pk.barrier()
        x[pk.global_id(0)] = tile[7 - i, 0] + acc[0]

    kir = ir_of(k, F)
    assert [(a.name, a.shape, a.space) for a in kir.arrays] == [
        ("tile", (8, 8), ir.MemorySpace.SHARED), ("acc", (4,), ir.MemorySpace.LOCAL)]
    assert any(isinstance(n, ir.Barrier) for s in kir.body for n in walk(s))
    # the shape of a declared array is a constant
    assert not any(isinstance(n, ir.ArrayDim) for s in kir.body for n in walk(s))


def test_atomics_and_statement_position():
    def k(counts: pk.i32[:], total: pk.f32[:], x: pk.f32[:]):
        i = pk.global_id(0)
        pk.atomic_add(counts, i % 4, 1)
        old = pk.atomic_cas(counts, 0, 5, 6)
        pk.atomic_add(total, 0, x[i] + old)

    kir = ir_of(k, I, F, F)
    atomics = [n for s in kir.body for n in walk(s) if isinstance(n, ir.Atomic)]
    assert [a.op for a in atomics] == [ir.AtomicOp.ADD, ir.AtomicOp.CAS, ir.AtomicOp.ADD]
    assert kir.param("counts").access == ir.Access.READ_WRITE


def test_atomic_on_unsupported_dtype():
    def k(x: pk.f32[:]):
        pk.atomic_and_(x, 0, 1.0)

    with pytest.raises(pk.KernelTypeError, match="not supported on f32 arrays"):
        pk.kernel(k).ir(F)


def test_subgroup_operations_types():
    def k(x: pk.f32[:], n: pk.i32[:]):
        i = pk.global_id(0)
        x[i] = pk.subgroup_add(x[i]) + pk.subgroup_shuffle_xor(x[i], 1)
        n[i] = pk.subgroup_lane() + pk.subgroup_size() + int(pk.subgroup_any(x[i] > 0.0))

    kir = ir_of(k, F, I)
    ops = {n.op: n.type for s in kir.body for n in walk(s) if isinstance(n, ir.Subgroup)}
    assert ops[ir.SubgroupOp.ADD] == pk.f32 and ops[ir.SubgroupOp.ANY] == pk.bool_
    assert ops[ir.SubgroupOp.LANE] == pk.i32


def test_math_names_python_versus_pykern():
    def k(x: pk.f32[:], n: pk.i32[:]):
        i = pk.global_id(0)
        n[i] = math.floor(x[i]) + round(x[i])  # Python's: ints
        x[i] = pk.floor(x[i]) + pk.clamp(x[i], 0.0, 1.0) + pk.select(x[i] > 0.0, 1.0, 2.0)
        x[i] += math.atan2(x[i], 2.0) + pk.erf(x[i]) + pk.fma(x[i], 2.0, 1.0)
        n[i] += int(pk.isnan(x[i]))

    kir = ir_of(k, F, I)
    fns = {n.fn for s in kir.body for n in walk(s) if isinstance(n, ir.MathCall)}
    assert {ir.MathFn.FLOOR, ir.MathFn.ROUND, ir.MathFn.ATAN2, ir.MathFn.ERF, ir.MathFn.FMA,
            ir.MathFn.ISNAN} <= fns


def test_asserts_only_in_debug_mode():
    def k(x: pk.f32[:]):
        assert x[0] >= 0.0, "x must be positive"

    assert not any(isinstance(n, ir.Assert) for s in ir_of(k, F).body for n in walk(s))
    asserts = [n for s in ir_of(k, F, debug=True).body for n in walk(s)
               if isinstance(n, ir.Assert)]
    assert [a.message for a in asserts] == ["x must be positive"]


def test_generic_array_and_constexpr_parameters():
    def k(x: pk.Array, n: pk.constexpr):
        for j in range(n):
            x[pk.global_id(0)] += j

    src = load_source(k)
    assert signature(k) == {"x": pk.Array, "n": pk.constexpr}
    kir = translate(src, {"x": pk.i32[:]}, (64, 1, 1), {"n": 3})
    assert [p.name for p in kir.params] == ["x"]
    fors = [n for s in kir.body for n in walk(s) if isinstance(n, ir.ForRange)]
    assert isinstance(fors[0].stop, ir.Const) and fors[0].stop.value == 3


def test_code_after_a_compile_time_branch_that_returns_is_not_translated():
    @pk.func
    def pick(op, x):
        if op == "neg":
            return -x
        elif op == "twice":
            return x * 2.0
        return x > 0.0  # a bool: would clash with the f32 returns, but never runs for these ops

    def k(x: pk.f32[:], op: pk.constexpr):
        x[0] = pick(op, x[0])

    src = load_source(k)
    kir = translate(src, {"x": pk.f32[:]}, (64, 1, 1), {"op": "neg"})
    assert kir.functions[0].return_type == pk.f32


def test_the_printed_ir_names_scalar_parameters_by_pykern_dtype():
    """`kernel.ir(...)` prints `a: f32` for a scalar parameter, as for arrays (`x: f32[:]`),
    not numpy's name for it."""
    @pk.kernel
    def axpy(a: pk.f32, n: pk.i64, x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        if i < n:
            out[i] = a * x[i]

    x = np.ones(4, np.float32)
    first = str(axpy.ir(2.0, 4, x, x)).splitlines()[0]
    assert first.startswith("kernel axpy(a: f32, n: i64, x: f32[:] (read), out: f32[:] (write))")
