"""Values the frontend handles that are not IR expressions: tuples (see `pykern.frontend.tuples`).

A `PyConst` (in typerules) is a number whose type the context decides; a `TupleValue` is a
tuple of values, which exists only while the frontend translates a statement.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykern import ir
from pykern.frontend.typerules import PyConst

Value = ir.Expr | PyConst


@dataclass(frozen=True)
class TupleValue:
    """A tuple while it is translated: `elements` are scalars, readable once `prelude` ran."""

    elements: tuple[Value, ...]
    prelude: tuple[ir.Stmt, ...] = ()
    fresh: bool = False  # the elements read only hidden slots, which no assignment targets

    def __len__(self) -> int:
        return len(self.elements)


def constant_tuple(value: object) -> TupleValue | None:
    """A Python tuple of numbers and bools (a captured global, a constexpr) as a tuple of
    constants; None for anything else."""
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value):
        return TupleValue(tuple(PyConst(v) for v in value))
    return None
