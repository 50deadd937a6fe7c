// libFuzzer target: bp-conformance's expectation-file parser
// (conformance/src/expectations.cpp). Property: it never crashes, and on
// success every entry has an op and a reason, and on failure it says why
// ("line N: ...").
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "expectations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  bpc::Expectations ex;
  std::string err;
  if (!bpc::parse_expectations(text, &ex, &err)) {
    if (err.empty()) std::abort();  // a failure must carry its message
    return 0;
  }
  for (const auto* list : {&ex.unsupported, &ex.xfail}) {
    for (const bpc::Expectation& e : *list) {
      if (e.op.empty() || e.reason.empty()) std::abort();
      (void)e.matches("add.Tensor", bpc::DType{});
    }
  }
  return 0;
}
