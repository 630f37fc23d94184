"""`end_with_os_exit`: how a child forked from a process that used a GPU driver ends (the
driver's exit code must not run in it). The mechanism is exercised here on any machine: exit
handlers registered before the fork still run, output is flushed, and the exit status is the
one sys.exit() gave, or 1 after an uncaught exception."""

from __future__ import annotations

import pytest
from rt_helpers import run_python

CHILD = """
import atexit, os, sys
from pykern.runtime.vulkan.forked_exit import end_with_os_exit

atexit.register(lambda: print("handler of the parent's ran", flush=True))
pid = os.fork()
if pid == 0:
    end_with_os_exit()
    print("child output", end="")  # no newline, no flush: must still come out
    {ending}
else:
    _, status = os.waitpid(pid, 0)
    print("\\nchild status:", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.parametrize("ending, status", [
    ("pass", 0),
    ("sys.exit(3)", 3),
    ("sys.exit()", 0),
    ("raise RuntimeError('boom')", 1),
])
def test_a_forked_child_ends_with_its_status_after_the_exit_handlers(ending, status):
    result, _ = run_python(CHILD.replace("{ending}", ending), timeout=60)
    out = result.stdout
    assert out.count("handler of the parent's ran") == 2, out  # in the child, then the parent
    assert "child output" in out, out
    assert f"child status: {status}" in out, out + result.stderr
    if status == 1:
        assert "RuntimeError: boom" in result.stderr
