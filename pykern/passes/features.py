"""`required_features`: what optional device features a kernel needs, and where.

A pass over the typed IR (after decomposition, so the prelude functions count too). The target
states the facts — which feature a type needs to be computed with or kept in a buffer, which
an IR node needs (subgroup operations, 64-bit atomics) — and this pass finds the places. It
reports data; the JIT layer turns the first missing feature into a `pk.CompileError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple, Protocol

from pykern import ir
from pykern.lang.dtypes import ArrayType, DType
from pykern.runtime.feature import Feature


class FeatureFacts(Protocol):
    """What a target states about features (`pykern.spirv.Target` is one)."""

    def type_features(self, dtype: DType, stored: bool) -> tuple[Feature, ...]: ...

    def node_features(self, node: ir.Node) -> tuple[tuple[Feature, str], ...]: ...


class Requirement(NamedTuple):
    """One use of a feature: the feature, the place, and what there needs it ("type f64")."""

    feature: Feature
    loc: ir.Loc
    what: str


def required_features(kernel: ir.Kernel, target: FeatureFacts) -> list[Requirement]:
    """Every place `kernel` needs an optional feature, in source-walk order (the kernel body,
    then its functions), each feature listed at each node that needs it — the first entry for
    a feature is the first place that needs it."""
    return list(_requirements(kernel, target))


def first_missing(requirements: list[Requirement],
                  features: frozenset[Feature]) -> Requirement | None:
    """The first requirement `features` does not grant, or None."""
    return next((r for r in requirements if r.feature not in features), None)


def _requirements(kernel: ir.Kernel, target: FeatureFacts) -> Iterator[Requirement]:
    stored = {p.type.dtype for p in kernel.params if isinstance(p.type, ArrayType)}
    stored |= {a.dtype for a in kernel.arrays}
    for node in ir.walk(kernel):
        dtype = _dtype_of(node)
        if dtype is not None:
            for feature in target.type_features(dtype, dtype in stored):
                yield Requirement(feature, node.loc, f"type {dtype.name}")
        for feature, what in target.node_features(node):
            yield Requirement(feature, node.loc, what)


def _dtype_of(node: ir.Node) -> DType | None:
    """The scalar type a node computes with or declares (an array's element type)."""
    if isinstance(node, ir.ArrayDecl):
        return node.dtype
    t = getattr(node, "type", None)
    t = t.dtype if isinstance(t, ArrayType) else t
    return t if isinstance(t, DType) else None
