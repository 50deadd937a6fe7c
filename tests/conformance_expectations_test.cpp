// Unit tests of bp-conformance's expectation files (unsupported / xfail).
#include <gtest/gtest.h>

#include "expectations.h"
#include "report.h"

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

// Issue 23 item 14: the three bfloat16 Cast/CastLike node tests fail on
// every backend because of the data; common.yaml says so for every backend.
TEST(Expectations, CommonEntriesCoverTheBfloat16CastTestsOnEveryBackend) {
  for (const char* backend : {"cpu", "opencl", "vendor_sim", "mychip"}) {
    Expectations ex;
    std::string err;
    ASSERT_TRUE(load_expectations(BPC_SOURCE_EXPECTATIONS_DIR, backend, &ex, &err)) << err;
    for (const char* test : {"test_cast_FLOAT_to_BFLOAT16", "test_castlike_FLOAT_to_BFLOAT16",
                             "test_castlike_FLOAT_to_BFLOAT16_expanded"}) {
      const Expectation* e = ex.find_onnx_xfail(test);
      ASSERT_NE(e, nullptr) << backend << " " << test;
      EXPECT_NE(e->reason.find("truncates"), std::string::npos) << e->reason;
      EXPECT_NE(ex.where(*e).find("common.yaml:"), std::string::npos) << ex.where(*e);
    }
    EXPECT_EQ(ex.find_onnx_xfail("test_cast_BFLOAT16_to_FLOAT"), nullptr);  // that direction is exact
  }
}

TEST(Expectations, OnnxXfailEntriesTakeTestAndReasonOnly) {
  Expectations ok, bad_key, no_reason;
  std::string err;
  ASSERT_TRUE(parse_expectations("onnx_xfail:\n  - test: \"test_foo*\"\n    reason: data\n", &ok, &err)) << err;
  ASSERT_EQ(ok.onnx_xfail.size(), 1u);
  EXPECT_NE(ok.find_onnx_xfail("test_foo_bar"), nullptr);
  EXPECT_EQ(ok.find_onnx_xfail("test_bar"), nullptr);
  EXPECT_FALSE(parse_expectations("onnx_xfail:\n  - op: sin\n    reason: r\n", &bad_key, &err));
  EXPECT_NE(err.find("unknown key 'op'"), std::string::npos) << err;
  EXPECT_FALSE(parse_expectations("onnx_xfail:\n  - test: test_x\n", &no_reason, &err));
  EXPECT_NE(err.find("a test and a reason"), std::string::npos) << err;
}

// Issue 23 item 18: an unsupported entry whose cell ran (--verify-expectations)
// and passed is stale; one whose cell failed stays unsupported.
TEST(Expectations, UnsupportedEntriesWhoseCellPassesAreReportedStale) {
  Expectations ex;
  std::string err;
  ASSERT_TRUE(parse_expectations("unsupported:\n  - op: sin\n    reason: no sine unit\n", &ex, &err)) << err;
  ex.source = "mychip.yaml";
  DeviceReport r;
  r.ops = {"sin", "cos"};
  r.cells["sin"][0].outcome = Outcome::kNativePass;
  r.cells["sin"][1].outcome = Outcome::kFail;
  r.cells["sin"][2].outcome = Outcome::kUnsupported;  // did not run (a capability gap)
  r.cells["cos"][0].outcome = Outcome::kNativePass;
  apply_unsupported(ex, &r);
  EXPECT_EQ(r.cells["sin"][0].outcome, Outcome::kUnexpectedPass);
  EXPECT_NE(r.cells["sin"][0].reason.find("mychip.yaml:2 lists it as unsupported (no sine unit)"), std::string::npos)
      << r.cells["sin"][0].reason;
  EXPECT_EQ(r.cells["sin"][1].outcome, Outcome::kUnsupported);
  EXPECT_EQ(r.cells["sin"][1].reason, "unsupported per mychip.yaml:2: no sine unit");
  EXPECT_EQ(r.cells["sin"][2].outcome, Outcome::kUnsupported);
  EXPECT_EQ(r.cells["cos"][0].outcome, Outcome::kNativePass);
  const Totals t = totals_of(r);
  EXPECT_EQ(t.xpass, 1);
}

}  // namespace
}  // namespace bpc
