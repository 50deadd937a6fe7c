// Unit tests of bp-conformance's own pieces: float formats, dtype codecs,
// the comparator, the sample generator and a few reference results.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "compare.h"
#include "dtype.h"
#include "floatfmt.h"
#include "gen.h"
#include "opdb.h"

namespace bpc {
namespace {

TEST(FloatFormat, Float16KnownEncodings) {
  EXPECT_EQ(f16_bits_from_double(1.0), 0x3c00u);
  EXPECT_EQ(f16_bits_from_double(-2.0), 0xc000u);
  EXPECT_EQ(f16_bits_from_double(65504.0), 0x7bffu);
  EXPECT_EQ(f16_bits_from_double(65520.0), 0x7c00u);  // rounds to inf
  EXPECT_EQ(f16_bits_from_double(std::ldexp(1.0, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(f16_bits_from_double(std::ldexp(1.0, -14)), 0x0400u);  // smallest normal
  EXPECT_EQ(f16_bits_from_double(-0.0), 0x8000u);
  EXPECT_EQ(f16_bits_from_double(INFINITY), 0x7c00u);
  EXPECT_EQ(f16_bits_from_double(NAN) & 0x7c00u, 0x7c00u);
  EXPECT_NE(f16_bits_from_double(NAN) & 0x03ffu, 0u);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1.
  EXPECT_EQ(f16_bits_from_double(1.0 + std::ldexp(1.0, -11)), 0x3c00u);
  EXPECT_EQ(f16_bits_from_double(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02u);
}

TEST(FloatFormat, Float16RoundTripsEveryEncoding) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const double v = f16_bits_to_double(static_cast<uint16_t>(b));
    if (std::isnan(v)) continue;
    EXPECT_EQ(f16_bits_from_double(v), b) << "bits " << b;
  }
}

TEST(FloatFormat, BFloat16MatchesFloat32Truncation) {
  EXPECT_EQ(bf16_bits_from_double(1.0), 0x3f80u);
  EXPECT_EQ(bf16_bits_from_double(-3.0), 0xc040u);
  EXPECT_EQ(bf16_bits_from_double(3.0e38), 0x7f62u);
  EXPECT_EQ(bf16_bits_from_double(3.4e38), 0x7f80u);  // above the largest bf16: inf
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const double v = bf16_bits_to_double(static_cast<uint16_t>(b));
    if (std::isnan(v)) continue;
    EXPECT_EQ(bf16_bits_from_double(v), b) << "bits " << b;
  }
}

TEST(FloatFormat, Float32RoundingAgreesWithTheCompiler) {
  Rng rng(7);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(rng.uniform(-1.0, 1.0), static_cast<int>(rng.integer(-160, 130)));
    const double expect = static_cast<double>(static_cast<float>(x));
    EXPECT_EQ(round_to_format(x, kFormatF32), expect) << x;
  }
}

TEST(DType, EncodeDecodeRoundTrip) {
  for (int k = 0; k < kNumDTypes; ++k) {
    const DType d = dtype_at(k);
    std::vector<double> v = special_values(d);
    std::vector<uint8_t> bytes;
    dtype_encode(d, v, &bytes);
    ASSERT_EQ(bytes.size(), v.size() * dtype_itemsize(d));
    const std::vector<double> back = dtype_decode(d, bytes.data(), v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      if (std::isnan(v[i])) EXPECT_TRUE(std::isnan(back[i]));
      else EXPECT_EQ(back[i], v[i]) << dtype_name(d) << " " << i;
    }
  }
}

TEST(DType, IntegerRoundingWraps) {
  EXPECT_EQ(dtype_round(DType::kInt8, 128.0), -128.0);
  EXPECT_EQ(dtype_round(DType::kUInt8, -1.0), 255.0);
  EXPECT_EQ(dtype_round(DType::kInt32, 2147483648.0), -2147483648.0);
  EXPECT_EQ(dtype_round(DType::kBool, -3.0), 1.0);
  EXPECT_EQ(dtype_round(DType::kInt8, -2.7), -2.0);
  // Negative int64 values near 2^50 stay exact (no detour through 2^64).
  EXPECT_EQ(dtype_round(DType::kInt64, -765115946000001.0), -765115946000001.0);
}

TEST(DType, UlpOfFloat32) {
  EXPECT_EQ(dtype_ulp(DType::kFloat32, 1.0), std::ldexp(1.0, -23));
  EXPECT_EQ(dtype_ulp(DType::kFloat32, 1.5), std::ldexp(1.0, -23));
  EXPECT_EQ(dtype_ulp(DType::kFloat32, 0.0), std::ldexp(1.0, -149));
  EXPECT_EQ(dtype_ulp(DType::kFloat16, 1.0), std::ldexp(1.0, -10));
}

HostTensor tensor(DType d, std::vector<double> v) {
  HostTensor t;
  t.dtype = d;
  t.sizes = {static_cast<int64_t>(v.size())};
  t.values = std::move(v);
  return t;
}

TEST(Compare, RtolAtolPerDtype) {
  const Tolerance tol = default_tolerance(DType::kFloat32);
  EXPECT_TRUE(compare_values(tensor(DType::kFloat32, {1.0, 100.0}), {}, {1.0 + 1e-6, 100.0 + 1e-4}, tol).ok);
  const CompareResult bad = compare_values(tensor(DType::kFloat32, {1.0, 100.0}), {}, {1.0, 100.01}, tol);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.worst_index, 1);
  EXPECT_EQ(bad.num_bad, 1);
  EXPECT_NEAR(bad.max_abs, 0.01, 1e-9);
}

TEST(Compare, NaNMatchesNaNAndInfIsExact) {
  const Tolerance tol = default_tolerance(DType::kFloat32);
  EXPECT_TRUE(compare_values(tensor(DType::kFloat32, {NAN, INFINITY}), {}, {NAN, INFINITY}, tol).ok);
  EXPECT_FALSE(compare_values(tensor(DType::kFloat32, {NAN}), {}, {0.0}, tol).ok);
  EXPECT_FALSE(compare_values(tensor(DType::kFloat32, {1.0}), {}, {NAN}, tol).ok);
  EXPECT_FALSE(compare_values(tensor(DType::kFloat32, {INFINITY}), {}, {-INFINITY}, tol).ok);
  EXPECT_FALSE(compare_values(tensor(DType::kFloat32, {3e38}), {}, {INFINITY}, tol).ok);
}

TEST(Compare, OverflowingReferenceExpectsInf) {
  // 70000 does not fit float16: the result must be inf.
  const Tolerance tol = default_tolerance(DType::kFloat16);
  EXPECT_TRUE(compare_values(tensor(DType::kFloat16, {70000.0}), {}, {INFINITY}, tol).ok);
  EXPECT_FALSE(compare_values(tensor(DType::kFloat16, {70000.0}), {}, {65504.0}, tol).ok);
}

TEST(Compare, IntegersAreExact) {
  const Tolerance tol = default_tolerance(DType::kInt32);
  EXPECT_TRUE(compare_values(tensor(DType::kInt32, {5, -7}), {}, {5, -7}, tol).ok);
  EXPECT_FALSE(compare_values(tensor(DType::kInt32, {5, -7}), {}, {5, -6}, tol).ok);
}

// Failure blocks print integer results as integers and give no ULP figure
// for them (an exact dtype has no ULP bound), even when the operator's
// tolerance carries one for its float dtypes.
TEST(Compare, IntegerMismatchMessageShowsIntegers) {
  Tolerance tol = default_tolerance(DType::kInt32);
  tol.ulp = 0.5;
  const CompareResult r = compare_values(tensor(DType::kInt32, {5, -1779135520}), {}, {5, 7}, tol);
  ASSERT_FALSE(r.ok);
  const std::string m = mismatch_message(r, tensor(DType::kInt32, {5, -1779135520}), tol);
  EXPECT_NE(m.find("worst at [1]: expected -1779135520, got 7"), std::string::npos) << m;
  EXPECT_NE(m.find("max abs 1779135527"), std::string::npos) << m;
  EXPECT_EQ(m.find("e+"), std::string::npos) << m;
  EXPECT_EQ(m.find("ulp"), std::string::npos) << m;
  EXPECT_EQ(fmt_value(DType::kBool, 1.0), "1");
  EXPECT_EQ(fmt_value(DType::kInt64, -9007199254740993.0), "-9007199254740992");
  // Floats keep nine significant digits and their ULP figure.
  Tolerance ft = default_tolerance(DType::kFloat32);
  ft.ulp = 3.0;
  const CompareResult f = compare_values(tensor(DType::kFloat32, {1.0}), {}, {1.5}, ft);
  const std::string fm = mismatch_message(f, tensor(DType::kFloat32, {1.0}), ft);
  EXPECT_NE(fm.find("expected 1, got 1.5"), std::string::npos) << fm;
  EXPECT_NE(fm.find("max ulp"), std::string::npos) << fm;
}

TEST(Compare, UlpBound) {
  Tolerance tol = default_tolerance(DType::kFloat32);
  tol.ulp = 3.0;
  const double e = 1.0;
  const double ulp = std::ldexp(1.0, -23);
  EXPECT_TRUE(compare_values(tensor(DType::kFloat32, {e}), {}, {e + 3 * ulp}, tol).ok);
  const CompareResult r = compare_values(tensor(DType::kFloat32, {e}), {}, {e + 4 * ulp}, tol);
  EXPECT_FALSE(r.ok);  // within rtol 1.3e-6, but 4 ulp
  EXPECT_NEAR(r.max_ulp, 4.0, 1e-9);
  // A subnormal result may be flushed to zero.
  EXPECT_TRUE(compare_values(tensor(DType::kFloat32, {1e-40}), {}, {0.0}, tol).ok);
}

TEST(Compare, ReductionTermGrowsWithLength) {
  Tolerance tol = default_tolerance(DType::kFloat32);
  HostTensor e = tensor(DType::kFloat32, {0.0});
  EXPECT_FALSE(compare_values(e, {1000.0}, {1e-3}, tol).ok);
  tol.reduce_eps = 1000 * accumulation_epsilon(DType::kFloat32);
  EXPECT_TRUE(compare_values(e, {1000.0}, {1e-3}, tol).ok);
}

TEST(Generator, DeterministicForASeed) {
  const OpClaim* claim = find_claim("add.Tensor");
  ASSERT_NE(claim, nullptr);
  std::string why;
  const auto a = make_cases(*claim, DType::kFloat32, 42, true, &why);
  const auto b = make_cases(*claim, DType::kFloat32, 42, true, &why);
  const auto c = make_cases(*claim, DType::kFloat32, 43, true, &why);
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].sample.desc, b[i].sample.desc);
    ASSERT_EQ(a[i].sample.args.size(), b[i].sample.args.size());
    for (size_t k = 0; k < a[i].sample.args.size(); ++k) {
      const auto& x = a[i].sample.args[k].tensor.t.values;
      const auto& y = b[i].sample.args[k].tensor.t.values;
      ASSERT_EQ(x.size(), y.size());
      for (size_t j = 0; j < x.size(); ++j) ASSERT_TRUE(x[j] == y[j] || (std::isnan(x[j]) && std::isnan(y[j])));
    }
  }
  EXPECT_NE(a[0].sample.args[0].tensor.t.values, c[0].sample.args[0].tensor.t.values);
}

TEST(Generator, QuickTierKeepsSampleNumbers) {
  const OpClaim* claim = find_claim("add.Tensor");
  ASSERT_NE(claim, nullptr);
  std::string why;
  const auto full = make_cases(*claim, DType::kFloat32, 1, true, &why);
  const auto quick = make_cases(*claim, DType::kFloat32, 1, false, &why);
  EXPECT_LT(quick.size(), full.size());
  for (const Case& q : quick) {
    bool found = false;
    for (const Case& f : full) found = found || (f.index == q.index && f.sample.desc == q.sample.desc);
    EXPECT_TRUE(found) << q.sample.desc;
  }
}

TEST(Generator, CoversTheRequiredShapes) {
  const OpClaim* claim = find_claim("mul.Tensor");
  ASSERT_NE(claim, nullptr);
  std::string why;
  const auto cases = make_cases(*claim, DType::kFloat32, 1, true, &why);
  std::string all;
  for (const Case& c : cases) all += c.sample.desc + "|";
  for (const char* want : {"broadcast", "transposed", "strided", "0-dim", "(0,)", "(1,0,3)", "[1023]",
                           "special values", "error:"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want;
  }
}

TEST(Reference, IntegerAddWraps) {
  const OpClaim* claim = find_claim("add.Tensor");
  std::string why;
  for (const Case& c : make_cases(*claim, DType::kInt8, 1, true, &why)) {
    if (c.sample.expect_error) continue;
    ASSERT_TRUE(c.expected.error.empty()) << c.expected.error;
    for (double v : c.expected.outputs[0].values) {
      ASSERT_GE(v, -128.0);
      ASSERT_LE(v, 127.0);
    }
  }
}

TEST(Reference, IntegerDivisionPromotesToFloat32) {
  const OpClaim* claim = find_claim("div.Tensor");
  std::string why;
  const auto cases = make_cases(*claim, DType::kInt32, 1, true, &why);
  ASSERT_FALSE(cases.empty());
  EXPECT_EQ(cases[0].expected.outputs[0].dtype, DType::kFloat32);
}

TEST(Reference, EveryClaimedCellHasSamplesAndAReference) {
  for (const OpClaim& claim : op_claims()) {
    for (int k = 0; k < kNumDTypes; ++k) {
      const DType d = dtype_at(k);
      if (!claim.claims(d)) continue;
      std::string why;
      const auto cases = make_cases(claim, d, 1, true, &why);
      if (cases.empty()) {
        ADD_FAILURE() << claim.name << " " << dtype_name(d) << ": " << why;
        continue;
      }
      for (const Case& c : cases) {
        EXPECT_TRUE(c.expected.error.empty()) << claim.name << " " << dtype_name(d) << " sample " << c.index
                                              << " (" << c.sample.desc << "): " << c.expected.error;
        if (!c.sample.expect_error && c.expected.error.empty()) {
          ASSERT_FALSE(c.expected.outputs.empty());
          EXPECT_EQ(c.expected.outputs[0].values.size(),
                    static_cast<size_t>(numel_of(c.expected.outputs[0].sizes)));
        }
      }
    }
  }
}

// Issue 23 item 18: an out= tensor starts as a sentinel that differs from the
// expected result at every element (the old fixed 7 / 1 equalled expected
// values of many cells, e.g. every true of a bool comparison), so a kernel
// that skips an element cannot pass.
TEST(Generator, OutSentinelDiffersFromEveryExpectedElement) {
  size_t checked = 0;
  for (const OpClaim& claim : op_claims()) {
    if (claim.variant != 2) continue;
    for (int k = 0; k < kNumDTypes; ++k) {
      const DType d = dtype_at(k);
      if (!claim.claims(d)) continue;
      std::string why;
      for (const Case& c : make_cases(claim, d, 1, true, &why)) {
        if (c.sample.expect_error || c.expected.outputs.empty() || c.sample.written_arg < 0) continue;
        const TensorInput& written = c.sample.args[static_cast<size_t>(c.sample.written_arg)].tensor;
        // An overlap case whose out= is an input (exact alias) starts with that input's values, not a sentinel.
        if (written.alias_of >= 0) continue;
        const std::vector<double>& out = written.t.values;
        const std::vector<double>& want = c.expected.outputs[0].values;
        ASSERT_EQ(out.size(), want.size()) << claim.name;
        for (size_t i = 0; i < out.size(); ++i) {
          ASSERT_FALSE(out[i] == want[i]) << claim.name << " " << dtype_name(d) << " sample " << c.index << " element "
                                          << i << ": the sentinel equals the expected " << want[i];
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST(DType, ValueUnlikeDiffersAndIsRepresentable) {
  for (int k = 0; k < kNumDTypes; ++k) {
    const DType d = dtype_at(k);
    const std::vector<double> expected =
        d == DType::kBool ? std::vector<double>{0.0, 1.0} : std::vector<double>{0.0, 1.0, 5.0, 7.0, -1.0, NAN};
    for (double e : expected) {
      const double v = dtype_value_unlike(d, e);
      EXPECT_FALSE(v == e) << dtype_name(d) << " " << e;
      EXPECT_EQ(dtype_round(d, v), v) << dtype_name(d);
    }
  }
}

}  // namespace
}  // namespace bpc
