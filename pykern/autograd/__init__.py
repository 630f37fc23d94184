"""Reverse-mode automatic differentiation for `pk.Tensor`.

Ops record a graph while an input `requires_grad` and grad mode is on (`mode`): each result
gets a `grad_fn` (`graph.Node`) that knows its inputs and how to turn the gradient of the
result into theirs, a composition of tensor ops (`derivatives`). `Tensor.backward()` and
`pk.autograd.grad` walk that graph in reverse topological order (`engine`), accumulating
into the leaves' `.grad`; `Function` lets a user's own kernels take part.
"""

from pykern.autograd.engine import grad
from pykern.autograd.function import Function, FunctionCtx
from pykern.autograd.hooks import queue_callback, register_post_accumulate_grad_hook
from pykern.autograd.mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

__all__ = ["Function", "FunctionCtx", "enable_grad", "grad", "is_grad_enabled", "no_grad",
           "queue_callback", "register_post_accumulate_grad_hook", "set_grad_enabled"]
