"""Operators run as PyTorch's own decompositions (`torch._decomp`): Python functions that
express an operator through other ATen operators, which then run on pykern one by one. Used
for the long tail of operators that have no pykern op of their own; each use is an entry of
the table, so what is decomposed is listed, not implied."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch._decomp

_TABLE = torch._decomp.decomposition_table


def _decomposition(overload: torch._ops.OpOverload) -> Callable[..., object]:
    """PyTorch's decomposition of `overload`; where this PyTorch version has none (they come
    and go between versions), a function raising the error of an unsupported operator."""
    fn = _TABLE.get(overload)
    if fn is not None:
        return fn  # type: ignore[no-any-return]

    def missing(*args: object, **kwargs: object) -> object:
        raise NotImplementedError(f"the pykern device has no implementation of aten::"
                                  f"{overload._schema.name.split('::')[-1]} (it runs as PyTorch's"
                                  f" decomposition, which PyTorch {torch.__version__} lacks)")
    return missing


def decomposed(overload: torch._ops.OpOverload) -> Callable[..., object]:
    """`overload` run by its decomposition (where this PyTorch version has none, a call
    raises the NotImplementedError of an unsupported operator)."""
    fn = _decomposition(overload)

    def impl(*args: object, **kwargs: object) -> object:
        return _done(fn(*args, **kwargs), overload)
    impl.__name__ = f"decomposed_{overload.__name__}"
    return impl


def decomposed_out(functional: torch._ops.OpOverload) -> Callable[..., object]:
    """The `.out` overload of `functional`: its decomposition's result copied into out (and
    into every out tensor of a multi-output operator)."""
    fn = _decomposition(functional)

    def impl(*args: object, **kwargs: object) -> object:
        outs = {k: kwargs.pop(k) for k in list(kwargs) if isinstance(kwargs[k], torch.Tensor)
                and k not in _argument_names(functional)}
        result = _done(fn(*args, **kwargs), functional)
        results = result if isinstance(result, tuple) else (result,)
        targets = list(outs.values())
        for target, value in zip(targets, results):
            if target.shape != value.shape:
                target.resize_(value.shape)
            target.copy_(value)
        return targets[0] if len(targets) == 1 else tuple(targets)
    impl.__name__ = f"decomposed_out_{functional.__name__}"
    return impl


def _done(result: object, overload: torch._ops.OpOverload) -> object:
    """A decomposition's result; NotImplemented (a case it does not cover) as the error of an
    unsupported operator."""
    if result is NotImplemented:
        raise NotImplementedError(f"the pykern device has no implementation of "
                                  f"aten::{overload._schema.name.split('::')[-1]} for these "
                                  "arguments (this PyTorch's decomposition does not cover them)")
    return result


def _argument_names(overload: torch._ops.OpOverload) -> set[str]:
    return {a.name for a in overload._schema.arguments}


def decomposed_inplace(functional: torch._ops.OpOverload) -> Callable[..., object]:
    """The in-place overload of `functional`: its decomposition's result copied into self."""
    fn = _decomposition(functional)

    def impl(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        return self.copy_(fn(self, *args, **kwargs))
    impl.__name__ = f"decomposed_inplace_{functional.__name__}"
    return impl


def has(overload: torch._ops.OpOverload) -> bool:
    """Whether PyTorch has a decomposition of `overload`."""
    return overload in _TABLE


def _autograd_inside() -> torch._C._ForceDispatchKeyGuard:
    """Admits PyTorch's autograd again inside a kernel (the dispatcher leaves it out below
    the autograd key), so that a backward can be taken of a decomposition run there."""
    keys = torch._C.DispatchKey
    exclude = torch._C._dispatch_tls_local_exclude_set()
    for key in (keys.ADInplaceOrView, keys.AutogradFunctionality):
        exclude = exclude.remove(key)
    return torch._C._ForceDispatchKeyGuard(torch._C._dispatch_tls_local_include_set(), exclude)


def _vjp(fn: Callable[..., torch.Tensor], inputs: list[torch.Tensor], args: tuple,
         grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
    """The gradients of `fn(*inputs, *args)` with respect to `inputs` for `grad_output`, taken
    by PyTorch's autograd over `fn`'s ATen operators, which run on pykern."""
    with _autograd_inside(), torch.enable_grad():
        leaves = [x.detach().requires_grad_() for x in inputs]
        result = fn(*leaves, *args)
        return torch.autograd.grad(result, leaves, grad_output, allow_unused=True)


def upsample_backward(forward: torch._ops.OpOverload) -> Callable[..., torch.Tensor]:
    """`upsample_*_backward.grad_input(grad_output, output_size, input_size, *rest)`: the
    gradient of the forward's decomposition (`forward(input, output_size, *rest)`, linear in
    its input) by autograd over it."""
    fn = _decomposition(forward)

    def impl(grad_output: torch.Tensor, output_size: list[int], input_size: list[int],
             *rest: object, grad_input: torch.Tensor) -> torch.Tensor:
        zeros = grad_output.new_zeros(input_size)
        (grad,) = _vjp(fn, [zeros], (output_size, *rest), grad_output)
        grad = zeros if grad is None else grad
        if grad_input.shape != grad.shape:
            grad_input.resize_(grad.shape)
        return grad_input.copy_(grad)
    impl.__name__ = f"upsample_backward_{forward.__name__}"
    return impl


def grid_sampler_2d_backward(grad_output: torch.Tensor, input: torch.Tensor, grid: torch.Tensor,
                             interpolation_mode: int, padding_mode: int, align_corners: bool,
                             output_mask: list[bool]) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradients of grid_sampler_2d's decomposition with respect to its input and grid."""
    grads = _vjp(_decomposition(torch.ops.aten.grid_sampler_2d.default), [input, grid],
                 (interpolation_mode, padding_mode, align_corners), grad_output)
    return tuple(torch.zeros_like(x) if g is None else g  # type: ignore[return-value]
                 for x, g in zip((input, grid), grads))


def pad_backward(forward: torch._ops.OpOverload, out: bool) -> Callable[..., torch.Tensor]:
    """`replication_pad*d_backward` (its `.grad_input` when `out`): the gradient of the
    forward's decomposition (linear in its input) by autograd over it."""
    fn = _decomposition(forward)

    def impl(grad_output: torch.Tensor, self: torch.Tensor, padding: list[int], *,
             grad_input: torch.Tensor | None = None) -> torch.Tensor:
        (grad,) = _vjp(fn, [torch.zeros_like(self)], (padding,), grad_output)
        grad = torch.zeros_like(self) if grad is None else grad
        if grad_input is None:
            return grad
        if grad_input.shape != grad.shape:
            grad_input.resize_(grad.shape)
        return grad_input.copy_(grad)
    impl.__name__ = f"pad_backward_{forward.__name__}{'_out' if out else ''}"
    return impl


def loss_backward(forward: torch._ops.OpOverload, arguments: int,
                  output: int | None = None) -> Callable[..., torch.Tensor]:
    """`*_loss_backward(grad_output, self, *rest)`: the gradient with respect to `self` of the
    forward's decomposition (`forward(self, *rest[:arguments])`, its `output`-th result where
    it has several) by autograd over it."""
    fn = _decomposition(forward)

    def loss(*args: object) -> torch.Tensor:
        result = fn(*args)
        return result if output is None else result[output]

    def impl(grad_output: torch.Tensor, self: torch.Tensor, *rest: object) -> torch.Tensor:
        (grad,) = _vjp(loss, [self], rest[:arguments], grad_output)
        return torch.zeros_like(self) if grad is None else grad
    impl.__name__ = f"loss_backward_{forward.__name__}"
    return impl
