"""One SPIR-V instruction as a value, and its encoding into words (SPIR-V spec §2.3)."""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from pykern.spirv.encoding.grammar import Op

# An operand is one 32-bit word (an id, a literal number or an enum value) or a literal string.
Operand = int | str

WORD_MASK = 0xFFFF_FFFF


@dataclass(frozen=True)
class Instruction:
    """An instruction: `opcode`, optional result type and result ids, then its operands.

    Multi-word literals (64-bit constants) are passed as their words, low-order word first
    (see `literal_words`).

    >>> Instruction(Op.TypeInt, None, 5, (32, 1)).words()
    [262165, 5, 32, 1]
    """

    opcode: Op
    result_type: int | None = None
    result_id: int | None = None
    operands: tuple[Operand, ...] = ()

    def words(self) -> list[int]:
        """The encoded instruction, word count and opcode in the first word."""
        body: list[int] = []
        if self.result_type is not None:
            body.append(self.result_type)
        if self.result_id is not None:
            body.append(self.result_id)
        for operand in self.operands:
            body.extend(encode_string(operand) if isinstance(operand, str) else (operand,))
        for word in body:
            if not 0 <= word <= WORD_MASK:
                raise ValueError(f"{self.opcode.name}: operand {word} does not fit one word")
        count = len(body) + 1
        if count > 0xFFFF:
            raise ValueError(f"{self.opcode.name}: {count} words is too long")
        return [(count << 16) | int(self.opcode), *body]


def encode_string(text: str) -> list[int]:
    """A literal string: UTF-8, nul-terminated, padded with nuls to whole little-endian words.

    >>> encode_string("main")
    [1852399981, 0]
    """
    data = text.encode("utf-8") + b"\0"
    data += b"\0" * (-len(data) % 4)
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def decode_string(words: Sequence[int]) -> str:
    """The literal string `words` start with (as `encode_string` makes it; invalid UTF-8
    replaced).

    >>> decode_string([1852399981, 0, 7])
    'main'
    """
    data = struct.pack(f"<{len(words)}I", *words)
    return data.split(b"\0", 1)[0].decode("utf-8", "replace")


def instructions(words: bytes) -> Iterator[tuple[int, tuple[int, ...]]]:
    """The instructions of a binary module (little-endian bytes), after its five-word header:
    each one's opcode and operand words. Stops at a word count of 0 (a malformed module)."""
    code = struct.unpack(f"<{len(words) // 4}I", words)
    at = 5
    while at < len(code):
        count, opcode = code[at] >> 16, code[at] & 0xFFFF
        if count == 0:
            return
        yield opcode, code[at + 1:at + count]
        at += count


def literal_words(value: int, bits: int) -> tuple[int, ...]:
    """The words of an integer literal of a `bits`-wide type, low-order word first.

    Narrower than 32 bits, the value sits in the low bits: sign-extended for a negative
    (signed) value, zero-filled otherwise, as the spec asks (§2.2.1 "Literal").
    """
    if bits <= 32:
        return (value & WORD_MASK,)
    value &= (1 << bits) - 1
    return tuple((value >> (32 * k)) & WORD_MASK for k in range(bits // 32))


def float_bits(value: float, bits: int) -> int:
    """The IEEE bit pattern of `value` rounded to a `bits`-wide float (16, 32 or 64).

    A finite value that rounds beyond the type's range is +-inf, as numpy's `np.float16(1e6)`.

    >>> hex(float_bits(-1e6, 16)), hex(float_bits(65504.0, 16)), hex(float_bits(1e39, 32))
    ('0xfc00', '0x7bff', '0x7f800000')
    """
    fmt = {16: "<e", 32: "<f", 64: "<d"}[bits]
    unsigned = {16: "<H", 32: "<I", 64: "<Q"}[bits]
    try:
        packed = struct.pack(fmt, value)
    except OverflowError:  # rounds to infinity
        packed = struct.pack(fmt, math.copysign(math.inf, value))
    return struct.unpack(unsigned, packed)[0]


def encode_module(header: Iterable[int], instructions: Iterable[Instruction]) -> bytes:
    """The binary module: the five header words, then every instruction, little-endian."""
    words = list(header)
    for inst in instructions:
        words.extend(inst.words())
    return struct.pack(f"<{len(words)}I", *words)
