"""What a device can run: types its features allow, and math Vulkan offers in 64 bits.

Checked on the IR before lowering, so a kernel that needs something the device lacks gets a
`pk.CompileError` at the first place it uses it, naming the type and the missing feature —
not a failure deep in the backend or the driver. Feature names are those of
`pykern.runtime.DeviceFeatures` (fp16, fp64, int8, int16, int64, storage8, storage16).
"""

from __future__ import annotations

import linecache
from collections.abc import Callable

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.dtypes import ArrayType, DType
from pykern.errors import CompileError

# arithmetic on the type needs the first feature; keeping it in a buffer the second
TYPE_FEATURES: dict[DType, tuple[str, str | None]] = {
    dt.f16: ("fp16", "storage16"), dt.f64: ("fp64", None), dt.i64: ("int64", None),
    dt.u64: ("int64", None), dt.i16: ("int16", "storage16"), dt.u16: ("int16", "storage16"),
    dt.i8: ("int8", "storage8"), dt.u8: ("int8", "storage8"), dt.bool_: ("", "storage8"),
}
# GLSL.std.450 has these for 16- and 32-bit floats only
NOT_IN_64_BITS = frozenset({
    ir.MathFn.EXP, ir.MathFn.LOG, ir.MathFn.SIN, ir.MathFn.COS, ir.MathFn.TANH, ir.MathFn.POW,
    ir.MathFn.EXP2, ir.MathFn.LOG2, ir.MathFn.TAN, ir.MathFn.ASIN, ir.MathFn.ACOS,
    ir.MathFn.ATAN, ir.MathFn.ATAN2, ir.MathFn.SINH, ir.MathFn.COSH, ir.MathFn.ERF,
})


def _error(loc: ir.Loc, message: str) -> CompileError:
    return CompileError(message, loc.file, loc.line, loc.col,
                        linecache.getline(loc.file, loc.line) or None)


def check_support(kernel: ir.Kernel, features: frozenset[str],
                  describe: Callable[[str], str] = lambda f: f) -> None:
    """Raises CompileError at the first use of a type or function `features` cannot run."""
    stored = {p.type.dtype for p in kernel.params if isinstance(p.type, ArrayType)}
    stored |= {a.dtype for a in kernel.arrays}
    for node in ir.walk(kernel):
        t = getattr(node, "type", None)
        t = t.dtype if isinstance(t, ArrayType) else t
        if isinstance(node, ir.ArrayDecl):
            t = node.dtype
        if isinstance(t, DType) and t in TYPE_FEATURES:
            compute, storage = TYPE_FEATURES[t]
            needed = [f for f in (compute, storage if t in stored else None) if f]
            for feature in needed:
                if feature not in features:
                    raise _error(node.loc, f"type {t.name} needs the device feature "
                                           f"'{describe(feature)}', which this device lacks")
        if isinstance(node, ir.MathCall) and node.fn in NOT_IN_64_BITS and \
                node.args[0].type == dt.f64:
            raise _error(node.loc, f"{node.fn.py_name}() on f64 is not available on Vulkan "
                                   "(GLSL.std.450 computes it for 16- and 32-bit floats): "
                                   "convert with pk.f32(...)")
        if isinstance(node, ir.BinOp) and node.op is ir.BinOpKind.POW and node.type == dt.f64:
            raise _error(node.loc, "** on f64 is not available on Vulkan (pow is 32-bit in "
                                   "GLSL.std.450): convert with pk.f32(...)")
