// The README's host-application tour, compiled and run, so the README cannot
// drift from the API. The block between the markers is what README.md shows.
// bp-test: public-api
#include <gtest/gtest.h>

#include <backplane/backplane.hpp>
#include <backplane/ops.hpp>
#include <string>
#include <vector>

#include "expected_backends.h"

namespace {

std::vector<float> Tour() {
  // [readme-tour]
  bp::Context ctx;                  // owns plugins, operators and caches
  ctx.discover();                   // BACKPLANE_PLUGINS, BACKPLANE_PLUGIN_PATH, <libdir>/backplane/plugins
  bp::Tensor a = bp::Tensor::from_vector(ctx, std::vector<float>{1, -2, 3, -4}, {{2, 2}});
  bp::Tensor b = a.to(ctx.device("vendor_sim"));  // a device whose memory the host cannot touch
  bp::Tensor c = bp::relu(bp::add(b, b));         // add and relu run natively on vendor_sim
  bp::Tensor d = bp::matmul(c, c);                // no matmul kernel there: the CPU fallback runs it
  std::vector<float> out = d.to(bp::Device::cpu()).to_host<float>();
  // [readme-tour]
  return out;
}

// Why vendor_sim cannot run the tour here ("" when it can): its plugin was
// not found by discovery, or it has no device. Only these skip the test;
// any error inside the tour (a failing kernel names vendor_sim too) fails it.
std::string VendorSimMissing() {
  bp::Context probe;
  probe.discover();
  for (const bp::BackendInfo& b : probe.backends()) {
    if (b.name != "vendor_sim" || !b.loaded) continue;
    if (b.device_count == 0) return "the vendor_sim plugin has no device: " + b.no_device_reason;
    return "";
  }
  return "the vendor_sim sample plugin was not found by discovery (BACKPLANE_PLUGIN_PATH)";
}

TEST(ReadmeTour, RunsAsWritten) {
  const std::string missing = VendorSimMissing();
  if (!missing.empty()) BP_SKIP_UNLESS_EXPECTED("vendor_sim", missing);
  const std::vector<float> out = Tour();
  // relu(2a) = [[2, 0], [6, 0]]; its square is [[4, 0], [12, 0]].
  EXPECT_EQ(out, (std::vector<float>{4, 0, 12, 0}));
}

}  // namespace
