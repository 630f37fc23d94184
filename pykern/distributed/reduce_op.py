"""`ReduceOp`: how `all_reduce` and `reduce_scatter` combine the ranks' values, and the MPI
operation each one is for a dtype."""

from __future__ import annotations

import enum
from typing import Any

from pykern.lang.dtypes import DType


class ReduceOp(enum.Enum):
    """torch.distributed's names. AVG is SUM divided by the world size (float and complex
    tensors only). On bool tensors SUM and MAX are a logical or, MIN and PRODUCT a logical
    and. MIN and MAX are refused for complex tensors (they have no order)."""

    SUM = "sum"
    AVG = "avg"
    MIN = "min"
    MAX = "max"
    PRODUCT = "product"

    def mpi_op(self, MPI: Any, dtype: DType) -> Any:  # noqa: N803 - the module's own name
        """The MPI operation that does this on `dtype`'s values; TypeError for a combination
        that means nothing."""
        if dtype.name == "bool_":
            if self is ReduceOp.AVG:
                raise TypeError("ReduceOp.AVG of a bool tensor: average float tensors only")
            return MPI.LOR if self in (ReduceOp.SUM, ReduceOp.MAX) else MPI.LAND
        if self is ReduceOp.AVG and not (dtype.is_float or dtype.is_complex):
            raise TypeError(f"ReduceOp.AVG of a {dtype.name} tensor: the average of integers "
                            "is not an integer; reduce with SUM, or average a float tensor")
        if dtype.is_complex and self in (ReduceOp.MIN, ReduceOp.MAX):
            raise TypeError(f"ReduceOp.{self.name} of a {dtype.name} tensor: complex numbers "
                            "have no order")
        return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.MIN: MPI.MIN,
                ReduceOp.MAX: MPI.MAX, ReduceOp.PRODUCT: MPI.PROD}[self]
