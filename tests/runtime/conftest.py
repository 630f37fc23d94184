"""Runtime tests run with the Vulkan validation layer on, and fail on any ERROR it reports.

lavapipe drops out-of-bounds accesses and forgives missing barriers; the validation layer is
the only witness of such bugs, so it watches every test here.
"""

from __future__ import annotations

import os

import pytest

# before any device exists: the runtime reads its Config once, when it starts
os.environ["PYKERN_VALIDATE"] = "1"
# synchronisation validation too: it reports missing or wrong barriers, which lavapipe forgives
os.environ.setdefault(
    "VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"
)

import pykern.runtime as rt  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def validated_runtime():
    """Starts the runtime with validation, on a Vulkan device (PYKERN_DEVICE=vulkan unless it
    names one: these are tests of the Vulkan runtime), and at the end of the module checks its
    teardown (any object left alive at vkDestroyDevice is a validation error) and restores
    PYKERN_DEVICE: the tests after these start a runtime on the device they would have had."""
    saved = os.environ.get("PYKERN_DEVICE")
    if saved is None or saved.strip().lower() == "host":
        os.environ["PYKERN_DEVICE"] = "vulkan"
    if not rt.validation_enabled() or rt.get_device().info.kind == "host":
        # something started the runtime without validation, or on the host: restart it
        rt.shutdown()
    assert rt.validation_enabled(), "PYKERN_VALIDATE=1 did not enable the validation layer"
    try:
        yield
    finally:
        log = rt.selection._get_runtime().instance.validation
        rt.shutdown()
        if saved is None:
            os.environ.pop("PYKERN_DEVICE", None)
        else:
            os.environ["PYKERN_DEVICE"] = saved
    errors = log.messages()
    assert not errors, "validation errors at teardown:\n" + "\n".join(map(str, errors))


@pytest.fixture(autouse=True)
def no_validation_errors(validated_runtime):
    """Fails the test if the validation layer reported an error while it ran."""
    if not rt.validation_enabled():
        rt.shutdown()  # a test shut the runtime down; the next one starts it afresh
    earlier = rt.validation_messages()
    rt.clear_validation_messages()
    if earlier:  # e.g. from a module fixture's teardown
        pytest.fail(
            "Vulkan validation errors between tests:\n" + "\n".join(map(str, earlier)),
            pytrace=False,
        )
    yield
    device = rt.get_device()
    if not device.closed and not device.hung:
        device.sync()  # submission-time errors belong to this test too
    errors = rt.validation_messages()
    rt.clear_validation_messages()
    if errors:
        pytest.fail(
            "Vulkan validation errors:\n" + "\n".join(str(e) for e in errors), pytrace=False
        )


@pytest.fixture
def device() -> rt.Device:
    return rt.get_device()
