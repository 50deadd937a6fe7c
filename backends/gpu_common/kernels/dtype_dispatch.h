// DLPack dtype -> element type, and the dispatch helpers that bound how many
// kernel instantiations exist: DispatchAll (9 dtypes), DispatchFloat (4),
// DispatchBySize (4 raw widths, for dtype-agnostic moves). Host code only.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backplane/plugin_kit/dtype.h"
#include "backplane/types.h"
#include "numeric.h"

namespace bp_gpu {

// Dtype ids, names and sizes: the plugin kit's (one table for every backend).
using bp_kit::DType;
using bp_kit::DtypeName;
using bp_kit::DtypeOf;
using bp_kit::DtypeSize;

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
