#include "expect_backends.h"

#include <sstream>

namespace bpc {

std::vector<std::string> parse_expected_backends(const std::string& spec) {
  std::vector<std::string> out;
  std::stringstream ss(spec);
  std::string name;
  while (std::getline(ss, name, ',')) {
    const size_t a = name.find_first_not_of(" \t");
    if (a == std::string::npos) continue;
    out.push_back(name.substr(a, name.find_last_not_of(" \t") - a + 1));
  }
  return out;
}

std::vector<std::string> missing_expected_backends(const std::vector<std::string>& expected,
                                                   const std::vector<FoundBackend>& found) {
  std::vector<std::string> lines;
  for (const std::string& name : expected) {
    const FoundBackend* f = nullptr;
    for (const FoundBackend& b : found) {
      if (b.name == name) f = &b;
    }
    const std::string head = name + ": expected (" + kExpectBackendsEnv + "), but ";
    if (f == nullptr) {
      lines.push_back(head + "no such backend was loaded (is its plugin built and on BACKPLANE_PLUGIN_PATH?)");
    } else if (f->device_count <= 0) {
      lines.push_back(head +
                      "it has no device: " + (f->no_device_reason.empty() ? "(no reason given)" : f->no_device_reason));
    }
  }
  return lines;
}

}  // namespace bpc
