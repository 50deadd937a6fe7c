"""torch.distributed on the Backplane device through the "backplane"
process-group backend ("cpu:gloo,<device>:backplane"): DDP and FSDP2 on 2
processes give, after every one of 10 SGD steps, the parameters one process
gets on the full batch."""
import os
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ddp_train  # noqa: E402

JOIN_TIMEOUT = 240  # seconds for a whole run; a collective itself fails within ddp_train.TIMEOUT


def _train(script, backend, rank, world, store, out, env_launch=False):
    script = os.path.join(HERE, script)
    if env_launch:  # as torchrun starts it: rendezvous through torch's TCPStore
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=store)
        return subprocess.Popen([sys.executable, script, backend, out], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    return subprocess.Popen([sys.executable, script, backend, str(rank), str(world), store, out],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _join(procs, timeout=JOIN_TIMEOUT):
    """Waits for every process (at most `timeout` seconds in all) and returns
    their logs; fails naming the rank when one exits with an error (the
    others are killed then, rather than left waiting for it) or runs over."""
    logs = [None] * len(procs)
    failed = None
    deadline = time.monotonic() + timeout
    with ThreadPoolExecutor(len(procs)) as ex:
        futures = {ex.submit(p.communicate): r for r, p in enumerate(procs)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=max(0.0, deadline - time.monotonic()),
                                 return_when=FIRST_COMPLETED)
            if not done:  # over time: kill the rest, collect what they printed
                failed = failed or "ranks %s did not finish within %d s" % (
                    sorted(futures[f] for f in pending), timeout)
                for p in procs:
                    if p.poll() is None:
                        p.kill()
                done, pending = wait(pending)[0], set()
            for f in done:
                r = futures[f]
                logs[r] = f.result()[0]
                if procs[r].returncode != 0 and failed is None:
                    failed = "rank %d exited with %d" % (r, procs[r].returncode)
                    for p in procs:  # the others would wait for it until their timeout
                        if p.poll() is None:
                            p.kill()
    if failed:
        pytest.fail(failed + "\n" + "\n".join("---- rank %d ----\n%s" % (r, log) for r, log in enumerate(logs)))
    return logs


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def _check_same_training(ref, got, who, rtol=1e-4, atol=1e-5):
    """ref and got: {"losses", "params"} of train(); compares every step."""
    assert len(ref["params"]) == ddp_train.STEPS, f"reference: {len(ref['params'])} steps saved"
    assert len(got["params"]) == len(ref["params"]), f"{who}: {len(got['params'])} steps saved"
    for step, (a, b) in enumerate(zip(got["params"], ref["params"])):
        assert len(a) == len(b), f"{who} step {step}: {len(a)} parameters, the reference has {len(b)}"
        for i, (p, q) in enumerate(zip(a, b)):
            assert p.shape == q.shape, f"{who} step {step} parameter {i}: shape {p.shape}, expected {q.shape}"
            torch.testing.assert_close(p, q, rtol=rtol, atol=atol,
                                       msg=lambda m: f"{who} step {step} parameter {i}: {m}")


def _check_reference_moves(ref):
    """Every step moved some parameter (the comparisons mean something)."""
    prev = [p.detach() for p in ddp_train.model().parameters()]  # the same initial model
    for step, params in enumerate(ref["params"]):
        assert len(params) == len(prev), f"step {step}: {len(params)} parameters, expected {len(prev)}"
        moved = max((a - b).abs().max().item() for a, b in zip(params, prev))
        assert moved > 1e-4, f"SGD step {step} moved no parameter by more than {moved}"
        prev = params
    total = max((a - b).abs().max().item() for a, b in zip(ref["params"][-1], ddp_train.model().parameters()))
    assert total > 1e-2, f"10 SGD steps moved no parameter by more than {total}"


def _run(script, bt, tmp_path, launch):
    backend = bt.backend()
    ref_out = str(tmp_path / "ref.pt")
    logs = _join([_train(script, backend, 0, 1, "", ref_out)])
    env_launch = launch == "env_tcp_store"
    store = _free_port() if env_launch else str(tmp_path / "store")
    out = str(tmp_path / "dist")
    outs = [f"{out}.rank{r}" for r in range(2)]
    logs = _join([_train(script, backend, r, 2, store, out if env_launch else outs[r], env_launch)
                  for r in range(2)])
    for log in logs:
        assert "engine" in log, log
        assert f"backend cpu:gloo,{bt.name()}:backplane" in log, log
    ref = torch.load(ref_out)
    _check_reference_moves(ref)
    for r in range(2):
        _check_same_training(ref, torch.load(outs[r]), f"rank {r}")


@pytest.mark.parametrize("launch", ["file_store", "env_tcp_store"])
def test_ddp_two_processes_match_one_process_on_the_full_batch(bt, tmp_path, launch):
    _run("ddp_train.py", bt, tmp_path, launch)


def test_fsdp2_two_processes_match_one_process_on_the_full_batch(bt, tmp_path):
    _run("fsdp_train.py", bt, tmp_path, "file_store")


def test_bad_comm_host_raises_naming_it(bt, tmp_path, monkeypatch):
    """A BACKPLANE_COMM_HOST that does not resolve (or is no host name) is a
    RuntimeError naming it when the process group makes its communicator
    (issue 42 item 12: it crashed inside Gloo, and the process group spun).
    One rank, CPU tensors: the host's communicator always runs on Gloo."""
    import backplane.torch.distributed as bpd
    import torch.distributed as dist
    from datetime import timedelta
    for host, why in (("no-such-host.invalid", "does not resolve"),
                      ("bad host;name", "expected a host name or IP address")):
        monkeypatch.setenv("BACKPLANE_COMM_HOST", host)
        store = dist.FileStore(str(tmp_path / ("store_" + str(len(why)))), 1)
        pg = bpd.ProcessGroupBackplane(store, 0, 1, timedelta(seconds=20))
        start = time.monotonic()
        with pytest.raises(RuntimeError) as e:
            pg.allreduce([torch.ones(2)]).wait()
        assert "BACKPLANE_COMM_HOST is '%s'" % host in str(e.value), str(e.value)
        assert why in str(e.value), str(e.value)
        assert time.monotonic() - start < 10, "the error came only after %.1f s" % (time.monotonic() - start)
