// The vendor_sim instance the streams and pinned-memory tests drive through
// the fake host (vendor_sim_streams_test.cpp, vendor_sim_pinned_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fake_host.h"
#include "vendor_sim_hold.h"

namespace {

using namespace bp_test;
using bptest::KernelHold;

using Env = std::vector<std::pair<std::string, std::string>>;

// A vendor_sim instance initialized with `env` set (it reads its settings at
// init), with helpers over its table. Shutdown (the destructor) releases the
// hold, then drains and stops every stream the test left.
class Sim {
 public:
  explicit Sim(const Env& env) { Init(env); }
  // The asynchronous device whose kernels the test holds: after hold().Hold()
  // each kernel, once run, keeps its stream busy until hold().Release().
  // (Not a bare enum: Sim({}) would pick it over the Env constructor.)
  struct HeldTag {
    explicit HeldTag() = default;
  };
  static constexpr HeldTag kHeld{};
  explicit Sim(HeldTag, Env more = {}) {
    more.emplace_back("BP_VENDOR_SIM_ASYNC", "1");
    more.emplace_back("BP_VENDOR_SIM_HOLD_KERNELS", hold_.path());
    Init(more);
  }
  // The asynchronous device, nothing held (and `more`).
  static Env Async(Env more = {}) {
    more.emplace_back("BP_VENDOR_SIM_ASYNC", "1");
    return more;
  }

  bp_status_t init_status() const { return plugin_->init_status; }
  const bp_backend_t& b() const { return plugin_->backend; }
  void* bd() const { return plugin_->backend.backend_data; }
  KernelHold& hold() { return hold_; }

  bp_stream_t NewStream() {
    bp_stream_t s = nullptr;
    EXPECT_EQ(b().stream_create(bd(), 0, &s), BP_STATUS_OK) << LastError();
    EXPECT_NE(s, nullptr);  // NULL is the default stream
    return s;
  }
  bp_event_t NewEvent() {
    bp_event_t e = nullptr;
    EXPECT_EQ(b().event_create(bd(), 0, &e), BP_STATUS_OK) << LastError();
    return e;
  }
  void* Alloc(size_t n) {
    void* h = nullptr;
    EXPECT_EQ(b().allocate(bd(), 0, n * sizeof(float), &h), BP_STATUS_OK) << LastError();
    return h;
  }
  // Copies v to h on `s` and synchronizes `s` (v must outlive the copy).
  void Upload(void* h, const std::vector<float>& v, bp_stream_t s) {
    ASSERT_EQ(b().copy_host_to_device(bd(), 0, v.data(), h, 0, v.size() * sizeof(float), s), BP_STATUS_OK)
        << LastError();
    ASSERT_EQ(b().stream_synchronize(bd(), 0, s), BP_STATUS_OK) << LastError();
  }
  // Reads n floats of h on `s` (copy_device_to_host waits for `s` only).
  std::vector<float> Download(void* h, size_t n, bp_stream_t s) {
    std::vector<float> v(n);
    EXPECT_EQ(b().copy_device_to_host(bd(), 0, h, 0, v.data(), n * sizeof(float), s), BP_STATUS_OK) << LastError();
    return v;
  }
  // out = relu(in) over n floats, launched on `s`: one kernel.
  bp_status_t Relu(void* in, void* out, int64_t n, bp_stream_t s) {
    HostTensor a(F32(), {n}, kDLExtDev), o(F32(), {n}, kDLExtDev);
    a.dl.data = in;
    o.dl.data = out;
    return plugin_->host.Call("relu", {TArg(a)}, {&o.dl}, s);
  }
  int32_t Query(bp_event_t e) {
    int32_t done = -1;
    EXPECT_EQ(b().event_query(bd(), e, &done), BP_STATUS_OK) << LastError();
    return done;
  }

 private:
  void Init(const Env& env) {
    // The variables this test controls start empty (off), whatever the
    // caller's environment says, and get their values back afterwards.
    const char* const kControlled[] = {
        "BP_VENDOR_SIM_ASYNC",  "BP_VENDOR_SIM_LAUNCH_US",  "BP_VENDOR_SIM_KERNEL_US",  "BP_VENDOR_SIM_HOLD_KERNELS",
        "BP_VENDOR_SIM_BROKEN", "BP_VENDOR_SIM_LATENCY_US", "BP_VENDOR_SIM_FAIL_COPIES"};
    Env saved;
    for (const char* name : kControlled) {
      if (const char* v = std::getenv(name)) saved.emplace_back(name, v);
      unsetenv(name);
    }
    for (const auto& kv : env) setenv(kv.first.c_str(), kv.second.c_str(), 1);
    plugin_ = std::make_unique<LoadedPlugin>(BP_VENDOR_SIM_PLUGIN_PATH);
    for (const auto& kv : env) unsetenv(kv.first.c_str());
    for (const auto& kv : saved) setenv(kv.first.c_str(), kv.second.c_str(), 1);
  }

  std::unique_ptr<LoadedPlugin> plugin_;
  KernelHold hold_;  // destroyed first: released before the plugin shuts down
};

// The values the ordering and copy tests write and expect.
const std::vector<float> kOld = {9, 9, 9, 9};
const std::vector<float> kNew = {1, 2, 3, 4};

}  // namespace
