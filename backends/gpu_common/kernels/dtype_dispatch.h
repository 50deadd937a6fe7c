// DLPack dtype -> element type, and the dispatch helpers that bound how many
// kernel instantiations exist: DispatchAll (9 dtypes), DispatchFloat (4),
// DispatchBySize (4 raw widths, for dtype-agnostic moves). Host code only.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backplane/types.h"
#include "numeric.h"

namespace bp_gpu {

enum class ScalarType : int32_t {
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

inline ScalarType FromDL(DLDataType t) {
  if (t.lanes != 1) return ScalarType::kInvalid;
  switch (t.code) {
    case kDLFloat:
      return t.bits == 16   ? ScalarType::kFloat16
             : t.bits == 32 ? ScalarType::kFloat32
             : t.bits == 64 ? ScalarType::kFloat64
                            : ScalarType::kInvalid;
    case kDLBfloat:
      return t.bits == 16 ? ScalarType::kBFloat16 : ScalarType::kInvalid;
    case kDLInt:
      return t.bits == 8    ? ScalarType::kInt8
             : t.bits == 32 ? ScalarType::kInt32
             : t.bits == 64 ? ScalarType::kInt64
                            : ScalarType::kInvalid;
    case kDLUInt:
      return t.bits == 8 ? ScalarType::kUInt8 : ScalarType::kInvalid;
    case BP_DTYPE_CODE_BOOL:
      return t.bits == 8 ? ScalarType::kBool : ScalarType::kInvalid;
    default:
      return ScalarType::kInvalid;
  }
}

inline const char* ScalarTypeName(ScalarType s) {
  switch (s) {
    case ScalarType::kBool:
      return "bool";
    case ScalarType::kUInt8:
      return "uint8";
    case ScalarType::kInt8:
      return "int8";
    case ScalarType::kInt32:
      return "int32";
    case ScalarType::kInt64:
      return "int64";
    case ScalarType::kFloat16:
      return "float16";
    case ScalarType::kBFloat16:
      return "bfloat16";
    case ScalarType::kFloat32:
      return "float32";
    case ScalarType::kFloat64:
      return "float64";
    default:
      return "unsupported dtype";
  }
}

inline int ItemSize(ScalarType s) {
  switch (s) {
    case ScalarType::kBool:
    case ScalarType::kUInt8:
    case ScalarType::kInt8:
      return 1;
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16:
      return 2;
    case ScalarType::kInt32:
    case ScalarType::kFloat32:
      return 4;
    case ScalarType::kInt64:
    case ScalarType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

inline bool IsFloatingType(ScalarType s) {
  return s == ScalarType::kFloat16 || s == ScalarType::kBFloat16 || s == ScalarType::kFloat32 ||
         s == ScalarType::kFloat64;
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the element type of `s`; BP_STATUS_INTERNAL for a
// dtype the caller should have rejected already.
template <typename F>
bp_status_t DispatchAll(ScalarType s, F&& f) {
  switch (s) {
    case ScalarType::kBool:
      return f(Tag<bool>{});
    case ScalarType::kUInt8:
      return f(Tag<uint8_t>{});
    case ScalarType::kInt8:
      return f(Tag<int8_t>{});
    case ScalarType::kInt32:
      return f(Tag<int32_t>{});
    case ScalarType::kInt64:
      return f(Tag<int64_t>{});
    case ScalarType::kFloat16:
      return f(Tag<Half>{});
    case ScalarType::kBFloat16:
      return f(Tag<BFloat16>{});
    case ScalarType::kFloat32:
      return f(Tag<float>{});
    case ScalarType::kFloat64:
      return f(Tag<double>{});
    default:
      return BP_STATUS_INTERNAL;
  }
}

template <typename F>
bp_status_t DispatchNoBool(ScalarType s, F&& f) {
  if (s == ScalarType::kBool) return BP_STATUS_INTERNAL;
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
bp_status_t DispatchFloat(ScalarType s, F&& f) {
  switch (s) {
    case ScalarType::kFloat16:
      return f(Tag<Half>{});
    case ScalarType::kBFloat16:
      return f(Tag<BFloat16>{});
    case ScalarType::kFloat32:
      return f(Tag<float>{});
    case ScalarType::kFloat64:
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
