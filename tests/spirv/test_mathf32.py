"""The constants of pykern.spirv.numerics.mathf32 against their derivation
(pykern.spirv.numerics.mathf32_derive): the bits of 2/pi and pi/2 from pi in integer arithmetic, and
each polynomial's relative error on its interval, well below an f32 ULP (2^-23)."""

import math

import numpy as np
import pytest

from pykern.spirv.numerics import mathf32
from pykern.spirv.numerics import mathf32_derive as derive


def test_pi_from_integers():
    # the first 64 bits of pi's fraction, a well-known constant
    assert derive.pi_times_power_of_two(62) == 0xC90FDAA22168C234
    assert derive.pi_times_power_of_two(400) >> 336 == derive.pi_times_power_of_two(64)


def test_two_over_pi_and_pi_over_two_tables():
    assert mathf32._TWO_OVER_PI == derive.two_over_pi_words(8, 26)
    assert mathf32._PIO2_Q31 == derive.pi_times_power_of_two(30) == int(math.pi / 2 * 2**31)
    # the bits after the 26 leading zeros are 2/pi's
    value = int.from_bytes(b"".join(w.to_bytes(4, "big") for w in mathf32._TWO_OVER_PI), "big")
    assert value / 2.0 ** (8 * 32 - 26) == pytest.approx(2 / math.pi, rel=1e-15)


@pytest.mark.parametrize("target", derive.TARGETS, ids=lambda t: t.name)
def test_polynomials_are_accurate_far_below_an_ulp(target):
    coefficients = getattr(mathf32, f"_{target.name}")
    assert len(coefficients) == target.degree + 1
    assert all(np.float32(c) == c for c in coefficients)  # f32 constants, as emitted
    assert derive.weighted_error(target, coefficients) < 2.0**-26
