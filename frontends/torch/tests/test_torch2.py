"""torch 2.x on the device: its name and methods, torch.accelerator and its
memory API, generators, pinned memory, streams and events, autocast, several
backends behind the one PrivateUse1 slot, and the errors of a wrong setup."""
import json
import os
import subprocess
import sys

import pytest
import torch
from expected_backends import expected  # tests/expected_backends.py (conftest.py puts tests/ on sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))


def run_python(code_or_args, env_extra=None, timeout=300):
    """A fresh interpreter (device and plugin settings are read at load)."""
    env = dict(os.environ)
    env.update(env_extra or {})
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    return subprocess.run([sys.executable] + args, env=env, capture_output=True, text=True, timeout=timeout)


def test_device_name_methods_and_module(bt, dev):
    assert torch._C._get_privateuse1_backend_name() == "backplane"
    x = torch.arange(6.0).reshape(2, 3).backplane()
    assert x.is_backplane and x.device == dev
    assert torch.backplane.is_available() and torch.backplane.device_count() == bt.init()["device_count"]
    torch.backplane.set_device(0)
    assert torch.backplane.current_device() == 0
    assert torch.accelerator.current_accelerator() == torch.device("backplane")
    assert torch.accelerator.device_count() == torch.backplane.device_count()
    assert torch.nn.Linear(3, 2).backplane().weight.device == dev
    torch.backplane.synchronize()
    assert torch.equal(x.cpu(), torch.arange(6.0).reshape(2, 3))


def test_memory_api_moves_with_allocations(bt, dev):
    torch.backplane.synchronize()
    torch.accelerator.empty_cache()
    base = torch.accelerator.memory_allocated(0)
    torch.accelerator.reset_peak_memory_stats(0)
    assert torch.accelerator.max_memory_allocated(0) == base
    t = torch.empty(1 << 20, device=dev)  # 4 MiB
    grown = torch.accelerator.memory_allocated(0)
    assert grown >= base + 4 * 2**20, (base, grown)
    assert torch.backplane.memory_reserved() >= grown
    del t
    assert torch.accelerator.memory_allocated(0) == base
    assert torch.accelerator.max_memory_allocated(0) >= base + 4 * 2**20
    torch.accelerator.reset_peak_memory_stats(0)
    assert torch.backplane.max_memory_allocated() == base
    reserved = torch.accelerator.memory_reserved(0)
    torch.backplane.empty_cache()
    assert torch.accelerator.memory_reserved(0) < reserved


def test_views_of_results_and_blocks_compute_right_and_free_their_memory(bt, dev):
    """A tensor handed to Backplane reuses the Backplane tensor behind its
    memory when its geometry is that tensor's, and a cached view otherwise
    (device_buffer.cpp): results must not depend on which, a view cached for
    one geometry must not serve another, and the memory must come back when
    the torch tensors go (a cached view holds no reference on the storage)."""
    torch.backplane.synchronize()
    base = torch.accelerator.memory_allocated(0)
    g = torch.Generator().manual_seed(7)
    a_h = torch.randn(48, 48, generator=g)  # square: a transpose differs from it in strides alone
    b_h = torch.randn(48, 48, generator=g)
    assert a_h.std() > 0.5
    a, b = a_h.to(dev), b_h.to(dev)        # allocator blocks, float views of uint8 memory
    s = a + b                               # an operator's result, used as is below
    want = a_h + b_h
    for _ in range(2):                      # the second round takes the cached paths
        assert torch.equal((s * 2).cpu(), want * 2)
        assert torch.equal((s.t() - b.t()).cpu(), want.t() - b_h.t())      # other strides
        assert torch.equal((s[1:, 3:] + 1).cpu(), want[1:, 3:] + 1)         # another offset
        assert torch.equal((s.view(-1)[5:17] * 3).cpu(), want.view(-1)[5:17] * 3)
        assert torch.equal((s[::2] + a[::2]).cpu(), want[::2] + a_h[::2])
    s.add_(1)                               # in place through the reused tensor
    assert torch.equal(s.cpu(), want + 1)
    v = s[2:4]
    v.mul_(0)                               # in place through a view
    want = want + 1
    want[2:4] = 0
    assert torch.equal(s.cpu(), want)
    del a, b, s, v
    torch.backplane.synchronize()
    assert torch.accelerator.memory_allocated(0) == base


def _random_draws(dev):
    torch.manual_seed(1234)
    a = torch.randn(64, device=dev)
    b = torch.nn.functional.dropout(torch.ones(256, device=dev), p=0.5)
    c = torch.randperm(50, device=dev)
    return a.cpu(), b.cpu(), c.cpu()


def test_manual_seed_makes_device_random_reproducible(bt, dev):
    a1, b1, c1 = _random_draws(dev)
    a2, b2, c2 = _random_draws(dev)
    assert torch.equal(a1, a2) and torch.equal(b1, b2) and torch.equal(c1, c2)
    assert a1.std() > 0.5 and 0 < (b1 == 0).sum() < 256 and sorted(c1.tolist()) == list(range(50))
    torch.manual_seed(99)
    assert not torch.equal(torch.randn(64, device=dev).cpu(), a1)  # the seed matters
    g = torch.Generator(device=dev)
    g.manual_seed(5)
    first = torch.randn(8, device=dev, generator=g).cpu()
    g.manual_seed(5)
    assert torch.equal(torch.randn(8, device=dev, generator=g).cpu(), first)
    state = torch.backplane.get_rng_state()
    r1 = torch.rand(4, device=dev).cpu()
    torch.backplane.set_rng_state(state)
    assert torch.equal(torch.rand(4, device=dev).cpu(), r1)


def test_random_numbers_equal_across_runs(bt):
    code = ("import torch, backplane.torch as bt; bt.init(%r); torch.manual_seed(7); "
            "print(torch.randn(5, device='backplane').cpu().tolist())") % bt.backends()
    runs = [run_python(code) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.strip()


def test_pinned_memory_and_non_blocking_copies(bt, dev):
    host = torch.arange(1 << 16, dtype=torch.float32).pin_memory()
    assert host.is_pinned() and not torch.arange(4.0).is_pinned()
    d = host.to(dev, non_blocking=True)
    back = torch.empty_like(host).pin_memory()
    back.copy_(d * 2, non_blocking=True)
    torch.backplane.current_stream().synchronize()
    assert torch.equal(back, host * 2)


def test_streams_events_and_record_stream(bt, dev):
    s = torch.Stream("backplane")
    assert s.device == dev
    x = torch.ones(1 << 12, device=dev)
    s.wait_stream(torch.backplane.current_stream())
    with torch.backplane.stream(s):
        assert torch.backplane.current_stream() == s
        y = x * 3
        x.record_stream(s)
    assert torch.backplane.current_stream() != s
    torch.backplane.current_stream().wait_stream(s)
    e = torch.Event("backplane")
    e.record()
    e.synchronize()
    assert e.query()
    assert torch.equal(y.cpu(), torch.full((1 << 12,), 3.0))


def test_stream_ordering_on_async_device_and_its_negative_control(bt, tmp_path):
    """On asynchronous vendor_sim, held kernels decide the order: with the
    wait, B cannot finish while A is held; without it (the negative control)
    it does, so the check fails."""
    if bt.backends() != ["vendor_sim"] or os.environ.get("BP_VENDOR_SIM_UNIFIED") or os.environ.get("BP_VENDOR_SIM_ASYNC"):
        pytest.skip("the ordering scenario runs once, in the vendor_sim suite (its own processes)")
    script = os.path.join(HERE, "stream_order.py")
    env = {"BP_VENDOR_SIM_ASYNC": "1", "BP_VENDOR_SIM_HOLD_KERNELS": str(tmp_path / "hold")}
    good = run_python([script, str(tmp_path / "hold"), "waits"], env)
    assert good.returncode == 0, good.stderr
    r = json.loads(good.stdout.strip().splitlines()[-1])
    assert r["plugin_adds"] == 1, "the held add must be vendor_sim's own kernel: %s" % r
    assert r["b_done_while_a_held"] is False and r["seen"] == 2.0 and r["last"] == 2.0, r
    assert r["elapsed_ms"] >= 0
    bad = run_python([script, str(tmp_path / "hold"), "ignores"], env)
    assert bad.returncode == 0, bad.stderr
    r = json.loads(bad.stdout.strip().splitlines()[-1])
    assert r["b_done_while_a_held"] is True, "without the wait the ordering check must fail: %s" % r


def _train(device, model, data, target, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with torch.autocast(device.type, dtype=torch.bfloat16):
            out = model(data.to(device))
        loss = torch.nn.functional.cross_entropy(out.float(), target.to(device))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("kind", ["cnn", "transformer"])
def test_autocast_bf16_training_matches_cpu_autocast(bt, dev, kind):
    torch.manual_seed(0)
    if kind == "cnn":
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                                    torch.nn.Flatten(), torch.nn.Linear(8, 4))
        data = torch.randn(4, 3, 8, 8)
    else:
        model = torch.nn.Sequential(torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True),
                                    torch.nn.Flatten(), torch.nn.Linear(16 * 5, 4))
        data = torch.randn(4, 5, 16)
    target = torch.tensor([0, 1, 2, 3])
    import copy
    ref = _train(torch.device("cpu"), copy.deepcopy(model), data, target)
    got = _train(dev, copy.deepcopy(model).to(dev), data, target)
    assert len(ref) == len(got) == 3 and ref[0] != ref[-1]
    for r, g in zip(ref, got):
        assert abs(r - g) <= 2e-2 * max(1.0, abs(r)), (ref, got)
    with torch.autocast("backplane", dtype=torch.bfloat16):
        assert torch.nn.Linear(4, 4).to(dev)(torch.ones(2, 4, device=dev)).dtype == torch.bfloat16


def test_old_torch_is_refused_with_versions(tmp_path):
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("__version__ = '1.13.1'\n")
    env = {"PYTHONPATH": str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = run_python("import backplane.torch", env)
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "supports torch 2." in r.stderr and "found torch 1.13.1" in r.stderr


def test_slot_claimed_by_another_name_is_a_clear_error(bt):
    code = ("import torch; torch.utils.rename_privateuse1_backend('othervendor'); import backplane.torch as bt\n"
            "try:\n    bt.init(%r)\nexcept RuntimeError as e:\n    print('REFUSED', e)\n"
            "print(torch.ones(2).sum().item())") % bt.backends()
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert "REFUSED" in r.stdout and "'othervendor'" in r.stdout and "4.0" not in r.stdout and "2.0" in r.stdout


def test_vendor_name_for_the_device(bt):
    code = ("import torch, backplane.torch as bt; bt.init(%r, name='myaccel'); "
            "x = torch.ones(3, device='myaccel'); print(x.is_myaccel, torch.myaccel.device_count() > 0, "
            "(x + 1).sum().item())") % bt.backends()
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True", "6.0"]


def test_event_of_another_device_is_refused(bt, dev):
    if torch.backplane.device_count() < 2:
        pytest.skip("one device: the multi-backend test covers two")
    e = torch.Event(torch.device("backplane", 1))
    e.record(torch.Stream(torch.device("backplane", 1)))
    with pytest.raises(RuntimeError):
        torch.Stream(dev).wait_event(e)
    assert (torch.ones(2, device=dev) + 1).sum().item() == 4.0  # still usable


def test_two_backends_behind_one_device(bt):
    """vendor_sim and opencl in one process: backplane:0 and backplane:1."""
    import backplane
    have = {b["name"] for b in backplane.backends() if b["device_count"] > 0}
    wanted = {"vendor_sim", "opencl"}
    if not wanted <= have:
        # Either one missing fails when BACKPLANE_EXPECT_BACKENDS names it.
        missing = sorted(b for b in wanted - have if expected(b))
        if missing:
            pytest.fail("%s expected (BACKPLANE_EXPECT_BACKENDS) but only %s have devices"
                        % (" and ".join(missing), sorted(have)), pytrace=False)
        pytest.skip("needs devices on vendor_sim and opencl, have %s" % sorted(have))
    code = """
import json, torch, backplane.torch as bt
info = bt.init(["vendor_sim", "opencl"])
n0 = sum(1 for b, _ in info["devices"] if b == "vendor_sim")
a = torch.arange(12.0).reshape(3, 4).to("backplane:0")
b = a.to("backplane:%d" % n0)
c = (b * 2 + 1).relu().sum(dim=1)
d = c.to("backplane:0") - a.sum(dim=1)
e = torch.Event(torch.device("backplane", 0)); e.record(torch.Stream(torch.device("backplane", 0)))
try:
    torch.Stream(torch.device("backplane", n0)).wait_event(e)
    refused = ""
except RuntimeError as err:
    refused = str(err)
print(json.dumps({"devices": info["devices"], "b": str(b.device), "c": c.cpu().tolist(), "d": d.cpu().tolist(),
                  "refused": refused, "after": (torch.ones(2, device="backplane:0") + 1).sum().item()}))
"""
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    n0 = sum(1 for b, _ in out["devices"] if b == "vendor_sim")
    assert [b for b, _ in out["devices"]] == ["vendor_sim"] * n0 + ["opencl"] * (len(out["devices"]) - n0)
    x = torch.arange(12.0).reshape(3, 4)
    assert out["b"] == "backplane:%d" % n0
    assert out["c"] == ((x * 2 + 1).relu().sum(dim=1)).tolist()
    assert out["d"] == ((x * 2 + 1).relu().sum(dim=1) - x.sum(dim=1)).tolist()
    assert out["refused"] and out["after"] == 4.0


def test_python_numbers_keep_torch_dtypes(bt, dev):
    """A Python number is a wrapped number for torch's type promotion (issue
    42 item 5: x.sum() * 0.5 came back float64 from the device)."""
    x = torch.randn(4, 3)
    d = x.to(dev)
    cases = [
        (lambda t: t.sum() * 0.5),
        (lambda t: t.sum() + 2),
        (lambda t: (t.sum() > 0.25)),
        (lambda t: t.to(torch.int32).sum() * 3),
        (lambda t: t.to(torch.int32).sum() * 1.5),
        (lambda t: t.half() * 0.5),
        (lambda t: torch.deg2rad(t.sum())),
    ]
    for f in cases:
        ref, got = f(x), f(d)
        assert got.dtype == ref.dtype, (ref.dtype, got.dtype)
        assert torch.allclose(got.cpu().double(), ref.double(), rtol=1e-3, atol=1e-3)


def test_fft_computes_or_refuses_never_crashes(bt, dev):
    """torch.fft on the device (issue 42 item 6: SIGSEGV on the cpu backend,
    an endless conjugate-view recursion). Host-addressable devices compute
    it through torch's CPU kernels; others refuse complex results clearly."""
    code = ("import torch, backplane.torch as bt; bt.init(%r); x = torch.randn(8); "
            "fs = [torch.fft.ifft, torch.fft.fft, torch.fft.hfft, torch.fft.ihfft]\n"
            "for f in fs:\n"
            "    try:\n"
            "        print(f.__name__, torch.allclose(f(x.to('backplane')).cpu(), f(x), atol=1e-5))\n"
            "    except RuntimeError as e:\n"
            "        print(f.__name__, 'refused', 'ComplexFloat' in str(e))\n") % bt.backends()
    r = run_python(code)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.split("\n")[:4]
    assert len(lines) == 4 and all(l.endswith("True") for l in lines), r.stdout
    if "unified" in str(bt.init()) or bt.backends() == ["cpu"]:
        assert "refused" not in r.stdout, r.stdout


def test_child_of_fork_knows_it_and_gets_a_clear_error(bt):
    """fork() after init (issue 42 item 13): torch.backplane._is_in_bad_fork()
    is True in the child only, and device work there raises instead of
    hanging on the parent's device threads; the parent keeps working."""
    code = ("import os, torch, backplane.torch as bt; bt.init(%r)\n"
            "m = torch.backplane\n"
            "x = torch.arange(4.0, device='backplane'); assert (x + x).cpu().tolist() == [0, 2, 4, 6]\n"
            "before = m._is_in_bad_fork()\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    said = 'bad_fork=%%s ' %% m._is_in_bad_fork()\n"
            "    try:\n"
            "        (x + x).cpu(); said += 'no error'\n"
            "    except RuntimeError as e:\n"
            "        said += 'after-fork-error' if 'after fork()' in str(e) else 'other: ' + str(e)[:300]\n"
            "    print(said, flush=True); os._exit(0)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "print('parent bad_fork=%%s before=%%s child_exit=%%s sum=%%s' %% (m._is_in_bad_fork(), before,\n"
            "      os.waitstatus_to_exitcode(status), (x + x).cpu().tolist()), flush=True)\n") % bt.backends()
    r = run_python(code, timeout=120)  # a hung child fails the test through the timeout
    assert r.returncode == 0, r.stderr[-2000:]
    assert "bad_fork=True after-fork-error" in r.stdout, r.stdout + r.stderr[-2000:]
    assert "parent bad_fork=False before=False child_exit=0 sum=[0.0, 2.0, 4.0, 6.0]" in r.stdout, r.stdout
