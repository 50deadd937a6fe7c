"""Backplane for Python: devices, tensors, DLPack exchange and every operator.

    import numpy as np, backplane
    x = backplane.tensor(np.ones((2, 3), np.float32), device="cpu")
    y = backplane.ops.add(x, x, alpha=2)
    y.numpy()

See docs/python.md. One Backplane context per process, created on import with
plugin discovery (BACKPLANE_PLUGINS, BACKPLANE_PLUGIN_PATH, then the plugin
directory next to libbackplane), as bp-info does.
"""
from . import _C
from . import ops
from ._C import Error, Tensor

__all__ = ["Device", "Error", "Tensor", "backends", "device", "devices", "empty", "from_dlpack", "load_errors",
           "ops", "set_kernel_masked", "stats", "tensor", "version"]

# Error is created by _C; give it the documentation users read.
Error.__doc__ = """A Backplane call failed. A RuntimeError with

    .status   the bp_status_t name, e.g. 'INVALID_ARGUMENT', 'OUT_OF_RANGE'
    .message  Backplane's message (bp_last_error_message), naming the
              operator and argument where there is one.
"""


def _no_new(cls, *args, **kwargs):
    raise TypeError("backplane.Tensor is not made directly: use backplane.tensor(), backplane.empty() or "
                    "backplane.from_dlpack()")


# A Tensor made by __new__ alone would hold no native tensor; _C creates its
# Tensors without calling __new__, so this only closes that door.
Tensor.__new__ = staticmethod(_no_new)


class Device:
    """One device as bp-info lists it: backend name, index and properties.

    Attributes: backend, index, name, vendor, driver_version, device_type
    (the DLPack device type name, 'kDLCPU'), total_memory_bytes (0: unknown),
    capabilities (list of 'fp64', 'fp16', 'bf16', 'unified'), compute_units,
    alignment_bytes. str(device) is 'backend:index', what device= arguments take.
    """

    def __init__(self, props):
        self.__dict__.update(props)

    def __str__(self):
        return "%s:%d" % (self.backend, self.index)

    def __repr__(self):
        return "backplane.Device(%r, name=%r, memory=%d, caps=%s)" % (
            str(self), self.name, self.total_memory_bytes, ",".join(self.capabilities) or "-")

    def __eq__(self, other):
        return isinstance(other, Device) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def version():
    """Backplane's version string, e.g. '1.3.0'."""
    return _C.version()


def backends():
    """Every loaded backend: a list of dicts with name, version, plugin_path,
    abi_version, device_type, device_count and no_device_reason (None when it
    has devices)."""
    return _C.backends()


def devices():
    """Every device of every loaded backend, a list of Device, cpu:0 first."""
    return [Device(p) for p in _C.devices()]


def device(spec):
    """The Device named by `spec` ('cpu', 'cpu:0', 'opencl:1', or a Device).

    Raises Error: NOT_FOUND for an unknown backend; OUT_OF_RANGE for an index
    past the backend's device count (the message gives the count).
    """
    return Device(_C.device_properties(str(spec)))


def _canonical(spec):
    """'cpu' -> 'cpu:0', checking that the device exists."""
    return str(device(spec))


def load_errors():
    """What plugin discovery reported at import (files that failed to load)."""
    return _C.load_errors()


def _numpy():
    import numpy
    return numpy


def tensor(data, device="cpu", dtype=None):
    """A new Tensor on `device` holding a copy of `data`.

    data: a numpy array, or anything numpy.asarray takes (nested lists,
    scalars). dtype: a numpy dtype or name to convert to first. The copy is
    C-contiguous whatever the input's strides. Raises Error INVALID_ARGUMENT
    for a dtype Backplane lacks (complex, uint16, ...).
    """
    np = _numpy()
    arr = np.asarray(data, dtype=dtype)
    if not arr.flags.c_contiguous:  # not ascontiguousarray: it makes 0-dim arrays 1-dim
        arr = arr.copy(order="C")
    return _C.from_host(arr, str(device))


def empty(shape, dtype="float32", device="cpu"):
    """A new uninitialized contiguous Tensor of `shape` (tuple of ints)."""
    return _C.empty(list(shape), str(_numpy().dtype(dtype)) if dtype != "bfloat16" else dtype, str(device))


def from_dlpack(obj, device=None, *, writable=False):
    """A Tensor sharing `obj`'s memory (zero-copy), by the DLPack protocol.

    obj: anything with __dlpack__ (numpy arrays, torch tensors,
    backplane.Tensor) or an unused DLPack capsule named 'dltensor_versioned'
    (DLPack 1.x) or 'dltensor' (DLPack 0.6, e.g. torch.utils.dlpack.to_dlpack).
    __dlpack__ is asked for a versioned capsule (max_version=(1, 0)); a
    producer that does not take max_version (TypeError) is asked again
    without it. The capsule is consumed: renamed 'used_dltensor_versioned'
    or 'used_dltensor', and the producer's deleter runs when the last
    Backplane reference goes. obj's memory must be on a device of a loaded
    backend (numpy and CPU torch tensors are on cpu:0). With `device`, the
    result is copied there unless it is there already (then still zero-copy).

    A read-only DLPack 1.x tensor (a numpy array with flags.writeable False)
    gives a read-only Tensor (Tensor.is_read_only): an operator that would
    write it (in place, out=, copy_) raises Error INVALID_ARGUMENT naming the
    operator and the argument. writable=True refuses such a tensor instead
    (Error INVALID_ARGUMENT), before consuming the capsule.

    Raises Error INVALID_ARGUMENT for a used capsule, a DLPack major version
    other than 1, an unsupported dtype or layout; NOT_FOUND when no backend
    holds obj's device.
    """
    if hasattr(obj, "__dlpack__"):
        try:
            cap = obj.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer older than the array API's max_version
            cap = obj.__dlpack__()
    else:
        cap = obj
    t = _C.from_capsule(cap, writable)
    if device is not None:
        target = _canonical(device)
        if target != t.device:
            t = t.to(target)
    return t


def set_kernel_masked(op, backend, masked=True):
    """Masks (True) or restores (False) the kernel `backend` registered for
    operator `op` (a Backplane schema name, "relu" or "add.Tensor"), as
    bp_op_set_kernel_masked in backplane.h: while masked, calls of `op` (and
    its in-place and out= variants) on that backend's devices take the
    backend's fallback or the CPU fallback, and stats() counts them as
    fallbacks. For testing a backend's fallback path and comparing its kernel
    with the CPU's without rebuilding the plugin. Process-wide (the one
    context), lasts until restored; safe while other threads call operators.

    Raises backplane.Error: NOT_FOUND (no such operator or backend),
    INVALID_ARGUMENT (the cpu backend, whose kernels are the CPU fallback).
    """
    _C.set_kernel_masked(op, backend, bool(masked))


def stats():
    """Dispatch and transfer counters per backend name, since the process began.

    Each value is a dict: native, fallback, cast (calls summed over all
    operators by route: the backend's kernel, the CPU fallback, or the
    backend's kernel after casts by the core); ops ({operator: {native,
    fallback, cast}} for non-zero ones); host_to_device_count/_bytes,
    device_to_host_count/_bytes, device_to_device_count/_bytes, cast_bytes.
    """
    return _C.stats()
