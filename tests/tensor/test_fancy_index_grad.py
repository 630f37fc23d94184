"""Autograd through advanced indexing, against central differences (tests/gradcheck.py):
reading (`t[idx]`, `t[mask]`, mixed with slices; repeated indices accumulate) and writing
(`y[idx] = v` into a non-leaf; the value's entries that lose to a later repeat get no
gradient); writes into leaves that require grad refused, allowed under pk.no_grad()."""

import numpy as np
import pytest

import pykern as pk

from gradcheck import check_grad

MASK = np.array([[True, False, True, True], [False, False, True, False],
                 [True, True, False, True]])
READS = {
    "repeated": lambda x: x[[0, 2, 0, 0]],
    "two arrays and a slice": lambda x: x[[[0], [2]], 1:, [1, 1]],
    "mask rows": lambda x: x[:, MASK[0]],
}


@pytest.mark.parametrize("name", list(READS))
def test_read_gradient(name):
    rng = np.random.default_rng(3)
    fn = READS[name]
    check_grad(fn, fn, rng.standard_normal((3, 4, 2))[..., 0] if "mask" in name
               else rng.standard_normal((3, 4, 2)), rng=rng)


def _put(x, v):
    y = x * 1.0
    y[[0, 2, 0], 1] = v  # v[0] loses to v[2]
    y[y[:, 0] > 0] = 0.5  # a mask write on top
    return y


def test_write_gradient():
    rng = np.random.default_rng(4)
    check_grad(_put, _put, rng.standard_normal((3, 4)), rng.standard_normal(3), rng=rng)


def test_f16_gradient_accumulates_in_f32():
    x = pk.asarray(np.ones((4,), np.float16)).requires_grad_()
    x[[1, 1, 1, 3]].sum().backward()
    assert x.grad.dtype == pk.f16
    np.testing.assert_array_equal(x.grad.numpy(), [0, 3, 0, 1])


def test_writes_into_leaves():
    x = pk.asarray(np.zeros((3,), np.float32)).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        x[[0, 1]] = 1.0
    np.testing.assert_array_equal(x.numpy(), [0, 0, 0])
    with pk.no_grad():
        x[pk.asarray([True, False, True])] = 2.0
    np.testing.assert_array_equal(x.numpy(), [2, 0, 2])
