"""A kernel's source is read from the lines its code object names, up to its last statement,
including statements that make no code (a bare annotation, `pass`, a string): the kernels
below end in each way, compile and run, and their text is what `inspect` reads."""

import inspect

import numpy as np

import pykern as pk
from pykern.frontend.source import load_source


@pk.kernel
def ends_with_margin_string(out: pk.f32[:]):
    out[pk.global_id(0)] = 1.0
    """a string
that runs back to the margin"""
    # and a comment


@pk.kernel
def ends_with_annotation_and_pass(out: pk.f32[:]):
    out[pk.global_id(0)] = 2.0
    t: pk.i32  # noqa: F842
    pass


@pk.kernel
def on_one_line(out: pk.f32[:]): out[pk.global_id(0)] = 3.0  # noqa: E704


@pk.kernel
def ends_in_a_branch(out: pk.f32[:], n: pk.i32):
    i = pk.global_id(0)
    if i < n:
        out[i] = 4.0
    else:
        pass


def test_kernels_ending_in_statements_without_code_compile_and_run():
    out = pk.zeros(4)
    for value, run in [(1.0, lambda: ends_with_margin_string[4](out)),
                       (2.0, lambda: ends_with_annotation_and_pass[4](out)),
                       (3.0, lambda: on_one_line[4](out)),
                       (4.0, lambda: ends_in_a_branch[4](out, 4))]:
        run()
        np.testing.assert_array_equal(out.numpy(), np.full(4, value, np.float32))


def test_the_source_read_is_the_whole_function():
    for k in (ends_with_margin_string, ends_with_annotation_and_pass, on_one_line,
              ends_in_a_branch):
        lines, first = inspect.getsourcelines(k.__wrapped__)
        src = load_source(k.__wrapped__)
        assert src.text == "".join(lines), k.__name__
        assert src.line_offset == first - 1
