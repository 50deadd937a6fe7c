"""torch.distributed on Backplane devices: the "backplane" process-group backend.

    import torch, torch.distributed as dist
    import backplane.torch, backplane.torch.distributed as bpd
    backplane.torch.init("vendor_sim")          # the device is torch's "backplane"
    dist.init_process_group(bpd.backend_config(), rank=r, world_size=w, init_method=...)
    # backend_config() is "cpu:gloo,backplane:backplane": Gloo for CPU
    # tensors, this backend for the device's (plain "backplane" serves the
    # device only)
    model = torch.nn.parallel.DistributedDataParallel(model.to("backplane"))
    # or FSDP2: torch.distributed.fsdp.fully_shard(model)

The backend is a c10d Backend written in Python (torch 2.x lets Python
subclass torch._C._distributed_c10d.Backend), registered with
torch.distributed.Backend.register_backend for the PrivateUse1 device under
its current name (backplane.torch.init renames PrivateUse1, "backplane"
unless a vendor picks another). Collectives run through Backplane's
bp_comm_* API (the C++ half, process_group.cpp, turns tensors into
bp_tensor_t): the plugin's own collectives where it has them (vendor_sim's
shared memory), else Gloo over TCP, staged through host memory. Each call is
queued on the communicator's worker and returns a torch Work; wait() waits
for it. CPU tensors given to this backend (when it also serves "cpu") get a
second communicator on Backplane's cpu backend. torch's Store carries the
bootstrap. See docs/distributed.md.
"""
import datetime

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import Backend as _C10dBackend
from torch._C._distributed_c10d import Work as _C10dWork

import backplane.torch
from backplane import _torch

__all__ = ["BACKEND", "ProcessGroupBackplane", "backend_config", "device_type", "register"]

BACKEND = "backplane"

_OPS = {  # torch's reduce op -> bp_reduce_op_t
    dist.ReduceOp.SUM: 0,
    dist.ReduceOp.PRODUCT: 1,
    dist.ReduceOp.MIN: 2,
    dist.ReduceOp.MAX: 3,
    dist.ReduceOp.AVG: 4,
}


def device_type():
    """The device's name in torch: PrivateUse1's name once backplane.torch.init
    renamed it, else the name init will give it."""
    current = torch._C._get_privateuse1_backend_name()
    return current if current != "privateuseone" else backplane.torch.name()


def backend_config():
    """The init_process_group backend string for Gloo on CPU tensors and this
    backend on the device: "cpu:gloo,<device>:backplane"."""
    return "cpu:gloo,%s:%s" % (device_type(), BACKEND)


def _op_code(opts):
    op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
    for k, v in _OPS.items():
        if op == k:
            return v
    raise RuntimeError("backplane process group: reduce op %s is not supported (SUM, PRODUCT, MIN, MAX, AVG)" % op)


class _Work(_C10dWork):
    """The torch Work of one or more queued bp_comm calls. wait() waits for
    them (raising their error), then runs `after` (the copies of list
    outputs); the Backplane references on the tensors are dropped then."""

    def __init__(self, calls, result, after=None):
        super().__init__()
        self._calls = calls
        self._result = result
        self._after = after
        self._done = False

    def wait(self, timeout=None):
        if not self._done:
            for c in self._calls:
                c.wait()
            if self._after is not None:
                self._after()
            self._done = True
            self._calls = []
        return True

    def is_completed(self):
        if self._done:
            return True
        if self._after is not None:
            return False
        return all(c.is_completed() for c in self._calls)

    def is_success(self):
        return self._done

    def result(self):
        self.wait()
        return self._result

    def get_future(self):
        # DDP chains its communication hook on this future: it completes
        # once the calls did (bp_comm has no completion callback to hook).
        fut = torch.futures.Future()
        try:
            self.wait()
        except Exception as e:  # the future carries the call's error
            fut.set_exception(e)
        else:
            fut.set_result(self._result)
        return fut


class ProcessGroupBackplane(_C10dBackend):
    """A c10d Backend over Backplane communicators: one for the device (the
    device of the first device tensor it sees, or the process group's bound
    device), one for CPU tensors, each made on first use by every rank."""

    def __init__(self, store, rank, size, timeout, bound_device=None):
        super().__init__(rank, size)
        backplane.torch.init()  # the devices chosen earlier, or the default ones
        self._store = store
        self._timeout_ms = int(timeout.total_seconds() * 1000) if timeout else 300000
        self._comms = {}  # device index (-1: the host's cpu backend) -> _torch._Comm
        self._device_index = None  # the device the device communicator joined on
        if bound_device is not None and bound_device.type == device_type():
            self._comm_of_index(bound_device.index)  # every rank joins now, as NCCL's eager init

    # ---- communicators ----

    def _comm_of_index(self, index):
        c = self._comms.get(index)
        if c is None:
            if index >= 0 and self._device_index is not None and index != self._device_index:
                raise RuntimeError("backplane process group: this rank's communicator is on %s:%d; got a tensor "
                                   "on %s:%d (one device per rank, as NCCL)"
                                   % (device_type(), self._device_index, device_type(), index))
            c = _torch._Comm(self._store, self.rank(), self.size(), self._timeout_ms,
                             "bp_pg_host" if index < 0 else "bp_pg_device", index)
            self._comms[index] = c
            if index >= 0:
                self._device_index = index
        return c

    def _device_comm(self):
        index = self._device_index
        if index is None:  # the calling thread's current device
            acc = torch.accelerator.current_accelerator()
            index = torch.accelerator.current_device_index() if acc is not None and acc.type == device_type() else 0
        return self._comm_of_index(index)

    def _comm(self, *tensors):
        t = tensors[0]
        for u in tensors[1:]:
            if u.device != t.device:
                raise RuntimeError("backplane process group: tensors on %s and %s in one call" % (t.device, u.device))
        if t.device.type == device_type():
            index = t.device.index
            if index is None:
                index = self._device_index if self._device_index is not None else 0
            return self._comm_of_index(index)
        if t.device.type == "cpu":
            return self._comm_of_index(-1)
        raise RuntimeError("backplane process group: tensors on %s are not supported (%s or cpu)"
                           % (t.device, device_type()))

    def getBackendName(self):
        return BACKEND

    def engine(self):
        """The engine under the device communicator: "gloo" or the plugin's name."""
        return self._device_comm().engine()

    # ---- collectives ----

    def allreduce(self, tensors, opts=None):
        op = _op_code(opts)
        return _Work([_torch._all_reduce(self._comm(t), t, op) for t in tensors], tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors, opts):
        root = opts.rootRank
        if opts.rootTensor != 0:
            raise RuntimeError("backplane process group: broadcast takes one tensor per rank")
        return _Work([_torch._broadcast(self._comm(t), t, root) for t in tensors], tensors)

    def allgather(self, output_lists, input_tensors, opts=None):
        if len(output_lists) != len(input_tensors):
            raise RuntimeError("backplane process group: allgather got %d output lists for %d inputs"
                               % (len(output_lists), len(input_tensors)))
        calls, copies = [], []
        for outs, t in zip(output_lists, input_tensors):
            if len(outs) != self.size():
                raise RuntimeError("backplane process group: allgather needs %d outputs, got %d"
                                   % (self.size(), len(outs)))
            flat = torch.empty((len(outs),) + tuple(t.shape), dtype=t.dtype, device=t.device)
            calls.append(_torch._all_gather(self._comm(t, *outs), t, flat))
            copies.append((outs, flat))

        def after():
            for outs, flat in copies:
                for i, o in enumerate(outs):
                    o.copy_(flat[i])
        return _Work(calls, output_lists, after)

    def all_gather_single(self, output, input, opts=None):
        return _Work([_torch._all_gather(self._comm(input, output), input, output)], [output])

    _allgather_base = all_gather_single  # torch < 2.15's name

    def all_gather_single_coalesced(self, outputs, inputs, opts=None):
        return _Work([_torch._all_gather(self._comm(i, o), i, o) for o, i in _pairs(outputs, inputs)], outputs)

    allgather_into_tensor_coalesced = all_gather_single_coalesced

    def reduce_scatter(self, outputs, input_lists, opts=None):
        op = _op_code(opts)
        calls = []
        for out, ins in _pairs(outputs, input_lists):
            if len(ins) != self.size():
                raise RuntimeError("backplane process group: reduce_scatter needs %d inputs, got %d"
                                   % (self.size(), len(ins)))
            flat = torch.stack([i.contiguous() for i in ins])
            calls.append(_torch._reduce_scatter(self._comm(out, flat), flat, out, op))
        return _Work(calls, outputs)

    def reduce_scatter_single(self, output, input, opts=None):
        op = _op_code(opts)
        return _Work([_torch._reduce_scatter(self._comm(input, output), input, output, op)], [output])

    _reduce_scatter_base = reduce_scatter_single

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts=None):
        op = _op_code(opts)
        return _Work([_torch._reduce_scatter(self._comm(i, o), i, o, op) for o, i in _pairs(outputs, inputs)],
                     outputs)

    reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        for splits in (output_split_sizes, input_split_sizes):
            if splits and len(set(splits)) > 1:
                raise RuntimeError("backplane process group: all_to_all with unequal split sizes is not supported")
        return _Work([_torch._all_to_all(self._comm(input, output), input, output)], [output])

    alltoall_base = all_to_all_single

    def send(self, tensors, dst, tag):
        return _Work([_torch._send(self._comm(t), t, dst) for t in tensors], tensors)

    def recv(self, tensors, src, tag):
        return _Work([_torch._recv(self._comm(t), t, src) for t in tensors], tensors)

    def barrier(self, opts=None):
        return _Work([_torch._barrier(self._device_comm())], [])


def _pairs(a, b):
    if len(a) != len(b):
        raise RuntimeError("backplane process group: %d outputs for %d inputs" % (len(a), len(b)))
    return zip(a, b)


def _create(opts, backend_options=None):
    """Backend.register_backend's creator (extended_api): opts is torch's
    _DistributedBackendOptions (store, group_rank, group_size, timeout...)."""
    pg = opts.process_group
    bound = pg.bound_device_id if pg is not None else None
    return ProcessGroupBackplane(opts.store, opts.group_rank, opts.group_size, opts.timeout, bound)


_registered_for = None


def register():
    """Registers the "backplane" backend for the device under its current
    name (done at import and again by backplane.torch.init, which may rename
    the device); returns that name."""
    global _registered_for
    name = device_type()
    if name != _registered_for:
        if _registered_for is not None and dist.Backend.default_device_backend_map.get(_registered_for) == BACKEND:
            del dist.Backend.default_device_backend_map[_registered_for]  # the name init replaced
        dist.Backend.register_backend(BACKEND, _create, extended_api=True, devices=[name])
        _registered_for = name
    return name


register()

# backplane.torch.init may rename PrivateUse1 after this import (a vendor's
# name): the backend is registered again under the name init gave.
if not getattr(backplane.torch.init, "_registers_distributed", False):
    _init = backplane.torch.init

    def _init_and_register(*args, **kwargs):
        info = _init(*args, **kwargs)
        register()
        return info

    _init_and_register.__doc__ = _init.__doc__
    _init_and_register.__wrapped__ = _init
    _init_and_register._registers_distributed = True
    backplane.torch.init = _init_and_register
