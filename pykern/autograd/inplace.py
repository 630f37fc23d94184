"""Writes into tensors that take part in the graph: in-place operators, `out=`, `t[key] = v`.

As in PyTorch, the tensor written keeps its identity and its `grad_fn` becomes the write's
node, whose input is the node the tensor had before (its `Edge` captured before the write), so
`y = x * 2; y += 1` differentiates as `y = x * 2 + 1`. A recorded write computes its value
out of place (recorded like any op), then copies it into the target region and records that
copy on the target's base (`Tensor._base`, the tensor that owns the memory a view shares):

- the whole base written: its gradient goes on to the value;
- a region of it (`y[0] += 1`, `y[:, 1] = 0`, an op on a view): the base's gradient passes to
  the base as it was except in the region, and the region's part goes to the value (PyTorch's
  CopySlices); the view written becomes a view of the base as it is now, and so does any
  other view of it when it is next used (`graph.refresh_stale_views`).

A leaf that requires grad (or a view of one) refuses writes while grad mode records (they
would change what its gradient is of); under `pk.no_grad()` writes only bump the version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.graph import Edge, Node, ViewNode, edge, needs_grad, refresh_stale_views
from pykern.autograd.mode import no_grad
from pykern.autograd.library import TENSORS
from pykern.autograd.region import Region, zeros_like


def base_of(t: Any) -> Any:
    """The tensor owning the memory that `t` (a view, or itself) is part of."""
    return t._base if t._base is not None else t


def records_write(target: Any, *operands: object) -> bool:
    """Whether writing into `target` records: grad mode is on and its base or an operand
    requires grad. A write into a complex tensor of the graph, or of a complex operand that
    requires grad, is refused: the recorded writes' backward is written for real tensors."""
    base = base_of(target)
    if not needs_grad(base, *operands, complex_ok=True):
        return False
    involved = (base, target, *operands)
    if any(getattr(getattr(t, "dtype", None), "is_complex", False) and (
            t is base or t is target or getattr(t, "requires_grad", False)) for t in involved):
        raise NotImplementedError(
            "an in-place write (+=, out=, t[key] = ...) into a complex tensor that takes part "
            "in the graph, or of a complex tensor that requires grad, is not recorded: write "
            "the result to a new tensor instead (y = y + 1j), or under pk.no_grad()")
    return True


def refuse_leaf(name: str, target: Any) -> None:
    """RuntimeError for a recorded write into a leaf that requires grad or a view of one."""
    base = base_of(target)
    if base.requires_grad and base.grad_fn is None:
        which = "a leaf tensor" if base is target else "a view of a leaf tensor"
        raise RuntimeError(f"{name}: {which} that requires grad is used in an in-place "
                           "operation; write into it under pk.no_grad() (as an optimizer does), "
                           "or compute a new tensor")


def write(name: str, target: Any, compute: Callable[[], Any], from_target: bool) -> Any:
    """The recorded form of an in-place op or `out=`: `compute()` (the op out of place,
    recorded) gives the value, which is then written into `target` (`from_target`: an
    operand of the op is `target`). Returns `target`."""
    refuse_leaf(name, target)
    assign(name, target, compute(), from_target)
    return target


def assign(name: str, target: Any, value: object, from_target: bool = False) -> None:
    """`target[...] = value`, recorded on `target`'s base (see the module's docstring).
    `from_target`: the value was computed from `target` (an in-place op), so where it covers
    the whole base, the base's old gradient flows through the value alone."""
    refuse_leaf(name, target)
    refresh_stale_views((value,))
    base = base_of(target)
    before = edge(base)  # the base as it was: captured before the write
    with no_grad():
        TENSORS.assign(target, value)  # bumps the version
    whole = target is base or (target.shape == base.shape and target.offset == base.offset
                               and target.element_strides == base.element_strides)
    region = None if whole else Region(base, target)
    if region is None and (from_target or before is None):
        node = Node(name, (edge(value),), lambda g: (g,))
    elif region is None:  # overwritten: the old base gets zeros, as PyTorch's copy_ gives
        node = Node(name, (before, edge(value)), lambda g: (zeros_like(g), g))
    else:
        node = Node(name, (before, edge(value)), region.backward(before is not None))
    base.grad_fn = node
    base.requires_grad = True
    if target is not base:
        scatter = region.scatter if region is not None else (lambda g: g)
        target.grad_fn = ViewNode(name, (Edge(base),), lambda g: (scatter(g),), target)
        target.requires_grad = True
