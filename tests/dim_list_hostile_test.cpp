// Dim and size lists longer than any tensor's rank (issue 42 item 17): the
// length is checked before any element is read, and the message stays short
// (a 2^20-element list made a 3 MB message). The caller's pointers are
// trusted (docs/security.md): a list's length must not exceed its buffer.
#include <string>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;

namespace {

class DimListHostileTest : public ContextTest {};

TEST_F(DimListHostileTest, LongListsAreRefusedByLengthWithAShortMessage) {
  bp_tensor_t* a = F32(kCpu, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<int64_t> ones(size_t{1} << 20, 1);
  // 2^20 dims: the length is refused before the entries are read.
  const char* ops[] = {"expand", "view", "reshape", "permute", "sum.dim_IntList", "mean.dim", "amax"};
  for (const char* op : ops) {
    std::vector<bp_value_t> args = {T(a), L(ones)};
    bp_tensor_t* r = nullptr;
    const bp_status_t st = bp_op_call(ctx_, Op(op), args.data(), static_cast<int32_t>(args.size()), &r, 1);
    const std::string msg = LastError();
    EXPECT_EQ(st, BP_STATUS_INVALID_ARGUMENT) << op << ": " << msg.substr(0, 300);
    EXPECT_LT(msg.size(), 300u) << op << ": " << msg.substr(0, 300);
    EXPECT_THAT(msg, ::testing::HasSubstr("1048576")) << op;  // the length, named
    if (r != nullptr) bp_tensor_release(r);
  }
  // A list within the rank but wrong is shown whole, as before.
  const std::vector<int64_t> dup = {1, 1};
  std::vector<bp_value_t> args = {T(a), L(dup)};
  bp_tensor_t* r = nullptr;
  EXPECT_EQ(bp_op_call(ctx_, Op("sum.dim_IntList"), args.data(), 2, &r, 1), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), ::testing::HasSubstr("dim 1 appears more than once in [1, 1]"));
}

}  // namespace
