"""The op matrix's samples, made from the registry (pykern.ops), as PyTorch's OpInfo does: each
declared op gets sample calls from its kind's generator here, or from the `samples` of its
declaration where its arguments are its own, and a reference in numpy (its `reference`, else
numpy's function of its name). The matrix tests (test_op_matrix*.py) run them.

An op's `samples` (a dict, every key optional):
- "domain": (lo, hi), the range float operands are drawn from (default (-2, 2));
- "f32_rtol": the f32 accuracy the op promises where it is looser than a few ulp;
- "shapes": the shapes of its tensor operands, in order (an entry ("name", shape) passes that
  operand by keyword); with "shapes" the op's kind generator is not used;
- "sequence": True where the operands are passed as one list (concat, stack);
- "calls": the calls to make, each a dict of the other arguments (its "args" entry, a tuple,
  goes positionally after the operands); default one call without arguments;
- "integers": (lo, hi): the operands are integers drawn from [lo, hi), tested in "dtypes";
- "dtypes": the dtype names the forward is tested in (default f32 and f64);
- "complex": False where the op differentiates complex tensors but numpy's function is not
  the same function of them (a different branch or convention).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import zlib

import numpy as np

import pykern as pk
from pykern import ops

RNG = np.random.default_rng(2024)
DIFFERENTIABLE = ("formula", "rule", "composite")


@dataclass(frozen=True)
class Sample:
    """One call of an op: its tensor operands (numpy arrays, made tensors of the case's dtype),
    the keyword names of those passed by keyword (None: positional), whether they go as one
    list, positional arguments after them and keyword arguments."""

    arrays: tuple[np.ndarray, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    names: tuple[str | None, ...] = ()
    sequence: bool = False
    args: tuple[Any, ...] = ()

    def call(self, fn: Callable[..., Any], operands: list[Any]) -> Any:
        """`fn` called with `operands` in place of the sample's arrays."""
        names = self.names or (None,) * len(operands)
        positional = [o for o, n in zip(operands, names) if n is None]
        keywords = {n: o for o, n in zip(operands, names) if n is not None}
        if self.sequence:
            positional = [positional]
        return fn(*positional, *self.args, **keywords, **self.kwargs)


def _domain(op: ops.Op) -> tuple[float, float]:
    return (op.samples or {}).get("domain") or (-2.0, 2.0)


def _uniform(op: ops.Op, shape: tuple[int, ...]) -> np.ndarray:
    lo, hi = _domain(op)
    return RNG.uniform(lo, hi, shape)


def _operand(op: ops.Op, shape: tuple[int, ...]) -> np.ndarray:
    ints = _spec(op).get("integers")
    if ints is not None:
        return RNG.integers(ints[0], ints[1], shape)
    return _uniform(op, shape)


def _unary(op: ops.Op) -> Iterator[Sample]:
    yield Sample((_uniform(op, (3, 4)),))


def _binary(op: ops.Op) -> Iterator[Sample]:
    yield Sample((_uniform(op, (3, 4)), _uniform(op, (3, 4))))
    yield Sample((_uniform(op, (2, 3, 4)), _uniform(op, (4,))))  # broadcasting


def _reduction(op: ops.Op) -> Iterator[Sample]:
    yield Sample((_uniform(op, (3, 5)),))
    yield Sample((_uniform(op, (3, 5)),), {"axis": 1})
    yield Sample((_uniform(op, (2, 3, 4)),), {"axis": (0, 2), "keepdims": True})


def _scan(op: ops.Op) -> Iterator[Sample]:
    yield Sample((_uniform(op, (3, 5)),), {"axis": 1})


def _declared(op: ops.Op) -> Iterator[Sample]:
    """The calls the op's declaration lists, on operands of its declared shapes."""
    spec = _spec(op)
    entries = [s if isinstance(s[0], str) else (None, s) for s in spec["shapes"]]
    names = tuple(name for name, _ in entries)
    for call in spec.get("calls", ({},)):
        kwargs = dict(call)
        args = tuple(kwargs.pop("args", ()))
        arrays = tuple(_operand(op, shape) for _, shape in entries)
        yield Sample(arrays, kwargs, names, spec.get("sequence", False), args)


GENERATORS: dict[str, Callable[[ops.Op], Iterator[Sample]]] = {
    "unary": _unary, "binary": _binary, "reduction": _reduction, "scan": _scan}
# the kinds whose ops take numpy's name for the same function (np.<name>)
NUMPY_NAMED = ("unary", "binary", "reduction", "scan", "index", "sort", "creation", "ternary",
               "shape")


def _attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                         causal: bool = False) -> np.ndarray:
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:  # query i sees keys 0..i, as PyTorch's is_causal
        lq, lk = scores.shape[-2:]
        scores = np.where(np.arange(lk) <= np.arange(lq)[:, None], scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True) @ v


# samples and references of ops whose declarations do not carry them (yet)
SAMPLES_HERE: dict[str, tuple[dict[str, Any], Callable[..., Any]]] = {
    "attention": ({"shapes": ((2, 3, 4), (2, 5, 4), (2, 5, 3)),
                   "calls": ({}, {"causal": True})}, _attention_reference),
    "matmul": ({"shapes": ((3, 4), (4, 2))}, np.matmul),
}


def _spec(op: ops.Op) -> dict[str, Any]:
    return op.samples or SAMPLES_HERE.get(op.name, ({}, None))[0]


def samples(op: ops.Op) -> Iterator[Sample]:
    """The sample calls of `op`: its declared ones, else its kind's. `RNG` restarts from a
    seed of the op's name, so that an op's samples (and the draws a test makes after them)
    are the same whichever tests ran before in the process."""
    seeded = np.random.default_rng(zlib.crc32(op.name.encode()))
    RNG.bit_generator.state = seeded.bit_generator.state
    if "shapes" in _spec(op):
        return _declared(op)
    return GENERATORS[op.kind](op)


def has_samples(op: ops.Op) -> bool:
    return "shapes" in _spec(op) or op.kind in GENERATORS


def reference(op: ops.Op) -> Callable[..., Any] | None:
    """The op in numpy: its `reference`, else numpy's function of its name."""
    if op.reference is not None:
        return op.reference
    if op.name in SAMPLES_HERE:
        return SAMPLES_HERE[op.name][1]
    if op.kind in NUMPY_NAMED and op.aliases.numpy:
        return getattr(np, op.aliases.numpy[0], None)
    return None


def dtypes(op: ops.Op) -> tuple[pk.DType, ...]:
    """The dtypes the op's forward is tested in: its declared ones, else f32 and f64; i32
    for the integer-only elementwise ops, and f32 alone for the elementwise ops with bool
    results (their float types share one rule)."""
    names = _spec(op).get("dtypes")
    if names is not None:
        return tuple(getattr(pk, name) for name in names)
    if getattr(op, "plan", None) is not None:
        try:
            if not op.plan(pk.f64).result.is_float:
                return (pk.f32,)
        except TypeError:
            return (pk.i32,)
    return (pk.f32, pk.f64)


def float_result(op: ops.Op) -> bool:
    """Whether the op gives a float result on float operands (else its results are compared
    exactly: indices, bools, counts)."""
    if getattr(op, "plan", None) is not None:  # elementwise: its float types' rule
        try:
            return op.plan(pk.f64).result.is_float
        except TypeError:  # integer-only ops
            return False
    return op.grad in DIFFERENTIABLE or op.grad == "linear"


def run(op: ops.Op, sample: Sample, dtype: pk.DType) -> tuple[list[np.ndarray], list[Any]]:
    """(pykern's results, numpy's) of one sample, the operands cast to `dtype` first (numpy's
    in float64 or complex128, from the same values)."""
    cast = [a.astype(dtype.numpy) for a in sample.arrays]
    got = sample.call(op.function, [pk.asarray(a) for a in cast])
    wide = np.complex128 if dtype.is_complex else np.float64
    exact = [a if dtype.is_int else a.astype(wide) for a in cast]
    want = sample.call(reference(op), exact)
    return _results(got), _results(want)


def _results(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [v.numpy() if isinstance(v, pk.Tensor) else np.asarray(v) for v in value]
    return [value.numpy() if isinstance(value, pk.Tensor) else np.asarray(value)]
