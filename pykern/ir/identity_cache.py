"""What a backend or pass makes from an IR kernel, remembered per kernel *object*.

Kernels that are equal but for their source locations (compared with compare=False) must not
share what was made from them, since the locations end up in error messages; so entries are
keyed by the object's identity (and an optional extra key, such as a variant), and hold the
object itself, so that its id cannot be reused by another object while the entry lives. The
oldest entries go first once there are more than the caller's size.
"""

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class IdentityCache(Generic[V]):
    """A small LRU keyed by (id(obj), key); `on_evict(value)` runs for each entry dropped."""

    def __init__(self, on_evict: Callable[[V], None] | None = None) -> None:
        self._entries: OrderedDict[tuple[int, Hashable], tuple[Any, V]] = OrderedDict()
        self._on_evict = on_evict

    def get(self, obj: Any, key: Hashable = None) -> V | None:
        hit = self._entries.get((id(obj), key))
        if hit is None or hit[0] is not obj:
            return None
        self._entries.move_to_end((id(obj), key))
        return hit[1]

    def put(self, obj: Any, value: V, size: int, key: Hashable = None) -> V:
        """Remembers `value` for `obj` (and `key`), keeping at most `size` entries; returns
        `value`."""
        self._entries[(id(obj), key)] = (obj, value)
        while len(self._entries) > size:
            _, (_, old) = self._entries.popitem(last=False)
            if self._on_evict is not None:
                self._on_evict(old)
        return value
