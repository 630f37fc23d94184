"""The recorded graph: a `Node` per op result that requires grad.

A node holds one `Edge` per input of the op (None where the input was a number or does not
require grad): where that input's gradient goes — the node that made it, as it was when the op
ran, or the leaf tensor itself — with the input's shape and dtype, so the graph keeps no
intermediate tensor alive. Its `backward` is a function from the gradient of the result to the
gradients of the inputs (a tuple, None for an input that gets none). It remembers the versions
(`version`) of the tensors that function reads, and refuses to run once one of them was
overwritten in place. `record` attaches a node to a result when grad mode is on and an input
requires grad; otherwise it does nothing, so ops pay one attribute test when nobody
differentiates.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from pykern.autograd.library import TENSORS
from pykern.autograd.mode import is_grad_enabled, no_grad
from pykern.autograd.region import Region
from pykern.autograd.version import version_of

Backward = Callable[[Any], Sequence[Any]]


class Edge:
    """Where the gradient of one input of a node goes: `node` (the input's grad_fn when the op
    read it) or, for a leaf, `leaf` (the tensor whose `.grad` accumulates it)."""

    __slots__ = ("node", "leaf", "shape", "dtype")

    def __init__(self, t: Any) -> None:
        self.node: Node | None = t.grad_fn
        self.leaf = t if t.grad_fn is None else None
        self.shape: tuple[int, ...] = tuple(t.shape)
        self.dtype = t.dtype


class Saved:
    """A tensor a backward reads, as the version of its memory when it was saved."""

    __slots__ = ("buffer", "version", "shape", "dtype")

    def __init__(self, t: Any) -> None:
        self.buffer = buffer = t.buffer
        self.version: int = buffer.version
        self.shape = tuple(t.shape)
        self.dtype = t.dtype


class Node:
    """How the gradient of one op's result reaches the op's inputs."""

    __slots__ = ("name", "edges", "backward", "saved", "__weakref__")

    def __init__(self, name: str, edges: tuple[Edge | None, ...], backward: Backward,
                 saved: tuple[Saved, ...] = ()) -> None:
        self.name = name
        self.edges = edges
        self.backward: Backward | None = backward
        self.saved = saved

    def __repr__(self) -> str:
        return f"<{self.name}Backward>"

    def check_saved(self) -> None:
        """RuntimeError naming the op if a tensor its backward reads was overwritten since."""
        for s in self.saved:
            now = version_of(s.buffer)
            if now != s.version:
                raise RuntimeError(
                    f"one of the tensors needed for the gradient of {self.name} was modified by "
                    f"an in-place operation: a {s.dtype.name} tensor of shape {s.shape} is at "
                    f"version "
                    f"{now}, {self.name} saved it at version {s.version}. Compute a new tensor "
                    "instead of writing in place (x = x + 1, not x += 1), or write into a "
                    ".clone()")

    def release(self) -> None:
        """Drops what the backward holds (the saved tensors), once it has run."""
        self.backward = None
        self.saved = ()


class ViewNode(Node):
    """The node of a view (slicing, transpose, reshape...): it also remembers the version of
    the memory it shares when it was taken. A view used after its memory was overwritten in
    place would send its gradient to the base as it was before the write, so `record` gives
    it a new node first (`refresh_stale_views`)."""

    __slots__ = ("buffer", "version")

    def __init__(self, name: str, edges: tuple[Edge | None, ...], backward: Backward,
                 view: Any) -> None:
        super().__init__(name, edges, backward)
        # weakly: the view holds its buffer while it can be used, and the graph should not
        # hold the memory of a view no backward reads
        self.buffer = weakref.ref(view.buffer)
        self.version = version_of(view.buffer)

    def stale(self) -> bool:
        buffer = self.buffer()
        return buffer is not None and version_of(buffer) != self.version


def needs_grad(*inputs: object, complex_ok: bool = False) -> bool:
    """Whether an op on `inputs` records: grad mode is on and one input requires grad.

    A complex input that requires grad is refused (NotImplementedError) unless the op says
    `complex_ok`: only ops whose backward is written for complex numbers say so, so an op
    written for real gradients can never silently give a complex input a wrong one or none."""
    for t in inputs:  # every op asks: the common answer (no input requires grad) first
        if getattr(t, "requires_grad", False):
            if not is_grad_enabled():
                return False
            if not complex_ok:
                refuse_complex(inputs)
            return True
    return False


def refuse_grad(name: str, *inputs: Any) -> None:
    """For ops without a backward: a clear error when an input requires grad (and grad mode
    records), instead of a result that silently cuts the graph."""
    flat = [t for x in inputs for t in (x if isinstance(x, (list, tuple)) else (x,))]
    if needs_grad(*flat, complex_ok=True):
        raise NotImplementedError(f"pk.{name} has no backward yet: compute it under pk.no_grad() "
                                  "or on .detach()ed inputs")


def refuse_complex(inputs: Sequence[object]) -> None:
    """The error for a complex tensor that requires grad reaching an op without a complex
    backward, naming the op (the first public pykern function on the stack)."""
    complex_inputs = [t for t in inputs if getattr(t, "requires_grad", False)
                      and getattr(getattr(t, "dtype", None), "is_complex", False)]
    if not complex_inputs:
        return
    op = _calling_op()
    raise NotImplementedError(
        f"{op} has no backward for complex tensors (a {complex_inputs[0].dtype.name} input "
        "requires grad): compute it under pk.no_grad() or on .detach()ed inputs, or on the "
        "parts (pk.real, pk.imag, pk.view_as_real)")


def _calling_op() -> str:
    """The name of the pykern op that asked `needs_grad`: the outermost public function of
    the pykern package on the stack below the user's call."""
    import sys
    frame = sys._getframe(2)
    name = "this op"
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("pykern"):
            break
        if not frame.f_code.co_name.startswith("_") and not module.startswith("pykern.autograd"):
            namespace = next((ns for ns in ("linalg", "fft") if module.startswith(
                f"pykern.{ns}.")), None)
            name = f"pk.{namespace + '.' if namespace else ''}{frame.f_code.co_name}"
        frame = frame.f_back
    return name


def edge(t: object) -> Edge | None:
    """The edge to `t` for a node that reads it: None unless `t` requires grad."""
    return Edge(t) if getattr(t, "requires_grad", False) else None


def record(name: str, result: Any, inputs: Sequence[object], backward: Backward,
           saved: Sequence[object] | None = None, view: bool = False) -> Any:
    """`result` with a `grad_fn` when `needs_grad(*inputs)`; `result` unchanged otherwise.

    `saved` lists the tensors `backward` reads (their versions are checked before it runs);
    None means, conservatively, every tensor input and the result. `view`: `result` shares
    the memory of `inputs[0]`."""
    if not needs_grad(*inputs, complex_ok=True):  # (the op decided; complex or not)
        return result
    if view:
        refresh_stale_views(inputs)
        result.requires_grad = True
        result.grad_fn = ViewNode(name, tuple(edge(t) for t in inputs), backward, result)
        return result
    return attach(name, result, inputs, backward, (*inputs, result) if saved is None else saved)


def attach(name: str, result: Any, inputs: Sequence[object], backward: Backward,
           saved: Sequence[object]) -> Any:
    """`record` once the op has asked `needs_grad(*inputs)` and got True (what every recorded
    op pays, so written for the common inputs: tensors that require grad or none): `result`
    gets a node whose `backward` reads `saved`."""
    for t in inputs:  # refresh_stale_views, inline
        node = getattr(t, "grad_fn", None)
        if node is not None and type(node) is ViewNode and node.stale():
            refresh_stale_views(inputs)
            break
    edges = tuple([Edge(t) if getattr(t, "requires_grad", False) else None for t in inputs])
    result.requires_grad = True
    result.grad_fn = Node(name, edges, backward,
                          tuple([Saved(t) for t in saved if hasattr(t, "buffer")]))
    return result


def refresh_stale_views(inputs: Sequence[object]) -> None:
    """An input that is a view taken before its memory was written in place gets a new
    grad_fn: a view of its base as it is now (as PyTorch regenerates a view's grad_fn), since
    its values are the base's current ones. Ops that read it before keep the old path, as
    they read the old values."""
    for t in inputs:
        node = getattr(t, "grad_fn", None)
        if isinstance(node, ViewNode) and node.stale():
            base = t._base  # type: ignore[attr-defined]
            if base.dtype.is_complex != t.dtype.is_complex:
                back = _parts_scatter(base, t)
            else:
                back = Region(base, t).scatter
            t.grad_fn = ViewNode(node.name, (Edge(base),),  # type: ignore[attr-defined]
                                 lambda g, b=back: (b(g),), t)


def _parts_scatter(base: Any, view: Any) -> Callable[[Any], Any]:
    """The base's gradient from the view's, for a view that sees its base's memory as
    another dtype (view_as_real, .real or .imag of a complex base; view_as_complex of a real
    one). Their element strides count different units (a complex element is two parts), so
    the region is taken between the real views of both, and the gradient moves as parts."""
    view_as_complex, view_as_real = TENSORS.view_as_complex, TENSORS.view_as_real
    with no_grad():  # (layouts only)
        region = Region(view_as_real(base) if base.dtype.is_complex else base,
                        view_as_real(view) if view.dtype.is_complex else view)

    def scatter(g: Any) -> Any:
        whole = region.scatter(view_as_real(g) if g.dtype.is_complex else g)
        return view_as_complex(whole) if base.dtype.is_complex else whole
    return scatter
