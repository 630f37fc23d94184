"""The op matrix, generated from the registry (pykern.ops), as PyTorch's OpInfo: every declared op
of a kind with a sample generator here × its dtypes, forward against numpy in float64 and
backward against central differences, on the current device (the suite runs again on a
Vulkan device). A new op is tested by declaring it: its kind's generator makes its samples
(an op narrows them with `samples={"domain": (lo, hi)}`), its numpy name (or `reference=`)
gives the expected values, and its `grad` says whether a backward is checked.

Sizes stay small: a few elements per sample, so that the whole matrix is a few hundred
compiles of one-line kernels."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import pykern as pk
from pykern import ops

from gradcheck import check_grad

RNG = np.random.default_rng(2024)
DIFFERENTIABLE = ("formula", "rule", "composite")


@dataclass(frozen=True)
class Sample:
    """One call of an op: its array arguments (numpy, turned into tensors of the case's dtype)
    and its other arguments."""

    arrays: tuple[np.ndarray, ...]
    kwargs: dict[str, Any]


def _domain(op: ops.Op) -> tuple[float, float]:
    return (op.samples or {}).get("domain") or (-2.0, 2.0)


def _uniform(op: ops.Op, shape: tuple[int, ...]) -> np.ndarray:
    lo, hi = _domain(op)
    return RNG.uniform(lo, hi, shape)


def _unary(op: ops.Op) -> Iterator[Sample]:
    yield Sample((_uniform(op, (3, 4)),), {})


def _binary(op: ops.Op) -> Iterator[Sample]:
    yield Sample((_uniform(op, (3, 4)), _uniform(op, (3, 4))), {})
    yield Sample((_uniform(op, (2, 3, 4)), _uniform(op, (4,))), {})  # broadcasting


def _reduction(op: ops.Op) -> Iterator[Sample]:
    yield Sample((_uniform(op, (3, 5)),), {})
    yield Sample((_uniform(op, (3, 5)),), {"axis": 1})
    yield Sample((_uniform(op, (2, 3, 4)),), {"axis": (0, 2), "keepdims": True})


def _scan(op: ops.Op) -> Iterator[Sample]:
    yield Sample((_uniform(op, (3, 5)),), {"axis": 1})


GENERATORS: dict[str, Callable[[ops.Op], Iterator[Sample]]] = {
    "unary": _unary, "binary": _binary, "reduction": _reduction, "scan": _scan}
# the kinds whose ops take numpy's name for the same function (np.<name>)
NUMPY_NAMED = ("unary", "binary", "reduction", "scan")


def reference(op: ops.Op) -> Callable[..., np.ndarray] | None:
    """The op in numpy: its `reference`, else numpy's function of its name."""
    if op.reference is not None:
        return op.reference
    if op.kind in NUMPY_NAMED and op.aliases.numpy:
        return getattr(np, op.aliases.numpy[0], None)
    return None


def covered() -> list[ops.Op]:
    """The declared ops the matrix tests: exported, of a kind with a generator, with a
    reference, and a float result on float operands."""
    found = []
    for op in ops.all_ops():
        if not op.exports or op.kind not in GENERATORS or reference(op) is None:
            continue
        if getattr(op, "plan", None) is not None:  # elementwise: its float types' rule
            try:
                if not op.plan(pk.f64).result.is_float:
                    continue
            except TypeError:  # integer-only ops
                continue
        elif op.name in ("argmax", "argmin", "any", "all", "count_nonzero"):
            continue  # not a float result: covered by their own tests
        found.append(op)
    return found


def exact() -> list[tuple[ops.Op, pk.DType]]:
    """The elementwise ops with a bool or integer result (comparisons, predicates, bitwise
    and logical ops), with the dtype they are tested in: f32, or i32 for integer-only ones."""
    found = []
    for op in ops.all_ops():
        if not op.exports or op.kind not in ("unary", "binary") or reference(op) is None \
                or getattr(op, "plan", None) is None:
            continue
        try:
            if not op.plan(pk.f64).result.is_float:
                found.append((op, pk.f32))
        except TypeError:  # integer-only ops
            found.append((op, pk.i32))
    return found


COVERED = covered()
FORWARD = [(op, dtype) for op in COVERED for dtype in (pk.f32, pk.f64)]
BACKWARD = [op for op in COVERED if op.grad in DIFFERENTIABLE]
EXACT = exact()


def _call(op: ops.Op, sample: Sample, dtype: pk.DType) -> pk.Tensor:
    tensors = [pk.asarray(a.astype(dtype.numpy)) for a in sample.arrays]
    return op.function(*tensors, **sample.kwargs)


@pytest.mark.parametrize("op,dtype", FORWARD, ids=[f"{op.name}-{d.name}" for op, d in FORWARD])
def test_forward_against_numpy_in_float64(op, dtype):
    want_fn = reference(op)
    for sample in GENERATORS[op.kind](op):
        got = _call(op, sample, dtype).numpy().astype(np.float64)
        arrays = [a.astype(dtype.numpy).astype(np.float64) for a in sample.arrays]
        want = np.asarray(want_fn(*arrays, **sample.kwargs), np.float64)
        assert got.shape == want.shape, (op.name, sample.kwargs)
        # a few ulp of the dtype (f32 math is within a few ulp of the exact result), or the
        # op's declared f32 accuracy where that is Vulkan's
        rtol = (op.samples or {}).get("f32_rtol", 2e-5) if dtype == pk.f32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=op.name)


@pytest.mark.parametrize("op,dtype", EXACT, ids=[f"{op.name}-{d.name}" for op, d in EXACT])
def test_exact_results_against_numpy(op, dtype):
    """Bool and integer results are numpy's exactly (integers drawn from 0..7, so that shifts
    stay inside the width)."""
    for sample in GENERATORS[op.kind](op):
        arrays = [np.floor(a * 2 + 4).astype(dtype.numpy) if dtype.is_int else
                  a.astype(dtype.numpy) for a in sample.arrays]
        got = op.function(*(pk.asarray(a) for a in arrays), **sample.kwargs).numpy()
        np.testing.assert_array_equal(got, reference(op)(*arrays, **sample.kwargs),
                                      err_msg=op.name)


@pytest.mark.parametrize("op", BACKWARD, ids=[op.name for op in BACKWARD])
def test_backward_against_central_differences(op):
    fn, want_fn = op.function, reference(op)
    for sample in GENERATORS[op.kind](op):
        kw = sample.kwargs
        check_grad(lambda *ts, kw=kw: fn(*ts, **kw), lambda *xs, kw=kw: want_fn(*xs, **kw),
                   *sample.arrays, rng=RNG, atol=1e-6)


def test_the_matrix_covers_the_elementwise_and_reduction_ops():
    """Every float elementwise op and the float reductions are in the matrix: a new one is
    tested by being declared (or the matrix says what it lacks)."""
    names = {op.name for op in COVERED}
    assert len(names) >= 55, sorted(names)
    for expected in ("exp", "gelu", "atan2", "pow", "sum", "var", "cumsum", "logaddexp"):
        assert expected in names
