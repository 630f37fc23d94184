"""The array API namespaces by standard version: `pykern.array_api` follows 2024.12 (the
default of `t.__array_namespace__()`); `namespace("2023.12")` is the same namespace without
what 2024.12 added, with its own `__array_api_version__` and inspection object, importable as
`pykern.array_api_2023_12` once pykern is imported.

    xp = t.__array_namespace__(api_version="2023.12")
    xp.__array_api_version__   # '2023.12'
"""

from __future__ import annotations

import sys
import types

from pykern.tensor.api import namespace as latest

LATEST = latest.__array_api_version__
# the versions `__array_namespace__(api_version=...)` accepts; the older ones get 2023.12's
# namespace, a superset of theirs
VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

# the functions 2024.12 added (the inspection API's "max dimensions" is in `Info`)
ADDED_IN_2024_12 = ("count_nonzero", "cumulative_prod", "diff", "nextafter", "reciprocal",
                    "take_along_axis")


def namespace(api_version: str | None = None) -> types.ModuleType:
    """The namespace of `api_version` (None: the newest, 2024.12); a ValueError naming the
    versions pykern has for any other."""
    if api_version is None or api_version == LATEST:
        return latest
    if api_version not in VERSIONS:
        raise ValueError(f"unsupported array API version {api_version!r}; pykern has "
                         f"{', '.join(VERSIONS[2:])} (and takes 2021.12 and 2022.12 as 2023.12)")
    return _NAMESPACE_2023_12


def _namespace_2023_12() -> types.ModuleType:
    module = types.ModuleType("pykern.array_api_2023_12", "The Python array API namespace of "
                              "pykern tensors at standard version 2023.12.")
    names = [n for n in latest.__all__ if n not in ADDED_IN_2024_12]
    for name in names + ["linalg", "fft"]:
        setattr(module, name, getattr(latest, name))
    module.__array_api_version__ = "2023.12"  # type: ignore[attr-defined]

    def __array_namespace_info__() -> latest.Info:  # noqa: N807
        """What the 2023.12 namespace supports (no "max dimensions" capability)."""
        return latest.Info("2023.12")

    module.__array_namespace_info__ = __array_namespace_info__  # type: ignore[attr-defined]
    module.__all__ = [n for n in names if n != "__array_namespace_info__"] + [  # type: ignore
        "__array_namespace_info__"]
    return module


_NAMESPACE_2023_12 = _namespace_2023_12()
sys.modules.setdefault("pykern.array_api_2023_12", _NAMESPACE_2023_12)
