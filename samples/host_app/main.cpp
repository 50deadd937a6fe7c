// bp-host-app: loads every backend plugin it can find, lists the devices,
// runs one small convolutional network on each device and compares the
// result with the CPU's. Shows the C++ API end to end: discovery, tensors
// moved between devices, typed operators, and the native/fallback counters.
//
//   bp-host-app                    # plugins by discovery (BACKPLANE_PLUGIN_PATH, ...)
//   bp-host-app path/to/libbackplane_vendor_sim.so ...   # plus explicit plugins
//
// Exit status: 0 when every device matches the CPU within 1e-4, 1 otherwise.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "backplane/backplane.hpp"
#include "backplane/ops.hpp"

namespace {

// Deterministic pseudo-random values in [-scale, scale).
std::vector<float> Values(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
  }
  return v;
}

// A float32 CPU tensor of `sizes` filled by Values().
bp::Tensor Make(const bp::Context& ctx, std::vector<int64_t> sizes, uint32_t seed, float scale) {
  size_t n = 1;
  for (int64_t d : sizes) n *= static_cast<size_t>(d);
  return bp::Tensor::from_vector(ctx, Values(n, seed, scale), std::move(sizes));
}

struct Weights {
  bp::Tensor conv_w, conv_b, fc_w, fc_b, ln_w, ln_b;
};

Weights MakeWeights(const bp::Context& ctx) {
  Weights w;
  w.conv_w = Make(ctx, {4, 3, 3, 3}, 1, 0.3f);
  w.conv_b = Make(ctx, {4}, 2, 0.1f);
  w.fc_w = Make(ctx, {10, 64}, 3, 0.2f);
  w.fc_b = Make(ctx, {10}, 4, 0.1f);
  w.ln_w = Make(ctx, {10}, 5, 1.0f);
  w.ln_b = Make(ctx, {10}, 6, 0.5f);
  return w;
}

Weights To(const Weights& w, bp::Device d) {
  return Weights{w.conv_w.to(d), w.conv_b.to(d), w.fc_w.to(d), w.fc_b.to(d), w.ln_w.to(d), w.ln_b.to(d)};
}

// conv -> relu -> maxpool -> flatten -> linear -> gelu -> layer_norm -> +x -> softmax
bp::Tensor Forward(const bp::Tensor& x, const Weights& w) {
  bp::Tensor h = bp::conv2d(x, w.conv_w, w.conv_b, {1, 1}, {1, 1});  // [2, 4, 8, 8]
  h = bp::relu(h);
  h = bp::max_pool2d(h, {2, 2});                                       // [2, 4, 4, 4]
  h = bp::reshape(h, {2, 64});
  h = bp::linear(h, w.fc_w, w.fc_b);                                   // [2, 10]
  h = bp::gelu(h, "tanh");
  bp::Tensor n = bp::layer_norm(h, {10}, w.ln_w, w.ln_b);
  h = bp::add(n, h, 0.5);
  return bp::softmax(h, 1);
}

const char* const kOps[] = {"conv2d", "relu", "max_pool2d", "linear", "gelu", "layer_norm", "add.Tensor", "softmax.int"};

}  // namespace

int main(int argc, char** argv) {
  try {
    bp::Context ctx;
    for (int i = 1; i < argc; ++i) ctx.load_plugin(argv[i]);
    ctx.discover();

    std::printf("backends:\n");
    for (const bp::BackendInfo& b : ctx.backends()) {
      std::printf("  %-12s %d device(s)%s%s\n", b.name.c_str(), b.device_count,
                  b.no_device_reason.empty() ? "" : "  -- ", b.no_device_reason.c_str());
    }

    const bp::Tensor x_cpu = Make(ctx, {2, 3, 8, 8}, 7, 1.0f);
    const Weights w_cpu = MakeWeights(ctx);
    const std::vector<float> expect = Forward(x_cpu, w_cpu).to_host<float>();

    int failures = 0;
    for (const bp::Device& dev : ctx.devices()) {
      bp_device_properties_t props{};
      props.struct_size = sizeof props;
      bp::check(bp_device_properties(ctx.get(), dev.c(), &props));
      const std::vector<float> got = Forward(x_cpu.to(dev), To(w_cpu, dev)).to_host<float>();
      double max_err = 0;
      for (size_t i = 0; i < got.size(); ++i) max_err = std::fmax(max_err, std::fabs(got[i] - expect[i]));
      const bool ok = got.size() == expect.size() && max_err <= 1e-4;
      failures += ok ? 0 : 1;
      std::printf("\ndevice %d:%d (%s): max |diff| vs cpu = %.3g  %s\n", dev.backend, dev.index, props.name, max_err,
                  ok ? "OK" : "MISMATCH");
      for (const char* name : kOps) {
        bp_op_t* op = nullptr;
        uint64_t native = 0, fallback = 0;
        bp::check(bp_op_find(ctx.get(), name, &op));
        bp::check(bp_native_count(ctx.get(), op, dev.backend, &native));
        bp::check(bp_fallback_count(ctx.get(), op, dev.backend, &fallback));
        std::printf("  %-12s native %llu  cpu-fallback %llu\n", name, static_cast<unsigned long long>(native),
                    static_cast<unsigned long long>(fallback));
      }
    }
    return failures == 0 ? 0 : 1;
  } catch (const bp::Error& e) {
    std::fprintf(stderr, "bp-host-app: %s\n", e.what());
    return 1;
  }
}
