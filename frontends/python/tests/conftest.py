"""Shared fixtures: `dev` runs a test on every backend with a device (cpu,
vendor_sim, opencl); a backend without one skips with its reason, or fails
when BACKPLANE_EXPECT_BACKENDS names it (as the C++ tests do)."""
import os
import sys

import pytest

import backplane

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
from expected_backends import expected as _expected  # noqa: E402  (tests/expected_backends.py)

BACKENDS = ["cpu", "vendor_sim", "opencl"]


def need_device(name):
    """'name:0', or skip/fail saying why there is none."""
    info = {b["name"]: b for b in backplane.backends()}.get(name)
    if info is None:
        why = "the %s plugin is not loaded (not built, or discovery failed: %s)" % (name, backplane.load_errors())
    elif info["device_count"] == 0:
        why = "backend %s has no device: %s" % (name, info["no_device_reason"])
    else:
        return name + ":0"
    if _expected(name):
        pytest.fail(why + "; BACKPLANE_EXPECT_BACKENDS names it")
    pytest.skip(why)


@pytest.fixture(params=BACKENDS)
def dev(request):
    return need_device(request.param)
