"""What the tensor ops call to record their backward: one function per kind of op, so that
each op module adds a line, not a mechanism. The backward itself is the op's (declared with it,
`pykern.ops`): these take it as an argument and know no op."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.graph import attach, record


def _float(t: Any) -> bool:
    """Whether `t` has gradients: float and complex tensors (complex ops record through
    `complex_grads`; the formulas here that reach them are layout or linear)."""
    return t.dtype.is_float or t.dtype.is_complex


def _alias(t: Any) -> Any:
    """What a backward keeps of a tensor it reads: an alias of its memory without its graph
    (so a node holding its own result makes no reference cycle); numbers as they are."""
    return t.detach() if hasattr(t, "detach") else t


_READS: dict[Any, tuple[str, ...]] = {}  # formula -> reads(formula), for the declared ones


def reads(formula: Callable[..., Any]) -> tuple[str, ...]:
    """The names of the tensors a backward formula reads: its parameters after `g` (what its
    op must save for it), or those a wrapper declares in its `reads` attribute."""
    found = _READS.get(formula)
    if found is None:
        found = _reads(formula)
        if len(_READS) < 4096:  # the formulas declared with ops: a bounded set
            _READS[formula] = found
    return found


def _reads(formula: Callable[..., Any]) -> tuple[str, ...]:
    declared = getattr(formula, "reads", None)
    if declared is not None:
        return tuple(declared)
    code = formula.__code__
    return code.co_varnames[1:code.co_argcount]


def refuse(name: str) -> Callable[..., Any]:
    """The backward of a float op declared without one: a clear error when it is reached."""
    def backward(g: Any) -> Any:
        raise NotImplementedError(f"the gradient of {name} is not implemented in pykern yet")
    return backward


def record_unary(name: str, out: Any, x: Any, formula: Callable[..., Any] | None) -> Any:
    """`out` = the unary op `name` of `x`, recorded with `formula` (its declared backward: a
    function of `g` and, by name, the tensors it reads, `x` and `out`); None refuses. The
    caller asked `needs_grad(x)` and got True."""
    if not _float(out):
        return out
    if formula is None:
        return attach(name, out, (x,), refuse(name), (x, out))
    read = reads(formula)
    if not read:
        return attach(name, out, (x,), lambda g: (formula(g),), ())
    kw = {n: _alias(x if n == "x" else out) for n in read}
    return attach(name, out, (x,), lambda g: (formula(g, **kw),),
                  [x if n == "x" else out for n in read])


def record_binary(name: str, out: Any, a: Any, b: Any,
                  pair: tuple[Callable[..., Any], Callable[..., Any]] | None) -> Any:
    """A binary op's backward runs (and saves what it reads for) only the formulas of the
    inputs that require grad: `y * 3` saves nothing, `y * w` saves `w` for y's gradient.
    `pair` is the op's declared backward (None refuses). The caller asked `needs_grad(a, b)`
    and got True (every op does before it records: here it is not asked again)."""
    if not _float(out):
        return out
    if pair is None:
        return attach(name, out, (a, b), refuse(name), (a, b, out))
    backward, saved = pair_backward(out, a, b, pair, _alias)
    return attach(name, out, (a, b), backward, saved)


def record_pair(name: str, out: Any, a: Any, b: Any, pair: tuple[Any, Any],
                operand: Any) -> Any:
    """`out` = op `name` of `a` and `b`, recorded with `pair`, the formulas of a's and b's
    gradients (each run only for an input that requires grad); `operand(t)` is what a
    formula reads of a, b or out (an alias without the graph, or a converted copy)."""
    backward, saved = pair_backward(out, a, b, pair, operand)
    return record(name, out, (a, b), backward, saved=saved)


def pair_backward(out: Any, a: Any, b: Any, pair: tuple[Any, Any], operand: Any
                  ) -> tuple[Callable[[Any], tuple[Any, Any]], list[Any]]:
    """The backward of a binary op (as `record_pair` describes it) and the tensors it reads."""
    values: dict[str, Any] = {}  # each tensor read, as `operand` gives it, once
    fa, fb = pair
    ka = _read(fa, a, b, out, values, operand) if getattr(a, "requires_grad", False) else None
    kb = _read(fb, a, b, out, values, operand) if getattr(b, "requires_grad", False) else None
    saved = [t for n, t in (("a", a), ("b", b), ("out", out))
             if n in values and hasattr(t, "buffer")] if values else []
    if kb is None:
        return (lambda g: (fa(g, **ka), None)), saved  # type: ignore[arg-type]
    if ka is None:
        return (lambda g: (None, fb(g, **kb))), saved
    return (lambda g: (fa(g, **ka), fb(g, **kb))), saved


def _named(n: str, a: Any, b: Any, out: Any) -> Any:
    return a if n == "a" else b if n == "b" else out


def _read(formula: Callable[..., Any], a: Any, b: Any, out: Any, values: dict[str, Any],
          operand: Any) -> dict[str, Any]:
    """The keyword arguments of `formula` (what it reads of a, b and out), each made once
    into `values`."""
    kw = {}
    for n in reads(formula):
        if n not in values:
            values[n] = operand(_named(n, a, b, out))
        kw[n] = values[n]
    return kw


def record_cast(out: Any, x: Any) -> Any:
    """`astype`/`copy`: the gradient goes back converted (the engine fits the dtype)."""
    if out is x or not (_float(out) and _float(x)):
        return out
    return record("astype", out, (x,), lambda g: (g,), saved=())


def record_view(name: str, out: Any, x: Any, back: Any) -> Any:
    """A view of `x` (reshape, permute, slicing...): `back(g)` is the gradient of `x`."""
    if out is x:
        return out
    return record(name, out, (x,), lambda g: (back(g),), view=True)
