"""`torch.pykern`: the device module PyTorch looks up by the device's name (as `torch.cuda`),
for device counts, synchronisation, seeding and autocast's questions."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

import pykern as pk
from pykern.torch import devices

# autocast on "pykern" casts to these (the first is autocast's default there: fp16, as CUDA)
AMP_DTYPES = [torch.float16, torch.bfloat16]


def is_available() -> bool:
    """Always True: pykern has at least its host device."""
    return True


def is_initialized() -> bool:
    """True: nothing needs initialising before use."""
    return True


def _is_in_bad_fork() -> bool:
    return False


def device_count() -> int:
    """The number of pykern devices (`len(pk.devices())`)."""
    return devices.count()


def current_device() -> int:
    """0: "pykern" is always "pykern:0", the device pykern chose (see pykern.torch.devices)."""
    return 0


def set_device(device: int | str | torch.device) -> None:
    """Accepted for "pykern:0" only: PyTorch's current device on a backend written in Python
    is always index 0, so other devices are named explicitly ("pykern:1")."""
    index = device if isinstance(device, int) else (torch.device(device).index or 0)
    if index != 0:
        raise RuntimeError(f"torch.pykern.set_device({device!r}): the current pykern device is "
                           "always pykern:0; name another device explicitly ('pykern:1')")


def get_device_name(device: int | str | torch.device | None = None) -> str:
    """The name of a pykern device."""
    return devices.pk_device(device).info.name  # type: ignore[attr-defined]


def synchronize(device: int | str | torch.device | None = None) -> None:
    """Waits for all the work queued on a pykern device."""
    devices.pk_device(device).sync()  # type: ignore[attr-defined]


def manual_seed(seed: int) -> None:
    """Seeds the random numbers of "pykern" tensors. They are drawn from PyTorch's default
    CPU generator (see docs/pytorch.md), so this seeds that one, as `torch.manual_seed`."""
    torch.default_generator.manual_seed(int(seed))
    pk.random.seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """`torch.manual_seed` calls this for every device type: pykern's own generator (used by
    pykern ops directly, not by PyTorch's random operators) follows the seed."""
    pk.random.seed(int(seed))


def seed_all() -> None:
    """A random seed for pykern's own generator."""
    pk.random.seed(None)


def get_amp_supported_dtype() -> list[torch.dtype]:
    """The dtypes `torch.autocast(device_type="pykern", dtype=...)` accepts."""
    return list(AMP_DTYPES)


@contextlib.contextmanager
def device(device: int | str | torch.device | None) -> Iterator[None]:
    """A context manager PyTorch enters around work for a device (as `torch.cuda.device`):
    pykern ops run on their operands' device, so it changes nothing."""
    yield
