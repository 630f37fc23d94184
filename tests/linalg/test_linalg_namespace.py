"""`pk.linalg` is the array API namespace's `linalg` extension."""

import pykern as pk


def test_namespace_extension_is_pk_linalg():
    xp = pk.asarray([1.0]).__array_namespace__()
    assert xp.linalg is pk.linalg
