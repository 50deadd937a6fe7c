// The fixture of the ABI and runtime group: one (backend, device) target of
// bp-conformance per test instance, in the suite's shared context.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backplane/backplane.h"
#include "dtype.h"
#include "groups/abi_runtime_util.h"
#include "target.h"

namespace bpc {

using abirt::CallOp;
using abirt::Held;
using abirt::LastError;

class AbiRuntimeTest : public ::testing::TestWithParam<Target> {
 protected:
  bp_context_t* ctx() const { return suite_context(); }
  bp_device_t dev() const { return bp_device_t{GetParam().backend, GetParam().device}; }
  bool IsCpuBackend() const { return GetParam().backend == 0; }

  bp_device_properties_t Props() const {
    bp_device_properties_t p{};
    p.struct_size = sizeof(p);
    EXPECT_EQ(bp_device_properties(ctx(), dev(), &p), BP_STATUS_OK) << LastError();
    return p;
  }
  // How a call of `name` would be served on this target's backend now.
  int32_t Kind(const char* name) const {
    bp_op_t* op = abirt::FindOp(ctx(), name);
    int32_t k = -1;
    if (op == nullptr || bp_op_dispatch_kind(ctx(), op, dev().backend, &k) != BP_STATUS_OK) return -1;
    return k;
  }
  uint64_t Count(const char* name, bool native) const {
    bp_op_t* op = abirt::FindOp(ctx(), name);
    uint64_t n = 0;
    if (op == nullptr) return 0;
    EXPECT_EQ(native ? bp_native_count(ctx(), op, dev().backend, &n) : bp_fallback_count(ctx(), op, dev().backend, &n),
              BP_STATUS_OK)
        << LastError();
    return n;
  }
  Held Make(const std::vector<int64_t>& sizes, DType d, const std::vector<double>& values) const {
    Held t = abirt::FromHost(ctx(), dev(), sizes, d, values);
    EXPECT_TRUE(t) << "bp_tensor_from_host(" << dtype_name(d) << ") on " << GetParam().device_label << ": "
                   << LastError();
    return t;
  }
  std::vector<double> Read(const bp_tensor_t* t, DType d) const {
    std::vector<double> v;
    std::string err;
    EXPECT_TRUE(abirt::ReadBack(t, d, &v, &err)) << err;
    return v;
  }
};

}  // namespace bpc
