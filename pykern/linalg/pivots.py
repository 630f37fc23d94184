"""Partial pivoting: the size a pivot is chosen by (the LU kernels apply the row interchanges
themselves)."""


import pykern as pk



@pk.func
def pivot_size(x):
    """The magnitude partial pivoting maximises: |x| for a real x; |re| + |im| for a complex
    one, as LAPACK's izamax (cheaper than the modulus, and numpy's row interchanges)."""
    return abs(x.real) + abs(x.imag)
