"""torch.compile(backend="backplane") on the backend under test (issue 41):
compiled forward and training equal eager on the device, no graph breaks,
operators Backplane lacks stay in the compiled function and are reported,
recompilation on a new shape, data-dependent control flow, bad options."""
import importlib
import math
import os
import tomllib

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


@pytest.fixture(autouse=True)
def fresh(bt):
    torch._dynamo.reset()
    bt.reset_compile_report()
    yield
    torch._dynamo.reset()


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = F.relu(self.bn(self.conv1(x)))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


class DecoderBlock(nn.Module):
    """GPT-style: pre-LayerNorm causal self-attention and a GELU MLP."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def _model(cls, dev, seed=0):
    torch.manual_seed(seed)
    m = cls()
    for p in m.parameters():  # weights that keep outputs varied
        p.data.normal_(0.0, 0.3)
    return m.to(dev)


def _input(cls, dev, batch=2, seed=1):
    g = torch.Generator().manual_seed(seed)
    shape = (batch, 3, 16, 16) if cls is SmallCNN else (batch, 8, 32)
    return torch.randn(shape, generator=g).to(dev)


def _close(a, b, what):
    a, b = a.detach().cpu(), b.detach().cpu()
    assert torch.allclose(a, b, rtol=1e-4, atol=1e-4), "%s: max |diff| %g" % (what, (a - b).abs().max().item())


@pytest.mark.parametrize("cls", [SmallCNN, DecoderBlock])
def test_compiled_forward_equals_eager(bt, dev, cls):
    m = _model(cls, dev).eval()
    x = _input(cls, dev)
    with torch.no_grad():
        ref = m(x)
        out = torch.compile(m, backend="backplane")(x)
    assert out.device == ref.device
    assert ref.float().std().item() > 0.1, "reference output does not vary"
    _close(out, ref, cls.__name__)
    (entry,) = bt.compile_report()
    assert entry["name"].startswith("forward (test_compile.py:"), entry["name"]
    assert entry["regions"] >= 1 and entry["nodes_lowered"]["backplane"] > 0
    assert [g["kind"] for g in entry["graphs"]] == ["inference"]


@pytest.mark.parametrize("cls", [SmallCNN, DecoderBlock])
def test_explain_no_graph_breaks(bt, dev, cls):
    m = _model(cls, dev).eval()
    result = torch._dynamo.explain(m)(_input(cls, dev))
    assert result.graph_break_count == 0, result.break_reasons
    assert result.graph_count == 1


def _train(m, x, target, steps):
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(m(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("cls", [SmallCNN, DecoderBlock])
def test_compiled_training_matches_eager(bt, dev, cls):
    eager, compiled = _model(cls, dev).train(), _model(cls, dev).train()
    x = _input(cls, dev)
    with torch.no_grad():
        target = torch.randn_like(eager(x).cpu()).to(dev)
    ref = _train(eager, x, target, 3)
    got = _train(torch.compile(compiled, backend="backplane"), x, target, 3)
    assert ref[0] != ref[-1], "eager losses did not move"
    assert got == pytest.approx(ref, rel=1e-4, abs=1e-5)
    for (n, a), b in zip(eager.named_parameters(), compiled.parameters()):
        _close(b, a, n)
    (entry,) = bt.compile_report()
    assert sorted(g["kind"] for g in entry["graphs"]) == ["backward", "forward"]


def _unrouted_op(bt):
    """erfinv: an ATen operator without a Backplane route (checked, so the
    test fails rather than passes vacuously if Backplane gains one)."""
    assert "erfinv" not in bt._info["routed_ops"], "Backplane routes erfinv now: pick another operator"
    return "erfinv"


def test_missing_operator_runs_eager_and_is_reported(bt, dev):
    op = _unrouted_op(bt)

    def f(x):
        return torch.erfinv(torch.tanh(x) * 0.5) * 2 + 1

    x = _input(DecoderBlock, dev)
    out = torch.compile(f, backend="backplane")(x)
    _close(out, f(x), "erfinv model")
    (entry,) = bt.compile_report()
    names = [e["op"] for e in entry["nodes_eager"]]
    assert any(n.startswith("aten.%s" % op) for n in names), names
    assert all(e["reason"] for e in entry["nodes_eager"])
    assert entry["regions"] >= 1


def test_fallback_error_names_the_operator(bt, dev):
    _unrouted_op(bt)
    cf = torch.compile(lambda x: torch.erfinv(x * 0.1), backend="backplane", options={"fallback": "error"})
    with pytest.raises(Exception, match="erfinv"):
        cf(_input(DecoderBlock, dev))


def test_fallback_error_accepts_a_fully_lowered_graph(bt, dev):
    assert {"mul.Tensor", "relu", "add.Tensor"} <= set(bt._info["routed_ops"])
    cf = torch.compile(lambda x: (x * x).relu() + x, backend="backplane", options={"fallback": "error"})
    x = _input(DecoderBlock, dev)
    _close(cf(x), (x * x).relu() + x, "mul/relu/add")
    (entry,) = bt.compile_report()
    assert entry["nodes_eager"] == [] and entry["regions"] == 1 and entry["nodes_lowered"]["backplane"] == 3


def test_report_option_prints_the_lowering(bt, dev, capfd):
    cf = torch.compile(lambda x: torch.erfinv(x.relu() * 0.1), backend="backplane", options={"report": True})
    cf(_input(DecoderBlock, dev))
    err = capfd.readouterr().err
    assert "region(s)" in err and "eager aten.erfinv" in err


@pytest.mark.parametrize("options, word", [({"fallbak": "eager"}, "fallbak"), ({"fallback": "ignore"}, "fallback"),
                                           ({"report": "yes"}, "report")])
def test_bad_options_are_named(bt, dev, options, word):
    cf = torch.compile(lambda x: x + 1, backend="backplane", options=options)
    with pytest.raises(Exception, match=word):
        cf(_input(DecoderBlock, dev))


def test_shape_change_recompiles_and_stays_correct(bt, dev):
    m = _model(DecoderBlock, dev).eval()
    cm = torch.compile(m, backend="backplane")
    with torch.no_grad():
        for batch in (2, 3, 5):
            x = _input(DecoderBlock, dev, batch=batch, seed=batch)
            _close(cm(x), m(x), "batch %d" % batch)
    (entry,) = bt.compile_report()
    assert entry["recompilations"] >= 1


def test_data_dependent_control_flow_is_correct(bt, dev):
    def f(x):
        y = x * 3
        if y.sum() > 0:
            return y.relu() + 1
        return y.tanh() - 1

    cf = torch.compile(f, backend="backplane")
    x = _input(DecoderBlock, dev)
    for sign in (1.0, -1.0):
        xs = x.abs() * sign
        _close(cf(xs), f(xs), "branch %g" % sign)


def test_backend_registered_and_declared(bt):
    assert "backplane" in torch._dynamo.list_backends()
    from torch._dynamo.backends.registry import lookup_backend
    assert lookup_backend("backplane") is bt.compiler.backend
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        eps = tomllib.load(f)["project"]["entry-points"]["torch_dynamo_backends"]
    module, _, attr = eps["backplane"].partition(":")
    assert getattr(importlib.import_module(module), attr) is bt.compiler.backend


def test_in_place_update_of_a_graph_input_matches_eager(bt, dev):
    def f(x, y):
        x.add_(y)  # mutates a graph input: AOTAutograd writes it back after the graph
        return (x * 2).relu()

    x, y = _input(DecoderBlock, dev), _input(DecoderBlock, dev, seed=7)
    xe, xc = x.clone(), x.clone()
    ref = f(xe, y)
    out = torch.compile(f, backend="backplane")(xc, y)
    _close(out, ref, "output")
    _close(xc, xe, "the mutated input")
    assert not torch.equal(xc.cpu(), x.cpu())
