"""pk.fft through replayed plans (pykern/fft/planned.py): the first call of a transform with a
signature runs its Python and notes its launches, later calls launch them again. Every call,
captured or replayed, must give numpy's answer for its own input, leave earlier results and
the input intact, and a bad call must not disturb the plan."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.fft import engine
from pykern.tensor.core import dispatch

from fft_support import assert_close, random_complex, random_real

CASES = [  # (name, pykern call, numpy call, complex input, n for the bound)
    ("fft four-step", lambda x: pk.fft.fft(x, norm="ortho"),
     lambda x: np.fft.fft(x, norm="ortho"), True, 512),
    ("ifft Bluestein", lambda x: pk.fft.ifft(x, n=97), lambda x: np.fft.ifft(x, n=97), True,
     97),
    ("fftn", lambda x: pk.fft.fftn(x, axes=(0, 1)), lambda x: np.fft.fftn(x, axes=(0, 1)),
     True, 512),
    ("rfft", lambda x: pk.fft.rfft(x), lambda x: np.fft.rfft(x), False, 512),
    ("irfft", lambda x: pk.fft.irfft(x, n=20), lambda x: np.fft.irfft(x, n=20), True, 20),
    ("rfftn", lambda x: pk.fft.rfftn(x), lambda x: np.fft.rfftn(x), False, 512),
    ("irfftn", lambda x: pk.fft.irfftn(x, axes=(0, 1)),
     lambda x: np.fft.irfftn(x, axes=(0, 1)), True, 512),
    ("hfft", lambda x: pk.fft.hfft(x), lambda x: np.fft.hfft(x), True, 512),
    ("ihfft", lambda x: pk.fft.ihfft(x), lambda x: np.fft.ihfft(x), False, 512),
]


@pytest.mark.parametrize("name, call, reference, is_complex, n", CASES,
                         ids=[c[0] for c in CASES])
def test_every_call_gives_numpys_answer(monkeypatch, name, call, reference, is_complex, n):
    # a small shared-memory capacity: 512 runs the four-step (several launches, a temporary)
    monkeypatch.setattr(engine, "shared_capacity", lambda real: 64)
    dispatch.clear()
    results = []
    for seed in range(4):  # the first call captures, the next ones replay
        x = (random_complex((3, 512), np.complex64, seed) if is_complex
             else random_real((3, 512), np.float32, seed))
        tx = pk.asarray(x)
        results.append((x, call(tx), tx))
    keys = [k for k in dispatch._PLANS if k[0][0] == "pk.fft"]
    assert keys and all(type(dispatch._PLANS[k]) is dispatch.Plan for k in keys), name
    assert len({id(r.buffer) for _, r, _ in results}) == len(results)  # fresh results
    for x, got, tx in results:  # each still holds its own answer; the inputs are intact
        want = reference(x.astype(np.complex128 if is_complex else np.float64))
        got_c = got.numpy()
        assert got_c.shape == want.shape
        bound = 5 * np.finfo(np.float32).eps * np.log2(n) * np.linalg.norm(x) * 4
        assert np.max(np.abs(got_c - want)) <= bound, name
        np.testing.assert_array_equal(tx.numpy(), x)


def test_a_replay_on_a_view_reads_the_views_elements():
    """Views with the same shape, strides and offset share a plan; another offset is another
    signature: each reads its own elements."""
    base = random_complex((6, 64), np.complex64, 3)
    t = pk.asarray(base)
    for start in (0, 1, 0, 1, 2):
        got = pk.fft.fft(t[start::2])
        assert_close(got, np.fft.fft(base[start::2].astype(np.complex128)), base[start::2],
                     np.complex64, 64)


def test_a_bad_call_leaves_the_plan_and_the_input_intact():
    x = random_complex((2, 32), np.complex64, 5)
    t = pk.asarray(x)
    first = pk.fft.fft(t)
    with pytest.raises(ValueError, match="norm"):
        pk.fft.fft(t, norm="sideways")
    again = pk.fft.fft(t)
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    np.testing.assert_array_equal(t.numpy(), x)
