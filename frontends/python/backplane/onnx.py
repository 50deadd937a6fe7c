"""ONNX models on any Backplane device, with bp-run's executor.

    import numpy as np, backplane.onnx
    s = backplane.onnx.Session("resnet18.onnx", device="opencl:0")
    (logits,) = s.run({"input": np.zeros((1, 3, 224, 224), np.float32)})
    s.run(inputs, trace=True); s.trace      # per node: op_type, path, seconds
    s.report()                              # per op type: native / fallback / core nodes

See docs/python.md ("ONNX models"). The executor is bp-run's (docs/bp-run.md):
the graph optimizer's passes, initializers uploaded once, and a run planned
once per set of input sizes and replayed after.
"""
import collections

import backplane
from . import _C

__all__ = ["Session"]


class Session:
    """One ONNX model prepared on one device.

    path: the .onnx file (external data beside it is read). device: a
    device string, "cpu" by default. Raises backplane.Error: INVALID_ARGUMENT
    for a file that does not load or check, UNIMPLEMENTED naming the op type,
    attribute or dtype the mappings lack.
    """

    def __init__(self, path, device="cpu"):
        if not hasattr(_C, "OnnxSession"):
            raise ImportError("backplane.onnx: this build has no ONNX frontend (install libonnx-dev, "
                              "libprotobuf-dev and protobuf-compiler, then rebuild)")
        self._s = _C.OnnxSession(str(path), device)
        self.device = device

    @property
    def inputs(self):
        """Graph inputs (not initializers): [{"name", "elem_type", "shape"}];
        a symbolic dim is its name (or None)."""
        return self._s.inputs

    @property
    def outputs(self):
        """Graph outputs, in the order run() returns them."""
        return self._s.outputs

    def run(self, inputs, trace=False):
        """Runs the graph. inputs: {name: numpy array or backplane.Tensor};
        arrays are copied to the host side first (C order), tensors on any
        device are used as they are. Returns a list of numpy arrays, one per
        graph output. With trace=True, self.trace then holds one dict per
        node (index, node, op_type, path: native/fallback/core, input_shapes,
        seconds); the device is synchronized after every node, as with
        bp-run --trace. Raises backplane.Error naming the input (missing,
        wrong dtype or shape) or the node that failed."""
        boxed = {}
        for name, value in inputs.items():
            boxed[name] = value if isinstance(value, backplane.Tensor) else backplane.tensor(value)
        return [t.numpy() for t in self._s.run(boxed, trace)]

    @property
    def trace(self):
        """The per-node record of the last run(..., trace=True)."""
        return self._s.trace

    @property
    def last_run_replayed(self):
        """True when the last run replayed the plan of an earlier run with the
        same input sizes (no mapping ran, nothing was read back)."""
        return self._s.last_run_replayed

    def report(self):
        """bp-run --report's summary of the last traced run: {op_type:
        {"native": nodes, "fallback": nodes, "core": nodes}}."""
        out = collections.defaultdict(lambda: {"native": 0, "fallback": 0, "core": 0})
        for r in self._s.trace:
            out[r["op_type"]][r["path"]] += 1
        return dict(out)
