"""`pk.linalg.LinAlgError`, raised where a factorization cannot go on (as numpy's)."""

from __future__ import annotations

from pykern.errors import PykernError


class LinAlgError(PykernError, ValueError):
    """A matrix the operation cannot handle: singular for `solve` and `inv`, not positive
    definite for `cholesky`. A `ValueError`, as numpy's `numpy.linalg.LinAlgError`; the
    message names the matrix of the batch (its index in the leading dimensions)."""
