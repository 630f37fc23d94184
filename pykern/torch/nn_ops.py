"""Neural-network operators: softmax and its backward, layer and batch norm with their
backward, embedding's backward, the negative log-likelihood loss, max/avg/adaptive pooling.
Convolution and attention are in `conv_ops` and `attention_ops`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

import pykern as pk
from pykern.torch.args import new, operand, opt, pk_dtype, write

_LOW = (torch.float16, torch.bfloat16)


def softmax_out(self: torch.Tensor, dim: int, half_to_float: bool, *,
                out: torch.Tensor) -> torch.Tensor:
    """`_softmax.out` (pykern's fused row softmax)."""
    return _along_rows(pk.softmax, self, dim, out, 1.0)


def log_softmax_out(self: torch.Tensor, dim: int, half_to_float: bool, *,
                    out: torch.Tensor) -> torch.Tensor:
    """`_log_softmax.out`."""
    return _along_rows(pk.log_softmax, self, dim, out, 0.0)


def _along_rows(function: Callable[..., pk.Tensor], self: torch.Tensor, dim: int,
                out: torch.Tensor, of_scalar: float) -> torch.Tensor:
    """`function` (pk.softmax or pk.log_softmax) along `dim` into `out`; `of_scalar` for a
    0-d input."""
    x = operand(self, out.dtype)
    if x.ndim == 0:  # type: ignore[union-attr]
        return write(out, of_scalar)
    return write(out, function(x, axis=dim % x.ndim))  # type: ignore[union-attr]


def softmax_backward_out(grad_output: torch.Tensor, output: torch.Tensor, dim: int,
                         input_dtype: torch.dtype, *, grad_input: torch.Tensor) -> torch.Tensor:
    """`_softmax_backward_data.out`: y * (g - sum(g * y)), in float32 for 16-bit floats."""
    def grad(g: pk.Tensor, y: pk.Tensor, axis: int) -> pk.Tensor:
        gy = pk.multiply(g, y)
        return pk.subtract(gy, pk.multiply(y, pk.sum(gy, axis=axis, keepdims=True)))

    return _softmax_backward(grad, grad_output, output, dim, grad_input)


def log_softmax_backward_out(grad_output: torch.Tensor, output: torch.Tensor, dim: int,
                             input_dtype: torch.dtype, *, out: torch.Tensor) -> torch.Tensor:
    """`_log_softmax_backward_data.out`: g - exp(y) * sum(g), in float32 for 16-bit floats."""
    def grad(g: pk.Tensor, y: pk.Tensor, axis: int) -> pk.Tensor:
        return pk.subtract(g, pk.multiply(pk.exp(y), pk.sum(g, axis=axis, keepdims=True)))

    return _softmax_backward(grad, grad_output, output, dim, out)


def _softmax_backward(grad: Callable[[pk.Tensor, pk.Tensor, int], pk.Tensor],
                      grad_output: torch.Tensor, output: torch.Tensor, dim: int,
                      out: torch.Tensor) -> torch.Tensor:
    """`grad(g, y, axis)` of the gradient g and the forward result y (float32 for 16-bit
    floats) into `out`; 0 for a 0-d input."""
    acc = _acc(out.dtype)
    g, y = operand(grad_output, acc), operand(output, acc)
    if y.ndim == 0:  # type: ignore[union-attr]
        return write(out, 0.0)
    return write(out, grad(g, y, dim % y.ndim))  # type: ignore[arg-type, union-attr]


# ---------------------------------------------------------------- layer norm


def _acc(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in _LOW else dtype


def native_layer_norm(input: torch.Tensor, normalized_shape: Sequence[int],  # noqa: A002
                      weight: torch.Tensor | None, bias: torch.Tensor | None,
                      eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`native_layer_norm`: (y, mean, rstd) over the trailing `normalized_shape` dims."""
    x = operand(input)
    k = len(normalized_shape)
    axes = tuple(range(x.ndim - k, x.ndim))  # type: ignore[union-attr]
    xa = x.astype(pk_dtype(_acc(input.dtype))) if input.dtype in _LOW else x  # type: ignore
    if x.size == 0:  # type: ignore[union-attr]
        stats = tuple(input.shape[:input.dim() - k]) + (1,) * k
        empty = torch.empty(stats, dtype=input.dtype, device=input.device)
        return torch.empty_like(input), empty, empty.clone()
    mean = pk.mean(xa, axis=axes, keepdims=True)
    rstd = pk.rsqrt(pk.add(pk.var(xa, axis=axes, keepdims=True), eps))
    if eps >= 0:
        y = pk.layer_norm(x, tuple(normalized_shape), opt(weight), opt(bias), eps)
    else:  # (pykern's fused kernel refuses a negative eps; PyTorch computes NaNs)
        y = pk.multiply(pk.subtract(xa, mean), rstd)
        if weight is not None:
            y = pk.multiply(y, operand(weight, _acc(input.dtype)))
        if bias is not None:
            y = pk.add(y, operand(bias, _acc(input.dtype)))
    return new(y, input.dtype), new(mean, input.dtype), new(rstd, input.dtype)


def native_layer_norm_backward(grad_out: torch.Tensor, input: torch.Tensor,  # noqa: A002
                               normalized_shape: Sequence[int], mean: torch.Tensor,
                               rstd: torch.Tensor, weight: torch.Tensor | None,
                               bias: torch.Tensor | None, output_mask: Sequence[bool]
                               ) -> tuple[torch.Tensor | None, ...]:
    """`native_layer_norm_backward`: the gradients of input, weight and bias."""
    acc = _acc(input.dtype)
    g, x = operand(grad_out, acc), operand(input, acc)
    mu, r = operand(mean, acc), operand(rstd, acc)
    k = len(normalized_shape)
    nd = x.ndim  # type: ignore[union-attr]
    axes = tuple(range(nd - k, nd))
    batch = tuple(range(nd - k))
    xhat = pk.multiply(pk.subtract(x, mu), r)
    results: list[torch.Tensor | None] = [None, None, None]
    if output_mask[0]:
        dx = pk.multiply(g, operand(weight, acc)) if weight is not None else g
        m1 = pk.mean(dx, axis=axes, keepdims=True)
        m2 = pk.mean(pk.multiply(dx, xhat), axis=axes, keepdims=True)
        gi = pk.multiply(r, pk.subtract(pk.subtract(dx, m1), pk.multiply(xhat, m2)))
        results[0] = new(gi, input.dtype)
    if output_mask[1] and weight is not None:
        results[1] = new(pk.sum(pk.multiply(g, xhat), axis=batch), weight.dtype)
    if output_mask[2] and bias is not None:
        results[2] = new(pk.sum(g, axis=batch), bias.dtype)
    return tuple(results)


# ---------------------------------------------------------------- batch norm


def _channel_shape(x: torch.Tensor) -> tuple[int, ...]:
    return (1, x.shape[1]) + (1,) * (x.dim() - 2)


def _reduce_axes(x: torch.Tensor) -> tuple[int, ...]:
    return (0,) + tuple(range(2, x.dim()))


def _batch_norm(input: torch.Tensor, weight: torch.Tensor | None,  # noqa: A002
                bias: torch.Tensor | None, running_mean: torch.Tensor | None,
                running_var: torch.Tensor | None, training: bool, momentum: float,
                eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(y, save_mean, save_invstd); updates the running statistics in training."""
    acc = _acc(input.dtype)
    x = operand(input, acc)
    cshape = _channel_shape(input)
    axes = _reduce_axes(input)
    if training:
        mean = pk.mean(x, axis=axes)
        var = pk.var(x, axis=axes)
        invstd = pk.rsqrt(pk.add(var, eps))
        n = input.numel() // max(input.shape[1], 1)
        _update(running_mean, mean, momentum)
        _update(running_var, pk.multiply(var, n / max(n - 1, 1)), momentum)
        save_mean, save_invstd = new(mean, input.dtype), new(invstd, input.dtype)
    else:
        mean = operand(running_mean, acc)
        invstd = pk.rsqrt(pk.add(operand(running_var, acc), eps))
        save_mean = torch.empty(0, dtype=input.dtype, device=input.device)
        save_invstd = torch.empty(0, dtype=input.dtype, device=input.device)
    scale = invstd if weight is None else pk.multiply(invstd, operand(weight, acc))
    y = pk.multiply(pk.subtract(x, mean.reshape(cshape)), scale.reshape(cshape))  # type: ignore
    if bias is not None:
        y = pk.add(y, operand(bias, acc).reshape(cshape))  # type: ignore[union-attr]
    return new(y, input.dtype), save_mean, save_invstd


def _update(running: torch.Tensor | None, value: pk.Tensor, momentum: float) -> None:
    if running is None:
        return
    r = operand(running)
    write(running, pk.add(pk.multiply(r, 1 - momentum), pk.multiply(value, momentum)))


def native_batch_norm(input: torch.Tensor, weight: torch.Tensor | None,  # noqa: A002
                      bias: torch.Tensor | None, running_mean: torch.Tensor | None,
                      running_var: torch.Tensor | None, training: bool, momentum: float,
                      eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`native_batch_norm` and `_native_batch_norm_legit`."""
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def batch_norm_no_stats(input: torch.Tensor, weight: torch.Tensor | None,  # noqa: A002
                        bias: torch.Tensor | None, training: bool, momentum: float,
                        eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`_native_batch_norm_legit.no_stats`."""
    return _batch_norm(input, weight, bias, None, None, training, momentum, eps)


def batch_norm_with_update(input: torch.Tensor, weight: torch.Tensor | None,  # noqa: A002
                           bias: torch.Tensor | None, running_mean: torch.Tensor,
                           running_var: torch.Tensor, momentum: float, eps: float
                           ) -> tuple[torch.Tensor, ...]:
    """`_batch_norm_with_update`: training batch norm, with an empty reserve."""
    y, m, s = _batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return y, m, s, torch.empty(0, dtype=torch.uint8, device=input.device)


def native_batch_norm_backward(grad_out: torch.Tensor, input: torch.Tensor,  # noqa: A002
                               weight: torch.Tensor | None, running_mean: torch.Tensor | None,
                               running_var: torch.Tensor | None,
                               save_mean: torch.Tensor | None,
                               save_invstd: torch.Tensor | None, train: bool, eps: float,
                               output_mask: Sequence[bool]) -> tuple[torch.Tensor | None, ...]:
    """`native_batch_norm_backward`."""
    acc = _acc(input.dtype)
    g, x = operand(grad_out, acc), operand(input, acc)
    cshape = _channel_shape(input)
    axes = _reduce_axes(input)
    if train:
        mean, invstd = operand(save_mean, acc), operand(save_invstd, acc)
    else:
        mean = operand(running_mean, acc)
        invstd = pk.rsqrt(pk.add(operand(running_var, acc), eps))
    mean_c, invstd_c = mean.reshape(cshape), invstd.reshape(cshape)  # type: ignore[union-attr]
    xhat = pk.multiply(pk.subtract(x, mean_c), invstd_c)
    w = operand(weight, acc).reshape(cshape) if weight is not None else 1.0  # type: ignore
    results: list[torch.Tensor | None] = [None, None, None]
    if output_mask[0]:
        if train:
            gm = pk.mean(g, axis=axes, keepdims=True)
            gxm = pk.mean(pk.multiply(g, xhat), axis=axes, keepdims=True)
            gi = pk.multiply(pk.subtract(pk.subtract(g, gm), pk.multiply(xhat, gxm)),
                             pk.multiply(invstd_c, w))
        else:
            gi = pk.multiply(g, pk.multiply(invstd_c, w))
        results[0] = new(gi, input.dtype)
    if output_mask[1]:
        results[1] = new(pk.sum(pk.multiply(g, xhat), axis=axes),
                         weight.dtype if weight is not None else acc)
    if output_mask[2]:
        results[2] = new(pk.sum(g, axis=axes), weight.dtype if weight is not None else acc)
    return tuple(results)


def batch_norm_backward(grad_out: torch.Tensor, input: torch.Tensor,  # noqa: A002
                        weight: torch.Tensor, running_mean: torch.Tensor | None,
                        running_var: torch.Tensor | None, save_mean: torch.Tensor | None,
                        save_var: torch.Tensor | None, update: bool, eps: float,
                        output_mask: Sequence[bool], reserve: torch.Tensor
                        ) -> tuple[torch.Tensor | None, ...]:
    """`batch_norm_backward` (save_var holds the inverse std, as `_batch_norm_with_update`
    saves it)."""
    return native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
                                      save_mean, save_var, update, eps, output_mask)


# ---------------------------------------------------------------- embedding, nll loss


def embedding_dense_backward(grad_output: torch.Tensor, indices: torch.Tensor,
                             num_weights: int, padding_idx: int,
                             scale_grad_by_freq: bool) -> torch.Tensor:
    """`embedding_dense_backward`: the rows of grad_output summed into the rows their
    indices name (none into padding_idx)."""
    g = operand(grad_output)
    d = g.shape[-1]  # type: ignore[union-attr]
    idx = operand(indices, torch.int64).reshape(-1)  # type: ignore[union-attr]
    rows = g.reshape(-1, d)  # type: ignore[union-attr]
    if padding_idx >= 0:
        rows = pk.where(pk.equal(idx, padding_idx).reshape(-1, 1), 0, rows)
    if scale_grad_by_freq:
        counts = pk.scatter_add(pk.zeros((num_weights,), dtype=pk.i64), 0, idx,
                                pk.ones(idx.shape, dtype=pk.i64))
        rows = pk.divide(rows, pk.take(counts, idx, axis=0).reshape(-1, 1).astype(rows.dtype))
    index = idx.reshape(-1, 1).broadcast_to(rows.shape)
    return new(pk.scatter_add(pk.zeros((num_weights, d), dtype=rows.dtype), 0, index, rows))


def _nll_parts(self: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None,
               ignore_index: int) -> tuple[pk.Tensor, pk.Tensor, pk.Tensor]:
    """(x as (N, C), the targets as (N,) with ignored ones at 0, their weights with ignored
    ones 0)."""
    x = operand(self)
    if x.ndim == 1:  # type: ignore[union-attr]
        x = x.reshape(1, -1)  # type: ignore[union-attr]
    t = operand(target, torch.int64).reshape(-1)  # type: ignore[union-attr]
    keep = pk.not_equal(t, ignore_index)
    t = pk.where(keep, t, 0)
    w = keep.astype(x.dtype)  # type: ignore[union-attr]
    if weight is not None:
        w = pk.multiply(w, pk.take(operand(weight, self.dtype), t, axis=0))
    return x, t, w  # type: ignore[return-value]


def nll_loss_forward_out(self: torch.Tensor, target: torch.Tensor,
                         weight: torch.Tensor | None, reduction: int, ignore_index: int, *,
                         output: torch.Tensor, total_weight: torch.Tensor
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """`nll_loss_forward.output`: -x[i, t_i] * w_{t_i}, summed or averaged by weight
    (reduction 0 none, 1 mean, 2 sum)."""
    x, t, w = _nll_parts(self, target, weight, ignore_index)
    picked = pk.take_along_axis(x, t.reshape(-1, 1), axis=1).reshape(-1)
    losses = pk.negative(pk.multiply(picked, w))
    tw = pk.sum(w)
    write(total_weight, tw)
    if reduction == 0:
        return write(output, losses.reshape(tuple(output.shape))), total_weight
    total = pk.sum(losses)
    return write(output, pk.divide(total, tw) if reduction == 1 else total), total_weight


def nll_loss_backward_out(grad_output: torch.Tensor, self: torch.Tensor, target: torch.Tensor,
                          weight: torch.Tensor | None, reduction: int, ignore_index: int,
                          total_weight: torch.Tensor, *,
                          grad_input: torch.Tensor) -> torch.Tensor:
    """`nll_loss_backward.grad_input`: -w_{t_i} (times the output gradient, over the total
    weight for the mean) at [i, t_i], zero elsewhere."""
    x, t, w = _nll_parts(self, target, weight, ignore_index)
    g = operand(grad_output, self.dtype).reshape(-1)  # type: ignore[union-attr]
    if reduction == 1:
        g = pk.divide(g, operand(total_weight, self.dtype))
    values = pk.negative(pk.multiply(w, g))
    grad = pk.zeros(x.shape, dtype=x.dtype)
    rows = pk.arange(x.shape[0], dtype=pk.i64)
    grad[rows, t] = values
    return write(grad_input, grad.reshape(tuple(grad_input.shape)))


def _classes_last(t: torch.Tensor) -> torch.Tensor:
    return t.movedim(1, -1).reshape(-1, t.shape[1])


def nll_loss2d_forward_out(self: torch.Tensor, target: torch.Tensor,
                           weight: torch.Tensor | None, reduction: int, ignore_index: int, *,
                           output: torch.Tensor, total_weight: torch.Tensor
                           ) -> tuple[torch.Tensor, torch.Tensor]:
    """`nll_loss2d_forward.output`: (N, C, H, W) scores, (N, H, W) targets."""
    flat = output.view(-1) if reduction == 0 else output
    nll_loss_forward_out(_classes_last(self), target.reshape(-1), weight, reduction,
                         ignore_index, output=flat, total_weight=total_weight)
    return output, total_weight


def nll_loss2d_backward_out(grad_output: torch.Tensor, self: torch.Tensor,
                            target: torch.Tensor, weight: torch.Tensor | None, reduction: int,
                            ignore_index: int, total_weight: torch.Tensor, *,
                            grad_input: torch.Tensor) -> torch.Tensor:
    """`nll_loss2d_backward.grad_input`."""
    scores = _classes_last(self)
    grad = torch.empty_like(scores)
    nll_loss_backward_out(grad_output.reshape(-1) if reduction == 0 else grad_output, scores,
                          target.reshape(-1), weight, reduction, ignore_index, total_weight,
                          grad_input=grad)
    n, c = self.shape[0], self.shape[1]
    back = grad.reshape(n, *self.shape[2:], c).movedim(-1, 1)
    return write(grad_input, operand(back))


# ---------------------------------------------------------------- pooling


def max_pool2d_out(self: torch.Tensor, kernel_size: Sequence[int],
                   stride: Sequence[int] = (), padding: Sequence[int] = (0,),
                   dilation: Sequence[int] = (1,), ceil_mode: bool = False, *,
                   out: torch.Tensor, indices: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`max_pool2d_with_indices.out`."""
    y, i = pk.nn.functional.max_pool2d(operand(self), list(kernel_size),
                                       list(stride) or None, _pair(padding), _pair(dilation),
                                       ceil_mode, return_indices=True)
    write(out, y)
    write(indices, i)
    return out, indices


def _pair(v: Sequence[int]) -> tuple[int, int]:
    return (v[0], v[0]) if len(v) == 1 else (v[0], v[1])


def max_pool2d_backward_out(grad_output: torch.Tensor, self: torch.Tensor,
                            kernel_size: Sequence[int], stride: Sequence[int],
                            padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool,
                            indices: torch.Tensor, *, grad_input: torch.Tensor) -> torch.Tensor:
    """`max_pool2d_with_indices_backward.grad_input`: each output gradient added at its
    maximum's position."""
    g = operand(grad_output)
    planes = self.numel() // (self.shape[-1] * self.shape[-2]) if self.numel() else 0
    if planes == 0:
        return write(grad_input, 0)
    hw = self.shape[-1] * self.shape[-2]
    gp = g.reshape(planes, -1)  # type: ignore[union-attr]
    ip = operand(indices).reshape(planes, -1)  # type: ignore[union-attr]
    grad = pk.scatter_add(pk.zeros((planes, hw), dtype=gp.dtype), 1, ip, gp)
    return write(grad_input, grad.reshape(tuple(self.shape)))


def _with_grad(x: torch.Tensor) -> pk.Tensor:
    p = operand(x).detach()  # type: ignore[union-attr]
    p.requires_grad_()
    return p


def avg_pool2d_out(self: torch.Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                   padding: Sequence[int] = (0,), ceil_mode: bool = False,
                   count_include_pad: bool = True, divisor_override: int | None = None, *,
                   out: torch.Tensor) -> torch.Tensor:
    """`avg_pool2d.out` (with divisor_override, the window sums divided by it, whatever its
    sign, as PyTorch)."""
    y = pk.nn.functional.avg_pool2d(operand(self), list(kernel_size), list(stride) or None,
                                    _pair(padding), ceil_mode, count_include_pad,
                                    None if divisor_override is None else 1)
    if divisor_override is not None and divisor_override != 1:
        y = pk.divide(y, float(divisor_override))
    return write(out, y)


def avg_pool2d_backward_out(grad_output: torch.Tensor, self: torch.Tensor,
                            kernel_size: Sequence[int], stride: Sequence[int],
                            padding: Sequence[int], ceil_mode: bool, count_include_pad: bool,
                            divisor_override: int | None, *,
                            grad_input: torch.Tensor) -> torch.Tensor:
    """`avg_pool2d_backward.grad_input` (pykern's pooling backward)."""
    x = _with_grad(self)
    y = pk.nn.functional.avg_pool2d(x, list(kernel_size), list(stride) or None, _pair(padding),
                                    ceil_mode, count_include_pad,
                                    None if divisor_override is None else 1)
    g = operand(grad_output)
    if divisor_override is not None and divisor_override != 1:
        g = pk.divide(g, float(divisor_override))
    (gx,) = pk.autograd.grad([y], [x], grad_outputs=[g])
    return write(grad_input, gx)


def adaptive_avg_pool2d(self: torch.Tensor, output_size: Sequence[int]) -> torch.Tensor:
    """`_adaptive_avg_pool2d`."""
    return new(pk.nn.functional.adaptive_avg_pool2d(operand(self), tuple(output_size)))


def adaptive_avg_pool2d_backward(grad_output: torch.Tensor, self: torch.Tensor) -> torch.Tensor:
    """`_adaptive_avg_pool2d_backward`."""
    x = _with_grad(self)
    y = pk.nn.functional.adaptive_avg_pool2d(x, tuple(grad_output.shape[-2:]))
    (gx,) = pk.autograd.grad([y], [x], grad_outputs=[operand(grad_output)])
    return new(gx)
