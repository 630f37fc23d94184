"""Shaders and layouts shared by the runtime tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
