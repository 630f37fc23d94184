"""A generic walk over IR nodes, for the few facts lowering needs before it starts (which
arrays take float atomics)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields

from pykern import ir


def walk(node: ir.Node) -> Iterator[ir.Node]:
    """`node` and every node below it (through fields and tuples of nodes), depth first."""
    yield node
    for f in fields(node):
        value = getattr(node, f.name)
        children = value if isinstance(value, tuple) else (value,)
        for child in children:
            if isinstance(child, ir.Node):
                yield from walk(child)
