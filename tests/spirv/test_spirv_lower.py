"""Lowering of hand-built IR: every node, operator, cast and control-flow shape passes spirv-val
(`lower` validates every module it returns) and has the instructions its semantics call for."""

from __future__ import annotations

import re

import pytest
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
from pykern.runtime.feature import Feature
from pykern.spirv import SpirvModule, Target, disassemble, lower
from pykern.spirv.target import ALL_FEATURES, MATH_WITHOUT_F64

PRESERVE_INF_NAN = Feature.SIGNED_ZERO_INF_NAN_PRESERVE

DEFAULT = Target()
MAIN_DTYPES = (I32, U32, F32, BOOL)
OTHER_DTYPES = (dt.i8, dt.i16, dt.i64, dt.u8, dt.u16, dt.u64, dt.f16, dt.f64)

INTS, FLOATS, BOOLS = "iu", "f", "b"
# which operand kinds each operator takes (ir.BinOpKind docstrings and the frontend's rules)
BINOP_KINDS = {
    B.ADD: INTS + FLOATS, B.SUB: INTS + FLOATS, B.MUL: INTS + FLOATS, B.DIV: FLOATS,
    B.FLOORDIV: INTS + FLOATS, B.MOD: INTS + FLOATS, B.POW: INTS + FLOATS,
    B.BIT_AND: INTS + BOOLS, B.BIT_OR: INTS + BOOLS, B.BIT_XOR: INTS + BOOLS,
    B.LSHIFT: INTS, B.RSHIFT: INTS, B.MIN: INTS + FLOATS + BOOLS, B.MAX: INTS + FLOATS + BOOLS,
    **{op: INTS + FLOATS + BOOLS for op in (B.EQ, B.NE, B.LT, B.LE, B.GT, B.GE)},
}
UNOP_KINDS = {U.NEG: INTS + FLOATS, U.NOT: BOOLS, U.INVERT: INTS, U.ABS: INTS + FLOATS}


def compile_ok(k: ir.Kernel, target: Target = DEFAULT) -> tuple[SpirvModule, str]:
    module = lower(k, target)  # raises SpirvValidationError if spirv-val disagrees
    return module, disassemble(module.words)


def binop_kernel(op: ir.BinOpKind, dtype: dt.DType) -> ir.Kernel:
    expr = binop(op, param("a", dtype), param("b", dtype))
    return kernel([store("out", expr)], params=[
        scalar("a", dtype), scalar("b", dtype), array("out", expr.type, access=ir.Access.WRITE)])


def cases(kinds: dict, dtypes: tuple[dt.DType, ...]) -> list:
    return [pytest.param(op, d, id=f"{op.name}-{d.name}")
            for op, ks in kinds.items() for d in dtypes if d.kind in ks]


def no_undefined_signed_division(asm: str) -> None:
    # Vulkan leaves OpSRem/OpSMod undefined for negative operands; Python semantics are built
    # from unsigned division instead
    for op in ("OpSDiv", "OpSRem", "OpSMod", "OpFRem", "OpFMod"):
        assert op not in asm


# ---------------------------------------------------------------- operators


@pytest.mark.parametrize(("op", "dtype"), cases(BINOP_KINDS, MAIN_DTYPES))
def test_binop(op, dtype):
    _, asm = compile_ok(binop_kernel(op, dtype))
    no_undefined_signed_division(asm)


@pytest.mark.parametrize(("op", "dtype"),
                         [c for c in cases(BINOP_KINDS, OTHER_DTYPES)
                          if c.values != (B.POW, dt.f64)])
def test_binop_other_widths(op, dtype):
    compile_ok(binop_kernel(op, dtype))


@pytest.mark.parametrize(("op", "dtype"), cases(UNOP_KINDS, MAIN_DTYPES + OTHER_DTYPES))
def test_unop(op, dtype):
    expr = unop(op, param("a", dtype))
    compile_ok(kernel([store("out", expr)], params=[
        scalar("a", dtype), array("out", dtype, access=ir.Access.WRITE)]))


@pytest.mark.parametrize("op", [B.ADD, B.SUB, B.MUL, B.FLOORDIV, B.MOD, B.POW])
def test_float_arithmetic_is_never_contracted(op):
    _, asm = compile_ok(binop_kernel(op, F32))
    results = re.findall(r"(%\w+) = Op(?:FAdd|FSub|FMul) ", asm)
    assert results
    for r in results:
        assert f"OpDecorate {r} NoContraction" in asm


@pytest.mark.parametrize(("op", "instruction"), [
    (B.EQ, "OpFOrdEqual"), (B.NE, "OpFUnordNotEqual"), (B.LT, "OpFOrdLessThan"),
    (B.LE, "OpFOrdLessThanEqual"), (B.GT, "OpFOrdGreaterThan"),
    (B.GE, "OpFOrdGreaterThanEqual"), (B.MIN, "OpFOrdLessThan"), (B.MAX, "OpFOrdGreaterThan"),
    (B.DIV, "OpFDiv"),
])
def test_float_instruction_choice(op, instruction):
    assert instruction in compile_ok(binop_kernel(op, F32))[1]


@pytest.mark.parametrize("op", [B.MIN, B.MAX])
def test_float_min_max_test_nan_on_the_bits(op):
    # numpy's rule (a NaN operand wins) on integer tests: GLSL FMin/NMin leave NaN undefined
    # or drop it, and OpIsNan may be folded by a fast-math driver
    asm = compile_ok(binop_kernel(op, F32))[1]
    assert not re.search(r"\b[FN]M(in|ax)\b|OpIsNan", asm)
    assert "OpBitcast" in asm and "OpUGreaterThan" in asm and "OpSelect" in asm


@pytest.mark.parametrize(("op", "dtype", "instruction"), [
    (B.RSHIFT, I32, "OpShiftRightArithmetic"), (B.RSHIFT, U32, "OpShiftRightLogical"),
    (B.LT, I32, "OpSLessThan"), (B.LT, U32, "OpULessThan"), (B.MIN, I32, "OpSLessThan"),
    (B.MIN, U32, "OpULessThan"), (B.FLOORDIV, U32, "OpUDiv"), (B.MOD, U32, "OpUMod"),
    (B.BIT_XOR, BOOL, "OpLogicalNotEqual"), (B.BIT_AND, BOOL, "OpLogicalAnd"),
    (B.POW, I32, "OpLoopMerge"),
])
def test_int_and_bool_instruction_choice(op, dtype, instruction):
    assert instruction in compile_ok(binop_kernel(op, dtype))[1]


@pytest.mark.parametrize("op", [B.MIN, B.MAX])
@pytest.mark.parametrize("dtype", [I32, U32], ids=lambda d: d.name)
def test_int_min_max_are_a_compare_and_a_select(op, dtype):
    # NVIDIA folded GLSL's SMax nested in another with a shared operand into its first operand
    asm = compile_ok(binop_kernel(op, dtype))[1]
    assert not re.search(r"[SU]M(in|ax)", asm) and "OpSelect" in asm


def test_float_square_is_a_multiply():
    expr = binop(B.POW, param("a", F32), const(2.0, F32))
    _, asm = compile_ok(kernel([store("out", expr)], params=[
        scalar("a", F32), array("out", F32, access=ir.Access.WRITE)]))
    assert "Pow" not in asm and "OpFMul" in asm


# ---------------------------------------------------------------- casts


@pytest.mark.parametrize("source", MAIN_DTYPES + OTHER_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("target", MAIN_DTYPES + OTHER_DTYPES, ids=lambda d: d.name)
def test_cast(source, target):
    compile_ok(kernel([store("out", cast(param("a", source), target))], params=[
        scalar("a", source), array("out", target, access=ir.Access.WRITE)]))


@pytest.mark.parametrize(("source", "target", "instruction"), [
    (F32, I32, "OpConvertFToS"), (F32, U32, "OpConvertFToU"), (I32, F32, "OpConvertSToF"),
    (U32, F32, "OpConvertUToF"), (I32, U32, "OpBitcast"), (U32, I32, "OpBitcast"),
    (dt.i8, I32, "OpSConvert"), (dt.u8, I32, "OpUConvert"), (F32, dt.f64, "OpFConvert"),
    (BOOL, F32, "OpSelect"), (I32, BOOL, "OpSLessThan"), (F32, BOOL, "OpFUnordNotEqual"),
])
def test_cast_instruction(source, target, instruction):
    _, asm = compile_ok(kernel([store("out", cast(param("a", source), target))], params=[
        scalar("a", source), array("out", target, access=ir.Access.WRITE)]))
    assert instruction in asm


# ---------------------------------------------------------------- other expressions


@pytest.mark.parametrize("fn", list(ir.MathFn), ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", [F32, dt.f16, dt.f64], ids=lambda d: d.name)
def test_math(fn, dtype):
    args = tuple(param(n, dtype) for n in "abc"[:fn.arity])
    result = BOOL if fn.is_predicate else dtype
    call = ir.MathCall(fn=fn, args=args, type=result)
    k = kernel([store("out", call)], params=[
        *(scalar(n, dtype) for n in "abc"), array("out", result, access=ir.Access.WRITE)])
    if dtype == dt.f64 and fn in MATH_WITHOUT_F64:  # pykern.passes.decompose rewrites these
        assert not DEFAULT.lowers_math(fn, dtype)
        with pytest.raises(AssertionError, match="f64"):
            lower(k)
    else:
        compile_ok(k)


def test_f64_math_lacking_in_glsl_is_an_internal_error_left_to_the_decomposition():
    call = ir.MathCall(fn=ir.MathFn.EXP, args=(param("a", dt.f64),), type=dt.f64)
    with pytest.raises(AssertionError, match="exp on f64 reached the backend"):
        lower(kernel([store("out", call)], params=[
            scalar("a", dt.f64), array("out", dt.f64, access=ir.Access.WRITE)]))
    sqrt = ir.MathCall(fn=ir.MathFn.SQRT, args=(param("a", dt.f64),), type=dt.f64)
    compile_ok(kernel([store("out", sqrt)], params=[
        scalar("a", dt.f64), array("out", dt.f64, access=ir.Access.WRITE)]))


@pytest.mark.parametrize("kind", list(ir.BuiltinKind), ids=lambda k: k.name)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_builtin(kind, dim):
    compile_ok(kernel([store("out", builtin(kind, dim))], workgroup=(4, 2, 2), params=[
        array("out", I32, access=ir.Access.WRITE)]))


def test_builtins_share_their_input_variable():
    body = [store("out", binop(B.ADD, builtin(ir.BuiltinKind.LOCAL_ID, d),
                               builtin(ir.BuiltinKind.LOCAL_ID, 1 - d))) for d in (0, 1)]
    _, asm = compile_ok(kernel(body, params=[array("out", I32, access=ir.Access.WRITE)]))
    assert asm.count("BuiltIn LocalInvocationId") == 1
    assert asm.count("BuiltIn GlobalInvocationId") == 1


def test_group_size_is_a_constant_and_local_size_is_the_workgroup():
    _, asm = compile_ok(kernel([store("out", builtin(ir.BuiltinKind.GROUP_SIZE, 1))],
                               workgroup=(8, 4, 2),
                               params=[array("out", I32, access=ir.Access.WRITE)]))
    assert "OpExecutionMode %k LocalSize 8 4 2" in asm


def test_multi_dimensional_arrays_and_shapes():
    x = load("x", F32, gid(0), gid(1), const(0))
    dims = binop(B.ADD, ir.ArrayDim(array="x", axis=2, type=I32),
                 ir.ArrayDim(array="x", axis=0, type=I32))
    body = [store("y", binop(B.ADD, x, cast(dims, F32)), gid(1), gid(0))]
    module, asm = compile_ok(kernel(body, params=[
        array("x", F32, 3, ir.Access.READ), array("y", F32, 2, ir.Access.WRITE)]))
    assert [f.name for f in module.layout.fields if f.name.startswith("x.")] == [
        "x.offset", "x.shape0", "x.shape1", "x.shape2", "x.stride0", "x.stride1", "x.stride2"]


def test_bool_arrays_are_bytes():
    flip = unop(U.NOT, load("m", BOOL, gid()))
    module, asm = compile_ok(kernel([store("m", flip)], params=[array("m", BOOL)]))
    assert "ArrayStride 1" in asm and "OpTypeInt 8 0" in asm
    assert "OpCapability StorageBuffer8BitAccess" in asm
    assert "OpCapability Int8" not in asm  # only loaded, widened and stored: no 8-bit math
    assert module.required_features == {"storage8"}


def test_bool_scalar_parameter_travels_as_u32():
    module, asm = compile_ok(kernel([store("out", param("flag", BOOL))], params=[
        scalar("flag", BOOL), array("out", BOOL, access=ir.Access.WRITE)]))
    assert [f.fmt for f in module.layout.fields if f.name == "flag"] == ["I"]
    assert "OpINotEqual" in asm


def test_logical_short_circuits_through_branches():
    n = param("n", I32)
    guarded = ir.Logical(op=ir.LogicalKind.AND, type=BOOL, lhs=binop(B.LT, gid(), n),
                         rhs=binop(B.GT, load("x", F32, gid()), const(0.0, F32)))
    either = ir.Logical(op=ir.LogicalKind.OR, type=BOOL, lhs=guarded,
                        rhs=binop(B.EQ, n, const(3)))
    _, asm = compile_ok(kernel([store("out", either)], params=[
        scalar("n", I32), array("x", F32, access=ir.Access.READ),
        array("out", BOOL, access=ir.Access.WRITE)]))
    assert asm.count("OpSelectionMerge") == 3 + 2  # grid mask, then one per Logical
    loads = asm.index("OpLoad %float")
    assert asm.rindex("OpBranchConditional", 0, loads) > asm.index("OpSLessThan")


def test_ifexp_evaluates_one_side():
    pick = ir.IfExp(cond=binop(B.GT, param("a", F32), const(0.0, F32)), type=F32,
                    then=ir.MathCall(fn=ir.MathFn.SQRT, args=(param("a", F32),), type=F32),
                    orelse=unop(U.NEG, param("a", F32)))
    nested = ir.IfExp(cond=ir.Logical(op=ir.LogicalKind.OR, type=BOOL,
                                      lhs=param("c", BOOL), rhs=unop(U.NOT, param("c", BOOL))),
                      then=pick, orelse=const(1.0, F32), type=F32)
    _, asm = compile_ok(kernel([store("out", nested)], params=[
        scalar("a", F32), scalar("c", BOOL), array("out", F32, access=ir.Access.WRITE)]))
    sqrt = asm.index("Sqrt")
    assert asm.rindex("OpLabel", 0, sqrt) > asm.index("OpSelectionMerge", asm.index("OpFOrd"))


# ---------------------------------------------------------------- statements


def counting_loop(body, start=None, stop=None, step=None, var="i"):
    """`for var in range(start, stop, step)`, by default range(0, 10, 1)."""
    return ir.ForRange(var=var, start=start or const(0), stop=stop or const(10),
                       step=step or const(1), body=tuple(body))


def total_kernel(body, params=(), **locals_):
    params = [array("out", I32, access=ir.Access.WRITE), *params]
    locs = {"i": I32, "j": I32, "total": I32, **locals_}
    return kernel([assign("total", const(0)), *body, store("out", local("total"))],
                  params=params, locals=locs)


def add_total(value=None):
    return assign("total", binop(B.ADD, local("total"), value or local("i")))


def test_for_range_constant_and_runtime_steps():
    loops = [
        counting_loop([add_total()]),
        counting_loop([add_total()], start=const(10), stop=const(-3), step=const(-2)),
        counting_loop([add_total()], start=param("a", I32), stop=param("b", I32),
                      step=param("s", I32)),
    ]
    _, asm = compile_ok(total_kernel(loops, params=[scalar(n, I32) for n in "abs"]))
    assert asm.count("OpLoopMerge") == 3
    no_undefined_signed_division(asm)


def test_for_range_over_unsigned_and_wide_ints():
    for dtype in (U32, dt.i64, dt.u8):
        loop = ir.ForRange(var="v", start=const(1, dtype), stop=param("n", dtype),
                           step=param("s", dtype), body=(add_total(cast(local("v", dtype), I32)),))
        compile_ok(total_kernel([loop], params=[scalar("n", dtype), scalar("s", dtype)],
                                v=dtype))


def test_loop_with_break_continue_and_return():
    odd = binop(B.EQ, binop(B.MOD, local("i"), const(2)), const(1))
    body = [
        ir.If(cond=odd, body=(ir.Continue(),)),
        ir.If(cond=binop(B.GT, local("i"), const(6)), body=(ir.Break(),)),
        ir.If(cond=binop(B.EQ, local("i"), param("a", I32)), body=(ir.Return(),)),
        add_total(),
    ]
    compile_ok(total_kernel([counting_loop(body)], params=[scalar("a", I32)]))


def test_nested_loops_break_the_inner_one():
    inner = counting_loop([ir.If(cond=binop(B.GT, local("j"), local("i")), body=(ir.Break(),)),
                           add_total(local("j"))], var="j")
    _, asm = compile_ok(total_kernel([counting_loop([inner])]))
    assert asm.count("OpLoopMerge") == 2


def test_while_with_logical_condition_and_int_pow_inside():
    cond = ir.Logical(op=ir.LogicalKind.AND, type=BOOL,
                      lhs=binop(B.LT, local("total"), const(1000)),
                      rhs=binop(B.NE, binop(B.POW, local("i"), const(3)), const(27)))
    body = [add_total(const(7)), assign("i", binop(B.ADD, local("i"), const(1)))]
    compile_ok(total_kernel([assign("i", const(0)), ir.While(cond=cond, body=tuple(body))]))


def test_while_true_left_only_by_break():
    body = (add_total(const(1)),
            ir.If(cond=binop(B.GE, local("total"), const(5)), body=(ir.Break(),)))
    compile_ok(total_kernel([ir.While(cond=const(True, BOOL), body=body)]))


def test_loop_body_that_always_returns():
    compile_ok(total_kernel([counting_loop([add_total(), ir.Return()])]))


def test_dead_code_after_terminators_is_dropped():
    both_return = ir.If(cond=binop(B.GT, param("a", I32), const(0)),
                        body=(ir.Return(), add_total()), orelse=(ir.Return(),))
    _, asm = compile_ok(total_kernel([both_return, add_total(), ir.Return(), add_total()],
                                     params=[scalar("a", I32)]))
    assert "OpUnreachable" in asm  # the merge block nobody reaches
    assert "%out" not in asm  # the final store is dead: the buffer is never even declared


def test_nested_ifs_with_else_branches():
    a = param("a", I32)
    inner = ir.If(cond=binop(B.LT, a, const(5)), body=(assign("total", const(1)),),
                  orelse=(assign("total", const(2)),))
    outer = ir.If(cond=binop(B.LT, a, const(10)), body=(inner,),
                  orelse=(ir.If(cond=binop(B.EQ, a, const(20)), body=(ir.Return(),)),))
    compile_ok(total_kernel([outer], params=[scalar("a", I32)]))


def test_for_variable_assigned_in_body():
    body = [assign("i", binop(B.MUL, local("i"), const(100))), add_total()]
    compile_ok(total_kernel([counting_loop(body)]))


# ---------------------------------------------------------------- module-level properties


def test_buffers_interface_and_access_decorations():
    body = [store("w", load("r", F32, gid()))]
    module, asm = compile_ok(kernel(body, params=[
        array("r", F32, access=ir.Access.READ), array("unused", F32, access=ir.Access.NONE),
        array("w", F32, access=ir.Access.WRITE)]))
    assert "OpDecorate %r NonWritable" in asm and "OpDecorate %w NonReadable" in asm
    assert "OpDecorate %r Binding 0" in asm and "OpDecorate %w Binding 2" in asm
    assert "%unused" not in asm  # a binding in the layout, no variable in the module
    entry = next(line for line in asm.splitlines() if "OpEntryPoint" in line)
    for var in ("%GlobalInvocationId", "%args", "%r", "%w"):
        assert var in entry
    assert "OpVariable %_ptr_PushConstant_k_args PushConstant" in asm
    assert module.required_features == {PRESERVE_INF_NAN}  # optional: only if the device has it


def test_uniform_block_when_push_constants_are_too_small():
    params = [array(f"a{i}", F32, 4, ir.Access.READ) for i in range(3)]
    body = [store("out", load("a2", F32, gid(), gid(), gid(), gid()))]
    module, asm = compile_ok(kernel(body, params=[*params, array("out", F32)]))
    assert module.layout.block == "uniform" and module.layout.uniform_binding == 4
    assert "OpVariable %_ptr_Uniform_k_args Uniform" in asm
    assert "OpDecorate %args Binding 4" in asm and "OpDecorate %args DescriptorSet 0" in asm
    assert "OpDecorate %k_args Block" in asm
    small = lower(kernel(body, params=[*params, array("out", F32)]),
                  Target(max_push_constants_size=256))
    assert small.layout.block == "push_constant"


def test_block_offsets_are_the_layout_offsets():
    value = binop(B.ADD, cast(param("d", dt.f64), F32), cast(param("c", dt.i8), F32))
    module, asm = compile_ok(kernel([store("out", value)], params=[
        scalar("c", dt.i8), scalar("d", dt.f64), array("out", F32, access=ir.Access.WRITE)]))
    for index, f in enumerate(module.layout.fields):
        assert f"OpMemberDecorate %k_args {index} Offset {f.offset}\n" in asm
    # the i8 travels as an i32 (no 8-bit push constants needed) and is narrowed in the shader
    assert module.required_features == {"int8", "fp64", PRESERVE_INF_NAN}
    assert "OpCapability StoragePushConstant8" not in asm


def test_inf_nan_preservation_per_float_width_when_the_device_has_it():
    k = kernel([store("out", cast(param("h", dt.f16), F32))], params=[
        scalar("h", dt.f16), array("out", F32, access=ir.Access.WRITE)])
    _, asm = compile_ok(k)
    assert "OpExecutionMode %k SignedZeroInfNanPreserve 16" in asm
    assert "OpExecutionMode %k SignedZeroInfNanPreserve 32" in asm
    module, asm = compile_ok(k, Target(features=ALL_FEATURES - {PRESERVE_INF_NAN}))
    assert "SignedZeroInfNanPreserve" not in asm
    assert PRESERVE_INF_NAN not in module.required_features


def test_a_missing_device_feature_is_an_internal_error_not_a_user_one():
    # pykern.passes.required_features finds it first, on the IR; lowering anyway is a bug
    k = kernel([store("out", param("a", dt.f64))],
               params=[scalar("a", dt.f64), array("out", dt.f64, access=ir.Access.WRITE)])
    with pytest.raises(RuntimeError, match="fp64"):
        lower(k, Target(features=ALL_FEATURES - {Feature.FP64}))


def test_names_label_the_disassembly():
    _, asm = compile_ok(total_kernel([counting_loop([add_total()])]))
    for name in ('"total"', '"i"', '"i.k"', '"grid0"', '"out.stride0"'):
        assert name in asm


def test_f64_copysign_needs_no_64_bit_integers():
    # the f64 prelude uses copysign throughout: it must not cost the int64 feature
    call = ir.MathCall(fn=ir.MathFn.COPYSIGN, args=(param("a", dt.f64), param("b", dt.f64)),
                       type=dt.f64)
    module, asm = compile_ok(kernel([store("out", call)], params=[
        scalar("a", dt.f64), scalar("b", dt.f64), array("out", dt.f64, access=ir.Access.WRITE)]))
    assert Feature.INT64 not in module.required_features and "OpCapability Int64" not in asm
