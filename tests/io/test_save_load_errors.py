"""What pk.save refuses (TypeError naming the place in the object) and the files pk.load
refuses (ValueError naming the file and the fault): truncated, corrupted, foreign or forged."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from save_load_support import host_data

import pykern as pk
from pykern.io.serialize import write_atomically


def saved(tmp_path, obj=None):
    path = tmp_path / "f.safetensors"
    pk.save({"w": pk.asarray(host_data(pk.f32, (3, 4))), "b": pk.ones(2, pk.i8), "n": 1}
            if obj is None else obj, path)
    return path


def forge(path, header: dict, data: bytes = b"") -> None:
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def load_error(path) -> str:
    with pytest.raises(ValueError) as info:
        pk.load(path)
    assert str(path) in str(info.value)
    return str(info.value)


# ---------------------------------------------------------------- what cannot be saved


@pytest.mark.parametrize("obj, place, what", [
    ({"model": {"w": pk.ones(2)}, "opt": {"fn": lambda x: x}}, "obj['opt']['fn']", "function"),
    ([pk.ones(1), {"s": {1, 2}}], "obj[1]['s']", "set"),
    ({"layers": [{"z": 1j}]}, "obj['layers'][0]['z']", "complex"),
    (object(), "obj", "object"),
])
def test_what_cannot_be_saved_is_named_by_its_place(obj, place, what, tmp_path):
    with pytest.raises(TypeError) as info:
        pk.save(obj, tmp_path / "x")
    assert f"cannot save {place}, a {what}" in str(info.value)
    assert not (tmp_path / "x").exists()


def test_dict_keys_must_be_str_or_int(tmp_path):
    with pytest.raises(TypeError, match=r"obj\['a'\]: its key \(1, 2\) is a tuple"):
        pk.save({"a": {(1, 2): pk.ones(1)}}, tmp_path / "x")


def test_a_container_holding_itself(tmp_path):
    loop: list = [pk.ones(1)]
    loop.append({"again": loop})
    with pytest.raises(TypeError, match=r"cannot save obj\[1\]\['again'\]: it contains itself"):
        pk.save(loop, tmp_path / "x")


def test_a_numpy_array_of_a_dtype_pykern_lacks(tmp_path):
    with pytest.raises(TypeError, match="numpy array 'c'.*datetime64"):
        pk.save({"c": np.zeros(2, "datetime64[s]")}, tmp_path / "x")


def test_a_failed_save_leaves_the_old_file_and_no_temporary_file(tmp_path):
    path = saved(tmp_path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        pk.save({"w": print}, path)

    def write_then_fail(f):
        f.write(b"half a file")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, write_then_fail)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


# ---------------------------------------------------------------- files that cannot be loaded


def test_a_file_of_another_kind(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("This is a text file, long enough to hold a length.\n")
    message = load_error(path)
    assert "header length" in message and "past the end of the file" in message


def test_a_file_shorter_than_the_length(tmp_path):
    path = tmp_path / "tiny"
    path.write_bytes(b"\x01\x02")
    assert "2 bytes is shorter than the 8-byte header length" in load_error(path)


@pytest.mark.parametrize("keep", [0, 5, 8, 20, -1, -16])
def test_truncated_files(keep, tmp_path):
    path = saved(tmp_path)
    raw = path.read_bytes()
    path.write_bytes(raw[:keep] if keep >= 0 else raw[:len(raw) + keep])
    message = load_error(path)
    if keep < 0:
        assert "past the end of the data" in message and "truncated" in message


def test_a_huge_header_length(tmp_path):
    path = saved(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[:8] = struct.pack("<Q", 2**63 + 5)
    path.write_bytes(bytes(raw))
    assert f"header length {2**63 + 5} is past the end of the file" in load_error(path)


def test_a_header_that_is_not_json(tmp_path):
    path = saved(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[8] ^= 0xFF  # the opening brace flipped: no longer UTF-8, let alone JSON
    path.write_bytes(bytes(raw))
    assert "header is not valid JSON" in load_error(path)


@pytest.mark.parametrize("entry, fault", [
    ({"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}, "unknown dtype 'F8_E4M3'"),
    ({"dtype": ["F32"], "shape": [1], "data_offsets": [0, 4]}, "unknown dtype ['F32']"),
    ({"dtype": "F32", "shape": [2], "data_offsets": [0, 400]}, "past the end of the data"),
    ({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}, "has 8 bytes, but shape [3]"),
    ({"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}, "invalid shape [-1]"),
    ({"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}, "invalid data_offsets [8, 4]"),
    ({"dtype": "F32", "shape": [1]}, "exactly dtype, shape and data_offsets"),
    ({"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}, "bytes other than 0 and 1"),
])
def test_header_entries_out_of_bounds_or_unknown(entry, fault, tmp_path):
    path = tmp_path / "forged"
    end = entry.get("data_offsets", [0, 16])[1]
    forge(path, {"t": entry}, data=b"\x07" * (end if 0 < end <= 16 else 16))
    assert fault in load_error(path)


@pytest.mark.parametrize("offsets, data_size, fault", [
    ([[0, 16], [8, 24]], 24, "[8, 24), which overlaps the tensor before it"),
    ([[0, 16], [0, 16]], 16, "[0, 16), which overlaps the tensor before it"),
    ([[0, 8], [16, 24]], 24, "leaves bytes [8, 16) of the data unused"),
    ([[0, 8], [8, 16]], 32, "end at byte 16 of the data, but the file holds 32"),
])
def test_byte_ranges_that_overlap_or_leave_holes(offsets, data_size, fault, tmp_path):
    """The ranges must tile the data (as safetensors requires): a corrupt pair of offsets
    that keeps the right length would otherwise load another tensor's bytes as the values."""
    path = tmp_path / "forged"
    header = {name: {"dtype": "F32", "shape": [(e - b) // 4], "data_offsets": [b, e]}
              for name, (b, e) in zip("ab", offsets)}
    forge(path, header, data=np.arange(data_size // 4, dtype=np.float32).tobytes())
    assert fault in load_error(path)


def test_a_key_given_twice(tmp_path):
    path = tmp_path / "twice"
    entry = '{"dtype":"U8","shape":[1],"data_offsets":[0,1]}'
    text = f'{{"t":{entry},"t":{entry}}}'.encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"\x00")
    assert "the key 't' appears twice" in load_error(path)


@pytest.mark.parametrize("metadata, fault", [
    ({"pykern.format": "2", "pykern.structure": "{}"}, "pykern file format '2'"),
    ({"pykern.format": "1", "pykern.structure": "{oops"}, "structure is not valid JSON"),
    ({"pykern.format": "1", "pykern.structure": '{"tensor":"gone"}'}, "tensor 'gone'"),
    ({"pykern.format": "1", "pykern.structure": '{"dict":[["a",{"set":[]}]]}'},
     "malformed at obj['a']"),
    ({"pykern.format": "1", "pykern.structure": '{"list":[{"float":[1]}]}'},
     "malformed at obj[0]"),
    ({"pykern.format": 1}, "not an object of strings"),
])
def test_forged_metadata(metadata, fault, tmp_path):
    path = tmp_path / "forged"
    forge(path, {"__metadata__": metadata})
    assert fault in load_error(path)


def test_header_entries_the_structure_does_not_refer_to(tmp_path):
    # a pykern file whose header lists a tensor its structure does not use (another tool
    # added it, keeping the metadata) loaded without it, silently; now the entries are named
    path = saved(tmp_path)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    end = len(data)
    header["extra"] = {"dtype": "U8", "shape": [3], "data_offsets": [end, end + 3]}
    header["more"] = {"dtype": "U8", "shape": [1], "data_offsets": [end + 3, end + 4]}
    forge(path, header, data + b"\x01\x02\x03\x04")
    fault = load_error(path)
    assert "2 tensor(s) that the saved structure does not refer to: 'extra', 'more'" in fault
    # the same file without the structure's metadata is a foreign file: every tensor loads
    del header["__metadata__"]
    forge(path, header, data + b"\x01\x02\x03\x04")
    loaded = pk.load(path)
    assert sorted(loaded) == ["b", "extra", "more", "w"]
    np.testing.assert_array_equal(loaded["extra"].numpy(), [1, 2, 3])
    # a tensor the structure refers to twice (tied weights) is used, not left over
    tied = pk.ones(3)
    again = pk.load(saved(tmp_path, {"a": tied, "b": tied}))
    assert again["a"] is again["b"]


@settings(max_examples=60, deadline=None)
@given(position=st.integers(0, 10**6), bits=st.integers(1, 255))
def test_any_flipped_header_byte_loads_or_gives_a_value_error(tmp_path_factory, position,
                                                             bits):
    """Whatever byte of the length or header is damaged, the outcome is the file's contents (a
    flip inside a name or a number can leave a valid file) or a ValueError: never another
    exception."""
    path = saved(tmp_path_factory.mktemp("flip"))
    raw = bytearray(path.read_bytes())
    (n,) = struct.unpack("<Q", raw[:8])
    raw[position % (8 + n)] ^= bits
    path.write_bytes(bytes(raw))
    try:
        pk.load(path)
    except ValueError as e:
        assert str(path) in str(e)
