"""Definite assignment: a read of a local that some path from the entry leaves unassigned is a
compile error at the read, saying where the variable is assigned (Python would raise
UnboundLocalError; the device would read 0). Kernels where every path assigns, as Python sees
it, compile and give numpy's answers."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from test_errors import expect_error

import pykern as pk

X = np.array([1.0, -2.0, 3.0, 0.5], np.float32)


def line_col(fn, marker: str, snippet: str) -> str:
    """'file:line:col' of `snippet` on the line of `fn` containing `marker`."""
    lines, first = inspect.getsourcelines(fn)
    k = next(i for i, line in enumerate(lines) if marker in line)
    return f"{inspect.getsourcefile(fn)}:{first + k}:{lines[k].index(snippet) + 1}"


def test_assigned_only_in_an_if_without_else():
    def k(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        if x[i] > 0.0:
            v = 1.0  # here
        out[i] = v  # error

    err = expect_error(k, (X, X), "v  # error", "'v' may be unassigned here: it is only "
                                                "assigned in the if-branch at ")
    assert line_col(k, "# here", "v = 1.0") in str(err)


def test_assigned_only_in_the_else_branch_or_some_elif():
    def k(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        if x[i] > 0.0:
            pass
        else:
            v = 1.0  # here
        out[i] = v  # error

    err = expect_error(k, (X, X), "v  # error", "only assigned in the else-branch at ")
    assert line_col(k, "# here", "v = 1.0") in str(err)

    def chain(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        if x[i] > 0.0:
            v = 1.0
        elif x[i] < 0.0:
            v = 2.0
        out[i] = v  # error

    expect_error(chain, (X, X), "v  # error", "'v' may be unassigned here")


def test_loops_that_may_run_zero_times():
    def in_for(x: pk.f32[:], out: pk.f32[:], n: pk.i32):
        for j in range(n):  # loop
            v = x[j]
        out[0] = v  # error

    err = expect_error(in_for, (X, X, 4), "v  # error", "only assigned inside the for loop at ")
    assert line_col(in_for, "# loop", "for") + ", which may run zero times" in str(err)

    def loop_variable(x: pk.f32[:], out: pk.f32[:], n: pk.i32):
        for j in range(n):  # noqa: B007
            pass
        out[0] = j  # error

    expect_error(loop_variable, (X, X, 4), "j  # error", "'j' may be unassigned here: it is "
                                                         "the variable of the for loop at ")

    def in_while(x: pk.f32[:], out: pk.f32[:], n: pk.i32):
        j = 0
        while j < n:
            v = x[j]
            j += 1
        out[0] = v  # error

    expect_error(in_while, (X, X, 4), "v  # error", "only assigned inside the while loop at ")

    def empty_range(x: pk.f32[:], out: pk.f32[:]):
        for j in range(0):
            v = x[j]
        out[0] = v  # error

    expect_error(empty_range, (X, X), "v  # error", "which may run zero times")


def test_a_break_before_the_assignment():
    def k(x: pk.f32[:], out: pk.f32[:]):
        for j in range(4):
            if x[j] < 0.0:
                break  # here
            v = x[j]
        out[0] = v  # error

    err = expect_error(k, (X, X), "v  # error", "'v' may be unassigned here: the break at ")
    assert line_col(k, "# here", "break") + " can end the for loop" in str(err)


def test_augmented_assignment_reads_first():
    def k(x: pk.f32[:], out: pk.f32[:], n: pk.i32):
        if n > 0:
            s = 0.0
        s += x[0]  # error
        out[0] = s

    expect_error(k, (X, X, 1), "s += x[0]", "'s' may be unassigned here")


def test_a_declaration_without_a_value_assigns_nothing():
    def k(out: pk.f32[:]):
        v: pk.f32
        out[0] = v  # error

    expect_error(k, (X,), "v  # error", "it is only declared at ")


def test_in_a_device_function_with_its_call_site():
    @pk.func
    def positive_part(a):
        if a > 0.0:
            r = a
        return r  # error

    def k(x: pk.f32[:], out: pk.f32[:]):
        out[0] = positive_part(x[0])  # call

    with pytest.raises(pk.CompileError) as info:
        pk.kernel(k).ir(X, X)
    text = str(info.value)
    assert text.startswith(line_col(positive_part.__wrapped__, "# error", "r  # error") +
                           ": 'r' may be unassigned here: it is only assigned in the if-branch")
    assert "called from " + line_col(k, "# call", "positive_part") in text


def test_read_before_the_first_assignment_says_where_it_is():
    def k(x: pk.f32[:], out: pk.f32[:], n: pk.i32):
        for j in range(n):
            if j > 0:
                out[j] = prev  # error
            prev = x[j]  # here

    err = expect_error(k, (X, X, 4), "prev  # error", "local variable 'prev' is used before it "
                                                      "is assigned")
    assert line_col(k, "# here", "prev = x[j]") in str(err)


# ---------------------------------------------------------------- what Python accepts compiles


@pk.kernel
def every_path_assigns(x: pk.f32[:], out: pk.f32[:], mode: pk.constexpr):
    i = pk.global_id(0)
    if x[i] > 0.0:                      # both branches
        a = x[i]
    else:
        a = -x[i]
    for j in range(3):                  # constant bounds: the body runs
        b = a + j
    k = 0
    while True:                         # left only by the break, after the assignment
        c = b * 2.0
        k += 1
        if k >= 2:
            break
    if x[i] < -1.0:                     # the other branch ends the invocation
        out[i] = 100.0
        return
    else:
        d = c + 1.0
    if mode == "fast":                  # a compile-time if: only the branch taken counts
        e = d
    out[i] = e + j
    for m in range(2):                  # assigned before a continue too
        f = m
        if m == 0:
            continue
    out[i] += f


def reference(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i, v in enumerate(x):
        if v < -1.0:
            out[i] = 100.0
            continue
        a = abs(v)
        b = a + 2
        out[i] = b * 2 + 1 + 2 + 1
    return out


def test_kernels_where_every_path_assigns_compile_and_run():
    out = np.zeros(4, np.float32)
    every_path_assigns[4](X, out, "fast")
    np.testing.assert_array_equal(out, reference(X))
    out_i = np.zeros(4, np.float32)
    pk.kernel(every_path_assigns.__wrapped__, interpret=True)[4](X, out_i, "fast")
    np.testing.assert_array_equal(out_i, reference(X))


def test_the_branch_not_taken_of_a_compile_time_if_does_not_count():
    with pytest.raises(pk.CompileError, match="'e' may be unassigned here: it is only "
                                              "assigned at .*, in code this variant does not "
                                              "compile"):
        every_path_assigns.ir(X, X, "slow")
