"""The op registry (`registry`): every op of the library declared once, with its names,
type rule, implementations and where each applies, backward, autocast policy, doc line and
sample inputs; what the library derives from it (`exports`), the public function that records
an op's backward (`public`), the op table of docs/tensor.md (`doc_table`), and the sample
inputs of the test matrix (`samples`).

The declarations sit with the code they declare: the elementwise ops in the tables of
`pykern.tensor.elementwise.unary_ops` and `binary_ops`, every other op beside its forward
function (`pykern.tensor.reduce.scan` declares `cumsum`, ...). `pykern.ops.get("cumsum")` is
the entry to start from.
"""

from pykern.ops.registry import (Aliases, Impl, Op, all_ops, always, bind, by_alias, exported,
                                 get, register)

__all__ = ["Aliases", "Impl", "Op", "all_ops", "always", "bind", "by_alias", "exported", "get",
           "register"]
