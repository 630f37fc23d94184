"""pykern's logging: the logger "pykern" and its children, and `PYKERN_LOG`.

pykern logs through the standard `logging` module: "pykern.runtime" (which device was chosen
and why, fallbacks such as the host device where Vulkan is unusable) and "pykern.jit" (each
compile with its time and backend; compile-cache hits at debug level). A program configures
them as any other logger (`logging.getLogger("pykern").setLevel(logging.INFO)` with a handler
of its own), or sets `PYKERN_LOG=info` (or `debug`, `warning`: the default), which gives the
"pykern" logger that level and a handler that writes to stderr.

The variable is read once, when pykern first needs its configuration (the first device use,
compile or launch), as every PYKERN_* variable is. Every message is guarded by
`logger.isEnabledFor(level)`: nothing is formatted when the level is off.

This module imports only the standard library (the compiler layers use it too).
"""

from __future__ import annotations

import logging
import sys
import threading

ROOT = "pykern"
LEVELS = {"warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}
FORMAT = "%(name)s %(levelname)s: %(message)s"

_lock = threading.Lock()
_configured = False


def level_from_env(text: str | None) -> int | None:
    """The level `PYKERN_LOG=text` names (None when unset or empty); a ValueError naming the
    variable and the accepted values otherwise."""
    if text is None or not text.strip():
        return None
    level = LEVELS.get(text.strip().lower())
    if level is None:
        raise ValueError(f"PYKERN_LOG={text!r} is none of {', '.join(LEVELS)}")
    return level


def configure(level: int | None) -> None:
    """Applies the level PYKERN_LOG asked for, once per process (later calls do nothing).
    None leaves the "pykern" logger to the program's own logging set-up."""
    global _configured
    with _lock:
        if _configured:
            return
        _configured = True
        if level is None:
            return
        logger = logging.getLogger(ROOT)
        logger.setLevel(level)
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(handler)
        logger.propagate = False  # the program asked for stderr: not twice through the root's
