"""The operator model of ops.yaml, as gen_ops.py reads it: the allowed
fields, kinds, metas, dtypes and variants; schemas parsed by the
dispatcher's own parser (dispatcher/src/schema.cpp, run as bp_schema_json)
into Arg / Schema; the inplace and out variants an entry declares; and the
checks (the kernel-contract comment names every meta family) that load()
runs before anything is generated. Imported by gen_ops.py; not run alone.
"""
import json
import re
import subprocess

import yaml

# Same order as DType in dispatcher/src/dtype.h: bit i of dtype_mask.
DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
KINDS = {"pointwise", "reduction", "linalg", "nn", "copy", "view", "composite"}
METAS = {
    "binary", "binary_true_divide", "binary_div_mode", "comparison", "ternary_where",
    "unary_no_bool", "unary_float", "unary_float_only", "reduction_sum", "reduction_mean",
    "reduction_minmax", "reduction_argmax", "matmul", "addmm", "linear", "softmax",
    "layer_norm", "batch_norm", "conv2d", "max_pool2d", "avg_pool2d", "copy", "fill", "cat",
    "to_dtype", "clone", "contiguous", "upsample2d",
    "index_select", "conv_transpose2d", "topk", "gather", "scatter", "conv2d_fused",
    "attention",
    "lstm_layer", "gru_layer", "quantize_linear", "dequantize_linear", "matmul_integer",
    "conv_integer",
    # view functions
    "view", "reshape", "permute", "transpose", "narrow", "slice", "select", "expand",
    "squeeze", "unsqueeze",
}
VIEW_METAS = {"view", "reshape", "permute", "transpose", "narrow", "slice", "select", "expand", "squeeze",
              "unsqueeze"}
VARIANTS = {"inplace", "out"}
FIELDS = {"schema", "kind", "meta", "variants", "dtypes", "doc", "torch", "onnx", "tolerance"}
REQUIRED = ["schema", "kind", "meta", "dtypes", "doc"]


class GenError(Exception):
    pass


# ---------------------------------------------------------------- schema parsing
class Arg:
    """One argument or return; `default` is the canonical default text, `value`
    the parser's typed default (kind, i, d, b, ints, str) or None."""
    def __init__(self, base, alias, mutable, is_list, list_size, optional, name, default,
                 kwarg_only, value=None):
        self.base, self.alias, self.mutable = base, alias, mutable
        self.is_list, self.list_size, self.optional = is_list, list_size, optional
        self.name, self.default, self.kwarg_only = name, default, kwarg_only
        self.value = value

    def type_text(self):
        t = self.base
        if self.alias:
            t += "(%s%s)" % (self.alias, "!" if self.mutable else "")
        if self.is_list:
            t += "[%s]" % (self.list_size or "")
        if self.optional:
            t += "?"
        return t


class Schema:
    def __init__(self, ns, name, overload, args, rets):
        self.ns, self.name, self.overload, self.args, self.rets = ns, name, overload, args, rets

    def full_name(self):
        n = (self.ns + "::" if self.ns else "") + self.name
        return n + ("." + self.overload if self.overload else "")

    def text(self):
        parts, kw = [], False
        for a in self.args:
            if a.kwarg_only and not kw:
                parts.append("*")
                kw = True
            p = a.type_text() + " " + a.name
            if a.default is not None:
                p += "=" + a.default
            parts.append(p)
        rets = [r.type_text() for r in self.rets]
        ret = rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
        return "%s(%s) -> %s" % (self.full_name(), ", ".join(parts), ret)


def parse_schemas(texts, tool):
    """{text: Schema or error message} for every schema text, from one run of
    the dispatcher's parser (bp_schema_json)."""
    texts = sorted(set(texts))
    if any("\n" in t for t in texts):
        raise GenError("a schema spans several lines: %r" % [t for t in texts if "\n" in t][0])
    try:
        run = subprocess.run([tool], input="".join(t + "\n" for t in texts), capture_output=True, text=True)
    except OSError as err:
        raise GenError("cannot run the schema parser %s: %s" % (tool, err))
    lines = run.stdout.splitlines()
    if len(lines) != len(texts):
        raise GenError("the schema parser %s answered %d lines for %d schemas: %s" % (
            tool, len(lines), len(texts), run.stderr.strip()))
    out = {}
    for text, line in zip(texts, lines):
        j = json.loads(line)
        out[text] = schema_from_json(j) if j["ok"] else j["error"]
    return out


def schema_from_json(j):
    args = []
    for a in j["args"]:
        d = a["default"]
        args.append(Arg(a["type"], a["alias"], a["mutable"], a["is_list"], a["list_size"], a["optional"],
                        a["name"], d["text"] if d is not None else None, a["kwarg_only"], d))
    rets = [Arg(r["type"], r["alias"], r["mutable"], r["is_list"], 0, False, "", None, False) for r in j["returns"]]
    return Schema(j["ns"], j["name"], j["overload"], args, rets)


# ---------------------------------------------------------------- variants
def inplace_variant(s, where):
    if not s.args or s.args[0].base != "Tensor" or s.args[0].is_list or s.rets[0].base != "Tensor":
        raise GenError("%s: inplace variant needs 'Tensor self' first and a Tensor return" % where)
    args = [Arg("Tensor", "a", True, False, 0, False, s.args[0].name, None, False)] + s.args[1:]
    return Schema(s.ns, s.name + "_", s.overload, args,
                  [Arg("Tensor", "a", True, False, 0, False, "", None, False)])


def out_overload(overload):
    return "out" if overload in ("", "Tensor") else overload + "_out"


def out_variant(s, where):
    if len(s.rets) != 1 or s.rets[0].base != "Tensor" or s.rets[0].is_list:
        raise GenError("%s: out variant needs exactly one Tensor return" % where)
    out = Arg("Tensor", "a", True, False, 0, False, "out", None, True)
    return Schema(s.ns, s.name, out_overload(s.overload), list(s.args) + [out],
                  [Arg("Tensor", "a", True, False, 0, False, "", None, False)])


# ---------------------------------------------------------------- validation
CONTRACT_TITLE = "# Kernel contract by meta family"
# A contract entry starts "#   name, name, ...:" (three spaces); a name list
# may run over several such lines before the colon.
CONTRACT_NAMES = re.compile(r"^#   ([a-z0-9_]+(?:, [a-z0-9_]+)*)(,|:)")


def contract_families(text, path):
    """The meta family names the kernel contract comment at the top of
    ops.yaml describes, so that its spelling is the `meta:` field's."""
    lines = text.splitlines()
    titles = [line.split(" (")[0] for line in lines]
    if CONTRACT_TITLE not in titles:
        raise GenError("%s: no '%s' comment at the top" % (path, CONTRACT_TITLE))
    names = set()
    for line in lines[titles.index(CONTRACT_TITLE) + 1:]:
        if not line.startswith("#"):
            break
        m = CONTRACT_NAMES.match(line)
        if m:
            names.update(m.group(1).split(", "))
    return names


def check_contract(text, data, path):
    described = contract_families(text, path)
    stale = sorted(described - METAS)
    if stale:
        raise GenError("%s: the kernel contract comment names %s, which no meta family is called; "
                       "known: %s" % (path, stale, sorted(METAS)))
    used = {e["meta"] for e in data if isinstance(e, dict) and e.get("meta") in METAS}
    missing = sorted(used - described)
    if missing:
        raise GenError("%s: the kernel contract comment does not describe the meta family %s; "
                       "add it, spelled as the `meta:` field spells it" % (path, missing))


def load(path, schema_tool):
    with open(path) as f:
        text = f.read()
    data = yaml.safe_load(text)
    if not isinstance(data, list):
        raise GenError("%s: expected a list of operator entries" % path)
    check_contract(text, data, path)
    parsed = parse_schemas([str(e["schema"]) for e in data if isinstance(e, dict) and "schema" in e], schema_tool)
    entries, seen = [], set()
    for i, e in enumerate(data):
        where = "%s: entry %d" % (path, i + 1)
        if not isinstance(e, dict):
            raise GenError("%s: expected a mapping" % where)
        if "schema" in e:
            where += " (%s)" % str(e["schema"]).split("(")[0]
        unknown = sorted(set(e) - FIELDS)
        if unknown:
            raise GenError("%s: unknown field(s) %s; known: %s" % (where, unknown, sorted(FIELDS)))
        for r in REQUIRED:
            if r not in e:
                raise GenError("%s: missing field '%s'" % (where, r))
        if e["kind"] not in KINDS:
            raise GenError("%s: unknown kind '%s'; known: %s" % (where, e["kind"], sorted(KINDS)))
        if e["meta"] not in METAS:
            raise GenError("%s: unknown meta '%s'; known: %s" % (where, e["meta"], sorted(METAS)))
        if (e["kind"] == "view") != (e["meta"] in VIEW_METAS):
            raise GenError("%s: kind '%s' does not fit meta '%s' (view operators use view functions: %s)" % (
                where, e["kind"], e["meta"], sorted(VIEW_METAS)))
        for field in ("doc", "torch", "onnx"):
            if field in e and not isinstance(e[field], str):
                raise GenError("%s: field '%s' must be a string" % (where, field))
        variants = e.get("variants") or []
        if not isinstance(variants, list) or any(v not in VARIANTS for v in variants):
            raise GenError("%s: variants %s; each must be one of %s" % (where, variants, sorted(VARIANTS)))
        dtypes = e["dtypes"]
        if not isinstance(dtypes, list) or not dtypes:
            raise GenError("%s: dtypes must be a non-empty list" % where)
        for d in dtypes:
            if d not in DTYPES:
                raise GenError("%s: unknown dtype '%s'; known: %s" % (where, d, DTYPES))
        if "tolerance" in e and (not isinstance(e["tolerance"], dict) or "reason" not in e["tolerance"]):
            raise GenError("%s: tolerance must be a mapping with a 'reason'" % where)
        s = parsed[str(e["schema"])]
        if isinstance(s, str):
            raise GenError("%s: %s" % (where, s))
        if variants and (s.name.endswith("_") or e["kind"] == "view"):
            raise GenError("%s: variants need a functional, non-view operator" % where)
        group = [("functional", s)]
        if "inplace" in variants:
            group.append(("inplace", inplace_variant(s, where)))
        if "out" in variants:
            group.append(("out", out_variant(s, where)))
        for _, v in group:
            if v.full_name() in seen:
                raise GenError("%s: operator '%s' defined twice" % (where, v.full_name()))
            seen.add(v.full_name())
        mask = 0
        for d in dtypes:
            mask |= 1 << DTYPES.index(d)
        entries.append({"entry": e, "group": group, "mask": mask})
    return entries
