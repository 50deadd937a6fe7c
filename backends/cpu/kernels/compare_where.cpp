// Comparisons (bool result; inputs share the promoted dtype) and where.
#include "common.h"
#include "simd.h"
#include "vec_rows.h"

namespace bp_cpu {
namespace {

// float32 inputs run through the vector kernel `vop`, other dtypes `cmp`.
template <typename Cmp>
bp_status_t Compare(const bp_kernel_call_t* call, simd::CmpOp vop, Cmp cmp) {
  const DLTensor* a = bp_kit_tensor_arg(call, BP_ARG_EQ_TENSOR_SELF);
  const DLTensor* b = bp_kit_tensor_arg(call, BP_ARG_EQ_TENSOR_OTHER);
  DLTensor* out = call->outputs[0];
  if (a == nullptr || b == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected two tensors");
  if (Numel(*out) == 0) return BP_STATUS_OK;  // nothing to compute, whatever the views
  if (DtypeOf(out->dtype) != DType::kBool) return FailDtype(call, *out);
  const DType dt = DtypeOf(a->dtype);
  if (dt == DType::kInvalid || DtypeOf(b->dtype) != dt) return FailDtype(call, *a);
  if (dt == DType::kFloat32 && UseVecRows(*out)) {
    const DLTensor* ops[3] = {out, a, b};
    VecRows(ops, [vop](char* const* p, const int64_t* s, int64_t n) {
      simd::CompareF32(vop, reinterpret_cast<const float*>(p[1]), s[1], reinterpret_cast<const float*>(p[2]), s[2],
                       reinterpret_cast<bool*>(p[0]), n);
    });
    return BP_STATUS_OK;
  }
  return Dispatch(dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    using C = opmath_t<T>;
    BinaryLoop<bool, T, T>(*out, *a, *b, [cmp](C x, C y) { return cmp(x, y); });
    return BP_STATUS_OK;
  });
}

// The comparison functors are generic so one definition serves every dtype.
bp_status_t Eq(const bp_kernel_call_t* c) {
  return Compare(c, simd::CmpOp::kEq, [](auto x, auto y) { return x == y; });
}
bp_status_t Ne(const bp_kernel_call_t* c) {
  return Compare(c, simd::CmpOp::kNe, [](auto x, auto y) { return x != y; });
}
bp_status_t Lt(const bp_kernel_call_t* c) {
  return Compare(c, simd::CmpOp::kLt, [](auto x, auto y) { return x < y; });
}
bp_status_t Le(const bp_kernel_call_t* c) {
  return Compare(c, simd::CmpOp::kLe, [](auto x, auto y) { return x <= y; });
}
bp_status_t Gt(const bp_kernel_call_t* c) {
  return Compare(c, simd::CmpOp::kGt, [](auto x, auto y) { return x > y; });
}
bp_status_t Ge(const bp_kernel_call_t* c) {
  return Compare(c, simd::CmpOp::kGe, [](auto x, auto y) { return x >= y; });
}

bp_status_t Where(const bp_kernel_call_t* call) {
  const DLTensor* cond = bp_kit_tensor_arg(call, BP_ARG_WHERE_SELF_CONDITION);
  const DLTensor* a = bp_kit_tensor_arg(call, BP_ARG_WHERE_SELF_SELF);
  const DLTensor* b = bp_kit_tensor_arg(call, BP_ARG_WHERE_SELF_OTHER);
  DLTensor* out = call->outputs[0];
  if (cond == nullptr || a == nullptr || b == nullptr)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected three tensors");
  if (Numel(*out) == 0) return BP_STATUS_OK;
  if (DtypeOf(cond->dtype) != DType::kBool)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'condition' expected dtype bool but got %s",
                DtypeName(DtypeOf(cond->dtype)));
  const DType dt = DtypeOf(out->dtype);
  if (dt == DType::kInvalid) return FailDtype(call, *out);
  if (dt == DType::kFloat32 && DtypeOf(a->dtype) == dt && DtypeOf(b->dtype) == dt && UseVecRows(*out)) {
    const DLTensor* ops[4] = {out, cond, a, b};
    VecRows(ops, [](char* const* p, const int64_t* s, int64_t n) {
      simd::WhereF32(reinterpret_cast<const bool*>(p[1]), s[1], reinterpret_cast<const float*>(p[2]), s[2],
                     reinterpret_cast<const float*>(p[3]), s[3], reinterpret_cast<float*>(p[0]), n);
    });
    return BP_STATUS_OK;
  }
  return Dispatch(dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    // Select the stored values (no opmath round trip): bit-exact for float16.
    const DLTensor* ops[4] = {out, cond, a, b};
    RunOps(ops, [](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[c ? 2 : 3] + i * s[c ? 2 : 3]);
      }
    });
    return BP_STATUS_OK;
  });
}

const KernelDef kKernels[] = {
    {BP_OP_EQ_TENSOR, Eq, nullptr},     {BP_OP_NE_TENSOR, Ne, nullptr}, {BP_OP_LT_TENSOR, Lt, nullptr},
    {BP_OP_LE_TENSOR, Le, nullptr},     {BP_OP_GT_TENSOR, Gt, nullptr}, {BP_OP_GE_TENSOR, Ge, nullptr},
    {BP_OP_WHERE_SELF, Where, nullptr},
};

}  // namespace

const KernelDef* CompareWhereKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
