"""Python source to typed IR. Knows Python and the IR; nothing of SPIR-V or Vulkan."""

from __future__ import annotations

import inspect
from collections.abc import Mapping

from .. import ir
from ..dtypes import PYTHON_ALIASES, Array, ArrayType, DType, constexpr
from ..errors import KernelTypeError
from .source import KernelSource, load_source
from .translator import Translator
from .verify import verify

__all__ = ["KernelSource", "load_source", "signature", "translate", "verify"]


ParamSpec = DType | ArrayType | type(Array) | type[constexpr]


def signature(src: KernelSource) -> dict[str, ParamSpec]:
    """Each parameter's annotation: a scalar type, an array type, `pk.Array` (generic) or
    `pk.constexpr`. Every parameter needs one."""
    fn = src.fn
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception as e:  # an annotation that does not evaluate
        raise src.error(src.tree, f"cannot evaluate the annotations of {fn.__name__}: {e}",
                        KernelTypeError) from None
    args = src.tree.args
    for bad, what in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
        if bad is not None:
            raise src.error(bad, f"{what} parameters are not supported in a kernel")
    out: dict[str, ParamSpec] = {}
    for arg in args.posonlyargs + args.args + args.kwonlyargs:
        hint = hints.get(arg.arg)
        if hint in PYTHON_ALIASES:
            hint = PYTHON_ALIASES[hint]
        if not (isinstance(hint, (DType, ArrayType)) or hint is Array or hint is constexpr):
            what = "has no annotation" if hint is None else f"is annotated {hint!r}"
            raise src.error(arg, f"parameter '{arg.arg}' {what}: annotate it with a type such "
                                 "as pk.f32 or pk.f32[:]", KernelTypeError)
        out[arg.arg] = hint
    return out


def translate(src: KernelSource, params: Mapping[str, DType | ArrayType],
              workgroup: tuple[int, int, int],
              constants: Mapping[str, object] | None = None) -> ir.Kernel:
    """The typed IR of one variant of the kernel `src`, for these parameter types and the
    values of its `pk.constexpr` parameters (which are not parameters of the IR)."""
    kernel = Translator(src, params, constants or {}).kernel(workgroup)
    verify(kernel)
    return kernel

