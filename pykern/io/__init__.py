"""Saving and loading tensors and state dicts: `pk.save(obj, path)` and `pk.load(path)`.

The file is in the safetensors layout (an 8-byte header length, a JSON header, the raw
little-endian bytes of each tensor), so other safetensors readers see the tensors; the nesting
of dicts, lists, tuples and plain values around them is a JSON description in the header's
`__metadata__`. Nothing is pickled: loading a file runs no code from it.
"""

from __future__ import annotations

from pykern.io.serialize import load, save

__all__ = ["load", "save"]
