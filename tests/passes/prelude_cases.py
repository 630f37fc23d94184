"""The f64 math functions of the prelude with their numpy references, sample ranges and the
ULP bounds docs/language.md promises, shared by the device and interpreter tests."""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

import pykern as pk


class Case(NamedTuple):
    function: object  # the pk name a kernel calls
    reference: Callable[..., np.ndarray]
    ranges: tuple[tuple[float, float], ...]  # uniform samples of each; a log-uniform one for log
    ulps: float  # the bound on |got - numpy| in ULPs of numpy's result
    domain: float = math.inf  # finite arguments beyond this magnitude promise nothing


TRIG_DOMAIN = math.inf  # Payne-Hanek's reduction beyond 2**20 pi/2: every finite argument
HARD_TRIG = (1.0e22, 2.0**1023, -(2.0**600), 1647099.3291652855, 1647099.329165286)  # the
# last two: the Cody-Waite limit (2**20 pi/2), either side
erf = np.vectorize(math.erf, otypes=[np.float64])

UNARY: dict[str, Case] = {
    "exp": Case(pk.exp, np.exp, ((-745, 709), (-1, 1)), 2),
    "exp2": Case(pk.exp2, np.exp2, ((-1074, 1023), (-1, 1)), 2),
    "log": Case(pk.log, np.log, ((0, 1e300), (0.5, 2), (0, 1e-300)), 2),
    "log2": Case(pk.log2, np.log2, ((0, 1e300), (0.5, 2)), 3),
    "sin": Case(pk.sin, np.sin, ((-1e5, 1e5), (-4, 4)), 2, TRIG_DOMAIN),
    "cos": Case(pk.cos, np.cos, ((-1e5, 1e5), (-4, 4)), 2, TRIG_DOMAIN),
    "tan": Case(pk.tan, np.tan, ((-100, 100), (-1.5, 1.5)), 4, TRIG_DOMAIN),
    "asin": Case(pk.asin, np.arcsin, ((-1, 1),), 2),
    "acos": Case(pk.acos, np.arccos, ((-1, 1),), 2),
    "atan": Case(pk.atan, np.arctan, ((-1e10, 1e10), (-3, 3)), 2),
    "sinh": Case(pk.sinh, np.sinh, ((-710, 710), (-1, 1)), 3),
    "cosh": Case(pk.cosh, np.cosh, ((-710, 710), (-1, 1)), 3),
    "tanh": Case(pk.tanh, np.tanh, ((-30, 30), (-1, 1)), 3),
    "erf": Case(pk.erf, erf, ((-7, 7), (-2.5, 2.5), (-0.6, 0.6)), 4),
}
BINARY: dict[str, Case] = {
    "pow": Case(pk.pow, np.power, ((0, 5), (-20, 20)), 64),  # exp(y log x): |y log x| ULPs
    "atan2": Case(pk.atan2, np.arctan2, ((-700, 700), (-700, 700)), 3),
}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-310, -1e-310, 0.5, 2.0,
                    709.78, -745.1, 1e300, -1e300, math.pi, -math.pi / 2])


def samples(case: Case, seed: int = 0, n: int = 400) -> np.ndarray:
    """Uniform samples of each of the case's ranges, tiny values and the special ones."""
    r = np.random.default_rng(seed)
    parts = [r.uniform(low, high, n) for low, high in case.ranges]
    if case.function is pk.log:
        parts.append(np.exp(r.uniform(-744, 709, n)))
    if case.domain == TRIG_DOMAIN and case.function in (pk.sin, pk.cos, pk.tan):
        magnitudes = 10.0 ** r.uniform(5, 308, n)
        parts += [magnitudes * r.choice([-1.0, 1.0], n), np.array(HARD_TRIG)]
    special = SPECIAL[~(np.abs(SPECIAL) > case.domain) | ~np.isfinite(SPECIAL)]
    return np.concatenate(parts + [r.uniform(-1e-3, 1e-3, 50), special])


def ulp_errors(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ULPs of `want` (0 where both are the same nan or infinity; inf where
    only one is a nan, an infinity or of another sign at zero)."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(all="ignore"):
        err = np.abs(got - want) / np.spacing(np.abs(want))
    err = np.where(np.isfinite(want) & np.isfinite(got), err, np.inf)
    return np.where(same, 0.0, err)
