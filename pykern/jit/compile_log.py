"""What the compile pipeline says on the "pykern.jit" logger (see pykern.runtime.logs).

At INFO, each compile: the kernel, the variant's argument types, the device, the backend
(SPIR-V for Vulkan devices, LLVM for the host) and the time it took. At DEBUG, the hits of the
compile caches: a variant loaded from the disk cache, and one found in memory by a kernel that
had compiled it before (the launch fast path, which finds its variant without these lookups,
logs nothing). Callers guard with `LOG.isEnabledFor` so that nothing is formatted otherwise.
"""

from __future__ import annotations

import logging
from typing import Any

from pykern.jit.variants import VariantKey

LOG = logging.getLogger("pykern.jit")


def describe(name: str, key: VariantKey) -> str:
    """`name(x: f32[:], n: i32; block=128)`: the kernel and the types a variant is for."""
    params = ", ".join(f"{p}: {t}" for p, t in key.types)
    constants = ", ".join(f"{p}={v!r}" for p, _, v in key.constants)
    strict = " strict" if key.strict else ""
    return f"{name}({params}{'; ' + constants if constants else ''}){strict}"


def backend_of(device: Any) -> str:
    return "LLVM" if device.info.kind == "host" else "SPIR-V"


def log_built(name: str, key: VariantKey, device: Any, variant: Any, seconds: float) -> None:
    """A variant compiled (INFO) or loaded from the disk cache (DEBUG), in `seconds`."""
    level = logging.DEBUG if variant.from_disk_cache else logging.INFO
    if not LOG.isEnabledFor(level):
        return
    what = describe(name, key)
    where = f"{device.info.name} ({backend_of(device)})"
    if variant.from_disk_cache:
        LOG.debug("disk cache hit: %s for %s, loaded in %.1f ms", what, where, seconds * 1e3)
    else:
        LOG.info("compiled %s for %s in %.1f ms", what, where, seconds * 1e3)


def log_memory_hit(name: str, key: VariantKey, device: Any) -> None:
    if LOG.isEnabledFor(logging.DEBUG):
        LOG.debug("memory cache hit: %s for %s", describe(name, key), device.info.name)
