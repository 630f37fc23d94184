"""A whole kernel to the source of its Python module:

    def bind(<launch values>):              # once per launch
        def workgroup():                    # once per workgroup
            a_tile = [...]                  #   its pk.shared arrays
            def invocation(<ids>):          # once per invocation
                a_acc = [...]               #   its pk.local arrays
                def f_helper_0(...): ...    #   device functions (they see the ids)
                <locals> = 0
                <body>
            return invocation
        return workgroup

`bind` takes the launch's values (buffers, geometry, scalars, grid, the error reporters) as
keyword arguments; they are closure variables of everything inside, the fastest names after
locals. When the kernel synchronises (barriers, subgroup exchanges), `invocation` and the
device functions that synchronise are generators: each `yield` stops at a barrier or at a
subgroup operation, and the runner resumes the workgroup's invocations in lockstep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pykern import ir
from pykern.lang.coop import CoopType
from pykern.lang.dtypes import DType
from pykern.interpret import names, tile_codegen
from pykern.interpret.exprs import ExprCodegen
from pykern.interpret.names import AccessSite, AssertSite, CodegenState, SubgroupSite
from pykern.interpret.stmts import INDENT, StmtCodegen
from pykern.interpret.walk import lockstep_functions, synchronises


@dataclass(frozen=True)
class GeneratedKernel:
    """The source of one kernel's module and what the runner must know to call it."""

    source: str
    bind_params: tuple[str, ...]
    sites: tuple[AccessSite, ...]
    asserts: tuple[AssertSite, ...]
    subgroups: tuple[SubgroupSite, ...]
    lockstep: bool  # `invocation` is a generator: run the workgroup in lockstep


def generate(kernel: ir.Kernel) -> GeneratedKernel:
    """The Python module source that interprets `kernel`."""
    state = CodegenState()
    generators = lockstep_functions(kernel)
    stmts = StmtCodegen(ExprCodegen(kernel, state, generators))
    ids = ", ".join(names.GLOBAL_IDS + names.LOCAL_IDS + names.GROUP_IDS)
    params = bind_params(kernel)
    bind_lines = [
        *wrap_call("def bind(", params, "):"),
        INDENT + "def workgroup():",
        *declarations(kernel, ir.MemorySpace.SHARED, state, 2),
        INDENT * 2 + f"def invocation({ids}):",
        *declarations(kernel, ir.MemorySpace.LOCAL, state, 3),
        INDENT * 3 + f"{names.PATH} = []  # progress through synchronising loops and calls",
    ]
    for fn in kernel.functions:
        bind_lines += function_lines(fn, stmts, 3)
    bind_lines += [INDENT * 3 + f"{names.local(v.name)} = {zero(v.type, state)}"
                   for v in kernel.locals]
    bind_lines += stmts.block(kernel.body, 3)
    bind_lines += [INDENT * 2 + "return invocation", INDENT + "return workgroup", ""]
    header = [
        f"# kernel {names.comment(kernel.name)} from {names.comment(kernel.loc)}, workgroup "
        f"{tuple(int(w) for w in kernel.workgroup)}, as Python",
        "# by pykern.interpret: ints are Python ints wrapped to their width, floats numpy scalars",
        "# of their type; an array is a flat buffer a_NAME indexed at off_NAME + sum(i * stride).",
        *(["", *state.module_lines()] if state.constants or state.definitions else []),
        "",
        "",
    ]
    return GeneratedKernel(source="\n".join(header + bind_lines), bind_params=params,
                           sites=tuple(state.sites), asserts=tuple(state.asserts),
                           subgroups=tuple(state.subgroups),
                           lockstep=synchronises(kernel.body, generators))


def function_lines(fn: ir.Function, stmts: StmtCodegen, depth: int) -> list[str]:
    """A device function as a nested def; its parameters are its first locals."""
    args = ", ".join(names.local(p.name) for p in fn.params)
    pad = INDENT * (depth + 1)
    lines = [INDENT * depth + f"def {names.function(fn.name)}({args}):"
             f"  # line {int(fn.loc.line)}"]
    lines += [pad + f"{names.local(v.name)} = {zero(v.type, stmts.state)}" for v in fn.locals]
    return lines + stmts.block(fn.body, depth + 1)


def declarations(kernel: ir.Kernel, space: ir.MemorySpace, state: CodegenState,
                 depth: int) -> list[str]:
    """The arrays of `space`, created zeroed (their contents start undefined on the GPU)."""
    lines = []
    for d in kernel.arrays:
        if d.space is space:
            shape = tuple(int(n) for n in d.shape)
            lines.append(INDENT * depth + f"{names.buffer(d.name)} = [{zero(d.dtype, state)}] * "
                         f"{math.prod(shape)}  # pk.{space.value}({d.dtype.name}, {shape})")
    return lines


def bind_params(kernel: ir.Kernel) -> tuple[str, ...]:
    """The names `bind` takes, in order: what the runner must supply for a launch."""
    out = [names.OUT_OF_BOUNDS, names.ASSERT_FAILED, *names.GRID, *names.NUM_GROUPS,
           names.SUBGROUP_SIZE]
    for p in kernel.params:
        if not p.is_array:
            out.append(names.scalar(p.name))
            continue
        g = names.Geometry.of_param(p.name, p.type.ndim)  # type: ignore[union-attr]
        out += [g.buffer, g.offset, g.length, *g.shape, *g.strides]  # type: ignore[list-item]
    return tuple(out)


def zero(t: DType | CoopType, state: CodegenState) -> str:
    """The value a local has before its first assignment (the GPU's is undefined)."""
    if isinstance(t, CoopType):
        return tile_codegen.zero(state, t)
    if t.is_float:
        return state.float_constant(0.0, t)
    return "False" if t.kind == "b" else "0"


def wrap_call(opening: str, args: tuple[str, ...], closing: str, width: int = 100) -> list[str]:
    """`opening` + the comma-separated `args` + `closing`, over several lines when long."""
    lines = [opening]
    for k, arg in enumerate(args):
        text = arg + (", " if k < len(args) - 1 else "")
        if len(lines[-1]) + len(text.rstrip()) > width:
            lines[-1] = lines[-1].rstrip()
            lines.append(" " * len(opening))
        lines[-1] += text
    lines[-1] += closing
    return lines
