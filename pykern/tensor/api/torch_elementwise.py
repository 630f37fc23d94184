"""PyTorch's elementwise Tensor methods that numpy's ndarray lacks (a base of the
PyTorch-style methods, `pykern.tensor.api.torch_style`): the conversions `long() int() short()
char() byte() half() bfloat16() float() double() bool()` (the tensor itself where it has the
dtype already), the comparisons `eq ne lt le gt ge`, and `abs neg exp log sqrt rsqrt sin cos
tanh sigmoid relu square pow`, each pykern's op of that name.
"""

from __future__ import annotations

from typing import Any

from pykern.lang import dtypes as dt


def _ops() -> Any:
    # the op library imports pykern.tensor.core.tensor, whose Tensor derives from this class:
    # its modules are looked up on first use
    from pykern.tensor.api.torch_style import _ops as library  # the same lookup
    return library()


class TorchElementwiseMethods:
    """PyTorch's elementwise methods on pk.Tensor (see the module's docstring)."""

    __slots__ = ()

    def eq(self, other: Any) -> Any:
        """`self == other`."""
        return self == other

    def ne(self, other: Any) -> Any:
        """`self != other`."""
        return self != other

    def lt(self, other: Any) -> Any:
        """`self < other`."""
        return self < other  # type: ignore[operator]

    def le(self, other: Any) -> Any:
        """`self <= other`."""
        return self <= other  # type: ignore[operator]

    def gt(self, other: Any) -> Any:
        """`self > other`."""
        return self > other  # type: ignore[operator]

    def ge(self, other: Any) -> Any:
        """`self >= other`."""
        return self >= other  # type: ignore[operator]

    def abs(self) -> Any:
        """`pk.abs(self)`."""
        return _ops().elementwise.abs(self)

    def neg(self) -> Any:
        """`-self`."""
        return _ops().elementwise.negative(self)

    def exp(self) -> Any:
        """`pk.exp(self)`."""
        return _ops().elementwise.exp(self)

    def log(self) -> Any:
        """`pk.log(self)`."""
        return _ops().elementwise.log(self)

    def sqrt(self) -> Any:
        """`pk.sqrt(self)`."""
        return _ops().elementwise.sqrt(self)

    def rsqrt(self) -> Any:
        """`pk.rsqrt(self)`: 1 / sqrt."""
        return _ops().elementwise.rsqrt(self)

    def sin(self) -> Any:
        """`pk.sin(self)`."""
        return _ops().elementwise.sin(self)

    def cos(self) -> Any:
        """`pk.cos(self)`."""
        return _ops().elementwise.cos(self)

    def tanh(self) -> Any:
        """`pk.tanh(self)`."""
        return _ops().elementwise.tanh(self)

    def sigmoid(self) -> Any:
        """`pk.sigmoid(self)`."""
        return _ops().elementwise.sigmoid(self)

    def relu(self) -> Any:
        """`pk.relu(self)`."""
        return _ops().elementwise.relu(self)

    def square(self) -> Any:
        """`self * self`."""
        return _ops().elementwise.square(self)

    def pow(self, exponent: Any) -> Any:
        """`self ** exponent`."""
        return self ** exponent  # type: ignore[operator]

    # ------------------------------------------------------------ conversions
    # (last in the class: their names, `int`, `float`, `bool`, would hide Python's types in
    # annotations of the methods after them)

    def long(self) -> Any:
        """As i64 (itself when it is i64 already)."""
        return self.astype(dt.i64, copy=False)  # type: ignore[attr-defined]

    def int(self) -> Any:
        """As i32."""
        return self.astype(dt.i32, copy=False)  # type: ignore[attr-defined]

    def short(self) -> Any:
        """As i16."""
        return self.astype(dt.i16, copy=False)  # type: ignore[attr-defined]

    def char(self) -> Any:
        """As i8."""
        return self.astype(dt.i8, copy=False)  # type: ignore[attr-defined]

    def byte(self) -> Any:
        """As u8."""
        return self.astype(dt.u8, copy=False)  # type: ignore[attr-defined]

    def half(self) -> Any:
        """As f16."""
        return self.astype(dt.f16, copy=False)  # type: ignore[attr-defined]

    def bfloat16(self) -> Any:
        """As bf16."""
        return self.astype(dt.bf16, copy=False)  # type: ignore[attr-defined]

    def float(self) -> Any:
        """As f32."""
        return self.astype(dt.f32, copy=False)  # type: ignore[attr-defined]

    def double(self) -> Any:
        """As f64."""
        return self.astype(dt.f64, copy=False)  # type: ignore[attr-defined]

    def bool(self) -> Any:
        """As bool_ (`!= 0`)."""
        return self.astype(dt.bool_, copy=False)  # type: ignore[attr-defined]
