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

int Category(DtypeId d) {
  if (d == DtypeId::kBool) return 0;
  return DtypeIsFloating(d) ? 2 : 1;
}

// Promotion within a tier, undefined (kInvalid) skipped; `bad` records a
// combination with no result in our set.
DtypeId PromoteSkip(DtypeId a, DtypeId b, bool* bad) {
  if (a == DtypeId::kInvalid) return b;
  if (b == DtypeId::kInvalid) return a;
  DtypeId r = PromoteTypes(a, b);
  if (r == DtypeId::kInvalid) *bad = true;
  return r;
}

// c10's combine_categories.
DtypeId Combine(DtypeId higher, DtypeId lower, bool* bad) {
  if (higher != DtypeId::kInvalid && DtypeIsFloating(higher)) return higher;
  if (higher == DtypeId::kBool || (lower != DtypeId::kInvalid && DtypeIsFloating(lower))) {
    return PromoteSkip(higher, lower, bad);
  }
  if (higher != DtypeId::kInvalid) return higher;
  return lower;
}

}  // namespace

DtypeId PromoteTypes(DtypeId a, DtypeId b) {
  if (a == DtypeId::kInvalid || b == DtypeId::kInvalid) return DtypeId::kInvalid;
  if (a == b) return a;
  if (a == DtypeId::kBool) return b;
  if (b == DtypeId::kBool) return a;
  int ca = Category(a), cb = Category(b);
  if (ca != cb) return ca > cb ? a : b;  // integral with floating: the floating one
  if (ca == 1) {
    // uint8 with int8 needs int16, which Backplane does not have.
    if ((a == DtypeId::kUInt8 && b == DtypeId::kInt8) || (a == DtypeId::kInt8 && b == DtypeId::kUInt8)) {
      return DtypeId::kInvalid;
    }
    return a > b ? a : b;  // DtypeId orders the integral types by width
  }
  if ((a == DtypeId::kFloat16 && b == DtypeId::kBFloat16) || (a == DtypeId::kBFloat16 && b == DtypeId::kFloat16)) {
    return DtypeId::kFloat32;
  }
  return a > b ? a : b;
}

bool CanCast(DtypeId from, DtypeId to) {
  if (DtypeIsFloating(from) && DtypeIsIntegral(to, false)) return false;
  if (from != DtypeId::kBool && to == DtypeId::kBool) return false;
  return true;
}

static DtypeId ResultTypeImpl(const MetaArg* args, const int* idx, int count, bool* bad) {
  DtypeId dim = DtypeId::kInvalid, zero = DtypeId::kInvalid, wrapped = DtypeId::kInvalid;
  auto add_tensor = [&](const Geometry* g) {
    if (g == nullptr) return;
    DtypeId d = DtypeFromDL(g->dtype);
    if (d == DtypeId::kInvalid) {
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
      case BP_VALUE_INT: wrapped = PromoteSkip(wrapped, DtypeId::kInt64, bad); break;
      case BP_VALUE_DOUBLE: wrapped = PromoteSkip(wrapped, DtypeId::kFloat32, bad); break;
      case BP_VALUE_BOOL: wrapped = PromoteSkip(wrapped, DtypeId::kBool, bad); break;
      default: break;
    }
  }
  return Combine(dim, Combine(zero, wrapped, bad), bad);
}

Status ResultTypeChecked(const MetaCallInfo& info, const MetaArg* args, const int* idx, int count,
                         DtypeId* out) {
  bool bad = false;
  DtypeId r = ResultTypeImpl(args, idx, count, &bad);
  if (bad || r == DtypeId::kInvalid) {
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
  DtypeId f = DtypeFromDL(from), t = DtypeFromDL(to);
  return f != DtypeId::kInvalid && t != DtypeId::kInvalid && meta::CanCast(f, t);
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
  DtypeId r = meta::ResultTypeImpl(args, arg_indices, count, &bad);
  if (bad) return DLDataType{0, 0, 0};  // bits == 0: no common dtype
  return DtypeToDL(r);
}

}  // namespace bp::core
