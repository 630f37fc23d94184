"""Random operators. Their numbers come from PyTorch's CPU generator (the default one, or the
`generator=` given), drawn by PyTorch's CPU operator for a tensor of the same shape, dtype and
strides, then copied to the device: a program seeded with `torch.manual_seed` draws the same
numbers on "pykern" as on the CPU, so its initialisations, dropout masks and samples match a
CPU run exactly. Only the draw is on the host; what the numbers feed runs on the device."""

from __future__ import annotations

from collections.abc import Callable

import torch

import pykern as pk
from pykern.torch.args import operand, write
from pykern.torch.copies import from_host, to_host
from pykern.torch.memory import pk_view


def _drawn(self: torch.Tensor, draw: Callable[[torch.Tensor], object]) -> torch.Tensor:
    """self filled with what `draw` writes into a CPU tensor of self's layout."""
    if self.numel() == 0:
        return self
    dense = self.is_contiguous() or self.is_non_overlapping_and_dense()
    host = torch.empty_strided(self.shape, self.stride(), dtype=self.dtype) if dense else \
        torch.empty(self.shape, dtype=self.dtype)
    draw(host)
    target = pk_view(self)
    target[...] = from_host(host, target.device)
    return self


def _in_place_draw(method: str, aten: str) -> Callable[..., torch.Tensor]:
    """The aten in-place random operator `aten`: self filled by PyTorch's CPU tensor method
    `method` called with the operator's arguments (the dispatcher passes every one, defaults
    included)."""

    def draw(self: torch.Tensor, *args: object,
             generator: torch.Generator | None = None) -> torch.Tensor:
        return _drawn(self, lambda h: getattr(h, method)(*args, generator=generator))

    draw.__doc__ = f"`{aten}`."
    return draw


normal_ = _in_place_draw("normal_", "normal_")
uniform_ = _in_place_draw("uniform_", "uniform_")
bernoulli_float_ = _in_place_draw("bernoulli_", "bernoulli_.float")
random_ = _in_place_draw("random_", "random_")
random_to_ = _in_place_draw("random_", "random_.to")
random_from_ = _in_place_draw("random_", "random_.from")
exponential_ = _in_place_draw("exponential_", "exponential_")
geometric_ = _in_place_draw("geometric_", "geometric_")
log_normal_ = _in_place_draw("log_normal_", "log_normal_")
cauchy_ = _in_place_draw("cauchy_", "cauchy_")


def bernoulli_tensor_(self: torch.Tensor, p: torch.Tensor, *,
                      generator: torch.Generator | None = None) -> torch.Tensor:
    """`bernoulli_.Tensor`: probabilities from a tensor."""
    probs = to_host(p) if p.device.type != "cpu" else p
    return _drawn(self, lambda h: h.bernoulli_(probs, generator=generator))


def bernoulli_out(self: torch.Tensor, *, generator: torch.Generator | None = None,
                  out: torch.Tensor) -> torch.Tensor:
    """`bernoulli.out`: 1 with the probability in each element of self."""
    probs = to_host(self)
    return _drawn(out, lambda h: torch.bernoulli(probs, generator=generator, out=h))


def randperm_out(n: int, *, generator: torch.Generator | None = None,
                 out: torch.Tensor) -> torch.Tensor:
    """`randperm.generator_out`."""
    return _drawn(out, lambda h: torch.randperm(n, generator=generator, out=h))


def multinomial(self: torch.Tensor, num_samples: int, replacement: bool = False, *,
                generator: torch.Generator | None = None) -> torch.Tensor:
    """`multinomial`: samples drawn by PyTorch's CPU sampler from the device's weights."""
    samples = torch.multinomial(to_host(self), num_samples, replacement, generator=generator)
    return samples.to(self.device)


def native_dropout(input: torch.Tensor, p: float,  # noqa: A002
                   train: bool | None) -> tuple[torch.Tensor, torch.Tensor]:
    """`native_dropout`: (input * mask / (1 - p), mask). The mask is drawn as PyTorch's CPU
    dropout draws its noise (bernoulli_(1 - p) on a tensor like input), and the scale is
    applied as there, so a seeded run drops the same elements as on the CPU."""
    if not train or p == 0:
        return input.clone(), torch.ones_like(input, dtype=torch.bool)
    if p == 1:
        return torch.zeros_like(input), torch.zeros_like(input, dtype=torch.bool)
    noise = torch.empty_like(input, device="cpu").bernoulli_(1 - p)
    keep = pk.not_equal(from_host(noise, pk_view(input).device), 0)
    out = torch.empty_like(input)
    write(out, pk.multiply(operand(input), pk.where(keep, _scale(p, input.dtype), 0.0)))
    mask = torch.empty_like(input, dtype=torch.bool)
    write(mask, keep)
    return out, mask


def _scale(p: float, dtype: torch.dtype) -> float:
    """1 / (1 - p) rounded to dtype, as CPU dropout's `noise.div_(1 - p)` makes it."""
    return torch.tensor(1.0, dtype=dtype).div_(1 - p).item()


def native_dropout_backward(grad_output: torch.Tensor, mask: torch.Tensor,
                            scale: float) -> torch.Tensor:
    """`native_dropout_backward`: grad * mask * scale."""
    dtype = torch.result_type(grad_output, scale)
    g = operand(grad_output, dtype)
    out = torch.empty_like(grad_output, dtype=dtype)
    return write(out, pk.multiply(g, pk.where(operand(mask, torch.bool), scale, 0.0)))
