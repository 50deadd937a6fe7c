"""The backend under test is BACKPLANE_TORCH_BACKEND (ctest runs the suite
once per backend); the suite skips, saying why, when it has no device."""
import os

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")


@pytest.fixture(scope="session")
def bt():
    import backplane
    import backplane.torch as bt
    name = os.environ.get("BACKPLANE_TORCH_BACKEND", "vendor_sim")
    found = {b["name"]: b for b in backplane.backends()}
    if name not in found or found[name]["device_count"] == 0:
        reason = found[name]["no_device_reason"] if name in found else "backend not loaded"
        pytest.skip("backend %s has no device: %s" % (name, reason))
    bt.init(name)
    return bt


@pytest.fixture
def dev(bt):
    return torch.device("privateuseone", 0)
