// The README's host-application tour, compiled and run, so the README cannot
// drift from the API. The block between the markers is what README.md shows.
// bp-test: public-api
#include <gtest/gtest.h>

#include <backplane/backplane.hpp>
#include <backplane/ops.hpp>

#include <string>
#include <vector>

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

TEST(ReadmeTour, RunsAsWritten) {
  std::vector<float> out;
  try {
    out = Tour();
  } catch (const bp::Error& e) {
    if (std::string(e.what()).find("vendor_sim") != std::string::npos)
      GTEST_SKIP() << "the vendor_sim sample plugin was not found by discovery: " << e.what();
    throw;
  }
  // relu(2a) = [[2, 0], [6, 0]]; its square is [[4, 0], [12, 0]].
  EXPECT_EQ(out, (std::vector<float>{4, 0, 12, 0}));
}

}  // namespace
