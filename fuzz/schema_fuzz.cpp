// libFuzzer target: the operator schema parser (dispatcher/src/schema.cpp).
// Property: parsing never crashes; a schema that parses prints (to_string)
// to text that parses again to the same schema (printing it again gives the
// same text, and the name, argument and return lists agree).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "schema.h"

namespace {
[[noreturn]] void Violated(const std::string& what, const std::string& a, const std::string& b) {
  __builtin_fprintf(stderr, "schema round trip violated (%s):\n  first:  %s\n  second: %s\n", what.c_str(), a.c_str(),
                    b.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  bp::core::Schema s;
  if (!bp::core::parse_schema(text, &s).ok()) return 0;
  const std::string printed = s.to_string();
  bp::core::Schema again;
  const bp::core::Status st = bp::core::parse_schema(printed, &again);
  if (!st.ok()) Violated("the printed schema does not parse: " + st.message(), text, printed);
  if (again.to_string() != printed) Violated("printing differs", printed, again.to_string());
  if (again.full_name() != s.full_name()) Violated("name differs", s.full_name(), again.full_name());
  if (again.arguments.size() != s.arguments.size() || again.returns.size() != s.returns.size()) {
    Violated("argument or return count differs", printed, again.to_string());
  }
  for (size_t i = 0; i < s.arguments.size(); ++i) {
    const auto& x = s.arguments[i];
    const auto& y = again.arguments[i];
    if (x.name != y.name || x.type != y.type || x.optional != y.optional || x.list_size != y.list_size ||
        x.kwarg_only != y.kwarg_only || x.is_mutable != y.is_mutable || x.alias_set != y.alias_set ||
        x.default_value.has_value() != y.default_value.has_value()) {
      Violated("argument " + std::to_string(i) + " differs", printed, again.to_string());
    }
  }
  return 0;
}
