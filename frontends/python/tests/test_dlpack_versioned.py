"""DLPack 1.x (versioned capsules) with numpy 2.x and torch 2.x: zero-copy
both ways, the versioned path really taken, read-only tensors kept read-only,
a bad major version refused, and a negative control for the zero-copy check.

Backplane's own data pointer is read from the capsule it exports (ctypes on
the DLManagedTensorVersioned: data is the first field of dl_tensor, at 32).
"""
import ctypes

import numpy as np
import pytest

import backplane
from backplane import ops

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]

READ_ONLY, IS_COPIED = 1, 2


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _Versioned(ctypes.Structure):
    """The head of DLManagedTensorVersioned, up to dl_tensor.data."""
    _fields_ = [("version", _Version), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("data", ctypes.c_void_p)]


def capsule_name(cap):
    return _get_name(cap).decode()


def versioned_struct(cap):
    """The DLManagedTensorVersioned of an unused 'dltensor_versioned' capsule."""
    return _Versioned.from_address(_get_pointer(cap, b"dltensor_versioned"))


def bp_data_ptr(t):
    """Backplane's address of t's memory, from a versioned export of it."""
    cap = t.__dlpack__(max_version=(1, 0))
    return versioned_struct(cap).data  # the capsule's deleter releases the export


def np_ptr(a):
    return a.__array_interface__["data"][0]


def same_memory(p, q):
    """The zero-copy check every test below uses (and the control shows failing)."""
    return p == q


class Recorder:
    """Passes __dlpack__ through, recording the keywords and the capsule's name."""

    def __init__(self, t):
        self.t, self.kwargs, self.names = t, None, []

    def __dlpack__(self, **kwargs):
        self.kwargs = kwargs
        cap = self.t.__dlpack__(**kwargs)
        self.names.append(capsule_name(cap))
        return cap

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_capsule_names_and_struct():
    t = backplane.tensor(np.arange(4, dtype=np.float32))
    assert capsule_name(t.__dlpack__()) == "dltensor"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    cap = t.__dlpack__(max_version=(1, 2))
    assert capsule_name(cap) == "dltensor_versioned"
    s = versioned_struct(cap)
    assert (s.version.major, s.version.minor) == (1, 0) and s.flags == 0
    u = backplane.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor_versioned"
    assert same_memory(bp_data_ptr(u), bp_data_ptr(t))
    with pytest.raises(backplane.Error, match="unused DLPack capsule"):
        backplane.from_dlpack(cap)


def test_numpy_to_backplane_versioned_zero_copy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    rec = Recorder(a)
    t = backplane.from_dlpack(rec)
    assert rec.kwargs == {"max_version": (1, 0)} and rec.names == ["dltensor_versioned"]
    assert same_memory(bp_data_ptr(t), np_ptr(a))
    assert not t.is_read_only
    a[1, 2] = 42.0
    assert t.numpy()[1, 2] == 42.0
    ops.mul_(t, backplane.tensor(np.full((2, 3), 2, np.float32)))  # a write through Backplane
    assert a[1, 2] == 84.0


def test_backplane_to_numpy_versioned_zero_copy():
    t = backplane.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    rec = Recorder(t)
    v = np.from_dlpack(rec)
    assert rec.kwargs["max_version"] >= (1, 0) and rec.names == ["dltensor_versioned"]
    assert same_memory(np_ptr(v), bp_data_ptr(t))
    assert v.flags.writeable
    v[0, 0] = -1.0
    assert t.numpy()[0, 0] == -1.0


def test_torch_both_ways_versioned_zero_copy():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    rec = Recorder(x)
    t = backplane.from_dlpack(rec)
    assert rec.names == ["dltensor_versioned"]
    assert same_memory(bp_data_ptr(t), x.data_ptr())
    rec_bp = Recorder(t)
    y = torch.from_dlpack(rec_bp)
    assert rec_bp.kwargs["max_version"] >= (1, 0) and rec_bp.names == ["dltensor_versioned"]
    assert same_memory(y.data_ptr(), x.data_ptr())
    y[0, 1] = -7.0  # one memory: torch's write shows through Backplane and x
    assert x[0, 1].item() == -7.0 and t.numpy()[0, 1] == -7.0
    r = ops.add(t, t)
    assert torch.equal(torch.from_dlpack(r), x + x)


def test_read_only_numpy_array_stays_read_only():
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    cap = a.__dlpack__(max_version=(1, 0))
    assert versioned_struct(cap).flags & READ_ONLY
    t = backplane.from_dlpack(cap)
    assert t.is_read_only and same_memory(bp_data_ptr(t), np_ptr(a))
    assert t.numpy().tolist() == [0, 1, 2, 3]  # reading is fine
    other = backplane.tensor(np.ones(4, np.float32))
    with pytest.raises(backplane.Error, match=r"add_\.Tensor: argument 'self' is a read-only tensor") as e:
        ops.add_(t, other)
    assert e.value.status == "INVALID_ARGUMENT"
    with pytest.raises(backplane.Error, match=r"argument 'out' is a read-only tensor"):
        ops.add(other, other, out=t)
    with pytest.raises(backplane.Error, match=r"copy_: argument 'self' is a read-only tensor"):
        ops.copy_(t, other)
    assert a.tolist() == [0, 1, 2, 3]
    # Handed on, it stays read-only: numpy gets a read-only array, and a
    # legacy capsule (which cannot say so) is refused.
    assert versioned_struct(t.__dlpack__(max_version=(1, 0))).flags & READ_ONLY
    assert not np.from_dlpack(t).flags.writeable
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()
    # A copy is writable.
    c = t.__dlpack__(max_version=(1, 0), copy=True)
    assert versioned_struct(c).flags == IS_COPIED


def test_writable_refuses_a_read_only_array():
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    with pytest.raises(backplane.Error, match="read-only") as e:
        backplane.from_dlpack(a, writable=True)
    assert e.value.status == "INVALID_ARGUMENT"
    cap = a.__dlpack__(max_version=(1, 0))
    with pytest.raises(backplane.Error, match="read-only"):
        backplane.from_dlpack(cap, writable=True)
    assert capsule_name(cap) == "dltensor_versioned"  # refused before it was consumed
    b = np.arange(4, dtype=np.float32)
    assert not backplane.from_dlpack(b, writable=True).is_read_only


def test_bad_major_version_is_refused():
    t = backplane.tensor(np.arange(3, dtype=np.float32))
    cap = t.__dlpack__(max_version=(1, 0))
    s = versioned_struct(cap)
    s.version.major, s.version.minor = 2, 5
    with pytest.raises(backplane.Error, match=r"DLPack version 2\.5 is not supported") as e:
        backplane.from_dlpack(cap)
    assert e.value.status == "INVALID_ARGUMENT"
    assert capsule_name(cap) == "dltensor_versioned"  # not consumed: its destructor frees it


def test_legacy_producer_fallback():
    class Legacy:  # __dlpack__ without max_version: from_dlpack retries without it
        def __init__(self, t):
            self.t, self.calls = t, 0

        def __dlpack__(self, stream=None):
            self.calls += 1
            return self.t.__dlpack__()

    src = backplane.tensor(np.arange(3, dtype=np.int64))
    leg = Legacy(src)
    t = backplane.from_dlpack(leg)
    assert leg.calls == 1 and same_memory(bp_data_ptr(t), bp_data_ptr(src))


def test_copy_and_dl_device_arguments():
    t = backplane.tensor(np.arange(4, dtype=np.float32))
    assert versioned_struct(t.__dlpack__(max_version=(1, 0), copy=False)).data == bp_data_ptr(t)
    assert capsule_name(t.__dlpack__(max_version=(1, 0), dl_device=(1, 0))) == "dltensor_versioned"
    with pytest.raises(BufferError, match=r"dl_device \(2, 0\)"):
        t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    v = np.from_dlpack(t, copy=True)
    v[0] = 100.0
    assert t.numpy()[0] == 0.0


def test_negative_control_a_copy_fails_the_zero_copy_check():
    a = np.arange(4, dtype=np.float32)
    t = backplane.from_dlpack(a)
    copied = t.__dlpack__(max_version=(1, 0), copy=True)
    s = versioned_struct(copied)
    assert s.flags == IS_COPIED
    assert not same_memory(s.data, np_ptr(a))
    c = backplane.from_dlpack(copied)
    assert not same_memory(bp_data_ptr(c), np_ptr(a))
    assert not same_memory(np_ptr(np.array(a, copy=True)), np_ptr(a))
    a[0] = 9.0  # and the copy does not see the write
    assert c.numpy()[0] == 0.0 and t.numpy()[0] == 9.0
