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
import itertools
import linecache
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import pykern
from pykern.autograd.graph import needs_grad
from pykern.fuse import codegen, fused_reduction, reduce_codegen
from pykern.fuse.codegen import Group
from pykern.fuse.nodes import Apply, Input, Node, Reduce
from pykern.fuse.trace import Plan, input_tensor, materialised, trace
from pykern.jit.kernel import Kernel
from pykern.tensor.reduce import reduction
from pykern.tensor.core import strided
from pykern.ops.choice import device_info
from pykern.tensor.elementwise.functions import row_form
from pykern.tensor.core.tensor import Tensor, asarray, empty

PLANS_KEPT = 128  # signatures one fused function remembers (least recently used dropped)

_REDUCERS: dict[str, Callable[[Tensor, Reduce], Tensor]] = {
    "sum": lambda t, r: reduction.sum(t, axis=r.axis, keepdims=r.keepdims, dtype=r.sum_dtype),
    "prod": lambda t, r: reduction.prod(t, axis=r.axis, keepdims=r.keepdims, dtype=r.sum_dtype),
    "mean": lambda t, r: reduction.mean(t, axis=r.axis, keepdims=r.keepdims),
    "max": lambda t, r: reduction.max(t, axis=r.axis, keepdims=r.keepdims),
    "min": lambda t, r: reduction.min(t, axis=r.axis, keepdims=r.keepdims),
}


@dataclass(frozen=True)
class Step:
    """One launch of a call: `kernel[grid](*args)`."""

    kernel: Kernel
    grid: Any
    args: tuple


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
        self._texts: dict[Kernel, str] = {}
        self.traces = 0  # how many times the function has been traced (one per signature)

    # ------------------------------------------------------------ calling

    def __call__(self, *args: object, **kwargs: object) -> Any:
        args, kwargs = _device_arguments(args, kwargs)
        tensors = _tensors(args, kwargs)
        # eager, op by op, where a gradient is recorded (each op records its own, complex
        # ones too) or an input is complex (complex ops are not fused)
        if needs_grad(*tensors, complex_ok=True) or any(t.dtype.is_complex for t in tensors):
            return self.__wrapped__(*args, **kwargs)
        plan = self._plan(args, kwargs)
        fused = self._reduction(plan, tensors, empty)
        if fused is not None:
            step, finish = fused
            step.kernel[step.grid](*step.args)
            return (finish(),) if plan.is_tuple else finish()
        values: dict[int, Tensor] = {}
        for group in plan.groups:
            outs = [empty(n.shape, n.dtype) for n in group.outputs]
            for step in self._elementwise(group, tensors, outs):
                step.kernel[step.grid](*step.args)
            values.update({id(n): t for n, t in zip(group.outputs, outs)})
        results = tuple(_result(r, values, tensors) for r in plan.results)
        return results if plan.is_tuple else results[0]

    # ------------------------------------------------------------ inspecting

    def source(self, *args: object, **kwargs: object) -> str:
        """The pykern source of the kernel(s) a call with these arguments runs (several only
        when the results have different shapes), as `@pk.kernel` compiles it."""
        texts: list[str] = []
        for step in self._steps(args, kwargs):
            if self._texts[step.kernel] not in texts:
                texts.append(self._texts[step.kernel])
        return "\n\n".join(texts)

    def kernel(self, *args: object, **kwargs: object) -> Kernel:
        """The `pk.Kernel` a call with these arguments launches (the first, where the results'
        shapes need several)."""
        return self._first_step(args, kwargs).kernel

    def ir(self, *args: object, **kwargs: object) -> Any:
        """The typed IR of the kernel a call with these arguments launches."""
        step = self._first_step(args, kwargs)
        return step.kernel.ir(*step.args)

    def asm(self, *args: object, **kwargs: object) -> str:
        """The SPIR-V disassembly of the kernel a call with these arguments launches."""
        step = self._first_step(args, kwargs)
        return step.kernel.asm(*step.args)

    def __repr__(self) -> str:
        return f"<pk.fuse {self.__module__}.{self.__qualname__}>"

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        """A fused method: bound to its object, which is part of the signature (hashable)."""
        return self if obj is None else functools.partial(self, obj)

    # ------------------------------------------------------------ plans and launches

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

    def _steps(self, args: tuple, kwargs: dict) -> list[Step]:
        """The launches a call with these arguments makes (into stand-in outputs)."""
        args, kwargs = _device_arguments(args, kwargs)
        tensors = _tensors(args, kwargs)
        plan = self._plan(args, kwargs)
        fused = self._reduction(plan, tensors, _stand_in)
        if fused is not None:
            return [fused[0]]
        return [step for g in plan.groups for step in self._elementwise(
            g, tensors, [_stand_in(n.shape, n.dtype) for n in g.outputs])]

    def _first_step(self, args: tuple, kwargs: dict) -> Step:
        steps = self._steps(args, kwargs)
        if not steps:
            raise ValueError(f"{self.__qualname__}: a call with these arguments launches no "
                             "generated kernel (nothing to compute, or only reductions of the "
                             "arguments themselves)")
        return steps[0]

    def _elementwise(self, group: Group, tensors: list[Tensor], outs: list[Tensor]
                     ) -> list[Step]:
        """The launches that compute `group` into `outs`."""
        shape = group.outputs[0].shape
        ins = [input_tensor(i, tensors).broadcast_to(shape) for i in group.inputs]
        consts = [c.value for c in group.constants]
        steps = []
        # (on a GPU the spread pass gives the flat form several elements per invocation)
        for job in strided.plan(shape, [*ins, *outs], rows=row_form()):
            form, grid = job.nd, job.grid
            kernel = self._compiled(group, form, lambda nd=form: codegen.kernel_source(
                _kernel_name(self.__wrapped__), group, nd, _func_ids(group)))
            steps.append(Step(kernel, grid, (*job.views, *consts)))
        return steps

    def _reduction(self, plan: Plan, tensors: list[Tensor], alloc: Callable
                   ) -> tuple[Step, Callable[[], Tensor]] | None:
        """The fused reduction's launch and the function that finishes its result, where the
        plan has one and these arguments' layout allows it (else None: the elementwise kernel
        and the library's reduction run)."""
        if plan.reduction is None:
            return None
        group = plan.groups[0]
        job = fused_reduction.layout(plan.reduction, group, tensors)
        if job is None:
            return None
        spec = fused_reduction.spec(plan.reduction, job, device_info("fused_reduce"))
        name = f"{_kernel_name(self.__wrapped__)}_{spec.op}"
        kernel = self._compiled(group, ("reduce", job.nd, spec.op, spec.acc, spec.mode,
                                        spec.chunk, spec.wg), lambda:
                                reduce_codegen.reduction_source(name, group, job.nd, spec,
                                                                _func_ids(group)), name)
        part = alloc((spec.n_out * spec.n_chunks,), spec.acc)
        consts = [c.value for c in group.constants]
        step = Step(kernel, spec.grid, (*job.views, part, spec.n_red, spec.n_chunks, *consts))
        return step, lambda: fused_reduction.finish(plan.reduction, spec, part)

    def _compiled(self, group: Group, key: object, text: Callable[[], str],
                  name: str | None = None) -> Kernel:
        """The kernel of `group` for `key` (the indexing form, or the reduction's), made once
        per source text."""
        cached = group.kernels.get(key)
        if cached is not None:
            return cached
        source = text()
        k = self._kernels.get(source)
        if k is None:
            k = self._kernels[source] = _make_kernel(
                self.__wrapped__, source, name or _kernel_name(self.__wrapped__),
                _func_names(group))
            self._texts[k] = source
        group.kernels[key] = k
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


def _stand_in(shape: tuple[int, ...], dtype: Any) -> Tensor:
    """An output for planning launches without running them (planning reads only strides)."""
    return Tensor(None, tuple(shape), dtype)


def _result(node: Node, values: dict[int, Tensor], tensors: list[Tensor]) -> Tensor:
    if isinstance(node, Reduce):
        x = materialised(node)
        t = input_tensor(x, tensors) if isinstance(x, Input) else values[id(x)]
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


def _func_ids(group: Group) -> dict[int, str]:
    return {id(f): n for n, f in _func_names(group).items()}


_SERIAL = itertools.count()  # one linecache file name per generated text, process-wide


def _make_kernel(fn: Callable, text: str, name: str, funcs: dict[str, object]) -> Kernel:
    """Compiles `text` as a `@pk.kernel`, registered with linecache under a name of its own so
    that tracebacks, `inspect.getsource` and compile errors show it (the kernel reads its
    source from there when it first compiles)."""
    filename = f"<pk.fuse {fn.__module__}.{fn.__qualname__} #{next(_SERIAL)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict[str, Any] = {"pk": pykern, "__name__": "pykern.fuse.generated", **funcs}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own generated text
    made = namespace[name]
    assert isinstance(made, Kernel), made
    made.source  # noqa: B018 - parsed now: a later linecache.clearcache() must not lose it
    return made
