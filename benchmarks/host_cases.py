"""The array cases of the `host` benchmark: each as pykern (tensor ops, and for add and saxpy a
bare `@pk.kernel` too), numpy, Numba and Taichi, with its float64 reference.

An implementation is a *preparer*: given the case's inputs (numpy arrays, pykern tensors of the
current device, or Taichi fields) it makes what one call needs (an output buffer) and returns
the call, which returns the result. So only the work is timed, and every side but pykern's ops
writes into a buffer made beforehand (a pykern op allocates its result, as a user's call does).
Rates count the least traffic a case needs (each input read once, the output written once), or
2·n³ flops for the matmul.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import pykern as pk
import pykern.nn.functional as F

from . import kernels
from .results import power_of_two

ALPHA = 2.0
EPS = 1e-5  # layer_norm's, as in benchmarks/numba_kernels.py and taichi_cpu.py
Shape = tuple[int, ...]
Work = Callable[[], Any]
Preparer = Callable[[Sequence[Any]], Work]


@dataclass(frozen=True)
class HostCase:
    """One case. `shape(plan, lavapipe)` is its input shape on a device, `make(shape)` its
    inputs; pykern's `exact` cases must give the bits of the `numpy` result, the others the
    float64 `reference` within the f32 bound. `numba` and `taichi` take the peer's kernel
    module (benchmarks/numba_kernels.py, taichi_cpu.py) and give its preparer."""

    name: str
    label: Callable[[Any], str]  # the case's name at the plan's host size
    shape: Callable[[Any, bool], Shape]
    inputs: int  # how many input arrays
    out_shape: Callable[[Shape], Shape]
    unit: str  # GB/s or GFLOP/s
    amount: Callable[[Shape], float]  # bytes or flops of one call
    reference: Callable[..., np.ndarray]  # of the float64 inputs
    numpy: Preparer
    pykern: dict[str, Preparer]  # "op", and "kernel" where there is a bare kernel
    peer_args: tuple = ()  # the scalars the peers' kernels take before the arrays
    exact: bool = False

    def make(self, shape: Shape) -> list[np.ndarray]:
        rng = np.random.default_rng(12)
        return [rng.standard_normal(shape, dtype=np.float32) for _ in range(self.inputs)]

    def expected(self, inputs: Sequence[np.ndarray]) -> np.ndarray:
        return self.reference(*(np.asarray(a, np.float64) for a in inputs))

    def numba(self, nb: Any) -> Preparer:
        return _into(getattr(nb, self.name.replace(" ", "_")), self.out_shape, *self.peer_args)

    def taichi(self, tc: Any) -> Callable[[Sequence[Any]], Any]:
        """A function of the fields (inputs, then the output): runs the kernel, returns the
        output field."""
        kernel = getattr(tc, self.name.replace(" ", "_"))

        def run(fields: Sequence[Any]) -> Any:
            kernel(*self.peer_args, *fields)
            return fields[-1]
        return run


def _into(fn: Callable[..., object], out_shape: Callable[[Shape], Shape],
          *fixed: object) -> Preparer:
    """A preparer of `fn(*fixed, *inputs, out)`, which writes its result into `out`."""
    def prepare(inputs: Sequence[np.ndarray]) -> Work:
        out = np.empty(out_shape(inputs[0].shape), np.float32)

        def call() -> np.ndarray:
            fn(*fixed, *inputs, out)
            return out
        return call
    return prepare


def _op(fn: Callable[..., Any]) -> Preparer:
    """A preparer of a tensor op (or numpy expression) called on the inputs as they are."""
    return lambda inputs: lambda: fn(*inputs)


def _kernel(kernel: Any, *fixed: object) -> Preparer:
    """A bare `@pk.kernel` over the whole vector, writing into a tensor made beforehand."""
    def prepare(tensors: Sequence[Any]) -> Work:
        out = pk.empty(tensors[0].shape, pk.f32)
        launch = kernel[tensors[0].shape[0]]

        def call() -> Any:
            launch(*fixed, *tensors, out)
            return out
        return call
    return prepare


def _same(shape: Shape) -> Shape:
    return shape


def _numpy_saxpy(inputs: Sequence[np.ndarray]) -> Work:
    x, y = inputs
    out = np.empty_like(x)

    def call() -> np.ndarray:  # two passes, as numpy users write it; the same rounding
        np.multiply(x, np.float32(ALPHA), out=out)
        return np.add(out, y, out=out)
    return call


def softmax(x: np.ndarray) -> np.ndarray:
    """numpy's softmax as numpy users write it (in the dtype of `x`)."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x: np.ndarray) -> np.ndarray:
    """numpy's layer_norm with its mean and var ops (no weight or bias)."""
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True)
                                                          + x.dtype.type(EPS))


def _vector_cases() -> list[HostCase]:
    label = lambda name: lambda p: f"{name} {power_of_two(p.n)} f32"  # noqa: E731
    shape = lambda p, lavapipe: (p.n,)  # noqa: E731
    traffic = lambda s: 12.0 * s[0]  # noqa: E731 - two reads, one write
    return [
        HostCase("add", label("add"), shape, 2, _same, "GB/s", traffic, np.add,
                 _into(np.add, _same), {"op": _op(lambda a, b: a + b),
                                        "kernel": _kernel(kernels.add)}, exact=True),
        HostCase("saxpy", label("saxpy"), shape, 2, _same, "GB/s", traffic,
                 lambda x, y: ALPHA * x + y, _numpy_saxpy,
                 {"op": _op(lambda x, y: ALPHA * x + y),
                  "kernel": _kernel(kernels.saxpy, ALPHA)}, (ALPHA,), exact=True),
    ]


def _matrix_cases() -> list[HostCase]:
    label = lambda name: lambda p: f"{name} {p.rows}x{p.cols}"  # noqa: E731
    shape = lambda p, lavapipe: (p.lavapipe_rows if lavapipe else p.rows, p.cols)  # noqa: E731
    rows, cols = (lambda s: (s[0],)), (lambda s: (s[1],))
    whole = lambda s: 8.0 * s[0] * s[1]  # noqa: E731 - the matrix read and written once

    def case(name: str, out: Callable[[Shape], Shape], numpy_fn: Callable, op: Callable,
             reference: Callable | None = None) -> HostCase:
        traffic = whole if out is _same else (lambda s: 4.0 * s[0] * s[1] + 4.0 * out(s)[0])
        return HostCase(name, label(name), shape, 1, out, "GB/s", traffic,
                        reference or numpy_fn, _op(numpy_fn), {"op": _op(op)})

    return [
        case("sum rows", rows, lambda x: x.sum(axis=1), lambda x: pk.sum(x, axis=1)),
        case("sum cols", cols, lambda x: x.sum(axis=0), lambda x: pk.sum(x, axis=0)),
        case("softmax", _same, softmax, lambda x: pk.softmax(x, axis=-1)),
        case("layer_norm", _same, layer_norm, lambda x: F.layer_norm(x, x.shape[-1], eps=EPS)),
    ]


def _matmul_case() -> HostCase:
    return HostCase(
        "matmul", lambda p: f"matmul {p.matmul}^3 f32",
        lambda p, lavapipe: (p.lavapipe_matmul if lavapipe else p.matmul,) * 2, 2, _same,
        "GFLOP/s", lambda s: 2.0 * s[0] ** 3, np.matmul, _into(np.matmul, _same),
        {"op": _op(pk.matmul)})


def host_cases() -> list[HostCase]:
    """Every array case, in the order they run."""
    return [*_vector_cases(), *_matrix_cases(), _matmul_case()]
