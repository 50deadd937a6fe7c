import numpy as np
import pytest

import backplane

DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int32", "int64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_round_trip(dev, dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    t = backplane.tensor(a, device=dev)
    assert t.shape == (2, 3, 4)
    assert t.dtype == dtype
    assert t.device == dev
    b = t.numpy()
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(a, b)
    b[0, 0, 0] = 1  # a copy: the tensor is untouched
    np.testing.assert_array_equal(t.numpy(), a)


def test_non_contiguous_input_and_scalars():
    a = np.arange(12, dtype=np.float32).reshape(3, 4).T
    np.testing.assert_array_equal(backplane.tensor(a).numpy(), a)
    z = backplane.tensor(np.float64(2.5))
    assert z.shape == () and z.numpy() == 2.5


def test_unsupported_dtype_raises():
    with pytest.raises(backplane.Error) as e:
        backplane.tensor(np.zeros(2, np.complex64))
    assert e.value.status == "INVALID_ARGUMENT" and "complex64" in e.value.message


def test_to_device(dev):
    a = np.arange(6, dtype=np.float32)
    t = backplane.tensor(a).to(dev)
    assert t.device == dev
    np.testing.assert_array_equal(t.to("cpu").numpy(), a)


def test_dlpack_numpy_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = backplane.from_dlpack(a)
    assert t.shape == (2, 3) and t.device == "cpu:0"
    assert t.__dlpack_device__() == (1, 0)
    v = np.from_dlpack(t)  # zero-copy view of the same memory
    np.testing.assert_array_equal(v, a)
    a[1, 2] = 42.0
    assert v[1, 2] == 42.0 and t.numpy()[1, 2] == 42.0


def test_dlpack_capsule_rules():
    t = backplane.tensor(np.ones(3, np.float32))
    cap = t.__dlpack__()
    u = backplane.from_dlpack(cap)
    np.testing.assert_array_equal(u.numpy(), np.ones(3))
    with pytest.raises(backplane.Error) as e:  # a capsule is consumed once
        backplane.from_dlpack(cap)
    assert e.value.status == "INVALID_ARGUMENT"
    del cap
    unused = t.__dlpack__()
    del unused  # dropped unconsumed: its deleter releases the reference
    np.testing.assert_array_equal(t.numpy(), np.ones(3))


def test_from_dlpack_with_device(dev):
    a = np.arange(4, dtype=np.int64)
    t = backplane.from_dlpack(a, device=dev)
    assert t.device == dev
    np.testing.assert_array_equal(t.numpy(), a)


def test_dlpack_torch_both_ways():
    torch = pytest.importorskip("torch")
    from torch.utils import dlpack
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = backplane.from_dlpack(dlpack.to_dlpack(x))
    assert t.shape == (2, 3) and t.dtype == "float32"
    y = dlpack.from_dlpack(t)
    y[0, 1] = -7.0  # one memory: torch's write shows through Backplane and x
    assert x[0, 1].item() == -7.0 and t.numpy()[0, 1] == -7.0
    r = backplane.ops.add(t, t)
    assert torch.equal(dlpack.from_dlpack(r), x + x)
    t2 = backplane.from_dlpack(x)  # torch tensors have __dlpack__ too
    assert t2.numpy()[0, 1] == -7.0


def test_bad_inputs_raise_not_crash():
    with pytest.raises((backplane.Error, TypeError, AttributeError)):
        backplane.from_dlpack(None)
    with pytest.raises(backplane.Error):
        backplane.from_dlpack(object.__new__(type("NoCap", (), {"__dlpack__": lambda self: 3})))
    with pytest.raises(TypeError):
        backplane.Tensor()
    with pytest.raises(TypeError):
        backplane.Tensor.__new__(backplane.Tensor)
    with pytest.raises(backplane.Error) as e:
        backplane.from_dlpack(np.ones(3, np.complex64))
    assert e.value.status == "INVALID_ARGUMENT"
    x = backplane.tensor(np.ones(3, np.float32))
    with pytest.raises(backplane.Error) as e:
        backplane.ops.sum(x, [2**70])
    assert e.value.status == "OUT_OF_RANGE" and "'dim'" in e.value.message
