"""Backplane devices as PyTorch's PrivateUse1 device ("privateuseone").

    import torch, backplane.torch
    backplane.torch.init()                 # or init("opencl")
    x = torch.ones(2, 3, device="privateuseone")
    y = (x * 2).relu()                     # Backplane's dispatcher runs it
    backplane.torch.stats()                # per ATen operator: where it ran

Every ATen operator with a Backplane schema of the same name runs through
Backplane (the plugin's kernel, else Backplane's CPU fallback); the rest
runs in torch's CPU fallback, with copies. See docs/torch.md.
"""
import os

try:
    import torch  # noqa: F401  (the extension needs libtorch loaded first)
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("backplane.torch needs PyTorch: apt-get install python3-torch "
                      "(and libtorch-dev to build the bridge)") from e

import backplane
from backplane import _C

try:
    from backplane import _torch
except ImportError as e:
    raise ImportError("backplane.torch: the bridge extension (backplane/_torch) is not built; build Backplane "
                      "with libtorch-dev and python3-torch installed") from e

__all__ = ["backend", "device", "init", "reset_stats", "stats"]

_info = None


def _pick_backend():
    """BACKPLANE_TORCH_BACKEND, else the first non-CPU backend with a device."""
    env = os.environ.get("BACKPLANE_TORCH_BACKEND")
    if env:
        return env
    for b in backplane.backends():
        if b["name"] != "cpu" and b["device_count"] > 0:
            return b["name"]
    raise RuntimeError("backplane.torch.init: no backend other than cpu has a device; pass "
                       "backend='cpu' to run the bridge on the CPU backend")


def init(backend=None):
    """Makes `backend`'s devices torch's privateuseone:0..N-1.

    backend: a Backplane backend name ("vendor_sim", "opencl", "cpu"...);
    default BACKPLANE_TORCH_BACKEND, else the first non-CPU backend with a
    device. Calling again with the same backend does nothing; another
    backend raises RuntimeError (torch keeps one PrivateUse1 device per
    process). Returns a dict: backend, device_count, routed (how many ATen
    operators run through Backplane's dispatcher) and not_routed (operator
    -> why not).
    """
    global _info
    name = backend or (_info["backend"] if _info else _pick_backend())
    info = _torch.init(_C._context_address(), name)
    _info = info
    return info


def backend():
    """The Backplane backend behind privateuseone (init first)."""
    return _torch.backend()


def device(index=0):
    """torch.device("privateuseone", index)."""
    return torch.device("privateuseone", index)


def stats():
    """Per ATen operator: {"plugin", "backplane_fallback", "torch_fallback",
    "bytes_moved"}: calls that ran the plugin's kernel, Backplane's CPU
    fallback, or torch's CPU fallback, and the host<->device bytes they
    copied. Operators the bridge handles itself (copies, views, factories)
    are not listed."""
    return _torch.stats()


def reset_stats():
    """Zeroes stats()."""
    _torch.reset_stats()


# ---- Python gaps of torch 1.13 for a PrivateUse1 device ---------------------
# torch.save/torch.load: 1.13 knows only cpu/cuda/mps locations; a storage on
# privateuseone is saved through a CPU copy under the tag "privateuseone:N"
# and loaded back onto that device (or wherever map_location says).
def _location_tag(storage):
    if storage.device.type == "privateuseone":
        return "privateuseone:%d" % (storage.device.index or 0)
    return None


def _restore(storage, location):
    # 1.13 rebuilds a tensor with Tensor.set_(storage), which rejects a
    # privateuseone storage from Python: the storage stays on the host here
    # and _rebuild_tensor below moves it, once per storage, so that tensors
    # sharing a storage still share device memory.
    if not location.startswith("privateuseone"):
        return None
    host = storage.cpu()
    _pending[id(host)] = (host, location, None)
    return host


_pending = {}  # id(host storage) -> (host storage, location, its device copy); one torch.load
_rebuild_tensor = torch._utils._rebuild_tensor


def _rebuild_on_device(storage, storage_offset, size, stride):
    key = id(storage.untyped())
    if key not in _pending:
        return _rebuild_tensor(storage, storage_offset, size, stride)
    host, location, whole = _pending[key]
    if whole is None:
        whole = torch.empty(0, dtype=torch.uint8).set_(host).to(location)
        _pending[key] = (host, location, whole)
    return whole.view(storage.dtype).as_strided(size, stride, storage_offset)


torch._utils._rebuild_tensor = _rebuild_on_device
_torch_load = torch.load


def _load(*args, **kwargs):
    try:
        return _torch_load(*args, **kwargs)
    finally:
        _pending.clear()


_load.__doc__ = _torch_load.__doc__
torch.load = _load

torch.serialization.register_package(30, _location_tag, _restore)

# torch.save copies each storage with UntypedStorage.cpu(), whose 1.13
# storage-to-storage copy rejects privateuseone: the extension copies it.
_storage_cpu = torch.UntypedStorage.cpu


def _untyped_storage_cpu(self):
    if self.device.type != "privateuseone":
        return _storage_cpu(self)
    data = _torch._storage_bytes(self.data_ptr(), self.nbytes(), self.device.index or 0)
    return torch.UntypedStorage.from_buffer(data, dtype=torch.uint8)


torch.UntypedStorage.cpu = _untyped_storage_cpu

# copy.deepcopy: 1.13 copies a tensor through torch.UntypedStorage(size,
# device=...), which rejects privateuseone; a device tensor is cloned instead
# (views deep-copied together no longer share memory).
_tensor_deepcopy = torch.Tensor.__deepcopy__


def _deepcopy(self, memo):
    if self.device.type != "privateuseone" or type(self) is not torch.Tensor or not self.is_leaf:
        return _tensor_deepcopy(self, memo)
    if id(self) in memo:
        return memo[id(self)]
    with torch.no_grad():
        new = self.clone()
    new.requires_grad_(self.requires_grad)
    if self.grad is not None:
        new.grad = self.grad.__deepcopy__(memo)
    memo[id(self)] = new
    return new


torch.Tensor.__deepcopy__ = _deepcopy
