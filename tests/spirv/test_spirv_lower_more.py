"""Lowering of the rest of the IR: select, declared arrays, atomics, subgroups, barriers and
device functions. Every module passes spirv-val (`lower` validates)."""

from __future__ import annotations

import pytest
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
    call,
    cast,
    const,
    declared,
    function,
    gid,
    kernel,
    load,
    local,
    param,
    scalar,
    store,
    subgroup,
    with_extras,
)

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.ir.verify import verify
from pykern.spirv import Target, disassemble, lower
from pykern.runtime.feature import Feature
from pykern.spirv.target import ALL_FEATURES

FLOAT32_ATOMIC_ADD = Feature.FLOAT32_ATOMIC_ADD

A, S = ir.AtomicOp, ir.SubgroupOp
NO_FLOAT_ATOMICS = Target(features=ALL_FEATURES - {FLOAT32_ATOMIC_ADD})


def compile_ok(k: ir.Kernel, target: Target | None = None) -> tuple[object, str]:
    verify(k)  # the hand-built IR keeps the frontend's contract
    module = lower(k, target or Target())
    return module, disassemble(module.words)


def test_select_evaluates_both_sides_without_branches():
    pick = ir.Select(cond=param("c", BOOL), then=param("a", F32), orelse=const(0.0, F32), type=F32)
    _, asm = compile_ok(kernel([store("out", pick)], params=[
        scalar("c", BOOL), scalar("a", F32), array("out", F32, access=ir.Access.WRITE)]))
    assert "OpSelect %float" in asm
    assert asm.count("OpSelectionMerge") == 3  # only the grid mask's


# ---------------------------------------------------------------- declared arrays


@pytest.mark.parametrize("space", list(ir.MemorySpace)[1:], ids=lambda s: s.name)
@pytest.mark.parametrize("dtype", [I32, U32, F32, BOOL, dt.f16, dt.i8], ids=lambda d: d.name)
def test_declared_arrays(space, dtype):
    tile = declared("tile", dtype, (4, 8), space)
    i = binop(B.MOD, gid(), const(4))
    body = [
        ir.Store(array="tile", indices=(i, const(3)), value=load("x", dtype, gid())),
        store("x", ir.ArrayLoad(array="tile", indices=(i, const(3)), type=dtype)),
    ]
    k = with_extras(kernel(body, params=[array("x", dtype)]), arrays=[tile])
    _, asm = compile_ok(k)
    storage = "Workgroup" if space == ir.MemorySpace.SHARED else "Private"
    assert f"%tile = OpVariable %_ptr_{storage}__arr_" in asm
    assert "OpTypeArray" in asm and "%uint_32" in asm  # 4 * 8 elements, row-major
    assert "%tile" in next(line for line in asm.splitlines() if "OpEntryPoint" in line)


def test_shared_memory_with_barrier():
    tile = declared("tile", F32, (64,))
    lid = ir.Builtin(kind=ir.BuiltinKind.LOCAL_ID, dim=0, type=I32)
    body = [
        ir.Store(array="tile", indices=(lid,), value=load("x", F32, gid())),
        ir.Barrier(),
        store("x", ir.ArrayLoad(array="tile", indices=(binop(B.SUB, const(63), lid),), type=F32)),
    ]
    _, asm = compile_ok(with_extras(kernel(body, params=[array("x", F32)]), arrays=[tile]))
    # execution and memory scope Workgroup (2); AcquireRelease|UniformMemory|WorkgroupMemory
    assert "OpControlBarrier %uint_2 %uint_2 %uint_328" in asm


# ---------------------------------------------------------------- atomics


INT_ATOMICS = [A.ADD, A.SUB, A.MIN, A.MAX, A.AND, A.OR, A.XOR, A.EXCHANGE, A.CAS]
FLOAT_ATOMICS = [A.ADD, A.SUB, A.MIN, A.MAX, A.EXCHANGE, A.CAS]


def atomic_kernel(op: ir.AtomicOp, dtype: dt.DType, shared: bool = False) -> ir.Kernel:
    target = "tile" if shared else "x"
    comparator = const(0, dtype) if op == A.CAS else None
    old = atomic(op, target, dtype, const(0), load("v", dtype, gid()), comparator)
    body = [store("v", old)]
    if shared:
        body.append(store("v", ir.ArrayLoad(array="tile", indices=(const(0),), type=dtype)))
    k = kernel(body, params=[array("x", dtype), array("v", dtype)])
    return with_extras(k, arrays=[declared("tile", dtype, (16,))] if shared else [])


@pytest.mark.parametrize("shared", [False, True], ids=["buffer", "shared"])
@pytest.mark.parametrize("dtype", [I32, U32, dt.i64], ids=lambda d: d.name)
@pytest.mark.parametrize("op", INT_ATOMICS, ids=lambda o: o.name)
def test_int_atomics(op, dtype, shared):
    _, asm = compile_ok(atomic_kernel(op, dtype, shared))
    assert "OpAtomic" in asm
    scope = "%uint_2" if shared else "%uint_1"  # Workgroup / Device
    assert f"{scope} %uint_0" in asm  # relaxed


@pytest.mark.parametrize("shared", [False, True], ids=["buffer", "shared"])
@pytest.mark.parametrize("target", [Target(), NO_FLOAT_ATOMICS], ids=["native", "cas"])
@pytest.mark.parametrize("op", FLOAT_ATOMICS, ids=lambda o: o.name)
def test_float_atomics(op, target, shared):
    module, asm = compile_ok(atomic_kernel(op, F32, shared), target)
    native = op == A.ADD and not shared and target == Target()
    assert ("OpAtomicFAddEXT" in asm) == native
    assert (FLOAT32_ATOMIC_ADD in module.required_features) == native
    if op in (A.ADD, A.SUB, A.MIN, A.MAX) and not native:
        assert "OpAtomicCompareExchange %uint" in asm and "OpLoopMerge" in asm
    if not native:  # the array of the atomics is kept as bits
        assert ("%tile = OpVariable %_ptr_Workgroup__arr_uint" in asm if shared
                else "%x = OpVariable %_ptr_StorageBuffer_x_u32" in asm)


def test_float_array_with_cas_atomics_is_stored_as_bits_everywhere():
    k = atomic_kernel(A.MAX, F32)
    _, asm = compile_ok(kernel([store("x", binop(B.ADD, load("x", F32, gid()), const(1.0, F32))),
                                *[s for s in k.body if not isinstance(s, ir.If)]],
                               params=k.params))
    # the plain load and store of x go through its bits too
    assert "%x = OpVariable %_ptr_StorageBuffer_x_u32" in asm
    assert "OpBitcast %float" in asm and "OpBitcast %uint" in asm


def test_8_bit_atomics_are_not_supported():
    with pytest.raises(NotImplementedError, match="8-bit"):
        lower(atomic_kernel(A.ADD, dt.i8))


# ---------------------------------------------------------------- subgroups


@pytest.mark.parametrize(("op", "dtype"), [
    (S.SIZE, None), (S.LANE, None),
    *((op, d) for op in (S.ADD, S.MIN, S.MAX, S.PREFIX_ADD) for d in (I32, U32, F32)),
    (S.ANY, BOOL), (S.ALL, BOOL),
    *((op, d) for op in (S.BROADCAST, S.SHUFFLE, S.SHUFFLE_XOR) for d in (I32, F32, BOOL)),
], ids=str)
def test_subgroup(op, dtype):
    if dtype is None:
        expr = subgroup(op)
    elif op in (S.BROADCAST, S.SHUFFLE, S.SHUFFLE_XOR):
        expr = subgroup(op, load("x", dtype, gid()), const(1))
    else:
        expr = subgroup(op, load("x", dtype, gid()))
    out = expr.type
    k = kernel([store("out", expr)], params=[array("x", dtype or I32, access=ir.Access.READ),
                                             array("out", out, access=ir.Access.WRITE)])
    module, asm = compile_ok(k)
    assert "OpCapability GroupNonUniform\n" in asm
    assert "subgroup_basic" in module.required_features


# ---------------------------------------------------------------- device functions


def test_device_functions_with_values_loops_and_early_returns():
    # def clamp_sum(n: i32, limit: f32) -> f32:
    #     s = 0.0
    #     for j in range(n):
    #         s += x[j]        (the caller's array, by name)
    #         if s > limit: return limit
    #     return s
    s = local("s", F32)
    clamp_sum = function("clamp_sum", {"n": I32, "limit": F32}, [
        assign("s", const(0.0, F32)),
        ir.ForRange(var="j", start=const(0), stop=local("n"), step=const(1), body=(
            assign("s", binop(B.ADD, s, load("x", F32, local("j")))),
            ir.If(cond=binop(B.GT, s, local("limit", F32)),
                  body=(ir.Return(value=local("limit", F32)),)),
        )),
        ir.Return(value=s),
    ], return_type=F32, locals={"s": F32, "j": I32})
    twice = function("twice", {"v": F32}, [
        ir.Return(value=binop(B.MUL, call(clamp_sum, const(4), local("v", F32)), const(2.0, F32)))
    ], return_type=F32)
    poke = function("poke", {"i": I32}, [store("x", const(1.0, F32), local("i"))])
    body = [ir.Eval(value=call(poke, gid())), store("out", call(twice, param("a", F32)))]
    k = kernel(body, params=[scalar("a", F32), array("x", F32),
                             array("out", F32, access=ir.Access.WRITE)])
    _, asm = compile_ok(with_extras(k, functions=[clamp_sum, twice, poke]))
    assert asm.count("OpFunctionCall") == 3 and asm.count("OpFunctionParameter") == 4
    assert "OpReturnValue" in asm


def test_void_function_falling_off_its_end_and_typed_one_that_cannot():
    nothing = function("nothing", {}, [])
    answer = function("answer", {"flag": BOOL}, [
        ir.If(cond=local("flag", BOOL), body=(ir.Return(value=const(1)),),
              orelse=(ir.Return(value=const(2)),))], return_type=I32)
    body = [ir.Eval(value=call(nothing)), store("out", call(answer, param("f", BOOL)))]
    k = kernel(body, params=[scalar("f", BOOL), array("out", I32, access=ir.Access.WRITE)])
    compile_ok(with_extras(k, functions=[nothing, answer]))


def test_function_using_shared_and_local_arrays_and_builtins():
    helper = function("helper", {}, [
        ir.Store(array="acc", indices=(const(0),), value=cast(gid(), F32)),
        ir.Store(array="tile", indices=(const(0),),
                 value=ir.ArrayLoad(array="acc", indices=(const(0),), type=F32)),
    ])
    k = kernel([ir.Eval(value=call(helper))], params=[])
    k = with_extras(k, functions=[helper],
                    arrays=[declared("acc", F32, (2,), ir.MemorySpace.LOCAL),
                            declared("tile", F32, (8,))])
    compile_ok(k)


# ---------------------------------------------------------------- debug mode


def debug_kernel() -> ir.Kernel:
    helper = function("helper", {"i": I32}, [
        ir.Assert(cond=binop(B.GE, local("i"), const(0)), message="i >= 0"),
        ir.Return(value=load("x", F32, local("i")))], return_type=F32)
    body = [
        ir.Store(array="tile", indices=(const(0),), value=call(helper, gid())),
        ir.Eval(value=atomic(A.ADD, "n", I32, const(0), const(1))),
        store("x", binop(B.ADD, load("x", F32, gid()),
                         ir.ArrayLoad(array="tile", indices=(const(0),), type=F32))),
        ir.Assert(cond=binop(B.LT, gid(), const(100)), message="small"),
    ]
    k = kernel(body, params=[array("x", F32), array("n", I32)])
    return with_extras(k, arrays=[declared("tile", F32, (4,))], functions=[helper])


def test_debug_mode_checks_every_access_and_assert():
    from dataclasses import replace
    module, asm = compile_ok(replace(debug_kernel(), debug=True))
    slots = module.layout.buffers
    assert [(b.name, b.binding) for b in slots] == [("x", 0), ("n", 1), ("__debug__", 2)]
    kinds = [(s.kind, s.array or s.message) for s in module.debug_sites]
    assert kinds == [("assert", "i >= 0"), ("index", "x"), ("index", "tile"), ("index", "n"),
                     ("index", "x"), ("index", "tile"), ("index", "x"), ("assert", "small")]
    assert "%__debug__ = OpVariable" in asm


def test_no_checks_without_debug_mode():
    module, asm = compile_ok(replace_asserts_away(debug_kernel()))
    assert module.debug_sites == () and "__debug__" not in asm
    assert [b.name for b in module.layout.buffers] == ["x", "n"]


def replace_asserts_away(k: ir.Kernel) -> ir.Kernel:
    from dataclasses import replace
    body = tuple(s for s in k.body if not isinstance(s, ir.Assert))
    functions = tuple(replace(f, body=tuple(s for s in f.body if not isinstance(s, ir.Assert)))
                      for f in k.functions)
    return replace(k, body=body, functions=functions)
