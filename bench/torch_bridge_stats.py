"""backplane.torch.stats() after one SGD step of torchvision's resnet18
(batch 8, 3x64x64) on the backplane device, printed as the markdown table of
docs/torch.md. Usage:

    PYTHONPATH=build/default/python /opt/backplane/venv/bin/python bench/torch_bridge_stats.py --backend vendor_sim
"""
import argparse

import torch
import torchvision

import backplane.torch as bt
from torch_bridge_bench import print_stats_table  # bench/, beside this script


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default=None, help="Backplane backend behind the backplane device")
    args = ap.parse_args()
    bt.init(args.backend)
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).to("backplane")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 3, 64, 64).to("backplane")
    y = torch.randint(0, 10, (8,)).to("backplane")
    bt.reset_stats()
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    print_stats_table()

if __name__ == "__main__":
    main()
