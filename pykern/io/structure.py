"""The object around the tensors of a saved file, as JSON.

`flatten` turns what `pk.save` is given into a JSON description plus the tensors (and numpy
arrays) it holds, each under a flattened name such as "layers.0.weight"; `rebuild` turns the
description and the loaded tensors back into the object. A description node is one of

    {"tensor": name}          a tensor, stored under `name` in the file
    {"dict": [[key, node], ...]}   keys str or int, in order
    {"list": [node, ...]}     {"tuple": [node, ...]}
    {"value": v}              None, a bool, an int, a str or a finite float
    {"float": "inf" | "-inf" | "nan"}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from pykern.io.safetensors_format import METADATA_KEY
from pykern.tensor.core.tensor import Tensor

Leaf = Union[Tensor, np.ndarray]
CONTAINERS = {"dict": dict, "list": list, "tuple": tuple}
NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


@dataclass
class Flattened:
    """The description of an object and its tensors by name, in the order first met."""

    structure: object = None
    leaves: dict[str, Leaf] = field(default_factory=dict)
    # a tensor met twice (tied weights) is stored once and loads as one tensor
    names_by_id: dict[int, str] = field(default_factory=dict)


def flatten(obj: object) -> Flattened:
    """The description of `obj` and its tensors; TypeError naming the place (as
    "obj['opt']['fn']") of anything that cannot be saved."""
    out = Flattened()
    out.structure = _describe(obj, [], "obj", out, set())
    return out


def _describe(obj: object, keys: list[str], where: str, out: Flattened,
              open_containers: set[int]) -> object:
    if isinstance(obj, (Tensor, np.ndarray)):
        return {"tensor": _leaf_name(obj, keys, out)}
    if obj is None or isinstance(obj, (bool, int, str)):
        return {"value": obj}
    if isinstance(obj, float):
        return {"value": obj} if math.isfinite(obj) else {"float": repr(obj)}
    if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
        return _describe(obj.item(), keys, where, out, open_containers)
    if isinstance(obj, (dict, list, tuple)):
        if id(obj) in open_containers:
            raise TypeError(f"cannot save {where}: it contains itself")
        open_containers.add(id(obj))
        node = _describe_container(obj, keys, where, out, open_containers)
        open_containers.discard(id(obj))
        return node
    raise TypeError(f"cannot save {where}, a {type(obj).__name__}: pk.save stores tensors, "
                    "numpy arrays, dicts, lists, tuples, None, bools, ints, floats and strings")


def _describe_container(obj: dict | list | tuple, keys: list[str], where: str, out: Flattened,
                        open_containers: set[int]) -> object:
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise TypeError(f"cannot save {where}: its key {key!r} is a "
                                f"{type(key).__name__}; dict keys must be str or int")
            node = _describe(value, keys + [str(key)], f"{where}[{key!r}]", out,
                             open_containers)
            items.append([key, node])
        return {"dict": items}
    nodes = [_describe(v, keys + [str(i)], f"{where}[{i}]", out, open_containers)
             for i, v in enumerate(obj)]
    return {"tuple" if isinstance(obj, tuple) else "list": nodes}


def _leaf_name(leaf: Leaf, keys: list[str], out: Flattened) -> str:
    """The dotted path of `leaf` ("tensor" at the top), made unique: keys holding dots can
    spell another entry's path, and "__metadata__" is the header's own."""
    if id(leaf) in out.names_by_id:
        return out.names_by_id[id(leaf)]
    base = ".".join(keys) if keys else "tensor"
    name, n = base, 0
    while name in out.leaves or name == METADATA_KEY:
        n += 1
        name = f"{base}.{n}"
    out.leaves[name] = leaf
    out.names_by_id[id(leaf)] = name
    return name


def rebuild(node: object, tensors: dict[str, Any], where: str) -> object:
    """The object `node` describes, with the loaded `tensors`; ValueError, naming the file
    (`where`) and the place, for a malformed description, and naming the tensors for header
    entries it does not refer to: `pk.save` writes exactly the tensors of the object, so an
    entry left over means that the file and its structure do not match (another tool added or
    renamed a tensor), and loading would drop its data unseen."""
    used: set[str] = set()
    obj = _rebuild(node, tensors, where, "obj", used)
    extra = [name for name in tensors if name not in used]
    if extra:
        shown = ", ".join(repr(name) for name in extra[:10])
        more = f" and {len(extra) - 10} more" if len(extra) > 10 else ""
        raise ValueError(f"{where}: the header has {len(extra)} tensor(s) that the saved "
                         f"structure does not refer to: {shown}{more}; the file does not "
                         "match its structure (was it changed by another tool?)")
    return obj


def _rebuild(node: object, tensors: dict[str, Any], where: str, place: str,
             used: set[str]) -> object:
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"{where}: the saved structure is malformed at {place}: {node!r:.80}")
    ((kind, body),) = node.items()
    if kind == "tensor" and isinstance(body, str):
        if body not in tensors:
            raise ValueError(f"{where}: {place} refers to tensor {body!r}, which the header "
                             "does not have")
        used.add(body)
        return tensors[body]
    if kind == "value" and (body is None or isinstance(body, (bool, int, float, str))):
        return body
    if kind == "float" and isinstance(body, str) and body in NON_FINITE:
        return NON_FINITE[body]
    if kind == "dict" and isinstance(body, list) and all(_is_pair(p) for p in body):
        return {k: _rebuild(v, tensors, where, f"{place}[{k!r}]", used) for k, v in body}
    if kind in ("list", "tuple") and isinstance(body, list):
        items = [_rebuild(v, tensors, where, f"{place}[{i}]", used)
                 for i, v in enumerate(body)]
        return CONTAINERS[kind](items)
    raise ValueError(f"{where}: the saved structure is malformed at {place}: {node!r:.80}")


def _is_pair(item: object) -> bool:
    return isinstance(item, list) and len(item) == 2 and isinstance(item[0], (str, int)) \
        and not isinstance(item[0], bool)
