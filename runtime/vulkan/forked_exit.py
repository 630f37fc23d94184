"""How a process made by os.fork() from one that used a GPU's Vulkan driver ends.

The child shares the driver's state with its parent: its device files and memory the driver
maps shared. When such a child exits normally, the driver's own exit code runs in it and damages
the parent's device (seen on an H200, driver 580: the parent's next reads returned stale data,
later devices could not be created, or the device was lost). So in such a child pykern ends the
process itself once Python's exit handlers have run: it flushes sys.stdout and sys.stderr and
calls os._exit with the exit status, which skips the driver's exit code (and the finalisation of
objects still alive: close files before the child exits). multiprocessing's fork children end
with os._exit already. The status is 1 after an uncaught exception and the code given to
sys.exit(); a bare `raise SystemExit(n)` cannot be seen and ends with 0 unless n is passed
through sys.exit.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any

_status = 0


def end_with_os_exit() -> None:
    """Arranges, in a forked child, for the process to end with os._exit after the exit
    handlers (see the module docstring)."""
    previous_hook, previous_exit = sys.excepthook, sys.exit

    def excepthook(*info: Any) -> None:
        global _status
        _status = 1
        previous_hook(*info)

    def exit(code: object = None) -> None:  # noqa: A001 - sys.exit's own name
        global _status
        _status = code if isinstance(code, int) else 0 if code is None else 1
        previous_exit(code)

    sys.excepthook, sys.exit = excepthook, exit
    atexit.register(_finish)


def _finish() -> None:
    """The exit handler registered last, so run first: runs the others, then ends."""
    atexit.unregister(_finish)
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed or broken stream: nothing to keep
                pass
        os._exit(_status & 0xFF)
