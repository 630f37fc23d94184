"""The safetensors layout, written and checked without the safetensors package.

    bytes 0..8      N, the header's length, an unsigned 64-bit little-endian integer
    bytes 8..8+N    the header: a UTF-8 JSON object (padded with spaces to a multiple of 8)
                      {"__metadata__": {str: str, ...},
                       "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...}
    bytes 8+N..     the data: each tensor's row-major, little-endian bytes at [b, e)

A file that strays from this raises ValueError naming the file and what is wrong, before any
tensor is made from it.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType

# pykern's dtypes under the names safetensors gives them
SAFETENSORS_NAMES: dict[DType, str] = {
    dt.bool_: "BOOL", dt.i8: "I8", dt.i16: "I16", dt.i32: "I32", dt.i64: "I64",
    dt.u8: "U8", dt.u16: "U16", dt.u32: "U32", dt.u64: "U64",
    dt.f16: "F16", dt.bf16: "BF16", dt.f32: "F32", dt.f64: "F64",
    # complex: pairs of floats, real part first (C64 is safetensors' own name; C128 pykern's,
    # in the same pattern)
    dt.c64: "C64", dt.c128: "C128",
}
FROM_SAFETENSORS_NAME: dict[str, DType] = {v: k for k, v in SAFETENSORS_NAMES.items()}

METADATA_KEY = "__metadata__"
LENGTH_BYTES = 8
# safetensors refuses headers past 100 MB; so do we, rather than read a corrupt length's worth
MAX_HEADER_BYTES = 100_000_000


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the header: its name, dtype, shape and byte range within the data."""

    name: str
    dtype: DType
    shape: tuple[int, ...]
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin


def encode_header(entries: list[TensorEntry], metadata: dict[str, str]) -> bytes:
    """The length prefix and the JSON header for `entries`, padded so that the data starts at
    a multiple of 8 bytes."""
    header: dict[str, object] = {METADATA_KEY: metadata}
    for e in entries:
        header[e.name] = {"dtype": SAFETENSORS_NAMES[e.dtype], "shape": list(e.shape),
                          "data_offsets": [e.begin, e.end]}
    text = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def header_length(prefix: bytes, file_size: int, where: str) -> int:
    """N from the first 8 bytes of a file of `file_size` bytes, checked against that size."""
    if len(prefix) < LENGTH_BYTES:
        raise ValueError(f"{where}: not a pykern/safetensors file: {file_size} bytes is "
                         "shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", prefix[:LENGTH_BYTES])
    if n > MAX_HEADER_BYTES or LENGTH_BYTES + n > file_size:
        raise ValueError(f"{where}: not a pykern/safetensors file, or truncated: the header "
                         f"length {n} is past the end of the file ({file_size} bytes)")
    if n < 2:
        raise ValueError(f"{where}: not a pykern/safetensors file: header length {n}")
    return n


def parse_header(text: bytes, data_size: int, where: str
                 ) -> tuple[list[TensorEntry], dict[str, str]]:
    """The tensors and the metadata of a header, every entry checked against the `data_size`
    bytes that follow it."""
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_unique_keys,
                            parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"{where}: not a pykern/safetensors file: its header is not valid "
                         f"JSON ({e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{where}: not a pykern/safetensors file: its header is a JSON "
                         f"{type(header).__name__}, not an object")
    metadata = header.pop(METADATA_KEY, {})
    if not isinstance(metadata, dict) or \
            not all(isinstance(v, str) for v in metadata.values()):
        raise ValueError(f"{where}: the header's {METADATA_KEY} is not an object of strings")
    entries = [_entry(name, value, data_size, where) for name, value in header.items()]
    _check_tiling(entries, data_size, where)
    return entries, metadata


def _check_tiling(entries: list[TensorEntry], data_size: int, where: str) -> None:
    """The byte ranges must tile the data exactly, as the safetensors format requires (no
    overlaps, holes or unindexed bytes at the end): ranges that overlap or leave a gap would
    load another tensor's bytes, or skipped ones, as a tensor's values."""
    end = 0
    for e in sorted(entries, key=lambda e: (e.begin, e.end)):
        if e.begin != end:
            fault = "overlaps the tensor before it" if e.begin < end else \
                f"leaves bytes [{end}, {e.begin}) of the data unused"
            raise ValueError(f"{where}: tensor {e.name!r} of the header lies at bytes "
                             f"[{e.begin}, {e.end}), which {fault}: the file is corrupt")
        end = e.end
    if end != data_size:
        raise ValueError(f"{where}: the header's tensors end at byte {end} of the data, but "
                         f"the file holds {data_size} bytes of data: the file is corrupt")


def _entry(name: str, value: object, data_size: int, where: str) -> TensorEntry:
    """One header entry, checked: a known dtype, a shape of sizes >= 0, and a byte range
    inside the data whose length is what dtype and shape need."""
    bad = f"{where}: tensor {name!r} of the header"
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data_offsets"}:
        raise ValueError(f"{bad} is not an object of exactly dtype, shape and data_offsets")
    dtype_name = value["dtype"]
    dtype = FROM_SAFETENSORS_NAME.get(dtype_name) if isinstance(dtype_name, str) else None
    if dtype is None:
        known = ", ".join(FROM_SAFETENSORS_NAME)
        raise ValueError(f"{bad} has an unknown dtype {dtype_name!r} (pykern reads "
                         f"{known})")
    shape, offsets = value["shape"], value["data_offsets"]
    if not isinstance(shape, list) or not all(_is_count(s) for s in shape):
        raise ValueError(f"{bad} has an invalid shape {shape!r}: a list of integers >= 0")
    if not isinstance(offsets, list) or len(offsets) != 2 or \
            not all(_is_count(o) for o in offsets) or offsets[0] > offsets[1]:
        raise ValueError(f"{bad} has invalid data_offsets {offsets!r}: [begin, end] with "
                         "0 <= begin <= end")
    begin, end = offsets
    if end > data_size:
        raise ValueError(f"{bad} lies at bytes [{begin}, {end}), past the end of the data "
                         f"({data_size} bytes): the file is truncated or corrupt")
    needed = math.prod(shape) * dtype.itemsize
    if end - begin != needed:
        raise ValueError(f"{bad} has {end - begin} bytes, but shape {shape} of "
                         f"{dtype_name} needs {needed}")
    return TensorEntry(name, dtype, tuple(shape), begin, end)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """json's object hook: a key given twice would make one tensor silently hide another."""
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice")
        out[key] = value
    return out


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")
