"""The on-disk compile cache: SPIR-V words plus JSON metadata, never pickle.

The key covers everything the module depends on, read from what the frontend translates:

- the kernel's source text exactly as the frontend parses it (`KernelSource.text`, with its
  file and position), so a file edited while the process runs is compiled and keyed alike;
- the value of every dotted name that text contains (`FACTOR`, `cfg.BLOCK`, `pk.sqrt`),
  resolved as the frontend resolves it: closure, globals, builtins, then attributes. A
  `@pk.func` among them adds its own text and names, and so on down the calls;
- the variant (argument types, constexpr values, workgroup), the compiler version, a hash of
  pykern's own source (`compiler_fingerprint`) and the target (device features and limits).

An entry is `<key>.spv` (the module) and `<key>.json`: the format, how the kernel uses each
parameter (its access: the only thing the key does not determine) and a SHA-256 over the key,
the rest of the JSON and the words. Parameter names and types come from the variant, and the
binding layout is planned from them as lowering plans it, so the file holds nothing else to
trust. An entry is a miss, never an error, when a file is absent, refused (see
`pykern.runtime.files`: the directory and each file are checked where they are opened), of the
wrong shape, does not match its hash (a tampered value, or an entry renamed to another key), or
fails spirv-val (`PYKERN_CACHE_VALIDATE=1`); the compile that follows replaces it.

A warm hit reads the kernel's source once per kernel object (that is the key) and skips
translation, lowering and spirv-val.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
import struct
import types
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.passes.complex import lowered_param
from pykern.errors import CompileError
from pykern.frontend.source import KernelSource, is_missing
from pykern.runtime.files import PrivateDirectory
from pykern.runtime.layout import BindingLayout
from pykern.spirv.binding_plan import plan_layout
from pykern.spirv.loopcap import LoopSite, sites_in_module
from pykern.spirv.encoding.validate import SpirvValidationError
from pykern import runtime

FORMAT_VERSION = 3  # 3: the items per invocation (`ir.Kernel.items`)
META_LIMIT = 64 << 10  # bytes of a .json: a few dozen parameters take under 1 KiB
WORDS_LIMIT = 256 << 20
SPIRV_MAGIC = 0x07230203
# NONE, READ, WRITE, READ_WRITE, and either of the last three with TILES
_ACCESS = {a.value: a for a in (ir.Access(v) for v in range(2 * ir.Access.TILES.value))
           if a & ir.Access.READ_WRITE or not a & ir.Access.TILES}


# ---------------------------------------------------------------- keys


def _describe(value: object, seen: dict[int, str | None]) -> str:
    """A stable text for a value a kernel can see, for the cache key."""
    if isinstance(value, (bool, int, float, str, type(None))):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple):  # a captured shape: each element with its type
        return "tuple:(" + ",".join(_describe(v, seen) for v in value) + ")"
    if isinstance(value, dt.constexpr):  # what it holds may be a @pk.func
        return f"constexpr:{_describe(value.value, seen)}"
    if isinstance(value, (dt.DType, dt.ArrayType)):
        return repr(value)
    if getattr(value, "is_pykern_func", False):  # translated from its own source, as here
        try:
            src = value.source  # type: ignore[attr-defined]
        except CompileError:  # no source: a call of it fails to translate, so nothing is stored
            return f"func:no source:{getattr(value, '__qualname__', '')}"
        return f"func:{value.__qualname__}:{source_fingerprint(src, seen)}"
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if hasattr(value, "dtype") and getattr(value, "shape", None) == ():  # numpy scalar
        return f"{value.dtype}:{value.item()!r}"  # type: ignore[attr-defined]
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if name is not None:  # functions, classes, pykern builtins: identified by their name
        return f"named:{getattr(value, '__module__', '')}.{name}:{type(value).__qualname__}"
    return f"object:{type(value).__qualname__}"


_DOTTED: weakref.WeakKeyDictionary[ast.AST, tuple[tuple[str, ...], ...]] = \
    weakref.WeakKeyDictionary()


def dotted_names(tree: ast.AST) -> tuple[tuple[str, ...], ...]:
    """Every name and attribute chain on a name (`a`, `a.b`, `a.b.c`) in `tree`, sorted: what
    the frontend can resolve to a Python value. Kept per tree (a function's calls share it)."""
    names = _DOTTED.get(tree)
    if names is None:
        names = _DOTTED[tree] = tuple(sorted(_chains(tree)))
    return names


def _chains(tree: ast.AST) -> set[tuple[str, ...]]:
    # a plain stack over the fields: three times as fast as ast.walk, and this is on the warm
    # path of every kernel object
    found: set[tuple[str, ...]] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if type(node) is ast.Name:
            found.add((node.id,))  # type: ignore[attr-defined]
            continue
        if type(node) is ast.Attribute:
            chain, base = [], node
            while type(base) is ast.Attribute:
                chain.append(base.attr)  # type: ignore[attr-defined]
                base = base.value  # type: ignore[attr-defined]
            if type(base) is ast.Name:
                found.add((base.id, *reversed(chain)))  # type: ignore[attr-defined]
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                stack.append(value)
            elif type(value) is list:
                stack.extend(v for v in value if isinstance(v, ast.AST))
    return found


def _described(src: KernelSource, chain: tuple[str, ...], seen: dict[int, str | None]) -> str:
    """The value of a dotted name as the frontend resolves it, described for the key."""
    try:
        value = src.lookup(chain[0])
        for attr in chain[1:]:
            if is_missing(value):
                break
            value = getattr(value, attr)
        return "missing" if is_missing(value) else _describe(value, seen)
    except Exception as e:  # the frontend reports it; the key only needs to be stable
        return f"error:{type(e).__qualname__}"


def source_fingerprint(src: KernelSource, seen: dict[int, str | None] | None = None) -> str:
    """SHA-256 over the text the frontend translates, where it comes from, and the values of
    the names it reads. `seen` holds the fingerprints already made for this key (None while
    one is being made: a recursive call, which the frontend refuses)."""
    seen = {} if seen is None else seen
    if id(src) in seen:
        return seen[id(src)] or "recursive"
    seen[id(src)] = None
    h = hashlib.sha256()
    h.update(f"{src.file}\0{src.line_offset}\0{src.col_offset}\0{src.text}\0"
             .encode("utf-8", "surrogatepass"))
    for chain in dotted_names(src.tree):
        described = _described(src, chain, seen)
        h.update(f"{'.'.join(chain)}={described}\0".encode("utf-8", "surrogatepass"))
    seen[id(src)] = digest = h.hexdigest()
    return digest


def _canonical(value: object) -> str:
    """repr with sets sorted, so the text does not depend on hash randomisation; a `@pk.func`
    (a constexpr argument) by its name and source, so two functions never share a key."""
    if getattr(value, "is_pykern_func", False) is True:
        return _describe(value, {})
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


@functools.lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    """A SHA-256 over the source of pykern itself (the compiler, the op library and the
    runtime's layout code), read once per process (a few milliseconds): a module compiled by
    another pykern — upgraded, or edited in a development checkout without a version bump — is
    never loaded."""

    package = Path(__file__).parent.parent  # pykern/, of which this is pykern/jit/cache.py
    return source_digest((package, Path(runtime.__file__).parent))


def source_digest(packages: Sequence[Path]) -> str:
    """A SHA-256 over the names and contents of every .py file under `packages`."""
    h = hashlib.sha256()
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            h.update(f"{path.relative_to(package)}\0{path.stat().st_size}\0".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def cache_key(src: KernelSource, variant: tuple, target: object, compiler_version: str) -> str:
    """The key of the module that translating `src` for `variant` and lowering it for `target`
    gives."""
    parts = [f"format={FORMAT_VERSION}", f"pykern={compiler_version}",
             f"compiler={compiler_fingerprint()}",
             source_fingerprint(src), _canonical(variant), _target_text(target)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# ---------------------------------------------------------------- entries


def entry_digest(key: str, meta: dict, words: bytes) -> str:
    """The SHA-256 an entry's JSON holds: over the key, every other member of the JSON (in a
    canonical form) and the words."""
    rest = json.dumps({k: v for k, v in meta.items() if k != "sha256"}, sort_keys=True,
                      separators=(",", ":"))
    h = hashlib.sha256(b"pykern compile cache\0")
    for part in (key.encode(), rest.encode(), words):
        h.update(struct.pack("<Q", len(part)))
        h.update(part)
    return h.hexdigest()


def planned_layout(params: tuple[ir.Param, ...], workgroup: tuple[int, int, int],
                   max_push_size: int, loop_sites: Sequence[LoopSite]) -> BindingLayout:
    """The binding layout lowering gives a (non-debug) kernel with these parameters and
    workgroup, whose module names `loop_sites` in its words (`sites_in_module`): it depends on
    nothing else (a module whose loops report being cut short has the slot of their status
    buffer), so entries do not store it."""
    # as the backend sees them: complex parameters as their parts (pykern.passes.complex)
    lowered = tuple(q for p in params for q in lowered_param(p))
    stub = ir.Kernel(name="cached", params=lowered, locals=(), body=(), workgroup=workgroup)
    return plan_layout(stub, max_push_size, loop_status=bool(loop_sites))


def _params_from(doc: object, signature: Sequence[tuple[str, object]]) -> tuple | None:
    """The parameters a well-formed JSON document gives `signature` (the variant's names and
    types, in order), or None for a document of any other shape."""
    if type(doc) is not dict or doc.keys() != {"format", "access", "sha256", "items"} \
            or type(doc["items"]) is not int or not 1 <= doc["items"] <= 64:
        return None
    access = doc["access"]
    if type(doc["format"]) is not int or doc["format"] != FORMAT_VERSION \
            or type(doc["sha256"]) is not str or type(access) is not list \
            or len(access) != len(signature):
        return None
    params = []
    for (name, t), a in zip(signature, access):
        if type(a) is not int or a not in _ACCESS:
            return None
        if not isinstance(t, dt.ArrayType) and a != ir.Access.NONE.value:
            return None  # only arrays have an access
        params.append(ir.Param(name=name, type=t, access=_ACCESS[a]))  # type: ignore[arg-type]
    return tuple(params)


def _is_spirv(words: bytes) -> bool:
    return len(words) >= 20 and len(words) % 4 == 0 and \
        struct.unpack_from("<I", words)[0] == SPIRV_MAGIC


@dataclass(frozen=True)
class CacheEntry:
    words: bytes
    params: tuple[ir.Param, ...]
    layout: BindingLayout
    loop_sites: tuple[LoopSite, ...]  # what `sites_in_module` finds in the words
    items: int = 1  # logical invocations per invocation (`ir.Kernel.items`)


# ---------------------------------------------------------------- the directory


class DiskCache:
    """Compiled modules on disk. Every failure to read or write is a miss, never an error."""

    def __init__(self, directory: Path, validate: Callable[[bytes], None] | None = None):
        self.directory = Path(directory)
        self._files = PrivateDirectory(self.directory, "the compile cache is")
        self._validate = validate

    @property
    def enabled(self) -> bool:
        """False once the directory was refused (at start-up or at any later use)."""
        return self._files.usable

    def load(self, key: str, signature: Sequence[tuple[str, object]],
             workgroup: tuple[int, int, int], max_push_size: int) -> CacheEntry | None:
        """The entry stored under `key` for a variant whose parameters are `signature` (names
        and types, in order) and whose workgroup is `workgroup`, or None. The layout is planned
        for a device taking `max_push_size` bytes of push constants."""
        raw = self._files.read(f"{key}.json", META_LIMIT)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deep
            return None
        params = _params_from(doc, signature)
        if params is None:
            return None
        words = self._files.read(f"{key}.spv", WORDS_LIMIT)
        if words is None or not _is_spirv(words) or doc["sha256"] != entry_digest(key, doc, words):
            return None
        if self._validate is not None:
            try:
                self._validate(words)
            except SpirvValidationError as e:
                first = str(e).splitlines()[1:2] or [""]
                warnings.warn(f"pykern: a cached module failed spirv-val, compiling it again: "
                              f"{first[0]}", stacklevel=3)
                return None
        try:
            loop_sites = sites_in_module(words)
            items = doc["items"]  # a workgroup then covers `items` times its width (span)
            span = (workgroup[0] * items, workgroup[1], workgroup[2])
            layout = planned_layout(params, span, max_push_size, loop_sites)
        except (ValueError, KeyError, TypeError, struct.error):  # loop sites of another shape
            return None
        return CacheEntry(words, params, layout, loop_sites, items)

    def store(self, key: str, words: bytes, params: tuple[ir.Param, ...],
              layout: BindingLayout, max_push_size: int, items: int = 1) -> None:
        """Stores a module (that runs `items` logical invocations per invocation), unless its
        layout is not the one a load would plan (then a load could not give it back as it
        is)."""
        if not self.enabled or \
                layout != planned_layout(params, layout.workgroup, max_push_size,
                                         sites_in_module(words)):
            return
        meta: dict[str, object] = {"format": FORMAT_VERSION,
                                   "access": [p.access.value for p in params], "items": items}
        meta["sha256"] = entry_digest(key, meta, bytes(words))
        # the words first: a .json is only ever next to a complete .spv
        if self._files.write(f"{key}.spv", bytes(words)):
            self._files.write(f"{key}.json", json.dumps(meta).encode())
