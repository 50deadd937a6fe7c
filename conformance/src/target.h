// The (backend, device) pairs a bp-conformance run tests, found at start
// (after discovery and --backend), and the context they live in. GoogleTest
// suites are value-parameterized over them: each test body runs once per
// target, and its ID carries the target ("Abi/AbiRuntimeTest.Foo/cpu_0").
// Filled by main() before testing::InitGoogleTest registers the suites.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backplane/backplane.h"

namespace bpc {

struct Target {
  int32_t backend = -1;      // bp_backend_find id in suite_context()
  int32_t device = 0;        // device index within the backend
  std::string backend_name;  // "cpu"
  std::string device_label;  // "cpu:0"
  std::string plugin_path;   // where the backend's plugin was loaded from ("" if built in)
  // The GoogleTest parameter name: backend and device index, letters,
  // digits and '_' only ("cpu_0", "vendor_sim_0").
  std::string id() const;
};

// The context every suite runs in (backends loaded, not strict); owned by main().
bp_context_t* suite_context();
void set_suite_context(bp_context_t* ctx);

// Every (backend, device) of this run; a backend with no device has none.
const std::vector<Target>& suite_targets();
void set_suite_targets(std::vector<Target> targets);

// How GoogleTest prints a Target in messages ("where GetParam() = cpu:0").
inline void PrintTo(const Target& t, std::ostream* os) { *os << t.device_label; }

// Name generator for INSTANTIATE_TEST_SUITE_P over Target.
struct TargetName {
  std::string operator()(const ::testing::TestParamInfo<Target>& info) const { return info.param.id(); }
};

// Makes any string a valid GoogleTest name part: [A-Za-z0-9_], others -> '_'.
std::string gtest_safe(const std::string& s);

}  // namespace bpc
