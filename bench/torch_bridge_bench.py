#!/opt/backplane/venv/bin/python
"""backplane.torch beside torch's own CPU, in one process, interleaved rounds.

Rows (each round times the bridge then torch CPU, and the ratio of the two;
the table gives each side's median time and the median per-round ratio,
bridge / torch: 1.00 means the bridge costs nothing):
  resnet18 eval forward, batch 8, 3x224x224, under torch.no_grad();
  resnet18 one SGD training step (forward, cross-entropy, backward, step);
  add of two 1-element tensors (the bridge's per-operator overhead).
Before timing, the bridge's forward output is checked against torch's CPU
output (a fast wrong answer is no result). Then backplane.torch.stats() of
one training step is printed: where each ATen operator ran.

The backend behind the backplane device is --backend (default cpu, which measures
the bridge itself: the same CPU does the work on both sides; vendor_sim
shows what a plugin with few kernels costs). Threads: torch.set_num_threads.

Usage (from the repository root, after building the default preset):
  PYTHONPATH=build/default/python /opt/backplane/venv/bin/python bench/torch_bridge_bench.py
      [--backend cpu] [--rounds 10] [--threads 2] [--batch 8] [--size 224]
"""
import argparse
import os
import statistics
import time

import torch
import torchvision

import backplane.torch as bt


def timed(fn, runs):
    """Median seconds of `runs` calls of fn (after one warm-up call)."""
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=224)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    bt.init(args.backend)
    dev = bt.device(0)
    torch.manual_seed(0)

    ref = torchvision.models.resnet18().eval()
    model = torchvision.models.resnet18().eval()
    model.load_state_dict(ref.state_dict())
    model = model.to(dev)
    x = torch.randn(args.batch, 3, args.size, args.size)
    xd = x.to(dev)
    with torch.no_grad():
        want = ref(x)
        got = model(xd).cpu()
    assert want.std() > 0, "the reference output must vary"
    scale = want.abs().max().item()
    torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-4 * scale)

    train_ref = torchvision.models.resnet18().train()
    train_dev = torchvision.models.resnet18().train()
    train_dev.load_state_dict(train_ref.state_dict())
    train_dev = train_dev.to(dev)
    y = torch.randint(0, 1000, (args.batch,))
    yd = y.to(dev)
    opt_ref = torch.optim.SGD(train_ref.parameters(), lr=1e-3)
    opt_dev = torch.optim.SGD(train_dev.parameters(), lr=1e-3)

    def step(model, opt, a, b):
        def run():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(a), b).backward()
            opt.step()
            if a.device.type != "cpu":
                b.sum().item()  # wait for the device
        return run

    def forward(model, a):
        def run():
            with torch.no_grad():
                out = model(a)
                if a.device.type != "cpu":
                    out.sum().item()
        return run

    one, one_d = torch.ones(1), torch.ones(1, device=dev)

    def adds(a):
        def run():
            for _ in range(1000):
                torch.add(a, a)
        return run

    rows = [
        ("resnet18 eval forward, batch %d, %d^2" % (args.batch, args.size), forward(model, xd), forward(ref, x),
         3, 1e3, "ms"),
        ("resnet18 SGD step, batch %d, %d^2" % (args.batch, args.size), step(train_dev, opt_dev, xd, yd),
         step(train_ref, opt_ref, x, y), 2, 1e3, "ms"),
        ("add, 1 element (per call)", adds(one_d), adds(one), 5, 1e6 / 1000, "us"),
    ]
    print("load average before: %.2f" % os.getloadavg()[0])
    results = {r[0]: ([], [], []) for r in rows}
    for k in range(args.rounds):
        for name, ours, theirs, runs, _, _ in rows:
            # Which side goes first alternates per round, so a drift in the
            # machine's speed (turbo, another process) favours neither.
            if k % 2 == 0:
                a = timed(ours, runs)
                b = timed(theirs, runs)
            else:
                b = timed(theirs, runs)
                a = timed(ours, runs)
            results[name][0].append(a)
            results[name][1].append(b)
            results[name][2].append(a / b)
    print("load average after: %.2f" % os.getloadavg()[0])
    print()
    print("| row | backplane (%s) | torch CPU | bridge / torch (median of %d rounds) |" % (args.backend,
                                                                                           args.rounds))
    print("|---|---|---|---|")
    for name, _, _, _, scale, unit in rows:
        ours, theirs, ratios = results[name]
        print("| %s | %.1f %s | %.1f %s | %.2f |" % (name, statistics.median(ours) * scale, unit,
                                                   statistics.median(theirs) * scale, unit,
                                                   statistics.median(ratios)))
    bt.reset_stats()
    step(train_dev, opt_dev, xd, yd)()
    print()
    print("backplane.torch.stats() of one SGD step on %s:" % args.backend)
    print()
    print_stats_table()


def print_stats_table():
    """backplane.torch.stats() as a markdown table, most bytes moved first."""
    print("| ATen operator | plugin | Backplane fallback | torch CPU fallback | bytes moved |")
    print("|---|---|---|---|---|")
    for name, s in sorted(bt.stats().items(), key=lambda kv: -kv[1]["bytes_moved"]):
        print("| `%s` | %d | %d | %d | %d |" % (name, s["plugin"], s["backplane_fallback"], s["torch_fallback"],
                                             s["bytes_moved"]))

if __name__ == "__main__":
    main()
