"""torch.distributed on privateuseone through the "backplane" process group:
DDP on 2 processes gives the parameters one process gets on the full batch."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
import ddp_train  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _train(backend, rank, world, store, out, env_launch=False):
    script = os.path.join(HERE, "ddp_train.py")
    if env_launch:  # as torchrun starts it: rendezvous through torch's TCPStore
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=store)
        return subprocess.Popen([sys.executable, script, backend, out], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    return subprocess.Popen([sys.executable, script, backend, str(rank), str(world), store, out],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.mark.parametrize("launch", ["file_store", "env_tcp_store"])
def test_ddp_two_processes_match_one_process_on_the_full_batch(bt, tmp_path, launch):
    backend = bt.backend()
    ref_out = str(tmp_path / "ref.pt")
    single = _train(backend, 0, 1, "", ref_out)
    log, _ = single.communicate(timeout=240)
    assert single.returncode == 0, log
    env_launch = launch == "env_tcp_store"
    store = _free_port() if env_launch else str(tmp_path / "store")
    out = str(tmp_path / "ddp")
    outs = [f"{out}.rank{r}" for r in range(2)]
    procs = [_train(backend, r, 2, store, out if env_launch else outs[r], env_launch) for r in range(2)]
    logs = [p.communicate(timeout=240)[0] for p in procs]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log
    assert "engine" in logs[0], logs[0]
    ref = torch.load(ref_out)
    # The training moved the parameters (the comparison below means something).
    init = [p.detach() for p in ddp_train.model().parameters()]  # the same initial model
    moved = max((a - b).abs().max().item() for a, b in zip(ref, init))
    assert moved > 1e-2, f"10 SGD steps moved no parameter by more than {moved}"
    for r in range(2):
        got = torch.load(outs[r])
        for i, (a, b) in enumerate(zip(got, ref)):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=lambda m: f"rank {r} parameter {i}: {m}")
