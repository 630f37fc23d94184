"""The public function of an op: its forward, recorded for autograd as the op declares.

An op module writes its forward without autograd and binds it through `public`:

    def cumsum(x, axis=None, dtype=None): ...          # kernels only
    cumsum = public(CUMSUM, cumsum)                     # CUMSUM = register(Op(...))

Where an input requires grad (and grad mode records), the function runs the op's declared
backward instead — `backward(forward, *args, **kwargs)`, which runs `forward` cut from the graph
and records how the gradient flows back (grad="rule"), or runs a composition of differentiable
ops (grad="composite"). An op declared grad="refused" raises NotImplementedError naming it; the
others (grad "none", "linear", "formula") record inside their forward, so the forward is their
public function as it is. The elementwise ops record their formulas in their runner
(`pykern.tensor.elementwise.functions`), which binds them itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.graph import needs_grad, refuse_grad
from pykern.ops.registry import Aliases, Impl, Op, bind, register


def _requires_grad(args: tuple, kwargs: dict) -> bool:
    """Whether any argument (or a tensor in a list or tuple argument) requires grad: the
    common answer, no, after one attribute test per argument."""
    for value in (*args, *kwargs.values()) if kwargs else args:
        if getattr(value, "requires_grad", False):
            return True
        if isinstance(value, (list, tuple)) and any(getattr(v, "requires_grad", False)
                                                    for v in value):
            return True
    return False


def _inputs(args: tuple, kwargs: dict) -> list[Any]:
    """The arguments, with lists and tuples of them flattened one level."""
    flat: list[Any] = []
    for value in (*args, *kwargs.values()):
        if isinstance(value, (list, tuple)):
            flat.extend(value)
        else:
            flat.append(value)
    return flat


def public(op: Op, forward: Callable[..., Any]) -> Callable[..., Any]:
    """The public function of `op`, bound to it in the registry (see the module docstring).
    Its code is named after the op, so errors that name "the op on the stack" name it."""
    if op.grad in ("rule", "composite") and op.backward is not None:
        rule, complex_ok = op.backward, op.complex_grad

        def function(*args: Any, **kwargs: Any) -> Any:
            if _requires_grad(args, kwargs) and needs_grad(*_inputs(args, kwargs),
                                                           complex_ok=complex_ok):
                return rule(forward, *args, **kwargs)
            return forward(*args, **kwargs)
    elif op.grad == "refused":
        # named as users call it: pk.<name>, or under the one namespace that exports it
        label = op.name if "pk" in op.exports or not op.exports else \
            f"{op.exports[0]}.{op.name}"

        def function(*args: Any, **kwargs: Any) -> Any:
            if _requires_grad(args, kwargs):
                refuse_grad(label, *_inputs(args, kwargs))
            return forward(*args, **kwargs)
    else:
        return bind(op.name, forward)
    function.__code__ = function.__code__.replace(co_name=forward.__name__)
    function.__name__ = forward.__name__
    function.__qualname__ = forward.__qualname__
    function.__doc__ = forward.__doc__
    function.__module__ = forward.__module__
    function.__wrapped__ = forward  # type: ignore[attr-defined]
    return bind(op.name, function)


def declare(forward: Callable[..., Any], kind: str, *, name: str | None = None,
            doc: str | None = None, **fields: Any) -> Callable[..., Any]:
    """Declares the op whose forward is `forward` (named after it unless `name`; its doc line
    the first line of its docstring unless `doc`; the other fields those of `Op`) and returns
    its public function:

        cumsum = declare(cumsum, "scan", grad="rule", backward=_cumsum_backward, ...)
    """
    line = doc if doc is not None else first_sentence(forward.__doc__ or "")
    return public(register(Op(name or forward.__name__, line, kind, **fields)), forward)


def internal(name: str, kind: str, doc: str, *implementations: Impl, **fields: Any) -> Op:
    """Declares a step that several ops share (the elementwise launch, a reduction stage, an
    LU factorisation): not exported and without a public function, but in the registry with
    its implementations and where each applies, so that its kernel choice is data as an op's
    is. Returns the `Op`; its code asks `.choose(info, *operands)`."""
    return register(Op(name, doc, kind, exports=(), implementations=implementations,
                       **fields))


def torch_names(torch: str | None, *aten: str, numpy: str | tuple[str, ...] | None = None,
                array_api: str | None = None) -> Aliases:
    """Aliases from PyTorch's function name and its ATen operators (numpy's and the array
    API's where given)."""
    if isinstance(numpy, str):
        numpy = (numpy,)
    return Aliases(numpy=numpy or (), array_api=array_api,
                   torch=(torch,) if torch else (), aten=aten)


def first_sentence(docstring: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[:end + 1]
