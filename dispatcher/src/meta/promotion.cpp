// Type promotion as PyTorch's torch.result_type, on Backplane's dtype set.
//
// Three priority tiers: tensors with dims, 0-dim tensors, and Python-style
// scalars (INT -> int64, DOUBLE -> float32, the default dtype, BOOL -> bool).
// Each tier is promoted within itself; a lower tier only matters when its
// category (bool < integral < floating) is higher than the tiers above.
//
// Backplane has no int16: where PyTorch promotes uint8 with int8 to int16 we
// report "no common dtype in Backplane's set" (INVALID_ARGUMENT) instead.
#include "meta/common.h"

namespace bp::core {
namespace meta {
namespace {

int Category(DType d) {
  if (d == DType::kBool) return 0;
  return DtypeIsFloating(d) ? 2 : 1;
}

// Promotion within a tier, undefined (kInvalid) skipped; `bad` records a
// combination with no result in our set.
DType PromoteSkip(DType a, DType b, bool* bad) {
  if (a == DType::kInvalid) return b;
  if (b == DType::kInvalid) return a;
  DType r = PromoteTypes(a, b);
  if (r == DType::kInvalid) *bad = true;
  return r;
}

// c10's combine_categories.
DType Combine(DType higher, DType lower, bool* bad) {
  if (higher != DType::kInvalid && DtypeIsFloating(higher)) return higher;
  if (higher == DType::kBool || (lower != DType::kInvalid && DtypeIsFloating(lower))) {
    return PromoteSkip(higher, lower, bad);
  }
  if (higher != DType::kInvalid) return higher;
  return lower;
}

}  // namespace

DType PromoteTypes(DType a, DType b) {
  if (a == DType::kInvalid || b == DType::kInvalid) return DType::kInvalid;
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  int ca = Category(a), cb = Category(b);
  if (ca != cb) return ca > cb ? a : b;  // integral with floating: the floating one
  if (ca == 1) {
    // uint8 with int8 needs int16, which Backplane does not have.
    if ((a == DType::kUInt8 && b == DType::kInt8) || (a == DType::kInt8 && b == DType::kUInt8)) {
      return DType::kInvalid;
    }
    return a > b ? a : b;  // DType orders the integral types by width
  }
  if ((a == DType::kFloat16 && b == DType::kBFloat16) || (a == DType::kBFloat16 && b == DType::kFloat16)) {
    return DType::kFloat32;
  }
  return a > b ? a : b;
}

bool CanCast(DType from, DType to) {
  if (DtypeIsFloating(from) && DtypeIsIntegral(to, false)) return false;
  if (from != DType::kBool && to == DType::kBool) return false;
  return true;
}

static DType ResultTypeImpl(const MetaArg* args, const int* idx, int count, bool* bad) {
  DType dim = DType::kInvalid, zero = DType::kInvalid, wrapped = DType::kInvalid;
  auto add_tensor = [&](const Geometry* g) {
    if (g == nullptr) return;
    DType d = DtypeFromDL(g->dtype);
    if (d == DType::kInvalid) {
      *bad = true;
      return;
    }
    if (g->ndim > 0) {
      dim = PromoteSkip(dim, d, bad);
    } else {
      zero = PromoteSkip(zero, d, bad);
    }
  };
  for (int k = 0; k < count; ++k) {
    const MetaArg& a = args[idx[k]];
    switch (a.kind) {
      case BP_VALUE_TENSOR: add_tensor(a.tensor); break;
      case BP_VALUE_TENSOR_LIST:
        for (int64_t j = 0; j < a.num_tensors; ++j) add_tensor(a.tensors[j]);
        break;
      case BP_VALUE_INT: wrapped = PromoteSkip(wrapped, DType::kInt64, bad); break;
      case BP_VALUE_DOUBLE: wrapped = PromoteSkip(wrapped, DType::kFloat32, bad); break;
      case BP_VALUE_BOOL: wrapped = PromoteSkip(wrapped, DType::kBool, bad); break;
      default: break;
    }
  }
  return Combine(dim, Combine(zero, wrapped, bad), bad);
}

Status ResultTypeChecked(const MetaCallInfo& info, const MetaArg* args, const int* idx, int count,
                         DType* out) {
  bool bad = false;
  DType r = ResultTypeImpl(args, idx, count, &bad);
  if (bad || r == DType::kInvalid) {
    std::string names, dtypes;
    for (int k = 0; k < count; ++k) {
      const MetaArg& a = args[idx[k]];
      if (a.kind != BP_VALUE_TENSOR || a.tensor == nullptr) continue;
      names += (names.empty() ? "'" : ", '") + ArgName(info, idx[k]) + "'";
      dtypes += (dtypes.empty() ? "" : ", ") + std::string(DtypeName(a.tensor->dtype));
    }
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 std::string(info.op_name) + ": arguments " + names + " of dtypes " + dtypes +
                     " have no common dtype in Backplane's set (PyTorch would promote uint8 with "
                     "int8 to int16, which Backplane does not have); cast one of them first");
  }
  *out = r;
  return Status::Ok();
}

}  // namespace meta

bool CanCastDtype(DLDataType from, DLDataType to) {
  DType f = DtypeFromDL(from), t = DtypeFromDL(to);
  return f != DType::kInvalid && t != DType::kInvalid && meta::CanCast(f, t);
}

Status CheckOutput(const MetaCallInfo& info, const MetaPlan& plan, int index, const Geometry& actual,
                   bool inplace) {
  const Geometry& want = plan.outputs[index];
  // The mutated argument: self for in-place, the trailing `out` otherwise.
  int arg = inplace ? 0 : info.num_args - 1;
  std::string who = meta::ArgPrefix(info, arg);
  bool same = actual.ndim == want.ndim;
  for (int32_t k = 0; same && k < want.ndim; ++k) same = actual.sizes[k] == want.sizes[k];
  if (!same) {
    return Error(BP_STATUS_INVALID_ARGUMENT, who + "has sizes " + meta::SizesText(actual) +
                                                 "; expected the result's sizes " + meta::SizesText(want) +
                                                 (inplace ? " (an in-place result cannot broadcast self)"
                                                          : " (out= tensors are not resized)"));
  }
  if (!CanCastDtype(want.dtype, actual.dtype)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, who + "has dtype " + DtypeName(actual.dtype) + "; the result dtype " +
                                                 DtypeName(want.dtype) + " cannot be cast to it");
  }
  return Status::Ok();
}

DLDataType ResultType(const MetaArg* args, const int* arg_indices, int count) {
  bool bad = false;
  DType r = meta::ResultTypeImpl(args, arg_indices, count, &bad);
  if (bad) return DLDataType{0, 0, 0};  // bits == 0: no common dtype
  return DtypeToDL(r);
}

}  // namespace bp::core
