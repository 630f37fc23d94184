"""`pk.transfer_guard`: catching implicit copies of tensors from device memory to the host.

A copy is *explicit* when the code asks for host data by name: `t.numpy()`, `t.tolist()`,
`t.item()`, `float(t)`, `int(t)`, `bool(t)`, `print(t)`, `t.to(device)`. It is *implicit* when
numpy takes a tensor and converts it on its own: `np.asarray(t)`, `np.array(t)`, and numpy's
functions that pykern does not run on the device (which get a host copy, `np.median(t)`). A
program that wants its tensors to stay on the device — every op on the GPU, no hidden round
trip — forbids the implicit kind:

    with pk.transfer_guard("disallow"):
        y = np.exp(t)          # runs on the device: fine
        np.median(t)           # pk.TransferGuardError, naming numpy.median

or for the whole process with PYKERN_TRANSFER_GUARD=disallow. The levels: "allow" (the
default), "log" (each implicit copy is logged as a warning by the `pykern.transfer` logger),
"disallow" (each raises `pk.TransferGuardError` before anything is copied).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pykern.errors import TransferGuardError

LEVELS = ("allow", "log", "disallow")
LOG = logging.getLogger("pykern.transfer")


def _level_from_env() -> str:
    value = os.environ.get("PYKERN_TRANSFER_GUARD", "").strip().lower() or "allow"
    if value not in LEVELS:
        raise ValueError(f"PYKERN_TRANSFER_GUARD={value!r}: use one of {', '.join(LEVELS)}")
    return value


class _Level(threading.local):
    """The level in force in this thread (a `with pk.transfer_guard(...)` block's, else the
    process's, read from PYKERN_TRANSFER_GUARD at import)."""

    level: str | None = None


_PROCESS_LEVEL = _level_from_env()
_THREAD = _Level()


@contextmanager
def transfer_guard(level: str) -> Iterator[None]:
    """`with pk.transfer_guard("disallow"):` forbids implicit device-to-host copies of tensors
    in this thread until the block ends ("log" logs them, "allow" allows them again inside an
    outer block); blocks nest. See the module's docstring for what counts as implicit."""
    if level not in LEVELS:
        raise ValueError(f"transfer_guard: level must be one of {', '.join(LEVELS)}, not "
                         f"{level!r}")
    outer = _THREAD.level
    _THREAD.level = level
    try:
        yield
    finally:
        _THREAD.level = outer


def current_level() -> str:
    """The level in force here: the innermost `transfer_guard` block's, else the process's."""
    return _THREAD.level or _PROCESS_LEVEL


def implicit_copy(what: str, tensor: object) -> None:
    """Called before an implicit copy of `tensor` to the host, which `what` makes (e.g.
    "numpy.median"): nothing, a warning logged, or TransferGuardError, by the level."""
    level = current_level()
    if level == "allow":
        return
    shape = getattr(tensor, "shape", "?")
    dtype = getattr(getattr(tensor, "dtype", None), "name", "?")
    device = getattr(getattr(getattr(tensor, "device", None), "info", None), "name", "?")
    message = (f"{what}: an implicit copy of a {dtype} tensor of shape {shape} from "
               f"{device} to host memory")
    if level == "log":
        LOG.warning("%s", message)
        return
    raise TransferGuardError(f"{message}, refused by pk.transfer_guard('disallow'); call "
                             ".numpy() to copy it explicitly, or use a pykern op that runs on "
                             "the device")
