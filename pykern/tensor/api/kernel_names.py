"""The math names of the kernel language that are also tensor functions (`pk.exp`, `pk.abs`,
`pk.max`, ...): one object each, resolved by identity inside kernels, running the op library's
function on tensors, arrays and scalars outside. `import pykern` hands this table to the
builtins' registration hook (`pykern.lang.builtins.serve_tensors`) once, explicitly.
"""

from __future__ import annotations

from collections.abc import Callable

from pykern.lang import builtins as bi
from pykern.tensor.complex import complex_elementwise as ce
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.reduce import reduction

TENSOR_FUNCTIONS: tuple[tuple[bi.KernelBuiltin, Callable[..., object]], ...] = (
    (bi.abs, ew.abs), (bi.acos, ew.acos), (bi.asin, ew.asin), (bi.atan, ew.atan),
    (bi.atan2, ew.atan2), (bi.ceil, ew.ceil), (bi.clamp, ew.clip), (bi.copysign, ew.copysign),
    (bi.cos, ew.cos), (bi.cosh, ew.cosh), (bi.erf, ew.erf), (bi.exp, ew.exp), (bi.exp2, ew.exp2),
    (bi.floor, ew.floor), (bi.isinf, ew.isinf), (bi.isnan, ew.isnan), (bi.log, ew.log),
    (bi.log2, ew.log2), (bi.max, reduction.max), (bi.min, reduction.min), (bi.pow, ew.pow),
    (bi.round, ew.round), (bi.rsqrt, ew.rsqrt), (bi.select, ew.where), (bi.sin, ew.sin),
    (bi.sinh, ew.sinh), (bi.sqrt, ew.sqrt), (bi.tan, ew.tan), (bi.tanh, ew.tanh),
    (bi.trunc, ew.trunc), (bi.log10, ew.log10), (bi.log1p, ew.log1p), (bi.expm1, ew.expm1),
    (bi.asinh, ew.asinh), (bi.acosh, ew.acosh), (bi.atanh, ew.atanh), (bi.square, ew.square),
    (bi.real, ce.real), (bi.imag, ce.imag), (bi.conj, ce.conj), (bi.angle, ce.angle),
)
