"""Tracing a function once for one argument signature: what it computes, as kernels to run.

`trace` calls the function with a `Tracer` for each tensor argument and the other arguments
as they are (Python numbers stay numbers: the signature holds their values, so whatever the
function does with them is fixed for it). The results it returns become a `Plan`: the values
to materialise grouped by shape (one generated kernel each, usually exactly one), and the
reductions the library runs on them afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pykern.fuse import fused_reduction
from pykern.fuse.codegen import Group
from pykern.fuse.nodes import Input, Node, Reduce
from pykern.fuse.refusal import FuseError
from pykern.fuse.tracer import Tracer
from pykern.tensor.core.tensor import Tensor


@dataclass(frozen=True)
class Plan:
    """One signature's work: `groups` (a kernel each), `results` (the returned nodes, in
    order) and whether the function returned a tuple. `reduction` is the one result, where it
    is a reduction that `fused_reduction` can run in the same kernel as its expression."""

    groups: tuple[Group, ...]
    results: tuple[Node, ...]
    is_tuple: bool
    reduction: Reduce | None = None


def trace(fn: Callable, args: Sequence[object], kwargs: dict[str, object]) -> Plan:
    """Runs `fn` on tracers standing for the tensors among `args` and `kwargs` (numbered in
    that order) and plans the kernels for what it returns."""
    count = 0

    def traced(x: object) -> object:
        nonlocal count
        if not isinstance(x, Tensor):
            return x
        count += 1
        return Tracer(Input(x.dtype, x.shape, count - 1))

    targs = [traced(a) for a in args]
    tkwargs = {k: traced(v) for k, v in kwargs.items()}
    result = fn(*targs, **tkwargs)
    is_tuple = isinstance(result, tuple)
    results = result if is_tuple else (result,)
    for k, r in enumerate(results):
        if not isinstance(r, Tracer):
            what = f"result {k}" if is_tuple else "the result"
            raise _located(fn, f"@pk.fuse: {what} of {fn.__qualname__} is a value of type "
                               f"{type(r).__name__}, not a tensor computed from the arguments "
                               "(return traced tensors, or a tuple of them)")
    nodes = tuple(r.node for r in results)  # type: ignore[union-attr]
    fusable = nodes[0] if len(nodes) == 1 and fused_reduction.fusable(nodes[0]) else None
    return Plan(_groups(nodes), nodes, is_tuple, fusable)  # type: ignore[arg-type]


def input_tensor(node: Input, tensors: Sequence[Tensor]) -> Tensor:
    """The tensor an Input node reads in a call whose tensor arguments are `tensors`."""
    return node.captured if node.captured is not None else tensors[node.index]


def materialised(node: Node) -> Node:
    """The elementwise value a result needs written: itself, or what a reduction reduces."""
    return node.x if isinstance(node, Reduce) else node


def _groups(results: tuple[Node, ...]) -> tuple[Group, ...]:
    """The kernels: one per shape among the values to write. A reduction of an argument
    itself needs no kernel (the library reduces the tensor directly)."""
    by_shape: dict[tuple[int, ...], list[Node]] = {}
    for r in results:
        value = materialised(r)
        if isinstance(r, Reduce) and isinstance(value, Input):
            continue
        outputs = by_shape.setdefault(value.shape, [])
        if not any(o is value for o in outputs):
            outputs.append(value)
    return tuple(Group(outputs) for outputs in by_shape.values())


def _located(fn: Callable, message: str) -> FuseError:
    code = getattr(fn, "__code__", None)
    if code is None:
        return FuseError(message)
    import linecache
    return FuseError(message, code.co_filename, code.co_firstlineno, 1,
                     linecache.getline(code.co_filename, code.co_firstlineno) or None)
