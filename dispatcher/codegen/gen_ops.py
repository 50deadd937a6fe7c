#!/usr/bin/env python3
"""Generates Backplane's operator table and typed C++ API from ops.yaml.

  gen_ops.py --yaml abi/ops.yaml --out-dir build/generated --schema-tool build/bin/bp_schema_json

writes
  <out-dir>/op_table.cpp                 kOpTable: functional entries + variants
  <out-dir>/include/backplane/ops.hpp    bp::add(...), bp::add_(...), bp::add_out(...)
  <out-dir>/abi/include/backplane/op_args.h
                                         BP_OP_ADD_TENSOR, BP_ARG_ADD_TENSOR_ALPHA, ... (C99,
                                         for plugins: on Backplane::abi's include path)
  --py-out FILE                          the Python package's ops.py (gen_py.py)

Needs Python 3 and PyYAML. Schemas are read by the dispatcher's own parser
(dispatcher/src/schema.cpp, run as the bp_schema_json tool), so the grammar
has one implementation; the parsed arguments go into op_table.cpp as data and
the core does not parse them again. Any problem in ops.yaml (unknown field,
kind, meta, dtype or variant; a schema the parser rejects) is reported with
the entry's name and a non-zero exit status.
"""
import argparse
import os
import json
import re
import subprocess
import sys

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


# ---------------------------------------------------------------- op_table.cpp
def c_str(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


VARIANT_ENUM = {"functional": "OpVariant::kFunctional", "inplace": "OpVariant::kInplace",
                "out": "OpVariant::kOut"}


def flatten(entries):
    """[(index, variant, schema, entry, mask, functional_index)] in table order."""
    rows = []
    for item in entries:
        fidx = len(rows)
        for variant, s in item["group"]:
            rows.append((len(rows), variant, s, item["entry"], item["mask"], fidx))
    return rows


# (base type, is list) -> bp::core::ArgType enumerator (dispatcher/src/schema.h).
ARG_TYPES = {("Tensor", False): "kTensor", ("Tensor", True): "kTensorList", ("int", False): "kInt",
             ("int", True): "kIntList", ("float", False): "kFloat", ("bool", False): "kBool",
             ("Scalar", False): "kScalar", ("ScalarType", False): "kScalarType", ("str", False): "kString"}


def arg_type(a):
    return "ArgType::" + ARG_TYPES[(a.base, a.is_list)]


def c_double(x):
    return repr(float(x)) if x == x and x not in (float("inf"), float("-inf")) else (
        "__builtin_nan(\"\")" if x != x else ("__builtin_inf()" if x > 0 else "-__builtin_inf()"))


def gen_table(rows):
    out = ["// Generated by dispatcher/codegen/gen_ops.py from ops.yaml. Do not edit.",
           "// Schemas arrive parsed (by dispatcher/src/schema.cpp, at build time): the",
           "// core builds each operator's Schema from these arrays without parsing.",
           '#include "op_table.h"', "", "namespace bp::core {", "namespace {", ""]
    for idx, variant, s, e, mask, fidx in rows:
        defs = []
        for k, a in enumerate(s.args):
            v = a.value
            if v is not None and v["ints"]:
                out.append("constexpr int64_t kInts%d_%d[] = {%s};" % (idx, k, ", ".join(str(i) for i in v["ints"])))
            if v is None:
                dflt = "false, {}"
            else:
                dflt = "true, {%d, %dLL, %s, %s, %s, %d, %s}" % (
                    v["kind"], v["i"], c_double(v["d"]), "true" if v["b"] else "false",
                    ("kInts%d_%d" % (idx, k)) if v["ints"] else "nullptr", len(v["ints"]), c_str(v["str"]))
            defs.append("    {%s, %s, %s, %s, %s, %d, %s, %s}," % (
                c_str(a.name), arg_type(a), "true" if a.optional else "false", "true" if a.kwarg_only else "false",
                "true" if a.mutable else "false", a.list_size, c_str(a.alias), dflt))
        if defs:
            out.append("constexpr OpArgDef kArgs%d[] = {" % idx)
            out += defs
            out.append("};")
        out.append("constexpr OpReturnDef kReturns%d[] = {%s};" % (idx, ", ".join(
            "{%s, %s, %s}" % (arg_type(r), c_str(r.alias), "true" if r.mutable else "false") for r in s.rets)))
    out += ["", "}  // namespace", "", "const OpTableEntry kOpTable[] = {"]
    for idx, variant, s, e, mask, fidx in rows:
        out.append("    {%s,\n     %s, %s, %s, %s, %d, kReturns%d, %d,\n     %s, %s, %s, %d, 0x%xu,\n"
                   "     %s, %s, %s},  // %d" % (
                       c_str(s.text()), c_str(s.ns), c_str(s.name), c_str(s.overload),
                       ("kArgs%d" % idx) if s.args else "nullptr", len(s.args), idx, len(s.rets),
                       c_str(e["kind"]), c_str(e["meta"]), VARIANT_ENUM[variant], fidx, mask,
                       c_str(e.get("doc", "")), c_str(e.get("torch", "")), c_str(e.get("onnx", "")), idx))
    out += ["};", "", "const size_t kOpTableSize = sizeof(kOpTable) / sizeof(kOpTable[0]);", "",
            "}  // namespace bp::core", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- ops.hpp
def cpp_default(a):
    d = a.default
    if d is None:
        return None
    if d == "None":
        return "std::nullopt"
    if a.base == "bool":
        return "true" if d == "True" else "false"
    if a.base == "str":
        return '"' + d[1:-1] + '"'
    if a.is_list:
        if d.startswith("["):
            return "std::vector<int64_t>{%s}" % d[1:-1].strip()
        return "std::vector<int64_t>{%s}" % ", ".join([d] * a.list_size)
    if a.base == "float":
        return d if re.search(r"[.eE]", d) else d + ".0"
    if a.base == "Scalar":
        return "Scalar(%s)" % ("true" if d == "True" else "false" if d == "False" else d)
    return d


def cpp_type(a):
    if a.base == "Tensor" and a.is_list:
        t = "const std::vector<Tensor>&"
    elif a.base == "Tensor":
        t = "std::optional<Tensor>" if a.optional else "Tensor"
        return "const %s&" % t
    elif a.base == "int" and a.is_list:
        t = "OptionalIntList" if a.optional else "std::vector<int64_t>"
        return "const %s&" % t
    else:
        base = {"int": "int64_t", "float": "double", "bool": "bool", "Scalar": "Scalar",
                "ScalarType": "DLDataType", "str": "std::string"}[a.base]
        if a.optional:
            base = "std::optional<%s>" % base
        return ("const %s&" % base) if ("optional" in base or base == "std::string") else base
    return t


def cpp_name(s, variant):
    if variant == "out":
        return s.name + "_out"
    return s.name


def ordered_args(s, variant):
    """C++ parameter order: out= variants take `out` first (as at::add_out does),
    so that the functional defaults can stay trailing."""
    args = list(s.args)
    if variant == "out":
        args = [args[-1]] + args[:-1]
    return args


def first_default(args):
    """Index from which every parameter has a default (C++ needs them trailing)."""
    i = len(args)
    while i > 0 and args[i - 1].default is not None:
        i -= 1
    return i


def resolve_overloads(rows):
    """Like PyTorch's C++ API: overloads sharing a C++ name (bp::div(a, b) and
    bp::div(a, b, rounding_mode)) must not be callable with the same argument
    types; where defaults would allow it, the longer overload loses them.
    Returns {table index: first defaulted parameter}."""
    firsts, groups = {}, {}
    for idx, variant, s, e, mask, fidx in rows:
        args = ordered_args(s, variant)
        firsts[idx] = first_default(args)
        groups.setdefault(cpp_name(s, variant), []).append((idx, [cpp_type(a) for a in args]))
    for members in groups.values():
        changed = True
        while changed:
            changed = False
            for i, (ia, ta) in enumerate(members):
                for ib, tb in members[i + 1:]:
                    lo = max(firsts[ia], firsts[ib])
                    hi = min(len(ta), len(tb))
                    if any(ta[:k] == tb[:k] for k in range(lo, hi + 1)):
                        longer = ia if len(ta) >= len(tb) else ib
                        n = len(ta) if longer == ia else len(tb)
                        if firsts[longer] < n:
                            firsts[longer] = n
                            changed = True
                        else:
                            raise GenError("C++ overloads of '%s' cannot be told apart" % cpp_name(
                                rows[ia][2], rows[ia][1]))
    return firsts


def cpp_ident(name):
    return {"default": "default_", "int": "int_"}.get(name, name)


def gen_function(idx, variant, s, e, first_defaulted):
    name = cpp_name(s, variant)
    args = ordered_args(s, variant)
    ps = []
    for i, a in enumerate(args):
        p = "%s %s" % (cpp_type(a), cpp_ident(a.name))
        if i >= first_defaulted:
            p += " = " + cpp_default(a)
        ps.append(p)
    first_tensor, guard = None, ""
    for a in s.args:
        if a.base == "Tensor" and not a.optional:
            first_tensor = cpp_ident(a.name) + (".front()" if a.is_list else "")
            if a.is_list:
                guard = ("  if (%s.empty()) throw Error(BP_STATUS_INVALID_ARGUMENT, \"INVALID_ARGUMENT: %s: "
                         "argument '%s' is an empty list; expected at least one tensor\");\n" % (
                             cpp_ident(a.name), s.full_name(), a.name))
            break
    if first_tensor is None:
        return "// %s: no tensor argument to take the context from; call it through bp_op_call.\n" % s.full_name()
    if any(r.base != "Tensor" or r.is_list for r in s.rets):
        raise GenError("%s: only Tensor returns are supported" % s.full_name())
    ret_type = "Tensor"
    if variant != "functional":
        ret_type = "const Tensor&"
    elif len(s.rets) > 1:
        ret_type = "std::tuple<%s>" % ", ".join(["Tensor"] * len(s.rets))
    lines = ["/// %s" % e.get("doc", ""),
             "/// Schema: `%s`." % s.text(),
             "/// Semantics as %s%s. Errors: throws bp::Error with the status and message of bp_op_call." % (
                 e.get("torch", "") or "documented in ops.yaml",
                 " (variant: %s)" % variant if variant != "functional" else ""),
             "inline %s %s(%s) {" % (ret_type, name, ", ".join(ps))]
    body = [guard.rstrip("\n")] if guard else []
    body.append("  detail::ArgPack<%d> pack;" % len(s.args))
    for a in s.args:
        body.append("  pack.add(%s);" % cpp_ident(a.name))
    if variant == "functional" and len(s.rets) > 1:
        body.append("  return detail::call_tuple<%s>(%s.context_state(), %d, \"%s\", pack.values, %d);" % (
            ", ".join(["Tensor"] * len(s.rets)), first_tensor, idx, s.full_name(), len(s.args)))
    elif variant == "functional":
        body.append("  return detail::call_one(%s.context_state(), %d, \"%s\", pack.values, %d);" % (
            first_tensor, idx, s.full_name(), len(s.args)))
    else:
        # In-place and out= return the tensor they wrote, as at::add_ / at::add_out
        # do: no new handle, so no reference count changes on the call path.
        written = "self" if variant == "inplace" else cpp_ident(s.args[-1].name)
        body.append("  detail::call_into(%s.context_state(), %d, \"%s\", pack.values, %d);" % (
            first_tensor, idx, s.full_name(), len(s.args)))
        body.append("  return %s;" % written)
    return "\n".join(lines + body + ["}", ""])


def gen_header(rows):
    out = ["// Generated by dispatcher/codegen/gen_ops.py from ops.yaml. Do not edit.",
           "//",
           "// The typed C++ API: one inline function per operator and variant, on top of",
           "// backplane.hpp. Each resolves its bp_op_t once per context (cached in the",
           "// context by table position) and calls bp_op_call. Thread-safe as the C API.",
           "#pragma once", "", "#include <cstdint>", "#include <optional>", "#include <string>",
           "#include <tuple>", "#include <vector>", "", '#include "backplane/backplane.hpp"', "", "namespace bp {", "",
           "/// Number of operators in Backplane's core table.",
           "inline constexpr int kNumCoreOps = %d;" % len(rows),
           "static_assert(kNumCoreOps <= detail::kOpCacheSize, \"grow bp::detail::kOpCacheSize\");", ""]
    firsts = resolve_overloads(rows)
    for idx, variant, s, e, mask, fidx in rows:
        out.append(gen_function(idx, variant, s, e, firsts[idx]))
    out += ["}  // namespace bp", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- op_args.h
# The bp_value_kind(s) a kernel may find for a schema type.
VALUE_KINDS = {"Tensor": "TENSOR", "int": "INT", "float": "DOUBLE", "bool": "BOOL",
               "Scalar": "INT, DOUBLE or BOOL", "ScalarType": "DTYPE", "str": "STRING"}


def c_ident(s, variant_name=None):
    """NS_NAME_OVERLOAD of a schema (upper case), the part every generated name shares."""
    parts = ([s.ns] if s.ns else []) + [variant_name or s.name] + ([s.overload] if s.overload else [])
    return "_".join(parts).upper()


def arg_kinds(a):
    if a.is_list:
        kinds = "TENSOR_LIST" if a.base == "Tensor" else "INT_LIST" if a.base == "int" else None
    else:
        kinds = VALUE_KINDS.get(a.base)
    if kinds is None:
        raise GenError("op_args.h: no value kind for type '%s'" % a.type_text())
    return kinds + (" or NONE" if a.optional else "")


def gen_op_args(rows):
    """backplane/op_args.h: operator names and kernel argument indices (C99)."""
    out = ["/* Generated by dispatcher/codegen/gen_ops.py from abi/ops.yaml. Do not edit.",
           " *",
           " * Every core operator's name and the index of each argument in",
           " * bp_kernel_call_t.args, so a kernel names the argument it reads:",
           " *   call->args[BP_ARG_ADD_TENSOR_ALPHA]   rather than   call->args[2]",
           " *",
           " * Names (<ID> is the schema's [namespace_]name[_overload] in upper case;",
           " * the generator refuses an ops.yaml where two names would be equal):",
           " *   BP_OP_<ID>          the operator's name string, for register_kernel and",
           " *                       bp_op_find; one per overload and per variant",
           " *                       (\"add.Tensor\", \"add_.Tensor\", \"add.out\").",
           " *   BP_ARG_<ID>_<ARG>   the index of argument <ARG> (upper case) as the kernel",
           " *                       sees it: the functional schema's arguments in order.",
           " *   BP_NARGS_<ID>       bp_kernel_call_t.num_args of the functional overload.",
           " * Kernels are registered under the functional name and serve every variant:",
           " * an inplace or out= call reaches the kernel with the functional's arguments",
           " * (out=: the output in outputs[0], not in args), so only functional overloads",
           " * get BP_ARG_ / BP_NARGS_ names. Each index's comment gives the schema type",
           " * and the bp_value_kind (BP_VALUE_*) the caller may pass; the meta family's",
           " * kernel contract in ops.yaml can narrow it (reductions always pass dim as",
           " * an INT_LIST, for instance). All indices are enumerators of one enum,",
           " * bp_op_arg_index, so indices of different operators compare without casts",
           " * in C++. Plain data: no thread-safety concerns. */",
           "#ifndef BACKPLANE_OP_ARGS_H_", "#define BACKPLANE_OP_ARGS_H_", "",
           "enum bp_op_arg_index {", ""]
    seen = {}

    def claim(name, owner):
        if name in seen and seen[name] != owner:
            raise GenError("op_args.h: '%s' names both %s and %s; rename one" % (name, seen[name], owner))
        seen[name] = owner
        return name

    groups = {}
    for idx, variant, s, e, mask, fidx in rows:
        groups.setdefault(fidx, []).append((variant, s, e))
    for fidx in sorted(groups):
        group = groups[fidx]
        _, f, e = group[0]
        fid = c_ident(f)
        no_kernel = e["kind"] in ("view", "composite")
        out.append("/* %s%s */" % (f.text(), "  (no kernel: the core runs it)" if no_kernel else ""))
        for variant, s, _ in group:
            out.append("#define BP_OP_%s %s" % (claim(c_ident(s), s.full_name()), c_str(s.full_name())))
        for i, a in enumerate(f.args):
            name = claim("BP_ARG_%s_%s" % (fid, a.name.upper()), "%s argument %s" % (f.full_name(), a.name))
            out.append("  %s = %d, /* %s %s: %s */" % (name, i, a.type_text(), a.name, arg_kinds(a)))
        out += ["  %s = %d," % (claim("BP_NARGS_%s" % fid, f.full_name()), len(f.args)), ""]
    out += ["};", "", "#endif /* BACKPLANE_OP_ARGS_H_ */", ""]
    return "\n".join(out)


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--yaml", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--schema-tool", required=True, help="the bp_schema_json executable")
    ap.add_argument("--py-out", help="also write the Python package's ops.py here (gen_py.py)")
    opts = ap.parse_args(argv)
    try:
        entries = load(opts.yaml, opts.schema_tool)
        rows = flatten(entries)
    except (GenError, yaml.YAMLError, OSError) as err:
        print("gen_ops.py: error: %s" % err, file=sys.stderr)
        return 1
    write_if_changed(os.path.join(opts.out_dir, "op_table.cpp"), gen_table(rows))
    write_if_changed(os.path.join(opts.out_dir, "include", "backplane", "ops.hpp"), gen_header(rows))
    write_if_changed(os.path.join(opts.out_dir, "abi", "include", "backplane", "op_args.h"), gen_op_args(rows))
    if opts.py_out:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from gen_py import gen_python
        write_if_changed(opts.py_out, gen_python(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
