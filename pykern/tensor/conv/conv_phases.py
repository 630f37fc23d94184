"""The output phases of a strided transposed convolution, so that its implicit GEMM reduces over
the kernel taps that contribute and no others.

conv_transpose2d with stride s takes output row oh from input row ih through tap kh only when
ih·s - p + kh·d == oh: for the rows oh with (oh + p) ≡ r (mod s), the taps with kh·d ≡ r
(mod s), an arithmetic progression of step s / gcd(s, d). Cutting the output into its s_h·s_w
phases (every s-th row and column from the right origin, a strided view) gives each phase a
plain reduction over its own taps, instead of one in which (s_h·s_w - 1) taps in s_h·s_w add
zeros. conv2d has one phase: every row, every tap.
"""

import math
from dataclasses import dataclass

from pykern.tensor.conv.conv_args import ConvGeometry


@dataclass(frozen=True)
class AxisPhase:
    """Along one spatial axis: output indices first, first + step, ... (`count` of them),
    reached through taps tap0, tap0 + tap_step, ... (`taps` of them)."""

    first: int
    step: int
    count: int
    tap0: int
    tap_step: int
    taps: int

    def kernel_args(self) -> tuple[int, int, int, int, int]:
        """(first, step, tap0, tap_step, taps): what the kernel needs beyond the view."""
        return self.first, self.step, self.tap0, self.tap_step, self.taps


def output_phases(geo: ConvGeometry, kernel: tuple[int, int], size: tuple[int, int]
                  ) -> list[tuple[AxisPhase, AxisPhase]]:
    """The (rows, columns) phases that cover an output of `size`; empty phases left out."""
    axes = [_axis_phases(geo, k, n, axis) for axis, (k, n) in enumerate(zip(kernel, size))]
    return [(ph, pw) for ph in axes[0] for pw in axes[1]]


def _axis_phases(geo: ConvGeometry, kernel: int, size: int, axis: int) -> list[AxisPhase]:
    if not geo.transposed or geo.stride[axis] == 1:
        return [AxisPhase(0, 1, size, 0, 1, kernel)]
    s, p, d = geo.stride[axis], geo.padding[axis], geo.dilation[axis]
    phases = []
    for r in range(s):
        first = (r - p) % s  # the first output index with (o + p) % s == r
        count = len(range(first, size, s))
        if count == 0:
            continue
        taps = [k for k in range(kernel) if (k * d - r) % s == 0]
        step = s // math.gcd(s, d)
        phases.append(AxisPhase(first, s, count, taps[0] if taps else 0, step, len(taps)))
    return phases
