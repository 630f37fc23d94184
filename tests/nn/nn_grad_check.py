"""The pk.nn tests' gradient checks: tests/gradcheck.py with this suite's random weights."""

from __future__ import annotations

import functools

import numpy as np

import gradcheck
from gradcheck import numeric_grad

RNG = np.random.default_rng(2026)
check_grad = functools.partial(gradcheck.check_grad, rng=RNG)

__all__ = ["RNG", "check_grad", "numeric_grad"]
