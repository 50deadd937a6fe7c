"""torch.<device name> (torch.backplane by default): the device module torch
looks up for a PrivateUse1 device, in the shape of torch.cuda.

Registered by backplane.torch.init() with torch._register_device_module.
Device arguments accept an index, "backplane:N", a torch.device or None (the
current device). Every function is thread-safe; streams and the current
device are per thread, as in torch.cuda. Errors are RuntimeError naming the
object (a stream of another device, an index past device_count()...).
"""
import contextlib
import os

import torch

from backplane import _torch

__all__ = [
    "Event", "Stream", "current_device", "device", "current_stream", "default_generators", "device_count",
    "empty_cache", "get_amp_supported_dtype", "get_rng_state", "initial_seed", "is_available",
    "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all", "max_memory_allocated",
    "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats", "reset_peak_memory_stats",
    "seed", "set_device", "set_rng_state", "stream", "synchronize",
]


def _name():
    return torch._C._get_privateuse1_backend_name()


def _index(device=None):
    """The device index of `device` (None: the current one)."""
    if device is None:
        return torch.accelerator.current_device_index()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != _name():
        raise RuntimeError("torch.%s: expected a %s device, got %s" % (_name(), _name(), device))
    return torch.accelerator.current_device_index() if device.index is None else device.index


def _device(device=None):
    return torch.device(_name(), _index(device))


def is_available():
    """True once backplane.torch.init() mapped at least one device."""
    return _torch.device_count() > 0


def is_initialized():
    return _torch.initialized()


def device_count():
    """Devices behind the PrivateUse1 slot (every backend init() was given)."""
    return _torch.device_count()


def current_device():
    """The calling thread's current device index."""
    return torch.accelerator.current_device_index()


def set_device(device):
    """Makes `device` the calling thread's current device."""
    torch.accelerator.set_device_index(_index(device))


class device:
    """Context manager that makes `device` the current device within the
    block (as torch.cuda.device); None changes nothing."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev = torch.accelerator.current_device_index()
            torch.accelerator.set_device_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0:
            torch.accelerator.set_device_index(self.prev)
        return False


def synchronize(device=None):
    """Waits for all work queued on every stream of `device`."""
    torch.accelerator.synchronize(_index(device))


class Stream(torch.Stream):
    """A Backplane stream of a device (bp_stream_create), as torch.cuda.Stream.

    `with s:` or `with torch.<name>.stream(s):` makes it current on this thread."""

    def __new__(cls, device=None, priority=0):
        return super().__new__(cls, device=_device(device), priority=priority)


class Event(torch.Event):
    """A Backplane event (bp_event_create), as torch.cuda.Event: record on a
    stream, wait from another, elapsed_time in milliseconds."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, device=None):
        return super().__new__(cls, device=_device(device), enable_timing=enable_timing, blocking=blocking,
                               interprocess=interprocess)


def current_stream(device=None):
    """The calling thread's current stream of `device`."""
    return torch.accelerator.current_stream(_index(device))


@contextlib.contextmanager
def stream(s):
    """Makes `s` the current stream of its device within the block (None: no change)."""
    if s is None:
        yield None
        return
    if s.device.type != _name():
        raise RuntimeError("torch.%s.stream: %r is a stream of another device type" % (_name(), s))
    prev = torch.accelerator.current_stream(s.device.index)
    torch.accelerator.set_stream(s)
    try:
        yield s
    finally:
        torch.accelerator.set_stream(prev)


# ---- Memory: Backplane's caching allocator's own statistics -----------------
def memory_allocated(device=None):
    """Bytes held by live tensors on `device` (rounded block sizes)."""
    return torch.accelerator.memory_allocated(_index(device))


def max_memory_allocated(device=None):
    """Peak of memory_allocated since start or reset_peak_memory_stats."""
    return torch.accelerator.max_memory_allocated(_index(device))


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the device, cached or in use."""
    return torch.accelerator.memory_reserved(_index(device))


def max_memory_reserved(device=None):
    return torch.accelerator.max_memory_reserved(_index(device))


def memory_stats(device=None):
    return torch.accelerator.memory_stats(_index(device))


def reset_peak_memory_stats(device=None):
    torch.accelerator.reset_peak_memory_stats(_index(device))


def empty_cache():
    """Returns every cached, unused block of every device to its backend."""
    torch.accelerator.empty_cache()


# ---- Random numbers: one default generator per device ----------------------
def _generators():
    return tuple(_torch.default_generator(i) for i in range(device_count()))


class _DefaultGenerators:
    """default_generators[i]: the torch.Generator of device i."""

    def __getitem__(self, i):
        return _torch.default_generator(i)

    def __len__(self):
        return device_count()

    def __iter__(self):
        return iter(_generators())


default_generators = _DefaultGenerators()


def manual_seed(seed, device=None):
    """Seeds the generator of `device` (torch.manual_seed seeds them all)."""
    _torch.default_generator(_index(device)).manual_seed(int(seed))


def manual_seed_all(seed):
    for g in _generators():
        g.manual_seed(int(seed))


def seed():
    """Seeds the current device's generator with a non-deterministic number."""
    _torch.default_generator(_index()).seed()


def initial_seed():
    return _torch.default_generator(_index()).initial_seed()


def get_rng_state(device=None):
    """The generator state of `device` (a CPU uint8 tensor)."""
    return _torch.default_generator(_index(device)).get_state()


def set_rng_state(new_state, device=None):
    _torch.default_generator(_index(device)).set_state(new_state)


_in_bad_fork = False


def _mark_bad_fork():
    """A child of fork() after init: the device's context, its threads and
    queues belong to the parent (torch.cuda marks its children the same way)."""
    global _in_bad_fork
    if _torch.initialized():
        _in_bad_fork = True


os.register_at_fork(after_in_child=_mark_bad_fork)


def _is_in_bad_fork():
    """True in a child of fork() made after backplane.torch.init(): device work
    there raises RuntimeError (FAILED_PRECONDITION, "cannot be used after
    fork()"); torch.multiprocessing's spawn start method avoids it."""
    return _in_bad_fork


# ---- Autocast ---------------------------------------------------------------
def get_amp_supported_dtype():
    """The dtypes torch.autocast may use on the device."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported():
    return True
