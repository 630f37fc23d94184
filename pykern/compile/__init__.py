"""`pk.compile`: a function of tensors recorded once per argument signature and replayed on
later calls with one submit (see `pykern.compile.function`)."""

from pykern.compile.function import CompiledFunction, compile

__all__ = ["CompiledFunction", "compile"]
