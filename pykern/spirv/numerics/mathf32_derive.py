"""How the constants of `pykern.spirv.numerics.mathf32` were derived: the bits of 2/pi and the
polynomial coefficients (Python integers and numpy only).

The bits of 2/pi come from pi computed in integer arithmetic (Machin's formula) to 400 bits.

Each function is written as its leading Taylor terms plus z^k times a polynomial P(z) in
z = r * r, and P is fitted to the exact remainder with a weight that turns P's error into the
relative error of the whole function. The fit is Lawson's algorithm: weighted least squares on
Chebyshev points, the weights multiplied by the error after each pass, which converges to the
minimax (equi-oscillating) polynomial. The coefficients are then rounded to f32.

    python -m pykern.spirv.numerics.mathf32_derive    # prints the tables that mathf32.py holds

The remainders are evaluated from their Taylor series (sin, cos) or, for tanh, in float64
from numpy's tanh with the series near 0, so the fit itself is accurate to about 2^-50.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Fn = Callable[[np.ndarray], np.ndarray]


def pi_times_power_of_two(bits: int) -> int:
    """floor(pi * 2**bits), by Machin's formula pi = 16 atan(1/5) - 4 atan(1/239) in
    integers (64 guard bits absorb the truncation of the series' terms)."""
    one = 1 << (bits + 64)

    def atan_of_inverse(n: int) -> int:
        total, term, k, sign = 0, one // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total

    return (16 * atan_of_inverse(5) - 4 * atan_of_inverse(239)) >> 64


def two_over_pi_words(words: int, leading_zeros: int) -> tuple[int, ...]:
    """2/pi as `words` 32-bit words, most significant first, after `leading_zeros` zero bits:
    bit t of the sequence (from the top of word 0) is the bit of weight 2^(leading_zeros - 1 - t)
    of 2/pi."""
    precision = 400
    two_over_pi = (1 << (2 * precision + 1)) // pi_times_power_of_two(precision)
    value = two_over_pi >> (precision - (32 * words - leading_zeros))
    return tuple((value >> (32 * (words - 1 - w))) & 0xFFFFFFFF for w in range(words))


def _series(z: np.ndarray, coefficients: list[float]) -> np.ndarray:
    total = np.zeros_like(z)
    for c in reversed(coefficients):
        total = total * z + c
    return total


def sin_remainder(z: np.ndarray) -> np.ndarray:
    """(sin r - r) / r^3 as a function of z = r^2."""
    return _series(z, [(-1) ** k / math.factorial(2 * k + 1) for k in range(1, 14)])


def cos_remainder(z: np.ndarray) -> np.ndarray:
    """(cos r - 1 + r^2 / 2) / r^4 as a function of z = r^2."""
    return _series(z, [(-1) ** k / math.factorial(2 * k) for k in range(2, 15)])


# tanh's Taylor coefficients after x: -1/3, 2/15, -17/315, 62/2835, -1382/155925
_TANH_SERIES = [-1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925]


def tanh_remainder(z: np.ndarray) -> np.ndarray:
    """(tanh a - a) / a^3 as a function of z = a^2."""
    a = np.sqrt(z)
    near = a < 0.02  # where tanh(a) - a cancels; the series' next term is below 2^-60
    with np.errstate(invalid="ignore", divide="ignore"):
        far = (np.tanh(a) - a) / (a * z)
    return np.where(near, _series(z, _TANH_SERIES), far)


@dataclass(frozen=True)
class Target:
    """P(z) ~ remainder(z) on [0, z_max], weighted so that the error is relative to f."""

    name: str
    remainder: Fn
    weight: Fn
    z_max: float
    degree: int


TARGETS = (
    # sin r = r + r^3 P(z) on |r| <= pi/4: relative error r^3 |P - g| / sin r
    Target("SIN", sin_remainder, lambda z: z * np.sqrt(z) / np.sin(np.sqrt(z)),
           (math.pi / 4) ** 2, 2),
    # cos r = 1 - z/2 + z^2 P(z): relative error z^2 |P - h| / cos r
    Target("COS", cos_remainder, lambda z: z * z / np.cos(np.sqrt(z)), (math.pi / 4) ** 2, 2),
    # tanh a = a + a^3 P(z) on |a| < 1 (beyond, 1 - 2 / (e^2a + 1) loses little)
    Target("TANH", tanh_remainder, lambda z: z * np.sqrt(z) / np.tanh(np.sqrt(z)), 1.0, 7),
)


def lawson(target: Target, points: int = 4000, passes: int = 400) -> tuple[np.ndarray, float]:
    """The near-minimax coefficients (lowest degree first, float64) and their weighted error."""
    t = np.cos(np.linspace(0.0, np.pi, points))
    z = 1e-12 + (target.z_max - 1e-12) * (t + 1) / 2  # z = 0 would make the weight 0/0
    basis = np.vander(z, target.degree + 1, increasing=True)
    g, w = target.remainder(z), target.weight(z)
    lawson_weights = np.full(points, 1.0 / points)
    error = np.zeros(points)
    for _ in range(passes):
        root = np.sqrt(lawson_weights)
        c, *_ = np.linalg.lstsq(basis * (w * root)[:, None], g * w * root, rcond=None)
        error = np.abs(w * (basis @ c - g))
        lawson_weights = lawson_weights * error
        lawson_weights /= lawson_weights.sum()
    return c, float(error.max())


def weighted_error(target: Target, coefficients: tuple[float, ...], points: int = 20001) -> float:
    """The largest relative error of the function that `coefficients` define (in float64)."""
    z = np.linspace(1e-12, target.z_max, points)
    p = _series(z, list(coefficients))
    return float(np.max(np.abs(target.weight(z) * (p - target.remainder(z)))))


def fitted() -> dict[str, tuple[float, ...]]:
    """Each target's coefficients, rounded to f32."""
    return {t.name: tuple(float(np.float32(c)) for c in lawson(t)[0]) for t in TARGETS}


def main() -> None:
    words = ", ".join(f"{w:#010x}" for w in two_over_pi_words(8, 26))
    print(f"_TWO_OVER_PI = ({words})")
    print(f"_PIO2_Q31 = {pi_times_power_of_two(30):#x}  # floor(pi/2 * 2^31)")
    tables = fitted()
    for target in TARGETS:
        coefficients = tables[target.name]
        error = weighted_error(target, coefficients)
        print(f"_{target.name} = {coefficients!r}  # relative error {error:.2g} "
              f"(2^{math.log2(error):.1f})")


if __name__ == "__main__":
    main()
