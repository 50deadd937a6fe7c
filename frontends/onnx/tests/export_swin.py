#!/usr/bin/python3
"""Exports a small shifted-window transformer (torchvision's Swin
Transformer, two stages) beside export_models.py's models, in the same
layout (model.onnx, input_k.npy, expected_k.npy, meta.json), so
model_test.py and bp-conformance's models group run it like the others.

Shifted-window attention is what sets it apart from vit_small: the feature
map is rolled by half a window (Slice and Concat in the export), split into
windows (Reshape/Transpose), and the attention of every shifted window is
masked where it spans regions that were not adjacent before the roll; the
mask and the relative position bias are constants of the export. Both
stages shift: 64x64 inputs give 16x16 then 8x8 tokens for 4x4 windows.
Weights are calibrated as export_models.py calibrates every model. Kept
apart from export_models.py so that its export (a few seconds) does not
re-export the image models.

Usage: export_swin.py OUT
Exit codes: 0 done, 77 torch missing (the tests skip), 1 the export failed.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as em  # noqa: E402 (exits 77 when torch is missing)

torch = em.torch
torchvision = em.torchvision


def swin():
    """torchvision's SwinTransformer, two stages of two blocks (patches of 4,
    windows of 4x4, 32 then 64 channels, 10 classes)."""
    return torchvision.models.SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                                              window_size=[4, 4], num_classes=10)


def swin_models():
    """name: export_models.models()'s tuple for the shifted-window transformer."""
    g = torch.Generator().manual_seed(em.SEED)
    img = lambda n: torch.randn(n, 3, 64, 64, generator=g)
    return {"swin_small": (swin, (img(1),), ["input"], (img(4),), {})}


def main():
    return em.export_apart("export_swin", __file__, swin_models(), sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
