"""pykern source text for a fused reduction: an elementwise expression reduced as it is
computed, without writing it to memory.

The reduction covers a row-major problem of `n_out` outputs of `n_red` elements each (all
elements, or the last axis): element `r` of output `o` is flat element `o * n_red + r` of the
expression's shape. In "group" mode a workgroup of `wg` invocations reduces one chunk of one
output (each invocation a strided share, then a tree in shared memory); in "thread" mode one
invocation does; either writes one partial, and the library's reduction combines the partials
of an output when there are several (as its own kernel does with its partials). The mode and
the sizes are `fused_reduction`'s choice for the device. The operands are indexed flat where
`strided.plan` collapses them to 1-D, else through a 4-D unravelled index.
"""

from __future__ import annotations

from typing import Any

from pykern.fuse import codegen
from pykern.fuse.codegen import Group

_COMBINE = {
    "sum": "{a} + {b}",
    "prod": "{a} * {b}",
    # nan wins, as the library's max and min
    "max": "pk.select({a} != {a}, {a}, pk.select({a} >= {b}, {a}, {b}))",
    "min": "pk.select({a} != {a}, {a}, pk.select({a} <= {b}, {a}, {b}))",
}
_IDENTITY = {"sum": 0, "prod": 1}


def reduction_source(name: str, group: Group, nd: int, spec: Any,
                     func_names: dict[int, str]) -> str:
    """The text of the kernel reducing `group`'s one output with `spec.op` ("sum", "prod",
    "max" or "min") in the accumulator dtype `spec.acc`, its operands indexed in form `nd`
    (1 or 4), a chunk of `spec.chunk` elements per partial. `spec.mode` "group": a workgroup
    of `spec.wg` invocations per chunk (GPUs: neighbouring invocations read neighbouring
    elements); "thread": an invocation per chunk, no shared memory or barrier (the host
    device, where a barrier costs more than a loop)."""
    op, acc, mode, chunk, wg = spec.op, spec.acc, spec.mode, spec.chunk, spec.wg
    names, types, scalars = codegen.scalar_params(group)
    params = [f"x{k}: pk.Array" for k in range(len(group.inputs))]
    params += ["part: pk.Array", "n_red: int", "n_chunks: int"]
    index = "e" if nd == 1 else "idx"
    loads, computes = codegen.element_lines(group, index, names, types, func_names)
    elements = loads + computes
    if nd != 1:  # one unravelled index per element, shared by every operand
        elements.insert(0, "idx = pk.unravel(e, x0.shape)")
    value = f"pk.{acc.name}({names[id(group.canonical(group.outputs[0]))]})"
    ACC = f"pk.{acc.name}"  # noqa: N806
    combine = _COMBINE[op]
    step = wg if mode == "group" else 1
    body = [
        "t = pk.local_id(0)" if mode == "group" else "t = 0",
        "g = pk.group_id(0)" if mode == "group" else "g = pk.global_id(0)",
        "base = (g // n_chunks) * n_red",
        f"start = (g % n_chunks) * {chunk}",
        f"stop = pk.select(start + {chunk} < n_red, start + {chunk}, n_red)",
    ]
    if op in _IDENTITY:
        body.append(f"acc = {ACC}({_IDENTITY[op]})")
    else:  # max and min start from the chunk's first element (idempotent: lanes may repeat it)
        body += ["e = base + start", *elements, f"acc = {value}"]
    body += ["r = start + t", "while r < stop:", "    e = base + r"]
    body += [f"    {line}" for line in elements]
    body += [f"    acc = {combine.format(a='acc', b=value)}", f"    r += {step}"]
    doc = (f"Fused by @pk.fuse: {codegen.describe(group)}, reduced by {op} (one partial per "
           "chunk).")
    if mode == "thread":
        return codegen.function_text(name, params + scalars, doc, [*body, "part[g] = acc"])
    body += [
        f"vals = pk.shared({ACC}, ({wg},))",
        "vals[t] = acc",
        "pk.barrier()",
        f"s = {wg // 2}",
        "while s > 0:",
        "    if t < s:",
        f"        vals[t] = {combine.format(a='vals[t]', b='vals[t + s]')}",
        "    pk.barrier()",
        "    s //= 2",
        "if t == 0:",
        "    part[g] = vals[0]",
    ]
    return codegen.function_text(name, params + scalars, doc, body,
                                 decorator=f"@pk.kernel(workgroup=({wg},))")
