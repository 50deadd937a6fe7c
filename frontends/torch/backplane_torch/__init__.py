"""Backplane devices as a PyTorch 2.x device (PrivateUse1, renamed).

    import torch, backplane.torch
    backplane.torch.init("vendor_sim")           # or init(["vendor_sim", "opencl"])
    x = torch.ones(2, 3, device="backplane")     # or x.backplane()
    y = (x * 2).relu()                           # Backplane's dispatcher runs it
    torch.backplane.synchronize()                # the device module (as torch.cuda)
    backplane.torch.stats()                      # per ATen operator: where it ran

Every ATen operator with a Backplane schema of the same name runs through
Backplane (the plugin's kernel, else Backplane's CPU fallback); the rest run
in torch's CPU fallback. torch.accelerator, torch.Stream/torch.Event,
torch.manual_seed, pin_memory and torch.autocast work on the device. See
docs/torch.md for the supported torch versions.

torch.compile(model, backend="backplane") compiles for the device (the
backend is registered at import; see backplane.torch.compiler and
compile_report()).
"""
import os

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("backplane.torch needs PyTorch 2.x: pip install -r requirements.txt "
                      "(or pip install torch)") from e

from backplane.torch._version import BUILT_WITH_TORCH, MIN_TORCH


def _version_tuple(v):
    return tuple(int(p) for p in v.split("+")[0].split(".")[:2])


if _version_tuple(torch.__version__) < _version_tuple(MIN_TORCH):
    raise ImportError("backplane.torch supports torch %s or newer (built with %s); found torch %s"
                      % (MIN_TORCH, BUILT_WITH_TORCH, torch.__version__))

import backplane  # noqa: E402
from backplane import _C  # noqa: E402

try:
    from backplane import _torch
except ImportError as e:
    raise ImportError("backplane.torch: the bridge extension (backplane/_torch) did not load with torch %s "
                      "(built with torch %s; rebuild Backplane in this environment): %s"
                      % (torch.__version__, BUILT_WITH_TORCH, e)) from e

from backplane.torch import device_module as _device_module  # noqa: E402
from backplane.torch import compiler as _compiler  # noqa: E402
from backplane.torch.compiler import compile_report, reset_compile_report  # noqa: E402,F401

__all__ = ["DEFAULT_NAME", "backend", "backends", "compile_report", "device", "init", "name",
           "reset_compile_report", "reset_stats", "stats"]

DEFAULT_NAME = "backplane"
_info = None
_name = None


def _pick_backends():
    """BACKPLANE_TORCH_BACKEND (a comma list), else the first non-CPU backend with a device."""
    env = os.environ.get("BACKPLANE_TORCH_BACKEND")
    if env:
        return [b for b in env.split(",") if b]
    for b in backplane.backends():
        if b["name"] != "cpu" and b["device_count"] > 0:
            return [b["name"]]
    raise RuntimeError("backplane.torch.init: no backend other than cpu has a device; pass "
                       "backends='cpu' to run the bridge on the CPU backend")


def _claim(name):
    """Renames PrivateUse1 to `name` and registers the device module, or
    raises naming whoever holds the slot already."""
    current = torch._C._get_privateuse1_backend_name()
    if current not in ("privateuseone", name):
        raise RuntimeError("backplane.torch.init: torch's PrivateUse1 device is already claimed as '%s' "
                           "(by another package, or an earlier init with that name); it cannot become '%s'"
                           % (current, name))
    if _torch.hooks_claimed_elsewhere():
        raise RuntimeError("backplane.torch.init: another package registered torch's PrivateUse1 hooks "
                           "(device '%s'); one process holds one PrivateUse1 backend" % current)
    mod = getattr(torch, name, None)
    if mod is not None and mod is not _device_module:
        raise RuntimeError("backplane.torch.init: torch.%s already exists (%r); pick another name" % (name, mod))
    if current != name:
        torch.utils.rename_privateuse1_backend(name)
    if mod is None:
        torch._register_device_module(name, _device_module)
        torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True,
                                                             for_packed_sequence=True, for_storage=True)


def init(backends=None, name=None):
    """Puts the devices of `backends` behind torch's device `name`.

    backends: a Backplane backend name or a list of them ("vendor_sim",
    ["vendor_sim", "opencl"]); their devices become name:0..N-1 in that
    order. Default: BACKPLANE_TORCH_BACKEND (a comma list), else the first
    non-CPU backend with a device. name: the device's name in torch
    (default "backplane"; a vendor may choose its own, e.g. "myaccel");
    torch.<name> is the device module. Calling again with the same arguments
    does nothing; other ones raise RuntimeError (torch keeps one PrivateUse1
    device per process), as does a PrivateUse1 slot another package claimed.
    Returns a dict: backends, device_count, devices ((backend, index) per
    torch index), routed (how many ATen operators run through Backplane's
    dispatcher), routed_ops (their names, "add.Tensor"), native_ops (the
    ATen operators the bridge implements itself) and not_routed (operator ->
    why not).
    """
    global _info, _name
    if isinstance(backends, str):
        backends = [backends]
    backends = list(backends) if backends else (_info["backends"] if _info else _pick_backends())
    name = name or _name or DEFAULT_NAME
    if _name is not None and name != _name:
        raise RuntimeError("backplane.torch.init: already initialized as device '%s'; cannot rename it to '%s'"
                           % (_name, name))
    _claim(name)
    _info = _torch.init(_C._context_address(), backends)
    _name = name
    return _info


def name():
    """The device's name in torch ("backplane" unless init was given another)."""
    return _name or DEFAULT_NAME


def backends():
    """The Backplane backends behind the device, in init's order."""
    return list(_torch.backends())


def backend():
    """The first Backplane backend behind the device (init first)."""
    return _torch.backends()[0]


def device(index=0):
    """torch.device(name(), index)."""
    return torch.device(name(), index)


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


_compiler.register()
