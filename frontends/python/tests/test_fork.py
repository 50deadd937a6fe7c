"""fork() after a device was used (issue 42 item 13): in the child, the
module's context (created before fork) refuses device work with a clear
backplane.Error instead of hanging on the parent's device threads."""
import os
import time

import numpy as np

import backplane
from backplane import ops


def _wait(pid, deadline_s):
    """The child's exit code, or None after killing a child past the deadline."""
    until = time.monotonic() + deadline_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= until:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.005)  # polling the child's exit against the deadline, not a synchronization


def test_child_of_fork_gets_a_clear_error(dev):
    t = backplane.tensor(np.arange(4, dtype=np.float32), device=dev)
    np.testing.assert_array_equal(ops.add(t, t).numpy(), 2 * np.arange(4, dtype=np.float32))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what happened through the pipe, never return into pytest
        code = 1
        try:
            os.close(r)
            try:
                ops.add(t, t).numpy()
                msg = "no error"
            except backplane.Error as e:
                msg = "%s|%s" % (e.status, e.message)
                code = 0
            os.write(w, msg.encode())
        finally:
            os._exit(code)
    os.close(w)
    code = _wait(pid, 20)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode()
    assert code is not None, "the child hung on %s (killed after 20 s)" % dev
    assert code == 0, "the child on %s: %s" % (dev, said)
    status, message = said.split("|", 1)
    assert status == "FAILED_PRECONDITION"
    assert "cannot be used after fork()" in message and "create a new context in the child" in message
    np.testing.assert_array_equal(ops.add(t, t).numpy(), 2 * np.arange(4, dtype=np.float32))  # the parent is unaffected
