"""Does a pinned, non_blocking host-to-device copy overlap a kernel on another
stream? Timed with the device's own events on asynchronous vendor_sim.

Stream A runs one vendor_sim kernel held BP_VENDOR_SIM_KERNEL_US long (the
simulated device's kernel time); stream B copies a pinned host tensor of
--mb MiB to the device with non_blocking=True. Each round times, with
torch.Event(enable_timing=True) on the device:
  kernel   A alone (event before and after the kernel)
  copy     B alone
  both     A and B issued together: from an event recorded on A before
           anything was issued to the later of the two end events
and prints the medians over --rounds interleaved rounds and
overlap = (kernel + copy - both) / min(kernel, copy): 1.0 is full overlap
(the shorter one hidden under the longer), 0.0 is none (serialised).
A --same-stream run issues the copy on stream A behind the kernel: the
negative control, where the measurement must show no overlap (about 0).

  BP_VENDOR_SIM_ASYNC=1 BP_VENDOR_SIM_KERNEL_US=40000 PYTHONPATH=build/default/python \\
    /opt/backplane/venv/bin/python bench/torch_pinned_overlap.py --mb 64 --rounds 7
"""
import argparse
import os
import statistics
import sys

import torch

import backplane.torch as bt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=64, help="MiB copied host to device")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--same-stream", action="store_true", help="copy on the kernel's stream (control)")
    args = ap.parse_args()
    if os.environ.get("BP_VENDOR_SIM_ASYNC") != "1":
        sys.exit("torch_pinned_overlap.py: run with BP_VENDOR_SIM_ASYNC=1 (and BP_VENDOR_SIM_KERNEL_US)")
    bt.init("vendor_sim")
    n = args.mb * (1 << 20) // 4
    host = torch.randn(n).pin_memory()
    assert host.is_pinned()
    dev = torch.empty(n, device="backplane")
    x = torch.ones(1024, device="backplane")
    z = torch.empty(1024, device="backplane")
    a = torch.backplane.Stream()
    b = a if args.same_stream else torch.backplane.Stream()

    def ev():
        return torch.Event("backplane", enable_timing=True)

    def kernel(s):
        with torch.backplane.stream(s):
            torch.add(x, x, out=z)  # vendor_sim's own kernel, held kernel_us

    def copy(s):
        with torch.backplane.stream(s):
            dev.copy_(host, non_blocking=True)

    def timed(fn, s):
        e0, e1 = ev(), ev()
        e0.record(s)
        fn(s)
        e1.record(s)
        e1.synchronize()
        return e0.elapsed_time(e1)

    def both():
        e0, ea, eb = ev(), ev(), ev()
        e0.record(a)
        b.wait_event(e0)  # B starts no earlier than e0 (its time base)
        kernel(a)
        ea.record(a)
        copy(b)
        eb.record(b)
        ea.synchronize()
        eb.synchronize()
        return max(e0.elapsed_time(ea), e0.elapsed_time(eb))

    for fn in (lambda: timed(kernel, a), lambda: timed(copy, b), both):  # warm-up
        fn()
    ks, cs, bs = [], [], []
    for _ in range(args.rounds):
        ks.append(timed(kernel, a))
        cs.append(timed(copy, b))
        bs.append(both())
    k, c, t = statistics.median(ks), statistics.median(cs), statistics.median(bs)
    overlap = (k + c - t) / min(k, c)
    torch.backplane.synchronize()
    assert torch.equal(dev.cpu(), host.cpu()), "the copied tensor differs from its source"
    print(f"{args.mb} MiB pinned copy {'behind' if args.same_stream else 'beside'} a "
          f"{os.environ.get('BP_VENDOR_SIM_KERNEL_US', '0')} us kernel, medians of {args.rounds} rounds (ms): "
          f"kernel {k:.2f}, copy {c:.2f}, both {t:.2f}, overlap {overlap:.2f}")


if __name__ == "__main__":
    main()
