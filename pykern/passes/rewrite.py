"""Rebuilding IR trees: `rewrite` applies a function to every node, children first.

IR nodes are frozen dataclasses, so a pass builds new ones; `rewrite` rebuilds only the nodes
whose children changed and returns the very same object where nothing did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from typing import TypeVar

from pykern import ir

N = TypeVar("N", bound=ir.Node)


def rewrite(node: N, visit: Callable[[ir.Node], ir.Node]) -> N:
    """`node` with each node below it, and then itself, replaced by `visit(node)` (which gets
    the node with its children already rewritten, and returns it unchanged to keep it)."""
    changes = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, ir.Node):
            new = rewrite(value, visit)
        elif isinstance(value, tuple) and value and isinstance(value[0], ir.Node):
            new = tuple(rewrite(v, visit) for v in value)
            if all(a is b for a, b in zip(new, value)):
                new = value
        else:
            continue
        if new is not value:
            changes[f.name] = new
    rebuilt = replace(node, **changes) if changes else node
    return visit(rebuilt)  # type: ignore[return-value]


def rename_calls(function: ir.Function, names: Mapping[str, str]) -> ir.Function:
    """`function` with the functions its calls name renamed by `names`."""

    def visit(node: ir.Node) -> ir.Node:
        if isinstance(node, ir.Call) and node.function in names:
            return replace(node, function=names[node.function])
        return node

    body = tuple(rewrite(s, visit) for s in function.body)
    return replace(function, body=body)
