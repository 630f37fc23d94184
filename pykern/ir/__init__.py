"""The typed IR that every stage shares: `nodes` (frozen dataclasses, each with a type and a
source location), `format` (readable text of a kernel, for reports and tests) and `verify` (the
checker of the IR's contract, run after translation and after every pass). The frontend
produces it; passes rewrite it; the backends (`pykern.spirv`, `pykern.interpret`) consume it.
The node classes are importable from here: `from pykern import ir; ir.BinOp`.
"""

from pykern.ir.nodes import *  # noqa: F401,F403
