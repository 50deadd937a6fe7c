import numpy as np
import pytest

import backplane
from backplane import ops

rng = np.random.default_rng(0)


def T(a, dev):
    return backplane.tensor(a, device=dev)


def test_add_with_alpha_and_defaults(dev):
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(ops.add(T(a, dev), T(b, dev), alpha=2.5).numpy(), a + 2.5 * b, rtol=1e-5)
    np.testing.assert_allclose(ops.add(T(a, dev), T(b, dev)).numpy(), a + b, rtol=1e-5)
    np.testing.assert_allclose(ops.sub(T(a, dev), T(b, dev), alpha=2).numpy(), a - 2 * b, rtol=1e-5)


def test_matmul_softmax(dev):
    a, b = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(ops.matmul(T(a, dev), T(b, dev)).numpy(), a @ b, rtol=1e-4, atol=1e-5)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(ops.softmax(T(a, dev), 1).numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(ops.softmax(T(a, dev), dim=-1).numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_keyword_args_and_reductions(dev):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(ops.sum(T(a, dev), dim=[1], keepdim=True).numpy(), a.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(ops.sum(T(a, dev), [2]).numpy(), a.sum(2), rtol=1e-5)
    vals, idx = ops.topk(T(a, dev), 2)
    np.testing.assert_allclose(vals.numpy(), -np.sort(-a, axis=-1)[..., :2], rtol=1e-6)
    assert idx.dtype == "int64"


def test_out_variant(dev):
    a, b = np.ones((2, 2), np.float32), np.full((2, 2), 3, np.float32)
    out = T(np.zeros((2, 2), np.float32), dev)
    r = ops.add(T(a, dev), T(b, dev), alpha=2, out=out)
    assert r is out
    np.testing.assert_array_equal(out.numpy(), a + 2 * b)


def test_out_unchanged_on_error(dev):
    out = T(np.full((2, 2), 9, np.float32), dev)
    with pytest.raises(backplane.Error) as e:
        ops.add(T(np.ones((2, 2), np.float32), dev), T(np.ones((3, 5), np.float32), dev), out=out)
    assert e.value.status == "INVALID_ARGUMENT"
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 9, np.float32))


def test_inplace(dev):
    a = np.arange(4, dtype=np.float32)
    t = T(a, dev)
    r = ops.mul_(t, T(np.full(4, 2, np.float32), dev))
    assert r is t
    np.testing.assert_array_equal(t.numpy(), a * 2)
    ops.relu_(ops.neg_(t))
    np.testing.assert_array_equal(t.numpy(), np.zeros(4, np.float32))


def test_div_overloads(dev):
    a, b = np.array([7, -7], np.float32), np.array([2, 2], np.float32)
    np.testing.assert_allclose(ops.div(T(a, dev), T(b, dev)).numpy(), a / b)
    np.testing.assert_array_equal(ops.div(T(a, dev), T(b, dev), rounding_mode="floor").numpy(), np.floor(a / b))
    np.testing.assert_array_equal(ops.div(T(a, dev), T(b, dev), rounding_mode="trunc").numpy(), np.trunc(a / b))


def test_dtype_argument():
    t = ops.to(backplane.tensor(np.array([1.7, -2.2])), "int32")
    assert t.dtype == "int32"
    assert ops.to(t, np.float32).dtype == "float32"


def test_errors_name_operator_and_argument():
    x = backplane.tensor(np.ones(3, np.float32))
    with pytest.raises(backplane.Error) as e:
        ops.add(x, None)
    assert e.value.status == "INVALID_ARGUMENT"
    assert "add.Tensor" in e.value.message and "'other'" in e.value.message
    with pytest.raises(backplane.Error) as e:
        ops.add(x, 3.0)
    assert "'other'" in e.value.message and "float" in e.value.message
    with pytest.raises(backplane.Error) as e:
        ops.softmax(x, dim="zero")
    assert "'dim'" in e.value.message
    with pytest.raises(backplane.Error) as e:
        ops.matmul(x, backplane.tensor(np.ones((2, 2), np.float32)))
    assert e.value.status in ("INVALID_ARGUMENT", "OUT_OF_RANGE") and e.value.message
    with pytest.raises(TypeError):
        ops.add(x)  # missing argument: Python's own error


def test_every_operator_is_generated():
    import inspect
    for name in backplane._C.op_names():
        base = name.split(".")[0].split("::")[-1]
        assert hasattr(ops, base), name
        assert ops.__dict__[base].__doc__, name
    sig = inspect.signature(ops.add)
    assert sig.parameters["alpha"].default == 1 and sig.parameters["out"].kind == inspect.Parameter.KEYWORD_ONLY


def test_set_kernel_masked_routes_to_the_fallback_and_back(dev):
    """backplane.set_kernel_masked (bp_op_set_kernel_masked): a masked kernel's
    calls are counted as fallbacks and still compute right; restored, they are
    native again. The cpu backend's kernels are the fallback: refused."""
    backend = dev.split(":")[0]
    a = rng.standard_normal((3, 4)).astype(np.float32)

    def relu_counts():
        before = backplane.stats()[backend]["ops"].get("relu", {"native": 0, "fallback": 0})
        np.testing.assert_array_equal(ops.relu(T(a, dev)).numpy(), np.maximum(a, 0))
        after = backplane.stats()[backend]["ops"]["relu"]
        return after["native"] - before["native"], after["fallback"] - before["fallback"]

    if backend == "cpu":
        with pytest.raises(backplane.Error, match="cannot be masked: its kernels are the CPU fallback") as e:
            backplane.set_kernel_masked("relu", "cpu", True)
        assert e.value.status == "INVALID_ARGUMENT"
        return
    assert relu_counts() == (1, 0)
    backplane.set_kernel_masked("relu", backend, True)
    try:
        assert relu_counts() == (0, 1)
    finally:
        backplane.set_kernel_masked("relu", backend, False)
    assert relu_counts() == (1, 0)
    with pytest.raises(backplane.Error, match="no_such_op"):
        backplane.set_kernel_masked("no_such_op", backend, True)
    with pytest.raises(backplane.Error, match="no_such_backend"):
        backplane.set_kernel_masked("relu", "no_such_backend", True)
