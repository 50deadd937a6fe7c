// bp_schema_json: the build-time face of the one schema parser
// (dispatcher/src/schema.cpp). Reads one schema per line on stdin and writes
// one JSON object per line on stdout, so gen_ops.py never parses the schema
// grammar itself:
//   {"ok": true, "ns": "", "name": "add", "overload": "Tensor",
//    "args": [{"name": "self", "type": "Tensor", "is_list": false, "list_size": 0,
//              "optional": false, "kwarg_only": false, "alias": "", "mutable": false,
//              "default": null | {"text": "1", "kind": 3, "i": 1, "d": 0.0, "b": false,
//                                  "ints": [], "str": ""}}, ...],
//    "returns": [{"type": "Tensor", "alias": "", "mutable": false}]}
// or {"ok": false, "error": "<the parser's message, with the column>"}.
// Exit status 0 when every line parsed, 1 otherwise.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "schema.h"

namespace {

using bp::core::ArgType;

bool IsList(ArgType t) { return t == ArgType::kTensorList || t == ArgType::kIntList; }

// The default as the canonical schema text plus its typed value.
nlohmann::json DefaultJson(const bp::core::Argument& a) {
  if (!a.default_value) return nullptr;
  const bp::core::DefaultValue& d = *a.default_value;
  return nlohmann::json{{"text", bp::core::DefaultText(d)}, {"kind", d.kind}, {"i", d.i}, {"d", d.d},
                        {"b", d.b}, {"ints", d.ints}, {"str", d.str}};
}

nlohmann::json SchemaJson(const bp::core::Schema& s) {
  nlohmann::json args = nlohmann::json::array();
  for (const bp::core::Argument& a : s.arguments) {
    args.push_back({{"name", a.name},
                    {"type", bp::core::TypeName(a.type)},
                    {"arg_type", static_cast<int>(a.type)},
                    {"is_list", IsList(a.type)},
                    {"list_size", a.list_size},
                    {"optional", a.optional},
                    {"kwarg_only", a.kwarg_only},
                    {"alias", a.alias_set},
                    {"mutable", a.is_mutable},
                    {"default", DefaultJson(a)}});
  }
  nlohmann::json rets = nlohmann::json::array();
  for (const bp::core::Return& r : s.returns) {
    rets.push_back({{"type", bp::core::TypeName(r.type)},
                    {"arg_type", static_cast<int>(r.type)},
                    {"is_list", IsList(r.type)},
                    {"alias", r.alias_set},
                    {"mutable", r.is_mutable}});
  }
  return {{"ok", true}, {"ns", s.ns}, {"name", s.name}, {"overload", s.overload}, {"args", args}, {"returns", rets}};
}

}  // namespace

int main() {
  int rc = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    bp::core::Schema schema;
    bp::core::Status st = bp::core::parse_schema(line, &schema);
    if (st.ok()) {
      std::cout << SchemaJson(schema).dump() << "\n";
    } else {
      std::cout << nlohmann::json{{"ok", false}, {"error", st.message()}}.dump() << "\n";
      rc = 1;
    }
  }
  return rc;
}
