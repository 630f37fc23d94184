"""The host backend's on-disk compile cache: object code plus JSON, never pickle, in the
directory of the SPIR-V cache (PYKERN_CACHE_DIR; PYKERN_CACHE=0 turns both off).

Keyed as the SPIR-V cache keys a module (`pykern.jit.cache.cache_key`: the kernel's source and
the values of the names it reads, the variant, pykern's version and source), with the host's
LLVM version, triple, CPU and features as the target (`engine.host_target`). An entry is
`<key>.o` (the object code) and `<key>.host.json`: the format, each parameter's access (the one
thing the key does not determine), whether the kernel has loops (how launches spread over the
threads), whether its entry bails out of workgroups whose proof fails (then a launch that
meets one compiles the checked copy from the kernel's IR: `HostKernel.checked_entry`), the
optimised IR (for `HostKernel.llvm_ir`) and a SHA-256
over the key, the rest of the JSON and the object code. Parameter names and types come from
the variant. An entry is a miss, never an error, when a file is absent, refused (checked as
the SPIR-V cache checks its files: `pykern.runtime.files`), of the wrong shape, does not match
its hash, or does not link; the compile that follows replaces it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path

from pykern import __version__, ir
from pykern.config import config
from pykern.jit.cache import cache_key, entry_digest
from pykern.lang.dtypes import ArrayType
from pykern.llvm.compiled import HostKernel
from pykern.llvm.engine import host_target
from pykern.runtime.files import PrivateDirectory

FORMAT_VERSION = 3  # 3: buffer lengths and the stop word in the argument block
META_LIMIT = 16 << 20  # the optimised IR of a large kernel is a few hundred KiB
OBJECT_LIMIT = 256 << 20
_ACCESS = {v: ir.Access(v) for v in range(2 * ir.Access.TILES.value)}


@functools.lru_cache(maxsize=1)
def host_disk_cache() -> HostDiskCache | None:
    """The process's host cache, or None when PYKERN_CACHE=0 or the directory is refused (the
    configuration read once)."""
    cfg = config()
    if not cfg.cache_enabled:
        return None
    cache = HostDiskCache(cfg.cache_dir)
    return cache if cache.enabled else None


class HostDiskCache:
    """Host-compiled kernels on disk. Every failure to read, write or link is a miss."""

    def __init__(self, directory: Path):
        self._files = PrivateDirectory(Path(directory), "the compile cache is")

    @property
    def enabled(self) -> bool:
        """False once the directory was refused (at start-up or at any later use)."""
        return self._files.usable

    @staticmethod
    def key(kernel: object, variant: tuple) -> str:
        """The key of the object code `kernel` (a `@pk.kernel`) compiles to for `variant`."""
        return cache_key(kernel.source, ("host", variant, kernel.debug),  # type: ignore[attr-defined]
                         host_target(), __version__)

    def load(self, key: str, name: str, signature: tuple[tuple[str, object], ...],
             workgroup: tuple[int, int, int],
             source: Callable[[], ir.Kernel]) -> HostKernel | None:
        """The kernel stored under `key` for a variant whose parameters are `signature` (names
        and types, in order), or None; `source()` gives its typed IR, should a launch need
        the copy of its body that checks every access (`HostKernel.checked_entry`)."""
        raw = self._files.read(f"{key}.host.json", META_LIMIT)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        params = _params_from(doc, signature)
        if params is None:
            return None
        obj = self._files.read(f"{key}.o", OBJECT_LIMIT)
        if obj is None or doc["sha256"] != entry_digest(key, doc, obj):
            return None
        try:
            return HostKernel.from_object(name, params, workgroup, obj, doc["ir"], doc["loops"],
                                          doc["bails"], source)
        except RuntimeError:  # hashed as written but not linkable here
            return None

    def store(self, key: str, host: HostKernel) -> None:
        """Stores a freshly compiled kernel (the object code first: a .json is only ever next
        to a complete .o)."""
        if not self.enabled:
            return
        meta: dict[str, object] = {
            "format": FORMAT_VERSION, "ir": host.llvm_ir, "loops": host.loops,
            "bails": host.bails, "access": [p.access.value for p in host.source_kernel.params]}
        meta["sha256"] = entry_digest(key, meta, host.object_code)
        if self._files.write(f"{key}.o", host.object_code):
            self._files.write(f"{key}.host.json", json.dumps(meta).encode())


def _params_from(doc: object, signature: tuple[tuple[str, object], ...]) -> tuple | None:
    """The parameters a well-formed document gives `signature`, or None for any other shape."""
    if type(doc) is not dict or \
            doc.keys() != {"format", "ir", "loops", "bails", "access", "sha256"} \
            or type(doc["loops"]) is not bool or type(doc["bails"]) is not bool:
        return None
    access = doc["access"]
    if type(doc["format"]) is not int or doc["format"] != FORMAT_VERSION \
            or type(doc["ir"]) is not str or type(doc["sha256"]) is not str \
            or type(access) is not list or len(access) != len(signature):
        return None
    params = []
    for (name, t), a in zip(signature, access, strict=True):
        if type(a) is not int or a not in _ACCESS or \
                (not isinstance(t, ArrayType) and a != ir.Access.NONE.value):
            return None
        params.append(ir.Param(name=name, type=t, access=_ACCESS[a]))  # type: ignore[arg-type]
    return tuple(params)
