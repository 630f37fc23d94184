"""The bytes pk.save writes, read back here with struct and json alone (the layout of
docs/tensor.md, "Saving and loading"), and files the safetensors package writes and reads."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from save_load_support import SAFETENSORS_NAMES, host_data

import pykern as pk


def parse(path):
    """(header, data) of a safetensors-layout file, by the layout alone."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    return header, raw[8 + n:], n


def test_header_and_data_bytes(tmp_path):
    w = host_data(pk.f32, (2, 3))
    ids = host_data(pk.i64, (4,))
    flags = host_data(pk.bool_, (3,))
    half = host_data(pk.bf16, (2, 2))
    pk.save({"w": pk.asarray(w), "ids": pk.asarray(ids), "flags": pk.asarray(flags),
             "half": pk.asarray(half), "step": 3}, tmp_path / "f")
    header, data, n = parse(tmp_path / "f")
    assert n % 8 == 0  # the data starts 8-byte aligned
    metadata = header.pop("__metadata__")
    assert metadata["pykern.format"] == "1"
    assert json.loads(metadata["pykern.structure"]) == {"dict": [
        ["w", {"tensor": "w"}], ["ids", {"tensor": "ids"}], ["flags", {"tensor": "flags"}],
        ["half", {"tensor": "half"}], ["step", {"value": 3}]]}
    expected = {"w": w, "ids": ids, "flags": flags, "half": half}
    assert set(header) == set(expected)
    # widest element first, so each tensor starts at a multiple of its element size; no gaps
    spans = sorted((e["data_offsets"], name) for name, e in header.items())
    assert [name for _, name in spans] == ["ids", "w", "half", "flags"]
    assert spans[0][0][0] == 0 and spans[-1][0][1] == len(data)
    assert all(a[0][1] == b[0][0] for a, b in zip(spans, spans[1:]))
    for name, array in expected.items():
        entry = header[name]
        assert entry["dtype"] == SAFETENSORS_NAMES[pk.asarray(array).dtype.name]
        assert entry["shape"] == list(array.shape)
        begin, end = entry["data_offsets"]
        assert begin % array.dtype.itemsize == 0
        assert data[begin:end] == array.astype(array.dtype.newbyteorder("<")).tobytes()


def test_a_view_is_written_as_its_logical_row_major_bytes(tmp_path):
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    pk.save(pk.asarray(base)[1:, ::-2].T, tmp_path / "v")
    header, data, _ = parse(tmp_path / "v")
    assert header["tensor"] == {"dtype": "I32", "shape": [3, 3], "data_offsets": [0, 36]}
    assert data == np.ascontiguousarray(base[1:, ::-2].T).tobytes()


def test_a_numpy_array_in_big_endian_order_is_written_little_endian(tmp_path):
    array = (np.arange(5, dtype=np.uint32) * 0x01020304).astype(">u4")
    assert array.dtype.byteorder == ">"
    pk.save({"a": array}, tmp_path / "be")
    header, data, _ = parse(tmp_path / "be")
    assert header["a"]["dtype"] == "U32"
    assert data == array.astype("<u4").tobytes()
    np.testing.assert_array_equal(pk.load(tmp_path / "be")["a"].numpy(), array)


def test_every_dtype_is_named_as_safetensors_names_it(tmp_path):
    tensors = {d: pk.asarray(host_data(getattr(pk, d), (2,))) for d in SAFETENSORS_NAMES}
    pk.save(tensors, tmp_path / "all")
    header, _, _ = parse(tmp_path / "all")
    assert {name: header[name]["dtype"] for name in tensors} == SAFETENSORS_NAMES


def test_safetensors_reads_what_pykern_writes(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    state = {"layer.0.weight": host_data(pk.f32, (3, 2)), "counts": host_data(pk.u16, (0, 4)),
             "scalar": host_data(pk.f64, ()), "mask": host_data(pk.bool_, (5,))}
    pk.save({k: pk.asarray(v) for k, v in state.items()}, tmp_path / "s")
    read = safetensors_numpy.load_file(str(tmp_path / "s"))
    assert set(read) == set(state)
    for name, array in state.items():
        assert read[name].dtype == array.dtype and read[name].tobytes() == array.tobytes()


def test_pykern_reads_what_safetensors_writes(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    state = {"a": host_data(pk.i8, (2, 3)), "b": host_data(pk.f16, (4,))}
    safetensors_numpy.save_file(state, str(tmp_path / "s"), metadata={"format": "np"})
    loaded = pk.load(tmp_path / "s")
    assert set(loaded) == {"a", "b"}  # no pykern structure: a flat dict of tensors
    for name, array in state.items():
        assert loaded[name].numpy().tobytes() == array.tobytes()
