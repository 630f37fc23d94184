"""Facts about a kernel found before generating code: which bodies must run in lockstep."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields

from .. import ir

# subgroup operations that need the values of other invocations; SIZE and LANE do not
EXCHANGING = frozenset(ir.SubgroupOp) - {ir.SubgroupOp.SIZE, ir.SubgroupOp.LANE}


def walk(node: ir.Node) -> Iterator[ir.Node]:
    """`node` and every node below it (through fields and tuples of nodes), depth first."""
    yield node
    for f in fields(node):
        value = getattr(node, f.name)
        for child in value if isinstance(value, tuple) else (value,):
            if isinstance(child, ir.Node):
                yield from walk(child)


def synchronises(stmts: Iterable[ir.Stmt], lockstep_functions: set[str]) -> bool:
    """Whether running `stmts` meets other invocations: a barrier, an exchanging subgroup
    operation, or a call of a device function that does."""
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, ir.Barrier):
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
