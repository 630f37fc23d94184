"""Every public function of `pk`, `pk.array_api` and `pk.nn.functional`, classified for
autograd, so that test_autograd_ops_more.py can prove each float op either has a working
gradient or refuses a tensor that requires grad (a silently cut graph is the worst bug).

- DIFFERENTIABLE: "ns.name" (a "[variant]" suffix for more calls of one function) -> a Case:
  the call on float64 tensors, its numpy reference, the input shapes and their value range.
- REFUSED: a call on one tensor that requires grad, which must raise NotImplementedError.
- INTEGER_RESULTS: a call whose result is bool or integer (or a TypeError: not for floats).
- NO_GRADIENT_PATH: float results that do not depend on the input's values (zeros_like, ...)
  or come from integer inputs (one_hot): nothing to differentiate.
- NOT_TENSOR_OPS: the kernel language, compilation, devices, files, dtype queries and
  creation from shapes or host data.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import pykern as pk
from conv_reference import np_conv2d, np_conv_transpose2d

xp = pk.array_api
F = pk.nn.functional

_erf = np.vectorize(math.erf)
_IDX = np.array([[2, 0, 0], [1, 3, -1], [0, 0, 2]])
_MASK = np.array([[True, False, False, True], [False] * 4, [True, True, False, False]])
_SCATTER = np.array([[0, 2, 2, 1], [2, 0, 1, 1]])


@dataclass(frozen=True)
class Case:
    call: Callable[..., object]
    reference: Callable[..., np.ndarray]
    shapes: tuple[tuple[int, ...], ...] = ((3, 4),)
    low: float = -2.0
    high: float = 2.0


def _unary(name: str, reference: Callable[..., np.ndarray], low: float = -2.0,
           high: float = 2.0) -> tuple[str, Case]:
    return f"pk.{name}", Case(getattr(pk, name), reference, ((3, 4),), low, high)


def _binary(name: str, reference: Callable[..., np.ndarray], low: float = -2.0,
            high: float = 2.0) -> tuple[str, Case]:
    return f"pk.{name}", Case(getattr(pk, name), reference, ((3, 4), (4,)), low, high)


def _pairs(z: pk.Tensor) -> pk.Tensor:
    """A complex result as its real (..., 2) view (a loss of it is real); a real one as is."""
    return pk.view_as_real(z) if z.dtype.is_complex else z


def _np_pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1) if np.iscomplexobj(z) else z


def np_softmax(a: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_layer_norm(a: np.ndarray) -> np.ndarray:
    d = a - a.mean(-1, keepdims=True)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5)


def np_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np_softmax(q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])) @ v


def np_scatter_add(x: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = x.copy()
    for p in np.ndindex(_SCATTER.shape):
        out[_SCATTER[p], p[1]] += src[p]
    return out


def np_topk(a: np.ndarray) -> np.ndarray:
    return -np.sort(-a, axis=-1)[:, :2]


def np_gelu_tanh(a: np.ndarray) -> np.ndarray:
    return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))


def np_cross_entropy(a: np.ndarray) -> np.ndarray:
    logp = np.log(np_softmax(a))
    return -logp[np.arange(3), [0, 3, 1]].mean()


def np_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cross-correlation of (N, C, *spatial) with (O, C, *kernel), stride 1, no padding."""
    spatial = x.shape[2:]
    kernel = w.shape[2:]
    out_shape = tuple(s - k + 1 for s, k in zip(spatial, kernel))
    out = np.zeros((x.shape[0], w.shape[0], *out_shape))
    for pos in np.ndindex(out_shape):
        window = x[(slice(None), slice(None),
                    *(slice(p, p + k) for p, k in zip(pos, kernel)))]
        out[(slice(None), slice(None), *pos)] = np.tensordot(window, w, axes=(
            list(range(1, window.ndim)), list(range(1, w.ndim))))
    return out


def np_conv_transpose(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The adjoint of np_conv: (N, C, *spatial) with (C, O, *kernel), stride 1."""
    kernel = w.shape[2:]
    out_shape = tuple(s + k - 1 for s, k in zip(x.shape[2:], kernel))
    out = np.zeros((x.shape[0], w.shape[1], *out_shape))
    for pos in np.ndindex(x.shape[2:]):
        contribution = np.tensordot(x[(slice(None), slice(None), *pos)], w, axes=([1], [0]))
        out[(slice(None), slice(None), *(slice(p, p + k) for p, k in zip(pos, kernel)))] += \
            contribution
    return out


def np_pool2(a: np.ndarray, reduce: Callable[..., np.ndarray]) -> np.ndarray:
    """2 x 2 pooling with stride 2 of (N, C, H, W), H and W even."""
    n, c, h, w = a.shape
    return reduce(a.reshape(n, c, h // 2, 2, w // 2, 2), axis=(3, 5))


def np_batch_norm(a: np.ndarray) -> np.ndarray:
    return (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5)


_DIFF = [
    _unary("abs", np.abs), _unary("acos", np.arccos, -0.8, 0.8),
    _unary("acosh", np.arccosh, 1.2, 3.0), _unary("asin", np.arcsin, -0.8, 0.8),
    _unary("asinh", np.arcsinh), _unary("atan", np.arctan), _unary("atanh", np.arctanh, -0.8, 0.8),
    _unary("ceil", np.ceil), _unary("cos", np.cos), _unary("cosh", np.cosh), _unary("erf", _erf),
    _unary("exp", np.exp), _unary("exp2", np.exp2), _unary("expm1", np.expm1),
    _unary("floor", np.floor), _unary("log", np.log, 0.3), _unary("log10", np.log10, 0.3),
    _unary("log1p", np.log1p, 0.3), _unary("log2", np.log2, 0.3),
    _unary("negative", np.negative), _unary("positive", np.positive),
    _unary("reciprocal", np.reciprocal, 0.3), _unary("relu", lambda a: np.maximum(a, 0)),
    _unary("round", np.round), _unary("rsqrt", lambda a: 1 / np.sqrt(a), 0.3),
    _unary("sigmoid", lambda a: 1 / (1 + np.exp(-a))), _unary("sign", np.sign),
    _unary("silu", lambda a: a / (1 + np.exp(-a))), _unary("sin", np.sin),
    _unary("sinh", np.sinh), _unary("sqrt", np.sqrt, 0.3), _unary("square", np.square),
    _unary("tan", np.tan, -1.0, 1.0), _unary("tanh", np.tanh), _unary("trunc", np.trunc),
    _unary("gelu", lambda a: 0.5 * a * (1 + _erf(a / math.sqrt(2)))),
    ("pk.gelu[tanh]", Case(lambda t: pk.gelu(t, approximate="tanh"), np_gelu_tanh)),
    _binary("add", np.add), _binary("subtract", np.subtract), _binary("multiply", np.multiply),
    _binary("divide", np.divide, 0.5), _binary("pow", np.power, 0.5),
    _binary("maximum", np.maximum), _binary("minimum", np.minimum),
    _binary("atan2", np.arctan2, 0.3), _binary("hypot", np.hypot, 0.3),
    _binary("logaddexp", np.logaddexp), _binary("remainder", np.remainder, 0.3),
    _binary("floor_divide", np.floor_divide, 0.3), _binary("copysign", np.copysign),
    ("pk.fma", Case(pk.fma, lambda a, b, c: a * b + c, ((3, 4), (3, 4), (4,)))),
    ("pk.where", Case(lambda t, u: pk.where(t > 0, t, u), lambda a, b: np.where(a > 0, a, b),
                      ((3, 4), (4,)))),
    ("pk.select", Case(lambda t, u: pk.select(t > 0, t, u), lambda a, b: np.where(a > 0, a, b),
                       ((3, 4), (4,)))),
    ("pk.clip", Case(lambda t, lo: pk.clip(t, lo, 0.7), lambda a, lo: np.clip(a, lo, 0.7),
                     ((3, 4), (4,)), -1.0, 1.0)),
    ("pk.clamp", Case(lambda t: pk.clamp(t, -0.5, 0.7), lambda a: np.clip(a, -0.5, 0.7))),
    ("pk.astype", Case(lambda t: pk.astype(t, pk.f64), lambda a: a.copy())),
    ("pk.sum", Case(lambda t: pk.sum(t, axis=1), lambda a: a.sum(axis=1))),
    ("pk.mean", Case(lambda t: pk.mean(t, axis=0, keepdims=True),
                     lambda a: a.mean(axis=0, keepdims=True))),
    ("pk.prod", Case(lambda t: pk.prod(t, axis=1), lambda a: a.prod(axis=1))),
    ("pk.var", Case(lambda t: pk.var(t, axis=1), lambda a: a.var(axis=1))),
    ("pk.std", Case(lambda t: pk.std(t, correction=1), lambda a: a.std(ddof=1))),
    ("pk.max", Case(lambda t: pk.max(t, axis=0), lambda a: a.max(axis=0))),
    ("pk.min", Case(lambda t: pk.min(t), lambda a: a.min())),
    ("pk.cumsum", Case(lambda t: pk.cumsum(t, axis=0), lambda a: np.cumsum(a, axis=0))),
    ("pk.matmul", Case(pk.matmul, np.matmul, ((2, 3, 4), (4, 2)))),
    ("pk.softmax", Case(pk.softmax, np_softmax)),
    ("pk.log_softmax", Case(pk.log_softmax, lambda a: np.log(np_softmax(a)))),
    ("pk.layer_norm", Case(lambda t: pk.layer_norm(t, 4), np_layer_norm)),
    ("pk.attention", Case(pk.attention, np_attention, ((2, 3, 4), (2, 5, 4), (2, 5, 3)))),
    ("pk.conv2d", Case(lambda t, u: pk.conv2d(t, u, padding="same", groups=2),
                       lambda a, b: np_conv2d(a, b, None, (1, 1), ((0, 1), (1, 1)), (1, 1), 2),
                       ((1, 4, 4, 3), (2, 2, 2, 3)))),
    ("pk.conv_transpose2d", Case(lambda t, u: pk.conv_transpose2d(t, u, stride=2, groups=2),
                                 lambda a, b: np_conv_transpose2d(a, b, None, (2, 2), (0, 0),
                                                                  (0, 0), (1, 1), 2),
                                 ((1, 2, 3, 2), (2, 2, 2, 2)))),
    ("pk.cat", Case(lambda t, u: pk.cat((t, u), dim=1), lambda a, b: np.concatenate([a, b], 1),
                    ((3, 4), (3, 2)))),
    ("pk.flatten", Case(lambda t: pk.flatten(t, 1), lambda a: a.reshape(2, 12), ((2, 3, 4),))),
    ("pk.concat", Case(lambda t, u: pk.concat([t, u], axis=0), lambda a, b: np.concatenate([a, b]),
                       ((3, 4), (1, 4)))),
    ("pk.stack", Case(lambda t, u: pk.stack([t, u], axis=1), lambda a, b: np.stack([a, b], 1),
                      ((3, 4), (3, 4)))),
    ("pk.take", Case(lambda t: pk.take(t, _IDX, axis=1), lambda a: np.take(a, _IDX, axis=1))),
    ("pk.take_along_axis", Case(lambda t: pk.take_along_axis(t, _IDX, axis=1),
                                lambda a: np.take_along_axis(a, _IDX, axis=1))),
    ("pk.scatter_add", Case(lambda t, s: pk.scatter_add(t, 0, _SCATTER, s), np_scatter_add,
                            ((3, 4), (2, 4)))),
    ("pk.sort", Case(lambda t: pk.sort(t, axis=0), lambda a: np.sort(a, axis=0))),
    ("pk.topk", Case(lambda t: pk.topk(t, 2)[0], np_topk)),
    ("pk.tril", Case(lambda t: pk.tril(t, k=-1), lambda a: np.tril(a, -1))),
    ("pk.triu", Case(pk.triu, np.triu)),
    ("xp.matmul", Case(xp.matmul, np.matmul, ((4,), (4, 2)))),
    ("xp.astype", Case(lambda t: xp.astype(t, xp.float64), lambda a: a.copy())),
    ("xp.broadcast_arrays", Case(lambda t, u: pk.stack(xp.broadcast_arrays(t, u)),
                                 lambda a, b: np.stack(np.broadcast_arrays(a, b)),
                                 ((3, 1), (4,)))),
    ("xp.broadcast_to", Case(lambda t: xp.broadcast_to(t, (2, 3, 4)),
                             lambda a: np.broadcast_to(a, (2, 3, 4)), ((3, 1),))),
    ("xp.concat", Case(lambda t, u: xp.concat([t, u], axis=None),
                       lambda a, b: np.concatenate([a.ravel(), b.ravel()]), ((3, 4), (2,)))),
    ("xp.conj", Case(xp.conj, np.conj)), ("xp.real", Case(xp.real, np.real)),
    ("pk.conj", Case(pk.conj, np.conj)), ("pk.real", Case(pk.real, np.real)),
    ("pk.angle", Case(pk.angle, np.angle)),
    ("pk.view_as_complex", Case(lambda t: pk.view_as_real(
        pk.view_as_complex(pk.stack([t, 2.0 * t], axis=-1)) * (1 + 2j)),
        lambda a: np.stack([-3.0 * a, 4.0 * a], axis=-1))),
    ("xp.cumulative_sum", Case(lambda t: xp.cumulative_sum(t, axis=1),
                               lambda a: np.cumsum(a, axis=1))),
    ("xp.cumulative_sum[include_initial]",
     Case(lambda t: xp.cumulative_sum(t, axis=0, include_initial=True),
          lambda a: np.concatenate([np.zeros((1, 4)), np.cumsum(a, axis=0)]))),
    ("xp.diff", Case(lambda t: xp.diff(t, n=2, prepend=t[:, :1] * 2.0),
                     lambda a: np.diff(a, n=2, prepend=a[:, :1] * 2.0))),
    ("xp.take_along_axis", Case(lambda t: xp.take_along_axis(t, pk.asarray([[2, 0, 0]]), axis=1),
                                lambda a: np.take_along_axis(a, np.array([[2, 0, 0]]), axis=1))),
    ("pk.nextafter", Case(lambda t: pk.nextafter(t, 10.0), lambda a: np.nextafter(a, 10.0))),
    ("xp.nextafter", Case(lambda t: xp.nextafter(t, -10.0), lambda a: np.nextafter(a, -10.0))),
    ("xp.expand_dims", Case(lambda t: xp.expand_dims(t, axis=-1), lambda a: a[..., None])),
    # a tensor is its own DLPack import (a device copy with copy=True): the graph goes on
    ("xp.from_dlpack", Case(lambda t: xp.from_dlpack(t, copy=True) * 2.0, lambda a: a * 2.0)),
    ("xp.flip", Case(lambda t: xp.flip(t, axis=1), lambda a: np.flip(a, 1))),
    ("xp.matrix_transpose", Case(xp.matrix_transpose, lambda a: a.swapaxes(-1, -2))),
    ("xp.meshgrid", Case(lambda t, u: pk.stack(xp.meshgrid(t, u)),
                         lambda a, b: np.stack(np.meshgrid(a, b)), ((3,), (4,)))),
    ("xp.moveaxis", Case(lambda t: xp.moveaxis(t, 0, -1), lambda a: np.moveaxis(a, 0, -1),
                         ((2, 3, 4),))),
    ("xp.permute_dims", Case(lambda t: xp.permute_dims(t, (2, 0, 1)),
                             lambda a: a.transpose(2, 0, 1), ((2, 3, 4),))),
    ("xp.repeat", Case(lambda t: xp.repeat(t, 2, axis=1), lambda a: np.repeat(a, 2, axis=1))),
    ("xp.repeat[per element]", Case(lambda t: xp.repeat(t, pk.asarray([2, 0, 1]), axis=0),
                                    lambda a: np.repeat(a, [2, 0, 1], axis=0))),
    ("xp.reshape", Case(lambda t: xp.reshape(t.T, (2, 6)), lambda a: a.T.reshape(2, 6))),
    ("xp.roll", Case(lambda t: xp.roll(t, -1, axis=1), lambda a: np.roll(a, -1, axis=1))),
    ("xp.sort", Case(lambda t: xp.sort(t, descending=True), lambda a: -np.sort(-a))),
    ("xp.squeeze", Case(lambda t: xp.squeeze(t, axis=1), lambda a: a[:, 0], ((3, 1),))),
    ("xp.stack", Case(lambda t, u: xp.stack([t, u], axis=-1), lambda a, b: np.stack([a, b], -1),
                      ((3, 4), (3, 4)))),
    ("xp.take", Case(lambda t: xp.take(t, pk.asarray([3, 3, 0])),
                     lambda a: np.take(a, [3, 3, 0]))),
    ("xp.tensordot", Case(lambda t, u: xp.tensordot(t, u, axes=([0], [1])),
                          lambda a, b: np.tensordot(a, b, axes=([0], [1])), ((3, 4), (2, 3)))),
    ("xp.tile", Case(lambda t: xp.tile(t, (2, 1, 2)), lambda a: np.tile(a, (2, 1, 2)))),
    ("xp.unstack", Case(lambda t: pk.stack(xp.unstack(t, axis=1)), lambda a: a.T.copy())),
    ("xp.vecdot", Case(xp.vecdot, lambda a, b: (np.conj(a) * b).sum(-1), ((3, 4), (4,)))),
    ("F.linear", Case(F.linear, lambda a, w, b: a @ w.T + b, ((3, 4), (2, 4), (2,)))),
    ("F.relu", Case(F.relu, lambda a: np.maximum(a, 0))),
    ("F.gelu", Case(F.gelu, lambda a: 0.5 * a * (1 + _erf(a / math.sqrt(2))))),
    ("F.silu", Case(F.silu, lambda a: a / (1 + np.exp(-a)))),
    ("F.softmax", Case(lambda t: F.softmax(t, dim=0), lambda a: np_softmax(a, 0))),
    ("F.log_softmax", Case(F.log_softmax, lambda a: np.log(np_softmax(a)))),
    ("F.layer_norm", Case(lambda t: F.layer_norm(t, (4,)), np_layer_norm)),
    ("F.dropout", Case(lambda t: F.dropout(t, 0.5, training=False), lambda a: a.copy())),
    ("F.embedding", Case(lambda w: F.embedding(pk.asarray([[1, 0], [1, 2]]), w),
                         lambda w: w[[[1, 0], [1, 2]]])),
    ("F.cross_entropy", Case(lambda t: F.cross_entropy(t, pk.asarray([0, 3, 1])),
                             np_cross_entropy)),
    ("F.mse_loss", Case(F.mse_loss, lambda a, b: ((a - b) ** 2).mean(), ((3, 4), (3, 4)))),
    ("F.tanh", Case(F.tanh, np.tanh)),
    ("F.sigmoid", Case(F.sigmoid, lambda a: 1 / (1 + np.exp(-a)))),
    ("F.batch_norm", Case(lambda t: F.batch_norm(t, None, None, training=True), np_batch_norm)),
    ("F.dropout1d", Case(lambda t: F.dropout1d(t, 0.5, training=False), lambda a: a.copy(),
                         ((2, 3, 4),))),
    ("F.dropout2d", Case(lambda t: F.dropout2d(t, 0.5, training=False), lambda a: a.copy(),
                         ((2, 3, 2, 2),))),
    ("F.conv1d", Case(F.conv1d, np_conv, ((2, 2, 5), (3, 2, 2)))),
    ("F.conv2d", Case(F.conv2d, np_conv, ((1, 2, 4, 3), (3, 2, 2, 2)))),
    ("F.conv_transpose1d", Case(F.conv_transpose1d, np_conv_transpose, ((2, 2, 4), (2, 3, 2)))),
    ("F.conv_transpose2d", Case(F.conv_transpose2d, np_conv_transpose,
                                ((1, 2, 3, 2), (2, 3, 2, 2)))),
    ("F.max_pool2d", Case(lambda t: F.max_pool2d(t, 2), lambda a: np_pool2(a, np.max),
                          ((1, 2, 4, 4),))),
    ("F.avg_pool2d", Case(lambda t: F.avg_pool2d(t, 2), lambda a: np_pool2(a, np.mean),
                          ((1, 2, 4, 4),))),
    ("F.adaptive_avg_pool2d", Case(lambda t: F.adaptive_avg_pool2d(t, 1),
                                   lambda a: a.mean(axis=(2, 3), keepdims=True),
                                   ((1, 2, 3, 4),))),
    ("F.nll_loss", Case(lambda t: F.nll_loss(t, pk.asarray([0, 3, 1])),
                        lambda a: -a[np.arange(3), [0, 3, 1]].mean())),
    ("F.scaled_dot_product_attention",
     Case(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
          lambda q, k, v: np_softmax(np.where(np.tril(np.ones((3, 3), bool)),
                                              q @ k.swapaxes(-1, -2) / 2.0, -np.inf)) @ v,
          ((2, 3, 4), (2, 3, 4), (2, 3, 4)))),
]
def _eye() -> pk.Tensor:  # made per call: a module-level tensor dies with its device
    return pk.eye(3, dtype=pk.f64)
L = pk.linalg


def _spd(t: object) -> object:
    """A symmetric (Hermitian, for complex t) positive-definite parametrisation, pykern's and
    numpy's."""
    if isinstance(t, np.ndarray):
        return t @ t.conj().T + 3 * np.eye(3)
    return t @ (pk.conj(t).mT if t.dtype.is_complex else t.mT) + 3.0 * _eye()


def _np_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.solve(a + 4 * np.eye(3), b)


_LINALG = [  # (a sign- and phase-invariant use of eigenvectors and singular vectors: |v|²)
    ("L.inv", Case(lambda t: L.inv(t + 4.0 * _eye()), lambda a: np.linalg.inv(a + 4 * np.eye(3)),
                   ((3, 3),))),
    ("L.solve", Case(lambda t, u: L.solve(t + 4.0 * _eye(), u), _np_solve, ((3, 3), (3, 2)))),
    ("L.det", Case(L.det, np.linalg.det, ((2, 3, 3),))),
    ("L.slogdet", Case(lambda t: L.slogdet(t + 4.0 * _eye()).logabsdet,
                       lambda a: np.linalg.slogdet(a + 4 * np.eye(3))[1], ((3, 3),))),
    ("L.cholesky", Case(lambda t: L.cholesky(_spd(t)), lambda a: np.linalg.cholesky(_spd(a)),
                        ((3, 3),))),
    ("L.qr", Case(lambda t: L.qr(t).R, lambda a: np.linalg.qr(a)[1], ((4, 3),))),
    ("L.eigh", Case(lambda t: pk.abs(L.eigh(_spd(t)).eigenvectors) ** 2,
                    lambda a: np.abs(np.linalg.eigh(_spd(a))[1]) ** 2, ((3, 3),))),
    ("L.eigvalsh", Case(lambda t: L.eigvalsh(_spd(t)), lambda a: np.linalg.eigvalsh(_spd(a)),
                        ((3, 3),))),
    ("L.svd", Case(lambda t: pk.abs(L.svd(t, full_matrices=False).U) ** 2,
                   lambda a: np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 2, ((4, 3),))),
    ("L.svdvals", Case(L.svdvals, lambda a: np.linalg.svd(a)[1], ((4, 3),))),
    ("L.pinv", Case(L.pinv, np.linalg.pinv, ((4, 3),))),
    ("L.matrix_norm", Case(lambda t: L.matrix_norm(t, ord="nuc"),
                           lambda a: np.linalg.norm(a, ord="nuc"))),
    ("L.vector_norm", Case(L.vector_norm, lambda a: np.linalg.norm(a.ravel()))),
    ("L.norm", Case(lambda t: L.norm(t, ord=2), lambda a: np.linalg.norm(a, ord=2))),
    ("L.matrix_power", Case(lambda t: L.matrix_power(t, 3),
                            lambda a: np.linalg.matrix_power(a, 3), ((3, 3),))),
    ("L.trace", Case(L.trace, lambda a: np.trace(a, axis1=-2, axis2=-1), ((2, 3, 4),))),
    ("L.diagonal", Case(lambda t: L.diagonal(t, offset=1),
                        lambda a: np.diagonal(a, offset=1, axis1=-2, axis2=-1), ((2, 3, 4),))),
    ("L.outer", Case(L.outer, np.outer, ((3,), (4,)))),
    ("L.cross", Case(L.cross, np.cross, ((2, 3), (2, 3)))),
    ("L.matmul", Case(L.matmul, np.matmul, ((3, 4), (4, 2)))),
    ("L.matrix_transpose", Case(L.matrix_transpose, lambda a: np.swapaxes(a, -1, -2))),
    ("L.tensordot", Case(lambda t, u: L.tensordot(t, u, axes=1), lambda a, b: a @ b,
                         ((3, 4), (4, 2)))),
    ("L.vecdot", Case(L.vecdot, lambda a, b: (np.conj(a) * b).sum(-1), ((3, 4), (3, 4)))),
    ("fft.fftshift", Case(pk.fft.fftshift, np.fft.fftshift)),
    # the transforms of real input; complex results are compared as their (re, im) pairs
    *[(f"fft.{n}", Case(lambda t, n=n: _pairs(getattr(pk.fft, n)(t)),
                        lambda a, n=n: _np_pairs(getattr(np.fft, n)(a))))
      for n in ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
                "ihfft", "fft2", "ifft2", "rfft2", "irfft2")],
    ("fft.ifftshift", Case(pk.fft.ifftshift, np.fft.ifftshift)),
]
DIFFERENTIABLE: dict[str, Case] = dict(_DIFF + _LINALG)

REFUSED: dict[str, Callable[[object], object]] = {
    "xp.unique_values": xp.unique_values, "xp.unique_counts": xp.unique_counts,
    "xp.unique_inverse": xp.unique_inverse, "xp.unique_all": xp.unique_all,
    "pk.cumprod": pk.cumprod, "xp.cumulative_prod": xp.cumulative_prod,
}


def _cmp(name: str) -> tuple[str, Callable[[object], object]]:
    return f"pk.{name}", lambda t: getattr(pk, name)(t, 0.5)


INTEGER_RESULTS: dict[str, Callable[[object], object]] = dict([
    _cmp("equal"), _cmp("not_equal"), _cmp("less"), _cmp("less_equal"), _cmp("greater"),
    _cmp("greater_equal"), _cmp("logical_and"), _cmp("logical_or"), _cmp("logical_xor"),
    _cmp("bitwise_and"), _cmp("bitwise_or"), _cmp("bitwise_xor"), _cmp("bitwise_left_shift"),
    _cmp("bitwise_right_shift"),
    ("pk.all", pk.all), ("pk.any", pk.any), ("pk.argmax", pk.argmax), ("pk.argmin", pk.argmin),
    ("pk.argsort", pk.argsort), ("pk.count_nonzero", pk.count_nonzero),
    ("pk.isfinite", pk.isfinite), ("pk.isinf", pk.isinf), ("pk.isnan", pk.isnan),
    ("pk.signbit", pk.signbit), ("pk.logical_not", pk.logical_not),
    ("pk.bitwise_invert", pk.bitwise_invert),
    ("xp.argsort", xp.argsort), ("xp.nonzero", xp.nonzero),
    ("xp.searchsorted", lambda t: xp.searchsorted(pk.asarray([0.0, 1.0]), t)),
    ("pk.multinomial", lambda t: pk.multinomial(pk.abs(t) + 0.1, 2)),
    ("pk.view_as_real", pk.view_as_real),  # a TypeError: it takes complex tensors only
    ("L.matrix_rank", L.matrix_rank),
])

NO_GRADIENT_PATH: dict[str, Callable[[object], object]] = {
    "pk.zeros_like": pk.zeros_like, "pk.ones_like": pk.ones_like,
    "pk.empty_like": pk.empty_like, "pk.full_like": lambda t: pk.full_like(t, 2.0),
    "xp.empty_like": xp.empty_like, "xp.imag": xp.imag, "pk.imag": pk.imag,
    "pk.one_hot": lambda t: pk.one_hot((t > 0).astype(pk.i32), 3),
}

NOT_TENSOR_OPS = {
    # the kernel language (inside @pk.kernel only)
    *(f"pk.{n}" for n in (
        "atomic_add", "atomic_and_", "atomic_cas", "atomic_exchange", "atomic_max",
        "atomic_min", "atomic_or_", "atomic_sub", "atomic_xor", "barrier", "bitcast",
        "coop_convert", "coop_fill", "coop_load", "coop_mma", "coop_store", "global_id", "grid",
        "group_id", "group_size", "local", "local_id", "num_groups", "ravel", "unravel",
        "shared", "subgroup_add", "subgroup_all", "subgroup_any", "subgroup_broadcast",
        "subgroup_lane", "subgroup_max", "subgroup_min", "subgroup_prefix_add",
        "subgroup_shuffle", "subgroup_shuffle_xor", "subgroup_size")),
    # the parts of complex numbers: kernel builtins (numpy's functions on host numbers) until
    # tensors take complex dtypes
    "pk.real", "pk.imag", "pk.conj", "pk.angle",
    # compiling, devices, files
    "pk.func", "pk.kernel", "pk.static_range", "pk.fuse", "pk.strict_float",
    "pk.transfer_guard", "pk.devices", "pk.get_device",
    "pk.set_device", "pk.sync", "pk.graph", "pk.compile", "pk.load", "pk.save",
    "xp.get_device",
    "pk.profile",
    # new tensors from shapes or host data, and dtype queries
    "pk.arange", "pk.asarray", "pk.empty", "pk.eye", "pk.full", "pk.linspace", "pk.ones",
    "pk.zeros", "pk.can_cast", "pk.result_type", "xp.asarray", "xp.empty", "xp.can_cast",
    "xp.result_type", "xp.finfo", "xp.iinfo", "xp.isdtype", "xp.__array_namespace_info__",
    "fft.fftfreq", "fft.rfftfreq", "L.LinAlgError",
}


# ---------------------------------------------------------------- Tensor methods and operators

def _method(name: str, *args: object, **kwargs: object) -> Callable[..., object]:
    return lambda t, *others: getattr(t, name)(*args, *others, **kwargs)


METHODS: dict[str, Case] = {
    "reshape": Case(_method("reshape", 2, 6), lambda a: a.reshape(2, 6)),
    "transpose": Case(_method("transpose"), lambda a: a.T),
    "permute": Case(_method("permute", 1, 0), lambda a: a.T),
    "swapaxes": Case(_method("swapaxes", 0, 1), lambda a: a.T),
    "broadcast_to": Case(_method("broadcast_to", (2, 3, 4)),
                         lambda a: np.broadcast_to(a, (2, 3, 4))),
    "expand": Case(_method("expand", 2, -1, 4), lambda a: np.broadcast_to(a, (2, 3, 4)),
                   ((3, 1),)),
    "squeeze": Case(_method("squeeze"), lambda a: a.reshape(3), ((3, 1),)),
    "unsqueeze": Case(_method("unsqueeze", 1), lambda a: a[:, None]),
    "flip": Case(_method("flip", 0), lambda a: a[::-1]),
    "flatten": Case(_method("flatten"), lambda a: a.ravel()),
    "ravel": Case(lambda t: t.T.ravel(), lambda a: a.T.ravel()),
    "contiguous": Case(lambda t: t.T.contiguous(), lambda a: a.T.copy()),
    "copy": Case(_method("copy"), lambda a: a.copy()),
    "conj": Case(_method("conj"), np.conj),
    "clone": Case(_method("clone"), lambda a: a.copy()),
    "dot": Case(lambda t, u: t.dot(u), np.dot, ((3, 4), (4, 2))),
    "cumsum": Case(_method("cumsum", 1), lambda a: np.cumsum(a, 1)),
    "trace": Case(_method("trace", 1), lambda a: np.trace(a, 1)),
    "diagonal": Case(_method("diagonal", -1), lambda a: np.diagonal(a, -1)),
    "ptp": Case(_method("ptp", 1), lambda a: np.ptp(a, 1)),
    "repeat": Case(_method("repeat", 2, 0), lambda a: np.repeat(a, 2, 0)),
    "take": Case(_method("take", [2, 0], 1), lambda a: np.take(a, [2, 0], 1)),
    "astype": Case(_method("astype", pk.f64), lambda a: a.copy()),
    "clip": Case(_method("clip", -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
    "round": Case(_method("round", 1), lambda a: np.round(a, 1)),
    "sum": Case(_method("sum", axis=0), lambda a: a.sum(0)),
    "mean": Case(_method("mean", axis=1, keepdims=True), lambda a: a.mean(1, keepdims=True)),
    "prod": Case(_method("prod", axis=0), lambda a: a.prod(0)),
    "var": Case(_method("var", axis=0, correction=1), lambda a: a.var(0, ddof=1)),
    "std": Case(_method("std"), lambda a: a.std()),
    "max": Case(_method("max", axis=1), lambda a: a.max(1)),
    "min": Case(_method("min", axis=0, keepdims=True), lambda a: a.min(0, keepdims=True)),
    # PyTorch's methods (pykern.tensor.api.torch_style)
    "view": Case(_method("view", 2, 6), lambda a: a.reshape(2, 6)),
    "view_as": Case(lambda t: t.view_as(pk.zeros((4, 3))), lambda a: a.reshape(4, 3)),
    "reshape_as": Case(lambda t: t.T.reshape_as(pk.zeros(2, 6)), lambda a: a.T.reshape(2, 6)),
    "expand_as": Case(lambda t: t.expand_as(pk.zeros((2, 3, 4))),
                      lambda a: np.broadcast_to(a, (2, 3, 4)), ((3, 1),)),
    "t": Case(_method("t"), lambda a: a.T),
    "split": Case(lambda t: pk.concat(t.split([1, 3], dim=1)[::-1], axis=1),
                  lambda a: np.concatenate([a[:, 1:], a[:, :1]], axis=1)),
    "chunk": Case(lambda t: pk.concat(t.chunk(2)[::-1]), lambda a: np.concatenate([a[2:], a[:2]])),
    "unbind": Case(lambda t: pk.stack(t.unbind(1)[::-1]), lambda a: a.T[::-1]),
    "masked_fill": Case(lambda t: t.masked_fill(pk.asarray(_MASK), -0.5),
                        lambda a: np.where(_MASK, -0.5, a)),
    "masked_select": Case(lambda t: t.masked_select(pk.asarray(_MASK)), lambda a: a[_MASK]),
    "softmax": Case(_method("softmax", 0), lambda a: np_softmax(a, 0)),
    "log_softmax": Case(_method("log_softmax", -1), lambda a: np.log(np_softmax(a))),
    "topk": Case(lambda t: t.topk(2, dim=1).values, np_topk),
    "clamp": Case(_method("clamp", -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
    "type_as": Case(lambda t: t.type_as(pk.zeros(1, dtype=pk.f64)), lambda a: a.copy()),
    "double": Case(_method("double"), lambda a: a.copy()),
    "abs": Case(_method("abs"), np.abs), "neg": Case(_method("neg"), np.negative),
    "exp": Case(_method("exp"), np.exp), "log": Case(_method("log"), np.log, ((3, 4),), 0.3),
    "sqrt": Case(_method("sqrt"), np.sqrt, ((3, 4),), 0.3),
    "rsqrt": Case(_method("rsqrt"), lambda a: 1 / np.sqrt(a), ((3, 4),), 0.3),
    "sin": Case(_method("sin"), np.sin), "cos": Case(_method("cos"), np.cos),
    "tanh": Case(_method("tanh"), np.tanh),
    "sigmoid": Case(_method("sigmoid"), lambda a: 1 / (1 + np.exp(-a))),
    "relu": Case(_method("relu"), lambda a: np.maximum(a, 0)),
    "square": Case(_method("square"), np.square),
    "pow": Case(_method("pow", 3), lambda a: a ** 3),
    "__add__": Case(lambda t, u: t + u, np.add, ((3, 4), (4,))),
    "__radd__": Case(lambda t: 2.0 + t, lambda a: 2.0 + a),
    "__sub__": Case(lambda t, u: t - u, np.subtract, ((3, 4), (4,))),
    "__rsub__": Case(lambda t: 2.0 - t, lambda a: 2.0 - a),
    "__mul__": Case(lambda t, u: t * u, np.multiply, ((3, 4), (3, 1))),
    "__rmul__": Case(lambda t: 3.0 * t, lambda a: 3.0 * a),
    "__truediv__": Case(lambda t, u: t / u, np.divide, ((3, 4), (4,)), 0.5),
    "__rtruediv__": Case(lambda t: 2.0 / t, lambda a: 2.0 / a, ((3, 4),), 0.5),
    "__floordiv__": Case(lambda t: t // 0.7, lambda a: a // 0.7),
    "__rfloordiv__": Case(lambda t: 3.0 // t, lambda a: 3.0 // a, ((3, 4),), 0.5),
    "__mod__": Case(lambda t: t % 0.7, lambda a: a % 0.7),
    "__rmod__": Case(lambda t: 3.0 % t, lambda a: 3.0 % a, ((3, 4),), 0.5),
    "__pow__": Case(lambda t, u: t ** u, np.power, ((3, 4), (4,)), 0.5),
    "__rpow__": Case(lambda t: 2.0 ** t, lambda a: 2.0 ** a),
    "__matmul__": Case(lambda t, u: t @ u, np.matmul, ((3, 4), (4,))),
    "__rmatmul__": Case(lambda t: [[1.0, 2.0, 0.5]] @ t, lambda a: [[1.0, 2.0, 0.5]] @ a),
    "__neg__": Case(lambda t: -t, np.negative),
    "__pos__": Case(lambda t: +t, np.positive),
    "__abs__": Case(abs, np.abs),
    "__getitem__": Case(lambda t: t[1:, ::-2], lambda a: a[1:, ::-2]),
    "__iter__": Case(lambda t: pk.stack(list(t)[::-1]), lambda a: a[::-1]),
    "__array_ufunc__": Case(lambda t: np.exp(t), np.exp),
    "__array_function__": Case(lambda t: np.sum(t, axis=0), lambda a: a.sum(axis=0)),
}

METHODS_WITHOUT_GRADIENT = {
    # integer or bool results, host values, and autograd's own methods
    "all", "any", "argmax", "argmin", "item", "numel", "numpy", "tolist", "backward", "detach",
    "requires_grad_", "register_post_accumulate_grad_hook", "to_device", "to", "nonzero",
    "argsort", "searchsorted",
    # in place (fill, sort) or without a backward yet (cumprod)
    "fill", "sort", "cumprod", "__and__", "__or__", "__xor__", "__invert__", "__lshift__",
    "__rshift__", "__rand__", "__ror__", "__rxor__", "__rlshift__", "__rrshift__", "__bool__",
    "__int__", "__float__", "__complex__", "__index__", "__len__", "__contains__", "__array__",
    "__array_namespace__", "__dlpack__", "__dlpack_device__",
    # copies are new leaves (copy.copy, copy.deepcopy), cut from the graph as detach() is
    "__copy__", "__deepcopy__",
    # PyTorch's methods: integer or bool results, new tensors, host answers, a device move
    "dim", "long", "int", "short", "char", "byte", "bool", "eq", "ne", "lt", "le", "gt", "ge",
    "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "cpu",
    # conversions to narrower floats: astype's gradient (test_torch_style.py), which central
    # differences in f64 cannot check
    "float", "half", "bfloat16",
    # in place, recorded as the operators are (test_torch_style.py)
    "zero_", "fill_", "copy_", "add_", "sub_", "mul_", "div_", "clamp_", "masked_fill_",
    # in place: refused with RuntimeError while grad mode records (test_autograd_core.py)
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
    "__imod__", "__ipow__", "__imatmul__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
    "__irshift__",
}
