"""Test-session setup: a private compile-cache directory, so tests neither read a developer's
cache nor leave entries in it."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("PYKERN_CACHE_DIR", tempfile.mkdtemp(prefix="pykern-test-cache-"))


# ---- PYKERN_VALIDATE=1: every test fails on a Vulkan validation error ----
# `PYKERN_VALIDATE=1 pytest tests/kernels tests/runtime` runs the suite under
# VK_LAYER_KHRONOS_validation (synchronisation validation included); lavapipe forgives missing
# barriers and out-of-bounds accesses, the layer does not. tests/runtime turns this on always.

import pytest  # noqa: E402

VALIDATE = os.environ.get("PYKERN_VALIDATE", "").strip().lower() not in ("", "0", "false", "no",
                                                                         "off")
if VALIDATE:
    os.environ.setdefault(
        "VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"
    )


@pytest.fixture(autouse=True)
def fail_on_validation_errors():
    """With PYKERN_VALIDATE=1, fails the test if the validation layer reported an error while
    it ran (its work is waited for first: some errors are reported at submission)."""
    if not VALIDATE:
        yield
        return
    import pykern.runtime as rt

    rt.clear_validation_messages()
    yield
    try:
        rt.settle()
    except rt.DeviceError:
        pass  # the test's own business (a timeout, a lost device); messages still count
    errors = rt.validation_messages()
    rt.clear_validation_messages()
    if errors:
        pytest.fail("Vulkan validation errors:\n" + "\n".join(map(str, errors)), pytrace=False)
