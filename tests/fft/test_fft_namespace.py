"""`pk.fft` is the array API namespace's `fft` extension."""

import pykern as pk


def test_namespace_extension_is_pk_fft():
    xp = pk.asarray([1.0]).__array_namespace__()
    assert xp.fft is pk.fft
