// The fixture of the streams group (streams_group.cpp): one (backend,
// device) target per test instance, owned stream and event handles, and the
// "slow chain" every ordering test is built on. Public C API only.
//
// The slow chain: kSteps dependent in-place kernels on a kN-element float32
// tensor x (x <- 2x, then x <- x + 1, alternating), from x0[i] = i % 5. Every
// intermediate state is exact in float32, so a value read too early names
// the step it was read at ("after 3 of 20 steps"), which is what a failure
// message reports about the ordering that was broken.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "boxed_values.h"
#include "dtype.h"
#include "groups/abi_runtime_util.h"
#include "target.h"

namespace bpc {
namespace streams {

using abirt::Held;
using abirt::LastError;

constexpr int64_t kN = int64_t{1} << 20;  // 4 MiB of float32 per tensor: kernels take measurable time
constexpr int kSteps = 20;                // dependent kernels of one slow chain

inline double X0(int64_t i) { return static_cast<double>(i % 5); }
// x after `steps` steps of the chain from x0.
inline double ChainValue(double x0, int steps) {
  double x = x0;
  for (int k = 0; k < steps; ++k) x = k % 2 == 0 ? 2.0 * x : x + 1.0;
  return x;
}
// "after 3 of 20 steps" when `got` is a state of the chain from x0, else "".
inline std::string StepOf(double got, double x0, int steps = kSteps) {
  for (int k = 0; k <= steps; ++k) {
    if (ChainValue(x0, k) == got) return "after " + std::to_string(k) + " of " + std::to_string(steps) + " steps";
  }
  return "";
}

// A stream from bp_stream_create; destroyed when it goes (set back to the
// default first where it is the calling thread's current stream).
class Stream {
 public:
  Stream() = default;
  ~Stream() { Reset(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  bp_stream_handle_t* get() const { return s_; }
  bp_stream_handle_t** out() {
    Reset();
    return &s_;
  }
  bp_stream_handle_t* release() {
    bp_stream_handle_t* s = s_;
    s_ = nullptr;
    return s;
  }
  void Reset() {
    if (s_ == nullptr) return;
    bp_device_t d{};
    bp_stream_handle_t *cur = nullptr, *def = nullptr;
    if (bp_stream_device(s_, &d) == BP_STATUS_OK && bp_get_current_stream(suite_context(), d, &cur) == BP_STATUS_OK &&
        cur == s_ && bp_stream_get_default(suite_context(), d, &def) == BP_STATUS_OK) {
      bp_set_current_stream(def);
    }
    bp_stream_destroy(s_);
    s_ = nullptr;
  }

 private:
  bp_stream_handle_t* s_ = nullptr;
};

// An event from bp_event_create, destroyed when it goes.
class Event {
 public:
  Event() = default;
  ~Event() { bp_event_destroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  bp_event_handle_t* get() const { return e_; }
  bp_event_handle_t** out() {
    bp_event_destroy(e_);
    e_ = nullptr;
    return &e_;
  }

 private:
  bp_event_handle_t* e_ = nullptr;
};

// Where a tensor's memory is: the DLPack export's data and byte offset (a
// device address, or a backend's buffer handle plus offset).
struct Address {
  const void* data = nullptr;
  uint64_t offset = 0;
  bool operator==(const Address& o) const { return data == o.data && offset == o.offset; }
  bool operator!=(const Address& o) const { return !(*this == o); }
};

// Poison written into outputs before a check, so a read that happens too
// early shows as this value.
constexpr double kPoison = -7777.0;

// Expected values by element index: the chain after `steps` steps (plus
// `plus`), the chain's input, or none (every element -1).
inline auto FinalOf(int steps, double plus = 0.0) {
  return [steps, plus](int64_t i) { return ChainValue(X0(i), steps) + plus; };
}
inline auto ChainX0() {
  return [](int64_t i) { return X0(i); };
}
inline auto NoChain() {
  return [](int64_t) { return -1.0; };
}

}  // namespace streams

class StreamsTest : public ::testing::TestWithParam<Target> {
 protected:
  bp_context_t* ctx() const { return suite_context(); }
  bp_device_t dev() const { return bp_device_t{GetParam().backend, GetParam().device}; }
  const std::string& name() const { return GetParam().device_label; }

  void TearDown() override {  // leave the thread on the default stream whatever happened
    bp_stream_handle_t* def = Default();
    if (def != nullptr) bp_set_current_stream(def);
  }

  // bp_stream_create on the target; *why holds the error when it fails.
  bp_status_t NewStream(streams::Stream* s, std::string* why) const {
    const bp_status_t st = bp_stream_create(ctx(), dev(), s->out());
    if (st != BP_STATUS_OK) *why = streams::LastError();
    return st;
  }
  bp_status_t NewEvent(streams::Event* e, std::string* why, bp_device_t d) const {
    const bp_status_t st = bp_event_create(ctx(), d, e->out());
    if (st != BP_STATUS_OK) *why = streams::LastError();
    return st;
  }
  bp_stream_handle_t* Default(bp_device_t d) const {
    bp_stream_handle_t* s = nullptr;
    return bp_stream_get_default(ctx(), d, &s) == BP_STATUS_OK ? s : nullptr;
  }
  bp_stream_handle_t* Default() const { return Default(dev()); }
  bp_stream_handle_t* Current(bp_device_t d) const {
    bp_stream_handle_t* s = nullptr;
    return bp_get_current_stream(ctx(), d, &s) == BP_STATUS_OK ? s : nullptr;
  }

  // A kN-element float32 tensor on the target (allocated on, and uploaded
  // through, the calling thread's current stream).
  streams::Held Upload(const std::vector<double>& values) const {
    return abirt::FromHost(ctx(), dev(), {static_cast<int64_t>(values.size())}, DType::kFloat32, values);
  }
  static std::vector<double> Start() {
    std::vector<double> v(static_cast<size_t>(streams::kN));
    for (int64_t i = 0; i < streams::kN; ++i) v[static_cast<size_t>(i)] = streams::X0(i);
    return v;
  }
  static std::vector<double> Filled(double value) {
    return std::vector<double>(static_cast<size_t>(streams::kN), value);
  }

  // Enqueues `steps` steps of the slow chain on x (in place) on the current
  // stream; false with *err on a failing call.
  bool Chain(bp_tensor_t* x, bp_tensor_t* one, int steps, std::string* err) const {
    for (int k = 0; k < steps; ++k) {
      const bp_status_t st = k % 2 == 0 ? abirt::CallOp(ctx(), "add_.Tensor", {vt(x), vt(x)}, nullptr)
                                        : abirt::CallOp(ctx(), "add_.Tensor", {vt(x), vt(one)}, nullptr);
      if (st != BP_STATUS_OK) {
        *err = "add_.Tensor (step " + std::to_string(k + 1) + " of the chain): " + streams::LastError();
        return false;
      }
    }
    return true;
  }

  // Reads t with `s` made the calling thread's current stream first, so that
  // bp_tensor_to_host synchronizes `s` only.
  bool ReadOn(bp_stream_handle_t* s, const bp_tensor_t* t, std::vector<double>* out, std::string* err) const {
    if (bp_set_current_stream(s) != BP_STATUS_OK) {
      *err = "bp_set_current_stream: " + streams::LastError();
      return false;
    }
    return abirt::ReadBack(t, DType::kFloat32, out, err);
  }

  // The first element where got[i] != want(i) plus the count of such
  // elements ("" when none): "element 7 is 3 (expected 5119, the value after
  // 1 of 20 steps); 1048576 of 1048576 elements differ". `chain_of(i)` gives
  // the x0 a wrong value is matched against the chain's steps with (after
  // subtracting `plus`), or a negative number for no matching.
  template <typename Want, typename X0Of>
  static std::string Mismatch(const std::vector<double>& got, Want want, X0Of chain_of, double plus = 0.0) {
    int64_t bad = 0, first = -1;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want(static_cast<int64_t>(i))) {
        if (first < 0) first = static_cast<int64_t>(i);
        ++bad;
      }
    }
    if (bad == 0) return "";
    const double g = got[static_cast<size_t>(first)];
    std::string m =
        "element " + std::to_string(first) + " is " + std::to_string(g) + ", expected " + std::to_string(want(first));
    const double x0 = chain_of(first);
    if (x0 >= 0.0) {
      const std::string step = streams::StepOf(g - plus, x0);
      if (!step.empty()) m += " (the value " + step + " of the producer's chain)";
    }
    return m + "; " + std::to_string(bad) + " of " + std::to_string(got.size()) + " elements differ";
  }

  // The memory of t (DLPack export); *ok false with the reason in *err.
  static streams::Address AddressOf(bp_tensor_t* t, std::string* err) {
    DLManagedTensor* m = nullptr;
    if (bp_tensor_to_dlpack(t, &m) != BP_STATUS_OK || m == nullptr) {
      *err = "bp_tensor_to_dlpack: " + streams::LastError();
      return {};
    }
    streams::Address a{m->dl_tensor.data, m->dl_tensor.byte_offset};
    if (m->deleter != nullptr) m->deleter(m);
    return a;
  }
};

// Creates stream `var` on the target, or skips the test with the reason
// (UNIMPLEMENTED: the backend has its default stream only).
#define BPS_CREATE_STREAM(var)                                                            \
  ::bpc::streams::Stream var;                                                             \
  do {                                                                                    \
    std::string why_;                                                                     \
    const bp_status_t st_ = NewStream(&var, &why_);                                       \
    if (st_ == BP_STATUS_UNIMPLEMENTED)                                                   \
      GTEST_SKIP() << "backend has no stream_create (its default stream only): " << why_; \
    ASSERT_EQ(st_, BP_STATUS_OK) << "bp_stream_create on " << name() << ": " << why_;     \
  } while (0)

// Creates event `var` on device `d`, or skips the test (the backend has no events).
#define BPS_CREATE_EVENT(var, d)                                                                              \
  ::bpc::streams::Event var;                                                                                  \
  do {                                                                                                        \
    std::string why_;                                                                                         \
    const bp_status_t st_ = NewEvent(&var, &why_, d);                                                         \
    if (st_ == BP_STATUS_UNIMPLEMENTED) GTEST_SKIP() << "backend has no events (event slots NULL): " << why_; \
    ASSERT_EQ(st_, BP_STATUS_OK) << "bp_event_create: " << why_;                                              \
  } while (0)

#define BPS_OK(call) ASSERT_EQ((call), BP_STATUS_OK) << #call << ": " << ::bpc::streams::LastError()
// A failure when `mismatch` (Mismatch's description) is not empty; the
// streamed message alone is reported (it names the ordering violated).
#define BPS_EXPECT_NO_MISMATCH(mismatch) \
  if ((mismatch).empty()) {              \
  } else                                 \
    ADD_FAILURE()

}  // namespace bpc
