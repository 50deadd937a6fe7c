"""The comparison behind test_opinfo.py: one OpInfo (torch's op_db) and one
dtype, its first samples run on CPU and on the device, forward and (float,
autograd) backward. A verdict per (op, dtype, kind):

  pass     every sample matches CPU
  refused  the device raised, and opinfo_expected.txt lists the case
  fail     a wrong result (never excusable), an unlisted error, or a listed
           case that no longer raises (a stale expectation)

The time budget picks the samples (the first SAMPLES of each op and dtype,
from a fixed seed, so every run sees the same ones), never the verdict.
RESULTS collects the verdicts of the run for conftest's summary line."""
import itertools
import os

import torch
from torch.utils._pytree import tree_flatten

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED_FILE = os.path.join(HERE, "opinfo_expected.txt")
SAMPLES = int(os.environ.get("BACKPLANE_OPINFO_SAMPLES", "2"))
KINDS = ("forward", "backward")

# (op_name, dtype_name, kind) -> (verdict, detail), filled by the run.
RESULTS = {}


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def load_expected(backend, path=EXPECTED_FILE):
    """`backends op_name dtype kind reason...` lines (backends: a comma
    list, or `*` for all of them); '#' starts a comment. An entry without a reason is an error:
    every refusal says why."""
    expected = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 4)
            if len(parts) < 5 or parts[3] not in KINDS:
                raise ValueError("%s:%d: expected 'backend op_name dtype forward|backward reason', got %r"
                                 % (path, n, line))
            if parts[0] == "*" or backend in parts[0].split(","):
                expected[(parts[1], parts[2], parts[3])] = parts[4]
    return expected


def tolerances(dtype, gradient=False):
    """Floats: the device's kernels may sum in another order than ATen's
    (a GEMM of CLBlast, a tree reduction), so outputs take rtol = atol =
    1e-4, and gradients, which chain several such kernels, the bound torch's
    test_compare_cpu uses between devices (1e-3; opencl's gradient of
    linalg.householder_product differs from CPU's by 3e-4 relative).
    Integers and bool stay exact."""
    if dtype.is_floating_point or dtype.is_complex:
        return {"rtol": 1e-3, "atol": 1e-3} if gradient else {"rtol": 1e-4, "atol": 1e-4}
    return {"rtol": 0, "atol": 0}


def _to(device):
    """Moves a sample's tensors keeping their layout: the whole storage goes
    to the device and the tensor is the same view of it (offset, strides),
    so non-contiguous and offset samples stay so, and as_strided on a
    partial view reads the same storage as on CPU."""
    def move(x):
        if not isinstance(x, torch.Tensor):
            return x
        t = x.detach()
        n = t.untyped_storage().nbytes() // t.element_size() if t.layout == torch.strided else 0
        if n > 0 and not (t.is_contiguous() and t.storage_offset() == 0 and n == t.numel()):
            whole = t.as_strided((n,), (1,), 0).to(device)
            y = whole.as_strided(t.size(), t.stride(), t.storage_offset())
        else:
            y = t.to(device)
        return y.requires_grad_(x.requires_grad) if y.is_floating_point() or y.is_complex() else y
    return move


def _check_topk(actual, expected, sample):
    """topk's indices of tied values are not specified (torch.topk's docs);
    values must be equal and the indices must point at them."""
    values, indices = actual
    dim = sample.args[1] if len(sample.args) > 1 else sample.kwargs.get("dim", -1)
    src = sample.input.detach().cpu()
    gathered = src.gather(dim, indices.cpu()) if src.dim() > 0 else src.reshape(indices.shape)
    return compare((values, gathered), (expected[0], expected[0]), expected[0].dtype)


# Ops whose result is not unique: a check of what torch does promise.
CHECKS = {"topk": _check_topk}


def compare(actual, expected, dtype, gradient=False):
    """None when the device's outputs equal CPU's, else what differs."""
    a_leaves, a_spec = tree_flatten(actual)
    e_leaves, e_spec = tree_flatten(expected)
    if a_spec != e_spec:
        return "output structure differs: device %s, cpu %s" % (a_spec, e_spec)
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return "output %d: device gave %r, cpu a tensor" % (i, type(a))
            tol = tolerances(e.dtype, gradient)
            try:
                torch.testing.assert_close(a.detach().cpu(), e.detach(), equal_nan=True, **tol)
            except AssertionError as err:
                return "output %d: %s" % (i, err)
        elif a != e and not (isinstance(e, float) and e != e and a != a):
            return "output %d: device %r, cpu %r" % (i, a, e)
    return None


def _weights(outputs):
    """Fixed random weights (from the CPU outputs' shapes) for the scalar
    that backward starts from: sum(out * w) gives every output element its
    own gradient, where a plain sum hides ops whose gradient of sum is 0."""
    gen = torch.Generator().manual_seed(1234)
    return [torch.rand(o.shape, generator=gen, dtype=o.dtype) if o.is_floating_point() else None for o in outputs]


def _grads(outputs, weights, inputs):
    pairs = [(o, w.to(o.device)) for o, w in zip(outputs, weights) if w is not None and o.requires_grad]
    if not pairs or not inputs:
        return None
    total = sum((o * w).sum() for o, w in pairs)
    return torch.autograd.grad(total, inputs, allow_unused=True)


def _leaves_requiring_grad(sample):
    leaves, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]


def run_op(op, dtype, device, samples=SAMPLES, device_call=None):
    """{kind: (ok, error, wrong)} over the first `samples` samples: the
    number that matched, the first device error, the first wrong result.
    device_call(op, sample) replaces the device's call (the negative control
    uses it to corrupt a result)."""
    call = device_call or (lambda o, s: o(s.input, *s.args, **s.kwargs))
    backward = op.supports_autograd and dtype.is_floating_point
    torch.manual_seed(0)
    gen = op.sample_inputs("cpu", dtype, requires_grad=backward)
    out = {k: [0, None, None] for k in KINDS if k == "forward" or backward}
    for idx, cpu_sample in enumerate(itertools.islice(gen, samples)):
        where = "sample %d (%s)" % (idx, cpu_sample.summary() if hasattr(cpu_sample, "summary") else "")
        try:
            expected = cpu_sample.output_process_fn_grad(op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs))
        except Exception:  # noqa: BLE001 - a sample CPU refuses says nothing about the device
            continue
        dev_sample = cpu_sample.transform(_to(device))
        try:
            actual = dev_sample.output_process_fn_grad(call(op, dev_sample))
        except Exception as e:  # noqa: BLE001 - the verdict decides whether it is a refusal
            out["forward"][1] = out["forward"][1] or "%s: %s: %s" % (where, type(e).__name__, str(e).split("\n")[0])
            continue
        check = CHECKS.get(op.name)
        diff = check(actual, expected, dev_sample) if check else compare(actual, expected, dtype)
        if diff is not None:
            out["forward"][2] = out["forward"][2] or "%s: %s" % (where, diff)
            continue
        out["forward"][0] += 1
        if "backward" not in out:
            continue
        e_outs = [t for t in tree_flatten(expected)[0] if isinstance(t, torch.Tensor)]
        a_outs = [t for t in tree_flatten(actual)[0] if isinstance(t, torch.Tensor)]
        weights = _weights(e_outs)
        try:
            e_grads = _grads(e_outs, weights, _leaves_requiring_grad(cpu_sample))
        except Exception:  # noqa: BLE001 - no CPU gradient, nothing to compare
            continue
        if e_grads is None:
            continue
        try:
            a_grads = _grads(a_outs, weights, _leaves_requiring_grad(dev_sample))
        except Exception as e:  # noqa: BLE001
            out["backward"][1] = out["backward"][1] or "%s: %s: %s" % (where, type(e).__name__, str(e).split("\n")[0])
            continue
        diff = compare(a_grads, e_grads, dtype, gradient=True)
        if diff is not None:
            out["backward"][2] = out["backward"][2] or "%s: gradient %s" % (where, diff)
        else:
            out["backward"][0] += 1
    return {k: tuple(v) for k, v in out.items()}


def verdicts(name, dtype, outcome, expected):
    """(name, dtype, kind) -> (verdict, detail) from run_op's outcome; name
    is the op's name, with ".variant" for a variant of it."""
    result = {}
    for kind, (ok, error, wrong) in outcome.items():
        key = (name, dtype_name(dtype), kind)
        listed = expected.get(key)
        if wrong is not None:
            result[key] = ("fail", "wrong result: " + wrong)
        elif error is not None:
            result[key] = ("refused", error) if listed else ("fail", "unlisted device error: " + error)
        elif listed:
            result[key] = ("fail", "stale expectation (%d samples now pass; listed as: %s)" % (ok, listed))
        else:
            result[key] = ("pass", "%d samples" % ok)
    return result


def counts(results=None):
    c = {"pass": 0, "refused": 0, "fail": 0}
    for verdict, _ in (RESULTS if results is None else results).values():
        c[verdict] += 1
    return c
