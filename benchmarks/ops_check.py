"""Checking a benchmarked result against a float64 reference, with a bound per result dtype.

The error is normwise: max |result - reference| / max |reference| over the checked part. For a
float result the bound is two units of its rounding (what storing an exact f32-accumulated
value in that dtype may cost), and at least 1e-4 for f32, whose accumulation over thousands of
terms dominates its own rounding: a GEMM accumulating f16 products in f16 lands above the f16
bound at these sizes, f32 accumulation well below it. Integer results must be exact.
Large results are checked on a sample (a few blocks of rows, a few images) so that the float64
reference stays cheap; small ones whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ROUNDING = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24, "f64": 2.0**-53}
F32_ACCUMULATION = 1e-4


@dataclass(frozen=True)
class Check:
    """The outcome of comparing a result with its reference: `error` (normwise relative),
    the `bound` for the result's dtype, and what part of the result was compared."""

    error: float
    bound: float
    checked: str

    @property
    def ok(self) -> bool:
        return self.error <= self.bound  # NaN fails


def bound_for(dtype: str) -> float:
    """The largest acceptable normwise relative error of a result of dtype `dtype`."""
    if dtype not in ROUNDING:
        return 0.0  # integers: exact
    bound = 2 * ROUNDING[dtype]
    return max(bound, F32_ACCUMULATION) if dtype == "f32" else bound


def relative_error(result: np.ndarray, reference: np.ndarray) -> float:
    """max |result - reference| / max |reference| (the absolute error if the reference is 0);
    NaN where the result has a NaN or an infinity the reference lacks."""
    got = np.asarray(result, np.float64)
    want = np.asarray(reference, np.float64)
    if got.shape != want.shape:
        raise ValueError(f"result shape {got.shape} differs from the reference's {want.shape}")
    if got.size == 0:
        return 0.0
    if not np.all(np.isfinite(got)):
        return float("nan")
    diff = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want)))
    return diff / scale if scale > 0 else diff


def compare(pieces: list[tuple[np.ndarray, np.ndarray]], dtype: str, checked: str,
            exact: bool = False) -> Check:
    """A `Check` over (result, reference) pairs taken together (one normwise error); `exact`
    for an op that only moves values (a copy), whatever the dtype."""
    got = np.concatenate([np.ravel(g) for g, _ in pieces])
    want = np.concatenate([np.ravel(w) for _, w in pieces])
    return Check(relative_error(got, want), 0.0 if exact else bound_for(dtype), checked)


def row_blocks(n: int, rows: int) -> list[slice]:
    """The rows of an n-row result to check: all of them when n <= rows, else a block of
    rows // 2 at each end (the first and last tiles, where edge handling goes wrong)."""
    if n <= rows:
        return [slice(0, n)]
    half = max(1, rows // 2)
    return [slice(0, half), slice(n - half, n)]


def describe(blocks: list[slice], n: int) -> str:
    """`all 64 rows` or `rows 0-7, 4088-4095 of 4096`."""
    if len(blocks) == 1 and blocks[0] == slice(0, n):
        return f"all {n} rows"
    return "rows " + ", ".join(f"{b.start}-{b.stop - 1}" for b in blocks) + f" of {n}"
