#!/usr/bin/python3
"""Exports a small recurrent network (LSTM and GRU layers, torch's own ONNX
export) beside export_models.py's models, in the same layout (model.onnx,
input_k.npy, expected_k.npy, meta.json) so model_test.py and bp-conformance's
models group run it like the others. Kept apart from export_models.py so that
its export (a few seconds) does not re-export the image models.

Usage: export_recurrent.py OUT
Exit codes: 0 done, 77 torch missing (the tests skip), 1 the export failed.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as em  # noqa: E402 (exits 77 when torch is missing)

torch = em.torch


class Recurrent(torch.nn.Module):
    """A 2-layer bidirectional LSTM (batch first) over [batch, 12, 16], a GRU
    over its outputs, a linear head on every step and on the GRU's final state."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(16, 24, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = torch.nn.GRU(48, 20)
        self.head = torch.nn.Linear(20, 8)

    def forward(self, x, h0, c0):
        y, _ = self.lstm(x, (h0, c0))
        z, h = self.gru(y.transpose(0, 1))
        return self.head(z), self.head(h[0])


def recurrent_models():
    """name: export_models.models()'s tuple for each recurrent network."""
    g = torch.Generator().manual_seed(em.SEED)
    inputs = lambda n: (torch.randn(n, 12, 16, generator=g), torch.randn(4, n, 24, generator=g),
                        torch.randn(4, n, 24, generator=g))
    return {"lstm_gru": (Recurrent, inputs(2), ["x", "h0", "c0"], inputs(4), {})}


def main():
    return em.export_apart("export_recurrent", __file__, recurrent_models(), sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
