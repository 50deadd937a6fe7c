"""Node-by-node lowering of an AOTAutograd graph (forward, backward or
inference) to what the eager bridge runs, with the bridge's own tables:
the ATen operators backplane._torch routed to Backplane operators at init
(`routed_ops`), the ones the bridge implements itself (`native_ops`), and
why the rest were not routed (`not_routed`). Nothing here lists operators
by hand.

Each call node gets a kind:
  "backplane"  an ATen operator routed to a Backplane operator (the plugin's
               kernel, else Backplane's CPU fallback, per the plan's route);
  "bridge"     an operator the bridge implements itself (copies, factories);
  "view"       a view or metadata operator: no copy, torch's view on the
               device memory;
  "composite"  an operator torch implements with other operators
               (CompositeExplicitAutograd, e.g. full, clone): its parts
               dispatch to the bridge at run time (routed or not; the
               report does not follow them yet);
  "shape"      symbolic size arithmetic and tuple indexing (no kernel);
  "eager"      everything else: runs through the eager bridge (torch's CPU
               fallback) inside the compiled function, with the reason.
A run of consecutive non-eager nodes is one compiled region.
"""
import operator

import torch

LOWERED_KINDS = ("backplane", "bridge", "view", "composite", "shape")

_SHAPE_OPS = {"sym_size.int", "sym_size", "sym_stride.int", "sym_stride", "sym_numel", "sym_storage_offset"}


def aten_name(op):
    """"add.Tensor" for aten.add.Tensor, "relu" for aten.relu.default (the
    bridge's naming); None for an operator outside the aten namespace."""
    ns, _, base = op._schema.name.partition("::")
    if ns != "aten":
        return None
    return base if op._overloadname == "default" else "%s.%s" % (base, op._overloadname)


class Tables:
    """The bridge's operator tables, read once from backplane.torch.init's
    answer (a dict with routed_ops, native_ops and not_routed)."""

    def __init__(self, info):
        self.routed = frozenset(info.get("routed_ops", ()))
        self.native = frozenset(info.get("native_ops", ()))
        self.not_routed = dict(info.get("not_routed", {}))

    def why_not(self, name):
        """Why `name` ("add.Tensor") has no Backplane route, in the bridge's words."""
        base = name.split(".")[0]
        for key in (name, base):
            if key in self.not_routed:
                return "Backplane operator '%s' not routed: %s" % (key, self.not_routed[key])
        return "no Backplane operator aten::%s" % name


def _device_of(node):
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return val.device
    if isinstance(val, (list, tuple)):
        for v in val:
            if isinstance(v, torch.Tensor):
                return v.device
    return None


def classify(node, tables):
    """(kind, reason) of one call_function node; reason is "" when lowered."""
    target = node.target
    if not isinstance(target, torch._ops.OpOverload):
        if target is operator.getitem or getattr(target, "__module__", None) in ("_operator", "math") \
                or str(getattr(target, "__name__", "")).startswith("sym_"):
            return "shape", ""
        return "eager", "not an ATen operator (%s)" % getattr(target, "__name__", target)
    name = aten_name(target)
    if name is None:
        return "eager", "not an ATen operator (%s)" % target._schema.name
    if name in _SHAPE_OPS:
        return "shape", ""
    device = _device_of(node)
    if device is not None and device.type != "privateuseone" and device.type != torch._C._get_privateuse1_backend_name():
        return "eager", "aten::%s runs on %s, not the Backplane device" % (name, device)
    if name in tables.routed:
        return "backplane", ""
    if target.is_view:
        return "view", ""
    if name in tables.native:
        return "bridge", ""
    qualified = target._schema.name + ("" if target._overloadname == "default" else "." + target._overloadname)
    has_p1 = torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "PrivateUse1")
    if not has_p1 and torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CompositeExplicitAutograd"):
        return "composite", ""
    return "eager", tables.why_not(name) + "; runs in torch's CPU fallback"


def lower(gm, tables):
    """The lowering of a GraphModule: {"regions": [node count per region],
    "lowered": {kind: count}, "eager": [{"node", "op", "reason"}]}."""
    regions, lowered, eager = [], {k: 0 for k in LOWERED_KINDS}, []
    run = 0
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        kind, reason = classify(node, tables)
        if kind == "eager":
            if run:
                regions.append(run)
            run = 0
            eager.append({"node": node.name, "op": str(node.target), "reason": reason})
            continue
        lowered[kind] += 1
        if kind != "shape":
            run += 1
    if run:
        regions.append(run)
    return {"regions": regions, "lowered": lowered, "eager": eager}
