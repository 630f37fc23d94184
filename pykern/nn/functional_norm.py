"""`pk.nn.functional.batch_norm`: PyTorch's batch normalisation, as a composition of
differentiable ops (mean, var, rsqrt, broadcast arithmetic), so its backward follows from
theirs; the running statistics are updated in place, outside the graph."""

from __future__ import annotations

import pykern as pk
from pykern.tensor.elementwise.functions import as_tensor, assign
from pykern.tensor.core.tensor import Tensor


def batch_norm(input: object, running_mean: Tensor | None,  # noqa: A002
               running_var: Tensor | None, weight: object = None, bias: object = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalises each channel (dimension 1) of input (N, C, ...) to mean 0 and variance 1
    over the batch and the other dimensions, then scales by `weight` and shifts by `bias`
    (both (C,), either may be None).

    In training the batch's own statistics are used (the biased variance), and the running
    ones, when given, move toward them in place: running = (1 - momentum)·running +
    momentum·batch, with the unbiased variance (n/(n-1) times the biased one) for
    running_var, as PyTorch. Otherwise the running statistics normalise."""
    op = "batch_norm"
    x = as_tensor(input, f"{op}: input")
    if not x.dtype.is_float:
        raise TypeError(f"{op}: input must be a float tensor, got {x.dtype.name}")
    if x.ndim < 2:
        raise ValueError(f"{op}: input must be (N, C, ...), got shape {x.shape}")
    channels = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and tuple(getattr(t, "shape", ())) != (channels,):
            raise ValueError(f"{op}: {name} must have shape ({channels},), got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        count = x.size // channels if channels else 0
        if count <= 1:
            raise ValueError(f"{op}: expected more than 1 value per channel when training, got "
                             f"input shape {x.shape}")
        mean = pk.mean(x, axis=axes)
        var = pk.var(x, axis=axes)
        _update_running(running_mean, running_var, mean, var, count, momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{op}: running_mean and running_var must be given when not "
                             "training")
        mean, var = running_mean, running_var
    shape = (1, channels) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) * (1.0 / pk.sqrt(var + eps)).reshape(shape)
    if weight is not None:
        y = y * as_tensor(weight, f"{op}: weight").reshape(shape)
    if bias is not None:
        y = y + as_tensor(bias, f"{op}: bias").reshape(shape)
    return y


def _update_running(running_mean: Tensor | None, running_var: Tensor | None, mean: Tensor,
                    var: Tensor, count: int, momentum: float) -> None:
    """Moves the running statistics toward the batch's, in place (their memory stays the
    same: a state_dict taken before sees the new values)."""
    with pk.no_grad():
        if running_mean is not None:
            assign(running_mean, running_mean * (1.0 - momentum) + mean * momentum)
        if running_var is not None:
            unbiased = var * (count / (count - 1))
            assign(running_var, running_var * (1.0 - momentum) + unbiased * momentum)
