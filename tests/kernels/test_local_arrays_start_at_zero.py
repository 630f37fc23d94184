"""`pk.local` arrays start at zero (docs/language.md), also where an element is read before
anything is written to it, at an index known only at run time.

NVIDIA's driver (580) read garbage there (NaN, -95) when the array's only zeros were its
variable's initializer (found by random kernels); the kernel now stores the zeros itself."""

import numpy as np

import pykern as pk


@pk.kernel
def read_before_write(x: pk.f32[:], k: pk.i32[:], f_out: pk.f32[:, :], i_out: pk.i16[:, :]):
    i = pk.global_id(0)
    buf = pk.local(pk.f32, 6)
    small = pk.local(pk.i16, 4)
    buf[0] = x[i]
    for j in range(6, -3, -1):  # a running minimum that also reads unwritten elements
        if buf[j % 6] > buf[(j + 1) % 6]:
            buf[j % 6] = buf[(j + 1) % 6]
    small[0] = small[k[i] % 4]
    small[(k[i] + 1) % 4] = small[k[i] % 4] + pk.i16(5)
    for j in range(6):
        f_out[i, j] = buf[j]
    for j in range(4):
        i_out[i, j] = small[j]


def test_local_arrays_read_before_written_are_zero():
    x = np.array([3.5, -2.0, 0.0, 7.25, -0.5, 1e30, -1e30, 2.0], np.float32)
    k = np.array([0, 1, 2, 3, 5, -1, 7, 10], np.int32)
    f_out = np.full((x.size, 6), 9.0, np.float32)
    i_out = np.full((x.size, 4), 9, np.int16)
    read_before_write[x.size](x, k, f_out, i_out)
    for n in range(x.size):
        buf = [float(x[n])] + [0.0] * 5
        for j in range(6, -3, -1):
            if buf[j % 6] > buf[(j + 1) % 6]:
                buf[j % 6] = buf[(j + 1) % 6]
        small = [0] * 4
        small[0] = small[k[n] % 4]
        small[(k[n] + 1) % 4] = small[k[n] % 4] + 5
        assert f_out[n].tolist() == np.float32(buf).tolist()
        assert i_out[n].tolist() == small
