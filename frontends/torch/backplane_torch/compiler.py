"""The torch.compile backend "backplane".

    import torch, backplane.torch
    backplane.torch.init("vendor_sim")
    m = MyModel().to("backplane")
    cm = torch.compile(m, backend="backplane", options={"report": True})
    y = cm(x)                                   # forward; y.sum().backward() too
    backplane.torch.compile_report()            # regions, lowered, eager nodes

Dynamo captures the graph; AOTAutograd (core ATen decompositions, without
those of operators Backplane has a route for) produces the forward and
backward graphs; each node is lowered with the eager bridge's operator
tables (lowering.py). Nodes that cannot be lowered stay in the compiled
function and run through the eager bridge (torch's CPU fallback), not as a
graph break; the report names each with the reason.

This first slice executes each lowered graph as torch.fx's generated Python
(intermediates released at their last use) calling the bridge's routed
kernels directly: no per-node Python dispatch through nn.Module or autograd,
but no C++ executor of prepared call plans and no capture/replay yet.
"""
import importlib.abc
import importlib.util
import os
import re
import sys
import threading

import torch

from backplane.torch import lowering as _lowering

NAME = "backplane"
FALLBACKS = ("eager", "error")
_DEFAULTS = {"report": False, "fallback": "eager"}

_lock = threading.Lock()
_reports = {}  # frame id -> report dict (see compile_report)


class CompileError(RuntimeError):
    """A graph the backend refuses (fallback="error" and a node that cannot be
    lowered; bad options). Dynamo raises it wrapped in BackendCompilerFailed."""


def _options(options, mode):
    if mode not in (None, "default"):
        raise CompileError("backend 'backplane': mode=%r is not supported yet (capture/replay, issue 41 item 3); "
                           "use the default mode" % (mode,))
    opts = dict(_DEFAULTS)
    for key, value in (options or {}).items():
        if key not in _DEFAULTS:
            raise CompileError("backend 'backplane': unknown option %r (known: %s)" % (key, ", ".join(sorted(_DEFAULTS))))
        opts[key] = value
    if not isinstance(opts["report"], bool):
        raise CompileError("backend 'backplane': option 'report' must be a bool, got %r" % (opts["report"],))
    if opts["fallback"] not in FALLBACKS:
        raise CompileError("backend 'backplane': option 'fallback' must be one of %s, got %r"
                           % (", ".join(FALLBACKS), opts["fallback"]))
    return opts


def _tables():
    import backplane.torch as bt
    if bt._info is None:
        raise CompileError("backend 'backplane': backplane.torch.init() has not run (no device behind the graph)")
    return _lowering.Tables(bt._info)


def _frame_name(gm, frame):
    """"forward (model.py:12)": the compiled function, from the first frame of
    a node's stack trace as Dynamo recorded it; "frame N" without one."""
    for node in gm.graph.nodes:
        m = _FRAME_LINE.search(node.meta.get("stack_trace") or "")
        if m:
            return "%s (%s:%s)" % (m.group(3), os.path.basename(m.group(1)), m.group(2))
    return "frame %d" % frame


_FRAME_LINE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def _entry(gm):
    """The report entry of the frame Dynamo is compiling (created on first use)."""
    cid = torch._guards.CompileContext.current_compile_id()
    frame = cid.frame_id if cid is not None else -1
    attempt = cid.frame_compile_id if cid is not None else 0
    name = _frame_name(gm, frame)
    with _lock:
        entry = _reports.setdefault(frame, {"name": name, "compile_ids": set(), "graphs": []})
        entry["compile_ids"].add(attempt)
    return entry, attempt


def _graph_compiler(kind, entry, attempt, opts, tables):
    from torch._functorch.aot_autograd import make_boxed_func
    def compile_graph(gm, example_inputs):
        result = _lowering.lower(gm, tables)
        result.update(kind=kind, compile=attempt)
        if result["eager"] and opts["fallback"] == "error":
            first = result["eager"][0]
            raise CompileError("backend 'backplane' (fallback='error'): %s node '%s' (%s) cannot be lowered: %s"
                               % (kind, first["node"], first["op"], first["reason"]))
        with _lock:
            entry["graphs"].append(result)
        if opts["report"]:
            sys.stderr.write("backplane.torch.compile: %s %s graph: %d region(s), %d node(s) lowered, %d eager%s\n"
                             % (entry["name"], kind, len(result["regions"]), sum(result["lowered"].values()),
                                len(result["eager"]),
                                "".join("\n  eager %s: %s" % (e["op"], e["reason"]) for e in result["eager"])))
        return make_boxed_func(gm.forward)
    return compile_graph


def _decompositions(tables):
    """Core ATen decompositions, less those of operators the bridge routes to
    Backplane (their Backplane kernel, possibly fused, runs instead)."""
    from torch._decomp import core_aten_decompositions
    table = core_aten_decompositions()
    return {op: fn for op, fn in table.items()
            if not isinstance(op, torch._ops.OpOverload) or _lowering.aten_name(op) not in tables.routed}


def backend(gm, example_inputs, options=None, mode=None, **_ignored):
    """torch.compile backend semantics: called by Dynamo with a captured
    torch.fx.GraphModule and its example (fake) inputs, returns the compiled
    callable. options (torch.compile(..., options={...})): "report" (bool,
    default False: print each graph's lowering to stderr) and "fallback"
    ("eager", default: nodes that cannot be lowered run through the eager
    bridge; "error": raise CompileError naming the first such node). Raises
    CompileError for unknown options, a mode other than the default, or
    before backplane.torch.init(). Inputs may be any dtype and shape torch
    accepts on the device; a new shape recompiles as Dynamo decides.
    Thread-safe: the report is kept under a lock."""
    from torch._dynamo.backends.common import aot_autograd
    opts = _options(options, mode)
    tables = _tables()
    entry, attempt = _entry(gm)
    compiler = aot_autograd(fw_compiler=_graph_compiler("forward", entry, attempt, opts, tables),
                            bw_compiler=_graph_compiler("backward", entry, attempt, opts, tables),
                            inference_compiler=_graph_compiler("inference", entry, attempt, opts, tables),
                            decompositions=_decompositions(tables))
    return compiler(gm, example_inputs)


def compile_report():
    """Per function torch.compile compiled with the backplane backend (one
    Dynamo frame each), a list of dicts: name ("forward (model.py:12)", the
    function and where it starts, else "frame N"), compiles, recompilations
    (compiles after the first, e.g. for a new input shape), regions (compiled
    regions in all its graphs), nodes_lowered ({kind: count}, kinds as in
    lowering.py), nodes_eager (list of {graph, node, op, reason}: nodes run
    through the eager bridge), graphs (the per-graph detail: kind forward /
    backward / inference, compile attempt, regions as node counts, lowered,
    eager). A snapshot: later compiles do not change it. Thread-safe."""
    out = []
    with _lock:
        for entry in _reports.values():
            lowered = {k: 0 for k in _lowering.LOWERED_KINDS}
            eager = []
            for g in entry["graphs"]:
                for k, n in g["lowered"].items():
                    lowered[k] += n
                eager.extend(dict(e, graph=g["kind"]) for e in g["eager"])
            out.append({"name": entry["name"], "compiles": len(entry["compile_ids"]),
                        "recompilations": len(entry["compile_ids"]) - 1,
                        "regions": sum(len(g["regions"]) for g in entry["graphs"]),
                        "nodes_lowered": lowered, "nodes_eager": eager,
                        "graphs": [dict(g, regions=list(g["regions"]), lowered=dict(g["lowered"]),
                                        eager=[dict(e) for e in g["eager"]]) for g in entry["graphs"]]})
    return out


def reset_compile_report():
    """Forgets every entry of compile_report() (torch._dynamo.reset() also
    restarts Dynamo's frame numbering, so call both between experiments)."""
    with _lock:
        _reports.clear()


def _register_into(registry):
    if NAME in registry._COMPILER_FNS or registry._BACKENDS.get(NAME) is not None:
        return
    registry.register_backend(compiler_fn=backend, name=NAME)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Registers the backend when torch imports Dynamo's backend registry, so
    `import backplane.torch` does not import torch._dynamo itself (seconds)."""

    def find_spec(self, name, path, target=None):
        if name != _REGISTRY:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _register_into(module)

        spec.loader.exec_module = exec_module
        return spec


_REGISTRY = "torch._dynamo.backends.registry"


def register():
    """Registers `backend` as Dynamo's "backplane" (now if Dynamo's registry
    is loaded, else when it loads), unless it is registered already or an
    installed torch_dynamo_backends entry point will register it on first
    use (torch loads the entry point, which imports this)."""
    if _REGISTRY in sys.modules:
        _register_into(sys.modules[_REGISTRY])
    elif not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())
