"""Shaders and layouts shared by the runtime tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

from pykern.runtime import BindingLayout, BufferSlot

SHADERS = Path(__file__).parent / "shaders"
GRID_FIELDS = [
    ("grid0", "I"),
    ("grid1", "I"),
    ("grid2", "I"),
    ("base0", "I"),
    ("base1", "I"),
    ("base2", "I"),
]


def spv(name: str) -> bytes:
    """The committed SPIR-V of tests/runtime/shaders/NAME.comp (see build.sh there)."""
    return (SHADERS / f"{name}.spv").read_bytes()


def assemble(name: str) -> bytes:
    """Assembles tests/runtime/shaders/NAME.spvasm with spirv-as for Vulkan 1.2."""
    result = subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", "-o", "-", str(SHADERS / f"{name}.spvasm")],
        capture_output=True,
        timeout=30,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"spirv-as failed: {result.stderr.decode()}")
    return result.stdout


def slots(*names: str, writable: tuple[str, ...] = ()) -> list[BufferSlot]:
    """Storage buffer slots at bindings 0, 1, ... in order; only `writable` ones are written."""
    return [BufferSlot(i, n, writable=n in writable) for i, n in enumerate(names)]


def layout_of(
    buffers: list[BufferSlot],
    fields: list[tuple[str, str]],
    workgroup: tuple[int, int, int],
    max_push_size: int = 128,
) -> BindingLayout:
    """A layout whose argument block is `fields` followed by the grid and base fields."""
    return BindingLayout.build(buffers, [*fields, *GRID_FIELDS], workgroup, max_push_size)


def args_for(layout: BindingLayout, *values: object) -> bytearray:
    """The block with `values` for the leading fields; grid and base are the runtime's."""
    return layout.pack([*values, 0, 0, 0, 0, 0, 0])


SPIN_STEPS = 60_000  # spin.comp: acc = i, then acc = acc * 1664525 + 1013904223 this often


def spin_result(n: int) -> np.ndarray:
    """What spin.comp writes for a grid of n: the LCG step applied SPIN_STEPS times is itself
    an affine map, composed here in Python integers."""
    a, c = 1, 0
    for _ in range(SPIN_STEPS):
        a, c = (a * 1664525) % 2**32, (c * 1664525 + 1013904223) % 2**32
    i = np.arange(n, dtype=np.uint64)
    return ((i * np.uint64(a) + np.uint64(c)) % np.uint64(2**32)).astype(np.uint32)


PRELUDE = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np
import pykern.runtime as rt
from rt_helpers import args_for, layout_of, slots, spv
"""


def run_python(body: str, timeout: float, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    """Runs `body` (after imports of numpy, the runtime and these helpers) in a fresh Python
    with `env` added to the environment; returns the result and the seconds it took. For what
    happens at exit, and for work that may hang: the test survives it."""
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
        check=False,
    )
    return result, time.monotonic() - start
