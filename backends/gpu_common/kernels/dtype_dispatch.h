// DLPack dtype -> element type, and the dispatch helpers that bound how many
// kernel instantiations exist: DispatchAll (9 dtypes), DispatchFloat (4),
// DispatchBySize (4 raw widths, for dtype-agnostic moves). Host code only.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backplane/types.h"
#include "numeric.h"

namespace bp_gpu {

enum class DType : int32_t {
  kBool,
  kUInt8,
  kInt8,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kInvalid,
};

inline DType FromDL(DLDataType t) {
  if (t.lanes != 1) return DType::kInvalid;
  switch (t.code) {
    case kDLFloat:
      return t.bits == 16   ? DType::kFloat16
             : t.bits == 32 ? DType::kFloat32
             : t.bits == 64 ? DType::kFloat64
                            : DType::kInvalid;
    case kDLBfloat:
      return t.bits == 16 ? DType::kBFloat16 : DType::kInvalid;
    case kDLInt:
      return t.bits == 8    ? DType::kInt8
             : t.bits == 32 ? DType::kInt32
             : t.bits == 64 ? DType::kInt64
                            : DType::kInvalid;
    case kDLUInt:
      return t.bits == 8 ? DType::kUInt8 : DType::kInvalid;
    case BP_DTYPE_CODE_BOOL:
      return t.bits == 8 ? DType::kBool : DType::kInvalid;
    default:
      return DType::kInvalid;
  }
}

inline const char* ScalarTypeName(DType s) {
  switch (s) {
    case DType::kBool:
      return "bool";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt8:
      return "int8";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    default:
      return "unsupported dtype";
  }
}

inline int ItemSize(DType s) {
  switch (s) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
      return 1;
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

inline bool IsFloatingType(DType s) {
  return s == DType::kFloat16 || s == DType::kBFloat16 || s == DType::kFloat32 ||
         s == DType::kFloat64;
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the element type of `s`; BP_STATUS_INTERNAL for a
// dtype the caller should have rejected already.
template <typename F>
bp_status_t DispatchAll(DType s, F&& f) {
  switch (s) {
    case DType::kBool:
      return f(Tag<bool>{});
    case DType::kUInt8:
      return f(Tag<uint8_t>{});
    case DType::kInt8:
      return f(Tag<int8_t>{});
    case DType::kInt32:
      return f(Tag<int32_t>{});
    case DType::kInt64:
      return f(Tag<int64_t>{});
    case DType::kFloat16:
      return f(Tag<Half>{});
    case DType::kBFloat16:
      return f(Tag<BFloat16>{});
    case DType::kFloat32:
      return f(Tag<float>{});
    case DType::kFloat64:
      return f(Tag<double>{});
    default:
      return BP_STATUS_INTERNAL;
  }
}

template <typename F>
bp_status_t DispatchNoBool(DType s, F&& f) {
  if (s == DType::kBool) return BP_STATUS_INTERNAL;
  return DispatchAll(s, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      return BP_STATUS_INTERNAL;
    } else {
      return f(tag);
    }
  });
}

template <typename F>
bp_status_t DispatchFloat(DType s, F&& f) {
  switch (s) {
    case DType::kFloat16:
      return f(Tag<Half>{});
    case DType::kBFloat16:
      return f(Tag<BFloat16>{});
    case DType::kFloat32:
      return f(Tag<float>{});
    case DType::kFloat64:
      return f(Tag<double>{});
    default:
      return BP_STATUS_INTERNAL;
  }
}

template <typename F>
bp_status_t DispatchBySize(int item_size, F&& f) {
  switch (item_size) {
    case 1:
      return f(Tag<uint8_t>{});
    case 2:
      return f(Tag<uint16_t>{});
    case 4:
      return f(Tag<uint32_t>{});
    case 8:
      return f(Tag<uint64_t>{});
    default:
      return BP_STATUS_INTERNAL;
  }
}

}  // namespace bp_gpu
