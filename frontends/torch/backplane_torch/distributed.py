"""torch.distributed on Backplane devices: the "backplane" process group.

    import torch.distributed as dist
    import backplane.torch, backplane.torch.distributed
    backplane.torch.init("vendor_sim")
    dist.init_process_group("backplane", rank=r, world_size=w, init_method=...)
    model = torch.nn.parallel.DistributedDataParallel(model.to("privateuseone"))

Collectives run through Backplane's bp_comm_* API: the plugin's own
collectives where it has them (vendor_sim's shared memory), else Gloo over
TCP, staged through host memory. CPU tensors (DDP's metadata checks) get a
second communicator on Backplane's cpu backend. torch's Store carries the
bootstrap. See docs/distributed.md.
"""
import datetime

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, _create_work_from_future

import backplane.torch
from backplane import _torch

__all__ = ["ProcessGroupBackplane", "BACKEND"]

BACKEND = "backplane"

# bp_reduce_op_t
_OPS = {
    dist.ReduceOp.SUM: 0,
    dist.ReduceOp.PRODUCT: 1,
    dist.ReduceOp.MIN: 2,
    dist.ReduceOp.MAX: 3,
}
if hasattr(dist.ReduceOp, "AVG"):
    _OPS[dist.ReduceOp.AVG] = 4


def _op_code(op):
    for k, v in _OPS.items():
        if op == k:
            return v
    raise RuntimeError(f"backplane process group: reduce op {op} is not supported (SUM, PRODUCT, MIN, MAX, AVG)")


def _done(result):
    # Calls complete before they return (bp_comm_work_wait): torch gets a
    # completed Work whose future holds the result tensors.
    fut = torch.futures.Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


class ProcessGroupBackplane(ProcessGroup):
    """torch 1.13's ProcessGroup over Backplane communicators (one for the
    privateuseone device, one for CPU tensors, made on first use)."""

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        backplane.torch.init()  # the backend chosen earlier, or the default one
        self._store = store
        self._timeout_ms = int(timeout.total_seconds() * 1000) if timeout else 300000
        self._comms = {}
        self._device_comm()  # every rank joins now, as ProcessGroupGloo does

    def _comm(self, host):
        c = self._comms.get(host)
        if c is None:
            c = _torch._Comm(self._store, self.rank(), self.size(), self._timeout_ms,
                             "bp_pg_host" if host else "bp_pg_device", host)
            self._comms[host] = c
        return c

    def _device_comm(self):
        return self._comm(False)

    def _for(self, t):
        if t.device.type == "privateuseone":
            return self._device_comm()
        if t.device.type == "cpu":
            return self._comm(True)
        raise RuntimeError(f"backplane process group: tensors on {t.device} are not supported "
                           "(privateuseone or cpu)")

    def getBackendName(self):
        return BACKEND

    def engine(self):
        """The engine under the device communicator: "gloo" or the plugin's name."""
        return self._device_comm().engine()

    # ---- collectives (lists of one tensor, as torch's other backends take) ----

    def allreduce(self, tensors, opts=None):
        op = _op_code(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        for t in tensors:
            _torch._all_reduce(self._for(t), t, op).wait()
        return _done(tensors)

    def broadcast(self, tensors, opts):
        for t in tensors:
            _torch._broadcast(self._for(t), t, opts.rootRank).wait()
        return _done(tensors)

    def allgather(self, output_lists, input_tensors, opts=None):
        for outs, t in zip(output_lists, input_tensors):
            flat = torch.empty((len(outs),) + tuple(t.shape), dtype=t.dtype, device=t.device)
            _torch._all_gather(self._for(t), t.contiguous(), flat).wait()
            for i, o in enumerate(outs):
                o.copy_(flat[i])
        return _done(output_lists)

    def _allgather_base(self, output, input, opts=None):
        _torch._all_gather(self._for(input), input, output).wait()
        return _done([output])

    def reduce_scatter(self, outputs, input_lists, opts=None):
        op = _op_code(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        for out, ins in zip(outputs, input_lists):
            flat = torch.stack([i.contiguous() for i in ins])
            _torch._reduce_scatter(self._for(out), flat, out, op).wait()
        return _done(outputs)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        if output_split_sizes or input_split_sizes:
            raise RuntimeError("backplane process group: all_to_all with split sizes is not supported")
        _torch._all_to_all(self._for(input), input, output).wait()
        return _done([output])

    def send(self, tensors, dst, tag):
        for t in tensors:
            _torch._send(self._for(t), t, dst).wait()
        return _done(tensors)

    def recv(self, tensors, src, tag):
        for t in tensors:
            _torch._recv(self._for(t), t, src).wait()
        return _done(tensors)

    def barrier(self, opts=None):
        _torch._barrier(self._device_comm()).wait()
        return _done([])


def _create(store, rank, size, timeout):
    return ProcessGroupBackplane(store, rank, size, timeout)


if not hasattr(dist.Backend, BACKEND.upper()):
    dist.Backend.register_backend(BACKEND, _create)
