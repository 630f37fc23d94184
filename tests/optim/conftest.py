"""Fixtures of the optimizer tests."""

from __future__ import annotations

import pytest

import pykern as pk


@pytest.fixture
def launches(monkeypatch):
    """A list that grows by one entry per kernel launch on the current device."""
    device = pk.get_device()
    seen: list[object] = []
    real = device.launch

    def counting(program, grid, buffers, args=b""):
        seen.append(program)
        return real(program, grid, buffers, args)

    monkeypatch.setattr(device, "launch", counting)
    return seen


@pytest.fixture
def copies(monkeypatch):
    """A list that grows by one entry (the byte count) per buffer copy on the current device."""
    device = pk.get_device()
    seen: list[int] = []
    real = device.copy_buffer

    def counting(src, src_offset, dst, dst_offset, nbytes):
        seen.append(nbytes)
        return real(src, src_offset, dst, dst_offset, nbytes)

    monkeypatch.setattr(device, "copy_buffer", counting)
    return seen
