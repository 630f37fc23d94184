"""`pk.nn.init`: PyTorch's initialisation functions, each filling a tensor in place (under
`pk.no_grad()`, so parameters can be filled) from `pk.random`, and returning it.

    w = pk.empty((64, 32))
    pk.nn.init.kaiming_uniform_(w, a=math.sqrt(5))   # what nn.Linear does
    pk.nn.init.xavier_normal_(w, gain=pk.nn.init.calculate_gain("tanh"))

Fans, gains and bounds follow PyTorch: for a weight of shape (out, in, *kernel), fan_in is
in * prod(kernel) and fan_out out * prod(kernel). `generator` is accepted for signature
compatibility and must be None: pykern has one generator, seeded with `pk.random.seed`.
"""

from __future__ import annotations

import math

import numpy as np

import pykern as pk
from pykern.tensor.core.tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain PyTorch recommends for `nonlinearity`: 1 for linear layers, convolutions and
    sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope²)) for leaky_relu (slope
    `param`, 0.01 by default), 3/4 for selu."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel), as PyTorch's helper."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out can not be computed for a tensor with fewer than "
                         f"2 dimensions (shape {tensor.shape})")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _target(tensor: object, op: str, generator: object = None) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: expected a pk.Tensor, got {type(tensor).__name__}")
    if generator is not None:
        raise TypeError(f"{op}: generator must be None (pykern has one generator: seed it with "
                        f"pk.random.seed)")
    return tensor


def _fill(tensor: Tensor, value: object) -> Tensor:
    """Writes `value` into `tensor` in place, outside any graph; returns `tensor`."""
    with pk.no_grad():
        tensor[...] = value
    return tensor


def _random_dtype(tensor: Tensor, op: str) -> object:
    if not tensor.dtype.is_float:
        raise TypeError(f"{op}: the tensor must have a float dtype, got {tensor.dtype.name}")
    return tensor.dtype


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: object = None) -> Tensor:
    """Fills `tensor` from U(a, b)."""
    _target(tensor, "uniform_", generator)
    dtype = _random_dtype(tensor, "uniform_")
    return _fill(tensor, pk.random.uniform(a, b, tensor.shape, dtype=dtype))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: object = None) -> Tensor:
    """Fills `tensor` from N(mean, std²)."""
    _target(tensor, "normal_", generator)
    dtype = _random_dtype(tensor, "normal_")
    return _fill(tensor, pk.random.normal(mean, std, tensor.shape, dtype=dtype))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: object = None) -> Tensor:
    """Fills `tensor` from N(mean, std²) truncated to [a, b] (bounds in the tensor's units,
    as PyTorch's), by the inverse of the normal CDF applied to uniform values between the
    CDF at a and at b, so any interval works, also one far in a tail."""
    _target(tensor, "trunc_normal_", generator)
    dtype = _random_dtype(tensor, "trunc_normal_")
    if not a < b:
        raise ValueError(f"trunc_normal_: a ({a}) must be below b ({b})")
    lo = _normal_cdf((a - mean) / std)
    hi = _normal_cdf((b - mean) / std)
    # erf(z / sqrt 2) is uniform on (2 lo - 1, 2 hi - 1) for z truncated to the interval
    u = pk.random.uniform(2 * lo - 1, 2 * hi - 1, tensor.shape, dtype=pk.f64 if
                          dtype == pk.f64 else pk.f32)
    z = _erfinv(u) * (std * math.sqrt(2.0)) + mean
    return _fill(tensor, pk.clip(z, a, b))


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


# Giles' approximation of erfinv ("Approximating the erfinv function", GPU Computing Gems,
# 2011), single precision: a polynomial in w - 2.5 for w = -log(1 - x²) < 5, in sqrt(w) - 3
# beyond; one Newton step on erf then takes it to the dtype's precision
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erfinv(y: Tensor) -> Tensor:
    """erf⁻¹(y) for y in (-1, 1), as tensor ops."""
    y = pk.clip(y, -1.0 + 1e-7, 1.0 - 1e-7)
    w = -pk.log((1.0 - y) * (1.0 + y))
    central, tail = w - 2.5, pk.sqrt(w) - 3.0
    p_central = _polynomial(central, _ERFINV_CENTRAL)
    p_tail = _polynomial(tail, _ERFINV_TAIL)
    x = pk.where(w < 5.0, p_central, p_tail) * y
    # Newton on erf(x) = y: erf'(x) = 2/sqrt(pi) exp(-x²)
    return x - (pk.erf(x) - y) / (2.0 / math.sqrt(math.pi) * pk.exp(-x * x))


def _polynomial(t: Tensor, coefficients: tuple[float, ...]) -> Tensor:
    """Horner's rule, highest power first."""
    p = t * 0.0 + coefficients[0]
    for c in coefficients[1:]:
        p = p * t + c
    return p


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fills `tensor` with `val`."""
    return _fill(_target(tensor, "constant_"), val)


def ones_(tensor: Tensor) -> Tensor:
    """Fills `tensor` with ones."""
    return constant_(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    """Fills `tensor` with zeros."""
    return constant_(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """Fills the 2-D `tensor` with the identity (ones on the diagonal, zeros elsewhere)."""
    _target(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, got shape {tensor.shape}")
    return _fill(tensor, pk.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills the {3, 4, 5}-D convolution weight `tensor` with the Dirac delta, so the
    convolution passes its input through (as many channels as fit, per group)."""
    _target(tensor, "dirac_")
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: only 3, 4 and 5-D tensors are supported, got shape "
                         f"{tensor.shape}")
    if groups < 1 or tensor.shape[0] % groups:
        raise ValueError(f"dirac_: dim 0 ({tensor.shape[0]}) must be divisible by groups "
                         f"({groups})")
    per_group = tensor.shape[0] // groups
    values = np.zeros(tensor.shape, np.float64)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _fill(tensor, pk.asarray(values).astype(tensor.dtype))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: object = None) -> Tensor:
    """Glorot's uniform: U(-bound, bound), bound = gain · sqrt(6 / (fan_in + fan_out))."""
    _target(tensor, "xavier_uniform_", generator)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: object = None) -> Tensor:
    """Glorot's normal: N(0, std²), std = gain · sqrt(2 / (fan_in + fan_out))."""
    _target(tensor, "xavier_normal_", generator)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: object = None) -> Tensor:
    """He's uniform: U(-bound, bound), bound = gain · sqrt(3 / fan) with fan the fan_in or
    fan_out (`mode`) and gain `calculate_gain(nonlinearity, a)`. `a=sqrt(5)` is what Linear
    and the convolutions use: bound = 1 / sqrt(fan_in). A tensor with no elements is left
    as it is."""
    _target(tensor, "kaiming_uniform_", generator)
    if tensor.size == 0:
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: object = None) -> Tensor:
    """He's normal: N(0, std²), std = gain / sqrt(fan) (see kaiming_uniform_)."""
    _target(tensor, "kaiming_normal_", generator)
    if tensor.size == 0:
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: object = None) -> Tensor:
    """A (semi-)orthogonal matrix times `gain`: the Q of the QR decomposition of a normal
    random (rows, cols) matrix, rows = shape[0] and cols the product of the rest, its
    columns' signs fixed by R's diagonal (so that Q is uniformly distributed)."""
    _target(tensor, "orthogonal_", generator)
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"got shape {tensor.shape}")
    if tensor.size == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.size // rows
    dtype = pk.f64 if tensor.dtype == pk.f64 else pk.f32
    flat = pk.random.normal(0.0, 1.0, (rows, cols), dtype=dtype)
    if rows < cols:
        flat = flat.T
    q, r = pk.linalg.qr(flat)
    q = q * pk.sign(pk.linalg.diagonal(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(tensor.shape))
