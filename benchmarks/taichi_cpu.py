"""The Taichi CPU peers of the `host` benchmark (imported only where Taichi is): the same
algorithms as benchmarks/numba_kernels.py, on Taichi's CPU backend (`ti.init(arch=ti.cpu)`),
whose outermost loop runs in parallel. Arrays are Taichi fields, as in taichi_kernels.py.

Taichi has one runtime per process: `start_cpu` resets it (the Vulkan one that
benchmarks/peers.py starts) and `restore` puts the Vulkan one back for the benchmarks that run
next. Each case's fields are a tree of their own (`Fields`), destroyed when the case is done.
No `from __future__ import annotations` here: Taichi reads the annotations as objects.
"""

import taichi as ti

EPS = 1e-5  # layer_norm's


def start_cpu() -> None:
    """A fresh CPU runtime: the fields made before are gone."""
    ti.reset()
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    arch = ti.lang.impl.current_cfg().arch
    if arch not in (ti.x64, ti.arm64):
        raise RuntimeError(f"Taichi started on {arch}, not the CPU")


def restore(vulkan: bool) -> None:
    """Ends the CPU runtime; starts the Vulkan one again where the other benchmarks use it."""
    ti.reset()
    if vulkan:
        ti.init(arch=ti.vulkan, log_level=ti.WARN)


class Fields:
    """f32 fields holding copies of the numpy `arrays`, then one of `out_shape` for the result,
    in an SNode tree of their own: `destroy()` frees them."""

    def __init__(self, arrays, out_shape):
        builder = ti.FieldsBuilder()
        self.fields = []
        for shape in [a.shape for a in arrays] + [tuple(out_shape)]:
            f = ti.field(ti.f32)
            builder.dense(ti.axes(*range(len(shape))), shape).place(f)
            self.fields.append(f)
        self._tree = builder.finalize()
        for f, a in zip(self.fields, arrays):
            f.from_numpy(a)

    def destroy(self):
        self._tree.destroy()


@ti.kernel
def add(a: ti.template(), b: ti.template(), out: ti.template()):
    for i in out:
        out[i] = a[i] + b[i]


@ti.kernel
def saxpy(alpha: ti.f32, x: ti.template(), y: ti.template(), out: ti.template()):
    for i in out:
        out[i] = alpha * x[i] + y[i]


@ti.kernel
def sum_rows(x: ti.template(), out: ti.template()):
    for i in range(x.shape[0]):
        s = 0.0
        for j in range(x.shape[1]):
            s += x[i, j]
        out[i] = s


@ti.kernel
def sum_cols(x: ti.template(), out: ti.template()):
    for j in range(x.shape[1]):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i, j]
        out[j] = s


@ti.kernel
def softmax(x: ti.template(), out: ti.template()):
    for i in range(x.shape[0]):
        m = x[i, 0]
        for j in range(x.shape[1]):
            m = ti.max(m, x[i, j])
        s = 0.0
        for j in range(x.shape[1]):
            e = ti.exp(x[i, j] - m)
            out[i, j] = e
            s += e
        for j in range(x.shape[1]):
            out[i, j] /= s


@ti.kernel
def layer_norm(x: ti.template(), out: ti.template()):
    for i in range(x.shape[0]):
        n = x.shape[1]
        mean = 0.0
        for j in range(n):
            mean += x[i, j]
        mean /= n
        var = 0.0
        for j in range(n):
            d = x[i, j] - mean
            var += d * d
        scale = 1.0 / ti.sqrt(var / n + EPS)
        for j in range(n):
            out[i, j] = (x[i, j] - mean) * scale


@ti.kernel
def matmul(a: ti.template(), b: ti.template(), out: ti.template()):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = 0.0
        for k in range(a.shape[1]):
            aik = a[i, k]
            for j in range(b.shape[1]):
                out[i, j] += aik * b[k, j]
