"""Configuration of the compiler layers, read from the environment once, at the edge.

`config()` reads it on first use (a kernel's first launch or compile), never at `import pykern`
or at decoration: the op library's kernels are made at import, before a program may set
PYKERN_* variables. The runtime has its own (`pykern.runtime.config`, read when a device is
first needed); this one covers what sits above it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pykern.runtime.errors import ToolError
from pykern.runtime.logs import configure as configure_logging
from pykern.runtime.logs import level_from_env
from pykern.spirv.encoding.validate import DEFAULT_TIMEOUT_S as DEFAULT_TOOL_TIMEOUT_S
from pykern.spirv.encoding.validate import set_timeout as set_tool_timeout


def _flag(env: dict[str, str], name: str, default: bool) -> bool:
    value = env.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def default_cache_dir(env: dict[str, str]) -> Path:
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pykern"


@dataclass(frozen=True)
class CompilerConfig:
    cache_enabled: bool  # PYKERN_CACHE (default on)
    cache_dir: Path  # PYKERN_CACHE_DIR (default: $XDG_CACHE_HOME/pykern or ~/.cache/pykern)
    cache_validate: bool  # PYKERN_CACHE_VALIDATE: re-run spirv-val on modules loaded from disk
    interpret: bool  # PYKERN_INTERPRET: run kernels in the interpreter
    debug: bool  # PYKERN_DEBUG: bounds checks and asserts in every kernel
    strict_float: bool = False  # PYKERN_STRICT_FLOAT: IEEE floating point in every kernel
    log_level: int | None = None  # PYKERN_LOG (pykern.runtime.logs): None leaves logging alone
    # PYKERN_TOOL_TIMEOUT: seconds spirv-val / spirv-dis may run before they are stopped
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S

    @staticmethod
    def from_env(env: dict[str, str] | None = None) -> CompilerConfig:
        env = dict(os.environ if env is None else env)
        return CompilerConfig(
            cache_enabled=_flag(env, "PYKERN_CACHE", True),
            cache_dir=Path(env["PYKERN_CACHE_DIR"]) if env.get("PYKERN_CACHE_DIR")
            else default_cache_dir(env),
            cache_validate=_flag(env, "PYKERN_CACHE_VALIDATE", False),
            interpret=_flag(env, "PYKERN_INTERPRET", False),
            debug=_flag(env, "PYKERN_DEBUG", False),
            strict_float=_flag(env, "PYKERN_STRICT_FLOAT", False),
            log_level=level_from_env(env.get("PYKERN_LOG")),
            tool_timeout_s=_seconds(env, "PYKERN_TOOL_TIMEOUT", DEFAULT_TOOL_TIMEOUT_S),
        )


def _seconds(env: dict[str, str], name: str, default: float) -> float:
    text = env.get(name)
    if text is None or text.strip() == "":
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ToolError(f"{name}={text!r} is not a positive number of seconds")
    return value


@lru_cache(maxsize=1)
def config() -> CompilerConfig:
    """The process's configuration, read on first use (PYKERN_LOG is applied then, unless the
    runtime, which reads it too, did first; PYKERN_TOOL_TIMEOUT to the SPIR-V tools)."""
    compiler = CompilerConfig.from_env()
    configure_logging(compiler.log_level)
    set_tool_timeout(compiler.tool_timeout_s)
    return compiler
