"""ddp_train.py's training with FSDP2 (torch.distributed.fsdp.fully_shard) on
the "backplane" process-group backend: each convolution and the whole model
are sharded over a 1-D device mesh of the ranks (parameters all-gathered
before use, gradients reduce-scattered with AVG). Saves the full parameters
(DTensor.full_tensor) after every step. Same command line as ddp_train.py;
with world size 1 it trains the plain model on the whole batch.
"""
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

import ddp_train


def main():
    rank, world, dev, out = ddp_train.setup()
    net = ddp_train.model().to(dev)
    x, y = ddp_train.data()
    if world > 1:
        mesh = init_device_mesh(dev.type, (world,))
        for layer in (net[0], net[3]):
            fully_shard(layer, mesh=mesh)
        fully_shard(net, mesh=mesh)
        x, y = ddp_train.shard(x, y, rank, world)

        def snapshot():  # the full parameters (an all-gather per parameter, on every rank)
            return [p.full_tensor().detach().to("cpu", copy=True) for p in net.parameters()]
    else:
        def snapshot():
            return [p.detach().to("cpu", copy=True) for p in net.parameters()]
    result = ddp_train.train(net, x.to(dev), y.to(dev), snapshot)
    torch.save(result, out)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
