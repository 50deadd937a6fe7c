"""Stream ordering on an asynchronous vendor_sim, decided by the test, not a
clock: stream A runs a kernel the test holds (BP_VENDOR_SIM_HOLD_KERNELS
names a file; kernels wait while it exists), records an event, and stream B
waits for it, then copies A's result to pinned host memory (non_blocking).

  python stream_order.py HOLD_FILE waits   B waits for A's event: B must
      not finish while A is held, and after the release the copy holds A's
      result (2.0).
  python stream_order.py HOLD_FILE ignores   the negative control: B does
      not wait, so B finishes while A is still held: the ordering check
      (b_done_while_a_held must be false) catches a missing wait.
Prints a JSON line: {"plugin_adds", "b_done_while_a_held", "seen", "last", "elapsed_ms"}.
"""
import json
import os
import sys

import torch

import backplane.torch as bt

hold, mode = sys.argv[1], sys.argv[2]
bt.init("vendor_sim")
n = 1 << 16
x = torch.full((n,), 1.0, device="backplane")
one = torch.full((n,), 1.0, device="backplane")
z = torch.full((n,), 1.0, device="backplane")
torch.backplane.synchronize()
bt.reset_stats()
a, b = torch.Stream("backplane"), torch.backplane.Stream()
y = torch.empty(n).pin_memory()
assert y.is_pinned()
start, end = torch.Event("backplane", enable_timing=True), torch.Event("backplane", enable_timing=True)
done = torch.backplane.Event()
b_done_while_a_held = None
open(hold, "w").close()
try:
    with torch.backplane.stream(a):
        start.record(a)
        torch.add(x, one, out=z)  # vendor_sim's own add kernel: held while the file exists
        end.record(a)
    if mode == "waits":
        b.wait_event(end)
    with torch.backplane.stream(b):
        y.copy_(z, non_blocking=True)
        done.record(b)
    if mode == "waits":
        b_done_while_a_held = done.query()  # B waits for A, which is held: must be False
    else:
        done.synchronize()  # nothing to wait for: B finishes while A is held
        b_done_while_a_held = not end.query()
finally:
    os.remove(hold)
torch.backplane.synchronize()
print(json.dumps({"plugin_adds": bt.stats().get("aten::add.out", {}).get("plugin", 0), "b_done_while_a_held": b_done_while_a_held, "seen": float(y[0]), "last": float(y[-1]),
                  "elapsed_ms": start.elapsed_time(end)}))
