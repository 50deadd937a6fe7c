// BACKPLANE_EXPECT_BACKENDS (comma-separated backend names, set by CI, see
// docs/conformance.md): the backends this machine must have, each with a
// device. A test that needs a device of such a backend fails where it would
// otherwise skip, so a device that disappears cannot turn CI's tests into skips.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace bp_test {

inline bool BackendExpected(const std::string& backend) {
  const char* env = std::getenv("BACKPLANE_EXPECT_BACKENDS");
  std::stringstream ss(env ? env : "");
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (name == backend) return true;
  }
  return false;
}

}  // namespace bp_test

// Skips the test (saying why), or fails it when BACKPLANE_EXPECT_BACKENDS
// names `backend`. Returns from the calling function, as GTEST_SKIP does.
#define BP_SKIP_UNLESS_EXPECTED(backend, why)                                                          \
  do {                                                                                                 \
    if (::bp_test::BackendExpected(backend)) {                                                         \
      GTEST_FAIL() << (why) << "; BACKPLANE_EXPECT_BACKENDS names " << (backend) << ", so this fails"; \
    }                                                                                                  \
    GTEST_SKIP() << (why);                                                                             \
  } while (0)
