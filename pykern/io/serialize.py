"""`pk.save` and `pk.load`: tensors and state dicts to and from a safetensors-layout file."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from pykern.io import safetensors_format as fmt
from pykern.io.safetensors_format import TensorEntry
from pykern.io.structure import Flattened, Leaf, flatten, rebuild
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.core.tensor import Tensor, empty

FORMAT_KEY = "pykern.format"
STRUCTURE_KEY = "pykern.structure"
FORMAT_VERSION = "1"

PathLike = str | os.PathLike[str]


def save(obj: object, path: PathLike) -> None:
    """Writes `obj` to the file `path`: a tensor, a numpy array (it loads as a tensor), or
    dicts (str or int keys), lists and tuples of those, with None, bools, ints, floats and
    strings as values too (a state dict, an optimiser's state, a training step count).

        pk.save(model.state_dict(), "model.safetensors")
        model.load_state_dict(pk.load("model.safetensors"))

    Views are written as their logical contents. The file is replaced atomically: a save that
    fails leaves the old file as it was. Anything else in `obj` (a function, a set, a complex
    number) is a TypeError naming its place, as "obj['opt']['fn']", before anything is written.
    """
    flat = flatten(obj)
    entries = _entries(flat)
    metadata = {FORMAT_KEY: FORMAT_VERSION,
                STRUCTURE_KEY: json.dumps(flat.structure, separators=(",", ":"),
                                          allow_nan=False)}
    header = fmt.encode_header(entries, metadata)

    def write(f: IO[bytes]) -> None:
        f.write(header)
        for entry in entries:
            f.write(memoryview(_host_bytes(flat.leaves[entry.name])).cast("B"))

    write_atomically(path, write)


def load(path: PathLike, device: object = None) -> Any:
    """The object saved in `path`, with each tensor a new contiguous `pk.Tensor` on the current
    device (`device`, if given, must be that device: pykern uses one at a time). A safetensors
    file from another writer loads as a dict of name -> Tensor.

    A file that is not of this format, is truncated, has a header that is out of bounds or
    names an unknown dtype, or a structure that does not match the header's tensors (one
    missing, or one listed that it does not refer to) is a ValueError naming the file and the
    fault.
    """
    where = os.fspath(path)
    target = get_device()
    if device is not None and device is not target and device != target:
        raise ValueError(f"cannot load {where} onto {device!r}: pykern uses one device at a "
                         f"time, now {target} (pk.set_device)")
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        n = fmt.header_length(f.read(fmt.LENGTH_BYTES), size, where)
        data_start = fmt.LENGTH_BYTES + n
        entries, metadata = fmt.parse_header(f.read(n), size - data_start, where)
        tensors = {e.name: _read_tensor(f, data_start, e, where) for e in entries}
    return _assemble(metadata, tensors, where)


def write_atomically(path: PathLike, write: Callable[[IO[bytes]], None]) -> None:
    """Calls `write` on a new file beside `path`, then renames it onto `path`; if `write`
    raises, `path` is untouched and the new file removed. The file's mode follows the umask,
    as for any new file."""
    target = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(target)
    temp = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


# ---------------------------------------------------------------- saving


def _entries(flat: Flattened) -> list[TensorEntry]:
    """Header entries for the tensors, widest dtype first so that every tensor's data starts at
    a multiple of its element size (the data itself starts at a multiple of 8)."""
    leaves = [(name, _leaf_dtype(leaf, name), tuple(leaf.shape))
              for name, leaf in flat.leaves.items()]
    leaves.sort(key=lambda item: -item[1].itemsize)  # stable: ties keep the object's order
    entries, offset = [], 0
    for name, dtype, shape in leaves:
        nbytes = dtype.itemsize
        for s in shape:
            nbytes *= s
        entries.append(TensorEntry(name, dtype, shape, offset, offset + nbytes))
        offset += nbytes
    return entries


def _leaf_dtype(leaf: Leaf, name: str) -> DType:
    if isinstance(leaf, Tensor):
        return leaf.dtype
    try:
        return dt.from_numpy(leaf.dtype.newbyteorder("="))
    except KeyError:
        raise TypeError(f"cannot save the numpy array {name!r}: its dtype {leaf.dtype} has no "
                        "pykern equivalent") from None


def _host_bytes(leaf: Leaf) -> np.ndarray:
    """The leaf's elements, row-major and little-endian, in a numpy array (bf16 as its 16-bit
    words, which needs no ml_dtypes)."""
    if isinstance(leaf, np.ndarray):
        d = _leaf_dtype(leaf, "")
        words = leaf.view(np.uint16) if d == dt.bf16 else leaf
        return np.ascontiguousarray(words, dtype=words.dtype.newbyteorder("<")).reshape(-1)
    t = leaf.contiguous()  # a view is gathered on the device first
    out = np.empty(t.size, t.dtype.storage)
    if t.size:
        t.buffer.read_into(out, t.offset * t.itemsize)  # type: ignore[attr-defined]
    return out


# ---------------------------------------------------------------- loading


def _read_tensor(f: IO[bytes], data_start: int, entry: TensorEntry, where: str) -> Tensor:
    t = empty(entry.shape, entry.dtype)
    if not entry.nbytes:
        return t
    f.seek(data_start + entry.begin)
    data = f.read(entry.nbytes)
    if len(data) != entry.nbytes:  # the file shrank since its size was read
        raise ValueError(f"{where}: truncated inside tensor {entry.name!r}")
    if entry.dtype == dt.bool_ and np.frombuffer(data, np.uint8).max() > 1:
        raise ValueError(f"{where}: BOOL tensor {entry.name!r} holds bytes other than 0 and 1")
    t.buffer.upload(data)  # type: ignore[attr-defined]
    return t


def _assemble(metadata: dict[str, str], tensors: dict[str, Tensor], where: str) -> Any:
    """The saved object from the tensors and the header's metadata; a dict of the tensors for a
    file that pykern did not write."""
    if FORMAT_KEY not in metadata:
        return tensors
    if metadata[FORMAT_KEY] != FORMAT_VERSION:
        raise ValueError(f"{where}: pykern file format {metadata[FORMAT_KEY]!r}; this pykern "
                         f"reads format {FORMAT_VERSION!r}")
    try:
        structure = json.loads(metadata.get(STRUCTURE_KEY, ""))
    except ValueError as e:
        raise ValueError(f"{where}: the saved structure is not valid JSON ({e})") from None
    return rebuild(structure, tensors, where)
