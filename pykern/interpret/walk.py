"""Facts about a kernel found before generating code: which bodies must run in lockstep."""

from __future__ import annotations

from collections.abc import Iterable

from pykern import ir

# subgroup operations that need the values of other invocations; SIZE and LANE do not
EXCHANGING = frozenset(ir.SubgroupOp) - {ir.SubgroupOp.SIZE, ir.SubgroupOp.LANE}
# tile memory accesses, which a subgroup makes together (see `tile_codegen`)
TILE_ACCESSES = (ir.CoopLoad, ir.CoopStore)


def synchronises(stmts: Iterable[ir.Stmt], lockstep_functions: set[str]) -> bool:
    """Whether running `stmts` meets other invocations: a barrier, an exchanging subgroup
    operation, a tile load or store, or a call of a device function that does."""
    for stmt in stmts:
        for node in ir.walk(stmt):
            if isinstance(node, (ir.Barrier, *TILE_ACCESSES)):
                return True
            if isinstance(node, ir.Subgroup) and node.op in EXCHANGING:
                return True
            if isinstance(node, ir.Call) and node.function in lockstep_functions:
                return True
    return False


def lockstep_functions(kernel: ir.Kernel) -> set[str]:
    """The device functions that synchronise (callees come before callers in the kernel)."""
    found: set[str] = set()
    for fn in kernel.functions:
        if synchronises(fn.body, found):
            found.add(fn.name)
    return found
