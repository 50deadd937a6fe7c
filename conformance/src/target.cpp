#include "target.h"

#include <cctype>
#include <utility>

namespace bpc {

namespace {
bp_context_t* g_ctx = nullptr;
std::vector<Target>& targets_storage() {
  static std::vector<Target> t;
  return t;
}
}  // namespace

std::string gtest_safe(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

std::string Target::id() const { return gtest_safe(backend_name) + "_" + std::to_string(device); }

bp_context_t* suite_context() { return g_ctx; }
void set_suite_context(bp_context_t* ctx) { g_ctx = ctx; }
const std::vector<Target>& suite_targets() { return targets_storage(); }
void set_suite_targets(std::vector<Target> targets) { targets_storage() = std::move(targets); }

}  // namespace bpc
