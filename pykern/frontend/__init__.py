"""Python source to typed IR. Knows Python and the IR; nothing of SPIR-V or Vulkan."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from pykern import ir
from pykern.lang.dtypes import PYTHON_ALIASES, Array, ArrayType, DType, constexpr
from pykern.errors import KernelTypeError
from pykern.frontend.depth import recursion_room
from pykern.frontend.source import KernelSource, load_source
from pykern.frontend.translator import translate_kernel
from pykern.ir.verify import verify

__all__ = ["KernelSource", "load_source", "signature", "translate", "verify"]


ParamSpec = DType | ArrayType | type(Array) | type[constexpr]


def signature(fn: Callable) -> dict[str, ParamSpec]:
    """Each parameter's annotation: a scalar type, an array type, `pk.Array` (generic) or
    `pk.constexpr`. Every parameter needs one. Reads annotations without parsing the source
    (a warm compile-cache hit never parses); only an error parses it, to point at the line."""
    try:
        # string annotations (`from __future__ import annotations`) may name closure variables
        closure = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # a cell not yet assigned
                pass
        hints = inspect.get_annotations(fn, eval_str=True, locals=closure)
    except Exception as e:  # an annotation that does not evaluate
        src = load_source(fn)
        raise src.error(src.tree, f"cannot evaluate the annotations of {fn.__name__}: {e}",
                        KernelTypeError) from None
    out: dict[str, ParamSpec] = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            src = load_source(fn)
            bad = src.tree.args.vararg if p.kind is p.VAR_POSITIONAL else src.tree.args.kwarg
            raise src.error(bad, f"{'*' if p.kind is p.VAR_POSITIONAL else '**'}{p.name} "
                                 "parameters are not supported in a kernel")
        hint = hints.get(p.name)
        if hint in PYTHON_ALIASES:
            hint = PYTHON_ALIASES[hint]
        if not (isinstance(hint, (DType, ArrayType)) or hint is Array or hint is constexpr):
            src = load_source(fn)
            node = next(a for a in src.tree.args.posonlyargs + src.tree.args.args +
                        src.tree.args.kwonlyargs if a.arg == p.name)
            what = "has no annotation" if hint is None else f"is annotated {hint!r}"
            raise src.error(node, f"parameter '{p.name}' {what}: annotate it with a type such "
                                  "as pk.f32 or pk.f32[:]", KernelTypeError)
        out[p.name] = hint
    return out


def translate(src: KernelSource, params: Mapping[str, DType | ArrayType],
              workgroup: tuple[int, int, int],
              constants: Mapping[str, object] | None = None, debug: bool = False,
              grid_ndim: int = 3) -> ir.Kernel:
    """The typed IR of one variant of the kernel `src`, for these parameter types and the
    values of its `pk.constexpr` parameters (which are not parameters of the IR), launched with
    grids of `grid_ndim` dimensions. `debug` keeps asserts (and asks backends for bounds
    checks)."""
    with recursion_room(src.nesting_depth):
        kernel = translate_kernel(src, params, constants or {}, workgroup, debug, grid_ndim)
        verify(kernel)
    return kernel

