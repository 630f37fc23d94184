"""`RawFeatures`: a Vulkan feature struct that the `vulkan` package (1.3.275) does not declare,
laid out by hand in cffi memory.

Newer extensions' feature structs (VK_KHR_shader_bfloat16's, for one) are all the same shape:
`VkStructureType sType; void* pNext;` followed by `VkBool32` members. The binding's compiled
ffi cannot learn new declarations, so such a struct is a zeroed, 8-byte-aligned block whose
header is read and written through `VkBaseOutStructure` and whose members are VkBool32s after
it, in declaration order.
"""

from __future__ import annotations

from ._vk import ffi

HEADER = "VkBaseOutStructure"  # sType, then pNext: the first two members of every such struct
BOOL_SIZE = 4  # sizeof(VkBool32)


class RawFeatures:
    """A feature struct of `members` (its VkBool32 members, in declaration order) and `stype`.

    Reads and writes members by name (`s.shaderBFloat16Type = True`, `s.pNext = other`) like a
    cffi struct; `pointer` is what another struct's pNext should point to. The memory lives as
    long as this object.
    """

    def __init__(self, stype: int, members: tuple[str, ...], **values: bool) -> None:
        object.__setattr__(self, "_members", members)
        header_size = ffi.sizeof(HEADER)  # 16 on 64-bit: pNext is 8-aligned
        words = -(-(header_size + BOOL_SIZE * len(members)) // 8)  # the struct's 8-alignment
        memory = ffi.new("uint64_t[]", words)  # zeroed
        object.__setattr__(self, "_memory", memory)
        object.__setattr__(self, "_header", ffi.cast(HEADER + "*", memory))
        object.__setattr__(
            self, "_bools", ffi.cast("VkBool32*", ffi.cast("char*", memory) + header_size))
        self._header.sType = stype
        for name, value in values.items():
            setattr(self, name, value)

    @property
    def pointer(self) -> object:
        """The struct's address, as a `void*` for another struct's pNext."""
        return ffi.cast("void*", self._memory)

    @property
    def size(self) -> int:
        """The struct's size in bytes (a multiple of its 8-byte alignment)."""
        return ffi.sizeof(self._memory)

    def __getattr__(self, name: str) -> object:
        if name == "sType":
            return self._header.sType
        if name == "pNext":
            return ffi.cast("void*", self._header.pNext)
        return bool(self._bools[self._index(name)])

    def __setattr__(self, name: str, value: object) -> None:
        if name == "pNext":
            # any struct pointer (or a RawFeatures' pointer) becomes the header's pointer type
            self._header.pNext = ffi.cast(HEADER + "*", value)
        else:
            self._bools[self._index(name)] = 1 if value else 0

    def _index(self, name: str) -> int:
        try:
            return self._members.index(name)
        except ValueError:
            raise AttributeError(f"the feature struct has no member {name!r}") from None
