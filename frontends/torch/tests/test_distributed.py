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


def _train(backend, rank, world, store, out):
    return subprocess.Popen([sys.executable, os.path.join(HERE, "ddp_train.py"), backend, str(rank), str(world),
                             store, out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_ddp_two_processes_match_one_process_on_the_full_batch(bt, tmp_path):
    backend = bt.backend()
    ref_out = str(tmp_path / "ref.pt")
    single = _train(backend, 0, 1, "", ref_out)
    log, _ = single.communicate(timeout=240)
    assert single.returncode == 0, log
    store = str(tmp_path / "store")
    outs = [str(tmp_path / f"rank{r}.pt") for r in range(2)]
    procs = [_train(backend, r, 2, store, outs[r]) for r in range(2)]
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
