// A graph replay after a captured input tensor was released (issue 42 item
// 18): the input's memory went back to the caching allocator and may belong
// to another tensor, so bp_graph_launch refuses with FAILED_PRECONDITION
// naming the node, its operator and the argument, instead of reading
// whatever took the memory. Releasing a tensor the graph's own pool
// provided (its output) does not stop replays: that memory stays the graph's.
// bp-test: public-api
#include <gmock/gmock.h>

#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class GraphInputReleaseTest : public VendorSimTest {};

TEST_F(GraphInputReleaseTest, ReplayAfterTheCapturedInputWasReleasedIsRefused) {
  if (IsSkipped() || HasFatalFailure()) return;
  bp_stream_handle_t *s = nullptr, *def = nullptr;
  ASSERT_EQ(bp_stream_create(ctx_, dev_, &s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_stream_get_default(ctx_, dev_, &def), BP_STATUS_OK) << LastError();
  const int64_t n = 4;
  const float host[4] = {-1, 2, -3, 4};
  bp_tensor_t* x = nullptr;  // not Own()ed: the test releases it
  ASSERT_EQ(bp_tensor_from_host(ctx_, dev_, 1, &n, DLDataType{kDLFloat, 32, 1}, host, sizeof host, &x), BP_STATUS_OK);
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK) << LastError();
  bp_value_t args[1] = {T(x)};
  bp_tensor_t* y = nullptr;
  ASSERT_EQ(bp_op_call(ctx_, Op("relu"), args, 1, &y, 1), BP_STATUS_OK) << LastError();
  bp_graph_t* g = nullptr;
  ASSERT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_graph_launch(g, s), BP_STATUS_OK) << LastError();
  bp_tensor_release(y);  // the graph's own memory: replays go on
  EXPECT_EQ(bp_graph_launch(g, s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_stream_synchronize(s), BP_STATUS_OK) << LastError();
  bp_tensor_release(x);
  // Another tensor may now hold x's memory.
  bp_tensor_t* other = F32(dev_, {4}, {9, 9, 9, 9});
  EXPECT_EQ(bp_graph_launch(g, s), BP_STATUS_FAILED_PRECONDITION) << "replayed on released memory";
  EXPECT_THAT(LastError(), HasSubstr("a tensor the graph captured was released"));
  EXPECT_THAT(LastError(), HasSubstr("node 0 (relu), argument 0"));
  EXPECT_EQ(Read(other), (std::vector<float>{9, 9, 9, 9}));
  EXPECT_EQ(bp_graph_destroy(g), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_set_current_stream(def), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
}

}  // namespace
