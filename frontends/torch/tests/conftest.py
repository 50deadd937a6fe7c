"""The backends under test are BACKPLANE_TORCH_BACKEND (a comma list; ctest
runs the suite once per backend). A backend without a device skips the suite,
saying why, unless the run was told to expect it (BACKPLANE_EXPECT_BACKENDS,
as CI sets it): then the suite fails."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
from expected_backends import expected  # noqa: E402  (tests/expected_backends.py)

torch = pytest.importorskip("torch", reason="torch is not installed (bash .ci/deps.sh makes the venv)")


@pytest.fixture(scope="session")
def bt():
    import backplane
    import backplane.torch as bt
    names = [n for n in os.environ.get("BACKPLANE_TORCH_BACKEND", "vendor_sim").split(",") if n]
    found = {b["name"]: b for b in backplane.backends()}
    for name in names:
        if name not in found or found[name]["device_count"] == 0:
            reason = found[name]["no_device_reason"] if name in found else "backend not loaded"
            msg = "backend %s has no device: %s" % (name, reason)
            if expected(name):
                pytest.fail(msg + " (BACKPLANE_EXPECT_BACKENDS expects it)", pytrace=False)
            pytest.skip(msg)
    bt.init(names)
    return bt


@pytest.fixture
def dev(bt):
    return torch.device("backplane", 0)


# test_opinfo.py (torch's OpInfo database on the device) has a ctest entry of
# its own per backend and takes minutes; the other suites leave it out.
collect_ignore = [] if os.environ.get("BACKPLANE_TORCH_OPINFO") == "1" else ["test_opinfo.py"]


def pytest_terminal_summary(terminalreporter):
    """The OpInfo run's line per backend: `opinfo <backend>: P pass, R refused
    (listed), F fail` (cases: op x dtype x forward/backward)."""
    import sys
    harness = sys.modules.get("opinfo_harness")
    if harness is None or not harness.RESULTS:
        return
    c = harness.counts()
    backend = os.environ.get("BACKPLANE_TORCH_BACKEND", "vendor_sim").split(",")[0]
    terminalreporter.write_line("opinfo %s: %d pass, %d refused (listed), %d fail"
                                % (backend, c["pass"], c["refused"], c["fail"]))
