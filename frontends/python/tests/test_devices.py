import numpy as np
import pytest

import backplane


def test_devices_list_cpu_first():
    devs = backplane.devices()
    assert devs, "no devices"
    assert str(devs[0]) == "cpu:0"
    assert devs[0].backend == "cpu" and devs[0].index == 0
    assert devs[0].device_type == "kDLCPU"
    assert isinstance(devs[0].name, str) and devs[0].name
    for d in devs:
        assert set(d.capabilities) <= {"fp64", "fp16", "bf16", "unified"}
        assert backplane.device(str(d)) == d


def test_device_parse_and_range_error():
    assert str(backplane.device("cpu")) == "cpu:0"
    with pytest.raises(backplane.Error) as e:
        backplane.device("cpu:7")
    assert e.value.status == "OUT_OF_RANGE"
    assert "has 1 device(s)" in str(e.value) and "index 7" in e.value.message
    with pytest.raises(backplane.Error) as e:
        backplane.device("nosuchbackend:0")
    assert e.value.status == "NOT_FOUND"
    assert isinstance(e.value, RuntimeError)


def test_backends_report_plugins():
    names = [b["name"] for b in backplane.backends()]
    assert "cpu" in names
    assert "vendor_sim" in names, backplane.load_errors()


def test_stats_count_native_calls(dev):
    x = backplane.tensor(np.ones(4, np.float32), device=dev)
    backend = dev.split(":")[0]
    before = backplane.stats()[backend]
    backplane.ops.add(x, x)
    after = backplane.stats()[backend]
    moved = sum(after[k] - before[k] for k in ("native", "fallback", "cast"))
    assert moved == 1
    op = after["ops"]["add.Tensor"]
    assert op["native"] + op["fallback"] + op["cast"] >= 1
    if backend != "cpu":
        assert after["host_to_device_count"] > 0


def test_stats_count_fallback_on_vendor_sim():
    from conftest import need_device
    dev = need_device("vendor_sim")
    before = backplane.stats()["vendor_sim"]["fallback"]
    x = backplane.tensor(np.ones((2, 3), np.float32), device=dev)
    # Walk ops until one falls back: vendor_sim has few native kernels.
    for f in (backplane.ops.sigmoid, backplane.ops.tanh, backplane.ops.erf, backplane.ops.silu):
        f(x)
    if backplane.stats()["vendor_sim"]["fallback"] == before:
        pytest.skip("vendor_sim ran sigmoid, tanh, erf and silu natively")
    assert backplane.stats()["vendor_sim"]["fallback"] > before
