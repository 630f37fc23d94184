"""`backward`: gradients from the results back to the leaves, in reverse topological order.

Every node's gradient is complete before its backward runs (all its uses are later in the
order), gradients that reach one tensor along several paths add up, and a gradient is fitted
to its tensor: summed over the dimensions an op broadcast, converted to the tensor's dtype.
A node's backward function (and the tensors it saved) is dropped as soon as it has run,
unless `retain_graph`; running it again is a RuntimeError that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pykern.autograd import hooks
from pykern.autograd.graph import Edge, Node, refresh_stale_views
from pykern.autograd.mode import no_grad
from pykern.jit import compiling


def fit(g: Any, to: Edge) -> Any:
    """`g` summed over the dimensions the input of `to` was broadcast along and converted to
    its dtype (the real part for a real input of a complex result)."""
    import pykern as pk  # the op library imports the engine: its ops are reached on use

    shape = to.shape
    if tuple(g.shape) != shape:
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
        if axes:
            g = pk.sum(g, axis=axes, keepdims=True)
        g = g.reshape(shape)
    if g.dtype.is_complex and not to.dtype.is_complex:
        # a real input of a complex op: d/dx of the pair (d/dx, d/dy). Also for a real
        # `astype` result, which passes its gradient on unconverted: an imaginary part
        # would reach the complex tensor it was cast from as a gradient of its imaginary
        # part, which the cast discarded.
        g = pk.real(g)
    if g.dtype != to.dtype and not _converts_its_gradient(to):
        g = g.astype(to.dtype)
    return g


def _converts_its_gradient(to: Edge) -> bool:
    """A conversion's result (`astype`, pk.autocast's 16-bit operands) passes its gradient on
    to a tensor of another dtype: converting it to the result's dtype first would only round
    it (and cost a pass over it)."""
    return to.node is not None and to.node.name == "astype"


def _order(roots: Sequence[Node]) -> list[Node]:
    """The nodes reachable from `roots`, each after every node that uses its result."""
    seen: set[int] = set()
    post: list[Node] = []
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack: list[tuple[Node, int]] = [(root, 0)]
        while stack:
            node, i = stack.pop()
            edges = node.edges
            while i < len(edges):
                e = edges[i]
                i += 1
                child = e.node if e is not None else None
                if child is not None and id(child) not in seen:
                    seen.add(id(child))
                    stack.append((node, i))
                    stack.append((child, 0))
                    break
            else:
                post.append(node)
    return post[::-1]


def run(roots: Sequence[tuple[Any, Any]], retain_graph: bool,
        wanted: Sequence[Any] | None = None) -> list[Any] | None:
    """Backpropagates each (tensor, gradient) of `roots`. Without `wanted`, the leaves'
    `.grad` accumulate; with it, their gradients (None for one nothing reached) are returned
    and no `.grad` changes. A wanted tensor is matched by its leaf or its current grad_fn."""
    wanted_at = {_key(t): i for i, t in enumerate(wanted)} if wanted is not None else None
    if wanted is None and compiling.ACTIVE[0] is not None:
        compiling.note_backward()  # a pk.compile recording: the results' graph was used
    found: list[Any] = [None] * (len(wanted) if wanted is not None else 0)
    pending: dict[int, Any] = {}
    refresh_stale_views([t for t, _ in roots])  # a root may be a view written since
    order = _order([t.grad_fn for t, _ in roots if t.grad_fn is not None])
    # the leaves' post-accumulate-grad hooks (hooks.py), counted only where some exist
    count = hooks.AccumulationCount(order) if wanted is None and hooks.any_registered() \
        else None

    def deliver(to: Edge, g: Any) -> None:
        g = fit(g, to)
        target = to.node if to.node is not None else to.leaf
        if wanted_at is not None and id(target) in wanted_at:
            i = wanted_at[id(target)]
            found[i] = g if found[i] is None else found[i] + g
        if to.node is not None:
            key = id(to.node)
            pending[key] = g if key not in pending else pending[key] + g
        elif wanted_at is None:
            _accumulate(to.leaf, g)
            if count is not None:
                count.accumulated(to.leaf)

    with no_grad(), hooks.backward_pass():
        for t, g in roots:
            deliver(Edge(t), g)
        if count is not None:
            count.roots_delivered()
        for node in order:
            g = pending.pop(id(node), None)
            if g is not None:
                _run_node(node, g, retain_graph, deliver)
            if count is not None:
                count.node_done(node)
    return found if wanted is not None else None


def _accumulate(leaf: Any, g: Any) -> None:
    """Adds `g` into `leaf.grad`. An existing gradient of the same shape and dtype is added to
    in place, as in PyTorch: a reference taken to `.grad` before (by the user, or the
    optimizer's flat gradient buffer that `zero_grad(set_to_none=False)` leaves as `.grad`)
    sees the sum. Any other (a broadcast view, another shape or dtype the user assigned) is
    replaced by the sum. The first gradient is a copy, so `.grad` never shares memory with a
    tensor of the graph."""
    import pykern as pk  # the op library imports the engine: its ops are reached on use
    from pykern.tensor.core.strided import has_internal_overlap  # (as above)

    if compiling.ACTIVE[0] is not None:
        compiling.note_accumulate(leaf)  # a replay must find the .grad this one finds
    old = leaf.grad
    if old is None:
        leaf.grad = g.copy()
    elif (isinstance(old, pk.Tensor) and old.shape == tuple(g.shape) and old.dtype == g.dtype
          and not has_internal_overlap(old)):
        old += g
    else:
        leaf.grad = old + g


def _key(t: Any) -> int:
    return id(t.grad_fn) if getattr(t, "grad_fn", None) is not None else id(t)


def _run_node(node: Node, g: Any, retain_graph: bool, deliver: Callable[[Edge, Any], None]
              ) -> None:
    """Runs one node's backward on `g` and hands each input its gradient."""
    if node.backward is None:
        raise RuntimeError(f"backward through {node!r} a second time: its saved tensors "
                           "were freed after the first; pass retain_graph=True to the "
                           "first backward() to keep them")
    node.check_saved()
    grads = node.backward(g)
    if not retain_graph:
        node.release()
    for to, gi in zip(node.edges, grads, strict=True):
        if to is not None and gi is not None:
            deliver(to, gi)


def backward(t: Any, gradient: Any = None, retain_graph: bool = False) -> None:
    """`t.backward(gradient)`: accumulates d(t)/d(leaf) · gradient into every leaf's `.grad`."""
    run([(t, _root_gradient(t, gradient))], retain_graph)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
         retain_graph: bool = False) -> tuple[Any, ...]:
    """`pk.autograd.grad(outputs, inputs, grad_outputs=None)`: the gradients of `outputs`
    (a tensor or a sequence) with respect to each of `inputs`, as a tuple; `.grad` is left
    alone. An input that no output depends on is a RuntimeError, as in PyTorch."""
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if grad_outputs is None:
        gouts: list[Any] = [None] * len(outs)
    else:
        gouts = list(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else [grad_outputs]
    if len(gouts) != len(outs):
        raise ValueError(f"grad: {len(outs)} outputs but {len(gouts)} grad_outputs")
    for t in ins:
        if not getattr(t, "requires_grad", False):
            raise RuntimeError("grad: an input does not require grad (set requires_grad=True "
                               "before computing the outputs)")
    found = run([(o, _root_gradient(o, g)) for o, g in zip(outs, gouts)], retain_graph, ins)
    assert found is not None
    if any(f is None for f in found):
        raise RuntimeError("grad: one of the inputs was not used to compute the outputs")
    return tuple(found)


def _is_complex_value(x: Any) -> bool:
    """Whether a gradient given to backward() (a tensor, array or number) is complex."""
    import numpy as np
    dtype = getattr(x, "dtype", None)
    if dtype is not None and hasattr(dtype, "is_complex"):
        return bool(dtype.is_complex)
    return bool(np.iscomplexobj(x))


def _root_gradient(t: Any, gradient: Any) -> Any:
    import pykern as pk  # the op library imports the engine: its ops are reached on use

    if not getattr(t, "requires_grad", False):
        raise RuntimeError("backward of a tensor that does not require grad: no input of the "
                           "ops that made it has requires_grad=True (or it was made under "
                           "pk.no_grad())")
    if gradient is None:
        if t.dtype.is_complex:
            raise RuntimeError("backward() of a complex result needs a gradient: the implicit "
                               "1 is for a real loss (take pk.real, pk.abs, ... of it first)")
        if t.size != 1:
            raise RuntimeError(f"backward() needs a gradient for a result of shape {t.shape}: "
                               "only a one-element result (a loss) gets the implicit 1")
        return pk.ones(t.shape, t.dtype)
    if _is_complex_value(gradient) != t.dtype.is_complex:
        kinds = ("real", "complex") if t.dtype.is_complex else ("complex", "real")
        raise RuntimeError(f"backward(gradient): a {kinds[0]} gradient for a {kinds[1]} result "
                           f"({t.dtype.name}): the gradient must be of the result's kind, as "
                           "in PyTorch (converting would drop or invent imaginary parts)")
    g = pk.asarray(gradient, dtype=t.dtype)
    if tuple(g.shape) != tuple(t.shape):
        raise ValueError(f"backward(gradient): the gradient has shape {g.shape}, the tensor "
                         f"{t.shape}")
    return g
