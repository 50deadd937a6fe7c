"""torch's own OpInfo database (op_db, shipped in the wheel) on the device,
through torch's device-type test machinery: instantiate_device_type_tests
with the PrivateUse1 test base only, so each test runs as torch's device-
generic tests run on an accelerator. Every sample is compared with the same
sample on CPU, forward and (float, autograd) backward; opinfo_harness.py
holds the comparison and the verdicts, opinfo_expected.txt the refusals.

Runs only when BACKPLANE_TORCH_OPINFO=1 (conftest skips collecting it
otherwise: its own ctest entry per backend, not every torch suite, pays its
minutes), in a process of its own: torch's test bases are chosen when
common_device_type is imported, so the device must exist before that."""
import os

import pytest
import torch

import backplane
import backplane.torch as bt
import opinfo_harness as H
from expected_backends import expected  # tests/expected_backends.py (conftest.py puts tests/ on sys.path)

BACKEND = [b for b in os.environ.get("BACKPLANE_TORCH_BACKEND", "vendor_sim").split(",") if b][0]


def _init():
    found = {b["name"]: b for b in backplane.backends()}
    info = found.get(BACKEND)
    if info is None or info["device_count"] == 0:
        msg = "backend %s has no device: %s" % (BACKEND, info["no_device_reason"] if info else "backend not loaded")
        if expected(BACKEND):
            raise RuntimeError(msg + " (BACKPLANE_EXPECT_BACKENDS expects it)")
        pytest.skip(msg, allow_module_level=True)
    bt.init([BACKEND])


_init()

from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.testing._internal.common_utils import TestCase  # noqa: E402

# Ops left out of the run, by what they compute, not by how they fare: their
# outputs cannot equal CPU's sample for sample.
RANDOM = ("rand", "normal", "bernoulli", "multinomial", "dropout", "uniform", "exponential", "geometric",
          "cauchy", "log_normal", "poisson")
UNINITIALIZED = ("empty", "new_empty", "empty_like", "empty_strided", "empty_permuted", "new_empty_strided")


def op_key(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def selected(op):
    if op.name in UNINITIALIZED or any(r in op.name for r in RANDOM):
        return False
    return True


def _undecorated(op):
    # op_db's DecorateInfo skips and expectedFailures are torch's judgements
    # about its own devices and tests; here only opinfo_expected.txt may
    # excuse a case, so they are dropped (a shallow copy: op_db is shared).
    import copy
    op = copy.copy(op)
    op.decorators = ()
    op.skips = ()
    return op


OPS = [_undecorated(op) for op in op_db if selected(op)]
SELECTED = {op_key(op) for op in OPS}
EXPECTED = H.load_expected(BACKEND)


class TestBackplaneOpInfo(TestCase):
    @ops(OPS, allowed_dtypes=(torch.float32, torch.int64))
    def test_matches_cpu(self, device, dtype, op):
        outcome = H.run_op(op, dtype, device)
        result = H.verdicts(op_key(op), dtype, outcome, EXPECTED)
        H.RESULTS.update(result)
        failures = ["%s %s %s: %s" % (k + (d,)) for k, (v, d) in sorted(result.items()) if v == "fail"]
        if failures:
            self.fail("\n".join(failures))


instantiate_device_type_tests(TestBackplaneOpInfo, globals(), only_for=["privateuse1"])


def test_expectations_name_selected_ops():
    """An entry for an op outside the run could never turn stale: refused."""
    unknown = sorted(k for k in EXPECTED if k[0] not in SELECTED or k[1] not in ("float32", "int64"))
    assert not unknown, "opinfo_expected.txt names cases the run does not have: %s" % unknown


def _op(name):
    return next(op for op in OPS if op_key(op) == name)


def test_negative_control_wrong_result_fails():
    """A device result off by one is a failure, whatever the file lists."""
    op = _op("neg")

    def off_by_one(o, s):
        return o(s.input, *s.args, **s.kwargs) + 1

    for dtype in (torch.float32, torch.int64):
        outcome = H.run_op(op, dtype, "backplane:0", device_call=off_by_one)
        listed = {("neg", H.dtype_name(dtype), "forward"): "pretend it is listed"}
        v = H.verdicts("neg", dtype, outcome, listed)[("neg", H.dtype_name(dtype), "forward")]
        assert v[0] == "fail" and v[1].startswith("wrong result"), v


def test_negative_control_stale_expectation_fails():
    """A listed case that no longer raises is a failure (the file stays true);
    a listed one that raises is a refusal, an unlisted one a failure."""
    op = _op("neg")
    key = ("neg", "float32", "forward")
    outcome = H.run_op(op, torch.float32, "backplane:0")
    assert H.verdicts("neg", torch.float32, outcome, {key: "pretend"})[key][0] == "fail"
    assert "stale expectation" in H.verdicts("neg", torch.float32, outcome, {key: "pretend"})[key][1]

    def refuse(o, s):
        raise NotImplementedError("neg: not on this device")

    outcome = H.run_op(op, torch.float32, "backplane:0", device_call=refuse)
    assert H.verdicts("neg", torch.float32, outcome, {key: "pretend"})[key][0] == "refused"
    assert H.verdicts("neg", torch.float32, outcome, {})[key][0] == "fail"
