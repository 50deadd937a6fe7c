"""backplane.onnx.Session on real exported models (export_models.py, in the
build tree's models directory, BACKPLANE_MODELS_DIR), against torch's
outputs stored beside each model, within the model's rtol/atol."""
import json
import os

import numpy as np
import pytest

import backplane
from conftest import need_device

onnx = pytest.importorskip("backplane.onnx")
MODELS = os.environ.get("BACKPLANE_MODELS_DIR", "")


def model(name):
    d = os.path.join(MODELS, name)
    if not MODELS or not os.path.exists(os.path.join(d, "model.onnx")):
        pytest.skip("no exported model %s (BACKPLANE_MODELS_DIR=%r; ctest runs the export first)" % (name, MODELS))
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    inputs = {n: np.load(os.path.join(d, "input_%d.npy" % i)) for i, n in enumerate(meta["inputs"])}
    expected = [np.load(os.path.join(d, "expected_%d.npy" % i)) for i in range(len(meta["outputs"]))]
    return os.path.join(d, "model.onnx"), inputs, expected, meta


def vendor_sim_or_cpu():
    """vendor_sim:0 where it has a device (failing when it is expected), else cpu:0."""
    try:
        return need_device("vendor_sim")
    except pytest.skip.Exception:
        return "cpu:0"


# dev (conftest.py): every backend; one without a device skips, or fails when
# BACKPLANE_EXPECT_BACKENDS names it.
@pytest.mark.parametrize("name", ["squeezenet1_1", "resnet18"])
def test_session_matches_torch(name, dev):
    path, inputs, expected, meta = model(name)
    assert all(e.std() > 0 for e in expected), "the reference output must vary"
    s = onnx.Session(path, device=dev)
    assert [i["name"] for i in s.inputs] == meta["inputs"]
    assert [o["name"] for o in s.outputs] == meta["outputs"]
    for _ in range(2):  # the second run replays the plan of the first
        got = s.run(inputs)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=meta["rtol"], atol=meta["atol"])
    assert s.last_run_replayed


def test_trace_and_report():
    path, inputs, expected, meta = model("squeezenet1_1")
    s = onnx.Session(path, device=vendor_sim_or_cpu())
    got = s.run(inputs, trace=True)
    np.testing.assert_allclose(got[0], expected[0], rtol=meta["rtol"], atol=meta["atol"])
    trace = s.trace
    assert len(trace) > 10
    assert {"index", "node", "op_type", "path", "input_shapes", "seconds"} <= set(trace[0])
    assert all(r["path"] in ("native", "fallback", "core") for r in trace)
    report = s.report()
    assert sum(sum(v.values()) for v in report.values()) == len(trace)
    assert report["Conv"]["native"] + report["Conv"]["fallback"] == sum(r["op_type"] == "Conv" for r in trace)


def test_bad_input_raises_naming_it():
    path, inputs, _, meta = model("squeezenet1_1")
    s = onnx.Session(path)
    name = meta["inputs"][0]
    with pytest.raises(backplane.Error) as e:
        s.run({name: inputs[name][:, :2]})
    assert name in e.value.message and "shape" in e.value.message
    with pytest.raises(backplane.Error) as e:
        s.run({})
    assert name in e.value.message
    with pytest.raises(backplane.Error) as e:
        onnx.Session(os.path.join(MODELS, "no_such_model.onnx"))
    assert e.value.status == "INVALID_ARGUMENT"
