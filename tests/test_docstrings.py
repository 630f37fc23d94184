"""Every public function of the pk namespace, the array API namespace, pk.linalg and pk.fft,
and every public method, property and operator of pk.Tensor has a docstring (`help(t.sum)`
says something)."""

from __future__ import annotations

import inspect
import types

import pykern as pk

OPERATORS = {"__add__", "__radd__", "__iadd__", "__matmul__", "__neg__", "__abs__", "__eq__",
             "__getitem__", "__setitem__", "__len__", "__bool__", "__array__",
             "__array_namespace__", "__dlpack__", "__array_function__", "__array_ufunc__"}


def _undocumented(owner: object, names: list[str]) -> list[str]:
    missing = []
    for name in names:
        value = inspect.getattr_static(owner, name) if isinstance(owner, type) else \
            getattr(owner, name)
        if isinstance(value, (types.ModuleType, pk.DType)) or not (
                callable(value) or isinstance(value, property)):
            continue
        if not (inspect.getdoc(value) or "").strip():
            missing.append(name)
    return missing


def test_every_public_tensor_method_and_property_has_a_docstring():
    names = [n for n in dir(pk.Tensor) if not n.startswith("_")] + sorted(OPERATORS)
    assert not _undocumented(pk.Tensor, names)
    assert "sum over" in inspect.getdoc(pk.asarray([1.0]).sum)


def test_every_public_function_of_the_namespaces_has_a_docstring():
    for namespace in (pk, pk.array_api, pk.linalg, pk.fft, pk.random):
        names = [n for n in dir(namespace) if not n.startswith("_")]
        assert not _undocumented(namespace, names), namespace.__name__
