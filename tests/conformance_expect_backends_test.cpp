// BACKPLANE_EXPECT_BACKENDS (issue 23 item 15): a backend CI expects that is
// missing or has no device is named, with the reason, so the run fails.
#include <gtest/gtest.h>

#include "expect_backends.h"

namespace bpc {
namespace {

TEST(ExpectBackends, ParsesACommaList) {
  EXPECT_EQ(parse_expected_backends("cpu, opencl,,vendor_sim "),
            (std::vector<std::string>{"cpu", "opencl", "vendor_sim"}));
  EXPECT_TRUE(parse_expected_backends("").empty());
}

TEST(ExpectBackends, NamesMissingAndDevicelessBackends) {
  const std::vector<FoundBackend> found = {{"cpu", 1, ""}, {"opencl", 0, "no OpenCL platform found"}, {"cuda", 0, ""}};
  const std::vector<std::string> lines = missing_expected_backends({"cpu", "opencl", "vendor_sim", "cuda"}, found);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "opencl: expected (BACKPLANE_EXPECT_BACKENDS), but it has no device: no OpenCL platform found");
  EXPECT_NE(lines[1].find("vendor_sim: expected (BACKPLANE_EXPECT_BACKENDS), but no such backend was loaded"),
            std::string::npos)
      << lines[1];
  EXPECT_EQ(lines[2], "cuda: expected (BACKPLANE_EXPECT_BACKENDS), but it has no device: (no reason given)");
  EXPECT_TRUE(missing_expected_backends({"cpu"}, found).empty());
  EXPECT_TRUE(missing_expected_backends({}, found).empty());
}

}  // namespace
}  // namespace bpc
