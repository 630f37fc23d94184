"""The `device` fixture of the end-to-end SPIR-V tests.

Tests that take it are skipped when `pykern.runtime` is not importable or no Vulkan device
opens. The Vulkan validation layer watches their launches when it is installed
(PYKERN_VALIDATE=1); any ERROR it reports fails the test.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def vulkan():
    """A Vulkan device of the runtime, restarted with the validation layer on when it can be
    (the current device stays current: the host, where no GPU is found)."""
    rt = pytest.importorskip("pykern.runtime", reason="pykern.runtime is not importable")
    if not rt.validation_enabled():
        saved = os.environ.get("PYKERN_VALIDATE")
        os.environ["PYKERN_VALIDATE"] = "1"
        rt.shutdown()
        try:
            rt.get_device()
        except Exception:  # noqa: BLE001  the layer may be missing: run without it
            os.environ.pop("PYKERN_VALIDATE")
            rt.shutdown()
        finally:
            if saved is None:
                os.environ.pop("PYKERN_VALIDATE", None)
            else:
                os.environ["PYKERN_VALIDATE"] = saved
    try:
        current = rt.get_device()
        # a Vulkan device, opened (and kept open) without changing the current device
        device = rt.set_device("vulkan")
        rt.set_device(current.info.index)
        return device
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no Vulkan device: {e}")


@pytest.fixture
def device(vulkan):
    """The device; fails the test if the validation layer reported an error meanwhile."""
    import pykern.runtime as rt

    rt.clear_validation_messages()
    yield vulkan
    vulkan.sync()
    errors = rt.validation_messages()
    rt.clear_validation_messages()
    if errors:
        pytest.fail("Vulkan validation errors:\n" + "\n".join(map(str, errors)), pytrace=False)
