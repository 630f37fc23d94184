"""Runtime settings, read from the environment once, at the edge.

`Config.from_env()` is called when the runtime first needs a Vulkan instance (the first
`devices()` / `get_device()`); the resulting object is passed down. Nothing else in the runtime
reads `os.environ`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import DeviceError
from .logs import level_from_env

# the validation layer's feature that checks shader accesses on the device (VK_LAYER_ENABLES)
GPU_ASSISTED = "VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT"
TRANSFER_QUEUES = ("auto", "off", "compute")  # the values of Config.transfer_queue


@dataclass(frozen=True)
class Config:
    """What the environment may change about the runtime.

    - `device` (`PYKERN_DEVICE`): index or name substring of the default device.
    - `validate` (`PYKERN_VALIDATE=1`): enable VK_LAYER_KHRONOS_validation and record its messages.
    - `timeout` (`PYKERN_TIMEOUT`, seconds, default 60): the longest any fence wait may take.
    - `batch_launches`: recorded launches after which a batch is submitted without being asked.
    - `max_in_flight`: submitted batches allowed to run before recording waits for the oldest.
    - `force_staging` (`PYKERN_FORCE_STAGING=1`): never use host-visible device memory
      directly; stage every transfer as on a discrete GPU (used to test that path on lavapipe).
    - `push_descriptors`: bind buffers with VK_KHR_push_descriptor where the device has it
      (one call per launch); False uses cached descriptor sets, as devices without it do.
      Off under GPU-assisted validation (`PYKERN_VALIDATE=1` with
      `VK_LAYER_ENABLES` naming `VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT`): the layer
      does not see what push descriptors bind, reports every such buffer as uninitialized and
      stops the shader's accesses to it.
    - `cache_dir`: where the VkPipelineCache is kept between runs, next to the compile cache:
      `PYKERN_CACHE_DIR`, else `$XDG_CACHE_HOME/pykern`, else `~/.cache/pykern`; None (no
      pipeline cache on disk) when `PYKERN_CACHE=0`.
    - `transfer_queue` (`PYKERN_TRANSFER_QUEUE`): which queue host-device copies use: "auto"
      (the default) a transfer-only queue family where the device has one (a GPU's DMA engines;
      see transfer.py), else the compute queue; "off" the compute queue always; "compute" the
      DMA path on a queue of the compute family (to test that path on lavapipe).
    - `transfer_import` (`PYKERN_TRANSFER_IMPORT`, default off: on the H200, importing 1 GiB
      cost more than staging it, 12 against 26 GB/s): on the DMA path, copy straight from and
      to a numpy array's pages (VK_EXT_external_memory_host) where the device can.
    - `memory_block_size`: bytes of each device-memory block buffers are carved from; 0 picks
      one from the heap size (see `memory.default_block_size`).
    - `buffer_cache_bytes`: at most this many bytes of freed buffers are kept whole for the
      next buffer of their size (`recycle.py`); 0 keeps none.
    """

    device: str | None = None
    validate: bool = False
    timeout: float = 60.0
    batch_launches: int = 256
    max_in_flight: int = 4
    force_staging: bool = False
    push_descriptors: bool = True
    cache_dir: Path | None = None
    memory_block_size: int = 0
    buffer_cache_bytes: int = 256 << 20
    transfer_queue: str = "auto"
    transfer_import: bool = False
    log_level: int | None = None  # PYKERN_LOG (see logs.py): None leaves logging alone

    @staticmethod
    def from_env(environ: Mapping[str, str] | None = None) -> Config:
        """Reads the PYKERN_* variables (from `os.environ` unless `environ` is given)."""
        env = os.environ if environ is None else environ
        timeout_text = env.get("PYKERN_TIMEOUT", "60")
        try:
            timeout = float(timeout_text)
        except ValueError:
            raise DeviceError(
                f"PYKERN_TIMEOUT={timeout_text!r} is not a number of seconds"
            ) from None
        if timeout <= 0:
            raise DeviceError(f"PYKERN_TIMEOUT={timeout_text!r} must be positive")
        validate = _flag(env.get("PYKERN_VALIDATE"))
        transfer_queue = (env.get("PYKERN_TRANSFER_QUEUE") or "auto").strip().lower()
        if transfer_queue not in TRANSFER_QUEUES:
            raise DeviceError(
                f"PYKERN_TRANSFER_QUEUE={transfer_queue!r} is none of {', '.join(TRANSFER_QUEUES)}"
            )
        return Config(
            device=env.get("PYKERN_DEVICE") or None,
            validate=validate,
            timeout=timeout,
            force_staging=_flag(env.get("PYKERN_FORCE_STAGING")),
            push_descriptors=not (validate and GPU_ASSISTED in env.get("VK_LAYER_ENABLES", "")),
            cache_dir=cache_dir(env),
            transfer_queue=transfer_queue,
            transfer_import=_flag(env.get("PYKERN_TRANSFER_IMPORT"), default=False),
            log_level=level_from_env(env.get("PYKERN_LOG")),
        )


def cache_dir(env: Mapping[str, str]) -> Path | None:
    """The cache directory the environment names (the compile cache uses the same rules)."""
    if not _flag(env.get("PYKERN_CACHE"), default=True):
        return None
    if env.get("PYKERN_CACHE_DIR"):
        return Path(env["PYKERN_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".cache"
    )
    return Path(base) / "pykern"


def _flag(text: str | None, default: bool = False) -> bool:
    if text is None or not text.strip():
        return default
    return text.strip().lower() not in ("0", "false", "no", "off")
