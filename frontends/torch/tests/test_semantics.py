"""torch's semantics kept through the bridge (issue 42 items 5, 6, 7, 10):
each case is the OpInfo sample (or the issue's example) that found it,
compared with torch on the CPU."""
import os
import subprocess
import sys

import pytest
import torch

PARTIAL = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location"


# Item 10: a write whose input partly overlaps it raises as torch does (the
# bridge gives each argument a storage of its own; Backplane compares memory).
@pytest.mark.parametrize("case", ["add_", "neg_out", "mul_"])
def test_partial_overlap_raises_like_torch(dev, case):
    def run(device):
        x = torch.arange(6.0, device=device)
        if case == "add_":
            x[1:].add_(x[:-1])
        elif case == "neg_out":
            torch.neg(x[:-1], out=x[1:])
        else:
            x[:4].mul_(x[2:])
        return x
    with pytest.raises(RuntimeError, match=PARTIAL):
        run("cpu")
    with pytest.raises(RuntimeError, match=PARTIAL):
        run(dev)


def test_full_alias_and_disjoint_views_stay_allowed(dev):
    x = torch.arange(6.0, device=dev)
    x.add_(x)  # the exact alias: allowed, as in torch
    x[:3].add_(x[3:])  # disjoint views of one storage
    assert x.cpu().tolist() == [6.0, 10.0, 14.0, 6.0, 8.0, 10.0]
