"""The canary of `make test`'s GPU-assisted validation pass: a kernel that writes past the end
of its output must be reported there (lavapipe drops such writes silently, and the other
passes do not see them). Skipped in the other passes."""

from __future__ import annotations

import os

import numpy as np
import pytest

import pykern as pk
import pykern.runtime as rt
from pykern.runtime.config import GPU_ASSISTED

VALIDATE = os.environ.get("PYKERN_VALIDATE", "").strip().lower() not in ("", "0", "false", "no",
                                                                         "off")
pytestmark = pytest.mark.skipif(
    not VALIDATE or GPU_ASSISTED not in os.environ.get("VK_LAYER_ENABLES", ""),
    reason="only under GPU-assisted validation (PYKERN_VALIDATE=1, VK_LAYER_ENABLES=..."
    "GPU_ASSISTED_EXT)",
)


@pk.kernel
def shifted_copy(x: pk.f32[:], out: pk.f32[:], shift: pk.i32):
    i = pk.global_id(0)
    out[i + shift] = x[i]


def reported_errors() -> list[str]:
    pk.sync()
    errors = [m.text for m in rt.validation_messages()]
    rt.clear_validation_messages()  # expected here: not a failure of this test
    return errors


def test_an_out_of_bounds_write_in_a_kernel_is_reported():
    x = pk.asarray(np.arange(100, dtype=np.float32))
    out = pk.zeros(100)
    shifted_copy[100](x, out, 0)
    assert reported_errors() == []
    np.testing.assert_array_equal(out.numpy(), np.arange(100, dtype=np.float32))
    shifted_copy[100](x, out, 50)  # the last 50 writes land past the end
    errors = reported_errors()
    assert any("out of bounds" in e for e in errors), errors
    shifted_copy[100](x, out, 0)  # and the next launch is fine
    assert reported_errors() == []
