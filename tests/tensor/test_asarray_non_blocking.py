"""pk.asarray(x, non_blocking=True): returns with the data copied out of x (x may change at
once), and everything after it (ops, t.numpy()) sees what x held."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


@pytest.mark.parametrize("n", [7, 3 * 2**20 + 5])  # one small copy, one in pieces
def test_non_blocking_upload_then_use(n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    expected = x.copy()
    t = pk.asarray(x, non_blocking=True)
    x[:] = 0.0  # allowed at once: the data are in staging (or on the device) already
    doubled = t * 2.0
    np.testing.assert_array_equal(t.numpy(), expected)
    np.testing.assert_array_equal(doubled.numpy(), expected * 2)


def test_non_blocking_keeps_dtype_and_copy_rules():
    t = pk.asarray([1, 2, 3], non_blocking=True)
    assert t.dtype == pk.i32 and t.tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="copy=False"):
        pk.asarray(np.ones(3, np.float32), copy=False, non_blocking=True)
    assert pk.asarray(t, non_blocking=True) is t
