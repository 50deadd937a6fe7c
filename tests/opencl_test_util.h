// Shared fixture of the OpenCL plugin tests: one plugin instance (through
// the fake host) per test; tests skip, saying why, without an OpenCL device
// (they fail instead where BACKPLANE_EXPECT_BACKENDS names opencl).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "expected_backends.h"
#include "opencl_fake_host.h"
#include "plugin.h"

namespace bpcl_test {

class OpenclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(host_.Init(bpcl::PluginEntry()), BP_STATUS_OK) << FakeHost::last_error();
    if (host_.device_count() == 0) {
      BP_SKIP_UNLESS_EXPECTED(
          "opencl", std::string("no OpenCL device: ") +
                        (host_.backend().no_device_reason ? host_.backend().no_device_reason : "(no reason)"));
    }
  }
  void TearDown() override {
    for (DevTensor* t : owned_) host_.Free(t);
    for (DevTensor* t : owned_) delete t;
    owned_.clear();
    host_.Shutdown();
  }
  // Device tensors freed at TearDown.
  template <typename T>
  DevTensor& Make(std::vector<int64_t> shape, DLDataType dt, const std::vector<T>& data) {
    owned_.push_back(new DevTensor(host_.FromHost(std::move(shape), dt, data)));
    return *owned_.back();
  }
  DevTensor& Empty(std::vector<int64_t> shape, DLDataType dt) {
    owned_.push_back(new DevTensor(host_.Empty(std::move(shape), dt)));
    return *owned_.back();
  }

  FakeHost host_;
  std::vector<DevTensor*> owned_;
};

}  // namespace bpcl_test
