"""The registry of ops (pykern.ops) against what the library derives from it: the names `pk`
and the array API namespace export, the kernel names that run ops on tensors, the op table of
docs/tensor.md, and the declarations themselves (one op per name, ATen names unique, a public
function for every exported op, a backward for every op that says it has one)."""

import ast
from pathlib import Path

import pytest

import pykern as pk
from pykern import ops
from pykern.ops import doc_table
from pykern.ops.registry import AUTOCAST, GRAD_RULES, KINDS
from pykern.tensor.api.kernel_names import tensor_functions

ROOT = Path(__file__).resolve().parents[2]
DECLARED = list(ops.all_ops())


def test_every_exported_op_has_its_public_function():
    missing = [op.name for op in DECLARED if op.exports and op.function is None]
    assert not missing, missing


@pytest.mark.parametrize("op", DECLARED, ids=[op.name for op in DECLARED])
def test_a_declaration_is_complete(op):
    assert op.kind in KINDS and op.grad in GRAD_RULES and op.autocast in AUTOCAST
    assert op.doc and not op.doc.startswith(" "), f"{op.name} has no doc line"
    if op.grad in ("formula", "rule"):
        assert op.backward is not None, f"{op.name} says grad={op.grad} but has no backward"


def test_the_aten_names_are_unique():
    seen: dict[str, str] = {}
    for op in DECLARED:
        for name in op.aliases.aten:
            assert seen.setdefault(name, op.name) == op.name, (name, seen[name], op.name)
            assert name.startswith("aten::"), name


def test_pk_exports_what_the_registry_says():
    for name, function in ops.exported("pk").items():
        got = getattr(pk, name)
        assert got is function or getattr(got, "__wrapped__", None) is function, name


def test_type_checkers_see_the_same_names():
    """pykern/__init__.py exports the ops from the registry at run time and names them under
    `if TYPE_CHECKING:` for type checkers: the two lists agree."""
    tree = ast.parse((ROOT / "pykern" / "__init__.py").read_text())
    checked = next(node for node in ast.walk(tree) if isinstance(node, ast.If)
                   and ast.unparse(node.test) == "TYPE_CHECKING")
    static = {alias.asname or alias.name for node in checked.body
              for alias in node.names}  # type: ignore[attr-defined]
    functions = {name for name, fn in ops.exported("pk").items()
                 if not isinstance(fn, type(pk.exp))}  # builtins are imported as themselves
    assert static == functions, (sorted(static - functions), sorted(functions - static))


def test_the_array_api_namespace_exports_the_registry():
    xp = pk.array_api
    for name, function in ops.exported("array_api").items():
        got = getattr(xp, name)
        own = getattr(got, "__wrapped__", got).__module__ == "pykern.tensor.api.namespace"
        assert own or got is function or getattr(got, "__wrapped__", None) is function, name


def test_the_kernel_names_are_the_ops_with_builtins():
    served = {builtin.name: fn for builtin, fn in tensor_functions()}
    for op in DECLARED:
        if op.builtin is not None:
            assert served[op.builtin.name] is op.function


def test_aliases_find_their_op():
    assert ops.by_alias("aten", "aten::add.Tensor") is ops.get("add")
    assert ops.by_alias("numpy", "arctan2") is ops.get("atan2")
    assert ops.by_alias("array_api", "cumulative_sum") is ops.get("cumsum")
    with pytest.raises(KeyError, match="no op 'no_such_op'"):
        ops.get("no_such_op")


def test_the_docs_op_table_is_current():
    text = doc_table.DOC.read_text()
    assert doc_table.rewritten(text) == text, \
        "docs/tensor.md's op table is stale: run `python -m pykern.ops.doc_table`"
