"""`pk.nn.Sequential` and `pk.nn.ModuleList`: modules held under the names "0", "1", ... (a
Sequential's slice keeps the names it had, as PyTorch's); `pk.nn.ModuleDict`: modules held
under names of the user's choice."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pykern.nn.module import Module


class _Indexed(Module):
    """Children named by position; indexing by int (negative too) and slice."""

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module: Module) -> _Indexed:
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> _Indexed:
        for m in modules:
            self.append(m)
        return self

    def _position(self, index: int) -> str:
        n = len(self._modules)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {type(self).__name__} of "
                             f"length {n}")
        return list(self._modules)[index % n]

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self._slice(index)
        return self._modules[self._position(index)]

    def _slice(self, index: slice) -> _Indexed:
        """A container of the same kind over the slice, renumbered from "0" (PyTorch's
        ModuleList)."""
        part = type(self).__new__(type(self))
        _Indexed.__init__(part, list(self._modules.values())[index])
        return part

    def __setitem__(self, index: int, module: Module) -> None:
        self.add_module(self._position(index), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class Sequential(_Indexed):
    """Runs its modules one after the other: `Sequential(Linear(4, 8), ReLU())`, or from an
    OrderedDict of names to modules (those names are then the state_dict prefixes)."""

    def __init__(self, *modules: Module | OrderedDict[str, Module]) -> None:
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            super().__init__()
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            super().__init__(modules)  # type: ignore[arg-type]

    def _slice(self, index: slice) -> Sequential:
        """A Sequential over the slice whose modules keep their names, as PyTorch's: the
        state_dict keys of `model[1:]` are the model's ("1.weight"), so weights saved from one
        load into the other. Int indexing, len and iteration are by position, whatever the
        names."""
        return type(self)(OrderedDict(list(self._modules.items())[index]))

    def forward(self, input: Any) -> Any:  # noqa: A002
        for m in self:
            input = m(input)
        return input


class ModuleList(_Indexed):
    """A list of modules whose parameters the owner registers; it has no forward."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__(modules or ())


class ModuleDict(Module):
    """Modules held by name, in insertion order, as PyTorch's: `d["encoder"]`, `d[name] = m`,
    `del d[name]`, `in`, `len`, iteration over the names, `keys()`, `values()`, `items()`,
    `update()`, `pop()` and `clear()`. The names are the state_dict prefixes; it has no
    forward."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
                 ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Adds (or replaces) the modules of a mapping or of (name, module) pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for item in pairs:
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise TypeError(f"ModuleDict.update: expected (name, module) pairs, got "
                                f"{item!r}")
            self[item[0]] = item[1]

    def pop(self, key: str) -> Module:
        """Removes the module `key` and returns it."""
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        self._modules.clear()
