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


# ---- the device a test runs on ----
# Tests run on the default device (the host backend where no GPU is found) or the one
# PYKERN_DEVICE names; `make test` runs the kernel and tensor tests again on lavapipe. A test of
# the Vulkan path itself (SPIR-V the driver compiles, the Vulkan runtime) asks for `on_vulkan`
# (`@pytest.mark.usefixtures("on_vulkan")`, or `pytestmark = ...` for a whole module).


@pytest.fixture
def on_vulkan():
    """Makes a Vulkan device current for the test (the current one if it is one, else the
    first listed), and the previous one current again after; skips where there is none."""
    import pykern as pk

    previous = pk.get_device()
    if previous.info.kind != "host":
        yield previous
        return
    vulkan = [d for d in pk.devices() if d.kind != "host"]
    if not vulkan:
        pytest.skip("needs a Vulkan device")
    device = pk.set_device(vulkan[0].index)
    try:
        yield device
    finally:
        pk.set_device(previous.info.index)

