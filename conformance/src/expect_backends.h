// BACKPLANE_EXPECT_BACKENDS: the backends a machine must have (CI sets it,
// e.g. "cpu,opencl,vendor_sim"; see docs/conformance.md). A backend named
// there that discovery did not load, or that has no device, fails the run
// with one line saying which and why, instead of a NOT TESTED verdict that
// leaves CI green. Unset (the default, the README's main command): nothing
// is expected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bpc {

inline constexpr const char* kExpectBackendsEnv = "BACKPLANE_EXPECT_BACKENDS";

struct FoundBackend {
  std::string name;
  int32_t device_count = 0;
  std::string no_device_reason;
};

// The names in `spec` ("cpu, opencl,vendor_sim"; blanks ignored).
std::vector<std::string> parse_expected_backends(const std::string& spec);

// One line per expected backend that is missing or has no device:
// "opencl: expected (BACKPLANE_EXPECT_BACKENDS), but it has no device: <reason>".
std::vector<std::string> missing_expected_backends(const std::vector<std::string>& expected,
                                                   const std::vector<FoundBackend>& found);

}  // namespace bpc
