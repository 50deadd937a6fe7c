// Unit tests of bp-conformance's expectation files (unsupported / xfail).
#include <gtest/gtest.h>

#include "expectations.h"

namespace bpc {
namespace {

TEST(Expectations, ParsesTheDocumentedSubset) {
  const char* text =
      "# comment\n"
      "unsupported:\n"
      "  - op: \"conv2d\"   # trailing comment\n"
      "    dtypes: [bfloat16, float16]\n"
      "    reason: \"no bf16 MAC units\"\n"
      "xfail:\n"
      "  - op: sin*\n"
      "    reason: \"argument reduction (issue #12)\"  # a quoted '#' is text\n";
  Expectations ex;
  std::string err;
  ASSERT_TRUE(parse_expectations(text, &ex, &err)) << err;
  ASSERT_EQ(ex.unsupported.size(), 1u);
  EXPECT_EQ(ex.unsupported[0].op, "conv2d");
  EXPECT_EQ(ex.unsupported[0].reason, "no bf16 MAC units");
  EXPECT_NE(ex.find_unsupported("conv2d", DType::kBFloat16), nullptr);
  EXPECT_EQ(ex.find_unsupported("conv2d", DType::kFloat32), nullptr);
  ASSERT_EQ(ex.xfail.size(), 1u);
  EXPECT_EQ(ex.xfail[0].reason, "argument reduction (issue #12)");
  EXPECT_NE(ex.find_xfail("sin_", DType::kInt8), nullptr);  // no dtypes: every dtype
  EXPECT_EQ(ex.find_xfail("cos", DType::kInt8), nullptr);
}

TEST(Expectations, EmptySectionsAreFine) {
  Expectations ex;
  std::string err;
  EXPECT_TRUE(parse_expectations("unsupported:\nxfail:\n", &ex, &err)) << err;
  EXPECT_TRUE(ex.unsupported.empty());
}

TEST(Expectations, RejectsEntriesWithoutReasonAndBadDtypes) {
  Expectations a, b, c;
  std::string err;
  EXPECT_FALSE(parse_expectations("xfail:\n  - op: sin\n", &a, &err));
  EXPECT_NE(err.find("reason"), std::string::npos);
  EXPECT_FALSE(parse_expectations("xfail:\n  - op: sin\n    dtypes: [float33]\n    reason: x\n", &b, &err));
  EXPECT_NE(err.find("line 3"), std::string::npos) << err;
  EXPECT_FALSE(parse_expectations("broken: 1\n", &c, &err));
}

TEST(Expectations, XfailTurnsFailuresIntoExpectedAndPassesIntoUnexpected) {
  Expectations ex;
  std::string err;
  ASSERT_TRUE(parse_expectations("xfail:\n  - op: sin\n    reason: r\n", &ex, &err)) << err;
  DeviceReport r;
  r.ops = {"sin", "cos"};
  r.cells["sin"][0].outcome = Outcome::kFail;
  r.cells["sin"][1].outcome = Outcome::kNativePass;
  r.cells["cos"][0].outcome = Outcome::kFail;
  apply_xfail(ex, &r);
  EXPECT_EQ(r.cells["sin"][0].outcome, Outcome::kExpectedFail);
  EXPECT_EQ(r.cells["sin"][1].outcome, Outcome::kUnexpectedPass);
  EXPECT_EQ(r.cells["cos"][0].outcome, Outcome::kFail);
}

TEST(Expectations, AnEntryNamingNoOperatorIsAnError) {
  Expectations ex;
  std::string err;
  ASSERT_TRUE(parse_expectations("unsupported:\n  - op: conv2d\n    reason: r\n"
                                 "xfail:\n  - op: sinn\n    reason: typo\n",
                                 &ex, &err))
      << err;
  ex.source = "mychip.yaml";
  const std::vector<std::string> ops = {"conv2d", "sin", "sin_", "sin.out"};
  EXPECT_FALSE(check_expectation_ops(ex, ops, &err));
  EXPECT_NE(err.find("mychip.yaml:5"), std::string::npos) << err;
  EXPECT_NE(err.find("'sinn'"), std::string::npos) << err;
  ex.xfail[0].op = "sin*";  // a glob matching some operator is fine
  EXPECT_TRUE(check_expectation_ops(ex, ops, &err)) << err;
}

TEST(Expectations, TheCommittedFilesParse) {
  for (const char* backend : {"cpu", "opencl", "cuda", "hip"}) {
    Expectations ex;
    std::string err;
    EXPECT_TRUE(load_expectations(BPC_SOURCE_EXPECTATIONS_DIR, backend, &ex, &err)) << err;
  }
}

}  // namespace
}  // namespace bpc
