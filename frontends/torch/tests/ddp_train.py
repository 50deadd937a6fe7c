"""Trains a small CNN for 10 SGD steps on one shared batch and saves the
parameters after every step. With world size 1 it trains on the whole
batch; with more, it is one rank of DistributedDataParallel on the
"backplane" process-group backend (Gloo for CPU tensors:
"cpu:gloo,<device>:backplane") and trains on its slice of the batch. Run by
test_distributed.py:
    ddp_train.py BACKEND RANK WORLD STORE_FILE OUT_FILE
or with torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT:
torch's TCPStore carries the bootstrap), each rank writing OUT_FILE.rankN:
    RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 ddp_train.py BACKEND OUT_FILE
fsdp_train.py shares the model, the data and this command line.
"""
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

import backplane.torch
import backplane.torch.distributed as bpd

STEPS = 10
BATCH = 8
TIMEOUT = timedelta(seconds=60)  # every collective fails within it instead of hanging


def model():
    torch.manual_seed(0)
    m = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
        torch.nn.Linear(8 * 4 * 4, 10))
    return m


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(BATCH, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (BATCH,), generator=g)
    return x, y


def setup():
    """Parses the command line, picks the device and joins the process group
    (world size > 1). Returns (rank, world, device, out_file)."""
    if len(sys.argv) == 3:  # torchrun
        backend, rank, world = sys.argv[1], int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        init, out = "env://", f"{sys.argv[2]}.rank{rank}"
    else:
        backend, rank, world, store_file, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
        init = "file://" + store_file
    backplane.torch.init(backend)
    dev = backplane.torch.device(0)
    if world > 1:
        dist.init_process_group(bpd.backend_config(), init_method=init, rank=rank, world_size=world, timeout=TIMEOUT)
        pg = dist.distributed_c10d._get_default_group()
        print("backend", dist.get_backend(), "engine", pg._get_backend(dev).engine(), flush=True)
    return rank, world, dev, out


def shard(x, y, rank, world):
    per = BATCH // world
    return x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]


def train(net, x, y, snapshot):
    """STEPS SGD steps; returns {"losses": [...], "params": [snapshot() after each step]}."""
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    losses, params = [], []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        params.append(snapshot())
    return {"losses": losses, "params": params}


def main():
    rank, world, dev, out = setup()
    net = model().to(dev)
    x, y = data()
    if world > 1:
        net = torch.nn.parallel.DistributedDataParallel(net)
        x, y = shard(x, y, rank, world)
    result = train(net, x.to(dev), y.to(dev), lambda: [p.detach().to("cpu", copy=True) for p in net.parameters()])
    torch.save(result, out)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
