// plugin_kit.h: negotiation answers, struct_size checks and bp_kit_fail's
// choice between the call's own fail (ABI 1.2) and host->set_error (older
// hosts), driven with hand-made structs (no host library involved).
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include <backplane/op_args.h>
#include <backplane/plugin_kit.h>

namespace {

TEST(PluginKit, NegotiateAnswersTheOlderOfBothVersions) {
  uint32_t v = BP_MAKE_ABI_VERSION(1, 7);  // a newer host
  EXPECT_EQ(bp_kit_negotiate(&v, BP_MAKE_ABI_VERSION(1, 2)), BP_STATUS_OK);
  EXPECT_EQ(v, BP_MAKE_ABI_VERSION(1, 2));
  v = BP_MAKE_ABI_VERSION(1, 0);  // an older host
  EXPECT_EQ(bp_kit_negotiate(&v, BP_ABI_VERSION), BP_STATUS_OK);
  EXPECT_EQ(v, BP_MAKE_ABI_VERSION(1, 0));
  v = BP_ABI_VERSION;
  EXPECT_EQ(bp_kit_negotiate(&v, BP_ABI_VERSION), BP_STATUS_OK);
  EXPECT_EQ(v, static_cast<uint32_t>(BP_ABI_VERSION));
}

TEST(PluginKit, NegotiateRefusesAnotherMajorAndNull) {
  uint32_t v = BP_MAKE_ABI_VERSION(2, 0);
  EXPECT_EQ(bp_kit_negotiate(&v, BP_ABI_VERSION), BP_STATUS_INCOMPATIBLE_VERSION);
  EXPECT_EQ(v, BP_MAKE_ABI_VERSION(2, 0));  // untouched
  EXPECT_EQ(bp_kit_negotiate(nullptr, BP_ABI_VERSION), BP_STATUS_INVALID_ARGUMENT);
}

TEST(PluginKit, HasFieldFollowsStructSize) {
  bp_kernel_call_t call{};
  call.struct_size = offsetof(bp_kernel_call_t, fail);  // what a 1.1 host allocates
  EXPECT_TRUE(BP_KIT_HAS_FIELD(&call, backend_data));
  EXPECT_FALSE(BP_KIT_HAS_FIELD(&call, fail));
  EXPECT_FALSE(BP_KIT_HAS_FIELD_OF(bp_kernel_call_t, &call, error_state));
  call.struct_size = sizeof(call);
  EXPECT_TRUE(BP_KIT_HAS_FIELD(&call, error_state));
}

// A stand-in host: records which route a message took.
std::string g_via;
std::string g_message;
bp_status_t RecordSetError(bp_status_t code, const char* message) {
  g_via = "set_error";
  g_message = message;
  return code;
}
bp_status_t RecordFail(const bp_kernel_call_t*, bp_status_t code, const char* message) {
  g_via = "fail";
  g_message = message;
  return code;
}

TEST(PluginKit, FailUsesTheCallOnANewHostAndSetErrorOnAnOldOne) {
  bp_host_api_t host{};
  host.struct_size = sizeof(host);
  host.set_error = RecordSetError;
  bp_kernel_call_t call{};
  call.struct_size = sizeof(call);
  call.fail = RecordFail;
  EXPECT_EQ(bp_kit_fail(&call, &host, BP_STATUS_INVALID_ARGUMENT, "m1"), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(g_via, "fail");
  EXPECT_EQ(g_message, "m1");
  call.struct_size = offsetof(bp_kernel_call_t, fail);  // a 1.1 host: fail is not there to read
  EXPECT_EQ(bp_kit_fail(&call, &host, BP_STATUS_OUT_OF_RANGE, "m2"), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(g_via, "set_error");
  EXPECT_EQ(g_message, "m2");
  g_via.clear();
  EXPECT_EQ(bp_kit_fail(&call, nullptr, BP_STATUS_INTERNAL, "m3"), BP_STATUS_INTERNAL);  // nowhere to report
  EXPECT_EQ(g_via, "");
}

// The generated indices match the schemas in ops.yaml.
TEST(PluginKit, OpArgsNameTheSchemaPositions) {
  EXPECT_STREQ(BP_OP_ADD_TENSOR, "add.Tensor");
  EXPECT_STREQ(BP_OP_ADD__TENSOR, "add_.Tensor");
  EXPECT_STREQ(BP_OP_ADD_OUT, "add.out");
  EXPECT_EQ(BP_ARG_ADD_TENSOR_SELF, 0);
  EXPECT_EQ(BP_ARG_ADD_TENSOR_ALPHA, 2);
  EXPECT_EQ(BP_NARGS_ADD_TENSOR, 3);
  EXPECT_EQ(BP_ARG_ADDMM_BETA, 3);
  EXPECT_EQ(BP_ARG_BATCH_NORM_EPS, 7);
  EXPECT_EQ(BP_NARGS_BATCH_NORM, 9);
  EXPECT_STREQ(BP_OP_SUM_DIM_INTLIST_OUT, "sum.dim_IntList_out");
}

}  // namespace
