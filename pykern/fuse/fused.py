"""`@pk.fuse`: a function of tensors run as one generated kernel per argument signature.

    @pk.fuse
    def f(a, b):
        return pk.exp(a) * 2 + b

    f(A, B)            # traced once for A's and B's dtypes and shapes, then one launch
    print(f.source(A, B))

A signature is what the generated code depends on: each tensor argument's dtype and shape
(not its strides: any view works, `strided.plan` indexes it), each other argument's type and
value (Python numbers included: the trace may depend on them, as `x ** 2` does), and the
keyword names. Tracing runs the function once per signature (`trace`); the kernel text of each
indexing form is compiled once per text by `@pk.kernel` (which keeps a variant per device).
"""

from __future__ import annotations

import functools
import linecache
import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

import pykern
from pykern.autograd.graph import needs_grad
from pykern.fuse import codegen
from pykern.fuse.codegen import Group
from pykern.fuse.nodes import Apply, Input, Node, Reduce
from pykern.fuse.trace import Plan, materialised, trace
from pykern.jit.kernel import Kernel, kernel
from pykern.tensor import reduction, strided
from pykern.tensor.device_limits import is_host_device
from pykern.tensor.tensor import Tensor, asarray, empty

PLANS_KEPT = 128  # signatures one fused function remembers (least recently used dropped)

_REDUCERS: dict[str, Callable[[Tensor, Reduce], Tensor]] = {
    "sum": lambda t, r: reduction.sum(t, axis=r.axis, keepdims=r.keepdims, dtype=r.sum_dtype),
    "prod": lambda t, r: reduction.prod(t, axis=r.axis, keepdims=r.keepdims, dtype=r.sum_dtype),
    "mean": lambda t, r: reduction.mean(t, axis=r.axis, keepdims=r.keepdims),
    "max": lambda t, r: reduction.max(t, axis=r.axis, keepdims=r.keepdims),
    "min": lambda t, r: reduction.min(t, axis=r.axis, keepdims=r.keepdims),
}


class Fused:
    """A `@pk.fuse` function. Calling it runs the generated kernel(s) for the arguments'
    signature; `source`, `kernel`, `ir` and `asm` show what a call with those arguments runs.
    Where a tensor argument requires grad (and grad mode is on), the call runs the function
    eagerly instead, so that autograd records its ops."""

    def __init__(self, fn: Callable):
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self._plans: OrderedDict[tuple, Plan] = OrderedDict()
        self._kernels: dict[str, Kernel] = {}  # by source text
        self.traces = 0  # how many times the function has been traced (one per signature)

    # ------------------------------------------------------------ calling

    def __call__(self, *args: object, **kwargs: object) -> Any:
        args, kwargs = _device_arguments(args, kwargs)
        tensors = _tensors(args, kwargs)
        if needs_grad(*tensors):
            return self.__wrapped__(*args, **kwargs)
        plan = self._plan(args, kwargs)
        values: dict[int, Tensor] = {}
        for group in plan.groups:
            outs = [empty(n.shape, n.dtype) for n in group.outputs]
            for k, launch_args in self._launches(group, tensors, outs):
                k[launch_args[0]](*launch_args[1:])
            values.update({id(n): t for n, t in zip(group.outputs, outs)})
        results = tuple(_result(r, values, tensors) for r in plan.results)
        return results if plan.is_tuple else results[0]

    # ------------------------------------------------------------ inspecting

    def source(self, *args: object, **kwargs: object) -> str:
        """The pykern source of the kernel(s) a call with these arguments runs (several only
        when the results have different shapes), as `@pk.kernel` compiles it."""
        plan, tensors = self._call(args, kwargs)
        return "\n\n".join(self._text(g, self._nd(g, tensors)) for g in plan.groups)

    def kernel(self, *args: object, **kwargs: object) -> Kernel:
        """The `pk.Kernel` a call with these arguments launches (the first, where the results'
        shapes need several)."""
        plan, tensors = self._call(args, kwargs)
        group = self._group(plan)
        return self._compiled(group, self._nd(group, tensors))

    def ir(self, *args: object, **kwargs: object) -> Any:
        """The typed IR of the kernel a call with these arguments launches."""
        k, launch_args = self._first_launch(args, kwargs)
        return k.ir(*launch_args)

    def asm(self, *args: object, **kwargs: object) -> str:
        """The SPIR-V disassembly of the kernel a call with these arguments launches."""
        k, launch_args = self._first_launch(args, kwargs)
        return k.asm(*launch_args)

    def __repr__(self) -> str:
        return f"<pk.fuse {self.__module__}.{self.__qualname__}>"

    # ------------------------------------------------------------ plans and kernels

    def _plan(self, args: tuple, kwargs: dict) -> Plan:
        key = _signature(args, kwargs)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = trace(self.__wrapped__, args, kwargs)
            self.traces += 1
            if len(self._plans) > PLANS_KEPT:
                self._plans.popitem(last=False)
        else:
            self._plans.move_to_end(key)
        return plan

    def _call(self, args: tuple, kwargs: dict) -> tuple[Plan, list[Tensor]]:
        args, kwargs = _device_arguments(args, kwargs)
        return self._plan(args, kwargs), _tensors(args, kwargs)

    def _group(self, plan: Plan) -> Group:
        if not plan.groups:
            raise ValueError(f"{self.__qualname__}: these arguments need no generated kernel "
                             "(the results are reductions of the arguments themselves)")
        return plan.groups[0]

    def _launches(self, group: Group, tensors: list[Tensor], outs: list[Tensor]
                  ) -> list[tuple[Kernel, tuple]]:
        """(kernel, (grid, *arguments)) of each launch that computes `group` into `outs`."""
        shape = group.outputs[0].shape
        ins = [_input_tensor(i, tensors).broadcast_to(shape) for i in group.inputs]
        consts = [c.value for c in group.constants]
        return [(self._compiled(group, job.nd), (job.grid, *job.views, *consts))
                for job in strided.plan(shape, [*ins, *outs], rows=is_host_device())]

    def _nd(self, group: Group, tensors: list[Tensor]) -> int:
        """The indexing form a call's first launch of `group` uses (1 where none runs)."""
        shape = group.outputs[0].shape
        views = [_input_tensor(i, tensors).broadcast_to(shape) for i in group.inputs]
        views += [_dummy_output(n) for n in group.outputs]
        return next((job.nd for job in strided.plan(shape, views, rows=is_host_device())), 1)

    def _first_launch(self, args: tuple, kwargs: dict) -> tuple[Kernel, tuple]:
        plan, tensors = self._call(args, kwargs)
        group = self._group(plan)
        outs = [empty(n.shape, n.dtype) for n in group.outputs]
        launches = self._launches(group, tensors, outs)
        if not launches:
            raise ValueError(f"{self.__qualname__}: these arguments have no elements, so "
                             "no kernel runs")
        k, (_, *launch_args) = launches[0]
        return k, tuple(launch_args)

    def _text(self, group: Group, nd: int) -> str:
        names = _func_names(group)
        return codegen.kernel_source(_kernel_name(self.__wrapped__), group, nd,
                                     {id(f): n for n, f in names.items()})

    def _compiled(self, group: Group, nd: int) -> Kernel:
        """The kernel of `group` for indexing form `nd`, made once per source text."""
        cached = group.kernels.get(nd)
        if cached is not None:
            return cached
        text = self._text(group, nd)
        k = self._kernels.get(text)
        if k is None:
            k = self._kernels[text] = _make_kernel(self.__wrapped__, text, _func_names(group),
                                                   len(self._kernels))
        group.kernels[nd] = k
        return k


def fuse(fn: Callable) -> Fused:
    """Decorator: fuses the elementwise ops of a function of tensors (with broadcasting, type
    promotion, and optional reductions of its results) into one generated `@pk.kernel` per
    argument signature. See docs/fuse.md."""
    return Fused(fn)


# ---------------------------------------------------------------- arguments


def _device_arguments(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """numpy arrays and scalars become tensors, as eager ops make them."""
    def conv(x: object) -> object:
        return asarray(x) if isinstance(x, (np.ndarray, np.generic)) else x
    if not any(isinstance(x, (np.ndarray, np.generic)) for x in (*args, *kwargs.values())):
        return args, kwargs
    return tuple(conv(a) for a in args), {k: conv(v) for k, v in kwargs.items()}


def _tensors(args: tuple, kwargs: dict) -> list[Tensor]:
    """The tensor arguments in the order `trace` numbers them."""
    return [x for x in (*args, *kwargs.values()) if isinstance(x, Tensor)]


def _signature(args: tuple, kwargs: dict) -> tuple:
    return (tuple(_arg_key(a) for a in args),
            tuple((k, _arg_key(v)) for k, v in kwargs.items()))


def _arg_key(x: object) -> object:
    if isinstance(x, Tensor):
        return ("tensor", x.dtype, x.shape)
    if isinstance(x, float):
        # nan equals nothing and -0.0 equals 0.0: key on the bits' meaning instead
        return (float, "nan" if x != x else x, math.copysign(1.0, x))
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"@pk.fuse: an argument of type {type(x).__name__} is neither a "
                        "tensor nor a hashable value the trace can be keyed on") from None
    return (type(x), x)


def _input_tensor(node: Input, tensors: list[Tensor]) -> Tensor:
    return node.captured if node.captured is not None else tensors[node.index]


def _dummy_output(node: Node) -> Tensor:
    """A stand-in output for planning the launches (no memory: planning reads strides)."""
    return Tensor(None, node.shape, node.dtype)


def _result(node: Node, values: dict[int, Tensor], tensors: list[Tensor]) -> Tensor:
    if isinstance(node, Reduce):
        x = materialised(node)
        t = _input_tensor(x, tensors) if isinstance(x, Input) else values[id(x)]
        return _REDUCERS[node.op](t, node)
    return values[id(node)]


# ---------------------------------------------------------------- making kernels


def _kernel_name(fn: Callable) -> str:
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in fn.__name__)
    return f"fused_{name}"


def _func_names(group: Group) -> dict[str, object]:
    """The element functions `group` calls, each under a name unique in its kernel's text."""
    names: dict[str, object] = {}
    for n in group.order:
        if isinstance(n, Apply) and n.fn is not None and not any(f is n.fn for f in
                                                                  names.values()):
            base = getattr(n.fn, "__name__", "element_f")
            name, k = base, 1
            while name in names:
                k += 1
                name = f"{base}{k}"
            names[name] = n.fn
    return names


def _make_kernel(fn: Callable, text: str, funcs: dict[str, object], serial: int) -> Kernel:
    """Compiles `text` as a `@pk.kernel`, registered with linecache under a name of its own so
    that tracebacks, `inspect.getsource` and compile errors show it."""
    filename = f"<pk.fuse {fn.__module__}.{fn.__qualname__} #{serial}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict[str, Any] = {"pk": pykern, "__name__": "pykern.fuse.generated", **funcs}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own generated text
    return kernel(namespace[_kernel_name(fn)])
