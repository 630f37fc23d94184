"""What the host backend cannot lower yet, as data: the first node of a kernel it lacks, with
its location and a name for the feature (the caller turns it into a located
`pk.CompileError`; a backend decides no user error)."""

from __future__ import annotations

from dataclasses import dataclass

from pykern import ir
from pykern.lang.coop import is_tile

_TILE_NODES = (ir.CoopFill, ir.CoopLoad, ir.CoopMma, ir.CoopScale, ir.CoopStore)


@dataclass(frozen=True)
class Unsupported:
    loc: ir.Loc
    what: str
    feature: str | None = None  # the device feature it needs, where the host lacks one


def first_unsupported(kernel: ir.Kernel) -> Unsupported | None:
    """The first construct of `kernel` the host backend does not lower yet, or None."""
    for root in (*kernel.functions, *kernel.body):
        for node in ir.walk(root):
            found = _unsupported_node(node)
            if found is not None:
                return found
    from pykern.llvm.inline import prepare  # which imports `Unsupported` here

    inlined, problem = prepare(kernel)
    return problem or _jump_across_barrier(inlined.body, in_barrier_loop=False)


def _unsupported_node(node: ir.Node) -> Unsupported | None:
    if isinstance(node, _TILE_NODES) or (isinstance(node, ir.Expr) and is_tile(node.type)):
        return Unsupported(node.loc, "cooperative-matrix tiles (pk.coop_*)", "cooperative_matrix")
    return None


def _jump_across_barrier(body: tuple[ir.Stmt, ...], in_barrier_loop: bool) -> Unsupported | None:
    """A `break` or `continue` of a loop that contains a barrier: the loop runs once for the
    whole workgroup, so one invocation cannot leave it alone."""
    for s in body:
        if isinstance(s, (ir.Break, ir.Continue)) and in_barrier_loop:
            word = "break" if isinstance(s, ir.Break) else "continue"
            return Unsupported(s.loc, f"'{word}' out of a loop that contains pk.barrier()")
        if isinstance(s, (ir.ForRange, ir.While)):
            loop_has_barrier = any(isinstance(n, ir.Barrier) for n in ir.walk(s))
            found = _jump_across_barrier(s.body, loop_has_barrier)
        elif isinstance(s, ir.If):
            found = _jump_across_barrier(s.body, in_barrier_loop) or \
                _jump_across_barrier(s.orelse, in_barrier_loop)
        else:
            found = None
        if found is not None:
            return found
    return None
