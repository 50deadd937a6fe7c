// The CPU backend's vectorized float32 unary math (exp, tanh, sigmoid, silu,
// gelu; backends/cpu/kernels/simd.cpp): every tail length, NaN, infinities,
// signed zeros and magnitudes past where exp overflows, each element checked
// against the double-precision function within a few ULP of float32 (the
// conformance suite's samples stay inside [-10, 10]; these are the edges).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cpu_kernels_fixture.h"

using namespace bp_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// NaN, infinities, signed zeros, values past exp's float32 range, and a
// spread in [-20, 20].
float Value(int64_t i) {
  static const float kEdges[] = {std::numeric_limits<float>::quiet_NaN(),
                                 kInf,
                                 -kInf,
                                 0.0f,
                                 -0.0f,
                                 88.0f,
                                 -88.0f,
                                 100.0f,
                                 -100.0f,
                                 1e-30f,
                                 -1e-30f};
  const int64_t k = i % 17;
  if (k < 11) return kEdges[k];
  return static_cast<float>((i * 53) % 401) * 0.1f - 20.0f;
}

struct Case {
  const char* op;
  double (*f)(double);
};
const Case kCases[] = {
    {"exp", [](double x) { return std::exp(x); }},
    {"tanh", [](double x) { return std::tanh(x); }},
    {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
    {"silu", [](double x) { return x / (1.0 + std::exp(-x)); }},
};

// Within `ulps` float32 ULP of the double result (or absolute 1e-37 near
// zero), NaN where it is NaN, the same infinity where it rounds to one.
bool Close(float got, double want, double ulps) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(static_cast<float>(want))) return got == static_cast<float>(want);
  const double ulp = std::ldexp(1.0, std::ilogb(std::fmax(std::fabs(want), 1e-37)) - 23);
  return std::fabs(static_cast<double>(got) - want) <= ulps * ulp + 1e-37;
}

class VecUnary : public CpuKernels {
 protected:
  void CheckAll(int64_t n) {
    HostTensor a(F32(), {n}), out(F32(), {n});
    for (int64_t i = 0; i < n; ++i) a.data<float>()[i] = Value(i);
    for (const Case& k : kCases) {
      ASSERT_EQ(Call(k.op, {TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
      int64_t bad = 0;
      std::string first;
      for (int64_t i = 0; i < n; ++i) {
        const float x = a.data<float>()[i];
        const float got = out.data<float>()[i];
        if (Close(got, k.f(x), 8)) continue;
        if (bad++ == 0) first = std::to_string(x) + " gave " + std::to_string(got) + ", want " + std::to_string(k.f(x));
      }
      EXPECT_EQ(bad, 0) << k.op << " over " << n << " elements; first: " << k.op << "(" << first << ")";
    }
  }
};

TEST_F(VecUnary, EdgesAndTailsOfEveryLength) {
  for (int64_t n = 1; n <= 70; ++n) CheckAll(n);
}

TEST_F(VecUnary, LargeCallSplitAcrossThreads) { CheckAll(300 * 1001); }

}  // namespace
