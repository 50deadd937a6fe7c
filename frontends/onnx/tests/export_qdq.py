#!/usr/bin/python3
"""Exports a small int8 QDQ network beside export_models.py's models, in the
same layout (model.onnx, input_k.npy, expected_k.npy, meta.json), so
model_test.py and bp-conformance's models group run it like the others.

The network is quantized the way torch 1.13 does quantization-aware
training (torch.ao.quantization with fbgemm's ranges: per-tensor uint8
activations, per-channel symmetric int8 weights): its weights are calibrated as
export_models.py calibrates every model, the fake-quantize observers then
see the calibration batch and are frozen, and torch's ONNX export writes
each fake quantization as a QuantizeLinear/DequantizeLinear pair (per-axis
for the weights). The reference output is torch's eager output of the
frozen model; the tolerance is 1.5 output quantization steps (calibrate()
says why), absolute. Kept apart from export_models.py so that its export (a few
seconds) does not re-export the image models.

Usage: export_qdq.py OUT
Exit codes: 0 done, 77 torch missing (the tests skip), 1 the export failed.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as em  # noqa: E402 (exits 77 when torch is missing)

torch = em.torch
tq = torch.ao.quantization


class SmallCnn(torch.nn.Module):
    """conv-bn-relu, conv-relu (stride 2), conv-relu, global average pool, linear."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(16)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.conv3 = torch.nn.Conv2d(16, 24, 3, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(24, 10)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        x = self.pool(x).flatten(1)
        return self.dequant(self.fc(x))


def make_qat():
    """SmallCnn prepared for quantization-aware training (fake quantization
    of activations and weights), observers on until calibrate() freezes them."""
    model = SmallCnn()
    # fbgemm's QAT ranges with plain FakeQuantize modules (the default fused
    # observer has no ONNX export in torch 1.13) and min/max observers, so the
    # one calibration pass sets the ranges.
    act = tq.FakeQuantize.with_args(observer=tq.MinMaxObserver, quant_min=0, quant_max=255, dtype=torch.quint8,
                                    qscheme=torch.per_tensor_affine)
    weight = tq.FakeQuantize.with_args(observer=tq.PerChannelMinMaxObserver, quant_min=-128, quant_max=127,
                                       dtype=torch.qint8, qscheme=torch.per_channel_symmetric, ch_axis=0)
    model.qconfig = tq.QConfig(activation=act, weight=weight)
    return tq.prepare_qat(model.train())


def calibrate(model, calib, targets):
    """export_models.py's weight calibration, then one pass that sets every
    fake quantizer's scale and zero point from the calibration batch, then
    the observers frozen: the reference and the export see the same ones."""
    model.apply(tq.disable_fake_quant)
    em_calibrate(model, calib, targets)
    model.apply(tq.enable_observer)
    with torch.no_grad():
        model(*calib)
    model.apply(tq.disable_observer)
    model.apply(tq.enable_fake_quant)
    # The tolerance: torch's fake quantization multiplies by 1 / scale where
    # ONNX's QuantizeLinear divides by the scale, and sums run in another
    # order, so a value within an ULP of a rounding boundary can land one
    # step away; that step moves the output by about one output step.
    step = float(model.fc.activation_post_process.scale)
    em.TOLERANCE = {"rtol": 0.0, "atol": round(1.5 * step, 6)}


def qdq_models():
    """name: export_models.models()'s tuple for each quantized network."""
    g = torch.Generator().manual_seed(em.SEED)
    img = lambda n: (torch.randn(n, 3, 24, 24, generator=g),)
    return {"qdq_cnn": (make_qat, img(1), ["input"], img(4), {})}


em_calibrate = em.calibrate


def main():
    em.calibrate = calibrate  # export() calibrates through it
    em.update_tolerance = lambda d: None  # a cached export keeps the tolerance its calibration set
    return em.export_apart("export_qdq", __file__, qdq_models(), sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
