"""The on-disk compile cache: SPIR-V words plus JSON metadata, never pickle.

An entry is `<key>.spv` (the module) and `<key>.json` (binding layout, parameters, a SHA-256 of
the words). The key covers everything the module depends on: the kernel's code object (its
bytecode, constants, names and line numbers — so comments do not matter, but edits do), the
values of the globals and closure variables it names, the argument types and constexpr values
of the variant, the workgroup, the compiler version and the target (device features and
limits). A warm hit skips parsing and lowering entirely.

The directory is created with mode 0700 and refused (the cache is then off, with a warning) if
another user owns it or others can write to it. Files are written to a temporary name and
renamed into place, so a reader never sees half an entry. A loaded entry's words are checked
against the stored hash; `PYKERN_CACHE_VALIDATE=1` also re-runs spirv-val on them.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import marshal
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import dtypes as dt
from . import ir
from .runtime.files import private_directory, write_atomic
from .runtime.layout import BindingLayout, BufferSlot, Field

FORMAT_VERSION = 1


# ---------------------------------------------------------------- keys


def _describe(value: object, seen: set[int], names: tuple[str, ...] = ()) -> str:
    """A stable text for a value a kernel can see, for the cache key. `names` are the
    attribute names the kernel's code uses: for a module, their values count too
    (`cfg.BLOCK` must change the key when `cfg.BLOCK` changes)."""
    if isinstance(value, (bool, int, float, str, type(None))):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (dt.DType, dt.ArrayType, dt.constexpr)):
        return repr(value)
    if isinstance(value, types.ModuleType):
        attrs = ",".join(f"{n}={_describe(getattr(value, n), seen)}" for n in names
                         if _is_plain_constant(getattr(value, n, None)))
        return f"module:{value.__name__}[{attrs}]"
    fn = getattr(value, "__wrapped__", None)
    if isinstance(fn, types.FunctionType):  # a kernel or device function it may call
        return f"function:{function_fingerprint(fn, seen)}"
    if hasattr(value, "dtype") and getattr(value, "shape", None) == ():  # numpy scalar
        return f"{value.dtype}:{value.item()!r}"  # type: ignore[attr-defined]
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if name is not None:  # functions, classes, pykern builtins: identified by their name
        return f"named:{getattr(value, '__module__', '')}.{name}:{type(value).__qualname__}"
    return f"object:{type(value).__qualname__}"


def _is_plain_constant(value: object) -> bool:
    return isinstance(value, (bool, int, float, str, dt.constexpr))


def function_fingerprint(fn: Callable, seen: set[int] | None = None) -> str:
    """SHA-256 over `fn`'s code and the values of the non-local names it reads."""
    seen = set() if seen is None else seen
    code = fn.__code__  # type: ignore[attr-defined]
    if id(code) in seen:
        return "recursive"
    seen.add(id(code))
    h = hashlib.sha256(marshal.dumps(code))
    glob = fn.__globals__  # type: ignore[attr-defined]
    for name in code.co_names:
        if name in glob:
            h.update(f"|{name}={_describe(glob[name], seen, code.co_names)}".encode())
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):  # type: ignore[attr-defined]
        try:
            value = cell.cell_contents
            h.update(f"|{name}~{_describe(value, seen, code.co_names)}".encode())
        except ValueError:  # an empty cell
            h.update(f"|{name}~empty".encode())
    return h.hexdigest()


def _canonical(value: object) -> str:
    """repr with sets sorted, so the text does not depend on hash randomisation."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_canonical(v) for v in value)) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (f"{f.name}={_canonical(getattr(value, f.name))}"
                  for f in dataclasses.fields(value))
        return f"{type(value).__name__}({', '.join(fields)})"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_canonical(v) for v in value) + ")"
    return repr(value)


@functools.lru_cache(maxsize=16)
def _target_text(target: object) -> str:
    return _canonical(target)  # a device's target is the same object for every kernel


def cache_key(fn: Callable, variant: tuple, target: object, compiler_version: str) -> str:
    parts = [f"format={FORMAT_VERSION}", f"pykern={compiler_version}",
             function_fingerprint(fn), _canonical(variant), _target_text(target)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# ---------------------------------------------------------------- (de)serialising


def _type_to_json(t: dt.DType | dt.ArrayType) -> object:
    return [t.dtype.name, t.ndim] if isinstance(t, dt.ArrayType) else t.name


def _type_from_json(v: object) -> dt.DType | dt.ArrayType:
    if isinstance(v, list):
        return dt.ArrayType(dt.BY_NAME[v[0]], int(v[1]))
    return dt.BY_NAME[v]  # type: ignore[index]


def layout_to_json(layout: BindingLayout) -> dict:
    return {
        "buffers": [[b.binding, b.name, b.readable, b.writable] for b in layout.buffers],
        "fields": [[f.name, f.fmt, f.offset] for f in layout.fields],
        "workgroup": list(layout.workgroup),
        "block": layout.block,
        "uniform_binding": layout.uniform_binding,
        "grid_fields": layout.grid_fields,
        "base_fields": layout.base_fields,
    }


def layout_from_json(d: dict) -> BindingLayout:
    return BindingLayout(
        buffers=tuple(BufferSlot(int(b), str(n), bool(r), bool(w)) for b, n, r, w in d["buffers"]),
        fields=tuple(Field(str(n), str(f), int(o)) for n, f, o in d["fields"]),
        workgroup=tuple(int(w) for w in d["workgroup"]),  # type: ignore[arg-type]
        block=str(d["block"]),
        uniform_binding=int(d["uniform_binding"]),
        grid_fields=tuple(d["grid_fields"]) if d["grid_fields"] else None,  # type: ignore[arg-type]
        base_fields=tuple(d["base_fields"]) if d["base_fields"] else None,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class CacheEntry:
    words: bytes
    layout: BindingLayout
    params: tuple[ir.Param, ...]


# ---------------------------------------------------------------- the directory


class DiskCache:
    """Compiled modules on disk. Every failure to read or write is a miss, never an error."""

    def __init__(self, directory: Path, validate: Callable[[bytes], None] | None = None):
        self.directory = Path(directory)
        self.enabled = private_directory(self.directory, "the compile cache is")
        self._validate = validate

    def load(self, key: str) -> CacheEntry | None:
        if not self.enabled:
            return None
        try:
            meta = json.loads((self.directory / f"{key}.json").read_text())
            words = (self.directory / f"{key}.spv").read_bytes()
            if meta.get("format") != FORMAT_VERSION:
                return None
            if hashlib.sha256(words).hexdigest() != meta["sha256"]:
                return None
            if self._validate is not None:
                self._validate(words)
            params = tuple(
                ir.Param(name=p["name"], type=_type_from_json(p["type"]),
                         access=ir.Access(p["access"]))
                for p in meta["params"])
            return CacheEntry(words, layout_from_json(meta["layout"]), params)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def store(self, key: str, words: bytes, layout: BindingLayout,
              params: tuple[ir.Param, ...]) -> None:
        if not self.enabled:
            return
        meta = {
            "format": FORMAT_VERSION,
            "sha256": hashlib.sha256(words).hexdigest(),
            "layout": layout_to_json(layout),
            "params": [{"name": p.name, "type": _type_to_json(p.type), "access": p.access.value}
                       for p in params],
        }
        try:
            # the words first: a .json is only ever next to a complete .spv
            write_atomic(self.directory / f"{key}.spv", bytes(words))
            write_atomic(self.directory / f"{key}.json", json.dumps(meta).encode())
        except OSError as e:
            warnings.warn(f"pykern: could not write the compile cache: {e}", stacklevel=3)
