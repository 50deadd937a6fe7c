// bp-test: public-api
// bp-conformance's ONNX node-test corpus against the real library and CPU
// plugin: real corpus tests load, map and pass; a wrong expected value or a
// wrong kernel makes a test fail; gaps are reported with the right reason.
// Skips (saying why) when libonnx-testdata's corpus or ONNX support is absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>

#include "backplane/backplane.h"
#include "onnx/onnx_corpus.h"
#include "onnx/onnx_run.h"

namespace bpc {
namespace {

using onnx_corpus::OnnxTest;

const std::string kCorpus = "/usr/share/libonnx-testdata/data/node";

// Writes zeros to a contiguous float32 output: a wrong add.
bp_status_t zero_kernel(const bp_kernel_call_t* call) {
  const DLTensor* out = call->outputs[0];
  if (out->dtype.code != kDLFloat || out->dtype.bits != 32) return BP_STATUS_UNIMPLEMENTED;
  int64_t n = 1;
  for (int i = 0; i < out->ndim; ++i) n *= out->shape[i];
  std::memset(static_cast<char*>(out->data) + out->byte_offset, 0, static_cast<size_t>(n) * 4);
  return BP_STATUS_OK;
}

class OnnxCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onnx_corpus::onnx_support_built()) GTEST_SKIP() << "bp-conformance built without ONNX support";
    if (access((kCorpus + "/test_add/model.onnx").c_str(), R_OK) != 0) {
      GTEST_SKIP() << "no ONNX node-test corpus at " << kCorpus << " (apt-get install libonnx-testdata)";
    }
    bp_context_options_t o{};
    o.struct_size = sizeof o;
    o.min_log_level = BP_LOG_ERROR;
    ASSERT_EQ(bp_context_create(&o, &ctx_), BP_STATUS_OK);
    const std::string path = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
    ASSERT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_OK) << bp_last_error_message();
    ASSERT_EQ(bp_backend_find(ctx_, "cpu", &cpu_), BP_STATUS_OK);
  }
  void TearDown() override { bp_context_destroy(ctx_); }

  OnnxTest load(const std::string& name) {
    OnnxTest t;
    std::string err;
    EXPECT_TRUE(onnx_corpus::load_onnx_test(kCorpus + "/" + name, &t, &err)) << err;
    return t;
  }
  OnnxTestResult run(const std::string& name) {
    return run_onnx_test(ctx_, bp_device_t{cpu_, 0}, kCorpus + "/" + name);
  }

  bp_context_t* ctx_ = nullptr;
  int32_t cpu_ = -1;
};

TEST_F(OnnxCorpusTest, LoadsTestAdd) {
  const OnnxTest t = load("test_add");
  EXPECT_EQ(t.node.op_type, "Add");
  EXPECT_GE(t.node.opset, 7);
  EXPECT_TRUE(t.not_mapped.empty()) << t.not_mapped;
  ASSERT_EQ(t.data_sets.size(), 1u);
  ASSERT_EQ(t.data_sets[0].inputs.size(), 2u);
  ASSERT_EQ(t.data_sets[0].outputs.size(), 1u);
  const HostTensor& x = t.data_sets[0].inputs[0].t;
  EXPECT_EQ(x.dtype, DType::kFloat32);
  EXPECT_EQ(x.sizes, (std::vector<int64_t>{3, 4, 5}));
  ASSERT_EQ(x.values.size(), 60u);
  // The expected sum is the sum of the inputs (the files were read right).
  const auto& y = t.data_sets[0].inputs[1].t.values;
  const auto& z = t.data_sets[0].outputs[0].t.values;
  for (size_t k = 0; k < 60; ++k) EXPECT_NEAR(z[k], x.values[k] + y[k], 1e-6 * (1 + std::fabs(z[k])));
}

TEST_F(OnnxCorpusTest, AddAndConvPassNatively) {
  for (const char* name :
       {"test_add", "test_add_uint8", "test_add_bcast", "test_conv_with_strides_padding",
        "test_conv_with_strides_and_asymmetric_padding", "test_softmax_axis_0",
        "test_reduce_mean_default_axes_keepdims_example", "test_argmin_negative_axis_keepdims_random_select_last_index",
        "test_triu", "test_sce_mean_weight", "test_nllloss_NCd1_weight_ii", "test_reflect_pad",
        "test_averagepool_2d_same_upper", "test_lrn", "test_cast_BFLOAT16_to_FLOAT"}) {
    const OnnxTestResult r = run(name);
    EXPECT_EQ(r.outcome, "pass") << name << ": " << r.reason << r.message;
    EXPECT_EQ(r.path, "native") << name;
  }
}

// ONNX's test generator stores bfloat16 data as uint16 bit patterns; the
// graph's declared type says to read them as bfloat16.
TEST_F(OnnxCorpusTest, ReadsBFloat16StoredAsUInt16) {
  const OnnxTest t = load("test_cast_BFLOAT16_to_FLOAT");
  ASSERT_EQ(t.data_sets.size(), 1u);
  const onnx_corpus::OnnxTensor& in = t.data_sets[0].inputs[0];
  EXPECT_TRUE(in.unsupported.empty()) << in.unsupported;
  EXPECT_EQ(in.t.dtype, DType::kBFloat16);
  EXPECT_EQ(t.data_sets[0].outputs[0].t.dtype, DType::kFloat32);
}

TEST_F(OnnxCorpusTest, AWrongExpectedValueFails) {
  OnnxTest t = load("test_conv_with_strides_padding");
  ASSERT_FALSE(t.data_sets.empty());
  t.data_sets[0].outputs[0].t.values[5] += 0.5;
  const OnnxTestResult r = onnx_corpus::run_loaded_test(ctx_, bp_device_t{cpu_, 0}, t);
  EXPECT_EQ(r.outcome, "fail");
  EXPECT_NE(r.message.find("1 of"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("expected"), std::string::npos) << r.message;
}

TEST_F(OnnxCorpusTest, AWrongKernelFails) {
  bp_op_t* add = nullptr;
  ASSERT_EQ(bp_op_find(ctx_, "add.Tensor", &add), BP_STATUS_OK);
  bp_registration_t* reg = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, add, cpu_, zero_kernel, nullptr, BP_REGISTER_OVERRIDE, &reg), BP_STATUS_OK)
      << bp_last_error_message();
  const OnnxTestResult bad = run("test_add");
  EXPECT_EQ(bad.outcome, "fail") << bad.message;
  ASSERT_EQ(bp_registration_remove(ctx_, reg), BP_STATUS_OK);
  EXPECT_EQ(run("test_add").outcome, "pass");
}

// Tests of more than one node (the _expanded function bodies) run whole
// through the ONNX frontend's executor.
TEST_F(OnnxCorpusTest, AGraphTestRunsThroughTheExecutor) {
  const OnnxTest t = load("test_layer_normalization_2d_axis0_expanded");
  EXPECT_TRUE(t.graph);
  EXPECT_GT(t.num_nodes, 1);
  ASSERT_FALSE(t.data_sets.empty());
  EXPECT_EQ(t.data_sets[0].inputs.size(), t.graph_inputs.size());
  EXPECT_EQ(t.data_sets[0].outputs.size(), t.graph_outputs.size());
  const OnnxTestResult r = onnx_corpus::run_loaded_test(ctx_, bp_device_t{cpu_, 0}, t);
  EXPECT_EQ(r.outcome, "pass") << r.message << r.reason;
  EXPECT_EQ(r.onnx_op.rfind("graph(", 0), 0u) << r.onnx_op;
  EXPECT_NE(r.onnx_op.find("ReduceMean"), std::string::npos) << r.onnx_op;
  EXPECT_EQ(r.path, "native");
}

// HammingWindow's body computes its size as a float on the device and casts
// it for Range: the executor reads such a small float value back only when a
// mapping asks for its values (host_of).
TEST_F(OnnxCorpusTest, AGraphReadsAComputedFloatBackOnlyWhenAsked) {
  const OnnxTestResult r = run("test_hammingwindow_expanded");
  EXPECT_EQ(r.outcome, "pass") << r.message << r.reason;
}

TEST_F(OnnxCorpusTest, AWrongKernelFailsAGraphTest) {
  bp_op_t* add = nullptr;
  ASSERT_EQ(bp_op_find(ctx_, "add.Tensor", &add), BP_STATUS_OK);
  bp_registration_t* reg = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, add, cpu_, zero_kernel, nullptr, BP_REGISTER_OVERRIDE, &reg), BP_STATUS_OK)
      << bp_last_error_message();
  const OnnxTestResult bad = run("test_layer_normalization_2d_axis0_expanded");  // adds epsilon
  EXPECT_EQ(bad.outcome, "fail") << bad.message;
  EXPECT_NE(bad.message.find("elements differ"), std::string::npos) << bad.message;
  ASSERT_EQ(bp_registration_remove(ctx_, reg), BP_STATUS_OK);
  EXPECT_EQ(run("test_layer_normalization_2d_axis0_expanded").outcome, "pass");
}

TEST_F(OnnxCorpusTest, NotMappedReasons) {
  const std::pair<const char*, const char*> cases[] = {
      {"test_range_float_type_positive_delta_expanded", "op Loop"},  // a graph: its first unmapped node
      {"test_strnormalizer_export_monday_casesensintive_lower", "op StringNormalizer"},
      {"test_training_dropout", "attribute Dropout.training_mode=1"},
      {"test_cast_FLOAT_to_STRING", "dtype Cast(string)"},
      {"test_maxpool_2d_uint8", "dtype MaxPool(uint8)"},
      {"test_max_uint16", "dtype Max(uint16)"},
  };
  for (const auto& c : cases) {
    const OnnxTestResult r = run(c.first);
    EXPECT_EQ(r.outcome, "not_mapped") << c.first << ": " << r.message;
    EXPECT_EQ(r.reason.rfind(c.second, 0), 0u) << c.first << ": " << r.reason;
  }
}

TEST(OnnxCompare, ToleranceNaNIntegersAndSizes) {
  HostTensor e;
  e.dtype = DType::kFloat32;
  e.sizes = {3};
  e.values = {1.0, NAN, 100.0};
  EXPECT_EQ(onnx_corpus::compare_output(e, DType::kFloat32, {3}, {1.0005, NAN, 100.09}, 1e-3, 1e-7), "");
  EXPECT_NE(onnx_corpus::compare_output(e, DType::kFloat32, {3}, {1.0, 0.0, 100.0}, 1e-3, 1e-7), "");
  EXPECT_NE(onnx_corpus::compare_output(e, DType::kFloat32, {3}, {1.0, NAN, 100.2}, 1e-3, 1e-7).find("[2]"),
            std::string::npos);
  EXPECT_NE(onnx_corpus::compare_output(e, DType::kFloat32, {1, 3}, {1.0, NAN, 100.0}, 1e-3, 1e-7), "");
  EXPECT_NE(onnx_corpus::compare_output(e, DType::kFloat64, {3}, {1.0, NAN, 100.0}, 1e-3, 1e-7), "");
  HostTensor i;
  i.dtype = DType::kInt64;
  i.sizes = {2};
  i.values = {5, 1000};
  EXPECT_EQ(onnx_corpus::compare_output(i, DType::kInt64, {2}, {5, 1000}, 1e-3, 1e-7), "");
  EXPECT_NE(onnx_corpus::compare_output(i, DType::kInt64, {2}, {5, 1001}, 1e-3, 1e-7), "");
}

// Issue 23 item 14: a failing node test fails the run unless an onnx_xfail
// entry with a reason covers it; a covered test that passes is stale; the
// verdict's score gives mapped and total side by side.
TEST(OnnxVerdict, FailuresCountUnlessAnExpectationCoversThem) {
  Expectations ex;
  std::string err;
  ASSERT_TRUE(
      parse_expectations("onnx_xfail:\n  - test: test_cast_FLOAT_to_BFLOAT16\n    reason: data truncates\n"
                         "  - test: test_stale\n    reason: was broken\n",
                         &ex, &err))
      << err;
  ex.source = "common.yaml";
  auto test = [](const char* name, const char* outcome) {
    OnnxTestResult t;
    t.test = name;
    t.outcome = outcome;
    t.message = "1 of 3 beyond tolerance";
    return t;
  };
  OnnxReport r;
  r.device = "cpu:0";
  r.tests = {test("test_add", "pass"), test("test_cast_FLOAT_to_BFLOAT16", "fail"), test("test_loop", "not_mapped")};
  apply_onnx_xfail(ex, &r);
  EXPECT_EQ(r.tests[1].outcome, "xfail");
  EXPECT_NE(r.tests[1].message.find("common.yaml:2: data truncates"), std::string::npos) << r.tests[1].message;
  EXPECT_FALSE(onnx_any_failure({r}));
  EXPECT_EQ(onnx_verdict_suffix(r), "; ONNX node tests 1 of 2 mapped pass (1 expected failures), 1 of 3 not mapped");

  r.tests.push_back(test("test_mul", "fail"));  // not covered: fails the run
  EXPECT_TRUE(onnx_any_failure({r}));
  EXPECT_EQ(onnx_verdict_suffix(r),
            "; ONNX node tests FAIL: 1 failing, 1 of 3 mapped pass (1 expected failures), 1 of 4 not mapped");

  OnnxReport stale;
  stale.tests = {test("test_stale", "pass")};
  apply_onnx_xfail(ex, &stale);
  EXPECT_EQ(stale.tests[0].outcome, "xpass");
  EXPECT_NE(stale.tests[0].message.find("remove the entry"), std::string::npos);
  EXPECT_TRUE(onnx_any_failure({stale}));
}

}  // namespace
}  // namespace bpc
