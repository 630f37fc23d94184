"""The hook by which the op library hands an operation on a `@pk.fuse` tracer to the tracer.

While `pk.fuse` traces a function, its tensor arguments are symbolic values (subclasses of
`Traced`, in `pykern.fuse.tracer`). Python operators reach the tracer directly, but the
library's functions (`pk.exp`, `pk.sigmoid`, `pk.where`, `pk.clip`, `pk.astype`, ...) land in
`pykern.tensor.elementwise.functions`, whose entry points pass any call with a traced operand here
instead of launching a kernel. This module imports nothing, so the elementwise module can
depend on it without depending on the fuser.
"""

from __future__ import annotations

from typing import Any


class Traced:
    """A value that stands for a tensor while `pk.fuse` traces a function. Each method records
    the operation named and returns the traced result (another `Traced`)."""

    __slots__ = ()

    def fuse_unary(self, op: Any, out: object) -> Any:
        """`op` (a `unary_ops.UnaryOp`) of this value."""
        raise NotImplementedError

    def fuse_binary(self, op: Any, a: object, b: object, out: object) -> Any:
        """`op` (a `binary_ops.BinaryOp`) of `a` and `b`, one of which is this value."""
        raise NotImplementedError

    def fuse_where(self, condition: object, x1: object, x2: object) -> Any:
        """`pk.where(condition, x1, x2)`, one of whose operands is this value."""
        raise NotImplementedError

    def fuse_clip(self, x: object, lo: object, hi: object) -> Any:
        """`pk.clip(x, lo, hi)`, one of whose operands is this value."""
        raise NotImplementedError

    def fuse_astype(self, dtype: object, copy: bool) -> Any:
        """This value converted to `dtype`."""
        raise NotImplementedError


def traced_operand(*operands: object) -> Traced | None:
    """The first traced operand among `operands`, or None (then the op runs eagerly)."""
    for x in operands:
        if isinstance(x, Traced):
            return x
    return None
