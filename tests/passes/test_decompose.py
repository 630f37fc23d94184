"""The decomposition pass: which calls it rewrites (what the target says it lacks), what it
adds to the kernel, and that the result is valid IR that needs nothing further."""

from __future__ import annotations

import pykern as pk
from pykern import frontend, ir
from pykern.passes import decompose
from pykern.passes.decompose import PRELUDE_PREFIX
from pykern.spirv import Target
from pykern.spirv.target import MATH_WITHOUT_F64


def translated(body) -> ir.Kernel:
    return frontend.translate(frontend.load_source(body), frontend.signature(body), (64, 1, 1))


def calls(kernel: ir.Kernel) -> list[str]:
    """The functions the kernel's body calls."""
    return [n.function for s in kernel.body for n in ir.walk(s) if isinstance(n, ir.Call)]


def math_calls(kernel: ir.Kernel) -> set[tuple[ir.MathFn, str]]:
    return {(n.fn, n.args[0].type.name) for n in ir.walk(kernel) if isinstance(n, ir.MathCall)}


class LacksNothing:
    def lowers_math(self, fn: ir.MathFn, dtype: pk.DType) -> bool:
        return True


def test_f64_math_becomes_prelude_calls_and_f32_math_stays():
    def body(x: pk.f64[:], y: pk.f32[:]):
        i = pk.global_id(0)
        x[i] = pk.exp(x[i]) + x[i] ** x[i] + pk.sqrt(x[i])
        y[i] = pk.exp(y[i])

    kernel = translated(body)
    out = decompose(kernel, Target())
    assert (ir.MathFn.EXP, "f32") in math_calls(out) and (ir.MathFn.SQRT, "f64") in math_calls(out)
    assert (ir.MathFn.EXP, "f64") not in math_calls(out)
    assert not any(isinstance(n, ir.BinOp) and n.op is ir.BinOpKind.POW for n in ir.walk(out))
    called = calls(out)
    assert len(called) == 2 and all(name.startswith(PRELUDE_PREFIX) for name in called)
    frontend.verify(out)  # callees before callers, every call names a function


def test_the_target_decides():
    def body(x: pk.f64[:]):
        x[0] = pk.sin(x[0])

    kernel = translated(body)
    assert decompose(kernel, LacksNothing()) is kernel  # nothing lacking: the kernel itself
    assert MATH_WITHOUT_F64 and not Target().lowers_math(ir.MathFn.SIN, pk.f64)


def test_the_result_needs_no_further_decomposition():
    def body(x: pk.f64[:]):
        i = pk.global_id(0)
        x[i] = pk.tan(x[i]) + pk.atan2(x[i], 2.0) + pk.erf(x[i]) + pk.cosh(x[i])

    once = decompose(translated(body), Target())
    assert decompose(once, Target()) is once  # the prelude uses only what the target has
    assert all(fn not in MATH_WITHOUT_F64 or dtype != "f64" for fn, dtype in math_calls(once))


def test_one_prelude_copy_per_function_and_no_clash_with_user_functions():
    @pk.func
    def exp_f64(x):  # the name of the prelude's exp
        return pk.exp(x) * 2.0

    def body(x: pk.f64[:]):
        i = pk.global_id(0)
        x[i] = exp_f64(x[i]) + pk.exp(x[i] + 1.0)

    out = decompose(translated(body), Target())
    names = [f.name for f in out.functions]
    assert len(names) == len(set(names))
    prelude_exps = [n for n in names if n.startswith(PRELUDE_PREFIX) and "exp_f64" in n]
    assert len(prelude_exps) == 1  # both calls of pk.exp on f64 share it
    user = next(f for f in out.functions if not f.name.startswith(PRELUDE_PREFIX))
    # the user's function calls the prelude, which comes before it
    assert names.index(prelude_exps[0]) < names.index(user.name)
    frontend.verify(out)


def test_prelude_functions_shared_between_groups_come_once():
    def body(x: pk.f64[:]):
        i = pk.global_id(0)
        x[i] = pk.exp(x[i]) + x[i] ** 0.5 + pk.sinh(x[i])  # pow and sinh call exp too

    out = decompose(translated(body), Target())
    names = [f.name.split("_", 3)[-1] for f in out.functions]
    assert names.count("exp_f64_0") == 1 and names.count("pow2_f64_0") == 1, names
    frontend.verify(out)


def test_exp_log_and_pow_are_straight_line_code():
    # drivers with a loop budget per invocation (lavapipe's 65,535 iterations) count loops: the
    # common functions must not spend it inside a user's loop (sin, cos and tan loop only for
    # |x| > 1.6e6, erf for 0.5 < |x| < 6)
    def body(x: pk.f64[:]):
        i = pk.global_id(0)
        x[i] = pk.exp(x[i]) + pk.log(x[i]) + x[i] ** x[i] + pk.sinh(x[i]) + pk.tanh(x[i])

    out = decompose(translated(body), Target())
    assert not any(isinstance(n, (ir.ForRange, ir.While)) for n in ir.walk(out))
